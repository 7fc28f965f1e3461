//! The SDL2 window: an OpenGL 3.3 core context, the [`Renderer`], hotkeys,
//! and the keyboard and game controllers (hot-plugged controllers are
//! opened and announced). Frame loops call [`Window::poll`] for what the
//! player did, [`Window::held`] for the RetroPad buttons held, and
//! [`Window::present`] with the picture to show.

use crate::engine::png::encode_rgb;
use crate::engine::AppError;
use crate::gui::input_map::{ControllerInput, InputMap};
use crate::gui::layout::{fit_frame, overlay_rect, window_size_for, Corner, Rect};
use crate::gui::overlay::Canvas;
use crate::gui::renderer::{DisplayShader, Renderer};
use crate::gui::ui::{BuildUi, Ui};
use crate::gui::GuiError;
use netcode::emulator::VideoFrame;
use netcode::input::{FrameInputs, MAX_PLAYERS};
use sdl2::controller::GameController;
use sdl2::event::{Event, WindowEvent};
use sdl2::keyboard::{Keycode, Mod};
use sdl2::video::{FullscreenType, GLProfile, SwapInterval};
use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};

/// How the game is shown: shader, scaling, vsync, size.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct DisplayArgs {
    /// The display shader: sharp-bilinear, nearest or crt (F2 cycles them).
    #[arg(long, value_name = "NAME", default_value_t = DisplayShader::default())]
    pub shader: DisplayShader,
    /// Scale the picture by whole multiples of its pixels only.
    #[arg(long)]
    pub integer_scale: bool,
    /// Wait for the display's refresh when showing a frame (off by
    /// default: the frame loop's own clock paces the game).
    #[arg(long)]
    pub vsync: bool,
    /// Start in fullscreen (F11 or Alt+Enter toggles it).
    #[arg(long)]
    pub fullscreen: bool,
    /// The window's size in pixels [default: 3 times the game's height, at
    /// its aspect ratio].
    #[arg(long, value_name = "WIDTHxHEIGHT", value_parser = parse_size)]
    pub window_size: Option<(u32, u32)>,
    /// Start with the stats panel shown (F1 toggles it).
    #[arg(long)]
    pub overlay: bool,
    /// Write the window's picture as drawn to PATH (PNG) once FRAME frames
    /// have run (for tests and README pictures).
    #[arg(long, num_args = 2, value_names = ["FRAME", "PATH"])]
    pub screenshot_at: Vec<String>,
}

impl DisplayArgs {
    /// `--screenshot-at FRAME PATH`, checked.
    pub fn screenshot_request(&self) -> Result<Option<(u32, PathBuf)>, AppError> {
        match &self.screenshot_at[..] {
            [] => Ok(None),
            [frame, path] => {
                let frame = frame.parse::<u32>().map_err(|_| AppError::BadArgument {
                    message: format!(
                        "--screenshot-at takes FRAME PATH; {frame:?} is not a frame number"
                    ),
                })?;
                Ok(Some((frame, PathBuf::from(path))))
            }
            _ => Err(AppError::BadArgument {
                message: "--screenshot-at takes FRAME PATH".to_string(),
            }),
        }
    }
}

/// Writes a picture [`Window::present`] captured to `path` as a PNG.
pub fn save_picture(
    path: &Path,
    (width, height, rgb): &(u32, u32, Vec<u8>),
) -> Result<(), AppError> {
    std::fs::write(path, encode_rgb(*width, *height, rgb)).map_err(|source| AppError::WriteFile {
        what: "the screenshot",
        path: path.to_path_buf(),
        source,
    })
}

/// Parses `640x480`.
fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("expected WIDTHxHEIGHT in pixels, like 960x720 (got {text:?})");
    let (width, height) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let width: u32 = width.trim().parse().map_err(|_| bad())?;
    let height: u32 = height.trim().parse().map_err(|_| bad())?;
    if !(1..=16_384).contains(&width) || !(1..=16_384).contains(&height) {
        return Err(bad());
    }
    Ok((width, height))
}

/// Something the player asked for through the window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// The window was closed.
    Quit,
    /// Escape: leave (local play at once; a match asks first).
    Leave,
    /// F1: show or hide the stats panel.
    ToggleOverlay,
    /// F12: save the game's frame as a PNG.
    Screenshot,
    /// P: pause or resume (local play only).
    Pause,
    /// `.`: run one frame while paused.
    StepForward,
    /// `,`: go back one frame while paused.
    StepBack,
    /// M: mark this frame for a later diff.
    Mark,
    /// N: compare the marked frame with this one.
    Diff,
    /// Something to tell the player briefly (a controller connected, the
    /// shader changed).
    Notice(String),
    /// T: open the chat box (in a match).
    Chat,
    /// A key of local play only: save states, reset, fast-forward.
    Local(LocalKey),
    /// A key of a replay's timeline: seek, speed.
    Timeline(TimelineKey),
    /// A key or controller input pressed, while presses are asked for
    /// ([`Window::report_presses`]): the Settings screen's "press a key…".
    Pressed(Pressed),
}

/// The keys of local play that change the game outside its frames, and
/// the volume keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalKey {
    /// F5: save the state into the chosen slot.
    SaveState,
    /// F8: load the chosen slot's state.
    LoadState,
    /// F6: choose the previous slot.
    PreviousSlot,
    /// F7: choose the next slot.
    NextSlot,
    /// F3: the console's reset button.
    Reset,
    /// F4: fast-forward on or off.
    FastForward,
    /// `-`: the volume a tenth down.
    VolumeDown,
    /// `=`: the volume a tenth up.
    VolumeUp,
    /// F9: mute or unmute.
    Mute,
}

/// The keys of a replay's timeline (the arrows only while one is shown,
/// [`Window::show_timeline_keys`]: in play they are player 2's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimelineKey {
    /// Left: 5 s back.
    Back,
    /// Right: 5 s on.
    Forward,
    /// Home: the replay's start.
    Start,
    /// End: its last frame.
    End,
    /// Shift+`,` (`<`): the next slower speed.
    Slower,
    /// Shift+`.` (`>`): the next faster speed.
    Faster,
}

/// A key or a controller input, as the input mapping names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pressed {
    /// A keyboard key.
    Key(Keycode),
    /// A controller's button, stick direction or trigger.
    Controller(ControllerInput),
}

/// The press `event` is, if it is one: a key going down (not a repeat), a
/// controller button going down, or a stick or trigger leaning past the
/// mapping's threshold.
fn press_of(event: &Event) -> Option<Pressed> {
    use crate::gui::input_map::AXIS_THRESHOLD;
    match *event {
        Event::KeyDown {
            keycode: Some(key),
            repeat: false,
            ..
        } => Some(Pressed::Key(key)),
        Event::ControllerButtonDown { button, .. } => {
            Some(Pressed::Controller(ControllerInput::Button(button)))
        }
        Event::ControllerAxisMotion { axis, value, .. } if value >= AXIS_THRESHOLD => {
            Some(Pressed::Controller(ControllerInput::AxisPositive(axis)))
        }
        Event::ControllerAxisMotion { axis, value, .. } if value <= -AXIS_THRESHOLD => {
            Some(Pressed::Controller(ControllerInput::AxisNegative(axis)))
        }
        _ => None,
    }
}

/// An open controller and the player it plays as.
struct Controller {
    controller: GameController,
}

/// The window, its GL context and renderer, egui, and the input devices.
pub struct Window {
    // Dropped before `sdl`: their GL objects need its context.
    renderer: Renderer,
    ui: Ui,
    sdl: Option<SdlWindow>,
    keys_held: HashSet<Keycode>,
    map: InputMap,
    shader: DisplayShader,
    integer_scale: bool,
    overlay_corner: Corner,
    /// Events queued by [`Window::inject`], handled before SDL's own.
    injected: VecDeque<Event>,
    /// Whether presses come back as [`Action::Pressed`] (and nothing else).
    report_presses: bool,
    /// How soon the menu drawn last wants to be drawn again unasked.
    menu_repaint_after: std::time::Duration,
    /// Whether the arrows, Home and End are the timeline's.
    timeline_keys: bool,
    /// Whether the pointer moved or pressed since [`Window::pointer_moved`].
    pointer_moved: bool,
}

/// The SDL window, its GL context and event queue: what the launcher keeps
/// open from one session to the next ([`KeepWindowOpen`]).
struct SdlWindow {
    // Dropped before the window it draws in.
    _gl_context: sdl2::video::GLContext,
    window: sdl2::video::Window,
    events: sdl2::EventPump,
    event_subsystem: sdl2::EventSubsystem,
    controller_subsystem: sdl2::GameControllerSubsystem,
    controllers: Vec<Controller>,
    fullscreen: bool,
    video: sdl2::VideoSubsystem,
    _sdl: sdl2::Sdl,
}

thread_local! {
    /// How many [`KeepWindowOpen`]s live on this thread (a closed window
    /// is kept while any does), and the window kept.
    static SHELF: std::cell::RefCell<(u32, Option<SdlWindow>)> =
        const { std::cell::RefCell::new((0, None)) };
}

/// While this lives, a [`Window`] closed on this thread stays open on the
/// screen and the next [`Window::open`] takes it over: the launcher's one
/// window lives across the sessions it starts, and a joiner's connecting
/// screen becomes its match's window. They nest: the window closes when
/// the last one goes.
pub struct KeepWindowOpen(());

impl KeepWindowOpen {
    /// Starts keeping windows open.
    pub fn start() -> KeepWindowOpen {
        SHELF.with(|shelf| shelf.borrow_mut().0 += 1);
        KeepWindowOpen(())
    }
}

impl Drop for KeepWindowOpen {
    fn drop(&mut self) {
        let kept = SHELF.with(|shelf| {
            let mut shelf = shelf.borrow_mut();
            shelf.0 = shelf.0.saturating_sub(1);
            if shelf.0 == 0 {
                shelf.1.take()
            } else {
                None
            }
        });
        drop(kept);
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        let keeping = SHELF.with(|shelf| shelf.borrow().0 > 0);
        if keeping {
            let sdl = self.sdl.take();
            SHELF.with(|shelf| shelf.borrow_mut().1 = sdl);
        }
    }
}

fn sdl_error(what: &'static str) -> impl FnOnce(String) -> GuiError {
    move |reason| GuiError::Sdl { what, reason }
}

/// Whether the environment names no display for a window. On Linux and
/// the BSDs SDL needs an X server (`DISPLAY`) or a Wayland compositor
/// (`WAYLAND_DISPLAY`); without either it would fall back to drawing
/// offscreen, showing nothing (after libwayland's "XDG_RUNTIME_DIR is
/// invalid" complaint). `SDL_VIDEODRIVER` names a driver on purpose (say
/// `offscreen`) and is trusted. Other systems always have a display.
pub fn no_display(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    let set = |name: &str| var(name).is_some_and(|value| !value.is_empty());
    cfg!(all(unix, not(target_os = "macos")))
        && !set("DISPLAY")
        && !set("WAYLAND_DISPLAY")
        && !set("SDL_VIDEODRIVER")
}

impl SdlWindow {
    /// Opens a resizable window of `size` pixels with an OpenGL 3.3 core
    /// context made current.
    fn open(title: &str, (width, height): (u32, u32)) -> Result<SdlWindow, GuiError> {
        if no_display(|name| std::env::var_os(name)) {
            return Err(GuiError::NoDisplay);
        }
        let sdl = sdl2::init().map_err(sdl_error("start SDL"))?;
        let video = sdl.video().map_err(sdl_error("start SDL's video"))?;
        let gl_attr = video.gl_attr();
        gl_attr.set_context_profile(GLProfile::Core);
        gl_attr.set_context_version(3, 3);
        gl_attr.set_double_buffer(true);
        let window = video
            .window(title, width, height)
            .opengl()
            .resizable()
            .position_centered()
            .build()
            .map_err(|err| GuiError::Sdl {
                what: "open the window",
                reason: err.to_string(),
            })?;
        let gl_context = window
            .gl_create_context()
            .map_err(sdl_error("create an OpenGL 3.3 core context"))?;
        window
            .gl_make_current(&gl_context)
            .map_err(sdl_error("use the OpenGL context"))?;
        let events = sdl.event_pump().map_err(sdl_error("read input events"))?;
        let event_subsystem = sdl.event().map_err(sdl_error("start SDL's events"))?;
        let controller_subsystem = sdl
            .game_controller()
            .map_err(sdl_error("start SDL's game controllers"))?;
        Ok(SdlWindow {
            _gl_context: gl_context,
            window,
            events,
            event_subsystem,
            controller_subsystem,
            controllers: Vec::new(),
            fullscreen: false,
            video,
            _sdl: sdl,
        })
    }
}

/// Vsync as asked, where the driver lets it be set.
fn set_vsync(video: &sdl2::VideoSubsystem, vsync: bool) {
    let interval = if vsync {
        SwapInterval::VSync
    } else {
        SwapInterval::Immediate
    };
    if let Err(reason) = video.gl_set_swap_interval(interval) {
        // Drivers without swap control (Xvfb's) never wait anyway.
        if vsync {
            tracing::warn!("cannot turn vsync on: {reason}");
        } else {
            tracing::debug!("cannot turn vsync off: {reason}");
        }
    }
}

impl Window {
    /// Opens a resizable window titled `title` for a game whose frames are
    /// `source` pixels shown at `aspect`, with an OpenGL 3.3 core context
    /// and every shader compiled. The input mapping is read once the window
    /// is open (reading it may write the default file and say so: not for
    /// a window that cannot open).
    pub fn open(
        title: &str,
        source: (u32, u32),
        aspect: f32,
        display: &DisplayArgs,
        map: impl FnOnce() -> InputMap,
    ) -> Result<Window, GuiError> {
        let kept = SHELF.with(|shelf| shelf.borrow_mut().1.take());
        let sdl = match kept {
            Some(sdl) => {
                let mut sdl = sdl;
                // A title SDL cannot set (a NUL inside) keeps the old one.
                let _ = sdl.window.set_title(title);
                sdl
            }
            None => {
                let size = display
                    .window_size
                    .unwrap_or_else(|| window_size_for(source, aspect, 3));
                SdlWindow::open(title, size)?
            }
        };
        set_vsync(&sdl.video, display.vsync);
        let gl = crate::gui::renderer::load_gl(&sdl.video);
        let renderer = Renderer::new(gl)?;
        tracing::info!("OpenGL {}", renderer.gl_version());
        let ui = Ui::new(&sdl.window, renderer.ui_painter()?);
        let mut window = Window {
            renderer,
            ui,
            sdl: Some(sdl),
            keys_held: HashSet::new(),
            map: map(),
            shader: display.shader,
            integer_scale: display.integer_scale,
            overlay_corner: Corner::default(),
            injected: VecDeque::new(),
            report_presses: false,
            menu_repaint_after: std::time::Duration::ZERO,
            timeline_keys: false,
            pointer_moved: false,
        };
        if display.fullscreen != window.sdl().fullscreen {
            window.toggle_fullscreen();
        }
        Ok(window)
    }

    fn sdl(&self) -> &SdlWindow {
        self.sdl
            .as_ref()
            .expect("the SDL window is only taken from a window being dropped")
    }

    fn sdl_mut(&mut self) -> &mut SdlWindow {
        self.sdl
            .as_mut()
            .expect("the SDL window is only taken from a window being dropped")
    }

    /// The GL version and renderer, e.g. `4.5 (Core Profile) Mesa 22.3.6 (llvmpipe …)`.
    pub fn gl_version(&self) -> String {
        self.renderer.gl_version()
    }

    /// Compiles and links a fragment shader with the display vertex shader
    /// on this window's context (every shader netcade ships is built when
    /// the window opens; this checks others, and tests use it).
    pub fn check_shader(&self, name: &str, fragment: &str) -> Result<(), GuiError> {
        self.renderer.check_shader(name, fragment)
    }

    /// The drawable size in pixels.
    pub fn size(&self) -> (u32, u32) {
        self.sdl().window.drawable_size()
    }

    /// The display shader in use.
    pub fn shader(&self) -> DisplayShader {
        self.shader
    }

    /// Queues an event as if SDL had received it (tests inject keys this way).
    pub fn push_event(&self, event: Event) -> Result<(), GuiError> {
        self.sdl()
            .event_subsystem
            .push_event(event)
            .map_err(sdl_error("queue an event"))
    }

    /// Queues an event for the next [`Window::poll`], handled exactly as
    /// SDL's own (the launcher's scripted tests type text this way: SDL
    /// cannot queue text input events, and egui ignores keys without a
    /// scancode).
    pub fn inject(&mut self, event: Event) {
        self.injected.push_back(event);
    }

    /// The input mapping in use.
    pub fn input_map(&self) -> &InputMap {
        &self.map
    }

    /// While `on`, every key or controller press comes back from
    /// [`Window::poll`] as [`Action::Pressed`] and does nothing else.
    pub fn report_presses(&mut self, on: bool) {
        self.report_presses = on;
    }

    /// Forgets what egui gathered since the last menu was drawn (the text
    /// of the key that opened the chat box).
    pub fn discard_ui_input(&mut self) {
        self.ui.discard_input();
    }

    /// Lets go of every key held: their releases went to a text field,
    /// and must not leave the game's buttons pressed.
    pub fn release_keys(&mut self) {
        self.keys_held.clear();
    }

    /// The corner the overlay is drawn in.
    pub fn overlay_corner(&self) -> Corner {
        self.overlay_corner
    }

    /// How soon the menu drawn last wants to be drawn again with no new
    /// input (`Duration::MAX`: only once something happens).
    pub fn menu_repaint_after(&self) -> std::time::Duration {
        self.menu_repaint_after
    }

    /// Sleeps until an event comes or `timeout` passes, whichever is
    /// first; the event is handled by the next [`Window::poll`]. What a
    /// screen that has nothing to animate waits with instead of drawing.
    pub fn wait_for_event(&mut self, timeout: std::time::Duration) {
        if !self.injected.is_empty() || timeout.is_zero() {
            return;
        }
        let millis = u32::try_from(timeout.as_millis())
            .unwrap_or(u32::MAX)
            .max(1);
        if let Some(event) = self.sdl_mut().events.wait_event_timeout(millis) {
            self.injected.push_back(event);
        }
    }

    /// Handles every pending event: keys and controllers update what is
    /// held, the window's own keys (F2 shader, F11/Alt+Enter fullscreen,
    /// Shift+F1 the overlay's corner) act at once, the rest come back as
    /// actions.
    pub fn poll(&mut self) -> Vec<Action> {
        let mut actions = Vec::new();
        let mut events: Vec<Event> = self.injected.drain(..).collect();
        events.extend(self.sdl_mut().events.poll_iter());
        for event in events {
            if let Some(pressed) = press_of(&event).filter(|_| self.report_presses) {
                actions.push(Action::Pressed(pressed));
                continue;
            }
            let sdl = self.sdl.as_ref().expect("a live window has its SDL window");
            if matches!(
                event,
                Event::MouseMotion { .. } | Event::MouseButtonDown { .. }
            ) {
                self.pointer_moved = true;
            }
            if self.ui.on_event(&sdl.window, &event) {
                continue;
            }
            match event {
                Event::Quit { .. }
                | Event::Window {
                    win_event: WindowEvent::Close,
                    ..
                } => actions.push(Action::Quit),
                Event::KeyDown {
                    keycode: Some(key),
                    keymod,
                    repeat,
                    ..
                } => {
                    self.keys_held.insert(key);
                    if !repeat {
                        if let Some(action) = self.hotkey(key, keymod) {
                            actions.push(action);
                        }
                    }
                }
                Event::KeyUp {
                    keycode: Some(key), ..
                } => {
                    self.keys_held.remove(&key);
                }
                Event::ControllerDeviceAdded { which, .. } => {
                    if let Some(notice) = self.add_controller(which) {
                        actions.push(Action::Notice(notice));
                    }
                }
                Event::ControllerDeviceRemoved { which, .. } => {
                    let controllers = &mut self.sdl_mut().controllers;
                    if let Some(index) = controllers
                        .iter()
                        .position(|c| c.controller.instance_id() == which)
                    {
                        let gone = controllers.remove(index);
                        actions.push(Action::Notice(format!(
                            "controller disconnected: {}",
                            gone.controller.name()
                        )));
                    }
                }
                _ => {}
            }
        }
        actions
    }

    /// Opens the controller SDL just announced.
    fn add_controller(&mut self, joystick_index: u32) -> Option<String> {
        let sdl = self.sdl_mut();
        match sdl.controller_subsystem.open(joystick_index) {
            Ok(controller) => {
                let id = controller.instance_id();
                if sdl
                    .controllers
                    .iter()
                    .any(|c| c.controller.instance_id() == id)
                {
                    return None;
                }
                let notice = format!(
                    "controller connected: {} (controller {})",
                    controller.name(),
                    sdl.controllers.len() + 1
                );
                sdl.controllers.push(Controller { controller });
                Some(notice)
            }
            Err(err) => Some(format!("cannot open controller {joystick_index}: {err}")),
        }
    }

    fn hotkey(&mut self, key: Keycode, keymod: Mod) -> Option<Action> {
        let alt = keymod.intersects(Mod::LALTMOD | Mod::RALTMOD);
        let shift = keymod.intersects(Mod::LSHIFTMOD | Mod::RSHIFTMOD);
        match key {
            Keycode::Escape => Some(Action::Leave),
            Keycode::F1 if shift => {
                self.overlay_corner = self.overlay_corner.next();
                None
            }
            Keycode::F1 => Some(Action::ToggleOverlay),
            Keycode::F2 => {
                self.next_shader();
                Some(Action::Notice(format!("shader: {}", self.shader)))
            }
            Keycode::F11 => self.toggle_fullscreen(),
            Keycode::Return if alt => self.toggle_fullscreen(),
            Keycode::F12 => Some(Action::Screenshot),
            Keycode::P => Some(Action::Pause),
            Keycode::Period if shift => Some(Action::Timeline(TimelineKey::Faster)),
            Keycode::Comma if shift => Some(Action::Timeline(TimelineKey::Slower)),
            Keycode::Period => Some(Action::StepForward),
            Keycode::Comma => Some(Action::StepBack),
            Keycode::Left if self.timeline_keys => Some(Action::Timeline(TimelineKey::Back)),
            Keycode::Right if self.timeline_keys => Some(Action::Timeline(TimelineKey::Forward)),
            Keycode::Home if self.timeline_keys => Some(Action::Timeline(TimelineKey::Start)),
            Keycode::End if self.timeline_keys => Some(Action::Timeline(TimelineKey::End)),
            Keycode::M => Some(Action::Mark),
            Keycode::N => Some(Action::Diff),
            Keycode::T => Some(Action::Chat),
            Keycode::F3 => Some(Action::Local(LocalKey::Reset)),
            Keycode::F5 => Some(Action::Local(LocalKey::SaveState)),
            Keycode::F6 => Some(Action::Local(LocalKey::PreviousSlot)),
            Keycode::F7 => Some(Action::Local(LocalKey::NextSlot)),
            Keycode::F8 => Some(Action::Local(LocalKey::LoadState)),
            Keycode::F4 => Some(Action::Local(LocalKey::FastForward)),
            Keycode::Minus => Some(Action::Local(LocalKey::VolumeDown)),
            Keycode::Equals => Some(Action::Local(LocalKey::VolumeUp)),
            Keycode::F9 => Some(Action::Local(LocalKey::Mute)),
            _ => None,
        }
    }

    /// Makes the arrows, Home and End seek a replay's timeline (`on`), or
    /// play again.
    pub fn show_timeline_keys(&mut self, on: bool) {
        self.timeline_keys = on;
    }

    /// Whether the pointer moved (or a button went down) since last asked.
    pub fn pointer_moved(&mut self) -> bool {
        std::mem::take(&mut self.pointer_moved)
    }

    /// Switches to the next display shader (F2).
    pub fn next_shader(&mut self) {
        self.shader = self.shader.next();
    }

    /// Fullscreen on or off (F11); a notice when SDL refuses.
    pub fn toggle_fullscreen(&mut self) -> Option<Action> {
        let sdl = self.sdl_mut();
        let wanted = if sdl.fullscreen {
            FullscreenType::Off
        } else {
            FullscreenType::Desktop
        };
        match sdl.window.set_fullscreen(wanted) {
            Ok(()) => {
                sdl.fullscreen = !sdl.fullscreen;
                None
            }
            Err(err) => Some(Action::Notice(format!("cannot switch fullscreen: {err}"))),
        }
    }

    /// The buttons each of `players` local players holds: player `p`'s
    /// keyboard keys, and controller `c` for player `c % players`.
    pub fn held(&self, players: usize) -> FrameInputs {
        let players = players.clamp(1, MAX_PLAYERS);
        let mut held = [netcode::input::Buttons::NONE; MAX_PLAYERS];
        for (player, buttons) in held.iter_mut().enumerate().take(players) {
            *buttons = self.map.keyboard_buttons(player, &self.keys_held);
        }
        for (index, controller) in self.sdl().controllers.iter().enumerate() {
            let pad = &controller.controller;
            held[index % players] = held[index % players]
                | self
                    .map
                    .controller_buttons(|b| pad.button(b), |a| pad.axis(a));
        }
        held
    }

    /// The RetroPad buttons the controllers hold, together (the menus'
    /// pad navigation reads them; the keyboard types instead).
    pub fn controller_buttons(&self) -> netcode::input::Buttons {
        self.sdl()
            .controllers
            .iter()
            .fold(netcode::input::Buttons::NONE, |held, controller| {
                let pad = &controller.controller;
                held | self
                    .map
                    .controller_buttons(|b| pad.button(b), |a| pad.axis(a))
            })
    }

    /// The keys held now, by SDL name (for `netcade input --test`).
    pub fn keys_held(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .keys_held
            .iter()
            .map(|&key| crate::gui::input_map::key_name(key))
            .collect();
        names.sort();
        names
    }

    /// Where the picture of `source` pixels at `aspect` goes now.
    pub fn picture_rect(&self, source: (u32, u32), aspect: f32) -> Rect {
        fit_frame(self.size(), source, aspect, self.integer_scale)
    }

    /// Draws and shows a picture: `frame` when a new one ran (else the
    /// last one uploaded stays), letterboxed at `aspect`, with `overlay`
    /// over it. With `capture`, returns the window's picture as drawn
    /// (width, height, RGB rows top first).
    pub fn present(
        &mut self,
        frame: Option<&VideoFrame<'_>>,
        aspect: f32,
        overlay: Option<&Canvas>,
        capture: bool,
    ) -> Option<(u32, u32, Vec<u8>)> {
        self.present_with_menu(frame, aspect, overlay, None, capture)
    }

    /// [`Window::present`], with a menu `menu` lays out drawn last, over
    /// the picture and the overlay.
    pub fn present_with_menu(
        &mut self,
        frame: Option<&VideoFrame<'_>>,
        aspect: f32,
        overlay: Option<&Canvas>,
        menu: Option<BuildUi<'_>>,
        capture: bool,
    ) -> Option<(u32, u32, Vec<u8>)> {
        if let Some(frame) = frame {
            self.renderer.upload_frame(frame);
        }
        let size = self.size();
        let picture = self
            .renderer
            .frame_size()
            .map(|source| (self.picture_rect(source, aspect), self.shader));
        let overlay_rect = overlay.map(|canvas| {
            self.renderer
                .upload_overlay(canvas.width, canvas.height, &canvas.rgba);
            overlay_rect(size, (canvas.width, canvas.height), self.overlay_corner)
        });
        self.renderer.draw(size, picture, overlay_rect);
        self.menu_repaint_after = match menu {
            Some(menu) => self.ui.draw(size, menu),
            None => {
                self.ui.discard_input();
                std::time::Duration::ZERO
            }
        };
        let captured = capture.then(|| (size.0, size.1, self.renderer.read_window(size)));
        self.sdl().window.gl_swap_window();
        captured
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_needs_an_x_or_wayland_display_or_a_driver_named_on_purpose() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| std::ffi::OsString::from(value))
            }
        };
        let on_linux = cfg!(all(unix, not(target_os = "macos")));
        assert_eq!(no_display(env(&[])), on_linux);
        assert_eq!(no_display(env(&[("DISPLAY", "")])), on_linux);
        assert!(!no_display(env(&[("DISPLAY", ":99")])));
        assert!(!no_display(env(&[("WAYLAND_DISPLAY", "wayland-0")])));
        assert!(!no_display(env(&[("SDL_VIDEODRIVER", "offscreen")])));
    }

    #[test]
    fn a_screenshot_request_needs_a_frame_number_and_a_path() {
        let asking = |values: &[&str]| DisplayArgs {
            screenshot_at: values.iter().map(|v| v.to_string()).collect(),
            ..DisplayArgs::default()
        };
        assert_eq!(asking(&[]).screenshot_request().unwrap(), None);
        let request = asking(&["60", "shot.png"]).screenshot_request().unwrap();
        assert_eq!(request, Some((60, PathBuf::from("shot.png"))));
        let err = asking(&["soon", "shot.png"])
            .screenshot_request()
            .unwrap_err();
        assert!(err.to_string().contains("\"soon\""), "{err}");
        assert_eq!(err.exit_code(), crate::engine::error::EXIT_USER_MISTAKE);
    }

    #[test]
    fn window_sizes_parse_and_nonsense_is_refused() {
        assert_eq!(parse_size("640x480"), Ok((640, 480)));
        assert_eq!(parse_size("1920X1080"), Ok((1920, 1080)));
        for bad in ["640", "0x480", "axb", "99999x10"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }
}
