//! `netcade probe-core CORE` (hidden): loads a core and prints what it
//! declares (name, version, content extensions) as one JSON line. The
//! launcher runs it in a child process for each core it lists, so a core
//! that crashes on loading costs that child, never the menu.

use crate::engine::{AppError, Outcome};
use crate::launcher::cores::probe_core;
use std::io::Write;

/// Arguments of `netcade probe-core`.
#[derive(Clone, Debug, clap::Args)]
pub struct ProbeCoreArgs {
    /// The core: `duel` or a core's path.
    #[arg(value_name = "CORE")]
    pub core: String,
}

/// `netcade probe-core`.
pub fn probe_core_command(args: &ProbeCoreArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let summary = probe_core(&args.core)?;
    writeln!(out, "{}", summary.to_json())?;
    Ok(Outcome::Success)
}
