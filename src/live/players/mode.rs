//! Rollback or lockstep: the rollback pre-flight's finding and the mode the
//! host chooses from it (`--mode`), which every joiner adopts.
//!
//! The pre-flight sync-tests the loaded core with the one sync-test engine
//! and then restores the state it had just after loading. Every machine
//! runs the same one (same frames, same buttons), whatever the mode, so
//! even a core that restores its state imperfectly starts the match the
//! same way everywhere.

use super::args::ModeArg;
use crate::engine::inputs::RandomPlayer;
use crate::engine::{AppError, Game};
use netcode::emulator::EmulatorError;
use netcode::rollback::synctest::{run_sync_test, SyncTestError, SyncTestSettings};

/// The pre-flight: about a second of frames, going back this far each frame.
const PREFLIGHT_DISTANCE: u32 = 4;

/// What the rollback pre-flight found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Preflight {
    /// The core re-simulates what it ran: rollback works.
    Faithful,
    /// Saving and loading work, but re-simulated frames' game memory
    /// differs (the sync-test's verdict).
    Unfaithful(String),
    /// Only the picture after a restore differs (Genesis Plus GX's does):
    /// the game itself rolls back, so `auto` keeps rollback, with a warning.
    PictureOnly(String),
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
            Preflight::Unfaithful(verdict) | Preflight::PictureOnly(verdict) => {
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
    let Some(desync) = &report.desync else {
        tracing::info!("rollback pre-flight: {}", report.verdict());
        return Ok(Preflight::Faithful);
    };
    let differing = desync.compared_differing;
    Ok(if differing.memory || differing.state {
        Preflight::Unfaithful(report.verdict())
    } else {
        Preflight::PictureOnly(report.verdict())
    })
}

/// The host's choice: whether the match runs in lockstep, from `--mode`
/// and the pre-flight, said once (`note:` for lockstep, `warning:` for
/// rollback on an unfaithful core). Refuses rollback on a core that cannot
/// save, and with `strict` on one that is unfaithful.
pub(super) fn host_mode(
    mode: ModeArg,
    found: &Preflight,
    strict: bool,
    game: &str,
) -> Result<bool, AppError> {
    match (mode, found) {
        (ModeArg::Lockstep, _) => {
            eprintln!("note: playing in lockstep (--mode lockstep): {LOCKSTEP_MEANS}");
            return Ok(true);
        }
        (ModeArg::Auto, Preflight::Unfaithful(_) | Preflight::NoState(_)) => {
            let problem = found.problem().unwrap_or_default();
            eprintln!(
                "note: rollback pre-flight: {game} {problem}; playing in lockstep: {LOCKSTEP_MEANS}"
            );
            return Ok(true);
        }
        _ => {}
    }
    match found {
        Preflight::Faithful => Ok(false),
        Preflight::Unfaithful(verdict) | Preflight::PictureOnly(verdict) if strict => {
            Err(AppError::PreflightFailed {
                game: game.to_string(),
                verdict: verdict.clone(),
            })
        }
        Preflight::Unfaithful(verdict) | Preflight::PictureOnly(verdict) => {
            eprintln!(
                "warning: rollback pre-flight: {game} does not restore its state faithfully ({verdict}); the match may desync"
            );
            Ok(false)
        }
        Preflight::NoState(_) => Err(AppError::RollbackUnavailable {
            asked: "--mode rollback",
            game: game.to_string(),
            problem: found.problem().unwrap_or_default(),
            remedy: "play it with --mode lockstep or auto",
        }),
    }
}

/// A joiner's side of the host's choice: lockstep is said once; rollback
/// on a core that cannot save here is refused, and on one unfaithful here
/// warned about (with `strict`, refused), as the host's own pre-flight is.
pub(super) fn join_mode(
    host_lockstep: bool,
    found: &Preflight,
    strict: bool,
    game: &str,
) -> Result<(), AppError> {
    if host_lockstep {
        eprintln!("note: the host plays this match in lockstep: {LOCKSTEP_MEANS}");
        return Ok(());
    }
    match found {
        Preflight::Faithful => Ok(()),
        Preflight::Unfaithful(_) | Preflight::PictureOnly(_) => {
            host_mode(ModeArg::Rollback, found, strict, game).map(|_| ())
        }
        Preflight::NoState(_) => Err(AppError::RollbackUnavailable {
            asked: "the host plays this match with rollback",
            game: game.to_string(),
            problem: found.problem().unwrap_or_default(),
            remedy: "the host can choose --mode lockstep or auto",
        }),
    }
}

/// What lockstep means for the players, said with the choice.
const LOCKSTEP_MEANS: &str =
    "no state is saved or loaded, the input delay covers the round trip and each frame waits for every player's input";

#[cfg(test)]
mod tests {
    use super::*;

    fn unfaithful() -> Preflight {
        Preflight::Unfaithful("sync-test FAILED at frame 2: memory differs".into())
    }

    fn no_state() -> Preflight {
        Preflight::NoState("the core could not save its state".into())
    }

    fn picture_only() -> Preflight {
        Preflight::PictureOnly("sync-test FAILED at frame 2: video differs".into())
    }

    #[test]
    fn auto_plays_in_lockstep_only_when_the_core_cannot_restore_its_game() {
        let auto = |found: &Preflight| host_mode(ModeArg::Auto, found, false, "Core 1").unwrap();
        assert!(!auto(&Preflight::Faithful));
        assert!(auto(&unfaithful()));
        assert!(auto(&no_state()));
        assert!(!auto(&picture_only()));
        assert!(host_mode(ModeArg::Lockstep, &Preflight::Faithful, true, "Core 1").unwrap());
    }

    #[test]
    fn rollback_on_a_core_that_cannot_save_is_a_user_mistake_and_strict_refuses_unfaithful_ones() {
        let refused = host_mode(ModeArg::Rollback, &no_state(), false, "Core 1").unwrap_err();
        assert!(matches!(refused, AppError::RollbackUnavailable { .. }));
        assert_eq!(refused.exit_code(), 2);
        assert!(!host_mode(ModeArg::Rollback, &unfaithful(), false, "Core 1").unwrap());
        let strict = host_mode(ModeArg::Rollback, &unfaithful(), true, "Core 1").unwrap_err();
        assert!(matches!(strict, AppError::PreflightFailed { .. }));
        let strict_auto = host_mode(ModeArg::Auto, &picture_only(), true, "Core 1");
        assert!(matches!(strict_auto, Err(AppError::PreflightFailed { .. })));
    }

    #[test]
    fn a_joiner_refuses_the_hosts_rollback_only_when_its_core_cannot_save() {
        assert!(join_mode(true, &no_state(), true, "Core 1").is_ok());
        assert!(join_mode(false, &Preflight::Faithful, true, "Core 1").is_ok());
        assert!(join_mode(false, &unfaithful(), false, "Core 1").is_ok());
        let refused = join_mode(false, &no_state(), false, "Core 1").unwrap_err();
        assert!(refused.to_string().starts_with(
            "the host plays this match with rollback, but the rollback pre-flight found that Core 1 cannot save"
        ));
    }
}
