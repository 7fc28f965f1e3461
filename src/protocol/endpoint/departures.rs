//! Leaving: goodbyes sent and received, and peers timing out.

use super::{ConnectionState, DisconnectCause, Event, Millis, PeerEndpoint};
use crate::protocol::messages::*;

/// Copies of a goodbye sent (it is not acknowledged).
const DISCONNECT_COPIES: u8 = 3;

impl PeerEndpoint {
    /// Leaves: the peer is told (a few copies, as nothing acknowledges a goodbye).
    pub fn disconnect(&mut self, reason: DisconnectReason) {
        if self.state != ConnectionState::Disconnected {
            self.state = ConnectionState::Disconnected;
            self.disconnect_copies_left = DISCONNECT_COPIES;
            self.pending_goodbye = reason;
        }
    }

    /// The peer said goodbye.
    pub(super) fn on_goodbye(&mut self, reason: DisconnectReason) {
        self.state = ConnectionState::Disconnected;
        self.events.push_back(Event::Disconnected {
            cause: DisconnectCause::PeerLeft(reason),
        });
    }

    /// Sends one of the goodbye's copies still due.
    pub(super) fn send_goodbye(&mut self, now: Millis, send: &mut dyn FnMut(&[u8])) {
        if self.disconnect_copies_left > 0 {
            self.disconnect_copies_left -= 1;
            let reason = self.pending_goodbye;
            self.emit(now, &Message::Disconnect { reason }, send);
        }
    }

    /// Closes the connection if the peer has been silent for
    /// `silent_for` ms, past the timeout; returns whether it did.
    pub(super) fn time_out_after(&mut self, silent_for: Millis) -> bool {
        if silent_for < self.config.disconnect_after_ms {
            return false;
        }
        self.state = ConnectionState::Disconnected;
        self.pending_goodbye = DisconnectReason::Timeout;
        self.disconnect_copies_left = 1;
        self.events.push_back(Event::Disconnected {
            cause: DisconnectCause::Timeout {
                silent_for_ms: silent_for,
            },
        });
        true
    }
}
