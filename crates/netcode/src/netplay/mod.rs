//! Netplay: one rollback session wired to the protocol endpoints of the
//! other machines, pure and sans-IO (no socket, no clock: datagrams and
//! `now` go in, datagrams, requests and events come out).
//!
//! [`NetplaySession`] carries out the rollback session's per-tick contract
//! (see `rollback::session`) for the frontend: local inputs go to every peer
//! as they are used (delay changes included), remote inputs, pings, frame
//! lags and checksums come back into the session, silences become agreed
//! disconnects, and spectators are fed confirmed inputs. Frame 0 begins on
//! every machine at the same moment ([`startup`]: the machine of player 0
//! measures round trips and tells each how long to wait).

pub mod chat;
pub mod checkpoint_state;
pub mod config;
pub mod events;
pub mod jitter;
mod session;
pub mod spectator;
pub mod startup;
pub mod wording;

pub use chat::{ChatRefused, ChatShown};
pub use config::{Connect, NetplayConfig, PeerConfig, RosterCodec};
pub use events::{
    LinkFingerprints, NetplayError, NetplayEvent, NetplayStats, PeerFault, SpectatorDrop,
};
pub use session::{
    NetplaySession, RejoinTicket, MAX_UNPROVEN, SPECTATOR_BACKLOG_FRAMES, UNPROVEN_FOR_MS,
};
pub use spectator::{Repair, SpectatorConfig, SpectatorEvent, SpectatorPhase, SpectatorSession};
pub use startup::StartPhase;
