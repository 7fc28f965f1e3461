//! [`TimelineCheck`]: how much of what was played is the confirmed timeline.
//! Every core sample the consumer takes is compared, once its frame is
//! final, with the audio that frame's final run made (Duel's audio is
//! deterministic, so that is what a solo run of the confirmed inputs plays).

use crate::audio::ring::{Pulled, Stereo};
use crate::rollback::Frame;
use std::collections::VecDeque;

/// Frames kept while waiting to be final or played: far more than a
/// rollback window and the ring's latency span.
const FRAMES_KEPT: usize = 1024;

/// Counts of played samples against the confirmed timeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimelineCounts {
    /// Played samples compared with their final frame's audio.
    pub compared: u64,
    /// Of those, identical to it.
    pub identical: u64,
    /// Played samples whose frame was forgotten before it was final.
    pub uncompared: u64,
}

impl TimelineCounts {
    /// The share (0–1) of compared samples identical to the timeline.
    pub fn identical_share(&self) -> f64 {
        if self.compared == 0 {
            0.0
        } else {
            self.identical as f64 / self.compared as f64
        }
    }
}

#[derive(Debug)]
struct Kept {
    frame: Frame,
    /// The audio of the frame's latest run.
    audio: Vec<Stereo>,
    final_: bool,
    /// Played samples (offset, value) waiting for the frame to be final.
    played: Vec<(u32, Stereo)>,
}

/// Compares played audio with the confirmed timeline. See the module docs.
#[derive(Debug, Default)]
pub struct TimelineCheck {
    kept: VecDeque<Kept>,
    spare: Vec<Kept>,
    counts: TimelineCounts,
}

impl TimelineCheck {
    /// A check that has seen nothing.
    pub fn new() -> TimelineCheck {
        TimelineCheck::default()
    }

    /// What was counted so far.
    pub fn counts(&self) -> TimelineCounts {
        self.counts
    }

    /// `frame` ran (again) and made `interleaved`.
    pub fn frame_run(&mut self, frame: Frame, interleaved: &[i16]) {
        let index = match self.kept.iter().rposition(|k| k.frame == frame) {
            Some(index) => index,
            None => {
                if self.kept.back().is_some_and(|k| k.frame > frame) {
                    // Older than anything kept: forgotten already.
                    return;
                }
                let mut kept = self.spare.pop().unwrap_or(Kept {
                    frame,
                    audio: Vec::new(),
                    final_: false,
                    played: Vec::new(),
                });
                kept.frame = frame;
                kept.final_ = false;
                kept.played.clear();
                self.kept.push_back(kept);
                if self.kept.len() > FRAMES_KEPT {
                    self.forget_front();
                }
                self.kept.len() - 1
            }
        };
        let kept = &mut self.kept[index];
        if kept.final_ {
            return;
        }
        kept.audio.clear();
        kept.audio
            .extend(interleaved.chunks_exact(2).map(|pair| [pair[0], pair[1]]));
    }

    /// `frame` is final: its latest run is the timeline.
    pub fn frame_finalized(&mut self, frame: Frame) {
        let Some(kept) = self.kept.iter_mut().rev().find(|k| k.frame == frame) else {
            return;
        };
        kept.final_ = true;
        for (offset, value) in kept.played.drain(..) {
            self.counts.compared += 1;
            if kept.audio.get(offset as usize) == Some(&value) {
                self.counts.identical += 1;
            }
        }
    }

    /// The consumer took `pulled`.
    pub fn played(&mut self, pulled: &Pulled) {
        let Some((frame, offset)) = pulled.source else {
            return;
        };
        let Some(index) = self.kept.iter().rposition(|k| k.frame == frame) else {
            self.counts.uncompared += 1;
            return;
        };
        let kept = &mut self.kept[index];
        if kept.final_ {
            self.counts.compared += 1;
            if kept.audio.get(offset as usize) == Some(&pulled.sample) {
                self.counts.identical += 1;
            }
        } else {
            kept.played.push((offset, pulled.sample));
        }
        // Final frames before the one playing are done with.
        while self
            .kept
            .front()
            .is_some_and(|k| k.final_ && k.frame < frame)
        {
            self.forget_front();
        }
    }

    fn forget_front(&mut self) {
        if let Some(kept) = self.kept.pop_front() {
            self.counts.uncompared += kept.played.len() as u64;
            self.spare.push(kept);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn played(frame: u32, offset: u32, value: i16) -> Pulled {
        Pulled {
            sample: [value, value],
            source: Some((Frame::new(frame), offset)),
        }
    }

    #[test]
    fn played_samples_count_as_identical_only_if_the_final_run_made_them() {
        let mut check = TimelineCheck::new();
        check.frame_run(Frame::new(0), &[1, 1, 2, 2]);
        check.frame_run(Frame::new(1), &[3, 3, 4, 4]);
        check.played(&played(0, 0, 1));
        check.played(&played(0, 1, 2));
        check.played(&played(1, 0, 3));
        // A rollback corrects frame 1 after its first sample played.
        check.frame_run(Frame::new(1), &[5, 5, 6, 6]);
        check.frame_finalized(Frame::new(0));
        check.frame_finalized(Frame::new(1));
        check.played(&played(1, 1, 6));
        check.played(&Pulled {
            sample: [0, 0],
            source: None,
        });
        assert_eq!(
            check.counts(),
            TimelineCounts {
                compared: 4,
                identical: 3,
                uncompared: 0
            }
        );
        assert_eq!(check.counts().identical_share(), 0.75);
    }

    #[test]
    fn the_check_keeps_a_bounded_number_of_frames() {
        let mut check = TimelineCheck::new();
        for frame in 0..5000 {
            check.frame_run(Frame::new(frame), &[0; 1600]);
        }
        assert!(check.kept.len() <= FRAMES_KEPT);
    }
}
