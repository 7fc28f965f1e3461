//! Two endpoints talking over the simulated network: handshake, inputs under bad
//! networks, blobs, silence, throttling and foreign datagrams.

use netcade::net::sim::{LinkConditions, SimNet};
use netcode::checksum::Checksum;
use netcode::input::Buttons;
use netcode::protocol::codec::{self, input_payload_len};
use netcode::protocol::*;
use netcode::rollback::Frame;

const HOST: u8 = 1;
const JOINER: u8 = 2;
const TOKEN: SessionToken = SessionToken(0x5EED_1234);

fn identity(slot: u8) -> Handshake {
    Handshake {
        core_name: "duel".into(),
        core_version: "1.0".into(),
        content_hash: 0xC0FFEE,
        local_slots: PlayerSlots::single(slot),
        settings: SessionSettings::default(),
        public_key: Some(LinkSecret::well_known().public_key()),
        ..Handshake::default()
    }
}

/// Pad for `player` at `frame`: changes every few frames, like a person.
fn pad(player: u8, frame: u32) -> Buttons {
    let mut x = ((frame / 5) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (player as u64) << 40;
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    Buttons::from_bits((x >> 40) as u16 & 0x0FFF)
}

struct Peer {
    endpoint: PeerEndpoint,
    events: Vec<Event>,
    next_frame: u32,
    sends_inputs: bool,
    /// The players whose inputs this peer adds each frame.
    players: Vec<u8>,
}

/// A host and a joiner over a simulated network, driven millisecond by
/// millisecond; each peer adds one frame of input and polls every 1/60 s.
struct Match {
    net: SimNet<u8>,
    host: Peer,
    joiner: Peer,
    now: u64,
    /// Input datagrams seen on the wire, by sender.
    input_datagrams: Vec<(u8, Vec<u8>)>,
    datagrams_sent_at: Vec<(u8, u64)>,
}

impl Match {
    fn new(seed: u64, conditions: LinkConditions) -> Match {
        Self::with(seed, conditions, identity(0), identity(1), |_| {})
    }

    fn with(
        seed: u64,
        conditions: LinkConditions,
        host: Handshake,
        joiner: Handshake,
        adjust: impl Fn(&mut EndpointConfig),
    ) -> Match {
        let mut net = SimNet::new(seed);
        net.set_default_conditions(conditions);
        let mut host_config = EndpointConfig::host(TOKEN, host);
        let mut joiner_config = EndpointConfig::joiner(joiner);
        adjust(&mut host_config);
        adjust(&mut joiner_config);
        let peer = |config: EndpointConfig| Peer {
            players: config.local.local_slots.iter().collect(),
            endpoint: PeerEndpoint::new(config, 0).unwrap(),
            events: Vec::new(),
            next_frame: 0,
            sends_inputs: true,
        };
        Match {
            net,
            host: peer(host_config),
            joiner: peer(joiner_config),
            now: 0,
            input_datagrams: Vec::new(),
            datagrams_sent_at: Vec::new(),
        }
    }

    fn peer(&mut self, address: u8) -> &mut Peer {
        if address == HOST {
            &mut self.host
        } else {
            &mut self.joiner
        }
    }

    /// Runs the match until `until` ms.
    fn run_until(&mut self, until: u64) {
        while self.now < until {
            self.now += 1;
            let now = self.now;
            for delivery in self.net.deliver_due(now) {
                self.peer(delivery.to)
                    .endpoint
                    .handle_datagram(now, &delivery.bytes);
            }
            for address in [HOST, JOINER] {
                // Frame boundaries at 60 Hz; each peer's frames offset a little.
                let phase = if address == HOST { 0 } else { 7 };
                if (now * 60 + phase) / 1000 == ((now - 1) * 60 + phase) / 1000 {
                    continue;
                }
                let peer = self.peer(address);
                if peer.endpoint.is_running() && peer.sends_inputs && !peer.players.is_empty() {
                    let frame = peer.next_frame;
                    let pads: Vec<Buttons> = peer.players.iter().map(|&p| pad(p, frame)).collect();
                    peer.endpoint
                        .add_local_input(Frame::new(frame), &pads)
                        .unwrap();
                    peer.next_frame += 1;
                }
                let datagrams = peer.endpoint.poll_datagrams(now);
                peer.events.extend(peer.endpoint.drain_events());
                let to = if address == HOST { JOINER } else { HOST };
                for datagram in datagrams {
                    if datagram[3] == 4 {
                        self.input_datagrams.push((address, datagram.clone()));
                    }
                    self.datagrams_sent_at.push((address, now));
                    self.net.send(now, address, to, &datagram);
                }
            }
        }
    }

    /// The remote inputs `address` received, in the order the events came.
    fn received_inputs(&self, address: u8) -> Vec<(u8, Frame, Buttons)> {
        let peer = if address == HOST {
            &self.host
        } else {
            &self.joiner
        };
        peer.events
            .iter()
            .filter_map(|event| match *event {
                Event::RemoteInput {
                    player,
                    frame,
                    buttons,
                } => Some((player, frame, buttons)),
                _ => None,
            })
            .collect()
    }

    /// Checks that each side received the other's inputs exactly once, in order,
    /// with the right buttons, and (nearly) all of them.
    fn assert_every_input_arrived_once_in_order(&self, allowed_in_flight: u32) {
        for (receiver, sender) in [(HOST, &self.joiner), (JOINER, &self.host)] {
            let received = self.received_inputs(receiver);
            let players = sender.players.len().max(1);
            for (index, &(p, frame, buttons)) in received.iter().enumerate() {
                let expected_frame = (index / players) as u32;
                assert_eq!(p, sender.players[index % players]);
                assert_eq!(
                    frame,
                    Frame::new(expected_frame),
                    "out of order or repeated"
                );
                assert_eq!(buttons, pad(p, expected_frame));
            }
            let missing = sender.next_frame - (received.len() / players) as u32;
            assert!(
                missing <= allowed_in_flight,
                "{missing} of {} frames still missing",
                sender.next_frame
            );
        }
    }
}

fn synchronized(events: &[Event]) -> Option<(SessionToken, SessionSettings, PlayerSlots)> {
    events.iter().find_map(|event| match *event {
        Event::Synchronized {
            session,
            settings,
            remote_slots,
        } => Some((session, settings, remote_slots)),
        _ => None,
    })
}

#[test]
fn a_joiner_synchronizes_with_the_hosts_token_and_settings() {
    let mut joiner = identity(1);
    joiner.settings.max_prediction = 3;
    joiner.settings.checksum_interval = 1;
    let mut game = Match::with(1, LinkConditions::latency(20), identity(0), joiner, |_| {});
    game.run_until(200);
    let host_view = synchronized(&game.host.events).expect("host synchronized");
    let joiner_view = synchronized(&game.joiner.events).expect("joiner synchronized");
    assert_eq!(
        host_view,
        (TOKEN, SessionSettings::default(), PlayerSlots::single(1))
    );
    assert_eq!(
        joiner_view,
        (TOKEN, SessionSettings::default(), PlayerSlots::single(0))
    );
    assert_eq!(game.joiner.endpoint.session(), TOKEN);
}

fn rejection(events: &[Event]) -> Option<Rejection> {
    events.iter().find_map(|event| match event {
        Event::Rejected(rejection) => Some(rejection.clone()),
        _ => None,
    })
}

#[test]
fn a_joiner_speaking_another_protocol_version_is_rejected_naming_both_versions() {
    let mut game = Match::with(
        2,
        LinkConditions::latency(20),
        identity(0),
        identity(1),
        |config| {
            if matches!(config.role, Role::Joiner { .. }) {
                config.protocol_version = PROTOCOL_VERSION + 1;
            }
        },
    );
    game.run_until(500);
    let refused = rejection(&game.joiner.events).expect("joiner told why");
    assert_eq!(refused.reason, RejectReason::ProtocolVersion);
    assert!(!refused.by_us);
    let text = refused.to_string();
    assert!(
        text.contains(&format!("protocol {}", PROTOCOL_VERSION)),
        "{text}"
    );
    assert!(
        text.contains(&format!("protocol {}", PROTOCOL_VERSION + 1)),
        "{text}"
    );
    assert!(game.joiner.events.contains(&Event::Disconnected {
        cause: DisconnectCause::Rejected(RejectReason::ProtocolVersion)
    }));
    let host_side = rejection(&game.host.events).expect("host reports it too");
    assert!(host_side.by_us);
    // The one line each side prints names both versions, the host's first.
    let (ours, theirs) = (PROTOCOL_VERSION, PROTOCOL_VERSION + 1);
    assert_eq!(
        refused.explanation(),
        format!(
            "the host speaks netcade protocol {ours}; you have netcade protocol {theirs} (different netcade protocol versions)"
        )
    );
    assert_eq!(
        host_side.explanation(),
        format!(
            "refused a joiner (different netcade protocol versions): it has netcade protocol {theirs}; you host netcade protocol {ours}"
        )
    );
    assert_eq!(synchronized(&game.host.events), None);
    assert_eq!(game.joiner.endpoint.state(), ConnectionState::Disconnected);
}

#[test]
fn a_joiner_with_other_content_is_rejected_naming_both_hashes() {
    let mut other_rom = identity(1);
    other_rom.content_hash = 0xBAD_F00D;
    let mut game = Match::with(
        3,
        LinkConditions::latency(20),
        identity(0),
        other_rom,
        |_| {},
    );
    game.run_until(500);
    let refused = rejection(&game.joiner.events).expect("joiner told why");
    assert_eq!(refused.reason, RejectReason::Content);
    let text = refused.to_string();
    assert!(text.contains("different content"), "{text}");
    assert!(
        text.contains("0000000000c0ffee") && text.contains("000000000badf00d"),
        "{text}"
    );
    assert_eq!(
        rejection(&game.host.events).unwrap().reason,
        RejectReason::Content
    );
}

#[test]
fn a_joiner_claiming_the_hosts_slot_is_rejected() {
    let mut game = Match::with(
        4,
        LinkConditions::latency(5),
        identity(0),
        identity(0),
        |_| {},
    );
    game.run_until(300);
    assert_eq!(
        rejection(&game.joiner.events).unwrap().reason,
        RejectReason::SlotTaken
    );
}

#[test]
fn inputs_arrive_exactly_once_in_order_on_a_lan() {
    let mut game = Match::new(10, LinkConditions::latency(1));
    game.run_until(5_000);
    assert!(game.host.next_frame > 290);
    game.assert_every_input_arrived_once_in_order(2);
}

#[test]
fn inputs_arrive_exactly_once_in_order_at_100ms_rtt_with_jitter() {
    let mut game = Match::new(11, LinkConditions::latency(50).with_jitter(20));
    game.run_until(10_000);
    game.assert_every_input_arrived_once_in_order(8);
    let ping = game.host.endpoint.stats().ping_ms.expect("ping measured");
    // 100 ms on the wire plus up to a frame waiting for the reply's poll.
    assert!((95..=150).contains(&ping), "ping {ping} ms");
}

#[test]
fn inputs_arrive_exactly_once_in_order_despite_loss_duplication_and_reordering() {
    let conditions = LinkConditions::latency(30)
        .with_jitter(10)
        .with_loss(0.05)
        .with_duplication(0.01)
        .with_reordering(0.05);
    for seed in 20..24 {
        let mut game = Match::new(seed, conditions);
        game.run_until(10_000);
        let stats = game.net.stats();
        assert!(stats.lost > 0 && stats.duplicated > 0 && stats.reordered > 0);
        game.assert_every_input_arrived_once_in_order(8);
        assert!(game.host.endpoint.stats().dropped_duplicate > 0);
    }
}

#[test]
fn unchanged_input_at_100ms_rtt_costs_at_most_16_bytes_of_payload() {
    let mut game = Match::new(12, LinkConditions::latency(50));
    // Nobody touches the pad: every frame's input is NONE.
    game.run_until(300);
    game.input_datagrams.clear();
    let start = game.host.next_frame;
    game.host.sends_inputs = false;
    game.joiner.sends_inputs = false;
    for frame in start..start + 600 {
        game.host
            .endpoint
            .add_local_input(Frame::new(frame), &[Buttons::NONE])
            .unwrap();
        game.run_until(game.now + 16);
    }
    let payloads: Vec<usize> = game
        .input_datagrams
        .iter()
        .filter(|(from, _)| *from == HOST)
        .map(|(_, datagram)| input_payload_len(datagram.len()))
        .collect();
    assert!(payloads.len() > 500);
    let largest = *payloads.iter().max().unwrap();
    assert!(largest <= 16, "largest input payload {largest} bytes");
    let in_flight = game.host.endpoint.stats().unacked_frames;
    assert!((4..=9).contains(&in_flight), "{in_flight} frames in flight");
}

#[test]
fn checksums_frame_advantage_and_ping_reach_the_peer() {
    let mut game = Match::new(13, LinkConditions::latency(25).with_loss(0.05));
    // Checksums of frames the host can have final: it holds the joiner's
    // inputs of them (a report beyond is a claim no peer can make).
    game.run_until(6_000);
    for (i, frame) in [60u32, 120, 180, 240, 300].into_iter().enumerate() {
        game.host
            .endpoint
            .send_checksum(Frame::new(frame), Checksum(frame as u64 * 7));
        game.host.endpoint.set_local_frame_advantage(-(i as i16));
        game.run_until(game.now + 1000);
    }
    let checksums: Vec<(Frame, Checksum)> = game
        .joiner
        .events
        .iter()
        .filter_map(|event| match *event {
            Event::RemoteChecksum { frame, checksum } => Some((frame, checksum)),
            _ => None,
        })
        .collect();
    let expected: Vec<(Frame, Checksum)> = [60u32, 120, 180, 240, 300]
        .into_iter()
        .map(|f| (Frame::new(f), Checksum(f as u64 * 7)))
        .collect();
    assert_eq!(checksums, expected);
    assert_eq!(game.joiner.endpoint.stats().remote_frame_advantage, -4);
    assert!(game
        .joiner
        .events
        .iter()
        .any(|e| matches!(e, Event::Ping { rtt_ms, .. } if (45..=90).contains(rtt_ms))));
}

#[test]
fn a_quality_reply_held_for_an_input_datagram_does_not_count_as_round_trip() {
    // The joiner has no input to send, so its replies wait for an ack to
    // ride on, or go alone after the wait: the 50 ms round trip must not
    // read as 50 ms plus the wait.
    let mut game = Match::new(16, LinkConditions::latency(25));
    game.joiner.sends_inputs = false;
    game.run_until(3_000);
    let samples: Vec<u32> = game
        .host
        .events
        .iter()
        .filter_map(|event| match *event {
            Event::Ping { sample_ms, .. } => Some(sample_ms),
            _ => None,
        })
        .collect();
    assert!(samples.len() > 5, "only {} pings", samples.len());
    assert!(
        samples.iter().all(|&sample| sample == 50),
        "round trips {samples:?}"
    );
}

#[test]
fn a_megabyte_blob_arrives_intact_under_5_percent_loss() {
    let mut game = Match::new(
        14,
        LinkConditions::latency(40).with_jitter(10).with_loss(0.05),
    );
    game.run_until(300);
    let blob: Vec<u8> = (0..1_000_000u32)
        .map(|i| (i * 31 + i / 977) as u8)
        .collect();
    let id = game.host.endpoint.send_blob(blob.clone()).unwrap();
    game.run_until(game.now + 10_000);
    let received = game.joiner.events.iter().find_map(|event| match event {
        Event::BlobReceived { id: got, bytes } if *got == id => Some(bytes.clone()),
        _ => None,
    });
    assert!(
        received.as_ref() == Some(&blob),
        "blob missing or corrupted"
    );
    assert!(game.host.events.contains(&Event::BlobDelivered { id }));
    // Inputs kept flowing meanwhile.
    game.assert_every_input_arrived_once_in_order(8);
}

#[test]
fn a_blob_over_the_receivers_cap_is_refused() {
    let mut game = Match::with(
        15,
        LinkConditions::latency(5),
        identity(0),
        identity(1),
        |c| c.max_blob_size = 10_000,
    );
    game.run_until(200);
    game.host.endpoint.send_blob(vec![1; 20_000]).unwrap();
    game.run_until(1_000);
    assert!(!game
        .joiner
        .events
        .iter()
        .any(|e| matches!(e, Event::BlobReceived { .. })));
    assert!(
        game.joiner.endpoint.stats().blobs_refused > 1,
        "chunk after chunk"
    );
    let refusals: Vec<_> = game
        .joiner
        .events
        .iter()
        .filter(|e| matches!(e, Event::BlobRefused { .. }))
        .collect();
    assert!(
        matches!(refusals[..], [Event::BlobRefused { size: 20_000, .. }]),
        "reported once, with its size: {refusals:?}"
    );
}

fn first_time(events: &[Event], wanted: impl Fn(&Event) -> bool) -> bool {
    events.iter().any(wanted)
}

#[test]
fn silence_warns_after_750ms_and_disconnects_after_5000ms() {
    let mut game = Match::new(16, LinkConditions::latency(10));
    game.run_until(500);
    game.net.partition(HOST, JOINER);
    let cut_at = game.now;
    game.run_until(cut_at + 700);
    assert!(!first_time(&game.host.events, |e| matches!(
        e,
        Event::NetworkInterrupted { .. }
    )));
    game.run_until(cut_at + 800);
    assert!(first_time(&game.host.events, |e| matches!(
        e,
        Event::NetworkInterrupted { silent_for_ms } if (750..800).contains(silent_for_ms)
    )));
    game.run_until(cut_at + 4_950);
    assert!(game.host.endpoint.is_running());
    game.run_until(cut_at + 5_050);
    for peer in [&game.host, &game.joiner] {
        assert_eq!(peer.endpoint.state(), ConnectionState::Disconnected);
        assert!(first_time(&peer.events, |e| matches!(
            e,
            Event::Disconnected { cause: DisconnectCause::Timeout { silent_for_ms } }
                if (5_000..5_050).contains(silent_for_ms)
        )));
    }
}

#[test]
fn a_two_second_partition_interrupts_then_resumes_with_every_input() {
    let mut game = Match::new(17, LinkConditions::latency(30).with_jitter(5));
    game.run_until(1_000);
    game.net.partition(HOST, JOINER);
    game.run_until(3_000);
    game.net.heal(HOST, JOINER);
    game.run_until(5_000);
    for peer in [&game.host, &game.joiner] {
        let interrupted = peer
            .events
            .iter()
            .position(|e| matches!(e, Event::NetworkInterrupted { .. }))
            .expect("interrupted");
        let resumed = peer
            .events
            .iter()
            .position(|e| *e == Event::NetworkResumed)
            .expect("resumed");
        assert!(interrupted < resumed);
        assert!(peer.endpoint.is_running());
    }
    game.assert_every_input_arrived_once_in_order(8);
}

#[test]
fn sending_slows_to_four_datagrams_a_second_after_a_second_of_silence() {
    let mut game = Match::new(18, LinkConditions::latency(10));
    game.run_until(500);
    // The host hears nothing, but the joiner still hears the host.
    game.net.partition_one_way(JOINER, HOST);
    let cut_at = game.now;
    game.run_until(cut_at + 4_000);
    let host_sends_between = |from: u64, to: u64| {
        game.datagrams_sent_at
            .iter()
            .filter(|&&(who, at)| who == HOST && at >= from && at < to)
            .count()
    };
    assert!(
        host_sends_between(cut_at, cut_at + 900) >= 54,
        "60 Hz before throttling"
    );
    let throttled = host_sends_between(cut_at + 1_100, cut_at + 3_100);
    assert!((7..=9).contains(&throttled), "{throttled} datagrams in 2 s");
    // What does get through still carries the newest inputs.
    let joiner_got = game.received_inputs(JOINER).len() as u32;
    assert!(game.host.next_frame - joiner_got <= 16);
}

#[test]
fn datagrams_with_another_sessions_token_are_dropped_and_counted() {
    let mut game = Match::new(19, LinkConditions::latency(5));
    game.run_until(300);
    let mut forged = Vec::new();
    let header = Header {
        version: PROTOCOL_VERSION,
        session: SessionToken(TOKEN.0 ^ 1),
        sequence: Sequence(9_999),
    };
    let message = Message::Disconnect {
        reason: DisconnectReason::Quit,
    };
    codec::encode(&header, &message, &mut forged).unwrap();
    let now = game.now;
    game.host.endpoint.handle_datagram(now, &forged);
    game.host
        .endpoint
        .handle_datagram(now, b"not netcade at all");
    let stats = game.host.endpoint.stats();
    assert_eq!(stats.dropped_wrong_token, 1);
    assert_eq!(stats.dropped_malformed, 1);
    assert!(game.host.endpoint.is_running());
}

#[test]
fn a_goodbye_ends_the_match_on_both_sides_with_its_reason() {
    let mut game = Match::new(21, LinkConditions::latency(15).with_loss(0.3));
    game.run_until(500);
    game.joiner.endpoint.disconnect(DisconnectReason::Quit);
    game.run_until(1_000);
    assert!(game.host.events.contains(&Event::Disconnected {
        cause: DisconnectCause::PeerLeft(DisconnectReason::Quit)
    }));
    assert_eq!(game.host.endpoint.state(), ConnectionState::Disconnected);
}

#[test]
fn a_peer_table_routes_by_address_and_counts_strangers() {
    let mut table = PeerTable::new();
    let endpoint = PeerEndpoint::new(EndpointConfig::host(TOKEN, identity(0)), 0).unwrap();
    table.insert(JOINER, endpoint);
    let mut hello = Vec::new();
    let header = Header {
        version: PROTOCOL_VERSION,
        session: SessionToken::UNKNOWN,
        sequence: Sequence(0),
    };
    codec::encode(&header, &Message::Hello(identity(1)), &mut hello).unwrap();
    netcode::protocol::auth::seal_handshake(&mut hello);
    assert!(!table.handle_datagram(1, 99, &hello));
    assert!(table.handle_datagram(1, JOINER, &hello));
    assert_eq!(table.dropped_unknown(), 1);
    let mut replies = Vec::new();
    table.poll(2, &mut |to, datagram| replies.push((to, datagram.to_vec())));
    assert!(replies
        .iter()
        .any(|(to, d)| *to == JOINER && matches!(codec::decode(d), Ok((_, Message::Welcome(_))))));
    assert!(table
        .drain_events()
        .iter()
        .any(|(from, e)| *from == JOINER && matches!(e, Event::Synchronized { .. })));
}

#[test]
fn local_input_must_come_frame_after_frame() {
    let mut endpoint = PeerEndpoint::new(EndpointConfig::host(TOKEN, identity(0)), 0).unwrap();
    endpoint
        .add_local_input(Frame::ZERO, &[Buttons::A])
        .unwrap();
    assert_eq!(
        endpoint.add_local_input(Frame::new(2), &[Buttons::A]),
        Err(EndpointError::NotNextFrame {
            expected: Frame::new(1),
            got: Frame::new(2)
        })
    );
    assert_eq!(
        endpoint.add_local_input(Frame::new(1), &[Buttons::A, Buttons::B]),
        Err(EndpointError::WrongSlotCount {
            expected: 1,
            got: 2
        })
    );
}

#[test]
fn a_spectator_receives_every_players_inputs_and_acks_them() {
    let mut host = identity(0);
    host.local_slots = PlayerSlots(0b11); // the host relays both players
    let mut spectator = identity(0);
    spectator.local_slots = PlayerSlots::NONE;
    let conditions = LinkConditions::latency(40).with_loss(0.05);
    let mut game = Match::with(22, conditions, host, spectator, |_| {});
    game.run_until(5_000);
    assert!(synchronized(&game.joiner.events).is_some());
    game.assert_every_input_arrived_once_in_order(8);
    assert!(game.received_inputs(JOINER).len() > 500);
    // Its acks keep the host's resend queue short.
    assert!(game.host.endpoint.stats().unacked_frames <= 8);
}

#[test]
fn a_spectator_joining_mid_match_takes_inputs_from_the_frame_it_is_told() {
    let mut config = EndpointConfig::joiner(identity(1));
    config.local.local_slots = PlayerSlots::NONE;
    let mut spectator = PeerEndpoint::new(config, 0).unwrap();
    assert!(spectator.expect_remote_inputs_from(Frame::new(600)));
    assert_eq!(spectator.next_remote_frame(), Frame::new(600));
}
