//! Opening a game for a command: a libretro core plus its content, the
//! bundled Duel core found by name, and the directories the core may write.

use crate::engine::AppError;
use libretro_host::{parse_option_override, Core, CoreConfig};
use netcode::emulator::Emulator;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A game the app's frame loops drive: an [`Emulator`] that may also say how
/// long it spent inside the core's own code (for overhead figures).
pub trait Game: Emulator {
    /// Total time spent in the core's own calls since it was opened, if the
    /// game measures it.
    fn time_in_core(&self) -> Option<Duration> {
        None
    }

    /// The core's name (`Duel`), which netplay peers must share.
    fn core_name(&self) -> String;

    /// The core's version (`0.1.0`), which netplay peers must share.
    fn core_version(&self) -> String;

    /// The picture's usual size in pixels and the aspect ratio it is shown
    /// at (width, height, aspect; an aspect of 0 means square pixels), as
    /// the core last declared them (SET_GEOMETRY, SET_SYSTEM_AV_INFO).
    fn display_geometry(&self) -> (u32, u32, f32) {
        self.video_frame()
            .map_or((320, 240, 0.0), |frame| (frame.width, frame.height, 0.0))
    }

    /// What is running, for reports (`Duel 0.1.0`).
    fn title(&self) -> String {
        format!("{} {}", self.core_name(), self.core_version())
    }

    /// The core's options with the value each is given (none for a game
    /// that is not a libretro core).
    fn core_options(&self) -> Vec<libretro_host::CoreOption> {
        Vec::new()
    }

    /// The categories the core groups its options in.
    fn option_categories(&self) -> Vec<libretro_host::OptionCategory> {
        Vec::new()
    }

    /// Resets the game as its console's reset button would; false when the
    /// game has no reset.
    fn reset(&mut self) -> bool {
        false
    }

    /// The cartridge's battery-backed save RAM now (none for a game
    /// without one).
    fn save_ram(&self) -> Option<&[u8]> {
        None
    }
}

/// Which core to load, with which content and core options, and where the
/// core may read BIOS files and write saves.
#[derive(Clone, Debug, Default, PartialEq, Eq, clap::Args)]
pub struct GameArgs {
    /// The libretro core: a shared library (e.g. genesis_plus_gx_libretro.so),
    /// or `duel` for the Duel core built with netcade.
    #[arg(long, value_name = "CORE")]
    pub core: PathBuf,
    /// The content the core loads (a ROM, or a Duel arena).
    #[arg(long, value_name = "ROM")]
    pub rom: Option<PathBuf>,
    /// Sets a core option, overriding its default (repeatable).
    #[arg(long = "option", value_name = "KEY=VALUE", value_parser = parse_option_override)]
    pub options: Vec<(String, String)>,
    /// Where the core looks for BIOS and other system files
    /// [default: $NETCADE_SYSTEM_DIR, else the `system` folder of netcade's
    /// data directory, ~/.local/share/netcade/system].
    #[arg(long, value_name = "DIR")]
    pub system_dir: Option<PathBuf>,
    /// Where the core may write its own save files
    /// [default: $NETCADE_SAVE_DIR, else the `saves` folder of netcade's
    /// data directory, ~/.local/share/netcade/saves].
    #[arg(long, value_name = "DIR")]
    pub save_dir: Option<PathBuf>,
}

/// The environment variable that replaces the default `--system-dir`.
pub const SYSTEM_DIR_ENV: &str = "NETCADE_SYSTEM_DIR";

/// The environment variable that replaces the default `--save-dir`.
pub const SAVE_DIR_ENV: &str = "NETCADE_SAVE_DIR";

/// What `--core` takes to mean the Duel core built with netcade. A core file
/// in the current directory called `duel` is reached as `./duel`.
pub const BUNDLED_DUEL: &str = "duel";

/// Loads the core and its content as `args` say.
///
/// SRAM is not read from or written to the save directory: headless runs
/// must start from the same memory every time to be comparable.
pub fn open_game(args: &GameArgs) -> Result<Box<dyn Game>, AppError> {
    open_game_accepting(args, |_| Ok(()))
}

/// Like [`open_game`], asking `accept` about the core (its name and
/// version) before the content is loaded: a replay refuses another core
/// before that core is handed content it may not take.
pub fn open_game_accepting(
    args: &GameArgs,
    accept: impl FnOnce(&libretro_host::CoreInfo) -> Result<(), AppError>,
) -> Result<Box<dyn Game>, AppError> {
    let core_path = resolve_core(&args.core)?;
    let defaults = crate::paths::core_config();
    let config = CoreConfig {
        option_overrides: args.options.clone(),
        persist_save_ram: false,
        system_dir: chosen_dir(&args.system_dir, "--system-dir", SYSTEM_DIR_ENV)?
            .unwrap_or(defaults.system_dir),
        save_dir: chosen_dir(&args.save_dir, "--save-dir", SAVE_DIR_ENV)?
            .unwrap_or(defaults.save_dir),
        ..crate::paths::core_config()
    };
    let mut core = Core::load(&core_path, config)?;
    accept(core.info())?;
    core.load_content(args.rom.as_deref())?;
    tracing::info!(
        core = %core_path.display(),
        "loaded {} {}",
        core.info().name,
        core.info().version
    );
    Ok(Box::new(core))
}

/// The save directory of one netplay match or spectating session, given to
/// its core instead of the player's: `netplay/<role>-<unix seconds>-<pid>`
/// in the save directory. Netplay never writes save RAM itself, and a core
/// that writes its own saves writes them here, so the player's files stay
/// as they were. Removed when dropped if the core left nothing in it.
#[derive(Debug)]
pub struct MatchSaveDir {
    path: PathBuf,
}

impl MatchSaveDir {
    /// Makes the folder for a session of `role` (`host`, `join`,
    /// `spectate`) under the save directory `args` choose.
    pub fn create(args: &GameArgs, role: &str) -> Result<MatchSaveDir, AppError> {
        let base = chosen_dir(&args.save_dir, "--save-dir", SAVE_DIR_ENV)?
            .unwrap_or_else(|| crate::paths::core_config().save_dir);
        let seconds = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let path = base
            .join("netplay")
            .join(format!("{role}-{seconds}-{}", std::process::id()));
        let path = chosen_dir(&Some(path), "--save-dir", SAVE_DIR_ENV)?.unwrap_or_default();
        Ok(MatchSaveDir { path })
    }

    /// `args` with this folder as the core's save directory.
    pub fn game_args(&self, args: &GameArgs) -> GameArgs {
        GameArgs {
            save_dir: Some(self.path.clone()),
            ..args.clone()
        }
    }
}

impl Drop for MatchSaveDir {
    fn drop(&mut self) {
        // Fails, as it should, when the core saved something there.
        let _ = std::fs::remove_dir(&self.path);
    }
}

/// The directory a flag names, else the one its environment variable names,
/// created if missing; `None` when neither names one. Read here rather than
/// by the argument parser so that commands which open games without the
/// flags (`demo`) honour the variable too. A directory the user chose that
/// cannot be created is their mistake to hear about, not a log line.
fn chosen_dir(
    flag: &Option<PathBuf>,
    flag_name: &str,
    env_name: &str,
) -> Result<Option<PathBuf>, AppError> {
    let Some(dir) = flag.clone().or_else(|| {
        std::env::var_os(env_name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    }) else {
        return Ok(None);
    };
    std::fs::create_dir_all(&dir).map_err(|err| AppError::BadArgument {
        message: format!(
            "cannot create directory {} ({flag_name} or {env_name}): {err}",
            dir.display()
        ),
    })?;
    Ok(Some(dir))
}

/// The core file `--core` names: the bundled Duel for [`BUNDLED_DUEL`],
/// else the path as given.
pub fn resolve_core(core: &Path) -> Result<PathBuf, AppError> {
    if core == Path::new(BUNDLED_DUEL) {
        locate_duel_core()
    } else {
        Ok(core.to_path_buf())
    }
}

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

/// Where Duel's library is looked for, in order: `$NETCADE_DUEL_CORE`, next
/// to `executable`, in its `deps/` subdirectory. Cargo puts it in `deps/`
/// when it builds netcade (Duel is a dependency), and next to netcade only
/// when Duel is built as a package of its own (`cargo build --release`).
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
    newest_file(&candidates).ok_or(AppError::DuelCoreNotFound {
        searched: candidates,
    })
}

/// The most recently built of `paths` that exist (the first of equals):
/// a workspace build leaves a copy of Duel in `target/<profile>/` that a
/// later build of netcade alone refreshes only in `deps/`.
fn newest_file(paths: &[PathBuf]) -> Option<PathBuf> {
    let mut newest: Option<(&PathBuf, std::time::SystemTime)> = None;
    for path in paths {
        let Ok(metadata) = std::fs::metadata(path) else {
            continue;
        };
        if !metadata.is_file() {
            continue;
        }
        let modified = metadata.modified().unwrap_or(std::time::UNIX_EPOCH);
        if newest.is_none_or(|(_, time)| modified > time) {
            newest = Some((path, modified));
        }
    }
    newest.map(|(path, _)| path.clone())
}

impl Game for Core {
    fn time_in_core(&self) -> Option<Duration> {
        Some(Core::time_in_core(self))
    }

    fn core_name(&self) -> String {
        self.info().name.clone()
    }

    fn core_version(&self) -> String {
        self.info().version.clone()
    }

    fn display_geometry(&self) -> (u32, u32, f32) {
        let av = self.av_info();
        (av.base_width, av.base_height, av.aspect_ratio)
    }

    fn core_options(&self) -> Vec<libretro_host::CoreOption> {
        Core::options(self).to_vec()
    }

    fn option_categories(&self) -> Vec<libretro_host::OptionCategory> {
        Core::option_categories(self).to_vec()
    }

    fn reset(&mut self) -> bool {
        Core::reset(self);
        true
    }

    fn save_ram(&self) -> Option<&[u8]> {
        Core::save_ram(self)
    }
}

/// The stub game runs every frame loop in tests as a core would.
#[cfg(any(test, feature = "testing"))]
impl Game for netcode::testing::StubGame {
    fn time_in_core(&self) -> Option<Duration> {
        netcode::testing::StubGame::time_in_core(self)
    }

    fn core_name(&self) -> String {
        Self::CORE_NAME.to_string()
    }

    fn core_version(&self) -> String {
        Self::CORE_VERSION.to_string()
    }

    fn title(&self) -> String {
        netcode::testing::StubGame::title(self)
    }
}

/// The arena shipped with Duel.
pub fn default_arena() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("cores/duel/arenas/dojo.arena")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn of_two_builds_of_duel_the_newer_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let (old, new) = (dir.path().join("old.so"), dir.path().join("new.so"));
        std::fs::write(&old, b"old").unwrap();
        std::fs::write(&new, b"new").unwrap();
        let earlier = std::time::SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(earlier)
            .unwrap();
        let missing = dir.path().join("missing.so");
        assert_eq!(newest_file(&[missing, old.clone(), new.clone()]), Some(new));
        assert_eq!(newest_file(std::slice::from_ref(&old)), Some(old));
        assert_eq!(newest_file(&[]), None);
    }

    #[test]
    fn a_missing_core_is_reported_by_path() {
        let args = GameArgs {
            core: "/nonexistent/core.so".into(),
            ..GameArgs::default()
        };
        let err = open_game(&args).err().unwrap();
        assert!(err.to_string().contains("/nonexistent/core.so"));
        assert_eq!(err.exit_code(), crate::engine::error::EXIT_USER_MISTAKE);
    }

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
    fn a_core_path_other_than_duel_is_taken_as_given() {
        for path in [
            "./duel",
            "cores/duel",
            "duel.so",
            "/usr/lib/libretro/stella_libretro.so",
        ] {
            assert_eq!(resolve_core(Path::new(path)).unwrap(), Path::new(path));
        }
    }
}
