//! The stub games for integration tests: a tiny deterministic two-player
//! game and a variant with hidden state left out of its savestate.
//!
//! They live in `netcade::app::testing` (so the library's unit tests use
//! them too); the `testing` feature, enabled for tests by the dev-dependency
//! on netcade itself, exposes them here.

#[allow(unused_imports)]
pub use netcade::app::testing::{StubGame, HIDDEN_STATE_OFFSET, STUB_MEMORY_SIZE};
