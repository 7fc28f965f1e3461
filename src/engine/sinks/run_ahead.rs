//! Run-ahead (`--run-ahead N`, `--run-ahead-mode`): the picture shown for a
//! frame is the one N frames later would draw with the same buttons, which
//! hides N frames of the game's own input lag. Frames run ahead reach no
//! sink but [`FrameSink::frame_shown`] until they become real: what is
//! hashed, recorded, sent and heard is the real frames', as without
//! run-ahead.
//!
//! - `single` ([`RunAhead::show`]): the real frame runs first, through
//!   [`FinalFrames`] and every sink; then the game is saved, runs N frames
//!   ahead (unheard, only the last drawn), the sinks are told what is
//!   shown, and the real state is loaded back.
//! - `preemptive` in local play ([`RunAhead::run_final`], RetroArch's
//!   preemptive frames): the game stands N frames ahead of the frame
//!   shown, at the tip of a chain of frames run with the buttons then held,
//!   drawn and heard (they may become real), each kept with what it handed
//!   its sinks and the state before it. When a frame's real buttons are
//!   the ones its chain frame ran with, that frame is confirmed: the sinks
//!   get what it handed over, exactly as if it ran now, and the game runs
//!   one more frame at the tip, so an idle pad costs one frame and one
//!   save. When they differ, the state before it is loaded, the chain
//!   dropped, the frame run for real and N frames ahead again.
//! - `preemptive` in a match ([`RunAhead::show`]): ahead frames run only
//!   after the rollback session's frame, as `single` does, but the state
//!   the last ahead frame left is kept: while the buttons stay the same
//!   (and nothing rolled back) the next frame shown costs one ahead frame
//!   instead of N (plus one more save and load).

use crate::engine::sinks::{FinalFrame, FinalFrames, FinishedFrame, FramePass, FrameSink};
use crate::engine::AppError;
use netcode::checksum::Checksum;
use netcode::emulator::{Emulator, SavestateContext};
use netcode::input::{Buttons, MAX_PLAYERS};
use netcode::rollback::Frame;
use std::collections::VecDeque;

/// The most frames run ahead (old games break above 1 or 2: this is for
/// games with long lag and for tests).
pub const MAX_RUN_AHEAD: u8 = 4;

/// How the frames ahead are run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RunAheadMode {
    /// Run all N frames ahead again for every frame shown.
    #[default]
    Single,
    /// Stay N frames ahead with the buttons held, and run again only when
    /// they change: one frame per frame shown while they stay the same.
    Preemptive,
}

impl std::fmt::Display for RunAheadMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RunAheadMode::Single => "single",
            RunAheadMode::Preemptive => "preemptive",
        })
    }
}

/// `--run-ahead` and `--run-ahead-mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::Args)]
pub struct RunAheadArgs {
    /// Shows each frame as the game would draw it N frames later with the
    /// same buttons, hiding N frames of the game's own input lag (0 to 4;
    /// `netcade latency` measures a game's lag). Costs up to N extra frames
    /// of emulation per frame shown.
    #[arg(long = "run-ahead", value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u8).range(0..=i64::from(MAX_RUN_AHEAD)))]
    pub ahead: u8,
    /// How the frames ahead are run: `single` (all N every frame) or
    /// `preemptive` (only when the buttons change: an idle pad costs one
    /// frame).
    #[arg(
        long = "run-ahead-mode",
        value_name = "MODE",
        value_enum,
        default_value_t
    )]
    pub ahead_mode: RunAheadMode,
}

impl RunAheadArgs {
    /// `run-ahead 2` (`, preemptive` when so), or `None` without run-ahead.
    pub fn describe(&self) -> Option<String> {
        (self.ahead > 0).then(|| match self.ahead_mode {
            RunAheadMode::Single => format!("run-ahead {}", self.ahead),
            RunAheadMode::Preemptive => format!("run-ahead {} preemptive", self.ahead),
        })
    }
}

/// What run-ahead did, for reports and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunAheadCounts {
    /// Frames shown with run-ahead.
    pub shown: u64,
    /// Frames run ahead, in all.
    pub frames_run: u64,
    /// Frames shown from a kept ahead state (preemptive): in local play,
    /// real frames confirmed from the chain run ahead, not run again.
    pub reused: u64,
}

/// Shows frames with run-ahead. See the module docs.
#[derive(Debug)]
pub struct RunAhead {
    args: RunAheadArgs,
    /// What the frame loop's own states are for, told to the game again
    /// once the ahead states are done with.
    loop_context: SavestateContext,
    /// The real state, loaded back after the frames ahead.
    real: Vec<u8>,
    /// Preemptive: the state after the last frame run ahead.
    ahead: Vec<u8>,
    /// Preemptive: the real frame `ahead` was run after, with which buttons.
    chain: Option<(Frame, [Buttons; MAX_PLAYERS])>,
    /// Preemptive in local play: the frames the game stands ahead by.
    ran_ahead: RanAhead,
    counts: RunAheadCounts,
}

/// The frames preemptive run-ahead ran ahead of the frame shown in local
/// play, oldest first, at most N (4): their states and what they handed
/// their sinks, N of each frame's outputs in bytes.
#[derive(Debug, Default)]
struct RanAhead {
    frames: VecDeque<AheadFrame>,
    /// Buffers of frames confirmed or dropped, reused.
    spare: Vec<AheadFrame>,
    /// The game's memory after the last real frame.
    real_memory: Vec<u8>,
}

/// A frame run ahead: the state before it, and everything
/// [`FinalFrames::run`] handed its sink, to hand over again once real.
#[derive(Debug, Default)]
struct AheadFrame {
    frame: Frame,
    inputs: Vec<Buttons>,
    /// The game's state at its start (saved with [`Emulator::save_state`]:
    /// the debugger keeps it as the real frame's).
    before: Vec<u8>,
    /// Whether the sink asked for the state before it
    /// ([`FrameSink::wants_state`]), then kept in `asked_state`.
    asked: bool,
    asked_state: Vec<u8>,
    audio: Vec<i16>,
    memory: Vec<u8>,
    checksum: Option<Checksum>,
    video: Option<Checksum>,
}

impl AheadFrame {
    /// Hands `sink` what the frame handed over when it ran, in the same
    /// order: the sink cannot tell it did not run now.
    fn hand_over(&self, sink: &mut dyn FrameSink) {
        if self.asked {
            sink.state_before(self.frame, &self.asked_state);
        }
        sink.frame_run(&FinishedFrame {
            frame: self.frame,
            resimulated: false,
            inputs: &self.inputs,
            audio: &self.audio,
            memory: &self.memory,
        });
        sink.frame_finalized(&FinalFrame {
            frame: self.frame,
            inputs: &self.inputs,
            checksum: self.checksum,
            video: self.video,
        });
    }
}

/// The sink a frame run ahead goes to: keeps what it is handed, and asks
/// the real sink what it wants.
struct Keeping<'a> {
    into: &'a mut AheadFrame,
    real: &'a dyn FrameSink,
}

impl FrameSink for Keeping<'_> {
    fn frame_run(&mut self, frame: &FinishedFrame<'_>) {
        self.into.audio.clear();
        self.into.audio.extend_from_slice(frame.audio);
        self.into.memory.clear();
        self.into.memory.extend_from_slice(frame.memory);
    }

    fn frame_finalized(&mut self, frame: &FinalFrame<'_>) {
        self.into.checksum = frame.checksum;
        self.into.video = frame.video;
    }

    fn wants_checksums(&self) -> bool {
        self.real.wants_checksums()
    }

    fn wants_state(&self, frame: Frame) -> bool {
        self.real.wants_state(frame)
    }

    fn state_before(&mut self, _frame: Frame, state: &[u8]) {
        self.into.asked = true;
        self.into.asked_state.clear();
        self.into.asked_state.extend_from_slice(state);
    }
}

impl RanAhead {
    /// Drops every frame run ahead, keeping their buffers.
    fn drop_all(&mut self) {
        self.spare.extend(self.frames.drain(..));
    }
}

impl RunAhead {
    /// Run-ahead as `args` say, in a frame loop whose states are for
    /// `loop_context`.
    pub fn new(args: RunAheadArgs, loop_context: SavestateContext) -> Self {
        RunAhead {
            args,
            loop_context,
            real: Vec::new(),
            ahead: Vec::new(),
            chain: None,
            ran_ahead: RanAhead::default(),
            counts: RunAheadCounts::default(),
        }
    }

    /// Whether the game stands frames ahead of the real one between frames
    /// ([`RunAhead::run_final`] in preemptive mode).
    fn stays_ahead(&self) -> bool {
        self.args.ahead > 0 && self.args.ahead_mode == RunAheadMode::Preemptive
    }

    /// Whether [`RunAhead::run_final`] wants the real frames drawn: without
    /// run-ahead, and in preemptive mode, where every frame run is drawn
    /// (the tip's picture is shown).
    pub fn draws_real_frames(&self) -> bool {
        !self.is_on() || self.stays_ahead()
    }

    /// Whether frames are run ahead at all: the real frames need not be
    /// drawn then, since their pictures are never shown.
    pub fn is_on(&self) -> bool {
        self.args.ahead > 0
    }

    /// What it did so far.
    pub fn counts(&self) -> RunAheadCounts {
        self.counts
    }

    /// The real state changed in a way the buttons do not say (a rollback,
    /// a repair, a loaded state): a kept ahead state is no good any more,
    /// nor frames run ahead (the game is about to be loaded: see
    /// [`RunAhead::settle`] otherwise).
    pub fn forget(&mut self) {
        self.chain = None;
        self.ran_ahead.drop_all();
    }

    /// Brings a game standing ahead (preemptive, local play) back to the
    /// start of the next real frame, dropping the frames ahead: for what
    /// must see the real game (a save, a reset, a memory dump). The picture
    /// on hand is then an ahead frame's, so `final_frames` is told which
    /// the next real frame follows.
    pub fn settle<G: Emulator + ?Sized>(
        &mut self,
        game: &mut G,
        final_frames: &mut FinalFrames,
    ) -> Result<(), AppError> {
        if let Some(first) = self.ran_ahead.frames.front() {
            game.set_savestate_context(SavestateContext::Rollback);
            let loaded = game.load_state(&first.before);
            game.set_savestate_context(self.loop_context);
            loaded.map_err(AppError::at_frame(first.frame.number()))?;
            final_frames.picture_replaced(first.video);
        }
        self.ran_ahead.drop_all();
        Ok(())
    }

    /// While the game stands ahead: the state at the start of the next
    /// real frame and the game's memory then (what the game would be
    /// without run-ahead).
    pub fn real_game(&self) -> Option<(&[u8], &[u8])> {
        let first = self.ran_ahead.frames.front()?;
        Some((&first.before, &self.ran_ahead.real_memory))
    }

    /// Runs `frame` for real with `inputs` through `final_frames` into
    /// `sink` (`pass` as without run-ahead) and shows it: in preemptive
    /// mode from the frames run ahead when they ran with these buttons (see
    /// the module docs), else as [`RunAhead::show`] does.
    pub fn run_final<G: Emulator + ?Sized>(
        &mut self,
        game: &mut G,
        final_frames: &mut FinalFrames,
        frame: Frame,
        inputs: &[Buttons],
        pass: FramePass,
        sink: &mut dyn FrameSink,
    ) -> Result<(), AppError> {
        if !self.stays_ahead() {
            final_frames.run(game, frame, inputs, pass, sink)?;
            return self.show(game, frame, inputs, sink);
        }
        let ran_ahead = &mut self.ran_ahead;
        let confirmed = ran_ahead
            .frames
            .front()
            .is_some_and(|first| first.frame == frame && first.inputs == inputs);
        if confirmed {
            let mut first = ran_ahead.frames.pop_front().expect("confirmed");
            first.hand_over(sink);
            std::mem::swap(&mut ran_ahead.real_memory, &mut first.memory);
            ran_ahead.spare.push(first);
            self.counts.reused += 1;
        } else {
            if let Some(first) = ran_ahead.frames.front() {
                debug_assert_eq!(first.frame, frame, "frames ahead are settled or forgotten");
                game.set_savestate_context(SavestateContext::Rollback);
                let loaded = game.load_state(&first.before);
                game.set_savestate_context(self.loop_context);
                loaded.map_err(AppError::at_frame(frame.number()))?;
                final_frames.picture_replaced(first.video);
                ran_ahead.drop_all();
            }
            final_frames.run(game, frame, inputs, FramePass::Shown, sink)?;
            ran_ahead.real_memory.clear();
            ran_ahead.real_memory.extend_from_slice(game.game_memory());
        }
        let mut next = Frame::new(frame.number() + 1 + ran_ahead.frames.len() as u32);
        while ran_ahead.frames.len() < usize::from(self.args.ahead) {
            let mut ahead = ran_ahead.spare.pop().unwrap_or_default();
            ahead.frame = next;
            ahead.inputs.clear();
            ahead.inputs.extend_from_slice(inputs);
            ahead.asked = false;
            game.set_savestate_context(SavestateContext::Rollback);
            let saved = game.save_state(&mut ahead.before);
            game.set_savestate_context(self.loop_context);
            saved.map_err(AppError::at_frame(next.number()))?;
            let mut keeping = Keeping {
                into: &mut ahead,
                real: &*sink,
            };
            final_frames.run(game, next, inputs, FramePass::Shown, &mut keeping)?;
            ran_ahead.frames.push_back(ahead);
            self.counts.frames_run += 1;
            next = next.next();
        }
        self.counts.shown += 1;
        sink.frame_shown(frame, game.video_frame());
        Ok(())
    }
    /// Shows `frame`, which `game` just ran for real with `inputs`: its own
    /// picture without run-ahead, else the picture of N more frames with
    /// the same buttons, after which the game is back where the real frame
    /// left it.
    pub fn show<G: Emulator + ?Sized>(
        &mut self,
        game: &mut G,
        frame: Frame,
        inputs: &[Buttons],
        sink: &mut dyn FrameSink,
    ) -> Result<(), AppError> {
        let ahead = self.args.ahead;
        if ahead == 0 {
            sink.frame_shown(frame, game.video_frame());
            return Ok(());
        }
        let at = || AppError::at_frame(frame.number());
        let mut held = [Buttons::NONE; MAX_PLAYERS];
        for (slot, buttons) in held.iter_mut().zip(inputs) {
            *slot = *buttons;
        }
        game.set_savestate_context(SavestateContext::Rollback);
        game.save_state_to_load(&mut self.real).map_err(at())?;
        let preemptive = self.args.ahead_mode == RunAheadMode::Preemptive;
        // The kept chain ran this very frame with these buttons from the
        // same state: its last state is one frame short of what is wanted.
        let reuse = preemptive
            && self
                .chain
                .is_some_and(|(after, buttons)| after.next() == frame && buttons == held);
        let to_run = if reuse {
            game.load_state(&self.ahead).map_err(at())?;
            self.counts.reused += 1;
            1
        } else {
            ahead
        };
        for left in (0..to_run).rev() {
            game.run_frame_unheard(inputs, left == 0);
        }
        self.counts.frames_run += u64::from(to_run);
        self.counts.shown += 1;
        sink.frame_shown(frame, game.video_frame());
        if preemptive {
            game.save_state_to_load(&mut self.ahead).map_err(at())?;
            self.chain = Some((frame, held));
        }
        game.load_state(&self.real).map_err(at())?;
        game.set_savestate_context(self.loop_context);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sinks::run_frame;
    use netcode::checksum::Checksum;
    use netcode::emulator::VideoFrame;
    use netcode::testing::StubGame;

    /// The pictures shown, by frame.
    #[derive(Default)]
    struct Shown(Vec<(u32, Checksum)>);

    impl FrameSink for Shown {
        fn frame_shown(&mut self, frame: Frame, picture: Option<VideoFrame<'_>>) {
            let picture = picture.map_or(Checksum(0), |p| Checksum::of_video(&p));
            self.0.push((frame.number(), picture));
        }
    }

    /// A run of `frames` frames with buttons changing every 7th, shown with
    /// `args`; the pictures shown and the final memory.
    fn play(args: RunAheadArgs, frames: u32) -> (Vec<(u32, Checksum)>, Checksum, RunAheadCounts) {
        let mut game = StubGame::deterministic();
        let mut run_ahead = RunAhead::new(args, SavestateContext::Normal);
        let mut shown = Shown::default();
        for number in 0..frames {
            let inputs = [
                Buttons::from_bits(u16::from(number / 7 % 3 == 1) << 7),
                Buttons::NONE,
            ];
            let frame = Frame::new(number);
            run_frame(&mut game, frame, &inputs, FramePass::Shown, &mut ());
            run_ahead
                .show(&mut game, frame, &inputs, &mut shown)
                .unwrap();
        }
        (
            shown.0,
            Checksum::of(game.game_memory()),
            run_ahead.counts(),
        )
    }

    /// The pictures of a run without run-ahead where each frame's buttons
    /// were held from the frame `ahead` before.
    fn shifted(pictures: &[(u32, Checksum)], ahead: usize) -> Vec<Checksum> {
        pictures.iter().skip(ahead).map(|(_, p)| *p).collect()
    }

    #[test]
    fn run_ahead_shows_the_pictures_n_frames_later_and_leaves_the_real_game_alone() {
        let (plain, memory, _) = play(RunAheadArgs::default(), 60);
        for mode in [RunAheadMode::Single, RunAheadMode::Preemptive] {
            for frames in 1..=MAX_RUN_AHEAD {
                let args = RunAheadArgs {
                    ahead: frames,
                    ahead_mode: mode,
                };
                let (ahead, ahead_memory, counts) = play(args, 60);
                assert_eq!(ahead_memory, memory, "{args:?}: the real game is untouched");
                // Where the buttons held the same through the frames ahead,
                // the picture is the one the plain run drew N frames later.
                let n = usize::from(frames);
                for (index, (frame, picture)) in ahead.iter().enumerate().take(60 - n) {
                    let same_buttons =
                        (*frame..=*frame + u32::from(frames)).all(|f| f / 7 % 3 == *frame / 7 % 3);
                    if same_buttons {
                        assert_eq!(
                            *picture,
                            shifted(&plain, n)[index],
                            "{args:?} frame {frame}"
                        );
                    }
                }
                if mode == RunAheadMode::Preemptive {
                    // One frame ahead while the buttons stay, N when they change.
                    assert!(counts.reused > 40, "{args:?}: {counts:?}");
                    let rebuilt = counts.shown - counts.reused;
                    assert_eq!(
                        counts.frames_run,
                        counts.reused + rebuilt * u64::from(frames),
                        "{counts:?}"
                    );
                } else {
                    assert_eq!(counts.frames_run, 60 * u64::from(frames));
                }
            }
        }
    }

    #[test]
    fn preemptive_and_single_show_the_same_pictures() {
        for frames in 1..=MAX_RUN_AHEAD {
            let single = play(
                RunAheadArgs {
                    ahead: frames,
                    ahead_mode: RunAheadMode::Single,
                },
                50,
            );
            let preemptive = play(
                RunAheadArgs {
                    ahead: frames,
                    ahead_mode: RunAheadMode::Preemptive,
                },
                50,
            );
            assert_eq!(single.0, preemptive.0, "run-ahead {frames}");
        }
    }

    /// A game that counts every frame it is asked to run, which loading a
    /// state does not take back (the stub's own count is in its state).
    struct Counting {
        game: StubGame,
        runs: u64,
    }

    impl Emulator for Counting {
        fn run_frame(&mut self, inputs: &[Buttons], render: bool) {
            self.runs += 1;
            self.game.run_frame(inputs, render);
        }
        fn save_state(
            &mut self,
            into: &mut Vec<u8>,
        ) -> Result<(), netcode::emulator::EmulatorError> {
            self.game.save_state(into)
        }
        fn load_state(&mut self, from: &[u8]) -> Result<(), netcode::emulator::EmulatorError> {
            self.game.load_state(from)
        }
        fn game_memory(&self) -> &[u8] {
            self.game.game_memory()
        }
        fn video_frame(&self) -> Option<VideoFrame<'_>> {
            self.game.video_frame()
        }
        fn audio_samples(&self) -> &[i16] {
            self.game.audio_samples()
        }
        fn frames_per_second(&self) -> f64 {
            self.game.frames_per_second()
        }
        fn sample_rate(&self) -> f64 {
            self.game.sample_rate()
        }
    }

    /// Everything a sink other than the picture's hears, in order.
    #[derive(Debug, PartialEq)]
    enum Heard {
        State(u32, Checksum),
        Ran {
            frame: u32,
            inputs: Vec<Buttons>,
            audio: Vec<i16>,
            memory: Checksum,
        },
        Final {
            frame: u32,
            inputs: Vec<Buttons>,
            checksum: Option<Checksum>,
            video: Option<Checksum>,
        },
    }

    /// A sink that wants checksums and every 5th frame's state, and keeps
    /// what it hears; `shown` the pictures.
    #[derive(Default)]
    struct Listening {
        heard: Vec<Heard>,
        shown: Vec<(u32, Checksum)>,
    }

    impl FrameSink for Listening {
        fn frame_run(&mut self, frame: &FinishedFrame<'_>) {
            self.heard.push(Heard::Ran {
                frame: frame.frame.number(),
                inputs: frame.inputs.to_vec(),
                audio: frame.audio.to_vec(),
                memory: Checksum::of(frame.memory),
            });
        }
        fn frame_finalized(&mut self, frame: &FinalFrame<'_>) {
            self.heard.push(Heard::Final {
                frame: frame.frame.number(),
                inputs: frame.inputs.to_vec(),
                checksum: frame.checksum,
                video: frame.video,
            });
        }
        fn frame_shown(&mut self, frame: Frame, picture: Option<VideoFrame<'_>>) {
            let picture = picture.map_or(Checksum(0), |p| Checksum::of_video(&p));
            self.shown.push((frame.number(), picture));
        }
        fn wants_checksums(&self) -> bool {
            true
        }
        fn wants_state(&self, frame: Frame) -> bool {
            frame.number() % 5 == 0
        }
        fn state_before(&mut self, frame: Frame, state: &[u8]) {
            self.heard
                .push(Heard::State(frame.number(), Checksum::of(state)));
        }
    }

    /// Buttons changing at random moments (seeded), held for 1 to 8 frames.
    fn random_buttons(frames: u32, seed: u64) -> Vec<[Buttons; 2]> {
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut inputs = Vec::new();
        while inputs.len() < frames as usize {
            let held = [Buttons::from_bits(next() as u16 & 0xff), Buttons::NONE];
            for _ in 0..1 + next() % 8 {
                inputs.push(held);
            }
        }
        inputs.truncate(frames as usize);
        inputs
    }

    /// A local run of `inputs` with `args` through [`RunAhead::run_final`],
    /// as `netcade run` does: what the sink heard and the core's runs.
    fn run_locally(args: RunAheadArgs, inputs: &[[Buttons; 2]]) -> (Listening, u64, Checksum) {
        let mut game = Counting {
            game: StubGame::deterministic(),
            runs: 0,
        };
        let mut run_ahead = RunAhead::new(args, SavestateContext::Normal);
        let mut final_frames = FinalFrames::new(run_ahead.draws_real_frames());
        let pass = if run_ahead.draws_real_frames() {
            FramePass::Shown
        } else {
            FramePass::Unshown
        };
        let mut sink = Listening::default();
        for (number, held) in (0..).zip(inputs) {
            run_ahead
                .run_final(
                    &mut game,
                    &mut final_frames,
                    Frame::new(number),
                    held,
                    pass,
                    &mut sink,
                )
                .unwrap();
        }
        run_ahead.settle(&mut game, &mut final_frames).unwrap();
        let memory = Checksum::of(game.game_memory());
        (sink, game.runs, memory)
    }

    #[test]
    fn preemptive_run_ahead_with_an_idle_pad_runs_one_frame_per_frame_shown() {
        let idle = vec![[Buttons::NONE; 2]; 200];
        for ahead in 1..=MAX_RUN_AHEAD {
            let args = RunAheadArgs {
                ahead,
                ahead_mode: RunAheadMode::Preemptive,
            };
            let (sink, runs, _) = run_locally(args, &idle);
            assert_eq!(sink.shown.len(), 200);
            // The first frame runs with its N frames ahead; each after it is
            // confirmed from them and costs the one frame at the tip.
            assert_eq!(runs, 200 + u64::from(ahead), "run-ahead {ahead}");
        }
    }

    #[test]
    fn preemptive_run_ahead_hands_every_sink_but_the_picture_what_a_run_without_it_does() {
        let inputs = random_buttons(400, 7);
        let (plain, plain_runs, plain_memory) = run_locally(RunAheadArgs::default(), &inputs);
        assert_eq!(plain_runs, 400);
        assert!(
            plain
                .heard
                .iter()
                .any(|heard| matches!(heard, Heard::Final { video: Some(_), .. })),
            "replay checkpoints carry pictures"
        );
        for ahead in 1..=MAX_RUN_AHEAD {
            let single = run_locally(
                RunAheadArgs {
                    ahead,
                    ahead_mode: RunAheadMode::Single,
                },
                &inputs,
            );
            let (preemptive, runs, memory) = run_locally(
                RunAheadArgs {
                    ahead,
                    ahead_mode: RunAheadMode::Preemptive,
                },
                &inputs,
            );
            assert!(
                preemptive.heard == plain.heard,
                "run-ahead {ahead}: what sinks hear"
            );
            assert_eq!(memory, plain_memory, "run-ahead {ahead}: the real game");
            assert_eq!(
                preemptive.shown, single.0.shown,
                "run-ahead {ahead}: the pictures"
            );
            assert!(
                runs < single.1,
                "run-ahead {ahead}: {runs} runs against {}",
                single.1
            );
        }
    }
}
