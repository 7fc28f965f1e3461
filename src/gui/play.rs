//! `netcade play`: local play in a window, and `netcade input`. Local play
//! runs on the debugger's engine ([`Debugger`]), so pause (P), step (.),
//! step back (,), mark (M) and diff (N) are the `debug` command's own
//! `step`, `back`, `mark` and `diff`, shown in the overlay.

use crate::engine::blank_content::BlankContentWatch;
use crate::engine::debugger::{
    Command, CommandError, Debugger, RecordedFrames, DEFAULT_HISTORY, DEFAULT_HISTORY_MB,
};
use crate::engine::error::error_chain;
use crate::engine::frame_clock::FrameClock;
use crate::engine::inputs::NO_INPUTS;
use crate::engine::png::{encode_rgb, frame_to_rgb};
use crate::engine::recorded_state::RecordedState;
use crate::engine::sinks::audio_file::AudioArgs;
use crate::engine::sinks::run_ahead::RunAheadArgs;
use crate::engine::sinks::speaker::{open_speaker_for, SpeakerArgs};
use crate::engine::sinks::FrameSink;
use crate::engine::state_slots::{SavedState, StateSlots};
use crate::engine::{AppError, Game};
use crate::gui::match_menu::MatchMenu;
use crate::gui::match_menu::{carry_out, menu_details, LeaveConfirmation, LEAVE_CONFIRM_MS};
use crate::gui::menu::script::Targets;
use crate::gui::overlay::Overlay;
use crate::gui::timeline::{speed_label, Timeline, TimelineChoice};
use crate::gui::volume::Volume;
use crate::gui::window::{save_picture, Action, DisplayArgs, LocalKey, Window};
use netcode::checksum::Checksums;
use netcode::input::FrameInputs;
use netcode::replay::Replay;
use netcode::rollback::Frame;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a first Esc in local play says.
pub const QUIT_QUESTION: &str = "press Esc again to quit";

/// How often the window is redrawn while no frame runs (paused).
const REDRAW_WITHOUT_FRAMES: Duration = Duration::from_millis(50);
/// How long the timeline stays after the pointer moved or it was used.
const TIMELINE_SHOWN_MS: u64 = 3_000;
/// The shortest time between two pictures (120 a second at most).
const MIN_PICTURE_INTERVAL: Duration = Duration::from_millis(8);
/// How often a window with a timeline is redrawn while no frame runs.
const REDRAW_WITH_TIMELINE: Duration = Duration::from_millis(16);
/// What a replay says to the keys of local play.
const NOT_HERE: &str = "save states and reset are for local play, not a replay";
/// How much faster fast-forward runs.
const FAST_FORWARD_SPEED: f64 = 4.0;
/// How long one pass of the loop may spend seeking before it draws.
const SEEK_SLICE: Duration = Duration::from_millis(12);
/// Frames a seek runs between two looks at the clock.
const SEEK_FRAMES_AT_ONCE: u32 = 16;
/// How long the notice about content that shows nothing stays up.
const BLANK_NOTICE_MS: u64 = 10_000;

/// Where the window's input mapping comes from (kept in `input_map`, which
/// the launcher's menus use too).
pub use crate::gui::input_map::load_input_map;

/// The place a frame's sound goes: the speaker (or, with no usable device
/// or `--no-audio`, nothing).
pub fn audio_output(
    game: &dyn Game,
    audio: &AudioArgs,
    speaker: &SpeakerArgs,
) -> Result<Box<dyn FrameSink>, AppError> {
    let speaker = open_speaker_for(audio, speaker, false, game.sample_rate())?;
    Ok(Box::new(speaker))
}

/// Where F12 puts screenshots: `screenshots/` in netcade's data directory.
fn screenshot_dir() -> PathBuf {
    crate::paths::data_subdir("screenshots")
}

/// Writes the game's current frame as a PNG under `dir`, named after the
/// core and frame (`-2`, `-3`, … when taken again).
fn save_game_frame(game: &dyn Game, frame: u32, dir: &Path) -> Result<PathBuf, AppError> {
    let picture = game.video_frame().ok_or(AppError::NoVideoFrame)?;
    let base = format!("{}-frame{frame}", game.core_name().replace(['/', ' '], "_"));
    let mut path = dir.join(format!("{base}.png"));
    let mut attempt = 1;
    while path.exists() {
        attempt += 1;
        path = dir.join(format!("{base}-{attempt}.png"));
    }
    let write_error = |source| AppError::WriteFile {
        what: "the screenshot",
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(write_error)?;
    let png = encode_rgb(picture.width, picture.height, &frame_to_rgb(&picture));
    std::fs::write(&path, png).map_err(write_error)?;
    Ok(path)
}

/// The game's picture size and display aspect, before its first frame too.
pub fn picture_geometry(game: &dyn Game) -> ((u32, u32), f32) {
    let (width, height, aspect) = game.display_geometry();
    let size = game
        .video_frame()
        .map_or((width, height), |frame| (frame.width, frame.height));
    (size, aspect)
}

/// How [`play_in_window`] runs the frames.
#[derive(Clone, Debug)]
pub struct Pacing {
    /// Stop after this many frames have run [default: until the window closes].
    pub frames: Option<u32>,
    /// The frame rate's multiple (1.0: the core's own rate).
    pub speed: f64,
    /// Write the window's picture to the path once the frame is reached.
    pub screenshot_at: Option<(u32, PathBuf)>,
    /// A replay's timeline, shown along the bottom (seek, pause, speed).
    pub timeline: Option<Timeline>,
}

/// The window's frame loop for local play and replays: runs `play`'s
/// frames on the frame clock (at `pacing.speed`), handles the hotkeys and
/// stepping keys, and draws the newest picture with the overlay, until the
/// window closes or `pacing.frames` have run. `held` gives each frame's
/// buttons (a replay's recorded ones replace them).
pub fn play_in_window(
    window: &mut Window,
    play: &mut LocalPlay<'_>,
    pacing: Pacing,
    held: &mut dyn FnMut(&Window) -> FrameInputs,
    overlay_shown: bool,
    out: &mut dyn Write,
) -> Result<(), AppError> {
    let mut state = WindowPlay::new(play.game().frames_per_second(), pacing, overlay_shown);
    loop {
        if state.handle_actions(window, play, held)? {
            return Ok(());
        }
        state.run_due_frames(window, play, held)?;
        // The speaker plays at the clock's pace; paused, it fades out.
        play.clock_tick(state.now_us(), state.speed());
        state.show(window, play, out)?;
        if state.done(play) {
            return Ok(());
        }
        state.sleep_until_due();
    }
}

/// The state of [`play_in_window`]'s loop between two passes.
struct WindowPlay {
    pacing: Pacing,
    fps: f64,
    started: Instant,
    clock: FrameClock,
    overlay: Overlay,
    new_picture: bool,
    frames_run: u32,
    last_shown: Instant,
    /// The menu (Esc, or Start+Select): play pauses while it is open.
    menu: MatchMenu,
    leave: LeaveConfirmation,
    /// Whether the menu paused play (and so resumes it when it closes).
    paused_by_menu: bool,
    quit: bool,
    blank: BlankContentWatch,
    /// F4: frames run [`FAST_FORWARD_SPEED`] times faster.
    fast_forward: bool,
    volume: Volume,
    /// The frame a seek on the timeline is going to.
    seeking: Option<u32>,
    /// Whether the player used the timeline: then its end pauses there
    /// rather than ending playback.
    timeline_used: bool,
    /// Where the timeline's widgets were drawn (for scripts).
    targets: Targets,
    /// Until when (ms) the timeline stays shown while playing: it shows
    /// when the pointer moves and while paused or seeking, and otherwise
    /// leaves the picture alone.
    timeline_until_ms: u64,
    /// A script's screenshot to write at the next picture.
    script_capture: Option<PathBuf>,
    /// Whether a picture was drawn since the script's last step.
    drawn: bool,
}

impl WindowPlay {
    fn new(fps: f64, pacing: Pacing, overlay_shown: bool) -> Self {
        WindowPlay {
            pacing,
            fps,
            started: Instant::now(),
            clock: FrameClock::new(fps, 0).with_catch_up(2, 4),
            overlay: Overlay::new(overlay_shown),
            new_picture: true,
            frames_run: 0,
            last_shown: Instant::now(),
            menu: MatchMenu::local(),
            leave: LeaveConfirmation::default(),
            paused_by_menu: false,
            quit: false,
            blank: BlankContentWatch::new(fps),
            fast_forward: false,
            volume: Volume::default(),
            seeking: None,
            timeline_used: false,
            targets: Targets::default(),
            script_capture: None,
            timeline_until_ms: 0,
            drawn: true,
        }
    }

    fn now_us(&self) -> u64 {
        self.started.elapsed().as_micros() as u64
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Plays at the player's volume; fast-forward is silent (its sound
    /// would come four times too fast).
    fn apply_volume(&self, play: &mut LocalPlay<'_>) {
        let level = if self.fast_forward {
            0.0
        } else {
            self.volume.level()
        };
        play.set_volume(level);
    }

    /// How fast frames run: the pace asked for, faster while fast-forward is on.
    fn speed(&self) -> f64 {
        let forward = if self.fast_forward {
            FAST_FORWARD_SPEED
        } else {
            1.0
        };
        self.pacing.speed * forward
    }

    /// Carries out what the player did; true when the window closes.
    fn handle_actions(
        &mut self,
        window: &mut Window,
        play: &mut LocalPlay<'_>,
        held: &mut dyn FnMut(&Window) -> FrameInputs,
    ) -> Result<bool, AppError> {
        let now_ms = self.now_ms();
        self.menu.filter(window.controller_buttons());
        // The launcher's script steps for this session (`session key
        // Escape`), fed through the window's own events.
        // One step a picture drawn, as in the launcher (its waits are
        // frames, and a click lands on what the last picture laid out).
        if std::mem::take(&mut self.drawn) {
            let (capture, leave) = crate::gui::menu::script::session_step(window, &self.targets);
            if leave {
                return Ok(true);
            }
            if capture.is_some() {
                self.script_capture = capture;
            }
        }
        let actions = window.poll();
        if window.pointer_moved() {
            self.timeline_until_ms = now_ms + TIMELINE_SHOWN_MS;
        }
        for action in actions {
            match action {
                Action::Quit => return Ok(true),
                Action::Leave if self.leave.press(now_ms) => return Ok(true),
                Action::Leave => {
                    self.menu.open = true;
                    self.overlay
                        .notice_for(now_ms, LEAVE_CONFIRM_MS, QUIT_QUESTION);
                }
                Action::ToggleOverlay => {
                    self.overlay.panel_visible = !self.overlay.panel_visible;
                }
                Action::Notice(text) => self.overlay.notice(now_ms, text),
                Action::Screenshot => {
                    let notice = match save_game_frame(play.game(), play.frame(), &screenshot_dir())
                    {
                        Ok(path) => format!("saved {}", path.display()),
                        Err(err) => format!("screenshot failed: {}", error_chain(&err)),
                    };
                    self.overlay.notice(now_ms, notice);
                }
                Action::Local(LocalKey::FastForward) => {
                    self.fast_forward = !self.fast_forward;
                    let said = if self.fast_forward {
                        format!("fast-forward ×{FAST_FORWARD_SPEED} (muted)")
                    } else {
                        "normal speed".to_owned()
                    };
                    self.overlay.notice(now_ms, said);
                    self.apply_volume(play);
                }
                Action::Local(
                    key @ (LocalKey::VolumeDown | LocalKey::VolumeUp | LocalKey::Mute),
                ) => {
                    if let Some(said) = self.volume.press(key) {
                        self.overlay.notice(now_ms, said);
                    }
                    self.apply_volume(play);
                }
                Action::Timeline(key) => {
                    if let Some(timeline) = &self.pacing.timeline {
                        let at = self.seeking.unwrap_or(play.frame());
                        let choice = timeline.key(key, at, self.pacing.speed);
                        self.choose(choice, play)?;
                    }
                }
                Action::Local(key) => {
                    let said = play.local_key(key)?;
                    self.new_picture = true;
                    self.overlay.notice(now_ms, said);
                }
                stepping => {
                    let was_paused = play.paused();
                    // Only a step runs a frame (and takes a script's row).
                    let inputs = if stepping == Action::StepForward {
                        held(window)
                    } else {
                        NO_INPUTS
                    };
                    self.new_picture |= play.stepping(&stepping, inputs)?;
                    if was_paused && !play.paused() {
                        self.clock.start_at(self.now_us());
                    }
                }
            }
        }
        self.pause_with_menu(play)?;
        Ok(self.quit)
    }

    /// Play pauses while the menu is open, and resumes when it closes if
    /// the menu paused it.
    fn pause_with_menu(&mut self, play: &mut LocalPlay<'_>) -> Result<(), AppError> {
        if self.menu.open && !play.paused() {
            play.stepping(&Action::Pause, NO_INPUTS)?;
            self.paused_by_menu = true;
        } else if !self.menu.open && self.paused_by_menu {
            self.paused_by_menu = false;
            if play.paused() {
                play.stepping(&Action::Pause, NO_INPUTS)?;
                self.clock.start_at(self.now_us());
            }
        }
        Ok(())
    }

    /// Carries out what the player chose on the timeline.
    fn choose(&mut self, choice: TimelineChoice, play: &mut LocalPlay<'_>) -> Result<(), AppError> {
        self.timeline_used = true;
        self.timeline_until_ms = self.now_ms() + TIMELINE_SHOWN_MS;
        match choice {
            TimelineChoice::Seek(frame) => {
                let (first, end) = self
                    .pacing
                    .timeline
                    .as_ref()
                    .map_or((0, u32::MAX), Timeline::range);
                self.seeking = Some(frame.clamp(first, end));
            }
            TimelineChoice::Pause => {
                play.stepping(&Action::Pause, NO_INPUTS)?;
                self.clock.start_at(self.now_us());
            }
            TimelineChoice::Speed(speed) => {
                self.pacing.speed = speed;
                self.clock.start_at(self.now_us());
                self.overlay
                    .notice(self.now_ms(), format!("speed {}", speed_label(speed)));
            }
        }
        Ok(())
    }

    /// Goes on with a seek for at most [`SEEK_SLICE`]: the window draws
    /// (and answers) between slices, whatever the distance.
    fn go_on_seeking(&mut self, play: &mut LocalPlay<'_>) -> Result<(), AppError> {
        let Some(target) = self.seeking else {
            return Ok(());
        };
        let began = Instant::now();
        loop {
            match play.seek_toward(target, SEEK_FRAMES_AT_ONCE) {
                Ok(false) if began.elapsed() < SEEK_SLICE => continue,
                Ok(false) => return Ok(()),
                Ok(true) => break,
                Err(CommandError::User(message)) => {
                    self.overlay.notice(self.now_ms(), message);
                    break;
                }
                Err(CommandError::Fatal(error)) => return Err(error),
            }
        }
        self.seeking = None;
        self.new_picture = true;
        self.clock.start_at(self.now_us());
        Ok(())
    }

    /// Runs the frames the clock has due (none while paused), stopping at
    /// the last frame asked for and at the screenshot's frame.
    fn run_due_frames(
        &mut self,
        window: &Window,
        play: &mut LocalPlay<'_>,
        held: &mut dyn FnMut(&Window) -> FrameInputs,
    ) -> Result<(), AppError> {
        if self.seeking.is_some() {
            return self.go_on_seeking(play);
        }
        if self.at_timelines_end(play) {
            // Watched on the timeline: the end waits there to be sought from.
            if self.timeline_used && !play.paused() {
                play.stepping(&Action::Pause, NO_INPUTS)?;
            }
            return Ok(());
        }
        if play.paused() {
            return Ok(());
        }
        let due = self.clock.due(self.now_us(), self.speed());
        for _ in 0..due {
            if self.all_frames_run() || self.at_timelines_end(play) {
                break;
            }
            play.run_frame(held(window))?;
            self.frames_run += 1;
            self.new_picture = true;
            let game = play.game();
            if let Some(notice) = self
                .blank
                .frame_shown(game.video_frame().as_ref(), game.audio_samples())
            {
                self.overlay
                    .notice_for(self.now_ms(), BLANK_NOTICE_MS, notice);
                eprintln!("note: {notice}");
            }
            if self.screenshot_frame() == Some(play.frame()) {
                break;
            }
        }
        Ok(())
    }

    /// Frames run on a timeline are counted by where play stands: seeks
    /// go back and forth.
    fn all_frames_run(&self) -> bool {
        self.pacing.timeline.is_none()
            && self
                .pacing
                .frames
                .is_some_and(|frames| self.frames_run >= frames)
    }

    /// Whether a timeline is shown and play stands at its end.
    fn at_timelines_end(&self, play: &LocalPlay<'_>) -> bool {
        self.pacing
            .timeline
            .as_ref()
            .is_some_and(|timeline| play.frame() >= timeline.range().1)
    }

    fn screenshot_frame(&self) -> Option<u32> {
        self.pacing.screenshot_at.as_ref().map(|(at, _)| *at)
    }

    /// Draws the newest picture with the overlay (between frames only the
    /// overlay can change: it is redrawn now and then), and writes the
    /// screenshot asked for once its frame is reached.
    fn show(
        &mut self,
        window: &mut Window,
        play: &mut LocalPlay<'_>,
        out: &mut dyn Write,
    ) -> Result<(), AppError> {
        self.overlay.set_lines(self.overlay_lines(window, play));
        let capture = self.screenshot_frame().is_some_and(|at| at <= play.frame())
            || self.script_capture.is_some();
        // A timeline answers the pointer at the window's pace.
        let timeline_shown = self.pacing.timeline.is_some()
            && (play.paused() || self.seeking.is_some() || self.now_ms() < self.timeline_until_ms);
        let redraw_after = if timeline_shown {
            REDRAW_WITH_TIMELINE
        } else {
            REDRAW_WITHOUT_FRAMES
        };
        let since_shown = self.last_shown.elapsed();
        // Faster than the screen (8×, fast-forward) the newest frame waits
        // for the next picture instead of each costing one.
        let picture_due = self.new_picture && since_shown >= MIN_PICTURE_INTERVAL;
        if !(picture_due || capture || since_shown >= redraw_after) {
            return Ok(());
        }
        self.last_shown = Instant::now();
        let picture = self.overlay.render(self.now_ms());
        let game = play.game();
        let (_, aspect) = picture_geometry(game);
        let frame = if self.new_picture {
            game.video_frame()
        } else {
            None
        };
        let captured = if self.menu.open || timeline_shown {
            if self.menu.open {
                menu_details(&mut self.menu, window, game);
            }
            let menu = self.menu.open.then(|| self.menu.clone());
            let shader = window.shader().to_string();
            let (mut choice, mut on_timeline) = (None, None);
            let timeline = self.pacing.timeline.as_ref().filter(|_| timeline_shown);
            let targets = &mut self.targets;
            let (frame_at, seeking, paused, speed) =
                (play.frame(), self.seeking, play.paused(), self.pacing.speed);
            let captured = window.present_with_menu(
                frame.as_ref(),
                aspect,
                picture.as_ref(),
                Some(&mut |context| {
                    targets.clear(context.pixels_per_point());
                    if let Some(timeline) = timeline {
                        on_timeline =
                            timeline.draw(context, targets, frame_at, seeking, paused, speed);
                    }
                    if let Some(menu) = &menu {
                        choice = menu.draw(context, &[], &shader);
                    }
                }),
                capture,
            );
            if let Some(choice) = choice {
                let chosen = self.menu.choose(choice);
                let now_ms = self.now_ms();
                self.quit |= carry_out(chosen, window, &mut self.overlay, now_ms);
            }
            if let Some(choice) = on_timeline {
                self.choose(choice, play)?;
            }
            captured
        } else {
            window.present(frame.as_ref(), aspect, picture.as_ref(), capture)
        };
        self.new_picture = false;
        self.drawn = true;
        if let Some(path) = self.script_capture.take() {
            if let Some(picture) = &captured {
                save_picture(&path, picture)?;
            }
        }
        if let Some((picture, (_, path))) =
            captured.and_then(|picture| Some((picture, self.pacing.screenshot_at.take()?)))
        {
            save_picture(&path, &picture)?;
            writeln!(
                out,
                "wrote the window's picture at frame {} to {}",
                play.frame(),
                path.display()
            )?;
        }
        Ok(())
    }

    fn overlay_lines(&self, window: &Window, play: &LocalPlay<'_>) -> Vec<String> {
        let mut lines = Vec::new();
        if self.overlay.panel_visible {
            lines.push(format!(
                "{}   frame {}   {:.2} fps   shader {}",
                play.game().title(),
                play.frame(),
                self.fps * self.speed(),
                window.shader()
            ));
            lines.push(play.rewind_line());
        }
        lines.extend(play.stepping_lines());
        lines
    }

    /// Every frame asked for ran (a timeline's end was reached, unless the
    /// player used the timeline) and the screenshot, if any, was written.
    fn done(&self, play: &LocalPlay<'_>) -> bool {
        let ran = self.all_frames_run()
            || (self.at_timelines_end(play) && !self.timeline_used && self.seeking.is_none());
        ran && self.pacing.screenshot_at.is_none()
    }

    /// Sleeps until the next frame is due (the window does not pace).
    fn sleep_until_due(&self) {
        let wait = self.clock.next_due_us().saturating_sub(self.now_us());
        std::thread::sleep(Duration::from_micros(wait.clamp(500, 8_000)));
    }
}

/// `replay play` in a window: plays `replay`'s frames on `game`, which
/// stands at the start of `start` in it, paced as `pacing` says, with the
/// stepping keys of local play and its sound going to `audio`. Returns the frame
/// it ended at and that frame's checksums.
pub fn replay_in_window(
    replay: &Replay,
    game: &mut dyn Game,
    audio: Box<dyn FrameSink>,
    start: u32,
    mut pacing: Pacing,
    display: &DisplayArgs,
    out: &mut dyn Write,
) -> Result<(Frame, Checksums), AppError> {
    let (source, aspect) = picture_geometry(game);
    let mut window = Window::open(&game.title(), source, aspect, display, load_input_map)?;
    let header = &replay.header;
    let end = pacing.frames.map_or(replay.end_frame().number(), |frames| {
        start.saturating_add(frames)
    });
    pacing.timeline = Some(Timeline::new(
        start,
        end,
        game.frames_per_second(),
        usize::from(header.players),
        &header.player_names,
    ));
    window.show_timeline_keys(true);
    writeln!(
        out,
        "playing the replay from frame {start} in a window at {}x (OpenGL {}); F1 overlay, P pause, arrows seek, < > speed, Esc quits",
        pacing.speed,
        window.gl_version()
    )?;
    let mut play = LocalPlay::following(
        game,
        replay,
        start,
        DEFAULT_HISTORY,
        (DEFAULT_HISTORY_MB << 20) as usize,
        audio,
    )?;
    // The replay's recorded buttons play; the devices only step.
    let mut held = |_: &Window| NO_INPUTS;
    play_in_window(
        &mut window,
        &mut play,
        pacing,
        &mut held,
        display.overlay,
        out,
    )?;
    Ok((Frame::new(play.frame()), play.checksums()))
}

/// Local play on the debugger's engine: every frame is kept for stepping
/// back, and pause, step, back, mark and diff are the debugger's own.
pub struct LocalPlay<'g> {
    debugger: Debugger<'g, dyn Game + 'g>,
    paused: bool,
    /// What the last mark or diff said (shown in the overlay).
    said: Vec<String>,
    /// The game's save state slots (none for a replay: its frames are
    /// the recording's).
    slots: Option<StateSlots>,
}

impl<'g> LocalPlay<'g> {
    /// Starts at frame 0 with `game` as loaded, able to step back up to
    /// `history_frames` frames kept in `history_bytes`; each frame's sound
    /// goes to `audio`.
    pub fn new(
        game: &'g mut (dyn Game + 'g),
        history_frames: u32,
        history_bytes: usize,
        audio: Box<dyn FrameSink>,
    ) -> Result<Self, AppError> {
        Ok(LocalPlay {
            debugger: Debugger::new(game, history_frames, history_bytes)?.with_sink(audio),
            paused: false,
            said: Vec::new(),
            slots: None,
        })
    }

    /// Saves and loads states in `slots` (F5, F8; F6 and F7 choose one).
    pub fn with_slots(mut self, slots: StateSlots) -> Self {
        self.slots = Some(slots);
        self
    }

    /// Shows each frame with run-ahead as `args` say.
    pub fn with_run_ahead(mut self, args: RunAheadArgs) -> Self {
        self.debugger = self.debugger.with_run_ahead(args);
        self
    }

    /// Plays `recorded`'s frames (a replay's) on `game`, which stands at
    /// the start of `frame` in it; stepping keys work as in local play.
    pub fn following(
        game: &'g mut (dyn Game + 'g),
        recorded: &'g dyn RecordedFrames,
        frame: u32,
        history_frames: u32,
        history_bytes: usize,
        audio: Box<dyn FrameSink>,
    ) -> Result<Self, AppError> {
        Ok(LocalPlay {
            debugger: Debugger::new_at(game, frame, history_frames, history_bytes)?
                .following(recorded)?
                .with_sink(audio),
            paused: false,
            said: Vec::new(),
            slots: None,
        })
    }

    /// The checksums of the current frame (as `run` prints them).
    pub fn checksums(&self) -> Checksums {
        self.debugger.checksums()
    }

    /// The game (its picture, sound and memory).
    /// The debugger's status line (`frame=N memory=… state=… video=…`).
    pub fn status_line(&self) -> String {
        self.debugger.status_line()
    }

    /// The game being played.
    pub fn game(&self) -> &dyn Game {
        self.debugger.game()
    }

    /// The frame the game is at (0: as loaded).
    pub fn frame(&self) -> u32 {
        self.debugger.frame()
    }

    /// Goes toward `frame` on the debugger's engine, running at most
    /// `most_frames` frames (see [`Debugger::seek_toward`]); whether it
    /// stands there.
    pub fn seek_toward(&mut self, frame: u32, most_frames: u32) -> Result<bool, CommandError> {
        self.debugger.seek_toward(frame, most_frames)
    }

    /// How far back stepping can go, in words: `can step back 10 s (3.2 MiB kept)`.
    pub fn rewind_line(&self) -> String {
        let (frames, bytes) = self.debugger.kept();
        let seconds = f64::from(frames) / self.game().frames_per_second().max(1.0);
        format!(
            "can step back {seconds:.0} s ({:.1} MiB kept)",
            bytes as f64 / f64::from(1 << 20)
        )
    }

    /// Whether play is paused (P).
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// Runs one frame with `held` (one per port); its sound goes to the
    /// audio output.
    pub fn run_frame(&mut self, held: FrameInputs) -> Result<(), AppError> {
        self.debugger.hold(held);
        self.debugger.step(1)
    }

    /// The audio output follows the window's clock (`now_us`, at `speed`).
    pub fn clock_tick(&mut self, now_us: u64, speed: f64) {
        self.debugger.sink_mut().clock_tick(now_us, speed);
    }

    /// Carries out a stepping key: P pauses or resumes; while paused `.`
    /// runs one frame with `held`, `,` goes back one; M marks and N diffs
    /// at any time. Returns whether the picture changed.
    pub fn stepping(&mut self, action: &Action, held: FrameInputs) -> Result<bool, AppError> {
        let command = match action {
            Action::Pause => {
                self.paused = !self.paused;
                return Ok(false);
            }
            Action::StepForward if self.paused => {
                self.run_frame(held)?;
                return Ok(true);
            }
            Action::StepBack if self.paused => Command::Back(1),
            Action::Mark => Command::Mark,
            Action::Diff => Command::Diff,
            _ => return Ok(false),
        };
        let mut text = Vec::new();
        match self.debugger.execute(&command, &mut text) {
            Ok(()) => {
                let said = String::from_utf8_lossy(&text);
                if command != Command::Back(1) {
                    self.said = said.lines().map(str::to_string).collect();
                }
                Ok(command == Command::Back(1))
            }
            Err(CommandError::User(message)) => {
                self.said = vec![message];
                Ok(false)
            }
            Err(CommandError::Fatal(error)) => Err(error),
        }
    }

    /// Carries out a key of local play that changes the game outside its
    /// frames (fast-forward is the window's own) and says how it went.
    /// Only a failing core is an error; a refused slot is said.
    pub fn local_key(&mut self, key: LocalKey) -> Result<String, AppError> {
        let title = self.game().title();
        let Some(slots) = &mut self.slots else {
            return Ok(NOT_HERE.to_owned());
        };
        Ok(match key {
            LocalKey::SaveState => {
                let (frame, state, memory) = self.debugger.state_to_keep()?;
                let saved = SavedState {
                    frame,
                    core: title,
                    memory,
                    state,
                };
                match slots.write(&saved) {
                    Ok(_) => format!("saved slot {} (frame {frame})", slots.chosen()),
                    Err(error) => error.to_string(),
                }
            }
            LocalKey::LoadState => {
                let largest = self.debugger.state_size().saturating_mul(2).max(1 << 20);
                let saved = match slots.read(&title, largest) {
                    Ok(saved) => saved,
                    Err(error) => return Ok(error.to_string()),
                };
                let slot = slots.chosen();
                let what = format!("slot {slot}'s state");
                let state = RecordedState {
                    bytes: &saved.state,
                    memory: Some(saved.memory),
                    what: &what,
                };
                match self.debugger.restore(saved.frame, state) {
                    Ok(()) => format!("loaded slot {slot} (frame {})", saved.frame),
                    Err(AppError::ReplayRefused { reason }) => reason,
                    Err(error) => return Err(error),
                }
            }
            LocalKey::PreviousSlot | LocalKey::NextSlot => {
                let slot = slots.choose_next(key == LocalKey::NextSlot);
                let saved = slots.path().exists();
                format!("state slot {slot}{}", if saved { "" } else { " (empty)" })
            }
            LocalKey::Reset => {
                if self.debugger.change_game(|game| game.reset())? {
                    "reset".to_owned()
                } else {
                    "this game has no reset button".to_owned()
                }
            }
            // The window's own.
            LocalKey::FastForward | LocalKey::VolumeDown | LocalKey::VolumeUp | LocalKey::Mute => {
                String::new()
            }
        })
    }

    /// Plays the game's sound at `volume` (0–1).
    pub fn set_volume(&mut self, volume: f32) {
        self.debugger.sink_mut().set_volume(volume);
    }

    /// The overlay's lines about stepping: the pause banner, what the last
    /// mark or diff said.
    pub fn stepping_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.paused {
            lines.push(format!(
                "PAUSED frame {}   P resume  . step  , back  M mark  N diff",
                self.frame()
            ));
        }
        lines.extend(self.said.iter().cloned());
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use netcode::input::Buttons;
    use netcode::testing::StubGame;

    fn playing(game: &mut StubGame) -> LocalPlay<'_> {
        LocalPlay::new(game, 100, 1 << 20, Box::new(())).unwrap()
    }

    #[test]
    fn paused_play_steps_one_frame_with_dot_and_back_with_comma_to_the_same_game() {
        let mut game = StubGame::deterministic();
        let mut play = playing(&mut game);
        let mut right = NO_INPUTS;
        right[0] = Buttons::RIGHT;
        for _ in 0..5 {
            play.run_frame(right).unwrap();
        }
        let at_five = play.game().game_memory().to_vec();
        // Not paused: the stepping keys do nothing.
        assert!(!play.stepping(&Action::StepForward, right).unwrap());
        assert!(!play.stepping(&Action::StepBack, right).unwrap());
        assert_eq!(play.frame(), 5);
        play.stepping(&Action::Pause, right).unwrap();
        assert!(play.stepping_lines()[0].starts_with("PAUSED frame 5"));
        assert!(play.stepping(&Action::StepForward, right).unwrap());
        assert_eq!(play.frame(), 6);
        assert_ne!(play.game().game_memory(), &at_five[..]);
        assert!(play.stepping(&Action::StepBack, right).unwrap());
        assert_eq!(play.frame(), 5);
        assert_eq!(play.game().game_memory(), &at_five[..]);
        play.stepping(&Action::Pause, right).unwrap();
        assert!(!play.paused());
    }

    #[test]
    fn the_menu_pauses_local_play_and_closing_it_resumes_only_what_it_paused() {
        let mut game = StubGame::deterministic();
        let mut play = playing(&mut game);
        let pacing = Pacing {
            frames: None,
            speed: 1.0,
            screenshot_at: None,
            timeline: None,
        };
        let mut state = WindowPlay::new(60.0, pacing, false);
        state.menu.open = true;
        state.pause_with_menu(&mut play).unwrap();
        assert!(play.paused(), "the menu pauses the game");
        state.menu.open = false;
        state.pause_with_menu(&mut play).unwrap();
        assert!(!play.paused(), "closed, the game goes on");
        // Paused with P first, the game stays paused after the menu.
        play.stepping(&Action::Pause, NO_INPUTS).unwrap();
        state.menu.open = true;
        state.pause_with_menu(&mut play).unwrap();
        state.menu.open = false;
        state.pause_with_menu(&mut play).unwrap();
        assert!(play.paused());
    }

    /// A replay's recorded buttons: right on even frames, down on odd ones.
    struct Recorded;

    impl RecordedFrames for Recorded {
        fn first_frame(&self) -> u32 {
            0
        }

        fn inputs(&self, frame: u32) -> FrameInputs {
            let mut inputs = NO_INPUTS;
            inputs[0] = if frame.is_multiple_of(2) {
                Buttons::RIGHT
            } else {
                Buttons::DOWN
            };
            inputs
        }

        fn state_at(
            &self,
            _frame: u32,
        ) -> Option<crate::engine::recorded_state::RecordedState<'_>> {
            None
        }
    }

    #[test]
    fn a_followed_replay_plays_its_recorded_buttons_from_its_frame_and_steps_back_to_the_same_game()
    {
        let recorded = Recorded;
        let mut held_game = StubGame::deterministic();
        let mut idle_game = StubGame::deterministic();
        let mut held =
            LocalPlay::following(&mut held_game, &recorded, 10, 100, 1 << 20, Box::new(()))
                .unwrap();
        let mut idle =
            LocalPlay::following(&mut idle_game, &recorded, 10, 100, 1 << 20, Box::new(()))
                .unwrap();
        assert_eq!(held.frame(), 10);
        let mut left = NO_INPUTS;
        left[0] = Buttons::LEFT;
        for _ in 0..4 {
            held.run_frame(left).unwrap();
            idle.run_frame(NO_INPUTS).unwrap();
        }
        // The devices' buttons do not change a replay.
        assert_eq!(held.frame(), 14);
        assert_eq!(held.game().game_memory(), idle.game().game_memory());
        let at_fourteen = held.checksums();
        held.stepping(&Action::Pause, NO_INPUTS).unwrap();
        assert!(held.stepping(&Action::StepForward, left).unwrap());
        assert_eq!(held.frame(), 15);
        assert!(held.stepping(&Action::StepBack, NO_INPUTS).unwrap());
        assert_eq!(held.frame(), 14);
        assert_eq!(held.checksums().memory, at_fourteen.memory);
    }

    #[test]
    fn mark_then_diff_shows_the_debuggers_comparison_in_the_overlay_lines() {
        let mut game = StubGame::deterministic();
        let mut play = playing(&mut game);
        play.stepping(&Action::Diff, NO_INPUTS).unwrap();
        assert!(
            play.stepping_lines()[0].contains("no frame marked"),
            "{:?}",
            play.stepping_lines()
        );
        play.stepping(&Action::Mark, NO_INPUTS).unwrap();
        assert_eq!(play.stepping_lines(), ["marked frame 0"]);
        let mut right = NO_INPUTS;
        right[0] = Buttons::RIGHT;
        play.run_frame(right).unwrap();
        play.stepping(&Action::Diff, NO_INPUTS).unwrap();
        let lines = play.stepping_lines();
        assert!(lines[0].starts_with("diff frame 0 -> frame 1"), "{lines:?}");
        assert!(
            lines.iter().any(|line| line.starts_with("memory: ")),
            "{lines:?}"
        );
    }

    #[test]
    fn a_game_frame_screenshot_is_a_png_of_the_frame_named_after_core_and_frame() {
        let dir = tempfile::tempdir().unwrap();
        let mut game = netcode::testing::StubGame::deterministic();
        netcode::emulator::Emulator::run_frame(&mut game, &[], true);
        let first = save_game_frame(&game, 7, dir.path()).unwrap();
        let second = save_game_frame(&game, 7, dir.path()).unwrap();
        assert_ne!(first, second);
        assert!(first
            .file_name()
            .unwrap()
            .to_string_lossy()
            .ends_with("-frame7.png"));
        let png = std::fs::read(&first).unwrap();
        assert!(png.starts_with(b"\x89PNG"));
    }

    #[test]
    fn a_state_saved_in_a_slot_and_loaded_plays_on_as_the_run_that_saved_it() {
        let dir = tempfile::tempdir().unwrap();
        let slots = StateSlots::for_game(dir.path(), "stub", Some(Path::new("game.bin")));
        let mut game = StubGame::deterministic();
        let mut play = playing(&mut game).with_slots(slots);
        let press = |frame: u32| {
            let mut inputs = NO_INPUTS;
            inputs[0] = Buttons::from_bits(frame.wrapping_mul(2_654_435_761) as u16);
            inputs
        };
        for frame in 0..40 {
            play.run_frame(press(frame)).unwrap();
        }
        let said = play.local_key(LocalKey::SaveState).unwrap();
        assert_eq!(said, "saved slot 0 (frame 40)");
        for frame in 40..70 {
            play.run_frame(press(frame)).unwrap();
        }
        let after_saving = play.checksums();
        // Somewhere else, then back through the slot.
        play.run_frame(press(99)).unwrap();
        let said = play.local_key(LocalKey::LoadState).unwrap();
        assert_eq!(said, "loaded slot 0 (frame 40)");
        assert_eq!(play.frame(), 40);
        for frame in 40..70 {
            play.run_frame(press(frame)).unwrap();
        }
        assert_eq!(play.checksums(), after_saving);
    }

    #[test]
    fn a_damaged_or_empty_slot_is_said_and_leaves_the_game_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let slots = StateSlots::for_game(dir.path(), "stub", None);
        let path = slots.path();
        let mut game = StubGame::deterministic();
        let mut play = playing(&mut game).with_slots(slots);
        assert_eq!(
            play.local_key(LocalKey::NextSlot).unwrap(),
            "state slot 1 (empty)"
        );
        assert_eq!(
            play.local_key(LocalKey::LoadState).unwrap(),
            "slot 1 is empty"
        );
        play.local_key(LocalKey::PreviousSlot).unwrap();
        play.run_frame(NO_INPUTS).unwrap();
        play.local_key(LocalKey::SaveState).unwrap();
        // The same core saved it, but its bytes were changed on disk.
        let mut bytes = std::fs::read(&path).unwrap();
        let saved = crate::engine::state_slots::decode(&bytes, 1 << 20).unwrap();
        let mut state = saved.state.clone();
        state[0] ^= 0xFF;
        bytes = crate::engine::state_slots::encode(&SavedState { state, ..saved });
        std::fs::write(&path, bytes).unwrap();
        for _ in 0..5 {
            play.run_frame(NO_INPUTS).unwrap();
        }
        let before = play.checksums();
        let said = play.local_key(LocalKey::LoadState).unwrap();
        assert!(
            said.starts_with("slot 0's state of frame 1 is not a state this core saved"),
            "{said}"
        );
        assert_eq!((play.frame(), play.checksums()), (6, before));
    }

    #[test]
    fn a_replay_has_no_slots_to_save_in() {
        let mut game = StubGame::deterministic();
        let mut play = playing(&mut game);
        assert_eq!(play.local_key(LocalKey::SaveState).unwrap(), NOT_HERE);
    }
}
