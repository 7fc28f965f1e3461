//! One peer connection, sans-IO: datagrams and `now` go in, datagrams and events
//! come out. No socket, no clock, no randomness: the caller owns all three.
//!
//! Lifecycle: a joiner sends Hello until the host answers Welcome (adopting the
//! host's session token and settings) or Reject; then both exchange inputs,
//! quality reports, checksums and blobs until one leaves or times out. The
//! start-up messages (Ready, Start, StartAck) are carried for the caller,
//! which decides when to send them; every Start that arrives is acknowledged.

mod blobs;
mod chat;
mod claims;
mod config;
mod datagrams;
mod departures;
mod events;
mod handshake;
mod inputs;
mod rejoin;
mod reports;
#[cfg(test)]
mod tests;
mod timers;

use super::auth::{Fingerprint, LinkKeys};
use super::messages::*;
use super::time::Millis;
use crate::input::Buttons;
use crate::rollback::Frame;
use blobs::{IncomingBlob, OutgoingBlob};
use datagrams::ReceiveWindow;
use std::collections::VecDeque;

pub use chat::MAX_UNACKED_CHAT_LINES;
pub use config::{EndpointConfig, Role};
pub use events::{
    ConnectionState, DisconnectCause, EndpointError, EndpointStats, Event, Identity, Rejection,
};
pub use inputs::MAX_UNACKED_FRAMES;

/// One connection to one peer. The caller keys endpoints by address (see
/// [`super::peers::PeerTable`]), feeds it datagrams and polls it for datagrams.
pub struct PeerEndpoint {
    config: EndpointConfig,
    state: ConnectionState,
    session: SessionToken,
    settings: SessionSettings,
    remote_slots: PlayerSlots,
    /// The peer's Hello or Welcome, once the handshake succeeded.
    remote_handshake: Option<Handshake>,
    /// Why the host refused us, and its handshake (its settings win).
    refusal: Option<(RejectReason, Handshake)>,
    /// The link's keys, agreed in the handshake: every datagram but a
    /// handshake is tagged and checked with them.
    keys: Option<LinkKeys>,
    /// The host's room answer to this joiner (its SPAKE2 element and the
    /// keys' confirmation): its Welcome carries it.
    room_answer: Option<RoomProof>,
    next_sequence: Sequence,
    received: ReceiveWindow,
    last_received_at: Millis,
    last_sent_at: Option<Millis>,
    interrupted: bool,
    /// A datagram carrying the session token arrived since the handshake:
    /// the peer really is at its address (it got our Welcome there).
    peer_knows_session: bool,
    last_hello_at: Option<Millis>,
    /// The host's cookie our Hellos carry (UNKNOWN until one came, v9).
    hello_cookie: SessionToken,
    /// A joiner welcomed: its first datagram tagged with the link's key
    /// goes at the next poll, proving to the host that it holds the key
    /// its Hello offered (the host seats it only then, v9).
    key_proof_due: bool,
    handshake_reply: Option<Message>,
    reported_rejection: Option<RejectReason>,
    /// Our goodbye, once we left, while it is delivered.
    goodbye: Option<departures::Goodbye>,
    /// The peer's goodbye arrived and awaits its answer.
    goodbye_ack_due: bool,

    local_slot_count: usize,
    next_local_frame: Frame,
    unacked_start: Frame,
    unacked: VecDeque<Buttons>,
    new_local_input: bool,
    last_input_sent_at: Option<Millis>,
    local_status: ConnectionStatus,
    status_sends_left: u8,

    next_remote_frame: Frame,
    /// Since when new remote inputs wait for our ack.
    ack_due_since: Option<Millis>,
    remote_status: ConnectionStatus,

    local_frame_advantage: i16,
    local_input_delay: u8,
    local_run_ahead: u8,
    next_quality_at: Millis,
    newest_quality: Option<Sequence>,
    /// The timestamp of the peer's latest quality report, and when it arrived.
    reply_due: Option<(u32, Millis)>,
    smoothed_rtt_ms: Option<f64>,

    recent_checksums: VecDeque<ChecksumEntry>,
    checksum_sends_left: u8,
    checksum_due_since: Option<Millis>,
    last_remote_checksum: Option<Frame>,

    outgoing_blobs: VecDeque<OutgoingBlob>,
    next_blob_id: u32,
    incoming_blob: Option<IncomingBlob>,
    /// The last blob refused for its size (reported once).
    refused_blob: Option<BlobId>,
    /// The last blob received whole and its chunk count, so that its late
    /// chunks are acked rather than restarting it.
    finished_blob: Option<(BlobId, u32)>,
    blob_ack_due: Option<BlobId>,

    ready_due: bool,
    roster_due: Option<Vec<RosterEntry>>,
    /// The nonce of a rejoin challenge to answer.
    proof_due: Option<u64>,
    /// This side's process restarted and lost the match: proofs say so,
    /// until the state to resume from arrived.
    restarted: bool,
    start_due: Option<u16>,
    start_ack_due: bool,
    chat: chat::ChatLink,

    events: VecDeque<Event>,
    /// The latest time a poll or a datagram brought (for commands without one).
    latest_now: Millis,
    stats: EndpointStats,
    scratch: Vec<u8>,
    message_scratch: Vec<ChecksumEntry>,
    /// Reused for the reports riding on every input datagram sent.
    piggyback_scratch: Piggyback,
    /// Reused for the inputs of every input datagram decoded.
    input_scratch: Vec<Buttons>,
}

impl PeerEndpoint {
    /// A new connection; `now` starts the silence clocks. Fails if our own
    /// handshake could not be sent (names over 255 bytes, slots beyond the players).
    pub fn new(mut config: EndpointConfig, now: Millis) -> Result<Self, EndpointError> {
        config.check()?;
        config.local.public_key = Some(config.secret.public_key());
        // A joiner's Hello shows its room element; a host's Welcome its
        // answer to each joiner's.
        config.local.room = match (&config.role, &config.room_password) {
            (Role::Joiner { .. }, Some(password)) => Some(RoomProof {
                element: crate::protocol::pake::joiner_element(&config.secret, password),
                confirmation: None,
            }),
            _ => None,
        };
        let session = match config.role {
            Role::Host { session } => session,
            Role::Joiner { session } => session.unwrap_or(SessionToken::UNKNOWN),
        };
        let first_frame = config.first_frame;
        Ok(PeerEndpoint {
            settings: config.local.settings,
            local_slot_count: config.local.local_slots.count(),
            config,
            state: ConnectionState::Handshaking,
            session,
            remote_slots: PlayerSlots::NONE,
            next_sequence: Sequence(0),
            received: ReceiveWindow::default(),
            last_received_at: now,
            last_sent_at: None,
            interrupted: false,
            peer_knows_session: false,
            last_hello_at: None,
            hello_cookie: SessionToken::UNKNOWN,
            key_proof_due: false,
            handshake_reply: None,
            reported_rejection: None,
            goodbye: None,
            goodbye_ack_due: false,
            next_local_frame: first_frame,
            unacked_start: first_frame,
            unacked: VecDeque::new(),
            new_local_input: false,
            last_input_sent_at: None,
            local_status: ConnectionStatus::default(),
            status_sends_left: 0,
            next_remote_frame: first_frame,
            ack_due_since: None,
            remote_handshake: None,
            refusal: None,
            keys: None,
            room_answer: None,
            remote_status: ConnectionStatus::default(),
            local_frame_advantage: 0,
            local_input_delay: 0,
            local_run_ahead: 0,
            next_quality_at: 0,
            newest_quality: None,
            reply_due: None,
            smoothed_rtt_ms: None,
            recent_checksums: VecDeque::new(),
            checksum_sends_left: 0,
            checksum_due_since: None,
            last_remote_checksum: None,
            outgoing_blobs: VecDeque::new(),
            next_blob_id: 1,
            incoming_blob: None,
            refused_blob: None,
            finished_blob: None,
            blob_ack_due: None,
            ready_due: false,
            roster_due: None,
            proof_due: None,
            restarted: false,
            start_due: None,
            start_ack_due: false,
            chat: chat::ChatLink::default(),
            events: VecDeque::new(),
            latest_now: now,
            stats: EndpointStats::default(),
            scratch: Vec::with_capacity(MAX_DATAGRAM_SIZE),
            message_scratch: Vec::new(),
            piggyback_scratch: Piggyback::default(),
            input_scratch: Vec::new(),
        })
    }

    // ------------------------------------------------------------ queries

    /// Where the connection is: handshaking, running or over.
    pub fn state(&self) -> ConnectionState {
        self.state
    }

    /// Whether the handshake is done and the connection not over.
    pub fn is_running(&self) -> bool {
        self.state == ConnectionState::Running
    }

    /// Whether the peer has sent a datagram carrying the session token it
    /// learned from our Welcome: proof that it receives at its address,
    /// which a Hello (sent in anyone's name) is not.
    pub fn peer_knows_session(&self) -> bool {
        self.peer_knows_session
    }

    /// How long the peer has been silent at `now`, in ms.
    pub fn silent_for(&self, now: Millis) -> Millis {
        now.saturating_sub(self.last_received_at)
    }

    /// Disconnected with our goodbye delivered (or its linger over) and the
    /// peer's answered: the owner may drop the endpoint.
    pub fn is_closed(&self) -> bool {
        self.state == ConnectionState::Disconnected && self.goodbyes_done()
    }

    /// The session token (UNKNOWN for a joiner before the Welcome).
    pub fn session(&self) -> SessionToken {
        self.session
    }

    /// The settings in force: the host's once synchronized.
    pub fn settings(&self) -> SessionSettings {
        self.settings
    }

    /// What the peer said in its Hello or Welcome (core, content, options,
    /// whether a start state follows), once the handshake succeeded.
    pub fn remote_handshake(&self) -> Option<&Handshake> {
        // A joiner has it once the host seated it (see `Event::Synchronized`).
        let seated = self.peer_knows_session || matches!(self.config.role, Role::Host { .. });
        self.remote_handshake.as_ref().filter(|_| seated)
    }

    /// Why the host refused our Hello and the handshake it sent with its
    /// Reject (what it plays with), if it refused.
    pub fn refusal(&self) -> Option<(RejectReason, &Handshake)> {
        self.refusal.as_ref().map(|(reason, host)| (*reason, host))
    }

    /// The link's fingerprint once its keys are agreed: the same on both
    /// sides unless a machine sits in between.
    pub fn fingerprint(&self) -> Option<Fingerprint> {
        self.keys.as_ref().map(LinkKeys::fingerprint)
    }

    /// The fingerprint of our own public key (what the peer sees as ours).
    pub fn own_key(&self) -> Fingerprint {
        Fingerprint::of_key(&self.config.secret.public_key())
    }

    /// The fingerprint of the peer's public key, once its handshake came.
    pub fn peer_key(&self) -> Option<Fingerprint> {
        let handshake = self.remote_handshake.as_ref()?;
        handshake.public_key.as_ref().map(Fingerprint::of_key)
    }

    /// The players the peer controls.
    pub fn remote_slots(&self) -> PlayerSlots {
        self.remote_slots
    }

    /// The counters so far, with the current ping and unacknowledged frames.
    pub fn stats(&self) -> EndpointStats {
        let mut stats = self.stats;
        stats.unacked_frames = self.next_local_frame - self.unacked_start;
        stats.ping_ms = self.smoothed_rtt_ms.map(|rtt| rtt.round() as u32);
        stats
    }

    /// All of the peer's inputs before this frame have arrived.
    pub fn next_remote_frame(&self) -> Frame {
        self.next_remote_frame
    }

    /// The peer has acknowledged all our inputs before this frame.
    pub fn acked_local_frame(&self) -> Frame {
        self.unacked_start
    }

    /// The peer's latest view of which players dropped and when.
    pub fn remote_connection_status(&self) -> &ConnectionStatus {
        &self.remote_status
    }

    /// The next event, oldest first.
    pub fn next_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// All pending events, oldest first.
    pub fn drain_events(&mut self) -> impl Iterator<Item = Event> + '_ {
        self.events.drain(..)
    }
}
