//! The endpoint's own tests: a host and a joiner over a lossless instant wire.

use super::*;

fn handshake(slot: u8) -> Handshake {
    Handshake {
        core_name: "duel".into(),
        core_version: "1".into(),
        content_hash: 7,
        local_slots: PlayerSlots::single(slot),
        settings: SessionSettings::default(),
        ..Handshake::default()
    }
}

/// A host and a joiner that exchanged datagrams every 20 ms for `rounds`
/// rounds over a lossless instant wire, and the time now.
fn pair_after(rounds: u32) -> (PeerEndpoint, PeerEndpoint, Millis) {
    let mut host =
        PeerEndpoint::new(EndpointConfig::host(SessionToken(9), handshake(0)), 0).unwrap();
    let mut joiner = PeerEndpoint::new(EndpointConfig::joiner(handshake(1)), 0).unwrap();
    let mut now = 0;
    for _ in 0..rounds {
        now += 20;
        for datagram in joiner.poll_datagrams(now) {
            host.handle_datagram(now, &datagram);
        }
        for datagram in host.poll_datagrams(now) {
            joiner.handle_datagram(now, &datagram);
        }
    }
    assert!(host.is_running() && joiner.is_running());
    (host, joiner, now)
}

/// A host and a joiner, handshake done, events drained.
fn connected_pair() -> (PeerEndpoint, PeerEndpoint, Millis) {
    let (mut host, mut joiner, now) = pair_after(3);
    host.drain_events().for_each(drop);
    joiner.drain_events().for_each(drop);
    (host, joiner, now)
}

#[test]
fn every_copy_of_a_start_is_reported_and_acknowledged() {
    let (mut host, mut joiner, now) = connected_pair();
    joiner.send_ready();
    for datagram in joiner.poll_datagrams(now) {
        host.handle_datagram(now, &datagram);
    }
    assert!(host.drain_events().any(|e| e == Event::PeerReady));
    for delay_ms in [120, 40] {
        host.send_start(delay_ms);
        for datagram in host.poll_datagrams(now + 1) {
            joiner.handle_datagram(now + 1, &datagram);
        }
        assert!(joiner
            .drain_events()
            .any(|e| e == Event::StartRequested { delay_ms }));
        for datagram in joiner.poll_datagrams(now + 2) {
            host.handle_datagram(now + 2, &datagram);
        }
        assert!(host.drain_events().any(|e| e == Event::StartAcknowledged));
    }
}

#[test]
fn a_changed_connection_status_reaches_the_peer_with_no_input_to_carry_it() {
    // Handshake, then both sides idle with nothing unacknowledged.
    let (mut host, mut joiner, mut now) = pair_after(20);
    joiner.drain_events().for_each(drop);
    host.set_local_connection_status(3, Some(Frame::new(42)));
    let mut seen = false;
    for _ in 0..5 {
        now += 60;
        for datagram in host.poll_datagrams(now) {
            joiner.handle_datagram(now, &datagram);
        }
        seen |= joiner.drain_events().any(|event| {
            event
                == Event::RemoteSeesDisconnect {
                    player: 3,
                    at: Frame::new(42),
                }
        });
    }
    assert!(seen, "the status went out although no input was queued");
}

#[test]
fn a_rejoin_challenge_is_answered_by_a_proof_only_the_peer_can_read_from_a_new_address() {
    let (mut host, mut joiner, now) = connected_pair();
    let mut challenges = Vec::new();
    host.send_rejoin_challenge(now, 0xFEED, &mut |d| challenges.push(d.to_vec()));
    assert_eq!(challenges.len(), 1);
    // The challenge travels on the link as usual; the proof comes back.
    joiner.handle_datagram(now, &challenges[0]);
    let replies = joiner.poll_datagrams(now + 1);
    let proof = replies
        .iter()
        .find_map(|d| match host.read_from_new_address(d) {
            Some(Message::RejoinProof { nonce }) => Some((nonce, d.clone())),
            _ => None,
        });
    let (nonce, datagram) = proof.expect("the joiner answered with a proof");
    assert_eq!(nonce, 0xFEED);
    // Its own datagrams do not open with the key of the other direction,
    // and a changed byte fails the tag.
    assert_eq!(joiner.read_from_new_address(&datagram), None);
    let mut damaged = datagram.clone();
    damaged[6] ^= 1;
    assert_eq!(host.read_from_new_address(&damaged), None);
}
