//! `netcade replay`: `play` (in a window, or headless: verify, seek),
//! `info`, `inputs` and `diff`.

pub mod diff;
pub mod info;
pub mod inputs;
pub mod play;
pub mod try_states;

use crate::engine::{AppError, Outcome};
use std::io::Write;

/// Arguments of `netcade replay`.
#[derive(Clone, Debug, clap::Args)]
pub struct ReplayArgs {
    /// What to do with a replay.
    #[command(subcommand)]
    pub command: ReplayCommand,
}

/// The `netcade replay` subcommands.
#[derive(Clone, Debug, clap::Subcommand)]
pub enum ReplayCommand {
    /// Play a replay back (headless: at full speed), verify it, or seek in it.
    Play(Box<play::PlayArgs>),
    /// Print a replay's header and end record.
    Info(info::InfoArgs),
    /// Print a replay's inputs as an input script (`run --inputs FILE` reads it).
    Inputs(inputs::InputsArgs),
    /// Name the first frame where two replays' inputs or checksums differ.
    Diff(diff::DiffArgs),
    /// Play a replay through the frame after the last state it carries:
    /// playback asks a child process of its own first.
    #[command(hide = true, name = crate::engine::state_trial::TRY_STATES_COMMAND)]
    TryStates(try_states::TryStatesArgs),
}

/// `netcade replay …`.
pub fn replay_command(args: &ReplayArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    match &args.command {
        ReplayCommand::Play(args) => play::play_command(args, out),
        ReplayCommand::Info(args) => info::info_command(args, out),
        ReplayCommand::Inputs(args) => inputs::inputs_command(args, out),
        ReplayCommand::Diff(args) => diff::diff_command(args, out),
        ReplayCommand::TryStates(args) => try_states::try_states_command(args, out),
    }
}
