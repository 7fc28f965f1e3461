//! The chosen path as a [`Transport`]: netcade datagrams go straight to the
//! opponent's address, or through the TURN relay when this side's candidate
//! is relayed; STUN and TURN traffic on the socket (check answers, the
//! relay's refreshes and ChannelData) goes to the ICE agent, which keeps the
//! allocation alive for as long as the match runs.

use super::channel::TurnChannel;
use super::{instant, IcePath};
use crate::net::{MicrosClock, Transport};
use rice_proto::agent::Agent;
use rice_proto::candidate::TransportType;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

/// Datagrams kept from before the path was chosen: the opponent may choose
/// first and start the handshake while this side still checks.
const EARLY_DATAGRAMS: usize = 64;

/// netcade datagrams that arrived while connecting, oldest first, with the
/// sender (`None`: unwrapped from the relay, so from the opponent).
#[derive(Debug, Default)]
pub(super) struct EarlyDatagrams {
    queue: VecDeque<(Option<SocketAddr>, Vec<u8>)>,
}

impl EarlyDatagrams {
    pub(super) fn push(&mut self, from: Option<SocketAddr>, datagram: &[u8]) {
        if self.queue.len() < EARLY_DATAGRAMS {
            self.queue.push_back((from, datagram.to_vec()));
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

/// What went over the path: the protocol's payload and what the wire
/// carried for it (the relay's framing included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathStats {
    /// netcade datagrams sent.
    pub datagrams: u64,
    /// Their bytes as the protocol made them.
    pub payload_bytes: u64,
    /// Their bytes on the wire (ChannelData or Send indication around each,
    /// on a relayed path).
    pub wire_bytes: u64,
    /// netcade datagrams received.
    pub received_datagrams: u64,
    /// Their bytes as the protocol reads them.
    pub received_payload_bytes: u64,
    /// Their bytes as the socket read them (ChannelData or Data
    /// indication around each, on a relayed path).
    pub received_wire_bytes: u64,
}

impl PathStats {
    /// Bytes the path adds to each datagram sent (0 on a direct path).
    pub fn overhead_per_datagram(&self) -> f64 {
        per_datagram(self.wire_bytes - self.payload_bytes, self.datagrams)
    }

    /// Bytes the path added to each datagram received.
    pub fn received_overhead_per_datagram(&self) -> f64 {
        per_datagram(
            self.received_wire_bytes - self.received_payload_bytes,
            self.received_datagrams,
        )
    }

    fn received(&mut self, payload: usize, wire: usize) {
        self.received_datagrams += 1;
        self.received_payload_bytes += payload as u64;
        self.received_wire_bytes += wire.max(payload) as u64;
    }
}

fn per_datagram(bytes: u64, datagrams: u64) -> f64 {
    if datagrams == 0 {
        return 0.0;
    }
    bytes as f64 / datagrams as f64
}

/// What else a path's socket serves while the match runs over it (a room
/// host's meetings with its spectators, [`Guests`](super::Guests)).
pub trait BesideTheMatch: Send {
    /// Takes a datagram the socket read when it is not the match's.
    fn hear(&mut self, from: SocketAddr, datagram: &[u8]) -> bool;
    /// Makes progress at `now_us`, sending on `socket`.
    fn step(&mut self, now_us: u64, socket: &mut dyn Transport<Address = SocketAddr>);
}

/// A transport over the path [`IceConnector`](super::IceConnector) chose.
pub struct IceTransport<T, C> {
    inner: T,
    clock: C,
    agent: Agent,
    stream_id: usize,
    component_id: usize,
    local: SocketAddr,
    remote: SocketAddr,
    relayed: bool,
    early: EarlyDatagrams,
    /// The TURN channel to the opponent (a relayed path whose server
    /// bound one): each datagram then costs 4 bytes, not a Send indication.
    channel: Option<TurnChannel>,
    stats: PathStats,
    path: IcePath,
    /// The router's port mapping, deleted when the path is dropped (the
    /// match ended).
    port_mapping: Option<crate::net::port_mapping::GamePortMapping>,
    /// The peers met beside the match on its socket (a room's spectators).
    guests: Option<Box<dyn BesideTheMatch>>,
}

impl<T, C> IceTransport<T, C>
where
    T: Transport<Address = SocketAddr>,
    C: MicrosClock,
{
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        inner: T,
        clock: C,
        agent: Agent,
        (stream_id, component_id): (usize, usize),
        local: SocketAddr,
        path: IcePath,
        relayed: bool,
        early: EarlyDatagrams,
        channel: Option<TurnChannel>,
    ) -> Self {
        IceTransport {
            inner,
            clock,
            agent,
            stream_id,
            component_id,
            local,
            remote: path.remote,
            relayed,
            early,
            channel,
            stats: PathStats::default(),
            path,
            port_mapping: None,
            guests: None,
        }
    }

    /// Meets `guests` beside the match on this socket from now on: their
    /// checks go to their own agents, never to the opponent's.
    pub fn welcome_guests(&mut self, guests: Box<dyn BesideTheMatch>) {
        self.guests = Some(guests);
    }

    /// The opponent's address on this path.
    pub fn remote(&self) -> SocketAddr {
        self.remote
    }

    /// Keeps `mapping` for as long as the path lives; the path notes it
    /// as `mapped`.
    pub fn hold_port_mapping(
        &mut self,
        mapping: crate::net::port_mapping::GamePortMapping,
        mapped: super::MappedPort,
    ) {
        self.port_mapping = Some(mapping);
        self.path.port_mapping = Some(mapped);
    }

    /// The path, as chosen.
    pub fn path(&self) -> &IcePath {
        &self.path
    }

    /// What went over the path so far.
    pub fn path_stats(&self) -> PathStats {
        self.stats
    }

    /// The socket underneath.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    /// Lets the agent answer checks and refresh the relay, and sends what it asks.
    fn service_agent(&mut self) {
        let now = instant(self.clock.now_us());
        for _ in 0..64 {
            if let rice_proto::agent::AgentPoll::WaitUntil(_)
            | rice_proto::agent::AgentPoll::Closed = self.agent.poll(now)
            {
                break;
            }
        }
        while let Some(outgoing) = self.agent.poll_transmit(now) {
            self.inner
                .send(outgoing.transmit.to, &outgoing.transmit.data);
        }
        if let Some(channel) = &mut self.channel {
            if let Some(request) = channel.poll_transmit(self.clock.now_us()) {
                self.inner.send(channel.server(), &request);
            }
        }
        if let Some(guests) = &mut self.guests {
            guests.step(self.clock.now_us(), &mut self.inner);
        }
    }

    /// True while datagrams to the opponent go as ChannelData.
    pub fn channel_bound(&mut self) -> bool {
        let now_us = self.clock.now_us();
        self.channel
            .as_ref()
            .is_some_and(|channel| channel.is_bound(now_us))
    }

    /// Hands STUN/TURN traffic to the agent: the netcade datagram inside
    /// relayed data, if any, lands in `into`.
    fn unwrap_through_agent(&mut self, from: SocketAddr, into: &mut Vec<u8>) -> bool {
        let now = instant(self.clock.now_us());
        let mut stream = self
            .agent
            .mut_stream(self.stream_id)
            .expect("the connector's stream");
        let datagram =
            stun_proto::agent::Transmit::new(&into[..], TransportType::Udp, from, self.local);
        let reply = stream.handle_incoming_data(self.component_id, datagram, now);
        let unwrapped = reply.data.as_ref().map(|data| data.as_ref().to_vec());
        if reply.have_more_data {
            while let Some(received) = stream.poll_recv() {
                self.early.push(None, &received.data);
            }
        }
        match unwrapped {
            Some(data) if super::is_netcade_datagram(&data) => {
                *into = data;
                true
            }
            _ => false,
        }
    }
}

impl<T, C> Transport for IceTransport<T, C>
where
    T: Transport<Address = SocketAddr>,
    C: MicrosClock,
{
    type Address = SocketAddr;

    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        self.stats.datagrams += 1;
        self.stats.payload_bytes += datagram.len() as u64;
        if !self.relayed || to != self.remote {
            self.stats.wire_bytes += datagram.len() as u64;
            self.inner.send(to, datagram);
            return;
        }
        let now_us = self.clock.now_us();
        if let Some(framed) = self
            .channel
            .as_ref()
            .and_then(|channel| channel.wrap(datagram, now_us))
        {
            self.stats.wire_bytes += framed.len() as u64;
            let server = self.channel.as_ref().map(TurnChannel::server);
            self.inner.send(server.expect("a channel"), &framed);
            return;
        }
        let now = instant(now_us);
        let mut stream = self
            .agent
            .mut_stream(self.stream_id)
            .expect("the connector's stream");
        let mut component = stream
            .mut_component(self.component_id)
            .expect("the connector's component");
        // A relay that lost the allocation loses the datagram, as the wire would.
        if let Ok(wrapped) = component.send(datagram, now) {
            self.stats.wire_bytes += wrapped.data.len() as u64;
            self.inner.send(wrapped.to, &wrapped.data);
        }
    }

    fn receive(&mut self, into: &mut Vec<u8>) -> Option<SocketAddr> {
        if let Some((from, datagram)) = self.early.queue.pop_front() {
            *into = datagram;
            self.stats.received(into.len(), into.len());
            return Some(from.unwrap_or(self.remote));
        }
        while let Some(from) = self.inner.receive(into) {
            if let Some(guests) = &mut self.guests {
                if guests.hear(from, into) {
                    continue;
                }
            }
            let wire = into.len();
            if super::is_netcade_datagram(into) {
                self.stats.received(wire, wire);
                return Some(from);
            }
            if let Some(channel) = &mut self.channel {
                if let Some(data) = channel.unwrap(from, into) {
                    if super::is_netcade_datagram(data) {
                        *into = data.to_vec();
                        self.stats.received(into.len(), wire);
                        return Some(self.remote);
                    }
                    *into = channel.data_indication(data);
                } else if channel.handle_response(from, into, self.clock.now_us()) {
                    continue;
                }
            }
            if self.unwrap_through_agent(from, into) {
                self.stats.received(into.len(), wire);
                return Some(self.remote);
            }
        }
        self.service_agent();
        None
    }

    fn wait(&mut self, timeout: Duration) {
        self.inner.wait(timeout);
    }
}
