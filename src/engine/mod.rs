//! The frame engine: opening a game, its input sources and frame clock,
//! the sinks where a frame leaves the emulator (`sinks`), the match machine
//! that carries out a rollback session's requests on a game (`matches`),
//! the debugger, replay playback, each command's report and the one error
//! type. It knows nothing of live sessions over sockets (`crate::live`) or
//! the launcher (`crate::launcher`), which stand on it.
//!
//! Everything here is written against [`Game`] (an
//! [`Emulator`](netcode::emulator::Emulator) that may also know how long it
//! spent inside the core), so the loops are tested with small pure-Rust
//! games (`netcode::testing`'s stub) and run unchanged on libretro cores.

pub mod blank_content;
pub mod child;
pub mod core_copies;
pub mod debugger;
pub mod error;
pub mod frame_clock;
pub mod game;
pub mod inputs;
pub mod interrupt;
pub mod keyframes;
pub mod latency;
pub mod matches;
pub mod playback;
pub mod png;
pub mod recorded_state;
pub mod report;
pub mod run;
pub mod sinks;
pub mod state_slots;
pub mod state_trial;

pub use error::{AppError, Outcome};
pub use game::{open_game, Game, GameArgs, MatchSaveDir};

use netcode::checksum::Checksums;

/// The JSON form of checksums: `{"memory": "…", "state": "…", "video": "…"}`.
pub fn checksums_json(checksums: &Checksums) -> serde_json::Value {
    serde_json::json!({
        "memory": checksums.memory.to_string(),
        "state": checksums.state.to_string(),
        "video": checksums.video.to_string(),
    })
}

/// Logs to stderr: `RUST_LOG` if set, else warnings, and more with each `-v`
/// (`-v` info, `-vv` debug, `-vvv` trace).
pub fn init_logging(verbosity: u8) {
    use tracing_subscriber::EnvFilter;
    let level = match verbosity {
        // The NATS client logs what netcade's own error says again.
        0 => "warn,async_nats=off",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    // A second initialisation (tests) is harmless: keep the first.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

/// Writes a desync's evidence into a new directory `base` under `parent`
/// (`base-2`, `base-3`, … when it exists already), one file per
/// `(name, bytes)`, and returns the directory.
pub fn write_dump_dir(
    parent: &std::path::Path,
    base: &str,
    files: &[(&str, &[u8])],
) -> Result<std::path::PathBuf, AppError> {
    let mut dir = parent.join(base);
    let mut attempt = 1;
    while dir.exists() {
        attempt += 1;
        dir = parent.join(format!("{base}-{attempt}"));
    }
    std::fs::create_dir_all(&dir).map_err(|source| AppError::WriteFile {
        what: "the dump directory",
        path: dir.clone(),
        source,
    })?;
    for (name, bytes) in files {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|source| AppError::WriteFile {
            what: "the desync dump",
            path,
            source,
        })?;
    }
    Ok(dir)
}
