//! `netcade demo`: a local, headless look at the bundled Duel core: a random
//! match, a short sync-test, and the last frame saved as a PNG.

use crate::app::inputs::{InputSource, InputSpec};
use crate::app::run::{describe, run_frames};
use crate::app::synctest::{progress_bar, sync_test, Compare};
use crate::app::{checksums_json, open_game, png, AppError, GameArgs, Outcome};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The environment variable naming Duel's library explicitly.
pub const DUEL_CORE_ENV: &str = "NETCADE_DUEL_CORE";

/// Duel's shared library file name on this platform.
pub fn duel_library_name() -> String {
    format!(
        "{}duel{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// The arena shipped with Duel.
pub fn default_arena() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("cores/duel/arenas/dojo.arena")
}

/// Where Duel's library is looked for, in order: `$NETCADE_DUEL_CORE`, next
/// to `executable`, in its `deps/` subdirectory.
pub fn duel_core_candidates(env_value: Option<PathBuf>, executable: Option<&Path>) -> Vec<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(path) = env_value {
        candidates.push(path);
    }
    if let Some(dir) = executable.and_then(Path::parent) {
        candidates.push(dir.join(duel_library_name()));
        candidates.push(dir.join("deps").join(duel_library_name()));
        // Test binaries live in target/<profile>/deps themselves.
        if dir.ends_with("deps") {
            if let Some(profile_dir) = dir.parent() {
                candidates.push(profile_dir.join(duel_library_name()));
            }
        }
    }
    candidates
}

/// Finds Duel's library, or says where it looked and how to build it.
pub fn locate_duel_core() -> Result<PathBuf, AppError> {
    let from_env = std::env::var_os(DUEL_CORE_ENV).map(PathBuf::from);
    if let Some(path) = &from_env {
        // An explicit choice is not second-guessed.
        return if path.is_file() {
            Ok(path.clone())
        } else {
            Err(AppError::DuelCoreNotFound {
                searched: vec![path.clone()],
            })
        };
    }
    let executable = std::env::current_exe().ok();
    let candidates = duel_core_candidates(None, executable.as_deref());
    candidates
        .iter()
        .find(|path| path.is_file())
        .cloned()
        .ok_or(AppError::DuelCoreNotFound {
            searched: candidates,
        })
}

/// Arguments of `netcade demo`.
#[derive(Clone, Debug, clap::Args)]
pub struct DemoArgs {
    /// The arena to load [default: Duel's dojo.arena].
    #[arg(long, value_name = "ROM")]
    pub rom: Option<PathBuf>,
    /// Frames of the match (1200 = 20 s at 60 fps; at least 1).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1200,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub frames: u32,
    /// Seed of the random players.
    #[arg(long, value_name = "SEED", default_value_t = 2024)]
    pub seed: u64,
    /// Where to write the last frame.
    #[arg(long, value_name = "PATH", default_value = "netcade-demo.png")]
    pub png: PathBuf,
    /// Ends the output with one JSON object on its own line.
    #[arg(long)]
    pub json: bool,
}

/// Frames of the demo's sync-test, and its check distance.
const SYNC_TEST_FRAMES: u32 = 300;
const SYNC_TEST_DISTANCE: u32 = 7;

/// `netcade demo`.
pub fn demo_command(args: &DemoArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let game_args = GameArgs {
        core: locate_duel_core()?,
        rom: Some(args.rom.clone().unwrap_or_else(default_arena)),
        options: Vec::new(),
    };
    writeln!(
        out,
        "Duel from {} with {}",
        game_args.core.display(),
        game_args.rom.as_deref().unwrap_or(Path::new("-")).display()
    )?;

    let mut game = open_game(&game_args)?;
    let mut inputs = InputSource::open(&InputSpec::Random { seed: args.seed })?;
    let report = run_frames(game.as_mut(), args.frames, &mut inputs)?;
    writeln!(out, "match: two random players, seed {}", args.seed)?;
    describe(&report, out)?;

    let frame = game.video_frame().ok_or(AppError::NoVideoFrame)?;
    let rgb = png::frame_to_rgb(&frame);
    let encoded = png::encode_rgb(frame.width, frame.height, &rgb);
    std::fs::write(&args.png, encoded).map_err(|source| AppError::WriteFile {
        what: "the picture",
        path: args.png.clone(),
        source,
    })?;
    writeln!(
        out,
        "last frame ({}x{}) written to {}",
        frame.width,
        frame.height,
        args.png.display()
    )?;

    // A fresh game for the sync-test, so it starts from the title like a
    // player would (one core file is loaded once per process at a time).
    let title = game.title();
    drop(game);
    let mut fresh = open_game(&game_args)?;
    let mut test_inputs = InputSource::open(&InputSpec::Random { seed: args.seed })?;
    let bar = progress_bar(u64::from(SYNC_TEST_FRAMES), args.json);
    let sync = sync_test(
        fresh.as_mut(),
        SYNC_TEST_FRAMES,
        SYNC_TEST_DISTANCE,
        Compare::DEFAULT,
        &mut test_inputs,
        &mut |frame| bar.set_position(u64::from(frame)),
    )?;
    bar.finish_and_clear();
    writeln!(out, "{}", sync.verdict())?;

    if args.json {
        let json = serde_json::json!({
            "command": "demo",
            "game": title,
            "frames": report.frames,
            "fps": report.frames_per_second(),
            "overhead_share": report.overhead_share(),
            "checksums": checksums_json(&report.checksums),
            "png": args.png.display().to_string(),
            "synctest": {
                "frames": sync.frames,
                "check_distance": sync.distance,
                "passed": sync.desync.is_none(),
                "verdict": sync.verdict(),
            },
        });
        writeln!(out, "{json}")?;
    }
    Ok(if sync.desync.is_none() {
        Outcome::Success
    } else {
        Outcome::SyncTestFailed
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duel_is_looked_for_in_the_env_then_next_to_the_executable_then_deps() {
        let exe = Path::new("/opt/netcade/target/release/netcade");
        let found = duel_core_candidates(Some("/custom/libduel.so".into()), Some(exe));
        let name = duel_library_name();
        assert_eq!(found[0], Path::new("/custom/libduel.so"));
        assert_eq!(
            found[1],
            Path::new("/opt/netcade/target/release").join(&name)
        );
        assert_eq!(
            found[2],
            Path::new("/opt/netcade/target/release/deps").join(&name)
        );
    }

    #[test]
    fn the_default_arena_is_the_one_shipped_with_duel() {
        assert!(default_arena().ends_with("cores/duel/arenas/dojo.arena"));
    }
}
