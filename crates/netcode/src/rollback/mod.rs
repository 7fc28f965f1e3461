//! Rollback netcode, as pure logic: no I/O, no clock, no randomness.
//!
//! [`Session`] runs a GGPO-style rollback match for 2–4 players and answers
//! each frame with [`Request`]s (save, load, advance) for the frontend;
//! [`synctest`] checks a game's determinism and save/load locally.

pub mod desync;
pub mod events;
pub mod frame;
pub mod input_delay;
pub mod input_queue;
pub mod players;
pub mod session;
pub mod state_history;
pub mod state_ring;
pub mod stats;
pub mod synctest;
pub mod time_sync;

#[cfg(test)]
mod session_tests;

pub use events::{DisconnectReason, Event, FrameOutcome, Request};
pub use frame::{Frame, MAX_MATCH_FRAMES};
pub use input_delay::InputDelayConfig;
pub use input_queue::{Predictor, RepeatLastConfirmed};
pub use players::{PlayerId, PlayerKind, PlayerSet, MAX_PLAYERS};
pub use session::{Session, SessionConfig, SessionError, SessionState};
pub use state_ring::StateSlot;
pub use stats::PeerStats;
pub use synctest::{run_sync_test, SyncTestError, SyncTestReport, SyncTestSettings};
pub use time_sync::{TimeSyncAdvice, TimeSyncConfig};
