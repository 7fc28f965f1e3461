//! Replays: a match's start state, every final frame's inputs, checksums to
//! prove playback faithful, and the events that changed the simulation
//! outside inputs. The byte layout is documented in `docs/replay-format.md`.
//!
//! Pure: [`ReplayWriter`] writes to any [`std::io::Write`] and
//! [`read_replay`] reads from any [`std::io::Read`]; the date, the paths and
//! the states come in as values, so the same calls give the same bytes.

mod format;
mod reader;
pub mod tools;
mod writer;

pub use format::*;
pub use reader::{read_records, read_replay, read_replay_header, Replay, ReplayEvent};
pub use writer::{ReplayWriter, CHECKPOINT_INTERVAL};
