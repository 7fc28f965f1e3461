//! `netcade play`: local play in a window, and `netcade input`. Local play
//! runs on the debugger's engine ([`Debugger`]), so pause (P), step (.),
//! step back (,), mark (M) and diff (N) are the `debug` command's own
//! `step`, `back`, `mark` and `diff`, shown in the overlay.

use crate::app::debugger::{Command, Debugger, DEFAULT_HISTORY, DEFAULT_HISTORY_MB};
use crate::app::frame_clock::FrameClock;
use crate::app::frame_sink::{FinalFrame, FinishedFrame, FrameSink};
use crate::app::inputs::{InputSource, InputSpec};
use crate::app::png::{encode_rgb, frame_to_rgb};
use crate::app::{open_game, AppError, Game, GameArgs, Outcome};
use crate::gui::input_map::{config_path, InputMap};
use crate::gui::overlay::Overlay;
use crate::gui::window::{Action, DisplayArgs, Window};
use crate::gui::GuiError;
use crate::rollback::Frame;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Arguments of `netcade play`.
#[derive(Clone, Debug, clap::Args)]
pub struct PlayArgs {
    /// The core, its content and options.
    #[command(flatten)]
    pub game: GameArgs,
    /// Players at this machine: 1, or 2 sharing the keyboard (and
    /// controllers taking turns).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub players: u8,
    /// Quit after N frames [default: play until the window closes].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub frames: Option<u32>,
    /// Write the window's picture as drawn to PATH (PNG) once FRAME frames
    /// have run (for tests and README pictures).
    #[arg(long, num_args = 2, value_names = ["FRAME", "PATH"])]
    pub screenshot_at: Vec<String>,
    /// Take every player's buttons from none, random:SEED or an input
    /// script instead of the keyboard and controllers (as `run --inputs`).
    #[arg(long, value_name = "SOURCE")]
    pub inputs: Option<InputSpec>,
    /// Start with the stats panel shown (F1 toggles it).
    #[arg(long)]
    pub overlay: bool,
    /// How the picture is shown.
    #[command(flatten)]
    pub display: DisplayArgs,
    /// How many frames step back (,) can go back.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_HISTORY)]
    pub history: u32,
    /// The most memory the step-back history may take, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_HISTORY_MB)]
    pub history_mb: u64,
}

/// `--screenshot-at FRAME PATH`, checked.
fn screenshot_request(values: &[String]) -> Result<Option<(u32, PathBuf)>, AppError> {
    match values {
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

/// The input mapping from the config file (created with the defaults on
/// first run). A broken file is reported as an `error:` line naming its
/// line, and play goes on with the defaults.
pub fn load_input_map() -> InputMap {
    let Some(path) = config_path() else {
        tracing::warn!("no config directory: using the default input mapping");
        return InputMap::defaults();
    };
    match InputMap::load_or_create(&path) {
        Ok((map, created)) => {
            if created {
                eprintln!(
                    "note: wrote the default input mapping to {}",
                    path.display()
                );
            }
            map
        }
        Err(err) => {
            eprintln!("error: {err}; using the default input mapping");
            InputMap::defaults()
        }
    }
}

/// The place a frame's sound goes. The audio output plugs in here (a
/// [`FrameSink`] fed each frame's samples); until then local play is silent.
fn audio_output(_game: &dyn Game) -> Box<dyn FrameSink> {
    Box::new(())
}

/// Where F12 puts screenshots: `screenshots/` in netcade's data directory.
fn screenshot_dir() -> PathBuf {
    directories::ProjectDirs::from("", "", "netcade")
        .map(|dirs| dirs.data_dir().to_path_buf())
        .unwrap_or_else(std::env::temp_dir)
        .join("screenshots")
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
fn picture_geometry(game: &dyn Game) -> ((u32, u32), f32) {
    let (width, height, aspect) = game.display_geometry();
    let size = game
        .video_frame()
        .map_or((width, height), |frame| (frame.width, frame.height));
    (size, aspect)
}

/// Plays the game in a window until it closes (or `--frames`).
pub fn play_command(args: &PlayArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let screenshot_at = screenshot_request(&args.screenshot_at)?;
    let mut scripted = args.inputs.as_ref().map(InputSource::open).transpose()?;
    let mut game = open_game(&args.game)?;
    let map = load_input_map();
    let (source, aspect) = picture_geometry(&*game);
    let mut window = Window::open(&game.title(), source, aspect, &args.display, map)?;
    writeln!(
        out,
        "playing {} in a window (OpenGL {}); F1 overlay, P pause, Esc quits",
        game.title(),
        window.gl_version()
    )?;
    let history_bytes = (args.history_mb.saturating_mul(1 << 20)).min(usize::MAX as u64) as usize;
    let mut audio = audio_output(&*game);
    let mut debugger = Debugger::new(&mut *game, args.history, history_bytes)?;
    let players = usize::from(args.players);
    let fps = debugger.game().frames_per_second();
    let started = Instant::now();
    let now_us = || started.elapsed().as_micros() as u64;
    let mut clock = FrameClock::new(fps, 0).with_catch_up(2, 4);
    let mut overlay = Overlay::new(args.overlay);
    let mut paused = false;
    let mut new_picture = true;
    let mut screenshot_pending = screenshot_at;
    let mut diff_lines: Vec<String> = Vec::new();
    let mut frames_run: u32 = 0;
    'play: loop {
        let now_ms = started.elapsed().as_millis() as u64;
        for action in window.poll() {
            match action {
                Action::Quit => break 'play,
                Action::ToggleOverlay => overlay.panel_visible = !overlay.panel_visible,
                Action::Notice(text) => overlay.notice(now_ms, text),
                Action::Screenshot => {
                    let game: &dyn Game = debugger.game();
                    match save_game_frame(game, debugger.frame(), &screenshot_dir()) {
                        Ok(path) => overlay.notice(now_ms, format!("saved {}", path.display())),
                        Err(err) => overlay.notice(now_ms, format!("screenshot failed: {err}")),
                    }
                }
                Action::Pause => {
                    paused = !paused;
                    if !paused {
                        clock.start_at(now_us());
                    }
                }
                Action::StepForward if paused => {
                    step(&mut debugger, &mut scripted, &window, players, &mut *audio)?;
                    new_picture = true;
                }
                Action::StepBack if paused => {
                    let mut lines = Vec::new();
                    if let Err(err) = debugger.execute(&Command::Back(1), &mut lines) {
                        overlay.notice(now_ms, format!("cannot step back: {err:?}"));
                    }
                    new_picture = true;
                }
                Action::Mark | Action::Diff => {
                    let command = if action == Action::Mark {
                        Command::Mark
                    } else {
                        Command::Diff
                    };
                    let mut text = Vec::new();
                    diff_lines = match debugger.execute(&command, &mut text) {
                        Ok(()) => String::from_utf8_lossy(&text)
                            .lines()
                            .map(str::to_string)
                            .collect(),
                        Err(err) => vec![format!("{err:?}")],
                    };
                }
                Action::StepForward | Action::StepBack => {}
            }
        }
        if !paused {
            let due = clock.due(now_us(), 1.0);
            for _ in 0..due {
                if args.frames.is_some_and(|frames| frames_run >= frames) {
                    break;
                }
                step(&mut debugger, &mut scripted, &window, players, &mut *audio)?;
                frames_run += 1;
                new_picture = true;
                if screenshot_pending
                    .as_ref()
                    .is_some_and(|(at, _)| *at == debugger.frame())
                {
                    break;
                }
            }
        }
        let mut lines = Vec::new();
        if paused {
            lines.push(format!(
                "PAUSED frame {}   P resume  . step  , back  M mark  N diff",
                debugger.frame()
            ));
        }
        if overlay.panel_visible {
            lines.push(format!(
                "{}   frame {}   {:.2} fps   shader {}",
                debugger.game().title(),
                debugger.frame(),
                fps,
                window.shader()
            ));
            lines.push(debugger.history_line());
        }
        lines.extend(diff_lines.iter().cloned());
        overlay.set_lines(lines);
        let capture = screenshot_pending
            .as_ref()
            .is_some_and(|(at, _)| *at <= debugger.frame());
        let picture = overlay.render(now_ms);
        let game: &dyn Game = debugger.game();
        let (_, aspect) = picture_geometry(game);
        let frame = if new_picture {
            game.video_frame()
        } else {
            None
        };
        let captured = window.present(frame.as_ref(), aspect, picture.as_ref(), capture);
        new_picture = false;
        if let Some(((width, height, rgb), (_, path))) =
            captured.and_then(|picture| Some((picture, screenshot_pending.take()?)))
        {
            std::fs::write(&path, encode_rgb(width, height, &rgb)).map_err(|source| {
                AppError::WriteFile {
                    what: "the screenshot",
                    path: path.clone(),
                    source,
                }
            })?;
            writeln!(
                out,
                "wrote the window's picture at frame {} to {}",
                debugger.frame(),
                path.display()
            )?;
        }
        if args.frames.is_some_and(|frames| frames_run >= frames) && screenshot_pending.is_none() {
            break;
        }
        // Sleep until the next frame is due (the window does not pace).
        let wait = clock.next_due_us().saturating_sub(now_us());
        std::thread::sleep(Duration::from_micros(wait.clamp(500, 8_000)));
    }
    writeln!(out, "{}", debugger.status_line())?;
    Ok(Outcome::Success)
}

/// Runs one frame with the local players' (or the script's) buttons and
/// hands its sound to the audio output.
fn step(
    debugger: &mut Debugger<'_, dyn Game>,
    scripted: &mut Option<InputSource>,
    window: &Window,
    players: usize,
    audio: &mut dyn FrameSink,
) -> Result<(), AppError> {
    let held = match scripted {
        Some(source) => source.next_frame(),
        None => window.held(players),
    };
    let frame = Frame::new(debugger.frame());
    debugger.hold(held);
    debugger.step(1)?;
    audio.frame_run(&FinishedFrame {
        frame,
        resimulated: false,
        inputs: &held,
        audio: debugger.game().audio_samples(),
    });
    audio.frame_finalized(&FinalFrame {
        frame,
        inputs: &held,
        checksum: None,
    });
    Ok(())
}

/// Arguments of `netcade input`.
#[derive(Clone, Debug, clap::Args)]
pub struct InputArgs {
    /// Open a window and print which RetroPad buttons are held as you
    /// press keys and controller buttons (close the window to stop).
    #[arg(long)]
    pub test: bool,
    /// Players to show in --test.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=4))]
    pub players: u8,
}

/// `netcade input`: prints the config file's path and the mapping in use;
/// with `--test`, what is held as keys are pressed.
pub fn input_command(args: &InputArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let path = config_path().ok_or_else(|| AppError::BadArgument {
        message: "no config directory: set NETCADE_CONFIG_DIR".to_string(),
    })?;
    let (map, created) = InputMap::load_or_create(&path)?;
    writeln!(
        out,
        "config: {}{}",
        path.display(),
        if created {
            " (just written with the defaults)"
        } else {
            ""
        }
    )?;
    write!(out, "{}", map.describe())?;
    if !args.test {
        return Ok(Outcome::Success);
    }
    let display = DisplayArgs {
        window_size: Some((640, 200)),
        ..DisplayArgs::default()
    };
    let mut window = Window::open("netcade input --test", (320, 100), 0.0, &display, map)?;
    writeln!(
        out,
        "press keys or controller buttons in the window; close it to stop"
    )?;
    let players = usize::from(args.players);
    let mut overlay = Overlay::new(false);
    let mut last = None;
    let started = Instant::now();
    loop {
        let now_ms = started.elapsed().as_millis() as u64;
        for action in window.poll() {
            match action {
                Action::Quit => return Ok(Outcome::Success),
                Action::Notice(text) => {
                    writeln!(out, "{text}")?;
                    overlay.notice(now_ms, text);
                }
                _ => {}
            }
        }
        let held = window.held(players);
        let lines: Vec<String> = (0..players)
            .map(|p| format!("player {}: {}", p + 1, held[p]))
            .chain([format!("keys: {}", window.keys_held().join(" "))])
            .collect();
        if last.as_ref() != Some(&lines) {
            writeln!(out, "{}", lines.join(" | "))?;
            last = Some(lines.clone());
        }
        overlay.set_lines(lines);
        let picture = overlay.render(now_ms);
        window.present(None, 0.0, picture.as_ref(), false);
        std::thread::sleep(Duration::from_millis(16));
    }
}

impl From<GuiError> for AppError {
    fn from(error: GuiError) -> AppError {
        AppError::Gui(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_screenshot_request_needs_a_frame_number_and_a_path() {
        assert_eq!(screenshot_request(&[]).unwrap(), None);
        let request = screenshot_request(&["60".into(), "shot.png".into()]).unwrap();
        assert_eq!(request, Some((60, PathBuf::from("shot.png"))));
        let err = screenshot_request(&["soon".into(), "shot.png".into()]).unwrap_err();
        assert!(err.to_string().contains("\"soon\""), "{err}");
        assert_eq!(err.exit_code(), crate::app::error::EXIT_USER_MISTAKE);
    }

    #[test]
    fn a_game_frame_screenshot_is_a_png_of_the_frame_named_after_core_and_frame() {
        let dir = tempfile::tempdir().unwrap();
        let mut game = crate::app::testing::StubGame::deterministic();
        crate::emulator::Emulator::run_frame(&mut game, &[], true);
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
}
