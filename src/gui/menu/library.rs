//! The home screen's game library: the games of the ROM folders chosen in
//! Settings, scanned on a worker ([`LibraryScan`]), searched by name, each
//! shown with the core that plays it; a click chooses it.

use crate::gui::menu::script::Targets;
use crate::launcher::cores::Catalogue;
use crate::launcher::forms::GameChoice;
use crate::launcher::library::{index_path, LibraryGame, LibraryScan};
use crate::launcher::settings::Settings;
use std::path::PathBuf;

/// The library as the home screen shows it.
pub struct LibraryView {
    scan: Option<LibraryScan>,
    search: String,
    /// The games matching `search`, by index, and what they were found
    /// for (the search, and how many games there were).
    matching: (Vec<usize>, String, usize),
}

impl LibraryView {
    /// Scans `folders` (nothing when there are none).
    pub fn new(folders: &[PathBuf]) -> LibraryView {
        let mut view = LibraryView {
            scan: None,
            search: String::new(),
            matching: (Vec::new(), String::new(), 0),
        };
        view.follow(folders);
        view
    }

    /// Scans `folders` anew if they are not those scanned.
    pub fn follow(&mut self, folders: &[PathBuf]) {
        let scanned = self.scan.as_ref().map_or(&[][..], LibraryScan::folders);
        if scanned != folders {
            self.rescan(folders);
        }
    }

    /// Scans `folders` again (files added or changed).
    pub fn rescan(&mut self, folders: &[PathBuf]) {
        self.scan =
            (!folders.is_empty()).then(|| LibraryScan::start(folders.to_vec(), index_path()));
        self.matching = (Vec::new(), String::new(), 0);
    }

    /// Takes in what the scan found since the last frame, on every screen.
    pub fn update(&mut self) {
        if let Some(scan) = &mut self.scan {
            scan.update();
        }
    }

    /// Whether the scan is under way.
    pub fn scanning(&self) -> bool {
        self.scan.as_ref().is_some_and(LibraryScan::scanning)
    }

    /// The core that plays `game`: the one it was played with, else the
    /// one the catalogue chooses.
    pub fn core_of(
        game: &LibraryGame,
        catalogue: &Catalogue,
        settings: &Settings,
    ) -> Option<String> {
        let choice = GameChoice {
            core: String::new(),
            rom: Some(game.path.clone()),
        };
        settings.rom(&choice).core.or_else(|| {
            catalogue
                .core_for(&game.path, game.size)
                .map(str::to_string)
        })
    }

    /// The search field and the games matching it; the game clicked, or
    /// why it cannot be played.
    pub fn draw(
        &mut self,
        ui: &mut egui::Ui,
        targets: &mut Targets,
        catalogue: &Catalogue,
        settings: &Settings,
        chosen: Option<&GameChoice>,
    ) -> Option<Result<GameChoice, String>> {
        let Some(scan) = &mut self.scan else {
            ui.weak("Library: choose ROM folders in Settings and their games show here.");
            return None;
        };
        if scan.scanning() {
            // The worker's answers wake nothing: look again soon.
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(50));
        }
        let games = scan.games();
        ui.horizontal(|ui| {
            targets.text_field(ui, "Search games", &mut self.search);
            let count = games.len();
            if scan.scanning() {
                ui.weak(format!(
                    "{count} games, scanning… ({} hashed)",
                    scan.hashed()
                ));
            } else {
                ui.weak(format!("{count} games"));
            }
        });
        if self.matching.1 != self.search || self.matching.2 != games.len() {
            let found = (0..games.len())
                .filter(|index| games[*index].matches(&self.search))
                .collect();
            self.matching = (found, self.search.clone(), games.len());
        }
        let mut clicked = None;
        let rows = &self.matching.0;
        let row_height = ui.spacing().interact_size.y;
        egui::ScrollArea::vertical()
            .id_salt("library")
            .max_height(200.0)
            .auto_shrink([false, true])
            .show_rows(ui, row_height, rows.len(), |ui, shown| {
                for &index in &rows[shown] {
                    let game = &games[index];
                    let core = Self::core_of(game, catalogue, settings);
                    let is_chosen = chosen.is_some_and(|chosen| {
                        chosen.rom.as_deref() == Some(game.path.as_path())
                    });
                    ui.horizontal(|ui| {
                        if targets.selectable(ui, is_chosen, &game.name).clicked() {
                            clicked = Some(
                                core.clone()
                                    .map(|core| GameChoice {
                                        core,
                                        rom: Some(game.path.clone()),
                                    })
                                    .ok_or_else(|| {
                                        format!(
                                            "error: no core found takes .{} files: install one with Add core…",
                                            game.extension()
                                        )
                                    }),
                            );
                        }
                        match &core {
                            Some(core) => ui.weak(catalogue.label(core)),
                            None => ui.weak(format!("no core found takes .{}", game.extension())),
                        };
                    });
                }
            });
        clicked
    }
}

/// How long the launcher's frames took while the library was scanned, and
/// as many frames after it, logged then (the measurement of a scan that
/// must not slow the window: `scripts/bench-library`).
#[derive(Debug, Default)]
pub struct ScanFrames {
    during: FrameStats,
    after: FrameStats,
}

/// The frames counted, the longest and their total time.
#[derive(Clone, Copy, Debug, Default)]
struct FrameStats {
    frames: u32,
    longest: std::time::Duration,
    total: std::time::Duration,
}

impl FrameStats {
    fn add(&mut self, took: std::time::Duration) {
        self.frames += 1;
        self.longest = self.longest.max(took);
        self.total += took;
    }

    fn said(&self) -> String {
        format!(
            "{} frames, the longest in {:.1} ms, {:.2} ms on average",
            self.frames,
            self.longest.as_secs_f64() * 1e3,
            self.total.as_secs_f64() * 1e3 / f64::from(self.frames.max(1))
        )
    }
}

impl ScanFrames {
    /// One frame took `took` (its layout, drawing and presenting); whether
    /// the library is still `scanning`.
    pub fn note(&mut self, scanning: bool, took: std::time::Duration) {
        if scanning {
            self.during.add(took);
            return;
        }
        if self.during.frames == 0 {
            return;
        }
        self.after.add(took);
        if self.after.frames >= self.during.frames.max(60) {
            tracing::info!(
                "library: while scanning {}; after it {}",
                self.during.said(),
                self.after.said()
            );
            *self = ScanFrames::default();
        }
    }
}
