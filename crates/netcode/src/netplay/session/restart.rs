//! A player whose process was restarted comes back to the match: it kept
//! its link secret, the host's public key and the session token (its
//! ticket), so its new process tags datagrams as its link did. The host
//! challenges the new address as for any rejoin; the answer says the
//! process restarted ([`Message::RejoinRestarted`]), and once the link
//! moved the host sends the state of the first frame whose inputs it
//! lacks from that player (every input before it is final everywhere),
//! by the blob transfer spectators use, then its own inputs from there.
//! The restarted machine's rollback session starts at that frame.
//!
//! [`Message::RejoinRestarted`]: crate::protocol::Message::RejoinRestarted

use super::blobs::StartStateWait;
use super::{LinkState, NetplaySession};
use crate::netplay::checkpoint_state;
use crate::netplay::config::Connect;
use crate::netplay::config::NetplayConfig;
use crate::netplay::events::{NetplayError, NetplayEvent, PeerFault};
use crate::protocol::{
    LinkSecret, Millis, PeerEndpoint, PlayerSlots, PublicKey, Role, RoomElement, SessionSettings,
    SessionToken, MAX_BLOB_SIZE,
};
use crate::rollback::{Frame, PlayerId};

/// Where a restarted machine is with the state it resumes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Resume {
    /// This machine did not restart.
    No,
    /// It did: the host's state comes next.
    AwaitingState,
    /// It arrived, for the frontend to load.
    Arrived,
    /// Loaded: play goes on.
    Resumed,
}

/// What a member's machine keeps while its match runs, to come back to
/// it after its process restarted: the link's session, its own secret and
/// the host's public key (which agree the link's keys again), and the
/// match as agreed. Its `Debug` shows nothing of the secret.
#[derive(Clone, Debug)]
pub struct RejoinTicket {
    /// The session token the link runs under.
    pub token: SessionToken,
    /// This machine's link secret.
    pub secret: LinkSecret,
    /// The host's public key.
    pub host_key: PublicKey,
    /// The host's room element, when the machines met by room code.
    pub host_room: Option<RoomElement>,
    /// The settings agreed (the host's).
    pub settings: SessionSettings,
    /// The players this machine controls.
    pub local_players: PlayerSlots,
    /// The match's length in frames (the host's), if it has one.
    pub match_frames: Option<u32>,
}

impl RejoinTicket {
    /// `config` as the restarted machine's: the match it left, resumed
    /// (its peers stay the caller's: the host, dialled).
    pub fn apply<A>(&self, config: &mut NetplayConfig<A>) {
        config.token = self.token;
        config.secret = self.secret.clone();
        config.settings = self.settings;
        config.local_players = self.local_players;
        config.match_frames = self.match_frames;
        config.resume = Some(self.host_key);
        config.resume_room = self.host_room;
    }
}

impl<A: Ord + Copy + std::hash::Hash> NetplaySession<A> {
    /// What this member keeps to come back after a restart, once its
    /// handshake with the host is done; `None` on the host (or before).
    pub fn rejoin_ticket(&self) -> Option<RejoinTicket> {
        if self.local_players.contains(0) {
            return None;
        }
        let link = self.links.iter().find(|link| link.players.contains(0))?;
        let endpoint = self.endpoints.get(&link.address?)?;
        let host = endpoint.remote_handshake();
        let (host_key, host_room) = match self.config.resume {
            Some(key) => (key, self.config.resume_room),
            None => (host?.public_key?, host?.room.map(|room| room.element)),
        };
        Some(RejoinTicket {
            token: endpoint.session(),
            secret: self.config.secret.clone(),
            host_key,
            host_room,
            settings: endpoint.settings(),
            local_players: self.local_players,
            match_frames: host.map_or(self.config.match_frames, |host| host.match_frames),
        })
    }

    /// The restarted joiner opens its link to the host as it was, running
    /// under the keys it kept. Only a member of a two-player match that
    /// dials the host comes back this way.
    pub(super) fn open_resumed_link(
        &mut self,
        now: Millis,
        host_key: PublicKey,
    ) -> Result<(), NetplayError> {
        let [link] = &self.links[..] else {
            return Err(NetplayError::InvalidConfig(
                "a restarted player comes back to a two-player match".into(),
            ));
        };
        let (Connect::Dial, Some(address), true) =
            (link.connect, link.address, link.players.contains(0))
        else {
            return Err(NetplayError::InvalidConfig(
                "a restarted player dials the host".into(),
            ));
        };
        let handshake = self.config.handshake(self.local_players);
        let mut config = self.endpoint_config(None, handshake);
        config.role = Role::Joiner {
            session: Some(self.config.token),
        };
        let host_room = self.config.resume_room;
        let endpoint = PeerEndpoint::resumed(config, now, host_key, host_room, link.players)?;
        self.endpoints.insert(address, endpoint);
        self.links[0].state = LinkState::Open;
        self.resume = Resume::AwaitingState;
        Ok(())
    }

    /// Whether this restarted machine still waits for the state it resumes
    /// from (or for the frontend to load it): no frame runs, no input is taken.
    pub(super) fn awaits_resume(&self) -> bool {
        matches!(self.resume, Resume::AwaitingState | Resume::Arrived)
    }

    /// Whether a blob from link `index` is the host's state to resume from.
    pub(super) fn awaits_resume_state_on(&self, index: usize) -> bool {
        self.resume == Resume::AwaitingState && self.links[index].players.contains(0)
    }

    /// The host's state to resume from arrived: the session and the link
    /// start at its frame, and the frontend loads it (`take_start_state`).
    pub(super) fn on_resume_state(&mut self, index: usize, blob: &[u8]) {
        let decoded =
            checkpoint_state::decompress_checkpoint(blob, self.config.max_start_state_bytes);
        let (frame, state) = match decoded {
            Ok(decoded) => decoded,
            Err(error) => return self.close_for_fault(index, PeerFault::BadStartState(error)),
        };
        let result = self.session.resume_at(frame);
        self.record(result);
        self.next_local_frame = frame;
        if let Some(endpoint) = self.open_endpoint(index) {
            endpoint.resume_at(frame);
        }
        self.events.push_back(NetplayEvent::ResumeStateArrived {
            frame,
            bytes: state.len(),
        });
        self.resume = Resume::Arrived;
        self.start_state_wait = StartStateWait::Arrived(state);
    }

    /// The frontend took the state to resume from: the host's players are
    /// synchronized, and frames run from its frame.
    pub(super) fn on_resume_state_taken(&mut self) {
        if self.resume != Resume::Arrived {
            return;
        }
        self.resume = Resume::Resumed;
        let host_players = self
            .links
            .iter()
            .find(|link| link.players.contains(0))
            .map(|link| link.players);
        let Some(host_players) = host_players else {
            return;
        };
        for player in host_players.iter() {
            let result = self.session.peer_synchronized(PlayerId::new(player));
            self.record(result);
        }
        self.events.push_back(NetplayEvent::PeerSynchronized {
            players: super::player_set(host_players),
        });
    }

    /// The host's side: sends each restarted peer whose link moved the
    /// state of the first frame it lacks that peer's inputs for, once that
    /// state is saved and final here, and our inputs from that frame.
    pub(super) fn send_resume_states(&mut self) {
        let due = std::mem::take(&mut self.rejoins.resume_due);
        for index in due {
            if !self.send_resume_state(index) {
                self.rejoins.resume_due.push(index);
            }
        }
    }

    /// Sends link `index` its state to resume from; false while it is not
    /// ready yet (the link stays due).
    fn send_resume_state(&mut self, index: usize) -> bool {
        let link = &self.links[index];
        let Some(address) = link.address.filter(|_| link.state == LinkState::Open) else {
            return true;
        };
        let Some(frame) = self.endpoints.get(&address).map(|e| e.next_remote_frame()) else {
            return true;
        };
        let before_final = self
            .session
            .confirmed_frame()
            .map_or(frame == Frame::ZERO, |confirmed| confirmed.next() >= frame);
        let unaffected = self
            .session
            .pending_rollback()
            .is_none_or(|wrong| wrong >= frame);
        let Some(state) = self
            .session
            .saved_state(frame)
            .filter(|_| before_final && unaffected)
        else {
            return false;
        };
        let blob = checkpoint_state::compress_checkpoint(frame, state.data());
        let earlier = self.local_inputs_between(frame, address);
        let Some(endpoint) = self.endpoints.get_mut(&address) else {
            return true;
        };
        let resent = earlier.is_some_and(|earlier| endpoint.resend_inputs_from(frame, &earlier));
        if blob.len() > MAX_BLOB_SIZE || !resent || endpoint.send_blob(blob).is_err() {
            self.close_for_fault(index, PeerFault::CannotResume);
            return true;
        }
        self.events.push_back(NetplayEvent::ResumeStateSent {
            players: super::player_set(self.links[index].players),
            frame,
        });
        true
    }

    /// Our players' inputs from `frame` up to the first one the endpoint
    /// at `address` still holds unacknowledged, frame by frame in slot
    /// order; `None` when the session no longer holds them.
    fn local_inputs_between(&self, frame: Frame, address: A) -> Option<Vec<crate::input::Buttons>> {
        let end = self.endpoints.get(&address)?.acked_local_frame();
        let frames = end.number().saturating_sub(frame.number()) as usize;
        let mut columns = Vec::new();
        for slot in self.local_players.iter() {
            let column: Vec<_> = self
                .session
                .player_inputs(PlayerId::new(slot), frame)
                .ok()?
                .take(frames)
                .map(|(_, buttons)| buttons)
                .collect();
            if column.len() != frames {
                return None;
            }
            columns.push(column);
        }
        let mut rows = Vec::with_capacity(frames * columns.len());
        for at in 0..frames {
            rows.extend(columns.iter().map(|column| column[at]));
        }
        Some(rows)
    }
}
