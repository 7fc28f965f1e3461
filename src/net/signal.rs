//! The channel two machines that met in a room talk through before they
//! have a path to each other: short text messages (connection credentials
//! and candidates), relayed by a signaling server. Rooms carry it
//! (`matchbox_server`); connectivity checks speak through it; tests carry it
//! in memory.

/// Why a signal could not be sent or received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignalError {
    /// The peer left the room (or the room closed) before the path was found.
    PeerGone,
    /// The signaling server went away or answered what its protocol forbids.
    Server(String),
}

impl std::fmt::Display for SignalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SignalError::PeerGone => write!(f, "the opponent left the room"),
            SignalError::Server(why) => write!(f, "the signaling server failed: {why}"),
        }
    }
}

impl std::error::Error for SignalError {}

/// A two-way channel of short text messages to one paired peer. Never
/// blocks: a connecting loop polls it along with its socket.
pub trait SignalChannel {
    /// Sends one message to the peer, in order with the ones before it.
    fn send(&mut self, message: &str) -> Result<(), SignalError>;

    /// The peer's next message, or `None` when nothing is waiting.
    fn try_receive(&mut self) -> Result<Option<String>, SignalError>;
}
