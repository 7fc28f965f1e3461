//! Where the real cores and ROMs fetched by `scripts/fetch-test-content` are.
//!
//! Tests that need them are marked
//! `#[cfg_attr(not(netcade_test_content), ignore = "needs real cores: …")]`:
//! `build.rs` sets `netcade_test_content` when the content directory holds
//! the cores, so a plain `cargo test` runs them once the content is fetched
//! and otherwise counts them as ignored (never as passed) and names the way
//! to get it. Run anyway (`--include-ignored`), they call [`real_core`] /
//! [`real_rom`] and return early on `None`: the helper has already printed a
//! visible `SKIPPED` line. With `NETCADE_REQUIRE_CONTENT=1` (set by CI)
//! missing content fails the test instead.

use libretro_host::{Core, CoreConfig, LibretroError};
use std::path::{Path, PathBuf};

/// The content directory, by the same rule as the script:
/// `$NETCADE_TEST_CONTENT`, else `${XDG_CACHE_HOME:-$HOME/.cache}/netcade/test-content`.
/// `None` when it cannot be named or does not exist.
pub fn test_content_dir() -> Option<PathBuf> {
    let dir = if let Some(dir) = non_empty_env("NETCADE_TEST_CONTENT") {
        PathBuf::from(dir)
    } else {
        let cache = non_empty_env("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| non_empty_env("HOME").map(|home| Path::new(&home).join(".cache")))?;
        cache.join("netcade").join("test-content")
    };
    dir.is_dir().then_some(dir)
}

fn non_empty_env(name: &str) -> Option<std::ffi::OsString> {
    std::env::var_os(name).filter(|value| !value.is_empty())
}

/// A real core by name (`"stella"` or `"stella_libretro.so"`), or `None`
/// after printing why the calling test is skipped.
pub fn real_core(name: &str) -> Option<PathBuf> {
    let file = if name.ends_with(".so") {
        name.to_string()
    } else {
        format!("{name}_libretro.so")
    };
    content_file(&Path::new("cores").join(file))
}

/// A real ROM by file name (`"boxing.bin"`, `"airstriker.md"`), or `None`
/// after printing why the calling test is skipped.
pub fn real_rom(name: &str) -> Option<PathBuf> {
    content_file(&Path::new("roms").join(name))
}

/// A private copy of a real core, so tests running at the same time each get
/// their own instance (one file's globals host only one core per process).
pub struct CoreCopy {
    pub path: PathBuf,
    _dir: tempfile::TempDir,
}

impl CoreCopy {
    pub fn new(path: PathBuf, dir: tempfile::TempDir) -> Self {
        CoreCopy { path, _dir: dir }
    }
}

pub fn real_core_copy(name: &str) -> Option<CoreCopy> {
    let original = real_core(name)?;
    let dir = tempfile::tempdir().expect("cannot create a temporary directory");
    let path = dir
        .path()
        .join(original.file_name().expect("a core file has a name"));
    std::fs::copy(&original, &path).expect("cannot copy the core into a temporary directory");
    Some(CoreCopy { path, _dir: dir })
}

/// A file of the test content by its path inside the content directory
/// (`cores/stella_libretro.so`), or `None` after printing why the calling
/// test is skipped.
pub fn content_file(relative: &Path) -> Option<PathBuf> {
    let found = test_content_dir()
        .map(|dir| dir.join(relative))
        .filter(|path| path.is_file());
    if found.is_none() {
        let thread = std::thread::current();
        let test = thread.name().unwrap_or("test");
        let message = format!(
            "test content missing ({}), run scripts/fetch-test-content",
            relative.display()
        );
        if std::env::var("NETCADE_REQUIRE_CONTENT").as_deref() == Ok("1") {
            panic!("{test}: {message} (NETCADE_REQUIRE_CONTENT=1)");
        }
        // Written to the stderr handle rather than with eprintln!, which the
        // test harness captures: a skip must show in a normal `cargo test`.
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "\nSKIPPED {test}: {message}");
    }
    found
}

/// The C library this test process runs with: a real shared library that is
/// certainly not a libretro core.
pub fn system_c_library() -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|path| {
            let name = Path::new(path)
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("");
            name.starts_with("libc.so") || name.starts_with("libc-")
        })
        .map(PathBuf::from)
}

/// A config whose directories are inside `dir`, with save RAM kept out of
/// the user's save directory.
pub fn config_in(dir: &Path) -> CoreConfig {
    CoreConfig {
        system_dir: dir.join("system"),
        save_dir: dir.join("saves"),
        persist_save_ram: false,
        ..netcade::paths::core_config()
    }
}

/// A core of its own (a private copy of its library) with content loaded,
/// its system and save folders in a temporary directory; the copy and the
/// folders live as long as this does. It derefs to its core, so a netplay
/// machine or a simulated match can run it as its game.
pub struct LoadedCore {
    pub core: Core,
    pub copy: CoreCopy,
    pub dirs: tempfile::TempDir,
}

impl std::ops::Deref for LoadedCore {
    type Target = Core;
    fn deref(&self) -> &Core {
        &self.core
    }
}

impl std::ops::DerefMut for LoadedCore {
    fn deref_mut(&mut self) -> &mut Core {
        &mut self.core
    }
}

/// Loads the core `copy` with the core options `options`, then `content`,
/// through the real libretro path.
pub fn load_core(
    copy: CoreCopy,
    content: &Path,
    options: &[(&str, &str)],
) -> Result<LoadedCore, LibretroError> {
    let dirs = tempfile::tempdir().expect("cannot create a temporary directory");
    let config = CoreConfig {
        option_overrides: options
            .iter()
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect(),
        ..config_in(dirs.path())
    };
    let mut core = Core::load(&copy.path, config)?;
    core.load_content(Some(content))?;
    Ok(LoadedCore { core, copy, dirs })
}
