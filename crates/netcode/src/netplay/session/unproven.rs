//! Peers not yet proven (protocol 9). A Hello opens nothing until its
//! address echoed our cookie (see `protocol::cookie`): before that it is
//! answered with the cookie alone, no bigger than the Hello, and nothing
//! is kept. Even then a seat or a spectator's place is taken only once the
//! peer sent a datagram tagged with the link's key, which only the holder
//! of the secret behind the key its Hello offered can make. Until then its
//! endpoint waits here, apart from the links: it holds no seat (others may
//! claim the same one meanwhile, and the first to prove itself takes it),
//! is sent nothing but its Welcome, and is forgotten after
//! [`UNPROVEN_FOR_MS`]. A captured Hello replayed from anywhere therefore
//! locks nothing, and a peer that goes quiet costs the others nothing.

use super::{LinkState, NetplaySession};
use crate::netplay::events::NetplayEvent;
use crate::protocol::{
    auth, codec, Event as NetEvent, GuessAnswer, Header, Message, Millis, PeerEndpoint,
    RejectReason, Rejection, Sequence, PROTOCOL_VERSION,
};

/// How long a peer that echoed our cookie may take to prove it holds its
/// key (one round trip does it).
pub const UNPROVEN_FOR_MS: Millis = 2_000;

/// Unproven peers held at most; a newer one pushes out the oldest.
pub const MAX_UNPROVEN: usize = 16;

/// What an unproven peer would take once proven.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Seat {
    /// The player link of this index.
    Player(usize),
    /// A spectator's place.
    Spectator,
}

/// One peer that shook hands but has not proven itself yet.
pub(super) struct Unproven {
    since: Millis,
    seat: Seat,
    endpoint: PeerEndpoint,
}

impl<A: Ord + Copy + std::hash::Hash> NetplaySession<A> {
    /// Answers a Hello without our valid cookie with one, no bigger than
    /// the Hello, keeping nothing.
    pub(super) fn send_cookie(&mut self, now: Millis, to: A, hello_len: usize) {
        let header = Header {
            version: PROTOCOL_VERSION,
            session: self.cookies.issue(now, &to),
            sequence: Sequence(0),
        };
        let mut datagram = Vec::new();
        if codec::encode(&header, &Message::HelloCookie, &mut datagram).is_ok() {
            auth::seal_handshake(&mut datagram);
            if datagram.len() <= hello_len {
                self.queue_reply(to, datagram);
            }
        }
    }

    /// Holds the endpoint of a peer whose Hello was taken at `from`, for
    /// `seat`, until it proves itself or its time is up.
    pub(super) fn hold_unproven(
        &mut self,
        now: Millis,
        from: A,
        seat: Seat,
        endpoint: PeerEndpoint,
    ) {
        if !self.room_guess_allowed(now) {
            return;
        }
        if self.unproven.len() >= MAX_UNPROVEN && !self.unproven.contains_key(&from) {
            let oldest = self
                .unproven
                .iter()
                .min_by_key(|(_, peer)| peer.since)
                .map(|(address, _)| *address);
            if let Some(oldest) = oldest {
                self.unproven.remove(&oldest);
            }
        }
        let peer = Unproven {
            since: now,
            seat,
            endpoint,
        };
        self.unproven.insert(from, peer);
    }

    /// Whether a Hello about to be welcomed may be: met by room code, each
    /// Welcome is one guess of the code for its sender, and the room's
    /// budget of them bounds how many fail (the Welcome is never sent).
    fn room_guess_allowed(&mut self, now: Millis) -> bool {
        if self.config.room_password.is_none() {
            return true;
        }
        match self.room_guesses.spend(now) {
            GuessAnswer::Answer => true,
            GuessAnswer::Refuse { first, retry_in_ms } => {
                if first {
                    self.events
                        .push_back(NetplayEvent::RoomGuessesSpent { retry_in_ms });
                }
                false
            }
        }
    }

    /// Hands a datagram from an unproven peer to its endpoint, and gives
    /// it its seat if that proved it. Returns whether `from` was one.
    pub(super) fn unproven_datagram(&mut self, now: Millis, from: A, datagram: &[u8]) -> bool {
        let Some(peer) = self.unproven.get_mut(&from) else {
            return false;
        };
        peer.endpoint.handle_datagram(now, datagram);
        if peer.endpoint.is_running() && peer.endpoint.peer_knows_session() {
            if let Some(peer) = self.unproven.remove(&from) {
                // It holds the code (or we met by none): no guess failed.
                if self.config.room_password.is_some() {
                    self.room_guesses.refund(now);
                }
                self.seat(from, peer);
            }
        }
        true
    }

    /// A peer proved itself: it takes its seat if that is still free.
    fn seat(&mut self, from: A, peer: Unproven) {
        let Unproven {
            seat, mut endpoint, ..
        } = peer;
        match seat {
            Seat::Player(index) => {
                let link = &self.links[index];
                let free = link.state == LinkState::AwaitingHello
                    && link.address.is_none_or(|address| address == from);
                if !free {
                    let reason = match self.links.iter().any(|l| l.is_open_slot()) {
                        true => RejectReason::SlotTaken,
                        false => RejectReason::MatchFull,
                    };
                    return self.refuse_welcomed(from, reason);
                }
                if self.queue_inputs_so_far(&mut endpoint).is_err() {
                    return;
                }
                self.endpoints.insert(from, endpoint);
                let link = &mut self.links[index];
                link.address = Some(from);
                link.state = LinkState::Open;
            }
            Seat::Spectator => {
                if self.spectator_count() >= self.config.max_spectators {
                    return self.refuse_welcomed(from, RejectReason::SpectatorsFull);
                }
                self.endpoints.insert(from, endpoint);
                self.add_spectator(from);
            }
        }
    }

    /// Refuses a peer we welcomed whose place another took while it proved
    /// itself: the Reject carries the session token, which it knows.
    fn refuse_welcomed(&mut self, to: A, reason: RejectReason) {
        if let Some(datagram) = self.reject_datagram(reason, self.config.token) {
            self.queue_reply(to, datagram);
        }
    }

    /// Forgets unproven peers whose time is up and sends the others what
    /// their handshake owes them (a Welcome again after a repeated Hello).
    pub(super) fn poll_unproven(&mut self, now: Millis, send: &mut impl FnMut(A, &[u8])) {
        self.unproven
            .retain(|_, peer| now.saturating_sub(peer.since) < UNPROVEN_FOR_MS);
        for (address, peer) in self.unproven.iter_mut() {
            peer.endpoint
                .poll_unproven(now, |datagram| send(*address, datagram));
        }
    }

    /// The refusal an endpoint just made of the Hello it was given, if it
    /// refused it (its only events then).
    pub(super) fn refusal_of(endpoint: &mut PeerEndpoint) -> Option<Rejection> {
        if endpoint.is_running() {
            return None;
        }
        endpoint.drain_events().find_map(|event| match event {
            NetEvent::Rejected(rejection) => Some(rejection),
            _ => None,
        })
    }

    /// Tells the frontend of a joiner refused, once per address and reason
    /// (a joiner retries its Hello), and answers it in at most `max_len`
    /// bytes (an address not proven gets no more than it sent).
    pub(super) fn refused_joiner(&mut self, from: A, rejection: Rejection, max_len: usize) {
        let reason = rejection.reason;
        if rejection.spectator {
            self.events
                .push_back(NetplayEvent::SpectatorRefused(rejection));
        } else if self.last_refused != Some((from, reason)) {
            self.events.push_back(NetplayEvent::Rejected(rejection));
        }
        self.last_refused = Some((from, reason));
        self.refuse_within(from, reason, max_len);
    }

    /// The endpoint of the unproven peer at `address`, if one is held.
    pub(super) fn unproven_endpoint(&self, address: A) -> Option<&PeerEndpoint> {
        self.unproven.get(&address).map(|peer| &peer.endpoint)
    }

    /// Peers that echoed our cookie and have not proven their key yet.
    pub fn unproven_count(&self) -> usize {
        self.unproven.len()
    }
}
