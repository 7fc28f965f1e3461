//! The frame number: the one clock every peer agrees on.
//!
//! Frames count from zero at the start of a match and only go forward. "No frame
//! yet" is `Option<Frame>`, never a sentinel value.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// The most frames a match runs (and its replay holds): 24 hours at 60 fps.
/// A frame number beyond it in a replay or a checkpoint's blob is malformed.
pub const MAX_MATCH_FRAMES: u32 = 24 * 60 * 60 * 60;

/// A frame of the simulation, counted from zero at the start of a match.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Frame(u32);

impl Frame {
    /// The first frame of a match.
    pub const ZERO: Frame = Frame(0);

    /// Frame `number` of the match (0 is the first).
    pub const fn new(number: u32) -> Self {
        Frame(number)
    }

    /// The frame's number, counted from 0.
    pub const fn number(self) -> u32 {
        self.0
    }

    /// The last of the first `frames` frames (`None` for none): frame
    /// N−1 of a match of `--frames N`.
    pub const fn last_of(frames: u32) -> Option<Frame> {
        match frames.checked_sub(1) {
            Some(last) => Some(Frame(last)),
            None => None,
        }
    }

    /// The frame after this one.
    pub const fn next(self) -> Frame {
        Frame(self.0 + 1)
    }

    /// The frame before this one, or `None` at frame zero.
    pub const fn previous(self) -> Option<Frame> {
        match self.0.checked_sub(1) {
            Some(n) => Some(Frame(n)),
            None => None,
        }
    }

    /// `count` frames earlier, or `None` if that would be before frame zero.
    pub const fn checked_back(self, count: u32) -> Option<Frame> {
        match self.0.checked_sub(count) {
            Some(n) => Some(Frame(n)),
            None => None,
        }
    }

    /// `count` frames earlier, stopping at frame zero.
    pub const fn saturating_back(self, count: u32) -> Frame {
        Frame(self.0.saturating_sub(count))
    }

    /// How many frames `self` is after `earlier` (negative if before).
    pub const fn frames_since(self, earlier: Frame) -> i64 {
        self.0 as i64 - earlier.0 as i64
    }
}

impl Add<u32> for Frame {
    type Output = Frame;
    fn add(self, frames: u32) -> Frame {
        Frame(self.0 + frames)
    }
}

impl AddAssign<u32> for Frame {
    fn add_assign(&mut self, frames: u32) {
        self.0 += frames;
    }
}

/// The number of frames from `rhs` up to `self`; panics in debug builds if
/// `rhs` is later, which is always a logic error in the caller.
impl Sub<Frame> for Frame {
    type Output = u32;
    fn sub(self, rhs: Frame) -> u32 {
        self.0 - rhs.0
    }
}

impl fmt::Display for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_zero_has_no_previous_frame() {
        assert_eq!(Frame::ZERO.previous(), None);
        assert_eq!(Frame::new(5).previous(), Some(Frame::new(4)));
    }

    #[test]
    fn going_back_past_zero_is_none_or_saturates() {
        assert_eq!(Frame::new(3).checked_back(4), None);
        assert_eq!(Frame::new(3).checked_back(3), Some(Frame::ZERO));
        assert_eq!(Frame::new(3).saturating_back(10), Frame::ZERO);
    }

    #[test]
    fn frames_since_is_signed() {
        assert_eq!(Frame::new(10).frames_since(Frame::new(4)), 6);
        assert_eq!(Frame::new(4).frames_since(Frame::new(10)), -6);
        assert_eq!(Frame::new(10) - Frame::new(4), 6);
    }
}
