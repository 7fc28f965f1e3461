//! A peer heard from a new address (a NAT that rebound its port, another
//! network): the owner of the endpoints reads what came from there with
//! this link's key, challenges the new address, and moves the link only
//! when the peer's proof comes back from it. A peer whose process was
//! restarted comes back the same way, with the keys it kept (its link
//! secret and the host's public key): its endpoint starts running, and
//! both sides resume its inputs from the frame of the state it is sent.

use super::{ConnectionState, EndpointConfig, EndpointError, Millis, PeerEndpoint, Role};
use crate::input::Buttons;
use crate::protocol::auth::LinkKeys;
use crate::protocol::codec;
use crate::protocol::messages::RoomElement;
use crate::protocol::messages::{Message, PlayerSlots, PublicKey};
use crate::rollback::Frame;

impl PeerEndpoint {
    /// The endpoint of a link a restarted process comes back to: running
    /// at once with the keys agreed from `config.secret` (the one it used
    /// before) and the host's public key, its peer playing `remote_slots`.
    /// Fails when the key agrees on nothing or the role names no session.
    pub fn resumed(
        config: EndpointConfig,
        now: Millis,
        host_key: PublicKey,
        host_room: Option<RoomElement>,
        remote_slots: PlayerSlots,
    ) -> Result<Self, EndpointError> {
        let Role::Joiner {
            session: Some(session),
        } = config.role
        else {
            return Err(EndpointError::InvalidConfig(
                "a resumed link needs its session token".into(),
            ));
        };
        let room = match (&config.room_password, host_room) {
            (None, _) => None,
            (Some(password), Some(element)) => Some(
                crate::protocol::pake::joiner_key(&config.secret, password, element).ok_or_else(
                    || EndpointError::InvalidConfig("the host's room element is no point".into()),
                )?,
            ),
            (Some(_), None) => {
                return Err(EndpointError::InvalidConfig(
                    "a link met by room code resumes with the host's room element".into(),
                ))
            }
        };
        let keys =
            LinkKeys::agree(&config.secret, host_key, session, false, room).ok_or_else(|| {
                EndpointError::InvalidConfig("the host's public key agrees on no link key".into())
            })?;
        let mut endpoint = PeerEndpoint::new(config, now)?;
        endpoint.keys = Some(keys);
        endpoint.session = session;
        endpoint.state = ConnectionState::Running;
        endpoint.remote_slots = remote_slots;
        endpoint.peer_knows_session = true;
        endpoint.restarted = true;
        Ok(endpoint)
    }

    /// The restarted side got the state of `frame` to resume from: inputs
    /// flow both ways from that frame. False once any input was queued.
    pub fn resume_at(&mut self, frame: Frame) -> bool {
        self.restarted = false;
        // Ours first: both check against the first frame, which the
        // other moves.
        self.send_inputs_from(frame) && self.expect_remote_inputs_from(frame)
    }

    /// The host's side: the peer proved itself from a process that
    /// started afresh. Its sequence numbers start over, and every blob
    /// between us is forgotten (the new process holds none of it).
    pub fn peer_restarted(&mut self) {
        self.received = Default::default();
        self.incoming_blob = None;
        self.finished_blob = None;
        self.outgoing_blobs.clear();
        self.blob_ack_due = None;
        self.proof_due = None;
    }

    /// The host's side of a restarted peer resuming at `frame`: our inputs
    /// go out again from there. `earlier` are our players' inputs (one per
    /// local slot, frame by frame) for `frame` up to the first one still
    /// unacknowledged, which the old process acknowledged and the new one
    /// never saw. False when they are not exactly those.
    pub fn resend_inputs_from(&mut self, frame: Frame, earlier: &[Buttons]) -> bool {
        if frame >= self.unacked_start {
            return earlier.is_empty();
        }
        let frames = (self.unacked_start - frame) as usize;
        if earlier.len() != frames * self.local_slot_count {
            return false;
        }
        for &buttons in earlier.iter().rev() {
            self.unacked.push_front(buttons);
        }
        self.unacked_start = frame;
        self.new_local_input = true;
        true
    }

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
    /// link that was cut); a restarted process says so in it.
    pub(super) fn send_rejoin_proof(&mut self, now: Millis, send: &mut dyn FnMut(&[u8])) {
        if let Some(nonce) = self.proof_due.take() {
            let proof = if self.restarted {
                Message::RejoinRestarted { nonce }
            } else {
                Message::RejoinProof { nonce }
            };
            self.emit(now, &proof, send);
        }
    }
}
