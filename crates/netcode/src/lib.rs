#![doc = include_str!("../README.md")]
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
pub mod lobby;
pub mod netplay;
pub mod protocol;
pub mod random;
pub mod replay;
pub mod retroarch;
pub mod rollback;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
