//! A checkpoint's state on the wire: the host sends it to a member whose
//! checksum of that frame differed (the member diffs it against its own).
//! The frame number as 4 bytes little-endian, then the state as a
//! [`state_blob`] (the start state goes as a plain one).

use crate::encoding::state_blob::{self, StateBlobError};
use crate::rollback::{Frame, MAX_MATCH_FRAMES};

/// Bytes of the frame number in front of the state's blob.
const FRAME_PREFIX: usize = 4;

/// The blob carrying the host's state of checkpoint `frame`.
pub fn compress_checkpoint(frame: Frame, state: &[u8]) -> Vec<u8> {
    let mut blob = frame.number().to_le_bytes().to_vec();
    blob.extend_from_slice(&state_blob::compress(state));
    blob
}

/// The largest blob a checkpoint state of at most `max_state_bytes` takes.
pub fn max_checkpoint_blob_size(max_state_bytes: usize) -> usize {
    FRAME_PREFIX + state_blob::max_blob_size(max_state_bytes)
}

/// The frame and state a checkpoint blob carries, if the state is at most
/// `max_state_bytes` once expanded.
pub fn decompress_checkpoint(
    blob: &[u8],
    max_state_bytes: usize,
) -> Result<(Frame, Vec<u8>), StateBlobError> {
    let Some((prefix, rest)) = blob.split_first_chunk::<FRAME_PREFIX>() else {
        return Err(StateBlobError::Truncated(blob.len()));
    };
    let number = u32::from_le_bytes(*prefix);
    // A spectator's replay starts at this frame: keep it one the reader takes.
    if number > MAX_MATCH_FRAMES {
        return Err(StateBlobError::FrameOutOfRange(number));
    }
    Ok((
        Frame::new(number),
        state_blob::decompress(rest, max_state_bytes)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a_state() -> Vec<u8> {
        [1, 2, 3, 5, 8].repeat(1000)
    }

    #[test]
    fn a_checkpoint_beyond_any_match_is_refused() {
        let blob = compress_checkpoint(Frame::new(u32::MAX), &a_state());
        assert_eq!(
            decompress_checkpoint(&blob, 1 << 20),
            Err(StateBlobError::FrameOutOfRange(u32::MAX))
        );
    }

    #[test]
    fn a_checkpoint_state_comes_back_with_its_frame() {
        let state = a_state();
        let blob = compress_checkpoint(Frame::new(120), &state);
        assert!(blob.len() <= max_checkpoint_blob_size(state.len()));
        assert_eq!(
            decompress_checkpoint(&blob, state.len()),
            Ok((Frame::new(120), state))
        );
        assert_eq!(
            decompress_checkpoint(&blob[..3], 10),
            Err(StateBlobError::Truncated(3))
        );
    }
}
