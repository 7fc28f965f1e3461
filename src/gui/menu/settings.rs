//! The launcher's Settings screen: the input mapping with "press a key…"
//! capture (written to `input.toml`), video, the netplay defaults that
//! pre-fill the Host and Join forms, the chosen game's run-ahead with its
//! own input lag measured on demand, the library's ROM folders, and the
//! folders (those the command line takes are changeable). The settings themselves and their file are
//! [`crate::launcher::settings`]'s.

use crate::engine::sinks::run_ahead::{RunAheadMode, MAX_RUN_AHEAD};
use crate::gui::input_map::{config_path, file_button, InputMap, FILE_BUTTON_ORDER};
use crate::gui::menu::script::Targets;
use crate::gui::renderer::DisplayShader;
use crate::gui::window::Pressed;
use crate::launcher::cores::CoreSummary;
use crate::launcher::forms::{DelayChoice, GameChoice};
use crate::launcher::lag::{LagMeasurement, MeasuredLag};
use crate::launcher::settings::{check_name, settings_path, Settings};
use netcode::input::Buttons;
use std::path::PathBuf;

/// The names `--shader` takes, for the settings file.
pub fn shader_names() -> Vec<&'static str> {
    DisplayShader::ALL
        .iter()
        .map(|shader| shader.name())
        .collect()
}

/// The settings in the config directory (the defaults, with the `error:`
/// line to show, when the file has a mistake).
pub fn load_settings() -> (Settings, Option<String>) {
    settings_path()
        .map(|path| Settings::load(&path, &shader_names()))
        .unwrap_or_default()
}

/// The binding waiting for a press: a keyboard player's (0-based) or the
/// controllers' (`None`) button.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Capture {
    player: Option<usize>,
    button: Buttons,
}

/// One part of the screen's right column.
type Section = fn(&mut SettingsScreen, &mut egui::Ui, &mut Targets);

/// What the screen asks of the launcher after a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettingsOutcome {
    /// Nothing.
    Stay,
    /// The settings were saved: the forms start from them again.
    Saved,
    /// Back to the home screen.
    Back,
}

/// The Settings screen's state.
pub struct SettingsScreen {
    /// The settings being edited (in use once saved).
    pub settings: Settings,
    input: InputMap,
    capture: Option<Capture>,
    /// The keyboard player shown (0-based).
    player: usize,
    port: String,
    saves: String,
    system: String,
    message: Option<String>,
    /// The chosen game's lag being measured, in a child.
    measuring: Option<LagMeasurement>,
    /// What the last measurement found, for its game's label.
    measured: Option<(String, Result<MeasuredLag, String>)>,
    /// The ROM folder being typed.
    rom_folder: String,
    /// Add ROM folder…'s picker.
    rom_folders: egui_file_dialog::FileDialog,
    /// Whether the core options shown are the chosen game's own.
    game_options: bool,
}

/// A folder field's text: blank for none.
fn folder_text(folder: &Option<PathBuf>) -> String {
    folder
        .as_ref()
        .map_or_else(String::new, |folder| folder.display().to_string())
}

fn folder_of(text: &str) -> Option<PathBuf> {
    Some(text.trim())
        .filter(|text| !text.is_empty())
        .map(PathBuf::from)
}

fn shown(path: Option<PathBuf>) -> String {
    path.map_or_else(|| "none".to_string(), |path| path.display().to_string())
}

impl SettingsScreen {
    /// The screen over `settings`.
    pub fn new(settings: Settings) -> SettingsScreen {
        let mut screen = SettingsScreen {
            settings,
            input: InputMap::defaults(),
            capture: None,
            player: 0,
            port: String::new(),
            saves: String::new(),
            system: String::new(),
            message: None,
            measuring: None,
            measured: None,
            rom_folder: String::new(),
            rom_folders: egui_file_dialog::FileDialog::new().title("Add a ROM folder"),
            game_options: false,
        };
        screen.fields_from_settings();
        screen
    }

    fn fields_from_settings(&mut self) {
        self.port = self.settings.netplay.port.to_string();
        self.saves = folder_text(&self.settings.paths.saves);
        self.system = folder_text(&self.settings.paths.system);
    }

    /// The screen is shown: the mapping is read from its file again.
    pub fn opened(&mut self) {
        self.input = crate::gui::input_map::load_input_map();
        self.capture = None;
        self.message = None;
    }

    /// Whether the chosen game's lag is being measured.
    pub fn measuring(&self) -> bool {
        self.measuring.is_some()
    }

    /// Whether a binding waits for a press (the window then reports them).
    pub fn capturing(&self) -> bool {
        self.capture.is_some()
    }

    /// A press while capturing: bound to the button waiting. Esc cancels.
    pub fn pressed(&mut self, pressed: Pressed) {
        let Some(capture) = self.capture.take() else {
            return;
        };
        match (pressed, capture.player) {
            (Pressed::Key(sdl2::keyboard::Keycode::Escape), _) => {
                self.message = Some("not changed".to_string());
                return;
            }
            (Pressed::Key(key), Some(player)) => self.input.bind_key(player, capture.button, key),
            (Pressed::Controller(input), None) => self.input.bind_controller(capture.button, input),
            (Pressed::Key(_), None) | (Pressed::Controller(_), Some(_)) => {
                self.message =
                    Some("that is not a controller's or not a key's: not changed".into());
                return;
            }
        }
        self.message = Some("changed: Save keeps it".to_string());
    }

    /// Lays the screen out; `game` is the chosen game and what its core's
    /// probe found, once it came back; `program` is netcade itself, which
    /// measures the game's lag in a child.
    pub fn draw(
        &mut self,
        ui: &mut egui::Ui,
        targets: &mut Targets,
        game: Option<(&GameChoice, Option<&CoreSummary>)>,
        program: &std::path::Path,
    ) -> SettingsOutcome {
        let mut outcome = SettingsOutcome::Stay;
        // Save and Back first: they stay in sight however long the rest.
        ui.horizontal(|ui| {
            if targets.button(ui, "Save").clicked() && self.save() {
                outcome = SettingsOutcome::Saved;
            }
            if targets.button(ui, "Back").clicked() {
                outcome = SettingsOutcome::Back;
            }
            if let Some(message) = &self.message {
                ui.label(message);
            }
        });
        egui::ScrollArea::vertical()
            .max_height(ui.available_height())
            .show(ui, |ui| {
                ui.horizontal_top(|ui| {
                    ui.vertical(|ui| {
                        ui.heading("Input mapping");
                        self.input_mapping(ui, targets);
                    });
                    ui.separator();
                    ui.vertical(|ui| {
                        for (heading, section) in [
                            ("Netplay", Self::netplay as Section),
                            ("Video", Self::video),
                        ] {
                            ui.heading(heading);
                            section(self, ui, targets);
                            ui.separator();
                        }
                        ui.heading("Run-ahead");
                        self.run_ahead(ui, targets, game.map(|(game, _)| game), program);
                        ui.separator();
                        ui.heading("Core options");
                        self.core_options(ui, game);
                        ui.separator();
                        ui.heading("Library");
                        self.library_folders(ui, targets);
                        ui.separator();

                        ui.heading("Folders");
                        self.folders(ui, targets);
                    });
                });
            });
        outcome
    }

    fn input_mapping(&mut self, ui: &mut egui::Ui, targets: &mut Targets) {
        ui.horizontal(|ui| {
            ui.label("Keyboard of");
            for player in 0..2 {
                let label = format!("player {}", player + 1);
                if targets
                    .selectable(ui, self.player == player, &label)
                    .clicked()
                {
                    self.player = player;
                }
            }
        });
        ui.label("Click one, then press the key\nor controller input (Esc: keep it).");
        egui::Grid::new("input mapping")
            .striped(true)
            .show(ui, |ui| {
                ui.label("button");
                ui.label("keys");
                ui.label("controllers");
                ui.end_row();
                for name in FILE_BUTTON_ORDER {
                    let button = file_button(name);
                    ui.label(name);
                    for (player, device) in [(Some(self.player), "keys"), (None, "controller")] {
                        let capture = Capture { player, button };
                        let text = if self.capture == Some(capture) {
                            "press a key…".to_string()
                        } else {
                            let bound = self.input.bound_to(player, button);
                            if bound.is_empty() {
                                "-".to_string()
                            } else {
                                bound.join(" | ")
                            }
                        };
                        let target = format!("{device} {name}");
                        if targets.button_as(ui, &target, &text).clicked() {
                            self.capture = Some(capture);
                            self.message = None;
                        }
                    }
                    ui.end_row();
                }
            });
    }

    /// The library's ROM folders: added by a picker or typed, removed by
    /// a click (the library scans them when the screen is left).
    fn library_folders(&mut self, ui: &mut egui::Ui, targets: &mut Targets) {
        ui.label(
            "The games of these folders (and their subfolders) are listed on the home screen:",
        );
        let mut removed = None;
        for (index, folder) in self.settings.rom_folders.iter().enumerate() {
            ui.horizontal(|ui| {
                ui.monospace(folder.display().to_string());
                if targets
                    .button(ui, &format!("Remove {}", folder.display()))
                    .clicked()
                {
                    removed = Some(index);
                }
            });
        }
        if let Some(index) = removed {
            self.settings.rom_folders.remove(index);
        }
        let entered = targets.text_field(ui, "ROM folder", &mut self.rom_folder);
        ui.horizontal(|ui| {
            if targets.button(ui, "Add folder").clicked() || entered {
                if let Some(folder) = folder_of(&self.rom_folder) {
                    self.add_rom_folder(folder);
                    self.rom_folder.clear();
                }
            }
            if targets.button(ui, "Add ROM folder…").clicked() {
                self.rom_folders.pick_directory();
            }
        });
        self.rom_folders.update(ui.ctx());
        if let Some(folder) = self.rom_folders.take_picked() {
            self.add_rom_folder(folder);
        }
    }

    fn add_rom_folder(&mut self, folder: PathBuf) {
        if !folder.is_dir() {
            self.message = Some(format!("error: {} is not a folder", folder.display()));
        } else if !self.settings.rom_folders.contains(&folder) {
            self.settings.rom_folders.push(folder);
            self.message = Some("folder added: Save keeps it".to_string());
        }
    }

    /// The chosen core's options, grouped by its categories, each with its
    /// help text; a value other than the default is kept for that core, or
    /// for the chosen game only.
    fn core_options(
        &mut self,
        ui: &mut egui::Ui,
        game: Option<(&GameChoice, Option<&CoreSummary>)>,
    ) {
        let Some((game, summary)) = game else {
            ui.label("Choose a game: its core's options show here.");
            return;
        };
        let core = game.core.as_str();
        let Some(summary) = summary else {
            ui.label(format!("looking at {core}…"));
            return;
        };
        ui.label(format!("{} {}:", summary.name, summary.version));
        let rom = game.rom.clone();
        ui.horizontal(|ui| {
            ui.radio_value(&mut self.game_options, false, "for every game it plays");
            if let Some(rom) = &rom {
                let name = crate::launcher::library::game_name(rom);
                ui.radio_value(&mut self.game_options, true, format!("for {name} only"));
            }
        });
        if summary.options.is_empty() {
            ui.label("it has none.");
        }
        let mut own = self.settings.rom(game);
        let per_game = self.game_options && rom.is_some();
        let chosen = if per_game {
            &mut own.options
        } else {
            self.settings
                .core_options
                .entry(core.to_string())
                .or_default()
        };
        for (name, info, options) in libretro_host::grouped(&summary.options, &summary.categories) {
            egui::CollapsingHeader::new(name).show(ui, |ui| {
                if !info.is_empty() {
                    ui.weak(info);
                }
                for option in options {
                    let mut value = chosen
                        .get(&option.key)
                        .cloned()
                        .unwrap_or_else(|| option.default.clone());
                    egui::ComboBox::new(&option.key, &option.description)
                        .selected_text(&value)
                        .show_ui(ui, |ui| {
                            for choice in &option.values {
                                ui.selectable_value(&mut value, choice.clone(), choice);
                            }
                        });
                    if !option.info.is_empty() {
                        ui.weak(&option.info);
                    }
                    if value == option.default {
                        chosen.remove(&option.key);
                    } else {
                        chosen.insert(option.key.clone(), value);
                    }
                }
            });
        }
        if per_game {
            if let Some(rom) = &rom {
                self.settings.set_rom(rom, own);
            }
        } else if chosen.is_empty() {
            self.settings.core_options.remove(core);
        }
    }

    /// The chosen game's run-ahead, and its own input lag: measured on a
    /// click by `netcade latency` in a child, with the core options as
    /// they stand, and the run-ahead that hides it offered.
    fn run_ahead(
        &mut self,
        ui: &mut egui::Ui,
        targets: &mut Targets,
        game: Option<&GameChoice>,
        program: &std::path::Path,
    ) {
        let Some(game) = game else {
            ui.label("Choose a game: its run-ahead shows here.");
            return;
        };
        let label = game.label();
        if let Some(answer) = self.measuring.as_ref().and_then(LagMeasurement::poll) {
            let measured_label = self
                .measuring
                .take()
                .map(|measuring| measuring.game().label())
                .unwrap_or_default();
            if let Ok(lag) = &answer {
                let mut kept = self.settings.game(game);
                kept.lag_frames = lag.lag_frames;
                if measured_label == label {
                    self.settings.set_game(game, kept);
                }
            }
            self.measured = Some((measured_label, answer));
        }
        let mut kept = self.settings.game(game);
        ui.label(format!("{label}, in Play, Host and Join:"));
        let measuring = self.measuring.is_some();
        let found = self
            .measured
            .as_ref()
            .filter(|(of, _)| *of == label)
            .map(|(_, answer)| answer);
        let said = match (measuring, found, kept.lag_frames) {
            (true, _, _) => "measuring its own input lag…".to_string(),
            (false, Some(Err(error)), _) => error.clone(),
            (
                false,
                Some(Ok(MeasuredLag {
                    lag_frames: None, ..
                })),
                _,
            ) => "no button changed its picture within 30 frames".to_string(),
            (false, _, Some(lag)) => format!("its own input lag: {lag} frames (measured)"),
            (false, _, None) => "its own input lag: not measured".to_string(),
        };
        ui.label(said);
        if measuring {
            // The answer comes from a worker: look again soon.
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(100));
        }
        ui.horizontal(|ui| {
            let measure = ui.add_enabled_ui(!measuring, |ui| targets.button(ui, "Measure lag"));
            if measure.inner.clicked() {
                let args = self.settings.play_args(game);
                self.measuring = Some(LagMeasurement::start(program.to_path_buf(), game, args));
            }
            let suggested = found
                .and_then(|answer| answer.as_ref().ok())
                .and_then(|lag| lag.suggested_run_ahead)
                .or(kept
                    .lag_frames
                    .map(|lag| lag.min(u32::from(MAX_RUN_AHEAD)) as u8));
            if let Some(suggested) = suggested.filter(|ahead| *ahead != kept.run_ahead.ahead) {
                let text = format!("Use run-ahead {suggested}");
                if targets.button_as(ui, "Use suggested", &text).clicked() {
                    kept.run_ahead.ahead = suggested;
                }
            }
        });
        ui.horizontal(|ui| {
            ui.label("run-ahead");
            for ahead in 0..=MAX_RUN_AHEAD {
                let text = match ahead {
                    0 => "off".to_string(),
                    _ => ahead.to_string(),
                };
                if targets
                    .selectable(ui, kept.run_ahead.ahead == ahead, &text)
                    .clicked()
                {
                    kept.run_ahead.ahead = ahead;
                }
            }
        });
        ui.horizontal(|ui| {
            ui.label("mode");
            for (mode, text) in [
                (RunAheadMode::Single, "single"),
                (RunAheadMode::Preemptive, "preemptive"),
            ] {
                if targets
                    .selectable(ui, kept.run_ahead.ahead_mode == mode, text)
                    .clicked()
                {
                    kept.run_ahead.ahead_mode = mode;
                }
            }
        });
        ui.weak(
            "Shows each frame as the game draws it that many frames later, hiding that much \
             of its own lag. More than its lag shows frames before the press; older games \
             may break above 1 or 2. Preemptive runs one frame ahead while the buttons stay \
             the same.",
        );
        self.settings.set_game(game, kept);
    }

    fn video(&mut self, ui: &mut egui::Ui, _targets: &mut Targets) {
        let video = &mut self.settings.video;
        let mut shader: DisplayShader = video
            .shader
            .as_deref()
            .and_then(|name| name.parse().ok())
            .unwrap_or_default();
        egui::ComboBox::from_label("shader")
            .selected_text(shader.to_string())
            .show_ui(ui, |ui| {
                for choice in DisplayShader::ALL {
                    ui.selectable_value(&mut shader, choice, choice.to_string());
                }
            });
        video.shader = (shader != DisplayShader::default()).then(|| shader.name().to_string());
        ui.checkbox(&mut video.integer_scale, "integer scale");
        ui.checkbox(&mut video.fullscreen, "fullscreen");
        ui.checkbox(&mut video.vsync, "vsync");
    }

    fn netplay(&mut self, ui: &mut egui::Ui, targets: &mut Targets) {
        ui.label("What the Host and Join forms start with:");
        targets.text_field(ui, "Name", &mut self.settings.netplay.name);
        targets.text_field(ui, "Default port", &mut self.port);
        delay_picker(ui, "default delay", &mut self.settings.netplay.delay);
        ui.checkbox(
            &mut self.settings.netplay.port_mapping,
            "ask the router to forward the port (PCP, UPnP)",
        );
    }

    fn folders(&mut self, ui: &mut egui::Ui, targets: &mut Targets) {
        ui.label("Blank: the folder in netcade's data directory.");
        targets.text_field(ui, "Saves folder", &mut self.saves);
        targets.text_field(ui, "System files folder", &mut self.system);
        let data = crate::paths::data_dir();
        ui.label(format!("data: {}", shown(data)));
        ui.label(format!(
            "replays: {} (${})",
            shown(crate::engine::sinks::recorder::replays_folder()),
            crate::engine::sinks::recorder::REPLAY_DIR_ENV
        ));
        ui.label(format!(
            "cores: {}",
            crate::paths::data_subdir("cores").display()
        ));
        ui.label(format!("settings: {}", shown(settings_path())));
        ui.label(format!("input mapping: {}", shown(config_path())));
    }

    /// Writes `settings.toml` and `input.toml`; whether both were written.
    fn save(&mut self) -> bool {
        let Ok(port) = self.port.trim().parse::<u16>() else {
            self.message = Some(format!(
                "error: the default port is a number from 0 to 65535 (got {:?})",
                self.port
            ));
            return false;
        };
        if let Err(problem) = check_name(&self.settings.netplay.name) {
            self.message = Some(format!("error: {problem}"));
            return false;
        }
        self.settings.netplay.port = port;
        self.settings.paths.saves = folder_of(&self.saves);
        self.settings.paths.system = folder_of(&self.system);
        let (Some(settings), Some(input)) = (settings_path(), config_path()) else {
            self.message = Some("error: no config directory to save in".to_string());
            return false;
        };
        let written = self
            .settings
            .save(&settings)
            .map_err(|error| (settings, error))
            .and_then(|()| {
                std::fs::write(&input, self.input.to_toml()).map_err(|error| (input, error))
            });
        self.message = Some(match &written {
            Ok(()) => "saved".to_string(),
            Err((path, error)) => format!("error: cannot write {}: {error}", path.display()),
        });
        written.is_ok()
    }
}

/// The local input delay: auto, or a fixed 0–4 frames.
pub(super) fn delay_picker(ui: &mut egui::Ui, id: &str, delay: &mut DelayChoice) {
    let text = |delay: DelayChoice| match delay {
        DelayChoice::Auto => "auto (follows the network)".to_string(),
        DelayChoice::Fixed(frames) => format!("{frames} frames"),
    };
    egui::ComboBox::new(id, "input delay")
        .selected_text(text(*delay))
        .show_ui(ui, |ui| {
            for choice in std::iter::once(DelayChoice::Auto).chain((0..=4).map(DelayChoice::Fixed))
            {
                ui.selectable_value(delay, choice, text(choice));
            }
        });
}
