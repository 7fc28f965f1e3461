//! LEB128 varints: 7 bits a byte, low bits first, the high bit set on every
//! byte but the last. Frame numbers and counts are small, so most take one byte.

use super::ReadError;

/// Appends `value` as a LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    loop {
        let byte = (value & 0x7F) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Reads a varint written by [`put_varint`] from the start of `bytes`
/// (shortest form only, at most 64 bits): the value and the bytes it took.
pub fn read_varint(bytes: &[u8]) -> Result<(u64, usize), ReadError> {
    let mut value = 0u64;
    for index in 0..10 {
        let byte = *bytes.get(index).ok_or(ReadError::Truncated)?;
        let payload = (byte & 0x7F) as u64;
        if index == 9 && payload > 1 {
            return Err(ReadError::BadVarint);
        }
        value |= payload << (7 * index);
        if byte & 0x80 == 0 {
            if index > 0 && byte == 0 {
                return Err(ReadError::BadVarint);
            }
            return Ok((value, index + 1));
        }
    }
    Err(ReadError::BadVarint)
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn varint_len(value: u64) -> usize {
        let mut len = 1;
        let mut rest = value >> 7;
        while rest != 0 {
            len += 1;
            rest >>= 7;
        }
        len
    }

    #[test]
    fn varints_round_trip_and_reject_overlong_forms() {
        for value in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, value);
            assert_eq!(out.len(), varint_len(value));
            assert_eq!(read_varint(&out), Ok((value, out.len())));
        }
        assert_eq!(read_varint(&[0x80, 0x00]), Err(ReadError::BadVarint));
    }

    #[test]
    fn a_varint_cut_short_or_over_64_bits_is_an_error() {
        assert_eq!(read_varint(&[0x80]), Err(ReadError::Truncated));
        assert_eq!(read_varint(&[]), Err(ReadError::Truncated));
        let mut too_long = vec![0xFF; 9];
        too_long.push(0x02);
        assert_eq!(read_varint(&too_long), Err(ReadError::BadVarint));
    }
}
