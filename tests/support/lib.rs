//! Helpers shared by netcade's integration tests: a crate of its own, so it
//! is compiled once for every test binary, and what one binary leaves
//! unused is still part of its public face rather than dead code.

pub mod cli;
pub mod content;
pub mod coturn;
pub mod duel;
pub mod fake_core;
pub mod hostile_relay;
pub mod ice;
pub mod netplay;
pub mod replays;
pub mod restart;
pub mod screenshot;
pub mod servers;

pub use content::{
    config_in, load_core, real_core, real_core_copy, real_rom, system_c_library, test_content_dir,
    CoreCopy, LoadedCore,
};
pub use duel::{dojo_arena, duel_arena, duel_core, duel_core_copy, load_duel, load_duel_dojo};

use std::path::{Path, PathBuf};

/// The `netcade` binary cargo built beside the running test binary
/// (`<target>/<profile>/netcade`; the test runs from `<profile>/deps/`).
pub fn netcade_binary() -> PathBuf {
    profile_dir().join(format!("netcade{}", std::env::consts::EXE_SUFFIX))
}

/// The folder cargo keeps for integration tests' files (`<target>/tmp`,
/// what `CARGO_TARGET_TMPDIR` names for a test of the netcade crate).
pub fn target_tmp_dir() -> PathBuf {
    let dir = profile_dir()
        .parent()
        .expect("the profile folder sits in the target folder")
        .join("tmp");
    std::fs::create_dir_all(&dir).expect("cannot create the target's tmp folder");
    dir
}

/// The workspace's root folder (the netcade crate's manifest folder).
pub fn workspace_root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn profile_dir() -> PathBuf {
    let test = std::env::current_exe().expect("the test binary knows its path");
    let deps = test.parent().expect("a test binary sits in a folder");
    deps.parent()
        .expect("the deps folder sits in the profile folder")
        .to_path_buf()
}
