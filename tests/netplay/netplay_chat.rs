//! Chat on the seeded simulated network: lines arrive once and in order
//! through loss, a flood is cut to the rate limit, the host relays between
//! players and spectators, and a full mesh of players hears each line once.

use netcade::net::sim::LinkConditions;
use netcode::netplay::{ChatRefused, ChatShown, NetplayEvent, SpectatorEvent};
use support::netplay::{party_game, Cluster, MatchSetup, PartyCluster};

const WATCHER: u8 = 7;

/// Kind byte of a Chat datagram.
const CHAT: u8 = 17;

/// 30 ms each way, ±5 ms, 20 % of datagrams lost.
fn lossy() -> LinkConditions {
    LinkConditions {
        latency_ms: 30,
        jitter_ms: 5,
        loss: 0.2,
        ..LinkConditions::PERFECT
    }
}

/// The chat lines machine `machine` was told of, as `author: text`.
fn lines_heard(cluster: &PartyCluster, machine: usize) -> Vec<String> {
    cluster
        .events_of(machine)
        .iter()
        .filter_map(|(_, event)| match event {
            NetplayEvent::Chat(line) => Some(said(line)),
            _ => None,
        })
        .collect()
}

/// The lines the cluster's first spectator was shown, as `author: text`.
fn spectator_heard(cluster: &PartyCluster) -> Vec<String> {
    cluster.watchers[0]
        .events
        .iter()
        .filter_map(|(_, event)| match event {
            SpectatorEvent::Chat(line) => Some(said(line)),
            _ => None,
        })
        .collect()
}

fn said(line: &ChatShown) -> String {
    format!("{}: {}", line.author, line.text)
}

/// A match of `players` on `conditions` whose host takes spectators, run
/// until every machine plays.
fn running_match(players: u8, seed: u64, conditions: LinkConditions) -> (PartyCluster, MatchSetup) {
    let setup = MatchSetup::new(players, seed, conditions);
    let mut cluster = Cluster::with_configs(
        setup,
        |_| party_game(),
        |me, config| {
            config.accept_spectators = me == 0;
        },
    );
    cluster.run_until_started(5_000);
    cluster.run_until(cluster.now + 500);
    (cluster, setup)
}

#[test]
fn lines_said_over_a_lossy_link_arrive_once_each_and_in_order() {
    let (mut cluster, _) = running_match(2, 5, lossy());
    // The first copies of the joiner's lines are all lost.
    let now = cluster.now;
    cluster.lose_kind.push((1, CHAT, now + 300));
    for text in ["hi", "good luck", "have fun"] {
        let now = cluster.now;
        let shown = cluster.machines[1]
            .netplay
            .send_chat(now, "", text)
            .unwrap();
        assert_eq!(shown.author, "P2");
    }
    let named = cluster.now;
    cluster.machines[1]
        .netplay
        .send_chat(named, "Zoë", "who's ready")
        .unwrap();
    cluster.run_until(cluster.now + 3_000);

    assert_eq!(
        lines_heard(&cluster, 0),
        [
            "P2: hi",
            "P2: good luck",
            "P2: have fun",
            "P2 Zoë: who's ready"
        ]
    );
    assert!(
        lines_heard(&cluster, 1).is_empty(),
        "nobody echoes a line back"
    );
    cluster.assert_all_in_sync_without_trouble(100);
}

#[test]
fn a_flood_of_lines_is_cut_to_the_rate_limit_and_the_match_plays_on() {
    let (mut cluster, _) = running_match(2, 6, LinkConditions::latency(20));
    let now = cluster.now;
    let results: Vec<_> = (0..20)
        .map(|index| {
            cluster.machines[0]
                .netplay
                .send_chat(now, "", &format!("spam {index}"))
        })
        .collect();
    let sent = results.iter().filter(|result| result.is_ok()).count();
    assert_eq!(sent, 5, "a burst of five lines goes");
    assert!(results[5..]
        .iter()
        .all(|result| *result == Err(ChatRefused::TooFast)));
    cluster.run_until(cluster.now + 1_000);
    let later = cluster.now;
    assert!(
        cluster.machines[0]
            .netplay
            .send_chat(later, "", "one more")
            .is_ok(),
        "a second later one more line may go"
    );
    cluster.run_until(cluster.now + 1_000);
    assert_eq!(lines_heard(&cluster, 1).len(), 6);
    cluster.assert_all_in_sync_without_trouble(100);
}

#[test]
fn a_spectators_line_reaches_every_player_and_the_players_lines_reach_the_spectator() {
    let (mut cluster, setup) = running_match(3, 7, LinkConditions::latency(15));
    cluster.add_watcher(&setup, WATCHER, party_game());
    cluster.run_until(cluster.now + 2_000);
    let now = cluster.now;
    let shown = cluster.watchers[0]
        .node
        .spectator
        .send_chat(now, "", "nice combo")
        .unwrap();
    assert_eq!(shown.author, "spectator");
    cluster.machines[2]
        .netplay
        .send_chat(now, "", "thanks")
        .unwrap();
    cluster.run_until(cluster.now + 1_000);

    // Player 2 hears player 3 directly and the spectator through the host:
    // each line once, as the host does.
    for player in [0, 1] {
        let mut heard = lines_heard(&cluster, player);
        heard.sort();
        assert_eq!(heard, ["P3: thanks", "spectator 1: nice combo"]);
    }
    assert_eq!(lines_heard(&cluster, 2), ["spectator 1: nice combo"]);
    assert_eq!(spectator_heard(&cluster), ["P3: thanks"]);
}

#[test]
fn a_name_that_claims_a_seat_is_shown_under_the_seat_its_sender_holds() {
    let (mut cluster, setup) = running_match(3, 11, LinkConditions::latency(15));
    cluster.add_watcher(&setup, WATCHER, party_game());
    cluster.run_until(cluster.now + 2_000);
    let now = cluster.now;
    cluster.watchers[0]
        .node
        .spectator
        .send_chat(now, "P2", "I am player two")
        .unwrap();
    cluster.machines[2]
        .netplay
        .send_chat(now, "P1", "I am the host")
        .unwrap();
    cluster.run_until(cluster.now + 1_000);

    for player in [0, 1] {
        let mut heard = lines_heard(&cluster, player);
        heard.sort();
        assert_eq!(
            heard,
            ["P3 P1: I am the host", "spectator 1 P2: I am player two"]
        );
    }
    assert_eq!(spectator_heard(&cluster), ["P3 P1: I am the host"]);
}
