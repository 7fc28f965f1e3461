//! What a peer can have said: every number a datagram claims is bounded by
//! what the sender can know, and a datagram claiming more is dropped whole
//! (counted in `dropped_implausible`) before any of it is taken. A tag
//! keeps the path from changing datagrams; this keeps a peer that breaks
//! the rules (or a bug) from stalling us with one.

use super::{PeerEndpoint, MAX_UNACKED_FRAMES};
use crate::protocol::messages::*;
use crate::rollback::Frame;

impl PeerEndpoint {
    /// Whether every claim of `message` is one the peer can have made.
    pub(super) fn is_plausible(&self, message: &Message) -> bool {
        match message {
            Message::Input(input) => {
                self.plausible_ack(input.next_expected)
                    && input
                        .piggyback
                        .quality_report
                        .is_none_or(|report| self.plausible_advantage(report.frame_advantage))
                    && self.plausible_checksums(&input.piggyback.checksums)
            }
            Message::InputAck { next_expected } => self.plausible_ack(*next_expected),
            Message::QualityReport(report) => self.plausible_advantage(report.frame_advantage),
            Message::ChecksumReport { entries } => self.plausible_checksums(entries),
            Message::Start { delay_ms } => *delay_ms <= MAX_START_DELAY_MS,
            _ => true,
        }
    }

    /// An ack of our inputs: never past the last frame we sent.
    fn plausible_ack(&self, next_expected: Frame) -> bool {
        next_expected <= self.next_local_frame
    }

    /// A frame advantage: a machine cannot simulate further past our inputs
    /// than its prediction window, nor be further behind them than our
    /// window and both input delays; twice that leaves room for rounding.
    fn plausible_advantage(&self, frames: i16) -> bool {
        let settings = &self.settings;
        let bound =
            2 * (i32::from(settings.max_prediction) + 2 * i32::from(settings.input_delay_max));
        i32::from(frames).abs() <= bound.max(1)
    }

    /// Checksum reports: of frames the peer can have final. A checkpoint is
    /// the state at the start of its frame, final once every input before
    /// it is: a player needs ours up to the frame before; a host runs ahead
    /// of what it has sent a spectator by at most its backlog of
    /// unacknowledged frames.
    fn plausible_checksums(&self, entries: &[ChecksumEntry]) -> bool {
        let last = if self.local_slot_count > 0 {
            self.next_local_frame
        } else {
            self.next_remote_frame + MAX_UNACKED_FRAMES
        };
        entries.iter().all(|entry| entry.frame <= last)
    }
}
