//! Duel: netcade's own deterministic two-player libretro test core.
//!
//! A tiny fighting game — two fighters who walk, jump, attack and block,
//! rounds against a timer, a HUD, tone sound effects — built so netcade's
//! rollback, sync-test and replay code can be tested against a core whose
//! every byte of state is known.
//!
//! The game itself is pure and independent of libretro:
//! [`sim::step`] advances a [`state::State`] by one frame from both pads,
//! [`render::render`] draws it, [`audio::mix_audio`] produces its 800 stereo
//! samples. [`state::State::encode`] / [`state::State::decode`] give the
//! fixed-size savestate, which is also the system RAM the core exposes
//! (layout in [`layout`]). The content ("ROM") is an arena file
//! ([`arena`]; shipped ones are in `cores/duel/arenas/`).
//!
//! The `retro_*` C entry points live in [`core`] (built as `libduel.so`).

pub mod arena;
pub mod audio;
pub mod core;
pub mod layout;
pub mod render;
pub mod sim;
pub mod state;

pub use arena::{Arena, ArenaError};
pub use audio::mix_audio;
pub use layout::{RamField, RAM_FIELDS, RAM_REGIONS, STATE_SIZE};
pub use render::render;
pub use sim::step;
pub use state::State;
