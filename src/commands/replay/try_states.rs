//! `netcade replay try-states FILE` (hidden): plays a replay through the
//! frame after the last savestate it carries, then shuts the core down.
//! Every playback runs it in a child process first
//! (`engine::state_trial`), so a state that breaks the core costs that
//! child, never the playback.

use crate::engine::playback::{load_replay, open_recorded_game, ReplayGameArgs};
use crate::engine::state_trial::try_recorded_states;
use crate::engine::{AppError, Outcome};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `netcade replay try-states`.
#[derive(Clone, Debug, clap::Args)]
pub struct TryStatesArgs {
    /// The replay file.
    pub file: PathBuf,
    /// The core and content to try its states with.
    #[command(flatten)]
    pub game: ReplayGameArgs,
}

/// `netcade replay try-states`: prints how many states it tried.
pub fn try_states_command(args: &TryStatesArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let replay = load_replay(&args.file)?;
    let tried = {
        let mut game = open_recorded_game(&replay, &args.game)?;
        try_recorded_states(&replay, game.as_mut())?
        // The core is shut down here, where a corrupted one crashes.
    };
    writeln!(out, "{tried} states tried")?;
    Ok(Outcome::Success)
}
