//! Sans-IO rollback netcode: everything netcade's matches are made of that
//! does no I/O, reads no clock and draws no random number. Time and
//! randomness come in as arguments, datagrams go out as values, and a game
//! is anything that implements [`emulator::Emulator`].
//!
//! See this crate's README for how to drive a match with it alone.

// No FFI, no sockets: all of this is safe Rust that any frontend can embed.
#![forbid(unsafe_code)]
// Every public item says what it is for (units, sides, when it is absent).
#![warn(missing_docs)]

pub mod audio;
pub mod checksum;
pub mod diff;
pub mod emulator;
pub mod encoding;
pub mod input;
pub mod netplay;
pub mod protocol;
pub mod replay;
pub mod rollback;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
