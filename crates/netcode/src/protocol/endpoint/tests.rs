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

fn chat_line(text: &str) -> crate::protocol::chat::ChatLine {
    crate::protocol::chat::ChatLine {
        author: String::new(),
        text: text.into(),
    }
}

fn chat_received(endpoint: &mut PeerEndpoint) -> Vec<String> {
    endpoint
        .drain_events()
        .filter_map(|event| match event {
            Event::Chat(line) => Some(line.text),
            _ => None,
        })
        .collect()
}

#[test]
fn a_chat_line_lost_on_the_way_is_resent_until_acknowledged_and_taken_once() {
    let (mut host, mut joiner, mut now) = connected_pair();
    assert!(joiner.send_chat(chat_line("first")));
    assert!(joiner.send_chat(chat_line("second")));
    // Everything the joiner sends now is lost.
    joiner.poll_datagrams(now);
    assert_eq!(joiner.unacked_chat_lines(), 2);
    for _ in 0..30 {
        now += 20;
        for datagram in joiner.poll_datagrams(now) {
            // Every datagram arrives twice: the copy is dropped.
            host.handle_datagram(now, &datagram);
            host.handle_datagram(now, &datagram);
        }
        for datagram in host.poll_datagrams(now) {
            joiner.handle_datagram(now, &datagram);
        }
    }
    assert_eq!(chat_received(&mut host), ["first", "second"]);
    assert_eq!(joiner.unacked_chat_lines(), 0);
    assert_eq!(joiner.stats().chat_lines_sent, 2);
}

#[test]
fn a_peer_flooding_chat_loses_the_lines_over_the_rate_limit() {
    let (mut host, mut joiner, now) = connected_pair();
    // The endpoint does not limit what its owner sends: a session does.
    for index in 0..MAX_UNACKED_CHAT_LINES {
        assert!(joiner.send_chat(chat_line(&format!("spam {index}"))));
    }
    assert!(!joiner.send_chat(chat_line("one too many")));
    for datagram in joiner.poll_datagrams(now) {
        host.handle_datagram(now, &datagram);
    }
    let burst = crate::protocol::chat::CHAT_BURST_LINES as usize;
    assert_eq!(chat_received(&mut host).len(), burst);
    assert_eq!(
        host.stats().chat_lines_dropped,
        (MAX_UNACKED_CHAT_LINES - burst) as u64
    );
    // The dropped lines are acknowledged all the same: no resends forever.
    for datagram in host.poll_datagrams(now + 1) {
        joiner.handle_datagram(now + 1, &datagram);
    }
    assert_eq!(joiner.unacked_chat_lines(), 0);
}

#[test]
fn a_peer_inventing_names_to_escape_the_per_author_limit_is_held_to_the_links() {
    let (mut host, mut joiner, mut now) = connected_pair();
    let mut received = 0;
    // 8 lines a step under new names, for 4 simulated seconds.
    for step in 0..40 {
        for index in 0..MAX_UNACKED_CHAT_LINES {
            let line = crate::protocol::chat::ChatLine {
                author: format!("n{step}-{index}"),
                text: "spam".into(),
            };
            joiner.send_chat(line);
        }
        now += 100;
        for datagram in joiner.poll_datagrams(now) {
            host.handle_datagram(now, &datagram);
        }
        for datagram in host.poll_datagrams(now) {
            joiner.handle_datagram(now, &datagram);
        }
        received += chat_received(&mut host).len();
    }
    // The link's burst, then 8 lines a second.
    assert!(received <= 20 + 8 * 4 + 1, "{received} lines taken");
    assert!(host.stats().chat_lines_dropped > 100);
}

#[test]
fn a_line_that_cannot_be_sent_is_refused_not_queued() {
    let (_, mut joiner, _) = connected_pair();
    assert!(!joiner.send_chat(chat_line("")));
    assert!(!joiner.send_chat(chat_line("two\nlines")));
    assert!(!joiner.send_chat(chat_line(&"x".repeat(121))));
    assert_eq!(joiner.unacked_chat_lines(), 0);
}

#[test]
fn no_chat_datagram_goes_out_while_nobody_chats() {
    let (mut host, mut joiner, mut now) = connected_pair();
    let mut kinds = Vec::new();
    for _ in 0..50 {
        now += 16;
        for datagram in joiner.poll_datagrams(now) {
            kinds.push(datagram[3]);
            host.handle_datagram(now, &datagram);
        }
        for datagram in host.poll_datagrams(now) {
            kinds.push(datagram[3]);
            joiner.handle_datagram(now, &datagram);
        }
    }
    assert!(!kinds.is_empty());
    assert!(!kinds.contains(&Message::Chat(Default::default()).kind()));
}

#[test]
fn a_restarted_joiner_with_the_secret_it_kept_speaks_on_the_link_and_says_it_restarted() {
    let (mut host, joiner, now) = connected_pair();
    let host_key = host.config.secret.public_key();
    let mut config = EndpointConfig::joiner(handshake(1));
    config.role = Role::Joiner {
        session: Some(joiner.session()),
    };
    config.secret = joiner.config.secret.clone();
    let mut restarted =
        PeerEndpoint::resumed(config.clone(), now, host_key, None, PlayerSlots::single(0)).unwrap();
    assert!(restarted.is_running());
    let mut challenges = Vec::new();
    host.send_rejoin_challenge(now, 0xBEEF, &mut |d| challenges.push(d.to_vec()));
    restarted.handle_datagram(now, &challenges[0]);
    let answer = restarted
        .poll_datagrams(now + 1)
        .iter()
        .find_map(|d| host.read_from_new_address(d));
    assert_eq!(answer, Some(Message::RejoinRestarted { nonce: 0xBEEF }));
    // Another session's token agrees other keys: nothing it sends opens.
    config.role = Role::Joiner {
        session: Some(SessionToken(joiner.session().0 ^ 1)),
    };
    let mut stranger =
        PeerEndpoint::resumed(config, now, host_key, None, PlayerSlots::single(0)).unwrap();
    stranger.handle_datagram(now, &challenges[0]);
    assert!(stranger
        .poll_datagrams(now + 1)
        .iter()
        .all(|d| host.read_from_new_address(d).is_none()));
}

#[test]
fn the_host_sends_its_inputs_again_from_the_frame_a_restarted_peer_resumes_at() {
    let (mut host, mut joiner, mut now) = connected_pair();
    for frame in 0..10 {
        host.add_local_input(Frame::new(frame), &[Buttons::A])
            .unwrap();
    }
    now += 20;
    for datagram in host.poll_datagrams(now) {
        joiner.handle_datagram(now, &datagram);
    }
    for datagram in joiner.poll_datagrams(now + 30) {
        host.handle_datagram(now + 30, &datagram);
    }
    assert_eq!(host.acked_local_frame(), Frame::new(10));
    // Frames 6..10 were acknowledged by the old process; the new one needs them.
    assert!(!host.resend_inputs_from(Frame::new(6), &[Buttons::A; 3]));
    assert!(host.resend_inputs_from(Frame::new(6), &[Buttons::A; 4]));
    assert_eq!(host.acked_local_frame(), Frame::new(6));
    assert_eq!(host.stats().unacked_frames, 4);
}
