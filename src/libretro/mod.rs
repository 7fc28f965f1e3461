//! The libretro host: loads a core from a shared library and drives it
//! through [`Core`], which implements [`crate::emulator::Emulator`].
//!
//! This is the only module of netcade with `unsafe` code. The FFI types are in
//! `ffi`, the callbacks and the per-core context they reach in `context`, the
//! environment commands in `environment`, the report of a crashing core in
//! `crash`; everything else sees the safe facade re-exported here. With the
//! `gui` feature, `gl` makes the player's window's OpenGL calls for the
//! renderer in `src/gui/`.

mod context;
mod core;
mod crash;
mod environment;
mod error;
mod ffi;
#[cfg(feature = "gui")]
pub mod gl;
mod options;

pub use self::core::{
    AvInfo, Core, CoreConfig, CoreInfo, InputDescriptor, MemoryDescriptor, SerializationQuirks,
};
pub use self::crash::{end_with_json_on_crash, CORE_CRASHED_EXIT_CODE};
pub use self::error::LibretroError;
pub use self::options::{grouped, parse_option_override, CoreOption, OptionCategory};
