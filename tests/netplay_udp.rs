//! The netplay tick over real sockets: two machines, each its own Duel core
//! and its own non-blocking UDP socket on loopback (port 0, read back), play
//! a short match through `NetplayMachine::tick`, the loop the demo and the
//! simulated clusters use, and agree on every final frame.

mod support;

use netcade::app::frame_clock::FrameClock;
use netcade::app::frame_sink::{compare_checksum_logs, ChecksumLog};
use netcade::app::netplay_tick::NetplayMachine;
use netcade::net::udp::UdpTransport;
use netcade::netplay::{NetplayConfig, NetplaySession};
use netcade::protocol::{PlayerSlots, SessionSettings, SessionToken};
use std::net::SocketAddr;
use support::netplay::{DuelGame, MachineHooks};

const FRAMES: u32 = 300;

fn config(me: u8, peer: SocketAddr) -> NetplayConfig<SocketAddr> {
    let config = NetplayConfig::new(
        SessionToken(0x0DD0_0000 + u32::from(me)),
        "duel",
        "1",
        1,
        SessionSettings::default(),
        PlayerSlots::single(me),
    );
    if me == 0 {
        config.accept(Some(peer), PlayerSlots::single(1))
    } else {
        config.dial(peer, PlayerSlots::single(0))
    }
}

#[test]
fn two_duel_machines_over_loopback_udp_agree_on_every_final_frame() {
    let mut sockets = [
        UdpTransport::bind("127.0.0.1:0").unwrap(),
        UdpTransport::bind("127.0.0.1:0").unwrap(),
    ];
    let addresses = sockets
        .each_ref()
        .map(|socket| socket.local_address().unwrap());
    let mut machines: Vec<_> = (0..2u8)
        .map(|me| {
            let peer = addresses[1 - me as usize];
            let netplay = NetplaySession::new(config(me, peer), 0).unwrap();
            let clock = FrameClock::new(60.0, 1_000);
            let mut machine = NetplayMachine::new(
                netplay,
                Box::new(DuelGame::load()),
                ChecksumLog::new(1 << 12),
                clock,
            );
            machine.stop_at_frame = Some(FRAMES);
            machine
        })
        .collect();
    // The loop's clock is a counter, one millisecond a pass (no sleeps):
    // loopback datagrams simply arrive within a few passes.
    let mut hooks = MachineHooks::pad();
    let mut now_ms = 0;
    while machines.iter().any(|m| m.current_frame() < FRAMES) {
        now_ms += 1;
        assert!(now_ms < 120_000, "the match stalled");
        for (machine, socket) in machines.iter_mut().zip(&mut sockets) {
            machine
                .tick(now_ms * 1000, 1.0, socket, &mut hooks)
                .expect("the session advances over UDP");
        }
    }
    // A few more passes so the last inputs are acknowledged and final.
    for _ in 0..200 {
        now_ms += 1;
        for (machine, socket) in machines.iter_mut().zip(&mut sockets) {
            machine
                .tick(now_ms * 1000, 1.0, socket, &mut hooks)
                .unwrap();
        }
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
}
