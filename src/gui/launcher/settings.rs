//! The launcher's settings: how its sessions are shown (shader, integer
//! scale, fullscreen, vsync), kept in `settings.toml` beside `input.toml`
//! and added to the command line of every session that opens the window,
//! so they are the command line's own switches.

use crate::gui::input_map::{config_error, config_path};
use crate::gui::renderer::DisplayShader;
use crate::gui::GuiError;
use std::path::{Path, PathBuf};

/// The settings file's name, in the config directory.
pub const SETTINGS_FILE_NAME: &str = "settings.toml";

/// How sessions are shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// `--shader`.
    pub shader: DisplayShader,
    /// `--integer-scale`.
    pub integer_scale: bool,
    /// `--fullscreen`.
    pub fullscreen: bool,
    /// `--vsync`.
    pub vsync: bool,
}

#[derive(serde::Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct SettingsFile {
    video: VideoTable,
}

#[derive(serde::Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct VideoTable {
    shader: Option<toml::Spanned<String>>,
    integer_scale: bool,
    fullscreen: bool,
    vsync: bool,
}

/// Where the settings live: beside `input.toml`.
pub fn settings_path() -> Option<PathBuf> {
    config_path().map(|input| input.with_file_name(SETTINGS_FILE_NAME))
}

impl Settings {
    /// Reads the file's text; a mistake is named by `path` and its line.
    pub fn parse(text: &str, path: &Path) -> Result<Settings, GuiError> {
        let file: SettingsFile = toml::from_str(text).map_err(|err| {
            let at = err.span().map_or(0, |span| span.start);
            config_error(text, path, at, err.message().trim().to_string())
        })?;
        let video = file.video;
        let shader = match video.shader {
            None => DisplayShader::default(),
            Some(name) => name
                .get_ref()
                .parse()
                .map_err(|message: String| config_error(text, path, name.span().start, message))?,
        };
        Ok(Settings {
            shader,
            integer_scale: video.integer_scale,
            fullscreen: video.fullscreen,
            vsync: video.vsync,
        })
    }

    /// The file's text for these settings.
    pub fn to_toml(&self) -> String {
        format!(
            "# netcade's launcher: how the sessions it starts are shown.\n[video]\nshader = \"{}\"   # sharp-bilinear, nearest or crt\ninteger_scale = {}\nfullscreen = {}\nvsync = {}\n",
            self.shader, self.integer_scale, self.fullscreen, self.vsync
        )
    }

    /// The settings in `path`: the defaults when there is none, and with a
    /// mistake in it the defaults and the `error:` line to show.
    pub fn load(path: &Path) -> (Settings, Option<String>) {
        match std::fs::read_to_string(path) {
            Err(_) => (Settings::default(), None),
            Ok(text) => match Settings::parse(&text, path) {
                Ok(settings) => (settings, None),
                Err(error) => (
                    Settings::default(),
                    Some(format!("error: {error}; using the default settings")),
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
        if self.shader != DisplayShader::default() {
            args.extend(["--shader".to_string(), self.shader.to_string()]);
        }
        for (on, flag) in [
            (self.integer_scale, "--integer-scale"),
            (self.fullscreen, "--fullscreen"),
            (self.vsync, "--vsync"),
        ] {
            if on {
                args.push(flag.to_string());
            }
        }
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_survive_their_file_and_become_the_windows_switches() {
        let settings = Settings {
            shader: DisplayShader::Crt,
            integer_scale: true,
            fullscreen: false,
            vsync: true,
        };
        let parsed = Settings::parse(&settings.to_toml(), Path::new("settings.toml")).unwrap();
        assert_eq!(parsed, settings);
        assert_eq!(
            settings.window_args(),
            ["--shader", "crt", "--integer-scale", "--vsync"]
        );
        assert!(Settings::default().window_args().is_empty());
        assert_eq!(
            Settings::parse("", Path::new("s.toml")).unwrap(),
            Settings::default()
        );
    }

    #[test]
    fn a_mistake_in_the_settings_names_its_line_and_the_defaults_are_used() {
        let path = Path::new("settings.toml");
        let err =
            Settings::parse("[video]\nvsync = true\nshader = \"blurry\"\n", path).unwrap_err();
        assert!(
            err.to_string().starts_with("settings.toml line 3: "),
            "{err}"
        );
        assert!(err.to_string().contains("blurry"), "{err}");
        let err = Settings::parse("[video]\nbrightness = 3\n", path).unwrap_err();
        assert!(
            err.to_string().starts_with("settings.toml line 2: "),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.toml");
        std::fs::write(&file, "[video]\nvsync = maybe\n").unwrap();
        let (settings, problem) = Settings::load(&file);
        assert_eq!(settings, Settings::default());
        let problem = problem.unwrap();
        assert!(problem.contains("line 2"), "{problem}");
        assert!(
            problem.ends_with("; using the default settings"),
            "{problem}"
        );
    }
}
