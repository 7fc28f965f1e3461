//! Saved game states for the frames a rollback may return to.
//!
//! The frontend writes each state into a slot the ring owns; a slot's buffer
//! is reused frame after frame, so once every slot has held one state no more
//! memory is allocated. The bytes the slots hold are bounded by a budget.
//!
//! States are kept raw, not compressed: the ring holds only the prediction
//! window (about ten states), and every frame saves into it, where lz4 on
//! genesis_plus_gx's 1 MB state costs more than the core's own frame.

use super::frame::Frame;
use crate::checksum::Checksum;

/// One saved state: which frame it is, the bytes, and the checksum the
/// frontend computed for it (if it computes any).
#[derive(Clone, Debug, Default)]
pub struct StateSlot {
    frame: Option<Frame>,
    data: Vec<u8>,
    checksum: Option<Checksum>,
}

impl StateSlot {
    /// The frame whose state this is.
    pub fn frame(&self) -> Option<Frame> {
        self.frame
    }

    /// The saved bytes.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The buffer to save into. It still holds an older state: clear or
    /// overwrite it. Its capacity is kept, so saving does not allocate.
    pub fn buffer_mut(&mut self) -> &mut Vec<u8> {
        &mut self.data
    }

    /// Records the checksum of the state just saved.
    pub fn set_checksum(&mut self, checksum: Checksum) {
        self.checksum = Some(checksum);
    }

    /// The checksum of the state saved here; `None` until one is set.
    pub fn checksum(&self) -> Option<Checksum> {
        self.checksum
    }
}

/// The states a ring holds take more bytes than it may.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the {slots} states a rollback may return to take {held} bytes, more than the {budget} allowed: the game's states are too large for this prediction window")]
pub struct StatesOverBudget {
    /// States the ring keeps.
    pub slots: usize,
    /// Bytes they hold.
    pub held: usize,
    /// Bytes they may hold.
    pub budget: usize,
}

/// A ring of [`StateSlot`]s indexed by frame.
#[derive(Clone, Debug)]
pub struct StateRing {
    slots: Box<[StateSlot]>,
    budget: usize,
}

impl StateRing {
    /// Room for `frames` consecutive saved frames, in any number of bytes.
    pub fn new(frames: usize) -> Self {
        Self::with_budget(frames, usize::MAX)
    }

    /// Room for `frames` consecutive saved frames in at most `budget` bytes
    /// (checked by [`StateRing::check_budget`]).
    pub fn with_budget(frames: usize, budget: usize) -> Self {
        StateRing {
            slots: vec![StateSlot::default(); frames.max(1)].into_boxed_slice(),
            budget,
        }
    }

    /// Bytes the slots' buffers hold, as allocated.
    pub fn bytes_held(&self) -> usize {
        self.slots.iter().map(|slot| slot.data.capacity()).sum()
    }

    /// An error once the states saved take more than the budget.
    pub fn check_budget(&self) -> Result<(), StatesOverBudget> {
        let held = self.bytes_held();
        if held > self.budget {
            return Err(StatesOverBudget {
                slots: self.slots.len(),
                held,
                budget: self.budget,
            });
        }
        Ok(())
    }

    /// How many frames' states the ring holds (at least 1).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Always false (a ring has at least one slot); here for clippy's
    /// `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    fn index(&self, frame: Frame) -> usize {
        frame.number() as usize % self.slots.len()
    }

    /// Claims the slot for `frame` (forgetting the state it held and its
    /// checksum) for a save about to happen.
    pub fn claim(&mut self, frame: Frame) -> &mut StateSlot {
        let index = self.index(frame);
        let slot = &mut self.slots[index];
        slot.frame = Some(frame);
        slot.checksum = None;
        slot
    }

    /// The state saved for `frame`, if the ring still holds it.
    pub fn get(&self, frame: Frame) -> Option<&StateSlot> {
        let slot = &self.slots[self.index(frame)];
        (slot.frame == Some(frame)).then_some(slot)
    }

    /// The slot for `frame` to write into, if it was claimed for that frame.
    pub fn get_mut(&mut self, frame: Frame) -> Option<&mut StateSlot> {
        let index = self.index(frame);
        let slot = &mut self.slots[index];
        (slot.frame == Some(frame)).then_some(slot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_state_is_found_by_its_frame_until_the_ring_wraps_over_it() {
        let mut ring = StateRing::new(3);
        for n in 0..4u32 {
            let slot = ring.claim(Frame::new(n));
            slot.buffer_mut().clear();
            slot.buffer_mut().extend_from_slice(&n.to_le_bytes());
            slot.set_checksum(Checksum(u64::from(n)));
        }
        assert!(ring.get(Frame::new(0)).is_none());
        let slot = ring.get(Frame::new(2)).unwrap();
        assert_eq!(slot.data(), &2u32.to_le_bytes());
        assert_eq!(slot.checksum(), Some(Checksum(2)));
    }

    #[test]
    fn states_beyond_the_byte_budget_are_reported_with_what_they_take() {
        let mut ring = StateRing::with_budget(3, 1000);
        for n in 0..3u32 {
            let buffer = ring.claim(Frame::new(n)).buffer_mut();
            buffer.clear();
            buffer.resize(300, n as u8);
        }
        assert!(ring.bytes_held() >= 900);
        assert_eq!(ring.check_budget(), Ok(()));
        ring.claim(Frame::new(3)).buffer_mut().resize(600, 0);
        let err = ring.check_budget().unwrap_err();
        assert_eq!((err.slots, err.budget), (3, 1000));
        assert!(err.held >= 1200, "{err}");
    }

    #[test]
    fn claiming_a_slot_again_forgets_the_old_checksum_but_keeps_the_buffer() {
        let mut ring = StateRing::new(2);
        ring.claim(Frame::new(1))
            .buffer_mut()
            .extend_from_slice(&[0; 100]);
        ring.get_mut(Frame::new(1))
            .unwrap()
            .set_checksum(Checksum(7));
        let slot = ring.claim(Frame::new(3));
        assert_eq!(slot.checksum(), None);
        assert!(slot.buffer_mut().capacity() >= 100);
    }
}
