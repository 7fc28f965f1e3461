//! The launcher's window (`netcade menu`, and `netcade` alone): pick a game, then
//! Play, Host, Join or Spectate, in the one window that stays open from
//! session to session. A session is a command line, run by the command
//! line's own code ([`run_launcher`]'s `start`); it ends on a result screen.

pub(crate) mod addresses;
mod library;
#[cfg(feature = "broadcast")]
mod lobby;
pub mod pad;
mod rejoin;
mod screens;
pub mod script;
pub mod settings;
#[cfg(all(test, feature = "kittest"))]
mod widget_tests;

use crate::gui::input_map::load_input_map;
use crate::gui::window::{Action, DisplayArgs, KeepWindowOpen, Window};
use crate::gui::GuiError;
use crate::launcher::forms::GameChoice;
use crate::launcher::SessionEnd;
use screens::Launcher;
use script::Script;
use std::path::PathBuf;

/// How the launcher starts.
#[derive(Clone, Debug, Default)]
pub struct LauncherOptions {
    /// The game chosen from the start.
    pub game: Option<GameChoice>,
    /// A script driving it (tests, the manual's pictures).
    pub script: Option<PathBuf>,
}

/// What the launcher's window asks for next.
enum Next {
    /// Run this command line.
    Start(Vec<String>),
    /// Close the launcher.
    Quit,
}

/// The time one launcher frame takes at least (the menu needs no more
/// than 60 pictures a second).
const FRAME: std::time::Duration = std::time::Duration::from_millis(16);

/// The longest the launcher waits without drawing while work runs in the
/// background (core probes, replay headers, a lag measurement), whose
/// answers come on other threads and wake nothing.
const BACKGROUND_WORK_CHECK: std::time::Duration = std::time::Duration::from_millis(100);

/// The longest the launcher waits without drawing at all (clocks shown in
/// words move on).
const IDLE_REDRAW: std::time::Duration = std::time::Duration::from_secs(1);

/// Runs the launcher until its window closes: each session it asks for is
/// handed to `start` (which runs it in the same window) and ends on its
/// result screen. Returns whether an interrupt ended a session (and so
/// the launcher too).
pub fn run_launcher(
    options: &LauncherOptions,
    start: &mut dyn FnMut(&[String]) -> SessionEnd,
) -> Result<bool, crate::engine::AppError> {
    let _keep = KeepWindowOpen::start();
    let mut launcher = Launcher::new(options.game.clone());
    let mut script = options.script.as_deref().map(Script::load).transpose()?;
    loop {
        let next = {
            let mut window = open_window()?;
            show(&mut launcher, &mut window, script.as_mut())?
        };
        match next {
            Next::Quit => return Ok(false),
            Next::Start(line) => {
                // The session runs its steps of the script (`session …`).
                script::lend(script.take());
                let end = start(&line);
                script = script::take_back();
                if let Some(script) = &script {
                    script.session_ended()?;
                }
                // Ctrl-C (or SIGTERM, SIGHUP) ended the session: it was
                // meant for the program, which leaves too.
                if end.exit_code == crate::engine::error::EXIT_INTERRUPTED {
                    return Ok(true);
                }
                launcher.session_ended(end);
            }
        }
    }
}

/// The launcher's window: the one kept open, or a new one.
fn open_window() -> Result<Window, GuiError> {
    let display = DisplayArgs {
        window_size: Some((960, 720)),
        ..DisplayArgs::default()
    };
    Window::open("netcade", (320, 240), 4.0 / 3.0, &display, load_input_map)
}

/// Shows the launcher until the player starts a session or leaves.
fn show(
    launcher: &mut Launcher,
    window: &mut Window,
    mut script: Option<&mut Script>,
) -> Result<Next, crate::engine::AppError> {
    // The picture a script asked for, taken when the next frame is drawn.
    let mut capture: Option<PathBuf> = None;
    let mut pad_before = netcode::input::Buttons::NONE;
    let mut scan_frames = library::ScanFrames::default();
    loop {
        let began = std::time::Instant::now();
        let pad = window.controller_buttons();
        // While a binding waits for a press, the pad's buttons are that
        // press, not the menu's keys.
        window.report_presses(launcher.capturing());
        if !launcher.capturing() {
            for (key, keymod) in pad::pad_keys(pad_before, pad) {
                window.inject(script::key_event(true, key, keymod));
                window.inject(script::key_event(false, key, sdl2::keyboard::Mod::NOMOD));
            }
        }
        pad_before = pad;
        for action in window.poll() {
            match action {
                Action::Quit => return Ok(Next::Quit),
                Action::Leave => launcher.back(),
                Action::Pressed(pressed) => launcher.pressed(pressed),
                _ => {}
            }
        }
        let picture = window.present_with_menu(
            None,
            4.0 / 3.0,
            None,
            Some(&mut |context| launcher.draw(context)),
            capture.is_some(),
        );
        if let (Some(path), Some(picture)) = (capture.take(), picture) {
            crate::gui::window::save_picture(&path, &picture)?;
        }
        // A script's step comes after a frame was laid out: its clicks
        // aim at the widgets drawn, and its events reach the next poll.
        if let Some(script) = script.as_deref_mut() {
            match script.step(window, launcher.targets(), script::Place::Launcher)? {
                script::Step::Continue => {}
                script::Step::Capture(path) => capture = Some(path),
                script::Step::Quit => return Ok(Next::Quit),
            }
        }
        if launcher.wants_to_quit() {
            return Ok(Next::Quit);
        }
        if let Some(line) = launcher.take_session() {
            return Ok(Next::Start(line));
        }
        scan_frames.note(launcher.library_scanning(), began.elapsed());
        std::thread::sleep(FRAME.saturating_sub(began.elapsed()));
        // Idle costs nothing: with nothing to animate and no input the
        // next frame waits for an event. A script counts frames, so it
        // runs at the full rate; a pad held down repeats its keys.
        let mut wait = window.menu_repaint_after().min(IDLE_REDRAW);
        if launcher.busy() {
            wait = wait.min(BACKGROUND_WORK_CHECK);
        }
        if script.is_none() && pad.is_empty() {
            window.wait_for_event(wait.saturating_sub(began.elapsed()));
        }
    }
}
