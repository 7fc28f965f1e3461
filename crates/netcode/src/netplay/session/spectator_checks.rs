//! Spectators' games checked against ours: the host sends each spectator
//! the checksum of every checkpoint with its final inputs, each spectator
//! reports its own, and a spectator whose checksum differs is sent our
//! state of that checkpoint to repair its game from, as a member is.

use std::collections::VecDeque;

use super::NetplaySession;
use crate::checksum::Checksum;
use crate::netplay::checkpoint_state;
use crate::netplay::events::NetplayEvent;
use crate::rollback::desync::CHECKPOINTS_KEPT;
use crate::rollback::Frame;

/// Our latest checkpoint checksums, to compare spectators' with, and the
/// spectators whose game differed, each with the checkpoint to send.
#[derive(Clone, Debug)]
pub(super) struct SpectatorChecks<A> {
    ours: VecDeque<(Frame, Checksum)>,
    repairs: Vec<(A, Frame)>,
}

impl<A> Default for SpectatorChecks<A> {
    fn default() -> Self {
        SpectatorChecks {
            ours: VecDeque::new(),
            repairs: Vec::new(),
        }
    }
}

impl<A: Ord + Copy + std::hash::Hash> NetplaySession<A> {
    /// Our checksum of checkpoint `frame`, for every spectator fed (with
    /// its final inputs) and to compare its reports with.
    pub(super) fn send_checksum_to_spectators(&mut self, frame: Frame, checksum: Checksum) {
        let checks = &mut self.spectator_checks;
        if checks.ours.len() == CHECKPOINTS_KEPT {
            checks.ours.pop_front();
        }
        checks.ours.push_back((frame, checksum));
        for spectator in self.spectators.iter().filter(|s| s.open) {
            if let Some(endpoint) = self.endpoints.get_mut(&spectator.address) {
                endpoint.send_checksum(frame, checksum);
            }
        }
    }

    /// A spectator's checksum of checkpoint `frame`: one that differs from
    /// ours asks for our state of it (the latest such checkpoint wins).
    pub(super) fn on_spectator_checksum(&mut self, address: A, frame: Frame, theirs: Checksum) {
        let checks = &mut self.spectator_checks;
        let Some(&(_, ours)) = checks.ours.iter().find(|(kept, _)| *kept == frame) else {
            return;
        };
        if ours == theirs {
            return;
        }
        checks.repairs.retain(|(waiting, _)| *waiting != address);
        checks.repairs.push((address, frame));
        self.events.push_back(NetplayEvent::SpectatorDesync {
            frame,
            local: ours,
            remote: theirs,
        });
    }

    /// Sends every spectator whose game differed our state of its
    /// checkpoint, as `state_of` gives it (the driver keeps the latest few):
    /// one blob at a time on each link; a request whose state is no longer
    /// kept is dropped (the spectator's next checkpoint asks again).
    pub fn repair_spectators(&mut self, state_of: impl Fn(Frame) -> Option<Vec<u8>>) {
        let repairs = std::mem::take(&mut self.spectator_checks.repairs);
        for (address, frame) in repairs {
            let Some(state) = state_of(frame) else {
                continue;
            };
            let Some(endpoint) = self.endpoints.get_mut(&address) else {
                continue;
            };
            let blob = checkpoint_state::compress_checkpoint(frame, &state);
            if endpoint.send_blob(blob).is_err() {
                // Another blob is on its way: try again at the next call.
                self.spectator_checks.repairs.push((address, frame));
            }
        }
    }
}
