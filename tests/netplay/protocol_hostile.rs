//! A misbehaving peer costs at most its own link: hostile datagrams on the
//! simulated network close the link of whoever sent them, with a reason,
//! and never fail this machine or the other players' match.

use netcade::net::sim::LinkConditions;
use netcode::input::Buttons;
use netcode::netplay::{NetplayEvent, PeerFault};
use netcode::protocol::{codec, Handshake, InputMessage, Message, PlayerSlots, SessionSettings};
use netcode::rollback::{DisconnectReason, Frame, PlayerId, SessionState};
use support::netplay::{any_event, party_cluster, party_game, Cluster, MatchSetup, PartyCluster};

/// From `after` ms on, every input datagram `hostile` sends to `victim` is
/// rewritten by `rewrite` (same header, so it passes every check but its content's).
fn tamper_inputs(
    cluster: &mut PartyCluster,
    hostile: u8,
    victim: u8,
    after: u64,
    rewrite: impl Fn(&mut InputMessage) + 'static,
) {
    cluster.tamper = Some(Box::new(move |now, from, to, datagram| {
        if now < after || from != hostile || to != victim {
            return;
        }
        let Ok((header, Message::Input(mut input))) = codec::decode(datagram) else {
            return;
        };
        rewrite(&mut input);
        codec::encode(&header, &Message::Input(input), datagram).expect("still fits");
    }));
}

/// Adds `frames` idle frames to the inputs carried: frames far past any
/// input window.
fn run_far_ahead(frames: u32) -> impl Fn(&mut InputMessage) {
    move |input| {
        if input.frame_count == 0 {
            return;
        }
        input.frame_count += frames;
        let slots = input.slots.count();
        input
            .inputs
            .extend(std::iter::repeat_n(Buttons::NONE, frames as usize * slots));
    }
}

fn faults(cluster: &PartyCluster, machine: usize) -> Vec<(Vec<PlayerId>, PeerFault)> {
    cluster
        .events_of(machine)
        .iter()
        .filter_map(|(_, event)| match event {
            NetplayEvent::PeerFault { players, fault } => {
                Some((players.iter().collect(), fault.clone()))
            }
            _ => None,
        })
        .collect()
}

fn disconnected(cluster: &PartyCluster, machine: usize, player: u8) -> Option<DisconnectReason> {
    cluster
        .events_of(machine)
        .iter()
        .find_map(|(_, event)| match event {
            NetplayEvent::Disconnected {
                player: who,
                reason,
                ..
            } if *who == PlayerId::new(player) => Some(*reason),
            _ => None,
        })
}

#[test]
fn inputs_far_outside_the_window_end_a_two_player_match_as_the_peers_disconnect() {
    let mut cluster = party_cluster(2, 5, LinkConditions::latency(10));
    tamper_inputs(&mut cluster, 1, 0, 2_000, run_far_ahead(600));
    // Every tick of every machine expects advance_frame to succeed.
    cluster.run_until(4_000);
    let faults = faults(&cluster, 0);
    assert!(
        matches!(
            faults.as_slice(),
            [(players, PeerFault::RejectedInput { player, .. })]
                if players == &[PlayerId::new(1)] && *player == PlayerId::new(1)
        ),
        "{faults:?}"
    );
    assert_eq!(
        disconnected(&cluster, 0, 1),
        Some(DisconnectReason::ProtocolViolation)
    );
    assert!(any_event(cluster.events_of(0), |e| matches!(
        e,
        NetplayEvent::MatchEnded { .. }
    )));
    assert_eq!(cluster.machines[0].netplay.state(), SessionState::Ended);
}

#[test]
fn a_three_player_match_plays_on_without_the_player_who_broke_the_protocol() {
    let mut cluster = party_cluster(3, 5, LinkConditions::latency(10));
    tamper_inputs(&mut cluster, 2, 0, 2_000, run_far_ahead(600));
    cluster.run_until(4_000);
    let frame_after_fault = cluster.machines[0].current_frame();
    cluster.run_until(8_000);
    assert!(matches!(
        faults(&cluster, 0).as_slice(),
        [(players, PeerFault::RejectedInput { .. })] if players == &[PlayerId::new(2)]
    ));
    // The other machine follows the agreed departure; nobody else leaves.
    for machine in [0, 1] {
        assert!(disconnected(&cluster, machine, 2).is_some());
        assert_eq!(disconnected(&cluster, machine, 1 - machine as u8), None);
        assert_eq!(
            cluster.machines[machine].netplay.state(),
            SessionState::Running
        );
    }
    assert!(
        cluster.machines[0].current_frame() > frame_after_fault + 200,
        "the two kept playing"
    );
    cluster.assert_same_final_checksums(&[0, 1], 400);
}

#[test]
fn a_peer_claiming_we_left_at_frame_0_does_not_force_us_out() {
    let mut cluster = party_cluster(2, 5, LinkConditions::latency(10));
    tamper_inputs(&mut cluster, 1, 0, 2_000, |input| {
        input.status.disconnected_at[0] = Some(Frame::ZERO);
    });
    cluster.run_until(6_000);
    assert_eq!(cluster.machines[0].netplay.state(), SessionState::Running);
    cluster.assert_all_in_sync_without_trouble(300);
}

#[test]
fn a_claim_that_another_player_left_before_any_kept_state_costs_the_claimer_its_link() {
    let mut cluster = party_cluster(3, 5, LinkConditions::latency(10));
    tamper_inputs(&mut cluster, 2, 0, 2_000, |input| {
        input.status.disconnected_at[1] = Some(Frame::ZERO);
    });
    cluster.run_until(4_000);
    let frame_after_fault = cluster.machines[0].current_frame();
    cluster.run_until(8_000);
    let faults = faults(&cluster, 0);
    assert!(
        matches!(
            faults.as_slice(),
            [(players, PeerFault::ImpossibleDeparture { player, at_frame, .. })]
                if players == &[PlayerId::new(2)]
                    && *player == PlayerId::new(1)
                    && *at_frame == Frame::ZERO
        ),
        "{faults:?}"
    );
    // Player 2 (the one the lie was about) plays on with us.
    for machine in [0, 1] {
        assert_eq!(disconnected(&cluster, machine, 1 - machine as u8), None);
        assert_eq!(
            cluster.machines[machine].netplay.state(),
            SessionState::Running
        );
    }
    assert!(cluster.machines[0].current_frame() > frame_after_fault + 200);
    cluster.assert_same_final_checksums(&[0, 1], 400);
}

#[test]
fn a_peer_heard_all_along_whose_frames_never_become_final_ends_the_match_with_a_reason() {
    let mut cluster = party_cluster(2, 5, LinkConditions::latency(10));
    // Machine 1's datagrams keep coming, with every report, but from 2 s on
    // without a single input.
    tamper_inputs(&mut cluster, 1, 0, 2_000, |input| {
        input.frame_count = 0;
        input.inputs.clear();
    });
    cluster.run_until(20_000);
    let stalled = cluster
        .events_of(0)
        .iter()
        .find_map(|(at, event)| match event {
            NetplayEvent::Stalled { stalled_for_ms, .. } => Some((*at, *stalled_for_ms)),
            _ => None,
        });
    let Some((at, stalled_for_ms)) = stalled else {
        panic!("machine 0 never said it stalled");
    };
    assert!(stalled_for_ms >= 10_000 && at < 14_000, "{stalled:?}");
    assert_eq!(
        disconnected(&cluster, 1, 0),
        Some(DisconnectReason::Stalled)
    );
    for machine in 0..2 {
        assert!(any_event(cluster.events_of(machine), |e| matches!(
            e,
            NetplayEvent::MatchEnded { .. }
        )));
        assert_eq!(
            cluster.machines[machine].netplay.state(),
            SessionState::Ended
        );
    }
}

#[test]
fn malformed_and_forged_datagrams_from_a_peers_address_are_counted_as_dropped() {
    let mut cluster = party_cluster(2, 5, LinkConditions::latency(10));
    cluster.run_until(2_000);
    let before = cluster.machines[0].netplay.dropped_datagrams();
    let now = cluster.now;
    // From the address of machine 1, whose link is open: garbage, a cut
    // header, and a well-formed datagram with a tag that is not its key's.
    let mut junk = vec![b"garbage".to_vec(), b"nc".to_vec()];
    let mut untagged = Vec::new();
    let header = netcode::protocol::Header {
        version: netcode::protocol::PROTOCOL_VERSION,
        session: netcode::protocol::SessionToken::UNKNOWN,
        sequence: netcode::protocol::Sequence(7),
    };
    codec::encode(&header, &Message::KeepAlive, &mut untagged).unwrap();
    untagged.extend_from_slice(&[0; 8]);
    junk.push(untagged);
    for datagram in &junk {
        cluster.machines[0]
            .netplay
            .handle_datagram(now, 1, datagram);
    }
    assert_eq!(
        cluster.machines[0].netplay.dropped_datagrams(),
        before + junk.len() as u64
    );
    cluster.run_until(4_000);
    cluster.assert_all_in_sync_without_trouble(200);
}

/// What the bare endpoints of the modules below present, for `slots`.
fn handshake(slots: PlayerSlots) -> Handshake {
    Handshake {
        core_name: "stub".into(),
        core_version: "1".into(),
        content_hash: 1,
        local_slots: slots,
        settings: SessionSettings::default(),
        public_key: Some(netcode::protocol::LinkSecret::well_known().public_key()),
        ..Handshake::default()
    }
}

// ---------------------------------------------------------------- spectators

#[test]
fn hellos_in_someone_elses_name_get_no_stream_of_inputs_sent_there() {
    use netcode::protocol::{
        Handshake, Header, PlayerSlots, Sequence, SessionSettings, SessionToken, PROTOCOL_VERSION,
    };
    use std::cell::Cell;
    use std::rc::Rc;

    const VICTIM: u8 = 50;
    let setup = MatchSetup::new(2, 5, LinkConditions::latency(10));
    let mut cluster = Cluster::with_configs(
        setup,
        |_| party_game(),
        |me, config| {
            config.accept_spectators = me == 0;
        },
    );
    // The victim never answers (and is not a machine of the cluster).
    cluster.net().partition_one_way(0, VICTIM);
    let sent_to_victim = Rc::new(Cell::new((0u64, 0u64)));
    let counter = Rc::clone(&sent_to_victim);
    cluster.tamper = Some(Box::new(move |_, _, to, datagram| {
        if to == VICTIM {
            let (inputs, others) = counter.get();
            if datagram[3] == 4 {
                counter.set((inputs + 1, others));
            } else {
                counter.set((inputs, others + 1));
            }
        }
    }));
    let hello = {
        let header = Header {
            version: PROTOCOL_VERSION,
            session: SessionToken::UNKNOWN,
            sequence: Sequence(0),
        };
        let spectator = Handshake {
            core_name: "netcade-test".into(),
            core_version: "1".into(),
            content_hash: 0xC0FFEE,
            local_slots: PlayerSlots::NONE,
            settings: netcode::protocol::SessionSettings {
                player_count: 2,
                ..SessionSettings::default()
            },
            public_key: Some(netcode::protocol::LinkSecret::well_known().public_key()),
            ..Handshake::default()
        };
        let mut out = Vec::new();
        codec::encode(&header, &Message::Hello(spectator), &mut out).unwrap();
        netcode::protocol::auth::seal_handshake(&mut out);
        out
    };
    // From the start, while every input is still kept for a spectator.
    for _ in 0..5 {
        let now = cluster.now;
        cluster.machines[0]
            .netplay
            .handle_datagram(now, VICTIM, &hello);
        cluster.run_until(now + 1_000);
    }
    let (inputs, others) = sent_to_victim.get();
    assert!(others > 0, "the forged Hello was answered as a Hello is");
    assert_eq!(inputs, 0, "{others} other datagrams");
    cluster.assert_all_in_sync_without_trouble(200);
}

mod admission {
    use super::handshake;
    use netcode::netplay::{NetplayConfig, NetplaySession};
    use netcode::protocol::{codec, DisconnectReason};
    use netcode::protocol::{
        DisconnectCause, EndpointConfig, Event, HandshakeLimit, Header, LinkSecret, Message,
        PeerEndpoint, PlayerSlots, RejectReason, Sequence, SessionSettings, SessionToken,
        PROTOCOL_VERSION,
    };

    /// Player 0's machine, waiting for player 1 and taking up to
    /// `max_spectators` spectators.
    fn host(max_spectators: usize) -> NetplaySession<u32> {
        host_awaiting_player_1_at(Some(1), max_spectators)
    }

    /// Player 0's machine, waiting for player 1 from any address and
    /// taking up to `max_spectators` spectators.
    fn open_host(max_spectators: usize) -> NetplaySession<u32> {
        host_awaiting_player_1_at(None, max_spectators)
    }

    fn host_awaiting_player_1_at(
        address: Option<u32>,
        max_spectators: usize,
    ) -> NetplaySession<u32> {
        let mut config = NetplayConfig::new(
            SessionToken(0xABCD),
            "stub",
            "1",
            1,
            SessionSettings::default(),
            PlayerSlots::single(0),
        )
        .accept(address, PlayerSlots::single(1));
        config.accept_spectators = true;
        config.max_spectators = max_spectators;
        NetplaySession::new(config, 0).unwrap()
    }

    fn spectator() -> PeerEndpoint {
        PeerEndpoint::new(EndpointConfig::joiner(handshake(PlayerSlots::NONE)), 0).unwrap()
    }

    /// Spectators at addresses 10, 11, … exchange datagrams with the host
    /// every millisecond from `from` to `until`; returns their events.
    fn exchange(
        host: &mut NetplaySession<u32>,
        spectators: &mut [PeerEndpoint],
        from: u64,
        until: u64,
    ) -> Vec<Vec<Event>> {
        let mut events = vec![Vec::new(); spectators.len()];
        for now in from..until {
            for (index, spectator) in spectators.iter_mut().enumerate() {
                for datagram in spectator.poll_datagrams(now) {
                    host.handle_datagram(now, 10 + index as u32, &datagram);
                }
            }
            host.poll(now, |to, datagram| {
                if let Some(spectator) = spectators.get_mut(to as usize - 10) {
                    spectator.handle_datagram(now, datagram);
                }
            });
            for (index, spectator) in spectators.iter_mut().enumerate() {
                events[index].extend(spectator.drain_events());
            }
        }
        events
    }

    #[test]
    fn spectators_beyond_the_cap_are_refused_with_a_reason() {
        let mut host = host(2);
        let mut spectators: Vec<PeerEndpoint> = (0..5).map(|_| spectator()).collect();
        let events = exchange(&mut host, &mut spectators, 1, 500);
        assert_eq!(host.spectator_count(), 2);
        assert_eq!(host.endpoint_count(), 2);
        for (index, events) in events.iter().enumerate() {
            let refused = events.contains(&Event::Disconnected {
                cause: DisconnectCause::Rejected(RejectReason::SpectatorsFull),
            });
            assert_eq!(refused, index >= 2, "spectator {index}: {events:?}");
        }
    }

    #[test]
    fn a_spectator_that_leaves_leaves_no_endpoint_behind_and_frees_its_place() {
        let mut host = host(1);
        let mut spectators = vec![spectator(), spectator()];
        exchange(&mut host, &mut spectators, 1, 300);
        assert_eq!(host.spectator_count(), 1);
        spectators[0].disconnect(DisconnectReason::Quit);
        // The second spectator was refused: it asks again, as a user would.
        spectators[1] = spectator();
        let events = exchange(&mut host, &mut spectators, 2_000, 2_500);
        assert!(
            events[1]
                .iter()
                .any(|e| matches!(e, Event::Synchronized { .. })),
            "{:?} {} {}",
            events,
            host.spectator_count(),
            host.endpoint_count()
        );
        assert_eq!(host.spectator_count(), 1);
        assert_eq!(host.endpoint_count(), 1, "the first one's endpoint is gone");
    }

    /// A real joiner (or spectator, with no slots) holding its own secret.
    fn joiner(slots: PlayerSlots, secret: u8) -> PeerEndpoint {
        let mut config = EndpointConfig::joiner(handshake(slots));
        config.secret = LinkSecret::from_bytes([secret; 32]);
        PeerEndpoint::new(config, 0).unwrap()
    }

    /// A socket that replays a captured Hello and, receiving at its own
    /// address, answers each cookie with it: all a replayer can do without
    /// the secret of the key that Hello offers.
    struct Replayer {
        hello: Vec<u8>,
    }

    impl Replayer {
        fn capturing(peer: &mut PeerEndpoint) -> Replayer {
            let hello = peer.poll_datagrams(0).remove(0);
            assert!(matches!(
                netcode::protocol::auth::decode_handshake(&hello),
                Some((_, Message::Hello(_)))
            ));
            Replayer { hello }
        }

        /// The captured Hello carrying the cookie `datagram` brings, if it brings one.
        fn answer(&self, datagram: &[u8]) -> Option<Vec<u8>> {
            let (cookie, Message::HelloCookie) =
                netcode::protocol::auth::decode_handshake(datagram)?
            else {
                return None;
            };
            let (mut header, hello) =
                codec::decode(netcode::protocol::auth::without_tag(&self.hello)).ok()?;
            header.session = cookie.session;
            let mut answer = Vec::new();
            codec::encode(&header, &hello, &mut answer).ok()?;
            netcode::protocol::auth::seal_handshake(&mut answer);
            Some(answer)
        }
    }

    /// Runs `host` with real `peers` (at addresses 10, 11, …, starting at
    /// `peers_from`) and `replayers` (at 100, 101, …, each replaying its
    /// Hello every `replay_every` ms from 1 ms on) every millisecond until
    /// `until`; returns the real peers' events.
    fn besieged(
        host: &mut NetplaySession<u32>,
        peers: &mut [PeerEndpoint],
        peers_from: u64,
        replayers: &[Replayer],
        replay_every: u64,
        until: u64,
    ) -> Vec<Vec<Event>> {
        let mut events = vec![Vec::new(); peers.len()];
        for now in 1..until {
            for (index, replayer) in replayers.iter().enumerate() {
                if now % replay_every == 1 {
                    host.handle_datagram(now, 100 + index as u32, &replayer.hello);
                }
            }
            if now >= peers_from {
                for (index, peer) in peers.iter_mut().enumerate() {
                    for datagram in peer.poll_datagrams(now) {
                        host.handle_datagram(now, 10 + index as u32, &datagram);
                    }
                }
            }
            let mut to_replayers = Vec::new();
            host.poll(now, |to, datagram| match to {
                10..100 => {
                    if let Some(peer) = peers.get_mut(to as usize - 10) {
                        peer.handle_datagram(now, datagram);
                    }
                }
                _ => to_replayers.push((to, datagram.to_vec())),
            });
            for (to, datagram) in to_replayers {
                let Some(replayer) = replayers.get(to as usize - 100) else {
                    continue;
                };
                if let Some(answer) = replayer.answer(&datagram) {
                    host.handle_datagram(now, to, &answer);
                }
            }
            for (index, peer) in peers.iter_mut().enumerate() {
                events[index].extend(peer.drain_events());
            }
        }
        events
    }

    fn synchronized(events: &[Event]) -> bool {
        events
            .iter()
            .any(|event| matches!(event, Event::Synchronized { .. }))
    }

    #[test]
    fn a_captured_hello_replayed_every_second_never_holds_the_seat_a_real_joiner_takes() {
        let mut host = open_host(0);
        let mut real = joiner(PlayerSlots::single(1), 9);
        let squatter = Replayer::capturing(&mut real);
        // The squatter is first, and keeps at it the whole time.
        let events = besieged(
            &mut host,
            std::slice::from_mut(&mut real),
            500,
            &[squatter],
            1_000,
            4_000,
        );
        assert!(synchronized(&events[0]), "{:?}", events[0]);
        assert!(
            !events[0]
                .iter()
                .any(|event| matches!(event, Event::Rejected(_))),
            "{:?}",
            events[0]
        );
        let joined = host.events().any(|event| {
            matches!(
                event,
                netcode::netplay::NetplayEvent::PeerSynchronized { .. }
            )
        });
        assert!(joined, "the host plays with the real joiner");
        assert_eq!(host.endpoint_count(), 1, "the squatter holds no endpoint");
        assert!(host.unproven_count() <= 1);
    }

    #[test]
    fn of_two_joiners_welcomed_for_one_slot_the_first_to_prove_its_key_plays_and_the_other_is_refused(
    ) {
        let mut host = open_host(0);
        let mut joiners = vec![
            joiner(PlayerSlots::single(1), 9),
            joiner(PlayerSlots::single(1), 10),
        ];
        let events = besieged(&mut host, &mut joiners, 1, &[], 1_000, 1_000);
        assert!(synchronized(&events[0]), "{:?}", events[0]);
        // Welcomed too, but refused once the other took the slot: never
        // told it synchronized, so it can ask for another slot.
        assert!(!synchronized(&events[1]), "{:?}", events[1]);
        assert!(
            events[1].contains(&Event::Disconnected {
                cause: DisconnectCause::Rejected(RejectReason::MatchFull),
            }),
            "{:?}",
            events[1]
        );
        assert_eq!(host.endpoint_count(), 1);
    }

    #[test]
    fn thirty_two_replayed_spectator_hellos_a_second_fill_no_spectator_place() {
        let mut host = open_host(2);
        let mut captured = joiner(PlayerSlots::NONE, 30);
        let replayer = Replayer::capturing(&mut captured);
        let replayers: Vec<Replayer> = (0..32)
            .map(|_| Replayer {
                hello: replayer.hello.clone(),
            })
            .collect();
        let mut spectators = vec![joiner(PlayerSlots::NONE, 31), joiner(PlayerSlots::NONE, 32)];
        let events = besieged(&mut host, &mut spectators, 1_500, &replayers, 1_000, 4_000);
        for events in &events {
            assert!(synchronized(events), "{events:?}");
        }
        assert_eq!(host.spectator_count(), 2);
        assert!(host.unproven_count() <= netcode::netplay::MAX_UNPROVEN);
    }

    #[test]
    fn a_hello_in_someone_elses_name_earns_them_no_more_bytes_than_it_cost() {
        let mut host = open_host(4);
        let player_hello = Replayer::capturing(&mut joiner(PlayerSlots::single(1), 9)).hello;
        let spectator_hello = Replayer::capturing(&mut joiner(PlayerSlots::NONE, 10)).hello;
        const VICTIMS: [u32; 2] = [50, 51];
        host.handle_datagram(1, VICTIMS[0], &player_hello);
        host.handle_datagram(1, VICTIMS[1], &spectator_hello);
        let mut sent = [(0usize, 0usize); 2];
        for now in (1..30_000).step_by(5) {
            host.poll(now, |to, datagram| {
                let victim = VICTIMS.iter().position(|&victim| victim == to).unwrap();
                sent[victim].0 += 1;
                sent[victim].1 += datagram.len();
            });
        }
        for (victim, hello) in [&player_hello, &spectator_hello].into_iter().enumerate() {
            let (datagrams, bytes) = sent[victim];
            assert_eq!(datagrams, 1, "one answer: a cookie");
            assert!(
                bytes <= hello.len(),
                "{bytes} bytes for a Hello of {}",
                hello.len()
            );
        }
        assert_eq!(host.endpoint_count(), 0);
        assert_eq!(host.unproven_count(), 0);
    }

    #[test]
    fn a_flood_of_hellos_from_many_addresses_opens_at_most_the_cap() {
        let mut host = host(32);
        let mut hello = Vec::new();
        let header = Header {
            version: PROTOCOL_VERSION,
            session: SessionToken::UNKNOWN,
            sequence: Sequence(0),
        };
        codec::encode(
            &header,
            &Message::Hello(handshake(PlayerSlots::NONE)),
            &mut hello,
        )
        .unwrap();
        netcode::protocol::auth::seal_handshake(&mut hello);
        let mut answers = 0;
        for address in 100..10_100u32 {
            host.handle_datagram(1, address, &hello);
            host.poll(1, |_, _| answers += 1);
        }
        // Hellos without our cookie open nothing at all (protocol 9): each
        // is answered with a cookie, until the table of handshake
        // allowances is full of spenders; the rest is dropped unanswered.
        assert_eq!(host.spectator_count(), 0);
        assert_eq!(host.endpoint_count(), 0);
        assert_eq!(host.unproven_count(), 0);
        let limit = HandshakeLimit::default();
        assert_eq!(host.refused_handshakes(), 10_000 - limit.addresses as u64);
        assert!(answers <= limit.addresses, "{answers} answers");
    }

    #[test]
    fn hellos_repeated_from_one_address_are_answered_only_at_the_handshake_rate() {
        let mut host = host(0);
        let mut hello = Vec::new();
        let header = Header {
            version: PROTOCOL_VERSION,
            session: SessionToken::UNKNOWN,
            sequence: Sequence(0),
        };
        codec::encode(
            &header,
            &Message::Hello(handshake(PlayerSlots::NONE)),
            &mut hello,
        )
        .unwrap();
        netcode::protocol::auth::seal_handshake(&mut hello);
        let mut answers = 0;
        for now in 1..=2_000u64 {
            host.handle_datagram(now, 7, &hello);
            host.poll(now, |to, _| {
                assert_eq!(to, 7);
                answers += 1
            });
        }
        let limit = HandshakeLimit::default();
        // The burst at 1 ms, then one per refill interval.
        assert_eq!(
            answers,
            limit.burst as usize + (2_000 - 1) / limit.refill_ms as usize
        );
        assert_eq!(host.refused_handshakes(), 2_000 - answers as u64);
    }
}

// ---------------------------------------------------------------- one link

mod link {
    use super::handshake;
    use netcode::input::Buttons;
    use netcode::protocol::*;
    use netcode::rollback::Frame;

    /// Our endpoint, connected to a peer that from now on speaks only
    /// through `Forger`.
    fn connected() -> (PeerEndpoint, Forger) {
        let mut ours = PeerEndpoint::new(
            EndpointConfig::host(SessionToken(77), handshake(PlayerSlots::single(0))),
            0,
        )
        .unwrap();
        let mut theirs =
            PeerEndpoint::new(EndpointConfig::joiner(handshake(PlayerSlots::single(1))), 0)
                .unwrap();
        for now in 1..5 {
            for datagram in theirs.poll_datagrams(now) {
                ours.handle_datagram(now, &datagram);
            }
            for datagram in ours.poll_datagrams(now) {
                theirs.handle_datagram(now, &datagram);
            }
        }
        assert!(ours.is_running() && theirs.is_running());
        ours.drain_events().for_each(drop);
        let forger = Forger {
            session: theirs.session(),
            // Past the KeepAlive the peer proved its key with, and within
            // what the link takes as lost on the way.
            sequence: Sequence(60),
            peer: theirs,
        };
        (ours, forger)
    }

    /// Builds well-formed datagrams of the peer's session, each with the
    /// next sequence number, tagged with the peer's keys.
    struct Forger {
        session: SessionToken,
        sequence: Sequence,
        peer: PeerEndpoint,
    }

    impl Forger {
        fn datagram(&mut self, message: &Message) -> Vec<u8> {
            let header = Header {
                version: PROTOCOL_VERSION,
                session: self.session,
                sequence: self.sequence,
            };
            self.sequence = self.sequence.next();
            let mut out = Vec::new();
            codec::encode(&header, message, &mut out).unwrap();
            assert!(self.peer.seal(&mut out));
            out
        }

        /// Chunk `index` of a blob of `total_size` bytes of `fill`, carrying
        /// that blob's hash.
        fn chunk(&mut self, id: u32, total_size: usize, index: u32, fill: u8) -> Vec<u8> {
            let hash = netcode::checksum::Checksum::of(&vec![fill; total_size]).0;
            self.chunk_claiming(id, total_size, index, fill, hash)
        }

        fn chunk_claiming(
            &mut self,
            id: u32,
            total_size: usize,
            index: u32,
            fill: u8,
            hash: u64,
        ) -> Vec<u8> {
            let start = index as usize * BLOB_CHUNK_SIZE;
            let len = total_size.saturating_sub(start).min(BLOB_CHUNK_SIZE);
            self.datagram(&Message::BlobChunk(BlobChunk {
                id: BlobId(id),
                total_size: total_size as u32,
                hash,
                chunk_count: blob_chunk_count(total_size),
                index,
                bytes: vec![fill; len],
            }))
        }
    }

    fn received_blobs(endpoint: &mut PeerEndpoint) -> Vec<(BlobId, Vec<u8>)> {
        endpoint
            .drain_events()
            .filter_map(|event| match event {
                Event::BlobReceived { id, bytes } => Some((id, bytes)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_peer_cannot_start_a_second_blob_before_the_first_is_whole() {
        let (mut ours, mut peer) = connected();
        let size = 3 * BLOB_CHUNK_SIZE - 100;
        ours.handle_datagram(10, &peer.chunk(5, size, 0, 0xA5));
        // Each a fresh id announcing the largest size: each used to cost
        // a fresh 16 MiB.
        for id in 6..100 {
            ours.handle_datagram(10, &peer.chunk(id, MAX_BLOB_SIZE, 0, 1));
        }
        assert_eq!(ours.stats().dropped_unexpected, 94);
        for index in 1..3 {
            ours.handle_datagram(11, &peer.chunk(5, size, index, 0xA5));
        }
        assert_eq!(
            received_blobs(&mut ours),
            vec![(BlobId(5), vec![0xA5; size])]
        );
        // Older ids stay over; a newer one may start now.
        ours.handle_datagram(12, &peer.chunk(4, 10, 0, 1));
        assert!(received_blobs(&mut ours).is_empty());
        ours.handle_datagram(12, &peer.chunk(6, 10, 0, 2));
        assert_eq!(received_blobs(&mut ours), vec![(BlobId(6), vec![2; 10])]);
    }

    #[test]
    fn a_blob_whose_bytes_do_not_hash_to_what_its_chunks_said_is_never_handed_on() {
        let (mut ours, mut peer) = connected();
        let size = 2 * BLOB_CHUNK_SIZE + 10;
        let hash_of_other_bytes = netcode::checksum::Checksum::of(&vec![0xA5; size]).0;
        for index in 0..3 {
            ours.handle_datagram(
                10,
                &peer.chunk_claiming(5, size, index, 0x5A, hash_of_other_bytes),
            );
        }
        assert!(received_blobs(&mut ours).is_empty());
        assert_eq!(ours.stats().blobs_refused, 1);
        // A chunk claiming another hash than the blob's first is not taken.
        ours.handle_datagram(11, &peer.chunk(6, size, 0, 1));
        let malformed = ours.stats().dropped_malformed;
        ours.handle_datagram(11, &peer.chunk_claiming(6, size, 1, 1, 7));
        assert_eq!(ours.stats().dropped_malformed, malformed + 1);
        for index in 1..3 {
            ours.handle_datagram(12, &peer.chunk(6, size, index, 1));
        }
        assert_eq!(received_blobs(&mut ours), vec![(BlobId(6), vec![1; size])]);
    }

    #[test]
    fn a_blob_announcing_16_mib_costs_memory_only_for_the_bytes_sent() {
        let (mut ours, mut peer) = connected();
        let first = peer.chunk(8, MAX_BLOB_SIZE, 0, 3);
        let memory = allocation_counter::measure(|| ours.handle_datagram(10, &first));
        // The chunk's bytes and one flag per chunk (15,253 of them).
        assert!(
            memory.bytes_max < 64 * 1024,
            "{} bytes held for one chunk",
            memory.bytes_max
        );
    }

    #[test]
    fn a_chunk_beyond_what_an_ack_can_report_is_dropped() {
        let (mut ours, mut peer) = connected();
        let before = ours.stats().dropped_unexpected;
        ours.handle_datagram(10, &peer.chunk(3, MAX_BLOB_SIZE, BLOB_ACK_WINDOW + 1, 1));
        assert_eq!(ours.stats().dropped_unexpected, before + 1);
        ours.handle_datagram(10, &peer.chunk(3, MAX_BLOB_SIZE, BLOB_ACK_WINDOW, 1));
        assert_eq!(ours.stats().dropped_unexpected, before + 1);
    }

    #[test]
    fn hellos_alone_do_not_keep_a_connection_alive() {
        // Anyone can send a Hello in the peer's name: it is answered, but
        // the connection still times out when nothing else comes.
        let (mut ours, mut peer) = connected();
        let mut welcomes = 0;
        let mut cause = None;
        for now in (100..7_000).step_by(100) {
            ours.handle_datagram(
                now,
                &peer.datagram(&Message::Hello(handshake(PlayerSlots::single(1)))),
            );
            ours.poll(now, &mut |datagram| {
                welcomes += usize::from(datagram[3] == 2);
            });
            for event in ours.drain_events() {
                if let Event::Disconnected { cause: why } = event {
                    cause.get_or_insert(why);
                }
            }
        }
        assert!(welcomes > 0);
        assert!(
            matches!(cause, Some(DisconnectCause::Timeout { .. })),
            "{cause:?}"
        );
    }

    /// Our endpoint after sending `frames` frames of input, none acknowledged.
    fn sent_frames(ours: &mut PeerEndpoint, frames: u32) {
        for frame in 0..frames {
            ours.add_local_input(Frame::new(frame), &[Buttons::A])
                .unwrap();
        }
        ours.poll(9, &mut |_| {});
    }

    #[test]
    fn an_ack_of_frames_we_never_sent_is_dropped_whole() {
        let (mut ours, mut peer) = connected();
        sent_frames(&mut ours, 5);
        ours.handle_datagram(
            10,
            &peer.datagram(&Message::InputAck {
                next_expected: Frame::new(10_000),
            }),
        );
        assert_eq!(ours.stats().dropped_implausible, 1);
        assert_eq!(ours.stats().unacked_frames, 5, "still resent");
        ours.handle_datagram(
            11,
            &peer.datagram(&Message::InputAck {
                next_expected: Frame::new(3),
            }),
        );
        assert_eq!(ours.stats().unacked_frames, 2);
    }

    #[test]
    fn a_frame_advantage_no_machine_can_have_is_not_taken() {
        let (mut ours, mut peer) = connected();
        for frame_advantage in [-2_711, i16::MIN, 30_000] {
            ours.handle_datagram(
                10,
                &peer.datagram(&Message::QualityReport(QualityReport {
                    timestamp_ms: 10,
                    frame_advantage,
                    input_delay: 2,
                    run_ahead: 0,
                })),
            );
        }
        assert_eq!(ours.stats().dropped_implausible, 3);
        assert!(!ours
            .drain_events()
            .any(|event| matches!(event, Event::RemoteFrameAdvantage(_))));
        ours.handle_datagram(
            11,
            &peer.datagram(&Message::QualityReport(QualityReport {
                timestamp_ms: 11,
                frame_advantage: -3,
                input_delay: 2,
                run_ahead: 0,
            })),
        );
        assert!(ours
            .drain_events()
            .any(|event| event == Event::RemoteFrameAdvantage(-3)));
    }

    #[test]
    fn a_checksum_report_of_frame_2_to_the_32_does_not_turn_desync_detection_off() {
        let (mut ours, mut peer) = connected();
        sent_frames(&mut ours, 61);
        let report = |frame: u32, checksum: u64| Message::ChecksumReport {
            entries: vec![ChecksumEntry {
                frame: Frame::new(frame),
                checksum: netcode::checksum::Checksum(checksum),
            }],
        };
        ours.handle_datagram(10, &peer.datagram(&report(u32::MAX, 1)));
        assert_eq!(ours.stats().dropped_implausible, 1);
        ours.handle_datagram(11, &peer.datagram(&report(60, 2)));
        assert!(ours.drain_events().any(|event| event
            == Event::RemoteChecksum {
                frame: Frame::new(60),
                checksum: netcode::checksum::Checksum(2),
            }));
    }

    #[test]
    fn a_start_asking_to_wait_a_minute_is_refused() {
        let (mut ours, mut peer) = connected();
        ours.handle_datagram(10, &peer.datagram(&Message::Start { delay_ms: 65_535 }));
        assert_eq!(ours.stats().dropped_implausible, 1);
        assert!(!ours
            .drain_events()
            .any(|event| matches!(event, Event::StartRequested { .. })));
        let mut acks = 0;
        ours.poll(11, &mut |datagram| acks += usize::from(datagram[3] == 15));
        assert_eq!(acks, 0, "nothing to acknowledge");
        ours.handle_datagram(
            12,
            &peer.datagram(&Message::Start {
                delay_ms: MAX_START_DELAY_MS,
            }),
        );
        assert!(ours.drain_events().any(|event| event
            == Event::StartRequested {
                delay_ms: MAX_START_DELAY_MS
            }));
    }

    #[test]
    fn a_sequence_number_pushed_far_ahead_does_not_deafen_the_link() {
        let (mut ours, mut peer) = connected();
        sent_frames(&mut ours, 5);
        ours.handle_datagram(10, &peer.datagram(&Message::KeepAlive));
        let next = peer.sequence;
        peer.sequence = Sequence(next.0 + 300);
        ours.handle_datagram(11, &peer.datagram(&Message::KeepAlive));
        assert_eq!(ours.stats().dropped_implausible, 1);
        // The peer's next real datagram is taken.
        peer.sequence = next;
        ours.handle_datagram(
            12,
            &peer.datagram(&Message::InputAck {
                next_expected: Frame::new(5),
            }),
        );
        assert_eq!(ours.stats().unacked_frames, 0);
    }

    #[test]
    fn we_send_one_blob_at_a_time() {
        let (mut ours, _) = connected();
        let first = ours.send_blob(vec![1; 10]).unwrap();
        assert_eq!(
            ours.send_blob(vec![2; 10]),
            Err(EndpointError::BlobInProgress { id: first })
        );
    }

    #[test]
    fn a_peer_that_never_acknowledges_loses_its_link_not_our_memory() {
        let (mut ours, mut peer) = connected();
        let mut cause = None;
        for frame in 0..MAX_UNACKED_FRAMES + 100 {
            let now = 10 + u64::from(frame) * 16;
            // Alive (so no timeout), but never an ack.
            ours.handle_datagram(now, &peer.datagram(&Message::KeepAlive));
            if ours.add_local_input(Frame::new(frame), &[Buttons::A])
                == Err(EndpointError::Disconnected)
            {
                break;
            }
            ours.poll(now, &mut |_| {});
            assert!(ours.stats().unacked_frames <= MAX_UNACKED_FRAMES);
            for event in ours.drain_events() {
                if let Event::Disconnected { cause: why } = event {
                    cause.get_or_insert(why);
                }
            }
        }
        assert_eq!(
            cause,
            Some(DisconnectCause::Unacknowledged {
                frames: MAX_UNACKED_FRAMES
            })
        );
    }
}

// ---------------------------------------------------------------- the path

/// What a machine between the peers can do to their datagrams.
mod path {
    use super::handshake;
    use netcode::input::Buttons;
    use netcode::protocol::*;
    use netcode::rollback::Frame;

    /// A host and a joiner with secrets of their own, handshake done,
    /// events drained.
    fn pair() -> (PeerEndpoint, PeerEndpoint) {
        let mut host_config =
            EndpointConfig::host(SessionToken(77), handshake(PlayerSlots::single(0)));
        host_config.secret = LinkSecret::from_bytes([0x11; 32]);
        let mut joiner_config = EndpointConfig::joiner(handshake(PlayerSlots::single(1)));
        joiner_config.secret = LinkSecret::from_bytes([0x22; 32]);
        let mut host = PeerEndpoint::new(host_config, 0).unwrap();
        let mut joiner = PeerEndpoint::new(joiner_config, 0).unwrap();
        for now in 1..5 {
            for datagram in joiner.poll_datagrams(now) {
                host.handle_datagram(now, &datagram);
            }
            for datagram in host.poll_datagrams(now) {
                joiner.handle_datagram(now, &datagram);
            }
        }
        assert!(host.is_running() && joiner.is_running());
        host.drain_events().for_each(drop);
        joiner.drain_events().for_each(drop);
        (host, joiner)
    }

    fn inputs_received(endpoint: &mut PeerEndpoint) -> Vec<(u8, Frame, Buttons)> {
        endpoint
            .drain_events()
            .filter_map(|event| match event {
                Event::RemoteInput {
                    player,
                    frame,
                    buttons,
                } => Some((player, frame, buttons)),
                _ => None,
            })
            .collect()
    }

    /// The joiner's next input datagram, carrying A on frame 0.
    fn input_datagram(joiner: &mut PeerEndpoint) -> Vec<u8> {
        joiner.add_local_input(Frame::ZERO, &[Buttons::A]).unwrap();
        joiner
            .poll_datagrams(10)
            .into_iter()
            .find(|datagram| datagram[3] == 4)
            .expect("an input datagram went out")
    }

    #[test]
    fn a_datagram_changed_on_the_path_is_dropped_and_counted_never_decoded() {
        let (mut host, mut joiner) = pair();
        let datagram = input_datagram(&mut joiner);
        let bits = datagram.len() * 8;
        for bit in 0..bits {
            let mut changed = datagram.clone();
            changed[bit / 8] ^= 1 << (bit % 8);
            host.handle_datagram(11, &changed);
        }
        for cut in 1..datagram.len() {
            host.handle_datagram(11, &datagram[..cut]);
        }
        let mut longer = datagram.clone();
        longer.push(0);
        host.handle_datagram(11, &longer);
        assert_eq!(inputs_received(&mut host), vec![]);
        assert_eq!(host.stats().dropped_bad(), (bits + datagram.len()) as u64);
        host.handle_datagram(12, &datagram);
        assert_eq!(
            inputs_received(&mut host),
            vec![(1, Frame::ZERO, Buttons::A)],
            "the datagram as sent is taken"
        );
    }

    #[test]
    fn inputs_forged_with_the_session_token_but_not_the_key_are_dropped() {
        let (mut host, mut joiner) = pair();
        // Everything the path sees: the token, the header, the layout.
        let seen = input_datagram(&mut joiner);
        let Ok((header, Message::Input(mut input))) = codec::decode(auth::without_tag(&seen))
        else {
            panic!("an input datagram decodes");
        };
        input.inputs = vec![Buttons::START];
        let forged_header = Header {
            sequence: header.sequence.next(),
            ..header
        };
        let mut forged = Vec::new();
        codec::encode(&forged_header, &Message::Input(input), &mut forged).unwrap();
        forged.extend_from_slice(&seen[seen.len() - auth::TAG_BYTES..]);
        host.handle_datagram(11, &forged);
        assert_eq!(inputs_received(&mut host), vec![]);
        assert_eq!(host.stats().dropped_wrong_token, 1);
    }

    fn host() -> PeerEndpoint {
        PeerEndpoint::new(
            EndpointConfig::host(SessionToken(77), handshake(PlayerSlots::single(0))),
            0,
        )
        .unwrap()
    }

    fn joiner() -> PeerEndpoint {
        PeerEndpoint::new(EndpointConfig::joiner(handshake(PlayerSlots::single(1))), 0).unwrap()
    }

    /// Whether the joiner gave up on the host.
    fn gave_up(joiner: &mut PeerEndpoint) -> bool {
        joiner
            .drain_events()
            .any(|event| matches!(event, Event::Rejected(_) | Event::Disconnected { .. }))
            || joiner.state() == ConnectionState::Disconnected
    }

    #[test]
    fn no_bit_flipped_in_a_handshake_makes_the_joiner_give_up() {
        let hello = joiner().poll_datagrams(1).remove(0);
        let welcome = {
            let mut host = host();
            host.handle_datagram(1, &hello);
            host.poll_datagrams(1).remove(0)
        };
        for bit in 0..welcome.len() * 8 {
            let mut joiner = joiner();
            joiner.poll_datagrams(1);
            let mut changed = welcome.clone();
            changed[bit / 8] ^= 1 << (bit % 8);
            joiner.handle_datagram(2, &changed);
            assert!(!gave_up(&mut joiner), "Welcome bit {bit}");
            joiner.handle_datagram(3, &welcome);
            assert!(joiner.is_running(), "the intact Welcome after bit {bit}");
        }
        for bit in 0..hello.len() * 8 {
            let mut changed = hello.clone();
            changed[bit / 8] ^= 1 << (bit % 8);
            let mut host = host();
            host.handle_datagram(1, &changed);
            let mut joiner = joiner();
            joiner.poll_datagrams(1);
            for answer in host.poll_datagrams(2) {
                joiner.handle_datagram(2, &answer);
            }
            assert!(!gave_up(&mut joiner), "Hello bit {bit}");
        }
    }

    #[test]
    fn a_datagram_sent_back_to_its_sender_is_dropped() {
        let (_, mut joiner) = pair();
        let datagram = input_datagram(&mut joiner);
        joiner.handle_datagram(11, &datagram);
        assert_eq!(inputs_received(&mut joiner), vec![]);
        assert_eq!(joiner.stats().dropped_wrong_token, 1);
    }
}
