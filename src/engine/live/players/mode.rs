//! Rollback or lockstep: the rollback pre-flight's finding and the mode the
//! host chooses from it (`--mode`), which every joiner adopts.
//!
//! The pre-flight sync-tests the loaded core with the one sync-test engine
//! and then restores the state it had just after loading. Every machine
//! runs the same one (same frames, same buttons), whatever the mode, so
//! even a core that restores its state imperfectly starts the match the
//! same way everywhere.

use super::args::ModeArg;
use crate::emulator::EmulatorError;
use crate::engine::inputs::RandomPlayer;
use crate::engine::{AppError, Game};
use crate::rollback::synctest::{run_sync_test, SyncTestError, SyncTestSettings};

/// The pre-flight: about a second of frames, going back this far each frame.
const PREFLIGHT_DISTANCE: u32 = 4;

/// What the rollback pre-flight found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Preflight {
    /// The core re-simulates what it ran: rollback works.
    Faithful,
    /// Saving and loading work, but re-simulated frames differ (the
    /// sync-test's verdict).
    Unfaithful(String),
    /// The core cannot save or restore its state at all (why).
    NoState(String),
}

impl Preflight {
    /// Whether the core gave states: then the host can send its start state.
    pub(super) fn saves_states(&self) -> bool {
        !matches!(self, Preflight::NoState(_))
    }

    /// What is wrong, said after the core's name; `None` when faithful.
    fn problem(&self) -> Option<String> {
        match self {
            Preflight::Faithful => None,
            Preflight::Unfaithful(verdict) => {
                Some(format!("does not restore its state faithfully ({verdict})"))
            }
            Preflight::NoState(why) => Some(format!("cannot save and restore its state ({why})")),
        }
    }
}

/// Runs the rollback pre-flight on `game` (see the module docs). A core
/// that fails for another reason than its states (it stopped) is an error.
pub(super) fn preflight(game: &mut dyn Game) -> Result<Preflight, AppError> {
    let mut loaded = Vec::new();
    if let Err(error) = game.save_state(&mut loaded) {
        return Ok(Preflight::NoState(error.to_string()));
    }
    let frames = (game.frames_per_second().round() as u32).max(PREFLIGHT_DISTANCE + 1);
    let mut buttons = RandomPlayer::new(0);
    let report = run_sync_test(
        game,
        SyncTestSettings::new(frames, PREFLIGHT_DISTANCE),
        &mut || buttons.next_frame(),
        &mut |_| {},
    );
    let restored = game.load_state(&loaded);
    let report = match report {
        Ok(report) => report,
        Err(SyncTestError::Game {
            source: error @ (EmulatorError::SaveFailed { .. } | EmulatorError::LoadFailed { .. }),
            ..
        }) => return Ok(Preflight::NoState(error.to_string())),
        Err(error) => return Err(error.into()),
    };
    if let Err(error) = restored {
        return Ok(Preflight::NoState(error.to_string()));
    }
    if report.desync.is_none() {
        tracing::info!("rollback pre-flight: {}", report.verdict());
        return Ok(Preflight::Faithful);
    }
    Ok(Preflight::Unfaithful(report.verdict()))
}

/// The host's choice: whether the match runs in lockstep, from `--mode`
/// and the pre-flight, said once (`note:` for lockstep, `warning:` for a
/// forced rollback on an unfaithful core). Refuses rollback on a core that
/// cannot save, and with `strict` on one that is unfaithful.
pub(super) fn host_mode(
    mode: ModeArg,
    found: &Preflight,
    strict: bool,
    game: &str,
) -> Result<bool, AppError> {
    let problem = found.problem();
    match (mode, problem) {
        (ModeArg::Lockstep, _) => {
            eprintln!("note: playing in lockstep (--mode lockstep): {LOCKSTEP_MEANS}");
            Ok(true)
        }
        (ModeArg::Auto, Some(problem)) => {
            eprintln!(
                "note: rollback pre-flight: {game} {problem}; playing in lockstep: {LOCKSTEP_MEANS}"
            );
            Ok(true)
        }
        (_, None) => Ok(false),
        (ModeArg::Rollback, Some(problem)) => match found {
            Preflight::Unfaithful(verdict) if !strict => {
                eprintln!(
                    "warning: rollback pre-flight: {game} does not restore its state faithfully ({verdict}); the match may desync"
                );
                Ok(false)
            }
            Preflight::Unfaithful(verdict) => Err(AppError::PreflightFailed {
                game: game.to_string(),
                verdict: verdict.clone(),
            }),
            _ => Err(AppError::RollbackUnavailable {
                asked: "--mode rollback",
                game: game.to_string(),
                problem,
                remedy: "play it with --mode lockstep or auto",
            }),
        },
    }
}

/// A joiner's side of the host's choice: lockstep is said once; rollback
/// on a core whose pre-flight failed here is refused.
pub(super) fn join_mode(
    host_lockstep: bool,
    found: &Preflight,
    game: &str,
) -> Result<(), AppError> {
    if host_lockstep {
        eprintln!("note: the host plays this match in lockstep: {LOCKSTEP_MEANS}");
        return Ok(());
    }
    match found.problem() {
        None => Ok(()),
        Some(problem) => Err(AppError::RollbackUnavailable {
            asked: "the host plays this match with rollback",
            game: game.to_string(),
            problem,
            remedy: "the host can choose --mode lockstep or auto",
        }),
    }
}

/// What lockstep means for the players, said with the choice.
const LOCKSTEP_MEANS: &str =
    "no state is saved or loaded, the input delay covers the round trip and each frame waits for every player's input";
