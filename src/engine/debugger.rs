//! `netcade debug`: a frame-step debugger driven by text commands.
//!
//! Commands, one per line:
//!
//! | command | does |
//! | --- | --- |
//! | `step [N]` | runs N frames (default 1) with the held buttons |
//! | `back [N]` | goes back N frames (default 1) through the saved history |
//! | `history` | how many frames are kept and the memory they take |
//! | `goto FRAME` | steps forward to FRAME, or goes back to it through the history |
//! | `input PLAYER BUTTONS` | player 1–4 holds BUTTONS from now on (`input 1 RIGHT+B`, `input 2 NONE`) |
//! | `hash` | prints the checksums |
//! | `dump PATH` | writes the state to `PATH.state` and game memory to `PATH.memory` |
//! | `mark` | remembers this frame |
//! | `diff` | compares the marked frame with this one: differing byte ranges of memory and state |
//! | `help` | lists the commands |
//! | `quit` | ends (so does the end of input) |
//!
//! After every command one status line follows:
//! `frame=N memory=XXXXXXXXXXXXXXXX state=… video=…`. Lines before it give
//! details (diff, dump, help). A bad command prints one `error: …` line on
//! the error stream instead (stderr, so scripts reading stdout see only
//! answers) and the session goes on; a script (stdin not a terminal) with
//! any failed command ends with a non-zero exit. Empty lines and `#`
//! comments are ignored.

use crate::engine::inputs::{FrameInputs, MAX_PLAYERS, NO_INPUTS};
use crate::engine::keyframes::Keyframes;
use crate::engine::recorded_state::{load_recorded_state, RecordedState};
use crate::engine::sinks::run_ahead::{RunAhead, RunAheadArgs};
use crate::engine::sinks::{run_frame, FinalFrames, FramePass, FrameSink};
use crate::engine::{AppError, Outcome};
use netcode::checksum::{memory_checksum, Checksum, Checksums};
use netcode::diff::{ByteDiff, DEFAULT_RANGE_CAP};
use netcode::emulator::{Emulator, SavestateContext};
use netcode::input::Buttons;
use netcode::rollback::state_history::StateHistory;
use netcode::rollback::synctest::ChecksumKinds;
use netcode::rollback::Frame;
use std::ffi::OsString;
use std::io::{BufRead, Read, Write};
use std::path::PathBuf;

/// Frames of history kept by default (10 s at 60 fps).
pub const DEFAULT_HISTORY: u32 = 600;
/// The memory the history may take by default, in MiB: states are kept
/// compressed, and the oldest go first when either limit is reached.
pub const DEFAULT_HISTORY_MB: u64 = 256;
/// The most history one may ask for (10 minutes at 60 fps).
pub const MAX_HISTORY: u32 = 36_000;
/// The most frames one `step` runs (a typo should not hang the session).
pub const MAX_STEP: u32 = 1_000_000;
/// Frames between the states kept for going back past the history
/// (4 s at 60 fps): `goto` an older frame loads the nearest and runs on.
pub const SEEK_POINT_INTERVAL: u32 = 240;
/// The most memory those states take, in bytes (uncompressed); past it
/// every other one goes (see [`Keyframes`]).
pub const SEEK_POINT_BUDGET: usize = 64 << 20;
/// The longest command line read; longer lines are an error.
pub const MAX_LINE: usize = 4096;

/// One debugger command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `step [N]`: run this many frames forward (at most [`MAX_STEP`]).
    Step(u32),
    /// `back [N]`: go this many frames back through the history.
    Back(u32),
    /// `goto FRAME`: go to this frame number, forward or back.
    Goto(u32),
    /// `history`: say how many frames are kept and their memory.
    History,
    /// `input PLAYER BUTTONS`: hold buttons from now on.
    Input {
        /// The player, 1-based (1 to 4), as typed.
        player: usize,
        /// What the player holds from the next frame on.
        buttons: Buttons,
    },
    /// `hash`: print the current frame's checksums.
    Hash,
    /// `dump PATH`: write `PATH.state` and `PATH.memory`.
    Dump(PathBuf),
    /// `mark`: remember the current frame to `diff` against.
    Mark,
    /// `diff`: compare the marked frame's state and memory with the current ones.
    Diff,
    /// `help`: print [`HELP`].
    Help,
    /// `quit`: end the session.
    Quit,
}

/// The command list `help` prints.
pub const HELP: &str = "\
commands:
  step [N]               run N frames (default 1)
  back [N]               go back N frames (default 1)
  goto FRAME             go to FRAME (forward by stepping, back through the history)
  history                how many frames are kept and the memory they take
  input PLAYER BUTTONS   player 1-4 holds BUTTONS from now on (e.g. input 1 RIGHT+B)
  hash                   print the checksums
  dump PATH              write PATH.state and PATH.memory
  mark                   remember this frame
  diff                   compare the marked frame with this one
  help                   this list
  quit                   end the session";

/// Parses one line: `Ok(None)` for blank and comment lines.
pub fn parse_command(line: &str) -> Result<Option<Command>, String> {
    let content = line.split('#').next().unwrap_or("").trim();
    let mut words = content.split_whitespace();
    let Some(name) = words.next() else {
        return Ok(None);
    };
    let rest: Vec<&str> = words.collect();
    let count = |what: &str, default: Option<u32>| -> Result<u32, String> {
        match (rest.as_slice(), default) {
            ([], Some(default)) => Ok(default),
            ([text], _) => text
                .parse::<u32>()
                .map_err(|_| format!("{name}: {what} must be a whole number, not {text:?}")),
            _ => Err(format!("{name} takes one {what}")),
        }
    };
    let command = match name.to_ascii_lowercase().as_str() {
        "step" | "s" => {
            let frames = count("frame count", Some(1))?;
            if frames > MAX_STEP {
                return Err(format!("step: at most {MAX_STEP} frames at a time"));
            }
            Command::Step(frames)
        }
        "back" | "b" => Command::Back(count("frame count", Some(1))?),
        "goto" | "g" => Command::Goto(count("frame number", None)?),
        "input" | "i" => {
            let [player, buttons] = rest.as_slice() else {
                return Err("input takes a player (1-4) and buttons, e.g. input 1 RIGHT+B".into());
            };
            let player = player
                .parse::<usize>()
                .ok()
                .filter(|p| (1..=MAX_PLAYERS).contains(p))
                .ok_or_else(|| {
                    format!("input: player must be 1 to {MAX_PLAYERS}, not {player:?}")
                })?;
            let buttons = buttons
                .parse::<Buttons>()
                .map_err(|err| format!("input: {err}"))?;
            Command::Input { player, buttons }
        }
        "dump" => match rest.as_slice() {
            [path] => Command::Dump(PathBuf::from(path)),
            _ => return Err("dump takes one PATH".into()),
        },
        "hash" | "h" | "history" | "mark" | "diff" | "help" | "?" | "quit" | "q" | "exit" => {
            if !rest.is_empty() {
                return Err(format!("{name} takes no arguments"));
            }
            match name.to_ascii_lowercase().as_str() {
                "hash" | "h" => Command::Hash,
                "history" => Command::History,
                "mark" => Command::Mark,
                "diff" => Command::Diff,
                "help" | "?" => Command::Help,
                _ => Command::Quit,
            }
        }
        _ => return Err(format!("unknown command {name:?} (try help)")),
    };
    Ok(Some(command))
}

/// Frames decided beforehand: a replay's, for `debug --replay`. The
/// debugger then runs each frame with these buttons instead of held ones.
pub trait RecordedFrames {
    /// The frame the recording starts at (its start state's): the debugger
    /// numbers frames from it, as the match did.
    fn first_frame(&self) -> u32;
    /// Every player's buttons during `frame`.
    fn inputs(&self, frame: u32) -> FrameInputs;
    /// A state the game loads at the start of `frame` (a desync repair).
    fn state_at(&self, frame: u32) -> Option<RecordedState<'_>>;
}

/// What the history keeps with each frame's state: its checksums, and the
/// inputs of the frame that starts there.
#[derive(Clone, Copy, Debug)]
struct Kept {
    checksums: Checksums,
    inputs: FrameInputs,
}

/// A marked frame, for `diff`.
struct Mark {
    frame: u32,
    state: Vec<u8>,
    memory: Vec<u8>,
    checksums: Checksums,
}

/// The debugger's hold on a game: where it is, what it remembers.
pub struct Debugger<'g, G: Emulator + ?Sized> {
    game: &'g mut G,
    frame: u32,
    history_frames: u32,
    /// Frames up to the current one, compressed, bounded in frames and bytes.
    history: StateHistory<Kept>,
    /// Sparse states since the timeline began, for going back past the
    /// history when following a recording, bounded in bytes.
    seek_points: Keyframes,
    /// The current frame's state, uncompressed (for `dump`, `mark`, `diff`).
    current_state: Vec<u8>,
    /// A state being restored from the history.
    scratch: Vec<u8>,
    held: FrameInputs,
    checksums: Checksums,
    mark: Option<Mark>,
    recorded: Option<&'g dyn RecordedFrames>,
    /// Where each frame stepped goes (the window's sound), final at once.
    sink: Box<dyn FrameSink + 'g>,
    final_frames: FinalFrames,
    /// How each frame stepped is shown (`play --run-ahead`).
    run_ahead: RunAhead,
}

impl<'g, G: Emulator + ?Sized> Debugger<'g, G> {
    /// Starts at frame 0 with `game` as it is now, able to go back up to
    /// `history_frames` frames kept in at most `history_bytes` bytes.
    pub fn new(
        game: &'g mut G,
        history_frames: u32,
        history_bytes: usize,
    ) -> Result<Self, AppError> {
        Self::new_at(game, 0, history_frames, history_bytes)
    }

    /// [`Debugger::new`] with `game` standing at the start of `frame` (a
    /// replay sought there): frames are numbered on from it.
    pub fn new_at(
        game: &'g mut G,
        frame: u32,
        history_frames: u32,
        history_bytes: usize,
    ) -> Result<Self, AppError> {
        if history_frames > MAX_HISTORY {
            return Err(AppError::BadArgument {
                message: format!(
                    "--history is at most {MAX_HISTORY} frames (got {history_frames})"
                ),
            });
        }
        game.set_savestate_context(SavestateContext::Rollback);
        let mut debugger = Debugger {
            game,
            frame,
            history_frames,
            history: StateHistory::new(history_frames as usize + 1, history_bytes),
            seek_points: Keyframes::new(Frame::new(frame), SEEK_POINT_INTERVAL, SEEK_POINT_BUDGET),
            current_state: Vec::new(),
            scratch: Vec::new(),
            held: NO_INPUTS,
            checksums: Checksums::default(),
            mark: None,
            recorded: None,
            sink: Box::new(()),
            final_frames: FinalFrames::new(true),
            run_ahead: RunAhead::new(RunAheadArgs::default(), SavestateContext::Rollback),
        };
        debugger.keep_current()?;
        Ok(debugger)
    }

    /// Runs every frame from now on with `recorded`'s buttons (and states);
    /// the debugger must stand in the recording (at its first frame, or a
    /// frame a seek landed on: see [`Debugger::new_at`]).
    pub fn following(mut self, recorded: &'g dyn RecordedFrames) -> Result<Self, AppError> {
        let first = recorded.first_frame();
        if self.frame < first {
            return Err(AppError::BadArgument {
                message: format!(
                    "the debugger stands at frame {}, before the recording's first frame {first}",
                    self.frame
                ),
            });
        }
        self.recorded = Some(recorded);
        self.seek_points = Keyframes::new(
            Frame::new(self.frame),
            SEEK_POINT_INTERVAL,
            SEEK_POINT_BUDGET,
        );
        self.seek_points
            .offer(Frame::new(self.frame), &self.current_state);
        Ok(self)
    }

    /// Hands every frame stepped from now on to `sink` (frames gone back
    /// over and run again are not handed over twice).
    pub fn with_sink(mut self, sink: Box<dyn FrameSink + 'g>) -> Self {
        self.sink = sink;
        self
    }

    /// Shows each frame stepped with run-ahead as `args` say.
    pub fn with_run_ahead(mut self, args: RunAheadArgs) -> Self {
        self.run_ahead = RunAhead::new(args, SavestateContext::Rollback);
        self
    }

    /// The sink frames stepped go to.
    pub fn sink_mut(&mut self) -> &mut dyn FrameSink {
        &mut *self.sink
    }

    /// The frame the game is at (0: as loaded; a replay's start frame when
    /// following one), in the numbering `goto` takes.
    pub fn frame(&self) -> u32 {
        self.frame
    }

    /// The game being debugged (its picture, sound and memory). With
    /// preemptive run-ahead it stands frames ahead between steps: its
    /// picture is the one shown, its memory and sound the frames ahead's.
    pub fn game(&self) -> &G {
        self.game
    }

    /// Holds `inputs` (one per port) from the next step on, as `input`
    /// commands do.
    pub fn hold(&mut self, inputs: FrameInputs) {
        self.held = inputs;
    }

    /// The checksums of the current frame.
    pub fn checksums(&self) -> Checksums {
        self.checksums
    }

    /// Saves the current frame, takes its checksums and keeps it. With
    /// preemptive run-ahead the game stands ahead of it: the real frame's
    /// state and memory are the ones kept for the frames ahead, and the
    /// picture is the one shown.
    fn keep_current(&mut self) -> Result<(), AppError> {
        if let Some((state, memory)) = self.run_ahead.real_game() {
            self.current_state.clear();
            self.current_state.extend_from_slice(state);
            self.checksums = Checksums {
                memory: Checksum::of(memory),
                ..Checksums::of_game(&*self.game, &self.current_state)
            };
        } else {
            self.game
                .save_state(&mut self.current_state)
                .map_err(AppError::at_frame(self.frame))?;
            self.checksums = Checksums::of_game(&*self.game, &self.current_state);
        }
        let kept = Kept {
            checksums: self.checksums,
            inputs: NO_INPUTS,
        };
        self.history.push(self.frame, &self.current_state, kept)?;
        // Only a recording's frames run again the same from a seek point.
        if self.recorded.is_some() {
            self.seek_points
                .offer(Frame::new(self.frame), &self.current_state);
        }
        Ok(())
    }

    fn oldest_kept(&self) -> u32 {
        self.history.oldest_frame().unwrap_or(self.frame)
    }

    /// `history: frames 40..=100 (61 kept), 3.2 MiB of 256 MiB (59.0 MiB uncompressed)`
    pub fn history_line(&self) -> String {
        let mib = |bytes: usize| bytes as f64 / f64::from(1 << 20);
        format!(
            "history: frames {}..={} ({} kept), {:.1} MiB of {:.0} MiB ({:.1} MiB uncompressed)",
            self.oldest_kept(),
            self.frame,
            self.history.len(),
            mib(self.history.bytes_used()),
            mib(self.history.budget()),
            mib(self.history.raw_bytes())
        )
    }

    /// How many frames stepping back reaches, and the bytes the history
    /// and the seek points take.
    pub fn kept(&self) -> (u32, usize) {
        (
            self.frame - self.oldest_kept(),
            self.history.bytes_used() + self.seek_points.bytes(),
        )
    }

    /// Runs `frames` frames with the held buttons.
    pub fn step(&mut self, frames: u32) -> Result<(), AppError> {
        for _ in 0..frames {
            self.run_one(true)?;
        }
        Ok(())
    }

    /// Runs the current frame with the held (or recorded) buttons and keeps
    /// the next; `heard` hands it to the sink and shows it with run-ahead
    /// (a seek runs the frames it passes over unheard).
    fn run_one(&mut self, heard: bool) -> Result<(), AppError> {
        let inputs = match self.recorded {
            Some(recorded) => recorded.inputs(self.frame),
            None => self.held,
        };
        if let Some(kept) = self.history.extra_mut(self.frame) {
            kept.inputs = inputs;
        }
        if heard {
            self.run_ahead.run_final(
                &mut *self.game,
                &mut self.final_frames,
                Frame::new(self.frame),
                &inputs,
                FramePass::Shown,
                &mut *self.sink,
            )?;
        } else {
            // A seek runs real frames only: frames ahead are dropped first.
            self.run_ahead
                .settle(&mut *self.game, &mut self.final_frames)?;
            // Drawn even when unheard: the checksums kept include the picture.
            self.final_frames.run(
                &mut *self.game,
                Frame::new(self.frame),
                &inputs,
                FramePass::Shown,
                &mut (),
            )?;
        }
        self.frame += 1;
        self.load_recorded_state()?;
        self.keep_current()
    }

    /// Goes toward `target`, running at most `most_frames` frames: back
    /// through the history when it still holds `target`, else from the
    /// nearest seek point before it; forward by running frames unheard.
    /// Returns whether the debugger stands at `target` (else call again).
    pub fn seek_toward(&mut self, target: u32, most_frames: u32) -> Result<bool, CommandError> {
        if target < self.frame {
            // Held buttons are not a recording's: only the history holds them.
            if target >= self.oldest_kept() || self.recorded.is_none() {
                self.go_back_to(target)?;
                return Ok(true);
            }
            let before_start = || {
                format!(
                    "frame {target} is before the first frame kept (frame {})",
                    self.first_seek_point()
                )
            };
            if target < self.first_seek_point() {
                return Err(before_start().into());
            }
            // From a point before the target, so its frame is drawn.
            let before = Frame::new(target.saturating_sub(1).max(self.first_seek_point()));
            let Some((frame, state)) = self.seek_points.at_or_before(before) else {
                return Err(before_start().into());
            };
            self.game
                .load_state(state)
                .map_err(AppError::at_frame(frame.number()))?;
            self.frame = frame.number();
            self.seek_points.forget_after(frame);
            self.run_ahead.forget();
            self.history =
                StateHistory::new(self.history_frames as usize + 1, self.history.budget());
            self.keep_current()?;
        }
        for _ in 0..most_frames.min(target.saturating_sub(self.frame)) {
            self.run_one(false)?;
        }
        Ok(self.frame == target)
    }

    /// The first frame a seek can go back to: where the timeline began.
    pub fn first_seek_point(&self) -> u32 {
        self.seek_points.start().number()
    }

    /// Loads the recorded state of the current frame, if there is one.
    fn load_recorded_state(&mut self) -> Result<(), AppError> {
        if let Some(state) = self.recorded.and_then(|r| r.state_at(self.frame)) {
            // Refused, the state leaves the real game as it was.
            self.run_ahead
                .settle(&mut *self.game, &mut self.final_frames)?;
            load_recorded_state(&mut *self.game, Frame::new(self.frame), state)?;
        }
        Ok(())
    }

    /// Goes back to `target`, which must still be kept. Frames after it are
    /// forgotten (stepping again may take other inputs).
    pub fn go_back_to(&mut self, target: u32) -> Result<(), String> {
        if target > self.frame {
            return Err(format!("frame {target} is ahead; use step or goto"));
        }
        let oldest_kept = self.oldest_kept();
        if target < oldest_kept {
            return Err(format!(
                "frame {target} is beyond the history (oldest kept: frame {oldest_kept}, --history {}, {})",
                self.history_frames,
                self.history_line()
            ));
        }
        // Frames ahead belong to the timeline being left; settled, a
        // failed restore leaves the real game.
        self.run_ahead
            .settle(&mut *self.game, &mut self.final_frames)
            .map_err(|err| format!("cannot go back to frame {target}: {err}"))?;
        let restore_failed =
            |err: &dyn std::fmt::Display| format!("cannot go back to frame {target}: {err}");
        let kept_at = |frame: u32| self.history.extra(frame).copied();
        let (Some(target_kept), before_kept) = (kept_at(target), kept_at(target.wrapping_sub(1)))
        else {
            return Err(format!("frame {target} is not kept"));
        };
        // Re-run the frame before the target when it is kept, so the game
        // has really drawn the target frame's picture; otherwise (the oldest
        // kept frame) load it and trust the checksums taken when it was run.
        match before_kept.filter(|_| target > oldest_kept) {
            Some(before) => {
                self.history
                    .load(target - 1, &mut self.scratch)
                    .map_err(|err| restore_failed(&err))?;
                self.game
                    .load_state(&self.scratch)
                    .map_err(|err| restore_failed(&err))?;
                // Told to nobody: the sink had this frame when it first ran.
                run_frame(
                    &mut *self.game,
                    Frame::new(target - 1),
                    &before.inputs,
                    FramePass::Shown,
                    &mut (),
                );
                if let Some(state) = self.recorded.and_then(|r| r.state_at(target)) {
                    load_recorded_state(&mut *self.game, Frame::new(target), state)
                        .map_err(|err| restore_failed(&err))?;
                }
                self.game
                    .save_state(&mut self.current_state)
                    .map_err(|err| format!("cannot save frame {target}: {err}"))?;
                let fresh = Checksums::of_game(&*self.game, &self.current_state);
                if fresh != target_kept.checksums {
                    tracing::warn!(
                        "frame {target} re-simulated differently from its first run ({} differ)",
                        ChecksumKinds::differing(&target_kept.checksums, &fresh)
                    );
                }
                self.checksums = fresh;
            }
            None => {
                self.history
                    .load(target, &mut self.current_state)
                    .map_err(|err| restore_failed(&err))?;
                self.game
                    .load_state(&self.current_state)
                    .map_err(|err| restore_failed(&err))?;
                // The picture on hand is a later frame's: keep the video
                // checksum taken when this frame was first reached.
                self.checksums = Checksums {
                    memory: Checksum::of(self.game.game_memory()),
                    state: Checksum::of(&self.current_state),
                    video: target_kept.checksums.video,
                };
            }
        }
        self.frame = target;
        // Stepping on from here may take other inputs: later frames go.
        self.history.truncate_after(target);
        self.seek_points.forget_after(Frame::new(target));
        Ok(())
    }

    fn current_state(&self) -> &[u8] {
        &self.current_state
    }

    /// The size of the current frame's state, in bytes.
    pub fn state_size(&self) -> usize {
        self.current_state.len()
    }

    /// The current frame's state and the game memory's checksum as
    /// loading it must leave it (for a save state slot).
    pub fn state_to_keep(&mut self) -> Result<(u32, Vec<u8>, Checksum), AppError> {
        self.run_ahead
            .settle(&mut *self.game, &mut self.final_frames)?;
        let memory = memory_checksum(&mut *self.game, &mut self.scratch)
            .map_err(AppError::at_frame(self.frame))?;
        Ok((self.frame, self.current_state.clone(), memory))
    }

    /// Loads `state`, kept at the start of `frame`, and goes on from there;
    /// the history starts again with it (frames before it are of another
    /// timeline). A state the core refuses, or whose memory is not the one
    /// kept with it, leaves the game as it was.
    pub fn restore(&mut self, frame: u32, state: RecordedState<'_>) -> Result<(), AppError> {
        self.run_ahead
            .settle(&mut *self.game, &mut self.final_frames)?;
        load_recorded_state(&mut *self.game, Frame::new(frame), state)?;
        self.frame = frame;
        self.begin_timeline()
    }

    /// Changes the game outside of its frames (a reset) with `change`; the
    /// history starts again from the game as `change` leaves it.
    pub fn change_game<R>(&mut self, change: impl FnOnce(&mut G) -> R) -> Result<R, AppError> {
        self.run_ahead
            .settle(&mut *self.game, &mut self.final_frames)?;
        let changed = change(&mut *self.game);
        self.begin_timeline()?;
        Ok(changed)
    }

    /// Forgets every kept frame and ahead state: the game as it is now is
    /// the start of what stepping back reaches.
    fn begin_timeline(&mut self) -> Result<(), AppError> {
        self.run_ahead.forget();
        self.mark = None;
        self.history = StateHistory::new(self.history_frames as usize + 1, self.history.budget());
        self.seek_points = Keyframes::new(
            Frame::new(self.frame),
            SEEK_POINT_INTERVAL,
            SEEK_POINT_BUDGET,
        );
        self.keep_current()
    }

    /// Carries out one command, writing its detail lines (not the status
    /// line) to `out`. `Err` is a user-facing message.
    pub fn execute(&mut self, command: &Command, out: &mut dyn Write) -> Result<(), CommandError> {
        if !matches!(command, Command::Step(_)) {
            // Dumps, marks and diffs are of the real game, not frames ahead.
            self.run_ahead
                .settle(&mut *self.game, &mut self.final_frames)?;
        }
        match command {
            Command::Step(frames) => self.step(*frames)?,
            Command::Back(frames) => {
                let target = self.frame.checked_sub(*frames).ok_or_else(|| {
                    format!("cannot go back {frames} frames from frame {}", self.frame)
                })?;
                self.go_back_to(target)?;
            }
            Command::Goto(target) if *target >= self.frame => {
                let frames = target - self.frame;
                if frames > MAX_STEP {
                    return Err(format!("goto: at most {MAX_STEP} frames ahead at a time").into());
                }
                self.step(frames)?;
            }
            Command::Goto(target) => while !self.seek_toward(*target, MAX_STEP)? {},
            Command::Input { .. } if self.recorded.is_some() => {
                return Err("input: the replay decides the buttons".to_string().into());
            }
            Command::Input { player, buttons } => {
                self.held[player - 1] = *buttons;
                writeln!(out, "player {player} holds {buttons}")?;
            }
            Command::Hash | Command::Quit => {}
            Command::History => writeln!(out, "{}", self.history_line())?,
            Command::Dump(path) => {
                let with_suffix = |suffix: &str| {
                    let mut name = OsString::from(path.as_os_str());
                    name.push(suffix);
                    PathBuf::from(name)
                };
                let state_path = with_suffix(".state");
                let memory_path = with_suffix(".memory");
                for (file, bytes) in [
                    (&state_path, self.current_state()),
                    (&memory_path, self.game.game_memory()),
                ] {
                    std::fs::write(file, bytes)
                        .map_err(|err| format!("cannot write {}: {err}", file.display()))?;
                }
                writeln!(
                    out,
                    "dumped frame {} to {} and {}",
                    self.frame,
                    state_path.display(),
                    memory_path.display()
                )?;
            }
            Command::Mark => {
                self.mark = Some(Mark {
                    frame: self.frame,
                    state: self.current_state().to_vec(),
                    memory: self.game.game_memory().to_vec(),
                    checksums: self.checksums,
                });
                writeln!(out, "marked frame {}", self.frame)?;
            }
            Command::Diff => {
                let mark = self
                    .mark
                    .as_ref()
                    .ok_or_else(|| "no frame marked yet (use mark first)".to_string())?;
                let differing = ChecksumKinds::differing(&mark.checksums, &self.checksums);
                writeln!(
                    out,
                    "diff frame {} -> frame {}: {} differ",
                    mark.frame, self.frame, differing
                )?;
                let memory =
                    ByteDiff::between(&mark.memory, self.game.game_memory(), DEFAULT_RANGE_CAP);
                let state = ByteDiff::between(&mark.state, self.current_state(), DEFAULT_RANGE_CAP);
                writeln!(out, "memory: {memory}")?;
                writeln!(out, "state: {state}")?;
            }
            Command::Help => writeln!(out, "{HELP}")?,
        }
        Ok(())
    }

    /// `frame=N memory=… state=… video=…`
    pub fn status_line(&self) -> String {
        format!(
            "frame={} memory={} state={} video={}",
            self.frame, self.checksums.memory, self.checksums.state, self.checksums.video
        )
    }
}

/// Why one command failed: a message for the user (the session goes on) or
/// a failure that ends the session.
#[derive(Debug)]
pub enum CommandError {
    /// A message for the user, such as a bad argument; the session goes on.
    User(String),
    /// The game or the output failed; the session ends with this error.
    Fatal(AppError),
}

impl From<String> for CommandError {
    fn from(message: String) -> Self {
        CommandError::User(message)
    }
}

impl From<AppError> for CommandError {
    fn from(error: AppError) -> Self {
        CommandError::Fatal(error)
    }
}

impl From<std::io::Error> for CommandError {
    fn from(error: std::io::Error) -> Self {
        CommandError::Fatal(AppError::Output(error))
    }
}

/// How a debugger session went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionSummary {
    /// Commands that printed an `error: …` line instead of doing their work.
    pub failed_commands: u64,
}

/// Reads commands from `input` until `quit` or the end, answering on `out`
/// and writing each failed command's `error: …` line to `errors`.
pub fn debug_session<G: Emulator + ?Sized>(
    game: &mut G,
    history_frames: u32,
    history_bytes: usize,
    recorded: Option<&dyn RecordedFrames>,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    errors: &mut dyn Write,
) -> Result<SessionSummary, AppError> {
    // A recording numbers frames from its start state's frame, as the match did.
    let first = recorded.map_or(0, |recorded| recorded.first_frame());
    let mut debugger = Debugger::new_at(game, first, history_frames, history_bytes)?;
    if let Some(recorded) = recorded {
        debugger = debugger.following(recorded)?;
    }
    let mut summary = SessionSummary::default();
    let mut fail = |message: &str| -> std::io::Result<()> {
        summary.failed_commands += 1;
        writeln!(errors, "error: {message}")?;
        errors.flush()
    };
    writeln!(out, "{}", debugger.status_line())?;
    let mut line = Vec::new();
    loop {
        out.flush()?;
        line.clear();
        let read = (&mut *input)
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut line)?;
        if read == 0 {
            return Ok(summary);
        }
        if line.len() >= MAX_LINE && !line.ends_with(b"\n") {
            skip_rest_of_line(input)?;
            fail(&format!("command line longer than {MAX_LINE} bytes"))?;
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let command = match parse_command(&text) {
            Ok(Some(command)) => command,
            Ok(None) => continue,
            Err(message) => {
                fail(&message)?;
                continue;
            }
        };
        match debugger.execute(&command, out) {
            Ok(()) => writeln!(out, "{}", debugger.status_line())?,
            Err(CommandError::User(message)) => fail(&message)?,
            Err(CommandError::Fatal(error)) => return Err(error),
        }
        if command == Command::Quit {
            out.flush()?;
            return Ok(summary);
        }
    }
}

fn skip_rest_of_line(input: &mut dyn BufRead) -> std::io::Result<()> {
    loop {
        let buffer = input.fill_buf()?;
        if buffer.is_empty() {
            return Ok(());
        }
        match buffer.iter().position(|&b| b == b'\n') {
            Some(end) => {
                input.consume(end + 1);
                return Ok(());
            }
            None => {
                let length = buffer.len();
                input.consume(length);
            }
        }
    }
}

/// A person at a terminal saw each error as it happened; a script did not,
/// so a script with failed commands must not look like a success.
pub fn session_outcome(summary: SessionSummary, interactive: bool) -> Outcome {
    if summary.failed_commands > 0 && !interactive {
        Outcome::DebugCommandsFailed {
            count: summary.failed_commands,
        }
    } else {
        Outcome::Success
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netcode::testing::StubGame;

    const HISTORY_BYTES: usize = (DEFAULT_HISTORY_MB as usize) << 20;

    /// The answers and the error lines of a session, apart.
    fn session_streams(
        script: &str,
        history: u32,
        history_bytes: usize,
    ) -> (Vec<String>, Vec<String>, SessionSummary) {
        let mut game = StubGame::deterministic();
        let (mut out, mut errors) = (Vec::new(), Vec::new());
        let summary = debug_session(
            &mut game,
            history,
            history_bytes,
            None,
            &mut script.as_bytes(),
            &mut out,
            &mut errors,
        )
        .unwrap();
        let lines = |bytes: Vec<u8>| -> Vec<String> {
            String::from_utf8(bytes)
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect()
        };
        (lines(out), lines(errors), summary)
    }

    /// Answers and errors in the order a terminal would show them: each
    /// error stands where the failed command's status line would be.
    fn session(script: &str, history: u32) -> Vec<String> {
        let mut game = StubGame::deterministic();
        let mut interleaved = SharedLines::default();
        let mut errors = interleaved.clone();
        debug_session(
            &mut game,
            history,
            HISTORY_BYTES,
            None,
            &mut script.as_bytes(),
            &mut interleaved,
            &mut errors,
        )
        .unwrap();
        interleaved.lines()
    }

    /// One buffer two writers append to, like a terminal showing stdout and
    /// stderr together.
    #[derive(Clone, Default)]
    struct SharedLines(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

    impl SharedLines {
        fn lines(&self) -> Vec<String> {
            String::from_utf8(self.0.borrow().clone())
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect()
        }
    }

    impl Write for SharedLines {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn errors_go_to_the_error_stream_and_are_counted() {
        let (out, errors, summary) =
            session_streams("jump\nstep\nback 5\nhash\n", 600, HISTORY_BYTES);
        assert!(out.iter().all(|l| l.starts_with("frame=")), "{out:#?}");
        assert_eq!(out.len(), 3, "start, step, hash: {out:#?}");
        assert_eq!(
            errors,
            [
                "error: unknown command \"jump\" (try help)",
                "error: cannot go back 5 frames from frame 1"
            ]
        );
        assert_eq!(summary.failed_commands, 2);
    }

    #[test]
    fn a_script_with_failed_commands_fails_but_a_terminal_session_does_not() {
        let failed = SessionSummary { failed_commands: 1 };
        assert_eq!(
            session_outcome(failed, false),
            Outcome::DebugCommandsFailed { count: 1 }
        );
        assert_ne!(session_outcome(failed, false).exit_code(), 0);
        assert_eq!(session_outcome(failed, true), Outcome::Success);
        assert_eq!(
            session_outcome(SessionSummary::default(), false),
            Outcome::Success
        );
    }

    fn status_lines(lines: &[String]) -> Vec<&String> {
        lines.iter().filter(|l| l.starts_with("frame=")).collect()
    }

    #[test]
    fn commands_parse_with_defaults_and_reject_bad_arguments() {
        assert_eq!(parse_command("step").unwrap(), Some(Command::Step(1)));
        assert_eq!(
            parse_command("  step 30 ").unwrap(),
            Some(Command::Step(30))
        );
        assert_eq!(parse_command("back").unwrap(), Some(Command::Back(1)));
        assert_eq!(parse_command("goto 120").unwrap(), Some(Command::Goto(120)));
        assert_eq!(
            parse_command("input 2 right+b").unwrap(),
            Some(Command::Input {
                player: 2,
                buttons: Buttons::RIGHT | Buttons::B
            })
        );
        assert_eq!(
            parse_command("dump /tmp/x").unwrap(),
            Some(Command::Dump("/tmp/x".into()))
        );
        assert_eq!(parse_command("QUIT").unwrap(), Some(Command::Quit));
        assert_eq!(parse_command("# comment").unwrap(), None);
        assert_eq!(parse_command("").unwrap(), None);
        assert!(parse_command("goto").is_err());
        assert!(parse_command("step -1").is_err());
        assert!(parse_command("step 99999999999").is_err());
        assert!(parse_command("input 5 A").unwrap_err().contains("1 to 4"));
        assert!(parse_command("input 1 TURBO")
            .unwrap_err()
            .contains("TURBO"));
        assert!(parse_command("hash now").is_err());
        assert!(parse_command("fly").unwrap_err().contains("fly"));
    }

    #[test]
    fn every_command_answers_with_a_status_line_and_eof_ends_the_session() {
        let lines = session("step 3\nhash\ninput 1 RIGHT\nstep\n", 600);
        let statuses = status_lines(&lines);
        assert_eq!(statuses.len(), 5, "{lines:#?}");
        assert!(statuses[0].starts_with("frame=0 memory="));
        assert!(statuses[1].starts_with("frame=3 "));
        assert_eq!(statuses[1], statuses[2], "hash does not move");
        assert!(statuses[4].starts_with("frame=4 "));
        assert!(lines.contains(&"player 1 holds RIGHT".to_string()));
        let fields: Vec<&str> = statuses[4].split(' ').collect();
        assert_eq!(fields.len(), 4);
        assert!(fields[1].strip_prefix("memory=").unwrap().len() == 16);
    }

    #[test]
    fn preemptive_run_ahead_keeps_the_memory_and_states_of_the_real_frames_stepped() {
        use crate::engine::sinks::run_ahead::RunAheadMode;
        // Frame by frame: memory and state checksums, and the memory after
        // going back 3 frames from the end.
        let steps = |args: RunAheadArgs| {
            let mut game = StubGame::deterministic();
            let mut debugger = Debugger::new(&mut game, 100, HISTORY_BYTES)
                .unwrap()
                .with_run_ahead(args);
            let mut kept = Vec::new();
            for frame in 0..40u32 {
                let mut held = NO_INPUTS;
                held[0] = Buttons::from_bits(u16::from(frame / 6 % 2 == 1) << 7);
                debugger.hold(held);
                debugger.step(1).unwrap();
                let checksums = debugger.checksums();
                kept.push((checksums.memory, checksums.state));
            }
            debugger.go_back_to(37).unwrap();
            let back = Checksum::of(debugger.game().game_memory());
            (kept, back)
        };
        let plain = steps(RunAheadArgs::default());
        for ahead in 1..=4 {
            let preemptive = steps(RunAheadArgs {
                ahead,
                ahead_mode: RunAheadMode::Preemptive,
            });
            assert_eq!(preemptive, plain, "run-ahead {ahead}");
        }
    }

    #[test]
    fn going_back_and_forth_shows_the_same_checksums_for_the_same_frame() {
        let lines = session(
            "input 1 RIGHT+B\ninput 2 DOWN\nstep 10\nhash\nback 4\nstep 4\nback 10\ngoto 10\ngoto 6\n",
            600,
        );
        let statuses = status_lines(&lines);
        let at_10: Vec<_> = statuses
            .iter()
            .filter(|l| l.starts_with("frame=10 "))
            .collect();
        assert_eq!(at_10.len(), 4, "{lines:#?}");
        assert!(at_10.iter().all(|l| l == &at_10[0]));
        let at_6: Vec<_> = statuses
            .iter()
            .filter(|l| l.starts_with("frame=6 "))
            .collect();
        assert_eq!(at_6.len(), 2, "{lines:#?}");
        assert_eq!(at_6[0], at_6[1]);
        // Frame 0 at the start, after each `input`, and after `back 10`.
        let at_0: Vec<_> = statuses
            .iter()
            .filter(|l| l.starts_with("frame=0 "))
            .collect();
        assert_eq!(at_0.len(), 4, "{lines:#?}");
        assert!(at_0.iter().all(|l| l == &at_0[0]));
    }

    #[test]
    fn going_back_beyond_the_history_is_an_error_and_the_session_goes_on() {
        let lines = session("step 20\nback 6\nback 1\ngoto 9\nhash\n", 5);
        assert!(lines[1].starts_with("frame=20 "), "{lines:#?}");
        assert!(
            lines[2].starts_with("error: frame 14 is beyond the history (oldest kept: frame 15"),
            "{lines:#?}"
        );
        assert!(lines[3].starts_with("frame=19 "), "{lines:#?}");
        assert!(
            lines[4].starts_with("error: frame 9 is beyond"),
            "{lines:#?}"
        );
        assert!(lines[5].starts_with("frame=19 "), "{lines:#?}");
    }

    #[test]
    fn a_byte_budget_forgets_the_oldest_frames_and_says_what_is_kept() {
        let mut game = StubGame::deterministic();
        let mut state = Vec::new();
        game.save_state(&mut state).unwrap();
        // Room for a few compressed stub states, not 600.
        let budget = 8 * state.len();
        let (out, errors, _) = session_streams(
            "input 1 RIGHT\nstep 100\nhistory\nback 99\nback 2\n",
            600,
            budget,
        );
        let (out, errors) = (out.join("\n"), errors.join("\n"));
        let history = out
            .lines()
            .find(|l| l.starts_with("history: frames "))
            .unwrap_or_else(|| panic!("{out}"));
        let kept: usize = history
            .split(['(', ' '])
            .skip_while(|w| !w.ends_with("..=100"))
            .nth(2)
            .and_then(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("{history}"));
        assert!((2..100).contains(&kept), "{history}");
        assert!(
            history.contains(&format!("frames {}..=100", 101 - kept)),
            "{history}"
        );
        assert!(
            errors.starts_with("error: frame 1 is beyond the history"),
            "{errors}"
        );
        assert!(
            out.lines().any(|l| l.starts_with("frame=98 ")),
            "going back within what is kept works: {out}"
        );
    }

    #[test]
    fn a_state_that_cannot_fit_the_byte_budget_is_refused_at_the_start() {
        let mut game = StubGame::deterministic();
        let err = debug_session(
            &mut game,
            600,
            4,
            None,
            &mut "".as_bytes(),
            &mut Vec::new(),
            &mut Vec::new(),
        )
        .expect_err("a 4-byte history cannot hold a state");
        assert_eq!(err.exit_code(), crate::engine::error::EXIT_USER_MISTAKE);
        assert!(
            crate::engine::error::error_chain(&err).contains("more than the whole history"),
            "{err}"
        );
    }

    #[test]
    fn bad_commands_print_an_error_and_are_skipped() {
        let lines = session("jump\nstep\nback 5\ndiff\nquit\nstep\n", 600);
        assert_eq!(lines[1], "error: unknown command \"jump\" (try help)");
        assert!(lines[2].starts_with("frame=1 "));
        assert!(lines[3].starts_with("error: cannot go back 5 frames"));
        assert!(lines[4].starts_with("error: no frame marked"));
        assert!(lines[5].starts_with("frame=1 "), "quit prints the status");
        assert_eq!(lines.len(), 6, "nothing runs after quit: {lines:#?}");
    }

    #[test]
    fn mark_and_diff_name_the_memory_bytes_that_changed() {
        let lines = session("mark\ninput 1 RIGHT\nstep 2\ndiff\n", 600);
        assert!(lines.contains(&"marked frame 0".to_string()), "{lines:#?}");
        let diff_at = lines
            .iter()
            .position(|l| l.starts_with("diff frame 0 -> frame 2"))
            .unwrap();
        let memory = &lines[diff_at + 1];
        // Player 1's x is byte 0; the input mix (0x08..0x0c) and the frame
        // counter (0x0c) follow.
        assert!(
            memory.starts_with("memory: 0x0000..0x0001, 0x0008..0x000d"),
            "{memory}"
        );
        assert!(lines[diff_at + 2].starts_with("state: 0x"), "{lines:#?}");
    }

    #[test]
    fn dump_writes_state_and_memory_files() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("at-frame-5");
        let lines = session(&format!("step 5\ndump {}\n", base.display()), 600);
        assert!(lines[2].starts_with("dumped frame 5 to "), "{lines:#?}");
        let mut game = StubGame::deterministic();
        let state = std::fs::read(dir.path().join("at-frame-5.state")).unwrap();
        game.load_state(&state).unwrap();
        assert_eq!(game.frames_run(), 5);
        let memory = std::fs::read(dir.path().join("at-frame-5.memory")).unwrap();
        assert_eq!(memory, game.game_memory());
    }

    #[test]
    fn an_overlong_line_is_an_error_not_a_buffer() {
        let script = format!("step {}\nstep\n", "9".repeat(MAX_LINE * 3));
        let lines = session(&script, 600);
        assert!(lines[1].contains("longer than"), "{lines:#?}");
        assert!(lines[2].starts_with("frame=1 "), "{lines:#?}");
    }
}

#[cfg(test)]
mod seek_tests {
    use super::*;
    use netcode::testing::StubGame;

    /// Recorded buttons that change every frame, and no repairs.
    struct Walk;

    impl RecordedFrames for Walk {
        fn first_frame(&self) -> u32 {
            0
        }

        fn inputs(&self, frame: u32) -> FrameInputs {
            let mut inputs = NO_INPUTS;
            inputs[0] = Buttons::from_bits(frame.wrapping_mul(2_654_435_761) as u16);
            inputs
        }

        fn state_at(&self, _frame: u32) -> Option<RecordedState<'_>> {
            None
        }
    }

    /// The checksums of playing `Walk` straight to `frame`.
    fn straight_to(frame: u32) -> Checksums {
        let mut game = StubGame::deterministic();
        let mut debugger = Debugger::new(&mut game, 10, 1 << 20)
            .unwrap()
            .following(&Walk)
            .unwrap();
        debugger.step(frame).unwrap();
        debugger.checksums()
    }

    #[test]
    fn a_recording_is_sought_back_past_the_history_and_forward_in_slices_to_the_frames_played_straight(
    ) {
        let mut game = StubGame::deterministic();
        let mut debugger = Debugger::new(&mut game, 10, 1 << 20)
            .unwrap()
            .following(&Walk)
            .unwrap();
        debugger.step(1500).unwrap();
        // Far behind the 10 frames of history: from the seek point at 240.
        assert!(debugger.seek_toward(300, u32::MAX).unwrap());
        assert_eq!(
            (debugger.frame(), debugger.checksums()),
            (300, straight_to(300))
        );
        // Within the history now: straight back.
        assert!(debugger.seek_toward(295, 1).unwrap());
        assert_eq!(debugger.checksums(), straight_to(295));
        // Forward, 100 frames a call, as the window seeks between pictures.
        let mut calls = 1;
        while !debugger.seek_toward(1900, 100).unwrap() {
            calls += 1;
        }
        assert_eq!(calls, 17);
        assert_eq!(debugger.checksums(), straight_to(1900));
        // To the first frame, and the picture of any frame is its own.
        assert!(debugger.seek_toward(0, u32::MAX).unwrap());
        assert_eq!(debugger.checksums().memory, straight_to(0).memory);
        assert!(debugger.seek_toward(1, u32::MAX).unwrap());
        assert_eq!(debugger.checksums(), straight_to(1));
    }

    #[test]
    fn going_to_a_frame_before_a_recording_began_is_an_error_and_the_debugger_stays_put() {
        let mut game = StubGame::deterministic();
        let mut debugger = Debugger::new_at(&mut game, 300, 10, 1 << 20)
            .unwrap()
            .following(&Walk)
            .unwrap();
        debugger.step(500).unwrap();
        let mut out = Vec::new();
        let refused = debugger.execute(&Command::Goto(0), &mut out).unwrap_err();
        let CommandError::User(message) = refused else {
            panic!("{refused:?}")
        };
        assert!(
            message.contains("before the first frame kept (frame 300)"),
            "{message}"
        );
        assert_eq!(debugger.frame(), 800);
        // The first frame itself is still reached.
        assert!(debugger.seek_toward(300, u32::MAX).unwrap());
        assert_eq!(debugger.frame(), 300);
    }

    #[test]
    fn a_recording_keeps_a_seek_point_every_interval_and_held_buttons_only_go_back_through_the_history(
    ) {
        let mut game = StubGame::deterministic();
        let mut debugger = Debugger::new(&mut game, 10, 1 << 20)
            .unwrap()
            .following(&Walk)
            .unwrap();
        debugger.step(SEEK_POINT_INTERVAL * 50).unwrap();
        // Its budget is Keyframes' own (tested there): these states are tiny.
        assert_eq!(debugger.seek_points.len(), 51);

        let mut local = StubGame::deterministic();
        let mut debugger = Debugger::new(&mut local, 10, 1 << 20).unwrap();
        debugger.step(500).unwrap();
        assert!(
            debugger.seek_points.is_empty(),
            "held buttons keep no seek points"
        );
        let refused = debugger.seek_toward(100, u32::MAX).unwrap_err();
        let CommandError::User(message) = refused else {
            panic!("{refused:?}")
        };
        assert!(message.contains("beyond the history"), "{message}");
    }

    #[test]
    fn keyframes_past_their_budget_keep_every_other_one_and_the_start() {
        let mut keyframes = Keyframes::new(Frame::new(100), 10, 3 * 1000);
        for frame in (100..200).step_by(10) {
            keyframes.offer(Frame::new(frame), &[0; 1000]);
        }
        assert!(keyframes.bytes() <= 3000, "{}", keyframes.bytes());
        assert_eq!(keyframes.at_or_before(Frame::new(99)), None);
        assert_eq!(
            keyframes.at_or_before(Frame::new(139)).unwrap().0,
            Frame::new(100)
        );
        keyframes.forget_after(Frame::new(120));
        assert_eq!(
            keyframes.at_or_before(Frame::new(199)).unwrap().0,
            Frame::new(100)
        );
    }
}
