//! The netplay wire protocol, pure and sans-IO: messages and their binary codec,
//! the keys and tags that authenticate datagrams, a peer endpoint that turns datagrams and time into events and datagrams,
//! a per-address limit on the handshakes that open connections, and the
//! stateless cookies that prove an address before anything is kept for it,
//! and a room's budget of room-code guesses.

pub mod auth;
pub mod chat;
pub mod codec;
pub mod cookie;
pub mod endpoint;
pub mod handshake_limit;
pub mod messages;
pub mod pake;
pub mod peers;
pub mod room_guesses;
pub mod time;

pub use auth::{Fingerprint, LinkKeys, LinkSecret};
pub use chat::{
    check_chat_author, check_chat_text, truncate_chat_text, ChatLine, ChatRateLimit, ChatTextError,
    MAX_CHAT_AUTHOR_BYTES, MAX_CHAT_TEXT_BYTES,
};
pub use codec::{decode, encode, DecodeError, EncodeError};
pub use cookie::{CookieJar, COOKIE_EPOCH_MS};
pub use endpoint::{
    ConnectionState, DisconnectCause, EndpointConfig, EndpointError, EndpointStats, Event,
    Identity, PeerEndpoint, Rejection, Role, MAX_UNACKED_FRAMES,
};
pub use handshake_limit::{HandshakeLimit, HandshakeLimiter};
pub use messages::*;
pub use pake::RoomPassword;
pub use peers::PeerTable;
pub use room_guesses::{GuessAnswer, RoomGuessLimit, RoomGuesses};
pub use time::Millis;
