//! The menu over a match (Esc, or Start+Select on a controller): resume,
//! the connection's figures, the shader, fullscreen, the stats panel, and
//! leaving. A match cannot pause, so while the menu is open this machine's
//! player holds no buttons, and the menu says so.

use crate::input::Buttons;

/// What the menu tells the player about their input while it is open.
pub const MENU_INPUT_NOTE: &str =
    "The match goes on: while this menu is open,\nyour player holds no buttons.";

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
    /// Leave the match.
    Leave,
}

/// Whether the menu is open, and the controller chord that toggles it.
#[derive(Clone, Copy, Debug, Default)]
pub struct MatchMenu {
    /// Whether it is shown.
    pub open: bool,
    chord_held: bool,
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

    /// Lays the menu out: `connection` is the overlay's figures, one line
    /// each; `shader` the shader in use. Returns the choice made, if any.
    pub fn draw(
        &self,
        context: &egui::Context,
        connection: &[String],
        shader: &str,
    ) -> Option<MenuChoice> {
        let mut choice = None;
        // A fixed place: egui 0.33 never shows an area anchored by its
        // centre here (its size is unknown when it is placed).
        egui::Area::new(egui::Id::new("match menu"))
            .fixed_pos(egui::pos2(16.0, 16.0))
            .show(context, |ui| {
                egui::Frame::window(ui.style()).show(ui, |ui| {
                    ui.heading("Match menu");
                    ui.label(MENU_INPUT_NOTE);
                    ui.separator();
                    for line in connection {
                        ui.monospace(line);
                    }
                    ui.separator();
                    let buttons = [
                        ("Resume", MenuChoice::Resume),
                        (&*format!("Shader: {shader}"), MenuChoice::NextShader),
                        ("Fullscreen", MenuChoice::Fullscreen),
                        ("Stats panel (F1)", MenuChoice::StatsPanel),
                        ("Leave the match", MenuChoice::Leave),
                    ];
                    for (label, made) in buttons {
                        if ui.button(label).clicked() {
                            choice = Some(made);
                        }
                    }
                    ui.label("Esc again leaves the match.");
                });
            });
        choice
    }
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
}
