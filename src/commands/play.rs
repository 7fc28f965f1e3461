//! `netcade play`: local play in a window (feature `gui`), alone or two on
//! one keyboard, with in-window frame stepping.

use crate::engine::debugger::{DEFAULT_HISTORY, DEFAULT_HISTORY_MB};
use crate::engine::inputs::{InputSource, InputSpec};
use crate::engine::sinks::audio_file::AudioArgs;
use crate::engine::sinks::frame_log::FrameLog;
use crate::engine::sinks::run_ahead::RunAheadArgs;
use crate::engine::sinks::speaker::SpeakerArgs;
use crate::engine::sinks::FrameSink;
use crate::engine::state_slots::StateSlots;
use crate::engine::{open_game, AppError, GameArgs, Outcome};
use crate::gui::play::{
    audio_output, load_input_map, picture_geometry, play_in_window, LocalPlay, Pacing,
};
use crate::gui::window::{DisplayArgs, Window};
use crate::paths::data_subdir;
use std::io::Write;

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
    /// Take every player's buttons from none, random:SEED or an input
    /// script instead of the keyboard and controllers (as `run --inputs`).
    #[arg(long, value_name = "SOURCE")]
    pub inputs: Option<InputSpec>,
    /// How the picture is shown.
    #[command(flatten)]
    pub display: DisplayArgs,
    /// How many frames step back (,) can go back.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_HISTORY)]
    pub history: u32,
    /// The most memory the step-back history may take, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_HISTORY_MB)]
    pub history_mb: u64,
    /// How the sound is queued (latency, crossfade).
    #[command(flatten)]
    pub audio: AudioArgs,
    /// The speaker.
    #[command(flatten)]
    pub speaker: SpeakerArgs,
    /// Writes one line per frame shown to PATH: `FRAME VIDEO AUDIO MEMORY`
    /// (the frame number, hex checksums of the picture shown, the audio
    /// and the memory).
    #[arg(long, value_name = "PATH")]
    pub frame_log: Option<std::path::PathBuf>,
    /// Run-ahead.
    #[command(flatten)]
    pub run_ahead: RunAheadArgs,
}

/// Plays the game in a window until it closes (or `--frames`).
pub fn play_command(args: &PlayArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let screenshot_at = args.display.screenshot_request()?;
    let mut scripted = args.inputs.as_ref().map(InputSource::open).transpose()?;
    let mut game = open_game(&args.game)?;
    let (source, aspect) = picture_geometry(&*game);
    let mut window = Window::open(&game.title(), source, aspect, &args.display, load_input_map)?;
    writeln!(
        out,
        "playing {} in a window (OpenGL {}); F1 overlay, P pause, F5 save, F8 load, F3 reset, F4 fast-forward, Esc quits",
        game.title(),
        window.gl_version()
    )?;
    let history_bytes = (args.history_mb.saturating_mul(1 << 20)).min(usize::MAX as u64) as usize;
    let audio = audio_output(&*game, &args.audio, &args.speaker)?;
    // The log is flushed when play ends and drops it.
    let sink: Box<dyn FrameSink> = Box::new((audio, FrameLog::open(args.frame_log.as_deref())?));
    let core_file = args
        .game
        .core
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy();
    let slots = StateSlots::for_game(&data_subdir("states"), &core_file, args.game.rom.as_deref());
    let mut play = LocalPlay::new(&mut *game, args.history, history_bytes, sink)?
        .with_run_ahead(args.run_ahead)
        .with_slots(slots);
    let players = usize::from(args.players);
    let mut held = |window: &Window| match &mut scripted {
        Some(source) => source.next_frame(),
        None => window.held(players),
    };
    let pacing = Pacing {
        frames: args.frames,
        speed: 1.0,
        screenshot_at,
        timeline: None,
    };
    play_in_window(
        &mut window,
        &mut play,
        pacing,
        &mut held,
        args.display.overlay,
        out,
    )?;
    writeln!(out, "{}", play.status_line())?;
    Ok(Outcome::Success)
}
