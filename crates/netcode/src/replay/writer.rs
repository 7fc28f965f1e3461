//! Writing a replay as the match goes: inputs are gathered for one second of
//! game time, then written with that second's checkpoint and flushed, so a
//! crash or a kill loses at most about a second.

use super::format::{
    encode_record, preamble, Checkpoint, EndReason, Record, ReplayHeader, MAX_EVENTS,
    MAX_FRAMES_PER_RECORD, MAX_REPLAY_FRAMES,
};
use super::reader::MAX_REPAIR_BYTES;
use crate::checksum::Checksum;
use crate::input::Buttons;
use crate::rollback::Frame;
use std::io::{self, Write};

/// Frames between checkpoints: one second at 60 fps, as the netplay
/// checksums.
pub const CHECKPOINT_INTERVAL: u32 = 60;

/// Streams a replay to `W`. See the module docs.
#[derive(Debug)]
pub struct ReplayWriter<W: Write> {
    out: W,
    players: u8,
    /// The header's start frame: the first frame recorded.
    start_frame: Frame,
    /// The next frame [`ReplayWriter::frame`] expects.
    next_frame: Frame,
    /// The first frame of `pending`.
    pending_first: Frame,
    pending: Vec<Buttons>,
    /// Frames gathered before a flush: one second of game time.
    frames_per_flush: u32,
    encoded: Vec<u8>,
    bytes_written: u64,
    /// Repairs and departures written (the reader takes [`MAX_EVENTS`]).
    events: usize,
    /// Bytes of repair states written (the reader takes [`MAX_REPAIR_BYTES`]).
    repair_bytes: usize,
    /// The memory checksum of the last frame recorded, when it was not a
    /// checkpoint's: [`ReplayWriter::finish`] writes it as the last
    /// checkpoint, so verifying checks the frames after the last regular
    /// one too.
    last_memory: Option<(Frame, Checksum)>,
}

/// What the writer answers instead of writing a file the reader would refuse.
fn over_limit(what: String) -> io::Error {
    io::Error::other(format!("the replay is full: {what}"))
}

impl<W: Write> ReplayWriter<W> {
    /// Starts a replay: writes the preamble and `header`, and flushes.
    pub fn new(mut out: W, header: &ReplayHeader) -> io::Result<Self> {
        let mut encoded = preamble().to_vec();
        encode_record(&Record::Header(Box::new(header.clone())), &mut encoded);
        out.write_all(&encoded)?;
        out.flush()?;
        let frames_per_flush =
            (header.frames_per_second.round() as u32).clamp(1, MAX_FRAMES_PER_RECORD);
        Ok(ReplayWriter {
            out,
            players: header.players,
            start_frame: header.start_frame,
            next_frame: header.start_frame,
            pending_first: header.start_frame,
            pending: Vec::new(),
            frames_per_flush,
            bytes_written: encoded.len() as u64,
            encoded: Vec::new(),
            events: 0,
            repair_bytes: 0,
            last_memory: None,
        })
    }

    /// Flushes every `frames` frames instead of every second: a broadcast
    /// publishes each flush, and viewers are that much behind.
    pub fn with_flush_every(mut self, frames: u32) -> Self {
        self.frames_per_flush = frames.clamp(1, MAX_FRAMES_PER_RECORD);
        self
    }

    /// The output, to take what was flushed into it.
    pub fn output(&mut self) -> &mut W {
        &mut self.out
    }

    /// Frames recorded so far (from the header's start frame).
    pub fn frames(&self) -> u32 {
        self.next_frame.number() - self.start_frame.number()
    }

    /// Bytes written to `W` so far (what is still gathered is not counted).
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    /// Records final frame `frame` (the next one: frames come in order from
    /// the header's start frame) run
    /// with `inputs` (missing players hold nothing); `memory` is the game
    /// memory's checksum at its start and `video` the last picture's, kept
    /// every [`CHECKPOINT_INTERVAL`] frames.
    pub fn frame(
        &mut self,
        frame: Frame,
        inputs: &[Buttons],
        memory: Option<Checksum>,
        video: Option<Checksum>,
    ) -> io::Result<()> {
        if frame != self.next_frame {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "frame {} recorded where frame {} was expected",
                    frame.number(),
                    self.next_frame.number()
                ),
            ));
        }
        if frame.number() >= MAX_REPLAY_FRAMES {
            return Err(over_limit(format!(
                "it holds at most {MAX_REPLAY_FRAMES} frames"
            )));
        }
        let checkpoint_frame = frame.number().is_multiple_of(CHECKPOINT_INTERVAL);
        self.last_memory = memory
            .filter(|_| !checkpoint_frame)
            .map(|memory| (frame, memory));
        if let Some(memory) = memory.filter(|_| checkpoint_frame) {
            encode_record(
                &Record::Checkpoint(Checkpoint {
                    frame,
                    memory,
                    video,
                }),
                &mut self.encoded,
            );
        }
        for player in 0..usize::from(self.players) {
            self.pending
                .push(inputs.get(player).copied().unwrap_or(Buttons::NONE));
        }
        self.next_frame = frame.next();
        if self.next_frame.number() - self.pending_first.number() >= self.frames_per_flush {
            self.flush()?;
        }
        Ok(())
    }

    /// Records a desync repair: the game loaded `state` at the start of
    /// `frame` (a frame already recorded), which left its memory with the
    /// checksum `memory`.
    pub fn repair(&mut self, frame: Frame, state: &[u8], memory: Checksum) -> io::Result<()> {
        self.count_event()?;
        if self.repair_bytes + state.len() > MAX_REPAIR_BYTES {
            return Err(over_limit(format!(
                "its repair states may take {MAX_REPAIR_BYTES} bytes in all"
            )));
        }
        self.repair_bytes += state.len();
        // A checksum taken before the repair is superseded by it.
        self.last_memory = self.last_memory.filter(|(last, _)| *last < frame);
        self.encode_pending();
        encode_record(
            &Record::Repair {
                frame,
                memory: Some(memory),
                state: state.to_vec(),
            },
            &mut self.encoded,
        );
        self.flush()
    }

    /// Records that `player` (0-based) left, holding nothing from `frame` on.
    pub fn player_left(&mut self, frame: Frame, player: u8) -> io::Result<()> {
        self.count_event()?;
        self.encode_pending();
        encode_record(&Record::PlayerLeft { frame, player }, &mut self.encoded);
        self.flush()
    }

    fn count_event(&mut self) -> io::Result<()> {
        if self.events == MAX_EVENTS {
            return Err(over_limit(format!("it holds at most {MAX_EVENTS} events")));
        }
        self.events += 1;
        Ok(())
    }

    /// Ends the replay with the last frame's checkpoint (when its memory
    /// checksum was given and it is not a checkpoint's already) and its end
    /// record, flushes, and hands back `W` and the bytes written in all.
    pub fn finish(mut self, reason: EndReason) -> io::Result<(W, u64)> {
        if let Some((frame, memory)) = self.last_memory.take() {
            encode_record(
                &Record::Checkpoint(Checkpoint {
                    frame,
                    memory,
                    video: None,
                }),
                &mut self.encoded,
            );
        }
        self.encode_pending();
        encode_record(
            &Record::End {
                frames: self.frames(),
                reason,
            },
            &mut self.encoded,
        );
        self.flush()?;
        Ok((self.out, self.bytes_written))
    }

    fn encode_pending(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        encode_record(
            &Record::Inputs {
                first: self.pending_first,
                players: self.players,
                buttons: std::mem::take(&mut self.pending),
            },
            &mut self.encoded,
        );
        self.pending_first = self.next_frame;
    }

    /// Writes everything gathered and flushes `W`.
    pub fn flush(&mut self) -> io::Result<()> {
        self.encode_pending();
        self.out.write_all(&self.encoded)?;
        self.bytes_written += self.encoded.len() as u64;
        self.encoded.clear();
        self.out.flush()
    }
}
