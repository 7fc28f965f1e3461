//! `netcade spectate HOST:PORT`: watch a match live, from any moment.

use crate::commands::outputs::OutputArgs;
use crate::engine::live::options::LiveOptions;
use crate::engine::live::spectator::{spectate_match, SpectateSettings};
use crate::engine::{AppError, Outcome};
use std::io::Write;

/// Arguments of `netcade spectate`.
#[derive(Clone, Debug, clap::Args)]
pub struct SpectateArgs {
    /// The match to watch.
    #[command(flatten)]
    pub settings: SpectateSettings,
    /// What it shows and keeps (the replay of the frames watched).
    #[command(flatten)]
    pub outputs: OutputArgs,
    /// End the output with one JSON object on its own line.
    #[arg(long)]
    pub json: bool,
}

/// `netcade spectate`.
pub fn spectate_command(args: &SpectateArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let watched = spectate_match(
        &args.settings,
        &args.outputs.live(),
        &LiveOptions::for_stdout(),
        out,
    )?;
    watched.write_report(args.json, out)?;
    Ok(watched.outcome)
}
