//! The launcher's screens: the home screen (the game, recent games, the
//! session buttons), the Host, Join and Spectate forms, and a session's
//! result. Every widget a script may click is named by its label
//! ([`Targets`]).

use crate::engine::sinks::recorder::replays_folder;
use crate::gui::menu::library::LibraryView;
use crate::gui::menu::script::Targets;
use crate::gui::menu::settings::{delay_picker, load_settings, SettingsOutcome, SettingsScreen};
use crate::gui::window::Pressed;
use crate::launcher::cores::{find_cores, install_core, is_core_file, Catalogue};
use crate::launcher::forms::{shell_words, GameChoice, HostForm, JoinForm, JoinWay, Session};
use crate::launcher::library::known_fixes;
use crate::launcher::recent;
use crate::launcher::rejoins::{rejoin_offers_kept, RejoinOffer};
use crate::launcher::replays::{
    chosen_or_newest, list_replays, matching, HeaderReader, ReplayAction, ReplayFile,
};
use crate::launcher::results::ResultSummary;
use crate::launcher::SessionEnd;
use egui_file_dialog::FileDialog;

/// Which screen shows.
enum Screen {
    Home,
    Host,
    Join,
    Spectate,
    Replays,
    Settings,
    #[cfg(feature = "broadcast")]
    Lobby,
    Result(SessionEnd),
}

/// The scheme of a RetroArch host's address.
const RETROARCH_SCHEME: &str = crate::live::retroarch::SCHEME;

/// The Host form's choice of `host --retroarch`.
pub(super) const RETROARCH_PLAYERS: &str =
    "RetroArch players can join (RetroArch's netplay protocol)";

/// Below the Join and Spectate forms' address field.
const RETROARCH_ADDRESS_HINT: &str =
    "A RetroArch host: retroarch://HOST[:PORT] (its port is 55435 unless given).";

/// The Replays screen's state.
struct ReplaysBrowser {
    listed: Vec<ReplayFile>,
    filter: String,
    chosen: Option<std::path::PathBuf>,
    speed: f32,
    /// Their headers, read on a worker since the screen opened.
    headers: Option<HeaderReader>,
}

/// The text of the Host form's number fields, checked when it starts.
struct HostFields {
    port: String,
    /// The addresses to give for the port typed: (that port, them).
    addresses: (String, Vec<String>),
    frames: String,
    form: HostForm,
}

/// The launcher's state between frames.
pub struct Launcher {
    screen: Screen,
    game: Option<GameChoice>,
    recent: Vec<GameChoice>,
    cores: Catalogue,
    players: u8,
    host: HostFields,
    join: JoinForm,
    spectate_address: String,
    /// Addresses joined or watched lately, newest first.
    addresses: Vec<String>,
    /// The matches this machine may rejoin.
    rejoins: Vec<RejoinOffer>,
    replays: ReplaysBrowser,
    settings: SettingsScreen,
    #[cfg(feature = "broadcast")]
    lobby: crate::gui::menu::lobby::LobbyScreen,
    problem: Option<String>,
    /// What the chosen game's known option fixes do, to show.
    fix_note: Option<String>,
    files: FileDialog,
    /// Add core…'s picker, of libretro cores only.
    core_files: FileDialog,
    library: LibraryView,
    /// The game and session started, noted as played once it ran.
    started: Option<(GameChoice, Session)>,
    targets: Targets,
    session: Option<Vec<String>>,
    quit: bool,
}

impl Launcher {
    /// The home screen, with `game` chosen if given (else the newest of
    /// the recent games).
    pub fn new(game: Option<GameChoice>) -> Launcher {
        Launcher::with_cores(game, find_cores())
    }

    /// [`Launcher::new`] offering `cores` (probed in child processes).
    pub fn with_cores(game: Option<GameChoice>, cores: Vec<String>) -> Launcher {
        let recent = recent::load(&recent::recent_games_path());
        let (settings, problem) = load_settings();
        if let Some(problem) = &problem {
            eprintln!("{problem}");
        }
        let game = game.or_else(|| recent.first().cloned());
        let rejoins = rejoin_offers_kept(&recent);
        Launcher {
            screen: Screen::Home,
            game,
            recent,
            cores: Catalogue::probe(netcade_program(), cores),
            players: 1,
            host: HostFields {
                port: settings.netplay.port.to_string(),
                addresses: (String::new(), Vec::new()),
                frames: String::new(),
                form: settings.netplay.host_form(),
            },
            join: settings.netplay.join_form(),
            spectate_address: String::new(),
            addresses: recent::load_addresses(&recent::recent_addresses_path()),
            rejoins,
            replays: ReplaysBrowser {
                listed: Vec::new(),
                filter: String::new(),
                chosen: None,
                speed: 1.0,
                headers: None,
            },
            library: LibraryView::new(&settings.rom_folders),
            #[cfg(feature = "broadcast")]
            lobby: crate::gui::menu::lobby::LobbyScreen::new(
                &settings.netplay.lobby,
                &settings.netplay.name,
            ),
            settings: SettingsScreen::new(settings),
            problem,
            fix_note: None,
            files: FileDialog::new().title("Choose the game's content"),
            core_files: FileDialog::new()
                .title("Add a libretro core")
                .add_file_filter("libretro cores", std::sync::Arc::new(is_core_file))
                .default_file_filter("libretro cores"),
            started: None,
            targets: Targets::default(),
            session: None,
            quit: false,
        }
    }

    /// Where the widgets drawn last were.
    pub fn targets(&self) -> &Targets {
        &self.targets
    }

    /// The command line of the session the player started, once.
    pub fn take_session(&mut self) -> Option<Vec<String>> {
        self.session.take()
    }

    /// Whether work runs in the background whose answer the screen will
    /// show (core probes, replay headers, a lag measurement).
    pub fn busy(&self) -> bool {
        #[cfg(feature = "broadcast")]
        if self.lobby.busy() {
            return true;
        }
        self.cores.probing()
            || self.library.scanning()
            || self.settings.measuring()
            || self
                .replays
                .headers
                .as_ref()
                .is_some_and(HeaderReader::reading)
    }

    /// Whether the library's scan is under way.
    pub fn library_scanning(&self) -> bool {
        self.library.scanning()
    }

    /// Whether the player chose Quit.
    pub fn wants_to_quit(&self) -> bool {
        self.quit
    }

    /// Shows how a session ended; a game that was played is noted in the
    /// recent games and remembered with its core, options and delay.
    pub fn session_ended(&mut self, end: SessionEnd) {
        let started = self.started.take();
        if let Some((game, session)) = started.as_ref().filter(|_| end.played()) {
            self.note_played(game, session);
        }
        // A match may have left a ticket, or been rejoined.
        self.rejoins = rejoin_offers_kept(&self.recent);
        let from_the_lobby = matches!(started, Some((_, Session::Lobby { .. })));
        self.screen = match end.join_cancelled() {
            #[cfg(feature = "broadcast")]
            true if from_the_lobby => {
                // Nobody was met: back among the others.
                self.lobby.resume(self.game.as_ref());
                Screen::Lobby
            }
            true if !from_the_lobby => Screen::Join,
            _ => Screen::Result(end),
        };
    }

    /// Whether the Settings screen waits for a key or controller press.
    pub fn capturing(&self) -> bool {
        matches!(self.screen, Screen::Settings) && self.settings.capturing()
    }

    /// A press the Settings screen waited for.
    pub fn pressed(&mut self, pressed: Pressed) {
        self.settings.pressed(pressed);
    }

    /// Esc: back to the home screen.
    pub fn back(&mut self) {
        #[cfg(feature = "broadcast")]
        self.lobby.close();
        self.screen = Screen::Home;
        self.problem = None;
    }

    /// Lays out this frame's screen.
    pub fn draw(&mut self, context: &egui::Context) {
        self.targets.clear(context.pixels_per_point());
        self.library.update();
        egui::CentralPanel::default().show(context, |ui| {
            ui.heading("netcade");
            ui.separator();
            match &self.screen {
                Screen::Home => self.home(ui),
                Screen::Host => self.host_form(ui),
                Screen::Join => self.join_form(ui),
                Screen::Spectate => self.spectate_form(ui),
                Screen::Replays => self.replays_screen(ui),
                Screen::Settings => self.settings_screen(ui),
                #[cfg(feature = "broadcast")]
                Screen::Lobby => self.lobby_screen(ui),
                Screen::Result(_) => self.result(ui),
            }
        });
        self.files.update(context);
        if let Some(content) = self.files.take_picked() {
            self.content_chosen(content);
        }
        self.core_files.update(context);
        if let Some(core) = self.core_files.take_picked() {
            self.core_picked(&core);
        }
    }

    /// Content picked: kept with the core it was played with, else the
    /// core chosen if it takes it, else the core found that plays it best
    /// (Duel when none does).
    fn content_chosen(&mut self, content: std::path::PathBuf) {
        let offered = self.cores.offered(Some(&content));
        let current = self.game.as_ref().map(|game| game.core.clone());
        let size = std::fs::metadata(&content).map_or(0, |metadata| metadata.len());
        let remembered = self.settings.settings.rom(&GameChoice {
            core: String::new(),
            rom: Some(content.clone()),
        });
        let core = remembered
            .core
            .or_else(|| current.filter(|core| offered.iter().any(|(known, _)| known == core)))
            .or_else(|| self.cores.core_for(&content, size).map(str::to_string))
            .unwrap_or_else(|| "duel".to_string());
        self.choose_game(GameChoice {
            core,
            rom: Some(content),
        });
    }

    /// `game` chosen: the forms take the delay it was played with, and a
    /// game never played gets its core's known option fixes, said.
    fn choose_game(&mut self, game: GameChoice) {
        let settings = &mut self.settings.settings;
        let mut kept = settings.rom(&game);
        if let Some(delay) = kept.delay {
            self.host.form.delay = delay;
            self.join.delay = delay;
        }
        self.fix_note = None;
        let fixes = known_fixes(&game.core);
        if let (Some(rom), true) = (&game.rom, kept.options.is_empty() && !fixes.is_empty()) {
            let mut notes = Vec::new();
            for fix in fixes {
                kept.options
                    .insert(fix.key.to_string(), fix.value.to_string());
                notes.push(format!("{}={}: {}", fix.key, fix.value, fix.note));
            }
            settings.set_rom(rom, kept);
            self.fix_note = Some(format!("Set for this game: {}", notes.join("; ")));
        }
        self.game = Some(game);
    }

    /// A core picked with Add core…: installed in the data folder, and the
    /// cores found again.
    fn core_picked(&mut self, core: &std::path::Path) {
        match install_core(core) {
            Ok(installed) => {
                self.rescan_cores();
                self.problem = None;
                self.fix_note = Some(format!("installed {}", installed.display()));
            }
            Err(problem) => self.problem = Some(problem),
        }
    }

    /// Finds the cores again (one installed or removed by hand) and probes
    /// them.
    fn rescan_cores(&mut self) {
        self.cores = Catalogue::probe(netcade_program(), find_cores());
    }

    fn home(&mut self, ui: &mut egui::Ui) {
        self.cores.update();
        let label = self.game.as_ref().map_or_else(
            || "no game chosen".to_string(),
            |game| {
                let core = self.cores.label(&game.core);
                match &game.rom {
                    Some(rom) => format!("{} with {core}", rom.display()),
                    None => core,
                }
            },
        );
        ui.label(format!("Game: {label}"));
        self.missing_bios(ui);
        if let Some(note) = &self.fix_note {
            ui.weak(note);
        }
        ui.horizontal(|ui| {
            if self.targets.button(ui, "Choose content…").clicked() {
                self.files.pick_file();
            }
            self.core_picker(ui);
            if self.targets.button(ui, "Add core…").clicked() {
                self.core_files.pick_file();
            }
            if self.targets.button(ui, "Rescan").clicked() {
                self.rescan_cores();
                self.library.rescan(&self.settings.settings.rom_folders);
            }
        });
        self.core_failures(ui);
        let clicked = self.library.draw(
            ui,
            &mut self.targets,
            &self.cores,
            &self.settings.settings,
            self.game.as_ref(),
        );
        match clicked {
            Some(Ok(game)) => {
                self.problem = None;
                self.choose_game(game);
            }
            Some(Err(problem)) => self.problem = Some(problem),
            None => {}
        }
        if !self.recent.is_empty() {
            ui.label("Recent games:");
            let mut chosen = None;
            for game in &self.recent {
                if self.targets.button(ui, &game.label()).clicked() {
                    chosen = Some(game.clone());
                }
            }
            if let Some(game) = chosen {
                self.choose_game(game);
            }
        }
        let rejoin = super::rejoin::rejoin_buttons(ui, &mut self.targets, &self.rejoins);
        if let Some(offer) = rejoin {
            self.game = offer.game.or(self.game.take());
            self.start(offer.session);
        }
        ui.separator();
        ui.horizontal(|ui| {
            ui.add(egui::Slider::new(&mut self.players, 1..=2).text("players at this keyboard"));
            if self.targets.button(ui, "Play").clicked() {
                self.start(Session::Play {
                    players: self.players,
                });
            }
        });
        ui.horizontal(|ui| {
            for (label, screen) in [
                ("Host", Screen::Host),
                ("Join", Screen::Join),
                ("Spectate", Screen::Spectate),
            ] {
                if self.targets.button(ui, label).clicked() {
                    self.screen = screen;
                }
            }
            #[cfg(feature = "broadcast")]
            if self.targets.button(ui, "Lobby").clicked() {
                self.screen = Screen::Lobby;
            }
            if self.targets.button(ui, "Replays").clicked() {
                self.replays.listed = replays_folder()
                    .map(|folder| list_replays(&folder))
                    .unwrap_or_default();
                self.replays.headers = Some(HeaderReader::start(&self.replays.listed));
                self.screen = Screen::Replays;
            }
            if self.targets.button(ui, "Settings").clicked() {
                self.settings.opened();
                self.screen = Screen::Settings;
            }
            if self.targets.button(ui, "Quit").clicked() {
                self.quit = true;
            }
        });
        self.show_problem(ui);
    }

    fn core_picker(&mut self, ui: &mut egui::Ui) {
        let mut chosen = None;
        let rom = self.game.as_ref().and_then(|game| game.rom.clone());
        let current = self
            .game
            .as_ref()
            .map_or("duel", |game| game.core.as_str())
            .to_string();
        egui::ComboBox::from_label("core")
            .selected_text(self.cores.label(&current))
            .show_ui(ui, |ui| {
                for (core, label) in self.cores.offered(rom.as_deref()) {
                    if ui.selectable_label(core == current, label).clicked() {
                        chosen = Some(GameChoice {
                            core,
                            rom: rom.clone(),
                        });
                    }
                }
            });
        if let Some(game) = chosen {
            self.choose_game(game);
        }
        if self.cores.probing() {
            ui.label("looking at the cores found…");
        }
    }

    /// The BIOS files the chosen game's core needs that the system folder
    /// lacks, each named.
    fn missing_bios(&self, ui: &mut egui::Ui) {
        let Some(game) = &self.game else {
            return;
        };
        let Some(info) = self.cores.info(&game.core) else {
            return;
        };
        let system = self
            .settings
            .settings
            .paths
            .system
            .clone()
            .unwrap_or_else(|| crate::paths::core_config().system_dir);
        for firmware in info.missing_firmware(&system, std::path::Path::exists) {
            ui.colored_label(
                egui::Color32::LIGHT_RED,
                format!(
                    "missing BIOS: {} ({}) in {}",
                    firmware.path,
                    firmware.description,
                    system.display()
                ),
            );
        }
    }

    /// The cores that could not be loaded, each with its error.
    fn core_failures(&self, ui: &mut egui::Ui) {
        for failure in self.cores.failures() {
            ui.colored_label(egui::Color32::LIGHT_RED, failure);
        }
    }

    fn host_form(&mut self, ui: &mut egui::Ui) {
        ui.label("Host a match: your opponent joins at one of these addresses.");
        let scheme = if self.host.form.retroarch {
            RETROARCH_SCHEME
        } else {
            ""
        };
        let asked = format!("{scheme}{}", self.host.port);
        if self.host.addresses.0 != asked {
            let addresses = crate::gui::menu::addresses::addresses_to_give(&self.host.port);
            let addresses = addresses.iter().map(|a| format!("{scheme}{a}")).collect();
            self.host.addresses = (asked, addresses);
        }
        for address in self.host.addresses.1.clone() {
            ui.horizontal(|ui| {
                ui.monospace(&address);
                if self
                    .targets
                    .button(ui, &format!("Copy {address}"))
                    .clicked()
                {
                    ui.ctx().copy_text(address.clone());
                }
            });
        }
        self.targets.text_field(ui, "Port", &mut self.host.port);
        self.targets.text_field(
            ui,
            "Frames (blank: play until someone leaves)",
            &mut self.host.frames,
        );
        delay_picker(ui, "host delay", &mut self.host.form.delay);
        ui.checkbox(&mut self.host.form.record, "record a replay");
        if self
            .targets
            .checkbox(
                ui,
                &mut self.host.form.room,
                "Open a room: the other player types its code instead of an address",
            )
            .changed()
            && self.host.form.room
        {
            self.host.form.retroarch = false;
        }
        if self
            .targets
            .checkbox(ui, &mut self.host.form.retroarch, RETROARCH_PLAYERS)
            .changed()
            && self.host.form.retroarch
        {
            self.host.form.room = false;
        }
        if self.host.form.retroarch {
            self.targets.line(
                ui,
                "RetroArch players choose Netplay, Connect to Netplay Host, and give this \
                 machine's address and the port; netcade players join at retroarch://ADDRESS:PORT.",
            );
        }
        let form = self.host_session();
        self.form_buttons(ui, "Host the match", form);
    }

    fn host_session(&self) -> Result<Session, String> {
        let port = self.host.port.trim().parse::<u16>().map_err(|_| {
            format!(
                "the port is a number from 0 to 65535 (got {:?})",
                self.host.port
            )
        })?;
        let frames = match self.host.frames.trim() {
            "" => None,
            text => Some(
                text.parse::<u32>()
                    .ok()
                    .filter(|frames| *frames > 0)
                    .ok_or_else(|| {
                        format!("frames is a number of frames above 0, or blank (got {text:?})")
                    })?,
            ),
        };
        Ok(Session::Host(HostForm {
            port,
            frames,
            ..self.host.form.clone()
        }))
    }

    fn join_form(&mut self, ui: &mut egui::Ui) {
        self.targets
            .line(ui, "Join a match: the address the host gave you.");
        ui.horizontal(|ui| {
            for (label, way) in [
                ("By address", JoinWay::Address),
                ("By room code", JoinWay::Room),
                ("Quick match", JoinWay::Quick),
            ] {
                if self
                    .targets
                    .selectable(ui, self.join.way == way, label)
                    .clicked()
                {
                    self.join.way = way;
                }
            }
        });
        let entered = match self.join.way {
            JoinWay::Address => {
                let entered =
                    self.targets
                        .text_field(ui, "Address (HOST:PORT)", &mut self.join.address);
                self.targets.line(ui, RETROARCH_ADDRESS_HINT);
                self.address_history(ui, Screen::Join);
                entered
            }
            JoinWay::Room => self
                .targets
                .text_field(ui, "Room code", &mut self.join.room_code),
            JoinWay::Quick => {
                self.targets.line(
                    ui,
                    "Paired with the next player who asks for a quick match of this game.",
                );
                false
            }
        };
        delay_picker(ui, "join delay", &mut self.join.delay);
        ui.checkbox(&mut self.join.record, "record a replay");
        let form = Ok(Session::Join(self.join.clone()));
        if entered {
            self.start_checked(form.clone());
        }
        self.form_buttons(ui, "Join the match", form);
    }

    fn spectate_form(&mut self, ui: &mut egui::Ui) {
        ui.label("Watch a match live: the host's address.");
        let entered =
            self.targets
                .text_field(ui, "Address (HOST:PORT)", &mut self.spectate_address);
        self.targets.line(ui, RETROARCH_ADDRESS_HINT);
        self.address_history(ui, Screen::Spectate);
        let form = Ok(Session::Spectate {
            address: self.spectate_address.clone(),
        });
        if entered {
            self.start_checked(form.clone());
        }
        self.form_buttons(ui, "Watch the match", form);
    }

    /// The addresses used lately: a click puts one in the form's field.
    fn address_history(&mut self, ui: &mut egui::Ui, form: Screen) {
        if self.addresses.is_empty() {
            return;
        }
        ui.horizontal_wrapped(|ui| {
            ui.label("Lately:");
            for address in self.addresses.clone() {
                if self.targets.button(ui, &address).clicked() {
                    match form {
                        Screen::Spectate => self.spectate_address = address,
                        _ => self.join.address = address,
                    }
                }
            }
        });
    }

    /// The equivalent command line, the start button and Back.
    fn form_buttons(&mut self, ui: &mut egui::Ui, start: &str, form: Result<Session, String>) {
        if let (Ok(session), Some(game)) = (&form, &self.game) {
            ui.label("The same from a terminal:");
            ui.monospace(shell_words("netcade", &self.session_line(session, game)));
        }
        ui.horizontal(|ui| {
            if self.targets.button(ui, start).clicked() {
                self.start_checked(form);
            }
            if self.targets.button(ui, "Back").clicked() {
                self.back();
            }
        });
        self.show_problem(ui);
    }

    fn replays_screen(&mut self, ui: &mut egui::Ui) {
        ui.label("Replays, newest first:");
        self.targets
            .text_field(ui, "Filter", &mut self.replays.filter);
        if let Some(headers) = &mut self.replays.headers {
            headers.update();
        }
        let chosen = chosen_or_newest(
            &self.replays.listed,
            &self.replays.filter,
            self.replays.chosen.as_deref(),
        );
        egui::ScrollArea::vertical()
            .max_height(300.0)
            .show(ui, |ui| {
                for replay in matching(&self.replays.listed, &self.replays.filter) {
                    let is_chosen = chosen.as_ref() == Some(&replay.path);
                    ui.horizontal(|ui| {
                        if self
                            .targets
                            .selectable(ui, is_chosen, &replay.name())
                            .clicked()
                        {
                            self.replays.chosen = Some(replay.path.clone());
                        }
                        let age = replay.modified.elapsed().map_or(0, |age| age.as_secs());
                        ui.weak(crate::engine::report::time_ago(age));
                        let header = self.replays.headers.as_ref();
                        match header.and_then(|headers| headers.line(&replay.path)) {
                            Some(Ok(line)) => ui.weak(line),
                            Some(Err(error)) => ui.colored_label(egui::Color32::LIGHT_RED, error),
                            None => ui.weak("…"),
                        };
                    });
                }
            });
        ui.add(egui::Slider::new(&mut self.replays.speed, 0.25..=8.0).text("speed"));
        ui.horizontal(|ui| {
            let speed = self.replays.speed;
            let actions = [
                ("Play the replay", ReplayAction::Play { speed }),
                ("Info", ReplayAction::Info),
                ("Verify", ReplayAction::Verify),
            ];
            for (label, action) in actions {
                if self.targets.button(ui, label).clicked() {
                    match &chosen {
                        Some(path) => {
                            let mut line = action.command_line(path);
                            if let ReplayAction::Play { .. } = action {
                                line.extend(self.settings.settings.window_args());
                            }
                            self.session = Some(line);
                        }
                        None => self.problem = Some("error: no replay to choose".to_string()),
                    }
                }
            }
            if self.targets.button(ui, "Open folder").clicked() {
                self.problem = replays_folder().and_then(|folder| open_folder(&folder).err());
            }
            if self.targets.button(ui, "Back").clicked() {
                self.back();
            }
        });
        self.show_problem(ui);
    }

    /// The command line of `session` of `game`, with the window switches
    /// of the settings.
    fn session_line(&self, session: &Session, game: &GameChoice) -> Vec<String> {
        let settings = &self.settings.settings;
        let mut line = session.command_line(game);
        line.extend(settings.session_args(session, game));
        line.extend(settings.window_args());
        line
    }

    #[cfg(feature = "broadcast")]
    fn lobby_screen(&mut self, ui: &mut egui::Ui) {
        use crate::gui::menu::lobby::LobbyOutcome;
        match self.lobby.draw(ui, &mut self.targets, self.game.as_ref()) {
            LobbyOutcome::Stay => {}
            LobbyOutcome::Back => self.back(),
            LobbyOutcome::Entered { server, name } => self.remember_lobby(server, name),
            LobbyOutcome::Start(session) => self.start(session),
        }
    }

    /// The lobby's server and the name entered with, kept in the settings
    /// (written as the file is on disk, as [`Launcher::note_played`] does).
    #[cfg(feature = "broadcast")]
    fn remember_lobby(&mut self, server: String, name: String) {
        let netplay = &mut self.settings.settings.netplay;
        netplay.lobby = server.clone();
        netplay.name = name.clone();
        let (mut on_disk, problem) = load_settings();
        let Some(path) = crate::launcher::settings::settings_path().filter(|_| problem.is_none())
        else {
            return;
        };
        on_disk.netplay.lobby = server;
        on_disk.netplay.name = name;
        if let Err(error) = on_disk.save(&path) {
            tracing::warn!("cannot write {}: {error}", path.display());
        }
    }

    fn settings_screen(&mut self, ui: &mut egui::Ui) {
        self.cores.update();
        let game = self
            .game
            .as_ref()
            .map(|game| (game, self.cores.summary(&game.core)));
        match self
            .settings
            .draw(ui, &mut self.targets, game, &netcade_program())
        {
            SettingsOutcome::Stay => {}
            SettingsOutcome::Back => {
                self.library.follow(&self.settings.settings.rom_folders);
                self.back();
            }
            SettingsOutcome::Saved => {
                // The forms start from the defaults just saved.
                let netplay = &self.settings.settings.netplay;
                self.host.port = netplay.port.to_string();
                self.host.form = netplay.host_form();
                self.join.delay = netplay.delay;
                self.library.follow(&self.settings.settings.rom_folders);
            }
        }
    }

    /// How the session ended, in a sentence and its facts; its replay
    /// (Play, Show in folder); Rematch; everything it printed, folded.
    fn result(&mut self, ui: &mut egui::Ui) {
        let Screen::Result(end) = &self.screen else {
            return;
        };
        let summary = ResultSummary::of(end);
        let targets = &mut self.targets;
        targets.heading(ui, &summary.headline);
        for fact in &summary.facts {
            targets.line(ui, fact);
        }
        let mut next = None;
        if let Some(replay) = &summary.replay {
            ui.add_space(8.0);
            targets.line(ui, &format!("Replay: {}", replay.display()));
            ui.horizontal(|ui| {
                if targets.button(ui, "Play the replay").clicked() {
                    let mut line = ReplayAction::Play { speed: 1.0 }.command_line(replay);
                    line.extend(self.settings.settings.window_args());
                    next = Some(line);
                }
                if targets.button(ui, "Show in folder").clicked() {
                    let folder = replay.parent().unwrap_or(std::path::Path::new("."));
                    self.problem = open_folder(folder).err();
                }
            });
        }
        ui.add_space(8.0);
        let mut back = false;
        ui.horizontal(|ui| {
            if let Some((label, line)) = &summary.again {
                if targets.button(ui, label).clicked() {
                    next = Some(line.clone());
                }
            }
            back = targets.button(ui, "Back").clicked();
        });
        if let Some(problem) = &self.problem {
            ui.colored_label(egui::Color32::LIGHT_RED, problem);
        }
        egui::CollapsingHeader::new("Everything it printed")
            .default_open(false)
            .show(ui, |ui| {
                ui.monospace(format!("$ {}", shell_words("netcade", &end.command_line)));
                if let Some(error) = &end.error {
                    ui.colored_label(egui::Color32::LIGHT_RED, error);
                }
                egui::ScrollArea::vertical()
                    .max_height(320.0)
                    .show(ui, |ui| {
                        ui.monospace(end.output.trim_end());
                    });
            });
        if next.is_some() {
            self.session = next;
        }
        if back {
            self.back();
        }
    }

    fn show_problem(&self, ui: &mut egui::Ui) {
        if let Some(problem) = &self.problem {
            ui.colored_label(egui::Color32::LIGHT_RED, problem);
        }
    }

    fn start_checked(&mut self, form: Result<Session, String>) {
        match form {
            Ok(session) => self.start(session),
            Err(problem) => self.problem = Some(format!("error: {problem}")),
        }
    }

    /// Starts `session` of the chosen game (noted as played once it ran).
    fn start(&mut self, session: Session) {
        let Some(game) = self.game.clone() else {
            self.problem = Some("error: choose a game first".to_string());
            return;
        };
        let address = match &session {
            Session::Join(JoinForm {
                way: JoinWay::Address,
                address,
                ..
            })
            | Session::Spectate { address } => Some(address),
            _ => None,
        };
        if let Some(address) = address {
            recent::note_address(&mut self.addresses, address);
            let path = recent::recent_addresses_path();
            if let Err(error) = recent::save_addresses(&path, &self.addresses) {
                tracing::warn!("cannot write {}: {error}", path.display());
            }
        }
        self.problem = None;
        self.session = Some(self.session_line(&session, &game));
        self.started = Some((game, session));
    }

    /// `game` was played in `session`: first in the recent games, and its
    /// core, options and delay remembered for its content (written to the
    /// settings file as it is on disk, without the Settings screen's
    /// changes not saved).
    fn note_played(&mut self, game: &GameChoice, session: &Session) {
        recent::note_played(&mut self.recent, game);
        let path = recent::recent_games_path();
        if let Err(error) = recent::save(&path, &self.recent) {
            tracing::warn!("cannot write {}: {error}", path.display());
        }
        let Some(rom) = &game.rom else {
            return;
        };
        let mut kept = self.settings.settings.rom(game);
        kept.core = Some(game.core.clone());
        match session {
            Session::Host(form) => kept.delay = Some(form.delay),
            Session::Join(form) => kept.delay = Some(form.delay),
            _ => {}
        }
        self.settings.settings.set_rom(rom, kept.clone());
        let (mut on_disk, problem) = load_settings();
        let Some(path) = crate::launcher::settings::settings_path().filter(|_| problem.is_none())
        else {
            return;
        };
        on_disk.set_rom(rom, kept);
        if let Err(error) = on_disk.save(&path) {
            tracing::warn!("cannot write {}: {error}", path.display());
        }
    }
}

/// This program, to probe cores with (`netcade probe-core`).
fn netcade_program() -> std::path::PathBuf {
    std::env::current_exe().unwrap_or_else(|_| std::path::PathBuf::from("netcade"))
}

/// Shows `folder` in the desktop's file manager.
fn open_folder(folder: &std::path::Path) -> Result<(), String> {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    std::fs::create_dir_all(folder)
        .and_then(|()| std::process::Command::new(opener).arg(folder).spawn())
        .map(drop)
        .map_err(|err| {
            format!(
                "error: cannot open {} with {opener}: {err}",
                folder.display()
            )
        })
}
