//! `netcade debug`: the frame-step debugger on stdin and stdout.

use crate::engine::debugger::{
    debug_session, session_outcome, RecordedFrames, DEFAULT_HISTORY, DEFAULT_HISTORY_MB,
};
use crate::engine::playback::{load_replay, ReplayGameArgs, ReplayPlayback};
use crate::engine::state_trial::open_replay_game;
use crate::engine::{open_game, AppError, GameArgs, Outcome};
use std::io::IsTerminal;
use std::path::PathBuf;

/// Arguments of `netcade debug`.
#[derive(Clone, Debug, clap::Args)]
// A replay names its core and content: `--core` is needed only without one.
#[command(mut_arg("core", |core| core.required(false).required_unless_present("replay")))]
pub struct DebugArgs {
    /// The core, content and core options to debug (with --replay: the
    /// core and content to play it with, if not the recorded ones).
    #[command(flatten)]
    pub game: Option<GameArgs>,
    /// Step through this replay: the debugger begins at its start state and
    /// `step`, `back` and `goto` follow its recorded inputs.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// How many frames `back` and `goto` can go back.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_HISTORY)]
    pub history: u32,
    /// The most memory the history may take, in MiB (compressed states;
    /// the oldest frames are forgotten first).
    #[arg(
        long,
        value_name = "MB",
        default_value_t = DEFAULT_HISTORY_MB,
        value_parser = clap::value_parser!(u64).range(1..=1 << 20)
    )]
    pub history_mb: u64,
}

impl DebugArgs {
    /// The history's byte budget.
    pub fn history_bytes(&self) -> usize {
        usize::try_from(self.history_mb << 20).unwrap_or(usize::MAX)
    }
}

/// `netcade debug`: a session on stdin and stdout.
pub fn debug_command(args: &DebugArgs) -> Result<Outcome, AppError> {
    let replay = match &args.replay {
        Some(file) => Some((file, load_replay(file)?)),
        None => None,
    };
    let mut game = match (&replay, &args.game) {
        (Some((file, replay)), game) => {
            let with = ReplayGameArgs {
                core: game.as_ref().map(|game| game.core.clone()),
                rom: game.as_ref().and_then(|game| game.rom.clone()),
                system_dir: game.as_ref().and_then(|game| game.system_dir.clone()),
            };
            let mut game = open_replay_game(file, replay, &with)?;
            // The start frame as the replay began it: its start state, its
            // events.
            ReplayPlayback::start(replay, game.as_mut())?;
            game
        }
        (None, Some(game)) => open_game(game)?,
        (None, None) => {
            return Err(AppError::BadArgument {
                message: "debug needs --core CORE (and --rom ROM), or --replay FILE".into(),
            })
        }
    };
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let summary = debug_session(
        game.as_mut(),
        args.history,
        args.history_bytes(),
        replay
            .as_ref()
            .map(|(_, replay)| replay as &dyn RecordedFrames),
        &mut stdin.lock(),
        &mut stdout.lock(),
        &mut stderr.lock(),
    )?;
    Ok(session_outcome(summary, stdin.is_terminal()))
}
