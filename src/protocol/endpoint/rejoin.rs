//! A peer heard from a new address (a NAT that rebound its port, another
//! network): the owner of the endpoints reads what came from there with
//! this link's key, challenges the new address, and moves the link only
//! when the peer's proof comes back from it.

use super::{ConnectionState, Millis, PeerEndpoint};
use crate::protocol::codec;
use crate::protocol::messages::Message;

impl PeerEndpoint {
    /// The message of a datagram that came from another address than this
    /// link's, if its tag is the peer's: the peer, or someone replaying
    /// what the peer sent. Nothing of the link changes (no sequence taken,
    /// no silence clock reset): only a proof may move the link.
    pub fn read_from_new_address(&self, datagram: &[u8]) -> Option<Message> {
        if self.state != ConnectionState::Running {
            return None;
        }
        let (_, kind) = codec::decode_header(datagram).ok()?;
        if codec::is_handshake_kind(kind) {
            return None;
        }
        let untagged = self.keys.as_ref()?.open(datagram)?;
        codec::decode(untagged).ok().map(|(_, message)| message)
    }

    /// Sends `nonce` to be echoed, through `send` (which the owner points
    /// at the new address): bypasses the throttle of a quiet link, so the
    /// owner paces challenges itself.
    pub fn send_rejoin_challenge(&mut self, now: Millis, nonce: u64, send: &mut dyn FnMut(&[u8])) {
        if self.state == ConnectionState::Running {
            self.emit(now, &Message::RejoinChallenge { nonce }, send);
        }
    }

    /// A challenge came: its proof goes out at the next poll.
    pub(super) fn on_rejoin_challenge(&mut self, nonce: u64) {
        self.proof_due = Some(nonce);
    }

    /// Sends the proof due, if any (first in a poll: it is what reopens a
    /// link that was cut).
    pub(super) fn send_rejoin_proof(&mut self, now: Millis, send: &mut dyn FnMut(&[u8])) {
        if let Some(nonce) = self.proof_due.take() {
            self.emit(now, &Message::RejoinProof { nonce }, send);
        }
    }
}
