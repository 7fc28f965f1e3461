//! GGPO's sync test: pretend every frame was mispredicted.
//!
//! After each frame is run, the game goes back `distance` frames (loads the
//! state saved there), re-simulates the same inputs and compares each
//! re-simulated frame's checksums with the first pass. A game (or a save/load
//! path) that is not deterministic shows up at the first frame that differs.
//!
//! Frame numbers: "frame N" is the game after N frames have run (frame 0 is
//! the game as loaded), the same numbering `debug` shows.

use crate::app::diff::{ByteDiff, DEFAULT_RANGE_CAP};
use crate::app::inputs::{FrameInputs, InputSource, InputSpec, NO_INPUTS};
use crate::app::{checksums_json, open_game, AppError, GameArgs, Outcome};
use crate::checksum::{Checksum, Checksums};
use crate::emulator::Emulator;
use indicatif::{ProgressBar, ProgressStyle};
use std::fmt;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The longest check distance allowed: the ring holds `distance + 1` full
/// states, and real cores' states reach a megabyte.
pub const MAX_CHECK_DISTANCE: u32 = 120;

/// Which checksums a sync-test compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compare {
    pub memory: bool,
    pub state: bool,
    pub video: bool,
}

impl Compare {
    /// Game memory and the video frame: raw states of some real cores hold
    /// incidental bytes that differ although the game is the same.
    pub const DEFAULT: Compare = Compare {
        memory: true,
        state: false,
        video: true,
    };
    pub const ALL: Compare = Compare {
        memory: true,
        state: true,
        video: true,
    };

    /// The kinds among `kinds` this comparison looks at.
    fn filter(self, kinds: ChecksumKinds) -> ChecksumKinds {
        ChecksumKinds {
            memory: self.memory && kinds.memory,
            state: self.state && kinds.state,
            video: self.video && kinds.video,
        }
    }
}

/// What `--compare` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareArg {
    Memory,
    State,
    Video,
    All,
}

impl From<CompareArg> for Compare {
    fn from(arg: CompareArg) -> Compare {
        let none = Compare {
            memory: false,
            state: false,
            video: false,
        };
        match arg {
            CompareArg::Memory => Compare {
                memory: true,
                ..none
            },
            CompareArg::State => Compare {
                state: true,
                ..none
            },
            CompareArg::Video => Compare {
                video: true,
                ..none
            },
            CompareArg::All => Compare::ALL,
        }
    }
}

/// `memory+video`.
impl fmt::Display for Compare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        ChecksumKinds {
            memory: self.memory,
            state: self.state,
            video: self.video,
        }
        .fmt(f)
    }
}

/// A set of checksum kinds (which differ, which are compared).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChecksumKinds {
    pub memory: bool,
    pub state: bool,
    pub video: bool,
}

impl ChecksumKinds {
    pub fn differing(a: &Checksums, b: &Checksums) -> ChecksumKinds {
        ChecksumKinds {
            memory: a.memory != b.memory,
            state: a.state != b.state,
            video: a.video != b.video,
        }
    }

    pub fn any(self) -> bool {
        self.memory || self.state || self.video
    }

    pub fn names(self) -> Vec<&'static str> {
        [
            (self.memory, "memory"),
            (self.state, "state"),
            (self.video, "video"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
    }
}

impl fmt::Display for ChecksumKinds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = self.names();
        if names.is_empty() {
            f.write_str("nothing")
        } else {
            f.write_str(&names.join("+"))
        }
    }
}

/// The first frame that did not re-simulate the same, with both versions.
#[derive(Clone, Debug)]
pub struct Desync {
    /// The frame whose re-simulation differs (the game after this many frames).
    pub frame: u32,
    /// The frame the re-simulation started from (the state loaded).
    pub loaded_frame: u32,
    /// The frame the game had reached when it went back.
    pub rolled_back_from: u32,
    /// Compared kinds that differ.
    pub compared_differing: ChecksumKinds,
    /// All kinds that differ, compared or not.
    pub all_differing: ChecksumKinds,
    pub first_pass: Checksums,
    pub resimulated: Checksums,
    pub memory_diff: ByteDiff,
    pub state_diff: ByteDiff,
    pub first_pass_state: Vec<u8>,
    pub first_pass_memory: Vec<u8>,
    pub resimulated_state: Vec<u8>,
    pub resimulated_memory: Vec<u8>,
}

impl Desync {
    /// `memory differs at 0x0010..0x0012; video differs`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if self.compared_differing.memory {
            parts.push(format!("memory differs at {}", self.memory_diff));
        }
        if self.compared_differing.state {
            parts.push(format!("state differs at {}", self.state_diff));
        }
        if self.compared_differing.video {
            parts.push("video differs".to_string());
        }
        parts.join("; ")
    }
}

/// What a sync-test found.
#[derive(Clone, Debug)]
pub struct SyncTestReport {
    /// Frames run in the first pass.
    pub frames: u32,
    pub distance: u32,
    pub compare: Compare,
    /// Frames re-simulated and compared.
    pub resimulated_frames: u64,
    /// Checksums of the last frame reached in the first pass.
    pub checksums: Checksums,
    pub desync: Option<Box<Desync>>,
}

impl SyncTestReport {
    /// The one-line verdict.
    pub fn verdict(&self) -> String {
        match &self.desync {
            None => format!(
                "sync-test passed: {} frames, distance {}, compared {}",
                self.frames, self.distance, self.compare
            ),
            Some(desync) => format!(
                "sync-test FAILED at frame {}: {}",
                desync.frame,
                desync.summary()
            ),
        }
    }
}

/// One frame boundary kept in the ring: the game after `frame` frames.
#[derive(Default)]
struct Saved {
    state: Vec<u8>,
    memory: Vec<u8>,
    checksums: Checksums,
    /// The inputs of the frame that starts here.
    inputs: FrameInputs,
}

/// Runs a sync-test of `frames` frames at check distance `distance`.
/// `progress` is told the frame reached now and then.
pub fn sync_test<G: Emulator + ?Sized>(
    game: &mut G,
    frames: u32,
    distance: u32,
    compare: Compare,
    inputs: &mut InputSource,
    progress: &mut dyn FnMut(u32),
) -> Result<SyncTestReport, AppError> {
    if !(1..=MAX_CHECK_DISTANCE).contains(&distance) {
        return Err(AppError::BadArgument {
            message: format!(
                "the check distance must be between 1 and {MAX_CHECK_DISTANCE} (got {distance})"
            ),
        });
    }
    // Boundaries `reached - distance ..= reached` are kept.
    let slots = distance as usize + 1;
    let mut ring: Vec<Saved> = (0..slots).map(|_| Saved::default()).collect();
    let mut scratch_state = Vec::new();
    let mut report = SyncTestReport {
        frames: 0,
        distance,
        compare,
        resimulated_frames: 0,
        checksums: Checksums::default(),
        desync: None,
    };

    save_boundary(game, &mut ring[0], 0)?;
    report.checksums = ring[0].checksums;
    for frame in 0..frames {
        let frame_inputs = inputs.next_frame();
        ring[frame as usize % slots].inputs = frame_inputs;
        game.run_frame(&frame_inputs, true);
        let reached = frame + 1;
        save_boundary(game, &mut ring[reached as usize % slots], reached)?;
        report.frames = reached;
        report.checksums = ring[reached as usize % slots].checksums;

        // Never back to frame 0: the state saved before a core's first
        // `retro_run` is a boot state real cores do not replay faithfully
        // (stella's combat.bin draws a different first picture), and no
        // game frame lives there.
        if reached < 2 {
            progress(reached);
            continue;
        }
        let start = reached.saturating_sub(distance).max(1);
        game.load_state(&ring[start as usize % slots].state)
            .map_err(AppError::at_frame(start))?;
        for resimulated in start..reached {
            let saved_inputs = ring[resimulated as usize % slots].inputs;
            game.run_frame(&saved_inputs, compare.video);
            report.resimulated_frames += 1;
            let after = resimulated + 1;
            let first = &ring[after as usize % slots];
            let mut now = Checksums {
                memory: Checksum::of(game.game_memory()),
                ..first.checksums
            };
            if compare.video {
                now.video = game
                    .video_frame()
                    .map(|video| Checksum::of_video(&video))
                    .unwrap_or_default();
            }
            if compare.state {
                game.save_state(&mut scratch_state)
                    .map_err(AppError::at_frame(after))?;
                now.state = Checksum::of(&scratch_state);
            }
            let differing = compare.filter(ChecksumKinds::differing(&first.checksums, &now));
            if differing.any() {
                if !compare.state {
                    game.save_state(&mut scratch_state)
                        .map_err(AppError::at_frame(after))?;
                }
                let resimulated_checksums = Checksums::of_game(game, &scratch_state);
                report.desync = Some(Box::new(Desync {
                    frame: after,
                    loaded_frame: start,
                    rolled_back_from: reached,
                    compared_differing: differing,
                    all_differing: ChecksumKinds::differing(
                        &first.checksums,
                        &resimulated_checksums,
                    ),
                    first_pass: first.checksums,
                    resimulated: resimulated_checksums,
                    memory_diff: ByteDiff::between(
                        &first.memory,
                        game.game_memory(),
                        DEFAULT_RANGE_CAP,
                    ),
                    state_diff: ByteDiff::between(&first.state, &scratch_state, DEFAULT_RANGE_CAP),
                    first_pass_state: first.state.clone(),
                    first_pass_memory: first.memory.clone(),
                    resimulated_state: scratch_state,
                    resimulated_memory: game.game_memory().to_vec(),
                }));
                return Ok(report);
            }
        }
        progress(reached);
    }
    Ok(report)
}

/// Saves the game as it is now (after `frame` frames) into `slot`, reusing
/// its buffers.
fn save_boundary<G: Emulator + ?Sized>(
    game: &mut G,
    slot: &mut Saved,
    frame: u32,
) -> Result<(), AppError> {
    game.save_state(&mut slot.state)
        .map_err(AppError::at_frame(frame))?;
    slot.memory.clear();
    slot.memory.extend_from_slice(game.game_memory());
    slot.checksums = Checksums::of_game(game, &slot.state);
    slot.inputs = NO_INPUTS;
    Ok(())
}

/// Arguments of `netcade synctest`.
#[derive(Clone, Debug, clap::Args)]
pub struct SyncTestArgs {
    #[command(flatten)]
    pub game: GameArgs,
    /// How many frames to run.
    #[arg(long, value_name = "N")]
    pub frames: u32,
    /// How many frames to go back and re-simulate after every frame.
    #[arg(long, value_name = "D", default_value_t = 7)]
    pub check_distance: u32,
    /// Where the buttons come from: none, random:SEED, or an input script file.
    #[arg(long, value_name = "SOURCE", default_value_t = InputSpec::default())]
    pub inputs: InputSpec,
    /// What to compare [default: memory and video].
    #[arg(long, value_enum, value_name = "WHAT")]
    pub compare: Option<CompareArg>,
    /// Where to write both versions on a desync (one subdirectory per run).
    #[arg(long, value_name = "DIR", default_value = "netcade-dumps")]
    pub dump_dir: PathBuf,
    /// Ends the output with one JSON object on its own line.
    #[arg(long)]
    pub json: bool,
}

/// `netcade synctest`.
pub fn synctest_command(args: &SyncTestArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    if args.frames == 0 {
        return Err(AppError::BadArgument {
            message: "--frames must be at least 1".to_string(),
        });
    }
    let compare = args.compare.map(Compare::from).unwrap_or(Compare::DEFAULT);
    let mut inputs = InputSource::open(&args.inputs)?;
    let mut game = open_game(&args.game)?;
    writeln!(out, "{}", game.title())?;

    let bar = progress_bar(u64::from(args.frames), args.json);
    let started = Instant::now();
    let report = sync_test(
        game.as_mut(),
        args.frames,
        args.check_distance,
        compare,
        &mut inputs,
        &mut |frame| {
            if frame % 64 == 0 {
                bar.set_position(u64::from(frame));
            }
        },
    )?;
    let elapsed = started.elapsed();
    bar.finish_and_clear();

    let mut dump = None;
    if let Some(desync) = &report.desync {
        describe_desync(desync, out)?;
        let dir = write_dumps(&args.dump_dir, desync)?;
        writeln!(out, "both versions written to {}", dir.display())?;
        dump = Some(dir);
    }
    writeln!(out, "{}", report.verdict())?;
    if args.json {
        let mut json = serde_json::json!({
            "command": "synctest",
            "game": game.title(),
            "inputs": args.inputs.to_string(),
            "frames": report.frames,
            "check_distance": report.distance,
            "compared": report.compare.to_string(),
            "resimulated_frames": report.resimulated_frames,
            "seconds": elapsed.as_secs_f64(),
            "checksums": checksums_json(&report.checksums),
            "passed": report.desync.is_none(),
            "verdict": report.verdict(),
        });
        if let Some(desync) = &report.desync {
            json["desync"] = serde_json::json!({
                "frame": desync.frame,
                "loaded_frame": desync.loaded_frame,
                "differing": desync.compared_differing.names(),
                "first_pass": checksums_json(&desync.first_pass),
                "resimulated": checksums_json(&desync.resimulated),
                "memory": desync.memory_diff.to_json(),
                "state": desync.state_diff.to_json(),
                "dump_dir": dump.as_ref().map(|dir| dir.display().to_string()),
            });
        }
        writeln!(out, "{json}")?;
    }
    Ok(match report.desync {
        None => Outcome::Success,
        Some(_) => Outcome::SyncTestFailed,
    })
}

/// A progress bar on stderr, hidden when stderr is not a terminal or the
/// output is JSON.
pub fn progress_bar(length: u64, json: bool) -> ProgressBar {
    if json || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(length);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} frames ({per_sec}, {eta} left)")
    {
        bar.set_style(style);
    }
    bar
}

/// The desync report lines.
pub fn describe_desync(desync: &Desync, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "desync: frame {} re-simulated from frame {} (after reaching frame {}) differs in {}",
        desync.frame, desync.loaded_frame, desync.rolled_back_from, desync.compared_differing
    )?;
    writeln!(
        out,
        "  first pass:   memory {} state {} video {}",
        desync.first_pass.memory, desync.first_pass.state, desync.first_pass.video
    )?;
    writeln!(
        out,
        "  re-simulated: memory {} state {} video {}",
        desync.resimulated.memory, desync.resimulated.state, desync.resimulated.video
    )?;
    writeln!(out, "  game memory bytes: {}", desync.memory_diff)?;
    writeln!(out, "  serialized state bytes: {}", desync.state_diff)
}

/// Writes both versions of the desynced frame into a new subdirectory of
/// `parent` and returns it.
pub fn write_dumps(parent: &Path, desync: &Desync) -> Result<PathBuf, AppError> {
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|since| since.as_secs())
        .unwrap_or(0);
    let base = format!(
        "synctest-{stamp}-{}-frame{}",
        std::process::id(),
        desync.frame
    );
    let mut dir = parent.join(&base);
    let mut attempt = 1;
    while dir.exists() {
        attempt += 1;
        dir = parent.join(format!("{base}-{attempt}"));
    }
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|source| AppError::WriteFile {
            what: "the desync dump",
            path,
            source,
        })
    };
    std::fs::create_dir_all(&dir).map_err(|source| AppError::WriteFile {
        what: "the dump directory",
        path: dir.clone(),
        source,
    })?;
    write("first-pass.state", &desync.first_pass_state)?;
    write("first-pass.memory", &desync.first_pass_memory)?;
    write("resimulated.state", &desync.resimulated_state)?;
    write("resimulated.memory", &desync.resimulated_memory)?;
    let mut text = Vec::new();
    describe_desync(desync, &mut text).map_err(AppError::Output)?;
    write("report.txt", &text)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::inputs::{InputSpec, RandomPlayer};
    use crate::app::testing::{StubGame, HIDDEN_STATE_OFFSET};

    fn random_inputs() -> InputSource {
        InputSource::open(&InputSpec::Random { seed: 3 }).unwrap()
    }

    #[test]
    fn a_deterministic_game_passes_and_reports_its_final_checksums() {
        let mut game = StubGame::deterministic();
        let mut reached = Vec::new();
        let report = sync_test(
            &mut game,
            300,
            7,
            Compare::ALL,
            &mut random_inputs(),
            &mut |frame| reached.push(frame),
        )
        .unwrap();
        assert!(report.desync.is_none(), "{}", report.verdict());
        assert_eq!(report.frames, 300);
        assert_eq!(
            report.verdict(),
            "sync-test passed: 300 frames, distance 7, compared memory+state+video"
        );
        assert_eq!(reached.last(), Some(&300));
        // From frame 2 on, each frame goes back up to 7 frames (never to 0).
        assert_eq!(report.resimulated_frames, (1..=6).sum::<u64>() + 293 * 7);

        // The final checksums are those of a plain run with the same inputs.
        let mut plain = StubGame::deterministic();
        let mut inputs = RandomPlayer::new(3);
        for _ in 0..300 {
            plain.run_frame(&inputs.next_frame(), true);
        }
        let mut state = Vec::new();
        plain.save_state(&mut state).unwrap();
        assert_eq!(report.checksums, Checksums::of_game(&plain, &state));
    }

    #[test]
    fn hidden_state_is_caught_at_the_first_frame_and_its_bytes_are_named() {
        let mut game = StubGame::with_hidden_state();
        let report = sync_test(
            &mut game,
            100,
            4,
            Compare::DEFAULT,
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap();
        let desync = report.desync.as_ref().expect("the hidden state is caught");
        assert_eq!(desync.frame, 2);
        assert_eq!(desync.loaded_frame, 1);
        assert!(desync.compared_differing.memory);
        assert!(!desync.compared_differing.state, "state is not compared");
        assert_eq!(
            desync.memory_diff.ranges,
            vec![HIDDEN_STATE_OFFSET..HIDDEN_STATE_OFFSET + 1]
        );
        assert_ne!(desync.first_pass_memory, desync.resimulated_memory);
        assert!(!desync.state_diff.is_identical(), "memory is in the state");
        assert!(
            report
                .verdict()
                .starts_with("sync-test FAILED at frame 2: memory differs at 0x0010..0x0011"),
            "{}",
            report.verdict()
        );
    }

    #[test]
    fn comparing_only_the_state_still_catches_hidden_state() {
        let mut game = StubGame::with_hidden_state();
        let report = sync_test(
            &mut game,
            50,
            2,
            CompareArg::State.into(),
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap();
        let desync = report.desync.unwrap();
        assert!(desync.compared_differing.state);
        assert!(!desync.compared_differing.memory, "memory is not compared");
        assert!(desync.summary().starts_with("state differs at"));
    }

    #[test]
    fn comparing_only_video_misses_what_is_not_drawn() {
        // The hidden counter is never drawn, so a video-only comparison
        // cannot see it: the comparison choice really matters.
        let mut game = StubGame::with_hidden_state();
        let report = sync_test(
            &mut game,
            50,
            2,
            CompareArg::Video.into(),
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap();
        assert!(report.desync.is_none(), "{}", report.verdict());
    }

    #[test]
    fn a_check_distance_of_zero_or_too_far_is_refused() {
        for distance in [0, MAX_CHECK_DISTANCE + 1] {
            let err = sync_test(
                &mut StubGame::deterministic(),
                10,
                distance,
                Compare::DEFAULT,
                &mut random_inputs(),
                &mut |_| {},
            )
            .unwrap_err();
            assert!(err.to_string().contains("check distance"), "{err}");
        }
    }

    #[test]
    fn a_desync_dump_holds_both_versions_of_state_and_memory() {
        let mut game = StubGame::with_hidden_state();
        let report = sync_test(
            &mut game,
            20,
            3,
            Compare::DEFAULT,
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap();
        let desync = report.desync.unwrap();
        let parent = tempfile::tempdir().unwrap();
        let first = write_dumps(parent.path(), &desync).unwrap();
        let second = write_dumps(parent.path(), &desync).unwrap();
        assert_ne!(first, second, "each run gets its own directory");
        let read = |name: &str| std::fs::read(first.join(name)).unwrap();
        assert_eq!(read("first-pass.memory"), desync.first_pass_memory);
        assert_eq!(read("resimulated.memory"), desync.resimulated_memory);
        assert_eq!(read("first-pass.state"), desync.first_pass_state);
        assert_eq!(read("resimulated.state"), desync.resimulated_state);
        let report_text = String::from_utf8(read("report.txt")).unwrap();
        assert!(report_text.contains("0x0010..0x0011"), "{report_text}");
    }
}
