//! `netcade spectate HOST:PORT`: watch a match live, from any moment.

use crate::commands::outputs::OutputArgs;
use crate::engine::live::spectator::{spectate_match, SpectateSettings};
use crate::engine::{AppError, Outcome};
use std::io::Write;

/// Arguments of `netcade spectate`.
#[derive(Clone, Debug, clap::Args)]
pub struct SpectateArgs {
    /// The match to watch.
    #[command(flatten)]
    pub settings: SpectateSettings,
    /// What it shows and keeps.
    #[command(flatten)]
    pub outputs: OutputArgs,
}

/// `netcade spectate`.
pub fn spectate_command(args: &SpectateArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    args.outputs.play_live(out, |outputs, options, out| {
        spectate_match(&args.settings, outputs, options, out)
    })
}
