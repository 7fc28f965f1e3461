//! The arena file: Duel's "ROM", a small versioned text description of the
//! stage a match is fought on.
//!
//! ```text
//! netcade-arena 1
//! # comments and blank lines are ignored
//! name Dojo
//! floor 200          # pixel row the fighters stand on (120..=232)
//! wall_left 16       # leftmost pixel column fighters may reach (0..=100)
//! wall_right 304     # rightmost pixel column (220..=320)
//! round_seconds 60   # round timer (10..=99)
//! rounds_to_win 2    # optional, default 2 (best of 3), 1..=5
//! gravity 6          # optional, default 6, in 1/16 pixel per frame², 3..=16
//! sky 203048         # optional colours, RRGGBB hex
//! ground 5a4632
//! fighter1 d04040
//! fighter2 4070e0
//! ```
//!
//! The first line must be exactly the magic `netcade-arena` and the format
//! version. Every other non-blank line is `key value`; unknown keys,
//! duplicated keys, malformed numbers and out-of-range values are errors that
//! name the line and the key.

use std::fmt;

/// Magic word that starts every arena file.
pub const ARENA_MAGIC: &str = "netcade-arena";
/// The only arena format version this core reads.
pub const ARENA_FORMAT_VERSION: u32 = 1;
/// Arena files larger than this are refused before parsing.
pub const MAX_ARENA_BYTES: usize = 4096;
/// Longest arena name accepted.
pub const MAX_NAME_LEN: usize = 32;

/// Inclusive bounds of each numeric key, checked on parse and on savestate
/// decode (a state carries the arena it was recorded on).
pub const FLOOR_RANGE: (i64, i64) = (120, 232);
pub const WALL_LEFT_RANGE: (i64, i64) = (0, 100);
pub const WALL_RIGHT_RANGE: (i64, i64) = (220, 320);
pub const ROUND_SECONDS_RANGE: (i64, i64) = (10, 99);
pub const ROUNDS_TO_WIN_RANGE: (i64, i64) = (1, 5);
pub const GRAVITY_RANGE: (i64, i64) = (3, 16);

/// The gameplay numbers and colours of an arena; these are copied into the
/// game state so a savestate is self-contained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArenaRules {
    /// Pixel row of the floor surface.
    pub floor: i16,
    /// Leftmost pixel column a fighter's body may reach.
    pub wall_left: i16,
    /// One past the rightmost pixel column a fighter's body may reach.
    pub wall_right: i16,
    pub round_seconds: u8,
    pub rounds_to_win: u8,
    /// Downward acceleration in 1/16 pixel per frame per frame.
    pub gravity: u16,
    /// Colours as 0x00RRGGBB (XRGB8888).
    pub sky: u32,
    pub ground: u32,
    pub fighter1: u32,
    pub fighter2: u32,
}

impl ArenaRules {
    /// Checks every value against the ranges the parser enforces; used when a
    /// savestate brings its own copy of the rules.
    pub fn validate(&self) -> Result<(), String> {
        let checks: [(&str, i64, (i64, i64)); 6] = [
            ("floor", self.floor.into(), FLOOR_RANGE),
            ("wall_left", self.wall_left.into(), WALL_LEFT_RANGE),
            ("wall_right", self.wall_right.into(), WALL_RIGHT_RANGE),
            (
                "round_seconds",
                self.round_seconds.into(),
                ROUND_SECONDS_RANGE,
            ),
            (
                "rounds_to_win",
                self.rounds_to_win.into(),
                ROUNDS_TO_WIN_RANGE,
            ),
            ("gravity", self.gravity.into(), GRAVITY_RANGE),
        ];
        for (key, value, (min, max)) in checks {
            if value < min || value > max {
                return Err(format!("{key} {value} is outside {min}..={max}"));
            }
        }
        for (key, colour) in [
            ("sky", self.sky),
            ("ground", self.ground),
            ("fighter1", self.fighter1),
            ("fighter2", self.fighter2),
        ] {
            if colour > 0x00ff_ffff {
                return Err(format!("colour {key} {colour:#x} has bits above RRGGBB"));
            }
        }
        Ok(())
    }
}

/// A parsed arena file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arena {
    pub name: String,
    pub rules: ArenaRules,
}

/// Why a file is not a usable arena. Line numbers count from 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArenaError {
    TooBig {
        size: usize,
    },
    NotText,
    MissingMagic,
    UnsupportedVersion {
        found: String,
    },
    MalformedLine {
        line: usize,
    },
    UnknownKey {
        line: usize,
        key: String,
    },
    DuplicateKey {
        line: usize,
        key: String,
    },
    BadNumber {
        line: usize,
        key: String,
        value: String,
    },
    OutOfRange {
        line: usize,
        key: String,
        value: i64,
        min: i64,
        max: i64,
    },
    BadName {
        line: usize,
    },
    MissingKey {
        key: &'static str,
    },
}

impl fmt::Display for ArenaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArenaError::TooBig { size } => write!(
                f,
                "arena file is {size} bytes, more than the {MAX_ARENA_BYTES} an arena may have"
            ),
            ArenaError::NotText => write!(f, "arena file is not ASCII text"),
            ArenaError::MissingMagic => write!(
                f,
                "not an arena file: the first line must be `{ARENA_MAGIC} {ARENA_FORMAT_VERSION}`"
            ),
            ArenaError::UnsupportedVersion { found } => write!(
                f,
                "arena format version `{found}` is not supported (this core reads version {ARENA_FORMAT_VERSION})"
            ),
            ArenaError::MalformedLine { line } => {
                write!(f, "line {line}: expected `key value`")
            }
            ArenaError::UnknownKey { line, key } => write!(f, "line {line}: unknown key `{key}`"),
            ArenaError::DuplicateKey { line, key } => {
                write!(f, "line {line}: key `{key}` is given twice")
            }
            ArenaError::BadNumber { line, key, value } => {
                write!(f, "line {line}: `{key}` value `{value}` is not a valid number")
            }
            ArenaError::OutOfRange {
                line,
                key,
                value,
                min,
                max,
            } => write!(
                f,
                "line {line}: `{key}` {value} is outside the allowed range {min}..={max}"
            ),
            ArenaError::BadName { line } => write!(
                f,
                "line {line}: `name` must be 1 to {MAX_NAME_LEN} printable characters"
            ),
            ArenaError::MissingKey { key } => write!(f, "required key `{key}` is missing"),
        }
    }
}

impl std::error::Error for ArenaError {}

const KEYS: [&str; 11] = [
    "name",
    "floor",
    "wall_left",
    "wall_right",
    "round_seconds",
    "rounds_to_win",
    "gravity",
    "sky",
    "ground",
    "fighter1",
    "fighter2",
];

impl Arena {
    /// Parses an arena file's bytes. Never panics; every failure names the
    /// problem (and the line, where there is one).
    pub fn parse(bytes: &[u8]) -> Result<Arena, ArenaError> {
        if bytes.len() > MAX_ARENA_BYTES {
            return Err(ArenaError::TooBig { size: bytes.len() });
        }
        if !bytes.is_ascii() {
            return Err(ArenaError::NotText);
        }
        let text = std::str::from_utf8(bytes).map_err(|_| ArenaError::NotText)?;
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));

        let (_, first) = lines.next().ok_or(ArenaError::MissingMagic)?;
        let mut head = first.split_whitespace();
        if head.next() != Some(ARENA_MAGIC) {
            return Err(ArenaError::MissingMagic);
        }
        let version: Vec<&str> = head.collect();
        if version != [ARENA_FORMAT_VERSION.to_string().as_str()] {
            return Err(ArenaError::UnsupportedVersion {
                found: version.join(" "),
            });
        }

        let mut seen = [false; KEYS.len()];
        let mut name = None;
        let mut rules = ArenaRules {
            floor: 0,
            wall_left: 0,
            wall_right: 0,
            round_seconds: 0,
            rounds_to_win: 2,
            gravity: 6,
            sky: 0x0020_3048,
            ground: 0x005a_4632,
            fighter1: 0x00d0_4040,
            fighter2: 0x0040_70e0,
        };

        for (line, raw) in lines {
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let (key, value) = match content.split_once(char::is_whitespace) {
                Some((k, v)) => (k, v.trim()),
                None => return Err(ArenaError::MalformedLine { line }),
            };
            let index =
                KEYS.iter()
                    .position(|k| *k == key)
                    .ok_or_else(|| ArenaError::UnknownKey {
                        line,
                        key: key.to_string(),
                    })?;
            if seen[index] {
                return Err(ArenaError::DuplicateKey {
                    line,
                    key: key.to_string(),
                });
            }
            seen[index] = true;

            let number = |range: (i64, i64)| parse_number(line, key, value, range);
            let colour = || parse_colour(line, key, value);
            match key {
                "name" => {
                    let ok = !value.is_empty()
                        && value.len() <= MAX_NAME_LEN
                        && value.bytes().all(|b| (0x20..0x7f).contains(&b));
                    if !ok {
                        return Err(ArenaError::BadName { line });
                    }
                    name = Some(value.to_string());
                }
                "floor" => rules.floor = number(FLOOR_RANGE)? as i16,
                "wall_left" => rules.wall_left = number(WALL_LEFT_RANGE)? as i16,
                "wall_right" => rules.wall_right = number(WALL_RIGHT_RANGE)? as i16,
                "round_seconds" => rules.round_seconds = number(ROUND_SECONDS_RANGE)? as u8,
                "rounds_to_win" => rules.rounds_to_win = number(ROUNDS_TO_WIN_RANGE)? as u8,
                "gravity" => rules.gravity = number(GRAVITY_RANGE)? as u16,
                "sky" => rules.sky = colour()?,
                "ground" => rules.ground = colour()?,
                "fighter1" => rules.fighter1 = colour()?,
                "fighter2" => rules.fighter2 = colour()?,
                _ => unreachable!("every key in KEYS has an arm"),
            }
        }

        for required in ["name", "floor", "wall_left", "wall_right", "round_seconds"] {
            let index = KEYS.iter().position(|k| *k == required).unwrap_or(0);
            if !seen[index] {
                return Err(ArenaError::MissingKey { key: required });
            }
        }
        let name = name.ok_or(ArenaError::MissingKey { key: "name" })?;
        Ok(Arena { name, rules })
    }
}

fn parse_number(line: usize, key: &str, value: &str, range: (i64, i64)) -> Result<i64, ArenaError> {
    let bad = || ArenaError::BadNumber {
        line,
        key: key.to_string(),
        value: value.to_string(),
    };
    // Only plain decimal digits with an optional minus: no `+`, no spaces.
    let digits = value.strip_prefix('-').unwrap_or(value);
    if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let number: i64 = value.parse().map_err(|_| bad())?;
    let (min, max) = range;
    if number < min || number > max {
        return Err(ArenaError::OutOfRange {
            line,
            key: key.to_string(),
            value: number,
            min,
            max,
        });
    }
    Ok(number)
}

fn parse_colour(line: usize, key: &str, value: &str) -> Result<u32, ArenaError> {
    if value.len() != 6 || !value.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ArenaError::BadNumber {
            line,
            key: key.to_string(),
            value: value.to_string(),
        });
    }
    u32::from_str_radix(value, 16).map_err(|_| ArenaError::BadNumber {
        line,
        key: key.to_string(),
        value: value.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::fixtures::{DOJO, MOON};

    fn with_line(extra: &str) -> Vec<u8> {
        format!("netcade-arena 1\nname T\nfloor 200\nwall_left 10\nwall_right 310\nround_seconds 30\n{extra}\n")
            .into_bytes()
    }

    #[test]
    fn the_shipped_arenas_parse() {
        let dojo = Arena::parse(DOJO).unwrap();
        assert_eq!(dojo.name, "Dojo");
        assert_eq!(dojo.rules.round_seconds, 60);
        let moon = Arena::parse(MOON).unwrap();
        assert_ne!(moon.rules, dojo.rules);
        assert!(dojo.rules.validate().is_ok() && moon.rules.validate().is_ok());
    }

    #[test]
    fn a_file_without_the_magic_is_not_an_arena() {
        assert_eq!(Arena::parse(b"\x7fELF...."), Err(ArenaError::MissingMagic));
        assert_eq!(Arena::parse(b""), Err(ArenaError::MissingMagic));
        assert_eq!(Arena::parse(b"\xff\xfe"), Err(ArenaError::NotText));
    }

    #[test]
    fn another_format_version_is_refused_by_name() {
        let err = Arena::parse(b"netcade-arena 2\nname X\n").unwrap_err();
        assert!(err.to_string().contains("version `2`"), "{err}");
    }

    #[test]
    fn parse_errors_name_the_line_and_the_key() {
        let err = Arena::parse(&with_line("flor 3")).unwrap_err();
        assert_eq!(err.to_string(), "line 7: unknown key `flor`");

        let err = Arena::parse(&with_line("gravity lots")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 7: `gravity` value `lots` is not a valid number"
        );

        let err = Arena::parse(&with_line("rounds_to_win 9")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 7: `rounds_to_win` 9 is outside the allowed range 1..=5"
        );

        let err = Arena::parse(&with_line("floor 190")).unwrap_err();
        assert_eq!(err.to_string(), "line 7: key `floor` is given twice");

        let err = Arena::parse(&with_line("sky blue")).unwrap_err();
        assert!(err.to_string().contains("`sky`"), "{err}");

        let err = Arena::parse(&with_line("lonely")).unwrap_err();
        assert_eq!(err, ArenaError::MalformedLine { line: 7 });
    }

    #[test]
    fn a_missing_required_key_is_named() {
        let err =
            Arena::parse(b"netcade-arena 1\nname T\nfloor 200\nwall_left 0\nwall_right 300\n")
                .unwrap_err();
        assert_eq!(err.to_string(), "required key `round_seconds` is missing");
    }

    #[test]
    fn an_oversized_file_is_refused_before_parsing() {
        let mut big = with_line("");
        big.resize(MAX_ARENA_BYTES + 1, b'#');
        assert!(matches!(Arena::parse(&big), Err(ArenaError::TooBig { .. })));
    }

    #[test]
    fn huge_numbers_are_bad_numbers_not_overflows() {
        let err = Arena::parse(&with_line("gravity 99999999999999999999")).unwrap_err();
        assert!(matches!(err, ArenaError::BadNumber { .. }), "{err}");
    }
}
