//! Start-up: machines at different distances from the host begin frame 0
//! together (seed 000's start-up advantage), the Start survives loss, a
//! member never restarts on a late copy, and the match stays in sync.

use netcade::net::sim::LinkConditions;
use netcode::netplay::{NetplayEvent, StartPhase};
use support::netplay::{party_game, Cluster, MatchSetup, PartyCluster};

/// One frame at 60 fps, in whole milliseconds (rounded up).
const FRAME_MS: u64 = 17;

/// Message kind of Start on the wire.
const START_KIND: usize = 14;

/// One-way latencies (ms) between machines: the host (0) is 10 ms from
/// machine 1, 80 ms from machine 2 and 40 ms from machine 3; 1↔2 50 ms,
/// 1↔3 30 ms, 2↔3 60 ms. With two machines the other one is 80 ms away.
fn one_way_ms(a: u8, b: u8, players: u8) -> u64 {
    if players == 2 {
        return 80;
    }
    match (a.min(b), a.max(b)) {
        (0, 1) => 10,
        (0, 2) => 80,
        (0, 3) => 40,
        (1, 2) => 50,
        (1, 3) => 30,
        (2, 3) => 60,
        pair => unreachable!("no machine pair {pair:?}"),
    }
}

/// A cluster of `players` machines at the distances above, each link
/// further conditioned by `extra` (its latency is replaced).
fn asymmetric_cluster(
    players: u8,
    seed: u64,
    extra: LinkConditions,
    compensate: bool,
) -> PartyCluster {
    let setup = MatchSetup::new(players, seed, extra);
    let mut cluster = Cluster::with_configs(
        setup,
        |_| party_game(),
        |_, config| config.compensate_start_latency = compensate,
    );
    for a in 0..players {
        for b in a + 1..players {
            let conditions = LinkConditions {
                latency_ms: one_way_ms(a, b, players),
                ..extra
            };
            cluster.sockets.net.set_link_both_ways(a, b, conditions);
        }
    }
    cluster
}

fn no_trouble() -> LinkConditions {
    LinkConditions::latency(0)
}

/// Plays on to `until` and checks the machines agree on at least
/// `at_least` frames, with no desync or disconnect anywhere.
fn plays_on_in_sync(cluster: &mut PartyCluster, until: u64, at_least: usize) {
    cluster.run_until(until);
    cluster.assert_all_in_sync_without_trouble(at_least);
    for machine in &cluster.machines {
        assert_eq!(
            machine.stats.start_outcomes_after_start, 0,
            "machine {} went back to starting after frame 0",
            machine.player
        );
    }
}

fn begin_together(players: u8, seed: u64) {
    let mut cluster = asymmetric_cluster(players, seed, no_trouble(), true);
    cluster.run_until_started(3_000);
    let moments = cluster.start_moments();
    let spread = cluster.start_spread();
    eprintln!("{players} machines began frame 0 at {moments:?} ms: spread {spread} ms");
    assert!(
        spread < FRAME_MS,
        "{players} machines began frame 0 {spread} ms apart: {moments:?}"
    );
    for machine in &cluster.machines {
        let starting = machine
            .notes
            .events
            .iter()
            .position(|(_, e)| matches!(e, NetplayEvent::Starting { .. }));
        let running = machine
            .notes
            .events
            .iter()
            .position(|(_, e)| *e == NetplayEvent::Running);
        assert!(
            starting.is_some() && starting < running,
            "machine {} announced the countdown before running",
            machine.player
        );
    }
    plays_on_in_sync(&mut cluster, 8_000, 400);
}

#[test]
fn two_machines_80_ms_apart_begin_frame_0_within_a_frame_of_each_other() {
    begin_together(2, 21);
}

#[test]
fn three_machines_at_asymmetric_distances_begin_frame_0_within_a_frame_of_each_other() {
    begin_together(3, 22);
}

#[test]
fn four_machines_at_asymmetric_distances_begin_frame_0_within_a_frame_of_each_other() {
    begin_together(4, 23);
}

#[test]
fn without_the_start_delay_the_machines_begin_frame_0_a_one_way_trip_apart() {
    for players in [2, 3, 4] {
        let spread_with = |compensate: bool| {
            let mut cluster = asymmetric_cluster(players, 24, no_trouble(), compensate);
            cluster.run_until_started(3_000);
            (cluster.start_spread(), cluster.start_moments())
        };
        let (with, with_moments) = spread_with(true);
        let (without, without_moments) = spread_with(false);
        eprintln!(
            "{players} machines: spread {with} ms with the start delay {with_moments:?}, \
             {without} ms without {without_moments:?}"
        );
        assert!(with < FRAME_MS);
        // The farthest member hears the Start 80 ms after the host sends it
        // and would start that much after the host.
        assert!(
            without >= 70,
            "{players} machines: without the start delay the spread is only {without} ms"
        );
    }
}

#[test]
fn the_start_survives_thirty_percent_loss() {
    let lossy = LinkConditions::latency(0).with_loss(0.3);
    // A seed whose loss takes a Start (protocol 9's handshake moved the draws).
    let mut cluster = asymmetric_cluster(3, 29, lossy, true);
    cluster.run_until_started(10_000);
    let spread = cluster.start_spread();
    let starts = cluster.sent_by_kind[START_KIND];
    eprintln!(
        "30% loss: began at {:?} ms (spread {spread} ms), {starts} Start datagrams for 2 members",
        cluster.start_moments()
    );
    assert!(starts > 2, "the loss made the host send Start again");
    // A resend carries the wait still left: a lost Start costs a resend, and
    // at worst a late start that time sync then absorbs.
    assert!(spread < 1_000, "began {spread} ms apart");
    plays_on_in_sync(&mut cluster, 15_000, 300);
}

/// Runs until the host has decided the start moment.
fn run_until_the_host_decides(cluster: &mut PartyCluster) {
    while cluster.machines[0].netplay.start_phase() == StartPhase::Waiting {
        assert!(cluster.now < 3_000, "the host never decided");
        cluster.step();
    }
}

#[test]
fn a_member_whose_acks_are_lost_keeps_its_start_and_ignores_late_copies() {
    let mut cluster = asymmetric_cluster(2, 26, no_trouble(), true);
    run_until_the_host_decides(&mut cluster);
    // Nothing from the member reaches the host for a second: no ack, no
    // input, so the host keeps resending Start after the member began.
    cluster.sockets.net.partition_one_way(1, 0);
    cluster.run_until(cluster.now + 1_000);
    cluster.sockets.net.heal(1, 0);
    let starts = cluster.sent_by_kind[START_KIND];
    assert!(
        starts >= 4,
        "the host resent Start while deaf to the member ({starts} sent)"
    );
    cluster.run_until_started(cluster.now + 1_000);
    let spread = cluster.start_spread();
    eprintln!(
        "acks lost: began at {:?} ms after {starts} Starts",
        cluster.start_moments()
    );
    assert!(spread < FRAME_MS, "began {spread} ms apart");
    let member = &cluster.machines[1];
    assert_eq!(member.netplay.started_at(), member.stats.started_at);
    plays_on_in_sync(&mut cluster, 8_000, 300);
}

#[test]
fn a_member_whose_start_is_lost_for_a_while_begins_late_on_a_resend_and_plays_in_sync() {
    let mut cluster = asymmetric_cluster(2, 27, no_trouble(), true);
    // Every Start the host sends in the first second is lost.
    cluster.lose_kind.push((0, START_KIND as u8, 1_000));
    cluster.run_until_started(3_000);
    let moments = cluster.start_moments();
    let starts = cluster.sent_by_kind[START_KIND];
    eprintln!("start lost: began at {moments:?} ms after {starts} Starts");
    assert!(moments[0] < 1_000, "the host began on its own schedule");
    assert!(
        (1_080..1_400).contains(&moments[1]),
        "the member began as the first Start after the loss arrived (80 ms on)"
    );
    assert_eq!(
        cluster.machines[0].netplay.start_phase(),
        StartPhase::Started { at: moments[0] }
    );
    plays_on_in_sync(&mut cluster, 8_000, 300);
}

#[test]
fn with_jitter_the_machines_still_begin_frame_0_within_a_frame_of_each_other() {
    for seed in 30..36 {
        let jittery = LinkConditions::latency(0).with_jitter(5);
        let mut cluster = asymmetric_cluster(4, seed, jittery, true);
        cluster.run_until_started(3_000);
        let spread = cluster.start_spread();
        eprintln!(
            "±5 ms jitter, seed {seed}: began at {:?} ms, spread {spread} ms",
            cluster.start_moments()
        );
        assert!(spread < FRAME_MS, "began {spread} ms apart");
    }
}
