//! Matches in real time over sockets: one loop (`session_loop`) for every
//! role — the players (`host`, `join`) and the spectators — reaching the
//! other machines (`connect`; through a signaling server's rooms: `rooms`), the socket and its traffic (`wire`), what
//! the machine tells (`narrator`) and what it shows besides the terminal
//! (`front_end`). Commands choose the front end and the outputs; nothing
//! here knows the window.

pub mod chat;
pub mod connect;
pub mod front_end;
pub mod narrator;
pub mod options;
pub mod players;
pub mod rooms;
pub mod session_loop;
pub mod spectator;
pub mod wire;
