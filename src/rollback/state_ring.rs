//! Saved game states for the frames a rollback may return to.
//!
//! The frontend writes each state into a slot the ring owns; a slot's buffer
//! is reused frame after frame, so once every slot has held one state no more
//! memory is allocated.

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

    pub fn checksum(&self) -> Option<Checksum> {
        self.checksum
    }
}

/// A ring of [`StateSlot`]s indexed by frame.
#[derive(Clone, Debug)]
pub struct StateRing {
    slots: Box<[StateSlot]>,
}

impl StateRing {
    /// Room for `frames` consecutive saved frames.
    pub fn new(frames: usize) -> Self {
        StateRing {
            slots: vec![StateSlot::default(); frames.max(1)].into_boxed_slice(),
        }
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

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
