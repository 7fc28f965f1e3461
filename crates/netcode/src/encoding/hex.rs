//! Bytes as lowercase hexadecimal text, where a text file or a text header
//! carries them (rejoin tickets, broadcast signatures).

/// `bytes` as two lowercase hex digits each.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The bytes `text` spells in hex digits (either case), or `None` when it
/// is not an even number of them.
pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    // Digits only: `from_str_radix` alone would take "+1".
    if !text.len().is_multiple_of(2) || !text.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&text[at..at + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_reads_back_and_refuses_what_is_not_hex() {
        assert_eq!(to_hex(&[0, 0xab, 0x7f]), "00ab7f");
        assert_eq!(from_hex("00AB7f"), Some(vec![0, 0xab, 0x7f]));
        for bad in ["0", "zz", "é1", "+1"] {
            assert_eq!(from_hex(bad), None, "{bad}");
        }
    }
}
