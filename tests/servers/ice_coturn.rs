//! ICE with a real relay: coturn on 127.0.0.1 (static test credentials, a
//! temporary database), two netcade sockets on loopback, the candidates
//! exchanged in memory. A player whose policy is relay-only is relayed, the
//! match played over the path stays in sync, and the relay's cost per
//! datagram is reported.
//!
//! `cargo test --test servers -- --nocapture ice_coturn::` prints the figures in
//! docs/measurements.md ("Connecting through NATs").

use netcade::engine::matches::machine::NetplayMachine;
use netcade::engine::sinks::compare_checksum_logs;
use netcade::net::ice::{
    random_credentials, IceConfig, IceConnector, IcePath, IceRole, IceTransport, PathKind,
    PathPolicy, RelayServer,
};
use netcade::net::udp::UdpTransport;
use netcade::net::{MicrosClock, MonotonicClock, Transport};
use std::time::{Duration, Instant};
use support::coturn::{start_coturn, Coturn};
use support::ice::{duel_player, MemorySignal};
use support::netplay::MachineNotes;

const FRAMES: u32 = 600;

type Link = IceTransport<UdpTransport, MonotonicClock>;

fn config(coturn: &Coturn, policy: PathPolicy) -> IceConfig {
    IceConfig {
        stun_servers: vec![coturn.address],
        relays: vec![RelayServer {
            name: "loopback".to_owned(),
            address: coturn.address,
            username: coturn.username.to_owned(),
            password: coturn.password.to_owned(),
        }],
        policy,
        ..IceConfig::default()
    }
}

/// Connects a host and a joiner on loopback sockets, both in this thread.
fn connect(coturn: &Coturn, host_policy: PathPolicy) -> [(Link, IcePath); 2] {
    let (signal_a, signal_b) = MemorySignal::pair();
    let mut clock = MonotonicClock::new();
    let mut sides = [
        (IceRole::Controlling, host_policy, signal_a),
        (IceRole::Controlled, PathPolicy::Any, signal_b),
    ]
    .map(|(role, policy, signal)| {
        let socket = UdpTransport::bind("127.0.0.1:0").unwrap();
        let local = socket.local_address().unwrap();
        let config = config(coturn, policy);
        let connector = IceConnector::new(local, config, role, random_credentials(), 0);
        (connector, socket, signal, None::<IcePath>)
    });
    while sides.iter().any(|side| side.3.is_none()) {
        let now_us = clock.now_us();
        for (connector, socket, signal, path) in sides.iter_mut() {
            // A side with a path keeps answering checks until both have one.
            if let Some(found) = connector.step(now_us, socket, signal).expect("a path") {
                path.get_or_insert(found);
            }
            socket.wait(Duration::from_millis(1));
        }
    }
    sides.map(|(connector, socket, _, path)| {
        let path = path.unwrap();
        (connector.into_transport(socket, clock), path)
    })
}

/// Plays `FRAMES` frames of Duel over the two links and asserts both
/// sides agree on every final frame. The match runs on the real clock,
/// waiting on a socket between passes: the relay is another process, and
/// a clock counting passes ran ahead of it whenever a loaded machine (two
/// relay tests at once) slowed it, until the session dropped the peer it
/// had not heard from in 5 "seconds" of passes.
fn play_in_sync(links: &mut [Link; 2]) {
    let peers = links.each_ref().map(|link| link.remote());
    let mut machines: Vec<_> = (0..2u8)
        .map(|me| duel_player(me, peers[me as usize], FRAMES))
        .collect();
    let mut hooks = MachineNotes::default();
    let mut clock = MonotonicClock::new();
    let mut finished_at = None;
    // Half a second beyond the last frame acknowledges the last inputs.
    while finished_at.is_none_or(|at: Instant| at.elapsed() < Duration::from_millis(500)) {
        let now_us = clock.now_us();
        assert!(now_us < 120_000_000, "the match stalled");
        for (machine, link) in machines.iter_mut().zip(links.iter_mut()) {
            NetplayMachine::tick(machine, now_us, 1.0, link, &mut hooks)
                .expect("the session advances over the path");
        }
        let done = machines
            .iter()
            .all(|machine| machine.current_frame() >= FRAMES);
        if done && finished_at.is_none() {
            finished_at = Some(Instant::now());
        }
        links[0].wait(Duration::from_millis(1));
    }
    let comparison = compare_checksum_logs(&machines[0].sink, &machines[1].sink);
    assert_eq!(comparison.first_difference, None, "{comparison:?}");
    assert!(comparison.compared >= FRAMES as usize - 2, "{comparison:?}");
}

#[test]
#[cfg_attr(not(netcade_server_turnserver), ignore = "needs turnserver on PATH")]
fn a_relay_only_host_plays_in_sync_through_coturn_and_reports_the_relays_bytes() {
    let Some(coturn) = start_coturn() else {
        return;
    };
    let [(host, host_path), (joiner, joiner_path)] = connect(&coturn, PathPolicy::RelayOnly);
    assert!(
        matches!(&host_path.kind, PathKind::Relay { name, .. } if name == "loopback"),
        "{host_path:?}"
    );
    assert!(
        matches!(&joiner_path.kind, PathKind::Relay { name, .. } if name == "loopback"),
        "the joiner reaches the host's relayed address, and names its relay: {joiner_path:?}"
    );
    let mut links = [host, joiner];
    play_in_sync(&mut links);
    let relayed = links[0].path_stats();
    let overhead = relayed.overhead_per_datagram();
    println!(
        "relay-only host via coturn on loopback: {host_path:?} / joiner {joiner_path:?}; \
         {} datagrams, {:.1} payload bytes and {overhead:.1} relay bytes per datagram",
        relayed.datagrams,
        relayed.payload_bytes as f64 / relayed.datagrams as f64,
    );
    // A channel is bound to the opponent: each datagram carries a 4-byte
    // ChannelData header, not a Send indication (20-byte header, peer
    // address, data attribute, padding: 36 bytes and more). The few sent
    // while the binding's round trip was under way went as indications.
    assert!(relayed.datagrams > u64::from(FRAMES) / 2);
    assert!(links[0].channel_bound(), "coturn binds the channel");
    assert!(
        (4.0..=4.2).contains(&overhead),
        "{overhead} bytes per datagram"
    );
    let received = relayed.received_overhead_per_datagram();
    assert!(
        (4.0..=4.2).contains(&received),
        "the opponent's datagrams come back as ChannelData: {received} bytes each"
    );
    assert_eq!(
        links[1].path_stats().overhead_per_datagram(),
        0.0,
        "the joiner sends straight to the relay"
    );
}

#[test]
#[cfg_attr(not(netcade_server_turnserver), ignore = "needs turnserver on PATH")]
fn players_on_one_machine_connect_directly_even_with_a_relay_configured() {
    let Some(coturn) = start_coturn() else {
        return;
    };
    let [(host, host_path), (joiner, joiner_path)] = connect(&coturn, PathPolicy::Any);
    println!("direct on loopback: {host_path:?} / joiner {joiner_path:?}");
    assert_eq!(host_path.kind, PathKind::Direct);
    assert_eq!(joiner_path.kind, PathKind::Direct);
    assert!(
        host_path.time_to_connect < Duration::from_millis(1500),
        "{host_path:?}"
    );
    play_in_sync(&mut [host, joiner]);
}

/// A relay-only host meets a peer that vanishes once the host's relay is
/// allocated, then a real joiner on the same socket: the vanished peer's
/// allocation (coturn keys allocations by the socket's 5-tuple) must not
/// leave the joiner's meeting without a relayed candidate.
#[test]
#[cfg_attr(not(netcade_server_turnserver), ignore = "needs turnserver on PATH")]
fn a_relay_only_host_meets_the_next_player_through_the_relay_after_one_vanished() {
    use netcade::net::ice::meetings::MeetingLimits;
    use netcade::net::ice::{MeetingOutcome, MeetingSocket};
    use std::collections::BTreeMap;
    let Some(coturn) = start_coturn() else {
        return;
    };
    let limits = MeetingLimits {
        max_meetings: 8,
        max_waiting: 8,
        connect_within: Duration::from_secs(16),
        handshake_within: Duration::from_secs(5),
    };
    let mut host_socket = UdpTransport::bind("127.0.0.1:0").unwrap();
    let host_local = host_socket.local_address().unwrap();
    let host_config = config(&coturn, PathPolicy::RelayOnly);
    let mut meetings = MeetingSocket::new(host_local, host_config, IceRole::Controlling, limits);
    let mut clock = MonotonicClock::new();
    let mut to_peers: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let deadline = |clock: &mut MonotonicClock| {
        assert!(clock.now_us() < 30_000_000, "the host never got that far");
    };
    // The ghost's meeting gets as far as offering the host's relayed candidate.
    meetings.offer("ghost", clock.now_us());
    while !to_peers
        .get("ghost")
        .is_some_and(|sent| sent.iter().any(|text| text.starts_with("ice-relay")))
    {
        deadline(&mut clock);
        let mut send = |peer: &&str, text: &str| {
            to_peers
                .entry(peer.to_string())
                .or_default()
                .push(text.to_owned());
            Ok(())
        };
        assert!(meetings
            .step(clock.now_us(), &mut host_socket, &mut send)
            .is_empty());
        host_socket.wait(Duration::from_millis(2));
    }
    meetings.end(&"ghost");
    // The joiner: its own socket, any path (the host offers only its relay).
    let mut joiner_socket = UdpTransport::bind("127.0.0.1:0").unwrap();
    let joiner_local = joiner_socket.local_address().unwrap();
    let mut joiner = IceConnector::new(
        joiner_local,
        config(&coturn, PathPolicy::Any),
        IceRole::Controlled,
        random_credentials(),
        clock.now_us(),
    );
    let (mut host_end, mut joiner_end) = MemorySignal::pair();
    meetings.offer("joiner", clock.now_us());
    let mut joiner_path = None;
    loop {
        deadline(&mut clock);
        let now_us = clock.now_us();
        while let Ok(Some(text)) = netcade::net::signal::SignalChannel::try_receive(&mut host_end) {
            meetings.deliver_signal(&"joiner", text);
        }
        let mut send = |peer: &&str, text: &str| {
            if *peer == "joiner" {
                netcade::net::signal::SignalChannel::send(&mut host_end, text)?;
            }
            Ok(())
        };
        let outcomes = meetings.step(now_us, &mut host_socket, &mut send);
        match outcomes.as_slice() {
            [] => {}
            [MeetingOutcome::Ready("joiner")] => break,
            other => panic!("the joiner's meeting ended: {other:?}"),
        }
        if let Some(path) = joiner
            .step(now_us, &mut joiner_socket, &mut joiner_end)
            .expect("the joiner finds the host's relayed address")
        {
            // Its handshake begins over the path it found.
            joiner_socket.send(path.remote, b"nc-hello");
            joiner_path.get_or_insert(path);
        }
        host_socket.wait(Duration::from_millis(1));
    }
    let path = joiner_path.expect("the joiner's path");
    assert!(matches!(path.kind, PathKind::Relay { .. }), "{path:?}");
}
