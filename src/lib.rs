//! netcade: a libretro netplay frontend with GGPO-style rollback.
//!
//! The pure netcode is the `netcode` crate and the libretro host the
//! `libretro-host` crate; this crate is what stands on them, in layers that
//! import only downward: `commands` → `gui` → `launcher` → `live` →
//! `engine` → `net` (see docs/design.md).

// All FFI lives in the libretro host crate (the window's GL calls too).
#![forbid(unsafe_code)]
// Every public item says what it is for (units, sides, when it is absent).
#![warn(missing_docs)]

pub mod commands;
pub mod engine;
#[cfg(feature = "gui")]
pub mod gui;
pub mod launcher;
pub mod live;
pub mod net;
pub mod paths;
