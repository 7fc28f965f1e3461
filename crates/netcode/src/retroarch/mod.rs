//! RetroArch's netplay protocol (versions 5 and 6, RetroArch 1.10 to
//! 1.14), pure: the wire codec (`wire`), the bytes around its states
//! (`state`: zlib savestates, CRC-32 checks, the salted password hash) and
//! a client session that plays in a RetroArch host's match (`client`)
//! and a host session RetroArch players join (`server`).
//!
//! The protocol runs over TCP: a 24-byte header each way, then commands of
//! a big-endian command word, a payload length and the payload. The host
//! keeps the frame clock and relays every player's input in a star; each
//! side rolls back on its own. A port's joypad word is libretro's button
//! bits (B = bit 0 … R3 = bit 15), the same order as netcade's
//! [`Buttons`](crate::input::Buttons).

pub mod client;
pub mod server;
pub mod state;
pub mod wire;

#[cfg(test)]
mod server_tests;
#[cfg(test)]
mod tests;

pub use client::{ClientConfig, ClientEnd, ClientEvent, ClientSession, ClientStats};
pub use server::{
    ConnectionId, PlayerInfo, Refusal, ServerConfig, ServerEvent, ServerSession, ServerStats,
};
pub use state::{pack_state, password_hash, state_crc, unpack_state, StateError};
pub use wire::{Command, CommandReader, Header, Sender, WireError, DEFAULT_PORT};
