//! What a joiner's window shows while it connects, before its game runs:
//! the host, the steps gone through and the one it is at, how long it
//! waited of how long it will, and Cancel (or Esc, or closing the window),
//! answered at the next frame. The window is then handed to the match
//! (through [`KeepWindowOpen`]): the connecting screen becomes the game.

use crate::engine::AppError;
use crate::gui::menu::script::{self, Targets};
use crate::gui::play::load_input_map;
use crate::gui::window::{save_picture, Action, DisplayArgs, KeepWindowOpen, Window};
use crate::live::front_end::{ConnectStep, ConnectingScreen};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The least time between two pictures of the screen (the connection is
/// pumped every millisecond; 60 pictures a second are plenty).
const FRAME: Duration = Duration::from_millis(16);

/// The size a connecting window opens at when no window is open yet (the
/// launcher's).
const WINDOW_SIZE: (u32, u32) = (960, 720);

/// A joiner's window while it connects.
pub struct ConnectingWindow {
    // Dropped before the guard below: a window never handed over still
    // goes back to the launcher that lent it.
    window: Option<Window>,
    _keep: KeepWindowOpen,
    host: String,
    /// The steps gone through before the one shown, in order.
    passed: Vec<ConnectStep>,
    targets: Targets,
    last_drawn: Option<Instant>,
    cancelled: bool,
    /// Where a launcher script asked the next picture to be saved.
    capture: Option<PathBuf>,
}

impl ConnectingWindow {
    /// Opens the window (the launcher's, when it lends one) for a join to
    /// `host`.
    pub fn open(host: &str, display: &DisplayArgs) -> Result<ConnectingWindow, AppError> {
        let keep = KeepWindowOpen::start();
        let display = DisplayArgs {
            window_size: display.window_size.or(Some(WINDOW_SIZE)),
            ..display.clone()
        };
        let title = format!("netcade: joining {host}");
        let window = Window::open(&title, (320, 240), 4.0 / 3.0, &display, load_input_map)?;
        Ok(ConnectingWindow {
            window: Some(window),
            _keep: keep,
            host: host.to_string(),
            passed: Vec::new(),
            targets: Targets::default(),
            last_drawn: None,
            cancelled: false,
            capture: None,
        })
    }
}

impl ConnectingScreen for ConnectingWindow {
    fn show(&mut self, step: ConnectStep, waited: Duration, timeout: Duration) -> bool {
        // A new step is drawn at once; the same one once a frame.
        let new_step = !self.passed.contains(&step);
        if new_step {
            self.passed.push(step);
        }
        let Some(window) = self.window.as_mut() else {
            return self.cancelled;
        };
        let drawn_lately = self.last_drawn.is_some_and(|at| at.elapsed() < FRAME);
        if self.cancelled || (drawn_lately && !new_step) {
            return self.cancelled;
        }
        self.last_drawn = Some(Instant::now());
        for action in window.poll() {
            // Nothing is lost before the match: Esc and closing cancel.
            if matches!(action, Action::Quit | Action::Leave) {
                self.cancelled = true;
            }
        }
        let (targets, host, passed) = (&mut self.targets, &self.host, &self.passed);
        let mut cancel = false;
        let capture = self.capture.take();
        let picture = window.present_with_menu(
            None,
            4.0 / 3.0,
            None,
            Some(&mut |context| {
                targets.clear(context.pixels_per_point());
                cancel = draw(context, host, passed, (waited, timeout), targets);
            }),
            capture.is_some(),
        );
        if let (Some(path), Some(picture)) = (capture, picture) {
            if let Err(error) = save_picture(&path, &picture) {
                eprintln!("warning: {}", crate::engine::error::error_chain(&error));
            }
        }
        self.cancelled |= cancel;
        let (capture, leave) = script::session_step(window, &self.targets);
        self.capture = capture;
        self.cancelled |= leave;
        self.cancelled
    }

    fn hand_over(&mut self) {
        // Onto the shelf, for the match's window to take.
        self.window = None;
    }
}

/// How long the join waited, and how long it will (a quick match's queue
/// waits for as long as it takes: `Duration::MAX`).
fn wait_in_words(waited: Duration, timeout: Duration) -> String {
    if timeout == Duration::MAX {
        format!("waited {} s", waited.as_secs())
    } else {
        format!(
            "waited {} s; giving up after {} s",
            waited.as_secs(),
            timeout.as_secs()
        )
    }
}

/// Lays the screen out: the steps `passed` (the last is the one now),
/// `waited` of `timeout`, and Cancel; whether Cancel was clicked.
fn draw(
    context: &egui::Context,
    host: &str,
    passed: &[ConnectStep],
    (waited, timeout): (Duration, Duration),
    targets: &mut Targets,
) -> bool {
    let mut cancel = false;
    egui::CentralPanel::default().show(context, |ui| {
        targets.heading(ui, &format!("Connecting to {host}"));
        ui.separator();
        let now = passed.len().saturating_sub(1);
        for (index, step) in passed.iter().enumerate() {
            let text = if index == now {
                format!("▶ {}…", step.words())
            } else {
                format!("✔ {}", step.words())
            };
            targets.line(ui, &text);
        }
        targets.line(ui, &wait_in_words(waited, timeout));
        ui.add_space(12.0);
        cancel = targets.button(ui, "Cancel").clicked();
        targets.line(ui, "Esc cancels too: the match has not begun.");
    });
    // A clock in whole seconds moves on: draw again within a second.
    context.request_repaint_after(Duration::from_millis(250));
    cancel
}
