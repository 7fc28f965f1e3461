//! Spectators on the seeded simulated network: one joining mid-match gets
//! the host's savestate of a recent final frame and the final inputs from
//! there, plays them on its own game through a jitter buffer and logs the
//! same checksums as the players, catching up to a small delay; one that
//! vanishes costs the players nothing.

use netcade::engine::sinks::compare_checksum_logs;
use netcade::net::sim::LinkConditions;
use netcode::netplay::{NetplayEvent, SpectatorDrop, SpectatorEvent, SpectatorPhase};
use support::load_duel_dojo;
use support::netplay::{any_event, party_game, Cluster, MatchSetup};

const WATCHER: u8 = 7;

/// 40 ms each way, ±10 ms, 2 % loss.
fn bumpy() -> LinkConditions {
    LinkConditions {
        latency_ms: 40,
        jitter_ms: 10,
        loss: 0.02,
        ..LinkConditions::PERFECT
    }
}

fn watched_match<G: std::ops::DerefMut<Target: netcode::emulator::Emulator>>(
    seed: u64,
    game: impl FnMut(u8) -> G,
) -> (Cluster<G>, MatchSetup) {
    let setup = MatchSetup::new(2, seed, bumpy());
    let cluster = Cluster::with_configs(setup, game, |me, config| {
        if me == 0 {
            config.accept_spectators = true;
        }
    });
    (cluster, setup)
}

#[test]
fn a_spectator_joining_mid_match_plays_the_players_frames_and_settles_a_few_frames_behind() {
    let (mut cluster, setup) = watched_match(61, |_| party_game());
    cluster.run_until(10_000);
    let live_at_join = cluster.machines[0].current_frame();
    assert!(live_at_join > 500, "the match is well under way");
    cluster.add_watcher(&setup, WATCHER, party_game());
    cluster.run_until(30_000);

    let watcher = &cluster.watchers[0];
    let joined = watcher
        .node
        .stats
        .joined_at_frame
        .expect("the state arrived");
    assert!(
        joined >= live_at_join && joined < live_at_join + 30,
        "joined at frame {joined}, live was {live_at_join}: a recent final frame"
    );
    let played = watcher.node.sink.end_frame() - joined;
    assert!(played > 1000, "played {played} frames");
    for machine in &cluster.machines {
        let comparison = compare_checksum_logs(&watcher.node.sink, &machine.sink);
        assert_eq!(comparison.first_difference, None, "{comparison:?}");
        assert!(comparison.compared as u32 > played - 60, "{comparison:?}");
    }
    // It buffered, caught up what arrived while the state was on its way,
    // and holds a delay of a few frames behind the newest final frame.
    let delay = watcher.node.stats.median_delay().expect("frames shown");
    let aimed = watcher.node.spectator.jitter().delay_frames();
    assert!(aimed >= 6, "{aimed}");
    assert!(delay <= aimed + 4, "median delay {delay}, aimed at {aimed}");
    let live = cluster.machines[0].current_frame();
    let behind = live - watcher.node.current_frame();
    assert!(behind < 40, "{behind} frames behind the host's present");
    // Its estimate of how far behind live it is holds what the host shows.
    let estimate = watcher.node.spectator.behind_live();
    assert!(
        estimate.abs_diff(behind) <= 4,
        "estimated {estimate}, really {behind}"
    );
    assert!(any_event(&cluster.machines[0].notes.events, |e| matches!(
        e,
        NetplayEvent::SpectatorJoined { .. }
    )));
}

#[test]
fn a_spectator_far_behind_after_joining_catches_up_with_video_off() {
    // A slow first link: the state and the backlog arrive late, then the
    // link gets fast and the spectator must run extra frames to catch up.
    let (mut cluster, setup) = watched_match(62, |_| party_game());
    cluster.run_until(3_000);
    cluster.add_watcher(&setup, WATCHER, party_game());
    let slow = LinkConditions {
        latency_ms: 600,
        ..LinkConditions::PERFECT
    };
    cluster.net().set_link_both_ways(0, WATCHER, slow);
    // The handshake takes five trips (Hello, cookie, Hello, Welcome, the
    // key's proof) before the state goes: 3 s on this link.
    cluster.run_until(7_000);
    cluster.net().set_link_both_ways(0, WATCHER, bumpy());
    cluster.run_until(20_000);
    let watcher = &cluster.watchers[0];
    assert!(
        watcher.node.stats.catch_up_frames > 20,
        "caught up with {} extra frames",
        watcher.node.stats.catch_up_frames
    );
    let delay = watcher.node.stats.median_delay().unwrap();
    assert!(delay <= watcher.node.spectator.jitter().delay_frames() + 4);
    let comparison = compare_checksum_logs(&watcher.node.sink, &cluster.machines[1].sink);
    assert_eq!(comparison.first_difference, None);
}

#[test]
fn a_spectator_that_vanishes_costs_the_players_nothing_and_is_forgotten() {
    let (mut cluster, setup) = watched_match(63, |_| party_game());
    cluster.run_until(2_000);
    cluster.add_watcher(&setup, WATCHER, party_game());
    cluster.run_until(6_000);
    assert_eq!(cluster.machines[0].netplay.spectator_count(), 1);
    let stalls_before: Vec<u64> = cluster
        .machines
        .iter()
        .map(|m| m.stats.waiting_ticks + m.stats.stalled_ticks)
        .collect();
    cluster.isolate(WATCHER);
    cluster.run_until(16_000);
    let host = &cluster.machines[0];
    assert_eq!(host.netplay.spectator_count(), 0);
    assert_eq!(
        host.netplay.endpoint_count(),
        1,
        "only the player's link is left"
    );
    assert!(any_event(&host.notes.events, |e| matches!(
        e,
        NetplayEvent::SpectatorLeft
    )));
    for (machine, before) in cluster.machines.iter().zip(stalls_before) {
        let stalls = machine.stats.waiting_ticks + machine.stats.stalled_ticks;
        assert!(
            stalls - before < 30,
            "{} stall ticks after the spectator vanished",
            stalls - before
        );
    }
    cluster.assert_all_in_sync_without_trouble(900);
    // The spectator gave up on the host too, and says so.
    let watcher = &cluster.watchers[0];
    assert_eq!(watcher.node.spectator.phase(), SpectatorPhase::Ended);
    assert!(watcher
        .events
        .iter()
        .any(|(_, e)| matches!(e, SpectatorEvent::HostGone(_))));
}

#[test]
fn a_spectator_of_a_real_core_joins_from_its_savestate_and_agrees_with_the_players() {
    let (mut cluster, setup) = watched_match(64, |_| load_duel_dojo());
    cluster.run_until(5_000);
    cluster.add_watcher(&setup, WATCHER, load_duel_dojo());
    cluster.run_until(12_000);
    let watcher = &cluster.watchers[0];
    assert!(watcher.node.stats.joined_at_frame.unwrap() > 200);
    let comparison = compare_checksum_logs(&watcher.node.sink, &cluster.machines[0].sink);
    assert_eq!(comparison.first_difference, None, "{comparison:?}");
    assert!(comparison.compared > 300, "{comparison:?}");
}

#[test]
fn a_spectator_whose_savestate_takes_longer_than_the_backlog_reaches_is_dropped_while_it_is_still_sent(
) {
    let (mut cluster, setup) = watched_match(65, |_| party_game());
    cluster.run_until(2_000);
    // A patient spectator: it keeps the link however long the host is silent.
    cluster.add_watcher_with(&setup, WATCHER, party_game(), |config| {
        config.interrupt_after_ms = 100_000;
        config.disconnect_after_ms = 100_000;
    });
    // Until the host welcomed it (it holds it unproven, protocol 9)…
    while cluster.machines[0].netplay.unproven_count() == 0 {
        cluster.step();
    }
    // …now nothing more from the host reaches it (its savestate included)
    // while it keeps telling the host it is there.
    cluster.net().partition_one_way(0, WATCHER);
    let cut_at = cluster.now;
    cluster.run_until(cut_at + 65_000);
    assert!(
        cluster.machines[0].current_frame() > 3600 + 120,
        "more than the backlog's 3600 frames went by"
    );
    // Heard all along, but its first frame left the backlog: the host stops
    // sending it a savestate it could never be fed on from.
    let host = &cluster.machines[0];
    assert!(
        any_event(&host.notes.events, |e| matches!(
            e,
            NetplayEvent::SpectatorDropped {
                reason: SpectatorDrop::FellBehind { frames: 3600 }
            }
        )),
        "{:?}",
        host.notes.events.iter().rev().take(5).collect::<Vec<_>>()
    );
    assert_eq!(host.netplay.spectator_count(), 0);
    cluster.net().heal(0, WATCHER);
    // The host's goodbye was lost in the partition; the spectator learns
    // the host is gone from its silence (100 s, as configured above).
    cluster.run_until(cut_at + 101_000);
    cluster.assert_all_in_sync_without_trouble(4000);
    assert!(cluster.watchers[0]
        .events
        .iter()
        .any(|(_, e)| matches!(e, SpectatorEvent::HostGone(_))));
}

/// A spectator at address 1 and a bare host endpoint (the protocol's, not
/// netcade's host) at address 0, passing datagrams to each other directly
/// every millisecond: a host that may misbehave.
struct BareHost {
    host: netcode::protocol::PeerEndpoint,
    spectator: netcode::netplay::SpectatorSession<u8>,
    now: u64,
}

impl BareHost {
    fn new() -> BareHost {
        use netcode::protocol::{EndpointConfig, Handshake, PlayerSlots, SessionToken};
        let setup = MatchSetup::new(2, 66, LinkConditions::PERFECT);
        let handshake = Handshake {
            core_name: support::netplay::CORE_NAME.into(),
            core_version: support::netplay::CORE_VERSION.into(),
            content_hash: support::netplay::CONTENT_HASH,
            local_slots: PlayerSlots(0b11),
            settings: support::netplay::settings(&setup),
            ..Handshake::default()
        };
        let host = netcode::protocol::PeerEndpoint::new(
            EndpointConfig::host(SessionToken(0x5EED), handshake),
            0,
        )
        .unwrap();
        let config = netcode::netplay::SpectatorConfig::new(
            0u8,
            support::netplay::CORE_NAME,
            support::netplay::CORE_VERSION,
            support::netplay::CONTENT_HASH,
            support::netplay::settings(&setup),
        );
        let spectator = netcode::netplay::SpectatorSession::new(config, 0).unwrap();
        BareHost {
            host,
            spectator,
            now: 0,
        }
    }

    fn step(&mut self) {
        self.now += 1;
        let now = self.now;
        let (host, spectator) = (&mut self.host, &mut self.spectator);
        spectator.poll(now, |_, datagram| host.handle_datagram(now, datagram));
        host.poll(now, &mut |datagram| {
            spectator.handle_datagram(now, 0, datagram)
        });
    }

    fn run_until_welcomed(&mut self) {
        while self.spectator.phase() == SpectatorPhase::Connecting {
            self.step();
            assert!(self.now < 2_000, "welcomed");
        }
    }

    fn events(&mut self) -> Vec<SpectatorEvent> {
        std::iter::from_fn(|| self.spectator.next_event()).collect()
    }
}

#[test]
fn a_savestate_that_does_not_expand_ends_the_spectator_with_a_reason_and_nothing_to_load() {
    let mut wire = BareHost::new();
    wire.run_until_welcomed();
    wire.host
        .send_blob(vec![7, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0x7F, 1, 2, 3])
        .unwrap();
    for _ in 0..200 {
        wire.step();
    }
    assert_eq!(wire.spectator.phase(), SpectatorPhase::Ended);
    assert!(wire.spectator.take_state().is_none());
    assert!(wire
        .events()
        .iter()
        .any(|e| matches!(e, SpectatorEvent::BadState(_))));
}

#[test]
fn a_host_sending_far_more_frames_than_any_match_runs_is_left_rather_than_buffered_without_end() {
    use netcode::input::Buttons;
    use netcode::rollback::Frame;
    let mut wire = BareHost::new();
    wire.run_until_welcomed();
    let state = netcode::netplay::checkpoint_state::compress_checkpoint(Frame::ZERO, &[0; 16]);
    wire.host.send_blob(state).unwrap();
    // As netcade's host does: inputs only once the savestate is delivered.
    while wire.spectator.phase() != SpectatorPhase::Watching {
        wire.step();
        assert!(wire.now < 4_000, "the savestate arrives");
    }
    let mut frame = Frame::ZERO;
    let limit = netcode::netplay::spectator::MAX_BUFFERED_FRAMES as u32;
    // Nothing is played: every frame sent stays buffered.
    while wire.spectator.phase() != SpectatorPhase::Ended {
        for _ in 0..100 {
            if wire.host.stats().unacked_frames < 1000 {
                wire.host
                    .add_local_input(frame, &[Buttons::NONE, Buttons::NONE])
                    .unwrap();
                frame = frame.next();
            }
        }
        wire.step();
        assert!(frame.number() < 2 * limit, "left before {frame}");
    }
    assert!(frame.number() > limit);
    assert!(wire.spectator.buffered() == 0, "what it held is dropped");
    assert!(wire
        .events()
        .iter()
        .any(|e| matches!(e, SpectatorEvent::Flooded)));
}

#[test]
fn a_host_heard_all_along_that_sends_nothing_to_watch_ends_the_spectator_with_a_reason() {
    let mut wire = BareHost::new();
    wire.run_until_welcomed();
    // The host answers, keeps the link alive, and never sends its state.
    while wire.spectator.phase() != SpectatorPhase::Ended {
        wire.step();
        assert!(wire.now < 15_000, "still waiting after {} ms", wire.now);
    }
    assert!(wire.now >= 10_000, "gave up after {} ms", wire.now);
    assert!(wire
        .events()
        .iter()
        .any(|e| matches!(e, SpectatorEvent::Stalled { .. })));
}

#[test]
fn a_spectator_whose_game_diverged_says_so_and_repairs_it_from_the_hosts_state() {
    use netcode::input::Buttons;
    use netcode::protocol::{codec, Message};
    let (mut cluster, setup) = watched_match(66, |_| party_game());
    cluster.run_until(3_000);
    cluster.add_watcher(&setup, WATCHER, party_game());
    // For 40 ms the host feeds the spectator other buttons than the
    // players pressed: from then on its game is not theirs.
    cluster.tamper = Some(Box::new(|now, from, to, datagram| {
        if from != 0 || to != WATCHER || !(6_000..6_040).contains(&now) {
            return;
        }
        let Ok((header, Message::Input(mut input))) = codec::decode(datagram) else {
            return;
        };
        for buttons in &mut input.inputs {
            *buttons = Buttons::from_bits(buttons.bits() ^ Buttons::A.bits());
        }
        codec::encode(&header, &Message::Input(input), datagram).expect("still fits");
    }));
    cluster.run_until(12_000);
    let watcher = &cluster.watchers[0];
    let desync = watcher.events.iter().find_map(|(_, event)| match event {
        SpectatorEvent::Desync { frame, .. } => Some(*frame),
        _ => None,
    });
    let desync = desync.expect("the spectator said its game diverged");
    assert!(watcher
        .events
        .iter()
        .any(|(_, event)| matches!(event, SpectatorEvent::RepairArrived { .. })));
    assert!(watcher.node.stats.repairs >= 1);
    assert!(any_event(&cluster.machines[0].notes.events, |e| matches!(
        e,
        NetplayEvent::SpectatorDesync { .. }
    )));
    // Repaired: the frames it plays from a second after on are the players'.
    let host = &cluster.machines[0].sink;
    let mut compared = 0;
    for (frame, checksum) in watcher.checksums() {
        if frame > desync.number() + 60 && frame < host.end_frame() {
            assert_eq!(host.get(frame).flatten(), Some(checksum), "frame {frame}");
            compared += 1;
        }
    }
    assert!(compared > 200, "{compared} frames compared");
}
