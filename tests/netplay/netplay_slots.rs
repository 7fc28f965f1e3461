//! A waiting host's player slot survives a joiner that cannot play: one
//! with other content is refused and one that vanishes before the match
//! began is dropped, and in both cases the slot stays open so that the
//! right joiner plays the whole match afterwards.

use netcade::net::sim::LinkConditions;
use netcode::netplay::{NetplayConfig, NetplayEvent};
use netcode::protocol::{
    EndpointConfig, Handshake, Millis, PeerEndpoint, PlayerSlots, RejectReason,
};
use support::netplay::{
    any_event, exchange, settings, Cluster, MatchSetup, CORE_NAME, CORE_VERSION,
};
use support::{load_duel_dojo, LoadedCore};

/// Where the stranger dials from: no machine of the cluster.
const STRANGER: u8 = 7;

/// A two-player Duel match whose host takes player 1 from any address,
/// with the real joiner (machine 1) cut off until `stranger` had its go.
fn match_with_open_slot(setup: &MatchSetup) -> Cluster<LoadedCore> {
    let mut cluster = Cluster::with_configs(
        MatchSetup::new(2, setup.seed, setup.conditions),
        |_| load_duel_dojo(),
        |me, config: &mut NetplayConfig<u8>| {
            if me == 0 {
                config.peers[0].address = None;
                // A vanished joiner is noticed sooner than the default 5 s.
                config.disconnect_after_ms = 1_500;
            }
        },
    );
    cluster.isolate(1);
    cluster
}

/// A bare endpoint claiming player 1, with `content_hash` as its content.
fn stranger(setup: &MatchSetup, content_hash: u64) -> PeerEndpoint {
    let config = EndpointConfig::joiner(Handshake {
        core_name: CORE_NAME.into(),
        core_version: CORE_VERSION.into(),
        content_hash,
        local_slots: PlayerSlots::single(1),
        settings: settings(setup),
        ..Handshake::default()
    });
    PeerEndpoint::new(config, 0).expect("a valid joiner")
}

/// Runs the cluster and the stranger (who talks to the host while `talks`
/// says so) until `until`.
fn run_with_stranger(
    cluster: &mut Cluster<LoadedCore>,
    stranger: &mut PeerEndpoint,
    until: Millis,
    talks: impl Fn(Millis) -> bool,
) {
    while cluster.now < until {
        cluster.step();
        let now = cluster.now;
        if talks(now) {
            let mut port = cluster.sockets.port(STRANGER);
            exchange(&mut port, stranger, now, 0);
        }
    }
}

fn setup() -> MatchSetup {
    MatchSetup::new(2, 61, LinkConditions::latency(20).with_jitter(4))
}

#[test]
fn a_joiner_with_other_content_is_refused_then_the_right_one_plays_the_match_in_sync() {
    let setup = setup();
    let mut cluster = match_with_open_slot(&setup);
    let mut wrong = stranger(&setup, 0xBAD);
    run_with_stranger(&mut cluster, &mut wrong, 1_000, |_| true);
    assert!(
        !wrong.is_running(),
        "the stranger with other content was refused"
    );
    let refusals: Vec<_> = cluster
        .events_of(0)
        .iter()
        .filter_map(|(_, event)| match event {
            NetplayEvent::Rejected(rejection) => Some(rejection.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(refusals.len(), 1, "told once: {refusals:?}");
    assert!(refusals[0].by_us);
    assert_eq!(refusals[0].reason, RejectReason::Content);
    assert_eq!(cluster.machines[0].stats.started_at, None);

    cluster.reconnect(1);
    cluster.run_until(9_000);
    cluster.assert_all_in_sync_without_trouble(300);
}

#[test]
fn a_joiner_that_vanishes_before_the_start_leaves_its_slot_to_the_next() {
    let setup = setup();
    let mut cluster = match_with_open_slot(&setup);
    let mut vanishing = stranger(&setup, support::netplay::CONTENT_HASH);
    // It shakes hands, then falls silent for good at 500 ms.
    run_with_stranger(&mut cluster, &mut vanishing, 3_000, |now| now < 500);
    assert!(
        any_event(cluster.events_of(0), |e| matches!(
            e,
            NetplayEvent::PeerSynchronized { .. }
        )),
        "the vanishing joiner got as far as the handshake"
    );
    assert_eq!(
        cluster.machines[0].stats.started_at, None,
        "the host never played with it"
    );
    assert!(
        any_event(cluster.events_of(0), |e| matches!(
            e,
            NetplayEvent::JoinerLeftBeforeStart { .. }
        )),
        "the host was told its slot is open again"
    );

    cluster.reconnect(1);
    cluster.run_until(11_000);
    cluster.assert_all_in_sync_without_trouble(300);
}
