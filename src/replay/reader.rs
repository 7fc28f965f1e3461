//! Reading a whole replay into memory. A file cut anywhere reads up to its
//! last whole record and says where it was cut; every other fault is an
//! error naming the byte offset of the record at fault.

use super::format::{
    check_preamble, decode_payload, max_payload, record_check, Checkpoint, EndReason, Record,
    ReplayError, ReplayHeader, MAX_EVENTS, MAX_REPLAY_FRAMES, MAX_STATE_BYTES, PREAMBLE_SIZE,
    RECORD_CHECK_SIZE,
};
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
    /// Where a cut-short file stops being whole (the byte after its last
    /// whole record), when it was cut in the middle of a record.
    pub cut_at: Option<u64>,
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
    let max = max_payload(kind).ok_or(ReplayError::UnknownRecord {
        kind,
        offset: start,
    })?;
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
            return Err(ReplayError::BadRecord {
                offset: start,
                problem: "its length is not a valid number".into(),
            });
        }
    }
    if length > max as u64 {
        return Err(ReplayError::RecordTooLong {
            offset: start,
            length,
            max,
        });
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
        return Err(ReplayError::BadRecordCheck { offset: start });
    }
    decode_payload(kind, &length_and_payload[length_bytes..], version, players)
        .map(Next::Record)
        .map_err(|problem| ReplayError::BadRecord {
            offset: start,
            problem,
        })
}

/// Reads a whole replay. A file cut inside a record is read up to its last
/// whole record ([`Replay::cut_at`] says where); any other fault is an error.
pub fn read_replay<R: Read>(reader: R) -> Result<Replay, ReplayError> {
    let mut input = Counted {
        inner: reader,
        offset: 0,
    };
    let mut preamble = [0u8; PREAMBLE_SIZE];
    let mut got = 0;
    while got < PREAMBLE_SIZE {
        match input.fill(&mut preamble[got..got + 1]) {
            Ok(()) => got += 1,
            Err(Short::Cut) => break,
            Err(Short::Failed(err)) => return Err(ReplayError::Io(err.to_string())),
        }
    }
    let version = check_preamble(&preamble[..got])?;
    let header = match read_record(&mut input, version, None)? {
        Next::Record(Record::Header(header)) => *header,
        Next::Record(_) => {
            return Err(ReplayError::OutOfOrder {
                offset: PREAMBLE_SIZE as u64,
                problem: "a replay starts with its header".into(),
            })
        }
        Next::End | Next::Cut => {
            return Err(ReplayError::HeaderCut {
                offset: input.offset,
            })
        }
    };
    let players = header.players;
    let start_frame = header.start_frame;
    let mut replay = Replay {
        header,
        buttons: Vec::new(),
        checkpoints: Vec::new(),
        events: Vec::new(),
        end: None,
        cut_at: None,
        bytes: input.offset,
    };
    let mut repair_bytes = 0usize;
    loop {
        let start = input.offset;
        let record = match read_record(&mut input, version, Some(players))? {
            Next::Record(record) => record,
            Next::End => break,
            Next::Cut => {
                replay.cut_at = Some(start);
                break;
            }
        };
        let out_of_order = |problem: String| ReplayError::OutOfOrder {
            offset: start,
            problem,
        };
        if replay.end.is_some() {
            return Err(out_of_order("a record after the end record".into()));
        }
        let frame_before_start = |frame: Frame, what: &str| {
            (frame < start_frame).then(|| {
                out_of_order(format!(
                    "{what} of frame {}, before the recording's start frame {}",
                    frame.number(),
                    start_frame.number()
                ))
            })
        };
        match record {
            Record::Header(_) => return Err(out_of_order("a second header".into())),
            Record::Inputs { first, buttons, .. } => {
                let expected = replay.end_frame().number();
                if first.number() != expected {
                    return Err(out_of_order(format!(
                        "inputs from frame {} where frame {expected} comes next",
                        first.number()
                    )));
                }
                let frames = buttons.len() / usize::from(players);
                if u64::from(expected) + frames as u64 > u64::from(MAX_REPLAY_FRAMES) {
                    return Err(out_of_order(format!(
                        "more than the {MAX_REPLAY_FRAMES} frames a replay may hold"
                    )));
                }
                replay.buttons.extend_from_slice(&buttons);
            }
            Record::Checkpoint(checkpoint) => {
                if let Some(error) = frame_before_start(checkpoint.frame, "a checkpoint") {
                    return Err(error);
                }
                if let Some(last) = replay.checkpoints.last() {
                    if checkpoint.frame <= last.frame {
                        return Err(out_of_order(format!(
                            "a checkpoint of frame {} after one of frame {}",
                            checkpoint.frame.number(),
                            last.frame.number()
                        )));
                    }
                }
                replay.checkpoints.push(checkpoint);
            }
            Record::Repair { frame, state } => {
                if let Some(error) = frame_before_start(frame, "a desync repair") {
                    return Err(error);
                }
                if replay.events.len() == MAX_EVENTS {
                    return Err(out_of_order(format!("more than {MAX_EVENTS} events")));
                }
                repair_bytes += state.len();
                if repair_bytes > MAX_REPAIR_BYTES {
                    return Err(out_of_order(format!(
                        "repair states over {MAX_REPAIR_BYTES} bytes in all"
                    )));
                }
                // The checksums of the frames it replaced are not the match's.
                replay
                    .checkpoints
                    .retain(|checkpoint| checkpoint.frame < frame);
                replay.events.push(ReplayEvent::Repair { frame, state });
            }
            Record::PlayerLeft { frame, player } => {
                if let Some(error) = frame_before_start(frame, "a departure") {
                    return Err(error);
                }
                if replay.events.len() == MAX_EVENTS {
                    return Err(out_of_order(format!("more than {MAX_EVENTS} events")));
                }
                replay
                    .events
                    .push(ReplayEvent::PlayerLeft { frame, player });
            }
            Record::End { frames, reason } => {
                if frames != replay.frames() {
                    return Err(out_of_order(format!(
                        "the end record counts {frames} frames, the replay holds {}",
                        replay.frames()
                    )));
                }
                replay.end = Some((frames, reason));
            }
        }
        replay.bytes = input.offset;
    }
    // Checkpoints past the last whole inputs (a cut file) cannot be reached.
    let end = replay.end_frame();
    replay
        .checkpoints
        .retain(|checkpoint| checkpoint.frame <= end);
    replay.events.sort_by_key(ReplayEvent::frame);
    Ok(replay)
}
