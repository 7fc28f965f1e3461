//! Chat lines (message kind 17, version 7): what a line may hold and how
//! fast one sender may send them. Pure: the time is a parameter.

use super::time::Millis;
use crate::encoding::is_printable;

/// A line's text is at most this many bytes of UTF-8 (two lines of the
/// overlay's 8×8 font at 640 pixels wide; a datagram holds far more).
pub const MAX_CHAT_TEXT_BYTES: usize = 120;

/// A sender's name is at most this many bytes of UTF-8.
pub const MAX_CHAT_AUTHOR_BYTES: usize = 24;

/// One line of chat: who said it and what.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChatLine {
    /// The name the sender goes by (`--name`); empty when it gave none,
    /// and the receiver names it by its seat ("P2", "spectator 1").
    pub author: String,
    /// What was said: 1 to [`MAX_CHAT_TEXT_BYTES`] bytes, no control
    /// characters (a terminal printing it must not be steered by it).
    pub text: String,
}

/// A Chat datagram: the acknowledgement of the peer's lines, and maybe
/// one line of ours, numbered so the peer takes each once and in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChatMessage {
    /// The sender holds every line of the receiver's numbered below this.
    pub next_expected: u32,
    /// A line and its number on this link (from 0), if one rides along.
    pub line: Option<(u32, ChatLine)>,
}

/// Why a text cannot be a chat line's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChatTextError {
    /// Nothing to say.
    #[error("the line is empty")]
    Empty,
    /// Longer than the field allows (the bytes it has, the most allowed).
    #[error("the line is {0} bytes long, at most {1} fit")]
    TooLong(usize, usize),
    /// A newline, escape, bidirectional override or other control or
    /// format character ([`is_printable`]).
    #[error("the line holds a control character or a format character")]
    ControlCharacter,
}

/// Whether `text` may be sent as a line's text.
pub fn check_chat_text(text: &str) -> Result<(), ChatTextError> {
    if text.is_empty() {
        return Err(ChatTextError::Empty);
    }
    check_chat_field(text, MAX_CHAT_TEXT_BYTES)
}

/// Whether `author` may be sent as a line's author (empty is allowed).
pub fn check_chat_author(author: &str) -> Result<(), ChatTextError> {
    check_chat_field(author, MAX_CHAT_AUTHOR_BYTES)
}

fn check_chat_field(text: &str, max_bytes: usize) -> Result<(), ChatTextError> {
    if text.len() > max_bytes {
        return Err(ChatTextError::TooLong(text.len(), max_bytes));
    }
    if !is_printable(text) {
        return Err(ChatTextError::ControlCharacter);
    }
    Ok(())
}

/// `text` cut to at most `max_bytes` bytes at a character boundary (what
/// a chat box keeps of a long paste).
pub fn truncate_chat_text(text: &str, max_bytes: usize) -> &str {
    let mut end = text.len().min(max_bytes);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Lines one sender may send at once…
pub const CHAT_BURST_LINES: u32 = 5;
/// …and the milliseconds after which it may send one more.
pub const CHAT_LINE_EVERY_MS: Millis = 1_000;

/// A token bucket: by default [`CHAT_BURST_LINES`] lines at once, then
/// one per [`CHAT_LINE_EVERY_MS`]. Senders limit themselves with it, and
/// receivers limit each sender with the same one, so only a peer that does
/// not limit itself loses lines.
#[derive(Clone, Copy, Debug)]
pub struct ChatRateLimit {
    /// Lines that may go now.
    tokens: u32,
    /// When the last token was added (or the bucket was full).
    refilled_at: Millis,
    burst: u32,
    every_ms: Millis,
}

impl ChatRateLimit {
    /// A full bucket of one sender's limit at `now`.
    pub fn new(now: Millis) -> Self {
        ChatRateLimit::with(CHAT_BURST_LINES, CHAT_LINE_EVERY_MS, now)
    }

    /// A full bucket of `burst` lines, one more each `every_ms`, at `now`.
    pub fn with(burst: u32, every_ms: Millis, now: Millis) -> Self {
        ChatRateLimit {
            tokens: burst,
            refilled_at: now,
            burst,
            every_ms: every_ms.max(1),
        }
    }

    /// Whether a line may go at `now`; if so it is counted.
    pub fn allow(&mut self, now: Millis) -> bool {
        let earned = now.saturating_sub(self.refilled_at) / self.every_ms;
        if earned > 0 {
            let tokens = u64::from(self.tokens) + earned;
            self.tokens = tokens.min(u64::from(self.burst)) as u32;
            self.refilled_at += earned * self.every_ms;
        }
        if self.tokens == self.burst {
            self.refilled_at = now;
        }
        if self.tokens == 0 {
            return false;
        }
        self.tokens -= 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sender_may_burst_then_one_line_a_second() {
        let mut limit = ChatRateLimit::new(10_000);
        let burst = (0..20).filter(|_| limit.allow(10_000)).count();
        assert_eq!(burst, CHAT_BURST_LINES as usize);
        assert!(!limit.allow(10_999));
        assert!(limit.allow(11_000));
        assert!(!limit.allow(11_500));
        // A long pause refills the bucket only up to the burst.
        let after_pause = (0..20).filter(|_| limit.allow(100_000)).count();
        assert_eq!(after_pause, CHAT_BURST_LINES as usize);
    }

    #[test]
    fn a_text_is_checked_for_length_and_control_characters() {
        assert_eq!(check_chat_text("gg"), Ok(()));
        assert_eq!(check_chat_text(""), Err(ChatTextError::Empty));
        assert_eq!(
            check_chat_text(&"é".repeat(61)),
            Err(ChatTextError::TooLong(122, MAX_CHAT_TEXT_BYTES))
        );
        assert_eq!(
            check_chat_text("\x1b[2Jgotcha"),
            Err(ChatTextError::ControlCharacter)
        );
        assert_eq!(check_chat_author(""), Ok(()));
        for hostile in ["\u{202E}nimda", "ann\u{200B}", "\u{FEFF}bo", "a\u{2029}b"] {
            assert_eq!(
                check_chat_author(hostile),
                Err(ChatTextError::ControlCharacter)
            );
            assert_eq!(
                check_chat_text(hostile),
                Err(ChatTextError::ControlCharacter)
            );
        }
    }

    #[test]
    fn truncating_keeps_whole_characters() {
        assert_eq!(truncate_chat_text("aé", 2), "a");
        assert_eq!(truncate_chat_text("abc", 10), "abc");
    }
}
