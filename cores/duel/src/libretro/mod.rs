//! The libretro face of Duel: the `retro_*` C entry points ([`entry`]), the
//! frontend's callbacks ([`frontend`]), the one global instance and the
//! system RAM ([`instance`]), and what a loaded game does ([`game`]).
//!
//! libretro-rs 0.1.3 supplies the C types and constants (`sys`); its
//! `libretro_core!` macro is not used because it hands C un-terminated
//! strings, dereferences `retro_load_game(NULL)`, keeps `static mut`
//! references and lets panics unwind into C.

pub mod entry;
pub mod frontend;
pub mod game;
pub mod instance;

pub use frontend::OPTION_INJECT_NONDETERMINISM;
pub use game::{nondeterminism_strikes, NONDETERMINISM_ODDS};

#[cfg(test)]
mod tests;
