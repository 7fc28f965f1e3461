//! netcade: a libretro netplay frontend with GGPO-style rollback.

pub mod app;
pub mod checksum;
pub mod diff;
pub mod emulator;
pub mod input;
pub mod libretro;
pub mod net;
pub mod netplay;
pub mod protocol;
pub mod rollback;
