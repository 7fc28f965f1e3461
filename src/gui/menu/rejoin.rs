//! The home screen's rejoin buttons: one per match this machine may come
//! back to (see [`crate::launcher::rejoins`]).

use crate::gui::menu::script::Targets;
use crate::launcher::rejoins::RejoinOffer;

/// Draws a button for each of `offers`: the one clicked, if any.
pub(super) fn rejoin_buttons(
    ui: &mut egui::Ui,
    targets: &mut Targets,
    offers: &[RejoinOffer],
) -> Option<RejoinOffer> {
    let mut clicked = None;
    for offer in offers {
        if targets.button(ui, &offer.label).clicked() {
            clicked = Some(offer.clone());
        }
    }
    clicked
}
