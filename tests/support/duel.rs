//! Finding the bundled Duel core and its arenas from an integration test.
//!
//! `duel` is a dependency of netcade, so cargo builds `libduel.so` into the
//! same `deps/` directory the test executables live in.

use std::path::{Path, PathBuf};

/// The Duel core cargo built next to this test executable.
pub fn duel_core() -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its own path");
    let deps = exe.parent().expect("the test executable is in a directory");
    let core = deps.join(format!(
        "{}duel{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(
        core.is_file(),
        "{} is missing: cargo builds it because netcade depends on the duel crate",
        core.display()
    );
    core
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
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("cores/duel/arenas")
        .join(format!("{name}.arena"))
}
