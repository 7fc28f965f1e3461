//! The one place where a frame leaves the emulator: [`run_frame`] runs a
//! frame and hands it to a [`FrameSink`]; [`FinalFrames`] does the same for
//! frames that are final as they run (a local run, a replay, a spectator's
//! frames, the debugger's and the window's steps) and says so. The netplay
//! driver calls [`run_frame`] for every frame it runs and tells the sink when
//! one becomes final. Local preemptive run-ahead runs its frames ahead
//! through [`FinalFrames`] too, into a sink that keeps what they hand over
//! until their buttons are confirmed ([`run_ahead`]). The audio ring, the
//! checksum log and the replay recorder are sinks; [`ChecksumLog`] is the one the demo and the tests
//! compare machines with.

pub mod audio_file;
pub mod frame_log;
mod match_sinks;
pub mod recorder;
pub mod run_ahead;
#[cfg(feature = "audio")]
pub mod speaker;
#[cfg(not(feature = "audio"))]
#[path = "no_speaker.rs"]
pub mod speaker;

pub use match_sinks::{MatchSinks, RelaySink, SinkChoices, SinksSummary};

use crate::engine::AppError;
use netcode::checksum::{memory_checksum, Checksum};
use netcode::emulator::{Emulator, VideoFrame};
use netcode::input::Buttons;
use netcode::replay::CHECKPOINT_INTERVAL;
use netcode::rollback::Frame;
use std::collections::VecDeque;

/// How a frame is run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FramePass {
    /// Run for the first time, its picture drawn.
    Shown,
    /// Run for the first time without drawing it (a spectator catching up,
    /// a replay being verified or sought through).
    Unshown,
    /// Run again after a rollback: not drawn, since an earlier run of the
    /// same frame was shown.
    Resimulated,
}

/// The one place a frame leaves the emulator: runs `frame` on `game` with
/// every player's `inputs` and tells `sink` it ran, with the sound it made.
pub fn run_frame<G: Emulator + ?Sized>(
    game: &mut G,
    frame: Frame,
    inputs: &[Buttons],
    pass: FramePass,
    sink: &mut dyn FrameSink,
) {
    game.run_frame(inputs, pass == FramePass::Shown);
    sink.frame_run(&FinishedFrame {
        frame,
        resimulated: pass == FramePass::Resimulated,
        inputs,
        audio: game.audio_samples(),
        memory: game.game_memory(),
    });
}

/// Runs frames that are final as they run (nothing can roll them back): a
/// local run, a replay, a spectator's frames, the debugger's steps. Each
/// goes through [`run_frame`] and is then finalized, with the checksum of
/// the game's memory at its start when the sink wants checksums.
#[derive(Debug, Default)]
pub struct FinalFrames {
    /// The state buffer the checksums are taken with.
    scratch: Vec<u8>,
    /// Every frame is drawn, so the picture on hand before a frame is its
    /// predecessor's: replay checkpoints then get its checksum too.
    every_frame_drawn: bool,
    /// What the next frame carries as [`FinalFrame::video`] instead, when
    /// the picture on hand is not its predecessor's (see
    /// [`FinalFrames::picture_replaced`]).
    video_before_next: Option<Option<Checksum>>,
}

impl FinalFrames {
    /// Runs final frames; `every_frame_drawn` when no frame is run
    /// [`FramePass::Unshown`] (then checkpoints carry picture checksums).
    pub fn new(every_frame_drawn: bool) -> Self {
        FinalFrames {
            scratch: Vec::new(),
            every_frame_drawn,
            video_before_next: None,
        }
    }

    /// The picture on hand is not the one the last frame drew (a state was
    /// loaded over frames run ahead): the next frame carries `video`, the
    /// [`FinalFrame::video`] its earlier run took, instead.
    pub fn picture_replaced(&mut self, video: Option<Checksum>) {
        self.video_before_next = Some(video);
    }

    /// Runs `frame` (see [`run_frame`]) and tells `sink` it is final.
    pub fn run<G: Emulator + ?Sized>(
        &mut self,
        game: &mut G,
        frame: Frame,
        inputs: &[Buttons],
        pass: FramePass,
        sink: &mut dyn FrameSink,
    ) -> Result<(), AppError> {
        let wants_checksums = sink.wants_checksums();
        // The same checksum the netplay driver gives its final frames.
        let checksum = if wants_checksums {
            Some(
                memory_checksum(game, &mut self.scratch)
                    .map_err(AppError::at_frame(frame.number()))?,
            )
        } else {
            None
        };
        // The picture every replay checkpoint, before the frame redraws it.
        let video = self
            .video_before_next
            .take()
            .unwrap_or_else(|| self.video_on_hand(game, frame, wants_checksums));
        // A core that cannot save (a lockstep match) just gives no state.
        if sink.wants_state(frame) && game.save_state(&mut self.scratch).is_ok() {
            sink.state_before(frame, &self.scratch);
        }
        run_frame(game, frame, inputs, pass, sink);
        game.check_running()
            .map_err(AppError::at_frame(frame.number()))?;
        sink.frame_finalized(&FinalFrame {
            frame,
            inputs,
            checksum,
            video,
        });
        Ok(())
    }

    /// The checksum of the picture on hand for `frame`'s
    /// [`FinalFrame::video`]: only on replay checkpoints, when wanted.
    fn video_on_hand<G: Emulator + ?Sized>(
        &self,
        game: &G,
        frame: Frame,
        wants_checksums: bool,
    ) -> Option<Checksum> {
        (wants_checksums
            && self.every_frame_drawn
            && frame.number().is_multiple_of(CHECKPOINT_INTERVAL))
        .then(|| {
            game.video_frame()
                .map(|picture| Checksum::of_video(&picture))
        })
        .flatten()
    }
}

/// A frame the emulator just ran.
#[derive(Clone, Copy, Debug)]
pub struct FinishedFrame<'a> {
    /// The frame that was run.
    pub frame: Frame,
    /// Whether it was run again after a rollback (not presented: its picture
    /// is not shown, and a previous run of the same frame already was).
    pub resimulated: bool,
    /// Every player's buttons it was run with.
    pub inputs: &'a [Buttons],
    /// The audio it produced (interleaved stereo).
    pub audio: &'a [i16],
    /// The game's memory after it (empty for a game that exposes none).
    pub memory: &'a [u8],
}

/// A frame that became final: no rollback or departure can change it any
/// more, and every machine of the match ran it the same way.
#[derive(Clone, Copy, Debug)]
pub struct FinalFrame<'a> {
    /// The frame.
    pub frame: Frame,
    /// Every player's buttons it was run with, for good.
    pub inputs: &'a [Buttons],
    /// The checksum of the game's memory at its start, when
    /// [`FrameSink::wants_checksums`] says so (`None` otherwise).
    pub checksum: Option<Checksum>,
    /// The checksum of the last picture drawn before it, where the driver
    /// has it: local runs, on the replay checkpoints' frames when checksums
    /// are wanted (a netplay frame's picture is gone by the time it is final).
    pub video: Option<Checksum>,
}

/// Receives the frames a netplay driver runs and finalizes.
pub trait FrameSink {
    /// Called for every frame run, first runs and re-simulations alike, in
    /// the order they ran.
    fn frame_run(&mut self, frame: &FinishedFrame<'_>) {
        let _ = frame;
    }

    /// `frame` is final. Called once per frame, in order from frame 0.
    fn frame_finalized(&mut self, frame: &FinalFrame<'_>) {
        let _ = frame;
    }

    /// `picture` is shown for `frame`, whose first run was the latest
    /// [`FrameSink::frame_run`] of it: the frame's own picture, or with
    /// run-ahead the picture of frames run ahead of it (which no other
    /// sink hears of).
    fn frame_shown(&mut self, frame: Frame, picture: Option<VideoFrame<'_>>) {
        let _ = (frame, picture);
    }

    /// Whether final frames need checksums: hashing game memory at every
    /// save costs time, so drivers only do it when a sink asks.
    fn wants_checksums(&self) -> bool {
        false
    }

    /// `frame` is about to run from `start_state`, whose memory checksum is
    /// `memory`: frame 0 from the host's start state for a match's players,
    /// the frame of the host's savestate for a spectator. The replay
    /// recorder's header keeps all three.
    fn match_started(&mut self, frame: Frame, start_state: &[u8], memory: Checksum) {
        let _ = (frame, start_state, memory);
    }

    /// A desync repair loaded `state` (the host's) at the start of `frame`,
    /// a frame already final, leaving the game memory's checksum `memory`:
    /// the replay recorder keeps both, since playback must load the state
    /// too, and checks it first.
    fn state_repaired(&mut self, frame: Frame, state: &[u8], memory: Checksum) {
        let _ = (frame, state, memory);
    }

    /// `player` (0-based) left the match; from `frame` on they hold nothing.
    fn player_left(&mut self, frame: Frame, player: u8) {
        let _ = (frame, player);
    }

    /// The loop's frame clock reads `now_us` (µs) after this tick's frames,
    /// which run at `speed` times the nominal frame rate (time sync): a sink
    /// consuming at a device's pace (the audio output) catches up to it.
    fn clock_tick(&mut self, now_us: u64, speed: f64) {
        let _ = (now_us, speed);
    }

    /// The player set the volume (0: muted, 1: as the core made it): a
    /// sink that plays sound plays at it, the file of `--audio-out` too.
    fn set_volume(&mut self, volume: f32) {
        let _ = volume;
    }

    /// Whether the sink wants the game's state at the start of final frame
    /// `frame` ([`FinalFrames`] then saves it and calls
    /// [`FrameSink::state_before`]): a broadcast's savestates.
    fn wants_state(&self, frame: Frame) -> bool {
        let _ = frame;
        false
    }

    /// The game's state at the start of final frame `frame`, as asked.
    fn state_before(&mut self, frame: Frame, state: &[u8]) {
        let _ = (frame, state);
    }
}

/// A sink that keeps nothing.
impl FrameSink for () {}

/// Two sinks fed the same frames, in order (nest pairs for more), so the
/// audio ring, the replay recorder and a checksum log can all listen to one
/// driver.
impl<A: FrameSink, B: FrameSink> FrameSink for (A, B) {
    fn frame_run(&mut self, frame: &FinishedFrame<'_>) {
        self.0.frame_run(frame);
        self.1.frame_run(frame);
    }

    fn frame_finalized(&mut self, frame: &FinalFrame<'_>) {
        self.0.frame_finalized(frame);
        self.1.frame_finalized(frame);
    }

    fn frame_shown(&mut self, frame: Frame, picture: Option<VideoFrame<'_>>) {
        self.0.frame_shown(frame, picture);
        self.1.frame_shown(frame, picture);
    }

    fn wants_checksums(&self) -> bool {
        self.0.wants_checksums() || self.1.wants_checksums()
    }

    fn match_started(&mut self, frame: Frame, start_state: &[u8], memory: Checksum) {
        self.0.match_started(frame, start_state, memory);
        self.1.match_started(frame, start_state, memory);
    }

    fn state_repaired(&mut self, frame: Frame, state: &[u8], memory: Checksum) {
        self.0.state_repaired(frame, state, memory);
        self.1.state_repaired(frame, state, memory);
    }

    fn player_left(&mut self, frame: Frame, player: u8) {
        self.0.player_left(frame, player);
        self.1.player_left(frame, player);
    }

    fn clock_tick(&mut self, now_us: u64, speed: f64) {
        self.0.clock_tick(now_us, speed);
        self.1.clock_tick(now_us, speed);
    }

    fn set_volume(&mut self, volume: f32) {
        self.0.set_volume(volume);
        self.1.set_volume(volume);
    }

    fn wants_state(&self, frame: Frame) -> bool {
        self.0.wants_state(frame) || self.1.wants_state(frame)
    }

    fn state_before(&mut self, frame: Frame, state: &[u8]) {
        self.0.state_before(frame, state);
        self.1.state_before(frame, state);
    }
}

/// A sink that may be absent (`--no-record`): frames go to it when present.
impl<S: FrameSink> FrameSink for Option<S> {
    fn frame_run(&mut self, frame: &FinishedFrame<'_>) {
        if let Some(sink) = self {
            sink.frame_run(frame);
        }
    }

    fn frame_finalized(&mut self, frame: &FinalFrame<'_>) {
        if let Some(sink) = self {
            sink.frame_finalized(frame);
        }
    }

    fn frame_shown(&mut self, frame: Frame, picture: Option<VideoFrame<'_>>) {
        if let Some(sink) = self {
            sink.frame_shown(frame, picture);
        }
    }

    fn wants_checksums(&self) -> bool {
        self.as_ref().is_some_and(FrameSink::wants_checksums)
    }

    fn match_started(&mut self, frame: Frame, start_state: &[u8], memory: Checksum) {
        if let Some(sink) = self {
            sink.match_started(frame, start_state, memory);
        }
    }

    fn state_repaired(&mut self, frame: Frame, state: &[u8], memory: Checksum) {
        if let Some(sink) = self {
            sink.state_repaired(frame, state, memory);
        }
    }

    fn player_left(&mut self, frame: Frame, player: u8) {
        if let Some(sink) = self {
            sink.player_left(frame, player);
        }
    }

    fn clock_tick(&mut self, now_us: u64, speed: f64) {
        if let Some(sink) = self {
            sink.clock_tick(now_us, speed);
        }
    }

    fn set_volume(&mut self, volume: f32) {
        if let Some(sink) = self {
            sink.set_volume(volume);
        }
    }

    fn wants_state(&self, frame: Frame) -> bool {
        self.as_ref().is_some_and(|sink| sink.wants_state(frame))
    }

    fn state_before(&mut self, frame: Frame, state: &[u8]) {
        if let Some(sink) = self {
            sink.state_before(frame, state);
        }
    }
}

/// A sink reached through a pointer, passed every call: a sink borrowed
/// for the length of a run, or chosen at run time (the window's sound and
/// a frame log, or none).
macro_rules! forward_frame_sink {
    ($pointer:ty) => {
        impl<S: FrameSink + ?Sized> FrameSink for $pointer {
            fn frame_run(&mut self, frame: &FinishedFrame<'_>) {
                (**self).frame_run(frame);
            }

            fn frame_finalized(&mut self, frame: &FinalFrame<'_>) {
                (**self).frame_finalized(frame);
            }

            fn frame_shown(&mut self, frame: Frame, picture: Option<VideoFrame<'_>>) {
                (**self).frame_shown(frame, picture);
            }

            fn wants_checksums(&self) -> bool {
                (**self).wants_checksums()
            }

            fn match_started(&mut self, frame: Frame, start_state: &[u8], memory: Checksum) {
                (**self).match_started(frame, start_state, memory);
            }

            fn state_repaired(&mut self, frame: Frame, state: &[u8], memory: Checksum) {
                (**self).state_repaired(frame, state, memory);
            }

            fn player_left(&mut self, frame: Frame, player: u8) {
                (**self).player_left(frame, player);
            }

            fn clock_tick(&mut self, now_us: u64, speed: f64) {
                (**self).clock_tick(now_us, speed);
            }

            fn set_volume(&mut self, volume: f32) {
                (**self).set_volume(volume);
            }

            fn wants_state(&self, frame: Frame) -> bool {
                (**self).wants_state(frame)
            }

            fn state_before(&mut self, frame: Frame, state: &[u8]) {
                (**self).state_before(frame, state);
            }
        }
    };
}

forward_frame_sink!(&mut S);
forward_frame_sink!(Box<S>);

/// The checksums of the most recent final frames, at most `capacity` of
/// them (the oldest are forgotten first), for comparing machines.
#[derive(Clone, Debug)]
pub struct ChecksumLog {
    /// The frame of `checksums[0]`.
    first: u32,
    checksums: VecDeque<Option<Checksum>>,
    capacity: usize,
}

impl ChecksumLog {
    /// A log keeping the last `capacity` final frames (16 bytes each).
    pub fn new(capacity: usize) -> Self {
        ChecksumLog {
            first: 0,
            checksums: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    /// The first frame still held.
    pub fn first_frame(&self) -> u32 {
        self.first
    }

    /// One past the last final frame logged.
    pub fn end_frame(&self) -> u32 {
        self.first + self.checksums.len() as u32
    }

    /// The checksum of final frame `frame`, if held (`Some(None)`: final but
    /// never saved, which a session never lets happen).
    pub fn get(&self, frame: u32) -> Option<Option<Checksum>> {
        let index = frame.checked_sub(self.first)? as usize;
        self.checksums.get(index).copied()
    }

    /// The frames before `frame` were skipped, never run (a broadcast's
    /// gap): the log starts over there.
    pub fn skip_to(&mut self, frame: u32) {
        self.checksums.clear();
        self.first = frame;
    }

    /// Every checksum held, from [`ChecksumLog::first_frame`] on.
    pub fn checksums(&self) -> impl Iterator<Item = Option<Checksum>> + '_ {
        self.checksums.iter().copied()
    }
}

impl FrameSink for ChecksumLog {
    fn frame_finalized(&mut self, frame: &FinalFrame<'_>) {
        let number = frame.frame.number();
        if self.checksums.is_empty() {
            self.first = number;
        }
        debug_assert_eq!(number, self.end_frame(), "final frames come in order");
        // Make room first: pushing a full deque would double its buffer,
        // and the ring would then walk through (and keep resident) twice
        // the memory the log needs.
        if self.checksums.len() == self.capacity {
            self.checksums.pop_front();
            self.first += 1;
        }
        self.checksums.push_back(frame.checksum);
    }

    fn wants_checksums(&self) -> bool {
        true
    }
}

/// How two machines' checksum logs compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChecksumComparison {
    /// Frames final on both machines and held by both logs, all compared.
    pub compared: usize,
    /// The first frame whose checksums differ.
    pub first_difference: Option<u32>,
}

/// Compares two machines' logs over the frames both hold (a frame never
/// saved counts as a difference: nothing proves it agreed).
pub fn compare_checksum_logs(a: &ChecksumLog, b: &ChecksumLog) -> ChecksumComparison {
    let start = a.first_frame().max(b.first_frame());
    let end = a.end_frame().min(b.end_frame());
    let first_difference = (start..end).find(|&frame| {
        let (here, there) = (a.get(frame).flatten(), b.get(frame).flatten());
        here.is_none() || here != there
    });
    ChecksumComparison {
        compared: end.saturating_sub(start) as usize,
        first_difference,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn final_frame(frame: u32, checksum: Option<Checksum>) -> FinalFrame<'static> {
        FinalFrame {
            frame: Frame::new(frame),
            inputs: &[],
            checksum,
            video: None,
        }
    }

    fn log_of(first: u32, checksums: &[u64], capacity: usize) -> ChecksumLog {
        let mut log = ChecksumLog::new(capacity);
        for (frame, &value) in (first..).zip(checksums) {
            log.frame_finalized(&final_frame(frame, Some(Checksum(value))));
        }
        log
    }

    #[test]
    fn a_checksum_log_forgets_its_oldest_frames_beyond_its_capacity() {
        let log = log_of(0, &[1, 2, 3, 4, 5], 3);
        assert_eq!(log.first_frame(), 2);
        assert_eq!(log.end_frame(), 5);
        assert_eq!(log.get(1), None);
        assert_eq!(log.get(2), Some(Some(Checksum(3))));
    }

    #[test]
    fn a_full_checksum_log_never_grows_its_buffer() {
        // A 30-minute match keeps the last 65,536 frames: its buffer must
        // stay the size it reached when full, or resident memory keeps
        // climbing as the ring walks through a doubled buffer.
        let mut log = log_of(0, &[0; 64], 64);
        let full = log.checksums.capacity();
        for frame in 64..64 * 10 {
            log.frame_finalized(&final_frame(frame, Some(Checksum(u64::from(frame)))));
        }
        assert_eq!(log.checksums.capacity(), full);
        assert_eq!(log.checksums.len(), 64);
    }

    #[test]
    fn logs_are_compared_over_the_frames_both_hold_and_name_the_first_difference() {
        let a = log_of(0, &[1, 2, 3, 4, 5, 6], 100);
        let b = log_of(2, &[3, 4, 9, 6], 100);
        assert_eq!(
            compare_checksum_logs(&a, &b),
            ChecksumComparison {
                compared: 4,
                first_difference: Some(4)
            }
        );
        let c = log_of(0, &[1, 2, 3], 100);
        assert_eq!(compare_checksum_logs(&a, &c).first_difference, None);
        assert_eq!(compare_checksum_logs(&a, &c).compared, 3);
    }

    #[test]
    fn a_pair_of_sinks_both_hear_every_frame_and_want_checksums_if_either_does() {
        let mut pair = (ChecksumLog::new(10), ());
        assert!(pair.wants_checksums());
        pair.frame_finalized(&final_frame(0, Some(Checksum(7))));
        assert_eq!(pair.0.get(0), Some(Some(Checksum(7))));
        assert!(!((), ()).wants_checksums());
    }

    #[test]
    fn a_frame_that_was_never_hashed_counts_as_a_difference() {
        let mut a = ChecksumLog::new(10);
        a.frame_finalized(&final_frame(0, None));
        let b = log_of(0, &[1], 10);
        assert_eq!(compare_checksum_logs(&a, &b).first_difference, Some(0));
    }
}
