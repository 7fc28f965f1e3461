//! A long history of saved states, one per consecutive frame, kept
//! lz4-compressed within a byte budget as well as a frame count: the oldest
//! states go first when either is exceeded.
//!
//! Real cores' states are large but mostly repetitive (genesis_plus_gx
//! promises 1 MB and writes ~145 KB, the rest zero), so a frame-step
//! debugger's minutes of history fit in a few hundred megabytes compressed
//! where they would take gigabytes raw.

use std::collections::VecDeque;

/// Why a history could not take or give back a state.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateHistoryError {
    /// A single state, even compressed, is larger than the history's whole
    /// byte budget, so nothing could be kept.
    #[error("one state takes {bytes} bytes compressed, more than the whole history's {budget}")]
    StateOverBudget {
        /// The state's compressed size, in bytes.
        bytes: usize,
        /// The history's byte budget.
        budget: usize,
    },
    /// A state was pushed for a frame other than the one after the newest
    /// kept (the history holds consecutive frames only).
    #[error("frame {frame} does not follow the newest kept frame {newest}")]
    NotNextFrame {
        /// The frame pushed.
        frame: u32,
        /// The newest frame the history holds.
        newest: u32,
    },
    /// A kept state failed to decompress to its recorded length; the
    /// history's own bytes were damaged.
    #[error("the kept state of frame {frame} could not be decompressed")]
    Corrupt {
        /// The frame asked for.
        frame: u32,
    },
}

/// One kept frame: its compressed state, the state's length, and what the
/// caller keeps with it.
#[derive(Clone, Debug)]
struct Entry<M> {
    compressed: Vec<u8>,
    len: usize,
    extra: M,
}

/// See the module docs. `M` is what the caller keeps with each state
/// (checksums, the inputs of the frame that starts there, …).
#[derive(Clone, Debug)]
pub struct StateHistory<M> {
    entries: VecDeque<Entry<M>>,
    /// The frame of `entries[0]`.
    oldest: u32,
    max_frames: usize,
    budget: usize,
    /// Compressed bytes held, as allocated.
    bytes: usize,
    /// Uncompressed bytes of the states held.
    raw_bytes: usize,
    scratch: Vec<u8>,
}

impl<M> StateHistory<M> {
    /// At most `max_frames` states (at least 1) in at most `budget` bytes.
    pub fn new(max_frames: usize, budget: usize) -> Self {
        StateHistory {
            entries: VecDeque::new(),
            oldest: 0,
            max_frames: max_frames.max(1),
            budget,
            bytes: 0,
            raw_bytes: 0,
            scratch: Vec::new(),
        }
    }

    /// Keeps `state` as frame `frame`, which must follow the newest kept
    /// frame (any frame if none is kept), then forgets the oldest frames
    /// until the history fits its limits again.
    pub fn push(&mut self, frame: u32, state: &[u8], extra: M) -> Result<(), StateHistoryError> {
        if let Some(newest) = self.newest_frame() {
            if newest.checked_add(1) != Some(frame) {
                return Err(StateHistoryError::NotNextFrame { frame, newest });
            }
        }
        self.scratch
            .resize(lz4_flex::block::get_maximum_output_size(state.len()), 0);
        let written = lz4_flex::block::compress_into(state, &mut self.scratch)
            .expect("the output holds the maximum compressed size");
        let compressed = self.scratch[..written].to_vec();
        if compressed.capacity() > self.budget {
            return Err(StateHistoryError::StateOverBudget {
                bytes: compressed.capacity(),
                budget: self.budget,
            });
        }
        if self.entries.is_empty() {
            self.oldest = frame;
        }
        self.bytes += compressed.capacity();
        self.raw_bytes += state.len();
        self.entries.push_back(Entry {
            compressed,
            len: state.len(),
            extra,
        });
        while self.entries.len() > self.max_frames || self.bytes > self.budget {
            self.forget_oldest();
        }
        Ok(())
    }

    fn forget_oldest(&mut self) {
        if let Some(entry) = self.entries.pop_front() {
            self.bytes -= entry.compressed.capacity();
            self.raw_bytes -= entry.len;
            self.oldest += 1;
        }
    }

    /// Forgets every frame after `frame`.
    pub fn truncate_after(&mut self, frame: u32) {
        while self.newest_frame().is_some_and(|newest| newest > frame) {
            if let Some(entry) = self.entries.pop_back() {
                self.bytes -= entry.compressed.capacity();
                self.raw_bytes -= entry.len;
            }
        }
    }

    fn index(&self, frame: u32) -> Option<usize> {
        let index = frame.checked_sub(self.oldest)? as usize;
        (index < self.entries.len()).then_some(index)
    }

    /// Writes the state of `frame` into `into` (resized to it); `false` if
    /// the frame is not kept.
    pub fn load(&self, frame: u32, into: &mut Vec<u8>) -> Result<bool, StateHistoryError> {
        let Some(index) = self.index(frame) else {
            return Ok(false);
        };
        let entry = &self.entries[index];
        into.clear();
        into.resize(entry.len, 0);
        match lz4_flex::block::decompress_into(&entry.compressed, into) {
            Ok(len) if len == entry.len => Ok(true),
            _ => Err(StateHistoryError::Corrupt { frame }),
        }
    }

    /// What was kept with the state of `frame`.
    pub fn extra(&self, frame: u32) -> Option<&M> {
        self.index(frame).map(|index| &self.entries[index].extra)
    }

    /// What was kept with `frame`, to change it.
    pub fn extra_mut(&mut self, frame: u32) -> Option<&mut M> {
        self.index(frame)
            .map(|index| &mut self.entries[index].extra)
    }

    /// The oldest frame kept, if any.
    pub fn oldest_frame(&self) -> Option<u32> {
        (!self.entries.is_empty()).then_some(self.oldest)
    }

    /// The newest frame kept, if any.
    pub fn newest_frame(&self) -> Option<u32> {
        let len = u32::try_from(self.entries.len()).ok()?;
        len.checked_sub(1).map(|last| self.oldest + last)
    }

    /// How many frames are kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no frame is kept.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes the compressed states take.
    pub fn bytes_used(&self) -> usize {
        self.bytes
    }

    /// Bytes the kept states would take uncompressed.
    pub fn raw_bytes(&self) -> usize {
        self.raw_bytes
    }

    /// The byte budget.
    pub fn budget(&self) -> usize {
        self.budget
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state like genesis_plus_gx's: a varying head, then a long run of zeros.
    fn padded_state(frame: u32, len: usize) -> Vec<u8> {
        let mut state = vec![0; len];
        for (i, byte) in state.iter_mut().take(len / 8).enumerate() {
            *byte = (i as u32).wrapping_mul(frame.wrapping_add(7)) as u8;
        }
        state
    }

    #[test]
    fn a_kept_state_comes_back_byte_for_byte_with_what_was_kept_with_it() {
        let mut history = StateHistory::new(10, 1 << 20);
        for frame in 5..9 {
            history
                .push(frame, &padded_state(frame, 4096), frame * 10)
                .unwrap();
        }
        let mut state = Vec::new();
        assert!(history.load(6, &mut state).unwrap());
        assert_eq!(state, padded_state(6, 4096));
        assert_eq!(history.extra(6), Some(&60));
        assert!(!history.load(4, &mut state).unwrap(), "never kept");
        assert!(!history.load(9, &mut state).unwrap(), "not yet kept");
        assert_eq!(
            (history.oldest_frame(), history.newest_frame()),
            (Some(5), Some(8))
        );
    }

    #[test]
    fn mostly_empty_states_are_kept_in_a_small_part_of_their_size() {
        let mut history = StateHistory::new(100, usize::MAX);
        for frame in 0..100 {
            history
                .push(frame, &padded_state(frame, 64 * 1024), ())
                .unwrap();
        }
        assert_eq!(history.raw_bytes(), 100 * 64 * 1024);
        assert!(
            history.bytes_used() * 4 < history.raw_bytes(),
            "{} of {}",
            history.bytes_used(),
            history.raw_bytes()
        );
    }

    #[test]
    fn the_byte_budget_forgets_the_oldest_frames_first() {
        let mut one = StateHistory::new(1, usize::MAX);
        one.push(0, &padded_state(0, 64 * 1024), ()).unwrap();
        let per_state = one.bytes_used();
        let mut history = StateHistory::new(1000, per_state * 10 + per_state / 2);
        for frame in 0..50 {
            history
                .push(frame, &padded_state(frame, 64 * 1024), ())
                .unwrap();
            assert!(history.bytes_used() <= history.budget());
        }
        // About ten states fit (they compress a little differently).
        assert!((8..=12).contains(&history.len()), "{}", history.len());
        assert_eq!(history.newest_frame(), Some(49));
        assert_eq!(history.oldest_frame(), Some(50 - history.len() as u32));
    }

    #[test]
    fn the_frame_count_limits_the_history_too() {
        let mut history = StateHistory::new(3, usize::MAX);
        for frame in 0..10 {
            history.push(frame, &[frame as u8; 16], ()).unwrap();
        }
        assert_eq!((history.oldest_frame(), history.len()), (Some(7), 3));
    }

    #[test]
    fn a_state_larger_than_the_budget_is_refused_and_the_history_is_unchanged() {
        let mut history = StateHistory::new(10, 64);
        history.push(0, &[0; 16], ()).unwrap();
        let noise: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let err = history.push(1, &noise, ()).unwrap_err();
        assert!(matches!(
            err,
            StateHistoryError::StateOverBudget { budget: 64, .. }
        ));
        assert_eq!(history.len(), 1);
    }

    #[test]
    fn going_back_forgets_the_frames_after_and_frames_must_follow_on() {
        let mut history = StateHistory::new(10, usize::MAX);
        for frame in 0..6 {
            history.push(frame, &[frame as u8; 8], ()).unwrap();
        }
        let bytes_before = history.bytes_used();
        history.truncate_after(3);
        assert_eq!(history.newest_frame(), Some(3));
        assert!(history.bytes_used() < bytes_before);
        assert_eq!(
            history.push(5, &[0; 8], ()),
            Err(StateHistoryError::NotNextFrame {
                frame: 5,
                newest: 3
            })
        );
        history.push(4, &[9; 8], ()).unwrap();
        let mut state = Vec::new();
        history.load(4, &mut state).unwrap();
        assert_eq!(state, [9; 8]);
    }
}
