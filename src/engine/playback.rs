//! Playing replays back: [`ReplayPlayback`] is the frame source (a window
//! or the debugger steps it, `replay play --headless` runs it flat out),
//! [`Keyframes`] make seeking cost at most one keyframe interval, and
//! [`verify`] proves a playback faithful against the recorded checkpoints.

use crate::engine::debugger::RecordedFrames;
use crate::engine::game::open_game_accepting;
pub use crate::engine::keyframes::Keyframes;
use crate::engine::recorded_state::{load_recorded_state, RecordedState};
use crate::engine::sinks::{FinalFrames, FramePass, FrameSink};
use crate::engine::{AppError, Game, GameArgs};
use netcode::checksum::memory_checksum;
use netcode::checksum::Checksum;
use netcode::diff::{ByteDiff, DEFAULT_RANGE_CAP};
use netcode::emulator::Emulator;
use netcode::input::Buttons;
use netcode::input::FrameInputs;
use netcode::replay::{read_replay, Replay, ReplayEvent};
use netcode::rollback::Frame;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Frames between keyframes: 15 s at 60 fps, as Slippi keeps them.
pub const KEYFRAME_INTERVAL: u32 = 900;

/// The most memory keyframes may take; past it every other one is dropped
/// (the interval doubles).
pub const KEYFRAME_BUDGET_BYTES: usize = 256 * 1024 * 1024;

/// Reads the replay at `path`, saying on stderr when it was cut short or
/// damaged.
pub fn load_replay(path: &Path) -> Result<Replay, AppError> {
    let file = std::fs::File::open(path).map_err(|source| AppError::OpenFile {
        what: "the replay",
        path: path.to_path_buf(),
        source,
    })?;
    let replay = read_replay(BufReader::new(file)).map_err(|source| AppError::ReadReplay {
        path: path.to_path_buf(),
        source,
    })?;
    let held = frames_held(&replay);
    if let Some(why) = replay.stops_short() {
        eprintln!("warning: {} is {why}: it holds {held}", path.display());
    } else if replay.end.is_none() {
        eprintln!(
            "warning: {} has no end record (the recording was stopped): it holds {held}",
            path.display(),
        );
    }
    Ok(replay)
}

/// `frames 0..3600` (the frames a replay holds, numbered as in the match).
pub fn frames_held(replay: &Replay) -> String {
    format!(
        "frames {}..{}",
        replay.start_frame().number(),
        replay.end_frame().number()
    )
}

/// Which core and content to play a replay with.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ReplayGameArgs {
    /// The core [default: the one the replay was recorded with, where it was].
    #[arg(long, value_name = "CORE")]
    pub core: Option<PathBuf>,
    /// The content [default: the replay's, where it was].
    #[arg(long, value_name = "ROM")]
    pub rom: Option<PathBuf>,
    /// Where the core looks for BIOS and other system files (as for `run`).
    #[arg(long, value_name = "DIR")]
    pub system_dir: Option<PathBuf>,
}

impl ReplayGameArgs {
    /// The switches that give these choices on a command line.
    pub fn to_args(&self) -> Vec<std::ffi::OsString> {
        let switches = [
            ("--core", &self.core),
            ("--rom", &self.rom),
            ("--system-dir", &self.system_dir),
        ];
        switches
            .into_iter()
            .filter_map(|(switch, path)| {
                path.as_ref()
                    .map(|path| [switch.into(), path.as_os_str().to_owned()])
            })
            .flatten()
            .collect()
    }
}

/// Opens the game `replay` was recorded with, refusing another core, core
/// version or content with an error naming what differs.
pub fn open_recorded_game(
    replay: &Replay,
    args: &ReplayGameArgs,
) -> Result<Box<dyn Game>, AppError> {
    let header = &replay.header;
    let core = match &args.core {
        Some(core) => core.clone(),
        None if Path::new(&header.core_path).exists() => PathBuf::from(&header.core_path),
        None => {
            return Err(AppError::BadArgument {
                message: format!(
                    "the replay's core {} is not at {} any more: give --core",
                    header.core_name, header.core_path
                ),
            })
        }
    };
    let rom = match &args.rom {
        Some(rom) => Some(rom.clone()),
        None if header.content_name.is_empty() => None,
        None if Path::new(&header.content_path).exists() => {
            Some(PathBuf::from(&header.content_path))
        }
        None => {
            return Err(AppError::BadArgument {
                message: format!(
                    "the replay's content {} is not at {} any more: give --rom",
                    header.content_name, header.content_path
                ),
            })
        }
    };
    let content_hash = crate::engine::sinks::recorder::content_checksum(rom.as_deref())?;
    if content_hash != header.content_hash {
        return Err(AppError::ReplayRefused {
            reason: format!(
                "the replay was recorded with content {} ({}), {} is different ({})",
                header.content_name,
                header.content_hash,
                rom.as_deref()
                    .map_or("no content".to_string(), |rom| rom.display().to_string()),
                content_hash
            ),
        });
    }
    let accept = |core: &libretro_host::CoreInfo| {
        if core.name != header.core_name {
            return Err(AppError::ReplayRefused {
                reason: format!(
                    "the replay was recorded with the core {}, this core is {}",
                    header.core_name, core.name
                ),
            });
        }
        if core.version != header.core_version {
            return Err(AppError::ReplayRefused {
                reason: format!(
                    "the replay was recorded with {} version {}, this core is version {}",
                    header.core_name, header.core_version, core.version
                ),
            });
        }
        Ok(())
    };
    let game = open_game_accepting(
        &GameArgs {
            core,
            rom,
            options: header.core_options.clone(),
            system_dir: args.system_dir.clone(),
            save_dir: None,
        },
        accept,
    )?;
    Ok(game)
}

/// The state a replay's playback loads at its start frame; none for one
/// that starts from the content as loaded (a lockstep match of a core that
/// cannot save, from frame 0).
pub fn start_state(replay: &Replay) -> Option<RecordedState<'_>> {
    let from_content = replay.header.start_state.is_empty() && replay.start_frame().number() == 0;
    (!from_content).then_some(RecordedState {
        bytes: &replay.header.start_state,
        memory: Some(replay.header.start_memory_checksum),
        what: "the replay's start state",
    })
}

/// Steps a game through a replay's frames: the start state, then each
/// frame's recorded inputs, with repairs loaded and departed players
/// holding nothing where the recording says. The game always stands at the
/// start of [`ReplayPlayback::frame`], that frame's events applied.
#[derive(Debug)]
pub struct ReplayPlayback<'r> {
    replay: &'r Replay,
    frame: Frame,
    /// Playback draws only the frames it is asked to: no picture checksums.
    final_frames: FinalFrames,
}

impl<'r> ReplayPlayback<'r> {
    /// Loads the replay's start state into `game`: playback stands at the
    /// replay's start frame. An empty one (a lockstep match of a core that
    /// cannot save) is the content as loaded, at frame 0.
    pub fn start<G: Emulator + ?Sized>(replay: &'r Replay, game: &mut G) -> Result<Self, AppError> {
        let frame = replay.start_frame();
        if let Some(start) = start_state(replay) {
            load_recorded_state(game, frame, start)?;
        }
        let playback = ReplayPlayback {
            replay,
            frame,
            final_frames: FinalFrames::new(false),
        };
        playback.apply_events(game)?;
        Ok(playback)
    }

    /// The frame the game stands at the start of.
    pub fn frame(&self) -> Frame {
        self.frame
    }

    /// Whether every recorded frame has been run.
    pub fn at_end(&self) -> bool {
        self.frame >= self.replay.end_frame()
    }

    /// Runs the current frame (drawing it if `render`), tells `sink` it is
    /// final, and applies the next frame's events. Past the last recorded
    /// frame nobody holds anything.
    pub fn step<G: Emulator + ?Sized>(
        &mut self,
        game: &mut G,
        render: bool,
        sink: &mut dyn FrameSink,
    ) -> Result<(), AppError> {
        let inputs = RecordedFrames::inputs(self.replay, self.frame.number());
        let pass = if render {
            FramePass::Shown
        } else {
            FramePass::Unshown
        };
        let players = usize::from(self.replay.header.players);
        self.final_frames
            .run(game, self.frame, &inputs[..players], pass, sink)?;
        if render {
            sink.frame_shown(self.frame, game.video_frame());
        }
        self.frame = self.frame.next();
        self.apply_events(game)
    }

    /// Loads the current frame's repair state, if any (departures are in
    /// the inputs).
    fn apply_events<G: Emulator + ?Sized>(&self, game: &mut G) -> Result<(), AppError> {
        if let Some(state) = self.replay.state_at(self.frame.number()) {
            load_recorded_state(game, self.frame, state)?;
        }
        Ok(())
    }

    /// Puts playback at the start of `frame` from a state saved there (its
    /// events applied), which `game` loads.
    fn resume_at<G: Emulator + ?Sized>(
        &mut self,
        game: &mut G,
        frame: Frame,
        state: &[u8],
    ) -> Result<(), AppError> {
        game.load_state(state)
            .map_err(AppError::at_frame(frame.number()))?;
        self.frame = frame;
        Ok(())
    }
}

/// `debug --replay`: the debugger steps through the recorded frames.
impl RecordedFrames for Replay {
    fn inputs(&self, frame: u32) -> FrameInputs {
        let frame = Frame::new(frame);
        let mut inputs = Replay::inputs(self, frame);
        for event in &self.events {
            if let ReplayEvent::PlayerLeft {
                frame: left,
                player,
            } = event
            {
                if *left <= frame {
                    if let Some(held) = inputs.get_mut(usize::from(*player)) {
                        *held = Buttons::NONE;
                    }
                }
            }
        }
        inputs
    }

    fn first_frame(&self) -> u32 {
        self.start_frame().number()
    }

    fn state_at(&self, frame: u32) -> Option<RecordedState<'_>> {
        // A later repair of the same frame replaced the earlier one.
        self.events.iter().rev().find_map(|event| match event {
            ReplayEvent::Repair {
                frame: at,
                memory,
                state,
            } if at.number() == frame => Some(RecordedState {
                bytes: state,
                memory: *memory,
                what: "the replay's repair state",
            }),
            _ => None,
        })
    }
}

/// Building keyframes over a replay, and seeking a playback with them.
impl Keyframes {
    /// Plays the whole replay on `game` without drawing, keeping a state
    /// every [`KEYFRAME_INTERVAL`] frames within [`KEYFRAME_BUDGET_BYTES`];
    /// `game` ends at the replay's last frame.
    pub fn build<G: Emulator + ?Sized>(replay: &Replay, game: &mut G) -> Result<Self, AppError> {
        let mut keyframes = Keyframes::new(
            replay.start_frame(),
            KEYFRAME_INTERVAL,
            KEYFRAME_BUDGET_BYTES,
        );
        let mut playback = ReplayPlayback::start(replay, game)?;
        let mut state = Vec::new();
        loop {
            let frame = playback.frame();
            if keyframes.wants(frame) {
                game.save_state(&mut state)
                    .map_err(AppError::at_frame(frame.number()))?;
                keyframes.offer(frame, &state);
            }
            if playback.at_end() {
                break;
            }
            playback.step(game, false, &mut ())?;
        }
        Ok(keyframes)
    }

    /// Puts `playback` (and `game`) at the start of `target`: loads the last
    /// keyframe before it and re-simulates from there, drawing the frame
    /// before `target` so the picture is the one playing straight there
    /// shows.
    pub fn seek<G: Emulator + ?Sized>(
        &self,
        playback: &mut ReplayPlayback<'_>,
        game: &mut G,
        target: Frame,
    ) -> Result<(), AppError> {
        // The last one before the target (the first one for the first frame).
        let before = Frame::new(target.number().saturating_sub(1).max(self.start().number()));
        let Some((frame, state)) = self.at_or_before(before) else {
            return Ok(());
        };
        playback.resume_at(game, frame, state)?;
        while playback.frame() < target {
            let render = playback.frame().next() == target;
            playback.step(game, render, &mut ())?;
        }
        Ok(())
    }
}

/// The first checkpoint a playback disagrees with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The frame.
    pub frame: Frame,
    /// Which checksum differs (`memory` or `video`).
    pub kind: &'static str,
    /// The recorded checksum.
    pub recorded: Checksum,
    /// Playback's.
    pub played: Checksum,
    /// The last checkpoint before it that agreed (the start state when none
    /// did).
    pub last_good: Frame,
    /// The memory of playing from `last_good` to `frame` twice, compared:
    /// differing regions mean this playback is not deterministic; none
    /// means the recording's run differed from any run here.
    pub replayed_memory: ByteDiff,
}

/// What verifying found.
#[derive(Clone, Debug)]
pub struct Verification {
    /// Checkpoints compared (memory and, where recorded, video).
    pub checked: usize,
    /// The first disagreement, if any (verification stops there).
    pub mismatch: Option<Mismatch>,
    /// Frames played.
    pub frames: u32,
    /// The frame playback stopped at the start of (the replay's end frame,
    /// or the mismatching frame).
    pub stopped_at: Frame,
    /// Wall-clock time of the playback.
    pub elapsed: Duration,
}

/// Plays the whole replay on `game` at full speed, comparing every
/// recorded checkpoint, and on the first mismatch plays the stretch since
/// the last good checkpoint again to report the memory regions that differ.
pub fn verify<G: Emulator + ?Sized>(
    replay: &Replay,
    game: &mut G,
) -> Result<Verification, AppError> {
    let started = Instant::now();
    let mut playback = ReplayPlayback::start(replay, game)?;
    let mut scratch = Vec::new();
    let mut checked = 0;
    let mut last_good = (replay.start_frame(), replay.header.start_state.clone());
    let mut checkpoints = replay.checkpoints.iter().peekable();
    loop {
        let frame = playback.frame();
        while checkpoints.next_if(|c| c.frame < frame).is_some() {}
        if let Some(checkpoint) = checkpoints.next_if(|c| c.frame == frame) {
            let memory =
                memory_checksum(game, &mut scratch).map_err(AppError::at_frame(frame.number()))?;
            let video = checkpoint.video.map(|recorded| {
                let played = game
                    .video_frame()
                    .map(|picture| Checksum::of_video(&picture))
                    .unwrap_or_default();
                (recorded, played)
            });
            let differs = if memory != checkpoint.memory {
                Some(("memory", checkpoint.memory, memory))
            } else {
                video
                    .filter(|(recorded, played)| recorded != played)
                    .map(|(recorded, played)| ("video", recorded, played))
            };
            if let Some((kind, recorded, played)) = differs {
                let replayed_memory = replay_stretch(replay, game, &last_good, frame)?;
                return Ok(Verification {
                    checked,
                    mismatch: Some(Mismatch {
                        frame,
                        kind,
                        recorded,
                        played,
                        last_good: last_good.0,
                        replayed_memory,
                    }),
                    frames: frame.number() - replay.start_frame().number(),
                    stopped_at: frame,
                    elapsed: started.elapsed(),
                });
            }
            checked += 1;
            // A core that cannot save (a lockstep match's) keeps the start
            // as the last good point.
            if game.save_state(&mut scratch).is_ok() {
                std::mem::swap(&mut last_good.1, &mut scratch);
                last_good.0 = frame;
            }
        }
        if playback.at_end() {
            break;
        }
        // Only the picture a checkpoint compares needs drawing.
        let next = playback.frame().next();
        let render = replay
            .checkpoint(next)
            .is_some_and(|checkpoint| checkpoint.video.is_some());
        playback.step(game, render, &mut ())?;
    }
    Ok(Verification {
        checked,
        mismatch: None,
        frames: playback.frame().number() - replay.start_frame().number(),
        stopped_at: playback.frame(),
        elapsed: started.elapsed(),
    })
}

/// The memory at `frame` now, against playing from `from` to `frame` again.
fn replay_stretch<G: Emulator + ?Sized>(
    replay: &Replay,
    game: &mut G,
    from: &(Frame, Vec<u8>),
    frame: Frame,
) -> Result<ByteDiff, AppError> {
    let first = game.game_memory().to_vec();
    let mut playback = ReplayPlayback::start(replay, game)?;
    playback.resume_at(game, from.0, &from.1)?;
    while playback.frame() < frame {
        playback.step(game, false, &mut ())?;
    }
    Ok(ByteDiff::between(
        &first,
        game.game_memory(),
        DEFAULT_RANGE_CAP,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use netcode::replay::{EndReason, ReplayHeader, ReplayWriter, CHECKPOINT_INTERVAL};
    use netcode::testing::{StubGame, HIDDEN_STATE_OFFSET};

    fn buttons(seed: u32, frame: u32) -> [Buttons; 2] {
        let pick =
            |n: u32| [Buttons::RIGHT, Buttons::DOWN | Buttons::B, Buttons::LEFT][(n % 3) as usize];
        [pick(frame / 7 + seed), pick(frame / 11 + 2 * seed)]
    }

    fn header(game: &mut StubGame) -> ReplayHeader {
        let mut start_state = Vec::new();
        game.save_state(&mut start_state).unwrap();
        ReplayHeader {
            netcade_version: "test".into(),
            core_name: "stub".into(),
            core_version: "1".into(),
            core_path: String::new(),
            content_name: String::new(),
            content_path: String::new(),
            content_hash: Checksum(0),
            core_options: vec![],
            players: 2,
            frames_per_second: 60.0,
            sample_rate: 48_000.0,
            recorded_at_unix: 0,
            player_names: vec![],
            start_frame: Frame::new(0),
            start_memory_checksum: Checksum::of(game.game_memory()),
            start_state,
        }
    }

    /// How a recording departs from plain play.
    #[derive(Clone, Copy, Default)]
    struct Twist {
        /// (F, A): once frame A is recorded the game is repaired at F (with
        /// another run's state of F) and re-simulated, as a netplay joiner's
        /// repair arrives after F became final.
        repair: Option<(u32, u32)>,
        /// Whether the repair is written into the replay.
        record_repair: bool,
        /// A checkpoint whose recorded checksum is wrong.
        wrong_checkpoint: Option<u32>,
    }

    fn recorded(mut game: StubGame, frames: u32, twist: Twist) -> Replay {
        let mut writer = ReplayWriter::new(Vec::new(), &header(&mut game)).unwrap();
        for frame in 0..frames {
            if let Some((repaired, after)) = twist.repair.filter(|&(_, after)| after == frame) {
                let mut other = StubGame::deterministic();
                for earlier in 0..repaired {
                    other.run_frame(&buttons(9, earlier), false);
                }
                let mut state = Vec::new();
                other.save_state(&mut state).unwrap();
                if twist.record_repair {
                    let memory = Checksum::of(other.game_memory());
                    writer.repair(Frame::new(repaired), &state, memory).unwrap();
                }
                game.load_state(&state).unwrap();
                for earlier in repaired..after {
                    game.run_frame(&buttons(1, earlier), false);
                }
            }
            let mut memory = Checksum::of(game.game_memory());
            if twist.wrong_checkpoint == Some(frame) {
                memory.0 ^= 1;
            }
            writer
                .frame(Frame::new(frame), &buttons(1, frame), Some(memory), None)
                .unwrap();
            game.run_frame(&buttons(1, frame), true);
        }
        let (bytes, _) = writer.finish(EndReason::Finished).unwrap();
        read_replay(&bytes[..]).unwrap()
    }

    #[test]
    fn a_replay_verifies_on_every_checkpoint_of_the_run_it_recorded() {
        let replay = recorded(StubGame::deterministic(), 600, Twist::default());
        let verification = verify(&replay, &mut StubGame::deterministic()).unwrap();
        assert_eq!(verification.mismatch, None);
        // Every 60 frames, and the last frame.
        assert_eq!(
            verification.checked,
            (600 / CHECKPOINT_INTERVAL) as usize + 1
        );
        assert_eq!(verification.frames, 600);
    }

    #[test]
    fn a_desync_repair_recorded_late_is_loaded_at_its_frame_and_the_replay_verifies() {
        let twist = Twist {
            repair: Some((120, 170)),
            record_repair: true,
            ..Twist::default()
        };
        let replay = recorded(StubGame::deterministic(), 600, twist);
        let verification = verify(&replay, &mut StubGame::deterministic()).unwrap();
        assert_eq!(verification.mismatch, None);
        // The checkpoint of frame 120 recorded before the repair is dropped;
        // the last frame's is checked too.
        assert_eq!(verification.checked, (600 / CHECKPOINT_INTERVAL) as usize);

        let unrecorded = recorded(
            StubGame::deterministic(),
            600,
            Twist {
                record_repair: false,
                ..twist
            },
        );
        let mismatch = verify(&unrecorded, &mut StubGame::deterministic())
            .unwrap()
            .mismatch
            .expect("without the repair playback parts from the recording");
        assert_eq!(mismatch.frame, Frame::new(180));
    }

    #[test]
    fn a_mismatch_in_a_deterministic_playback_blames_the_recording() {
        let twist = Twist {
            wrong_checkpoint: Some(240),
            ..Twist::default()
        };
        let replay = recorded(StubGame::deterministic(), 600, twist);
        let verification = verify(&replay, &mut StubGame::deterministic()).unwrap();
        let mismatch = verification.mismatch.unwrap();
        assert_eq!((mismatch.frame, mismatch.kind), (Frame::new(240), "memory"));
        assert_eq!(mismatch.last_good, Frame::new(180));
        assert!(mismatch.replayed_memory.is_identical());
        assert_eq!(verification.checked, 4);
    }

    #[test]
    fn a_mismatch_in_a_nondeterministic_playback_names_the_memory_that_changes() {
        let twist = Twist {
            wrong_checkpoint: Some(240),
            ..Twist::default()
        };
        let replay = recorded(StubGame::with_hidden_state(), 600, twist);
        let mismatch = verify(&replay, &mut StubGame::with_hidden_state())
            .unwrap()
            .mismatch
            .unwrap();
        let ranges = &mismatch.replayed_memory.ranges;
        assert_eq!(ranges.len(), 1, "{ranges:?}");
        assert_eq!(ranges[0], HIDDEN_STATE_OFFSET..HIDDEN_STATE_OFFSET + 2);
    }

    #[test]
    fn a_seek_lands_where_playing_straight_does_before_on_and_after_a_keyframe() {
        let replay = recorded(StubGame::deterministic(), 2000, Twist::default());
        let mut game = StubGame::deterministic();
        let keyframes = Keyframes::build(&replay, &mut game).unwrap();
        assert_eq!(keyframes.len(), 3, "frames 0, 900 and 1800");
        for target in [0, 1, 899, 900, 901, 1999, 2000] {
            let mut straight_game = StubGame::deterministic();
            let mut straight = ReplayPlayback::start(&replay, &mut straight_game).unwrap();
            while straight.frame().number() < target {
                straight.step(&mut straight_game, true, &mut ()).unwrap();
            }
            let mut playback = ReplayPlayback::start(&replay, &mut game).unwrap();
            keyframes
                .seek(&mut playback, &mut game, Frame::new(target))
                .unwrap();
            assert_eq!(playback.frame().number(), target);
            assert_eq!(
                game.game_memory(),
                straight_game.game_memory(),
                "frame {target}"
            );
            let picture = |g: &StubGame| g.video_frame().map(|v| Checksum::of_video(&v));
            if target > 0 {
                assert_eq!(picture(&game), picture(&straight_game), "frame {target}");
            }
        }
    }
}
