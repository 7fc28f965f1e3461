//! The libretro host's real FFI path: the Duel core and, when fetched, the
//! real cores and ROMs of `scripts/fetch-test-content`.

mod cli_real_cores;
mod duel_core;
mod libretro_host;
mod shared_replays;
mod state_saving;
