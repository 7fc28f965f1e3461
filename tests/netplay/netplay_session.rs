//! The netplay session on its own: settings it refuses, a steady state that
//! does not allocate per frame, spectators fed every confirmed input, and a
//! player who quits.

use netcode::checksum::Checksum;
use netcode::netplay::{NetplayConfig, NetplayError, NetplayEvent, NetplaySession};
use netcode::protocol::{
    EndpointConfig, Event, Handshake, PeerEndpoint, PlayerSlots, SessionSettings, SessionToken,
};
use netcode::rollback::{DisconnectReason, Frame, PlayerId, Request, SessionState};
use support::netplay::pad;

const SPECTATOR: usize = 2;

fn config(me: usize) -> NetplayConfig<usize> {
    let config = NetplayConfig::new(
        SessionToken(0x7E57_0000 + me as u32),
        "stub",
        "1",
        1,
        SessionSettings::default(),
        PlayerSlots::single(me as u8),
    );
    if me == 0 {
        config.accept(Some(1), PlayerSlots::single(1))
    } else {
        config.dial(0, PlayerSlots::single(0))
    }
}

/// Two machines and an optional spectator over an in-memory wire
/// delivering three frames late, with reused buffers.
struct Pair {
    peers: [NetplaySession<usize>; 2],
    games: [u64; 2],
    spectator: Option<PeerEndpoint>,
    spectator_events: Vec<Event>,
    wire: Vec<(u64, usize, usize, Vec<u8>)>,
    spare: Vec<Vec<u8>>,
    requests: Vec<Request>,
    frame: u64,
    events: [Vec<NetplayEvent>; 2],
}

impl Pair {
    fn new(host: NetplayConfig<usize>) -> Pair {
        Pair {
            peers: [
                NetplaySession::new(host, 0).unwrap(),
                NetplaySession::new(config(1), 0).unwrap(),
            ],
            games: [0; 2],
            spectator: None,
            spectator_events: Vec::new(),
            wire: Vec::with_capacity(1024),
            spare: (0..1024).map(|_| Vec::with_capacity(1200)).collect(),
            requests: Vec::with_capacity(64),
            frame: 0,
            events: [Vec::with_capacity(256), Vec::with_capacity(256)],
        }
    }

    fn run(&mut self, frames: u64) {
        for _ in 0..frames {
            self.frame += 1;
            let frame = self.frame;
            let now = frame * 50 / 3;
            for me in 0..2 {
                let mut index = 0;
                while index < self.wire.len() {
                    let (sent, from, to, _) = self.wire[index];
                    if to == me && sent + 3 <= frame {
                        let (_, _, _, bytes) = self.wire.swap_remove(index);
                        self.peers[me].handle_datagram(now, from, &bytes);
                        self.spare.push(bytes);
                    } else {
                        index += 1;
                    }
                }
                let peer = &mut self.peers[me];
                if peer.state() == SessionState::Running {
                    peer.add_local_input(PlayerId::new(me as u8), pad(me as u8, frame as u32))
                        .unwrap();
                }
                peer.advance_frame(now, &mut self.requests).unwrap();
                let game = &mut self.games[me];
                for request in &self.requests {
                    match *request {
                        Request::Save { frame } => {
                            let slot = peer.state_slot_mut(frame).unwrap();
                            slot.buffer_mut().clear();
                            slot.buffer_mut().extend_from_slice(&game.to_le_bytes());
                            slot.set_checksum(Checksum(*game));
                        }
                        Request::Checksum { frame } => {
                            let slot = peer.state_slot_mut(frame).unwrap();
                            slot.set_checksum(Checksum(*game));
                        }
                        Request::Load { frame } => {
                            let data = peer.saved_state(frame).unwrap().data();
                            *game = u64::from_le_bytes(data.try_into().unwrap());
                        }
                        Request::Advance { inputs, .. } => {
                            *game = game
                                .wrapping_mul(0x100_0000_01B3)
                                .wrapping_add(u64::from(inputs[0].bits()) << 16)
                                .wrapping_add(u64::from(inputs[1].bits()));
                        }
                    }
                }
                let (wire, spare) = (&mut self.wire, &mut self.spare);
                peer.poll(now, |to, bytes| {
                    let mut buffer = spare.pop().unwrap_or_default();
                    buffer.clear();
                    buffer.extend_from_slice(bytes);
                    wire.push((frame, me, to, buffer));
                });
                self.events[me].extend(peer.events());
            }
            if let Some(spectator) = &mut self.spectator {
                let mut index = 0;
                while index < self.wire.len() {
                    let (sent, _, to, _) = self.wire[index];
                    if to == SPECTATOR && sent + 3 <= frame {
                        let (_, _, _, bytes) = self.wire.swap_remove(index);
                        spectator.handle_datagram(now, &bytes);
                    } else {
                        index += 1;
                    }
                }
                for datagram in spectator.poll_datagrams(now) {
                    self.wire.push((frame, SPECTATOR, 0, datagram));
                }
                self.spectator_events.extend(spectator.drain_events());
            }
        }
    }
}

#[test]
fn settings_that_cannot_make_a_match_are_refused_with_the_reason() {
    let mut nobody_plays_two = config(0);
    nobody_plays_two.peers.clear();
    let error = NetplaySession::new(nobody_plays_two, 0).err().unwrap();
    assert!(matches!(&error, NetplayError::InvalidConfig(m) if m.contains("nobody controls")));

    let claimed_twice = config(0).accept(None, PlayerSlots::single(1));
    let error = NetplaySession::new(claimed_twice, 0).err().unwrap();
    assert!(matches!(&error, NetplayError::InvalidConfig(m) if m.contains("claimed twice")));

    let mut five = config(0);
    five.settings.player_count = 5;
    let error = NetplaySession::new(five, 0).err().unwrap();
    assert!(error.to_string().contains("2 to 4 players"), "{error}");
}

#[test]
fn a_warmed_up_pair_allocates_less_than_once_per_ten_frames() {
    let mut pair = Pair::new(config(0));
    pair.run(600);
    assert_eq!(pair.peers[0].state(), SessionState::Running);
    let measured = allocation_counter::measure(|| pair.run(1000));
    let rollbacks = pair.peers[0].stats(PlayerId::new(1)).unwrap().rollbacks;
    assert!(rollbacks > 50, "inputs arrived late and were mispredicted");
    // What remains are the checksum reports, once a second.
    assert!(
        measured.count_total < 200,
        "{} allocations over 2000 machine-frames",
        measured.count_total
    );
}

#[test]
fn a_spectator_receives_every_players_confirmed_inputs_in_order() {
    let mut host = config(0);
    host.accept_spectators = true;
    let mut pair = Pair::new(host);
    let mut watch = EndpointConfig::joiner(Handshake {
        core_name: "stub".into(),
        core_version: "1".into(),
        content_hash: 1,
        local_slots: PlayerSlots::NONE,
        settings: SessionSettings::default(),
        ..Handshake::default()
    });
    watch.first_frame = Frame::ZERO;
    pair.spectator = Some(PeerEndpoint::new(watch, 0).unwrap());
    pair.run(600);
    assert_eq!(pair.peers[0].spectator_count(), 1);
    let mut next = [0u32; 2];
    for event in &pair.spectator_events {
        if let Event::RemoteInput { player, frame, .. } = event {
            let player = *player as usize;
            assert_eq!(frame.number(), next[player], "frames arrive once, in order");
            next[player] += 1;
        }
    }
    assert!(next[0] > 500 && next[1] > 500, "{next:?}");
    // What the spectator got is what the host confirmed.
    let mut received = vec![[None; 2]; next[0].max(next[1]) as usize];
    for event in &pair.spectator_events {
        if let Event::RemoteInput {
            player,
            frame,
            buttons,
        } = event
        {
            received[frame.number() as usize][*player as usize] = Some(*buttons);
        }
    }
    let host = &pair.peers[0];
    let recent = host.current_frame().saturating_back(40);
    let mut compared = 0;
    for (frame, inputs) in host.session().confirmed_inputs(recent).unwrap() {
        for player in 0..2 {
            if frame.number() < next[player] {
                let got = received[frame.number() as usize][player];
                assert_eq!(got, Some(inputs[player]), "P{} at {frame}", player + 1);
                compared += 1;
            }
        }
    }
    assert!(compared >= 40, "{compared} inputs compared");
}

#[test]
fn a_player_who_quits_ends_a_two_player_match_on_both_machines() {
    let mut pair = Pair::new(config(0));
    pair.run(300);
    pair.peers[1].leave();
    assert_eq!(pair.peers[1].state(), SessionState::Ended);
    pair.events[0].clear();
    pair.run(60);
    let events = &pair.events[0];
    assert!(
        events.iter().any(|e| matches!(
            e,
            NetplayEvent::Disconnected {
                player,
                reason: DisconnectReason::Quit,
                ..
            } if *player == PlayerId::new(1)
        )),
        "{events:?}"
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, NetplayEvent::MatchEnded { .. })));
    assert_eq!(pair.peers[0].state(), SessionState::Ended);
}
