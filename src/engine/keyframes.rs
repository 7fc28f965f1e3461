//! [`Keyframes`]: savestates kept every so many frames within a budget
//! of bytes, for seeking (`replay play --seek`, the debugger's `goto`).

use netcode::rollback::Frame;

/// Savestates every `interval` frames from a start frame (the interval
/// doubling, every other one dropped, whenever they would take more than
/// their budget of bytes), kept in memory: `replay play --seek` builds them
/// over a whole replay, the debugger keeps them as it steps so a window's
/// timeline can seek anywhere it has been.
#[derive(Debug)]
pub struct Keyframes {
    /// (frame, state at its start), in frame order, the start frame first.
    states: Vec<(Frame, Vec<u8>)>,
    bytes: usize,
    start: Frame,
    interval: u32,
    budget: usize,
}

impl Keyframes {
    /// None kept yet: states are kept from `start` on, every `interval`
    /// frames (at least 1), in at most `budget` bytes (the start frame's is
    /// kept whatever its size).
    pub fn new(start: Frame, interval: u32, budget: usize) -> Self {
        Keyframes {
            states: Vec::new(),
            bytes: 0,
            start,
            interval: interval.max(1),
            budget,
        }
    }

    /// Whether a state at the start of `frame` would be kept (it falls on
    /// the interval, after the last one kept).
    pub fn wants(&self, frame: Frame) -> bool {
        frame >= self.start
            && (frame.number() - self.start.number()).is_multiple_of(self.interval)
            && self.states.last().is_none_or(|(last, _)| *last < frame)
    }

    /// Keeps `state`, saved at the start of `frame`, if [`Keyframes::wants`]
    /// it; past the budget, every other state goes and the interval doubles.
    pub fn offer(&mut self, frame: Frame, state: &[u8]) {
        if !self.wants(frame) {
            return;
        }
        self.bytes += state.len();
        self.states.push((frame, state.to_vec()));
        while self.bytes > self.budget && self.states.len() > 1 {
            self.interval = self.interval.saturating_mul(2);
            let (start, interval) = (self.start.number(), self.interval);
            self.states
                .retain(|(kept, _)| (kept.number() - start).is_multiple_of(interval));
            self.bytes = self.states.iter().map(|(_, s)| s.len()).sum();
        }
    }

    /// The frame states are kept from (its state is kept first).
    pub fn start(&self) -> Frame {
        self.start
    }

    /// The last state kept at or before `frame`.
    pub fn at_or_before(&self, frame: Frame) -> Option<(Frame, &[u8])> {
        let index = self.states.partition_point(|(kept, _)| *kept <= frame);
        let (kept, state) = self.states.get(index.checked_sub(1)?)?;
        Some((*kept, state))
    }

    /// Forgets the states after `frame` (they belong to a timeline left).
    pub fn forget_after(&mut self, frame: Frame) {
        self.states.retain(|(kept, _)| *kept <= frame);
        self.bytes = self.states.iter().map(|(_, s)| s.len()).sum();
    }

    /// How many keyframes are kept.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    /// Whether none are (never after a build: the start frame is always one).
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    /// Bytes the kept states take.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}
