//! `netcade join HOST:PORT`: join a match someone hosts.

use crate::commands::outputs::OutputArgs;
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
}

/// `netcade join`.
pub fn join_command(args: &JoinArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    args.outputs.play_live(out, |outputs, options, out| {
        join_match(&args.settings, outputs, options, out)
    })
}
