//! The menu over a match (Esc, or Start+Select on a controller): resume,
//! the connection's figures, the shader, fullscreen, the stats panel, the
//! input mapping and the core options (to read), and leaving. A match
//! cannot pause, so while the menu is open this machine's player holds no
//! buttons, and the menu says so; local play pauses while it is open.

use crate::engine::Game;
use crate::gui::overlay::Overlay;
use crate::gui::window::{Action, Window};
use netcode::input::Buttons;

/// What the menu tells the player about their input while it is open.
pub const MENU_INPUT_NOTE: &str =
    "The match goes on: while this menu is open,\nyour player holds no buttons.";

/// About how wide the menu is drawn (points), to centre it.
const MENU_WIDTH: f32 = 480.0;

/// What the menu says over local play and replays.
pub const MENU_PAUSED_NOTE: &str = "The game is paused while this menu is open.";

/// Why a match's core options cannot be changed.
pub const OPTIONS_IN_A_MATCH: &str = "Read only: in a match every machine runs the host's options.";

/// Where local play's core options are changed.
pub const OPTIONS_IN_LOCAL_PLAY: &str =
    "Read only here: set them before the game starts\n(the launcher's Settings, or --option KEY=VALUE).";

/// A part of the menu shown on request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MenuSection {
    /// The keys and controller inputs of each RetroPad button.
    InputMapping,
    /// The core's options and their values.
    CoreOptions,
}

/// What the player chose in the menu.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MenuChoice {
    /// Close the menu.
    Resume,
    /// The next display shader.
    NextShader,
    /// Fullscreen on or off.
    Fullscreen,
    /// The F1 stats panel on or off.
    StatsPanel,
    /// Show (or hide) a section.
    Show(MenuSection),
    /// Leave the match.
    Leave,
}

/// Whether the menu is open, and the controller chord that toggles it.
#[derive(Clone, Debug, Default)]
pub struct MatchMenu {
    /// Whether it is shown.
    pub open: bool,
    chord_held: bool,
    /// Over local play (which it pauses) rather than a match.
    pub local: bool,
    /// The section shown, if any.
    pub section: Option<MenuSection>,
    /// The input mapping, one line per player and for controllers.
    pub input_mapping: Vec<String>,
    /// The core's options, grouped, one line each.
    pub core_options: Vec<String>,
}

impl MatchMenu {
    /// Takes this tick's held buttons: Start and Select pressed together
    /// toggle the menu (once per press). Returns the buttons the player
    /// plays with: none while the menu is open.
    pub fn filter(&mut self, held: Buttons) -> Buttons {
        let chord = held.contains(Buttons::START.with(Buttons::SELECT));
        if chord && !self.chord_held {
            self.open = !self.open;
        }
        self.chord_held = chord;
        if self.open {
            Buttons::NONE
        } else {
            held
        }
    }

    /// The menu over local play, which it pauses.
    pub fn local() -> MatchMenu {
        MatchMenu {
            local: true,
            ..MatchMenu::default()
        }
    }

    /// A section asked for is shown, or hidden when it was; the other
    /// choices are the caller's (after Resume, the menu is closed).
    pub fn choose(&mut self, choice: MenuChoice) -> MenuChoice {
        match choice {
            MenuChoice::Show(section) => {
                self.section = (self.section != Some(section)).then_some(section);
            }
            MenuChoice::Resume => self.open = false,
            _ => {}
        }
        choice
    }

    /// The lines of the section shown, with what it says first.
    fn section_lines(&self) -> Vec<&str> {
        let (note, lines) = match self.section {
            None => return Vec::new(),
            Some(MenuSection::InputMapping) => {
                ("Change it in the launcher's Settings.", &self.input_mapping)
            }
            Some(MenuSection::CoreOptions) if self.local => {
                (OPTIONS_IN_LOCAL_PLAY, &self.core_options)
            }
            Some(MenuSection::CoreOptions) => (OPTIONS_IN_A_MATCH, &self.core_options),
        };
        let none = (lines.is_empty()).then_some("(none)");
        std::iter::once(note)
            .chain(lines.iter().map(String::as_str))
            .chain(none)
            .collect()
    }

    /// Lays the menu out: `connection` is the overlay's figures, one line
    /// each; `shader` the shader in use. Returns the choice made, if any.
    pub fn draw(
        &self,
        context: &egui::Context,
        connection: &[String],
        shader: &str,
    ) -> Option<MenuChoice> {
        let mut choice = None;
        // A fixed place (an area anchored by its centre is measured a
        // frame late): centred for its usual width, below the overlay's
        // top corners.
        let width = context.content_rect().width();
        let left = if width.is_finite() {
            ((width - MENU_WIDTH) / 2.0).max(16.0)
        } else {
            16.0
        };
        egui::Area::new(egui::Id::new("match menu"))
            .fixed_pos(egui::pos2(left, 64.0))
            .show(context, |ui| {
                egui::Frame::window(ui.style()).show(ui, |ui| {
                    ui.heading(if self.local { "Menu" } else { "Match menu" });
                    ui.label(if self.local {
                        MENU_PAUSED_NOTE
                    } else {
                        MENU_INPUT_NOTE
                    });
                    ui.separator();
                    if !connection.is_empty() {
                        for line in connection {
                            ui.monospace(line);
                        }
                        ui.separator();
                    }
                    let buttons = [
                        ("Resume", MenuChoice::Resume),
                        (&*format!("Shader: {shader}"), MenuChoice::NextShader),
                        ("Fullscreen", MenuChoice::Fullscreen),
                        ("Stats panel (F1)", MenuChoice::StatsPanel),
                        ("Input mapping", MenuChoice::Show(MenuSection::InputMapping)),
                        ("Core options", MenuChoice::Show(MenuSection::CoreOptions)),
                        (
                            if self.local {
                                "Quit"
                            } else {
                                "Leave the match"
                            },
                            MenuChoice::Leave,
                        ),
                    ];
                    for (label, made) in buttons {
                        if ui.button(label).clicked() {
                            choice = Some(made);
                        }
                    }
                    let lines = self.section_lines();
                    if !lines.is_empty() {
                        ui.separator();
                        egui::ScrollArea::vertical()
                            .max_height(240.0)
                            .show(ui, |ui| {
                                for line in lines {
                                    ui.label(line);
                                }
                            });
                    }
                    ui.label(if self.local {
                        "Esc again quits."
                    } else {
                        "Esc again leaves the match."
                    });
                });
            });
        choice
    }
}

/// How long after a first Esc in a match a second one leaves it.
pub const LEAVE_CONFIRM_MS: u64 = 2_000;

/// Esc in a match: a stray press must not end it, so the first press asks
/// and only a second within [`LEAVE_CONFIRM_MS`] leaves.
#[derive(Clone, Copy, Debug, Default)]
pub struct LeaveConfirmation {
    asked_at_ms: Option<u64>,
}

impl LeaveConfirmation {
    /// Esc pressed at `now_ms`: whether it leaves (else it asks, and the
    /// caller shows [`LEAVE_QUESTION`]).
    pub fn press(&mut self, now_ms: u64) -> bool {
        match self.asked_at_ms {
            Some(asked) if now_ms.saturating_sub(asked) <= LEAVE_CONFIRM_MS => true,
            _ => {
                self.asked_at_ms = Some(now_ms);
                false
            }
        }
    }
}

/// Carries out a menu choice on the window and the overlay (local play's
/// and a match's alike); whether it was to leave.
pub fn carry_out(
    choice: MenuChoice,
    window: &mut Window,
    overlay: &mut Overlay,
    now_ms: u64,
) -> bool {
    match choice {
        MenuChoice::Resume | MenuChoice::Show(_) => {}
        MenuChoice::NextShader => window.next_shader(),
        MenuChoice::Fullscreen => {
            if let Some(Action::Notice(text)) = window.toggle_fullscreen() {
                overlay.notice(now_ms, text);
            }
        }
        MenuChoice::StatsPanel => overlay.panel_visible = !overlay.panel_visible,
        MenuChoice::Leave => return true,
    }
    false
}

/// The menu's sections: the window's input mapping and `game`'s options.
pub fn menu_details(menu: &mut MatchMenu, window: &Window, game: &dyn Game) {
    if menu.input_mapping.is_empty() {
        menu.input_mapping = window
            .input_map()
            .describe()
            .lines()
            .map(str::to_string)
            .collect();
    }
    if menu.core_options.is_empty() {
        menu.core_options = option_lines(&game.core_options(), &game.option_categories());
    }
}

/// Options grouped under their categories' names: `System`, then
/// `  Region: auto`, each with its help text after it.
fn option_lines(
    options: &[libretro_host::CoreOption],
    categories: &[libretro_host::OptionCategory],
) -> Vec<String> {
    let mut lines = Vec::new();
    for (name, info, options) in libretro_host::grouped(options, categories) {
        lines.push(if info.is_empty() {
            name.to_string()
        } else {
            format!("{name} ({info})")
        });
        for option in options {
            lines.push(format!("  {}: {}", option.description, option.current));
            if !option.info.is_empty() {
                lines.push(format!("    {}", option.info));
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_and_select_together_open_the_menu_and_the_player_then_holds_nothing() {
        let mut menu = MatchMenu::default();
        let right = Buttons::RIGHT;
        assert_eq!(menu.filter(right), right, "closed: the buttons play");
        let chord = Buttons::START.with(Buttons::SELECT);
        assert_eq!(menu.filter(chord.with(right)), Buttons::NONE);
        assert!(menu.open);
        assert_eq!(menu.filter(chord), Buttons::NONE, "held on: no toggle");
        assert!(menu.open);
        assert_eq!(menu.filter(right), Buttons::NONE, "open: neutral");
        menu.filter(chord);
        assert!(!menu.open, "a second chord closes it");
        assert_eq!(menu.filter(right), right);
    }

    #[test]
    fn core_options_say_why_they_cannot_be_changed_here() {
        let mut menu = MatchMenu {
            open: true,
            core_options: vec!["Palette: z26".to_string()],
            ..MatchMenu::default()
        };
        assert!(menu.section_lines().is_empty());
        menu.choose(MenuChoice::Show(MenuSection::CoreOptions));
        assert_eq!(menu.section_lines(), [OPTIONS_IN_A_MATCH, "Palette: z26"]);
        menu.local = true;
        assert_eq!(menu.section_lines()[0], OPTIONS_IN_LOCAL_PLAY);
        menu.choose(MenuChoice::Show(MenuSection::InputMapping));
        assert_eq!(menu.section_lines()[1], "(none)");
        menu.choose(MenuChoice::Show(MenuSection::InputMapping));
        assert!(menu.section_lines().is_empty(), "asked again, it hides");
        menu.choose(MenuChoice::Resume);
        assert!(!menu.open);
    }
}
