//! What a host's window shows while it waits for its players, before the
//! match: its room's code, large, with Copy (`host --room`), the addresses
//! to give them, each with a Copy button, and Cancel,
//! which ends the session there (its socket closes with it) and, started
//! from the launcher, goes back to the launcher.

use crate::gui::menu::script::Targets;

/// The waiting panel's addresses for the host's UDP port, found once.
#[derive(Clone, Debug, Default)]
pub struct WaitingPanel {
    /// (the port, the addresses to give for it).
    addresses: Option<(u16, Vec<String>)>,
}

impl WaitingPanel {
    /// Lays the panel out for a host on UDP port `port` (in the room
    /// `room_code`), recording its buttons in `targets`; whether the player
    /// chose Cancel.
    pub fn draw(
        &mut self,
        context: &egui::Context,
        port: u16,
        room_code: Option<&str>,
        targets: &mut Targets,
    ) -> bool {
        if self
            .addresses
            .as_ref()
            .is_none_or(|(known, _)| *known != port)
        {
            let addresses = crate::gui::menu::addresses::addresses_to_give(&port.to_string());
            self.addresses = Some((port, addresses));
        }
        let addresses = self.addresses.as_ref().map_or(&[][..], |(_, all)| all);
        let mut cancel = false;
        // Below the overlay's status line and notices, in the top left corner.
        egui::Area::new(egui::Id::new("waiting for players"))
            .fixed_pos(egui::pos2(16.0, 64.0))
            .show(context, |ui| {
                egui::Frame::window(ui.style()).show(ui, |ui| {
                    targets.heading(ui, "Waiting for a player to join");
                    if let Some(code) = room_code {
                        targets.line(ui, &format!("Room code {code}: the other player chooses Join, By room code, and types it"));
                        ui.horizontal(|ui| {
                            ui.label(egui::RichText::new(code).monospace().size(48.0).strong());
                            if targets.button(ui, "Copy code").clicked() {
                                ui.ctx().copy_text(code.to_string());
                            }
                        });
                        ui.separator();
                    }
                    let or = if room_code.is_some() { "Or give" } else { "Give" };
                    targets.line(ui, &format!("Hosting on UDP port {port}. {or} your opponent:"));
                    for address in addresses {
                        ui.horizontal(|ui| {
                            ui.monospace(address);
                            if targets.button(ui, &format!("Copy {address}")).clicked() {
                                ui.ctx().copy_text(address.clone());
                            }
                        });
                    }
                    ui.separator();
                    cancel = targets.button(ui, "Cancel").clicked();
                    ui.label("Esc cancels too: the match has not begun.");
                });
            });
        cancel
    }
}
