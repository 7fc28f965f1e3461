//! Matches in real time over sockets: one loop (`session_loop`) for every
//! role — the players (`host`, `join`, in `players`), the spectators
//! (`spectator`) and, with feature `broadcast`, the broadcaster and viewers
//! of a match in NATS JetStream (`broadcast`) — reaching the other machines
//! (`connect`; through a signaling server's rooms: `rooms`), the socket and
//! its traffic (`wire`), what the machine tells (`narrator`), chat lines
//! (`chat`) and what it shows besides the terminal (`front_end`); a
//! RetroArch host's match, over TCP in its own loop (`retroarch`). Commands
//! choose the front end and the outputs; nothing here knows the window or
//! the launcher, and the frame engine below knows nothing of this.

#[cfg(feature = "broadcast")]
pub mod broadcast;
pub mod chat;
pub mod connect;
pub mod front_end;
#[cfg(feature = "broadcast")]
pub mod lobby;
pub mod narrator;
pub mod options;
pub mod players;
pub mod retroarch;
pub mod retroarch_host;
pub mod rooms;
pub mod session_loop;
pub mod spectator;
pub mod wire;
