//! `netcade run`: run a game unthrottled and report speed and checksums.

use crate::engine::inputs::{InputSource, InputSpec};
use crate::engine::interrupt::exit_on_interrupt;
use crate::engine::report::{write_report, Report};
use crate::engine::run::{run_frames_ahead, Pace, RunReport};
use crate::engine::sinks::audio_file::AudioArgs;
use crate::engine::sinks::frame_log::FrameLog;
use crate::engine::sinks::recorder::{replay_header, ReplayRecorder};
use crate::engine::sinks::run_ahead::{RunAhead, RunAheadArgs};
use crate::engine::sinks::SinksSummary;
use crate::engine::{open_game, AppError, GameArgs, Outcome};
use netcode::emulator::SavestateContext;
use netcode::replay::EndReason;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `netcade run`.
#[derive(Clone, Debug, clap::Args)]
pub struct RunArgs {
    /// The core, content and core options to run.
    #[command(flatten)]
    pub game: GameArgs,
    /// How many frames to run (at least 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub frames: u32,
    /// Where the buttons come from: none, random:SEED, or an input script file.
    #[arg(long, value_name = "SOURCE", default_value_t = InputSpec::default())]
    pub inputs: InputSpec,
    /// Ends the output with one JSON object on its own line.
    #[arg(long)]
    pub json: bool,
    /// Records the run as a replay at PATH (`netcade replay play PATH`).
    #[arg(long, value_name = "PATH")]
    pub record: Option<PathBuf>,
    /// Audio output.
    #[command(flatten)]
    pub audio: AudioArgs,
    /// Writes one line per frame shown to PATH: `FRAME VIDEO AUDIO MEMORY`
    /// (the frame number, hex checksums of the picture shown, the audio
    /// and the memory).
    #[arg(long, value_name = "PATH")]
    pub frame_log: Option<PathBuf>,
    /// Run-ahead.
    #[command(flatten)]
    pub run_ahead: RunAheadArgs,
    /// Runs at the game's own speed (sleeping until each frame is due), as
    /// playing alone does, instead of unthrottled.
    #[arg(long)]
    pub realtime: bool,
}

/// `netcade run`.
pub fn run_command(args: &RunArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    // Ctrl-C, SIGTERM and SIGHUP end it with one exit code, as every command.
    exit_on_interrupt();
    let mut inputs = InputSource::open_for_run(&args.inputs, args.frames)?;
    let mut game = open_game(&args.game)?;
    let recorder = match &args.record {
        Some(path) => {
            let mut start_state = Vec::new();
            game.save_state(&mut start_state)
                .map_err(AppError::at_frame(0))?;
            let players = inputs.players() as u8;
            let header =
                replay_header(game.as_ref(), &args.game, players, Vec::new(), start_state)?;
            Some(ReplayRecorder::create(path, &header)?)
        }
        None => None,
    };
    let audio = args
        .audio
        .open_sink(game.sample_rate(), Some(args.frames))?;
    let frame_log = FrameLog::open(args.frame_log.as_deref())?;
    let mut sinks = ((recorder, audio), frame_log);
    let mut run_ahead = RunAhead::new(args.run_ahead, SavestateContext::Normal);
    let report = run_frames_ahead(
        game.as_mut(),
        args.frames,
        &mut inputs,
        &mut run_ahead,
        &mut sinks,
        if args.realtime {
            Pace::RealTime
        } else {
            Pace::Unthrottled
        },
    )?;
    let ((recorder, audio), frame_log) = sinks;
    let result = RunResult {
        game: game.title(),
        inputs: args.inputs.to_string(),
        run: report,
        outputs: SinksSummary {
            audio: audio.map(|sink| sink.finish()).transpose()?,
            recording: recorder
                .map(|recorder| recorder.finish(EndReason::Finished))
                .transpose()?,
            speaker: None,
            frame_log: frame_log.map(FrameLog::finish).transpose()?,
        },
        run_ahead: args.run_ahead.describe(),
    };
    write_report(&result, args.json, out)?;
    Ok(Outcome::Success)
}

/// What `netcade run` did: the run, and what its outputs left.
struct RunResult {
    game: String,
    inputs: String,
    run: RunReport,
    outputs: SinksSummary,
    run_ahead: Option<String>,
}

impl Report for RunResult {
    fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        match &self.run_ahead {
            Some(run_ahead) => writeln!(out, "{} ({run_ahead})", self.game)?,
            None => writeln!(out, "{}", self.game)?,
        }
        self.run.describe(out)?;
        self.outputs.describe(out)
    }

    fn json(&self) -> serde_json::Value {
        let mut json = self.run.json();
        self.outputs.add_to_json(&mut json);
        json["command"] = "run".into();
        json["game"] = self.game.clone().into();
        json["inputs"] = self.inputs.clone().into();
        json["run_ahead"] = self.run_ahead.clone().into();
        json
    }
}
