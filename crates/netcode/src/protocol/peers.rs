//! Many peers behind one socket: routes datagrams to endpoints by address and
//! counts datagrams from addresses nobody introduced.

use super::endpoint::{Event, PeerEndpoint};
use super::time::Millis;
use std::collections::BTreeMap;

/// Endpoints keyed by the caller's address type (ordered, so polling order and
/// therefore test runs are deterministic).
pub struct PeerTable<A> {
    peers: BTreeMap<A, PeerEndpoint>,
    dropped_unknown: u64,
}

impl<A: Ord + Copy> Default for PeerTable<A> {
    fn default() -> Self {
        PeerTable {
            peers: BTreeMap::new(),
            dropped_unknown: 0,
        }
    }
}

impl<A: Ord + Copy> PeerTable<A> {
    /// A table with no endpoints and nothing dropped yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the endpoint for `address`, returning any previous one.
    pub fn insert(&mut self, address: A, endpoint: PeerEndpoint) -> Option<PeerEndpoint> {
        self.peers.insert(address, endpoint)
    }

    /// Takes the endpoint for `address` out of the table, if there is one.
    pub fn remove(&mut self, address: &A) -> Option<PeerEndpoint> {
        self.peers.remove(address)
    }

    /// The endpoint for `address`, if there is one.
    pub fn get(&self, address: &A) -> Option<&PeerEndpoint> {
        self.peers.get(address)
    }

    /// The endpoint for `address` to change, if there is one.
    pub fn get_mut(&mut self, address: &A) -> Option<&mut PeerEndpoint> {
        self.peers.get_mut(address)
    }

    /// How many endpoints the table holds.
    pub fn len(&self) -> usize {
        self.peers.len()
    }

    /// Whether the table holds no endpoint.
    pub fn is_empty(&self) -> bool {
        self.peers.is_empty()
    }

    /// Every endpoint with its address, in address order, to read.
    pub fn iter(&self) -> impl Iterator<Item = (&A, &PeerEndpoint)> {
        self.peers.iter()
    }

    /// Whether every endpoint is closed, its goodbyes delivered (or given
    /// up on).
    pub fn all_closed(&self) -> bool {
        self.peers.values().all(PeerEndpoint::is_closed)
    }

    /// Every endpoint with its address, in address order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&A, &mut PeerEndpoint)> {
        self.peers.iter_mut()
    }

    /// Hands a datagram to the endpoint of `from`; returns false (and counts it)
    /// when no endpoint has that address.
    pub fn handle_datagram(&mut self, now: Millis, from: A, datagram: &[u8]) -> bool {
        match self.peers.get_mut(&from) {
            Some(endpoint) => {
                endpoint.handle_datagram(now, datagram);
                true
            }
            None => {
                self.dropped_unknown += 1;
                false
            }
        }
    }

    /// Polls every endpoint; `send` gets each datagram with its destination.
    pub fn poll(&mut self, now: Millis, send: &mut dyn FnMut(A, &[u8])) {
        for (&address, endpoint) in self.peers.iter_mut() {
            endpoint.poll(now, &mut |datagram| send(address, datagram));
        }
    }

    /// Every pending event of every endpoint, with the address it concerns.
    pub fn drain_events(&mut self) -> Vec<(A, Event)> {
        let mut events = Vec::new();
        for (&address, endpoint) in self.peers.iter_mut() {
            events.extend(endpoint.drain_events().map(|event| (address, event)));
        }
        events
    }

    /// Datagrams that came from addresses with no endpoint.
    pub fn dropped_unknown(&self) -> u64 {
        self.dropped_unknown
    }
}
