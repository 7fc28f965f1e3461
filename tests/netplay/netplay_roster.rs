//! Three and four players who know only the host: the host accepts each
//! joiner from anywhere, tells every member where the others are once all
//! joined (the roster), and the members link to each other as a full mesh
//! before the match begins on every machine together.

use netcade::net::sim::LinkConditions;
use netcode::netplay::{NetplayConfig, NetplayEvent, RosterCodec};
use netcode::protocol::PlayerSlots;
use support::netplay::{any_event, party_game, Cluster, MatchSetup, PartyCluster};

/// Simulated addresses travel as their one byte.
const BYTE_ADDRESSES: RosterCodec<u8> = RosterCodec {
    encode: |address, out| out.push(*address),
    decode: |bytes| match bytes {
        [address] => Some(*address),
        _ => None,
    },
};

/// Machine `me`'s configuration when the host accepts anyone into each
/// slot and the members dial only the host, learning the rest from its
/// roster.
fn linked_by_roster(players: u8, me: u8, mut config: NetplayConfig<u8>) -> NetplayConfig<u8> {
    config.peers.clear();
    config.roster = Some(BYTE_ADDRESSES);
    for other in (0..players).filter(|&other| other != me) {
        let slots = PlayerSlots::single(other);
        config = match (me, other) {
            (0, _) => config.accept(None, slots),
            (_, 0) => config.dial(0, slots),
            _ => config.from_roster(slots),
        };
    }
    config
}

fn cluster_linked_by_roster(players: u8, seed: u64, conditions: LinkConditions) -> PartyCluster {
    Cluster::with_configs(
        MatchSetup::new(players, seed, conditions),
        |_| party_game(),
        |me, config: &mut NetplayConfig<u8>| {
            *config = linked_by_roster(players, me, config.clone())
        },
    )
}

fn roster_match_plays_in_sync(players: u8, conditions: LinkConditions) {
    let mut cluster = cluster_linked_by_roster(players, 31, conditions);
    cluster.run_until(12_000);
    assert!(cluster.all_running(), "every machine plays");
    assert!(
        cluster.start_spread() <= 20,
        "frame 0 began together: {:?}",
        cluster.start_moments()
    );
    cluster.assert_all_in_sync_without_trouble(400);
    for machine in 1..players as usize {
        let synchronized = cluster
            .events_of(machine)
            .iter()
            .filter(|(_, event)| matches!(event, NetplayEvent::PeerSynchronized { .. }))
            .count();
        assert_eq!(
            synchronized,
            players as usize - 1,
            "machine {machine} linked to every other machine"
        );
    }
}

#[test]
fn three_players_who_know_only_the_host_link_as_a_mesh_and_play_in_sync() {
    roster_match_plays_in_sync(3, LinkConditions::latency(30).with_jitter(5));
}

#[test]
fn four_players_who_know_only_the_host_link_as_a_mesh_and_play_in_sync_through_loss() {
    roster_match_plays_in_sync(4, LinkConditions::latency(50).with_loss(0.05));
}

#[test]
fn the_match_does_not_begin_while_a_joiner_is_missing() {
    let mut cluster = cluster_linked_by_roster(3, 32, LinkConditions::latency(20));
    // Machine 2 never hears the host: machine 1 cannot learn of it, and the
    // match cannot begin without it.
    cluster.isolate(2);
    cluster.run_until(3_000);
    assert!(!cluster.all_running());
    assert!(!any_event(cluster.events_of(1), |event| matches!(
        event,
        NetplayEvent::Running
    )));
}

#[test]
fn a_three_player_match_of_fixed_length_ends_with_every_frame_final_everywhere() {
    let setup = MatchSetup::new(3, 33, LinkConditions::latency(10));
    let mut cluster = Cluster::with_configs(
        setup,
        |_| party_game(),
        |me, config| {
            *config = linked_by_roster(3, me, config.clone());
            config.match_frames = Some(600);
        },
    );
    for machine in cluster.machines.iter_mut() {
        machine.stop_at_frame = Some(600);
    }
    cluster.run_until(15_000);
    for machine in 0..3 {
        assert_eq!(
            cluster.final_checksums(machine).len(),
            600,
            "machine {machine}"
        );
    }
    cluster.assert_same_final_checksums(&[0, 1, 2], 600);
}

/// A roster that places nobody: a room's joiners find one another's paths
/// with ICE instead.
const PLACES_NOBODY: RosterCodec<u8> = RosterCodec {
    encode: BYTE_ADDRESSES.encode,
    decode: |_| None,
};

#[test]
fn joiners_placed_where_their_paths_were_found_link_as_a_mesh_and_play_in_sync() {
    let players = 4;
    let mut cluster = Cluster::with_configs(
        MatchSetup::new(players, 33, LinkConditions::latency(30)),
        |_| party_game(),
        |me, config: &mut NetplayConfig<u8>| {
            *config = linked_by_roster(players, me, config.clone());
            if me > 0 {
                config.roster = Some(PLACES_NOBODY);
            }
        },
    );
    cluster.run_until(2_000);
    assert!(!cluster.all_running(), "nobody placed, no mesh");
    for me in 1..players {
        let netplay = &mut cluster.game_match.machines[me as usize].machine.netplay;
        for other in (1..players).filter(|&other| other != me) {
            assert!(netplay.place_roster_peer(other, other), "P{other} awaits");
            assert!(!netplay.place_roster_peer(other, other), "placed once");
        }
    }
    cluster.run_until(14_000);
    assert!(cluster.all_running(), "every machine plays");
    cluster.assert_all_in_sync_without_trouble(400);
}

#[test]
fn a_peer_placed_under_a_slots_name_that_never_shakes_hands_gives_the_place_to_the_next_path() {
    let players = 3;
    let nobody = 200;
    let mut cluster = Cluster::with_configs(
        MatchSetup::new(players, 34, LinkConditions::latency(30)),
        |_| party_game(),
        |me, config: &mut NetplayConfig<u8>| {
            *config = linked_by_roster(players, me, config.clone());
            if me > 0 {
                config.roster = Some(PLACES_NOBODY);
            }
        },
    );
    cluster.run_until(2_000);
    for me in 1..players {
        let netplay = &mut cluster.game_match.machines[me as usize].machine.netplay;
        for other in (1..players).filter(|&other| other != me) {
            assert!(
                netplay.place_roster_peer(other, nobody),
                "the impostor's path came first"
            );
        }
    }
    cluster.run_until(4_000);
    assert!(
        !cluster.all_running(),
        "nobody answers at the impostor's address"
    );
    for me in 1..players {
        let netplay = &mut cluster.game_match.machines[me as usize].machine.netplay;
        for other in (1..players).filter(|&other| other != me) {
            assert!(
                netplay.place_roster_peer(other, other),
                "the real path moves P{other}"
            );
        }
    }
    cluster.run_until(16_000);
    assert!(cluster.all_running(), "every machine plays");
    for me in 1..players {
        let netplay = &mut cluster.game_match.machines[me as usize].machine.netplay;
        for other in (1..players).filter(|&other| other != me) {
            assert!(
                !netplay.place_roster_peer(other, nobody),
                "a running link stays"
            );
        }
    }
    cluster.assert_all_in_sync_without_trouble(400);
}
