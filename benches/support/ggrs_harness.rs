//! The same workloads driven through GGRS 0.13, the reference netcade's
//! session is measured against.

use super::stub_game::{RandomPlay, StubState};
use ggrs::{
    Config, GgrsRequest, Message, NonBlockingSocket, P2PSession, PlayerType, PredictRepeatLast,
    SessionBuilder, SyncTestSession,
};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

pub struct GgrsConfig;

impl Config for GgrsConfig {
    type Input = u16;
    type InputPredictor = PredictRepeatLast;
    type State = StubState;
    type Address = usize;
}

fn fulfil(requests: Vec<GgrsRequest<GgrsConfig>>, game: &mut StubState) {
    for request in requests {
        match request {
            GgrsRequest::SaveGameState { cell, frame } => {
                cell.save(frame, Some(*game), Some(game.checksum() as u128))
            }
            GgrsRequest::LoadGameState { cell, .. } => *game = cell.load().expect("saved state"),
            GgrsRequest::AdvanceFrame { inputs } => {
                let buttons: [u16; 2] = [inputs[0].0, inputs[1].0];
                game.advance(&buttons);
            }
        }
    }
}

/// GGRS's sync test with two players.
pub struct GgrsSyncTest {
    session: SyncTestSession<GgrsConfig>,
    game: StubState,
    play: RandomPlay,
}

impl GgrsSyncTest {
    pub fn new(check_distance: usize) -> Self {
        let session = SessionBuilder::<GgrsConfig>::new()
            .with_num_players(2)
            .unwrap()
            .with_check_distance(check_distance)
            .with_max_prediction_window(check_distance + 1)
            .start_synctest_session()
            .unwrap();
        GgrsSyncTest {
            session,
            game: StubState::default(),
            play: RandomPlay::new(7),
        }
    }

    pub fn frame(&mut self) {
        for player in 0..2 {
            let buttons = self.play.buttons(player);
            self.session.add_local_input(player, buttons).unwrap();
        }
        let requests = self.session.advance_frame().expect("deterministic stub");
        fulfil(requests, &mut self.game);
    }
}

/// Datagrams in flight between two in-memory sockets, delivered a fixed
/// number of frames after they were sent.
#[derive(Default)]
struct Wire {
    frame: u64,
    in_flight: VecDeque<(u64, usize, usize, Message)>,
}

struct MemorySocket {
    address: usize,
    wire: Rc<RefCell<Wire>>,
    delay_frames: u64,
}

impl NonBlockingSocket<usize> for MemorySocket {
    fn send_to(&mut self, message: &Message, to: &usize) {
        let mut wire = self.wire.borrow_mut();
        let due = wire.frame + self.delay_frames;
        wire.in_flight
            .push_back((due, self.address, *to, message.clone()));
    }

    fn receive_all_messages(&mut self) -> Vec<(usize, Message)> {
        let mut wire = self.wire.borrow_mut();
        let now = wire.frame;
        let mut received = Vec::new();
        wire.in_flight.retain(|(due, from, to, message)| {
            if *to == self.address && *due <= now {
                received.push((*from, message.clone()));
                false
            } else {
                true
            }
        });
        received
    }
}

/// Two GGRS peers, one local player each, exchanging datagrams in memory.
pub struct GgrsPair {
    peers: [P2PSession<GgrsConfig>; 2],
    games: [StubState; 2],
    wire: Rc<RefCell<Wire>>,
    play: RandomPlay,
    pub stalls: u64,
}

impl GgrsPair {
    pub fn new(delay_frames: u64) -> Self {
        let wire = Rc::new(RefCell::new(Wire::default()));
        let peer = |me: usize| {
            let other = 1 - me;
            let socket = MemorySocket {
                address: me,
                wire: wire.clone(),
                delay_frames,
            };
            SessionBuilder::<GgrsConfig>::new()
                .with_num_players(2)
                .unwrap()
                .with_max_prediction_window(8)
                .add_player(PlayerType::Local, me)
                .unwrap()
                .add_player(PlayerType::Remote(other), other)
                .unwrap()
                .start_p2p_session(socket)
                .unwrap()
        };
        let mut pair = GgrsPair {
            peers: [peer(0), peer(1)],
            games: [StubState::default(); 2],
            wire,
            play: RandomPlay::new(11),
            stalls: 0,
        };
        // Synchronise before measuring: GGRS needs a few round trips.
        for _ in 0..10_000 {
            if pair
                .peers
                .iter()
                .all(|peer| peer.current_state() == ggrs::SessionState::Running)
            {
                return pair;
            }
            pair.wire.borrow_mut().frame += 1;
            for peer in &mut pair.peers {
                peer.poll_remote_clients();
            }
        }
        panic!("GGRS peers did not synchronise");
    }

    /// One frame on both peers.
    pub fn frame(&mut self) {
        self.wire.borrow_mut().frame += 1;
        for me in 0..2 {
            let peer = &mut self.peers[me];
            peer.poll_remote_clients();
            let buttons = self.play.buttons(me);
            peer.add_local_input(me, buttons).unwrap();
            match peer.advance_frame() {
                Ok(requests) => fulfil(requests, &mut self.games[me]),
                Err(ggrs::GgrsError::PredictionThreshold) => self.stalls += 1,
                Err(other) => panic!("GGRS: {other}"),
            }
            for _ in peer.events() {}
        }
    }
}
