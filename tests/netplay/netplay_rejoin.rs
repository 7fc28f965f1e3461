//! Rejoining, on the seeded simulated network: a player whose link goes
//! silent is waited for ("waiting for…", every machine stalls) within the
//! rejoin window; it may come back from the same or a new address, and
//! the match resumes in sync. Only the player itself can move its link:
//! a stranger replaying its datagrams, or answering the challenge without
//! the link's key, moves nothing. Past the window the match ends as a
//! silent link always ended it.

use netcade::engine::sinks::compare_checksum_logs;
use netcade::net::sim::LinkConditions;
use netcade::net::Transport;
use netcode::netplay::{NetplayConfig, NetplayEvent, SpectatorPhase};
use netcode::protocol::{auth, codec, Header, LinkSecret, Message, Millis, Sequence, SessionToken};
use netcode::rollback::{DisconnectReason, SessionState};
use support::netplay::{any_event, party_game, Cluster, MatchSetup, PartyCluster};

/// The links of every match here.
const LINK: LinkConditions = LinkConditions::latency(20).with_jitter(5);
/// The joiner's address once its NAT rebound its port.
const NEW_ADDRESS: u8 = 11;
/// Where a stranger sends from.
const STRANGER: u8 = 12;
/// The spectator of the host.
const WATCHER: u8 = 7;

/// A two-player match whose machines wait `window_ms` for a silent peer.
fn match_with_rejoin_window(seed: u64, window_ms: Millis) -> PartyCluster {
    match_of(2, seed, window_ms)
}

/// A match of `players` machines that wait `window_ms` for a silent peer
/// (the host accepts spectators).
fn match_of(players: u8, seed: u64, window_ms: Millis) -> PartyCluster {
    let setup = MatchSetup::new(players, seed, LINK);
    Cluster::with_configs(
        setup,
        |_| party_game(),
        move |me, config: &mut NetplayConfig<u8>| {
            config.accept_spectators = me == 0;
            config.rejoin_window_ms = window_ms;
            config.rejoin_seed = 0xA5A5 + u64::from(me);
            // Each machine its own secret, as in real play: every link its own keys.
            config.secret = LinkSecret::from_bytes([me + 1; 32]);
        },
    )
}

/// `message` encoded under `header`, untagged.
fn encoded(header: &Header, message: &Message) -> Vec<u8> {
    let mut datagram = Vec::new();
    codec::encode(header, message, &mut datagram).expect("it encodes");
    datagram
}

fn frames(cluster: &PartyCluster) -> Vec<u32> {
    cluster.machines.iter().map(|m| m.current_frame()).collect()
}

fn assert_stalled_and_waiting(cluster: &PartyCluster, before: &[u32]) {
    for (machine, &frame) in cluster.machines.iter().zip(before) {
        // The prediction window (8) and the input delay allow a few frames.
        assert!(
            machine.current_frame() <= frame + 8 + 4,
            "machine {} played on against a frozen opponent: {frame} -> {}",
            machine.player,
            machine.current_frame()
        );
        let events = &machine.notes.events;
        assert!(any_event(events, |e| matches!(
            e,
            NetplayEvent::NetworkInterrupted { .. }
        )));
        assert!(any_event(events, |e| matches!(
            e,
            NetplayEvent::WaitingForPeer { .. }
        )));
        assert!(!any_event(events, |e| matches!(
            e,
            NetplayEvent::Disconnected { .. }
        )));
        assert_eq!(machine.netplay.state(), SessionState::Running);
    }
}

/// Plays 4 s, then cuts `machine` off from the others for 10 s (twice the
/// 5 s after which a silent peer used to be dropped): every machine stalls
/// and waits.
fn cut_off_for_ten_seconds(cluster: &mut PartyCluster, machine: u8) {
    cluster.run_until(4_000);
    let before = frames(cluster);
    cluster.isolate(machine);
    cluster.run_until(14_000);
    assert_stalled_and_waiting(cluster, &before);
}

/// Whether machine `machine` saw a peer come back from a new address.
fn saw_rejoin(cluster: &PartyCluster, machine: usize) -> bool {
    any_event(&cluster.machines[machine].notes.events, |e| {
        matches!(e, NetplayEvent::PeerRejoined { .. })
    })
}

/// Every machine still plays, past `frame`, without a departure or desync.
fn assert_played_on(cluster: &PartyCluster, frame: u32) {
    for machine in &cluster.machines {
        assert!(!any_event(&machine.notes.events, |e| matches!(
            e,
            NetplayEvent::Disconnected { .. } | NetplayEvent::Desync { .. }
        )));
        assert_eq!(machine.netplay.state(), SessionState::Running);
        assert!(
            machine.current_frame() > frame,
            "machine {} is at frame {}",
            machine.player,
            machine.current_frame()
        );
    }
}

#[test]
fn a_player_silent_for_ten_seconds_comes_back_from_a_new_address_and_the_match_resumes_in_sync() {
    let mut cluster = match_with_rejoin_window(31, 30_000);
    cut_off_for_ten_seconds(&mut cluster, 1);

    // The joiner's old address stays cut off; it now sends from another.
    cluster.sockets.rebind(1, NEW_ADDRESS);
    cluster.run_until(24_000);
    assert!(saw_rejoin(&cluster, 0));
    // About 14 of the 24 seconds were played (less the start-up, which
    // protocol 9's cookie and key proof make two round trips longer).
    assert_played_on(&cluster, 790);
    cluster.assert_same_final_checksums(&[0, 1], 700);
}

#[test]
fn a_host_whose_address_changed_is_followed_there_by_its_joiner() {
    let mut cluster = match_with_rejoin_window(35, 30_000);
    cluster.run_until(4_000);
    cluster.isolate(0);
    cluster.run_until(7_000);
    cluster.sockets.rebind(0, NEW_ADDRESS);
    cluster.run_until(15_000);
    assert!(saw_rejoin(&cluster, 1));
    assert_played_on(&cluster, 500);
    cluster.assert_same_final_checksums(&[0, 1], 450);
}

#[test]
fn with_three_players_the_other_two_wait_for_the_silent_one_and_all_play_on_when_it_is_back() {
    let mut cluster = match_of(3, 36, 30_000);
    cut_off_for_ten_seconds(&mut cluster, 2);
    cluster.sockets.rebind(2, NEW_ADDRESS);
    cluster.run_until(24_000);
    // About 13 of the 24 seconds were played.
    assert_played_on(&cluster, 750);
    assert!(saw_rejoin(&cluster, 0) && saw_rejoin(&cluster, 1));
    cluster.assert_same_final_checksums(&[0, 1, 2], 700);
}

/// The first moment after `since` a machine's frames ran again.
fn resumed_at(cluster: &PartyCluster, machine: usize, since: Millis) -> Option<Millis> {
    cluster.machines[machine]
        .notes
        .events
        .iter()
        .find_map(|(at, e)| match e {
            NetplayEvent::StoppedWaiting { .. } if *at >= since => Some(*at),
            _ => None,
        })
}

/// The figures of docs/measurements.md: `cargo test --test netplay
/// -- --nocapture ten_second_outage` prints them.
#[test]
fn after_a_ten_second_outage_play_resumes_within_a_second_of_the_links_return() {
    const CUT_AT: Millis = 4_000;
    const BACK_AT: Millis = 14_000;
    const END: Millis = 20_000;
    let mut uninterrupted = match_with_rejoin_window(37, 30_000);
    uninterrupted.run_until(END);
    for new_address in [false, true] {
        let mut cluster = match_with_rejoin_window(37, 30_000);
        cluster.run_until(CUT_AT);
        cluster.isolate(1);
        cluster.run_until(BACK_AT);
        if new_address {
            cluster.sockets.rebind(1, NEW_ADDRESS);
        } else {
            cluster.reconnect(1);
        }
        cluster.run_until(END);
        for machine in 0..2 {
            let resumed = resumed_at(&cluster, machine, BACK_AT).expect("play resumed");
            let lost = uninterrupted.machines[machine].current_frame()
                - cluster.machines[machine].current_frame();
            println!(
                "10 s outage, back from {} address: machine {machine} played again {} ms after the link's return, {lost} frames behind an uninterrupted match",
                if new_address { "a new" } else { "the same" },
                resumed - BACK_AT,
            );
            assert!(resumed - BACK_AT < 1_000, "{} ms", resumed - BACK_AT);
            // The outage's 600 frames, less the prediction window played
            // into it, plus at most a second.
            assert!((580..=660).contains(&lost), "{lost} frames lost");
        }
        cluster.assert_same_final_checksums(&[0, 1], 500);
    }
}

#[test]
fn a_spectator_watches_on_through_a_player_s_fifteen_second_absence() {
    let mut cluster = match_with_rejoin_window(38, 30_000);
    cluster.run_until(3_000);
    let setup = MatchSetup::new(2, 38, LINK);
    cluster.add_watcher_with(&setup, WATCHER, party_game(), |config| {
        config.rejoin_window_ms = 30_000;
    });
    cluster.run_until(5_000);
    cluster.isolate(1);
    cluster.run_until(20_000);
    cluster.sockets.rebind(1, NEW_ADDRESS);
    cluster.run_until(28_000);
    let watcher = &cluster.watchers[0];
    assert_eq!(
        watcher.node.spectator.phase(),
        SpectatorPhase::Watching,
        "{:?}",
        watcher.events
    );
    assert!(watcher.node.current_frame() > 500);
    for machine in &cluster.machines {
        let comparison = compare_checksum_logs(&watcher.node.sink, &machine.sink);
        assert_eq!(comparison.first_difference, None, "{comparison:?}");
    }
}

#[test]
fn a_player_silent_for_ten_seconds_comes_back_from_the_same_address_in_sync() {
    let mut cluster = match_with_rejoin_window(32, 30_000);
    cut_off_for_ten_seconds(&mut cluster, 1);
    cluster.reconnect(1);
    cluster.run_until(24_000);
    for machine in &cluster.machines {
        assert!(!any_event(&machine.notes.events, |e| matches!(
            e,
            NetplayEvent::Disconnected { .. } | NetplayEvent::PeerRejoined { .. }
        )));
        assert!(machine.current_frame() > 800);
    }
    cluster.assert_same_final_checksums(&[0, 1], 700);
}

/// The challenges that reached the stranger, by nonce.
fn challenges_to_stranger(cluster: &mut PartyCluster) -> Vec<u64> {
    let mut port = cluster.sockets.port(STRANGER);
    let mut datagram = Vec::new();
    let mut nonces = Vec::new();
    while port.receive(&mut datagram).is_some() {
        if let Ok((_, Message::RejoinChallenge { nonce })) =
            codec::decode(auth::without_tag(&datagram))
        {
            nonces.push(nonce);
        }
    }
    nonces
}

/// A genuine datagram of the joiner (machine 1), tagged with its link's
/// key, as a stranger could capture it.
fn joiners_datagram(cluster: &PartyCluster) -> Vec<u8> {
    let mut datagram = encoded(
        &Header {
            version: netcode::protocol::PROTOCOL_VERSION,
            session: SessionToken::UNKNOWN,
            sequence: Sequence(40_000),
        },
        &Message::KeepAlive,
    );
    assert!(cluster.machines[1].netplay.seal_for(0, &mut datagram));
    datagram
}

#[test]
fn a_stranger_replaying_a_players_datagrams_or_answering_without_its_key_moves_nothing() {
    let mut cluster = match_with_rejoin_window(33, 30_000);
    // A genuine datagram of the joiner, tagged with its link's key.
    cluster.run_until(3_000);
    let replayed = joiners_datagram(&cluster);
    let mut forged = replayed.clone();
    let last = forged.len() - 1;
    forged[last] ^= 1;
    cluster.isolate(1);
    let mut answered = 0;
    while cluster.now < 9_000 {
        if cluster.now % 100 == 0 {
            let mut port = cluster.sockets.port(STRANGER);
            port.send(0, &forged);
            port.send(0, &replayed);
        }
        cluster.step();
        for nonce in challenges_to_stranger(&mut cluster) {
            // The stranger can read the nonce, but cannot tag with the
            // joiner's key: it tags with a key of its own making.
            let mut proof = encoded(
                &Header {
                    version: netcode::protocol::PROTOCOL_VERSION,
                    session: SessionToken::UNKNOWN,
                    sequence: Sequence(41_000 + answered),
                },
                &Message::RejoinProof { nonce },
            );
            auth::seal_handshake(&mut proof);
            cluster.sockets.port(STRANGER).send(0, &proof);
            answered += 1;
        }
    }
    assert!(answered > 0, "the replayed datagram earned a challenge");
    assert!(!any_event(&cluster.machines[0].notes.events, |e| matches!(
        e,
        NetplayEvent::PeerRejoined { .. } | NetplayEvent::Disconnected { .. }
    )));
    // The link stayed where the player is: it comes back there.
    cluster.reconnect(1);
    cluster.run_until(16_000);
    assert!(cluster.machines.iter().all(|m| m.current_frame() > 500));
    cluster.assert_same_final_checksums(&[0, 1], 400);
}

#[test]
fn a_players_datagram_replayed_once_from_a_spoofed_address_earns_that_address_one_challenge() {
    let mut cluster = match_with_rejoin_window(35, 30_000);
    cluster.run_until(3_000);
    let replayed = joiners_datagram(&cluster);
    cluster.isolate(1);
    // The joiner went quiet: only then is a new address looked at.
    cluster.run_until(5_000);
    cluster.sockets.port(STRANGER).send(0, &replayed);
    let mut challenges = Vec::new();
    while cluster.now < 9_000 {
        cluster.step();
        challenges.extend(challenges_to_stranger(&mut cluster));
    }
    assert_eq!(challenges.len(), 1, "{challenges:?}");
}

fn first_timeout_at(cluster: &PartyCluster, machine: usize) -> Option<Millis> {
    cluster.machines[machine]
        .notes
        .events
        .iter()
        .find_map(|(at, e)| match e {
            NetplayEvent::Disconnected {
                reason: DisconnectReason::TimedOut,
                ..
            } => Some(*at),
            _ => None,
        })
}

#[test]
fn past_the_rejoin_window_the_match_ends_as_a_silent_link_ends_it() {
    let mut cluster = match_with_rejoin_window(34, 8_000);
    cluster.run_until(4_000);
    cluster.isolate(1);
    cluster.run_until(20_000);
    for machine in 0..2 {
        let at = first_timeout_at(&cluster, machine).expect("the silent peer was dropped");
        assert!(
            (12_000..13_000).contains(&at),
            "machine {machine} dropped its peer at {at} ms, not when the 8 s window closed"
        );
        assert!(any_event(&cluster.machines[machine].notes.events, |e| {
            matches!(e, NetplayEvent::MatchEnded { .. })
        }));
        assert_eq!(
            cluster.machines[machine].netplay.state(),
            SessionState::Ended
        );
    }
}
