//! Helpers shared by netcade's integration tests. Each test file that needs
//! them declares `mod support;`; not every file uses every helper.
#![allow(dead_code)]

pub mod content;

#[allow(unused_imports)]
pub use content::{real_core, real_core_copy, real_rom, test_content_dir, CoreCopy};
