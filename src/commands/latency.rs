//! `netcade latency`: measures a game's own input lag (see
//! [`crate::engine::latency`]) and suggests a run-ahead.

use crate::engine::inputs::{InputSource, InputSpec};
use crate::engine::interrupt::exit_on_interrupt;
use crate::engine::latency::{measure_latency, Latency, LatencyPlan};
use crate::engine::report::{write_report, Report};
use crate::engine::sinks::run_ahead::MAX_RUN_AHEAD;
use crate::engine::{open_game, AppError, GameArgs, Outcome};
use std::io::Write;

/// Arguments of `netcade latency`.
#[derive(Clone, Debug, clap::Args)]
pub struct LatencyArgs {
    /// The core, content and core options to measure.
    #[command(flatten)]
    pub game: GameArgs,
    /// The buttons of the run the states are taken from: none,
    /// random:SEED or an input script (games may need START to leave
    /// their title screens).
    #[arg(long, value_name = "SOURCE", default_value_t = InputSpec::default())]
    pub inputs: InputSpec,
    /// Frames run before the first state.
    #[arg(long, value_name = "N", default_value_t = 600)]
    pub warmup: u32,
    /// States the branches start from.
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub states: u32,
    /// Frames between two states.
    #[arg(long, value_name = "N", default_value_t = 120)]
    pub spacing: u32,
    /// Frames each branch runs: a button whose press shows no later has
    /// no effect.
    #[arg(long, value_name = "N", default_value_t = 30,
          value_parser = clap::value_parser!(u32).range(1..=600))]
    pub horizon: u32,
    /// Ends the output with one JSON object on its own line.
    #[arg(long)]
    pub json: bool,
}

/// `netcade latency`.
pub fn latency_command(args: &LatencyArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    exit_on_interrupt();
    let plan = LatencyPlan {
        warmup: args.warmup,
        states: args.states,
        spacing: args.spacing,
        horizon: args.horizon,
    };
    let run_frames = plan.warmup + (plan.states - 1) * plan.spacing;
    let mut inputs = InputSource::open_for_run(&args.inputs, run_frames)?;
    let mut game = open_game(&args.game)?;
    let latency = measure_latency(game.as_mut(), &mut inputs, plan)?;
    let report = LatencyReport {
        game: game.title(),
        latency,
    };
    write_report(&report, args.json, out)?;
    Ok(Outcome::Success)
}

/// What `netcade latency` found.
struct LatencyReport {
    game: String,
    latency: Latency,
}

impl LatencyReport {
    /// The run-ahead that hides the lag (at most [`MAX_RUN_AHEAD`]).
    fn suggested_run_ahead(&self) -> Option<u32> {
        Some(self.latency.lag_frames()?.min(u32::from(MAX_RUN_AHEAD)))
    }
}

impl Report for LatencyReport {
    fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let latency = &self.latency;
        let showed: Vec<String> = latency
            .buttons
            .iter()
            .filter_map(|(name, lag)| Some(format!("{name} {}", (*lag)?)))
            .collect();
        let frames = latency
            .state_frames
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        match latency.lag_frames() {
            Some(lag) => writeln!(
                out,
                "{}: input lag {lag} frames (median of {} buttons, from states at frames {frames})",
                self.game,
                showed.len()
            )?,
            None => writeln!(
                out,
                "{}: no button changed the picture within {} frames (states at frames {frames})",
                self.game, latency.plan.horizon
            )?,
        }
        if !showed.is_empty() {
            writeln!(out, "  by button: {}", showed.join("  "))?;
        }
        let silent: Vec<&str> = latency
            .buttons
            .iter()
            .filter(|(_, lag)| lag.is_none())
            .map(|(name, _)| *name)
            .collect();
        if !silent.is_empty() {
            writeln!(
                out,
                "  no effect within {} frames: {}",
                latency.plan.horizon,
                silent.join(" ")
            )?;
        }
        if let Some(run_ahead) = self.suggested_run_ahead() {
            writeln!(
                out,
                "suggested: --run-ahead {run_ahead} (older games may break above 1 or 2)"
            )?;
        }
        Ok(())
    }

    fn json(&self) -> serde_json::Value {
        let latency = &self.latency;
        let buttons: serde_json::Map<String, serde_json::Value> = latency
            .buttons
            .iter()
            .map(|(name, lag)| ((*name).to_string(), (*lag).into()))
            .collect();
        serde_json::json!({
            "command": "latency",
            "game": self.game,
            "lag_frames": latency.lag_frames(),
            "buttons": buttons,
            "state_frames": latency.state_frames,
            "by_state": latency.by_state.iter().map(|lags| {
                latency.buttons.iter().zip(lags).map(|((name, _), lag)| ((*name).to_string(), (*lag).into()))
                    .collect::<serde_json::Map<String, serde_json::Value>>()
            }).collect::<Vec<_>>(),
            "horizon": latency.plan.horizon,
            "suggested_run_ahead": self.suggested_run_ahead(),
        })
    }
}
