//! Two to four machines keep identical games, frame by frame, over good and
//! bad simulated networks (a four-player stub game, and Duel through the
//! real libretro path).

use netcade::net::sim::LinkConditions;
use netcode::emulator::Emulator;
use netcode::rollback::PlayerId;
use std::ops::DerefMut;
use support::load_duel_dojo;
use support::netplay::{party_game, Cluster, MatchSetup};

/// 25 simulated seconds: about 1500 frames.
const MATCH_MS: u64 = 25_000;

fn lan() -> LinkConditions {
    LinkConditions::latency(1)
}

/// 100 ms round trip, ±20 ms jitter.
fn far() -> LinkConditions {
    LinkConditions::latency(50).with_jitter(20)
}

/// 5% loss, 1% duplication and reordering, on a 30 ms one-way link.
fn lossy() -> LinkConditions {
    LinkConditions::latency(30)
        .with_jitter(5)
        .with_loss(0.05)
        .with_duplication(0.01)
        .with_reordering(0.02)
}

fn play<G: DerefMut<Target: Emulator>>(
    players: u8,
    seed: u64,
    conditions: LinkConditions,
    game: impl FnMut(u8) -> G,
    expect_rollbacks: bool,
) {
    let mut cluster = Cluster::new(MatchSetup::new(players, seed, conditions), game);
    cluster.run_until(MATCH_MS);
    // At least 20 of the 25 simulated seconds are compared, every frame.
    cluster.assert_all_in_sync_without_trouble(1200);
    for machine in &cluster.machines {
        if expect_rollbacks {
            let rollbacks: u64 = (0..players)
                .filter_map(|p| machine.netplay.stats(PlayerId::new(p)))
                .map(|s| s.rollbacks)
                .sum();
            assert!(
                rollbacks > 0,
                "machine {} never rolled back: the network did not test prediction",
                machine.player
            );
        }
    }
}

fn party(players: u8, seed: u64, conditions: LinkConditions, expect_rollbacks: bool) {
    play(
        players,
        seed,
        conditions,
        |_| party_game(),
        expect_rollbacks,
    );
}

#[test]
fn two_machines_on_a_lan_keep_identical_games() {
    party(2, 1, lan(), false);
}

#[test]
fn two_machines_100_ms_apart_with_jitter_keep_identical_games() {
    party(2, 2, far(), true);
}

#[test]
fn two_machines_over_a_lossy_duplicating_reordering_network_keep_identical_games() {
    party(2, 3, lossy(), true);
}

#[test]
fn three_machines_on_a_lan_keep_identical_games() {
    party(3, 4, lan(), false);
}

#[test]
fn three_machines_100_ms_apart_with_jitter_keep_identical_games() {
    party(3, 5, far(), true);
}

#[test]
fn three_machines_over_a_lossy_duplicating_reordering_network_keep_identical_games() {
    party(3, 6, lossy(), true);
}

#[test]
fn four_machines_on_a_lan_keep_identical_games() {
    party(4, 7, lan(), false);
}

#[test]
fn four_machines_100_ms_apart_with_jitter_keep_identical_games() {
    party(4, 8, far(), true);
}

#[test]
fn four_machines_over_a_lossy_duplicating_reordering_network_keep_identical_games() {
    party(4, 9, lossy(), true);
}

#[test]
fn two_duel_cores_on_a_lan_keep_identical_games() {
    play(2, 11, lan(), |_| load_duel_dojo(), false);
}

#[test]
fn two_duel_cores_100_ms_apart_with_jitter_keep_identical_games() {
    play(2, 12, far(), |_| load_duel_dojo(), true);
}

#[test]
fn two_duel_cores_over_a_lossy_duplicating_reordering_network_keep_identical_games() {
    play(2, 13, lossy(), |_| load_duel_dojo(), true);
}

#[test]
fn the_same_seed_replays_the_same_match() {
    let run = || {
        let mut cluster = Cluster::new(MatchSetup::new(3, 99, lossy()), |_| party_game());
        cluster.run_until(8_000);
        cluster
            .machines
            .iter()
            .enumerate()
            .map(|(index, m)| {
                (
                    cluster.final_checksums(index),
                    format!("{:?}", m.notes.events),
                    m.stats.ticks,
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
}
