//! RetroPad input: 16 buttons held or not, one `u16` per player per frame.
//!
//! Bit `n` is libretro's `RETRO_DEVICE_ID_JOYPAD_*` id `n`, so a value is exactly
//! what `RETRO_DEVICE_ID_JOYPAD_MASK` answers and what the wire carries.

use std::fmt;
use std::str::FromStr;

mod random;
pub use random::{RandomPlayer, RANDOM_PLAYERS};

/// The most players netcade drives: RetroPad ports 0–3. Sessions, input
/// scripts and the host all size their fixed per-player arrays by it.
pub const MAX_PLAYERS: usize = 4;

/// The buttons every player holds during one frame (player 1 first).
pub type FrameInputs = [Buttons; MAX_PLAYERS];

/// Nobody holds anything.
pub const NO_INPUTS: FrameInputs = [Buttons::NONE; MAX_PLAYERS];

/// Which RetroPad buttons are held during one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Buttons(u16);

/// Button names in libretro id order (`RETRO_DEVICE_ID_JOYPAD_B` = 0 … `R3` = 15).
pub const BUTTON_NAMES: [&str; 16] = [
    "B", "Y", "SELECT", "START", "UP", "DOWN", "LEFT", "RIGHT", "A", "X", "L", "R", "L2", "R2",
    "L3", "R3",
];

impl Buttons {
    /// Nothing held.
    pub const NONE: Buttons = Buttons(0);
    /// RetroPad B (libretro id 0).
    pub const B: Buttons = Buttons(1 << 0);
    /// RetroPad Y (libretro id 1).
    pub const Y: Buttons = Buttons(1 << 1);
    /// RetroPad SELECT (libretro id 2).
    pub const SELECT: Buttons = Buttons(1 << 2);
    /// RetroPad START (libretro id 3).
    pub const START: Buttons = Buttons(1 << 3);
    /// RetroPad UP (libretro id 4).
    pub const UP: Buttons = Buttons(1 << 4);
    /// RetroPad DOWN (libretro id 5).
    pub const DOWN: Buttons = Buttons(1 << 5);
    /// RetroPad LEFT (libretro id 6).
    pub const LEFT: Buttons = Buttons(1 << 6);
    /// RetroPad RIGHT (libretro id 7).
    pub const RIGHT: Buttons = Buttons(1 << 7);
    /// RetroPad A (libretro id 8).
    pub const A: Buttons = Buttons(1 << 8);
    /// RetroPad X (libretro id 9).
    pub const X: Buttons = Buttons(1 << 9);
    /// RetroPad L (libretro id 10).
    pub const L: Buttons = Buttons(1 << 10);
    /// RetroPad R (libretro id 11).
    pub const R: Buttons = Buttons(1 << 11);
    /// RetroPad L2 (libretro id 12).
    pub const L2: Buttons = Buttons(1 << 12);
    /// RetroPad R2 (libretro id 13).
    pub const R2: Buttons = Buttons(1 << 13);
    /// RetroPad L3 (libretro id 14).
    pub const L3: Buttons = Buttons(1 << 14);
    /// RetroPad R3 (libretro id 15).
    pub const R3: Buttons = Buttons(1 << 15);

    /// The buttons whose libretro ids are the set bits of `bits`.
    pub const fn from_bits(bits: u16) -> Self {
        Buttons(bits)
    }

    /// One bit per held button, bit `n` for libretro id `n`.
    pub const fn bits(self) -> u16 {
        self.0
    }

    /// Whether the button with libretro id `id` (0–15) is held.
    pub const fn is_held(self, id: u32) -> bool {
        id < 16 && self.0 & (1 << id) != 0
    }

    /// Whether every button of `other` is held.
    pub const fn contains(self, other: Buttons) -> bool {
        self.0 & other.0 == other.0
    }

    /// These buttons and those of `other`.
    pub const fn with(self, other: Buttons) -> Buttons {
        Buttons(self.0 | other.0)
    }

    /// Whether nothing is held.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl std::ops::BitOr for Buttons {
    type Output = Buttons;
    fn bitor(self, rhs: Buttons) -> Buttons {
        Buttons(self.0 | rhs.0)
    }
}

/// `RIGHT+B`, or `NONE` when nothing is held.
impl fmt::Display for Buttons {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            return f.write_str("NONE");
        }
        let mut first = true;
        for (id, name) in BUTTON_NAMES.iter().enumerate() {
            if self.is_held(id as u32) {
                if !first {
                    f.write_str("+")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

/// A button name that is not one of [`BUTTON_NAMES`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown button {name:?} (buttons are NONE or {} joined with '+')", BUTTON_NAMES.join(", "))]
pub struct UnknownButton {
    /// The name as written.
    pub name: String,
}

/// Parses `RIGHT+B`, `right+b`, `NONE`, `-` or a number (`0x0081`, `129`).
impl FromStr for Buttons {
    type Err = UnknownButton;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if text.is_empty() || text == "-" || text.eq_ignore_ascii_case("NONE") {
            return Ok(Buttons::NONE);
        }
        if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            return u16::from_str_radix(hex, 16)
                .map(Buttons)
                .map_err(|_| UnknownButton {
                    name: text.to_string(),
                });
        }
        if let Ok(bits) = text.parse::<u16>() {
            return Ok(Buttons(bits));
        }
        let mut bits = 0u16;
        for part in text.split('+') {
            let part = part.trim();
            let id = BUTTON_NAMES
                .iter()
                .position(|name| name.eq_ignore_ascii_case(part))
                .ok_or_else(|| UnknownButton {
                    name: part.to_string(),
                })?;
            bits |= 1 << id;
        }
        Ok(Buttons(bits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buttons_print_and_parse_back() {
        let held = Buttons::RIGHT | Buttons::B;
        assert_eq!(held.to_string(), "B+RIGHT");
        assert_eq!("right+b".parse::<Buttons>().unwrap(), held);
        assert_eq!("NONE".parse::<Buttons>().unwrap(), Buttons::NONE);
        assert_eq!("0x0081".parse::<Buttons>().unwrap(), held);
    }

    #[test]
    fn an_unknown_button_name_is_an_error_naming_it() {
        let err = "RIGHT+TURBO".parse::<Buttons>().unwrap_err();
        assert_eq!(err.name, "TURBO");
        assert!(err.to_string().contains("TURBO"));
    }

    #[test]
    fn bit_n_is_libretro_button_id_n() {
        assert!(Buttons::START.is_held(3));
        assert!(Buttons::A.is_held(8));
        assert!(!Buttons::A.is_held(16));
    }
}
