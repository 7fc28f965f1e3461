//! What the session asks of the frontend (requests), what it answers each
//! frame (outcomes) and what it tells it happened (events).

use super::frame::Frame;
use super::players::{PlayerId, PlayerSet, MAX_PLAYERS};
use super::time_sync::TimeSyncAdvice;
use crate::checksum::Checksum;
use crate::input::Buttons;

/// One thing the frontend must do to its game, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    /// Save the game's state as the state at the start of `frame` into
    /// `session.state_slot_mut(frame)`, and set its checksum there.
    Save { frame: Frame },
    /// Restore the state saved for `frame` (`session.saved_state(frame)`).
    Load { frame: Frame },
    /// Run the game one frame with these buttons (players beyond the
    /// session's count get `NONE`). `predicted` says whose buttons are a
    /// guess. A `resimulation` replays a frame already shown: do not render
    /// it or play its audio as new (the audio ring splices it instead).
    Advance {
        frame: Frame,
        inputs: [Buttons; MAX_PLAYERS],
        predicted: PlayerSet,
        resimulation: bool,
    },
}

/// What one call to `advance_frame` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameOutcome {
    /// The frame was simulated; `rolled_back` frames were re-simulated first.
    Advanced { rolled_back: u32 },
    /// The prediction window is used up: inputs from `players` are needed
    /// before going on. `ticks` counts the calls spent waiting so far. (Any
    /// requests, such as a rollback, must still be carried out.)
    Waiting { players: PlayerSet, ticks: u32 },
    /// Time sync stalled this tick to let slower peers catch up: show the
    /// same picture again.
    Stalled,
    /// Peers are still being synchronized: nothing to run yet.
    Synchronizing,
    /// Netplay's start-up: every machine begins frame 0 at the same moment,
    /// `in_ms` milliseconds from now (show a countdown; tick again then).
    /// The rollback session itself never answers this.
    Starting { in_ms: u64 },
    /// The match is over (too few players left); see the events.
    Ended,
}

/// Why a player left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DisconnectReason {
    /// Nothing heard from the peer for too long.
    TimedOut,
    /// The peer said it was leaving.
    Quit,
    /// The local player left.
    LocalQuit,
    /// The peer broke the protocol or the match rules (e.g. conflicting inputs).
    ProtocolViolation,
    /// The checksums showed the peer's game diverged.
    Desynchronized,
}

impl std::fmt::Display for DisconnectReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DisconnectReason::TimedOut => "nothing heard for too long",
            DisconnectReason::Quit => "left the match",
            DisconnectReason::LocalQuit => "left on this machine",
            DisconnectReason::ProtocolViolation => "broke the protocol",
            DisconnectReason::Desynchronized => "game diverged",
        })
    }
}

/// Something the frontend shows or logs; drained with `Session::next_event`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event {
    /// Waiting for peers to connect and synchronize.
    Synchronizing,
    /// Every peer is ready: frames run.
    Running,
    /// Starvation: the prediction window is used up waiting for `players`
    /// (raised when it starts and every so often while it lasts).
    WaitingForPeer { players: PlayerSet, ticks: u32 },
    /// Inputs arrived and frames run again after waiting `ticks` calls.
    StoppedWaiting { ticks: u32 },
    /// Time sync's advice changed.
    TimeSync {
        advice: TimeSyncAdvice,
        frames_ahead: f32,
    },
    /// Local input delay changed (frames).
    InputDelayChanged { from: u32, to: u32 },
    /// The checksums of a confirmed frame differ between here and `player`.
    Desync {
        frame: Frame,
        player: PlayerId,
        local: Checksum,
        remote: Checksum,
    },
    /// `player` left; from `at_frame` on their input is fixed to none.
    Disconnected {
        player: PlayerId,
        at_frame: Frame,
        reason: DisconnectReason,
    },
    /// Too few players are left to go on.
    MatchEnded { at_frame: Frame },
}
