//! A launcher script (`netcade menu --script FILE`): one step a line, run
//! one a frame, fed to the window as SDL events through
//! [`Window::inject`], the path every real event takes:
//!
//! ```text
//! click Host                 # the widget labelled "Host"
//! press Timeline             # pressed, let go a frame later (a slider)
//! type 127.0.0.1:7000        # text typed into the focused field
//! key Return                 # a key (SDL's name), with Ctrl+ for the modifier
//! wait 30                    # 30 frames
//! screenshot launcher.png    # the window's picture as drawn
//! text lines.txt             # the lines of text drawn, one a line
//! quit
//! ```
//!
//! A step written after `session ` runs in the window of the session the
//! launcher started (`session click Cancel` on a host's waiting panel,
//! `session screenshot menu.png`); the script waits for the session to get
//! there, and the launcher waits for the session's steps to be done.
//! Blank lines and lines starting with `#` are skipped.

use crate::engine::AppError;
use crate::gui::window::Window;
use sdl2::event::Event;
use sdl2::keyboard::{Keycode, Mod, Scancode};
use sdl2::mouse::{MouseButton, MouseState};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};

/// Where each labelled widget was drawn last frame, in window pixels.
#[derive(Debug, Default)]
pub struct Targets {
    rects: HashMap<String, egui::Rect>,
    pixels_per_point: f32,
    /// The lines of text drawn through [`Targets::heading`] and
    /// [`Targets::line`], top to bottom (what a script's `text` reads).
    lines: Vec<String>,
}

impl Targets {
    /// Forgets last frame's widgets.
    pub fn clear(&mut self, pixels_per_point: f32) {
        self.rects.clear();
        self.lines.clear();
        self.pixels_per_point = pixels_per_point;
    }

    /// A heading, kept among the lines drawn.
    pub fn heading(&mut self, ui: &mut egui::Ui, text: &str) -> egui::Response {
        self.lines.push(text.to_string());
        ui.heading(text)
    }

    /// A line of text, kept among the lines drawn.
    pub fn line(&mut self, ui: &mut egui::Ui, text: &str) -> egui::Response {
        self.lines.push(text.to_string());
        ui.label(text)
    }

    /// The lines of text drawn last frame, top to bottom.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// A button labelled `label`.
    pub fn button(&mut self, ui: &mut egui::Ui, label: &str) -> egui::Response {
        let response = ui.button(label);
        self.rects.insert(label.to_string(), response.rect);
        response
    }

    /// A widget drawn at `rect`, named `name` for scripts.
    pub fn mark(&mut self, name: &str, rect: egui::Rect) {
        self.rects.insert(name.to_string(), rect);
    }

    /// A button showing `label`, named `name` for scripts (its label
    /// changes, as a binding's does).
    pub fn button_as(&mut self, ui: &mut egui::Ui, name: &str, label: &str) -> egui::Response {
        let response = ui.button(label);
        self.rects.insert(name.to_string(), response.rect);
        response
    }

    /// A line of a list that can be chosen, labelled `label`.
    pub fn selectable(&mut self, ui: &mut egui::Ui, chosen: bool, label: &str) -> egui::Response {
        let response = ui.selectable_label(chosen, label);
        self.rects.insert(label.to_string(), response.rect);
        response
    }

    /// A checkbox labelled `label`.
    pub fn checkbox(
        &mut self,
        ui: &mut egui::Ui,
        checked: &mut bool,
        label: &str,
    ) -> egui::Response {
        let response = ui.checkbox(checked, label);
        self.rects.insert(label.to_string(), response.rect);
        response
    }

    /// A labelled one-line text field; whether Enter was pressed in it.
    pub fn text_field(&mut self, ui: &mut egui::Ui, label: &str, text: &mut String) -> bool {
        let response = ui
            .horizontal(|ui| {
                ui.label(label);
                ui.text_edit_singleline(text)
            })
            .inner;
        self.rects.insert(label.to_string(), response.rect);
        response.lost_focus() && ui.input(|input| input.key_pressed(egui::Key::Enter))
    }

    /// The centre of the widget labelled `label`, in window pixels.
    pub fn centre(&self, label: &str) -> Option<(i32, i32)> {
        let centre = self.rects.get(label)?.center();
        let scale = self.pixels_per_point;
        Some(((centre.x * scale) as i32, (centre.y * scale) as i32))
    }
}

/// Where a step runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The launcher's screens.
    Launcher,
    /// The window of the session it started.
    Session,
}

/// One line of a script.
#[derive(Clone, Debug, PartialEq)]
enum Command {
    Click(String),
    /// Pressed one frame, let go the next: what a slider (a drag) takes.
    Press(String),
    Type(String),
    Key(Keycode, Mod),
    Wait(u32),
    Screenshot(PathBuf),
    Text(PathBuf),
    Quit,
}

/// What the launcher does after a step.
pub enum Step {
    /// Draw the next frame.
    Continue,
    /// Draw the next frame and save its picture here.
    Capture(PathBuf),
    /// Close the launcher.
    Quit,
}

/// A script being run.
pub struct Script {
    path: PathBuf,
    /// (line number, where, step) still to run.
    steps: VecDeque<(usize, Place, Command)>,
    /// Events for the next frames (a key's release comes a frame after its
    /// press).
    later: VecDeque<Event>,
    waiting: u32,
}

impl Script {
    /// Reads and checks a script file.
    pub fn load(path: &Path) -> Result<Script, AppError> {
        let text = std::fs::read_to_string(path).map_err(|source| AppError::OpenFile {
            what: "the launcher script",
            path: path.to_path_buf(),
            source,
        })?;
        let steps = parse(&text).map_err(|(line, message)| AppError::BadArgument {
            message: format!("{} line {line}: {message}", path.display()),
        })?;
        Ok(Script {
            path: path.to_path_buf(),
            steps: steps.into(),
            later: VecDeque::new(),
            waiting: 0,
        })
    }

    /// The session it lent itself to ended: a session step still next
    /// can never run, and is a mistake rather than a wait forever.
    pub fn session_ended(&self) -> Result<(), AppError> {
        match self.steps.front() {
            Some((line, Place::Session, _)) => Err(AppError::BadArgument {
                message: format!(
                    "{} line {line}: the session ended before this step ran",
                    self.path.display()
                ),
            }),
            _ => Ok(()),
        }
    }

    /// Runs the next step (or waits), feeding its events to `window`, when
    /// that step runs at `place`.
    pub fn step(
        &mut self,
        window: &mut Window,
        targets: &Targets,
        place: Place,
    ) -> Result<Step, AppError> {
        if let Some(event) = self.later.pop_front() {
            window.inject(event);
            return Ok(Step::Continue);
        }
        if self.waiting > 0 {
            self.waiting -= 1;
            return Ok(Step::Continue);
        }
        if self.steps.front().is_none_or(|(_, at, _)| *at != place) {
            return Ok(Step::Continue);
        }
        let Some((line, _, command)) = self.steps.pop_front() else {
            return Ok(Step::Continue);
        };
        let centre = |label: &str| {
            targets.centre(label).ok_or_else(|| AppError::BadArgument {
                message: format!(
                    "{} line {line}: nothing labelled {label:?} on this screen",
                    self.path.display()
                ),
            })
        };
        match command {
            Command::Press(label) => {
                let (x, y) = centre(&label)?;
                window.inject(mouse_motion(x, y));
                window.inject(mouse_button(true, x, y));
                self.later.push_back(mouse_button(false, x, y));
                self.waiting = 1;
            }
            Command::Click(label) => {
                let (x, y) = centre(&label)?;
                // Press and release in one frame, before SDL's own events:
                // the real pointer (another window mapped under it on a
                // shared display) cannot move between them.
                window.inject(mouse_motion(x, y));
                window.inject(mouse_button(true, x, y));
                window.inject(mouse_button(false, x, y));
                // The screen a click opens is laid out a frame later.
                self.waiting = 1;
            }
            Command::Type(text) => {
                window.inject(Event::TextInput {
                    timestamp: 0,
                    window_id: 0,
                    text,
                });
                self.waiting = 1;
            }
            Command::Key(key, keymod) => {
                window.inject(key_event(true, key, keymod));
                // The modifier is let go with the key.
                self.later.push_back(key_event(false, key, Mod::NOMOD));
                self.waiting = 1;
            }
            Command::Wait(frames) => self.waiting = frames,
            Command::Screenshot(path) => return Ok(Step::Capture(path)),
            Command::Text(path) => {
                let mut text = targets.lines().join("\n");
                text.push('\n');
                std::fs::write(&path, text).map_err(|source| AppError::WriteFile {
                    what: "the lines a script asked for",
                    path,
                    source,
                })?;
            }
            Command::Quit => return Ok(Step::Quit),
        }
        Ok(Step::Continue)
    }
}

thread_local! {
    /// The launcher's script, lent to the session running in this thread.
    static LENT: std::cell::RefCell<Option<Script>> = const { std::cell::RefCell::new(None) };
}

/// Lends `script` to the session about to run in this thread.
pub fn lend(script: Option<Script>) {
    LENT.with(|lent| *lent.borrow_mut() = script);
}

/// The script lent to the session, back once it ended.
pub fn take_back() -> Option<Script> {
    LENT.with(|lent| lent.borrow_mut().take())
}

/// Runs the lent script's next session step in a session's `window`
/// (`None` when the session runs without a script).
fn step_lent(window: &mut Window, targets: &Targets) -> Option<Result<Step, AppError>> {
    LENT.with(|lent| {
        let mut lent = lent.borrow_mut();
        let script = lent.as_mut()?;
        Some(script.step(window, targets, Place::Session))
    })
}

/// Runs the lent script's next session step in a session's `window`: the
/// path of a picture to save next, and whether the session ends there (the
/// script quits, or its step was a mistake, said on stderr).
pub fn session_step(window: &mut Window, targets: &Targets) -> (Option<PathBuf>, bool) {
    match step_lent(window, targets) {
        None | Some(Ok(Step::Continue)) => (None, false),
        Some(Ok(Step::Capture(path))) => (Some(path), false),
        Some(Ok(Step::Quit)) => (None, true),
        Some(Err(error)) => {
            eprintln!("error: {}", crate::engine::error::error_chain(&error));
            (None, true)
        }
    }
}

fn mouse_motion(x: i32, y: i32) -> Event {
    Event::MouseMotion {
        timestamp: 0,
        window_id: 0,
        which: 0,
        mousestate: MouseState::from_sdl_state(0),
        x,
        y,
        xrel: 0,
        yrel: 0,
    }
}

fn mouse_button(down: bool, x: i32, y: i32) -> Event {
    let (timestamp, window_id, which, mouse_btn, clicks) = (0, 0, 0, MouseButton::Left, 1);
    if down {
        Event::MouseButtonDown {
            timestamp,
            window_id,
            which,
            mouse_btn,
            clicks,
            x,
            y,
        }
    } else {
        Event::MouseButtonUp {
            timestamp,
            window_id,
            which,
            mouse_btn,
            clicks,
            x,
            y,
        }
    }
}

/// A key pressed or let go, as SDL reports it (with its scancode).
pub fn key_event(down: bool, keycode: Keycode, keymod: Mod) -> Event {
    key(down, keycode, keymod, false)
}

/// A key's press repeated by the keyboard, the key being held.
pub fn key_repeated(keycode: Keycode) -> Event {
    key(true, keycode, Mod::NOMOD, true)
}

fn key(down: bool, keycode: Keycode, keymod: Mod, repeat: bool) -> Event {
    // egui-sdl2 skips keys without a scancode.
    let scancode = Scancode::from_keycode(keycode);
    let (timestamp, window_id, keycode) = (0, 0, Some(keycode));
    if down {
        Event::KeyDown {
            timestamp,
            window_id,
            keycode,
            scancode,
            keymod,
            repeat,
        }
    } else {
        Event::KeyUp {
            timestamp,
            window_id,
            keycode,
            scancode,
            keymod,
            repeat,
        }
    }
}

/// A script's steps: line number, where it runs, and what it does.
type Steps = Vec<(usize, Place, Command)>;

/// The steps of a script, or the line and what is wrong with it.
fn parse(text: &str) -> Result<Steps, (usize, String)> {
    let mut steps = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (place, line) = match line.strip_prefix("session ") {
            Some(rest) => (Place::Session, rest.trim()),
            None => (Place::Launcher, line),
        };
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let rest = rest.trim();
        let command = match word {
            "click" if !rest.is_empty() => Command::Click(rest.to_string()),
            "press" if !rest.is_empty() => Command::Press(rest.to_string()),
            "type" if !rest.is_empty() => Command::Type(rest.to_string()),
            "key" => parse_key(rest).map_err(|message| (number, message))?,
            "wait" => Command::Wait(rest.parse().map_err(|_| {
                (number, format!("wait takes a number of frames (got {rest:?})"))
            })?),
            "screenshot" if !rest.is_empty() => Command::Screenshot(PathBuf::from(rest)),
            "text" if !rest.is_empty() => Command::Text(PathBuf::from(rest)),
            "quit" if rest.is_empty() => Command::Quit,
            _ => return Err((number, format!("unknown step {line:?} (click LABEL, press LABEL, type TEXT, key NAME, wait FRAMES, screenshot PATH, text PATH, quit)"))),
        };
        steps.push((number, place, command));
    }
    Ok(steps)
}

/// `Return`, `Ctrl+A`: a key by SDL's name, with an optional Ctrl.
fn parse_key(text: &str) -> Result<Command, String> {
    let (keymod, name) = match text.strip_prefix("Ctrl+") {
        Some(name) => (Mod::LCTRLMOD, name),
        None => (Mod::NOMOD, text),
    };
    let key = Keycode::from_name(name)
        .ok_or_else(|| format!("unknown key {name:?} (SDL key names: Return, Escape, Tab, A…)"))?;
    Ok(Command::Key(key, keymod))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_reads_one_step_a_line_and_names_the_line_of_a_mistake() {
        let steps = parse("# a comment\n\nclick Host\ntype 127.0.0.1:7000\nkey Ctrl+A\nwait 3\nscreenshot a.png\ntext a.txt\nquit\n").unwrap();
        let commands: Vec<Command> = steps.into_iter().map(|(_, _, command)| command).collect();
        assert_eq!(
            commands,
            vec![
                Command::Click("Host".to_string()),
                Command::Type("127.0.0.1:7000".to_string()),
                Command::Key(Keycode::A, Mod::LCTRLMOD),
                Command::Wait(3),
                Command::Screenshot(PathBuf::from("a.png")),
                Command::Text(PathBuf::from("a.txt")),
                Command::Quit,
            ]
        );
        let session = parse("click Host the match\nsession click Cancel\nwait 1\n").unwrap();
        let places: Vec<Place> = session.iter().map(|(_, place, _)| *place).collect();
        assert_eq!(places, [Place::Launcher, Place::Session, Place::Launcher]);
        assert_eq!(session[1].2, Command::Click("Cancel".to_string()));
        assert_eq!(parse("click Host\nwait soon").unwrap_err().0, 2);
        assert!(parse("key NoSuchKey").unwrap_err().1.contains("NoSuchKey"));
        assert!(parse("dance").unwrap_err().1.starts_with("unknown step"));
    }

    #[test]
    fn a_session_step_left_when_its_session_ended_is_an_error_naming_its_line() {
        let script = |text: &str| Script {
            path: PathBuf::from("join.txt"),
            steps: parse(text).unwrap().into(),
            later: VecDeque::new(),
            waiting: 0,
        };
        assert!(script("wait 1\nsession wait 400\n").session_ended().is_ok());
        let left = script("session screenshot after.png\nquit\n");
        assert_eq!(
            left.session_ended().unwrap_err().to_string(),
            "join.txt line 1: the session ended before this step ran"
        );
    }
}
