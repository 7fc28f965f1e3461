//! Several ICE connections at once on one game socket: one
//! [`IceConnector`] per peer being met, the datagrams of the shared socket
//! handed to the one [`Meetings`] routes them to, each connector's signals
//! through its own inbox. A meeting is ready once its path is found and
//! the opponent's first netcade datagram came over it; every decision
//! (slots, deadlines, routing) is [`Meetings`]'s, this only moves bytes.

use super::meetings::{Admission, Expiry, MeetingLimits, Meetings};
use super::{random_credentials, IceConfig, IceConnector, IceError, IceRole};
use crate::net::signal::{SignalChannel, SignalError};
use crate::net::Transport;
use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;

/// Datagrams read from the shared socket per step.
const DATAGRAMS_PER_STEP: usize = 256;
/// Datagrams or signals waiting for one connector: a peer flooding its
/// meeting fills its own inbox, no other.
const INBOX: usize = 256;
/// How long a TURN server takes to forget a deleted allocation: coturn
/// answers the deletion at once but frees the socket's 5-tuple on its
/// next one-second timer, refusing a new allocation (437) until then.
const RELAY_RELEASE_US: u64 = 1_200_000;

/// How a meeting ended without a match.
#[derive(Debug, thiserror::Error)]
pub enum MeetingEnd {
    /// ICE found no path, or could not go on.
    #[error("{0}")]
    Failed(IceError),
    /// Its path was found, but the opponent never began the handshake.
    #[error("it found the path but never began the handshake")]
    NoHandshake,
}

/// What a step of [`MeetingSocket`] came to for one peer.
#[derive(Debug)]
pub enum MeetingOutcome<K> {
    /// The meeting ended without a match.
    Ended(K, MeetingEnd),
    /// Its path is found and the opponent's handshake began over it: take
    /// its connector with [`MeetingSocket::take`].
    Ready(K),
}

struct Meeting {
    connector: IceConnector,
    signals: VecDeque<String>,
    datagrams: VecDeque<(SocketAddr, Vec<u8>)>,
}

/// The meetings of one socket (see the module's comment).
pub struct MeetingSocket<K> {
    meetings: Meetings<K>,
    connectors: BTreeMap<K, Meeting>,
    /// The signals of peers waiting for a slot or for the relays (their
    /// ICE began on their side), for their connectors.
    waiting_signals: BTreeMap<K, VecDeque<String>>,
    local: SocketAddr,
    config: IceConfig,
    role: IceRole,
    /// Connectors of meetings that ended, whose relay allocations are
    /// deleted on the next step (the socket's next meeting needs its own).
    releasing: Vec<IceConnector>,
    /// Until when a released allocation may still hold the relays, and
    /// the meetings whose ICE starts once they are free.
    relays_busy_until_us: u64,
    deferred: Vec<K>,
    buffer: Vec<u8>,
}

impl<K: Ord + Clone> MeetingSocket<K> {
    /// No meetings yet, on the socket reachable at `local`.
    pub fn new(local: SocketAddr, config: IceConfig, role: IceRole, limits: MeetingLimits) -> Self {
        MeetingSocket {
            meetings: Meetings::new(limits),
            connectors: BTreeMap::new(),
            waiting_signals: BTreeMap::new(),
            local,
            config,
            role,
            releasing: Vec::new(),
            relays_busy_until_us: 0,
            deferred: Vec::new(),
            buffer: Vec::new(),
        }
    }

    /// A peer asked to meet at `now_us`: its meeting starts, or waits for
    /// a slot, or (already meeting, or too many waiting) nothing happens.
    pub fn offer(&mut self, peer: K, now_us: u64) -> Admission {
        let admission = self.meetings.offer(peer.clone(), now_us);
        if admission == Admission::Start {
            self.start(peer, now_us);
        }
        admission
    }

    fn start(&mut self, peer: K, now_us: u64) {
        let relays_busy = now_us < self.relays_busy_until_us || !self.releasing.is_empty();
        if relays_busy && !self.config.relays.is_empty() {
            self.deferred.push(peer);
            return;
        }
        let config = self.config.clone();
        let credentials = random_credentials();
        let connector = IceConnector::new(self.local, config, self.role, credentials, now_us);
        self.meetings.set_ufrag(&peer, connector.local_ufrag());
        let meeting = Meeting {
            connector,
            signals: self.waiting_signals.remove(&peer).unwrap_or_default(),
            datagrams: VecDeque::new(),
        };
        self.connectors.insert(peer, meeting);
    }

    /// A signal from `peer`, for its connector (kept for it while the
    /// peer waits for a slot).
    pub fn deliver_signal(&mut self, peer: &K, text: String) {
        let inbox = match self.connectors.get_mut(peer) {
            Some(meeting) => &mut meeting.signals,
            None if self.meetings.is_waiting(peer) || self.deferred.contains(peer) => {
                self.waiting_signals.entry(peer.clone()).or_default()
            }
            None => return,
        };
        if inbox.len() < INBOX {
            inbox.push_back(text);
        }
    }

    /// `peer` left: its meeting ends (or its wait).
    pub fn end(&mut self, peer: &K) {
        self.meetings.end(peer);
        self.deferred.retain(|deferred| deferred != peer);
        if let Some(meeting) = self.connectors.remove(peer) {
            self.releasing.push(meeting.connector);
        }
        self.waiting_signals.remove(peer);
    }

    /// Reads `socket`, steps every meeting at `now_us` (their signals go
    /// out through `send`), ends the late ones and starts waiting ones.
    pub fn step<T>(
        &mut self,
        now_us: u64,
        socket: &mut T,
        send: &mut dyn FnMut(&K, &str) -> Result<(), SignalError>,
    ) -> Vec<MeetingOutcome<K>>
    where
        T: Transport<Address = SocketAddr> + ?Sized,
    {
        let mut buffer = std::mem::take(&mut self.buffer);
        for _ in 0..DATAGRAMS_PER_STEP {
            let Some(from) = socket.receive(&mut buffer) else {
                break;
            };
            self.hear(from, &buffer);
        }
        self.buffer = buffer;
        self.advance(now_us, socket, send)
    }

    /// Hands a datagram from `from` to the meeting it belongs to; false
    /// when none does.
    pub fn hear(&mut self, from: SocketAddr, datagram: &[u8]) -> bool {
        match self.meetings.route(from, datagram).cloned() {
            Some(peer) => {
                self.deliver_datagram(&peer, from, datagram);
                true
            }
            None => false,
        }
    }

    /// [`MeetingSocket::hear`] for meetings held beside a match on its
    /// socket, which offer no relay: a check or an answer of a meeting is
    /// that meeting's (true), anything else the match's (false); a netcade
    /// datagram from a meeting's peer is the match's too, and a copy tells
    /// the meeting that its peer's handshake began.
    pub fn hear_beside_match(&mut self, from: SocketAddr, datagram: &[u8]) -> bool {
        if super::is_netcade_datagram(datagram) {
            if let Some(peer) = self.meetings.route(from, datagram).cloned() {
                self.deliver_datagram(&peer, from, datagram);
            }
            return false;
        }
        match self.meetings.route_check(datagram).cloned() {
            Some(peer) => {
                self.deliver_datagram(&peer, from, datagram);
                true
            }
            None => false,
        }
    }

    fn deliver_datagram(&mut self, peer: &K, from: SocketAddr, datagram: &[u8]) {
        if let Some(meeting) = self.connectors.get_mut(peer) {
            if meeting.datagrams.len() < INBOX {
                meeting.datagrams.push_back((from, datagram.to_vec()));
            }
        }
    }

    /// Steps every meeting at `now_us` with the datagrams heard so far
    /// (what they send goes out on `socket`, their signals through
    /// `send`), ends the late ones and starts waiting ones.
    pub fn advance<T>(
        &mut self,
        now_us: u64,
        socket: &mut T,
        send: &mut dyn FnMut(&K, &str) -> Result<(), SignalError>,
    ) -> Vec<MeetingOutcome<K>>
    where
        T: Transport<Address = SocketAddr> + ?Sized,
    {
        self.release_ended(now_us, socket);
        let mut outcomes = Vec::new();
        for (peer, meeting) in &mut self.connectors {
            let mut routed = Routed {
                socket: &mut *socket,
                inbox: &mut meeting.datagrams,
                meetings: &mut self.meetings,
                peer,
            };
            let mut signal = Inbox {
                inbox: &mut meeting.signals,
                send: &mut *send,
                peer,
            };
            match meeting.connector.step(now_us, &mut routed, &mut signal) {
                Ok(Some(path)) => {
                    self.meetings.connected(peer, path.remote, now_us);
                    if meeting.connector.heard_netcade() {
                        outcomes.push(MeetingOutcome::Ready(peer.clone()));
                    }
                }
                Ok(None) => {}
                Err(error) => outcomes.push(MeetingOutcome::Ended(
                    peer.clone(),
                    MeetingEnd::Failed(error),
                )),
            }
        }
        for (peer, why) in self.meetings.expire(now_us) {
            let end = match why {
                Expiry::NoPath => MeetingEnd::Failed(IceError::NoRoute {
                    waited_s: self.config.give_up_after.as_secs(),
                }),
                Expiry::NoHandshake => MeetingEnd::NoHandshake,
            };
            outcomes.push(MeetingOutcome::Ended(peer, end));
        }
        for outcome in &outcomes {
            if let MeetingOutcome::Ended(peer, _) = outcome {
                self.end(peer);
            }
        }
        // Before any meeting that starts now asks the relay for its own.
        self.release_ended(now_us, socket);
        while let Some(peer) = self.meetings.promote(now_us) {
            self.start(peer, now_us);
        }
        self.start_deferred(now_us);
        outcomes
    }

    fn release_ended<T>(&mut self, now_us: u64, socket: &mut T)
    where
        T: Transport<Address = SocketAddr> + ?Sized,
    {
        if self.releasing.is_empty() {
            return;
        }
        for mut connector in self.releasing.drain(..) {
            connector.release(now_us, socket);
        }
        if !self.config.relays.is_empty() {
            self.relays_busy_until_us = now_us.saturating_add(RELAY_RELEASE_US);
        }
    }

    /// Starts the meetings that waited for the relays to be free.
    fn start_deferred(&mut self, now_us: u64) {
        if now_us < self.relays_busy_until_us {
            return;
        }
        for peer in std::mem::take(&mut self.deferred) {
            self.start(peer, now_us);
        }
    }

    /// Where `peer`'s path leads, once found, before its meeting is
    /// [`MeetingOutcome::Ready`] (the side that speaks first needs it).
    pub fn path_of(&self, peer: &K) -> Option<SocketAddr> {
        self.meetings.path_of(peer)
    }

    /// The connector of a meeting that is [`MeetingOutcome::Ready`]; the
    /// others end with the socket.
    pub fn take(mut self, peer: &K) -> Option<IceConnector> {
        self.finish(peer)
    }

    /// Takes the connector of a meeting that is [`MeetingOutcome::Ready`]
    /// off the socket, which goes on meeting the others.
    pub fn finish(&mut self, peer: &K) -> Option<IceConnector> {
        self.meetings.end(peer);
        self.connectors
            .remove(peer)
            .map(|meeting| meeting.connector)
    }
}

/// The shared socket as one connector sees it: its own datagrams in, and
/// what it sends noted so the answers find their way back.
struct Routed<'a, K, T: ?Sized> {
    socket: &'a mut T,
    inbox: &'a mut VecDeque<(SocketAddr, Vec<u8>)>,
    meetings: &'a mut Meetings<K>,
    peer: &'a K,
}

impl<K: Ord + Clone, T> Transport for Routed<'_, K, T>
where
    T: Transport<Address = SocketAddr> + ?Sized,
{
    type Address = SocketAddr;

    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        self.meetings.sent(self.peer, to, datagram);
        self.socket.send(to, datagram);
    }

    fn receive(&mut self, into: &mut Vec<u8>) -> Option<SocketAddr> {
        let (from, datagram) = self.inbox.pop_front()?;
        *into = datagram;
        Some(from)
    }

    fn wait(&mut self, _timeout: std::time::Duration) {}
}

/// One peer's signals, as a channel for its connector.
struct Inbox<'a, K> {
    inbox: &'a mut VecDeque<String>,
    send: &'a mut dyn FnMut(&K, &str) -> Result<(), SignalError>,
    peer: &'a K,
}

impl<K> SignalChannel for Inbox<'_, K> {
    fn send(&mut self, message: &str) -> Result<(), SignalError> {
        (self.send)(self.peer, message)
    }

    fn try_receive(&mut self) -> Result<Option<String>, SignalError> {
        Ok(self.inbox.pop_front())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A socket where nothing arrives and what is sent is lost.
    struct Silence;

    impl Transport for Silence {
        type Address = SocketAddr;
        fn send(&mut self, _: SocketAddr, _: &[u8]) {}
        fn receive(&mut self, _: &mut Vec<u8>) -> Option<SocketAddr> {
            None
        }
    }

    #[test]
    fn a_peer_waiting_for_a_slot_gets_the_signals_it_sent_meanwhile() {
        let limits = MeetingLimits {
            max_meetings: 1,
            max_waiting: 1,
            connect_within: Duration::from_secs(15),
            handshake_within: Duration::from_secs(3),
        };
        let local = "127.0.0.1:7000".parse().unwrap();
        let mut meetings =
            MeetingSocket::new(local, IceConfig::default(), IceRole::Controlling, limits);
        let mut sent = Vec::new();
        let mut send = |peer: &&str, text: &str| {
            sent.push((peer.to_string(), text.to_string()));
            Ok(())
        };
        assert_eq!(meetings.offer("first", 0), Admission::Start);
        assert_eq!(meetings.offer("second", 0), Admission::Waiting);
        // What the waiting peer says reaches its connector once it starts:
        // here, a message no connector can read, which ends its meeting.
        meetings.deliver_signal(&"second", "ice-unknown".into());
        meetings.deliver_signal(&"nobody", "ice-unknown".into());
        assert!(meetings.step(0, &mut Silence, &mut send).is_empty());
        meetings.end(&"first");
        assert!(meetings.step(1_000, &mut Silence, &mut send).is_empty());
        let outcomes = meetings.step(2_000, &mut Silence, &mut send);
        assert!(
            matches!(
                outcomes.as_slice(),
                [MeetingOutcome::Ended(
                    "second",
                    MeetingEnd::Failed(IceError::BadSignal(_))
                )]
            ),
            "{outcomes:?}"
        );
        // Each started meeting sent its credentials to its own peer.
        let credentials = |peer: &str| {
            sent.iter()
                .any(|(to, text)| to == peer && text.starts_with("ice-credentials"))
        };
        assert!(credentials("first") && credentials("second"));
    }
}
