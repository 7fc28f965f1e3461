//! GGPO's toggle code for one input against the one before it: `1` + 4-bit
//! index per changed button, `0` ends the input. An unchanged input costs one
//! bit, one button going down or up six.

use super::bits::{BitReader, BitWriter};
use super::ReadError;
use crate::input::Buttons;

/// The bits one input costs in the toggle code, given the input before it.
pub const fn toggle_cost(previous: Buttons, current: Buttons) -> usize {
    1 + 5 * (previous.bits() ^ current.bits()).count_ones() as usize
}

/// Writes `current` as the toggle code against `previous`.
pub fn put_toggles(bits: &mut BitWriter<'_>, previous: Buttons, current: Buttons) {
    let mut changed = previous.bits() ^ current.bits();
    while changed != 0 {
        let index = changed.trailing_zeros();
        bits.write_bit(true);
        bits.write_bits(index, 4);
        changed &= changed - 1;
    }
    bits.write_bit(false);
}

/// Reads one input written by [`put_toggles`] against `previous`.
pub fn read_toggles(bits: &mut BitReader<'_>, previous: Buttons) -> Result<Buttons, ReadError> {
    let mut value = previous.bits();
    let mut toggles = 0;
    while bits.read_bit()? {
        toggles += 1;
        if toggles > 16 {
            return Err(ReadError::BadInputBits);
        }
        value ^= 1 << bits.read_bits(4)?;
    }
    Ok(Buttons::from_bits(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_reads_back_at_the_cost_it_was_priced_at() {
        let (before, now) = (Buttons::from_bits(0b1010), Buttons::from_bits(0b0110));
        let mut out = Vec::new();
        let mut writer = BitWriter::new(&mut out);
        put_toggles(&mut writer, before, now);
        assert_eq!(writer.bit_len(), toggle_cost(before, now));
        assert_eq!(read_toggles(&mut BitReader::new(&out), before), Ok(now));
    }

    #[test]
    fn more_toggles_than_buttons_is_an_error() {
        // 17 toggles of button 0, each `1` + `0000`.
        let mut out = Vec::new();
        let mut writer = BitWriter::new(&mut out);
        for _ in 0..17 {
            writer.write_bit(true);
            writer.write_bits(0, 4);
        }
        assert_eq!(
            read_toggles(&mut BitReader::new(&out), Buttons::NONE),
            Err(ReadError::BadInputBits)
        );
    }
}
