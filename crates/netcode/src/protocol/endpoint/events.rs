//! What an endpoint reports: events, who the peer says it is, why it was
//! refused or left, counters, and the caller's mistakes.

use super::Millis;
use crate::checksum::Checksum;
use crate::input::Buttons;
use crate::protocol::messages::*;
use crate::rollback::Frame;
use std::fmt;

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
    /// Why a host with this identity cannot play with `joiner`'s, in the
    /// order the handshake checks (a room checks it before any datagram).
    pub fn mismatch(&self, joiner: &Identity) -> Option<RejectReason> {
        if joiner.protocol_version != self.protocol_version {
            Some(RejectReason::ProtocolVersion)
        } else if joiner.core_name != self.core_name {
            Some(RejectReason::Core)
        } else if joiner.core_version != self.core_version {
            Some(RejectReason::CoreVersion)
        } else if joiner.content_hash != self.content_hash {
            Some(RejectReason::Content)
        } else {
            None
        }
    }

    pub(super) fn of(protocol_version: u8, handshake: &Handshake) -> Identity {
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
    /// The refused side only watches (its handshake named no players).
    pub spectator: bool,
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
    /// `this match is for Stella 6.7 with content 3fa2…; you have Stella 6.5 …`.
    pub fn explanation(&self) -> String {
        // The joiner's own verdict on the host's Welcome: nobody refused.
        if self.reason == RejectReason::RoomCodeMismatch {
            return self.reason.to_string();
        }
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
        let (refused, to_do) = if self.spectator {
            ("a spectator", "let us watch")
        } else {
            ("a joiner", "play")
        };
        match (self.by_us, host_has.is_empty()) {
            (false, true) => format!("the host refused to {to_do}: {}", self.reason),
            (true, true) => format!("refused {refused}: {}", self.reason),
            (false, false) if self.reason == RejectReason::ProtocolVersion => format!(
                "the host speaks {host_has}; you have {joiner_has} ({})",
                self.reason
            ),
            (false, false) => format!(
                "this match is for {host_has}; you have {joiner_has} ({})",
                self.reason
            ),
            (true, false) => format!(
                "refused {refused} ({}): it has {joiner_has}; you host {host_has}",
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
    /// The handshake completed: play may start with these settings (a
    /// joiner: once the host sent it anything tagged, seating it).
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
    /// A blob arrived whole but its bytes do not hash to what its chunks
    /// said: nothing of it is handed on (counted in `blobs_refused`).
    BlobDamaged {
        /// The sender's number for the transfer.
        id: BlobId,
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
    /// The peer (the start-up host) says where the other players' machines are.
    Roster(Vec<RosterEntry>),
    /// A line of chat from the peer (or one it relays): each once, in order.
    Chat(crate::protocol::chat::ChatLine),
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
    /// Datagrams not of this session: a handshake with another session's
    /// token, or a datagram whose tag does not verify (damaged on the way,
    /// forged, sent back to us, of another session).
    pub dropped_wrong_token: u64,
    /// Datagrams that do not decode.
    pub dropped_malformed: u64,
    /// Datagrams of another protocol version (outside the handshake).
    pub dropped_wrong_version: u64,
    /// Datagrams seen before, or too old to tell.
    pub dropped_duplicate: u64,
    /// Well-formed datagrams that make no sense now (e.g. input before the handshake).
    pub dropped_unexpected: u64,
    /// Datagrams claiming what the peer cannot have done (a refusal for our
    /// own protocol version, …).
    pub dropped_implausible: u64,
    /// Incoming blobs over the configured size cap, or whose bytes did not
    /// hash to what their chunks said.
    pub blobs_refused: u64,
    /// Smoothed round-trip time, once measured.
    pub ping_ms: Option<u32>,
    /// The peer's latest reported frame lag: frames it runs past our newest
    /// input, less its input delay (positive: the peer is ahead); 0 until one arrives.
    pub remote_frame_advantage: i16,
    /// The peer's input delay in frames, from its latest quality report.
    pub remote_input_delay: Option<u8>,
    /// The peer's run-ahead in frames, from its latest quality report.
    pub remote_run_ahead: Option<u8>,
    /// Local input frames the peer has not acknowledged yet.
    pub unacked_frames: u32,
    /// Our chat lines sent (each counted once, however often resent).
    pub chat_lines_sent: u64,
    /// The peer's chat lines taken.
    pub chat_lines_received: u64,
    /// The peer's chat lines dropped for coming faster than the rate limit.
    pub chat_lines_dropped: u64,
}

impl EndpointStats {
    /// Datagrams dropped for what they were, not for when they came:
    /// unreadable, not tagged with this link's key (or of another
    /// session), of another protocol version, or claiming what the peer
    /// cannot have done. Duplicates and late ones are the network's doing
    /// and are not counted here.
    pub fn dropped_bad(&self) -> u64 {
        self.dropped_malformed
            + self.dropped_wrong_token
            + self.dropped_wrong_version
            + self.dropped_implausible
    }
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
