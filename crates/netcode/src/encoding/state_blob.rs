//! A savestate as bytes (the host's start state and checkpoint states on the
//! wire, the start and repair states in a replay): lz4 (block format) after
//! the uncompressed size as 4 bytes little-endian. The size is checked
//! against the reader's limit before anything is allocated, and the
//! decompressor never writes past it, so a blob that claims or expands to
//! more (a "zip bomb") is refused.

/// Why a savestate blob cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateBlobError {
    /// The blob is too short to hold the size prefix.
    #[error("the start state is truncated ({0} bytes)")]
    Truncated(usize),
    /// The announced (or compressed) size is over the receiver's limit.
    #[error("the start state is {size} bytes, over the {max}-byte limit")]
    TooLarge {
        /// Bytes announced.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// The compressed bytes do not expand to exactly the announced size.
    #[error("the start state does not decompress: {0}")]
    Corrupt(String),
    /// A checkpoint's blob (see `netplay::checkpoint_state`) claims a frame
    /// later than any match (or its replay) reaches.
    #[error("the savestate claims frame {0}, beyond any match")]
    FrameOutOfRange(u32),
}

/// Bytes of the size prefix.
const SIZE_PREFIX: usize = 4;

/// The blob carrying `state`.
pub fn compress(state: &[u8]) -> Vec<u8> {
    lz4_flex::block::compress_prepend_size(state)
}

/// The largest blob a state of at most `max_state_bytes` compresses to.
pub fn max_blob_size(max_state_bytes: usize) -> usize {
    SIZE_PREFIX + lz4_flex::block::get_maximum_output_size(max_state_bytes)
}

/// The state a blob carries, if it is at most `max_state_bytes` once expanded.
pub fn decompress(blob: &[u8], max_state_bytes: usize) -> Result<Vec<u8>, StateBlobError> {
    let Some((prefix, compressed)) = blob.split_first_chunk::<SIZE_PREFIX>() else {
        return Err(StateBlobError::Truncated(blob.len()));
    };
    let size = u32::from_le_bytes(*prefix) as usize;
    if size > max_state_bytes {
        return Err(StateBlobError::TooLarge {
            size,
            max: max_state_bytes,
        });
    }
    let mut state = vec![0; size];
    let written = lz4_flex::block::decompress_into(compressed, &mut state)
        .map_err(|error| StateBlobError::Corrupt(error.to_string()))?;
    if written != size {
        return Err(StateBlobError::Corrupt(format!(
            "{written} bytes where {size} were announced"
        )));
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a_state() -> Vec<u8> {
        (0..5000u32).map(|i| (i % 7 + i / 600) as u8).collect()
    }

    #[test]
    fn a_start_state_comes_back_as_it_was_sent() {
        let state = a_state();
        let blob = compress(&state);
        assert!(blob.len() < state.len(), "it is compressed");
        assert!(blob.len() <= max_blob_size(state.len()));
        assert_eq!(decompress(&blob, state.len()), Ok(state));
    }

    #[test]
    fn a_start_state_announcing_more_than_the_limit_is_refused_before_allocating() {
        let mut blob = compress(&a_state());
        blob[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(
            decompress(&blob, 1 << 20),
            Err(StateBlobError::TooLarge {
                size: u32::MAX as usize,
                max: 1 << 20
            })
        );
    }

    #[test]
    fn a_start_state_that_expands_past_its_announced_size_is_refused() {
        // Ten megabytes of zeros compress to a few kilobytes; announce 1000.
        let mut blob = compress(&vec![0; 10 << 20]);
        blob[..4].copy_from_slice(&1000u32.to_le_bytes());
        assert!(matches!(
            decompress(&blob, 1 << 20),
            Err(StateBlobError::Corrupt(_))
        ));
    }

    #[test]
    fn a_truncated_start_state_is_refused() {
        let blob = compress(&a_state());
        assert_eq!(
            decompress(&blob[..3], 1 << 20),
            Err(StateBlobError::Truncated(3))
        );
        assert!(matches!(
            decompress(&blob[..blob.len() / 2], 1 << 20),
            Err(StateBlobError::Corrupt(_))
        ));
    }
}
