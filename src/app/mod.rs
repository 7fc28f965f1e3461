//! The frame loops behind netcade's commands: `run`, `synctest`, `debug`,
//! `demo`. `src/main.rs` only turns the command line into calls to these.
//!
//! Everything here is written against [`Game`] (an
//! [`Emulator`](crate::emulator::Emulator) that may also know how long it
//! spent inside the core), so the loops are tested with small pure-Rust games
//! (see `testing`) and run unchanged on libretro cores.

pub mod debugger;
pub mod demo;
pub mod desync_diagnosis;
pub mod error;
pub mod frame_clock;
pub mod frame_sink;
pub mod game;
pub mod inputs;
pub mod netplay_live;
pub mod netplay_match;
pub mod netplay_tick;
pub mod png;
pub mod run;
pub mod synctest;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use error::{AppError, Outcome};
pub use game::{open_game, Game, GameArgs};

use crate::checksum::Checksums;

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
        0 => "warn",
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
