//! GGPO's sync test: pretend every frame was mispredicted.
//!
//! After each frame is run, the game goes back `distance` frames (loads the
//! state saved there), re-simulates the same inputs and compares each
//! re-simulated frame's checksums with the first pass. A game (or a save/load
//! path) that is not deterministic shows up at the first frame that differs.
//!
//! Frame numbers: "frame N" is the game after N frames have run (frame 0 is
//! the game as loaded), the same numbering `debug` shows.

use crate::app::diff::{format_range, ByteDiff, DEFAULT_RANGE_CAP};
use crate::app::error::error_chain;
use crate::app::inputs::{FrameInputs, InputSource, InputSpec, NO_INPUTS};
use crate::app::{checksums_json, open_game, AppError, GameArgs, Outcome};
use crate::checksum::{Checksum, Checksums};
use crate::emulator::Emulator;
use indicatif::{ProgressBar, ProgressStyle};
use std::fmt;
use std::io::{IsTerminal, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The longest check distance allowed: the ring holds `distance + 1` full
/// states, and real cores' states reach a megabyte.
pub const MAX_CHECK_DISTANCE: u32 = 120;

/// The longest settle window allowed (the ring grows by one state per frame).
pub const MAX_SETTLE_FRAMES: u32 = 60;

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
    /// With a settle window: the later frame at which the re-simulation
    /// still differed, which confirmed the desync as lasting.
    pub still_differing_at: Option<u32>,
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
        let mut summary = parts.join("; ");
        if let Some(later) = self.still_differing_at {
            summary.push_str(&format!(
                " (still differing {} frames later)",
                later - self.frame
            ));
        }
        summary
    }
}

/// A re-simulated frame that differed from the first pass but whose
/// re-simulation came back to the first pass within the settle window: the
/// differing bytes were overwritten before they changed anything lasting.
#[derive(Clone, Debug)]
pub struct Transient {
    /// The first frame that differed.
    pub frame: u32,
    /// The frame the re-simulation started from (the state loaded).
    pub loaded_frame: u32,
    /// The first frame from which the re-simulation matched the first pass
    /// again (up to the end of the settle window).
    pub healed_at: u32,
    /// Compared kinds that differed at `frame`.
    pub differing: ChecksumKinds,
    /// Game memory bytes that differed at `frame`.
    pub memory_diff: ByteDiff,
}

impl Transient {
    /// `frame 364 (loaded 357): memory differed at 0xffa2..0xffa3, healed at frame 365`.
    pub fn summary(&self) -> String {
        let what = if self.differing.memory {
            format!("memory differed at {}", self.memory_diff)
        } else {
            format!("{} differed", self.differing)
        };
        format!(
            "frame {} (loaded {}): {what}, healed at frame {}",
            self.frame, self.loaded_frame, self.healed_at
        )
    }
}

/// Differences that healed within the settle window, summed up.
#[derive(Clone, Debug, Default)]
pub struct Transients {
    /// How many rollbacks produced a difference that healed.
    pub count: u64,
    /// The first one, in full.
    pub first: Option<Transient>,
    /// Game memory ranges that differed in any of them, merged, at most
    /// [`DEFAULT_RANGE_CAP`].
    pub memory_ranges: Vec<Range<usize>>,
    /// Compared kinds that differed in any of them.
    pub kinds: ChecksumKinds,
}

impl Transients {
    fn record(&mut self, transient: Transient) {
        self.count += 1;
        self.kinds = ChecksumKinds {
            memory: self.kinds.memory || transient.differing.memory,
            state: self.kinds.state || transient.differing.state,
            video: self.kinds.video || transient.differing.video,
        };
        for range in &transient.memory_diff.ranges {
            merge_range(&mut self.memory_ranges, range.clone());
        }
        if self.first.is_none() {
            self.first = Some(transient);
        }
    }

    pub fn memory_range_strings(&self) -> Vec<String> {
        self.memory_ranges.iter().map(format_range).collect()
    }
}

/// Adds `range` to sorted, disjoint `ranges`, joining what overlaps or
/// touches; a new separate range is dropped once the cap is reached.
fn merge_range(ranges: &mut Vec<Range<usize>>, range: Range<usize>) {
    let mut merged = range;
    let mut kept = Vec::with_capacity(ranges.len() + 1);
    let mut joined_any = false;
    for existing in ranges.drain(..) {
        if existing.end < merged.start || merged.end < existing.start {
            kept.push(existing);
        } else {
            merged = merged.start.min(existing.start)..merged.end.max(existing.end);
            joined_any = true;
        }
    }
    if joined_any || kept.len() < DEFAULT_RANGE_CAP {
        kept.push(merged);
    }
    kept.sort_by_key(|range| range.start);
    *ranges = kept;
}

/// What a sync-test found.
#[derive(Clone, Debug)]
pub struct SyncTestReport {
    /// Frames run in the first pass.
    pub frames: u32,
    pub distance: u32,
    pub compare: Compare,
    /// Frames a difference may take to heal before it counts (0: none may).
    pub settle_frames: u32,
    /// Differences that healed within the settle window.
    pub transients: Transients,
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
            None if self.transients.count == 0 => format!(
                "sync-test passed: {} frames, distance {}, compared {}",
                self.frames, self.distance, self.compare
            ),
            None => format!(
                "sync-test passed: {} frames, distance {}, compared {}; {} differences healed within {} frames (first: {})",
                self.frames,
                self.distance,
                self.compare,
                self.transients.count,
                self.settle_frames,
                self.transients
                    .first
                    .as_ref()
                    .map(Transient::summary)
                    .unwrap_or_default()
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

/// Runs a sync-test of `frames` frames at check distance `distance`; the
/// first difference fails it. `progress` is told the frame reached now and then.
pub fn sync_test<G: Emulator + ?Sized>(
    game: &mut G,
    frames: u32,
    distance: u32,
    compare: Compare,
    inputs: &mut InputSource,
    progress: &mut dyn FnMut(u32),
) -> Result<SyncTestReport, AppError> {
    sync_test_settling(game, frames, distance, compare, 0, inputs, progress)
}

/// Like [`sync_test`], but a difference fails it only if it lasts: each
/// rollback re-simulates `settle_frames` frames past the frames it checks,
/// and a difference the re-simulation has left behind by then (bytes a
/// core failed to restore but the game overwrote before they mattered) is
/// counted as transient instead. A difference still there fails the test.
/// With `settle_frames == 0` this is [`sync_test`].
pub fn sync_test_settling<G: Emulator + ?Sized>(
    game: &mut G,
    frames: u32,
    distance: u32,
    compare: Compare,
    settle_frames: u32,
    inputs: &mut InputSource,
    progress: &mut dyn FnMut(u32),
) -> Result<SyncTestReport, AppError> {
    check_settings(frames, distance, settle_frames)?;
    // Boundaries `reached - distance - settle_frames ..= reached` are kept.
    let slots = (distance + settle_frames) as usize + 1;
    let mut checker = Checker {
        ring: (0..slots).map(|_| Saved::default()).collect(),
        scratch_state: Vec::new(),
        distance,
        compare,
        settle_frames,
    };
    let mut report = SyncTestReport {
        frames: 0,
        distance,
        compare,
        settle_frames,
        transients: Transients::default(),
        resimulated_frames: 0,
        checksums: Checksums::default(),
        desync: None,
    };

    save_boundary(game, checker.slot_mut(0), 0)?;
    report.checksums = checker.slot(0).checksums;
    for frame in 0..frames {
        let frame_inputs = inputs.next_frame();
        checker.slot_mut(frame).inputs = frame_inputs;
        game.run_frame(&frame_inputs, true);
        let reached = frame + 1;
        save_boundary(game, checker.slot_mut(reached), reached)?;
        report.frames = reached;
        report.checksums = checker.slot(reached).checksums;

        // The frame checked now lags the one reached by the settle window,
        // so its re-simulation can run on past it; at the end, the frames
        // still unchecked are checked with what window is left.
        let newest = reached.saturating_sub(settle_frames);
        let checked = if reached == frames {
            newest..=reached
        } else {
            newest..=newest
        };
        for present in checked {
            // Never back to frame 0: the state saved before a core's first
            // `retro_run` is a boot state real cores do not replay
            // faithfully (stella's combat.bin draws a different first
            // picture), and no game frame lives there.
            if present < 2 {
                continue;
            }
            if let Some(desync) = checker.roll_back(game, present, reached, &mut report)? {
                report.desync = Some(desync);
                return Ok(report);
            }
        }
        progress(reached);
    }
    Ok(report)
}

/// Refuses settings under which the test could not do what it says: a
/// check distance no frame reaches back to would "pass" without ever
/// going back that far.
pub fn check_settings(frames: u32, distance: u32, settle_frames: u32) -> Result<(), AppError> {
    let refuse = |message: String| Err(AppError::BadArgument { message });
    if !(1..=MAX_CHECK_DISTANCE).contains(&distance) {
        return refuse(format!(
            "the check distance must be between 1 and {MAX_CHECK_DISTANCE} (got {distance})"
        ));
    }
    if settle_frames > MAX_SETTLE_FRAMES {
        return refuse(format!(
            "the settle window must be at most {MAX_SETTLE_FRAMES} frames (got {settle_frames})"
        ));
    }
    // Frame 0 is never loaded (see `sync_test_settling`), so the first
    // rollback over the whole distance starts at frame 1.
    if frames <= distance {
        return refuse(format!(
            "--check-distance {distance} needs more than {distance} frames (got --frames {frames}): no frame could be re-simulated from that far back"
        ));
    }
    Ok(())
}

/// The sync-test's ring of saved frames and what it compares.
struct Checker {
    ring: Vec<Saved>,
    scratch_state: Vec<u8>,
    distance: u32,
    compare: Compare,
    settle_frames: u32,
}

/// The first difference found in one rollback, before it is known to last.
struct Found {
    frame: u32,
    compared_differing: ChecksumKinds,
    memory_diff: ByteDiff,
    /// Everything needed to report it as a desync.
    desync: Box<Desync>,
}

impl Checker {
    fn slot(&self, frame: u32) -> &Saved {
        &self.ring[frame as usize % self.ring.len()]
    }

    fn slot_mut(&mut self, frame: u32) -> &mut Saved {
        let slots = self.ring.len();
        &mut self.ring[frame as usize % slots]
    }

    /// Goes back `distance` frames from `present`, re-simulates up to
    /// `reached` (the settle window past `present`) and compares each
    /// frame. Returns the desync if a difference found up to `present`
    /// is still there at `reached` (or at once without a settle window);
    /// a difference gone by then is recorded as transient.
    fn roll_back<G: Emulator + ?Sized>(
        &mut self,
        game: &mut G,
        present: u32,
        reached: u32,
        report: &mut SyncTestReport,
    ) -> Result<Option<Box<Desync>>, AppError> {
        let start = present.saturating_sub(self.distance).max(1);
        game.load_state(&self.slot(start).state)
            .map_err(AppError::at_frame(start))?;
        let mut found: Option<Found> = None;
        let mut last_differing = None;
        for resimulated in start..reached {
            let saved_inputs = self.slot(resimulated).inputs;
            game.run_frame(&saved_inputs, self.compare.video);
            report.resimulated_frames += 1;
            let after = resimulated + 1;
            let differing = self.differing(game, after)?;
            if !differing.any() {
                continue;
            }
            last_differing = Some(after);
            if found.is_none() && after <= present {
                let desync = self.describe(game, after, start, reached, differing)?;
                if self.settle_frames == 0 {
                    return Ok(Some(desync));
                }
                found = Some(Found {
                    frame: after,
                    compared_differing: differing,
                    memory_diff: desync.memory_diff.clone(),
                    desync,
                });
            }
        }
        let Some(found) = found else {
            return Ok(None);
        };
        if last_differing == Some(reached) {
            let mut desync = found.desync;
            desync.still_differing_at = Some(reached);
            return Ok(Some(desync));
        }
        report.transients.record(Transient {
            frame: found.frame,
            loaded_frame: start,
            healed_at: last_differing.map_or(found.frame + 1, |last| last + 1),
            differing: found.compared_differing,
            memory_diff: found.memory_diff,
        });
        Ok(None)
    }

    /// Which compared checksums of the game now differ from the first
    /// pass's at frame `after`.
    fn differing<G: Emulator + ?Sized>(
        &mut self,
        game: &mut G,
        after: u32,
    ) -> Result<ChecksumKinds, AppError> {
        let first = self.slot(after).checksums;
        let mut now = Checksums {
            memory: Checksum::of(game.game_memory()),
            ..first
        };
        if self.compare.video {
            now.video = game
                .video_frame()
                .map(|video| Checksum::of_video(&video))
                .unwrap_or_default();
        }
        if self.compare.state {
            game.save_state(&mut self.scratch_state)
                .map_err(AppError::at_frame(after))?;
            now.state = Checksum::of(&self.scratch_state);
        }
        Ok(self.compare.filter(ChecksumKinds::differing(&first, &now)))
    }

    /// Both versions of frame `after`, which differs in `differing`.
    fn describe<G: Emulator + ?Sized>(
        &mut self,
        game: &mut G,
        after: u32,
        start: u32,
        reached: u32,
        differing: ChecksumKinds,
    ) -> Result<Box<Desync>, AppError> {
        let mut resimulated_state = Vec::new();
        game.save_state(&mut resimulated_state)
            .map_err(AppError::at_frame(after))?;
        let resimulated_checksums = Checksums::of_game(game, &resimulated_state);
        let first = self.slot(after);
        Ok(Box::new(Desync {
            frame: after,
            loaded_frame: start,
            rolled_back_from: reached,
            still_differing_at: None,
            compared_differing: differing,
            all_differing: ChecksumKinds::differing(&first.checksums, &resimulated_checksums),
            first_pass: first.checksums,
            resimulated: resimulated_checksums,
            memory_diff: ByteDiff::between(&first.memory, game.game_memory(), DEFAULT_RANGE_CAP),
            state_diff: ByteDiff::between(&first.state, &resimulated_state, DEFAULT_RANGE_CAP),
            first_pass_state: first.state.clone(),
            first_pass_memory: first.memory.clone(),
            resimulated_state,
            resimulated_memory: game.game_memory().to_vec(),
        }))
    }
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
    /// How many frames to run (at least 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub frames: u32,
    /// How many frames to go back and re-simulate after every frame.
    #[arg(
        long,
        value_name = "D",
        default_value_t = 7,
        value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_CHECK_DISTANCE))
    )]
    pub check_distance: u32,
    /// Where the buttons come from: none, random:SEED, or an input script file.
    #[arg(long, value_name = "SOURCE", default_value_t = InputSpec::default())]
    pub inputs: InputSpec,
    /// What to compare [default: memory and video].
    #[arg(long, value_enum, value_name = "WHAT")]
    pub compare: Option<CompareArg>,
    /// Lets a difference heal for up to this many frames before it fails
    /// the test: for cores that restore all the game but a few bytes the
    /// game overwrites next (0: every difference fails, as GGPO's does).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        value_parser = clap::value_parser!(u32).range(..=i64::from(MAX_SETTLE_FRAMES))
    )]
    pub settle_frames: u32,
    /// Where to write both versions on a desync (one subdirectory per run).
    #[arg(long, value_name = "DIR", default_value = "netcade-dumps")]
    pub dump_dir: PathBuf,
    /// Ends the output with one JSON object on its own line.
    #[arg(long)]
    pub json: bool,
}

/// `netcade synctest`.
pub fn synctest_command(args: &SyncTestArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    check_settings(args.frames, args.check_distance, args.settle_frames)?;
    let compare = args.compare.map(Compare::from).unwrap_or(Compare::DEFAULT);
    let mut inputs = InputSource::open(&args.inputs)?;
    let mut game = open_game(&args.game)?;
    writeln!(out, "{}", game.title())?;

    let bar = progress_bar(u64::from(args.frames), args.json);
    let started = Instant::now();
    let report = sync_test_settling(
        game.as_mut(),
        args.frames,
        args.check_distance,
        compare,
        args.settle_frames,
        &mut inputs,
        &mut |frame| {
            if frame % 64 == 0 {
                bar.set_position(u64::from(frame));
            }
        },
    )?;
    let elapsed = started.elapsed();
    bar.finish_and_clear();

    if report.transients.count > 0 {
        describe_transients(&report.transients, report.settle_frames, out)?;
    }
    // A dump that cannot be written must not cost the verdict: it is
    // reported after the verdict and the JSON, and the exit still says desync.
    let mut dump: Option<Result<PathBuf, AppError>> = None;
    if let Some(desync) = &report.desync {
        describe_desync(desync, out)?;
        let written = write_dumps(&args.dump_dir, desync);
        if let Ok(dir) = &written {
            writeln!(out, "both versions written to {}", dir.display())?;
        }
        if report.settle_frames == 0 {
            writeln!(
                out,
                "hint: --settle-frames 8 tells differences the game overwrites at once (bytes a core does not restore) from lasting ones"
            )?;
        }
        dump = Some(written);
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
            "settle_frames": report.settle_frames,
            "transient_differences": report.transients.count,
            "transient_memory_ranges": report.transients.memory_range_strings(),
            "transient_kinds": report.transients.kinds.names(),
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
                "still_differing_at": desync.still_differing_at,
                "differing": desync.compared_differing.names(),
                "first_pass": checksums_json(&desync.first_pass),
                "resimulated": checksums_json(&desync.resimulated),
                "memory": desync.memory_diff.to_json(),
                "state": desync.state_diff.to_json(),
                "dump_dir": dump.as_ref().and_then(|d| d.as_ref().ok()).map(|dir| dir.display().to_string()),
                "dump_error": dump.as_ref().and_then(|d| d.as_ref().err()).map(|err| error_chain(err)),
            });
        }
        writeln!(out, "{json}")?;
    }
    out.flush()?;
    if let Some(Err(error)) = &dump {
        eprintln!("error: {}", error_chain(error));
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

/// The lines about differences that healed.
pub fn describe_transients(
    transients: &Transients,
    settle_frames: u32,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{} rollbacks left differences in {} that healed within {settle_frames} frames: the core does not restore these bytes, and the game overwrote them before they mattered",
        transients.count, transients.kinds
    )?;
    if !transients.memory_ranges.is_empty() {
        writeln!(
            out,
            "  game memory bytes involved: {}",
            transients.memory_range_strings().join(", ")
        )?;
    }
    if let Some(first) = &transients.first {
        writeln!(out, "  first: {}", first.summary())?;
    }
    Ok(())
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

    /// A game whose loads leave one byte of memory wrong for the frame
    /// after the load, which the next frame overwrites: like a core that
    /// does not restore some state the game rewrites at once.
    struct GlitchOnLoad {
        inner: StubGame,
        memory: Vec<u8>,
        just_loaded: bool,
    }

    const GLITCH_OFFSET: usize = 0x20;

    impl GlitchOnLoad {
        fn new(inner: StubGame) -> Self {
            let memory = inner.game_memory().to_vec();
            GlitchOnLoad {
                inner,
                memory,
                just_loaded: false,
            }
        }
    }

    impl Emulator for GlitchOnLoad {
        fn run_frame(&mut self, inputs: &[crate::input::Buttons], render: bool) {
            self.inner.run_frame(inputs, render);
            self.memory.clear();
            self.memory.extend_from_slice(self.inner.game_memory());
            if std::mem::take(&mut self.just_loaded) {
                self.memory[GLITCH_OFFSET] ^= 0x40;
            }
        }
        fn save_state(&mut self, into: &mut Vec<u8>) -> Result<(), crate::emulator::EmulatorError> {
            self.inner.save_state(into)
        }
        fn load_state(&mut self, from: &[u8]) -> Result<(), crate::emulator::EmulatorError> {
            self.just_loaded = true;
            self.inner.load_state(from)
        }
        fn game_memory(&self) -> &[u8] {
            &self.memory
        }
        fn video_frame(&self) -> Option<crate::emulator::VideoFrame<'_>> {
            self.inner.video_frame()
        }
        fn audio_samples(&self) -> &[i16] {
            self.inner.audio_samples()
        }
        fn frames_per_second(&self) -> f64 {
            self.inner.frames_per_second()
        }
        fn sample_rate(&self) -> f64 {
            self.inner.sample_rate()
        }
    }

    #[test]
    fn without_a_settle_window_a_difference_that_heals_still_fails() {
        let mut game = GlitchOnLoad::new(StubGame::deterministic());
        let report = sync_test(
            &mut game,
            100,
            4,
            Compare::DEFAULT,
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap();
        let desync = report.desync.expect("strict mode fails on the glitch");
        assert_eq!(desync.frame, 2);
        assert_eq!(desync.still_differing_at, None);
        assert_eq!(
            desync.memory_diff.ranges,
            vec![GLITCH_OFFSET..GLITCH_OFFSET + 1]
        );
    }

    #[test]
    fn a_difference_the_game_overwrites_within_the_settle_window_is_counted_not_failed() {
        let mut game = GlitchOnLoad::new(StubGame::deterministic());
        let report = sync_test_settling(
            &mut game,
            100,
            4,
            Compare::DEFAULT,
            3,
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap();
        assert!(report.desync.is_none(), "{}", report.verdict());
        assert_eq!(report.frames, 100);
        // Every rollback loads once, and each load glitches one frame.
        assert_eq!(report.transients.count, 99);
        assert_eq!(
            report.transients.memory_ranges,
            vec![GLITCH_OFFSET..GLITCH_OFFSET + 1]
        );
        let first = report.transients.first.as_ref().unwrap();
        assert_eq!(
            (first.frame, first.loaded_frame, first.healed_at),
            (2, 1, 3)
        );
        assert!(
            report.verdict().starts_with(
                "sync-test passed: 100 frames, distance 4, compared memory+video; 99 differences healed within 3 frames"
            ),
            "{}",
            report.verdict()
        );
    }

    #[test]
    fn a_settle_window_still_fails_on_state_the_savestate_misses() {
        // The hidden counter never heals: the difference lasts through the
        // window and is reported at the frame it first appeared.
        let mut game = StubGame::with_hidden_state();
        let report = sync_test_settling(
            &mut game,
            100,
            4,
            Compare::DEFAULT,
            5,
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap();
        let desync = report.desync.as_ref().expect("the hidden state is caught");
        assert_eq!(desync.frame, 2);
        assert_eq!(desync.still_differing_at, Some(7));
        assert_eq!(
            desync.memory_diff.ranges,
            vec![HIDDEN_STATE_OFFSET..HIDDEN_STATE_OFFSET + 1]
        );
        assert!(
            report
                .verdict()
                .ends_with("(still differing 5 frames later)"),
            "{}",
            report.verdict()
        );
    }

    #[test]
    fn a_settle_window_checks_every_frame_even_near_the_end() {
        // Fewer frames than the window: the last frames are still checked,
        // with what window is left, and a difference there fails.
        let mut game = StubGame::with_hidden_state();
        let report = sync_test_settling(
            &mut game,
            4,
            2,
            Compare::DEFAULT,
            10,
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap();
        assert!(report.desync.is_some(), "{}", report.verdict());
    }

    #[test]
    fn a_settle_window_beyond_the_limit_is_refused() {
        let err = sync_test_settling(
            &mut StubGame::deterministic(),
            10,
            2,
            Compare::DEFAULT,
            MAX_SETTLE_FRAMES + 1,
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap_err();
        assert!(err.to_string().contains("settle window"), "{err}");
    }

    #[test]
    fn a_check_distance_no_frame_reaches_is_refused_rather_than_passed() {
        let err = sync_test(
            &mut StubGame::deterministic(),
            10,
            50,
            Compare::DEFAULT,
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("needs more than 50 frames"),
            "{err}"
        );
        assert!(
            check_settings(8, 7, 0).is_ok(),
            "frame 8 goes back to frame 1"
        );
        assert!(check_settings(7, 7, 0).is_err());
    }

    #[test]
    fn merged_ranges_join_what_touches_and_stay_sorted() {
        let mut ranges = Vec::new();
        merge_range(&mut ranges, 10..12);
        merge_range(&mut ranges, 2..4);
        merge_range(&mut ranges, 12..14);
        merge_range(&mut ranges, 3..5);
        assert_eq!(ranges, vec![2..5, 10..14]);
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
