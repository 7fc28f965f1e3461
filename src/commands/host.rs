//! `netcade host`: host a match over UDP and wait for players to join.

use crate::engine::live::players::{host_match, HostArgs, LiveOptions};
use crate::engine::{AppError, Outcome};
use std::io::Write;

/// `netcade host`.
pub fn host_command(args: &HostArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    host_match(args, LiveOptions::for_stdout(), out).map(|played| played.outcome)
}
