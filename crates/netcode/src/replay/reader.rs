//! Reading a whole replay into memory. A file cut anywhere, or whose bytes
//! are damaged after its header (a record whose check, kind or length is
//! wrong), reads up to its last whole record and says where it stops; a
//! record whose bytes are intact but say something impossible is an error
//! naming its byte offset, as is any fault in the header.

use super::format::{
    check_preamble, decode_payload, max_payload, record_check, Checkpoint, EndReason, Record,
    ReplayError, ReplayHeader, MAX_EVENTS, MAX_REPLAY_FRAMES, MAX_STATE_BYTES, PREAMBLE_SIZE,
    RECORD_CHECK_SIZE,
};
use crate::checksum::Checksum;
use crate::input::{Buttons, FrameInputs, MAX_PLAYERS};
use crate::rollback::Frame;
use std::io::{self, Read};

/// The most bytes of repair states a replay holds in all.
pub const MAX_REPAIR_BYTES: usize = 4 * MAX_STATE_BYTES;

/// Something that changed the simulation outside inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplayEvent {
    /// A desync repair: at the start of `frame` the game loaded `state`.
    Repair {
        /// The frame.
        frame: Frame,
        /// The game memory's checksum once the state is loaded (format
        /// version 3 on).
        memory: Option<Checksum>,
        /// The state loaded.
        state: Vec<u8>,
    },
    /// `player` (0-based) left before `frame`.
    PlayerLeft {
        /// The first frame without them.
        frame: Frame,
        /// The player.
        player: u8,
    },
}

impl ReplayEvent {
    /// The frame at whose start the event happens.
    pub fn frame(&self) -> Frame {
        match self {
            ReplayEvent::Repair { frame, .. } | ReplayEvent::PlayerLeft { frame, .. } => *frame,
        }
    }
}

/// A replay read into memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    /// The header.
    pub header: ReplayHeader,
    /// Every frame's buttons from the header's start frame on,
    /// `header.players` per frame.
    buttons: Vec<Buttons>,
    /// Checksums proving playback faithful, in frame order.
    pub checkpoints: Vec<Checkpoint>,
    /// Repairs and departures, in frame order.
    pub events: Vec<ReplayEvent>,
    /// The end record: frames recorded and why it ended; `None` when the
    /// file stops without one (cut short, or the recorder was killed).
    pub end: Option<(u32, EndReason)>,
    /// Where a cut-short or damaged file stops being whole (the byte after
    /// its last whole record), when it was cut in the middle of a record or
    /// the record there is damaged.
    pub cut_at: Option<u64>,
    /// What is wrong with the record at [`Replay::cut_at`] when its bytes
    /// are damaged rather than cut short.
    pub damage: Option<ReplayError>,
    /// Bytes read (whole records only).
    pub bytes: u64,
}

impl Replay {
    /// How many frames' inputs the replay holds (from its start frame).
    pub fn frames(&self) -> u32 {
        (self.buttons.len() / usize::from(self.header.players)) as u32
    }

    /// The first frame the replay holds: its start state is at the start of
    /// it (0 unless a spectator recorded it from a later frame).
    pub fn start_frame(&self) -> Frame {
        self.header.start_frame
    }

    /// The frame after the last one the replay holds: playback ends at its
    /// start.
    pub fn end_frame(&self) -> Frame {
        Frame::new(self.header.start_frame.number() + self.frames())
    }

    /// The buttons every player held during `frame`, numbered as in the
    /// match (players beyond the replay's hold nothing; so does everyone
    /// outside the frames the replay holds).
    pub fn inputs(&self, frame: Frame) -> FrameInputs {
        let players = usize::from(self.header.players);
        let mut inputs = [Buttons::NONE; MAX_PLAYERS];
        let Some(offset) = frame.number().checked_sub(self.header.start_frame.number()) else {
            return inputs;
        };
        let start = offset as usize * players;
        if let Some(row) = self.buttons.get(start..start + players) {
            inputs[..players].copy_from_slice(row);
        }
        inputs
    }

    /// Why the file stops being whole before its end, when it does:
    /// `cut short at byte N`, or `damaged: ` and what is wrong there.
    pub fn stops_short(&self) -> Option<String> {
        match (&self.damage, self.cut_at) {
            (Some(damage), _) => Some(format!("damaged: {damage}")),
            (None, Some(offset)) => Some(format!("cut short at byte {offset}")),
            (None, None) => None,
        }
    }

    /// The checkpoint of `frame`, if one was recorded.
    pub fn checkpoint(&self, frame: Frame) -> Option<&Checkpoint> {
        self.checkpoints
            .binary_search_by_key(&frame, |checkpoint| checkpoint.frame)
            .ok()
            .map(|index| &self.checkpoints[index])
    }
}

/// Counts the bytes taken from `R`, so errors can name offsets.
struct Counted<R> {
    inner: R,
    offset: u64,
}

/// A read that stopped early: the bytes end (a cut) or the reader failed.
enum Short {
    Cut,
    Failed(io::Error),
}

impl<R: Read> Counted<R> {
    /// Fills `buf` completely, or says why not.
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), Short> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.inner.read(&mut buf[filled..]) {
                Ok(0) => return Err(Short::Cut),
                Ok(read) => {
                    filled += read;
                    self.offset += read as u64;
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(Short::Failed(err)),
            }
        }
        Ok(())
    }

    /// Appends exactly `count` bytes to `out`, growing it as bytes arrive
    /// rather than by the count up front.
    fn append(&mut self, count: usize, out: &mut Vec<u8>) -> Result<(), Short> {
        let mut chunk = [0u8; 64 * 1024];
        let mut left = count;
        while left > 0 {
            let step = left.min(chunk.len());
            self.fill(&mut chunk[..step])?;
            out.extend_from_slice(&chunk[..step]);
            left -= step;
        }
        Ok(())
    }
}

/// One record read from the stream.
enum Next {
    Record(Record),
    /// The bytes end cleanly between records.
    End,
    /// The bytes end inside a record.
    Cut,
    /// The record's framing or check is wrong: its bytes were damaged.
    Damaged(ReplayError),
}

fn read_record<R: Read>(
    input: &mut Counted<R>,
    version: u16,
    players: Option<u8>,
) -> Result<Next, ReplayError> {
    let start = input.offset;
    let failed = |err: io::Error| ReplayError::Io(err.to_string());
    let mut kind = [0u8];
    match input.fill(&mut kind) {
        Ok(()) => {}
        Err(Short::Cut) => return Ok(Next::End),
        Err(Short::Failed(err)) => return Err(failed(err)),
    }
    let kind = kind[0];
    let Some(max) = max_payload(kind) else {
        return Ok(Next::Damaged(ReplayError::UnknownRecord {
            kind,
            offset: start,
        }));
    };
    // The length varint, kept for the check.
    let mut length_and_payload = Vec::with_capacity(16);
    let mut length = 0u64;
    for index in 0..10 {
        let mut byte = [0u8];
        match input.fill(&mut byte) {
            Ok(()) => {}
            Err(Short::Cut) => return Ok(Next::Cut),
            Err(Short::Failed(err)) => return Err(failed(err)),
        }
        length_and_payload.push(byte[0]);
        length |= u64::from(byte[0] & 0x7F) << (7 * index);
        if byte[0] & 0x80 == 0 {
            break;
        }
        if index == 9 {
            return Ok(Next::Damaged(ReplayError::BadRecord {
                offset: start,
                problem: "its length is not a valid number".into(),
            }));
        }
    }
    if length > max as u64 {
        return Ok(Next::Damaged(ReplayError::RecordTooLong {
            offset: start,
            length,
            max,
        }));
    }
    let length_bytes = length_and_payload.len();
    match input.append(length as usize, &mut length_and_payload) {
        Ok(()) => {}
        Err(Short::Cut) => return Ok(Next::Cut),
        Err(Short::Failed(err)) => return Err(failed(err)),
    }
    let mut check = [0u8; RECORD_CHECK_SIZE];
    match input.fill(&mut check) {
        Ok(()) => {}
        Err(Short::Cut) => return Ok(Next::Cut),
        Err(Short::Failed(err)) => return Err(failed(err)),
    }
    if u32::from_le_bytes(check) != record_check(kind, &length_and_payload) {
        return Ok(Next::Damaged(ReplayError::BadRecordCheck { offset: start }));
    }
    decode_payload(kind, &length_and_payload[length_bytes..], version, players)
        .map(Next::Record)
        .map_err(|problem| ReplayError::BadRecord {
            offset: start,
            problem,
        })
}

/// Reads a whole replay. A file cut inside a record, or damaged after its
/// header, is read up to its last whole record ([`Replay::cut_at`] says
/// where, [`Replay::damage`] what was damaged); any other fault is an error.
pub fn read_replay<R: Read>(reader: R) -> Result<Replay, ReplayError> {
    let mut input = Counted {
        inner: reader,
        offset: 0,
    };
    let version = read_preamble(&mut input)?;
    let header = read_header(&mut input, version)?;
    let players = header.players;
    let mut replay = Assembly {
        replay: Replay {
            header,
            buttons: Vec::new(),
            checkpoints: Vec::new(),
            events: Vec::new(),
            end: None,
            cut_at: None,
            damage: None,
            bytes: input.offset,
        },
        repair_bytes: 0,
    };
    loop {
        let start = input.offset;
        match read_record(&mut input, version, Some(players))? {
            Next::Record(record) => replay.add(record, start)?,
            Next::End => break,
            Next::Cut => {
                replay.replay.cut_at = Some(start);
                break;
            }
            Next::Damaged(damage) => {
                replay.replay.cut_at = Some(start);
                replay.replay.damage = Some(damage);
                break;
            }
        }
        replay.replay.bytes = input.offset;
    }
    Ok(replay.finish())
}

/// Reads only a replay's preamble and header: what a list of replays
/// shows, without reading the inputs after it. The header's own bounds
/// hold (its record's length is checked before it is read); any fault in
/// it is an error.
pub fn read_replay_header<R: Read>(reader: R) -> Result<ReplayHeader, ReplayError> {
    let mut input = Counted {
        inner: reader,
        offset: 0,
    };
    let version = read_preamble(&mut input)?;
    read_header(&mut input, version)
}

/// The records `bytes` hold, whole (a broadcast's message: records as
/// the writer flushed them, after the header, of a match of `players`
/// players). Cut or damaged bytes are an error.
pub fn read_records(bytes: &[u8], players: u8) -> Result<Vec<Record>, ReplayError> {
    let mut input = Counted {
        inner: bytes,
        offset: 0,
    };
    let mut records = Vec::new();
    loop {
        let start = input.offset;
        match read_record(&mut input, super::format::FORMAT_VERSION, Some(players))? {
            Next::Record(record) => records.push(record),
            Next::End => return Ok(records),
            Next::Cut => {
                return Err(ReplayError::BadRecord {
                    offset: start,
                    problem: "the record is cut short".into(),
                })
            }
            Next::Damaged(damage) => return Err(damage),
        }
    }
}

/// The format version the preamble names, if this build reads it.
fn read_preamble<R: Read>(input: &mut Counted<R>) -> Result<u16, ReplayError> {
    let mut preamble = [0u8; PREAMBLE_SIZE];
    let mut got = 0;
    while got < PREAMBLE_SIZE {
        match input.fill(&mut preamble[got..got + 1]) {
            Ok(()) => got += 1,
            Err(Short::Cut) => break,
            Err(Short::Failed(err)) => return Err(ReplayError::Io(err.to_string())),
        }
    }
    check_preamble(&preamble[..got])
}

/// The first record, which must be the header.
fn read_header<R: Read>(input: &mut Counted<R>, version: u16) -> Result<ReplayHeader, ReplayError> {
    match read_record(input, version, None)? {
        Next::Record(Record::Header(header)) => Ok(*header),
        Next::Record(_) => Err(ReplayError::OutOfOrder {
            offset: PREAMBLE_SIZE as u64,
            problem: "a replay starts with its header".into(),
        }),
        Next::Damaged(damage) => Err(damage),
        Next::End | Next::Cut => Err(ReplayError::HeaderCut {
            offset: input.offset,
        }),
    }
}

/// A replay being read: each record after the header joins it in order.
struct Assembly {
    replay: Replay,
    /// Bytes of repair states so far.
    repair_bytes: usize,
}

/// A record at byte `offset` that cannot come where it does.
fn out_of_order(offset: u64, problem: String) -> ReplayError {
    ReplayError::OutOfOrder { offset, problem }
}

impl Assembly {
    /// Adds the record read at byte `offset`, if it may come next.
    fn add(&mut self, record: Record, offset: u64) -> Result<(), ReplayError> {
        if self.replay.end.is_some() {
            return Err(out_of_order(offset, "a record after the end record".into()));
        }
        let result = match record {
            Record::Header(_) => Err("a second header".to_string()),
            Record::Inputs { first, buttons, .. } => self.add_inputs(first, &buttons),
            Record::Checkpoint(checkpoint) => self.add_checkpoint(checkpoint),
            Record::Repair {
                frame,
                memory,
                state,
            } => self.add_repair(frame, memory, state),
            Record::PlayerLeft { frame, player } => self.add_departure(frame, player),
            Record::End { frames, reason } => self.add_end(frames, reason),
        };
        result.map_err(|problem| out_of_order(offset, problem))
    }

    fn add_inputs(&mut self, first: Frame, buttons: &[Buttons]) -> Result<(), String> {
        let expected = self.replay.end_frame().number();
        if first.number() != expected {
            return Err(format!(
                "inputs from frame {} where frame {expected} comes next",
                first.number()
            ));
        }
        let frames = buttons.len() / usize::from(self.replay.header.players);
        if u64::from(expected) + frames as u64 > u64::from(MAX_REPLAY_FRAMES) {
            return Err(format!(
                "more than the {MAX_REPLAY_FRAMES} frames a replay may hold"
            ));
        }
        self.replay.buttons.extend_from_slice(buttons);
        Ok(())
    }

    fn add_checkpoint(&mut self, checkpoint: Checkpoint) -> Result<(), String> {
        self.check_not_before_start(checkpoint.frame, "a checkpoint")?;
        if let Some(last) = self.replay.checkpoints.last() {
            if checkpoint.frame <= last.frame {
                return Err(format!(
                    "a checkpoint of frame {} after one of frame {}",
                    checkpoint.frame.number(),
                    last.frame.number()
                ));
            }
        }
        self.replay.checkpoints.push(checkpoint);
        Ok(())
    }

    fn add_repair(
        &mut self,
        frame: Frame,
        memory: Option<Checksum>,
        state: Vec<u8>,
    ) -> Result<(), String> {
        self.check_not_before_start(frame, "a desync repair")?;
        self.check_room_for_an_event()?;
        self.repair_bytes += state.len();
        if self.repair_bytes > MAX_REPAIR_BYTES {
            return Err(format!(
                "repair states over {MAX_REPAIR_BYTES} bytes in all"
            ));
        }
        // The checksums of the frames it replaced are not the match's.
        self.replay
            .checkpoints
            .retain(|checkpoint| checkpoint.frame < frame);
        self.replay.events.push(ReplayEvent::Repair {
            frame,
            memory,
            state,
        });
        Ok(())
    }

    fn add_departure(&mut self, frame: Frame, player: u8) -> Result<(), String> {
        self.check_not_before_start(frame, "a departure")?;
        self.check_room_for_an_event()?;
        self.replay
            .events
            .push(ReplayEvent::PlayerLeft { frame, player });
        Ok(())
    }

    fn add_end(&mut self, frames: u32, reason: EndReason) -> Result<(), String> {
        if frames != self.replay.frames() {
            return Err(format!(
                "the end record counts {frames} frames, the replay holds {}",
                self.replay.frames()
            ));
        }
        self.replay.end = Some((frames, reason));
        Ok(())
    }

    fn check_not_before_start(&self, frame: Frame, what: &str) -> Result<(), String> {
        let start_frame = self.replay.header.start_frame;
        if frame < start_frame {
            return Err(format!(
                "{what} of frame {}, before the recording's start frame {}",
                frame.number(),
                start_frame.number()
            ));
        }
        Ok(())
    }

    fn check_room_for_an_event(&self) -> Result<(), String> {
        if self.replay.events.len() == MAX_EVENTS {
            return Err(format!("more than {MAX_EVENTS} events"));
        }
        Ok(())
    }

    /// The replay read: checkpoints past the last whole inputs (a cut file)
    /// cannot be reached, and events go in frame order.
    fn finish(mut self) -> Replay {
        let end = self.replay.end_frame();
        self.replay
            .checkpoints
            .retain(|checkpoint| checkpoint.frame <= end);
        self.replay.events.sort_by_key(ReplayEvent::frame);
        self.replay
    }
}
