//! A machine whose game diverges is caught by the checksum exchange, within
//! the checksum interval plus a round trip.

use netcade::engine::matches::desync_diagnosis::DesyncAnswer;
use netcade::net::sim::LinkConditions;
use netcode::encoding::StateBlobError;
use netcode::netplay::{NetplayEvent, PeerFault};
use netcode::rollback::{Frame, PlayerId};
use support::load_duel_dojo;
use support::netplay::{party_game, Cluster, MatchSetup};

const INTERVAL: u16 = 10;
const ONE_WAY_MS: u64 = 40;
const FRAME_MS: f64 = 1000.0 / 60.0;

#[test]
fn a_perturbed_game_is_reported_as_a_desync_within_the_interval_plus_a_round_trip() {
    let mut setup = MatchSetup::new(2, 31, LinkConditions::latency(ONE_WAY_MS));
    setup.checksum_interval = INTERVAL;
    let mut cluster = Cluster::new(setup, |_| party_game());
    cluster.run_until(3_000);
    // From frame `perturbed` on, machine 1 sees P2's buttons differently.
    let perturbed = Frame::new(cluster.machines[1].current_frame() + 5);
    cluster.machines[1].notes.perturb_from = Some(perturbed);
    let mut perturbed_at_ms = None;
    let mut found = None;
    while cluster.now < 8_000 && found.is_none() {
        cluster.step();
        if perturbed_at_ms.is_none() && cluster.machines[1].current_frame() > perturbed.number() {
            perturbed_at_ms = Some(cluster.now);
        }
        for machine in &cluster.machines {
            for (at, event) in &machine.notes.events {
                if let NetplayEvent::Desync {
                    frame,
                    player,
                    local,
                    remote,
                } = event
                {
                    found.get_or_insert((machine.player, *at, *frame, *player, *local, *remote));
                }
            }
        }
    }
    let (machine, at_ms, frame, player, local, remote) = found.expect("the desync is detected");
    let perturbed_at_ms = perturbed_at_ms.unwrap();
    // The state at the start of the frame after the perturbed one is the
    // first that differs; the first checkpoint from there is reported.
    let first_checkpoint = (perturbed.number() + 1).next_multiple_of(u32::from(INTERVAL));
    assert_eq!(
        frame.number(),
        first_checkpoint,
        "the game diverged after frame {perturbed}"
    );
    assert_ne!(local, remote);
    assert_eq!(player, PlayerId::new(1 - machine));
    // K frames, plus a round trip, plus a couple of frames of scheduling.
    let limit = f64::from(INTERVAL) * FRAME_MS + 2.0 * ONE_WAY_MS as f64 + 3.0 * FRAME_MS;
    let took = (at_ms - perturbed_at_ms) as f64;
    eprintln!("desync detected {took} ms after the divergence (limit {limit} ms)");
    assert!(
        took <= limit,
        "detected {took} ms after the divergence, more than {limit} ms"
    );
}

#[test]
fn machines_that_stay_in_sync_never_report_a_desync_even_checking_every_frame() {
    let mut setup = MatchSetup::new(
        3,
        32,
        LinkConditions::latency(40).with_jitter(15).with_loss(0.03),
    );
    setup.checksum_interval = 1;
    let mut cluster = Cluster::new(setup, |_| party_game());
    cluster.run_until(10_000);
    cluster.assert_same_final_checksums(&[0, 1, 2], 500);
    for machine in &cluster.machines {
        assert!(!machine
            .notes
            .events
            .iter()
            .any(|(_, e)| matches!(e, NetplayEvent::Desync { .. })));
    }
}

/// Duel's fighter 2 record: its x at 0x41 through its last byte.
const DUEL_FIGHTER_2_BYTES: std::ops::Range<usize> = 0x41..0x5b;

#[test]
fn a_member_repaired_from_the_hosts_state_ends_identical_to_the_host_and_is_told_which_bytes_diverged(
) {
    const REPAIR_INTERVAL: u16 = 30;
    let mut setup = MatchSetup::new(2, 33, LinkConditions::latency(ONE_WAY_MS));
    setup.checksum_interval = REPAIR_INTERVAL;
    let mut cluster = Cluster::new(setup, |_| load_duel_dojo());
    // Late enough that fighter 2 moves when its RIGHT flips (the start
    // comes two round trips later since protocol 9: the cookie, the key).
    cluster.run_until(3_500);
    // For a few frames, machine 1 (a member) runs P2's RIGHT flipped, then
    // plays true again once those frames are final: only its state carries
    // the divergence, as with a core that restores a state unfaithfully.
    let interval = u32::from(REPAIR_INTERVAL);
    let perturbed =
        Frame::new((cluster.machines[1].current_frame() + 5).next_multiple_of(interval));
    cluster.machines[1].notes.perturb_from = Some(perturbed);
    while cluster.machines[1]
        .netplay
        .finalized_frame()
        .is_none_or(|final_frame| final_frame <= perturbed)
    {
        cluster.step();
    }
    cluster.machines[1].notes.perturb_from = None;
    cluster.run_until(cluster.now + 6_000);

    let checkpoint = perturbed.number() + interval;
    let diagnosed: Vec<_> = cluster.machines[1]
        .notes
        .desync_answers
        .iter()
        .filter_map(|answer| match answer {
            DesyncAnswer::Diagnosed {
                diagnosis,
                repaired,
            } => Some((diagnosis, *repaired)),
            _ => None,
        })
        .collect();
    let (diagnosis, repaired) = diagnosed.first().expect("the member diagnosed the desync");
    assert!(*repaired, "and repaired it");
    assert_eq!(diagnosis.frame.number(), checkpoint);
    assert!(
        diagnosis
            .memory_diff
            .ranges
            .iter()
            .any(|range| DUEL_FIGHTER_2_BYTES.contains(&range.start)),
        "fighter 2's bytes are named: {}",
        diagnosis.memory_diff
    );
    assert!(
        cluster.machines[0]
            .notes
            .desync_answers
            .iter()
            .any(|answer| matches!(answer, DesyncAnswer::StateSent)),
        "the host sent its state"
    );

    let host = cluster.final_checksums(0);
    let member = cluster.final_checksums(1);
    let shared = host.len().min(member.len());
    assert!(shared > checkpoint as usize + 200, "{shared} frames final");
    let last_differing = (0..shared)
        .rev()
        .find(|&frame| host[frame] != member[frame])
        .expect("the game did diverge");
    // Frames already final when the host's state arrived stay as they were;
    // every frame from the next checkpoint on agrees.
    assert!(
        last_differing < (checkpoint + interval) as usize,
        "frame {last_differing} still differs after the repair at {checkpoint}"
    );
}

#[test]
fn a_checkpoint_state_from_the_host_over_the_members_limit_closes_only_the_hosts_link() {
    let setup = MatchSetup::new(2, 34, LinkConditions::latency(10));
    let mut cluster = Cluster::with_configs(
        setup,
        |_| party_game(),
        |me, config| {
            if me == 1 {
                config.max_start_state_bytes = 100;
            }
        },
    );
    cluster.run_until(2_000);
    // A few bytes on the wire (zeros compress well), far more once expanded.
    let sent = cluster.machines[0].netplay.send_checkpoint_state(
        PlayerId::new(1),
        Frame::new(60),
        &[0; 5_000],
    );
    assert!(sent, "the host sends it");
    cluster.run_until(3_000);
    let fault = cluster.machines[1]
        .notes
        .events
        .iter()
        .find_map(|(_, event)| match event {
            NetplayEvent::PeerFault {
                fault: PeerFault::BadCheckpointState(error),
                ..
            } => Some(error.clone()),
            _ => None,
        });
    assert_eq!(
        fault,
        Some(StateBlobError::TooLarge {
            size: 5_000,
            max: 100
        })
    );
    assert!(
        cluster.machines[1].notes.desync_answers.is_empty(),
        "nothing loaded"
    );
}

/// The blob chunk's message kind (the header's fourth byte).
const BLOB_CHUNK_KIND: u8 = 11;

#[test]
fn a_hosts_state_arriving_after_the_member_dropped_its_own_is_not_compared_and_the_match_goes_on() {
    let mut setup = MatchSetup::new(2, 35, LinkConditions::latency(ONE_WAY_MS));
    setup.checksum_interval = INTERVAL;
    let mut cluster = Cluster::new(setup, |_| party_game());
    cluster.run_until(3_000);
    let perturbed = Frame::new(cluster.machines[1].current_frame() + 5);
    cluster.machines[1].notes.perturb_from = Some(perturbed);
    // The host's chunks are lost for 3 s: 180 frames, past the 8
    // checkpoints (80 frames) whose states the member keeps.
    cluster.lose_kind.push((0, BLOB_CHUNK_KIND, 6_000));
    cluster.run_until(8_000);
    let answers = &cluster.machines[1].notes.desync_answers;
    assert!(
        matches!(answers.first(), Some(DesyncAnswer::TooLate)),
        "{answers:?}"
    );
    let frame_at_8_s = cluster.machines[1].current_frame();
    cluster.run_until(9_000);
    assert!(cluster.machines[1].current_frame() > frame_at_8_s + 50);
}

#[test]
fn a_desync_after_the_last_regular_checkpoint_is_caught_at_the_matchs_last_frame() {
    // 100 frames: the regular checkpoints are 0 and 60; from frame 80 on
    // machine 1 plays another game.
    let last = Frame::new(99);
    let setup = MatchSetup::new(2, 37, LinkConditions::latency(ONE_WAY_MS));
    let mut cluster = Cluster::with_configs(
        setup,
        |_| party_game(),
        |_, config| config.match_frames = Some(last.number() + 1),
    );
    for machine in &mut cluster.machines {
        machine.stop_at_frame = Some(last.number() + 1);
    }
    cluster.machines[1].notes.perturb_from = Some(Frame::new(80));
    cluster.run_until(6_000);
    for machine in &cluster.machines {
        let desyncs: Vec<Frame> = machine
            .notes
            .events
            .iter()
            .filter_map(|(_, event)| match event {
                NetplayEvent::Desync { frame, .. } => Some(*frame),
                _ => None,
            })
            .collect();
        assert_eq!(desyncs, vec![last], "machine {}", machine.player);
    }
}
