//! The one-line chat box of a match window (T opens it): Enter sends,
//! Esc cancels. The match goes on while it is open: the game, its sound
//! and the other machines never wait, and this machine's player holds no
//! buttons (the keys type text instead).

use netcode::protocol::{truncate_chat_text, MAX_CHAT_TEXT_BYTES};

/// What the box says while it is open.
pub const CHAT_BOX_NOTE: &str =
    "Enter sends, Esc cancels. The match goes on: your player holds no buttons while you type.";

/// What the player did with the box.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChatBoxOutcome {
    /// Enter with this text.
    Send(String),
    /// Esc, or Enter with nothing typed.
    Cancel,
}

/// The chat box: closed, or open with what is typed so far.
#[derive(Clone, Debug, Default)]
pub struct ChatBox {
    text: Option<String>,
    /// Whether the text field was given the keyboard.
    focused: bool,
}

impl ChatBox {
    /// Opens the box (empty), if it is closed.
    pub fn open(&mut self) {
        if self.text.is_none() {
            self.text = Some(String::new());
            self.focused = false;
        }
    }

    /// Whether the box is open.
    pub fn is_open(&self) -> bool {
        self.text.is_some()
    }

    /// Lays the box out at the bottom of the window, when open. Returns
    /// what the player did (the box is then closed).
    pub fn draw(&mut self, context: &egui::Context) -> Option<ChatBoxOutcome> {
        let text = self.text.as_mut()?;
        let mut outcome = None;
        let bottom = context.content_rect().bottom();
        egui::Area::new(egui::Id::new("chat box"))
            .fixed_pos(egui::pos2(16.0, bottom - 90.0))
            .show(context, |ui| {
                egui::Frame::window(ui.style()).show(ui, |ui| {
                    ui.horizontal(|ui| {
                        ui.label("say:");
                        let field = egui::TextEdit::singleline(text)
                            .char_limit(MAX_CHAT_TEXT_BYTES)
                            .desired_width(360.0);
                        let response = ui.add(field);
                        if !self.focused {
                            response.request_focus();
                            self.focused = true;
                        } else if response.lost_focus() {
                            let entered = ui.input(|input| input.key_pressed(egui::Key::Enter));
                            outcome = Some(outcome_of(entered, text));
                        }
                    });
                    ui.small(CHAT_BOX_NOTE);
                });
            });
        if outcome.is_some() {
            self.text = None;
        }
        outcome
    }
}

/// Enter with text sends it (cut to the longest line); anything else cancels.
fn outcome_of(entered: bool, text: &str) -> ChatBoxOutcome {
    let text = truncate_chat_text(text.trim(), MAX_CHAT_TEXT_BYTES);
    if entered && !text.is_empty() {
        ChatBoxOutcome::Send(text.to_string())
    } else {
        ChatBoxOutcome::Cancel
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enter_sends_the_trimmed_text_and_anything_else_cancels() {
        assert_eq!(
            outcome_of(true, "  gg wp "),
            ChatBoxOutcome::Send("gg wp".to_string())
        );
        assert_eq!(outcome_of(true, "   "), ChatBoxOutcome::Cancel);
        assert_eq!(outcome_of(false, "gg"), ChatBoxOutcome::Cancel);
        let long = "é".repeat(100);
        let ChatBoxOutcome::Send(sent) = outcome_of(true, &long) else {
            panic!("a long line is sent, cut");
        };
        assert_eq!(sent.len(), MAX_CHAT_TEXT_BYTES);
    }
}
