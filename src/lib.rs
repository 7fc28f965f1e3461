//! netcade: a libretro netplay frontend with GGPO-style rollback.

// All FFI lives in `libretro` (the GL calls of the window too, in `libretro::gl`);
// everything else stays safe Rust.
#![deny(unsafe_code)]
// Every public item says what it is for (units, sides, when it is absent).
#![warn(missing_docs)]

pub mod audio;
pub mod checksum;
pub mod commands;
pub mod diff;
pub mod emulator;
pub mod encoding;
pub mod engine;
#[cfg(feature = "gui")]
pub mod gui;
pub mod input;
#[allow(unsafe_code)]
pub mod libretro;
pub mod net;
pub mod netplay;
pub mod paths;
pub mod protocol;
pub mod replay;
pub mod rollback;
