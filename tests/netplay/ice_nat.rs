//! ICE through simulated NATs: two players behind modelled NAT boxes find
//! each other through an in-process STUN/TURN server (turn-server-proto, the
//! sans-IO server from rice-proto's authors), on the seeded simulated
//! network, with the simulated clock driving every check. Which path they
//! choose depends only on the NATs, as players would see it.

use netcade::net::ice::{
    random_credentials, IceConfig, IceConnector, IceError, IcePath, IceRole, IceTransport,
    PathKind, PathPolicy, RelayServer,
};
use netcade::net::nat_sim::{NatBehaviour, NatId, NatNetwork, NatSocket};
use netcade::net::sim::{LinkConditions, SimNet};
use netcade::net::{ManualClock, Transport};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;
use support::ice::MemorySignal;
use turn_server_proto::api::{TurnServerApi, TurnServerPollRet};
use turn_server_proto::server::TurnServer;
use turn_server_proto::stun::Instant;
use turn_server_proto::types::TransportType;

const SERVER: &str = "198.51.100.1:3478";
const USER: &str = "player";
const PASSWORD: &str = "test-secret";

fn at(text: &str) -> SocketAddr {
    text.parse().unwrap()
}

fn instant(now_ms: u64) -> Instant {
    Instant::from_nanos(now_ms as i64 * 1_000_000)
}

/// A STUN and TURN server on the simulated network's public side.
struct SimRelayServer {
    server: TurnServer,
    listen: SocketAddr,
    relayed: Vec<SocketAddr>,
    /// How long it takes to answer (a slow or far relay).
    answer_after_ms: u64,
    answers: VecDeque<(u64, SocketAddr, SocketAddr, Vec<u8>)>,
}

impl SimRelayServer {
    fn new(listen: SocketAddr, answer_after_ms: u64) -> Self {
        let mut server = TurnServer::new(TransportType::Udp, listen, "netcade".to_owned());
        server.add_user(USER.to_owned(), PASSWORD.to_owned());
        SimRelayServer {
            server,
            listen,
            relayed: Vec::new(),
            answer_after_ms,
            answers: VecDeque::new(),
        }
    }

    fn answer(&mut self, now_ms: u64, from: SocketAddr, to: SocketAddr, bytes: Vec<u8>) {
        self.answers
            .push_back((now_ms + self.answer_after_ms, from, to, bytes));
    }

    fn send_due_answers(&mut self, network: &RefCell<NatNetwork>, now_ms: u64) {
        while self
            .answers
            .front()
            .is_some_and(|answer| answer.0 <= now_ms)
        {
            let (_, from, to, bytes) = self.answers.pop_front().unwrap();
            network.borrow_mut().send(from, to, &bytes);
        }
    }

    /// Answers what arrived and sends what the server asks.
    fn pump(&mut self, network: &RefCell<NatNetwork>, now_ms: u64) {
        let now = instant(now_ms);
        for socket in std::iter::once(self.listen).chain(self.relayed.clone()) {
            loop {
                let next = network.borrow_mut().receive(socket);
                let Some((from, bytes)) = next else { break };
                let datagram = turn_server_proto::stun::agent::Transmit::new(
                    &bytes[..],
                    TransportType::Udp,
                    from,
                    socket,
                );
                if let Some(reply) = self.server.recv(datagram, now) {
                    let reply = reply.build();
                    self.answer(now_ms, reply.from, reply.to, reply.data);
                }
            }
        }
        loop {
            match self.server.poll(now) {
                TurnServerPollRet::AllocateSocket {
                    transport,
                    listen_addr,
                    client_addr,
                    allocation_transport,
                    family,
                } => {
                    let relayed =
                        SocketAddr::new(self.listen.ip(), 50_000 + self.relayed.len() as u16);
                    self.relayed.push(relayed);
                    self.server.allocated_socket(
                        transport,
                        listen_addr,
                        client_addr,
                        allocation_transport,
                        family,
                        Ok(relayed),
                        now,
                    );
                }
                TurnServerPollRet::WaitUntil(_) => break,
                _ => {}
            }
        }
        while let Some(outgoing) = self.server.poll_transmit(now) {
            self.answer(now_ms, outgoing.from, outgoing.to, outgoing.data);
        }
        self.send_due_answers(network, now_ms);
    }
}

/// One player: a socket behind its NAT and its connection attempt.
struct Player {
    socket: NatSocket,
    signal: MemorySignal,
    connector: Option<IceConnector>,
    outcome: Option<Result<IcePath, IceError>>,
}

struct Lab {
    network: Rc<RefCell<NatNetwork>>,
    servers: Vec<SimRelayServer>,
    /// The players' NAT boxes.
    homes: Vec<NatId>,
    /// Datagrams a stranger sends (from, to, bytes) once the paths are chosen.
    junk: Vec<(SocketAddr, SocketAddr, Vec<u8>)>,
}

impl Lab {
    /// Public servers; a 15 ms one-way delay between every two addresses.
    fn new(seed: u64) -> Lab {
        let mut net = SimNet::new(seed);
        net.set_default_conditions(LinkConditions::latency(15));
        Lab {
            network: Rc::new(RefCell::new(NatNetwork::new(net))),
            servers: vec![SimRelayServer::new(at(SERVER), 0)],
            homes: Vec::new(),
            junk: Vec::new(),
        }
    }

    fn behind_nats(home_a: NatBehaviour, home_b: NatBehaviour) -> (Lab, SocketAddr, SocketAddr) {
        Lab::behind_nats_on(Lab::new(7), home_a, home_b)
    }

    /// Two homes behind NATs on `lab`'s network.
    fn behind_nats_on(
        mut lab: Lab,
        home_a: NatBehaviour,
        home_b: NatBehaviour,
    ) -> (Lab, SocketAddr, SocketAddr) {
        {
            let mut network = lab.network.borrow_mut();
            let nat_a = network.add_nat("203.0.113.1".parse().unwrap(), home_a);
            network.place_behind(nat_a, "10.0.0.2".parse().unwrap());
            let nat_b = network.add_nat("203.0.113.2".parse().unwrap(), home_b);
            network.place_behind(nat_b, "10.1.0.2".parse().unwrap());
            lab.homes = vec![nat_a, nat_b];
        }
        (lab, at("10.0.0.2:7000"), at("10.1.0.2:7000"))
    }

    fn player(
        &self,
        address: SocketAddr,
        signal: MemorySignal,
        role: IceRole,
        config: IceConfig,
    ) -> Player {
        Player {
            socket: NatSocket::new(self.network.clone(), address),
            signal,
            connector: Some(IceConnector::new(
                address,
                config,
                role,
                random_credentials(),
                0,
            )),
            outcome: None,
        }
    }

    /// Runs both connection attempts on the simulated clock (1 ms steps)
    /// until each has a path or an error; returns the time reached.
    fn connect(&mut self, a: &mut Player, b: &mut Player) -> u64 {
        for now_ms in 0..60_000 {
            self.network.borrow_mut().deliver(now_ms);
            for server in &mut self.servers {
                server.pump(&self.network, now_ms);
            }
            for player in [&mut *a, &mut *b] {
                // A side that found its path keeps answering checks, as its
                // transport would.
                let connector = player.connector.as_mut().unwrap();
                match connector.step(now_ms * 1000, &mut player.socket, &mut player.signal) {
                    Ok(None) => {}
                    Ok(Some(path)) => {
                        player.outcome.get_or_insert(Ok(path));
                    }
                    Err(error) => {
                        player.outcome.get_or_insert(Err(error));
                    }
                }
            }
            if a.outcome.is_some() && b.outcome.is_some() {
                return now_ms;
            }
        }
        panic!("neither a path nor an error in a simulated minute");
    }

    /// Sends one netcade datagram each way over the chosen paths and
    /// returns what arrived, with the sender each side saw.
    fn exchange(
        &mut self,
        mut now_ms: u64,
        a: &mut IceTransport<NatSocket, ManualClock>,
        b: &mut IceTransport<NatSocket, ManualClock>,
        clock: &ManualClock,
    ) -> Vec<(SocketAddr, Vec<u8>)> {
        for (from, to, bytes) in &self.junk {
            self.network.borrow_mut().send(*from, *to, bytes);
        }
        a.send(a.remote(), b"nc from a");
        b.send(b.remote(), b"nc from b");
        let mut arrived = Vec::new();
        let mut buffer = Vec::new();
        for _ in 0..500 {
            now_ms += 1;
            clock.set(now_ms * 1000);
            self.network.borrow_mut().deliver(now_ms);
            for server in &mut self.servers {
                server.pump(&self.network, now_ms);
            }
            for transport in [&mut *a, &mut *b] {
                while let Some(from) = transport.receive(&mut buffer) {
                    arrived.push((from, buffer.clone()));
                }
            }
        }
        arrived
    }
}

fn config(policy: PathPolicy) -> IceConfig {
    config_with_relays(policy, &[("sim-west", at(SERVER))])
}

fn config_with_relays(policy: PathPolicy, relays: &[(&str, SocketAddr)]) -> IceConfig {
    IceConfig {
        stun_servers: vec![at(SERVER)],
        relays: relays
            .iter()
            .map(|&(name, address)| RelayServer {
                name: name.to_owned(),
                address,
                username: USER.to_owned(),
                password: PASSWORD.to_owned(),
            })
            .collect(),
        policy,
        ..IceConfig::default()
    }
}

/// Connects a host at `a` and a joiner at `b`, checks that a datagram
/// crosses each way on the chosen path, and returns both sides' paths.
fn connect_and_play(
    lab: Lab,
    a: SocketAddr,
    b: SocketAddr,
    policy_a: PathPolicy,
) -> (IcePath, IcePath) {
    connect_and_play_with(lab, (a, config(policy_a)), (b, config(PathPolicy::Any)))
}

fn connect_and_play_with(
    mut lab: Lab,
    (a, config_a): (SocketAddr, IceConfig),
    (b, config_b): (SocketAddr, IceConfig),
) -> (IcePath, IcePath) {
    let (signal_a, signal_b) = MemorySignal::pair();
    let mut host = lab.player(a, signal_a, IceRole::Controlling, config_a);
    let mut joiner = lab.player(b, signal_b, IceRole::Controlled, config_b);
    let now_ms = lab.connect(&mut host, &mut joiner);
    let host_path = host.outcome.take().unwrap().expect("the host finds a path");
    let joiner_path = joiner
        .outcome
        .take()
        .unwrap()
        .expect("the joiner finds a path");
    // docs/measurements.md: `cargo test --test netplay -- --nocapture --test-threads 1 ice_nat::`.
    println!(
        "{}: host {}; joiner {}",
        std::thread::current().name().unwrap_or("test"),
        host_path.describe(),
        joiner_path.describe()
    );
    let clock = ManualClock::new();
    clock.set(now_ms * 1000);
    let mut host_link = host
        .connector
        .take()
        .unwrap()
        .into_transport(host.socket, clock.clone());
    let mut joiner_link = joiner
        .connector
        .take()
        .unwrap()
        .into_transport(joiner.socket, clock.clone());
    let arrived = lab.exchange(now_ms, &mut host_link, &mut joiner_link, &clock);
    assert_eq!(
        arrived.len(),
        2,
        "only the two datagrams arrive: {arrived:?}"
    );
    assert!(
        arrived.contains(&(joiner_path.remote, b"nc from a".to_vec())),
        "the host's datagram reaches the joiner from the address it connected to: {arrived:?}"
    );
    assert!(
        arrived.contains(&(host_path.remote, b"nc from b".to_vec())),
        "the joiner's datagram reaches the host from the address it connected to: {arrived:?}"
    );
    (host_path, joiner_path)
}

#[test]
fn players_behind_two_cone_nats_punch_a_hole_without_waiting_for_the_relay() {
    let (lab, a, b) = Lab::behind_nats(NatBehaviour::CONE, NatBehaviour::CONE);
    let (host, joiner) = connect_and_play(lab, a, b, PathPolicy::Any);
    assert_eq!(host.kind, PathKind::HolePunched);
    assert_eq!(joiner.kind, PathKind::HolePunched);
    assert!(
        host.time_to_connect < Duration::from_millis(1500),
        "{host:?}"
    );
}

#[test]
fn a_joiner_behind_a_cone_nat_follows_the_hosts_nomination_whatever_the_timing() {
    // On some orders of checks and answers, rice-proto drops the host's
    // nomination on a translated joiner; the joiner follows it itself.
    let jittery = LinkConditions {
        jitter_ms: 14,
        ..LinkConditions::latency(15)
    };
    for seed in 0..24 {
        let lab = Lab::new(seed);
        lab.network
            .borrow_mut()
            .net()
            .set_default_conditions(jittery);
        let (lab, a, b) = Lab::behind_nats_on(lab, NatBehaviour::CONE, NatBehaviour::CONE);
        let (host, joiner) = connect_and_play(lab, a, b, PathPolicy::Any);
        assert_eq!(host.kind, PathKind::HolePunched, "seed {seed}");
        assert_eq!(joiner.kind, PathKind::HolePunched, "seed {seed}");
        assert!(
            joiner.time_to_connect < Duration::from_secs(3),
            "seed {seed}: {joiner:?}"
        );
    }
}

#[test]
fn players_behind_two_symmetric_nats_meet_through_the_relay_after_the_grace_period() {
    let (lab, a, b) = Lab::behind_nats(NatBehaviour::SYMMETRIC, NatBehaviour::SYMMETRIC);
    let (host, joiner) = connect_and_play(lab, a, b, PathPolicy::Any);
    for path in [&host, &joiner] {
        assert!(
            matches!(&path.kind, PathKind::Relay { name, round_trip_ms: 30 } if name == "sim-west"),
            "{path:?}"
        );
        assert!(
            path.time_to_connect >= Duration::from_millis(1500),
            "{path:?}"
        );
    }
    assert!(
        host.kind.to_string().starts_with("relay sim-west +"),
        "{}",
        host.kind
    );
}

#[test]
fn two_players_behind_one_nat_without_hairpinning_connect_by_their_host_addresses() {
    let lab = Lab::new(11);
    {
        let mut network = lab.network.borrow_mut();
        let home = network.add_nat(
            "203.0.113.1".parse().unwrap(),
            NatBehaviour::CONE.without_hairpinning(),
        );
        network.place_behind(home, "10.0.0.2".parse().unwrap());
        network.place_behind(home, "10.0.0.3".parse().unwrap());
    }
    lab.network.borrow_mut().net().set_link_both_ways(
        at("10.0.0.2:7000"),
        at("10.0.0.3:7000"),
        LinkConditions::latency(1),
    );
    let (host, joiner) = connect_and_play(
        lab,
        at("10.0.0.2:7000"),
        at("10.0.0.3:7000"),
        PathPolicy::Any,
    );
    assert_eq!(host.kind, PathKind::Direct);
    assert_eq!(joiner.kind, PathKind::Direct);
    assert_eq!(host.remote, at("10.0.0.3:7000"));
}

#[test]
fn of_two_relays_the_one_with_the_shorter_round_trip_carries_the_match() {
    let (mut lab, a, b) = Lab::behind_nats(NatBehaviour::SYMMETRIC, NatBehaviour::SYMMETRIC);
    let far = at("192.0.2.50:3478");
    lab.servers.push(SimRelayServer::new(far, 200));
    // The far relay is listed first: order does not decide, round trips do.
    let relays = [("far", far), ("near", at(SERVER))];
    let (host, joiner) = connect_and_play_with(
        lab,
        (a, config_with_relays(PathPolicy::Any, &relays)),
        (b, config_with_relays(PathPolicy::Any, &relays)),
    );
    for path in [host, joiner] {
        assert_eq!(path.kind.to_string(), "relay near +30 ms", "{path:?}");
    }
}

#[test]
fn a_port_mapping_gets_two_symmetric_nats_through_without_a_relay() {
    let (lab, a, b) = Lab::behind_nats(NatBehaviour::SYMMETRIC, NatBehaviour::SYMMETRIC);
    let mapped = lab.network.borrow_mut().forward_port(lab.homes[0], 6000, a);
    let no_relay = |mapped_address| IceConfig {
        relays: Vec::new(),
        mapped_address,
        ..config(PathPolicy::Any)
    };
    let (host, joiner) =
        connect_and_play_with(lab, (a, no_relay(Some(mapped))), (b, no_relay(None)));
    assert_eq!(host.kind, PathKind::HolePunched, "{host:?}");
    assert_eq!(
        joiner.remote, mapped,
        "the joiner reaches the mapped port: {joiner:?}"
    );
    assert_eq!(joiner.kind, PathKind::PortMapped, "and says so: {joiner:?}");
}

#[test]
fn junk_on_the_game_socket_is_ignored_and_the_path_keeps_carrying_the_match() {
    let (mut lab, a, b) = Lab::behind_nats(NatBehaviour::CONE, NatBehaviour::CONE);
    let stranger = at("10.1.0.9:5000");
    lab.network
        .borrow_mut()
        .place_behind(lab.homes[1], stranger.ip());
    // What looks like STUN (first byte 0-3), TURN ChannelData (64-79) and
    // a truncated STUN header, all to the joiner's socket on its LAN.
    for first in [0x00, 0x01, 0x03, 0x40, 0x4F] {
        let mut junk = vec![first; 64];
        junk[4..8].copy_from_slice(&[0x21, 0x12, 0xA4, 0x42]);
        lab.junk.push((stranger, b, junk));
    }
    lab.junk.push((stranger, b, vec![0x00, 0x01, 0x00]));
    connect_and_play(lab, a, b, PathPolicy::Any);
}

#[test]
fn a_relay_only_player_is_relayed_even_where_a_hole_could_be_punched() {
    let (lab, a, b) = Lab::behind_nats(NatBehaviour::CONE, NatBehaviour::CONE);
    let (host, joiner) = connect_and_play(lab, a, b, PathPolicy::RelayOnly);
    assert!(matches!(host.kind, PathKind::Relay { .. }), "{host:?}");
    assert!(matches!(joiner.kind, PathKind::Relay { .. }), "{joiner:?}");
}

#[test]
fn symmetric_nats_and_no_relay_fail_with_what_to_check() {
    let (mut lab, a, b) = Lab::behind_nats(NatBehaviour::SYMMETRIC, NatBehaviour::SYMMETRIC);
    let (signal_a, signal_b) = MemorySignal::pair();
    let no_relay = IceConfig {
        relays: Vec::new(),
        give_up_after: Duration::from_secs(5),
        ..config(PathPolicy::Any)
    };
    let mut host = lab.player(a, signal_a, IceRole::Controlling, no_relay.clone());
    let mut joiner = lab.player(b, signal_b, IceRole::Controlled, no_relay);
    lab.connect(&mut host, &mut joiner);
    let error = host.outcome.unwrap().expect_err("no path exists");
    assert!(matches!(error, IceError::NoRoute { .. }));
    assert!(
        error.to_string().contains("check that UDP is allowed"),
        "{error}"
    );
}
