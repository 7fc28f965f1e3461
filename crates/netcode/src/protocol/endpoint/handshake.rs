//! The handshake (Hello, Welcome, Reject) and the start-up messages
//! (Ready, Start, StartAck) the caller decides to send.

use super::{
    ConnectionState, DisconnectCause, Event, Identity, Millis, PeerEndpoint, Rejection, Role,
};
use crate::protocol::auth::LinkKeys;
use crate::protocol::auth::RoomKey;
use crate::protocol::codec;
use crate::protocol::messages::*;

impl PeerEndpoint {
    /// Tells the peer (the start-up host) once, at the next poll, that we
    /// are ready to start. The caller repeats it until the Start arrives.
    pub fn send_ready(&mut self) {
        self.ready_due = true;
    }

    /// Tells the peer once, at the next poll, where the other players'
    /// machines are. The caller repeats it until the peer says Ready.
    pub fn send_roster(&mut self, entries: Vec<RosterEntry>) {
        self.roster_due = Some(entries);
    }

    /// Tells the peer once, at the next poll, to begin frame 0 `delay_ms`
    /// after the Start arrives. The caller resends (with the delay left)
    /// until [`Event::StartAcknowledged`].
    pub fn send_start(&mut self, delay_ms: u16) {
        self.start_due = Some(delay_ms);
    }

    fn local_identity(&self) -> Identity {
        Identity::of(self.config.protocol_version, &self.config.local)
    }

    /// Why the host cannot play with this joiner, if it cannot.
    fn problem_with(&self, version: u8, hello: &Handshake) -> Option<RejectReason> {
        let ours = &self.config.local;
        let identity = self
            .local_identity()
            .mismatch(&Identity::of(version, hello));
        if identity.is_some() {
            identity
        } else if self.config.room_password.is_some() && hello.room.is_none() {
            // A host met by room code plays with none who does not show
            // it: else a machine in between would drop the proof.
            Some(RejectReason::RoomCodeMissing)
        } else if hello.settings.frame_rate_millihertz != ours.settings.frame_rate_millihertz
            || !hello.local_slots.fit_in(ours.settings.player_count)
        {
            Some(RejectReason::Settings)
        } else if hello.local_slots.overlaps(ours.local_slots) {
            Some(RejectReason::SlotTaken)
        } else {
            None
        }
    }

    pub(super) fn on_hello(&mut self, header: Header, hello: Handshake) {
        if !matches!(self.config.role, Role::Host { .. }) {
            self.stats.dropped_unexpected += 1;
            return;
        }
        match self.state {
            ConnectionState::Running => {
                // Our Welcome was lost: say it again.
                self.handshake_reply = Some(Message::Welcome(self.welcome()));
            }
            ConnectionState::Handshaking => match self.problem_with(header.version, &hello) {
                Some(reason) => {
                    if self.reported_rejection != Some(reason) {
                        self.reported_rejection = Some(reason);
                        self.events.push_back(Event::Rejected(Rejection {
                            reason,
                            by_us: true,
                            local: self.local_identity(),
                            remote: Identity::of(header.version, &hello),
                            spectator: hello.local_slots.is_empty(),
                        }));
                    }
                    self.handshake_reply = Some(Message::Reject {
                        reason,
                        host: self.config.local.clone(),
                    });
                }
                None => {
                    let Some((keys, room_answer)) = self.answer_hello(&hello) else {
                        self.stats.dropped_malformed += 1;
                        return;
                    };
                    self.keys = Some(keys);
                    self.room_answer = room_answer;
                    self.remote_slots = hello.local_slots;
                    self.remote_handshake = Some(hello);
                    self.state = ConnectionState::Running;
                    self.handshake_reply = Some(Message::Welcome(self.welcome()));
                    self.events.push_back(Event::Synchronized {
                        session: self.session,
                        settings: self.settings,
                        remote_slots: self.remote_slots,
                    });
                }
            },
            ConnectionState::Disconnected => {}
        }
    }

    pub(super) fn on_welcome(&mut self, header: Header, welcome: Handshake) {
        if !matches!(self.config.role, Role::Joiner { .. })
            || self.state != ConnectionState::Handshaking
        {
            // Repeated Welcomes answer our repeated Hellos: harmless.
            return;
        }
        if welcome.local_slots.overlaps(self.config.local.local_slots) {
            self.events.push_back(Event::Rejected(Rejection {
                reason: RejectReason::SlotTaken,
                by_us: true,
                local: self.local_identity(),
                remote: Identity::of(header.version, &welcome),
                spectator: false,
            }));
            self.disconnect(DisconnectReason::ProtocolError);
            return;
        }
        self.session = header.session;
        let room_key = match (&self.config.room_password, welcome.room) {
            (None, _) => None,
            (Some(password), Some(answer)) => {
                crate::protocol::pake::joiner_key(&self.config.secret, password, answer.element)
                    .map(|key| (key, answer.confirmation))
            }
            (Some(_), None) => None,
        };
        let keys = match (&self.config.room_password, room_key) {
            (None, _) => self.agree_keys(&welcome, None),
            (Some(_), Some((key, Some(confirmation)))) => self
                .agree_keys(&welcome, Some(key))
                .filter(|keys| keys.confirms(&confirmation))
                .or_else(|| {
                    self.refuse_room_code(&header, &welcome);
                    None
                }),
            (Some(_), _) => {
                self.refuse_room_code(&header, &welcome);
                None
            }
        };
        let Some(keys) = keys else {
            self.session = SessionToken::UNKNOWN;
            if self.state != ConnectionState::Disconnected {
                self.stats.dropped_malformed += 1;
            }
            return;
        };
        self.keys = Some(keys);
        self.key_proof_due = true;
        self.settings = welcome.settings;
        self.remote_slots = welcome.local_slots;
        self.remote_handshake = Some(welcome);
        // Running, to prove our key; synchronized only once the host sent
        // us anything tagged: until then it may still give our place to
        // another who proved itself first, and refuse us (v9).
        self.state = ConnectionState::Running;
    }

    pub(super) fn on_reject(&mut self, header: Header, reason: RejectReason, host: Handshake) {
        // A host that welcomed us may still refuse us until it sent us
        // anything tagged: another took the place while we proved our key
        // (that Reject carries the session token, checked on admission).
        let refusable = match self.state {
            ConnectionState::Handshaking => true,
            ConnectionState::Running => !self.peer_knows_session,
            ConnectionState::Disconnected => false,
        };
        if !matches!(self.config.role, Role::Joiner { .. }) || !refusable {
            self.stats.dropped_unexpected += 1;
            return;
        }
        // A host of our own version cannot refuse us for our version: it
        // read a Hello damaged on the way. The next Hello will do.
        let same_version = header.version == self.config.protocol_version;
        if reason == RejectReason::ProtocolVersion && same_version {
            self.stats.dropped_implausible += 1;
            return;
        }
        self.state = ConnectionState::Disconnected;
        self.events.push_back(Event::Rejected(Rejection {
            reason,
            by_us: false,
            local: self.local_identity(),
            remote: Identity::of(header.version, &host),
            spectator: self.config.local.local_slots.is_empty(),
        }));
        self.refusal = Some((reason, host));
        self.events.push_back(Event::Disconnected {
            cause: DisconnectCause::Rejected(reason),
        });
    }

    /// The link's keys from the peer's handshake, the session token now
    /// known and the room's key; `None` when its key is missing or unusable.
    fn agree_keys(&self, theirs: &Handshake, room: Option<RoomKey>) -> Option<LinkKeys> {
        let we_host = matches!(self.config.role, Role::Host { .. });
        LinkKeys::agree(
            &self.config.secret,
            theirs.public_key?,
            self.session,
            we_host,
            room,
        )
    }

    /// The host's keys for a Hello it takes, with its room answer when it
    /// was met by room code (the Hello shows an element: checked before);
    /// `None` when the Hello's key or element is unusable.
    fn answer_hello(&self, hello: &Handshake) -> Option<(LinkKeys, Option<RoomProof>)> {
        let Some(password) = &self.config.room_password else {
            return Some((self.agree_keys(hello, None)?, None));
        };
        let (element, key) =
            crate::protocol::pake::host_answer(&self.config.secret, password, hello.room?.element)?;
        let keys = self.agree_keys(hello, Some(key))?;
        let answer = RoomProof {
            element,
            confirmation: Some(keys.confirmation()),
        };
        Some((keys, Some(answer)))
    }

    /// Our Welcome to this joiner: our handshake, with our room answer.
    fn welcome(&self) -> Handshake {
        Handshake {
            room: self.room_answer,
            ..self.config.local.clone()
        }
    }

    /// The Welcome does not prove the room code: its keys are not the
    /// ones the code agrees with us. Final: a machine that rewrote the
    /// exchange, or a host of another code, says nothing we can play with.
    fn refuse_room_code(&mut self, header: &Header, welcome: &Handshake) {
        self.state = ConnectionState::Disconnected;
        self.events.push_back(Event::Rejected(Rejection {
            reason: RejectReason::RoomCodeMismatch,
            by_us: true,
            local: self.local_identity(),
            remote: Identity::of(header.version, welcome),
            spectator: self.config.local.local_slots.is_empty(),
        }));
        self.refusal = Some((RejectReason::RoomCodeMismatch, welcome.clone()));
        self.events.push_back(Event::Disconnected {
            cause: DisconnectCause::Rejected(RejectReason::RoomCodeMismatch),
        });
    }

    /// The host's cookie (v9): our Hellos carry it from now on, and the
    /// next goes at once.
    pub(super) fn on_hello_cookie(&mut self, header: Header) {
        let joining = matches!(self.config.role, Role::Joiner { .. })
            && self.state == ConnectionState::Handshaking;
        if !joining || header.session == SessionToken::UNKNOWN {
            self.stats.dropped_unexpected += 1;
            return;
        }
        self.hello_cookie = header.session;
        self.last_hello_at = None;
    }

    pub(super) fn poll_handshake(&mut self, now: Millis, send: &mut dyn FnMut(&[u8])) {
        if let Some(reply) = self.handshake_reply.take() {
            self.emit(now, &reply, send);
        }
        if matches!(self.config.role, Role::Joiner { .. }) {
            let due = self
                .last_hello_at
                .is_none_or(|at| now.saturating_sub(at) >= self.config.hello_retry_ms);
            if due {
                self.last_hello_at = Some(now);
                let mut header = self.next_header();
                header.session = self.hello_cookie;
                let hello = Message::Hello(self.config.local.clone());
                match codec::encode(&header, &hello, &mut self.scratch) {
                    Ok(()) => self.seal_and_send(now, send),
                    Err(error) => debug_assert!(false, "an unencodable Hello: {error}"),
                }
            }
        }
    }

    /// Sends only what the handshake owes (the Welcome again, after a
    /// repeated Hello): for an owner holding this link until its peer
    /// proves it holds the key it offered, which is sent nothing else.
    pub fn poll_unproven(&mut self, now: Millis, mut send: impl FnMut(&[u8])) {
        self.latest_now = self.latest_now.max(now);
        if let Some(reply) = self.handshake_reply.take() {
            self.emit(now, &reply, &mut send);
        }
    }

    /// The peer asks us to begin frame 0 in `delay_ms`. Every copy is
    /// acknowledged: the first ack may be lost.
    pub(super) fn on_start(&mut self, delay_ms: u16) {
        self.start_ack_due = true;
        self.events.push_back(Event::StartRequested { delay_ms });
    }
}
