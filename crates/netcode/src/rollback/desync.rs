//! Desync detection: peers exchange the checksum of every K-th confirmed
//! frame and compare (seed 000). Only frames whose inputs are all confirmed
//! are ever checksummed, so predictions cannot raise false alarms.
//!
//! Reports arrive early or late; a bounded ring per peer keeps the remote
//! checksums not yet matched, and one keeps the local ones for late reports.

use super::frame::Frame;
use super::players::{PlayerId, MAX_PLAYERS};
use crate::checksum::Checksum;

/// Checkpoints kept on each side, waiting for the other side's report.
pub const CHECKPOINTS_KEPT: usize = 32;

/// A checksum mismatch at a confirmed frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The confirmed frame whose checksums differ.
    pub frame: Frame,
    /// The peer (by its first player) that reported the other checksum.
    pub player: PlayerId,
    /// Our checksum of the frame.
    pub local: Checksum,
    /// The peer's checksum of the frame.
    pub remote: Checksum,
}

type Entry = Option<(Frame, Checksum)>;

/// Local and remote checkpoint checksums, compared as pairs complete.
#[derive(Clone, Debug)]
pub struct DesyncDetector {
    interval: u32,
    local: [Entry; CHECKPOINTS_KEPT],
    newest_local: Option<Frame>,
    remote: [[Entry; CHECKPOINTS_KEPT]; MAX_PLAYERS],
    /// Local checksums not yet handed to the glue for sending.
    outgoing: [Entry; CHECKPOINTS_KEPT],
    outgoing_start: usize,
    outgoing_len: usize,
    /// Checkpoints never compared, one window per departure (see
    /// [`DesyncDetector::ignore_checkpoints`]).
    ignored: [Option<(Frame, Frame)>; MAX_PLAYERS],
    compared: u64,
    /// The match's last frame, a checkpoint too, when it has one.
    last_frame: Option<Frame>,
}

impl DesyncDetector {
    /// Checks every `interval` frames (at least 1).
    pub fn new(interval: u32) -> Self {
        DesyncDetector {
            interval: interval.max(1),
            local: [None; CHECKPOINTS_KEPT],
            newest_local: None,
            remote: [[None; CHECKPOINTS_KEPT]; MAX_PLAYERS],
            outgoing: [None; CHECKPOINTS_KEPT],
            outgoing_start: 0,
            outgoing_len: 0,
            ignored: [None; MAX_PLAYERS],
            compared: 0,
            last_frame: None,
        }
    }

    /// Makes `last_frame` (the match's last frame, if it has one) a
    /// checkpoint as well: the frames after the last regular checkpoint
    /// are compared there.
    pub fn ending_at(mut self, last_frame: Option<Frame>) -> Self {
        self.set_last_frame(last_frame);
        self
    }

    /// [`DesyncDetector::ending_at`] on a detector in use.
    pub fn set_last_frame(&mut self, last_frame: Option<Frame>) {
        self.last_frame = last_frame;
    }

    /// The first checkpoint after `frame`.
    pub fn next_checkpoint_after(&self, frame: Frame) -> Frame {
        let regular = Frame::new((frame.number() / self.interval + 1) * self.interval);
        match self.last_frame {
            Some(last) if last > frame && last < regular => last,
            _ => regular,
        }
    }

    /// Stops comparing checkpoints in `from..until`: when a player leaves at
    /// `from`, a machine that had already confirmed those frames with the
    /// leaver's real inputs re-simulates them with the leaver gone, so its
    /// earlier checksums (kept here, or already sent) describe a game nobody
    /// plays any more. `until` is as far as any machine still playing can
    /// have confirmed before agreeing on `from` (it cannot roll back further).
    pub fn ignore_checkpoints(&mut self, from: Frame, until: Frame) {
        let window = |frame: Frame| (from..until).contains(&frame);
        for entry in self
            .local
            .iter_mut()
            .chain(self.remote.iter_mut().flatten())
            .chain(self.outgoing.iter_mut())
        {
            if entry.is_some_and(|(frame, _)| window(frame)) {
                *entry = None;
            }
        }
        let slot = self
            .ignored
            .iter()
            .position(Option::is_none)
            // More departures than players cannot happen; reuse the oldest.
            .unwrap_or(0);
        self.ignored[slot] = Some((from, until));
    }

    fn is_ignored(&self, frame: Frame) -> bool {
        self.ignored
            .iter()
            .flatten()
            .any(|(from, until)| (*from..*until).contains(&frame))
    }

    /// Frames between two checkpoints.
    pub fn interval(&self) -> u32 {
        self.interval
    }

    /// Whether `frame` is a checkpoint: every `interval`-th frame, and the
    /// match's last.
    pub fn is_checkpoint(&self, frame: Frame) -> bool {
        frame.number().is_multiple_of(self.interval) || self.last_frame == Some(frame)
    }

    /// How many checkpoint pairs were compared so far.
    pub fn comparisons(&self) -> u64 {
        self.compared
    }

    /// The slot of checkpoint `frame`: the last frame, between two regular
    /// checkpoints, takes the slot of the next one, which never comes.
    fn index(&self, frame: Frame) -> usize {
        frame.number().div_ceil(self.interval) as usize % CHECKPOINTS_KEPT
    }

    /// Records the local checksum of checkpoint `frame` (state final, inputs
    /// confirmed), queues it for sending, and compares it with any remote
    /// report already here. Mismatches go to `found`.
    pub fn add_local(&mut self, frame: Frame, checksum: Checksum, mut found: impl FnMut(Mismatch)) {
        if self.is_ignored(frame) {
            return;
        }
        let index = self.index(frame);
        self.local[index] = Some((frame, checksum));
        self.newest_local = Some(self.newest_local.map_or(frame, |newest| newest.max(frame)));
        self.push_outgoing(frame, checksum);
        for (player, reports) in self.remote.iter_mut().enumerate() {
            if let Some((reported, remote)) = reports[index] {
                if reported == frame {
                    reports[index] = None;
                    self.compared += 1;
                    if remote != checksum {
                        found(Mismatch {
                            frame,
                            player: PlayerId::new(player as u8),
                            local: checksum,
                            remote,
                        });
                    }
                }
            }
        }
    }

    /// Takes a peer's checksum of checkpoint `frame`: compared now if the
    /// local one is known, kept until it is otherwise. Reports for frames
    /// that are not checkpoints, or too old to check, are ignored (returns false).
    pub fn add_remote(
        &mut self,
        player: PlayerId,
        frame: Frame,
        checksum: Checksum,
    ) -> Result<(), Mismatch> {
        if !self.is_checkpoint(frame) || player.index() >= MAX_PLAYERS || self.is_ignored(frame) {
            return Ok(());
        }
        let index = self.index(frame);
        if let Some((local_frame, local)) = self.local[index] {
            if local_frame == frame {
                self.compared += 1;
                return if local == checksum {
                    Ok(())
                } else {
                    Err(Mismatch {
                        frame,
                        player,
                        local,
                        remote: checksum,
                    })
                };
            }
        }
        let ahead_of_local = self.newest_local.is_none_or(|newest| frame > newest);
        if ahead_of_local {
            self.remote[player.index()][index] = Some((frame, checksum));
        }
        Ok(())
    }

    fn push_outgoing(&mut self, frame: Frame, checksum: Checksum) {
        if self.outgoing_len == CHECKPOINTS_KEPT {
            // The glue is not draining: drop the oldest rather than grow.
            self.outgoing_start = (self.outgoing_start + 1) % CHECKPOINTS_KEPT;
            self.outgoing_len -= 1;
        }
        let at = (self.outgoing_start + self.outgoing_len) % CHECKPOINTS_KEPT;
        self.outgoing[at] = Some((frame, checksum));
        self.outgoing_len += 1;
    }

    /// The next local checksum to send to every peer, oldest first.
    pub fn pop_outgoing(&mut self) -> Option<(Frame, Checksum)> {
        if self.outgoing_len == 0 {
            return None;
        }
        let entry = self.outgoing[self.outgoing_start].take();
        self.outgoing_start = (self.outgoing_start + 1) % CHECKPOINTS_KEPT;
        self.outgoing_len -= 1;
        entry
    }

    /// The local checksum of checkpoint `frame`, if still kept (for resending).
    pub fn local_checksum(&self, frame: Frame) -> Option<Checksum> {
        match self.local[self.index(frame)] {
            Some((kept, checksum)) if kept == frame => Some(checksum),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PEER: PlayerId = PlayerId::new(1);

    fn f(n: u32) -> Frame {
        Frame::new(n)
    }

    #[test]
    fn matching_checksums_raise_nothing_whichever_side_reports_first() {
        let mut detector = DesyncDetector::new(10);
        detector.add_remote(PEER, f(10), Checksum(1)).unwrap();
        let mut found = Vec::new();
        detector.add_local(f(10), Checksum(1), |m| found.push(m));
        detector.add_local(f(20), Checksum(2), |m| found.push(m));
        detector.add_remote(PEER, f(20), Checksum(2)).unwrap();
        assert!(found.is_empty());
        assert_eq!(detector.comparisons(), 2);
    }

    #[test]
    fn a_mismatch_names_the_frame_the_peer_and_both_checksums() {
        let mut detector = DesyncDetector::new(10);
        detector.add_local(f(30), Checksum(5), |_| panic!("nothing to compare yet"));
        let mismatch = detector.add_remote(PEER, f(30), Checksum(6)).unwrap_err();
        assert_eq!(
            mismatch,
            Mismatch {
                frame: f(30),
                player: PEER,
                local: Checksum(5),
                remote: Checksum(6)
            }
        );

        detector
            .add_remote(PlayerId::new(2), f(40), Checksum(9))
            .unwrap();
        let mut found = Vec::new();
        detector.add_local(f(40), Checksum(8), |m| found.push(m));
        assert_eq!(
            found,
            vec![Mismatch {
                frame: f(40),
                player: PlayerId::new(2),
                local: Checksum(8),
                remote: Checksum(9)
            }]
        );
    }

    #[test]
    fn local_checksums_are_queued_for_sending_once_each() {
        let mut detector = DesyncDetector::new(1);
        detector.add_local(f(1), Checksum(1), |_| {});
        detector.add_local(f(2), Checksum(2), |_| {});
        assert_eq!(detector.pop_outgoing(), Some((f(1), Checksum(1))));
        assert_eq!(detector.pop_outgoing(), Some((f(2), Checksum(2))));
        assert_eq!(detector.pop_outgoing(), None);
    }

    #[test]
    fn checkpoints_around_a_departure_are_never_compared() {
        let mut detector = DesyncDetector::new(10);
        // Confirmed and sent with the leaver's real inputs...
        detector.add_local(f(30), Checksum(1), |_| {});
        detector.add_remote(PEER, f(40), Checksum(2)).unwrap();
        // ...then the leaver is dropped at frame 25 on every machine.
        detector.ignore_checkpoints(f(25), f(49));
        assert_eq!(
            detector.pop_outgoing(),
            None,
            "the stale checksum is not sent"
        );
        let mut found = Vec::new();
        detector.add_local(f(40), Checksum(3), |m| found.push(m));
        assert_eq!(detector.add_remote(PEER, f(30), Checksum(4)), Ok(()));
        assert!(found.is_empty());
        // Outside the window comparisons go on.
        detector.add_local(f(50), Checksum(5), |_| {});
        assert!(detector.add_remote(PEER, f(50), Checksum(6)).is_err());
        detector.add_local(f(20), Checksum(7), |_| {});
        assert!(detector.add_remote(PEER, f(20), Checksum(8)).is_err());
    }

    #[test]
    fn reports_too_old_to_check_or_off_the_interval_are_ignored() {
        let mut detector = DesyncDetector::new(10);
        for n in 0..100 {
            detector.add_local(f(n * 10), Checksum(u64::from(n)), |_| {});
        }
        // Frame 0's local checksum was overwritten long ago: unverifiable.
        assert_eq!(detector.add_remote(PEER, f(0), Checksum(77)), Ok(()));
        assert_eq!(detector.add_remote(PEER, f(995), Checksum(77)), Ok(()));
        assert_eq!(detector.local_checksum(f(990)), Some(Checksum(99)));
    }
}
