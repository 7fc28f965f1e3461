//! Trying a replay's savestates in a child process before this one loads
//! them. A core trusts the states it is handed, and a replay is shared
//! between strangers: a state no core saved (noise of the right size) can
//! corrupt the core's heap even when it gives the game memory the replay
//! claims, and the core then crashes later, or at exit. Checksums cannot
//! catch that, since whoever wrote the state wrote its checksums too. So a
//! child netcade (`replay try-states`, hidden) plays the replay through the
//! frame after its last state and shuts the core down; only if it exits
//! cleanly does this process load them.

use crate::engine::child::{run_child, ChildFailure};
use crate::engine::playback::{open_recorded_game, start_state, ReplayGameArgs, ReplayPlayback};
use crate::engine::{AppError, Game};
use netcode::emulator::Emulator;
use netcode::replay::{Replay, ReplayEvent};
use netcode::rollback::Frame;
use std::path::Path;
use std::time::Duration;

/// The hidden `replay` subcommand the child runs.
pub const TRY_STATES_COMMAND: &str = "try-states";

/// How long the child may take: a minute to load the slowest core and its
/// content, then 10 ms for each frame it plays (a heavy core headless runs
/// several times faster). Only a child that hangs comes near it.
pub fn trial_timeout(frames: u32) -> Duration {
    Duration::from_secs(60) + Duration::from_millis(10) * frames
}

/// What of the child's stderr is kept: its error line is near the start.
const MAX_TRIAL_OUTPUT: u64 = 64 * 1024;

/// The frames a replay's playback loads a state at the start of: its
/// start frame (unless it starts from the content as loaded), then each
/// repair's.
pub fn state_frames(replay: &Replay) -> Vec<Frame> {
    let start = start_state(replay).map(|_| replay.start_frame());
    let repairs = replay.events.iter().filter_map(|event| match event {
        ReplayEvent::Repair { frame, .. } => Some(*frame),
        ReplayEvent::PlayerLeft { .. } => None,
    });
    start.into_iter().chain(repairs).collect()
}

/// The child's part: plays the replay on `game` as playback does, from its
/// start state through the frame its last state is loaded at the start of
/// (each state checked as playback checks it), without drawing. A state
/// is tried on the game it meets in playback, not on a fresh one: what
/// noise in it breaks depends on what the core held before. Gives how many
/// states were tried.
pub fn try_recorded_states<G: Emulator + ?Sized>(
    replay: &Replay,
    game: &mut G,
) -> Result<usize, AppError> {
    let frames = state_frames(replay);
    let Some(&last) = frames.iter().max() else {
        return Ok(0);
    };
    let mut playback = ReplayPlayback::start(replay, game)?;
    while playback.frame() <= last {
        playback.step(game, false, &mut ())?;
    }
    Ok(frames.len())
}

/// Opens the game the replay at `file` was recorded with (see
/// [`open_recorded_game`]), once a child process has tried the states it
/// carries ([`try_states_in_child`]): a state that breaks the core costs
/// the child, and this process refuses the replay.
pub fn open_replay_game(
    file: &Path,
    replay: &Replay,
    args: &ReplayGameArgs,
) -> Result<Box<dyn Game>, AppError> {
    let game = open_recorded_game(replay, args)?;
    let program = std::env::current_exe().map_err(|err| AppError::StatesUntried {
        reason: format!("cannot find netcade's own program: {err}"),
    })?;
    try_states_in_child(&program, file, replay, args)?;
    Ok(game)
}

/// The parent's part: if the replay at `file` carries states, has a child
/// netcade (`program`) try them with the game `args` name, and refuses the
/// replay if the child crashed, hung, or refused a state.
pub fn try_states_in_child(
    program: &Path,
    file: &Path,
    replay: &Replay,
    args: &ReplayGameArgs,
) -> Result<(), AppError> {
    let Some(last) = state_frames(replay).into_iter().max() else {
        return Ok(());
    };
    let frames = last
        .number()
        .saturating_sub(replay.start_frame().number())
        .saturating_add(1);
    // Paths as they are (not as text), the file after `--`: any name is
    // the file's, even one that looks like a switch.
    let mut line: Vec<std::ffi::OsString> = vec!["replay".into(), TRY_STATES_COMMAND.into()];
    line.extend(args.to_args());
    line.extend(["--".into(), file.as_os_str().to_owned()]);
    run_child(program, &line, trial_timeout(frames), MAX_TRIAL_OUTPUT)
        .map(drop)
        .map_err(trial_verdict)
}

/// The error a failed trial makes of the replay.
fn trial_verdict(failure: ChildFailure) -> AppError {
    let damaged = "the file was changed or damaged, or the core cannot load its own states";
    match failure {
        ChildFailure::NotStarted(line) => AppError::StatesUntried {
            reason: without_error_prefix(&line).to_string(),
        },
        ChildFailure::TimedOut { seconds, .. } => AppError::ReplayRefused {
            reason: format!(
                "the replay's states kept the core busy past {seconds} s when tried in a child \
                 process: {damaged}"
            ),
        },
        ChildFailure::Failed { status, error_line } => match crash_cause(status) {
            Some(cause) => AppError::ReplayRefused {
                reason: format!(
                    "the replay's states made the core crash ({cause}) when tried in a child \
                     process: {damaged}"
                ),
            },
            // The child's own refusal (a state the core refused, or whose
            // memory is not the recording's) says it best.
            None => AppError::ReplayRefused {
                reason: error_line.as_deref().map_or_else(
                    || format!("trying the replay's states in a child process failed ({status})"),
                    |line| without_error_prefix(line).to_string(),
                ),
            },
        },
    }
}

/// How a child that crashed ended: killed by a signal, or our crash
/// handler's exit code; `None` for a child that failed on its own terms.
fn crash_cause(status: std::process::ExitStatus) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    if let Some(signal) = status.signal() {
        return Some(format!("signal {signal}"));
    }
    (status.code() == Some(i32::from(libretro_host::CORE_CRASHED_EXIT_CODE)))
        .then(|| "exit code 4, a fatal signal inside the core".to_string())
}

fn without_error_prefix(line: &str) -> &str {
    line.strip_prefix("error: ").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn failed(raw_status: i32, line: Option<&str>) -> String {
        trial_verdict(ChildFailure::Failed {
            status: std::process::ExitStatus::from_raw(raw_status),
            error_line: line.map(str::to_string),
        })
        .to_string()
    }

    #[test]
    fn a_child_that_crashed_refuses_the_replay_without_its_crash_report() {
        // Exit code 4 (the crash handler's) is 4 << 8 in a raw wait status.
        let report = "error: core Stella crashed with SIGSEGV while shutting down";
        // 11 is SIGSEGV, a raw status of a child it killed.
        for raw in [4 << 8, 11] {
            let error = failed(raw, Some(report));
            assert!(
                error.starts_with("the replay's states made the core crash ("),
                "{error}"
            );
            assert!(error.contains("changed or damaged"), "{error}");
            assert!(!error.contains("Stella"), "{error}");
        }
    }

    #[test]
    fn a_child_that_refused_a_state_gives_its_reason() {
        let error = failed(
            2 << 8,
            Some("error: the replay's start state of frame 0 is not a state this core saved"),
        );
        assert_eq!(
            error,
            "the replay's start state of frame 0 is not a state this core saved"
        );
    }

    #[test]
    fn a_child_past_its_time_refuses_the_replay() {
        let error = trial_verdict(ChildFailure::TimedOut {
            command: "replay".into(),
            seconds: 61,
        });
        assert_eq!(error.exit_code(), 2);
        assert!(error.to_string().contains("past 61 s"), "{error}");
    }
}
