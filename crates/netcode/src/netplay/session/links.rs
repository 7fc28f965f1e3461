//! The links to the other players' machines: their endpoints, the Hellos
//! that open them (or are refused), and where each endpoint event goes.

use super::unproven::Seat;
use super::{player_set, Link, LinkState, NetplaySession};
use crate::netplay::checkpoint_state;
use crate::netplay::events::{NetplayEvent, PeerFault};
use crate::netplay::startup;
use crate::protocol::{
    self, auth, codec, ConnectionState, EndpointConfig, Event as NetEvent, Header, Message, Millis,
    PeerEndpoint, PlayerSlots, RejectReason, Rejection, Sequence, SessionSettings, SessionToken,
    MAX_BLOB_SIZE, PROTOCOL_VERSION,
};
use crate::rollback::{Frame, PlayerId};

/// Refusals and cookies waiting for the next poll at most; more are dropped
/// unanswered (each address is rate-limited, so this bounds a flood from many).
const MAX_PENDING_REFUSALS: usize = 16;

impl<A: Ord + Copy + std::hash::Hash> NetplaySession<A> {
    pub(super) fn endpoint_config(
        &self,
        token: Option<protocol::SessionToken>,
        local: protocol::Handshake,
    ) -> EndpointConfig {
        let mut config = match token {
            Some(token) => EndpointConfig::host(token, local),
            None => EndpointConfig::joiner(local),
        };
        config.secret = self.config.secret.clone();
        config.room_password = self.config.room_password.clone();
        config.interrupt_after_ms = self.config.interrupt_after_ms;
        config.disconnect_after_ms = self.config.disconnect_after_ms;
        config.rejoin_window_ms = self.config.rejoin_window_ms;
        // The only blobs a player's link takes are the host's start state
        // and its state of a checkpoint that desynced (a frame number more).
        config.max_blob_size =
            checkpoint_state::max_checkpoint_blob_size(self.config.max_start_state_bytes)
                .min(MAX_BLOB_SIZE);
        if self.startup.is_host() && !self.startup.has_started() {
            config.quality_report_interval_ms = startup::STARTUP_QUALITY_INTERVAL_MS;
        }
        config
    }

    /// The endpoint of link `index`, if the link is open.
    pub(super) fn open_endpoint(&mut self, index: usize) -> Option<&mut PeerEndpoint> {
        let link = &self.links[index];
        let endpoint = self.endpoints.get_mut(&link.address?)?;
        (link.state == LinkState::Open && endpoint.state() != ConnectionState::Disconnected)
            .then_some(endpoint)
    }

    /// A Hello from an address with no endpoint: answered with a cookie
    /// unless it carries ours, then held for the link of the peer it claims
    /// to be (or a spectator's place) until it proves itself (see
    /// `unproven`). Returns whether it was taken.
    pub(super) fn accept_hello(&mut self, now: Millis, from: A, datagram: &[u8]) -> bool {
        let Some((header, Message::Hello(hello))) = auth::decode_handshake(datagram) else {
            return false;
        };
        if !hello.local_slots.is_empty() && self.awaits_roster_for(hello.local_slots) {
            return true;
        }
        if self.left || !self.handshakes.allow(now, from) {
            return false;
        }
        if header.version != PROTOCOL_VERSION {
            // It cannot read a cookie: told why if that fits in what it sent.
            return self.refuse_other_version(now, from, datagram);
        }
        // Until the address echoes our cookie, it earns only the cookie.
        if !self.cookies.check(now, &from, header.session) {
            self.send_cookie(now, from, datagram.len());
            return true;
        }
        if hello.local_slots.is_empty() {
            return self.accept_spectator(now, from, datagram);
        }
        // Settings differ (the player count, the host's delay floor): the
        // Reject carries ours (the mode too: the host decides it), so the
        // joiner can come back with them.
        if hello.settings != self.config.settings {
            self.refuse(from, RejectReason::Settings);
            return true;
        }
        let open_slot = |link: &Link<A>| {
            link.is_open_slot() && link.address.is_none_or(|address| address == from)
        };
        let claimed = self
            .links
            .iter()
            .position(|link| open_slot(link) && link.players == hello.local_slots);
        let Some(index) = claimed else {
            // Another slot is still open: the joiner may ask for it.
            let reason = if self.links.iter().any(open_slot) {
                RejectReason::SlotTaken
            } else {
                RejectReason::MatchFull
            };
            self.refuse(from, reason);
            return true;
        };
        let Some(mut endpoint) = self.host_endpoint(now) else {
            return false;
        };
        endpoint.handle_datagram(now, datagram);
        match Self::refusal_of(&mut endpoint) {
            Some(rejection) => self.refused_joiner(from, rejection, usize::MAX),
            None => self.hold_unproven(now, from, Seat::Player(index), endpoint),
        }
        true
    }

    /// A new endpoint hosting a player's link.
    fn host_endpoint(&self, now: Millis) -> Option<PeerEndpoint> {
        let handshake = self.config.handshake(self.local_players);
        let config = self.endpoint_config(Some(self.config.token), handshake);
        PeerEndpoint::new(config, now).ok()
    }

    /// A Hello of another protocol version: the refusal is told, and sent
    /// only if it is no bigger than the Hello (its address is not proven).
    fn refuse_other_version(&mut self, now: Millis, from: A, datagram: &[u8]) -> bool {
        let Some(mut endpoint) = self.host_endpoint(now) else {
            return false;
        };
        endpoint.handle_datagram(now, datagram);
        if let Some(rejection) = Self::refusal_of(&mut endpoint) {
            self.refused_joiner(from, rejection, datagram.len());
        }
        true
    }

    /// Answers a Hello we open no endpoint for with a Reject saying why.
    /// The Reject carries no session token: the address is not trusted.
    pub(super) fn refuse(&mut self, to: A, reason: RejectReason) {
        self.refuse_within(to, reason, usize::MAX);
    }

    /// [`Self::refuse`] when the Reject takes at most `max_len` bytes.
    pub(super) fn refuse_within(&mut self, to: A, reason: RejectReason, max_len: usize) {
        if let Some(datagram) = self.reject_datagram(reason, SessionToken::UNKNOWN) {
            if datagram.len() <= max_len {
                self.queue_reply(to, datagram);
            }
        }
    }

    /// A Reject for `reason` with `session` in its header, sealed.
    pub(super) fn reject_datagram(
        &self,
        reason: RejectReason,
        session: SessionToken,
    ) -> Option<Vec<u8>> {
        let header = Header {
            version: PROTOCOL_VERSION,
            session,
            sequence: Sequence(0),
        };
        let reject = Message::Reject {
            reason,
            host: self.config.handshake(self.local_players),
        };
        let mut datagram = Vec::new();
        codec::encode(&header, &reject, &mut datagram).ok()?;
        auth::seal_handshake(&mut datagram);
        Some(datagram)
    }

    /// Queues a datagram to an address with no endpoint, up to a bound.
    pub(super) fn queue_reply(&mut self, to: A, datagram: Vec<u8>) {
        if self.refusals.len() < MAX_PENDING_REFUSALS {
            self.refusals.push_back((to, datagram));
        }
    }

    /// Routes every pending event of the endpoint at `address`.
    pub(super) fn pump_endpoint(&mut self, address: A) {
        let link = self.links.iter().position(|l| l.address == Some(address));
        loop {
            let Some(event) = self
                .endpoints
                .get_mut(&address)
                .and_then(PeerEndpoint::next_event)
            else {
                return;
            };
            match link {
                Some(index) => self.on_link_event(index, event),
                None => self.on_spectator_event(address, event),
            }
        }
    }

    /// Routes one event of link `index`'s endpoint to what it concerns.
    pub(super) fn on_link_event(&mut self, index: usize, event: NetEvent) {
        let players = player_set(self.links[index].players);
        match event {
            NetEvent::Synchronized {
                settings,
                remote_slots,
                ..
            } => self.on_synchronized(index, settings, remote_slots),
            NetEvent::Rejected(rejection) => self.on_rejected(index, rejection),
            NetEvent::RemoteInput {
                player,
                frame,
                buttons,
            } => self.on_remote_input(index, player, frame, buttons),
            NetEvent::RemoteFrameAdvantage(lag) => self.on_remote_frame_lag(index, lag),
            NetEvent::Ping { rtt_ms, sample_ms } => self.on_ping(index, rtt_ms, sample_ms),
            NetEvent::RemoteChecksum { frame, checksum } => {
                let link = &mut self.links[index];
                link.checksummed = link.checksummed.max(Some(frame));
                let player = link.first_player;
                let result = self.session.add_remote_checksum(player, frame, checksum);
                self.record(result);
            }
            NetEvent::RemoteSeesDisconnect { player, at } => {
                self.on_remote_sees_disconnect(index, player, at)
            }
            NetEvent::NetworkInterrupted { silent_for_ms } => {
                self.events.push_back(NetplayEvent::NetworkInterrupted {
                    players,
                    silent_for_ms,
                });
            }
            NetEvent::NetworkResumed => {
                self.events
                    .push_back(NetplayEvent::NetworkResumed { players });
            }
            NetEvent::Disconnected { cause } => self.on_link_disconnected(index, cause),
            NetEvent::PeerReady => self.startup.on_peer_ready(index),
            NetEvent::StartRequested { delay_ms } => self.on_start_requested(index, delay_ms),
            NetEvent::StartAcknowledged => self.startup.on_start_acknowledged(index),
            NetEvent::BlobReceived { bytes, .. } => self.on_blob_received(index, bytes),
            NetEvent::BlobRefused { size, .. } => self.on_blob_refused(index, size),
            NetEvent::BlobDamaged { .. } => self.on_blob_damaged(index),
            NetEvent::BlobDelivered { .. } => {}
            NetEvent::Roster(entries) => self.on_roster(index, entries),
            NetEvent::Chat(line) => self.on_link_chat(index, line),
        }
    }

    /// Link `index` finished its handshake: it must be the peer and the
    /// settings agreed on; its players join the session.
    fn on_synchronized(
        &mut self,
        index: usize,
        settings: SessionSettings,
        remote_slots: PlayerSlots,
    ) {
        let link_players = self.links[index].players;
        if remote_slots != link_players || settings != self.config.settings {
            self.close_for_fault(index, PeerFault::WrongPlayersOrSettings);
            return;
        }
        self.start_state_handshake(index);
        self.adopt_hosts_last_frame(index);
        for player in link_players.iter() {
            let result = self.session.peer_synchronized(PlayerId::new(player));
            self.record(result);
        }
        self.events.push_back(NetplayEvent::PeerSynchronized {
            players: player_set(link_players),
        });
    }

    /// The start-up host's match length wins: its last frame is the one
    /// whose checksums every machine compares.
    fn adopt_hosts_last_frame(&mut self, index: usize) {
        if !self.links[index].players.contains(0) {
            return;
        }
        let last = self
            .open_endpoint(index)
            .and_then(|endpoint| endpoint.remote_handshake())
            .and_then(|host| host.match_frames)
            .and_then(Frame::last_of);
        if let Some(last) = last {
            self.session.set_last_frame(last);
        }
    }

    /// A handshake of link `index` was refused (by us or by the peer). A
    /// joiner we refused is answered and its slot waits for another.
    fn on_rejected(&mut self, index: usize, rejection: Rejection) {
        let address = self.links[index].address;
        let reason = rejection.reason;
        let refused_joiner = rejection.by_us && self.reopens(index);
        // A joiner retrying its Hello is refused again, but told of once.
        let repeated = refused_joiner
            && address.is_some_and(|address| self.last_refused == Some((address, reason)));
        if !repeated {
            self.events.push_back(NetplayEvent::Rejected(rejection));
        }
        if refused_joiner {
            if let Some(address) = address {
                self.last_refused = Some((address, reason));
                self.refuse(address, reason);
            }
            self.reopen_slot(index);
        }
    }
}
