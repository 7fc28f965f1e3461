//! The libretro host: loads a core from a shared library and drives it
//! through [`Core`], which implements [`netcode::emulator::Emulator`].
//!
//! This is the only crate of netcade with `unsafe` code: each block says
//! why it holds in a `// SAFETY:` line, and every `extern "C"` entry
//! catches panics. The FFI types are in `ffi`, the callbacks and the
//! per-core context they reach in `context`, the environment commands in
//! `environment`, the report of a crashing core in `crash`; everything else
//! sees the safe facade re-exported here. With the `gl` feature (netcade's
//! `gui`), `gl` makes the player's window's OpenGL calls for its renderer.

// Every public item says what it is for.
#![warn(missing_docs)]

mod catching;
mod context;
mod core;
mod crash;
mod environment;
mod error;
mod ffi;
#[cfg(feature = "gl")]
pub mod gl;
mod options;

pub use self::core::{
    AvInfo, Core, CoreConfig, CoreInfo, InputDescriptor, MemoryDescriptor, SerializationQuirks,
};
pub use self::crash::{end_with_json_on_crash, CORE_CRASHED_EXIT_CODE};
pub use self::error::LibretroError;
pub use self::options::{grouped, parse_option_override, CoreOption, OptionCategory};
