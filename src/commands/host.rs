//! `netcade host`: host a match over UDP and wait for players to join.

use crate::commands::outputs::OutputArgs;
use crate::engine::{AppError, Outcome};
use crate::live::players::{host_match, HostSettings};
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
}

/// `netcade host`.
pub fn host_command(args: &HostArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let settings = HostSettings {
        common: args.outputs.with_default_inputs(&args.settings.common),
        ..args.settings.clone()
    };
    args.outputs.play_live(out, |outputs, options, out| {
        host_match(&settings, outputs, options, out)
    })
}
