//! Helpers shared by netcade's integration tests. Each test file that needs
//! them declares `mod support;`; not every file uses every helper.
#![allow(dead_code)]

pub mod cli;
pub mod content;
pub mod coturn;
pub mod duel;
pub mod fake_core;
pub mod hostile_relay;
pub mod ice;
pub mod netplay;
pub mod restart;
pub mod screenshot;
pub mod servers;

#[allow(unused_imports)]
pub use content::{
    config_in, load_core, real_core, real_core_copy, real_rom, system_c_library, test_content_dir,
    CoreCopy, LoadedCore,
};
#[allow(unused_imports)]
pub use duel::{dojo_arena, duel_arena, duel_core, duel_core_copy, load_duel, load_duel_dojo};
