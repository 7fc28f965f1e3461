//! A TURN channel to the one relayed peer (RFC 8656 §12): with it bound,
//! each datagram through the relay carries a 4-byte ChannelData header
//! instead of a 36-byte-or-more Send indication. rice-proto keeps the
//! allocation and its permissions alive but binds no channel and gives no
//! access to its TURN client, so this binds one on the same 5-tuple (the
//! server keys allocations by it), authenticating as that client does,
//! and refreshes it before it expires. A server that refuses, or never
//! answers, leaves the path on Send indications. Sans-IO: time is a
//! parameter, requests and framed datagrams are returned.

use std::net::SocketAddr;
use stun_proto::auth::{LongTermClientAuth, LongTermClientValidation};
use stun_proto::types::message::{
    LongTermCredentials, Message, MessageClass, MessageType, MessageWrite, MessageWriteExt,
    MessageWriteVec, TransactionId,
};
use turn_client_proto::types::attribute::{ChannelNumber, Data, XorPeerAddress};
use turn_client_proto::types::channel::ChannelData;
use turn_client_proto::types::message::{CHANNEL_BIND, DATA};

/// The first channel number a client may bind (0x4000–0x4FFF).
const FIRST_CHANNEL: u16 = 0x4000;
/// A binding lasts 10 minutes; refreshing it also refreshes the peer's
/// permission (5 minutes), so it is refreshed well inside both.
const REFRESH_AFTER_US: u64 = 240_000_000;
const LIFETIME_US: u64 = 600_000_000;
/// The first retransmission's wait, doubled each time (RFC 8489's RTO).
const FIRST_RETRANSMIT_US: u64 = 250_000;
/// Requests sent before a silent server counts as refusing.
const ATTEMPTS: u32 = 6;
/// Challenges answered per binding: a server that keeps asking refuses.
const CHALLENGES: u32 = 3;

/// The bytes ChannelData adds to each datagram.
pub const CHANNEL_DATA_HEADER: usize = 4;

/// A request in flight.
#[derive(Debug)]
struct Pending {
    transaction: TransactionId,
    sent_us: u64,
    attempts: u32,
}

/// One channel to `peer` through the relay `server` (see the module's comment).
#[derive(Debug)]
pub struct TurnChannel {
    server: SocketAddr,
    peer: SocketAddr,
    number: u16,
    auth: LongTermClientAuth,
    pending: Option<Pending>,
    /// When the next request is due (`None`: none is, one is in flight).
    due_us: Option<u64>,
    bound_until_us: Option<u64>,
    challenges: u32,
    refused: bool,
}

impl TurnChannel {
    /// A channel to bind to `peer` through `server`, authenticating with
    /// the relay's long-term credentials; the first request is due at once.
    pub fn new(server: SocketAddr, peer: SocketAddr, username: &str, password: &str) -> Self {
        let mut auth = LongTermClientAuth::new();
        auth.set_credentials(LongTermCredentials::new(
            username.to_owned(),
            password.to_owned(),
        ));
        TurnChannel {
            server,
            peer,
            number: FIRST_CHANNEL,
            auth,
            pending: None,
            due_us: Some(0),
            bound_until_us: None,
            challenges: 0,
            refused: false,
        }
    }

    /// The relay server the channel goes through.
    pub fn server(&self) -> SocketAddr {
        self.server
    }

    /// The peer the channel reaches.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// True while datagrams to the peer can go as ChannelData.
    pub fn is_bound(&self, now_us: u64) -> bool {
        self.bound_until_us.is_some_and(|until| now_us < until)
    }

    /// True once the server refused the channel (or never answered).
    #[cfg(test)]
    pub fn is_refused(&self) -> bool {
        self.refused
    }

    /// The ChannelBind request to send to the server at `now_us`, if one
    /// is due: the first, a retransmission, an answer to a challenge, or
    /// a refresh.
    pub fn poll_transmit(&mut self, now_us: u64) -> Option<Vec<u8>> {
        if self.refused {
            return None;
        }
        let attempts = match &self.pending {
            Some(pending) => {
                let wait = FIRST_RETRANSMIT_US << pending.attempts.saturating_sub(1).min(6);
                if now_us < pending.sent_us.saturating_add(wait) {
                    return None;
                }
                if pending.attempts >= ATTEMPTS {
                    self.refuse();
                    return None;
                }
                pending.attempts + 1
            }
            None if self.due_us.is_some_and(|due| now_us >= due) => 1,
            None => return None,
        };
        let transaction = match &self.pending {
            // A retransmission repeats the transaction.
            Some(pending) if attempts > 1 => pending.transaction,
            _ => TransactionId::generate(),
        };
        self.pending = Some(Pending {
            transaction,
            sent_us: now_us,
            attempts,
        });
        self.due_us = None;
        Some(self.request(transaction))
    }

    fn request(&mut self, transaction: TransactionId) -> Vec<u8> {
        let mut request = Message::builder(
            MessageType::from_class_method(MessageClass::Request, CHANNEL_BIND),
            transaction,
            MessageWriteVec::new(),
        );
        request
            .add_attribute(&ChannelNumber::new(self.number))
            .expect("a channel number fits a request");
        request
            .add_attribute(&XorPeerAddress::new(self.peer, transaction))
            .expect("a peer address fits a request");
        // Signing fails only on attributes too long for STUN; the server's
        // realm and nonce were read from its own answer, so unsigned it goes
        // and the server's refusal ends the channel.
        match self.auth.sign_outgoing_message(request) {
            Ok(signed) => signed.finish(),
            Err(_) => {
                self.refuse();
                Vec::new()
            }
        }
    }

    /// Takes `datagram` from `from` if it answers this channel's request;
    /// false leaves it to the ICE agent.
    pub fn handle_response(&mut self, from: SocketAddr, datagram: &[u8], now_us: u64) -> bool {
        if from != self.server {
            return false;
        }
        let Ok(message) = Message::from_bytes(datagram) else {
            return false;
        };
        let ours = self
            .pending
            .as_ref()
            .is_some_and(|pending| pending.transaction == message.transaction_id());
        if !ours || !message.is_response() || !message.has_method(CHANNEL_BIND) {
            return false;
        }
        match self.auth.validate_incoming_message(&message) {
            Ok(LongTermClientValidation::ResendRequest(_)) if self.challenges < CHALLENGES => {
                self.challenges += 1;
                self.pending = None;
                self.due_us = Some(now_us);
            }
            Ok(LongTermClientValidation::Validated(_))
                if message.has_class(MessageClass::Success) =>
            {
                self.pending = None;
                self.challenges = 0;
                self.bound_until_us = Some(now_us.saturating_add(LIFETIME_US));
                self.due_us = Some(now_us.saturating_add(REFRESH_AFTER_US));
            }
            // A success that fails its integrity check is not the
            // server's: the request stays in flight.
            Err(_) if message.has_class(MessageClass::Success) => {}
            _ => self.refuse(),
        }
        true
    }

    fn refuse(&mut self) {
        self.refused = true;
        self.pending = None;
        self.due_us = None;
        self.bound_until_us = None;
    }

    /// `datagram` as ChannelData, while the channel is bound.
    pub fn wrap(&self, datagram: &[u8], now_us: u64) -> Option<Vec<u8>> {
        if !self.is_bound(now_us) {
            return None;
        }
        let length = u16::try_from(datagram.len()).ok()?;
        let mut framed = Vec::with_capacity(CHANNEL_DATA_HEADER + datagram.len());
        framed.extend_from_slice(&self.number.to_be_bytes());
        framed.extend_from_slice(&length.to_be_bytes());
        framed.extend_from_slice(datagram);
        Some(framed)
    }

    /// The peer's `data` that came over the channel, as the Data
    /// indication the ICE agent's TURN client reads: the opponent's
    /// connectivity checks keep reaching it once the channel is bound
    /// (the agent knows nothing of the channel).
    pub fn data_indication(&self, data: &[u8]) -> Vec<u8> {
        let transaction = TransactionId::generate();
        let mut indication = Message::builder(
            MessageType::from_class_method(MessageClass::Indication, DATA),
            transaction,
            MessageWriteVec::new(),
        );
        let written = indication
            .add_attribute(&XorPeerAddress::new(self.peer, transaction))
            .and_then(|()| indication.add_attribute(&Data::new(data)));
        // Data from a UDP datagram always fits a STUN attribute.
        debug_assert!(written.is_ok());
        indication.finish()
    }

    /// The peer's datagram inside ChannelData from the server on this
    /// channel; `None` for anything else.
    pub fn unwrap<'a>(&self, from: SocketAddr, datagram: &'a [u8]) -> Option<&'a [u8]> {
        if from != self.server {
            return None;
        }
        let channel = ChannelData::parse(datagram).ok()?;
        if channel.id() != self.number {
            return None;
        }
        let (_, length) = ChannelData::parse_header(datagram).ok()?;
        datagram.get(CHANNEL_DATA_HEADER..CHANNEL_DATA_HEADER + length)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stun_proto::types::attribute::{AttributeStaticType, ErrorCode, Nonce, Realm};

    const SERVER: &str = "192.0.2.10:3478";
    const PEER: &str = "192.0.2.20:50000";

    fn channel() -> TurnChannel {
        TurnChannel::new(SERVER.parse().unwrap(), PEER.parse().unwrap(), "u", "p")
    }

    fn server() -> SocketAddr {
        SERVER.parse().unwrap()
    }

    /// The server's error `code` to `request`, with a realm and nonce.
    fn error(request: &[u8], code: u16) -> Vec<u8> {
        let request = Message::from_bytes(request).unwrap();
        let mut answer = Message::builder_error(&request, MessageWriteVec::new());
        answer
            .add_attribute(&ErrorCode::builder(code).build().unwrap())
            .unwrap();
        answer
            .add_attribute(&Realm::new("netcade").unwrap())
            .unwrap();
        answer.add_attribute(&Nonce::new("n0nce").unwrap()).unwrap();
        answer.finish()
    }

    /// The server's success to `request`, signed with the long-term key.
    fn success(request: &[u8]) -> Vec<u8> {
        let request = Message::from_bytes(request).unwrap();
        let mut answer = Message::builder_success(&request, MessageWriteVec::new());
        let key = LongTermCredentials::new("u".into(), "p".into())
            .to_key("netcade".into())
            .make_key(stun_proto::types::message::IntegrityAlgorithm::Sha1);
        answer
            .add_message_integrity_with_key(
                &key,
                stun_proto::types::message::IntegrityAlgorithm::Sha1,
            )
            .unwrap();
        answer.finish()
    }

    #[test]
    fn a_bound_channel_frames_each_datagram_with_four_bytes_and_reads_the_peers_back() {
        let mut channel = channel();
        let first = channel.poll_transmit(0).expect("the first request");
        assert!(channel.wrap(b"nc", 0).is_none(), "not bound yet");
        assert!(channel.handle_response(server(), &error(&first, 401), 1_000));
        let signed = channel.poll_transmit(1_000).expect("the request, signed");
        assert!(Message::from_bytes(&signed)
            .unwrap()
            .has_attribute(Realm::TYPE));
        assert!(channel.handle_response(server(), &success(&signed), 2_000));
        let framed = channel.wrap(b"ncdata", 2_000).expect("bound");
        assert_eq!(framed.len(), 6 + CHANNEL_DATA_HEADER);
        assert_eq!(channel.unwrap(server(), &framed), Some(&b"ncdata"[..]));
        assert_eq!(channel.unwrap(PEER.parse().unwrap(), &framed), None);
        // What is not netcade's goes to the agent as the relay's Data indication.
        let indication = channel.data_indication(b"\x00\x01check");
        let indication = Message::from_bytes(&indication).unwrap();
        assert!(indication.has_method(DATA) && indication.has_class(MessageClass::Indication));
        let peer = indication.attribute::<XorPeerAddress>().unwrap();
        assert_eq!(peer.addr(indication.transaction_id()), channel.peer());
    }

    #[test]
    fn a_binding_is_refreshed_before_it_expires_and_lapses_if_the_refresh_is_never_answered() {
        let mut channel = channel();
        let first = channel.poll_transmit(0).unwrap();
        channel.handle_response(server(), &error(&first, 401), 0);
        let signed = channel.poll_transmit(0).unwrap();
        channel.handle_response(server(), &success(&signed), 0);
        assert_eq!(channel.poll_transmit(REFRESH_AFTER_US - 1), None);
        let refresh = channel.poll_transmit(REFRESH_AFTER_US).expect("a refresh");
        assert!(channel.is_bound(REFRESH_AFTER_US), "bound while refreshing");
        channel.handle_response(server(), &success(&refresh), REFRESH_AFTER_US + 10);
        assert!(channel.is_bound(REFRESH_AFTER_US + LIFETIME_US));
        // The next refresh goes unanswered: the channel lapses at its expiry.
        let due = REFRESH_AFTER_US * 2 + 10;
        assert!(channel.poll_transmit(due).is_some());
        let mut now = due;
        while !channel.is_refused() {
            now += 1_000_000;
            channel.poll_transmit(now);
        }
        assert!(!channel.is_bound(now));
    }

    #[test]
    fn a_server_that_refuses_or_never_answers_leaves_the_path_on_send_indications() {
        let mut refusing = channel();
        let request = refusing.poll_transmit(0).unwrap();
        assert!(refusing.handle_response(server(), &error(&request, 403), 10));
        assert!(refusing.is_refused());
        assert_eq!(refusing.wrap(b"nc", 10), None);
        assert_eq!(refusing.poll_transmit(1_000_000_000), None);

        let mut silent = channel();
        let mut sent = 0;
        for second in 0..60 {
            sent += usize::from(silent.poll_transmit(second * 1_000_000).is_some());
        }
        assert_eq!(sent, ATTEMPTS as usize);
        assert!(silent.is_refused());
    }

    #[test]
    fn answers_to_other_transactions_or_from_elsewhere_are_left_to_the_agent() {
        let mut channel = channel();
        let request = channel.poll_transmit(0).unwrap();
        let elsewhere: SocketAddr = PEER.parse().unwrap();
        assert!(!channel.handle_response(elsewhere, &error(&request, 401), 0));
        let other = Message::builder_request(CHANNEL_BIND, MessageWriteVec::new()).finish();
        assert!(!channel.handle_response(server(), &error(&other, 401), 0));
        assert!(!channel.handle_response(server(), b"nc not stun", 0));
        // A forged success (no integrity) does not bind.
        let request_message = Message::from_bytes(&request).unwrap();
        let forged = Message::builder_success(&request_message, MessageWriteVec::new()).finish();
        assert!(channel.handle_response(server(), &forged, 0));
        assert!(!channel.is_bound(0));
    }
}
