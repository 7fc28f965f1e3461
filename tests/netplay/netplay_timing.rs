//! Time on the machines: input delay changing mid-match keeps them in sync,
//! and time sync pulls a machine whose clock runs 1% fast back in step.

use netcade::net::sim::LinkConditions;
use netcode::netplay::NetplayEvent;
use support::netplay::{any_event, party_game, Cluster, MatchSetup};

#[test]
fn input_delay_changing_mid_match_keeps_the_machines_in_sync() {
    // Machine 0's delay is set by hand; machine 1's follows the 100 ms
    // round trip on its own.
    let setup = MatchSetup::new(2, 41, LinkConditions::latency(50).with_jitter(10));
    let mut cluster = Cluster::with_configs(
        setup,
        |_| party_game(),
        |me, config| config.dynamic_input_delay = me != 0,
    );
    for (at, delay) in [(5_000, 4), (10_000, 0), (15_000, 3), (20_000, 1)] {
        cluster.run_until(at);
        cluster.machines[0].netplay.set_input_delay(delay);
        assert_eq!(cluster.machines[0].netplay.input_delay(), delay);
    }
    cluster.run_until(25_000);
    let changes = |machine: usize| {
        cluster.machines[machine]
            .notes
            .events
            .iter()
            .filter(|(_, e)| matches!(e, NetplayEvent::InputDelayChanged { .. }))
            .count()
    };
    assert_eq!(changes(0), 4, "machine 0's four changes are reported");
    assert!(
        changes(1) >= 1,
        "machine 1 raised its delay for the 100 ms round trip"
    );
    assert!(cluster.machines[1].netplay.input_delay() >= 1);
    cluster.assert_same_final_checksums(&[0, 1], 1_300);
    for machine in &cluster.machines {
        assert!(!any_event(&machine.notes.events, |e| matches!(
            e,
            NetplayEvent::Desync { .. } | NetplayEvent::Disconnected { .. }
        )));
    }
}

#[test]
fn time_sync_pulls_a_machine_running_one_percent_fast_back_within_a_frame() {
    let setup = MatchSetup::new(2, 42, LinkConditions::latency(5));
    let mut cluster = Cluster::new(setup, |_| party_game());
    cluster.machines[1].clock_rate = 1.01;
    // Left alone, 1% is 0.6 frames a second: 18 frames over the match.
    cluster.run_until(20_000);
    let mut worst: i64 = 0;
    let mut sum: i64 = 0;
    let mut samples = 0;
    let mut speed_sums = [0.0f64; 2];
    while cluster.now < 35_000 {
        cluster.run_until(cluster.now + 50);
        for (sum, machine) in speed_sums.iter_mut().zip(&cluster.machines) {
            *sum += f64::from(machine.netplay.frames_per_second_factor());
        }
        let ahead = i64::from(cluster.machines[1].current_frame())
            - i64::from(cluster.machines[0].current_frame());
        worst = worst.max(ahead.abs());
        sum += ahead;
        samples += 1;
    }
    eprintln!(
        "frames ahead: worst {worst}, mean {}",
        sum as f64 / samples as f64
    );
    assert!(worst <= 1, "the fast machine was {worst} frames ahead");
    let speed = |m: usize| speed_sums[m] / f64::from(samples);
    eprintln!("mean speed factors: {} and {}", speed(0), speed(1));
    // Each side corrects half: the fast one slows, the slow one speeds up,
    // so that on average their real frame rates meet.
    let real_rate_ratio = 1.01 * speed(1) / speed(0);
    assert!(
        (real_rate_ratio - 1.0).abs() < 0.002,
        "the machines still run at different rates: ratio {real_rate_ratio}"
    );
    assert_eq!(
        cluster.machines[1].stats.waiting_ticks, 0,
        "time sync, not starvation, kept the machines together"
    );
    cluster.assert_same_final_checksums(&[0, 1], 2_000);
}
