//! Once warmed up, a rollback session allocates nothing per frame: two
//! sessions exchange inputs three frames late (so every frame predicts and
//! many roll back) under a global allocator that counts.

use std::collections::VecDeque;

use netcode::checksum::Checksum;
use netcode::input::Buttons;
use netcode::rollback::{Frame, PlayerId, PlayerKind, Request, Session, SessionConfig};

struct Peer {
    session: Session,
    sums: [u32; 2],
    requests: Vec<Request>,
    me: PlayerId,
    other: PlayerId,
    sent_end: Frame,
    inbox: VecDeque<(u32, Frame, Buttons)>,
}

impl Peer {
    fn new(me: usize) -> Peer {
        let kinds = if me == 0 {
            [PlayerKind::Local, PlayerKind::Remote]
        } else {
            [PlayerKind::Remote, PlayerKind::Local]
        };
        let mut session = SessionConfig::new()
            .player(kinds[0])
            .player(kinds[1])
            .checksum_interval(1)
            .build()
            .unwrap();
        let other = PlayerId::new(1 - me as u8);
        session.peer_synchronized(other).unwrap();
        Peer {
            session,
            sums: [0; 2],
            requests: Vec::with_capacity(64),
            me: PlayerId::new(me as u8),
            other,
            sent_end: Frame::ZERO,
            inbox: VecDeque::with_capacity(1024),
        }
    }

    fn frame(&mut self, tick: u32, buttons: Buttons) {
        while self.inbox.front().is_some_and(|(at, _, _)| *at <= tick) {
            let (_, frame, buttons) = self.inbox.pop_front().unwrap();
            self.session
                .add_remote_input(self.other, frame, buttons)
                .unwrap();
        }
        self.session.set_remote_frame_lag(self.other, 3).unwrap();
        self.session.add_local_input(self.me, buttons).unwrap();
        self.session.advance_frame(&mut self.requests).unwrap();
        for request in &self.requests {
            match *request {
                Request::Save { frame } => {
                    let bytes = [self.sums[0].to_le_bytes(), self.sums[1].to_le_bytes()];
                    let slot = self.session.state_slot_mut(frame).unwrap();
                    slot.buffer_mut().clear();
                    slot.buffer_mut().extend_from_slice(bytes.as_flattened());
                    slot.set_checksum(Checksum::of(bytes.as_flattened()));
                }
                Request::Checksum { frame } => {
                    let bytes = [self.sums[0].to_le_bytes(), self.sums[1].to_le_bytes()];
                    let slot = self.session.state_slot_mut(frame).unwrap();
                    slot.set_checksum(Checksum::of(bytes.as_flattened()));
                }
                Request::Load { frame } => {
                    let data = self.session.saved_state(frame).unwrap().data();
                    self.sums = [
                        u32::from_le_bytes(data[..4].try_into().unwrap()),
                        u32::from_le_bytes(data[4..8].try_into().unwrap()),
                    ];
                }
                Request::Advance { inputs, .. } => {
                    for (sum, buttons) in self.sums.iter_mut().zip(inputs) {
                        *sum = sum.wrapping_mul(31).wrapping_add(u32::from(buttons.bits()));
                    }
                }
            }
        }
        while self.session.next_event().is_some() {}
        while self.session.next_checksum_report().is_some() {}
    }

    fn outgoing(&mut self, tick: u32, to: &mut VecDeque<(u32, Frame, Buttons)>) {
        for (frame, buttons) in self.session.player_inputs(self.me, self.sent_end).unwrap() {
            to.push_back((tick + 3, frame, buttons));
            self.sent_end = frame.next();
        }
    }
}

#[test]
fn a_warmed_up_session_allocates_nothing_per_frame() {
    let mut peers = [Peer::new(0), Peer::new(1)];
    let mut seed = 99u64;
    let mut run = |peers: &mut [Peer; 2], ticks: std::ops::Range<u32>| {
        for tick in ticks {
            for i in 0..2 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                peers[i].frame(tick, Buttons::from_bits((seed >> 60) as u16));
                let [a, b] = peers;
                if i == 0 {
                    a.outgoing(tick, &mut b.inbox);
                } else {
                    b.outgoing(tick, &mut a.inbox);
                }
            }
        }
    };
    run(&mut peers, 0..300);
    let allocations = allocation_counter::measure(|| run(&mut peers, 300..1300)).count_total;
    assert!(
        peers[0].session.current_frame() >= Frame::new(1290),
        "the sessions kept running"
    );
    assert!(
        peers[0]
            .session
            .peer_stats(PlayerId::new(1))
            .unwrap()
            .rollbacks
            > 100,
        "rollbacks happened"
    );
    assert_eq!(allocations, 0, "allocations during 1000 steady frames");
}
