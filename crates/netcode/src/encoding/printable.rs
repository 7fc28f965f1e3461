//! The one check of text a peer or a file hands us that is printed as it
//! came (handshake texts, chat names and lines, room hellos, replay header
//! texts): no character that steers the terminal or reorders what is
//! shown. That is Unicode's control characters (Cc: newlines, escapes),
//! its format characters (Cf: the bidirectional overrides such as U+202E,
//! zero-width characters, the byte order mark) and the line and paragraph
//! separators (U+2028, U+2029).

/// The format characters (general category Cf) of Unicode 15.1, as
/// inclusive ranges: the standard's own list (`DerivedGeneralCategory.txt`),
/// short and stable enough to keep here rather than pull in a table crate.
const FORMAT_CHARACTERS: &[(char, char)] = &[
    ('\u{00AD}', '\u{00AD}'),
    ('\u{0600}', '\u{0605}'),
    ('\u{061C}', '\u{061C}'),
    ('\u{06DD}', '\u{06DD}'),
    ('\u{070F}', '\u{070F}'),
    ('\u{0890}', '\u{0891}'),
    ('\u{08E2}', '\u{08E2}'),
    ('\u{180E}', '\u{180E}'),
    ('\u{200B}', '\u{200F}'),
    ('\u{202A}', '\u{202E}'),
    ('\u{2060}', '\u{2064}'),
    ('\u{2066}', '\u{206F}'),
    ('\u{FEFF}', '\u{FEFF}'),
    ('\u{FFF9}', '\u{FFFB}'),
    ('\u{110BD}', '\u{110BD}'),
    ('\u{110CD}', '\u{110CD}'),
    ('\u{13430}', '\u{1343F}'),
    ('\u{1BCA0}', '\u{1BCA3}'),
    ('\u{1D173}', '\u{1D17A}'),
    ('\u{E0001}', '\u{E0001}'),
    ('\u{E0020}', '\u{E007F}'),
];

/// Whether `c` may not be printed as it came: a control or format
/// character, or a line or paragraph separator.
pub fn is_unprintable(c: char) -> bool {
    c.is_control()
        || c == '\u{2028}'
        || c == '\u{2029}'
        || FORMAT_CHARACTERS
            .iter()
            .any(|&(first, last)| (first..=last).contains(&c))
}

/// Whether every character of `text` may be printed as it came.
pub fn is_printable(text: &str) -> bool {
    !text.chars().any(is_unprintable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_of_any_script_and_emoji_are_printable() {
        assert!(is_printable("Ryu vs. Ken — ナイス 🎮 ¡olé!"));
        assert!(is_printable(""));
    }

    #[test]
    fn controls_bidi_overrides_zero_widths_the_bom_and_separators_are_not() {
        for text in [
            "\x1b[2J",
            "a\nb",
            "\u{7f}",
            "\u{85}",
            "evil\u{202E}gpj.exe",
            "\u{2066}isolate\u{2069}",
            "\u{200B}",
            "\u{200D}",
            "\u{FEFF}bom",
            "\u{00AD}",
            "\u{2028}",
            "\u{2029}",
            "\u{E0041}",
        ] {
            assert!(!is_printable(text), "{text:?}");
        }
    }
}
