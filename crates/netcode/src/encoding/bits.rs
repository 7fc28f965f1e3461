//! Bit-level writing and reading, least significant bit first, for the input
//! toggle code: an unchanged frame costs one bit, so bytes are too coarse.

use super::ReadError;

/// Appends bits to the end of a byte vector (the datagram being built).
pub struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
    bit_len: usize,
}

impl<'a> BitWriter<'a> {
    /// Starts writing bits after the bytes already in `out`.
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        let start = out.len();
        BitWriter {
            out,
            start,
            bit_len: 0,
        }
    }

    /// Bits written so far.
    pub fn bit_len(&self) -> usize {
        self.bit_len
    }

    /// Bytes the bits occupy so far (the last one possibly partly filled).
    pub fn byte_len(&self) -> usize {
        self.bit_len.div_ceil(8)
    }

    /// Appends one bit, starting a new byte every eighth bit.
    pub fn write_bit(&mut self, bit: bool) {
        let offset = self.bit_len % 8;
        if offset == 0 {
            self.out.push(0);
        }
        if bit {
            let last = self.out.len() - 1;
            self.out[last] |= 1 << offset;
        }
        self.bit_len += 1;
    }

    /// Writes the low `count` bits of `value` (count ≤ 32).
    pub fn write_bits(&mut self, value: u32, count: u32) {
        for i in 0..count {
            self.write_bit(value >> i & 1 == 1);
        }
    }

    /// Forgets everything written after the first `bit_len` bits, so a writer
    /// can try to append a frame and take it back if the datagram overflows.
    pub fn truncate(&mut self, bit_len: usize) {
        if bit_len >= self.bit_len {
            return;
        }
        self.bit_len = bit_len;
        self.out.truncate(self.start + bit_len.div_ceil(8));
        let offset = bit_len % 8;
        if offset != 0 {
            let last = self.out.len() - 1;
            self.out[last] &= (1u8 << offset) - 1;
        }
    }
}

/// Reads bits from a byte slice; running past its end is an error, not a panic.
pub struct BitReader<'a> {
    bytes: &'a [u8],
    bit_pos: usize,
}

impl<'a> BitReader<'a> {
    /// Starts reading at the first bit of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        BitReader { bytes, bit_pos: 0 }
    }

    /// Bits not read yet.
    pub fn remaining_bits(&self) -> usize {
        self.bytes.len() * 8 - self.bit_pos
    }

    /// Bytes touched so far (a partly read byte counts).
    pub fn bytes_consumed(&self) -> usize {
        self.bit_pos.div_ceil(8)
    }

    /// The next bit, or [`ReadError::Truncated`] past the last byte.
    pub fn read_bit(&mut self) -> Result<bool, ReadError> {
        let byte = *self
            .bytes
            .get(self.bit_pos / 8)
            .ok_or(ReadError::Truncated)?;
        let bit = byte >> (self.bit_pos % 8) & 1 == 1;
        self.bit_pos += 1;
        Ok(bit)
    }

    /// Reads `count` bits (≤ 32) written by [`BitWriter::write_bits`].
    pub fn read_bits(&mut self, count: u32) -> Result<u32, ReadError> {
        let mut value = 0u32;
        for i in 0..count {
            if self.read_bit()? {
                value |= 1 << i;
            }
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_read_back_in_the_order_they_were_written() {
        let mut out = vec![0xAA];
        let mut writer = BitWriter::new(&mut out);
        writer.write_bit(true);
        writer.write_bits(0b1011, 4);
        writer.write_bits(0x1234, 16);
        assert_eq!(writer.bit_len(), 21);
        assert_eq!(out.len(), 1 + 3);
        let mut reader = BitReader::new(&out[1..]);
        assert!(reader.read_bit().unwrap());
        assert_eq!(reader.read_bits(4).unwrap(), 0b1011);
        assert_eq!(reader.read_bits(16).unwrap(), 0x1234);
    }

    #[test]
    fn truncating_takes_back_bits_and_clears_them() {
        let mut out = Vec::new();
        let mut writer = BitWriter::new(&mut out);
        writer.write_bits(0b101, 3);
        writer.write_bits(0xFFFF, 16);
        writer.truncate(3);
        writer.write_bit(false);
        assert_eq!(out, vec![0b0101]);
    }

    #[test]
    fn reading_past_the_end_is_an_error() {
        let mut reader = BitReader::new(&[0xFF]);
        assert_eq!(reader.read_bits(8).unwrap(), 0xFF);
        assert_eq!(reader.read_bit(), Err(ReadError::Truncated));
    }
}
