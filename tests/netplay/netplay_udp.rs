//! The netplay tick over real sockets: two machines, each its own Duel core
//! and its own non-blocking socket on loopback (port 0, read back), play a
//! match through `NetplayMachine::tick`, the loop the demo and the simulated
//! clusters use, and agree on every final frame — over plain UDP and over
//! laminar, IPv4 and IPv6, with and without the link conditioner.
//!
//! `cargo test --test netplay -- --nocapture --test-threads 1 netplay_udp::`
//! prints each run's wire rates (README, "Transports").

use netcade::engine::frame_clock::FrameClock;
use netcade::engine::matches::machine::NetplayMachine;
use netcade::engine::sinks::{compare_checksum_logs, ChecksumLog};
use netcade::net::conditioner::ConditionedTransport;
use netcade::net::link::{SocketTransport, TransportKind};
use netcade::net::sim::LinkConditions;
use netcade::net::{ip_udp_header_bytes, ManualClock, WireStats};
use netcode::netplay::NetplaySession;
use netcode::protocol::MAX_DATAGRAM_SIZE;
use std::net::SocketAddr;
use support::ice::two_player_config;
use support::load_duel_dojo;
use support::netplay::MachineNotes;

const FRAMES: u32 = 600;

/// What one side of a loopback match put on the wire.
struct SideReport {
    wire: WireStats,
    largest_datagram: usize,
}

/// A [`SocketTransport`] that remembers its largest datagram sent.
struct Measured {
    socket: SocketTransport,
    largest_datagram: usize,
}

impl netcade::net::Transport for Measured {
    type Address = SocketAddr;
    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        self.largest_datagram = self.largest_datagram.max(datagram.len());
        self.socket.send(to, datagram);
    }
    fn receive(&mut self, into: &mut Vec<u8>) -> Option<SocketAddr> {
        self.socket.receive(into)
    }
}

/// Plays a `FRAMES`-frame Duel match between two `kind` sockets bound at
/// `bind`, each behind a conditioner applying `conditions`; asserts both
/// agree on every final frame; returns each side's wire use and the match's
/// length in (loop) seconds.
fn play_duel_match(
    kind: TransportKind,
    bind: &str,
    conditions: LinkConditions,
) -> ([SideReport; 2], f64) {
    let bind: SocketAddr = bind.parse().unwrap();
    let clock = ManualClock::new();
    let mut sockets = [0u64, 1].map(|side| {
        let socket = Measured {
            socket: SocketTransport::bind(kind, bind).unwrap(),
            largest_datagram: 0,
        };
        ConditionedTransport::new(socket, conditions, 17 + side, clock.clone())
    });
    let addresses = sockets
        .each_ref()
        .map(|socket| socket.inner().socket.local_address());
    let mut machines: Vec<_> = (0..2u8)
        .map(|me| {
            let peer = addresses[1 - me as usize];
            let netplay = NetplaySession::new(two_player_config(me, peer), 0).unwrap();
            let mut machine = NetplayMachine::new(
                netplay,
                load_duel_dojo(),
                ChecksumLog::new(1 << 12),
                FrameClock::new(60.0, 1_000),
            );
            machine.stop_at_frame = Some(FRAMES);
            machine
        })
        .collect();
    // The loop's clock is a counter, one millisecond a pass (no sleeps):
    // loopback datagrams simply arrive within a few passes.
    let mut hooks = MachineNotes::default();
    let mut now_ms = 0;
    let mut pass = |now_ms: u64, machines: &mut Vec<_>, sockets: &mut [_; 2]| {
        clock.set(now_ms * 1000);
        for (machine, socket) in machines.iter_mut().zip(sockets.iter_mut()) {
            NetplayMachine::tick(machine, now_ms * 1000, 1.0, socket, &mut hooks)
                .expect("the session advances over the socket");
        }
    };
    while machines.iter().any(|m| m.current_frame() < FRAMES) {
        now_ms += 1;
        assert!(now_ms < 120_000, "the match stalled");
        pass(now_ms, &mut machines, &mut sockets);
    }
    let seconds = now_ms as f64 / 1000.0;
    let reports = sockets.each_ref().map(|socket| SideReport {
        wire: socket.inner().socket.wire_stats(),
        largest_datagram: socket.inner().largest_datagram,
    });
    // A few more passes so the last inputs are acknowledged and final.
    for _ in 0..500 {
        now_ms += 1;
        pass(now_ms, &mut machines, &mut sockets);
    }
    let comparison = compare_checksum_logs(&machines[0].sink, &machines[1].sink);
    assert_eq!(comparison.first_difference, None, "{comparison:?}");
    assert!(comparison.compared >= FRAMES as usize - 2, "{comparison:?}");
    let mut distinct: Vec<_> = machines[0]
        .sink
        .checksums()
        .flatten()
        .map(|c| c.0)
        .collect();
    distinct.sort_unstable();
    distinct.dedup();
    assert!(
        distinct.len() > FRAMES as usize / 2,
        "the game barely changed"
    );
    for report in &reports {
        assert!(report.largest_datagram <= MAX_DATAGRAM_SIZE);
    }
    (reports, seconds)
}

/// Prints a side's rates (bytes counted with IP/UDP headers) and returns
/// its sent bytes per second.
fn print_rates(label: &str, reports: &[SideReport; 2], seconds: f64, ip_header: u64) -> f64 {
    let mut sent_rates = Vec::new();
    for (side, report) in ["host", "joiner"].iter().zip(reports) {
        let (sent, received) = report.wire.bytes_with_ip_headers(ip_header);
        let sent_per_s = sent as f64 / seconds;
        println!(
            "{label:<28} {side:<6} sent {sent_per_s:>7.0} B/s ({:>5.1} datagrams/s), received {:>7.0} B/s, largest datagram {} B",
            report.wire.sent_datagrams as f64 / seconds,
            received as f64 / seconds,
            report.largest_datagram,
        );
        sent_rates.push(sent_per_s);
    }
    sent_rates.iter().sum::<f64>() / 2.0
}

#[test]
fn two_duel_machines_over_loopback_udp_agree_on_every_final_frame() {
    play_duel_match(TransportKind::Udp, "127.0.0.1:0", LinkConditions::PERFECT);
}

#[test]
fn two_duel_machines_over_loopback_laminar_agree_on_every_final_frame() {
    play_duel_match(
        TransportKind::Laminar,
        "127.0.0.1:0",
        LinkConditions::PERFECT,
    );
}

/// The demo's link (80 ms RTT ± 10 ms, 2 % loss) plus duplication and
/// reordering, applied by the conditioner on real sockets.
fn rough_link() -> LinkConditions {
    LinkConditions::latency(40)
        .with_jitter(10)
        .with_loss(0.02)
        .with_duplication(0.01)
        .with_reordering(0.01)
}

#[test]
fn duel_over_a_conditioned_loopback_link_still_agrees_on_both_transports() {
    for kind in [TransportKind::Udp, TransportKind::Laminar] {
        play_duel_match(kind, "127.0.0.1:0", rough_link());
    }
}

#[test]
fn two_duel_machines_over_ipv6_loopback_agree_on_both_transports() {
    if std::net::UdpSocket::bind("[::1]:0").is_err() {
        eprintln!("SKIPPED: this machine has no IPv6 loopback ([::1])");
        return;
    }
    for kind in [TransportKind::Udp, TransportKind::Laminar] {
        let (reports, seconds) = play_duel_match(kind, "[::1]:0", LinkConditions::PERFECT);
        print_rates(
            &format!("{kind:?} IPv6"),
            &reports,
            seconds,
            ip_udp_header_bytes("[::1]:0".parse().unwrap()),
        );
    }
}

/// The README's "Transports" figures: the same match over each transport,
/// side by side in one run, bytes counted with 28 bytes of IPv4/UDP header
/// per datagram (and laminar's own 5).
#[test]
fn udp_sends_fewer_bytes_than_laminar_for_the_same_match() {
    let mut rates = Vec::new();
    for (kind, conditions, label) in [
        (
            TransportKind::Udp,
            LinkConditions::PERFECT,
            "udp, clean loopback",
        ),
        (
            TransportKind::Laminar,
            LinkConditions::PERFECT,
            "laminar, clean loopback",
        ),
        (TransportKind::Udp, rough_link(), "udp, 80 ms RTT 2% loss"),
        (
            TransportKind::Laminar,
            rough_link(),
            "laminar, 80 ms RTT 2% loss",
        ),
    ] {
        let (reports, seconds) = play_duel_match(kind, "127.0.0.1:0", conditions);
        let ipv4 = ip_udp_header_bytes("127.0.0.1:0".parse().unwrap());
        rates.push(print_rates(label, &reports, seconds, ipv4));
    }
    assert!(
        rates[0] < rates[1],
        "udp {} B/s, laminar {} B/s",
        rates[0],
        rates[1]
    );
    assert!(
        rates[2] < rates[3],
        "udp {} B/s, laminar {} B/s",
        rates[2],
        rates[3]
    );
}
