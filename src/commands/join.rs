//! `netcade join HOST:PORT`: join a match someone hosts.

use crate::commands::outputs::OutputArgs;
use crate::engine::live::options::LiveOptions;
use crate::engine::live::players::{join_match, JoinSettings};
use crate::engine::{AppError, Outcome};
use std::io::Write;

/// Arguments of `netcade join`.
#[derive(Clone, Debug, clap::Args)]
pub struct JoinArgs {
    /// The match.
    #[command(flatten)]
    pub settings: JoinSettings,
    /// What it shows and keeps.
    #[command(flatten)]
    pub outputs: OutputArgs,
    /// End the output with one JSON object on its own line.
    #[arg(long)]
    pub json: bool,
}

/// `netcade join`.
pub fn join_command(args: &JoinArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let played = join_match(
        &args.settings,
        &args.outputs.live(),
        &LiveOptions::for_stdout(),
        out,
    )?;
    played.write_report(args.json, out)?;
    Ok(played.outcome)
}
