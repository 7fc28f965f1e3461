//! `netcade join HOST:PORT`: join a match someone hosts; `netcade join
//! retroarch://HOST[:PORT]`: play in a RetroArch host's match.

use crate::commands::outputs::OutputArgs;
use crate::engine::{AppError, Outcome};
use crate::live::players::{join_match, JoinSettings};
use crate::live::retroarch::{is_retroarch_address, join_retroarch};
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
    let settings = JoinSettings {
        common: args.outputs.with_default_inputs(&args.settings.common),
        ..args.settings.clone()
    };
    if let Some(address) = settings
        .address
        .as_deref()
        .filter(|a| is_retroarch_address(a))
    {
        return args.outputs.play_live(out, |outputs, options, out| {
            join_retroarch(&settings, address, outputs, options, out)
        });
    }
    args.outputs.play_live(out, |outputs, options, out| {
        join_match(&settings, outputs, options, out)
    })
}
