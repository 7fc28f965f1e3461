//! What the wire costs: two machines polled every millisecond, as a real
//! loop polls, playing at 60 fps, send about one datagram per frame each way
//! (acks, quality reports and checksums ride on the input datagrams).

use netcade::net::sim::LinkConditions;
use netcode::rollback::PlayerId;
use support::netplay::{party_game, Cluster, MatchSetup, PartyCluster};

/// Bytes of IPv4 and UDP headers around every datagram.
const IP_UDP_HEADER: u64 = 28;

/// Datagrams and bytes (with IP/UDP headers) machine `from` has sent to the
/// other machine, and its current frame.
fn traffic(cluster: &PartyCluster, from: usize) -> (u64, u64, u32) {
    let machine = &cluster.machines[from];
    let other = PlayerId::new(1 - from as u8);
    let stats = machine
        .netplay
        .stats(other)
        .expect("the other player is remote");
    (
        stats.datagrams_sent,
        stats.bytes_sent + IP_UDP_HEADER * stats.datagrams_sent,
        machine.netplay.current_frame().number(),
    )
}

/// Runs a two-player match on `conditions` and returns, per machine, the
/// datagrams per frame and bytes per second sent over ten seconds of play.
fn steady_traffic(conditions: LinkConditions) -> Vec<(f64, f64)> {
    let mut cluster = Cluster::new(MatchSetup::new(2, 11, conditions), |_| party_game());
    cluster.run_until(3_000);
    let before: Vec<_> = (0..2).map(|m| traffic(&cluster, m)).collect();
    cluster.run_until(13_000);
    cluster.assert_all_in_sync_without_trouble(500);
    (0..2)
        .map(|m| {
            let (datagrams, bytes, frame) = traffic(&cluster, m);
            let frames = f64::from(frame - before[m].2);
            let per_frame = (datagrams - before[m].0) as f64 / frames;
            let bytes_per_second = (bytes - before[m].1) as f64 / 10.0;
            eprintln!(
                "machine {m}: {per_frame:.2} datagrams per frame, {:.0} datagrams/s, \
                 {bytes_per_second:.0} bytes/s with IP/UDP headers",
                (datagrams - before[m].0) as f64 / 10.0
            );
            (per_frame, bytes_per_second)
        })
        .collect()
}

#[test]
fn a_pair_polled_every_millisecond_sends_about_one_datagram_per_frame_each_way() {
    for (per_frame, bytes_per_second) in steady_traffic(LinkConditions::latency(30)) {
        assert!(
            per_frame < 1.1,
            "{per_frame:.2} datagrams per frame (acks echoed, or reports sent alone)"
        );
        // The harness's pads hold six buttons on average and change every
        // fourth frame, busier than people play; the bound catches a second
        // datagram per frame or reports sent alone.
        assert!(
            bytes_per_second < 3_600.0,
            "{bytes_per_second:.0} bytes/s with IP/UDP headers"
        );
    }
}

#[test]
fn duplicated_datagrams_are_not_answered_with_more_datagrams() {
    // Every third datagram arrives twice: answering each copy would echo.
    let conditions = LinkConditions::latency(30).with_duplication(0.3);
    for (per_frame, _) in steady_traffic(conditions) {
        assert!(per_frame < 1.1, "{per_frame:.2} datagrams per frame");
    }
}
