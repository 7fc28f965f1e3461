//! The bytes around a RetroArch match's state: its savestates (zlib when
//! both sides said so, never inflated past the size they claim), protocol
//! 7's container around the core's state, the CRC-32 its host checks
//! frames with, and the salted password hash.

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
    /// A protocol 7 container that cannot be read.
    #[error("the host's savestate container is damaged: {0}")]
    Container(&'static str),
}

/// How a protocol 7 savestate begins: `NETPLAY`, then its version byte.
pub const CONTAINER_MAGIC: &[u8; 7] = b"NETPLAY";
/// The container version netcade reads and writes.
const CONTAINER_VERSION: u8 = 1;
/// The block of the core's own state (its exact size, unpadded).
const CORE_BLOCK: &[u8; 4] = b"MEM ";
/// The block of achievement state: 8 bytes of flags (byte 0: hardcore),
/// then the achievements' own data when the sender has any.
const ACHIEVEMENTS_BLOCK: &[u8; 4] = b"ACHV";
/// The last block, of size 0.
const END_BLOCK: &[u8; 4] = b"END ";
/// The size of the achievement block a sender without achievements sends:
/// its flags only, all 0 (not hardcore).
const ACHIEVEMENT_FLAGS_LEN: usize = 8;

/// A block's bytes take a multiple of 8.
fn padded(len: usize) -> Option<usize> {
    len.checked_add(7).map(|len| len & !7)
}

/// Whether `state` is a protocol 7 container rather than a core's state
/// as is (RetroArch tells them apart by the magic alone).
pub fn is_container(state: &[u8]) -> bool {
    state.starts_with(CONTAINER_MAGIC)
}

/// The core's state inside a protocol 7 container: its `MEM ` block.
/// Every block's size is checked against what is left, the walk ends at
/// `END ` or the last byte, and a container without a core block, of
/// another version or cut short is an error.
pub fn container_core_state(container: &[u8]) -> Result<&[u8], StateError> {
    let bad = StateError::Container;
    let rest = container
        .strip_prefix(CONTAINER_MAGIC.as_slice())
        .ok_or(bad("no NETPLAY magic"))?;
    let (&version, mut rest) = rest.split_first().ok_or(bad("no version"))?;
    if version != CONTAINER_VERSION {
        return Err(bad("a version other than 1"));
    }
    let mut core = None;
    while !rest.is_empty() {
        let (header, after) = rest
            .split_at_checked(8)
            .ok_or(bad("a block header cut short"))?;
        let (tag, size) = header.split_at(4);
        let size = u32::from_le_bytes(size.try_into().expect("4 bytes")) as usize;
        if tag == END_BLOCK {
            break;
        }
        let body = after
            .get(..size)
            .ok_or(bad("a block larger than the container"))?;
        if tag == CORE_BLOCK {
            if core.is_some() {
                return Err(bad("two core state blocks"));
            }
            core = Some(body);
        }
        // The last block's padding may be cut; nothing follows it then.
        let skip = padded(size).map_or(after.len(), |padded| padded.min(after.len()));
        rest = &after[skip..];
    }
    core.ok_or(bad("no core state block"))
}

/// `core` in a protocol 7 container, as a RetroArch host without
/// achievements sends it: the core's block, an achievement block of flags
/// that say not hardcore, and the end.
pub fn wrap_in_container(core: &[u8]) -> Vec<u8> {
    let block = |out: &mut Vec<u8>, tag: &[u8; 4], body: &[u8]| {
        out.extend_from_slice(tag);
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(body);
        out.resize(
            out.len() + (padded(body.len()).unwrap_or(0) - body.len()),
            0,
        );
    };
    let mut out = Vec::with_capacity(core.len() + 48);
    out.extend_from_slice(CONTAINER_MAGIC);
    out.push(CONTAINER_VERSION);
    block(&mut out, CORE_BLOCK, core);
    block(&mut out, ACHIEVEMENTS_BLOCK, &[0; ACHIEVEMENT_FLAGS_LEN]);
    block(&mut out, END_BLOCK, &[]);
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A container as RetroArch's protocol text lays it out, by hand.
    fn container(blocks: &[(&[u8; 4], &[u8])]) -> Vec<u8> {
        let mut out = b"NETPLAY\x01".to_vec();
        for (tag, body) in blocks {
            out.extend_from_slice(*tag);
            out.extend_from_slice(&(body.len() as u32).to_le_bytes());
            out.extend_from_slice(body);
            while out.len() % 8 != 0 {
                out.push(0);
            }
        }
        out
    }

    #[test]
    fn the_core_state_is_found_after_an_achievement_block_of_any_size() {
        let core = [1u8, 2, 3, 4, 5];
        let wrapped = container(&[
            (b"ACHV", &[1, 0, 0, 0, 0, 0, 0, 0, 9, 9, 9]),
            (b"MEM ", &core),
            (b"END ", &[]),
        ]);
        assert!(is_container(&wrapped));
        assert_eq!(container_core_state(&wrapped), Ok(&core[..]));
    }

    #[test]
    fn a_wrapped_state_is_magic_version_core_block_achievement_flags_and_end() {
        let core = [7u8; 13];
        let wrapped = wrap_in_container(&core);
        let expected = container(&[(b"MEM ", &core), (b"ACHV", &[0; 8]), (b"END ", &[])]);
        assert_eq!(wrapped, expected);
        assert_eq!(wrapped.len(), 8 + 8 + 16 + 8 + 8 + 8);
        assert_eq!(container_core_state(&wrapped), Ok(&core[..]));
    }

    #[test]
    fn a_container_lying_about_a_blocks_size_or_without_a_core_block_is_refused() {
        let mut lying = container(&[(b"MEM ", &[1, 2, 3])]);
        lying[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(container_core_state(&lying).is_err());
        let no_core = container(&[(b"ACHV", &[0; 8]), (b"END ", &[])]);
        assert_eq!(
            container_core_state(&no_core),
            Err(StateError::Container("no core state block"))
        );
        let mut version_2 = container(&[(b"MEM ", &[1])]);
        version_2[7] = 2;
        assert!(container_core_state(&version_2).is_err());
        let cut = &container(&[(b"MEM ", &[1, 2, 3])])[..12];
        assert!(container_core_state(cut).is_err());
        let twice = container(&[(b"MEM ", &[1]), (b"MEM ", &[2])]);
        assert!(container_core_state(&twice).is_err());
        assert!(container_core_state(b"NETPLA").is_err());
    }

    #[test]
    fn a_raw_core_state_is_no_container() {
        assert!(!is_container(&[0u8; 64]));
        assert!(!is_container(b"NETPLA"));
    }
}
