//! A departure agreed at a frame older than any state this machine kept:
//! it leaves the match cleanly (an event says why) instead of failing
//! every tick. The state ring is sized so real matches do not get there
//! (see netplay_partition); here two hand-driven peers force it.

use netcade::input::Buttons;
use netcade::netplay::{NetplayConfig, NetplayEvent, NetplaySession};
use netcade::protocol::{
    DisconnectCause, DisconnectReason, EndpointConfig, Event, Handshake, PeerEndpoint, PlayerSlots,
    SessionSettings, SessionToken,
};
use netcade::rollback::{Frame, FrameOutcome, PlayerId, Request};

fn settings() -> SessionSettings {
    SessionSettings {
        player_count: 3,
        ..SessionSettings::default()
    }
}

fn peer(slot: u8) -> PeerEndpoint {
    let handshake = Handshake {
        core_name: "stub".into(),
        core_version: "1".into(),
        content_hash: 1,
        local_slots: PlayerSlots::single(slot),
        settings: settings(),
    };
    PeerEndpoint::new(EndpointConfig::joiner(handshake), 0).unwrap()
}

#[test]
fn a_departure_older_than_every_kept_state_makes_the_machine_leave_cleanly() {
    let config = NetplayConfig::new(
        SessionToken(0xD0_0D),
        "stub",
        "1",
        1,
        settings(),
        PlayerSlots::single(0),
    )
    .accept(Some(1), PlayerSlots::single(1))
    .accept(Some(2), PlayerSlots::single(2));
    let mut machine = NetplaySession::new(config, 0).unwrap();
    // Addresses 1 and 2: the machines of P2 and P3, driven by hand. They
    // send 60 frames of input up front, so the machine never waits.
    let mut peers = [peer(1), peer(2)];
    let mut fed = [false; 2];
    let mut requests = Vec::new();
    let mut events = Vec::new();
    let mut left = false;
    for now in 1..5_000u64 {
        for (index, endpoint) in peers.iter_mut().enumerate() {
            let address = index + 1;
            for datagram in endpoint.poll_datagrams(now) {
                machine.handle_datagram(now, address, &datagram);
            }
            let mut started = false;
            for event in endpoint.drain_events() {
                started |= matches!(event, Event::StartRequested { .. });
                if let Event::Disconnected {
                    cause: DisconnectCause::PeerLeft(DisconnectReason::Quit),
                } = event
                {
                    left = true;
                }
            }
            if endpoint.is_running() && !fed[index] {
                endpoint.send_ready();
                if started {
                    fed[index] = true;
                    for frame in 0..60 {
                        endpoint
                            .add_local_input(Frame::new(frame), &[Buttons::NONE])
                            .unwrap();
                    }
                }
            }
        }
        if now % 16 == 0 {
            machine
                .add_local_input(PlayerId::new(0), Buttons::NONE)
                .unwrap();
            let outcome = machine
                .advance_frame(now, &mut requests)
                .expect("a departure too far back is no error");
            for request in &requests {
                if let Request::Save { frame } = *request {
                    machine.state_slot_mut(frame).unwrap().buffer_mut().clear();
                }
            }
            if outcome == FrameOutcome::Ended {
                break;
            }
        }
        if machine.current_frame() == Frame::new(40) {
            // P2's machine says P3 left at frame 1; we hold P3's inputs to
            // frame 60 and run at frame 40, long past frame 1's state.
            peers[0].set_local_connection_status(2, Some(Frame::new(1)));
        }
        machine.poll(now, |to, datagram| {
            peers[to - 1].handle_datagram(now, datagram)
        });
        events.extend(machine.events());
    }
    assert!(
        events.contains(&NetplayEvent::DepartureTooFarBack {
            player: PlayerId::new(2),
            at_frame: Frame::new(1),
            oldest: Frame::new(40 - 22),
        }),
        "{events:?}"
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, NetplayEvent::MatchEnded { .. })));
    // Give the goodbye time to go out.
    for now in 5_000..5_100u64 {
        machine.poll(now, |to, datagram| {
            peers[to - 1].handle_datagram(now, datagram)
        });
        for endpoint in &mut peers {
            for event in endpoint.drain_events() {
                left |= matches!(
                    event,
                    Event::Disconnected {
                        cause: DisconnectCause::PeerLeft(DisconnectReason::Quit)
                    }
                );
            }
        }
    }
    assert!(left, "the other machines were told this one left");
}
