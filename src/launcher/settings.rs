//! The launcher's settings, kept in `settings.toml` beside `input.toml`:
//! how sessions are shown (shader, integer scale, fullscreen, vsync), the
//! netplay defaults that pre-fill the Host and Join forms (name, port,
//! delay), the folders the core uses (saves, system files), the core
//! options chosen for each core, each game's run-ahead with the input
//! lag measured for it, the library's ROM folders, and for each game of
//! the library (by its file) the core, core options and input delay it
//! was last played with. Everything but the form defaults becomes
//! the command line's own switches (`--shader crt`, `--name ann`,
//! `--option KEY=VALUE`, `--save-dir DIR`), so a setting can do nothing the
//! command line cannot.

use crate::engine::sinks::run_ahead::{RunAheadArgs, RunAheadMode, MAX_RUN_AHEAD};
use crate::launcher::forms::{DelayChoice, GameChoice, HostForm, JoinForm, Session};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The settings file's name, in the config directory.
pub const SETTINGS_FILE_NAME: &str = "settings.toml";

/// How sessions are shown.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VideoSettings {
    /// `--shader`, when not the default.
    pub shader: Option<String>,
    /// `--integer-scale`.
    pub integer_scale: bool,
    /// `--fullscreen`.
    pub fullscreen: bool,
    /// `--vsync`.
    pub vsync: bool,
}

/// What the Host and Join forms start with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetplayDefaults {
    /// `--name` of a match or a watch: the chat's name (empty: the seat's).
    pub name: String,
    /// The port a host listens on.
    pub port: u16,
    /// The local input delay.
    pub delay: DelayChoice,
    /// Whether a match asks the router to forward its port (false:
    /// `--no-port-mapping` on every Host, Join and Spectate).
    pub port_mapping: bool,
    /// The Lobby screen's server (`nats://…`; empty: none entered yet).
    pub lobby: String,
}

impl Default for NetplayDefaults {
    fn default() -> Self {
        NetplayDefaults {
            name: String::new(),
            port: HostForm::default().port,
            delay: DelayChoice::Auto,
            port_mapping: true,
            lobby: String::new(),
        }
    }
}

impl NetplayDefaults {
    /// The Host form as these defaults fill it.
    pub fn host_form(&self) -> HostForm {
        HostForm {
            port: self.port,
            delay: self.delay,
            ..HostForm::default()
        }
    }

    /// The Join form as these defaults fill it.
    pub fn join_form(&self) -> JoinForm {
        JoinForm {
            delay: self.delay,
            record: true,
            ..JoinForm::default()
        }
    }
}

/// The folders a core reads and writes, when not the data directory's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathSettings {
    /// `--save-dir`.
    pub saves: Option<PathBuf>,
    /// `--system-dir`.
    pub system: Option<PathBuf>,
}

/// What the launcher keeps for one game (by [`GameChoice::label`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GameSettings {
    /// `--run-ahead` and `--run-ahead-mode` for its Play, Host and Join.
    pub run_ahead: RunAheadArgs,
    /// Its own input lag in frames, as `netcade latency` measured it (with
    /// the core options of the time), if it was.
    pub lag_frames: Option<u32>,
}

/// What the launcher remembers of one content file (by its path): how it
/// was last played.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RomSettings {
    /// The core chosen for it (`--core`), when not the library's choice.
    pub core: Option<String>,
    /// Its input delay in Host and Join, when not the default.
    pub delay: Option<DelayChoice>,
    /// Its own core options (over the core's), key → value.
    pub options: BTreeMap<String, String>,
}

/// Every setting of the launcher.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// How sessions are shown.
    pub video: VideoSettings,
    /// What the Host and Join forms start with.
    pub netplay: NetplayDefaults,
    /// The core's folders.
    pub paths: PathSettings,
    /// Core (as `--core` names it) → option key → value.
    pub core_options: BTreeMap<String, BTreeMap<String, String>>,
    /// Game (its label) → what is kept for it.
    pub games: BTreeMap<String, GameSettings>,
    /// The library's ROM folders.
    pub rom_folders: Vec<PathBuf>,
    /// Content file (its path) → how it was last played.
    pub roms: BTreeMap<String, RomSettings>,
}

#[derive(serde::Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct SettingsFile {
    video: VideoTable,
    netplay: NetplayTable,
    paths: PathsTable,
    core_options: BTreeMap<String, BTreeMap<String, String>>,
    games: BTreeMap<String, GameTable>,
    library: LibraryTable,
    roms: BTreeMap<String, RomTable>,
}

#[derive(serde::Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct LibraryTable {
    folders: Vec<PathBuf>,
}

#[derive(serde::Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct RomTable {
    core: Option<String>,
    delay: Option<Spanned<String>>,
    options: BTreeMap<String, String>,
}

#[derive(serde::Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct GameTable {
    run_ahead: Option<Spanned<u8>>,
    run_ahead_mode: Option<Spanned<String>>,
    lag_frames: Option<u32>,
}

#[derive(serde::Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct VideoTable {
    shader: Option<Spanned<String>>,
    integer_scale: bool,
    fullscreen: bool,
    vsync: bool,
}

#[derive(serde::Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct NetplayTable {
    name: Option<Spanned<String>>,
    port: Option<u16>,
    delay: Option<Spanned<String>>,
    port_mapping: Option<bool>,
    lobby: Option<String>,
}

#[derive(serde::Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct PathsTable {
    saves: Option<PathBuf>,
    system: Option<PathBuf>,
}

/// The name checked as `--name` checks it.
pub use crate::live::chat::check_name;

/// `path line N: message` on one line, the line found from the byte
/// offset `at`.
fn mistake(text: &str, path: &Path, at: usize, message: &str) -> String {
    let line = text[..at.min(text.len())].matches('\n').count() + 1;
    let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{} line {line}: {message}", path.display())
}

/// What the TOML parser said at byte `at` of `text`, or, where it says
/// nothing (a lone carriage return, for one), which character it stopped at.
fn toml_reason(text: &str, at: usize, said: &str) -> String {
    if !said.trim().is_empty() {
        return said.trim().to_string();
    }
    match text.get(at..).and_then(|rest| rest.chars().next()) {
        Some(found) => format!("this is not TOML: it cannot go on with {found:?} here"),
        None => "this is not TOML: it ends too soon".to_string(),
    }
}

/// A delay as the file writes it: `auto` or 0–4.
fn parse_delay(text: &str) -> Result<DelayChoice, String> {
    match text.trim() {
        "auto" => Ok(DelayChoice::Auto),
        number => number
            .parse::<u8>()
            .ok()
            .filter(|frames| *frames <= 4)
            .map(DelayChoice::Fixed)
            .ok_or_else(|| format!("the delay is \"auto\" or 0 to 4 frames (got {text:?})")),
    }
}

fn delay_text(delay: DelayChoice) -> String {
    match delay {
        DelayChoice::Auto => "auto".to_string(),
        DelayChoice::Fixed(frames) => frames.to_string(),
    }
}

/// A TOML string: quoted, with TOML's escapes.
fn quoted(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

impl Settings {
    /// Reads the file's text; `path` names it in the mistake's message
    /// (`settings.toml line 3: …`), and `shaders` are the names `--shader`
    /// takes.
    pub fn parse(text: &str, path: &Path, shaders: &[&str]) -> Result<Settings, String> {
        let file: SettingsFile = toml::from_str(text).map_err(|err| {
            let at = err.span().map_or(0, |span| span.start);
            mistake(text, path, at, &toml_reason(text, at, err.message()))
        })?;
        let shader = match file.video.shader {
            None => None,
            Some(name) if shaders.contains(&name.get_ref().as_str()) => Some(name.into_inner()),
            Some(name) => {
                let message = format!(
                    "unknown shader {:?} (shaders: {})",
                    name.get_ref(),
                    shaders.join(", ")
                );
                return Err(mistake(text, path, name.span().start, &message));
            }
        };
        if let Some(name) = &file.netplay.name {
            check_name(name.get_ref())
                .map_err(|message| mistake(text, path, name.span().start, &message))?;
        }
        let mut games = BTreeMap::new();
        for (game, table) in file.games {
            let ahead = match table.run_ahead {
                Some(ahead) if *ahead.get_ref() > MAX_RUN_AHEAD => {
                    let message = format!(
                        "run_ahead is 0 to {MAX_RUN_AHEAD} frames (got {})",
                        ahead.get_ref()
                    );
                    return Err(mistake(text, path, ahead.span().start, &message));
                }
                Some(ahead) => ahead.into_inner(),
                None => 0,
            };
            let ahead_mode = match table.run_ahead_mode {
                None => RunAheadMode::default(),
                Some(mode) => <RunAheadMode as clap::ValueEnum>::from_str(mode.get_ref(), false)
                    .map_err(|_| {
                        let message = format!(
                            "run_ahead_mode is \"single\" or \"preemptive\" (got {:?})",
                            mode.get_ref()
                        );
                        mistake(text, path, mode.span().start, &message)
                    })?,
            };
            let run_ahead = RunAheadArgs { ahead, ahead_mode };
            let lag_frames = table.lag_frames;
            games.insert(
                game,
                GameSettings {
                    run_ahead,
                    lag_frames,
                },
            );
        }
        let mut roms = BTreeMap::new();
        for (rom, table) in file.roms {
            let delay = match table.delay {
                None => None,
                Some(delay) => Some(
                    parse_delay(delay.get_ref())
                        .map_err(|message| mistake(text, path, delay.span().start, &message))?,
                ),
            };
            let kept = RomSettings {
                core: table.core,
                delay,
                options: table.options,
            };
            roms.insert(rom, kept);
        }
        let delay = match file.netplay.delay {
            None => DelayChoice::Auto,
            Some(delay) => parse_delay(delay.get_ref())
                .map_err(|message| mistake(text, path, delay.span().start, &message))?,
        };
        Ok(Settings {
            video: VideoSettings {
                shader,
                integer_scale: file.video.integer_scale,
                fullscreen: file.video.fullscreen,
                vsync: file.video.vsync,
            },
            netplay: NetplayDefaults {
                name: file
                    .netplay
                    .name
                    .map(Spanned::into_inner)
                    .unwrap_or_default(),
                port: file.netplay.port.unwrap_or(NetplayDefaults::default().port),
                delay,
                port_mapping: file.netplay.port_mapping.unwrap_or(true),
                lobby: file.netplay.lobby.unwrap_or_default(),
            },
            paths: PathSettings {
                saves: file.paths.saves,
                system: file.paths.system,
            },
            core_options: file.core_options,
            games,
            rom_folders: file.library.folders,
            roms,
        })
    }

    /// The file's text for these settings.
    pub fn to_toml(&self) -> String {
        let video = &self.video;
        let mut text =
            String::from("# netcade's launcher settings (the Settings screen writes them).\n");
        text.push_str("\n# How the sessions it starts are shown.\n[video]\n");
        if let Some(shader) = &video.shader {
            text.push_str(&format!("shader = {}\n", quoted(shader)));
        }
        text.push_str(&format!(
            "integer_scale = {}\nfullscreen = {}\nvsync = {}\n",
            video.integer_scale, video.fullscreen, video.vsync
        ));
        let netplay = &self.netplay;
        text.push_str(&format!(
            "\n# What the Host and Join forms start with.\n[netplay]\nname = {}\nport = {}\ndelay = {}   # \"auto\" or 0 to 4 frames\n# Ask the router to forward the match's port (PCP, NAT-PMP, UPnP); false: --no-port-mapping.\nport_mapping = {}\n# The Lobby screen's server.\nlobby = {}\n",
            quoted(&netplay.name),
            netplay.port,
            quoted(&delay_text(netplay.delay)),
            netplay.port_mapping,
            quoted(&netplay.lobby)
        ));
        text.push_str("\n# The core's folders (blank: in netcade's data directory).\n[paths]\n");
        for (name, folder) in [("saves", &self.paths.saves), ("system", &self.paths.system)] {
            if let Some(folder) = folder {
                text.push_str(&format!(
                    "{name} = {}\n",
                    quoted(&folder.display().to_string())
                ));
            }
        }
        for (core, options) in &self.core_options {
            text.push_str(&format!("\n[core_options.{}]\n", quoted(core)));
            for (key, value) in options {
                text.push_str(&format!("{} = {}\n", quoted(key), quoted(value)));
            }
        }
        text.push_str("\n# The library's ROM folders.\n[library]\nfolders = [");
        let folders: Vec<String> = self
            .rom_folders
            .iter()
            .map(|folder| quoted(&folder.display().to_string()))
            .collect();
        text.push_str(&folders.join(", "));
        text.push_str("]\n");
        for (rom, kept) in &self.roms {
            text.push_str(&format!("\n[roms.{}]\n", quoted(rom)));
            if let Some(core) = &kept.core {
                text.push_str(&format!("core = {}\n", quoted(core)));
            }
            if let Some(delay) = kept.delay {
                text.push_str(&format!("delay = {}\n", quoted(&delay_text(delay))));
            }
            let options: Vec<String> = kept
                .options
                .iter()
                .map(|(key, value)| format!("{} = {}", quoted(key), quoted(value)))
                .collect();
            text.push_str(&format!("options = {{ {} }}\n", options.join(", ")));
        }
        for (game, kept) in &self.games {
            text.push_str(&format!(
                "\n[games.{}]\nrun_ahead = {}   # 0 to {MAX_RUN_AHEAD} frames\nrun_ahead_mode = {}   # \"single\" or \"preemptive\"\n",
                quoted(game),
                kept.run_ahead.ahead,
                quoted(&kept.run_ahead.ahead_mode.to_string())
            ));
            if let Some(lag) = kept.lag_frames {
                text.push_str(&format!(
                    "lag_frames = {lag}   # measured by netcade latency\n"
                ));
            }
        }
        text
    }

    /// The settings in `path`: the defaults when there is none, and with a
    /// mistake in it the defaults and the `error:` line to show.
    pub fn load(path: &Path, shaders: &[&str]) -> (Settings, Option<String>) {
        match std::fs::read_to_string(path) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                (Settings::default(), None)
            }
            Err(error) => (
                Settings::default(),
                Some(format!(
                    "error: cannot read {}: {error}; using the default settings",
                    path.display()
                )),
            ),
            Ok(text) => match Settings::parse(&text, path, shaders) {
                Ok(settings) => (settings, None),
                Err(message) => (
                    Settings::default(),
                    Some(format!("error: {message}; using the default settings")),
                ),
            },
        }
    }

    /// Writes them to `path` (making its folder).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder)?;
        }
        std::fs::write(path, self.to_toml())
    }

    /// The window switches they stand for (those not at their default).
    pub fn window_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(shader) = &self.video.shader {
            args.extend(["--shader".to_string(), shader.clone()]);
        }
        for (on, flag) in [
            (self.video.integer_scale, "--integer-scale"),
            (self.video.fullscreen, "--fullscreen"),
            (self.video.vsync, "--vsync"),
        ] {
            if on {
                args.push(flag.to_string());
            }
        }
        args
    }

    /// The switches they stand for in `session` of `game`: the name in a
    /// match or a watch, the core's options chosen and its folders, and
    /// the game's run-ahead when the session plays (a spectator's picture
    /// is not its own to run ahead).
    pub fn session_args(&self, session: &Session, game: &GameChoice) -> Vec<String> {
        let mut args = Vec::new();
        let named = !matches!(session, Session::Play { .. }) && !self.netplay.name.is_empty();
        if named {
            args.extend(["--name".to_string(), self.netplay.name.clone()]);
        }
        if !self.netplay.port_mapping && !matches!(session, Session::Play { .. }) {
            args.push("--no-port-mapping".to_string());
        }
        args.extend(self.play_args(game));
        let run_ahead = self.game(game).run_ahead;
        if run_ahead.ahead > 0 && !matches!(session, Session::Spectate { .. }) {
            args.extend(["--run-ahead".to_string(), run_ahead.ahead.to_string()]);
            if run_ahead.ahead_mode != RunAheadMode::default() {
                args.extend([
                    "--run-ahead-mode".to_string(),
                    run_ahead.ahead_mode.to_string(),
                ]);
            }
        }
        args
    }

    /// What is kept for `game` (the defaults if nothing is).
    pub fn game(&self, game: &GameChoice) -> GameSettings {
        self.games.get(&game.label()).copied().unwrap_or_default()
    }

    /// Keeps `kept` for `game` (nothing, when it is all defaults).
    pub fn set_game(&mut self, game: &GameChoice, kept: GameSettings) {
        if kept == GameSettings::default() {
            self.games.remove(&game.label());
        } else {
            self.games.insert(game.label(), kept);
        }
    }

    /// What is remembered of `game`'s content file (nothing without one).
    pub fn rom(&self, game: &GameChoice) -> RomSettings {
        game.rom
            .as_ref()
            .and_then(|rom| self.roms.get(&rom.display().to_string()))
            .cloned()
            .unwrap_or_default()
    }

    /// Remembers `kept` for `rom` (nothing, when it is all defaults).
    pub fn set_rom(&mut self, rom: &Path, kept: RomSettings) {
        let key = rom.display().to_string();
        if kept == RomSettings::default() {
            self.roms.remove(&key);
        } else {
            self.roms.insert(key, kept);
        }
    }

    /// The game switches they stand for with `core`: its options chosen
    /// and the core's folders.
    pub fn game_args(&self, core: &str) -> Vec<String> {
        self.options_and_folders(core, &BTreeMap::new())
    }

    /// [`Settings::game_args`] of `game`'s core with the content's own
    /// options over the core's.
    pub fn play_args(&self, game: &GameChoice) -> Vec<String> {
        let own = self.rom(game).options;
        self.options_and_folders(&game.core, &own)
    }

    fn options_and_folders(&self, core: &str, own: &BTreeMap<String, String>) -> Vec<String> {
        let mut options = self.core_options.get(core).cloned().unwrap_or_default();
        options.extend(own.iter().map(|(key, value)| (key.clone(), value.clone())));
        let mut args = Vec::new();
        for (key, value) in &options {
            args.extend(["--option".to_string(), format!("{key}={value}")]);
        }
        for (flag, folder) in [
            ("--save-dir", &self.paths.saves),
            ("--system-dir", &self.paths.system),
        ] {
            if let Some(folder) = folder {
                args.extend([flag.to_string(), folder.display().to_string()]);
            }
        }
        args
    }
}

/// Where the settings live: `settings.toml` in the config directory.
pub fn settings_path() -> Option<PathBuf> {
    Some(crate::paths::config_dir()?.join(SETTINGS_FILE_NAME))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHADERS: &[&str] = &["sharp-bilinear", "nearest", "crt"];

    fn parse(text: &str) -> Result<Settings, String> {
        Settings::parse(text, Path::new("settings.toml"), SHADERS)
    }

    fn everything_set() -> Settings {
        let options = BTreeMap::from([
            ("stella_filter".to_string(), "ntsc \"rgb\"".to_string()),
            ("stella_palette".to_string(), "z26".to_string()),
        ]);
        Settings {
            video: VideoSettings {
                shader: Some("crt".to_string()),
                integer_scale: true,
                fullscreen: false,
                vsync: true,
            },
            netplay: NetplayDefaults {
                name: "Ann O'Neil".to_string(),
                port: 7123,
                delay: DelayChoice::Fixed(3),
                port_mapping: false,
                lobby: "nats://lobby.example:4222".to_string(),
            },
            paths: PathSettings {
                saves: Some(PathBuf::from("/games/my saves")),
                system: None,
            },
            core_options: BTreeMap::from([("/cores/stella_libretro.so".to_string(), options)]),
            games: BTreeMap::from([
                (
                    "boxing.bin (stella_libretro.so)".to_string(),
                    GameSettings {
                        run_ahead: RunAheadArgs {
                            ahead: 2,
                            ahead_mode: RunAheadMode::Preemptive,
                        },
                        lag_frames: Some(3),
                    },
                ),
                (
                    "dojo.arena (duel)".to_string(),
                    GameSettings {
                        run_ahead: RunAheadArgs {
                            ahead: 1,
                            ahead_mode: RunAheadMode::Single,
                        },
                        lag_frames: None,
                    },
                ),
            ]),
            rom_folders: vec![PathBuf::from("/games/atari 2600"), PathBuf::from("/roms")],
            roms: BTreeMap::from([
                (
                    "/roms/airstriker.md".to_string(),
                    RomSettings {
                        core: Some("/cores/genesis_plus_gx_libretro.so".to_string()),
                        delay: Some(DelayChoice::Fixed(2)),
                        options: BTreeMap::from([(
                            "genesis_plus_gx_addr_error".to_string(),
                            "disabled".to_string(),
                        )]),
                    },
                ),
                (
                    "/roms/boxing.bin".to_string(),
                    RomSettings {
                        core: None,
                        delay: None,
                        options: BTreeMap::from([(
                            "stella_palette".to_string(),
                            "standard".to_string(),
                        )]),
                    },
                ),
            ]),
        }
    }

    #[test]
    fn every_setting_survives_its_file() {
        let settings = everything_set();
        assert_eq!(parse(&settings.to_toml()), Ok(settings));
        assert_eq!(
            parse(&Settings::default().to_toml()),
            Ok(Settings::default())
        );
        assert_eq!(parse(""), Ok(Settings::default()));
    }

    #[test]
    fn the_settings_become_the_command_lines_own_switches() {
        let settings = everything_set();
        assert_eq!(
            settings.window_args(),
            ["--shader", "crt", "--integer-scale", "--vsync"]
        );
        assert_eq!(
            settings.game_args("/cores/stella_libretro.so"),
            [
                "--option",
                "stella_filter=ntsc \"rgb\"",
                "--option",
                "stella_palette=z26",
                "--save-dir",
                "/games/my saves"
            ]
        );
        assert_eq!(
            settings.game_args("duel"),
            ["--save-dir", "/games/my saves"]
        );
        assert!(Settings::default().window_args().is_empty());
        assert!(Settings::default().game_args("duel").is_empty());
    }

    #[test]
    fn port_mapping_switched_off_in_the_settings_is_switched_off_for_every_match_and_watch() {
        let settings = everything_set();
        let game = GameChoice {
            core: "duel".to_string(),
            rom: None,
        };
        let address = "10.0.0.1:7000".to_string();
        for session in [
            Session::Host(HostForm::default()),
            Session::Join(JoinForm::default()),
            Session::Rejoin {
                address: address.clone(),
            },
            Session::Spectate { address },
        ] {
            let args = settings.session_args(&session, &game);
            assert!(args.contains(&"--no-port-mapping".to_string()), "{args:?}");
            let by_default = Settings::default().session_args(&session, &game);
            assert!(!by_default.contains(&"--no-port-mapping".to_string()));
        }
        let file = "[netplay]\nport_mapping = false\n";
        assert!(!parse(file).unwrap().netplay.port_mapping);
        assert!(parse("").unwrap().netplay.port_mapping);
    }

    #[test]
    fn a_games_run_ahead_is_added_where_it_plays_and_not_where_it_watches() {
        let settings = everything_set();
        let boxing = GameChoice {
            core: "/cores/stella_libretro.so".to_string(),
            rom: Some(PathBuf::from("/roms/boxing.bin")),
        };
        let host = Session::Host(HostForm::default());
        let args = settings.session_args(&host, &boxing);
        let tail = ["--run-ahead", "2", "--run-ahead-mode", "preemptive"].map(String::from);
        assert!(args.ends_with(&tail), "{args:?}");
        let options: Vec<&String> = args.iter().filter(|arg| arg.contains('=')).collect();
        assert_eq!(
            options,
            ["stella_filter=ntsc \"rgb\"", "stella_palette=standard"],
            "the game's own palette over the core's, once"
        );
        let watch = Session::Spectate {
            address: "10.0.0.1:7000".to_string(),
        };
        let args = settings.session_args(&watch, &boxing);
        assert!(!args.contains(&"--run-ahead".to_string()), "{args:?}");
        let dojo = GameChoice {
            core: "duel".to_string(),
            rom: Some(PathBuf::from("arenas/dojo.arena")),
        };
        let args = settings.session_args(&Session::Play { players: 1 }, &dojo);
        assert!(
            args.ends_with(&["--run-ahead".to_string(), "1".to_string()]),
            "{args:?}"
        );
        assert!(!args.contains(&"--no-port-mapping".to_string()), "{args:?}");
        let moon = GameChoice {
            core: "duel".to_string(),
            rom: Some(PathBuf::from("arenas/moon.arena")),
        };
        let args = settings.session_args(&Session::Play { players: 1 }, &moon);
        assert!(!args.contains(&"--run-ahead".to_string()), "{args:?}");
    }

    #[test]
    fn a_mistake_in_the_settings_names_its_file_and_line() {
        let err = parse("[video]\nvsync = true\nshader = \"blurry\"\n").unwrap_err();
        assert!(
            err.starts_with("settings.toml line 3: unknown shader \"blurry\""),
            "{err}"
        );
        let err = parse("[video]\nbrightness = 3\n").unwrap_err();
        assert!(err.starts_with("settings.toml line 2: "), "{err}");
        let err = parse("[netplay]\nname = \"x\"\n\ndelay = \"9\"\n").unwrap_err();
        assert!(
            err.starts_with("settings.toml line 4: the delay is"),
            "{err}"
        );
        let err = parse("[netplay]\nport = 70000\n").unwrap_err();
        assert!(err.starts_with("settings.toml line 2: "), "{err}");
        // The parser itself gives no reason for some: the line still has one.
        for (text, line) in [("\r[video]\n", 1), ("[video]\nvsync = true\r\n\r", 3)] {
            let err = parse(text).unwrap_err();
            let reason = err.split_once(": ").map_or("", |(_, reason)| reason);
            assert!(
                err.starts_with(&format!("settings.toml line {line}: ")) && reason.len() > 10,
                "{err:?}"
            );
        }
        let err = parse("[games.\"a (b)\"]\nlag_frames = 2\nrun_ahead = 5\n").unwrap_err();
        assert!(
            err.starts_with("settings.toml line 3: run_ahead is 0 to 4 frames (got 5)"),
            "{err}"
        );
        let err = parse("[games.\"a (b)\"]\nrun_ahead_mode = \"second-instance\"\n").unwrap_err();
        assert!(
            err.starts_with("settings.toml line 2: run_ahead_mode is \"single\" or \"preemptive\""),
            "{err}"
        );
        let long = format!("[netplay]\nname = \"{}\"\n", "x".repeat(25));
        let err = parse(&long).unwrap_err();
        assert!(
            err.starts_with("settings.toml line 2: not a name for the chat"),
            "{err}"
        );
        let err = parse("[roms.\"/r/a.md\"]\ncore = \"x\"\ndelay = \"soon\"\n").unwrap_err();
        assert!(
            err.starts_with("settings.toml line 3: the delay is"),
            "{err}"
        );
        let err = parse("[library]\nfolders = \"/roms\"\n").unwrap_err();
        assert!(err.starts_with("settings.toml line 2: "), "{err}");
    }

    #[test]
    fn a_bad_file_is_one_error_line_and_the_defaults_are_used() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(SETTINGS_FILE_NAME);
        assert_eq!(Settings::load(&file, SHADERS), (Settings::default(), None));
        std::fs::write(&file, "[video]\nvsync = maybe\n").unwrap();
        let (settings, problem) = Settings::load(&file, SHADERS);
        assert_eq!(settings, Settings::default());
        let problem = problem.unwrap();
        assert_eq!(problem.lines().count(), 1, "{problem}");
        assert!(
            problem.starts_with(&format!("error: {} line 2: ", file.display())),
            "{problem}"
        );
        assert!(
            problem.ends_with("; using the default settings"),
            "{problem}"
        );
        everything_set().save(&file).unwrap();
        assert_eq!(Settings::load(&file, SHADERS), (everything_set(), None));
    }
}
