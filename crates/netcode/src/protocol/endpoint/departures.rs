//! Leaving: goodbyes delivered and answered, and peers timing out.
//!
//! A goodbye is repeated until the peer acknowledges it or a linger
//! passes: one lost datagram must not leave a peer (a spectator above all)
//! waiting for the silence timeout and calling the match lost. Our last
//! inputs go first: a goodbye overtaking them would end the peer's match
//! short of frames we played.

use super::{ConnectionState, DisconnectCause, Event, Millis, PeerEndpoint, Role};
use crate::protocol::messages::*;

/// A goodbye not yet acknowledged is sent again this often.
const GOODBYE_RESEND_MS: Millis = 100;

/// Our goodbye, while it is being delivered.
#[derive(Clone, Copy, Debug)]
pub(super) struct Goodbye {
    reason: DisconnectReason,
    /// The first poll after we left: the linger runs from there.
    left_at: Option<Millis>,
    /// When its latest copy went out.
    sent_at: Option<Millis>,
    /// Repeated until answered; a peer gone silent gets one copy.
    repeated: bool,
    answered: bool,
}

impl Goodbye {
    fn new(reason: DisconnectReason, repeated: bool) -> Self {
        Goodbye {
            reason,
            left_at: None,
            sent_at: None,
            repeated,
            answered: false,
        }
    }

    /// Whether nothing more goes out for it at `now`.
    fn delivered_or_given_up(&self, now: Millis, linger_ms: Millis) -> bool {
        self.answered
            || (!self.repeated && self.sent_at.is_some())
            || self
                .left_at
                .is_some_and(|left_at| now.saturating_sub(left_at) >= linger_ms)
    }
}

impl PeerEndpoint {
    /// Leaves: the peer is told, once it has our last inputs, and told
    /// again until it acknowledges or [`EndpointConfig::goodbye_linger_ms`]
    /// passes.
    ///
    /// [`EndpointConfig::goodbye_linger_ms`]: super::EndpointConfig::goodbye_linger_ms
    pub fn disconnect(&mut self, reason: DisconnectReason) {
        if self.state != ConnectionState::Disconnected {
            self.state = ConnectionState::Disconnected;
            self.goodbye = Some(Goodbye::new(reason, true));
        }
    }

    /// Whether nothing is left to send on a closed connection: our goodbye
    /// delivered (or its linger over) and the peer's answered.
    pub(super) fn goodbyes_done(&self) -> bool {
        !self.goodbye_ack_due
            && self.goodbye.is_none_or(|goodbye| {
                goodbye.delivered_or_given_up(self.latest_now, self.config.goodbye_linger_ms)
            })
    }

    /// The peer said goodbye: it is answered, every copy.
    pub(super) fn on_goodbye(&mut self, reason: DisconnectReason) {
        self.goodbye_ack_due = true;
        if self.state == ConnectionState::Disconnected {
            // Goodbyes crossed: the peer is gone and waits for none of ours.
            self.on_goodbye_ack();
            return;
        }
        self.state = ConnectionState::Disconnected;
        self.events.push_back(Event::Disconnected {
            cause: DisconnectCause::PeerLeft(reason),
        });
    }

    /// The peer acknowledged our goodbye.
    pub(super) fn on_goodbye_ack(&mut self) {
        if let Some(goodbye) = &mut self.goodbye {
            goodbye.answered = true;
        }
    }

    /// What a closed connection still takes in: goodbyes and their
    /// answers, and the acks of our last inputs.
    pub(super) fn dispatch_after_leaving(&mut self, message: Message) {
        match message {
            Message::Disconnect { reason } => self.on_goodbye(reason),
            Message::DisconnectAck => self.on_goodbye_ack(),
            Message::Input(input) => {
                self.on_ack(input.next_expected);
                self.input_scratch = input.inputs;
            }
            Message::InputAck { next_expected } => self.on_ack(next_expected),
            _ => self.stats.dropped_unexpected += 1,
        }
    }

    /// What a closed connection still sends: the answer to the peer's
    /// goodbye, then our last inputs until acknowledged (for at most half
    /// the linger), then our goodbye until acknowledged.
    pub(super) fn poll_leaving(&mut self, now: Millis, send: &mut dyn FnMut(&[u8])) {
        if std::mem::take(&mut self.goodbye_ack_due) {
            self.emit(now, &Message::DisconnectAck, send);
        }
        let linger_ms = self.config.goodbye_linger_ms;
        let Some(goodbye) = self.goodbye.as_mut() else {
            return;
        };
        let left_at = *goodbye.left_at.get_or_insert(now);
        let goodbye = *goodbye;
        if goodbye.delivered_or_given_up(now, linger_ms) {
            return;
        }
        let draining = now.saturating_sub(left_at) < linger_ms / 2;
        if goodbye.repeated && draining && !self.unacked.is_empty() {
            let resend_due = self
                .last_input_sent_at
                .is_none_or(|at| now.saturating_sub(at) >= self.config.input_resend_ms);
            if resend_due {
                self.send_inputs(now, send);
            }
            return;
        }
        if goodbye
            .sent_at
            .is_none_or(|at| now.saturating_sub(at) >= GOODBYE_RESEND_MS)
        {
            self.emit(
                now,
                &Message::Disconnect {
                    reason: goodbye.reason,
                },
                send,
            );
            if let Some(goodbye) = &mut self.goodbye {
                goodbye.sent_at = Some(now);
            }
        }
    }

    /// Closes the connection if the peer has been silent for
    /// `silent_for` ms, past the timeout; returns whether it did. A joiner
    /// still saying Hello waits as long as its caller does (`join
    /// --connect-timeout-s`): nobody answering is no answer, not a lost peer.
    pub(super) fn time_out_after(&mut self, silent_for: Millis) -> bool {
        let saying_hello = self.state == ConnectionState::Handshaking
            && matches!(self.config.role, Role::Joiner { .. });
        // A running link waits out the rejoin window: its peer may come back.
        let limit = match self.state {
            ConnectionState::Running => self
                .config
                .disconnect_after_ms
                .max(self.config.rejoin_window_ms),
            _ => self.config.disconnect_after_ms,
        };
        if silent_for < limit || saying_hello {
            return false;
        }
        self.state = ConnectionState::Disconnected;
        self.goodbye = Some(Goodbye::new(DisconnectReason::Timeout, false));
        self.events.push_back(Event::Disconnected {
            cause: DisconnectCause::Timeout {
                silent_for_ms: silent_for,
            },
        });
        true
    }
}
