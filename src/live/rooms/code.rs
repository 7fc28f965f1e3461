//! Room codes: six characters a player reads out to another (`7KQ-M2X`),
//! from an alphabet without look-alikes (no 0/O, 1/I/L). The first three
//! name the room on the signaling server; the whole code is the password
//! of the link's key exchange (SPAKE2, `netcode::protocol::pake`), so the
//! server, which sees room names, never learns the last three.

use netcode::protocol::RoomPassword;
use std::fmt;
use std::str::FromStr;

/// Characters of a code: digits and capitals a listener cannot confuse.
const ALPHABET: &[u8] = b"23456789ABCDEFGHJKMNPQRSTUVWXYZ";

/// Characters in a code (31^6: about 887 million codes).
pub const CODE_CHARS: usize = 6;

/// A room code, stored without its dash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RoomCode([u8; CODE_CHARS]);

impl RoomCode {
    /// A code drawn from `random` bytes (the caller's randomness).
    pub fn from_random(random: [u8; CODE_CHARS]) -> RoomCode {
        // 256 = 8 × 31 + 8: the first 8 characters are drawn 9/8 as often
        // as the rest, which costs a code little of its spread.
        RoomCode(random.map(|byte| ALPHABET[usize::from(byte) % ALPHABET.len()]))
    }

    /// The code without its dash.
    pub fn compact(&self) -> String {
        self.0.iter().map(|&byte| char::from(byte)).collect()
    }

    /// What the room's name carries: the first half, so that the
    /// signaling server learns nothing of the rest.
    pub fn room_part(&self) -> String {
        self.compact()[..CODE_CHARS / 2].to_string()
    }

    /// The password of the key exchange between machines that met by it.
    pub fn password(&self) -> RoomPassword {
        RoomPassword::new(&self.compact())
    }
}

impl fmt::Display for RoomCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.compact();
        write!(f, "{}-{}", &text[..3], &text[3..])
    }
}

impl FromStr for RoomCode {
    type Err = String;

    /// Reads a code as people type it: any case, with or without the dash
    /// or spaces; look-alikes (0, O, 1, I, L) are read as the host's
    /// printed characters could not contain them, so they are refused.
    fn from_str(text: &str) -> Result<Self, String> {
        let wrong = || {
            format!("{text:?}: expected a room code like 7KQ-M2X (six letters and digits, as the host printed it)")
        };
        let mut code = [0u8; CODE_CHARS];
        let mut count = 0;
        for c in text.chars().filter(|c| *c != '-' && !c.is_whitespace()) {
            let c = c.to_ascii_uppercase();
            if count == CODE_CHARS || !c.is_ascii() || !ALPHABET.contains(&(c as u8)) {
                return Err(wrong());
            }
            code[count] = c as u8;
            count += 1;
        }
        if count != CODE_CHARS {
            return Err(wrong());
        }
        Ok(RoomCode(code))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_prints_with_a_dash_and_reads_back_however_it_is_typed() {
        let code = RoomCode::from_random([0, 30, 31, 100, 200, 255]);
        let printed = code.to_string();
        assert_eq!(printed.len(), 7);
        assert_eq!(&printed[3..4], "-");
        for typed in [
            printed.clone(),
            printed.to_lowercase(),
            printed.replace('-', ""),
            printed.replace('-', " "),
        ] {
            assert_eq!(typed.parse::<RoomCode>(), Ok(code), "{typed}");
        }
    }

    #[test]
    fn codes_hold_no_look_alikes_and_wrong_lengths_are_refused() {
        for byte in 0..=255u8 {
            let text = RoomCode::from_random([byte; CODE_CHARS]).to_string();
            assert!(!text.contains(['0', 'O', '1', 'I', 'L']), "{text}");
        }
        for bad in ["", "7KQ-M2", "7KQ-M2XA", "7KQ-M0X", "7KQ-MÖX", "7KQ_M2X"] {
            let error = bad.parse::<RoomCode>().unwrap_err();
            assert!(error.contains("room code like"), "{error}");
        }
    }
}
