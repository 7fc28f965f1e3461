//! Datagrams in and out: which are taken (token, version, repeats), what
//! each message leads to, and the header every datagram sent carries.

use super::{ConnectionState, Event, Millis, PeerEndpoint, Role};
use crate::protocol::messages::*;
use crate::protocol::{auth, codec};

/// Sequence numbers a datagram may run ahead of the newest one taken: those
/// of the datagrams lost in between. At most this many at once…
const SEQUENCE_LEAD_SLACK: u32 = 64;
/// …and this many more per millisecond since the newest one came (more
/// than any peer sends).
const SEQUENCE_LEAD_PER_MS: u64 = 8;

/// Remembers which of the last 64 sequence numbers arrived, to drop
/// duplicates, and when the newest came, to drop numbers further ahead
/// than the peer can have sent since: one such number taken would make
/// every real datagram after it look old.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ReceiveWindow {
    newest: Option<(Sequence, Millis)>,
    /// Bit i: `newest - i` arrived.
    seen: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arrival {
    Newest,
    Late,
    Duplicate,
    TooOld,
    TooFarAhead,
}

impl ReceiveWindow {
    fn accept(&mut self, sequence: Sequence, now: Millis) -> Arrival {
        let Some((newest, newest_at)) = self.newest else {
            self.newest = Some((sequence, now));
            self.seen = 1;
            return Arrival::Newest;
        };
        if sequence.is_newer_than(newest) {
            let shift = u32::from(sequence.distance_from(newest));
            let since = now.saturating_sub(newest_at);
            let reach = u64::from(SEQUENCE_LEAD_SLACK) + since * SEQUENCE_LEAD_PER_MS;
            if u64::from(shift) > reach {
                return Arrival::TooFarAhead;
            }
            self.seen = if shift >= 64 { 0 } else { self.seen << shift };
            self.seen |= 1;
            self.newest = Some((sequence, now));
            return Arrival::Newest;
        }
        let back = newest.distance_from(sequence) as u32;
        if back >= 64 {
            return Arrival::TooOld;
        }
        if self.seen >> back & 1 == 1 {
            return Arrival::Duplicate;
        }
        self.seen |= 1 << back;
        Arrival::Late
    }
}

impl PeerEndpoint {
    /// Takes in one datagram from the peer. Anything malformed, foreign or
    /// repeated is dropped and counted in [`EndpointStats`].
    pub fn handle_datagram(&mut self, now: Millis, datagram: &[u8]) {
        self.latest_now = self.latest_now.max(now);
        self.stats.datagrams_received += 1;
        self.stats.bytes_received += datagram.len() as u64;
        let Some((header, message)) = self.admit(datagram) else {
            return;
        };
        if self.state == ConnectionState::Disconnected {
            self.dispatch_after_leaving(message);
            return;
        }
        self.note_heard(now, &message);
        self.dispatch(now, header, message);
    }

    /// The datagram's header and message, unless it is dropped: with a tag
    /// that does not verify, malformed, with a foreign token or version,
    /// claiming what the peer cannot have done, or a repeat.
    fn admit(&mut self, datagram: &[u8]) -> Option<(Header, Message)> {
        let Ok((header, kind)) = codec::decode_header(datagram) else {
            self.stats.dropped_malformed += 1;
            return None;
        };
        let Some(untagged) = self.open(header.version, kind, datagram) else {
            self.stats.dropped_wrong_token += 1;
            return None;
        };
        let Ok((header, message)) = codec::decode_reusing(untagged, &mut self.input_scratch) else {
            self.stats.dropped_malformed += 1;
            return None;
        };
        if !self.token_is_acceptable(&header, &message) {
            self.stats.dropped_wrong_token += 1;
            return None;
        }
        let handshake_kind = matches!(message, Message::Hello(_) | Message::Reject { .. });
        if header.version != self.config.protocol_version && !handshake_kind {
            self.stats.dropped_wrong_version += 1;
            return None;
        }
        if !self.is_plausible(&message) {
            self.stats.dropped_implausible += 1;
            return None;
        }
        // Handshakes are taken again and again (a lost Welcome is asked
        // for with the next Hello) and anyone can make one: they leave the
        // window of sequence numbers alone.
        if codec::is_handshake_kind(kind) {
            return Some((header, message));
        }
        match self.received.accept(header.sequence, self.latest_now) {
            Arrival::Newest | Arrival::Late => Some((header, message)),
            Arrival::Duplicate | Arrival::TooOld => {
                self.stats.dropped_duplicate += 1;
                None
            }
            Arrival::TooFarAhead => {
                self.stats.dropped_implausible += 1;
                None
            }
        }
    }

    /// The peer was heard: the silence clocks restart, an interruption ends,
    /// and a message carrying the token shows the peer knows the session.
    fn note_heard(&mut self, now: Millis, message: &Message) {
        let handshake_message = matches!(
            message,
            Message::Hello(_) | Message::Welcome(_) | Message::Reject { .. } | Message::HelloCookie
        );
        // A Hello needs no session token, so anyone can send one in anyone's
        // name: once running it earns a Welcome again, but it is not the peer
        // being heard, which would keep a forged connection alive.
        let tokenless_retry = self.state == ConnectionState::Running && handshake_message;
        if !tokenless_retry {
            self.last_received_at = now;
            if self.interrupted {
                self.interrupted = false;
                self.events.push_back(Event::NetworkResumed);
            }
        }
        if self.state == ConnectionState::Running && !handshake_message {
            let seated_now =
                !self.peer_knows_session && matches!(self.config.role, Role::Joiner { .. });
            self.peer_knows_session = true;
            // A host sends a joiner nothing tagged before it seated it (v9).
            if seated_now {
                self.events.push_back(Event::Synchronized {
                    session: self.session,
                    settings: self.settings,
                    remote_slots: self.remote_slots,
                });
            }
        }
    }

    /// Hands an admitted message to the part of the endpoint it concerns.
    fn dispatch(&mut self, now: Millis, header: Header, message: Message) {
        match message {
            Message::Hello(hello) => self.on_hello(header, hello),
            Message::Welcome(welcome) => self.on_welcome(header, welcome),
            Message::Reject { reason, host } => self.on_reject(header, reason, host),
            Message::HelloCookie => self.on_hello_cookie(header),
            _ if self.state != ConnectionState::Running => self.stats.dropped_unexpected += 1,
            Message::Input(input) => {
                self.on_piggyback(now, header.sequence, &input.piggyback);
                self.on_input(now, &input);
                self.input_scratch = input.inputs;
            }
            Message::InputAck { next_expected } => self.on_ack(next_expected),
            Message::QualityReport(report) => self.on_quality_report(now, header.sequence, report),
            Message::QualityReply(reply) => self.on_quality_reply(now, reply),
            Message::ChecksumReport { entries } => self.on_checksums(&entries),
            Message::KeepAlive => {}
            Message::Disconnect { reason } => self.on_goodbye(reason),
            Message::DisconnectAck => self.stats.dropped_unexpected += 1,
            Message::BlobChunk(chunk) => self.on_blob_chunk(chunk),
            Message::BlobAck(ack) => self.on_blob_ack(ack),
            Message::Ready => self.events.push_back(Event::PeerReady),
            Message::Start { delay_ms } => self.on_start(delay_ms),
            Message::StartAck => self.events.push_back(Event::StartAcknowledged),
            Message::Roster(entries) => self.events.push_back(Event::Roster(entries)),
            Message::RejoinChallenge { nonce } => self.on_rejoin_challenge(nonce),
            // Read by the owner before the link moved here.
            Message::RejoinProof { .. } | Message::RejoinRestarted { .. } => {}
            Message::Chat(chat) => self.on_chat(now, chat),
        }
    }

    /// The datagram without its tag, if the tag verifies: a handshake's
    /// with the well-known key, any other with the peer's key of this link
    /// (none before the handshake).
    fn open<'a>(&self, version: u8, kind: u8, datagram: &'a [u8]) -> Option<&'a [u8]> {
        if codec::is_handshake_kind(kind) {
            auth::open_handshake(datagram, version, self.config.protocol_version)
        } else {
            self.keys.as_ref()?.open(datagram)
        }
    }

    /// Puts on `datagram` (encoded, untagged) the tag it goes out with;
    /// false when it cannot go out (a running session's message before
    /// the link's keys are agreed).
    pub fn seal(&self, datagram: &mut Vec<u8>) -> bool {
        let kind = datagram.get(3).copied().unwrap_or(0);
        if codec::is_handshake_kind(kind) {
            auth::seal_handshake(datagram);
            return true;
        }
        match &self.keys {
            Some(keys) => {
                keys.seal(datagram);
                true
            }
            None => false,
        }
    }

    fn token_is_acceptable(&self, header: &Header, message: &Message) -> bool {
        match (self.config.role, message) {
            // A joiner's Hello carries the cookie the owner of our address
            // table checked before it made us (v9), not the token.
            (Role::Host { .. }, Message::Hello(_)) => true,
            // Before the Welcome a joiner takes the host's token on trust.
            (
                Role::Joiner { .. },
                Message::Welcome(_) | Message::Reject { .. } | Message::HelloCookie,
            ) if self.session == SessionToken::UNKNOWN => true,
            (
                _,
                Message::Hello(_)
                | Message::Welcome(_)
                | Message::Reject { .. }
                | Message::HelloCookie,
            ) => self.session != SessionToken::UNKNOWN && header.session == self.session,
            // The tag, checked with the session's keys, stands for the token.
            _ => true,
        }
    }

    pub(super) fn next_header(&mut self) -> Header {
        let header = Header {
            version: self.config.protocol_version,
            session: self.session,
            sequence: self.next_sequence,
        };
        self.next_sequence = self.next_sequence.next();
        header
    }

    /// Tags the datagram encoded in `scratch`, counts it and sends it.
    pub(super) fn seal_and_send(&mut self, now: Millis, send: &mut dyn FnMut(&[u8])) {
        let mut datagram = std::mem::take(&mut self.scratch);
        if self.seal(&mut datagram) {
            self.stats.datagrams_sent += 1;
            self.stats.bytes_sent += datagram.len() as u64;
            self.last_sent_at = Some(now);
            send(&datagram);
        }
        self.scratch = datagram;
    }

    pub(super) fn emit(&mut self, now: Millis, message: &Message, send: &mut dyn FnMut(&[u8])) {
        let header = self.next_header();
        match codec::encode(&header, message, &mut self.scratch) {
            Ok(()) => self.seal_and_send(now, send),
            // Every message the endpoint builds fits by construction (chunks,
            // bounded reports, 255-byte names checked at config time).
            Err(error) => debug_assert!(false, "endpoint built an unencodable message: {error}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_receive_window_drops_repeats_across_sequence_wrap_around() {
        let mut window = ReceiveWindow::default();
        assert_eq!(window.accept(Sequence(65_534), 0), Arrival::Newest);
        assert_eq!(window.accept(Sequence(1), 0), Arrival::Newest);
        assert_eq!(window.accept(Sequence(65_535), 0), Arrival::Late);
        assert_eq!(window.accept(Sequence(65_535), 0), Arrival::Duplicate);
        assert_eq!(window.accept(Sequence(1), 0), Arrival::Duplicate);
        assert_eq!(window.accept(Sequence(0), 0), Arrival::Late);
        assert_eq!(window.accept(Sequence(65_534), 0), Arrival::Duplicate);
        assert_eq!(window.accept(Sequence(100), 20), Arrival::Newest);
        assert_eq!(window.accept(Sequence(30), 20), Arrival::TooOld);
        assert_eq!(window.accept(Sequence(40), 20), Arrival::Late);
    }

    #[test]
    fn a_sequence_number_further_ahead_than_the_peer_can_have_sent_is_not_taken() {
        let mut window = ReceiveWindow::default();
        assert_eq!(window.accept(Sequence(10), 1_000), Arrival::Newest);
        // 300 ahead a millisecond later: 300 datagrams lost in a millisecond.
        assert_eq!(window.accept(Sequence(310), 1_001), Arrival::TooFarAhead);
        // It moved nothing: the next real one is taken.
        assert_eq!(window.accept(Sequence(11), 1_017), Arrival::Newest);
        // After a second of silence, a thousand lost datagrams are possible.
        assert_eq!(window.accept(Sequence(1_011), 2_017), Arrival::Newest);
    }
}
