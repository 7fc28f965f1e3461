//! The bytes around a RetroArch match's state: its savestates (zlib when
//! both sides said so, never inflated past the size they claim), the
//! CRC-32 its host checks frames with, and the salted password hash.

use sha2::{Digest, Sha256};

/// Why a savestate from the network cannot be loaded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// It claims more bytes than we take.
    #[error("the host's savestate claims {claimed} bytes, more than the {limit} taken")]
    TooLarge {
        /// Its claimed size.
        claimed: usize,
        /// The cap.
        limit: usize,
    },
    /// Its zlib stream is damaged or inflates to another size.
    #[error("the host's savestate does not inflate to the {claimed} bytes it claims")]
    Damaged {
        /// Its claimed size.
        claimed: usize,
    },
}

/// The state `data` carries: inflated when `zlib`, in either case exactly
/// `claimed` bytes (at most `limit`).
pub fn unpack_state(
    data: &[u8],
    claimed: usize,
    zlib: bool,
    limit: usize,
) -> Result<Vec<u8>, StateError> {
    if claimed > limit {
        return Err(StateError::TooLarge { claimed, limit });
    }
    let state = if zlib {
        // One byte more than claimed: a stream that inflates past the
        // claim is caught without inflating it further.
        miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(data, claimed + 1)
            .map_err(|_| StateError::Damaged { claimed })?
    } else {
        data.to_vec()
    };
    if state.len() != claimed {
        return Err(StateError::Damaged { claimed });
    }
    Ok(state)
}

/// `state` as a host sends it: zlib (level 6, zlib's default) or as is.
pub fn pack_state(state: &[u8], zlib: bool) -> Vec<u8> {
    if zlib {
        miniz_oxide::deflate::compress_to_vec_zlib(state, 6)
    } else {
        state.to_vec()
    }
}

/// CRC-32 (zlib's) of a state: what the host sends in CRC for a frame.
pub fn state_crc(state: &[u8]) -> u32 {
    crc32fast::hash(state)
}

/// The PASSWORD a client sends for `salt`: the SHA-256, in lowercase hex,
/// of the salt as 8 uppercase hex digits followed by the password (at
/// most 128 bytes of it count, as RetroArch's buffer holds).
pub fn password_hash(salt: u32, password: &str) -> [u8; super::wire::PASSWORD_HASH_LEN] {
    let mut end = password.len().min(128);
    while !password.is_char_boundary(end) {
        end -= 1;
    }
    let mut hasher = Sha256::new();
    hasher.update(format!("{salt:08X}").as_bytes());
    hasher.update(&password.as_bytes()[..end]);
    let digest = hasher.finalize();
    let mut hex = [0; super::wire::PASSWORD_HASH_LEN];
    for (pair, byte) in hex.chunks_exact_mut(2).zip(digest) {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        pair[0] = DIGITS[usize::from(byte >> 4)];
        pair[1] = DIGITS[usize::from(byte & 0xf)];
    }
    hex
}
