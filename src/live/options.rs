//! How a live machine behaves towards the process and its caller: its
//! status line, whether Ctrl-C is its to handle, and the typed
//! [`LiveEvent`]s it signals as the match goes.

use crate::engine::interrupt::on_interrupt;
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How often a plain status line is printed when stdout is not a terminal.
const STATUS_EVERY_PLAIN: Duration = Duration::from_secs(5);

/// Set by Ctrl-C, SIGTERM or SIGHUP: leave the match (the peer is told)
/// and print the summary.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether Ctrl-C was pressed (with the handler installed).
pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// What happened to a live machine, for a caller that acts on it (the demo
/// starts its joiner once the host listens, its spectator once the match
/// began). The terminal's lines say the same for people.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveEvent {
    /// The host's socket is bound: players and spectators can reach it.
    Listening {
        /// The address bound (the port asked for, or the one given with 0).
        address: SocketAddr,
    },
    /// Every player is here and frame 0 runs.
    MatchBegan,
}

/// Receives a machine's [`LiveEvent`]s, from the machine's thread.
pub type EventListener = Arc<dyn Fn(LiveEvent) + Send + Sync>;

/// How a live machine presents itself and what it takes on for the process.
#[derive(Clone)]
pub struct LiveOptions {
    /// The status line is redrawn in place (a terminal) rather than printed
    /// as plain lines.
    pub status_in_place: bool,
    /// How often a plain status line is printed.
    pub plain_status_every: Duration,
    /// Ctrl-C leaves the match (the peer is told) instead of killing the
    /// process: a command owns the process; machines sharing one do not.
    pub handle_ctrl_c: bool,
    /// Told each [`LiveEvent`] as it happens.
    pub on_event: Option<EventListener>,
}

impl LiveOptions {
    /// A command's: in place on a terminal, plain lines every 5 s otherwise.
    pub fn for_stdout() -> Self {
        LiveOptions {
            status_in_place: std::io::stdout().is_terminal(),
            plain_status_every: STATUS_EVERY_PLAIN,
            handle_ctrl_c: true,
            on_event: None,
        }
    }

    /// Tells the listener, if any.
    pub(crate) fn signal(&self, event: LiveEvent) {
        if let Some(listener) = &self.on_event {
            listener(event);
        }
    }

    /// Makes Ctrl-C, SIGTERM and SIGHUP set the flag [`interrupted`] reads
    /// instead of killing the process, when these options own the process:
    /// the peer is then told and the summary printed.
    pub(crate) fn take_ctrl_c(&self) {
        // Once a process: the launcher plays match after match in one.
        static TAKEN: std::sync::Once = std::sync::Once::new();
        if self.handle_ctrl_c {
            TAKEN.call_once(|| {
                on_interrupt(
                    || INTERRUPTED.store(true, Ordering::Relaxed),
                    "an interrupt ends the match without telling the peer",
                )
            });
        }
    }
}
