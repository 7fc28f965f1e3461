//! Finding the bundled Duel core and its arenas from an integration test.
//!
//! `duel` is a dependency of netcade, so cargo builds `libduel.so` into the
//! same `deps/` directory the test executables live in.

use super::{load_core, LoadedCore};
use std::path::PathBuf;

/// The Duel core cargo built for this test run, found the way `--core duel`
/// finds it (test executables live in `deps/` beside it).
pub fn duel_core() -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its own path");
    let candidates = netcade::engine::game::duel_core_candidates(None, Some(&exe));
    candidates
        .iter()
        .find(|path| path.is_file())
        .cloned()
        .unwrap_or_else(|| {
            panic!("Duel is missing (looked for {candidates:?}): cargo builds it because netcade depends on the duel crate")
        })
}

/// A private copy of the Duel core, so several instances can run in one
/// process (the same file loaded twice would share its globals).
pub fn duel_core_copy() -> super::CoreCopy {
    let dir = tempfile::tempdir().expect("cannot create a temporary directory");
    let path = dir.path().join(duel_core().file_name().unwrap());
    std::fs::copy(duel_core(), &path).expect("cannot copy the Duel core");
    super::CoreCopy::new(path, dir)
}

/// An arena shipped in `cores/duel/arenas/` (`"dojo"`, `"moon"`).
pub fn duel_arena(name: &str) -> PathBuf {
    super::workspace_root()
        .join("cores/duel/arenas")
        .join(format!("{name}.arena"))
}

/// The dojo arena's path as a command line takes it.
pub fn dojo_arena() -> String {
    duel_arena("dojo").display().to_string()
}

/// Loads a Duel core of its own with the dojo arena, through the real
/// libretro path.
pub fn load_duel_dojo() -> LoadedCore {
    load_duel("dojo")
}

/// Loads a Duel core of its own with the arena shipped as `name`
/// (`"dojo"`, `"moon"`), through the real libretro path.
pub fn load_duel(name: &str) -> LoadedCore {
    load_core(duel_core_copy(), &duel_arena(name), &[]).expect("Duel loads the arena")
}
