//! `netcade host`: host a match over UDP and wait for players to join.

use crate::commands::outputs::OutputArgs;
use crate::engine::live::options::LiveOptions;
use crate::engine::live::players::{host_match, HostSettings};
use crate::engine::{AppError, Outcome};
use std::io::Write;

/// Arguments of `netcade host`.
#[derive(Clone, Debug, clap::Args)]
pub struct HostArgs {
    /// The match.
    #[command(flatten)]
    pub settings: HostSettings,
    /// What it shows and keeps.
    #[command(flatten)]
    pub outputs: OutputArgs,
    /// End the output with one JSON object on its own line.
    #[arg(long)]
    pub json: bool,
}

/// `netcade host`.
pub fn host_command(args: &HostArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let played = host_match(
        &args.settings,
        &args.outputs.live(),
        &LiveOptions::for_stdout(),
        out,
    )?;
    played.write_report(args.json, out)?;
    Ok(played.outcome)
}
