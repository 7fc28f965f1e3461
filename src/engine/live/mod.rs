//! Matches in real time over sockets: players, spectators, and what they
//! show besides the terminal.

pub mod front_end;
pub mod players;
pub mod spectator;
