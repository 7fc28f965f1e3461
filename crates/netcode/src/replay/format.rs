//! The records of a replay file and their bytes (see `docs/replay-format.md`).

use crate::checksum::Checksum;
use crate::encoding::{is_printable, state_blob};
use crate::encoding::{put_toggles, put_varint, read_toggles, read_varint, BitReader, BitWriter};
use crate::input::{Buttons, MAX_PLAYERS};
use crate::rollback::{Frame, MAX_MATCH_FRAMES};
use xxhash_rust::xxh3::Xxh3;

/// The first 8 bytes of every replay file.
pub const MAGIC: [u8; 8] = *b"NCREPLAY";

/// The format version this build writes.
pub const FORMAT_VERSION: u16 = 3;

/// The oldest format version this build reads: version 1 is version 2
/// without the header's start frame (its recordings start at frame 0), and
/// version 2 is version 3 without the memory checksum of a repair's state.
pub const OLDEST_READABLE_VERSION: u16 = 1;

/// Bytes before the first record: the magic and the version (u16 LE).
pub const PREAMBLE_SIZE: usize = MAGIC.len() + 2;

/// The largest savestate a replay holds (start state, repair states) once
/// expanded: far above the biggest real core's (~1 MB promised).
pub const MAX_STATE_BYTES: usize = 16 * 1024 * 1024;

/// The frame rates a header may give: every core's, and nothing that makes
/// a duration of its frames zero or endless.
pub const FRAME_RATES: std::ops::RangeInclusive<f64> = 1.0..=1000.0;

/// The audio sample rates a header may give (libretro cores always play
/// sound at some rate; `replay info` divides by it).
pub const SAMPLE_RATES: std::ops::RangeInclusive<f64> = 1000.0..=1_000_000.0;

/// The longest text field (names, paths, option keys and values), in bytes.
pub const MAX_TEXT_BYTES: usize = 4096;

/// The most core options a header lists.
pub const MAX_CORE_OPTIONS: usize = 512;

/// The most frames one inputs record carries (writers put one second in each).
pub const MAX_FRAMES_PER_RECORD: u32 = 4096;

/// The most frames a replay holds: a whole match.
pub const MAX_REPLAY_FRAMES: u32 = MAX_MATCH_FRAMES;

/// The most events (repairs, departures) a replay holds.
pub const MAX_EVENTS: usize = 256;

/// The largest record payload: a header with the largest start state, its
/// texts and options.
pub const MAX_RECORD_BYTES: usize =
    start_state_blob_limit() + (MAX_CORE_OPTIONS * 2 + 16) * (MAX_TEXT_BYTES + 2) + 256;

const fn start_state_blob_limit() -> usize {
    // lz4's worst case: the input plus 1/255 of it plus a little (mirrors
    // `lz4_flex::block::get_maximum_output_size`, which is not `const`).
    4 + MAX_STATE_BYTES + MAX_STATE_BYTES / 255 + 16
}

/// Bytes after each record's payload: the low 32 bits of its xxh3.
pub const RECORD_CHECK_SIZE: usize = 4;

/// What a replay's bytes cannot be read as. Offsets count from the file's
/// first byte.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// The file does not start with [`MAGIC`].
    #[error("not a netcade replay (it does not start with NCREPLAY)")]
    NotAReplay,
    /// The file was written by a format version this build does not read.
    #[error("replay format version {found}, this netcade reads versions {OLDEST_READABLE_VERSION} to {FORMAT_VERSION}")]
    UnsupportedVersion {
        /// The version in the file.
        found: u16,
    },
    /// The file ends before its header record is whole.
    #[error("the replay is cut short at byte {offset}, before its header ends")]
    HeaderCut {
        /// Where the bytes end.
        offset: u64,
    },
    /// A record's check bytes do not match its contents.
    #[error("the record at byte {offset} is corrupted (its check does not match)")]
    BadRecordCheck {
        /// Where the record starts.
        offset: u64,
    },
    /// A record's kind byte names no record of this format version.
    #[error("unknown record kind {kind} at byte {offset}")]
    UnknownRecord {
        /// The kind byte.
        kind: u8,
        /// Where the record starts.
        offset: u64,
    },
    /// A record announces more bytes than any record of its kind may have.
    #[error("the record at byte {offset} claims {length} bytes, over the {max}-byte limit")]
    RecordTooLong {
        /// Where the record starts.
        offset: u64,
        /// The length it claims.
        length: u64,
        /// The limit.
        max: usize,
    },
    /// A record's contents are malformed; `problem` says how.
    #[error("the record at byte {offset} is malformed: {problem}")]
    BadRecord {
        /// Where the record starts.
        offset: u64,
        /// What is wrong.
        problem: String,
    },
    /// The first record is not a header, or a header comes again.
    #[error("the record at byte {offset} is out of place: {problem}")]
    OutOfOrder {
        /// Where the record starts.
        offset: u64,
        /// What was expected.
        problem: String,
    },
    /// Reading the bytes failed (not a cut: the reader reported an error).
    #[error("cannot read the replay: {0}")]
    Io(String),
}

/// Why a recording ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// Every frame asked for was played.
    Finished,
    /// A peer left or was lost.
    Disconnect,
    /// The user stopped the match (Ctrl-C) or the program failed.
    Interrupted,
}

impl EndReason {
    fn code(self) -> u8 {
        match self {
            EndReason::Finished => 0,
            EndReason::Disconnect => 1,
            EndReason::Interrupted => 2,
        }
    }

    fn from_code(code: u8) -> Option<EndReason> {
        match code {
            0 => Some(EndReason::Finished),
            1 => Some(EndReason::Disconnect),
            2 => Some(EndReason::Interrupted),
            _ => None,
        }
    }

    /// `finished`, `disconnect` or `interrupted`.
    pub fn name(self) -> &'static str {
        match self {
            EndReason::Finished => "finished",
            EndReason::Disconnect => "disconnect",
            EndReason::Interrupted => "interrupted",
        }
    }
}

/// Everything about a match known before its first frame.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayHeader {
    /// The netcade version that recorded it.
    pub netcade_version: String,
    /// The core's name (`Duel`).
    pub core_name: String,
    /// The core's version (`0.1.0`).
    pub core_version: String,
    /// Where the core was when recorded (playback looks there first).
    pub core_path: String,
    /// The content's file name (empty when the core ran without content).
    pub content_name: String,
    /// Where the content was when recorded (playback looks there first).
    pub content_path: String,
    /// The xxh3 of the content file's bytes (zero without content).
    pub content_hash: Checksum,
    /// The core options in effect (key, value), as the match ran them.
    pub core_options: Vec<(String, String)>,
    /// Players whose inputs each frame holds (1–4).
    pub players: u8,
    /// The core's frame rate.
    pub frames_per_second: f64,
    /// The core's audio sample rate.
    pub sample_rate: f64,
    /// When the recording began, in seconds since 1970-01-01 UTC.
    pub recorded_at_unix: u64,
    /// The players' names or addresses where known (player 1 first).
    pub player_names: Vec<String>,
    /// The frame the recording starts at: 0 for the players of a match,
    /// the frame of the host's savestate for a spectator who joined later.
    /// Frames are numbered as in the match, so replays of one match line up.
    pub start_frame: Frame,
    /// The state at the start of [`ReplayHeader::start_frame`] (before frame
    /// 0: the state every machine loaded).
    pub start_state: Vec<u8>,
    /// The checksum of the game's memory in that state.
    pub start_memory_checksum: Checksum,
}

impl ReplayHeader {
    /// The header of a recording that starts at `frame` from `state`, whose
    /// memory checksum is `memory` (known once the first frame is about to
    /// run).
    pub fn starting_at(self, frame: Frame, state: &[u8], memory: Checksum) -> ReplayHeader {
        ReplayHeader {
            start_frame: frame,
            start_state: state.to_vec(),
            start_memory_checksum: memory,
            ..self
        }
    }
}

/// The checksums of the game at the start of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// The frame, before it ran.
    pub frame: Frame,
    /// The game memory's checksum.
    pub memory: Checksum,
    /// The picture's checksum, when the recorder had it (the last picture
    /// drawn before the frame).
    pub video: Option<Checksum>,
}

/// One record of a replay, as the bytes hold it.
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    /// The header: always first, exactly once (boxed: it is far larger than
    /// the per-second records).
    Header(Box<ReplayHeader>),
    /// Inputs of consecutive frames from `first`, `players` per frame.
    Inputs {
        /// The first frame.
        first: Frame,
        /// Inputs per frame (the header's player count).
        players: u8,
        /// The buttons, frame by frame, player by player.
        buttons: Vec<Buttons>,
    },
    /// Checksums of a frame.
    Checkpoint(Checkpoint),
    /// A desync repair: at the start of `frame` the game loaded `state`
    /// (the host's). Checkpoints of `frame` and later written before it are
    /// superseded.
    Repair {
        /// The frame the state belongs to.
        frame: Frame,
        /// The game memory's checksum once the state is loaded (as
        /// `checksum::memory_checksum` takes it), which a player checks
        /// before trusting the state; absent before format version 3.
        memory: Option<Checksum>,
        /// The state loaded.
        state: Vec<u8>,
    },
    /// A player left: from `frame` on their buttons are NONE.
    PlayerLeft {
        /// The first frame without them.
        frame: Frame,
        /// The player (0-based).
        player: u8,
    },
    /// The recording ended after `frames` frames.
    End {
        /// Frames recorded.
        frames: u32,
        /// Why it ended.
        reason: EndReason,
    },
}

const KIND_HEADER: u8 = 1;
const KIND_INPUTS: u8 = 2;
const KIND_CHECKPOINT: u8 = 3;
const KIND_REPAIR: u8 = 4;
const KIND_PLAYER_LEFT: u8 = 5;
const KIND_END: u8 = 6;

/// The most bytes a record of `kind` may have, or `None` for unknown kinds.
pub(crate) fn max_payload(kind: u8) -> Option<usize> {
    match kind {
        KIND_HEADER => Some(MAX_RECORD_BYTES),
        // 10 + 10 bytes of varints, then at most 1 + 5·16 bits an input.
        KIND_INPUTS => Some(20 + (MAX_FRAMES_PER_RECORD as usize * MAX_PLAYERS * 81).div_ceil(8)),
        KIND_CHECKPOINT => Some(32),
        KIND_REPAIR => Some(5 + start_state_blob_limit()),
        KIND_PLAYER_LEFT => Some(6),
        KIND_END => Some(6),
        _ => None,
    }
}

/// The bytes a replay file starts with.
pub fn preamble() -> [u8; PREAMBLE_SIZE] {
    let mut bytes = [0; PREAMBLE_SIZE];
    bytes[..MAGIC.len()].copy_from_slice(&MAGIC);
    bytes[MAGIC.len()..].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes
}

/// Checks a file's first [`PREAMBLE_SIZE`] bytes and returns the format
/// version they name.
pub fn check_preamble(bytes: &[u8]) -> Result<u16, ReplayError> {
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        return Err(ReplayError::NotAReplay);
    }
    let Some(version) = bytes.get(MAGIC.len()..PREAMBLE_SIZE) else {
        return Err(ReplayError::HeaderCut {
            offset: bytes.len() as u64,
        });
    };
    let found = u16::from_le_bytes([version[0], version[1]]);
    if !(OLDEST_READABLE_VERSION..=FORMAT_VERSION).contains(&found) {
        return Err(ReplayError::UnsupportedVersion { found });
    }
    Ok(found)
}

fn put_text(out: &mut Vec<u8>, text: &str) {
    // Longer texts are cut (at a character boundary) rather than refused:
    // a recording must not fail over a long path.
    let mut end = text.len().min(MAX_TEXT_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    put_varint(out, end as u64);
    out.extend_from_slice(&text.as_bytes()[..end]);
}

/// Appends `record`'s bytes (kind, length, payload, check) to `out`.
pub fn encode_record(record: &Record, out: &mut Vec<u8>) {
    let mut payload = Vec::new();
    let kind = match record {
        Record::Header(header) => {
            put_header(&mut payload, header);
            KIND_HEADER
        }
        Record::Inputs {
            first,
            players,
            buttons,
        } => {
            put_inputs(&mut payload, *first, *players, buttons);
            KIND_INPUTS
        }
        Record::Checkpoint(checkpoint) => {
            put_checkpoint(&mut payload, checkpoint);
            KIND_CHECKPOINT
        }
        Record::Repair {
            frame,
            memory,
            state,
        } => {
            put_varint(&mut payload, u64::from(frame.number()));
            put_optional_checksum(&mut payload, *memory);
            payload.extend_from_slice(&state_blob::compress(state));
            KIND_REPAIR
        }
        Record::PlayerLeft { frame, player } => {
            put_varint(&mut payload, u64::from(frame.number()));
            payload.push(*player);
            KIND_PLAYER_LEFT
        }
        Record::End { frames, reason } => {
            put_varint(&mut payload, u64::from(*frames));
            payload.push(reason.code());
            KIND_END
        }
    };
    let start = out.len();
    out.push(kind);
    put_varint(out, payload.len() as u64);
    out.extend_from_slice(&payload);
    let check = record_check(out[start], &out[start + 1..]);
    out.extend_from_slice(&check.to_le_bytes());
}

fn put_header(payload: &mut Vec<u8>, header: &ReplayHeader) {
    put_text(payload, &header.netcade_version);
    put_text(payload, &header.core_name);
    put_text(payload, &header.core_version);
    put_text(payload, &header.core_path);
    put_text(payload, &header.content_name);
    put_text(payload, &header.content_path);
    payload.extend_from_slice(&header.content_hash.0.to_le_bytes());
    let options = &header.core_options[..header.core_options.len().min(MAX_CORE_OPTIONS)];
    put_varint(payload, options.len() as u64);
    for (key, value) in options {
        put_text(payload, key);
        put_text(payload, value);
    }
    payload.push(header.players);
    payload.extend_from_slice(&header.frames_per_second.to_le_bytes());
    payload.extend_from_slice(&header.sample_rate.to_le_bytes());
    payload.extend_from_slice(&header.recorded_at_unix.to_le_bytes());
    let names = &header.player_names[..header.player_names.len().min(MAX_PLAYERS)];
    payload.push(names.len() as u8);
    for name in names {
        put_text(payload, name);
    }
    put_varint(payload, u64::from(header.start_frame.number()));
    payload.extend_from_slice(&header.start_memory_checksum.0.to_le_bytes());
    let blob = state_blob::compress(&header.start_state);
    put_varint(payload, blob.len() as u64);
    payload.extend_from_slice(&blob);
}

fn put_inputs(payload: &mut Vec<u8>, first: Frame, players: u8, buttons: &[Buttons]) {
    put_varint(payload, u64::from(first.number()));
    put_varint(payload, buttons.len() as u64);
    let mut bits = BitWriter::new(payload);
    // Each player's input against their own previous frame's, from
    // NONE at the record's start, as the protocol's datagrams do.
    let mut previous = [Buttons::NONE; MAX_PLAYERS];
    let players = usize::from(players).clamp(1, MAX_PLAYERS);
    for (index, &now) in buttons.iter().enumerate() {
        put_toggles(&mut bits, previous[index % players], now);
        previous[index % players] = now;
    }
}

fn put_checkpoint(payload: &mut Vec<u8>, checkpoint: &Checkpoint) {
    put_varint(payload, u64::from(checkpoint.frame.number()));
    payload.extend_from_slice(&checkpoint.memory.0.to_le_bytes());
    put_optional_checksum(payload, checkpoint.video);
}

/// A presence byte (0 or 1), then the checksum if present.
fn put_optional_checksum(payload: &mut Vec<u8>, checksum: Option<Checksum>) {
    match checksum {
        Some(checksum) => {
            payload.push(1);
            payload.extend_from_slice(&checksum.0.to_le_bytes());
        }
        None => payload.push(0),
    }
}

/// Reads fields from a record's payload; every failure names the problem.
struct Fields<'a> {
    bytes: &'a [u8],
    pos: usize,
}

type FieldResult<T> = Result<T, String>;

impl<'a> Fields<'a> {
    fn take(&mut self, count: usize, what: &str) -> FieldResult<&'a [u8]> {
        if count > self.bytes.len() - self.pos {
            return Err(format!("{what} runs past the record's end"));
        }
        let slice = &self.bytes[self.pos..self.pos + count];
        self.pos += count;
        Ok(slice)
    }

    fn u8(&mut self, what: &str) -> FieldResult<u8> {
        Ok(self.take(1, what)?[0])
    }

    fn u64(&mut self, what: &str) -> FieldResult<u64> {
        let bytes = self.take(8, what)?;
        Ok(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }

    /// A checksum after a presence byte (see `put_optional_checksum`).
    fn optional_checksum(&mut self, what: &str) -> FieldResult<Option<Checksum>> {
        match self.u8(what)? {
            0 => Ok(None),
            1 => Ok(Some(Checksum(self.u64(what)?))),
            other => Err(format!("{what}'s presence flag is {other} (0 or 1)")),
        }
    }

    fn f64(&mut self, what: &str) -> FieldResult<f64> {
        Ok(f64::from_bits(self.u64(what)?))
    }

    fn varint(&mut self, what: &str) -> FieldResult<u64> {
        let (value, used) =
            read_varint(&self.bytes[self.pos..]).map_err(|err| format!("{what}: {err}"))?;
        self.pos += used;
        Ok(value)
    }

    fn frame(&mut self, what: &str) -> FieldResult<Frame> {
        let value = self.varint(what)?;
        u32::try_from(value)
            .ok()
            .filter(|&frame| frame <= MAX_REPLAY_FRAMES)
            .map(Frame::new)
            .ok_or_else(|| format!("{what} {value} is beyond the {MAX_REPLAY_FRAMES}-frame limit"))
    }

    fn text(&mut self, what: &str) -> FieldResult<String> {
        let len = self.varint(what)?;
        if len > MAX_TEXT_BYTES as u64 {
            return Err(format!(
                "{what} claims {len} bytes, over the {MAX_TEXT_BYTES}-byte limit"
            ));
        }
        let bytes = self.take(len as usize, what)?;
        let text = String::from_utf8(bytes.to_vec()).map_err(|_| format!("{what} is not UTF-8"))?;
        // Replays are shared, and `replay info` and the launcher print these:
        // a control or format character would steer the reader's terminal
        // or reorder what it shows.
        if !is_printable(&text) {
            return Err(format!(
                "{what} holds a control character or a format character"
            ));
        }
        Ok(text)
    }

    fn rest(&mut self) -> &'a [u8] {
        let rest = &self.bytes[self.pos..];
        self.pos = self.bytes.len();
        rest
    }

    fn finish(&self) -> FieldResult<()> {
        match self.bytes.len() - self.pos {
            0 => Ok(()),
            extra => Err(format!("{extra} unexpected bytes at the record's end")),
        }
    }
}

/// Reads a record of `kind` from its checked payload, in format `version`.
/// `players` is the header's player count (inputs records need it; `None`
/// before the header).
pub(crate) fn decode_payload(
    kind: u8,
    payload: &[u8],
    version: u16,
    players: Option<u8>,
) -> Result<Record, String> {
    let mut fields = Fields {
        bytes: payload,
        pos: 0,
    };
    let record = match kind {
        KIND_HEADER => Record::Header(Box::new(read_header(&mut fields, version)?)),
        KIND_INPUTS => read_inputs(&mut fields, players.ok_or("inputs before the header")?)?,
        KIND_CHECKPOINT => Record::Checkpoint(read_checkpoint(&mut fields)?),
        KIND_REPAIR => {
            let frame = fields.frame("the repair's frame")?;
            let memory = if version >= 3 {
                fields.optional_checksum("the repair's memory checksum")?
            } else {
                None
            };
            let state = state_blob::decompress(fields.rest(), MAX_STATE_BYTES)
                .map_err(|err| format!("the repair's state: {err}"))?;
            Record::Repair {
                frame,
                memory,
                state,
            }
        }
        KIND_PLAYER_LEFT => read_player_left(&mut fields, players)?,
        KIND_END => {
            let frames = fields.frame("the frame count")?.number();
            let code = fields.u8("the end reason")?;
            let reason =
                EndReason::from_code(code).ok_or_else(|| format!("unknown end reason {code}"))?;
            Record::End { frames, reason }
        }
        other => return Err(format!("unknown record kind {other}")),
    };
    fields.finish()?;
    Ok(record)
}

fn read_header(fields: &mut Fields<'_>, version: u16) -> FieldResult<ReplayHeader> {
    let netcade_version = fields.text("the netcade version")?;
    let core_name = fields.text("the core name")?;
    let core_version = fields.text("the core version")?;
    let core_path = fields.text("the core path")?;
    let content_name = fields.text("the content name")?;
    let content_path = fields.text("the content path")?;
    let content_hash = Checksum(fields.u64("the content hash")?);
    let core_options = read_core_options(fields)?;
    let players = fields.u8("the player count")?;
    if players == 0 || players as usize > MAX_PLAYERS {
        return Err(format!(
            "{players} players (a replay has 1 to {MAX_PLAYERS})"
        ));
    }
    let frames_per_second = fields.f64("the frame rate")?;
    if !FRAME_RATES.contains(&frames_per_second) {
        return Err(format!(
            "frame rate {frames_per_second} is not a rate a core runs at ({} to {} frames a second)",
            FRAME_RATES.start(),
            FRAME_RATES.end()
        ));
    }
    let sample_rate = fields.f64("the sample rate")?;
    if !SAMPLE_RATES.contains(&sample_rate) {
        return Err(format!(
            "sample rate {sample_rate} is not a rate a core plays sound at ({} to {} Hz)",
            SAMPLE_RATES.start(),
            SAMPLE_RATES.end()
        ));
    }
    let recorded_at_unix = fields.u64("the date")?;
    let player_names = read_player_names(fields)?;
    let start_frame = if version >= 2 {
        fields.frame("the start frame")?
    } else {
        Frame::new(0)
    };
    let start_memory_checksum = Checksum(fields.u64("the start state's checksum")?);
    let blob_len = fields.varint("the start state's length")?;
    let blob = fields.take(
        usize::try_from(blob_len).unwrap_or(usize::MAX),
        "the start state",
    )?;
    let start_state = state_blob::decompress(blob, MAX_STATE_BYTES)
        .map_err(|err| format!("the start state: {err}"))?;
    Ok(ReplayHeader {
        netcade_version,
        core_name,
        core_version,
        core_path,
        content_name,
        content_path,
        content_hash,
        core_options,
        players,
        frames_per_second,
        sample_rate,
        recorded_at_unix,
        player_names,
        start_frame,
        start_state,
        start_memory_checksum,
    })
}

fn read_core_options(fields: &mut Fields<'_>) -> FieldResult<Vec<(String, String)>> {
    let option_count = fields.varint("the core option count")?;
    if option_count > MAX_CORE_OPTIONS as u64 {
        return Err(format!(
            "{option_count} core options, over the limit of {MAX_CORE_OPTIONS}"
        ));
    }
    let mut core_options = Vec::new();
    for _ in 0..option_count {
        let key = fields.text("a core option key")?;
        let value = fields.text("a core option value")?;
        core_options.push((key, value));
    }
    Ok(core_options)
}

fn read_player_names(fields: &mut Fields<'_>) -> FieldResult<Vec<String>> {
    let name_count = fields.u8("the player name count")?;
    if name_count as usize > MAX_PLAYERS {
        return Err(format!("{name_count} player names, over {MAX_PLAYERS}"));
    }
    let mut player_names = Vec::new();
    for _ in 0..name_count {
        player_names.push(fields.text("a player name")?);
    }
    Ok(player_names)
}

fn read_inputs(fields: &mut Fields<'_>, players: u8) -> FieldResult<Record> {
    let first = fields.frame("the first frame")?;
    let count = fields.varint("the input count")?;
    let per_frame = u64::from(players);
    if count % per_frame != 0 {
        return Err(format!(
            "{count} inputs are not whole frames of {players} players"
        ));
    }
    let frames = count / per_frame;
    if frames > u64::from(MAX_FRAMES_PER_RECORD) {
        return Err(format!(
            "{frames} frames in one record, over the limit of {MAX_FRAMES_PER_RECORD}"
        ));
    }
    let bytes = fields.rest();
    // Every input takes at least one bit: a count the bytes cannot
    // hold is refused before anything is reserved.
    if count > bytes.len() as u64 * 8 {
        return Err(format!(
            "{count} inputs cannot fit in the record's {} bytes",
            bytes.len()
        ));
    }
    let mut bits = BitReader::new(bytes);
    let mut buttons = Vec::with_capacity(count as usize);
    let mut previous = [Buttons::NONE; MAX_PLAYERS];
    let slots = usize::from(players);
    for index in 0..count as usize {
        let now = read_toggles(&mut bits, previous[index % slots])
            .map_err(|err| format!("input {index}: {err}"))?;
        previous[index % slots] = now;
        buttons.push(now);
    }
    if bits.bytes_consumed() != bytes.len() {
        return Err(format!(
            "{} unexpected bytes after the inputs",
            bytes.len() - bits.bytes_consumed()
        ));
    }
    Ok(Record::Inputs {
        first,
        players,
        buttons,
    })
}

fn read_checkpoint(fields: &mut Fields<'_>) -> FieldResult<Checkpoint> {
    let frame = fields.frame("the checkpoint's frame")?;
    let memory = Checksum(fields.u64("the memory checksum")?);
    let video = fields.optional_checksum("the video checksum")?;
    Ok(Checkpoint {
        frame,
        memory,
        video,
    })
}

fn read_player_left(fields: &mut Fields<'_>, players: Option<u8>) -> FieldResult<Record> {
    let frame = fields.frame("the departure's frame")?;
    let player = fields.u8("the player")?;
    if let Some(players) = players {
        if player >= players {
            return Err(format!(
                "player {} left, but the replay has {players}",
                player + 1
            ));
        }
    }
    Ok(Record::PlayerLeft { frame, player })
}

/// The check bytes a record of `kind` with `length_and_payload` (the length
/// varint followed by the payload) must end with.
pub(crate) fn record_check(kind: u8, length_and_payload: &[u8]) -> u32 {
    let mut hasher = Xxh3::new();
    hasher.update(&[kind]);
    hasher.update(length_and_payload);
    hasher.digest() as u32
}
