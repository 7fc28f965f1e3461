//! The connecting phase: rice-proto's agent driven over one socket and one
//! signaling channel, one [`IceConnector::step`] at a time, until a pair is
//! chosen. Relayed candidates are held back for the grace period so a
//! relay is only ever the last resort, and the nearest relay is offered.

use super::channel::TurnChannel;
use super::signals::IceSignal;
use super::stun_peek::{stun, StunClass};
use super::transport::{EarlyDatagrams, IceTransport};
use super::{instant, whole_ms, IceConfig, IceError, IcePath, IceRole, PathKind, PathPolicy};
use crate::net::signal::SignalChannel;
use crate::net::{MicrosClock, Transport};
use rice_proto::agent::{Agent, AgentPoll};
use rice_proto::candidate::{Candidate, CandidateType, TransportType};
use rice_proto::component::{ComponentConnectionState, SelectedPair};
use rice_proto::stream::{Credentials, GatheredCandidate};
use rice_proto::turn::{TurnConfig, TurnCredentials};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::SocketAddr;
use std::time::Duration;
use turn_client_proto::api::TurnClientApi;

/// Signals read per step: a peer flooding the channel cannot stall the loop.
const SIGNALS_PER_STEP: usize = 64;
/// Datagrams read per step, for the same reason.
const DATAGRAMS_PER_STEP: usize = 256;
/// Remote candidates accepted: ICE needs a handful; a peer sending more is
/// refused rather than remembered without bound.
const MAX_REMOTE_CANDIDATES: usize = 32;
/// Nominating checks remembered until answered: the controlling side sends
/// a few per pair it nominates.
const NOMINATIONS_KEPT: usize = 16;
/// How long a controlled side waits for rice-proto to select the pair the
/// opponent nominated, and answered, before following the nomination
/// itself: rice-proto 0.4.3 drops a nomination when this side's address is
/// translated (librice issue 168), though every check succeeded.
const NOMINATION_GRACE_US: u64 = 500_000;

/// A relayed candidate gathered but not offered yet.
struct HeldRelay {
    gathered: GatheredCandidate,
    name: String,
    round_trip: Duration,
}

/// The relay behind a relayed candidate, as offered.
#[derive(Clone, Debug)]
struct RelayLabel {
    name: String,
    round_trip_ms: u64,
}

/// One connection attempt in progress (see the module's comment).
pub struct IceConnector {
    agent: Agent,
    stream_id: usize,
    component_id: usize,
    local: SocketAddr,
    config: IceConfig,
    credentials: Credentials,
    /// Candidates rice-proto does not gather (loopback, a port mapping),
    /// sent once the credentials are.
    offered_first: Vec<String>,
    started_us: u64,
    credentials_sent: bool,
    remote_credentials_known: bool,
    /// Candidates that arrived before the opponent's credentials.
    waiting_candidates: Vec<Candidate>,
    remote_candidates: usize,
    held_relays: Vec<HeldRelay>,
    offered_relay: Option<(SocketAddr, RelayLabel)>,
    /// The TURN server behind the offered relayed candidate.
    offered_relay_server: Option<SocketAddr>,
    /// The channel to the opponent through that server, once a pair from
    /// the relayed candidate is chosen.
    channel: Option<TurnChannel>,
    remote_relays: BTreeMap<SocketAddr, RelayLabel>,
    /// The opponent's host candidates: a check from one of them, learnt
    /// as peer-reflexive because it came before the candidate, is direct.
    remote_hosts: BTreeSet<SocketAddr>,
    /// The opponent's port-mapping candidates: a path to one goes through
    /// the opponent's router's mapping, not a punched hole.
    remote_mapped: BTreeSet<SocketAddr>,
    /// Per relay server: when the last request went to it, and the
    /// shortest wait for an answer seen so far (its round trip).
    relay_round_trips: BTreeMap<SocketAddr, (Option<u64>, Option<Duration>)>,
    gathering_done: bool,
    local_ended: bool,
    remote_ended: bool,
    failed: bool,
    path: Option<IcePath>,
    selected: Option<SelectedPair>,
    /// Controlled only: the opponent's nominating checks that reached this
    /// socket directly (transaction, sender), until answered.
    nominating_checks: VecDeque<([u8; 12], SocketAddr)>,
    /// Controlled only: where the first nomination this side accepted
    /// (answered with success) came from, and when.
    accepted_nomination: Option<(SocketAddr, u64)>,
    controlled: bool,
    early: EarlyDatagrams,
    buffer: Vec<u8>,
}

impl IceConnector {
    /// Starts gathering for the socket reachable at `local` (its host
    /// candidate), at `now_us` on the caller's clock.
    pub fn new(
        local: SocketAddr,
        config: IceConfig,
        role: IceRole,
        credentials: Credentials,
        now_us: u64,
    ) -> Self {
        let mut agent = Agent::builder()
            .trickle_ice(true)
            .controlling(role == IceRole::Controlling)
            .build();
        let stream_id = agent.add_stream();
        let mut stream = agent.mut_stream(stream_id).expect("the stream just added");
        stream.set_local_credentials(credentials.clone());
        let component_id = stream
            .add_component()
            .expect("a new stream takes its first component");
        let mut offered_first = Vec::new();
        if config.policy == PathPolicy::Any {
            let loopback = local
                .ip()
                .is_loopback()
                .then(|| loopback_host_candidate(local, component_id));
            let mapped = config
                .mapped_address
                .map(|public| mapped_candidate(public, local, component_id));
            for candidate in loopback.into_iter().chain(mapped) {
                offered_first.push(candidate.to_sdp_string());
                stream.add_local_candidate(candidate);
            }
        }
        let mut component = stream
            .mut_component(component_id)
            .expect("the component just added");
        gather(&mut component, local, &config);
        IceConnector {
            agent,
            stream_id,
            component_id,
            local,
            config,
            credentials,
            offered_first,
            started_us: now_us,
            credentials_sent: false,
            remote_credentials_known: false,
            waiting_candidates: Vec::new(),
            remote_candidates: 0,
            held_relays: Vec::new(),
            offered_relay: None,
            offered_relay_server: None,
            channel: None,
            remote_relays: BTreeMap::new(),
            remote_hosts: BTreeSet::new(),
            remote_mapped: BTreeSet::new(),
            relay_round_trips: BTreeMap::new(),
            gathering_done: false,
            local_ended: false,
            remote_ended: false,
            failed: false,
            path: None,
            selected: None,
            nominating_checks: VecDeque::new(),
            accepted_nomination: None,
            controlled: role == IceRole::Controlled,
            early: EarlyDatagrams::default(),
            buffer: Vec::new(),
        }
    }

    /// Makes what progress is possible at `now_us`: reads the opponent's
    /// messages and the socket, runs the checks, sends what they ask for.
    /// `Some(path)` once a pair is chosen; an error when none can be.
    pub fn step<T, S>(
        &mut self,
        now_us: u64,
        transport: &mut T,
        signal: &mut S,
    ) -> Result<Option<IcePath>, IceError>
    where
        T: Transport<Address = SocketAddr> + ?Sized,
        S: SignalChannel + ?Sized,
    {
        if !self.credentials_sent {
            signal.send(
                &IceSignal::Credentials {
                    ufrag: self.credentials.ufrag.clone(),
                    password: self.credentials.passwd.clone(),
                }
                .encode(),
            )?;
            self.credentials_sent = true;
            for sdp in std::mem::take(&mut self.offered_first) {
                signal.send(&IceSignal::Candidate(sdp).encode())?;
            }
        }
        self.read_signals(signal)?;
        self.read_datagrams(transport, now_us);
        self.poll_agent(now_us, signal)?;
        self.offer_relay_when_due(now_us, signal)?;
        self.end_candidates_when_done(now_us, signal)?;
        self.flush(transport, now_us);
        self.follow_accepted_nomination(now_us);
        if let Some(path) = &self.path {
            return Ok(Some(path.clone()));
        }
        let waited = Duration::from_micros(now_us.saturating_sub(self.started_us));
        let everything_failed = self.failed && self.local_ended && self.remote_ended;
        if everything_failed || waited >= self.config.give_up_after {
            return Err(IceError::NoRoute {
                waited_s: waited.as_secs_f64().round() as u64,
            });
        }
        Ok(None)
    }

    /// Steps until a path is found or connecting fails, waiting on the
    /// socket between steps: the real-time entry point. On failure the
    /// socket is as it was (a host forgets that opponent and waits for the
    /// next on it).
    pub fn connect<T, S, C>(
        &mut self,
        transport: &mut T,
        signal: &mut S,
        clock: &mut C,
    ) -> Result<IcePath, IceError>
    where
        T: Transport<Address = SocketAddr>,
        S: SignalChannel + ?Sized,
        C: MicrosClock,
    {
        loop {
            if let Some(path) = self.step(clock.now_us(), transport, signal)? {
                return Ok(path);
            }
            // Checks pace themselves in tens of milliseconds; a few ms of
            // wait keeps the steps prompt without spinning.
            transport.wait(Duration::from_millis(5));
        }
    }

    /// Gives this attempt up at `now_us`: the relay allocations it holds
    /// are deleted through `transport`. A TURN server keys an allocation
    /// by the socket's address, so while one lasts (minutes) the next
    /// attempt on the same socket would be refused its own.
    pub fn release<T>(&mut self, now_us: u64, transport: &mut T)
    where
        T: Transport<Address = SocketAddr> + ?Sized,
    {
        let now = instant(now_us);
        for held in self.held_relays.drain(..) {
            if let Some(mut turn) = held.gathered.turn_agent {
                // Fails only for an allocation never made: nothing to delete.
                let _ = turn.delete(now);
                while let Some(transmit) = turn.poll_transmit(now) {
                    transport.send(transmit.to, transmit.data.as_ref());
                }
            }
        }
        // The deletions are queued by closing and go before polling (a
        // poll forgets a client whose allocations all ended). The agent
        // paces its sends a timing advance apart; a closed agent has no
        // later, so they all go now, each at the time pacing allows.
        self.agent.close(now);
        let pace = self.agent.timing_advance();
        let mut at = now;
        for _ in 0..MAX_REMOTE_CANDIDATES {
            at += pace;
            let Some(outgoing) = self.agent.poll_transmit(at) else {
                break;
            };
            transport.send(outgoing.transmit.to, &outgoing.transmit.data);
        }
    }

    /// This side's username fragment: the checks addressed to this
    /// connection name it first in their `USERNAME`.
    pub fn local_ufrag(&self) -> &str {
        &self.credentials.ufrag
    }

    /// True once a netcade datagram came from the opponent (its handshake
    /// began): kept for the transport, as the first thing it receives.
    pub fn heard_netcade(&self) -> bool {
        !self.early.is_empty()
    }

    /// The chosen path as a transport over `inner` (the socket stepped so
    /// far); call once [`IceConnector::step`] returned a path.
    pub fn into_transport<T, C>(self, inner: T, clock: C) -> IceTransport<T, C>
    where
        T: Transport<Address = SocketAddr>,
        C: MicrosClock,
    {
        let path = self
            .path
            .expect("into_transport is called once a path was chosen");
        let relayed_locally = self.selected.as_ref().is_some_and(|pair| {
            pair.candidate_pair().local.candidate_type == CandidateType::Relayed
        });
        IceTransport::new(
            inner,
            clock,
            self.agent,
            (self.stream_id, self.component_id),
            self.local,
            path,
            relayed_locally,
            self.early,
            self.channel,
        )
    }

    fn read_signals<S: SignalChannel + ?Sized>(&mut self, signal: &mut S) -> Result<(), IceError> {
        for _ in 0..SIGNALS_PER_STEP {
            let Some(text) = signal.try_receive()? else {
                break;
            };
            match IceSignal::decode(&text)? {
                Some(IceSignal::Credentials { ufrag, password }) => {
                    self.stream()
                        .set_remote_credentials(Credentials::new(ufrag, password));
                    self.remote_credentials_known = true;
                    for candidate in std::mem::take(&mut self.waiting_candidates) {
                        self.stream().add_remote_candidate(candidate);
                    }
                }
                Some(IceSignal::Candidate(sdp)) => self.add_remote_candidate(&sdp)?,
                Some(IceSignal::Relay {
                    address,
                    round_trip_ms,
                    name,
                }) if self.remote_relays.len() < MAX_REMOTE_CANDIDATES => {
                    let label = RelayLabel {
                        name,
                        round_trip_ms,
                    };
                    self.remote_relays.insert(address, label);
                }
                Some(IceSignal::End) => {
                    self.remote_ended = true;
                    self.stream().end_of_remote_candidates();
                }
                Some(IceSignal::Relay { .. }) | None => {}
            }
        }
        Ok(())
    }

    fn add_remote_candidate(&mut self, sdp: &str) -> Result<(), IceError> {
        let candidate: Candidate = sdp.parse().map_err(|_| {
            IceError::BadSignal(super::SignalParseError::new(sdp, "not an ICE candidate"))
        })?;
        // One component, UDP only: anything else has no pair here.
        if candidate.transport_type != TransportType::Udp
            || candidate.component_id != self.component_id
            || self.remote_candidates >= MAX_REMOTE_CANDIDATES
        {
            return Ok(());
        }
        self.remote_candidates += 1;
        if candidate.candidate_type == CandidateType::Host {
            self.remote_hosts.insert(candidate.address);
        }
        if candidate.candidate_type == CandidateType::ServerReflexive
            && candidate.foundation == MAPPED_FOUNDATION
        {
            self.remote_mapped.insert(candidate.address);
        }
        if self.remote_credentials_known {
            self.stream().add_remote_candidate(candidate);
        } else {
            self.waiting_candidates.push(candidate);
        }
        Ok(())
    }

    fn read_datagrams<T>(&mut self, transport: &mut T, now_us: u64)
    where
        T: Transport<Address = SocketAddr> + ?Sized,
    {
        let now = instant(now_us);
        for _ in 0..DATAGRAMS_PER_STEP {
            let Some(from) = transport.receive(&mut self.buffer) else {
                break;
            };
            if let Some((sent_us, best)) = self.relay_round_trips.get_mut(&from) {
                if let Some(sent_us) = sent_us.take() {
                    let sample = Duration::from_micros(now_us.saturating_sub(sent_us));
                    *best = Some(best.map_or(sample, |best| best.min(sample)));
                }
            }
            if super::is_netcade_datagram(&self.buffer) {
                // The opponent found the path first and began the handshake.
                self.early.push(Some(from), &self.buffer);
                continue;
            }
            self.note_nominating_check(from);
            if let Some(channel) = &mut self.channel {
                if let Some(data) = channel.unwrap(from, &self.buffer) {
                    if super::is_netcade_datagram(data) {
                        self.early.push(None, data);
                        continue;
                    }
                    self.buffer = channel.data_indication(data);
                } else if channel.handle_response(from, &self.buffer, now_us) {
                    continue;
                }
            }
            let (stream_id, component_id, local) = (self.stream_id, self.component_id, self.local);
            let mut stream = self
                .agent
                .mut_stream(stream_id)
                .expect("the connector's stream");
            let datagram =
                stun_proto::agent::Transmit::new(&self.buffer[..], TransportType::Udp, from, local);
            let reply = stream.handle_incoming_data(component_id, datagram, now);
            if let Some(data) = &reply.data {
                self.early.push(None, data.as_ref());
            }
            if reply.have_more_data {
                while let Some(received) = stream.poll_recv() {
                    self.early.push(None, &received.data);
                }
            }
        }
    }

    fn poll_agent<S: SignalChannel + ?Sized>(
        &mut self,
        now_us: u64,
        signal: &mut S,
    ) -> Result<(), IceError> {
        let now = instant(now_us);
        // Each event is handled once; the bound only guards against a loop.
        for _ in 0..1024 {
            match self.agent.poll(now) {
                AgentPoll::WaitUntil(_) | AgentPoll::Closed => break,
                AgentPoll::AllocateSocket(socket) => {
                    // Only TCP candidates ask for sockets; netcade has none.
                    let refused = Err(stun_proto::agent::StunError::ResourceNotFound);
                    self.stream().allocated_socket(
                        socket.component_id,
                        socket.transport,
                        socket.from,
                        socket.to,
                        refused,
                        now,
                    );
                }
                AgentPoll::RemoveSocket(_) => {}
                AgentPoll::SelectedPair(pair) => {
                    let chosen = *pair.selected;
                    // rice-proto reports the pair but leaves storing it (what
                    // sending through the relay reads) to the caller.
                    let component_id = self.component_id;
                    let mut stream = self.stream();
                    if let Some(mut component) = stream.mut_component(component_id) {
                        let _ = component.set_selected_pair(chosen.candidate_pair().clone());
                    }
                    self.path = Some(self.describe(&chosen, now_us));
                    let same_peer = self.channel.as_ref().is_some_and(|channel| {
                        channel.peer() == chosen.candidate_pair().remote.address
                    });
                    if !same_peer {
                        self.channel = self.channel_for(&chosen);
                    }
                    self.selected = Some(chosen);
                }
                AgentPoll::ComponentStateChange(change) => {
                    self.failed = change.state == ComponentConnectionState::Failed;
                }
                AgentPoll::GatheredCandidate(gathered) => {
                    self.gathered(gathered.gathered, now_us, signal)?;
                }
                AgentPoll::GatheringComplete(_) => self.gathering_done = true,
            }
        }
        Ok(())
    }

    fn gathered<S: SignalChannel + ?Sized>(
        &mut self,
        gathered: GatheredCandidate,
        now_us: u64,
        signal: &mut S,
    ) -> Result<(), IceError> {
        if gathered.candidate.candidate_type == CandidateType::Relayed {
            let server = gathered.turn_agent.as_ref().map(|turn| turn.remote_addr());
            let name = self
                .config
                .relays
                .iter()
                .find(|relay| Some(relay.address) == server)
                .map_or_else(|| "relay".to_owned(), |relay| relay.name.clone());
            // Measured on the requests allocating it; without a sample, the
            // whole allocation's two round trips (a challenge, the request).
            let measured = server.and_then(|server| self.relay_round_trips.get(&server)?.1);
            let round_trip = measured.unwrap_or_else(|| {
                Duration::from_micros(now_us.saturating_sub(self.started_us)) / 2
            });
            self.held_relays.push(HeldRelay {
                gathered,
                name,
                round_trip,
            });
            return Ok(());
        }
        if self.config.policy == PathPolicy::RelayOnly {
            return Ok(());
        }
        self.offer(gathered, signal)
    }

    /// Pairs a gathered candidate and tells the opponent about it.
    fn offer<S: SignalChannel + ?Sized>(
        &mut self,
        gathered: GatheredCandidate,
        signal: &mut S,
    ) -> Result<(), IceError> {
        let sdp = gathered.candidate.to_sdp_string();
        self.stream().add_local_gathered_candidate(gathered);
        signal.send(&IceSignal::Candidate(sdp).encode())?;
        Ok(())
    }

    /// When the grace period is over, offers the nearest relay gathered.
    fn offer_relay_when_due<S: SignalChannel + ?Sized>(
        &mut self,
        now_us: u64,
        signal: &mut S,
    ) -> Result<(), IceError> {
        if self.offered_relay.is_some() || self.held_relays.is_empty() || !self.grace_over(now_us) {
            return Ok(());
        }
        let nearest = (0..self.held_relays.len())
            .min_by_key(|&index| self.held_relays[index].round_trip)
            .expect("held relays are not empty");
        let relay = self.held_relays.swap_remove(nearest);
        self.held_relays.clear();
        self.offered_relay_server = relay
            .gathered
            .turn_agent
            .as_ref()
            .map(|turn| turn.remote_addr());
        let address = relay.gathered.candidate.address;
        let label = RelayLabel {
            name: relay.name,
            round_trip_ms: whole_ms(relay.round_trip),
        };
        signal.send(
            &IceSignal::Relay {
                address,
                round_trip_ms: label.round_trip_ms,
                name: label.name.clone(),
            }
            .encode(),
        )?;
        self.offer(relay.gathered, signal)?;
        self.offered_relay = Some((address, label));
        Ok(())
    }

    fn end_candidates_when_done<S: SignalChannel + ?Sized>(
        &mut self,
        now_us: u64,
        signal: &mut S,
    ) -> Result<(), IceError> {
        let relays_settled = self.config.relays.is_empty()
            || self.offered_relay.is_some()
            || self.grace_over(now_us);
        if self.local_ended || !self.gathering_done || !relays_settled {
            return Ok(());
        }
        if self.offered_relay.is_none() && !self.held_relays.is_empty() {
            return Ok(());
        }
        self.local_ended = true;
        self.stream().end_of_local_candidates();
        signal.send(&IceSignal::End.encode())?;
        Ok(())
    }

    fn grace_over(&self, now_us: u64) -> bool {
        let grace = match self.config.policy {
            PathPolicy::Any => self.config.relay_grace,
            PathPolicy::RelayOnly => Duration::ZERO,
        };
        Duration::from_micros(now_us.saturating_sub(self.started_us)) >= grace
    }

    fn flush<T>(&mut self, transport: &mut T, now_us: u64)
    where
        T: Transport<Address = SocketAddr> + ?Sized,
    {
        let now = instant(now_us);
        while let Some(outgoing) = self.agent.poll_transmit(now) {
            let to = outgoing.transmit.to;
            if self.config.relays.iter().any(|relay| relay.address == to) {
                self.relay_round_trips.entry(to).or_default().0 = Some(now_us);
            }
            self.note_accepted_nomination(to, &outgoing.transmit.data, now_us);
            transport.send(to, &outgoing.transmit.data);
        }
        if let Some(channel) = &mut self.channel {
            if let Some(request) = channel.poll_transmit(now_us) {
                transport.send(channel.server(), &request);
            }
        }
    }

    /// A channel through the relay when the chosen pair leaves from this
    /// side's relayed candidate.
    fn channel_for(&self, chosen: &SelectedPair) -> Option<TurnChannel> {
        let pair = chosen.candidate_pair();
        if pair.local.candidate_type != CandidateType::Relayed {
            return None;
        }
        let server = self.offered_relay_server?;
        let relay = self
            .config
            .relays
            .iter()
            .find(|relay| relay.address == server)?;
        Some(TurnChannel::new(
            server,
            pair.remote.address,
            &relay.username,
            &relay.password,
        ))
    }

    /// Remembers a nominating check from the opponent, read in `buffer`
    /// as it came from `from` straight to this socket.
    fn note_nominating_check(&mut self, from: SocketAddr) {
        if !self.controlled || self.path.is_some() {
            return;
        }
        let Some(check) = stun(&self.buffer) else {
            return;
        };
        if check.class == StunClass::Request && check.binding && check.use_candidate {
            if self.nominating_checks.len() >= NOMINATIONS_KEPT {
                self.nominating_checks.pop_front();
            }
            self.nominating_checks.push_back((check.transaction, from));
        }
    }

    /// Notes the agent's success answer to a nominating check: the agent
    /// verified it (the opponent knows our password), and the opponent
    /// nominates only a pair whose checks it saw succeed both ways.
    fn note_accepted_nomination(&mut self, to: SocketAddr, datagram: &[u8], now_us: u64) {
        if self.accepted_nomination.is_some() || self.nominating_checks.is_empty() {
            return;
        }
        let Some(answer) = stun(datagram) else {
            return;
        };
        let answered = |&(transaction, from): &([u8; 12], SocketAddr)| {
            transaction == answer.transaction && from == to
        };
        if answer.class == StunClass::Success
            && answer.binding
            && self.nominating_checks.iter().any(answered)
        {
            self.accepted_nomination = Some((to, now_us));
        }
    }

    /// When the agent has not selected the pair the opponent nominated
    /// within [`NOMINATION_GRACE_US`] of our accepting it, takes that pair
    /// as the path: the opponent sends over it already.
    fn follow_accepted_nomination(&mut self, now_us: u64) {
        let Some((remote, accepted_us)) = self.accepted_nomination else {
            return;
        };
        if self.path.is_some() || now_us.saturating_sub(accepted_us) < NOMINATION_GRACE_US {
            return;
        }
        tracing::info!("following the opponent's nomination of {remote}, which rice-proto dropped");
        self.path = Some(self.describe_path(CandidateType::Host, remote, None, now_us));
    }

    fn describe(&self, chosen: &SelectedPair, now_us: u64) -> IcePath {
        let pair = chosen.candidate_pair();
        let (local, remote) = (&pair.local, &pair.remote);
        let remote_type = Some(remote.candidate_type);
        self.describe_path(local.candidate_type, remote.address, remote_type, now_us)
    }

    /// The path from a local candidate of type `local` to `remote`, of
    /// type `remote_type` when the agent says.
    fn describe_path(
        &self,
        local: CandidateType,
        remote: SocketAddr,
        remote_type: Option<CandidateType>,
        now_us: u64,
    ) -> IcePath {
        let remote_relayed = match remote_type {
            Some(kind) => kind == CandidateType::Relayed,
            None => self.remote_relays.contains_key(&remote),
        };
        let remote_host =
            remote_type == Some(CandidateType::Host) || self.remote_hosts.contains(&remote);
        let relay = if local == CandidateType::Relayed {
            self.offered_relay.as_ref().map(|(_, label)| label.clone())
        } else if remote_relayed {
            let label = self.remote_relays.get(&remote).cloned();
            Some(label.unwrap_or(RelayLabel {
                name: "the opponent's relay".to_owned(),
                round_trip_ms: 0,
            }))
        } else {
            None
        };
        let kind = match relay {
            Some(label) => PathKind::Relay {
                name: label.name,
                round_trip_ms: label.round_trip_ms,
            },
            None if local == CandidateType::Host && remote_host => PathKind::Direct,
            None if self.remote_mapped.contains(&remote) => PathKind::PortMapped,
            None => PathKind::HolePunched,
        };
        IcePath {
            kind,
            remote,
            time_to_connect: Duration::from_micros(now_us.saturating_sub(self.started_us)),
            port_mapping: None,
        }
    }

    fn stream(&mut self) -> rice_proto::stream::StreamMut<'_> {
        self.agent
            .mut_stream(self.stream_id)
            .expect("the connector's stream")
    }
}

/// Starts gathering: the host candidate at `local`, a server-reflexive one
/// from each STUN server (none under a relay-only policy), a relayed one
/// from each TURN server, all over the one socket.
fn gather(
    component: &mut rice_proto::component::ComponentMut<'_>,
    local: SocketAddr,
    config: &IceConfig,
) {
    let stun_servers: Vec<_> = match config.policy {
        PathPolicy::Any => config
            .stun_servers
            .iter()
            .map(|server| (TransportType::Udp, *server))
            .collect(),
        PathPolicy::RelayOnly => Vec::new(),
    };
    let turn_configs: Vec<TurnConfig> = config
        .relays
        .iter()
        .map(|relay| {
            let credentials = TurnCredentials::new(&relay.username, &relay.password);
            TurnConfig::new(TransportType::Udp, relay.address, credentials)
        })
        .collect();
    let turn_servers: Vec<_> = turn_configs.iter().map(|turn| (local, turn)).collect();
    // Gathering only fails when asked twice; a fresh component is not.
    let _ =
        component.gather_candidates(&[(TransportType::Udp, local)], &stun_servers, &turn_servers);
}

/// The host candidate of a loopback socket: rice-proto gathers none, but
/// two players on one machine should meet directly, not through a relay.
fn loopback_host_candidate(local: SocketAddr, component_id: usize) -> Candidate {
    own_candidate(CandidateType::Host, "lo", local, local, component_id).build()
}

/// The foundation of a port-mapping candidate, which tells the opponent
/// what it is.
const MAPPED_FOUNDATION: &str = "map";

/// The candidate of a port the router forwards to this socket: reflexive
/// (it is this socket seen from outside), open to anyone.
fn mapped_candidate(public: SocketAddr, local: SocketAddr, component_id: usize) -> Candidate {
    own_candidate(
        CandidateType::ServerReflexive,
        MAPPED_FOUNDATION,
        public,
        local,
        component_id,
    )
    .related_address(local)
    .build()
}

/// A candidate of this socket that rice-proto did not gather itself.
fn own_candidate(
    kind: CandidateType,
    foundation: &str,
    address: SocketAddr,
    local: SocketAddr,
    component_id: usize,
) -> rice_proto::candidate::CandidateBuilder {
    let priority = Candidate::calculate_priority(kind, TransportType::Udp, None, 0, component_id);
    Candidate::builder(component_id, kind, TransportType::Udp, foundation, address)
        .priority(priority)
        .base_address(local)
}
