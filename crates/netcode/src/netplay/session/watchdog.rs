//! The watchdog: a match always ends. Silence ends a link; a peer heard
//! all along whose frames never become final (a bug, or a peer breaking
//! the rules in a way no check names) would otherwise hold the match
//! forever.

use super::NetplaySession;
use crate::netplay::events::NetplayEvent;
use crate::protocol::{self, Millis};

/// A peer heard within this long counts as alive for the watchdogs (of
/// the players and of spectators): silence is the disconnect timeout's.
pub const HEARD_WITHIN_MS: Millis = 1_000;

impl<A: Ord + Copy + std::hash::Hash> NetplaySession<A> {
    /// Whether the match stalled: frames were asked for since `stall_after_ms`
    /// ago, every peer was heard, and none became final. It then ends here, and the peers are told.
    pub(super) fn stalled(&mut self, now: Millis) -> bool {
        let finalized = self.finalized_frame();
        // A silent peer is the disconnect timeout's to end.
        let silence = self.endpoints.iter_mut().any(|(_, endpoint)| {
            endpoint.is_running() && endpoint.silent_for(now) >= HEARD_WITHIN_MS
        });
        let since = match self.progress {
            Some((frame, since)) if frame == finalized && !silence => since,
            _ => {
                self.progress = Some((finalized, now));
                return false;
            }
        };
        let stalled_for_ms = now.saturating_sub(since);
        if stalled_for_ms < self.config.stall_after_ms {
            return false;
        }
        self.events.push_back(NetplayEvent::Stalled {
            at_frame: finalized,
            stalled_for_ms,
        });
        self.leave_because(protocol::DisconnectReason::Stalled);
        true
    }
}
