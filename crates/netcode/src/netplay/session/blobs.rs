//! Savestates between the players' machines: the start-up host's start
//! state for every member, and its state of a checkpoint that desynced.

use super::NetplaySession;
use crate::encoding::state_blob::{self, StateBlobError};
use crate::netplay::checkpoint_state;
use crate::netplay::events::{NetplayEvent, PeerFault};
use crate::protocol::MAX_BLOB_SIZE;
use crate::rollback::{Frame, PlayerId};

/// Why a blob whose hash does not match cannot be used.
pub(crate) const DAMAGED: &str = "its bytes do not hash to what the host said they would";

/// A member's progress with the start-up host's start state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum StartStateWait {
    /// None comes (we host, or the host sends none): Ready when synchronized.
    NotAwaited,
    /// The host's handshake said one follows.
    Awaited,
    /// It arrived, for the frontend to take and load.
    Arrived(Vec<u8>),
    /// The frontend took it: Ready may go out.
    Taken,
}

impl<A: Ord + Copy + std::hash::Hash> NetplaySession<A> {
    /// The start-up host's start state, once it arrived (see
    /// [`NetplayEvent::StartStateArrived`]): load it into the game before
    /// frame 0. Taking it lets this machine say Ready. `None` before it
    /// arrives, after it was taken, and when none comes.
    pub fn take_start_state(&mut self) -> Option<Vec<u8>> {
        if !matches!(self.start_state_wait, StartStateWait::Arrived(_)) {
            return None;
        }
        let taken = match std::mem::replace(&mut self.start_state_wait, StartStateWait::Taken) {
            StartStateWait::Arrived(state) => Some(state),
            _ => None,
        };
        self.on_resume_state_taken();
        taken
    }

    /// Link `index` finished its handshake: the host sends the member its
    /// start state; a member learns from the host's handshake whether one
    /// comes.
    pub(super) fn start_state_handshake(&mut self, index: usize) {
        let from_host = self.links[index].players.contains(0);
        if let Some(blob) = self.start_state_blob.clone() {
            if let Some(endpoint) = self.open_endpoint(index) {
                // The first blob on a fresh link: never over the cap (checked
                // in `new`) nor behind another.
                let sent = endpoint.send_blob(blob);
                debug_assert!(sent.is_ok(), "{sent:?}");
            }
        } else if from_host && self.start_state_wait == StartStateWait::NotAwaited {
            let announced = self
                .open_endpoint(index)
                .and_then(|endpoint| endpoint.remote_handshake())
                .is_some_and(|handshake| handshake.start_state);
            if announced {
                self.start_state_wait = StartStateWait::Awaited;
            }
        }
    }

    /// The host answers a desync with `player`'s machine: sends it our state
    /// of checkpoint `frame` (as saved at the start of that frame) so that it
    /// can name the bytes that differ. Returns whether it went out: not to a
    /// closed link, nor while another blob is still on its way (the member
    /// diagnoses one checkpoint at a time). Only the start-up host sends.
    pub fn send_checkpoint_state(&mut self, player: PlayerId, frame: Frame, state: &[u8]) -> bool {
        if !self.startup.is_host() || state.len() > self.config.max_start_state_bytes {
            return false;
        }
        let Some(index) = self
            .links
            .iter()
            .position(|link| link.players.contains(player.index() as u8))
        else {
            return false;
        };
        let blob = checkpoint_state::compress_checkpoint(frame, state);
        self.open_endpoint(index)
            .is_some_and(|endpoint| endpoint.send_blob(blob).is_ok())
    }

    /// Our core refused to load a state the start-up host sent (`reason`,
    /// what it said): the host's link closes, as for any unusable state;
    /// this machine goes on.
    pub fn host_state_refused(&mut self, reason: String) {
        if let Some(index) = self.links.iter().position(|link| link.players.contains(0)) {
            self.close_for_fault(index, PeerFault::StateRefused(reason));
        }
    }

    /// Whether link `index` is the host's and its start state is awaited.
    fn awaits_start_state_on(&self, index: usize) -> bool {
        self.start_state_wait == StartStateWait::Awaited && self.links[index].players.contains(0)
    }

    /// A blob from link `index`: the start state we await from the host,
    /// or the host's state of a checkpoint that desynced.
    pub(super) fn on_blob_received(&mut self, index: usize, bytes: Vec<u8>) {
        if self.awaits_resume_state_on(index) {
            self.on_resume_state(index, &bytes);
        } else if self.awaits_start_state_on(index) {
            match state_blob::decompress(&bytes, self.config.max_start_state_bytes) {
                Ok(state) => {
                    self.events
                        .push_back(NetplayEvent::StartStateArrived { bytes: state.len() });
                    self.start_state_wait = StartStateWait::Arrived(state);
                }
                Err(error) => self.close_for_fault(index, PeerFault::BadStartState(error)),
            }
        } else if self.links[index].players.contains(0) {
            match checkpoint_state::decompress_checkpoint(&bytes, self.config.max_start_state_bytes)
            {
                Ok((frame, state)) => self
                    .events
                    .push_back(NetplayEvent::HostCheckpointState { frame, state }),
                Err(error) => self.close_for_fault(index, PeerFault::BadCheckpointState(error)),
            }
        }
    }

    /// A blob from link `index` arrived with bytes that do not hash to what
    /// its chunks said: the host's start state or checkpoint state, if it
    /// was that, cannot be used, and no core sees it.
    pub(super) fn on_blob_damaged(&mut self, index: usize) {
        let error = StateBlobError::Corrupt(DAMAGED.to_string());
        if self.awaits_start_state_on(index) || self.awaits_resume_state_on(index) {
            self.close_for_fault(index, PeerFault::BadStartState(error));
        } else if self.links[index].players.contains(0) {
            self.close_for_fault(index, PeerFault::BadCheckpointState(error));
        }
    }

    /// Link `index`'s endpoint refused a blob over its size limit: the start
    /// state we await, if it was that, can never arrive.
    pub(super) fn on_blob_refused(&mut self, index: usize, size: u32) {
        if !self.awaits_start_state_on(index) && !self.awaits_resume_state_on(index) {
            return;
        }
        let error = StateBlobError::TooLarge {
            size: size as usize,
            max: state_blob::max_blob_size(self.config.max_start_state_bytes).min(MAX_BLOB_SIZE),
        };
        self.close_for_fault(index, PeerFault::BadStartState(error));
    }
}
