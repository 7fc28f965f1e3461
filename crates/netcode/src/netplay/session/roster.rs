//! The roster of a 3–4 player match: once every member joined, the
//! start-up host tells each one where the others are (as the host sees
//! them), and the members link to each other as a full mesh, the machine
//! of the higher slot dialling. A member is ready (and the match begins)
//! only once it is synchronized with every machine.

use super::{Link, LinkState, NetplaySession};
use crate::netplay::config::Connect;
use crate::protocol::{Millis, PlayerSlots, RosterEntry, MAX_ROSTER_ADDRESS_BYTES};
use crate::rollback::SessionState;

/// The host repeats its roster this often until the match begins (a lost
/// roster costs at most this wait).
pub(super) const ROSTER_RESEND_MS: Millis = 200;

impl<A: Ord + Copy + std::hash::Hash> NetplaySession<A> {
    /// On the start-up host, once every member is synchronized and before
    /// frame 0: the roster to every member, every [`ROSTER_RESEND_MS`].
    pub(super) fn poll_roster(&mut self, now: Millis) {
        let Some(codec) = self.config.roster else {
            return;
        };
        let due = self
            .roster_sent_at
            .is_none_or(|at| now.saturating_sub(at) >= ROSTER_RESEND_MS);
        let everyone_joined = self.session.state() == SessionState::Running;
        if !self.startup.is_host() || self.startup.has_started() || !everyone_joined || !due {
            return;
        }
        self.roster_sent_at = Some(now);
        let mut roster = Vec::with_capacity(self.links.len());
        for link in &self.links {
            let Some(address) = link.address else {
                continue;
            };
            let mut bytes = Vec::new();
            (codec.encode)(&address, &mut bytes);
            if bytes.len() > MAX_ROSTER_ADDRESS_BYTES {
                continue;
            }
            roster.extend(link.players.iter().map(|slot| RosterEntry {
                slot,
                address: bytes.clone(),
            }));
        }
        for index in 0..self.links.len() {
            let theirs = self.links[index].players;
            let others: Vec<RosterEntry> = roster
                .iter()
                .filter(|entry| !theirs.contains(entry.slot))
                .cloned()
                .collect();
            if let Some(endpoint) = self.open_endpoint(index) {
                endpoint.send_roster(others);
            }
        }
    }

    /// A roster arrived over link `index`: taken only from the start-up
    /// host before frame 0; each peer it places is linked (dialled when its
    /// slot is below ours). Entries for no roster peer, or naming an
    /// address another link or a spectator has, are ignored.
    pub(super) fn on_roster(&mut self, index: usize, entries: Vec<RosterEntry>) {
        let from_host = self.links[index].players.contains(0);
        let Some(codec) = self.config.roster.filter(|_| from_host) else {
            return;
        };
        if self.startup.has_started() {
            return;
        }
        for entry in entries {
            if let Some(address) = (codec.decode)(&entry.address) {
                self.place_roster_peer(entry.slot, address);
            }
        }
    }

    /// Places the roster peer of `slot` at `address` and links it (dialled
    /// when its slot is below ours): from the host's roster, or from a path
    /// found elsewhere (a room's players find theirs with ICE). A peer
    /// placed before whose handshake is not done yet is moved to the new
    /// address, so whoever found a path first under that slot's name holds
    /// nothing. False, and nothing changes, when no peer of that slot can
    /// take a place (placed and running, or none), or `address` is where it
    /// is already, or another link's or a spectator's.
    pub fn place_roster_peer(&mut self, slot: u8, address: A) -> bool {
        if self.startup.has_started() {
            return false;
        }
        // Another link's address, or a spectator's: its endpoint stays.
        let taken = self.links.iter().any(|link| link.address == Some(address))
            || self.endpoints.get(&address).is_some();
        let Some(peer) = self.links.iter().position(|link| {
            link.players.contains(slot)
                && (link.connect == Connect::Roster || (link.placed && !self.link_is_running(link)))
        }) else {
            return false;
        };
        if taken {
            return false;
        }
        if let Some(before) = self.links[peer].address.take() {
            self.endpoints.remove(&before);
        }
        let our_first = self.local_players.iter().next().unwrap_or(0);
        let link = &mut self.links[peer];
        link.address = Some(address);
        link.configured_address = Some(address);
        link.placed = true;
        link.state = LinkState::AwaitingHello;
        link.connect = if slot < our_first {
            Connect::Dial
        } else {
            Connect::Accept
        };
        // A failure here is an endpoint configuration we already made
        // for the host link: it cannot differ for this one.
        let _ = self.open_dialed_link(self.now, peer);
        true
    }

    fn link_is_running(&self, link: &Link<A>) -> bool {
        link.address
            .and_then(|address| self.endpoints.get(&address))
            .is_some_and(|endpoint| endpoint.is_running())
    }

    /// Whether a Hello claiming `slots` is for a peer the roster has not
    /// placed yet: it is dropped unanswered (the dialer repeats it), as its
    /// roster may simply have arrived before ours.
    pub(super) fn awaits_roster_for(&self, slots: PlayerSlots) -> bool {
        self.links
            .iter()
            .any(|link| link.connect == Connect::Roster && link.players == slots)
    }
}
