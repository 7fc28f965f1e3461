//! `netcade synctest`: the command line and the report around the one
//! sync-test engine, [`netcode::rollback::synctest`].

use crate::engine::error::error_chain;
use crate::engine::inputs::{InputSource, InputSpec};
use crate::engine::interrupt::exit_on_interrupt;
use crate::engine::report::{write_report, Report};
use crate::engine::{checksums_json, open_game, write_dump_dir, AppError, GameArgs, Outcome};
use indicatif::{ProgressBar, ProgressStyle};
use netcode::rollback::synctest::{
    run_sync_test, Compare, Desync, SyncTestReport, SyncTestSettings, Transients,
    DEFAULT_HISTORY_BYTES, MAX_CHECK_DISTANCE, MAX_SETTLE_FRAMES,
};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What `--compare` accepts.
// `help = None` on each variant: clap would show the doc comments as value
// help, which switches all of `synctest --help` to its long layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareArg {
    /// The game's memory only.
    #[value(help = None::<&str>)]
    Memory,
    /// The full serialized state only.
    #[value(help = None::<&str>)]
    State,
    /// The picture only.
    #[value(help = None::<&str>)]
    Video,
    /// Memory, state and picture.
    #[value(help = None::<&str>)]
    All,
}

impl From<CompareArg> for Compare {
    fn from(arg: CompareArg) -> Compare {
        let none = Compare::NONE;
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

/// Arguments of `netcade synctest`.
#[derive(Clone, Debug, clap::Args)]
pub struct SyncTestArgs {
    /// The core, content and core options to test.
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
    /// Where to write both versions on a desync, one subdirectory per run
    /// [default: dumps/ in netcade's data directory].
    #[arg(long, value_name = "DIR")]
    pub dump_dir: Option<PathBuf>,
    /// The most memory the kept frames may take, in MiB (the test refuses
    /// to run past it rather than swap).
    #[arg(
        long,
        value_name = "MB",
        default_value_t = (DEFAULT_HISTORY_BYTES >> 20) as u64,
        value_parser = clap::value_parser!(u64).range(1..=1 << 20)
    )]
    pub history_mb: u64,
    /// Ends the output with one JSON object on its own line.
    #[arg(long)]
    pub json: bool,
}

/// Where a desync's dumps go (see [`crate::paths::dump_dir`]).
fn dump_parent(args: &SyncTestArgs) -> PathBuf {
    crate::paths::dump_dir(args.dump_dir.as_deref())
}

/// `netcade synctest`.
pub fn synctest_command(args: &SyncTestArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    // Ctrl-C, SIGTERM and SIGHUP end it with one exit code, as every command.
    exit_on_interrupt();
    let settings = SyncTestSettings {
        frames: args.frames,
        distance: args.check_distance,
        compare: args.compare.map(Compare::from).unwrap_or(Compare::DEFAULT),
        settle_frames: args.settle_frames,
        history_bytes: usize::try_from(args.history_mb << 20).unwrap_or(usize::MAX),
    };
    settings.check()?;
    let mut inputs = InputSource::open_for_run(&args.inputs, args.frames)?;
    let mut game = open_game(&args.game)?;
    writeln!(out, "{}", game.title())?;

    let bar = progress_bar(u64::from(args.frames), args.json);
    let started = Instant::now();
    let report = run_sync_test(
        game.as_mut(),
        settings,
        &mut || inputs.next_frame(),
        &mut |frame| {
            if frame % 64 == 0 {
                bar.set_position(u64::from(frame));
            }
        },
    )?;
    let elapsed = started.elapsed();
    bar.finish_and_clear();
    // A dump that cannot be written must not cost the verdict: it is
    // reported after the verdict and the JSON, and the exit still says desync.
    let dump = report
        .desync
        .as_ref()
        .map(|desync| write_dumps(&dump_parent(args), desync));
    let result = SyncTestResult {
        game: game.title(),
        inputs: args.inputs.to_string(),
        elapsed,
        dump: dump.map(|written| written.map_err(|error| error_chain(&error))),
        report,
    };
    write_report(&result, args.json, out)?;
    out.flush()?;
    if let Some(Err(error)) = &result.dump {
        eprintln!("error: {error}");
    }
    Ok(match result.report.desync {
        None => Outcome::Success,
        Some(_) => Outcome::SyncTestFailed,
    })
}

/// What `netcade synctest` found, and where the desync's evidence went.
struct SyncTestResult {
    game: String,
    inputs: String,
    report: SyncTestReport,
    elapsed: Duration,
    /// The dump directory written for a desync, or why it could not be.
    dump: Option<Result<PathBuf, String>>,
}

impl Report for SyncTestResult {
    fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let report = &self.report;
        if report.transients.count > 0 {
            describe_transients(&report.transients, report.settle_frames, out)?;
        }
        if let Some(desync) = &report.desync {
            describe_desync(desync, out)?;
            if let Some(Ok(dir)) = &self.dump {
                writeln!(out, "both versions written to {}", dir.display())?;
            }
            if report.settle_frames == 0 {
                writeln!(
                    out,
                    "hint: --settle-frames 8 tells differences the game overwrites at once (bytes a core does not restore) from lasting ones"
                )?;
            }
        }
        writeln!(out, "{}", report.verdict())
    }

    fn json(&self) -> serde_json::Value {
        let report = &self.report;
        let mut json = serde_json::json!({
            "command": "synctest",
            "game": self.game,
            "inputs": self.inputs,
            "frames": report.frames,
            "check_distance": report.distance,
            "compared": report.compare.to_string(),
            "settle_frames": report.settle_frames,
            "transient_differences": report.transients.count,
            "transient_memory_ranges": report.transients.memory_range_strings(),
            "transient_kinds": report.transients.kinds.names(),
            "resimulated_frames": report.resimulated_frames,
            "history_bytes": report.history_bytes,
            "seconds": self.elapsed.as_secs_f64(),
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
                "dump_dir": self.dump.as_ref().and_then(|d| d.as_ref().ok()).map(|dir| dir.display().to_string()),
                "dump_error": self.dump.as_ref().and_then(|d| d.as_ref().err()),
            });
        }
        json
    }
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
    writeln!(out, "  first pass:   {}", desync.first_pass)?;
    writeln!(out, "  re-simulated: {}", desync.resimulated)?;
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
    let mut report = Vec::new();
    describe_desync(desync, &mut report).map_err(AppError::Output)?;
    write_dump_dir(
        parent,
        &base,
        &[
            ("first-pass.state", &desync.first_pass_state),
            ("first-pass.memory", &desync.first_pass_memory),
            ("resimulated.state", &desync.resimulated_state),
            ("resimulated.memory", &desync.resimulated_memory),
            ("report.txt", &report),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use netcode::rollback::synctest::SyncTestSettings;
    use netcode::testing::StubGame;

    #[test]
    fn a_desync_dump_holds_both_versions_of_state_and_memory() {
        let mut game = StubGame::with_hidden_state();
        let mut inputs = InputSource::open(&InputSpec::Random { seed: 3 }).unwrap();
        let report = run_sync_test(
            &mut game,
            SyncTestSettings::new(20, 3),
            &mut || inputs.next_frame(),
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
