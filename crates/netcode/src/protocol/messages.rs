//! What peers say to each other: the messages of the netcade protocol, as
//! plain Rust values. [`super::codec`] turns them into datagrams and back.

pub use super::chat::ChatMessage;
use crate::checksum::Checksum;
use crate::input::Buttons;
use crate::rollback::Frame;
use std::fmt;

/// Version of the wire format. Peers of different versions do not play together,
/// but the handshake layouts (Hello, Welcome, Reject) never change so that they
/// can still tell each other why.
///
/// - 1: handshake, inputs, quality reports, checksums, keep-alives,
///   disconnects, blobs.
/// - 2: the start-up messages Ready, Start and StartAck (kinds 13–15). A
///   version-1 peer would never send or answer them, so the match could not
///   start: the version differs and the handshake says why.
/// - 3: input datagrams carry quality reports, quality replies and checksum
///   reports (a flags byte after the connection status), so a pair playing
///   at 60 fps sends about one datagram per frame each way; a quality reply
///   says how long it was held before going out, so that waiting for an
///   input datagram does not count as round-trip time.
/// - 4: handshakes end with a flags byte (whether the start-up host sends
///   its start state) and the host's core options; the start state is the
///   first blob on the link to the start-up host, and a member says Ready
///   only once it is loaded. Rejects may say `CoreVersion`.
/// - 5: every datagram ends with a tag ([`super::auth`]); handshakes carry
///   the sender's x25519 public key, and only handshakes carry the session
///   token (the tag's key is the session's). Blob chunks carry the blob's
///   hash; a Disconnect may say the match stalled. A Disconnect is
///   acknowledged (DisconnectAck, kind 16) and repeated until then, for a
///   bounded linger: an ending sent once dies with one lost datagram, and a
///   version-4 peer would never answer. Handshakes end with the match's
///   length in frames (the host's wins). Rejects may say `NoSpectators`.
/// - 6: the start-up host tells each member where every other player's
///   machine is (Roster, kind 18), so that matches of 3–4 players link as
///   a full mesh; a version-5 member would never link to the others. A
///   peer heard from a new address proves it is the same peer before its
///   link moves there (RejoinChallenge, kind 19; RejoinProof, kind 20).
///   Quality reports end with the sender's input delay (one byte).
/// - 7: a peer whose process restarted answers a challenge with
///   RejoinRestarted (kind 21) instead: its link moves as for a proof, and
///   the host sends it the state of a frame final everywhere to resume
///   from; a version-6 host would leave it waiting. Chat (kind 17):
///   numbered lines resent until acknowledged; a version-6 peer would drop
///   every one as an unknown kind.
/// - 8: the quality report's last byte carries the sender's run-ahead too
///   (input delay in its low four bits, run-ahead in its high four), so
///   every machine shows every player's `delay 2, run-ahead 1`.
/// - 9: a host answers a Hello whose header does not carry its cookie
///   with HelloCookie (kind 22, smaller than any Hello) and keeps nothing;
///   the joiner says Hello again carrying it in the header's session
///   token, and after the Welcome sends a KeepAlive tagged with the link's
///   key at once: only then does it take its seat or spectator's place
///   (see `netplay::session::unproven`). A version-8 joiner would never
///   echo the cookie.
pub const PROTOCOL_VERSION: u8 = 10;

/// No datagram is larger: laminar silently drops bigger ones, and 1200 bytes
/// fits the smallest MTU seen in practice once IP/UDP headers are added.
pub const MAX_DATAGRAM_SIZE: usize = 1200;

/// The wire numbers player slots 0..MAX_SLOTS (one bit each in [`PlayerSlots`]);
/// sessions use at most [`crate::input::MAX_PLAYERS`] of them.
pub const MAX_SLOTS: usize = 8;

/// Bytes of blob data per chunk (every chunk but the last is exactly this long).
pub const BLOB_CHUNK_SIZE: usize = 1100;

/// No blob announces more than this (16 MiB): a savestate is far smaller.
pub const MAX_BLOB_SIZE: usize = 16 << 20;

/// A blob ack reports the chunks after the first missing one in a bitmap this long;
/// the sender never runs further ahead than this.
pub const BLOB_ACK_WINDOW: u32 = 256;

/// The longest wait a Start may ask for: half the round trip to the
/// farthest member plus a frame or two of lead, far below this on any link
/// a match can be played over.
pub const MAX_START_DELAY_MS: u16 = 2_000;

/// A checksum report repeats at most this many recent checksums.
pub const MAX_CHECKSUMS_PER_REPORT: usize = 4;

/// The random number the host picks for a session; every datagram carries it, so
/// stray or stale datagrams from another session are recognised and dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SessionToken(pub u32);

impl SessionToken {
    /// What a joiner that does not know the token yet puts in its Hello.
    pub const UNKNOWN: SessionToken = SessionToken(0);
}

impl fmt::Display for SessionToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:08x}", self.0)
    }
}

/// A datagram's sequence number: u16, compared with wrap-around so that 3 comes
/// after 65530.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Sequence(pub u16);

impl Sequence {
    /// Whether `self` was sent after `other`, allowing for wrap-around: of two
    /// numbers less than half the range apart, the larger is newer.
    pub const fn is_newer_than(self, other: Sequence) -> bool {
        let (a, b) = (self.0, other.0);
        (a > b && a - b <= 32768) || (a < b && b - a > 32768)
    }

    /// The number that follows this one (65535 is followed by 0).
    pub const fn next(self) -> Sequence {
        Sequence(self.0.wrapping_add(1))
    }

    /// How many numbers `self` is ahead of `older` (modulo 2^16).
    pub const fn distance_from(self, older: Sequence) -> u16 {
        self.0.wrapping_sub(older.0)
    }
}

/// What precedes every message on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The sender's [`PROTOCOL_VERSION`]; other versions are dropped except in handshake messages.
    pub version: u8,
    /// The session this datagram belongs to ([`SessionToken::UNKNOWN`] in a
    /// first Hello). Only handshakes carry it; other datagrams decode with
    /// UNKNOWN here, their tag being the session's.
    pub session: SessionToken,
    /// Counts the sender's datagrams on this link, so the receiver can drop duplicates and stale reports.
    pub sequence: Sequence,
}

/// A set of player slots (bit n = player n), e.g. the players one machine controls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PlayerSlots(pub u8);

impl PlayerSlots {
    /// No player at all (a spectator's slots).
    pub const NONE: PlayerSlots = PlayerSlots(0);

    /// The set holding only `player` (0..[`MAX_SLOTS`]).
    pub const fn single(player: u8) -> PlayerSlots {
        PlayerSlots(1 << player)
    }

    /// Whether `player` is in the set; slots at or beyond [`MAX_SLOTS`] never are.
    pub const fn contains(self, player: u8) -> bool {
        (player as usize) < MAX_SLOTS && self.0 & (1 << player) != 0
    }

    /// How many players the set holds.
    pub const fn count(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set holds no player.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether every slot is below `player_count` (slots are numbered from 0).
    pub const fn fit_in(self, player_count: u8) -> bool {
        (self.0 as u16) >> player_count == 0
    }

    /// Whether the two sets share a player (two machines claiming the same slot).
    pub const fn overlaps(self, other: PlayerSlots) -> bool {
        self.0 & other.0 != 0
    }

    /// The players in ascending order.
    pub fn iter(self) -> impl Iterator<Item = u8> {
        (0..MAX_SLOTS as u8).filter(move |&p| self.contains(p))
    }
}

/// What the host decides for everyone; a joiner proposes its own and is told the host's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionSettings {
    /// Players in the match (1..=8).
    pub player_count: u8,
    /// Frames per second × 1000 (libretro rates are fractional: 59.7275 Hz → 59727).
    pub frame_rate_millihertz: u32,
    /// Frames a peer may run ahead of confirmed input.
    pub max_prediction: u8,
    /// Confirmed frames between checksum exchanges (≥ 1).
    pub checksum_interval: u16,
    /// Bounds of the dynamic local input delay, in frames (min ≤ max).
    pub input_delay_min: u8,
    /// Upper bound of the dynamic local input delay, in frames.
    pub input_delay_max: u8,
    /// Seconds a silent player is waited for once the match runs
    /// (`--rejoin-s`; 0: none). The host's is the match's (version 7 on,
    /// after the public key).
    pub rejoin_window_s: u32,
}

impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings {
            player_count: 2,
            frame_rate_millihertz: 60_000,
            max_prediction: 8,
            checksum_interval: 60,
            input_delay_min: 0,
            input_delay_max: 4,
            rejoin_window_s: 0,
        }
    }
}

/// The most input delay lockstep may need: 12 frames (200 ms each way at 60
/// frames per second).
pub const LOCKSTEP_INPUT_DELAY_MAX: u8 = 12;

impl SessionSettings {
    /// Whether the match runs in lockstep: no prediction (`max_prediction`
    /// 0), so no frame is ever rolled back.
    pub fn is_lockstep(&self) -> bool {
        self.max_prediction == 0
    }

    /// These settings with rollback or (`lockstep`) in lockstep, whose input
    /// delay may grow to cover longer round trips. The host decides; a
    /// joiner adopts the host's.
    pub fn in_mode(self, lockstep: bool) -> Self {
        let default = SessionSettings::default();
        SessionSettings {
            max_prediction: if lockstep { 0 } else { default.max_prediction },
            input_delay_max: if lockstep {
                LOCKSTEP_INPUT_DELAY_MAX
            } else {
                default.input_delay_max
            },
            ..self
        }
    }
}

/// A handshake carries at most this many core options (the datagram limit
/// bounds their bytes).
pub const MAX_CORE_OPTIONS: usize = 64;

/// One core option as `KEY=VALUE` (libretro variable and its value).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CoreOption {
    /// The variable, e.g. `genesis_plus_gx_addr_error`.
    pub key: String,
    /// Its value, e.g. `disabled`.
    pub value: String,
}

/// An x25519 public key as it travels in a handshake (see [`super::auth`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PublicKey(pub [u8; 32]);

/// A Hello (joiner → host) or Welcome (host → joiner): who the sender is and what it plays.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Handshake {
    /// The sender's libretro core (`retro_system_info.library_name`); peers
    /// with another name are refused.
    pub core_name: String,
    /// The sender's core version (`retro_system_info.library_version`);
    /// peers with another version are refused.
    pub core_version: String,
    /// xxh3 of the loaded content (ROM).
    pub content_hash: u64,
    /// The players the sender controls.
    pub local_slots: PlayerSlots,
    /// The sender's session settings: a joiner's proposal, or the host's
    /// decision in a Welcome or Reject (the host's win).
    pub settings: SessionSettings,
    /// The core options the sender set (at most [`MAX_CORE_OPTIONS`]); the
    /// host's win: a joiner loads its core with them.
    pub core_options: Vec<CoreOption>,
    /// The sender is the start-up host and sends its start state (a blob,
    /// lz4-compressed) as the first blob on this link; the receiver loads
    /// it before saying Ready.
    pub start_state: bool,
    /// The match's length in frames (frames 0..N-1), or `None` when it runs
    /// until someone leaves: the host's wins, and a spectator stops there.
    pub match_frames: Option<u32>,
    /// The sender's x25519 key, from which both sides derive the link's
    /// keys (version 5; older handshakes have none).
    pub public_key: Option<PublicKey>,
    /// Between machines that met by room code, the sender's SPAKE2 element
    /// (and the host's confirmation of the keys agreed): version 10.
    pub room: Option<RoomProof>,
}

/// One side's SPAKE2 element: a compressed Edwards point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RoomElement(pub [u8; 32]);

/// Bytes of the host's key confirmation in a room's Welcome.
pub const CONFIRMATION_BYTES: usize = 8;

/// What a handshake between machines that met by room code adds (v10,
/// see [`super::pake`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoomProof {
    /// The sender's SPAKE2 element.
    pub element: RoomElement,
    /// In the host's Welcome, the start of the agreed keys' confirmation
    /// (`LinkKeys::confirmation`); none in a Hello or Reject.
    pub confirmation: Option<[u8; CONFIRMATION_BYTES]>,
}

/// Why a host refused a joiner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RejectReason {
    /// The peers speak different protocol versions.
    ProtocolVersion,
    /// Different libretro cores (by name).
    Core,
    /// Different content (ROM) according to its hash.
    Content,
    /// Settings that cannot work together (player count, frame rate, delays).
    Settings,
    /// The joiner claims a player slot the host or another peer controls.
    SlotTaken,
    /// Every player's place is taken: the match is full.
    MatchFull,
    /// The host already feeds as many spectators as it allows.
    SpectatorsFull,
    /// The same core in different versions.
    CoreVersion,
    /// The host takes no spectators at all (`--max-spectators 0`).
    NoSpectators,
    /// The host meets its players by room code, which the joiner's Hello
    /// does not show (v10).
    RoomCodeMissing,
    /// The host's Welcome does not prove the room code (its confirmation
    /// is not that of the keys the code agreed): the joiner's own verdict,
    /// never sent.
    RoomCodeMismatch,
}

impl RejectReason {
    pub(crate) const fn code(self) -> u8 {
        match self {
            RejectReason::ProtocolVersion => 1,
            RejectReason::Core => 2,
            RejectReason::Content => 3,
            RejectReason::Settings => 4,
            RejectReason::SlotTaken => 5,
            RejectReason::MatchFull => 6,
            RejectReason::SpectatorsFull => 7,
            RejectReason::CoreVersion => 8,
            RejectReason::NoSpectators => 9,
            RejectReason::RoomCodeMissing => 10,
            RejectReason::RoomCodeMismatch => 11,
        }
    }

    pub(crate) const fn from_code(code: u8) -> Option<RejectReason> {
        Some(match code {
            1 => RejectReason::ProtocolVersion,
            2 => RejectReason::Core,
            3 => RejectReason::Content,
            4 => RejectReason::Settings,
            5 => RejectReason::SlotTaken,
            6 => RejectReason::MatchFull,
            7 => RejectReason::SpectatorsFull,
            8 => RejectReason::CoreVersion,
            9 => RejectReason::NoSpectators,
            10 => RejectReason::RoomCodeMissing,
            11 => RejectReason::RoomCodeMismatch,
            _ => return None,
        })
    }
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RejectReason::ProtocolVersion => "different netcade protocol versions",
            RejectReason::Core => "different cores",
            RejectReason::CoreVersion => "different core versions",
            RejectReason::Content => "different content (ROM)",
            RejectReason::Settings => "incompatible session settings",
            RejectReason::SlotTaken => "the requested player slot is taken",
            RejectReason::MatchFull => "the match is full",
            RejectReason::SpectatorsFull => "the host has no room for more spectators",
            RejectReason::NoSpectators => "no spectators allowed",
            RejectReason::RoomCodeMissing => {
                "it meets its players by room code (join with --room CODE)"
            }
            RejectReason::RoomCodeMismatch => {
                "the room code did not match: the host's key exchange does not prove it (a wrong code, or a machine on the path rewrote the exchange)"
            }
        })
    }
}

/// Why a peer leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DisconnectReason {
    /// The player quit.
    Quit,
    /// Nothing was heard from the peer for too long.
    Timeout,
    /// The peers' games diverged.
    Desync,
    /// The peer sent something this side cannot accept.
    ProtocolError,
    /// No frame became final for too long although the peers heard each
    /// other (version 5).
    Stalled,
    /// A reason code this version does not know.
    Other(u8),
}

impl DisconnectReason {
    pub(crate) const fn code(self) -> u8 {
        match self {
            DisconnectReason::Quit => 1,
            DisconnectReason::Timeout => 2,
            DisconnectReason::Desync => 3,
            DisconnectReason::ProtocolError => 4,
            DisconnectReason::Stalled => 5,
            DisconnectReason::Other(code) => code,
        }
    }

    pub(crate) const fn from_code(code: u8) -> DisconnectReason {
        match code {
            1 => DisconnectReason::Quit,
            2 => DisconnectReason::Timeout,
            3 => DisconnectReason::Desync,
            4 => DisconnectReason::ProtocolError,
            5 => DisconnectReason::Stalled,
            other => DisconnectReason::Other(other),
        }
    }
}

impl fmt::Display for DisconnectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DisconnectReason::Quit => f.write_str("the player quit"),
            DisconnectReason::Timeout => f.write_str("the connection timed out"),
            DisconnectReason::Desync => f.write_str("the games desynchronized"),
            DisconnectReason::ProtocolError => f.write_str("protocol error"),
            DisconnectReason::Stalled => f.write_str("the match stalled"),
            DisconnectReason::Other(code) => write!(f, "reason code {code}"),
        }
    }
}

/// A sender's view of who is still playing: for each player, the frame from
/// which that player's input counts as NONE because they dropped, or `None`
/// while connected. Peers merge these views (earliest frame wins) so all agree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnectionStatus {
    /// Per player slot: the first frame whose input is NONE because the player dropped, `None` while connected.
    pub disconnected_at: [Option<Frame>; MAX_SLOTS],
}

/// "Here is my clock and how far ahead I run": sent every ~200 ms, echoed
/// back for the round-trip time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QualityReport {
    /// The sender's milliseconds, to be echoed.
    pub timestamp_ms: u32,
    /// The sender's frame lag towards the receiver (see time sync).
    pub frame_advantage: i16,
    /// The sender's local input delay in frames (v6), so every machine
    /// shows every player's.
    pub input_delay: u8,
    /// The frames the sender's pictures run ahead (v8), shown with its
    /// delay. Both share one byte on the wire: at most 15 each.
    pub run_ahead: u8,
}

/// The echo of a [`QualityReport`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QualityReply {
    /// The [`QualityReport::timestamp_ms`] being answered, unchanged.
    pub echoed_timestamp_ms: u32,
    /// How long the reply waited here before going out (to ride an input
    /// datagram): the sender of the report subtracts it from the round trip.
    pub held_ms: u16,
}

/// Reports that ride on an input datagram rather than costing one of their own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Piggyback {
    /// A report of the sender's clock and frame advantage, if one is due.
    pub quality_report: Option<QualityReport>,
    /// The answer to the receiver's latest report, if one is waiting.
    pub quality_reply: Option<QualityReply>,
    /// As in [`Message::ChecksumReport`] (at most [`MAX_CHECKSUMS_PER_REPORT`]).
    pub checksums: Vec<ChecksumEntry>,
}

impl Piggyback {
    /// Whether nothing rides along.
    pub fn is_empty(&self) -> bool {
        self.quality_report.is_none() && self.quality_reply.is_none() && self.checksums.is_empty()
    }
}

/// Inputs of the sender's players for consecutive frames, plus what the sender
/// has received of ours.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputMessage {
    /// The first frame carried.
    pub start_frame: Frame,
    /// The ack: the sender has all of the receiver's inputs before this frame.
    pub next_expected: Frame,
    /// Whose inputs are carried (one entry per slot per frame).
    pub slots: PlayerSlots,
    /// Frames carried, from `start_frame` on.
    pub frame_count: u32,
    /// `frame_count × slots.count()` inputs, frame by frame, slots ascending.
    pub inputs: Vec<Buttons>,
    /// Which players the sender knows to have dropped, and from which frame.
    pub status: ConnectionStatus,
    /// Reports sent along with the inputs.
    pub piggyback: Piggyback,
}

impl InputMessage {
    /// The input of `player` at `frame`, if this message carries it.
    pub fn input(&self, player: u8, frame: Frame) -> Option<Buttons> {
        if !self.slots.contains(player) || frame < self.start_frame {
            return None;
        }
        let offset = (frame - self.start_frame) as usize;
        if offset >= self.frame_count as usize {
            return None;
        }
        let slot_index = self.slots.iter().position(|p| p == player)?;
        self.inputs
            .get(offset * self.slots.count() + slot_index)
            .copied()
    }
}

/// The checksum of a confirmed frame, for desync detection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChecksumEntry {
    /// The confirmed frame the checksum was taken at.
    pub frame: Frame,
    /// The checksum of the emulator's state at `frame`.
    pub checksum: Checksum,
}

/// Identifies one blob transfer between two peers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlobId(pub u32);

/// One piece of a blob (a savestate sent to a spectator or for desync repair).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobChunk {
    /// Which transfer this chunk belongs to.
    pub id: BlobId,
    /// Size of the whole blob (≤ [`MAX_BLOB_SIZE`]).
    pub total_size: u32,
    /// xxh3 of the whole blob (version 5): checked once the blob is whole,
    /// before anything (a core's loader) sees it.
    pub hash: u64,
    /// `total_size` split into [`BLOB_CHUNK_SIZE`] pieces (at least one).
    pub chunk_count: u32,
    /// Position of this chunk in the blob, from 0 to `chunk_count - 1`.
    pub index: u32,
    /// The chunk's data: [`BLOB_CHUNK_SIZE`] bytes, or fewer in the last chunk.
    pub bytes: Vec<u8>,
}

/// The number of chunks a blob of `total_size` bytes is sent in (an empty blob is one empty chunk).
pub const fn blob_chunk_count(total_size: usize) -> u32 {
    if total_size == 0 {
        1
    } else {
        total_size.div_ceil(BLOB_CHUNK_SIZE) as u32
    }
}

/// Which chunks of a blob the receiver holds: all before `next_missing`, and of
/// the [`BLOB_ACK_WINDOW`] chunks after it, those whose bit is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlobAck {
    /// Which transfer is acknowledged.
    pub id: BlobId,
    /// The first chunk not received yet (`chunk_count` once all have arrived).
    pub next_missing: u32,
    /// Bit i (of word i / 64) = chunk `next_missing + 1 + i` is held.
    pub held_after: [u64; (BLOB_ACK_WINDOW / 64) as usize],
}

impl BlobAck {
    /// Whether the ack says chunk `index` has arrived.
    pub fn holds(&self, index: u32) -> bool {
        if index < self.next_missing {
            return true;
        }
        if index == self.next_missing {
            return false;
        }
        let offset = index - self.next_missing - 1;
        offset < BLOB_ACK_WINDOW
            && self.held_after[(offset / 64) as usize] >> (offset % 64) & 1 == 1
    }
}

/// Every message of the protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// Joiner → host: who I am, what I play, which players I control.
    Hello(Handshake),
    /// Host → joiner: accepted; the header carries the session token to use.
    Welcome(Handshake),
    /// Host → joiner: refused, with the host's own identity so the joiner can say what differs.
    Reject {
        /// Why the joiner was refused.
        reason: RejectReason,
        /// The host's own core, content and settings.
        host: Handshake,
    },
    /// The sender's inputs for a run of frames, with reports riding along.
    Input(InputMessage),
    /// "I have all your inputs before `next_expected`", from a peer with none of its own to send.
    InputAck {
        /// The first frame of the receiver's inputs the sender still lacks.
        next_expected: Frame,
    },
    /// A quality report that found no input datagram to ride on.
    QualityReport(QualityReport),
    /// A quality reply that found no input datagram to ride on.
    QualityReply(QualityReply),
    /// The sender's most recent confirmed-frame checksums, oldest first.
    ChecksumReport {
        /// Checksums of confirmed frames, oldest first (at most [`MAX_CHECKSUMS_PER_REPORT`]).
        entries: Vec<ChecksumEntry>,
    },
    /// Sent by a running link that sent nothing else for a while, so the peer does not time it out.
    KeepAlive,
    /// The sender leaves the session; repeated until a [`Message::DisconnectAck`]
    /// arrives or its linger passes, so it may come more than once.
    Disconnect {
        /// Why the sender leaves.
        reason: DisconnectReason,
    },
    /// "Your Disconnect arrived": sent for every copy of one (never answered).
    DisconnectAck,
    /// A piece of a blob being transferred.
    BlobChunk(BlobChunk),
    /// Which chunks of a blob the receiver holds, so the sender resends only the missing ones.
    BlobAck(BlobAck),
    /// Member → host: synchronized with every machine of the match, so the
    /// host may send Start (repeated until a Start arrives).
    Ready,
    /// Host → member: begin frame 0 `delay_ms` after this arrives, so that
    /// every machine begins together (seed 000's start-up advantage). Resent
    /// until acknowledged; a member already counting down or playing keeps
    /// its start moment.
    Start {
        /// Milliseconds to wait after this datagram arrives before running frame 0.
        delay_ms: u16,
    },
    /// Member → host: a Start arrived (every copy is acknowledged).
    StartAck,
    /// Start-up host → member: where the other players' machines are, as
    /// the host sees them (resent until the member says Ready).
    Roster(Vec<RosterEntry>),
    /// Sent to a new address a peer's datagrams came from: "prove you
    /// hold this link's key by echoing `nonce`". The link moves there
    /// only on the proof, so a replayed datagram moves nothing.
    RejoinChallenge {
        /// Drawn fresh for each new address (from randomness the caller gives).
        nonce: u64,
    },
    /// The answer to a [`Message::RejoinChallenge`], tagged with the link's
    /// key like every datagram: only the peer can make it.
    RejoinProof {
        /// The challenge's nonce, echoed.
        nonce: u64,
    },
    /// A proof as [`Message::RejoinProof`] from a peer that lost its
    /// match (its process was restarted): the host sends it the state to
    /// resume from, then its inputs from that frame.
    RejoinRestarted {
        /// The challenge's nonce, echoed.
        nonce: u64,
    },
    /// A line of chat and the acknowledgement of the peer's (version 7).
    Chat(ChatMessage),
    /// Host → an address whose Hello did not carry its cookie (version 9):
    /// "say Hello again with this", the cookie in the header's session
    /// token. Smaller than any Hello, so a Hello sent in someone else's
    /// name earns them no more bytes than it cost, and nothing is kept.
    HelloCookie,
}

/// An address in a [`Message::Roster`] is at most this long (an IPv6
/// socket address is 18 bytes).
pub const MAX_ROSTER_ADDRESS_BYTES: usize = 32;

/// One other player's machine in a [`Message::Roster`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RosterEntry {
    /// The player slot it controls.
    pub slot: u8,
    /// Its address, in the encoding of the session's transport (opaque to
    /// the protocol; at most [`MAX_ROSTER_ADDRESS_BYTES`]).
    pub address: Vec<u8>,
}

impl Message {
    /// The kind byte on the wire.
    pub const fn kind(&self) -> u8 {
        match self {
            Message::Hello(_) => 1,
            Message::Welcome(_) => 2,
            Message::Reject { .. } => 3,
            Message::Input(_) => 4,
            Message::InputAck { .. } => 5,
            Message::QualityReport(_) => 6,
            Message::QualityReply(_) => 7,
            Message::ChecksumReport { .. } => 8,
            Message::KeepAlive => 9,
            Message::Disconnect { .. } => 10,
            Message::BlobChunk(_) => 11,
            Message::BlobAck(_) => 12,
            Message::Ready => 13,
            Message::Start { .. } => 14,
            Message::StartAck => 15,
            Message::DisconnectAck => 16,
            Message::Chat(_) => 17,
            Message::Roster(_) => 18,
            Message::RejoinChallenge { .. } => 19,
            Message::RejoinProof { .. } => 20,
            Message::RejoinRestarted { .. } => 21,
            Message::HelloCookie => 22,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_compare_across_wrap_around() {
        assert!(Sequence(1).is_newer_than(Sequence(0)));
        assert!(!Sequence(0).is_newer_than(Sequence(1)));
        assert!(Sequence(3).is_newer_than(Sequence(65530)));
        assert!(!Sequence(65530).is_newer_than(Sequence(3)));
        assert!(Sequence(32768).is_newer_than(Sequence(0)));
        assert!(!Sequence(32769).is_newer_than(Sequence(0)));
        assert!(!Sequence(7).is_newer_than(Sequence(7)));
        assert_eq!(Sequence(65535).next(), Sequence(0));
    }

    #[test]
    fn a_blob_ack_holds_chunks_before_the_first_missing_and_those_flagged_after() {
        let mut ack = BlobAck {
            id: BlobId(1),
            next_missing: 10,
            held_after: [0; 4],
        };
        ack.held_after[0] = 0b101; // chunks 11 and 13
        assert!(ack.holds(9));
        assert!(!ack.holds(10));
        assert!(ack.holds(11));
        assert!(!ack.holds(12));
        assert!(ack.holds(13));
        assert!(!ack.holds(10 + 1 + BLOB_ACK_WINDOW));
    }

    #[test]
    fn blobs_split_into_whole_chunks() {
        assert_eq!(blob_chunk_count(0), 1);
        assert_eq!(blob_chunk_count(1), 1);
        assert_eq!(blob_chunk_count(BLOB_CHUNK_SIZE), 1);
        assert_eq!(blob_chunk_count(BLOB_CHUNK_SIZE + 1), 2);
    }
}
