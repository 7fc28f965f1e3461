//! The wire format: hand-written, little-endian, every datagram ≤ 1200 bytes.
//!
//! Header (10 bytes): magic `"nc"`, protocol version (u8), message kind (u8),
//! session token (u32), sequence number (u16). Bodies use LEB128 varints for frame
//! numbers and counts (small numbers are common) and a bit stream for inputs.
//!
//! # Input compression
//!
//! Each input is XORed with the previous frame's input of the same player and the
//! difference bit-packed with GGPO's toggle code: `1` + 4-bit button index per
//! changed button, `0` ends the frame. An unchanged frame costs 1 bit, a frame
//! where one button goes down or up costs 6. Seed 000's changed-flag scheme
//! (`0` unchanged, `1` + the full 16-bit value) also costs 1 bit when idle but 17
//! bits per change; people rarely change more than two buttons in one frame
//! (3 toggles = 16 bits), so toggles are smaller for real play. Random input
//! (8 changes per frame on average) costs ~41 bits a frame and still fits dozens
//! of frames per datagram.
//!
//! The first frame in a datagram is XORed against NONE rather than against the
//! input before it, so every datagram decodes on its own whatever arrived before
//! (loss and reordering need no special case); holding buttons costs 5 bits per
//! held button once per datagram.
//!
//! Version 2 added three start-up messages (kinds 13–15): Ready and StartAck
//! have no body, Start carries its delay in milliseconds (u16). The
//! handshake layouts did not change.
//!
//! Version 6 added the sender's input delay (u8) at the end of a quality
//! report, and the Roster (kind 18): a count byte (below 8), then per
//! entry the slot byte, an address length byte (at most 32) and the address.
//!
//! Version 3 puts a piggyback flags byte in every input datagram, after the
//! connection status: bit 0 a quality report (timestamp u32, frame advantage
//! i16), bit 1 a quality reply (echoed timestamp u32, held milliseconds u16),
//! bit 2 a checksum report (count u8, then frame varint and checksum u64
//! each), in that order. A standalone quality reply (kind 7) also carries
//! its held milliseconds.
//!
//! Version 4 appends to every handshake (Hello, Welcome, the host's in a
//! Reject) a flags byte (bit 0: the sender sends its start state) and the
//! sender's core options: a varint count (at most [`MAX_CORE_OPTIONS`]),
//! then key and value as length-prefixed text each. A handshake ending
//! before the flags is a version-3 one (no options, no start state), and
//! bytes after the options are left to later versions. Reject reason 8
//! (`CoreVersion`) is new.
//!
//! Version 5 tags every datagram (see `protocol::auth`): 8 bytes at the end
//! that the codec neither writes nor reads. Only handshakes (Hello,
//! Welcome, Reject) still carry the session token in their header; the
//! other datagrams' header is magic, version, kind and sequence number (6
//! bytes), as their tag's key is the session's own. Every handshake ends
//! with the match's length in frames (a varint, 0 when it runs until
//! someone leaves) and the sender's x25519 public key (32 bytes); a
//! handshake ending after the core options is a version-4 one (no length,
//! no key). A blob chunk carries the whole blob's xxh3 (u64) after its
//! total size. DisconnectAck (kind 16, no body) answers every Disconnect.
//!
//! Version 6 adds RejoinChallenge (kind 19) and RejoinProof (kind 20),
//! each a nonce (u64): a link moves to a peer's new address only once the
//! peer echoed the nonce sent there, tagged with the link's key.
//! Version 7 adds RejoinRestarted (kind 21), a proof's nonce from a peer
//! whose process restarted.
//!
//! Version 7 adds Chat (kind 17): the next line number expected from the
//! receiver (varint), a flags byte (bit 0: a line follows), then the
//! line's number (varint), its author (length byte, at most 24 bytes) and
//! its text (length byte, 1 to 120 bytes), both UTF-8 without control
//! characters.
//!
//! Version 9 adds HelloCookie (kind 22, a handshake with no body): a host
//! answers a Hello whose header's session token is not its cookie for the
//! sender's address with one, and the joiner says Hello again carrying it.
//!
//! Frame numbers stay LEB128 varints rather than 16-bit wrap-around numbers:
//! a varint takes one byte before frame 128, two before 16384 (4.5 minutes at
//! 60 fps) and three up to 2^21 (9.7 hours), so a u16 would save at most one
//! byte a datagram and make every frame field depend on the receiver's state.
//!
//! Decoding never panics and never allocates more than the datagram's own size
//! justifies: counts are checked against the bytes left before anything is reserved.

use super::chat::{check_chat_author, check_chat_text, ChatLine, ChatMessage, ChatTextError};
use super::messages::*;
use crate::checksum::Checksum;
use crate::encoding::{
    is_printable, put_toggles, put_varint, read_toggles, read_varint, toggle_cost, BitReader,
    BitWriter, ReadError,
};
use crate::input::Buttons;
use crate::rollback::Frame;

/// The first two bytes of every netcade datagram.
pub const MAGIC: [u8; 2] = *b"nc";

/// Bytes of the tag at the end of every datagram (written and checked by
/// `protocol::auth`, not here).
pub const TAG_BYTES: usize = 8;

/// Bytes before the body of a datagram of a running session.
pub const HEADER_SIZE: usize = 6;

/// Bytes before the body of a handshake (Hello, Welcome, Reject, HelloCookie): the
/// header of the others plus the session token.
pub const HANDSHAKE_HEADER_SIZE: usize = 10;

/// Whether datagrams of message `kind` are handshakes: they carry the
/// session token and are tagged with the well-known key.
pub const fn is_handshake_kind(kind: u8) -> bool {
    matches!(kind, 1..=3 | 22)
}

/// What is wrong with a datagram that cannot be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// A field runs past the end of the datagram (cut short, or a lying length).
    #[error("datagram ends in the middle of a field")]
    Truncated,
    #[error("datagram of {0} bytes is over the {MAX_DATAGRAM_SIZE}-byte limit")]
    /// The datagram's length in bytes, over [`MAX_DATAGRAM_SIZE`]: no peer sends one.
    TooLarge(usize),
    /// The first two bytes are not [`MAGIC`]: stray traffic from another program.
    #[error("not a netcade datagram (starts with {0:02x?})")]
    BadMagic([u8; 2]),
    /// The kind byte names no message of this protocol version.
    #[error("unknown message kind {0}")]
    UnknownKind(u8),
    /// A LEB128 number is too big for its field or not in its shortest form.
    #[error("malformed variable-length number")]
    BadVarint,
    /// A text field is not UTF-8, or a handshake's name, version or core
    /// option holds a control or format character (printed when a handshake is
    /// refused: a peer must not steer the terminal).
    #[error("a text field is not valid UTF-8 or holds a control or format character")]
    BadText,
    /// Handshake settings no session can run with; the text says which rule they break.
    #[error("invalid session settings: {0}")]
    BadSettings(&'static str),
    /// A Reject carries a reason code this version does not know.
    #[error("unknown reject reason code {0}")]
    UnknownRejectReason(u8),
    #[error("{claimed} entries cannot fit in the {bytes_left} bytes left in the datagram")]
    /// A count announces more entries than the rest of the datagram can hold,
    /// so nothing is reserved for them.
    CountBeyondDatagram {
        /// Entries the count announces.
        claimed: u64,
        /// Bytes left in the datagram after the count.
        bytes_left: usize,
    },
    /// An input message's frames or ack fall outside the frame numbers a u32 holds.
    #[error("frame numbers out of range")]
    FrameRange,
    /// An input's toggle code changes more than the 16 buttons a pad has.
    #[error("an input frame toggles more buttons than a pad has")]
    BadInputBits,
    /// An input message carries frames but names no player they belong to.
    #[error("inputs without player slots")]
    InputsWithoutSlots,
    /// A blob chunk announces a total size in bytes over [`MAX_BLOB_SIZE`].
    #[error("blob of {0} bytes is over the {MAX_BLOB_SIZE}-byte cap")]
    BlobTooLarge(u32),
    #[error("blob chunk {index} of {count} is inconsistent with the blob size or its own length")]
    /// A blob chunk or ack whose chunk numbers or length do not match the blob's size.
    BadBlobChunk {
        /// The chunk number carried (for an ack, its first missing chunk).
        index: u32,
        /// The chunk count carried (for an ack, the most any blob can have).
        count: u32,
    },
    /// This many bytes follow a complete message; no peer of this version sends them.
    #[error("{0} unexpected bytes after the message")]
    TrailingBytes(usize),
    /// An input datagram's piggyback flags byte sets bits this version does not know.
    #[error("unknown piggyback flags {0:#04x} in an input datagram")]
    UnknownPiggyback(u8),
    /// A roster entry names a slot beyond the wire's or an address too long.
    #[error("a roster entry for slot {slot} has a {length}-byte address")]
    BadRosterEntry {
        /// The slot carried.
        slot: u8,
        /// The address length carried.
        length: usize,
    },
    /// An input datagram's flags announce a checksum report with zero entries.
    #[error("an input datagram flags a checksum report but carries no checksum")]
    EmptyPiggybackChecksums,
    /// A chat datagram's flags byte sets bits this version does not know.
    #[error("unknown chat flags {0:#04x}")]
    UnknownChatFlags(u8),
    /// A chat line's author or text is empty where it may not be, too
    /// long or holds control characters.
    #[error("a chat line is malformed: {0}")]
    BadChatLine(ChatTextError),
}

impl From<ReadError> for DecodeError {
    fn from(error: ReadError) -> Self {
        match error {
            ReadError::Truncated => DecodeError::Truncated,
            ReadError::BadVarint => DecodeError::BadVarint,
            ReadError::BadInputBits => DecodeError::BadInputBits,
        }
    }
}

/// A message that cannot be put in one datagram.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// The bytes the message needs (for inputs, an estimate), over [`MAX_DATAGRAM_SIZE`].
    #[error("message needs {0} bytes, over the {MAX_DATAGRAM_SIZE}-byte datagram limit")]
    TooLarge(usize),
    #[error("{field} is {len} bytes long, at most 255 fit")]
    /// A handshake text is longer than its one-byte length prefix allows.
    TextTooLong {
        /// Which text ("core name" or "core version").
        field: &'static str,
        /// Its length in bytes.
        len: usize,
    },
    #[error("an input message holds {actual} inputs where its frames and slots need {expected}")]
    /// An input message whose inputs do not fill `frame_count × slots` exactly.
    InputCountMismatch {
        /// Inputs the frame count and slots call for.
        expected: usize,
        /// Inputs the message holds.
        actual: usize,
    },
    /// A checksum report with more entries (the count given) than [`MAX_CHECKSUMS_PER_REPORT`].
    #[error("a checksum report holds {0} entries, at most {MAX_CHECKSUMS_PER_REPORT} fit")]
    TooManyChecksums(usize),
    #[error("blob chunk {index} is inconsistent with the blob size or its own length")]
    /// A blob chunk whose count, index or length does not match its total size.
    BadBlobChunk {
        /// The chunk's index.
        index: u32,
    },
    /// A handshake with more than [`MAX_CORE_OPTIONS`] core options.
    #[error("a handshake holds {0} core options, at most {MAX_CORE_OPTIONS} fit")]
    TooManyCoreOptions(usize),
    /// A roster with too many entries, a slot beyond the wire's or an address too long.
    #[error("a roster holds too many entries, a slot beyond {MAX_SLOTS} or an address over {MAX_ROSTER_ADDRESS_BYTES} bytes")]
    BadRoster,
    /// A chat line whose author or text cannot be sent.
    #[error("a chat line cannot be sent: {0}")]
    BadChatLine(ChatTextError),
}

// ---------------------------------------------------------------- writing

fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

fn unzigzag(value: u64) -> i64 {
    (value >> 1) as i64 ^ -((value & 1) as i64)
}

fn put_text(out: &mut Vec<u8>, field: &'static str, text: &str) -> Result<(), EncodeError> {
    let len = u8::try_from(text.len()).map_err(|_| EncodeError::TextTooLong {
        field,
        len: text.len(),
    })?;
    out.push(len);
    out.extend_from_slice(text.as_bytes());
    Ok(())
}

fn put_header(out: &mut Vec<u8>, header: &Header, kind: u8) {
    out.clear();
    out.extend_from_slice(&MAGIC);
    out.push(header.version);
    out.push(kind);
    if is_handshake_kind(kind) {
        out.extend_from_slice(&header.session.0.to_le_bytes());
    }
    out.extend_from_slice(&header.sequence.0.to_le_bytes());
}

fn put_handshake(out: &mut Vec<u8>, hs: &Handshake) -> Result<(), EncodeError> {
    put_text(out, "core name", &hs.core_name)?;
    put_text(out, "core version", &hs.core_version)?;
    out.extend_from_slice(&hs.content_hash.to_le_bytes());
    out.push(hs.local_slots.0);
    let s = &hs.settings;
    out.push(s.player_count);
    out.extend_from_slice(&s.frame_rate_millihertz.to_le_bytes());
    out.push(s.max_prediction);
    out.extend_from_slice(&s.checksum_interval.to_le_bytes());
    out.push(s.input_delay_min);
    out.push(s.input_delay_max);
    // Version 4 on: appended, so older decoders still read the rest.
    out.push(if hs.start_state {
        HANDSHAKE_START_STATE
    } else {
        0
    });
    if hs.core_options.len() > MAX_CORE_OPTIONS {
        return Err(EncodeError::TooManyCoreOptions(hs.core_options.len()));
    }
    put_varint(out, hs.core_options.len() as u64);
    for option in &hs.core_options {
        put_text(out, "core option key", &option.key)?;
        put_text(out, "core option value", &option.value)?;
    }
    // Version 5 on.
    put_varint(out, u64::from(hs.match_frames.unwrap_or(0)));
    if let Some(key) = &hs.public_key {
        out.extend_from_slice(&key.0);
        // Version 7 on.
        put_varint(out, u64::from(s.rejoin_window_s));
        // Version 10 on: only between machines that met by room code.
        if let Some(room) = &hs.room {
            out.extend_from_slice(&room.element.0);
            if let Some(confirmation) = &room.confirmation {
                out.extend_from_slice(confirmation);
            }
        }
    }
    Ok(())
}

/// Handshake flag: the sender sends its start state.
const HANDSHAKE_START_STATE: u8 = 1;

/// How many frames of `inputs` (`slot_count` per frame) fit in `budget_bits`.
fn frames_fitting(
    inputs: &[Buttons],
    slot_count: usize,
    frame_limit: usize,
    budget_bits: usize,
) -> usize {
    let mut frames = 0usize;
    let mut used_bits = 0usize;
    let mut previous = [Buttons::NONE; MAX_SLOTS];
    while frames < frame_limit {
        let row = &inputs[frames * slot_count..(frames + 1) * slot_count];
        let cost: usize = row
            .iter()
            .zip(&previous)
            .map(|(&now, &before)| toggle_cost(before, now))
            .sum();
        if used_bits + cost > budget_bits {
            break;
        }
        used_bits += cost;
        previous[..slot_count].copy_from_slice(row);
        frames += 1;
    }
    frames
}

/// The fields of an input datagram besides the inputs themselves.
#[derive(Clone, Copy, Debug)]
pub struct InputPrefix<'a> {
    /// The first frame carried, as in [`InputMessage::start_frame`].
    pub start_frame: Frame,
    /// The ack of the receiver's inputs, as in [`InputMessage::next_expected`].
    pub next_expected: Frame,
    /// Whose inputs are carried, as in [`InputMessage::slots`].
    pub slots: PlayerSlots,
    /// The sender's view of who dropped, as in [`InputMessage::status`].
    pub status: &'a ConnectionStatus,
    /// Reports to send along (checksums beyond [`MAX_CHECKSUMS_PER_REPORT`] are left out).
    pub piggyback: &'a Piggyback,
}

const PIGGYBACK_QUALITY_REPORT: u8 = 1;
const PIGGYBACK_QUALITY_REPLY: u8 = 2;
const PIGGYBACK_CHECKSUMS: u8 = 4;

fn put_quality_report(out: &mut Vec<u8>, report: &QualityReport) {
    out.extend_from_slice(&report.timestamp_ms.to_le_bytes());
    out.extend_from_slice(&report.frame_advantage.to_le_bytes());
    // One byte for both (v8): delays stay under 16 frames (lockstep's
    // most is 12), run-ahead under 5, and an unchanged input's datagram
    // keeps its size.
    out.push(report.input_delay.min(QUALITY_NIBBLE) | report.run_ahead.min(QUALITY_NIBBLE) << 4);
}

/// The most a quality report's input delay or run-ahead can say.
const QUALITY_NIBBLE: u8 = 0x0f;

fn put_quality_reply(out: &mut Vec<u8>, reply: &QualityReply) {
    out.extend_from_slice(&reply.echoed_timestamp_ms.to_le_bytes());
    out.extend_from_slice(&reply.held_ms.to_le_bytes());
}

fn put_checksums(out: &mut Vec<u8>, entries: &[ChecksumEntry]) {
    let entries = &entries[..entries.len().min(MAX_CHECKSUMS_PER_REPORT)];
    out.push(entries.len() as u8);
    for entry in entries {
        put_varint(out, entry.frame.number() as u64);
        out.extend_from_slice(&entry.checksum.0.to_le_bytes());
    }
}

fn put_piggyback(out: &mut Vec<u8>, piggyback: &Piggyback) {
    let mut flags = 0;
    if piggyback.quality_report.is_some() {
        flags |= PIGGYBACK_QUALITY_REPORT;
    }
    if piggyback.quality_reply.is_some() {
        flags |= PIGGYBACK_QUALITY_REPLY;
    }
    if !piggyback.checksums.is_empty() {
        flags |= PIGGYBACK_CHECKSUMS;
    }
    out.push(flags);
    if let Some(report) = &piggyback.quality_report {
        put_quality_report(out, report);
    }
    if let Some(reply) = &piggyback.quality_reply {
        put_quality_reply(out, reply);
    }
    if !piggyback.checksums.is_empty() {
        put_checksums(out, &piggyback.checksums);
    }
}

/// Encodes an input datagram carrying as many of `inputs` (frame by frame, one
/// per slot, starting at `prefix.start_frame`) as fit in one datagram, oldest
/// first, and returns how many frames it holds. The rest goes in a later datagram.
pub fn encode_input_fitting(
    header: &Header,
    prefix: InputPrefix<'_>,
    inputs: &[Buttons],
    out: &mut Vec<u8>,
) -> u32 {
    put_header(out, header, 4);
    put_varint(out, prefix.start_frame.number() as u64);
    out.push(prefix.slots.0);
    put_varint(
        out,
        zigzag(prefix.next_expected.number() as i64 - prefix.start_frame.number() as i64),
    );
    let mut disconnected_mask = 0u8;
    for (player, at) in prefix.status.disconnected_at.iter().enumerate() {
        if at.is_some() {
            disconnected_mask |= 1 << player;
        }
    }
    out.push(disconnected_mask);
    for frame in prefix.status.disconnected_at.iter().flatten() {
        put_varint(out, frame.number() as u64);
    }
    put_piggyback(out, prefix.piggyback);

    let slot_count = prefix.slots.count();
    let available_frames = inputs.len().checked_div(slot_count).unwrap_or(0);
    let frame_limit = available_frames.min((u32::MAX - prefix.start_frame.number()) as usize);
    // A count below 128 takes one varint byte, any count that fits takes two
    // (9600 bits cannot hold 16384 frames).
    let one_byte_budget = MAX_DATAGRAM_SIZE.saturating_sub(out.len() + 1) * 8;
    let mut frames = frames_fitting(inputs, slot_count, frame_limit, one_byte_budget);
    if frames >= 128 {
        let two_byte_budget = MAX_DATAGRAM_SIZE.saturating_sub(out.len() + 2) * 8;
        frames = frames_fitting(inputs, slot_count, frame_limit, two_byte_budget);
    }
    put_varint(out, frames as u64);
    let mut bits = BitWriter::new(out);
    let mut previous = [Buttons::NONE; MAX_SLOTS];
    for row in inputs[..frames * slot_count].chunks_exact(slot_count.max(1)) {
        for (slot, &now) in row.iter().enumerate() {
            put_toggles(&mut bits, previous[slot], now);
            previous[slot] = now;
        }
    }
    debug_assert!(out.len() <= MAX_DATAGRAM_SIZE);
    frames as u32
}

/// Encodes `message` into `out` (cleared first) as one datagram.
pub fn encode(header: &Header, message: &Message, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let result = encode_body(header, message, out);
    if result.is_err() {
        out.clear();
        return result;
    }
    if out.len() > MAX_DATAGRAM_SIZE {
        let size = out.len();
        out.clear();
        return Err(EncodeError::TooLarge(size));
    }
    Ok(())
}

fn encode_body(header: &Header, message: &Message, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    if let Message::Input(input) = message {
        if input.piggyback.checksums.len() > MAX_CHECKSUMS_PER_REPORT {
            return Err(EncodeError::TooManyChecksums(
                input.piggyback.checksums.len(),
            ));
        }
        let expected = input.frame_count as usize * input.slots.count();
        if input.inputs.len() != expected {
            return Err(EncodeError::InputCountMismatch {
                expected,
                actual: input.inputs.len(),
            });
        }
        let prefix = InputPrefix {
            start_frame: input.start_frame,
            next_expected: input.next_expected,
            slots: input.slots,
            status: &input.status,
            piggyback: &input.piggyback,
        };
        let written = encode_input_fitting(header, prefix, &input.inputs, out);
        if written != input.frame_count {
            // Report roughly what it would have taken.
            return Err(EncodeError::TooLarge(
                MAX_DATAGRAM_SIZE * input.frame_count as usize / written.max(1) as usize,
            ));
        }
        return Ok(());
    }
    put_header(out, header, message.kind());
    match message {
        Message::Hello(hs) | Message::Welcome(hs) => put_handshake(out, hs)?,
        Message::Reject { reason, host } => {
            out.push(reason.code());
            put_handshake(out, host)?;
        }
        Message::Input(_) => unreachable!("handled above"),
        Message::InputAck { next_expected } => put_varint(out, next_expected.number() as u64),
        Message::QualityReport(report) => put_quality_report(out, report),
        Message::QualityReply(reply) => put_quality_reply(out, reply),
        Message::ChecksumReport { entries } => {
            if entries.len() > MAX_CHECKSUMS_PER_REPORT {
                return Err(EncodeError::TooManyChecksums(entries.len()));
            }
            put_checksums(out, entries);
        }
        Message::KeepAlive => {}
        Message::Disconnect { reason } => out.push(reason.code()),
        Message::BlobChunk(chunk) => put_blob_chunk(out, chunk)?,
        Message::BlobAck(ack) => put_blob_ack(out, ack),
        Message::Ready | Message::StartAck | Message::DisconnectAck => {}
        Message::Start { delay_ms } => out.extend_from_slice(&delay_ms.to_le_bytes()),
        Message::Roster(entries) => put_roster(out, entries)?,
        Message::RejoinChallenge { nonce }
        | Message::RejoinProof { nonce }
        | Message::RejoinRestarted { nonce } => out.extend_from_slice(&nonce.to_le_bytes()),
        Message::Chat(chat) => put_chat(out, chat)?,
        Message::HelloCookie => {}
    }
    Ok(())
}

fn put_blob_chunk(out: &mut Vec<u8>, chunk: &BlobChunk) -> Result<(), EncodeError> {
    let total = chunk.total_size as usize;
    let consistent = total <= MAX_BLOB_SIZE
        && chunk.chunk_count == blob_chunk_count(total)
        && chunk.index < chunk.chunk_count
        && chunk.bytes.len() == chunk_len(total, chunk.index);
    if !consistent {
        return Err(EncodeError::BadBlobChunk { index: chunk.index });
    }
    out.extend_from_slice(&chunk.id.0.to_le_bytes());
    out.extend_from_slice(&chunk.total_size.to_le_bytes());
    out.extend_from_slice(&chunk.hash.to_le_bytes());
    put_varint(out, chunk.chunk_count as u64);
    put_varint(out, chunk.index as u64);
    out.extend_from_slice(&chunk.bytes);
    Ok(())
}

fn put_blob_ack(out: &mut Vec<u8>, ack: &BlobAck) {
    out.extend_from_slice(&ack.id.0.to_le_bytes());
    put_varint(out, ack.next_missing as u64);
    let mut bitmap = [0u8; (BLOB_ACK_WINDOW / 8) as usize];
    for (word_index, word) in ack.held_after.iter().enumerate() {
        bitmap[word_index * 8..word_index * 8 + 8].copy_from_slice(&word.to_le_bytes());
    }
    let used = bitmap.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    out.push(used as u8);
    out.extend_from_slice(&bitmap[..used]);
}

/// Length of chunk `index` of a blob of `total` bytes.
pub(crate) fn chunk_len(total: usize, index: u32) -> usize {
    let start = index as usize * BLOB_CHUNK_SIZE;
    total.saturating_sub(start).min(BLOB_CHUNK_SIZE)
}

// ---------------------------------------------------------------- reading

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn take(&mut self, count: usize) -> Result<&'a [u8], DecodeError> {
        if count > self.remaining() {
            return Err(DecodeError::Truncated);
        }
        let slice = &self.bytes[self.pos..self.pos + count];
        self.pos += count;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut array = [0u8; N];
        array.copy_from_slice(self.take(N)?);
        Ok(array)
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }

    fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// A LEB128 number of at most 10 bytes, in its shortest form.
    fn varint(&mut self) -> Result<u64, DecodeError> {
        let (value, used) = read_varint(&self.bytes[self.pos..])?;
        self.pos += used;
        Ok(value)
    }

    fn varint_u32(&mut self) -> Result<u32, DecodeError> {
        u32::try_from(self.varint()?).map_err(|_| DecodeError::BadVarint)
    }

    fn frame(&mut self) -> Result<Frame, DecodeError> {
        Ok(Frame::new(self.varint_u32()?))
    }

    fn text(&mut self) -> Result<String, DecodeError> {
        let len = self.u8()? as usize;
        let bytes = self.take(len)?;
        std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|_| DecodeError::BadText)
    }

    /// A text that may be printed as it came ([`is_printable`]).
    fn printable_text(&mut self) -> Result<String, DecodeError> {
        let text = self.text()?;
        if !is_printable(&text) {
            return Err(DecodeError::BadText);
        }
        Ok(text)
    }

    fn finish(&self) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            extra => Err(DecodeError::TrailingBytes(extra)),
        }
    }
}

/// Reads only the header, e.g. to check the session token before anything else.
pub fn decode_header(datagram: &[u8]) -> Result<(Header, u8), DecodeError> {
    if datagram.len() > MAX_DATAGRAM_SIZE {
        return Err(DecodeError::TooLarge(datagram.len()));
    }
    let mut reader = Reader {
        bytes: datagram,
        pos: 0,
    };
    let magic = reader.array::<2>()?;
    if magic != MAGIC {
        return Err(DecodeError::BadMagic(magic));
    }
    let version = reader.u8()?;
    let kind = reader.u8()?;
    let session = if is_handshake_kind(kind) {
        SessionToken(reader.u32()?)
    } else {
        SessionToken::UNKNOWN
    };
    let sequence = Sequence(reader.u16()?);
    Ok((
        Header {
            version,
            session,
            sequence,
        },
        kind,
    ))
}

/// Decodes one datagram. Any malformation is an error; nothing panics.
pub fn decode(datagram: &[u8]) -> Result<(Header, Message), DecodeError> {
    decode_reusing(datagram, &mut Vec::new())
}

/// [`decode`], building an input message's inputs in `inputs` (taken,
/// cleared and filled): hand the vector back after use and input datagrams
/// decode without allocating.
pub fn decode_reusing(
    datagram: &[u8],
    inputs: &mut Vec<Buttons>,
) -> Result<(Header, Message), DecodeError> {
    let (header, kind) = decode_header(datagram)?;
    let mut reader = Reader {
        bytes: datagram,
        pos: if is_handshake_kind(kind) {
            HANDSHAKE_HEADER_SIZE
        } else {
            HEADER_SIZE
        },
    };
    let message = match kind {
        // Handshakes may carry fields appended by later versions: ignore the rest.
        1 => return Ok((header, Message::Hello(read_handshake(&mut reader)?))),
        2 => return Ok((header, Message::Welcome(read_handshake(&mut reader)?))),
        3 => {
            let code = reader.u8()?;
            let reason =
                RejectReason::from_code(code).ok_or(DecodeError::UnknownRejectReason(code))?;
            let host = read_handshake(&mut reader)?;
            return Ok((header, Message::Reject { reason, host }));
        }
        4 => {
            let input = read_input(&mut reader, std::mem::take(inputs))?;
            return Ok((header, Message::Input(input)));
        }
        5 => Message::InputAck {
            next_expected: reader.frame()?,
        },
        6 => Message::QualityReport(read_quality_report(&mut reader)?),
        7 => Message::QualityReply(read_quality_reply(&mut reader)?),
        8 => Message::ChecksumReport {
            entries: read_checksums(&mut reader)?,
        },
        9 => Message::KeepAlive,
        10 => Message::Disconnect {
            reason: DisconnectReason::from_code(reader.u8()?),
        },
        11 => Message::BlobChunk(read_blob_chunk(&mut reader)?),
        12 => Message::BlobAck(read_blob_ack(&mut reader)?),
        13 => Message::Ready,
        14 => Message::Start {
            delay_ms: reader.u16()?,
        },
        15 => Message::StartAck,
        16 => Message::DisconnectAck,
        18 => Message::Roster(read_roster(&mut reader)?),
        19 => Message::RejoinChallenge {
            nonce: reader.u64()?,
        },
        20 => Message::RejoinProof {
            nonce: reader.u64()?,
        },
        21 => Message::RejoinRestarted {
            nonce: reader.u64()?,
        },
        17 => Message::Chat(read_chat(&mut reader)?),
        22 => Message::HelloCookie,
        other => return Err(DecodeError::UnknownKind(other)),
    };
    reader.finish()?;
    Ok((header, message))
}

fn read_blob_ack(reader: &mut Reader<'_>) -> Result<BlobAck, DecodeError> {
    let id = BlobId(reader.u32()?);
    let next_missing = reader.varint_u32()?;
    if next_missing > blob_chunk_count(MAX_BLOB_SIZE) {
        return Err(DecodeError::BadBlobChunk {
            index: next_missing,
            count: blob_chunk_count(MAX_BLOB_SIZE),
        });
    }
    let used = reader.u8()? as usize;
    if used > (BLOB_ACK_WINDOW / 8) as usize {
        return Err(DecodeError::CountBeyondDatagram {
            claimed: used as u64,
            bytes_left: reader.remaining(),
        });
    }
    let mut bitmap = [0u8; (BLOB_ACK_WINDOW / 8) as usize];
    bitmap[..used].copy_from_slice(reader.take(used)?);
    let mut held_after = [0u64; (BLOB_ACK_WINDOW / 64) as usize];
    for (word_index, word) in held_after.iter_mut().enumerate() {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&bitmap[word_index * 8..word_index * 8 + 8]);
        *word = u64::from_le_bytes(bytes);
    }
    Ok(BlobAck {
        id,
        next_missing,
        held_after,
    })
}

/// Chat flags bit 0: a line follows the acknowledgement.
const CHAT_HAS_LINE: u8 = 1;

fn put_chat(out: &mut Vec<u8>, chat: &ChatMessage) -> Result<(), EncodeError> {
    put_varint(out, u64::from(chat.next_expected));
    let Some((number, line)) = &chat.line else {
        out.push(0);
        return Ok(());
    };
    check_chat_author(&line.author).map_err(EncodeError::BadChatLine)?;
    check_chat_text(&line.text).map_err(EncodeError::BadChatLine)?;
    out.push(CHAT_HAS_LINE);
    put_varint(out, u64::from(*number));
    put_text(out, "chat author", &line.author)?;
    put_text(out, "chat text", &line.text)
}

fn read_chat(reader: &mut Reader<'_>) -> Result<ChatMessage, DecodeError> {
    let next_expected = reader.varint_u32()?;
    let line = match reader.u8()? {
        0 => None,
        CHAT_HAS_LINE => {
            let number = reader.varint_u32()?;
            let author = reader.text()?;
            check_chat_author(&author).map_err(DecodeError::BadChatLine)?;
            let text = reader.text()?;
            check_chat_text(&text).map_err(DecodeError::BadChatLine)?;
            Some((number, ChatLine { author, text }))
        }
        flags => return Err(DecodeError::UnknownChatFlags(flags)),
    };
    Ok(ChatMessage {
        next_expected,
        line,
    })
}

fn put_roster(out: &mut Vec<u8>, entries: &[RosterEntry]) -> Result<(), EncodeError> {
    let fits = entries.len() < MAX_SLOTS
        && entries.iter().all(|entry| {
            usize::from(entry.slot) < MAX_SLOTS && entry.address.len() <= MAX_ROSTER_ADDRESS_BYTES
        });
    if !fits {
        return Err(EncodeError::BadRoster);
    }
    out.push(entries.len() as u8);
    for entry in entries {
        out.push(entry.slot);
        out.push(entry.address.len() as u8);
        out.extend_from_slice(&entry.address);
    }
    Ok(())
}

fn read_roster(reader: &mut Reader<'_>) -> Result<Vec<RosterEntry>, DecodeError> {
    let count = reader.u8()? as usize;
    if count >= MAX_SLOTS {
        return Err(DecodeError::CountBeyondDatagram {
            claimed: count as u64,
            bytes_left: reader.remaining(),
        });
    }
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        let slot = reader.u8()?;
        let length = reader.u8()? as usize;
        if usize::from(slot) >= MAX_SLOTS || length > MAX_ROSTER_ADDRESS_BYTES {
            return Err(DecodeError::BadRosterEntry { slot, length });
        }
        let address = reader.take(length)?.to_vec();
        entries.push(RosterEntry { slot, address });
    }
    Ok(entries)
}

fn read_quality_report(reader: &mut Reader<'_>) -> Result<QualityReport, DecodeError> {
    let timestamp_ms = reader.u32()?;
    let frame_advantage = reader.u16()? as i16;
    let delay_and_run_ahead = reader.u8()?;
    Ok(QualityReport {
        timestamp_ms,
        frame_advantage,
        input_delay: delay_and_run_ahead & QUALITY_NIBBLE,
        run_ahead: delay_and_run_ahead >> 4,
    })
}

fn read_quality_reply(reader: &mut Reader<'_>) -> Result<QualityReply, DecodeError> {
    Ok(QualityReply {
        echoed_timestamp_ms: reader.u32()?,
        held_ms: reader.u16()?,
    })
}

fn read_checksums(reader: &mut Reader<'_>) -> Result<Vec<ChecksumEntry>, DecodeError> {
    let count = reader.u8()? as usize;
    if count > MAX_CHECKSUMS_PER_REPORT {
        return Err(DecodeError::CountBeyondDatagram {
            claimed: count as u64,
            bytes_left: reader.remaining(),
        });
    }
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        let frame = reader.frame()?;
        let checksum = Checksum(reader.u64()?);
        entries.push(ChecksumEntry { frame, checksum });
    }
    Ok(entries)
}

fn read_piggyback(reader: &mut Reader<'_>) -> Result<Piggyback, DecodeError> {
    let flags = reader.u8()?;
    let known = PIGGYBACK_QUALITY_REPORT | PIGGYBACK_QUALITY_REPLY | PIGGYBACK_CHECKSUMS;
    if flags & !known != 0 {
        return Err(DecodeError::UnknownPiggyback(flags));
    }
    let mut piggyback = Piggyback::default();
    if flags & PIGGYBACK_QUALITY_REPORT != 0 {
        piggyback.quality_report = Some(read_quality_report(reader)?);
    }
    if flags & PIGGYBACK_QUALITY_REPLY != 0 {
        piggyback.quality_reply = Some(read_quality_reply(reader)?);
    }
    if flags & PIGGYBACK_CHECKSUMS != 0 {
        piggyback.checksums = read_checksums(reader)?;
        if piggyback.checksums.is_empty() {
            return Err(DecodeError::EmptyPiggybackChecksums);
        }
    }
    Ok(piggyback)
}

fn read_handshake(reader: &mut Reader<'_>) -> Result<Handshake, DecodeError> {
    let core_name = reader.printable_text()?;
    let core_version = reader.printable_text()?;
    let content_hash = reader.u64()?;
    let local_slots = PlayerSlots(reader.u8()?);
    let mut settings = SessionSettings {
        player_count: reader.u8()?,
        frame_rate_millihertz: reader.u32()?,
        max_prediction: reader.u8()?,
        checksum_interval: reader.u16()?,
        input_delay_min: reader.u8()?,
        input_delay_max: reader.u8()?,
        rejoin_window_s: 0,
    };
    if settings.player_count == 0 || settings.player_count as usize > MAX_SLOTS {
        return Err(DecodeError::BadSettings("player count must be 1 to 8"));
    }
    if !local_slots.fit_in(settings.player_count) {
        return Err(DecodeError::BadSettings(
            "a local slot beyond the player count",
        ));
    }
    if settings.frame_rate_millihertz == 0 {
        return Err(DecodeError::BadSettings("frame rate of zero"));
    }
    if settings.checksum_interval == 0 {
        return Err(DecodeError::BadSettings("checksum interval of zero"));
    }
    if settings.input_delay_min > settings.input_delay_max {
        return Err(DecodeError::BadSettings(
            "input delay minimum above maximum",
        ));
    }
    // A version-3 handshake ends here: no options, no start state.
    let (start_state, core_options) = if reader.remaining() == 0 {
        (false, Vec::new())
    } else {
        // Flags this version does not know belong to later versions.
        let flags = reader.u8()?;
        (
            flags & HANDSHAKE_START_STATE != 0,
            read_core_options(reader)?,
        )
    };
    // A version-4 one here: no match length, no key.
    let (match_frames, public_key) = if reader.remaining() == 0 {
        (None, None)
    } else {
        let frames = Some(reader.varint_u32()?).filter(|&frames| frames > 0);
        // Without a key, no link's keys can be agreed: the endpoint drops it.
        let key = if reader.remaining() == 0 {
            None
        } else {
            Some(PublicKey(reader.array()?))
        };
        // A version-6 one ends after the key: no rejoin window.
        if reader.remaining() > 0 {
            settings.rejoin_window_s = reader.varint_u32()?;
        }
        (frames, key)
    };
    // Version 10: a room's SPAKE2 element, then in a Welcome the host's
    // confirmation; nothing for a match by address. Bytes too few for
    // either are left unread, as before: another version's handshake is
    // read with its tag.
    let room = if reader.remaining() < 32 {
        None
    } else {
        let element = RoomElement(reader.array()?);
        let confirmation = match reader.remaining() >= CONFIRMATION_BYTES {
            false => None,
            true => Some(reader.array()?),
        };
        Some(RoomProof {
            element,
            confirmation,
        })
    };
    Ok(Handshake {
        core_name,
        core_version,
        content_hash,
        local_slots,
        settings,
        core_options,
        start_state,
        match_frames,
        public_key,
        room,
    })
}

fn read_core_options(reader: &mut Reader<'_>) -> Result<Vec<CoreOption>, DecodeError> {
    let count = reader.varint()?;
    // Each option takes two length bytes at least.
    if count > MAX_CORE_OPTIONS as u64 || count.saturating_mul(2) > reader.remaining() as u64 {
        return Err(DecodeError::CountBeyondDatagram {
            claimed: count,
            bytes_left: reader.remaining(),
        });
    }
    let mut options = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let key = reader.printable_text()?;
        let value = reader.printable_text()?;
        options.push(CoreOption { key, value });
    }
    Ok(options)
}

fn read_input(
    reader: &mut Reader<'_>,
    mut inputs: Vec<Buttons>,
) -> Result<InputMessage, DecodeError> {
    let start = reader.varint_u32()?;
    let slots = PlayerSlots(reader.u8()?);
    let next_expected = (start as i64)
        .checked_add(unzigzag(reader.varint()?))
        .and_then(|frame| u32::try_from(frame).ok())
        .ok_or(DecodeError::FrameRange)?;
    let mut status = ConnectionStatus::default();
    let disconnected_mask = reader.u8()?;
    for (player, slot) in status.disconnected_at.iter_mut().enumerate() {
        if disconnected_mask & (1 << player) != 0 {
            *slot = Some(reader.frame()?);
        }
    }
    let piggyback = read_piggyback(reader)?;
    let frame_count = reader.varint_u32()?;
    if frame_count > 0 && slots.is_empty() {
        return Err(DecodeError::InputsWithoutSlots);
    }
    if start.checked_add(frame_count).is_none() {
        return Err(DecodeError::FrameRange);
    }
    // Every input costs at least one bit: refuse counts the bytes left cannot hold
    // before reserving memory for them.
    let entries = frame_count as u64 * slots.count() as u64;
    let bits_left = reader.remaining() as u64 * 8;
    if entries > bits_left {
        return Err(DecodeError::CountBeyondDatagram {
            claimed: entries,
            bytes_left: reader.remaining(),
        });
    }
    inputs.clear();
    inputs.reserve(entries as usize);
    let mut bits = BitReader::new(&reader.bytes[reader.pos..]);
    let slot_count = slots.count();
    let mut previous = [Buttons::NONE; MAX_SLOTS];
    for _ in 0..frame_count {
        for before in previous.iter_mut().take(slot_count) {
            *before = read_toggles(&mut bits, *before)?;
            inputs.push(*before);
        }
    }
    let trailing = reader.remaining() - bits.bytes_consumed();
    if trailing != 0 {
        return Err(DecodeError::TrailingBytes(trailing));
    }
    Ok(InputMessage {
        start_frame: Frame::new(start),
        next_expected: Frame::new(next_expected),
        slots,
        frame_count,
        inputs,
        status,
        piggyback,
    })
}

fn read_blob_chunk(reader: &mut Reader<'_>) -> Result<BlobChunk, DecodeError> {
    let id = BlobId(reader.u32()?);
    let total_size = reader.u32()?;
    if total_size as usize > MAX_BLOB_SIZE {
        return Err(DecodeError::BlobTooLarge(total_size));
    }
    let hash = reader.u64()?;
    let chunk_count = reader.varint_u32()?;
    let index = reader.varint_u32()?;
    let len = reader.remaining();
    if chunk_count != blob_chunk_count(total_size as usize)
        || index >= chunk_count
        || len != chunk_len(total_size as usize, index)
    {
        return Err(DecodeError::BadBlobChunk {
            index,
            count: chunk_count,
        });
    }
    Ok(BlobChunk {
        id,
        total_size,
        hash,
        chunk_count,
        index,
        bytes: reader.take(len)?.to_vec(),
    })
}

/// Bytes the body of an input datagram as sent takes (after the header,
/// before the tag): the "payload" of the ≤ 16-byte target.
pub fn input_payload_len(datagram_len: usize) -> usize {
    datagram_len.saturating_sub(HEADER_SIZE + TAG_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_keeps_small_negative_numbers_small() {
        for value in [0i64, -1, 1, -(u32::MAX as i64), u32::MAX as i64] {
            assert_eq!(unzigzag(zigzag(value)), value);
        }
        assert_eq!(zigzag(-1), 1);
    }
}
