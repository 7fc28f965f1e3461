//! The start-up: Ready and Start between the machines until frame 0
//! begins on all of them at the same moment (see `netplay::startup`).

use super::blobs::StartStateWait;
use super::{LinkState, NetplaySession};
use crate::netplay::events::NetplayEvent;
use crate::netplay::startup::StartMessage;
use crate::protocol::Millis;
use crate::rollback::SessionState;

impl<A: Ord + Copy + std::hash::Hash> NetplaySession<A> {
    /// Sends the start-up's due messages (Ready, Start) and, on the host,
    /// decides the start moment once everyone is ready and measured.
    /// The host keeps resending after its own start, until every member has
    /// its Start.
    pub(super) fn poll_startup(&mut self, now: Millis) {
        // A member with a start state to load is not ready before it did.
        let start_state_loaded = matches!(
            self.start_state_wait,
            StartStateWait::NotAwaited | StartStateWait::Taken
        );
        let synchronized = self.session.state() == SessionState::Running && start_state_loaded;
        let (startup, endpoints, links) = (&mut self.startup, &mut self.endpoints, &self.links);
        let decided = startup.poll(now, synchronized, |message| {
            let (StartMessage::Ready { link } | StartMessage::Start { link, .. }) = message;
            let Some(address) = links[link]
                .address
                .filter(|_| links[link].state == LinkState::Open)
            else {
                return;
            };
            let Some(endpoint) = endpoints.get_mut(&address) else {
                return;
            };
            match message {
                StartMessage::Ready { .. } => endpoint.send_ready(),
                StartMessage::Start { delay_ms, .. } => endpoint.send_start(delay_ms),
            }
        });
        if let Some(start_at) = decided {
            self.events.push_back(NetplayEvent::Starting {
                in_ms: start_at.saturating_sub(now),
            });
        }
    }

    /// Frame 0 begins: play-time report rates, and the frontend is told.
    pub(super) fn on_started(&mut self) {
        let interval = self.quality_report_interval_ms;
        for (_, endpoint) in self.endpoints.iter_mut() {
            endpoint.set_quality_report_interval(interval);
        }
        self.events.push_back(NetplayEvent::Running);
    }

    /// The start-up host (link `index`) tells us when frame 0 begins.
    pub(super) fn on_start_requested(&mut self, index: usize, delay_ms: u16) {
        if let Some(start_at) = self.startup.on_start_requested(self.now, index, delay_ms) {
            self.events.push_back(NetplayEvent::Starting {
                in_ms: start_at - self.now,
            });
        }
    }
}
