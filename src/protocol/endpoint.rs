//! One peer connection, sans-IO: datagrams and `now` go in, datagrams and events
//! come out. No socket, no clock, no randomness: the caller owns all three.
//!
//! Lifecycle: a joiner sends Hello until the host answers Welcome (adopting the
//! host's session token and settings) or Reject; then both exchange inputs,
//! quality reports, checksums and blobs until one leaves or times out. The
//! start-up messages (Ready, Start, StartAck) are carried for the caller,
//! which decides when to send them; every Start that arrives is acknowledged.

use super::codec::{self, InputPrefix};
use super::messages::*;
use crate::checksum::Checksum;
use crate::input::Buttons;
use crate::rollback::Frame;
use std::collections::VecDeque;
use std::fmt;

/// Milliseconds since an origin the caller chooses (monotonic).
pub type Millis = u64;

/// Whether this side chose the session (host) or asks to join one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The host's token is random, chosen by the caller.
    Host {
        /// The token every datagram of this session carries.
        session: SessionToken,
    },
    /// A joiner may know the token (e.g. from an invite) or learn it from the Welcome.
    Joiner {
        /// The token if known in advance; `None` to take the one in the Welcome.
        session: Option<SessionToken>,
    },
}

/// Everything an endpoint is told when it is made.
#[derive(Clone, Debug)]
pub struct EndpointConfig {
    /// Host or joiner of this link, with the session token if known.
    pub role: Role,
    /// Always [`PROTOCOL_VERSION`] except in tests of version mismatches.
    pub protocol_version: u8,
    /// Our core, content, players and (host: decided, joiner: proposed) settings.
    pub local: Handshake,
    /// The first frame each side sends (0, or later for a spectator joining mid-match).
    pub first_frame: Frame,
    /// Silence after which [`Event::NetworkInterrupted`] is raised.
    pub interrupt_after_ms: Millis,
    /// Silence after which the peer is disconnected.
    pub disconnect_after_ms: Millis,
    /// Silence after which sending is throttled (seed 000: after 1 s…)
    pub throttle_after_ms: Millis,
    /// …to one datagram per this interval (…4 datagrams per second).
    pub throttled_interval_ms: Millis,
    /// A keep-alive goes out when nothing else was sent for this long.
    pub keep_alive_interval_ms: Millis,
    /// A quality report (clock and frame advantage, for ping) goes out this often.
    pub quality_report_interval_ms: Millis,
    /// A joiner sends Hello again this often until the host answers.
    pub hello_retry_ms: Millis,
    /// Unacked inputs are sent again this often when no new input comes.
    pub input_resend_ms: Millis,
    /// Acks, quality reports, quality replies and checksum reports wait this
    /// long for an input datagram to ride on before going out alone.
    pub piggyback_wait_ms: Millis,
    /// Incoming blobs announcing more bytes are refused.
    pub max_blob_size: usize,
    /// Blob chunks sent per poll (paces transfers: 8 × 1100 B at 60 polls/s ≈ 530 kB/s).
    pub blob_chunks_per_poll: usize,
    /// An unacked chunk is sent again after max(this, 2 × smoothed RTT + 50 ms).
    pub blob_resend_min_ms: Millis,
}

impl EndpointConfig {
    fn with_role(role: Role, local: Handshake) -> Self {
        EndpointConfig {
            role,
            protocol_version: PROTOCOL_VERSION,
            local,
            first_frame: Frame::ZERO,
            interrupt_after_ms: 750,
            disconnect_after_ms: 5000,
            throttle_after_ms: 1000,
            throttled_interval_ms: 250,
            keep_alive_interval_ms: 200,
            quality_report_interval_ms: 200,
            hello_retry_ms: 200,
            input_resend_ms: 50,
            piggyback_wait_ms: 20,
            max_blob_size: MAX_BLOB_SIZE,
            blob_chunks_per_poll: 8,
            blob_resend_min_ms: 100,
        }
    }

    /// A host with the session token it chose at random.
    pub fn host(session: SessionToken, local: Handshake) -> Self {
        Self::with_role(Role::Host { session }, local)
    }

    /// A joiner that learns the session token from the host's Welcome.
    pub fn joiner(local: Handshake) -> Self {
        Self::with_role(Role::Joiner { session: None }, local)
    }
}

/// What a peer says it is, for messages about mismatches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The protocol version in the peer's datagram header.
    pub protocol_version: u8,
    /// The libretro core named in its handshake.
    pub core_name: String,
    /// That core's version.
    pub core_version: String,
    /// xxh3 of its content (ROM), shown in hex.
    pub content_hash: u64,
}

impl Identity {
    fn of(protocol_version: u8, handshake: &Handshake) -> Identity {
        Identity {
            protocol_version,
            core_name: handshake.core_name.clone(),
            core_version: handshake.core_version.clone(),
            content_hash: handshake.content_hash,
        }
    }
}

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "protocol {}, core {} {}, content {:016x}",
            self.protocol_version, self.core_name, self.core_version, self.content_hash
        )
    }
}

/// A refused handshake: why, who refused, and both sides' identities.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// What did not match.
    pub reason: RejectReason,
    /// True when this side refused the peer, false when the peer refused us.
    pub by_us: bool,
    /// This side's identity.
    pub local: Identity,
    /// The peer's identity, as its handshake gave it.
    pub remote: Identity,
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.by_us {
            write!(
                f,
                "refused a joiner: {}: we have {}; they have {}",
                self.reason, self.local, self.remote
            )
        } else {
            write!(
                f,
                "the host refused us: {}: we have {}; the host has {}",
                self.reason, self.local, self.remote
            )
        }
    }
}

impl Rejection {
    /// The one line both sides print (after `error: `) when a handshake is
    /// refused, naming what differs with the host's values first, e.g.
    /// `the host runs Stella 6.7 with content 3fa2…; you have Stella 6.5 …`.
    pub fn explanation(&self) -> String {
        // The host of this pair is the side that refused.
        let (host, joiner) = if self.by_us {
            (&self.local, &self.remote)
        } else {
            (&self.remote, &self.local)
        };
        let what = |identity: &Identity| match self.reason {
            RejectReason::ProtocolVersion => {
                format!("netcade protocol {}", identity.protocol_version)
            }
            RejectReason::Core | RejectReason::CoreVersion => {
                format!("{} {}", identity.core_name, identity.core_version)
            }
            RejectReason::Content => format!(
                "{} {} with content {}",
                identity.core_name,
                identity.core_version,
                short_hash(identity.content_hash)
            ),
            // Slots, settings, room: nothing of the identity differs.
            _ => String::new(),
        };
        let (host_has, joiner_has) = (what(host), what(joiner));
        match (self.by_us, host_has.is_empty()) {
            (false, true) => format!("the host refused to play: {}", self.reason),
            (true, true) => format!("refused a joiner: {}", self.reason),
            (false, false) => {
                let verb = if self.reason == RejectReason::ProtocolVersion {
                    "speaks"
                } else {
                    "runs"
                };
                format!(
                    "the host {verb} {host_has}; you have {joiner_has} ({})",
                    self.reason
                )
            }
            (true, false) => format!(
                "refused a joiner ({}): it has {joiner_has}; you host {host_has}",
                self.reason
            ),
        }
    }
}

/// The first 4 bytes of a content hash, enough to tell contents apart on screen.
fn short_hash(hash: u64) -> String {
    format!("{:08x}…", hash >> 32)
}

/// Why a connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DisconnectCause {
    /// Nothing heard for `silent_for_ms`.
    Timeout {
        /// How long the peer had been silent, in ms (at least `disconnect_after_ms`).
        silent_for_ms: Millis,
    },
    /// The peer said goodbye.
    PeerLeft(DisconnectReason),
    /// The host refused us.
    Rejected(RejectReason),
    /// The peer left [`MAX_UNACKED_FRAMES`] of our frames unacknowledged
    /// while the connection was alive: we stopped keeping them.
    Unacknowledged {
        /// Our input frames waiting for the peer's ack when we gave up.
        frames: u32,
    },
}

impl fmt::Display for DisconnectCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DisconnectCause::Timeout { silent_for_ms } => {
                write!(f, "nothing heard from the peer for {silent_for_ms} ms")
            }
            DisconnectCause::PeerLeft(reason) => write!(f, "the peer left: {reason}"),
            DisconnectCause::Rejected(reason) => write!(f, "the host refused us: {reason}"),
            DisconnectCause::Unacknowledged { frames } => {
                write!(
                    f,
                    "the peer left {frames} frames of our inputs unacknowledged"
                )
            }
        }
    }
}

/// What the endpoint tells its owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The handshake completed: play may start with these settings.
    Synchronized {
        /// The token both sides now put in every datagram.
        session: SessionToken,
        /// The host's settings, which both sides play with.
        settings: SessionSettings,
        /// The players the peer controls (none for a spectator).
        remote_slots: PlayerSlots,
    },
    /// A handshake was refused (by either side), naming the problem.
    Rejected(Rejection),
    /// A remote player's input for a frame: each exactly once, frames in order.
    RemoteInput {
        /// The player slot (0-based) the input belongs to.
        player: u8,
        /// The frame the input is for.
        frame: Frame,
        /// The buttons held on that frame.
        buttons: Buttons,
    },
    /// The peer's latest frame advantage report.
    RemoteFrameAdvantage(i16),
    /// A new round-trip measurement (`sample_ms`) and the smoothed figure
    /// after it (`rtt_ms`).
    Ping {
        /// The smoothed round-trip time after this sample, in ms.
        rtt_ms: u32,
        /// This measurement's round-trip time, in ms.
        sample_ms: u32,
    },
    /// The peer's checksum of a confirmed frame (each frame once, ascending).
    RemoteChecksum {
        /// The confirmed frame the peer took the checksum at.
        frame: Frame,
        /// The peer's checksum of its state at `frame`.
        checksum: Checksum,
    },
    /// The peer reports that `player` dropped: their input is NONE from `at`.
    RemoteSeesDisconnect {
        /// The player slot (0-based) that dropped.
        player: u8,
        /// The first frame whose input for `player` is NONE.
        at: Frame,
    },
    /// Nothing heard for a while (the match should show "waiting").
    NetworkInterrupted {
        /// How long the peer has been silent, in ms (at least `interrupt_after_ms`).
        silent_for_ms: Millis,
    },
    /// Datagrams arrive again after an interruption.
    NetworkResumed,
    /// The connection is over; nothing more will be sent or accepted.
    Disconnected {
        /// Why it ended.
        cause: DisconnectCause,
    },
    /// A whole blob arrived.
    BlobReceived {
        /// The sender's number for the transfer.
        id: BlobId,
        /// The whole blob, `total_size` bytes.
        bytes: Vec<u8>,
    },
    /// The peer acknowledged every chunk of a blob we sent.
    BlobDelivered {
        /// The id [`PeerEndpoint::send_blob`] returned.
        id: BlobId,
    },
    /// The peer sends a blob over our size cap: its chunks are dropped
    /// unstored (reported once per blob).
    BlobRefused {
        /// The blob.
        id: BlobId,
        /// The size it announced.
        size: u32,
    },
    /// The peer is synchronized with every machine of the match and waits
    /// for our Start (we are the host of the start-up).
    PeerReady,
    /// The host says: begin frame 0 `delay_ms` after now. Each copy that
    /// arrives is reported (and acknowledged for us).
    StartRequested {
        /// Milliseconds from this event until frame 0 should run.
        delay_ms: u16,
    },
    /// The peer received a Start we sent.
    StartAcknowledged,
}

/// Where the connection is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectionState {
    /// Hello sent or awaited; no inputs flow yet.
    Handshaking,
    /// Synchronized: inputs, reports and blobs flow.
    Running,
    /// Over (timed out, refused, or either side left); only goodbyes still go out.
    Disconnected,
}

/// Counters for the on-screen stats and for tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// Datagrams handed to the caller to send, of every kind.
    pub datagrams_sent: u64,
    /// Bytes of those datagrams (netcade header included, IP/UDP headers not).
    pub bytes_sent: u64,
    /// Datagrams handed to us, dropped ones included.
    pub datagrams_received: u64,
    /// Bytes of those datagrams.
    pub bytes_received: u64,
    /// Of the datagrams sent, those carrying inputs.
    pub input_datagrams_sent: u64,
    /// Datagrams carrying another session's token.
    pub dropped_wrong_token: u64,
    /// Datagrams that do not decode.
    pub dropped_malformed: u64,
    /// Datagrams of another protocol version (outside the handshake).
    pub dropped_wrong_version: u64,
    /// Datagrams seen before, or too old to tell.
    pub dropped_duplicate: u64,
    /// Well-formed datagrams that make no sense now (e.g. input before the handshake).
    pub dropped_unexpected: u64,
    /// Incoming blobs over the configured size cap.
    pub blobs_refused: u64,
    /// Smoothed round-trip time, once measured.
    pub ping_ms: Option<u32>,
    /// The peer's latest reported frame lag: frames it runs past our newest
    /// input, less its input delay (positive: the peer is ahead); 0 until one arrives.
    pub remote_frame_advantage: i16,
    /// Local input frames the peer has not acknowledged yet.
    pub unacked_frames: u32,
}

/// Mistakes of the caller (not of the network).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// Local input was added out of order: frames go in one by one, none skipped.
    #[error("input for frame {got} added, but frame {expected} is next")]
    NotNextFrame {
        /// The frame the endpoint expects next.
        expected: Frame,
        /// The frame the caller gave.
        got: Frame,
    },
    /// Local input for a number of players other than the ones this side controls.
    #[error("{got} inputs given for {expected} local players")]
    WrongSlotCount {
        /// Players this side controls.
        expected: usize,
        /// Inputs the caller gave.
        got: usize,
    },
    /// A blob to send is bigger than any peer accepts.
    #[error("a blob of {size} bytes is over the {max}-byte limit")]
    BlobTooLarge {
        /// The blob's size in bytes.
        size: usize,
        /// The cap in bytes ([`MAX_BLOB_SIZE`]).
        max: usize,
    },
    /// The connection is over: nothing more can be sent on it.
    #[error("the connection is closed")]
    Disconnected,
    /// A blob was offered while another is still being sent.
    #[error("blob {} is still being sent: one blob at a time", .id.0)]
    BlobInProgress {
        /// The transfer still under way.
        id: BlobId,
    },
    /// The endpoint cannot be made from this configuration; the text says why.
    #[error("invalid endpoint configuration: {0}")]
    InvalidConfig(String),
}

/// Remembers which of the last 64 sequence numbers arrived, to drop duplicates.
#[derive(Clone, Copy, Debug, Default)]
struct ReceiveWindow {
    newest: Option<Sequence>,
    /// Bit i: `newest - i` arrived.
    seen: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arrival {
    Newest,
    Late,
    Duplicate,
    TooOld,
}

impl ReceiveWindow {
    fn accept(&mut self, sequence: Sequence) -> Arrival {
        let Some(newest) = self.newest else {
            self.newest = Some(sequence);
            self.seen = 1;
            return Arrival::Newest;
        };
        if sequence.is_newer_than(newest) {
            let shift = sequence.distance_from(newest) as u32;
            self.seen = if shift >= 64 { 0 } else { self.seen << shift };
            self.seen |= 1;
            self.newest = Some(sequence);
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

struct OutgoingBlob {
    id: BlobId,
    data: Vec<u8>,
    chunk_count: u32,
    acked: Vec<bool>,
    sent_at: Vec<Option<Millis>>,
    next_missing: u32,
}

struct IncomingBlob {
    id: BlobId,
    total_size: u32,
    chunk_count: u32,
    data: Vec<u8>,
    held: Vec<bool>,
    held_count: u32,
    next_missing: u32,
}

/// Our inputs kept for a peer that has not acknowledged them: a peer that
/// stays connected but never acks would otherwise make the queue grow
/// without end (a minute at 60 fps; a live peer acks within its round trip).
pub const MAX_UNACKED_FRAMES: u32 = 4096;

/// Copies of a goodbye sent (it is not acknowledged).
const DISCONNECT_COPIES: u8 = 3;

/// Times each new checksum report goes out (the first, then at quality ticks).
const CHECKSUM_REPEATS: u8 = 3;

/// Input datagrams sent after our view of who dropped changed, even with no
/// input to carry: peers stalled waiting for a leaver send no new inputs,
/// yet must learn each other's view to agree on the frame the leaver stops at.
const STATUS_REPEATS: u8 = 5;

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
    next_sequence: Sequence,
    received: ReceiveWindow,
    last_received_at: Millis,
    last_sent_at: Option<Millis>,
    interrupted: bool,
    /// A datagram carrying the session token arrived since the handshake:
    /// the peer really is at its address (it got our Welcome there).
    peer_knows_session: bool,
    last_hello_at: Option<Millis>,
    handshake_reply: Option<Message>,
    reported_rejection: Option<RejectReason>,
    disconnect_copies_left: u8,
    pending_goodbye: DisconnectReason,

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
    start_due: Option<u16>,
    start_ack_due: bool,

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
    pub fn new(config: EndpointConfig, now: Millis) -> Result<Self, EndpointError> {
        let local = &config.local;
        for (field, text) in [
            ("core name", &local.core_name),
            ("core version", &local.core_version),
        ] {
            if text.len() > 255 {
                return Err(EndpointError::InvalidConfig(format!(
                    "the {field} is {} bytes long; at most 255 fit in a handshake",
                    text.len()
                )));
            }
        }
        let players = local.settings.player_count;
        if players == 0 || players as usize > MAX_SLOTS || !local.local_slots.fit_in(players) {
            return Err(EndpointError::InvalidConfig(format!(
                "local slots {:#04x} do not fit {players} players (1 to {MAX_SLOTS})",
                local.local_slots.0
            )));
        }
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
            handshake_reply: None,
            reported_rejection: None,
            disconnect_copies_left: 0,
            pending_goodbye: DisconnectReason::Quit,
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
            remote_status: ConnectionStatus::default(),
            local_frame_advantage: 0,
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
            start_due: None,
            start_ack_due: false,
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

    /// Disconnected with every goodbye sent: the owner may drop the endpoint.
    pub fn is_closed(&self) -> bool {
        self.state == ConnectionState::Disconnected && self.disconnect_copies_left == 0
    }

    /// The session token (UNKNOWN for a joiner before the Welcome).
    pub fn session(&self) -> SessionToken {
        self.session
    }

    /// The settings in force: the host's once synchronized.
    pub fn settings(&self) -> SessionSettings {
        self.settings
    }

    /// The players the peer controls (known once synchronized).
    /// What the peer said in its Hello or Welcome (core, content, options,
    /// whether a start state follows), once the handshake succeeded.
    pub fn remote_handshake(&self) -> Option<&Handshake> {
        self.remote_handshake.as_ref()
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

    // ------------------------------------------------------------ commands

    /// Queues our players' inputs for `frame` (one per local slot, ascending
    /// slot order). Frames must come one after another from the first frame.
    /// When the peer already leaves [`MAX_UNACKED_FRAMES`] unacknowledged,
    /// the connection closes instead ([`DisconnectCause::Unacknowledged`]).
    pub fn add_local_input(
        &mut self,
        frame: Frame,
        inputs: &[Buttons],
    ) -> Result<(), EndpointError> {
        if self.state == ConnectionState::Disconnected {
            return Err(EndpointError::Disconnected);
        }
        if inputs.len() != self.local_slot_count {
            return Err(EndpointError::WrongSlotCount {
                expected: self.local_slot_count,
                got: inputs.len(),
            });
        }
        if frame != self.next_local_frame {
            return Err(EndpointError::NotNextFrame {
                expected: self.next_local_frame,
                got: frame,
            });
        }
        let unacked_frames = self.next_local_frame - self.unacked_start;
        if unacked_frames >= MAX_UNACKED_FRAMES {
            self.disconnect(DisconnectReason::ProtocolError);
            self.events.push_back(Event::Disconnected {
                cause: DisconnectCause::Unacknowledged {
                    frames: unacked_frames,
                },
            });
            return Ok(());
        }
        self.unacked.extend(inputs.iter().copied());
        self.next_local_frame = frame.next();
        self.new_local_input = true;
        Ok(())
    }

    /// Records our view of `player`'s connection, sent with every input datagram:
    /// `Some(frame)` once they dropped (their input is NONE from `frame` on).
    /// A change goes out at once and a few more times, input or not.
    pub fn set_local_connection_status(&mut self, player: u8, disconnected_at: Option<Frame>) {
        if let Some(slot) = self.local_status.disconnected_at.get_mut(player as usize) {
            if *slot != disconnected_at {
                *slot = disconnected_at;
                self.status_sends_left = STATUS_REPEATS;
            }
        }
    }

    /// Starts accepting the peer's inputs at `frame` instead of the configured
    /// first frame — for a spectator that learns the frame from the savestate
    /// it was sent. Only possible before any of the peer's inputs arrived.
    pub fn expect_remote_inputs_from(&mut self, frame: Frame) -> bool {
        if self.next_remote_frame != self.config.first_frame {
            return false;
        }
        self.next_remote_frame = frame;
        self.config.first_frame = frame;
        true
    }

    /// Starts our inputs at `frame` instead of the configured first frame —
    /// for the host of a spectator, which feeds it from the frame of the
    /// savestate it sends. Only possible before any input was queued.
    pub fn send_inputs_from(&mut self, frame: Frame) -> bool {
        if self.next_local_frame != self.config.first_frame || !self.unacked.is_empty() {
            return false;
        }
        self.next_local_frame = frame;
        self.unacked_start = frame;
        true
    }

    /// Our frame advantage, sent with the next quality reports.
    pub fn set_local_frame_advantage(&mut self, frames: i16) {
        self.local_frame_advantage = frames;
    }

    /// Sends the checksum of a confirmed frame (repeated a few times against
    /// loss), with the next input datagram if one goes out soon.
    pub fn send_checksum(&mut self, frame: Frame, checksum: Checksum) {
        if self.recent_checksums.len() == MAX_CHECKSUMS_PER_REPORT {
            self.recent_checksums.pop_front();
        }
        self.recent_checksums
            .push_back(ChecksumEntry { frame, checksum });
        self.checksum_sends_left = CHECKSUM_REPEATS;
        self.checksum_due_since.get_or_insert(self.latest_now);
    }

    /// Starts sending `bytes` reliably (chunked, selectively acked, resent);
    /// [`Event::BlobDelivered`] follows when the peer has all of it. One
    /// blob at a time: the peer holds one incoming blob only.
    pub fn send_blob(&mut self, bytes: Vec<u8>) -> Result<BlobId, EndpointError> {
        if self.state == ConnectionState::Disconnected {
            return Err(EndpointError::Disconnected);
        }
        if let Some(sending) = self.outgoing_blobs.front() {
            return Err(EndpointError::BlobInProgress { id: sending.id });
        }
        if bytes.len() > MAX_BLOB_SIZE {
            return Err(EndpointError::BlobTooLarge {
                size: bytes.len(),
                max: MAX_BLOB_SIZE,
            });
        }
        let id = BlobId(self.next_blob_id);
        self.next_blob_id = self.next_blob_id.wrapping_add(1).max(1);
        let chunk_count = blob_chunk_count(bytes.len());
        self.outgoing_blobs.push_back(OutgoingBlob {
            id,
            data: bytes,
            chunk_count,
            acked: vec![false; chunk_count as usize],
            sent_at: vec![None; chunk_count as usize],
            next_missing: 0,
        });
        Ok(id)
    }

    /// How often quality reports (and so ping measurements) go out; the
    /// start-up measures round trips faster than play needs to.
    pub fn set_quality_report_interval(&mut self, interval_ms: Millis) {
        self.config.quality_report_interval_ms = interval_ms;
    }

    /// Tells the peer (the start-up host) once, at the next poll, that we
    /// are ready to start. The caller repeats it until the Start arrives.
    pub fn send_ready(&mut self) {
        self.ready_due = true;
    }

    /// Tells the peer once, at the next poll, to begin frame 0 `delay_ms`
    /// after the Start arrives. The caller resends (with the delay left)
    /// until [`Event::StartAcknowledged`].
    pub fn send_start(&mut self, delay_ms: u16) {
        self.start_due = Some(delay_ms);
    }

    /// Leaves: the peer is told (a few copies, as nothing acknowledges a goodbye).
    pub fn disconnect(&mut self, reason: DisconnectReason) {
        if self.state != ConnectionState::Disconnected {
            self.state = ConnectionState::Disconnected;
            self.disconnect_copies_left = DISCONNECT_COPIES;
            self.pending_goodbye = reason;
        }
    }
}

// ---------------------------------------------------------------- receiving

impl PeerEndpoint {
    /// Takes in one datagram from the peer. Anything malformed, foreign or
    /// repeated is dropped and counted in [`EndpointStats`].
    pub fn handle_datagram(&mut self, now: Millis, datagram: &[u8]) {
        self.latest_now = self.latest_now.max(now);
        self.stats.datagrams_received += 1;
        self.stats.bytes_received += datagram.len() as u64;
        if self.state == ConnectionState::Disconnected {
            self.stats.dropped_unexpected += 1;
            return;
        }
        let (header, message) = match codec::decode_reusing(datagram, &mut self.input_scratch) {
            Ok(decoded) => decoded,
            Err(_) => {
                self.stats.dropped_malformed += 1;
                return;
            }
        };
        if !self.token_is_acceptable(&header, &message) {
            self.stats.dropped_wrong_token += 1;
            return;
        }
        let handshake_kind = matches!(message, Message::Hello(_) | Message::Reject { .. });
        if header.version != self.config.protocol_version && !handshake_kind {
            self.stats.dropped_wrong_version += 1;
            return;
        }
        let arrival = self.received.accept(header.sequence);
        if matches!(arrival, Arrival::Duplicate | Arrival::TooOld) {
            self.stats.dropped_duplicate += 1;
            return;
        }
        let handshake_message = matches!(
            message,
            Message::Hello(_) | Message::Welcome(_) | Message::Reject { .. }
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
            self.peer_knows_session = true;
        }
        match message {
            Message::Hello(hello) => self.on_hello(header, hello),
            Message::Welcome(welcome) => self.on_welcome(header, welcome),
            Message::Reject { reason, host } => self.on_reject(header, reason, host),
            other if self.state != ConnectionState::Running => {
                let _ = other;
                self.stats.dropped_unexpected += 1;
            }
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
            Message::Disconnect { reason } => {
                self.state = ConnectionState::Disconnected;
                self.events.push_back(Event::Disconnected {
                    cause: DisconnectCause::PeerLeft(reason),
                });
            }
            Message::BlobChunk(chunk) => self.on_blob_chunk(chunk),
            Message::BlobAck(ack) => self.on_blob_ack(ack),
            Message::Ready => self.events.push_back(Event::PeerReady),
            Message::Start { delay_ms } => {
                // Every copy is acknowledged: the first ack may be lost.
                self.start_ack_due = true;
                self.events.push_back(Event::StartRequested { delay_ms });
            }
            Message::StartAck => self.events.push_back(Event::StartAcknowledged),
        }
    }

    fn token_is_acceptable(&self, header: &Header, message: &Message) -> bool {
        match (self.config.role, message) {
            // A joiner that does not know the token yet sends UNKNOWN.
            (Role::Host { session }, Message::Hello(_)) => {
                header.session == session || header.session == SessionToken::UNKNOWN
            }
            // Before the Welcome a joiner takes the host's token on trust.
            (Role::Joiner { .. }, Message::Welcome(_) | Message::Reject { .. })
                if self.session == SessionToken::UNKNOWN =>
            {
                true
            }
            _ => self.session != SessionToken::UNKNOWN && header.session == self.session,
        }
    }

    fn local_identity(&self) -> Identity {
        Identity::of(self.config.protocol_version, &self.config.local)
    }

    /// Why the host cannot play with this joiner, if it cannot.
    fn problem_with(&self, version: u8, hello: &Handshake) -> Option<RejectReason> {
        let ours = &self.config.local;
        if version != self.config.protocol_version {
            Some(RejectReason::ProtocolVersion)
        } else if hello.core_name != ours.core_name {
            Some(RejectReason::Core)
        } else if hello.core_version != ours.core_version {
            Some(RejectReason::CoreVersion)
        } else if hello.content_hash != ours.content_hash {
            Some(RejectReason::Content)
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

    fn on_hello(&mut self, header: Header, hello: Handshake) {
        if !matches!(self.config.role, Role::Host { .. }) {
            self.stats.dropped_unexpected += 1;
            return;
        }
        match self.state {
            ConnectionState::Running => {
                // Our Welcome was lost: say it again.
                self.handshake_reply = Some(Message::Welcome(self.config.local.clone()));
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
                        }));
                    }
                    self.handshake_reply = Some(Message::Reject {
                        reason,
                        host: self.config.local.clone(),
                    });
                }
                None => {
                    self.remote_slots = hello.local_slots;
                    self.remote_handshake = Some(hello);
                    self.state = ConnectionState::Running;
                    self.handshake_reply = Some(Message::Welcome(self.config.local.clone()));
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

    fn on_welcome(&mut self, header: Header, welcome: Handshake) {
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
            }));
            self.disconnect(DisconnectReason::ProtocolError);
            return;
        }
        self.session = header.session;
        self.settings = welcome.settings;
        self.remote_slots = welcome.local_slots;
        self.remote_handshake = Some(welcome);
        self.state = ConnectionState::Running;
        self.events.push_back(Event::Synchronized {
            session: self.session,
            settings: self.settings,
            remote_slots: self.remote_slots,
        });
    }

    fn on_reject(&mut self, header: Header, reason: RejectReason, host: Handshake) {
        if !matches!(self.config.role, Role::Joiner { .. })
            || self.state != ConnectionState::Handshaking
        {
            self.stats.dropped_unexpected += 1;
            return;
        }
        self.state = ConnectionState::Disconnected;
        self.events.push_back(Event::Rejected(Rejection {
            reason,
            by_us: false,
            local: self.local_identity(),
            remote: Identity::of(header.version, &host),
        }));
        self.events.push_back(Event::Disconnected {
            cause: DisconnectCause::Rejected(reason),
        });
    }

    fn on_ack(&mut self, next_expected: Frame) {
        // Acks only move forward; a peer cannot ack what we never sent.
        let next_expected = next_expected.min(self.next_local_frame);
        if next_expected > self.unacked_start {
            let frames = (next_expected - self.unacked_start) as usize;
            self.unacked.drain(..frames * self.local_slot_count);
            self.unacked_start = next_expected;
        }
    }

    fn on_piggyback(&mut self, now: Millis, sequence: Sequence, piggyback: &Piggyback) {
        if let Some(report) = piggyback.quality_report {
            self.on_quality_report(now, sequence, report);
        }
        if let Some(reply) = piggyback.quality_reply {
            self.on_quality_reply(now, reply);
        }
        self.on_checksums(&piggyback.checksums);
    }

    fn on_quality_report(&mut self, now: Millis, sequence: Sequence, report: QualityReport) {
        self.reply_due = Some((report.timestamp_ms, now));
        let newest = self
            .newest_quality
            .is_none_or(|seen| sequence.is_newer_than(seen));
        if newest {
            self.newest_quality = Some(sequence);
            self.stats.remote_frame_advantage = report.frame_advantage;
            self.events
                .push_back(Event::RemoteFrameAdvantage(report.frame_advantage));
        }
    }

    fn on_checksums(&mut self, entries: &[ChecksumEntry]) {
        for entry in entries {
            if self
                .last_remote_checksum
                .is_none_or(|last| entry.frame > last)
            {
                self.last_remote_checksum = Some(entry.frame);
                self.events.push_back(Event::RemoteChecksum {
                    frame: entry.frame,
                    checksum: entry.checksum,
                });
            }
        }
    }

    fn on_input(&mut self, now: Millis, input: &InputMessage) {
        self.on_ack(input.next_expected);
        for (player, at) in input.status.disconnected_at.iter().enumerate() {
            let Some(at) = *at else { continue };
            let known = &mut self.remote_status.disconnected_at[player];
            if known.is_none_or(|earlier| at < earlier) {
                *known = Some(at);
                self.events.push_back(Event::RemoteSeesDisconnect {
                    player: player as u8,
                    at,
                });
            }
        }
        if input.frame_count == 0 {
            return;
        }
        if input.slots != self.remote_slots || input.start_frame > self.next_remote_frame {
            // Not the players agreed on, or a gap that acks make impossible.
            self.stats.dropped_unexpected += 1;
            return;
        }
        let end = input.start_frame + input.frame_count;
        if end <= self.next_remote_frame {
            // Everything in it arrived before. Not acked again: answering
            // repeats with repeats would echo datagrams back and forth; our
            // next ack covers these frames too.
            return;
        }
        let slot_count = input.slots.count();
        let skip = (self.next_remote_frame - input.start_frame) as usize;
        for (offset, row) in input.inputs.chunks_exact(slot_count).enumerate().skip(skip) {
            let frame = input.start_frame + offset as u32;
            for (player, &buttons) in input.slots.iter().zip(row) {
                self.events.push_back(Event::RemoteInput {
                    player,
                    frame,
                    buttons,
                });
            }
        }
        self.next_remote_frame = end;
        self.ack_due_since.get_or_insert(now);
    }

    fn on_quality_reply(&mut self, now: Millis, reply: QualityReply) {
        let Some(sample) = (now as u32)
            .wrapping_sub(reply.echoed_timestamp_ms)
            .checked_sub(u32::from(reply.held_ms))
        else {
            return; // held longer than the whole round trip: not our echo
        };
        if sample > 60_000 {
            return; // not an echo of anything we sent recently
        }
        let smoothed = match self.smoothed_rtt_ms {
            None => sample as f64,
            Some(previous) => previous * 0.875 + sample as f64 * 0.125,
        };
        self.smoothed_rtt_ms = Some(smoothed);
        self.events.push_back(Event::Ping {
            rtt_ms: smoothed.round() as u32,
            sample_ms: sample,
        });
    }

    fn on_blob_chunk(&mut self, chunk: BlobChunk) {
        if let Some((id, _)) = self.finished_blob.filter(|(id, _)| *id == chunk.id) {
            self.blob_ack_due = Some(id); // our ack was lost: say again we have it all
            return;
        }
        if chunk.total_size as usize > self.config.max_blob_size {
            self.stats.blobs_refused += 1;
            if self.refused_blob != Some(chunk.id) {
                self.refused_blob = Some(chunk.id);
                self.events.push_back(Event::BlobRefused {
                    id: chunk.id,
                    size: chunk.total_size,
                });
            }
            return;
        }
        // One blob at a time, each newer than the last: a peer cannot make
        // us start (and allocate for) a transfer per datagram.
        let starts_new = match &self.incoming_blob {
            None => self.finished_blob.is_none_or(|(last, _)| chunk.id > last),
            Some(_) => false,
        };
        if starts_new {
            self.incoming_blob = Some(IncomingBlob {
                id: chunk.id,
                total_size: chunk.total_size,
                chunk_count: chunk.chunk_count,
                // Grows as chunks arrive: memory follows the bytes received,
                // not the size announced.
                data: Vec::new(),
                // One flag per chunk: at most MAX_BLOB_SIZE / BLOB_CHUNK_SIZE.
                held: vec![false; chunk.chunk_count as usize],
                held_count: 0,
                next_missing: 0,
            });
        }
        let Some(blob) = self.incoming_blob.as_mut() else {
            self.stats.dropped_unexpected += 1; // an older transfer
            return;
        };
        if blob.id != chunk.id {
            self.stats.dropped_unexpected += 1; // a second transfer at once
            return;
        }
        if blob.total_size != chunk.total_size {
            self.stats.dropped_malformed += 1;
            return;
        }
        if chunk.index > blob.next_missing.saturating_add(BLOB_ACK_WINDOW) {
            // Beyond what an ack can report: the sender never runs this far ahead.
            self.stats.dropped_unexpected += 1;
            return;
        }
        let index = chunk.index as usize;
        if !blob.held[index] {
            let start = index * BLOB_CHUNK_SIZE;
            let end = start + chunk.bytes.len();
            if blob.data.len() < end {
                blob.data.resize(end, 0);
            }
            blob.data[start..end].copy_from_slice(&chunk.bytes);
            blob.held[index] = true;
            blob.held_count += 1;
            while blob.next_missing < blob.chunk_count && blob.held[blob.next_missing as usize] {
                blob.next_missing += 1;
            }
        }
        self.blob_ack_due = Some(blob.id);
        if blob.held_count == blob.chunk_count {
            let blob = self.incoming_blob.take().expect("checked above");
            self.finished_blob = Some((blob.id, blob.chunk_count));
            self.events.push_back(Event::BlobReceived {
                id: blob.id,
                bytes: blob.data,
            });
        }
    }

    fn on_blob_ack(&mut self, ack: BlobAck) {
        let Some(position) = self.outgoing_blobs.iter().position(|b| b.id == ack.id) else {
            return;
        };
        let blob = &mut self.outgoing_blobs[position];
        let window_end = ack
            .next_missing
            .saturating_add(1 + BLOB_ACK_WINDOW)
            .min(blob.chunk_count);
        for index in blob.next_missing..window_end {
            if ack.holds(index) {
                blob.acked[index as usize] = true;
            }
        }
        while blob.next_missing < blob.chunk_count && blob.acked[blob.next_missing as usize] {
            blob.next_missing += 1;
        }
        if blob.next_missing == blob.chunk_count {
            let id = blob.id;
            self.outgoing_blobs.remove(position);
            self.events.push_back(Event::BlobDelivered { id });
        }
    }
}

// ---------------------------------------------------------------- sending

impl PeerEndpoint {
    /// Runs timers and hands every datagram due now to `send`, one call each.
    pub fn poll(&mut self, now: Millis, send: &mut dyn FnMut(&[u8])) {
        self.latest_now = self.latest_now.max(now);
        if self.state == ConnectionState::Disconnected {
            if self.disconnect_copies_left > 0 {
                self.disconnect_copies_left -= 1;
                let reason = self.pending_goodbye;
                self.emit(now, &Message::Disconnect { reason }, send);
            }
            return;
        }
        let silent_for = now.saturating_sub(self.last_received_at);
        if silent_for >= self.config.disconnect_after_ms {
            self.state = ConnectionState::Disconnected;
            self.pending_goodbye = DisconnectReason::Timeout;
            self.disconnect_copies_left = 1;
            self.events.push_back(Event::Disconnected {
                cause: DisconnectCause::Timeout {
                    silent_for_ms: silent_for,
                },
            });
            return;
        }
        if self.state == ConnectionState::Running
            && silent_for >= self.config.interrupt_after_ms
            && !self.interrupted
        {
            self.interrupted = true;
            self.events.push_back(Event::NetworkInterrupted {
                silent_for_ms: silent_for,
            });
        }
        // Seed 000: when the peer has gone quiet, send only a few datagrams a second.
        let throttled = silent_for >= self.config.throttle_after_ms;
        let mut budget = usize::MAX;
        if throttled {
            let recently = self
                .last_sent_at
                .is_some_and(|at| now.saturating_sub(at) < self.config.throttled_interval_ms);
            if recently {
                return;
            }
            budget = 1;
        }
        let sent_before = self.stats.datagrams_sent;
        match self.state {
            ConnectionState::Handshaking => self.poll_handshake(now, send),
            ConnectionState::Running => self.poll_running(now, &mut budget, send),
            ConnectionState::Disconnected => {}
        }
        let idle = self.stats.datagrams_sent == sent_before
            && self
                .last_sent_at
                .is_none_or(|at| now.saturating_sub(at) >= self.config.keep_alive_interval_ms);
        if idle && self.state == ConnectionState::Running {
            self.emit(now, &Message::KeepAlive, send);
        }
    }

    /// [`PeerEndpoint::poll`] collecting the datagrams into vectors.
    pub fn poll_datagrams(&mut self, now: Millis) -> Vec<Vec<u8>> {
        let mut datagrams = Vec::new();
        self.poll(now, &mut |datagram| datagrams.push(datagram.to_vec()));
        datagrams
    }

    fn poll_handshake(&mut self, now: Millis, send: &mut dyn FnMut(&[u8])) {
        if let Some(reply) = self.handshake_reply.take() {
            self.emit(now, &reply, send);
        }
        if matches!(self.config.role, Role::Joiner { .. }) {
            let due = self
                .last_hello_at
                .is_none_or(|at| now.saturating_sub(at) >= self.config.hello_retry_ms);
            if due {
                self.last_hello_at = Some(now);
                let hello = Message::Hello(self.config.local.clone());
                self.emit(now, &hello, send);
            }
        }
    }

    fn poll_running(&mut self, now: Millis, budget: &mut usize, send: &mut dyn FnMut(&[u8])) {
        let wait = self.config.piggyback_wait_ms;
        let waited = |since: Option<Millis>| since.is_some_and(|at| now.saturating_sub(at) >= wait);
        // Most valuable first, as a throttled poll sends only one.
        let resend_due = self
            .last_input_sent_at
            .is_none_or(|at| now.saturating_sub(at) >= self.config.input_resend_ms);
        let input_due = self.new_local_input
            || waited(self.ack_due_since)
            || (resend_due && (!self.unacked.is_empty() || self.status_sends_left > 0));
        if input_due && take(budget) {
            self.send_inputs(now, send);
        }
        // The start-up's messages: each due one goes out once.
        if self.start_ack_due && take(budget) {
            self.start_ack_due = false;
            self.emit(now, &Message::StartAck, send);
        }
        if let Some(delay_ms) = self.start_due {
            if take(budget) {
                self.start_due = None;
                self.emit(now, &Message::Start { delay_ms }, send);
            }
        }
        if self.ready_due && take(budget) {
            self.ready_due = false;
            self.emit(now, &Message::Ready, send);
        }
        if let Some(reply) = self.handshake_reply.take() {
            if take(budget) {
                self.emit(now, &reply, send);
            }
        }
        // Reports no input datagram took within the wait go alone.
        if waited(self.reply_due.map(|(_, arrived)| arrived)) && take(budget) {
            if let Some(reply) = self.take_quality_reply(now) {
                self.emit(now, &Message::QualityReply(reply), send);
            }
        }
        if waited(Some(self.next_quality_at)) && take(budget) {
            let report = self.take_quality_report(now);
            self.emit(now, &Message::QualityReport(report), send);
        }
        if waited(self.checksum_due_since) && take(budget) {
            let mut entries = std::mem::take(&mut self.message_scratch);
            self.take_checksums(&mut entries);
            let report = Message::ChecksumReport { entries };
            self.emit(now, &report, send);
            if let Message::ChecksumReport { entries } = report {
                self.message_scratch = entries;
            }
        }
        if let Some(id) = self.blob_ack_due {
            if take(budget) {
                self.blob_ack_due = None;
                let ack = self.blob_ack(id);
                self.emit(now, &Message::BlobAck(ack), send);
            }
        }
        if *budget == usize::MAX {
            // Blobs are bulk: they wait while the peer is quiet.
            self.send_blob_chunks(now, send);
        }
    }

    /// Our quality report, now; the next is due an interval later (and
    /// brings a repeat of recent checksums while repeats are left).
    fn take_quality_report(&mut self, now: Millis) -> QualityReport {
        self.next_quality_at = now + self.config.quality_report_interval_ms;
        if self.checksum_sends_left > 0 {
            self.checksum_due_since.get_or_insert(now);
        }
        QualityReport {
            timestamp_ms: now as u32,
            frame_advantage: self.local_frame_advantage,
        }
    }

    /// The echo of the peer's latest quality report, if one is owed.
    fn take_quality_reply(&mut self, now: Millis) -> Option<QualityReply> {
        let (echoed_timestamp_ms, arrived) = self.reply_due.take()?;
        Some(QualityReply {
            echoed_timestamp_ms,
            held_ms: now.saturating_sub(arrived).min(u64::from(u16::MAX)) as u16,
        })
    }

    /// Our recent checksums into `entries` (cleared first).
    fn take_checksums(&mut self, entries: &mut Vec<ChecksumEntry>) {
        self.checksum_due_since = None;
        self.checksum_sends_left = self.checksum_sends_left.saturating_sub(1);
        entries.clear();
        entries.extend(self.recent_checksums.iter().copied());
    }

    fn send_inputs(&mut self, now: Millis, send: &mut dyn FnMut(&[u8])) {
        self.new_local_input = false;
        self.ack_due_since = None;
        self.status_sends_left = self.status_sends_left.saturating_sub(1);
        self.last_input_sent_at = Some(now);
        if self.local_slot_count == 0 {
            let ack = Message::InputAck {
                next_expected: self.next_remote_frame,
            };
            self.emit(now, &ack, send);
            return;
        }
        // Whatever report is due rides along rather than costing a datagram.
        let mut piggyback = std::mem::take(&mut self.piggyback_scratch);
        piggyback.quality_report =
            (now >= self.next_quality_at).then(|| self.take_quality_report(now));
        piggyback.quality_reply = self.take_quality_reply(now);
        piggyback.checksums.clear();
        if self.checksum_due_since.is_some() {
            self.take_checksums(&mut piggyback.checksums);
        }
        let header = self.next_header();
        let prefix = InputPrefix {
            start_frame: self.unacked_start,
            next_expected: self.next_remote_frame,
            slots: self.config.local.local_slots,
            status: &self.local_status,
            piggyback: &piggyback,
        };
        let inputs = self.unacked.make_contiguous();
        codec::encode_input_fitting(&header, prefix, inputs, &mut self.scratch);
        self.piggyback_scratch = piggyback;
        self.stats.input_datagrams_sent += 1;
        self.count_sent(now);
        send(&self.scratch);
    }

    fn blob_ack(&self, id: BlobId) -> BlobAck {
        let mut ack = BlobAck {
            id,
            next_missing: 0,
            held_after: [0; (BLOB_ACK_WINDOW / 64) as usize],
        };
        if let Some((_, chunk_count)) = self.finished_blob.filter(|(done, _)| *done == id) {
            ack.next_missing = chunk_count;
            return ack;
        }
        if let Some(blob) = self.incoming_blob.as_ref().filter(|b| b.id == id) {
            ack.next_missing = blob.next_missing;
            for offset in 0..BLOB_ACK_WINDOW {
                let index = (blob.next_missing + 1 + offset) as usize;
                if blob.held.get(index).copied().unwrap_or(false) {
                    ack.held_after[(offset / 64) as usize] |= 1 << (offset % 64);
                }
            }
        }
        ack
    }

    fn send_blob_chunks(&mut self, now: Millis, send: &mut dyn FnMut(&[u8])) {
        let resend_after = self.config.blob_resend_min_ms.max(
            self.smoothed_rtt_ms
                .map_or(0, |rtt| (2.0 * rtt) as Millis + 50),
        );
        let mut left = self.config.blob_chunks_per_poll;
        let mut blob_index = 0;
        while left > 0 && blob_index < self.outgoing_blobs.len() {
            let blob = &self.outgoing_blobs[blob_index];
            let window_end = blob
                .next_missing
                .saturating_add(1 + BLOB_ACK_WINDOW)
                .min(blob.chunk_count);
            let mut index = blob.next_missing;
            while left > 0 && index < window_end {
                let blob = &self.outgoing_blobs[blob_index];
                let i = index as usize;
                let due = !blob.acked[i]
                    && blob.sent_at[i].is_none_or(|at| now.saturating_sub(at) >= resend_after);
                if due {
                    let start = i * BLOB_CHUNK_SIZE;
                    let len = codec::chunk_len(blob.data.len(), index);
                    let chunk = Message::BlobChunk(BlobChunk {
                        id: blob.id,
                        total_size: blob.data.len() as u32,
                        chunk_count: blob.chunk_count,
                        index,
                        bytes: blob.data[start..start + len].to_vec(),
                    });
                    self.outgoing_blobs[blob_index].sent_at[i] = Some(now);
                    self.emit(now, &chunk, send);
                    left -= 1;
                }
                index += 1;
            }
            blob_index += 1;
        }
    }

    fn next_header(&mut self) -> Header {
        let header = Header {
            version: self.config.protocol_version,
            session: self.session,
            sequence: self.next_sequence,
        };
        self.next_sequence = self.next_sequence.next();
        header
    }

    fn count_sent(&mut self, now: Millis) {
        self.stats.datagrams_sent += 1;
        self.stats.bytes_sent += self.scratch.len() as u64;
        self.last_sent_at = Some(now);
    }

    fn emit(&mut self, now: Millis, message: &Message, send: &mut dyn FnMut(&[u8])) {
        let header = self.next_header();
        match codec::encode(&header, message, &mut self.scratch) {
            Ok(()) => {
                self.count_sent(now);
                send(&self.scratch);
            }
            // Every message the endpoint builds fits by construction (chunks,
            // bounded reports, 255-byte names checked at config time).
            Err(error) => debug_assert!(false, "endpoint built an unencodable message: {error}"),
        }
    }
}

/// Spends one datagram of a poll's budget, if any is left.
fn take(budget: &mut usize) -> bool {
    if *budget == 0 {
        return false;
    }
    if *budget != usize::MAX {
        *budget -= 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_receive_window_drops_repeats_across_sequence_wrap_around() {
        let mut window = ReceiveWindow::default();
        assert_eq!(window.accept(Sequence(65_534)), Arrival::Newest);
        assert_eq!(window.accept(Sequence(1)), Arrival::Newest);
        assert_eq!(window.accept(Sequence(65_535)), Arrival::Late);
        assert_eq!(window.accept(Sequence(65_535)), Arrival::Duplicate);
        assert_eq!(window.accept(Sequence(1)), Arrival::Duplicate);
        assert_eq!(window.accept(Sequence(0)), Arrival::Late);
        assert_eq!(window.accept(Sequence(65_534)), Arrival::Duplicate);
        assert_eq!(window.accept(Sequence(100)), Arrival::Newest);
        assert_eq!(window.accept(Sequence(30)), Arrival::TooOld);
        assert_eq!(window.accept(Sequence(40)), Arrival::Late);
    }

    fn handshake(slot: u8) -> Handshake {
        Handshake {
            core_name: "duel".into(),
            core_version: "1".into(),
            content_hash: 7,
            local_slots: PlayerSlots::single(slot),
            settings: SessionSettings::default(),
            ..Handshake::default()
        }
    }

    /// A host and a joiner that exchanged datagrams every 20 ms for `rounds`
    /// rounds over a lossless instant wire, and the time now.
    fn pair_after(rounds: u32) -> (PeerEndpoint, PeerEndpoint, Millis) {
        let mut host =
            PeerEndpoint::new(EndpointConfig::host(SessionToken(9), handshake(0)), 0).unwrap();
        let mut joiner = PeerEndpoint::new(EndpointConfig::joiner(handshake(1)), 0).unwrap();
        let mut now = 0;
        for _ in 0..rounds {
            now += 20;
            for datagram in joiner.poll_datagrams(now) {
                host.handle_datagram(now, &datagram);
            }
            for datagram in host.poll_datagrams(now) {
                joiner.handle_datagram(now, &datagram);
            }
        }
        assert!(host.is_running() && joiner.is_running());
        (host, joiner, now)
    }

    /// A host and a joiner, handshake done, events drained.
    fn connected_pair() -> (PeerEndpoint, PeerEndpoint, Millis) {
        let (mut host, mut joiner, now) = pair_after(3);
        host.drain_events().for_each(drop);
        joiner.drain_events().for_each(drop);
        (host, joiner, now)
    }

    #[test]
    fn every_copy_of_a_start_is_reported_and_acknowledged() {
        let (mut host, mut joiner, now) = connected_pair();
        joiner.send_ready();
        for datagram in joiner.poll_datagrams(now) {
            host.handle_datagram(now, &datagram);
        }
        assert!(host.drain_events().any(|e| e == Event::PeerReady));
        for delay_ms in [120, 40] {
            host.send_start(delay_ms);
            for datagram in host.poll_datagrams(now + 1) {
                joiner.handle_datagram(now + 1, &datagram);
            }
            assert!(joiner
                .drain_events()
                .any(|e| e == Event::StartRequested { delay_ms }));
            for datagram in joiner.poll_datagrams(now + 2) {
                host.handle_datagram(now + 2, &datagram);
            }
            assert!(host.drain_events().any(|e| e == Event::StartAcknowledged));
        }
    }

    #[test]
    fn a_changed_connection_status_reaches_the_peer_with_no_input_to_carry_it() {
        // Handshake, then both sides idle with nothing unacknowledged.
        let (mut host, mut joiner, mut now) = pair_after(20);
        joiner.drain_events().for_each(drop);
        host.set_local_connection_status(3, Some(Frame::new(42)));
        let mut seen = false;
        for _ in 0..5 {
            now += 60;
            for datagram in host.poll_datagrams(now) {
                joiner.handle_datagram(now, &datagram);
            }
            seen |= joiner.drain_events().any(|event| {
                event
                    == Event::RemoteSeesDisconnect {
                        player: 3,
                        at: Frame::new(42),
                    }
            });
        }
        assert!(seen, "the status went out although no input was queued");
    }
}
