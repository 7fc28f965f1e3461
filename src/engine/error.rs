//! The one error type of the app layer, and what each outcome means as an
//! exit code.
//!
//! Exit codes (documented in `netcade --help` too):
//! - 0: the command did what was asked (a sync-test passed).
//! - 1: a sync-test found a desync ([`Outcome::SyncTestFailed`]), or the
//!   demo's netplay machines disagreed ([`Outcome::NetplayFailed`]).
//! - 2: a user mistake: bad arguments, a missing or unusable file (core,
//!   content, input script), a core that refuses the content, or a `debug`
//!   script with commands that failed.
//! - 3: something failed while running: the core failed to save or load a
//!   state, or an output file could not be written.
//! - 4: the core crashed the process (SIGSEGV, SIGFPE, …); the report is
//!   printed by the libretro host's fatal-signal handler, which exits with
//!   [`EXIT_CORE_CRASHED`] itself.
//! - 5: the demo's netplay match did not finish: a machine left, or its
//!   simulated time limit passed ([`Outcome::NetplayUnfinished`]).
//! - 6: `host`/`join`: the peer was lost (or left) before the match's last
//!   frame ([`Outcome::PeerLost`]).
//! - 7: `replay play --verify`: what the file holds verified, but the file
//!   is incomplete ([`Outcome::ReplayIncomplete`]).

use crate::engine::inputs::InputError;
use libretro_host::LibretroError;
use netcode::emulator::EmulatorError;
use netcode::netplay::NetplayError;
use netcode::rollback::state_history::StateHistoryError;
use netcode::rollback::synctest::SyncTestError;
use netcode::rollback::Frame;
use std::path::PathBuf;

/// The command did what was asked.
pub const EXIT_SUCCESS: u8 = 0;
/// A sync-test found a desync, or the demo's machines disagreed.
pub const EXIT_SYNC_TEST_FAILED: u8 = 1;
/// The user's arguments or files were at fault.
pub const EXIT_USER_MISTAKE: u8 = 2;
/// The game or the machine failed while running.
pub const EXIT_RUNTIME_FAILURE: u8 = 3;
/// Set by the libretro host's crash report, which exits by itself.
pub const EXIT_CORE_CRASHED: u8 = libretro_host::CORE_CRASHED_EXIT_CODE;
/// The demo's match did not finish.
pub const EXIT_NETPLAY_UNFINISHED: u8 = 5;
/// A `host`/`join` match lost its peer before its last frame.
pub const EXIT_PEER_LOST: u8 = 6;
/// A replay verified as far as it goes, but it is incomplete.
pub const EXIT_REPLAY_INCOMPLETE: u8 = 7;
/// Interrupted by Ctrl-C, SIGTERM or SIGHUP (128 + SIGINT, as shells
/// report Ctrl-C): every command alike.
pub const EXIT_INTERRUPTED: u8 = 130;

/// How a command that did not fail with an error ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Everything asked was done (a sync-test passed, a run finished).
    Success,
    /// The sync-test ran and found frames that do not re-simulate the same.
    SyncTestFailed,
    /// The machines of a netplay match disagreed on a final frame.
    NetplayFailed,
    /// A `debug` script (stdin not a terminal) had commands that failed.
    DebugCommandsFailed {
        /// How many of the script's commands failed.
        count: u64,
    },
    /// A netplay match stopped before its last frame, the machines agreeing
    /// on every frame they finalized.
    NetplayUnfinished,
    /// A `host`/`join` match ended before its last frame because the peer
    /// left or went silent past the disconnect timeout.
    PeerLost,
    /// `replay play --verify` found a checkpoint playback disagrees with,
    /// or `replay diff` found two replays differing.
    ReplayMismatch,
    /// `replay play --verify` agreed with every checkpoint the file holds,
    /// but the file is incomplete (cut short, damaged, or never ended):
    /// the rest of the match was not verified.
    ReplayIncomplete,
    /// Ctrl-C, SIGTERM or SIGHUP ended a live match (the peer was told).
    Interrupted,
}

impl Outcome {
    /// The process exit code for this outcome (see the module docs).
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Success => EXIT_SUCCESS,
            Outcome::SyncTestFailed | Outcome::NetplayFailed | Outcome::ReplayMismatch => {
                EXIT_SYNC_TEST_FAILED
            }
            Outcome::DebugCommandsFailed { .. } => EXIT_USER_MISTAKE,
            Outcome::NetplayUnfinished => EXIT_NETPLAY_UNFINISHED,
            Outcome::PeerLost => EXIT_PEER_LOST,
            Outcome::ReplayIncomplete => EXIT_REPLAY_INCOMPLETE,
            Outcome::Interrupted => EXIT_INTERRUPTED,
        }
    }
}

/// Everything that can stop a netcade command.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The core or its content could not be loaded or set up.
    #[error(transparent)]
    Libretro(#[from] LibretroError),
    /// The demo needs the bundled Duel core and none of the places it looks
    /// holds it.
    #[error("the Duel core library was not found (looked for {}); build it with `cargo build --release -p duel` or point NETCADE_DUEL_CORE at libduel.so", searched.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    DuelCoreNotFound {
        /// Every path looked at, in order.
        searched: Vec<PathBuf>,
    },
    /// A command-line setting is unusable in a way clap cannot check (a
    /// history too long, a directory that cannot be created); the message
    /// names the argument.
    #[error("{message}")]
    BadArgument {
        /// The whole message.
        message: String,
    },
    /// The `--inputs` value or the input script it names is unusable.
    #[error(transparent)]
    Inputs(#[from] InputError),
    /// The game could not save or load a state.
    #[error("the game failed at frame {frame}")]
    Emulator {
        /// The frame the command was at.
        frame: u32,
        /// What the game reported.
        #[source]
        source: EmulatorError,
    },
    /// An output file (a dump, a picture) could not be written.
    #[error("cannot write {what} {}", path.display())]
    WriteFile {
        /// What the file is, for the message (e.g. `the desync dump`).
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A netplay match failed (its cause is the source).
    #[error("netplay failed")]
    Netplay(#[from] NetplayError),
    /// The netplay session asked to save or load a frame its state ring does
    /// not hold: a bug in the session, not the user's fault.
    #[error("the netplay session asked for the state of frame {frame}, which it does not keep")]
    NoStateSlot {
        /// The frame asked for.
        frame: Frame,
    },
    /// A file the command needs before it starts (a core copy, the content)
    /// could not be made or read.
    #[error("cannot prepare {what} {}", path.display())]
    PrepareFile {
        /// What the file is, for the message (e.g. `a copy of the core`).
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A picture was asked for before the game drew any frame.
    #[error("the game has not drawn a frame, so there is no picture to save")]
    NoVideoFrame,
    /// The front end (the window, its GL context, the input config)
    /// failed; `message` is its whole error chain.
    #[error("{message}")]
    FrontEnd {
        /// What went wrong, with every cause.
        message: String,
        /// Whether the user can fix it in their files or environment (exit
        /// 2) rather than the machine failing (exit 3).
        user_mistake: bool,
    },
    /// The operating system gave no random bytes for the links' keys.
    #[error("the operating system gave no random bytes for the link keys: {reason}")]
    NoRandomness {
        /// What it said.
        reason: String,
    },
    /// A NATS server that cannot be reached, refuses us or a request
    /// (`broadcast`, `spectate nats://…`).
    #[cfg(feature = "broadcast")]
    #[error(transparent)]
    Nats(#[from] crate::net::nats::NatsError),
    /// Writing the command's output (standard output, a report) failed.
    #[error("cannot write the output")]
    Output(#[from] std::io::Error),
    /// The sync-test could not run to a verdict.
    #[error(transparent)]
    SyncTest(#[from] SyncTestError),
    /// The debugger's state history refused a state.
    #[error("cannot keep the state history")]
    StateHistory(#[from] StateHistoryError),
    /// A netplay socket could not be opened (a busy port, most often).
    #[error("cannot listen on {address}")]
    Bind {
        /// The address or port asked for.
        address: String,
        /// Why the system refused.
        #[source]
        source: std::io::Error,
    },
    /// `join`'s address does not name a host.
    #[error("cannot find the host {address}: {reason}")]
    UnresolvableHost {
        /// The address as typed.
        address: String,
        /// What the resolver said.
        reason: String,
    },
    /// The host never answered the joiner's handshake.
    #[error("no answer from {address} within {seconds} s: is a host running there, and is its UDP port reachable?")]
    NoAnswer {
        /// The address as typed.
        address: String,
        /// The connect timeout.
        seconds: f64,
    },
    /// Meeting through a room failed: the signaling server could not be
    /// reached or went away, or nobody came in time.
    #[error("{message}")]
    Room {
        /// What happened and what to do.
        message: String,
    },
    /// Two machines that met in a room found no path between them (ICE):
    /// the message says what to check.
    #[error(transparent)]
    NoRoute(#[from] crate::net::ice::IceError),
    /// A TCP connection (a RetroArch host) could not be made.
    #[error("cannot connect to {address}")]
    Connect {
        /// The address dialled.
        address: String,
        /// Why.
        source: std::io::Error,
    },
    /// A RetroArch host's match ended on an error: the reason names it
    /// (another core, a password, a broken protocol).
    #[error(transparent)]
    RetroArch(#[from] netcode::retroarch::ClientEnd),
    /// The peer's handshake did not match ours (another core or content):
    /// `reason` names what differs, the host's values first.
    #[error("{reason}")]
    HandshakeRefused {
        /// What differs.
        reason: String,
    },
    /// A replay file cannot be read: the source names the problem and
    /// where (byte offset).
    #[error("cannot read the replay {}", path.display())]
    ReadReplay {
        /// The replay file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: netcode::replay::ReplayError,
    },
    /// A file the user named cannot be opened (missing, a directory, not
    /// readable).
    #[error("cannot open {what} {}", path.display())]
    OpenFile {
        /// What the file is, for the message (e.g. `the replay`).
        what: &'static str,
        /// The file as given.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A replay cannot be played with the core or content given: `reason`
    /// names what differs.
    #[error("{reason}")]
    ReplayRefused {
        /// What differs, the replay's value first.
        reason: String,
    },
    /// The child process that tries a replay's states before this one
    /// loads them could not be run.
    #[error("cannot try the replay's states in a child process: {reason}")]
    StatesUntried {
        /// Why the child did not run.
        reason: String,
    },
    /// `--strict` and the rollback pre-flight found the core unfaithful.
    #[error("rollback pre-flight: {game} does not restore its state faithfully, refusing to play (--strict): {verdict}")]
    PreflightFailed {
        /// The core and its version.
        game: String,
        /// The sync-test's verdict.
        verdict: String,
    },
    /// Rollback was asked for (`--mode rollback`, or by the host) but the
    /// pre-flight found this machine's core cannot do it.
    #[error("{asked}, but the rollback pre-flight found that {game} {problem}: {remedy}")]
    RollbackUnavailable {
        /// Who asked for rollback.
        asked: &'static str,
        /// The core and its version.
        game: String,
        /// What the pre-flight found.
        problem: String,
        /// What the user can do about it.
        remedy: &'static str,
    },
}

impl From<crate::net::link::IceFailure> for AppError {
    fn from(failure: crate::net::link::IceFailure) -> Self {
        AppError::NoRoute(*failure.error)
    }
}

impl AppError {
    /// The process exit code for this error (see the module docs).
    pub fn exit_code(&self) -> u8 {
        match self {
            AppError::Libretro(_)
            | AppError::DuelCoreNotFound { .. }
            | AppError::BadArgument { .. }
            | AppError::Inputs(_)
            | AppError::Bind { .. }
            | AppError::UnresolvableHost { .. }
            | AppError::HandshakeRefused { .. }
            | AppError::ReadReplay { .. }
            | AppError::OpenFile { .. }
            | AppError::ReplayRefused { .. }
            | AppError::PreflightFailed { .. }
            | AppError::RollbackUnavailable { .. } => EXIT_USER_MISTAKE,
            AppError::NoAnswer { .. } | AppError::Room { .. } | AppError::Connect { .. } => {
                EXIT_RUNTIME_FAILURE
            }
            AppError::RetroArch(end) if end.is_user_mistake() => EXIT_USER_MISTAKE,
            AppError::RetroArch(_) => EXIT_RUNTIME_FAILURE,
            // `--transport laminar` with a room: the arguments are at fault.
            AppError::NoRoute(crate::net::ice::IceError::NeedsUdp) => EXIT_USER_MISTAKE,
            AppError::NoRoute(_) => EXIT_RUNTIME_FAILURE,
            #[cfg(feature = "broadcast")]
            AppError::Nats(error) if error.is_user_mistake() => EXIT_USER_MISTAKE,
            #[cfg(feature = "broadcast")]
            AppError::Nats(_) => EXIT_RUNTIME_FAILURE,
            // A core that stops on its first frame never ran the content:
            // the file is not a game it can run.
            AppError::Emulator {
                source:
                    EmulatorError::CoreStopped {
                        on_first_frame: true,
                        ..
                    },
                ..
            } => EXIT_USER_MISTAKE,
            AppError::Emulator { .. }
            | AppError::WriteFile { .. }
            | AppError::Netplay(_)
            | AppError::NoStateSlot { .. }
            | AppError::PrepareFile { .. }
            | AppError::NoVideoFrame
            | AppError::NoRandomness { .. }
            | AppError::StatesUntried { .. }
            | AppError::Output(_) => EXIT_RUNTIME_FAILURE,
            AppError::SyncTest(error) if error.is_bad_settings() => EXIT_USER_MISTAKE,
            AppError::SyncTest(_) => EXIT_RUNTIME_FAILURE,
            AppError::StateHistory(StateHistoryError::StateOverBudget { .. }) => EXIT_USER_MISTAKE,
            AppError::StateHistory(_) => EXIT_RUNTIME_FAILURE,
            AppError::FrontEnd { user_mistake, .. } if *user_mistake => EXIT_USER_MISTAKE,
            AppError::FrontEnd { .. } => EXIT_RUNTIME_FAILURE,
        }
    }

    /// Wraps a game failure as [`AppError::Emulator`] at `frame`, for
    /// `map_err`.
    pub fn at_frame(frame: u32) -> impl FnOnce(EmulatorError) -> AppError {
        move |source| AppError::Emulator { frame, source }
    }
}

/// `message: cause: deeper cause`, the whole chain on one line.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        // `#[error(transparent)]` layers repeat their inner message.
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
