//! `netcade spectate HOST:PORT`: watch a match live, from any moment.

use crate::engine::live::players::LiveOptions;
use crate::engine::live::spectator::{spectate_match, SpectateArgs};
use crate::engine::{AppError, Outcome};
use std::io::Write;

/// `netcade spectate`.
pub fn spectate_command(args: &SpectateArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    spectate_match(args, LiveOptions::for_stdout(), out).map(|watched| watched.outcome)
}
