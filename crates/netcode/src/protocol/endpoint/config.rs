//! What an endpoint is told when it is made: its role and its timers.

use super::{EndpointError, Millis};
use crate::protocol::auth::LinkSecret;
use crate::protocol::messages::*;
use crate::protocol::pake::RoomPassword;
use crate::rollback::Frame;

/// Whether this side chose the session (host) or asks to join one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The host's token is random, chosen by the caller.
    Host {
        /// The token every datagram of this session carries.
        session: SessionToken,
    },
    /// A joiner may know the token (e.g. from an invite) or learn it from the Welcome.
    Joiner {
        /// The token if known in advance; `None` to take the one in the Welcome.
        session: Option<SessionToken>,
    },
}

/// Everything an endpoint is told when it is made.
#[derive(Clone, Debug)]
pub struct EndpointConfig {
    /// Host or joiner of this link, with the session token if known.
    pub role: Role,
    /// Always [`PROTOCOL_VERSION`] except in tests of version mismatches.
    pub protocol_version: u8,
    /// Our core, content, players and (host: decided, joiner: proposed)
    /// settings; its public key is replaced by `secret`'s.
    pub local: Handshake,
    /// Our x25519 secret, whose public key our handshake carries: the
    /// link's keys come from it and the peer's key. [`LinkSecret::well_known`]
    /// unless the caller draws one (real play must).
    pub secret: LinkSecret,
    /// The room code both sides met by, when they did: it authenticates
    /// the link's keys (SPAKE2, see [`crate::protocol::pake`]), and a host
    /// given one refuses a Hello that does not prove it.
    pub room_password: Option<RoomPassword>,
    /// The first frame each side sends (0, or later for a spectator joining mid-match).
    pub first_frame: Frame,
    /// Silence after which [`Event::NetworkInterrupted`] is raised.
    pub interrupt_after_ms: Millis,
    /// Silence after which the peer is disconnected.
    pub disconnect_after_ms: Millis,
    /// Silence a running link waits out before it is disconnected, if
    /// longer than `disconnect_after_ms`: the peer may come back (from
    /// the same or a new address) within it. 0: no rejoin window.
    pub rejoin_window_ms: Millis,
    /// Silence after which sending is throttled (seed 000: after 1 s…)
    pub throttle_after_ms: Millis,
    /// …to one datagram per this interval (…4 datagrams per second).
    pub throttled_interval_ms: Millis,
    /// A keep-alive goes out when nothing else was sent for this long.
    pub keep_alive_interval_ms: Millis,
    /// A quality report (clock and frame advantage, for ping) goes out this often.
    pub quality_report_interval_ms: Millis,
    /// A joiner sends Hello again this often until the host answers.
    pub hello_retry_ms: Millis,
    /// Unacked inputs are sent again this often when no new input comes.
    pub input_resend_ms: Millis,
    /// Acks, quality reports, quality replies and checksum reports wait this
    /// long for an input datagram to ride on before going out alone.
    pub piggyback_wait_ms: Millis,
    /// Incoming blobs announcing more bytes are refused.
    pub max_blob_size: usize,
    /// Blob chunks sent per poll (paces transfers: 8 × 1100 B at 60 polls/s ≈ 530 kB/s).
    pub blob_chunks_per_poll: usize,
    /// An unacked chunk is sent again after max(this, 2 × smoothed RTT + 50 ms).
    pub blob_resend_min_ms: Millis,
    /// After leaving, our last inputs and then our goodbye are sent again
    /// until the peer acknowledges them, for at most this long.
    pub goodbye_linger_ms: Millis,
}

impl EndpointConfig {
    fn with_role(role: Role, local: Handshake) -> Self {
        EndpointConfig {
            role,
            protocol_version: PROTOCOL_VERSION,
            local,
            secret: LinkSecret::well_known(),
            room_password: None,
            first_frame: Frame::ZERO,
            interrupt_after_ms: 750,
            disconnect_after_ms: 5000,
            rejoin_window_ms: 0,
            throttle_after_ms: 1000,
            throttled_interval_ms: 250,
            keep_alive_interval_ms: 200,
            quality_report_interval_ms: 200,
            hello_retry_ms: 200,
            input_resend_ms: 50,
            piggyback_wait_ms: 20,
            max_blob_size: MAX_BLOB_SIZE,
            blob_chunks_per_poll: 8,
            blob_resend_min_ms: 100,
            goodbye_linger_ms: 1000,
        }
    }

    /// A host with the session token it chose at random.
    pub fn host(session: SessionToken, local: Handshake) -> Self {
        Self::with_role(Role::Host { session }, local)
    }

    /// A joiner that learns the session token from the host's Welcome.
    pub fn joiner(local: Handshake) -> Self {
        Self::with_role(Role::Joiner { session: None }, local)
    }
}

impl EndpointConfig {
    /// Whether our own handshake can be sent: names of at most 255 bytes,
    /// local slots among the players.
    pub(super) fn check(&self) -> Result<(), EndpointError> {
        let local = &self.local;
        for (field, text) in [
            ("core name", &local.core_name),
            ("core version", &local.core_version),
        ] {
            if text.len() > 255 {
                return Err(EndpointError::InvalidConfig(format!(
                    "the {field} is {} bytes long; at most 255 fit in a handshake",
                    text.len()
                )));
            }
        }
        let players = local.settings.player_count;
        if players == 0 || players as usize > MAX_SLOTS || !local.local_slots.fit_in(players) {
            return Err(EndpointError::InvalidConfig(format!(
                "local slots {:#04x} do not fit {players} players (1 to {MAX_SLOTS})",
                local.local_slots.0
            )));
        }
        Ok(())
    }
}
