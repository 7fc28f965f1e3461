//! `netcade join HOST:PORT`: join a match someone hosts.

use crate::engine::live::players::{join_match, JoinArgs, LiveOptions};
use crate::engine::{AppError, Outcome};
use std::io::Write;

/// `netcade join`.
pub fn join_command(args: &JoinArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    join_match(args, LiveOptions::for_stdout(), out).map(|played| played.outcome)
}
