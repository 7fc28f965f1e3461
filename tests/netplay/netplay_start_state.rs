//! The start state every machine agrees on: the host sends its savestate
//! (lz4, by blob) and every member loads it before frame 0, so a joiner
//! whose game differs at load still plays the host's game from frame 0;
//! handshakes that cannot play together say what differs on both sides;
//! a start state that is too large or expands too far is refused without
//! harm.

use netcade::net::sim::LinkConditions;
use netcode::emulator::Emulator;
use netcode::encoding::StateBlobError;
use netcode::netplay::{NetplayConfig, NetplayEvent, PeerFault};
use netcode::protocol::{CoreOption, RejectReason, Rejection};
use netcode::rollback::Frame;
use netcode::testing::{StubGame, STUB_STATE_SIZE};
use std::ops::DerefMut;
use support::netplay::{any_event, pad, party_game, Cluster, MatchSetup, CORE_NAME, CORE_VERSION};
use support::{load_duel, load_duel_dojo};

/// Gives machine 0 (the host) its game's state as the start state.
fn host_sends_its_state<G: DerefMut<Target: Emulator>>(
    me: u8,
    config: &mut NetplayConfig<u8>,
    game: &mut G,
) {
    if me == 0 {
        let mut state = Vec::new();
        game.save_state(&mut state).expect("the host's game saves");
        config.start_state = Some(state);
    }
}

/// Runs `game`'s first `frames` frames on made-up inputs: a machine that
/// loaded the same content but is not where the host is.
fn advance<G: DerefMut<Target: Emulator>>(mut game: G, frames: u32) -> G {
    for frame in 0..frames {
        game.run_frame(&[pad(0, frame), pad(1, frame)], false);
    }
    game
}

fn arrived(events: &[(u64, NetplayEvent)]) -> bool {
    any_event(events, |e| {
        matches!(e, NetplayEvent::StartStateArrived { .. })
    })
}

#[test]
fn a_joiner_whose_duel_was_advanced_before_the_match_plays_the_hosts_game_from_frame_0() {
    let setup = MatchSetup::new(2, 21, LinkConditions::latency(30).with_jitter(5));
    let mut cluster = Cluster::with_games_and_configs(
        setup,
        |me| match me {
            0 => load_duel_dojo(),
            _ => advance(load_duel_dojo(), 45),
        },
        host_sends_its_state,
    );
    cluster.run_until(8_000);
    cluster.assert_all_in_sync_without_trouble(300);
    assert!(arrived(cluster.events_of(1)), "the joiner got the state");
    assert!(
        !arrived(cluster.events_of(0)),
        "the host sends, never receives"
    );
}

#[test]
fn a_joiner_that_loaded_another_duel_arena_plays_the_hosts_arena_from_frame_0() {
    let setup = MatchSetup::new(2, 22, LinkConditions::latency(10));
    let mut cluster = Cluster::with_games_and_configs(
        setup,
        |me| load_duel(if me == 0 { "dojo" } else { "moon" }),
        host_sends_its_state,
    );
    cluster.run_until(6_000);
    cluster.assert_all_in_sync_without_trouble(200);
}

/// The party game with a large, incompressible tail in its state (as real
/// cores' states are large): its blob takes many chunks.
fn padded_game(seed: u64, bytes: usize) -> Box<StubGame> {
    let mut x = seed | 1;
    let padding = (0..bytes)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    Box::new(party_game().state_tail(padding))
}

#[test]
fn a_start_state_of_many_chunks_arrives_under_30_percent_loss() {
    let conditions = LinkConditions::latency(40).with_jitter(10).with_loss(0.30);
    let setup = MatchSetup::new(2, 23, conditions);
    let mut cluster = Cluster::with_games_and_configs(
        setup,
        |me| advance(padded_game(u64::from(me) + 1, 20_000), u32::from(me) * 9),
        host_sends_its_state,
    );
    cluster.run_until(20_000);
    cluster.assert_same_final_checksums(&[0, 1], 300);
    let events = cluster.events_of(1);
    let moment = |wanted: fn(&NetplayEvent) -> bool| {
        events
            .iter()
            .position(|(_, e)| wanted(e))
            .expect("it happened")
    };
    assert!(
        moment(|e| matches!(e, NetplayEvent::StartStateArrived { .. }))
            < moment(|e| matches!(e, NetplayEvent::Starting { .. })),
        "the joiner was ready only once it had the state"
    );
    assert_eq!(
        cluster.machines[0].game.tail(),
        cluster.machines[1].game.tail(),
        "the whole state arrived, not just the part the checksum sees"
    );
}

/// Runs a two-machine match where `adjust` changes the joiner's (machine
/// 1's) configuration, and returns what each side was told.
fn refused(adjust: impl Fn(&mut NetplayConfig<u8>)) -> (Rejection, Rejection) {
    let setup = MatchSetup::new(2, 24, LinkConditions::latency(20));
    let mut cluster = Cluster::with_configs(
        setup,
        |_| party_game(),
        |me, config| {
            if me == 1 {
                adjust(config)
            }
        },
    );
    cluster.run_until(2_000);
    let rejection = |machine: usize| {
        cluster
            .events_of(machine)
            .iter()
            .find_map(|(_, event)| match event {
                NetplayEvent::Rejected(rejection) => Some(rejection.clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("machine {machine} was not told of the refusal"))
    };
    let (host, joiner) = (rejection(0), rejection(1));
    assert!(host.by_us && !joiner.by_us);
    assert_eq!(
        host.reason, joiner.reason,
        "both sides name the same problem"
    );
    for machine in &cluster.machines {
        assert_eq!(
            machine.stats.started_at, None,
            "nobody plays a refused match"
        );
    }
    (host, joiner)
}

#[test]
fn a_joiner_with_another_core_is_told_which_core_the_host_runs() {
    let (host, joiner) = refused(|config| config.core_name = "Stella".into());
    assert_eq!(joiner.reason, RejectReason::Core);
    assert_eq!(
        joiner.explanation(),
        format!("this match is for {CORE_NAME} {CORE_VERSION}; you have Stella {CORE_VERSION} (different cores)")
    );
    assert_eq!(
        host.explanation(),
        format!("refused a joiner (different cores): it has Stella {CORE_VERSION}; you host {CORE_NAME} {CORE_VERSION}")
    );
}

#[test]
fn a_joiner_with_another_core_version_is_told_both_versions() {
    let (host, joiner) = refused(|config| config.core_version = "0.9".into());
    assert_eq!(joiner.reason, RejectReason::CoreVersion);
    assert_eq!(
        joiner.explanation(),
        format!("this match is for {CORE_NAME} {CORE_VERSION}; you have {CORE_NAME} 0.9 (different core versions)")
    );
    assert!(host
        .explanation()
        .contains(&format!("it has {CORE_NAME} 0.9")));
}

#[test]
fn a_joiner_with_other_content_is_told_both_content_hashes() {
    let (host, joiner) = refused(|config| config.content_hash = 0x3FA2_0000_0000_0001);
    assert_eq!(joiner.reason, RejectReason::Content);
    let line = joiner.explanation();
    assert!(
        line.starts_with(&format!(
            "this match is for {CORE_NAME} {CORE_VERSION} with content 00000000…"
        )),
        "{line}"
    );
    assert!(
        line.contains("you have netcade-test 1 with content 3fa20000…"),
        "{line}"
    );
    assert!(host
        .explanation()
        .contains("it has netcade-test 1 with content 3fa20000…"));
}

/// The joiner's fault about the host, if it closed the host's link.
fn start_state_fault<G: DerefMut<Target: Emulator>>(
    cluster: &Cluster<G>,
) -> Option<StateBlobError> {
    cluster
        .events_of(1)
        .iter()
        .find_map(|(_, event)| match event {
            NetplayEvent::PeerFault {
                fault: PeerFault::BadStartState(error),
                ..
            } => Some(error.clone()),
            _ => None,
        })
}

#[test]
fn a_start_state_blob_over_the_joiners_limit_is_refused_unstored() {
    let setup = MatchSetup::new(2, 25, LinkConditions::latency(10));
    let mut cluster = Cluster::with_games_and_configs(
        setup,
        |me| padded_game(u64::from(me) + 1, 20_000),
        |me, config, game| {
            host_sends_its_state(me, config, game);
            config.max_start_state_bytes = 1_000;
        },
    );
    cluster.run_until(3_000);
    let Some(StateBlobError::TooLarge { size, .. }) = start_state_fault(&cluster) else {
        panic!("{:?}", cluster.events_of(1));
    };
    assert!(size > 20_000, "the blob's announced size: {size}");
    assert_eq!(cluster.machines[1].stats.started_at, None);
    assert!(!arrived(cluster.events_of(1)));
}

#[test]
fn a_start_state_that_expands_past_the_joiners_limit_is_refused_before_expanding() {
    let setup = MatchSetup::new(2, 26, LinkConditions::latency(10));
    let mut cluster = Cluster::with_games_and_configs(
        setup,
        |_| party_game(),
        |me, config, _| {
            if me == 0 {
                // A state of megabytes of zeros: a few kilobytes compressed.
                let mut zeros = party_game().state_tail(vec![0; (8 << 20) - STUB_STATE_SIZE]);
                let mut state = Vec::new();
                zeros.save_state(&mut state).unwrap();
                config.start_state = Some(state);
            }
            config.max_start_state_bytes = 1 << 20;
        },
    );
    cluster.run_until(3_000);
    assert_eq!(
        start_state_fault(&cluster),
        Some(StateBlobError::TooLarge {
            size: 8 << 20,
            max: 1 << 20
        })
    );
    assert_eq!(cluster.machines[1].stats.started_at, None);
}

#[test]
fn the_host_advertises_its_core_options_to_the_joiner() {
    let option = CoreOption {
        key: "duel_arena_music".into(),
        value: "off".into(),
    };
    let setup = MatchSetup::new(2, 27, LinkConditions::latency(10));
    let mut cluster = Cluster::with_configs(
        setup,
        |_| party_game(),
        |me, config| {
            if me == 0 {
                config.core_options = vec![option.clone()];
            }
        },
    );
    cluster.run_until(500);
    let host = cluster.machines[1]
        .netplay
        .host_handshake()
        .expect("the joiner knows the host's handshake");
    assert_eq!(host.core_options, vec![option]);
    assert!(cluster.machines[0].netplay.host_handshake().is_none());
    assert!(cluster.machines[1].netplay.current_frame() > Frame::ZERO);
}

#[test]
fn in_a_three_player_match_every_member_loads_the_hosts_start_state() {
    let setup = MatchSetup::new(3, 28, LinkConditions::latency(25).with_jitter(5));
    let mut cluster = Cluster::with_games_and_configs(
        setup,
        |me| advance(padded_game(u64::from(me) + 1, 3_000), u32::from(me) * 5),
        host_sends_its_state,
    );
    cluster.run_until(8_000);
    cluster.assert_all_in_sync_without_trouble(300);
    assert!(arrived(cluster.events_of(1)) && arrived(cluster.events_of(2)));
    assert_eq!(
        cluster.machines[0].game.tail(),
        cluster.machines[2].game.tail()
    );
}

#[test]
fn a_spectator_is_not_told_to_wait_for_a_start_state() {
    let setup = MatchSetup::new(2, 29, LinkConditions::latency(10));
    let mut cluster = Cluster::with_games_and_configs(
        setup,
        |_| party_game(),
        |me, config, game| {
            host_sends_its_state(me, config, game);
            config.accept_spectators = true;
        },
    );
    cluster.add_spectator(&setup, 9);
    cluster.run_until(2_000);
    let spectator = cluster.spectator.as_ref().unwrap();
    let host = spectator
        .endpoint
        .remote_handshake()
        .expect("the spectator was welcomed");
    assert!(!host.start_state);
    assert!(!spectator.inputs.is_empty(), "and it is fed inputs");
}

#[test]
fn a_start_state_the_joiners_core_refuses_closes_the_hosts_link_not_the_joiner() {
    let setup = MatchSetup::new(2, 27, LinkConditions::latency(10));
    let mut cluster = Cluster::with_games_and_configs(
        setup,
        |_| party_game(),
        |me, config, _| {
            if me == 0 {
                // Well-formed on the wire; no stub game loads it.
                config.start_state = Some(b"not a state any core loads".to_vec());
            }
        },
    );
    // Every step expects each machine's tick to succeed.
    cluster.run_until(3_000);
    let refused = cluster
        .events_of(1)
        .iter()
        .find_map(|(_, event)| match event {
            NetplayEvent::PeerFault {
                fault: PeerFault::StateRefused(reason),
                ..
            } => Some(reason.clone()),
            _ => None,
        });
    let reason = refused.expect("the joiner closed the host's link");
    assert!(reason.contains("not a stub game state"), "{reason}");
    assert_eq!(cluster.machines[1].stats.started_at, None);
}
