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
    Save {
        /// The frame whose start the state is.
        frame: Frame,
    },
    /// Lockstep: nothing is saved; set the checksum of the game at the
    /// start of `frame` in `session.state_slot_mut(frame)` (its memory, as a
    /// `Save` would), so checkpoints are still compared.
    Checksum {
        /// The frame whose start the checksum is of.
        frame: Frame,
    },
    /// Restore the state saved for `frame` (`session.saved_state(frame)`).
    Load {
        /// The frame to go back to; the game then runs it again.
        frame: Frame,
    },
    /// Run the game one frame with these buttons (players beyond the
    /// session's count get `NONE`). `predicted` says whose buttons are a
    /// guess. A `resimulation` replays a frame already shown: do not render
    /// it or play its audio as new (the audio ring splices it instead).
    Advance {
        /// The frame being run (the one the game is at, before running it).
        frame: Frame,
        /// Buttons for each player slot, indexed by player (port).
        inputs: [Buttons; MAX_PLAYERS],
        /// Players whose `inputs` are predicted rather than confirmed.
        predicted: PlayerSet,
        /// True when the frame was already run once and is replayed after
        /// a rollback.
        resimulation: bool,
    },
}

/// What one call to `advance_frame` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameOutcome {
    /// The frame was simulated; `rolled_back` frames were re-simulated first.
    Advanced {
        /// Frames re-simulated before this one (0: no rollback).
        rolled_back: u32,
    },
    /// The prediction window is used up: inputs from `players` are needed
    /// before going on. `ticks` counts the calls spent waiting so far. (Any
    /// requests, such as a rollback, must still be carried out.)
    Waiting {
        /// The players whose inputs are missing.
        players: PlayerSet,
        /// Consecutive `advance_frame` calls spent waiting, this one included.
        ticks: u32,
    },
    /// Time sync stalled this tick to let slower peers catch up: show the
    /// same picture again.
    Stalled,
    /// Peers are still being synchronized: nothing to run yet.
    Synchronizing,
    /// Netplay's start-up: every machine begins frame 0 at the same moment,
    /// `in_ms` milliseconds from now (show a countdown; tick again then).
    /// The rollback session itself never answers this.
    Starting {
        /// Milliseconds until frame 0 starts.
        in_ms: u64,
    },
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
    /// No frame became final for too long although the peer was heard.
    Stalled,
}

impl std::fmt::Display for DisconnectReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DisconnectReason::TimedOut => "nothing heard for too long",
            DisconnectReason::Quit => "left the match",
            DisconnectReason::LocalQuit => "left on this machine",
            DisconnectReason::ProtocolViolation => "broke the protocol",
            DisconnectReason::Desynchronized => "game diverged",
            DisconnectReason::Stalled => "the match stalled",
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
    WaitingForPeer {
        /// The players whose inputs are missing.
        players: PlayerSet,
        /// Consecutive `advance_frame` calls spent waiting so far.
        ticks: u32,
    },
    /// Inputs arrived and frames run again after waiting `ticks` calls.
    StoppedWaiting {
        /// How many `advance_frame` calls the wait lasted.
        ticks: u32,
    },
    /// Time sync's advice changed.
    TimeSync {
        /// The new advice.
        advice: TimeSyncAdvice,
        /// The most frames this machine is ahead of any remote peer
        /// (negative: behind), averaged over the last window; negative
        /// infinity while no peer has reported.
        frames_ahead: f32,
    },
    /// Local input delay changed (frames).
    InputDelayChanged {
        /// The delay before, in frames.
        from: u32,
        /// The delay now, in frames.
        to: u32,
    },
    /// The checksums of a confirmed frame differ between here and `player`.
    Desync {
        /// The confirmed frame whose checksums differ.
        frame: Frame,
        /// The remote player whose checksum differs from ours.
        player: PlayerId,
        /// This machine's checksum of that frame.
        local: Checksum,
        /// The checksum `player`'s machine reported for it.
        remote: Checksum,
    },
    /// `player` left; from `at_frame` on their input is fixed to none.
    Disconnected {
        /// The player who left.
        player: PlayerId,
        /// The first frame their input is none.
        at_frame: Frame,
        /// Why they left.
        reason: DisconnectReason,
    },
    /// Too few players are left to go on.
    MatchEnded {
        /// The frame the session was at when it ended.
        at_frame: Frame,
    },
}
