//! The latest checkpoints' states a machine keeps: what the host sends a
//! member whose checksum differed, and what a member diffs the host's
//! against (see `desync_diagnosis`).

use netcode::rollback::Frame;
use std::collections::VecDeque;

/// Checkpoint states kept: a desync is reported a round trip after its
/// checkpoint, a few checkpoints at most.
pub const CHECKPOINT_STATES_KEPT: usize = 8;

/// Bytes of checkpoint states kept, whatever their count.
pub const CHECKPOINT_STATES_MAX_BYTES: usize = 64 << 20;

/// The latest states saved at checkpoint frames, bounded in count and bytes.
#[derive(Debug, Default)]
pub struct CheckpointStates {
    states: VecDeque<(Frame, Vec<u8>)>,
    bytes: usize,
}

impl CheckpointStates {
    /// Keeps `state` as checkpoint `frame`'s (a re-simulation's save replaces
    /// the earlier one), dropping the oldest beyond the bounds.
    pub fn keep(&mut self, frame: Frame, state: &[u8]) {
        if let Some(position) = self.states.iter().position(|(kept, _)| *kept == frame) {
            if let Some((_, old)) = self.states.remove(position) {
                self.bytes -= old.len();
            }
        }
        self.bytes += state.len();
        self.states.push_back((frame, state.to_vec()));
        while self.states.len() > CHECKPOINT_STATES_KEPT
            || (self.bytes > CHECKPOINT_STATES_MAX_BYTES && self.states.len() > 1)
        {
            if let Some((_, old)) = self.states.pop_front() {
                self.bytes -= old.len();
            }
        }
    }

    /// The state kept for checkpoint `frame`, if still kept.
    pub fn get(&self, frame: Frame) -> Option<&[u8]> {
        self.states
            .iter()
            .find(|(kept, _)| *kept == frame)
            .map(|(_, state)| state.as_slice())
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_states_stay_bounded_and_a_resave_replaces_the_first() {
        let mut kept = CheckpointStates::default();
        for number in 0..20 {
            kept.keep(Frame::new(number * 10), &[number as u8; 100]);
        }
        kept.keep(Frame::new(190), &[7; 50]);
        assert_eq!(kept.get(Frame::new(190)), Some(&[7u8; 50][..]));
        assert_eq!(kept.get(Frame::new(0)), None, "the oldest went");
        assert_eq!(kept.bytes(), 7 * 100 + 50);
    }
}
