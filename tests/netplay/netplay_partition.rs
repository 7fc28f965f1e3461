//! Machines cut off from each other: a short partition stalls the match and
//! it recovers in sync; a long one ends in a clean disconnect, after which a
//! match of two ends and a match of three goes on without the lost machine.

use netcade::net::sim::LinkConditions;
use netcode::input::Buttons;
use netcode::netplay::NetplayEvent;
use netcode::rollback::{DisconnectReason, Frame, PlayerId, SessionState};
use support::netplay::{any_event, party_cluster, party_game, Cluster, MatchSetup, PartyCluster};

/// The links of every match here.
const LINK: LinkConditions = LinkConditions::latency(20).with_jitter(5);

#[test]
fn a_two_second_partition_stalls_the_match_which_then_recovers_in_sync() {
    let mut cluster = party_cluster(2, 21, LINK);
    cluster.run_until(5_000);
    let before: Vec<u32> = cluster.machines.iter().map(|m| m.current_frame()).collect();
    cluster.isolate(1);
    cluster.run_until(7_000);
    for (machine, &frame) in cluster.machines.iter().zip(&before) {
        // Two seconds are 120 frames; the prediction window allows 8 more.
        assert!(
            machine.current_frame() <= frame + 8 + 4,
            "machine {} ran on during the partition: {frame} -> {}",
            machine.player,
            machine.current_frame()
        );
        assert!(any_event(&machine.notes.events, |e| matches!(
            e,
            NetplayEvent::WaitingForPeer { .. }
        )));
        assert!(any_event(&machine.notes.events, |e| matches!(
            e,
            NetplayEvent::NetworkInterrupted { .. }
        )));
    }
    cluster.reconnect(1);
    cluster.run_until(15_000);
    for machine in &cluster.machines {
        assert!(any_event(&machine.notes.events, |e| matches!(
            e,
            NetplayEvent::NetworkResumed { .. }
        )));
        assert!(any_event(&machine.notes.events, |e| matches!(
            e,
            NetplayEvent::StoppedWaiting { waited_ms } if *waited_ms >= 1_500
        )));
        assert!(!any_event(&machine.notes.events, |e| matches!(
            e,
            NetplayEvent::Disconnected { .. } | NetplayEvent::Desync { .. }
        )));
        assert_eq!(machine.netplay.state(), SessionState::Running);
        // About 13 of the 15 seconds were played.
        assert!(machine.current_frame() > 740, "{}", machine.current_frame());
    }
    cluster.assert_same_final_checksums(&[0, 1], 700);
}

fn disconnected_at(events: &[(u64, NetplayEvent)], player: u8) -> Option<Frame> {
    events.iter().find_map(|(_, e)| match e {
        NetplayEvent::Disconnected {
            player: p,
            at_frame,
            reason: DisconnectReason::TimedOut,
        } if *p == PlayerId::new(player) => Some(*at_frame),
        _ => None,
    })
}

#[test]
fn a_ten_second_partition_between_two_machines_ends_the_match_cleanly() {
    let mut cluster = party_cluster(2, 22, LINK);
    cluster.run_until(4_000);
    cluster.isolate(1);
    cluster.run_until(14_000);
    let mut first_gone = u32::MAX;
    for (me, other) in [(0usize, 1u8), (1, 0)] {
        let machine = &cluster.machines[me];
        let at = disconnected_at(&machine.notes.events, other)
            .unwrap_or_else(|| panic!("machine {me} does not say P{} timed out", other + 1));
        first_gone = first_gone.min(at.number());
        assert!(any_event(&machine.notes.events, |e| matches!(
            e,
            NetplayEvent::MatchEnded { .. }
        )));
        assert_eq!(machine.netplay.state(), SessionState::Ended);
    }
    // Cut off from each other, they cannot agree where the match stops:
    // every frame before the earlier of the two stops is final and the same
    // on both (a frame is final with its inputs: the last one before the stop).
    let compared = cluster.assert_same_checksums_before(&[0, 1], 200, first_gone as usize);
    assert_eq!(compared, first_gone as usize);
}

#[test]
fn after_a_ten_second_partition_the_other_two_of_three_machines_play_on() {
    let mut cluster = party_cluster(3, 23, LINK);
    cluster.run_until(4_000);
    cluster.isolate(2);
    cluster.run_until(14_000);
    cluster.reconnect(2);
    cluster.run_until(24_000);
    // Both remaining machines dropped P3 at the same frame, and play on.
    let at0 = disconnected_at(&cluster.machines[0].notes.events, 2).expect("machine 0 drops P3");
    let at1 = disconnected_at(&cluster.machines[1].notes.events, 2).expect("machine 1 drops P3");
    assert_eq!(at0, at1, "the remaining machines agree where P3 stops");
    for machine in &cluster.machines[..2] {
        assert_eq!(machine.netplay.state(), SessionState::Running);
        assert!(!any_event(&machine.notes.events, |e| matches!(
            e,
            NetplayEvent::MatchEnded { .. } | NetplayEvent::Desync { .. }
        )));
        // Ten seconds of play after the disconnect (about 600 frames).
        assert!(
            machine.current_frame() > at0.number() + 550,
            "machine {} is at frame {}, P3 left at {at0}",
            machine.player,
            machine.current_frame()
        );
    }
    let compared = cluster.assert_same_final_checksums(&[0, 1], 0);
    assert!(
        compared as u32 > at0.number() + 500,
        "{compared} frames compared"
    );
    // The cut-off machine lost both others: its match is over.
    let lost = &cluster.machines[2];
    assert!(disconnected_at(&lost.notes.events, 0).is_some());
    assert!(disconnected_at(&lost.notes.events, 1).is_some());
    assert_eq!(lost.netplay.state(), SessionState::Ended);
}

/// Address of the spectator watching machine 0.
const SPECTATOR: u8 = 9;

/// Machine 1 stops hearing P3 400 ms before machine 0 does, and its own
/// inputs reach machine 0 four frames early: machine 0 runs 2 × 8
/// prediction + 4 delay frames past the frame where machine 1's view of P3
/// ends, the frame both must drop P3 at, holding P3's real inputs (confirmed
/// there) for frames the departure then rewrites. Returns the cluster and
/// machine 0's frame when P3 was cut off.
fn play_a_departure_behind_confirmed_frames(watched: bool) -> (PartyCluster, u32) {
    let setup = MatchSetup::new(3, 28, LinkConditions::latency(5));
    let mut cluster = Cluster::with_configs(
        setup,
        |_| party_game(),
        |me, config| {
            if me == 0 {
                config.accept_spectators = watched;
            }
            if me == 1 {
                config.initial_input_delay = 4;
                config.dynamic_input_delay = false;
            }
        },
    );
    if watched {
        cluster.add_spectator(&setup, SPECTATOR);
    }
    cluster.run_until(4_000);
    cluster.sockets.net.partition_one_way(2, 1);
    cluster.run_until(4_400);
    let frame_at_isolation = cluster.machines[0].current_frame();
    cluster.isolate(2);
    cluster.run_until(14_000);
    (cluster, frame_at_isolation)
}

#[test]
fn a_machine_far_behind_on_a_leavers_inputs_drops_it_at_a_frame_the_others_still_hold() {
    let (cluster, frame_at_isolation) = play_a_departure_behind_confirmed_frames(false);
    let at0 = disconnected_at(&cluster.machines[0].notes.events, 2).expect("machine 0 drops P3");
    let at1 = disconnected_at(&cluster.machines[1].notes.events, 2).expect("machine 1 drops P3");
    assert_eq!(at0, at1, "the remaining machines agree where P3 stops");
    let back = frame_at_isolation - at0.number();
    eprintln!("P3 dropped at frame {at0}, {back} frames behind machine 0");
    assert!(
        back > 8 + 2,
        "the agreed frame ({back} back) is beyond a ring of just the prediction window"
    );
    for machine in &cluster.machines[..2] {
        assert_eq!(machine.netplay.state(), SessionState::Running);
        assert!(!any_event(&machine.notes.events, |e| matches!(
            e,
            NetplayEvent::MatchEnded { .. }
                | NetplayEvent::DepartureTooFarBack { .. }
                | NetplayEvent::Desync { .. }
        )));
    }
    // Machine 0 had confirmed checkpoints past the agreed frame with P3's
    // real inputs; re-simulated with P3 gone they must not raise a desync
    // (checked above), and the games agree:
    let compared = cluster.assert_same_final_checksums(&[0, 1], 0);
    assert!(
        compared as u32 > at0.number() + 200,
        "{compared} frames compared"
    );
}

#[test]
fn a_spectator_stays_in_sync_when_a_player_leaves_behind_frames_already_confirmed() {
    let (cluster, frame_at_isolation) = play_a_departure_behind_confirmed_frames(true);
    let at = disconnected_at(&cluster.machines[0].notes.events, 2).expect("machine 0 drops P3");
    assert!(
        at.number() + 8 < frame_at_isolation,
        "machine 0 had confirmed P3's inputs past the departure frame"
    );
    let spectator = cluster.spectator.as_ref().unwrap();
    let watched = spectator.replay(party_game(), 3);
    assert!(
        watched.len() as u32 > at.number() + 200,
        "the spectator saw {} frames, P3 left at {at}",
        watched.len()
    );
    for (frame, row) in spectator
        .inputs
        .iter()
        .enumerate()
        .skip(at.number() as usize)
    {
        assert_eq!(
            row[2],
            Some(Buttons::NONE),
            "P3 is idle from {at} on, frame {frame}"
        );
    }
    let played = cluster.final_checksums(0);
    let compared = watched.len().min(played.len());
    for frame in 0..compared {
        assert_eq!(
            watched[frame], played[frame],
            "the spectator's game differs from machine 0's at frame {frame} (P3 left at {at})"
        );
    }
    assert!(
        compared as u32 > at.number() + 200,
        "{compared} frames compared"
    );
}
