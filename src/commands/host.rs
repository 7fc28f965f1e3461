//! `netcade host`: host a match over UDP and wait for players to join;
//! `netcade host --retroarch`: host RetroArch players over TCP.

use crate::commands::outputs::OutputArgs;
use crate::engine::{AppError, Outcome};
use crate::live::players::{host_match, HostSettings};
use crate::live::retroarch_host::host_retroarch;
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
    if settings.retroarch.enabled {
        return args.outputs.play_live(out, |outputs, options, out| {
            host_retroarch(&settings, outputs, options, out)
        });
    }
    args.outputs.play_live(out, |outputs, options, out| {
        host_match(&settings, outputs, options, out)
    })
}
