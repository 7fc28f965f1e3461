//! GGPO's sync test, as requests: every frame pretends the last `D` frames
//! were mispredicted, loads the state from `D` frames back, re-simulates,
//! and compares the checksums of the re-simulated states with the first
//! pass. Finds non-determinism and save/load bugs without a network.
//!
//! Each call: (1) look at the checksums the frontend set for the states
//! saved in the previous call — first-pass ones are remembered, re-saved
//! ones are compared; (2) load frame `current - D` and re-simulate up to
//! `current`, saving each state again; (3) simulate `current` for the first
//! time and save the state that follows.

use super::events::Request;
use super::frame::Frame;
use super::players::{PlayerId, PlayerSet, MAX_PLAYERS};
use super::state_ring::{StateRing, StateSlot};
use crate::checksum::Checksum;
use crate::input::Buttons;

/// What a sync test found or what was misused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SyncTestError {
    #[error("frame {frame} is not deterministic: checksum {first} on the first run, {resimulated} after loading an earlier state and re-simulating")]
    Mismatch {
        frame: Frame,
        first: Checksum,
        resimulated: Checksum,
    },
    #[error("no input was added for {player} at frame {frame}")]
    MissingInput { player: PlayerId, frame: Frame },
    #[error("{player} is not in this sync test (it has {players} players)")]
    UnknownPlayer { player: PlayerId, players: usize },
    #[error("a sync test has 1 to 4 players and checks 1 to 60 frames back (got {players} players, distance {check_distance})")]
    InvalidSettings { players: usize, check_distance: u32 },
}

/// The sync test session. See the module docs.
pub struct SyncTestSession {
    players: usize,
    check_distance: u32,
    current: Frame,
    pending: [Buttons; MAX_PLAYERS],
    pending_set: PlayerSet,
    inputs: Box<[[Buttons; MAX_PLAYERS]]>,
    states: StateRing,
    /// First-pass checksum of each recent frame.
    first_checksums: Box<[Option<(Frame, Checksum)>]>,
    /// Frames re-saved in the last call (compared next call), and the one
    /// saved for the first time.
    resaved: Option<(Frame, Frame)>,
    first_saved: Option<Frame>,
    compared: u64,
}

impl SyncTestSession {
    /// A sync test for `players` local players, loading `check_distance`
    /// frames back every frame (GGPO's default is 7… any 1–60).
    pub fn new(players: usize, check_distance: u32) -> Result<Self, SyncTestError> {
        if !(1..=MAX_PLAYERS).contains(&players) || !(1..=60).contains(&check_distance) {
            return Err(SyncTestError::InvalidSettings {
                players,
                check_distance,
            });
        }
        let kept = check_distance as usize + 2;
        Ok(SyncTestSession {
            players,
            check_distance,
            current: Frame::ZERO,
            pending: [Buttons::NONE; MAX_PLAYERS],
            pending_set: PlayerSet::EMPTY,
            inputs: vec![[Buttons::NONE; MAX_PLAYERS]; kept].into_boxed_slice(),
            states: StateRing::new(kept),
            first_checksums: vec![None; kept].into_boxed_slice(),
            resaved: None,
            first_saved: None,
            compared: 0,
        })
    }

    pub fn current_frame(&self) -> Frame {
        self.current
    }

    pub fn check_distance(&self) -> u32 {
        self.check_distance
    }

    /// How many re-simulated states were compared so far.
    pub fn comparisons(&self) -> u64 {
        self.compared
    }

    /// Buttons of `player` for the current frame.
    pub fn add_local_input(
        &mut self,
        player: PlayerId,
        buttons: Buttons,
    ) -> Result<(), SyncTestError> {
        if player.index() >= self.players {
            return Err(SyncTestError::UnknownPlayer {
                player,
                players: self.players,
            });
        }
        self.pending[player.index()] = buttons;
        self.pending_set.insert(player);
        Ok(())
    }

    /// The slot to save into after a `Save` request (set its checksum too).
    pub fn state_slot_mut(&mut self, frame: Frame) -> Option<&mut StateSlot> {
        self.states.get_mut(frame)
    }

    /// The state to restore for a `Load` request.
    pub fn saved_state(&self, frame: Frame) -> Option<&StateSlot> {
        self.states.get(frame)
    }

    fn index(&self, frame: Frame) -> usize {
        frame.number() as usize % self.inputs.len()
    }

    /// Fills `requests` (cleared first) for this frame; a mismatch found in
    /// the states saved by the previous call is returned as an error.
    pub fn advance_frame(&mut self, requests: &mut Vec<Request>) -> Result<(), SyncTestError> {
        requests.clear();
        self.check_previous_saves()?;
        if self.pending_set.len() < self.players {
            let missing = (0..self.players as u8)
                .map(PlayerId::new)
                .find(|p| !self.pending_set.contains(*p));
            let player = missing.unwrap_or(PlayerId::new(0));
            return Err(SyncTestError::MissingInput {
                player,
                frame: self.current,
            });
        }
        let current = self.current;
        let index = self.index(current);
        self.inputs[index] = self.pending;
        self.pending_set = PlayerSet::EMPTY;

        if current == Frame::ZERO {
            self.states.claim(current);
            requests.push(Request::Save { frame: current });
        } else {
            let start = current.saturating_back(self.check_distance);
            requests.push(Request::Load { frame: start });
            let mut frame = start;
            while frame < current {
                self.push_advance(requests, frame, true);
                frame = frame.next();
                self.states.claim(frame);
                requests.push(Request::Save { frame });
            }
            self.resaved = Some((start.next(), current));
        }
        self.push_advance(requests, current, false);
        let next = current.next();
        self.states.claim(next);
        requests.push(Request::Save { frame: next });
        self.first_saved = Some(next);
        self.current = next;
        Ok(())
    }

    fn push_advance(&self, requests: &mut Vec<Request>, frame: Frame, resimulation: bool) {
        let inputs = self.inputs[self.index(frame)];
        requests.push(Request::Advance {
            frame,
            inputs,
            predicted: PlayerSet::EMPTY,
            resimulation,
        });
    }

    fn check_previous_saves(&mut self) -> Result<(), SyncTestError> {
        if let Some((first, last)) = self.resaved.take() {
            let mut frame = first;
            while frame <= last {
                let resimulated = self.states.get(frame).and_then(StateSlot::checksum);
                let index = self.index(frame);
                if let (Some(resimulated), Some((recorded, first))) =
                    (resimulated, self.first_checksums[index])
                {
                    if recorded == frame {
                        self.compared += 1;
                        if resimulated != first {
                            return Err(SyncTestError::Mismatch {
                                frame,
                                first,
                                resimulated,
                            });
                        }
                    }
                }
                frame = frame.next();
            }
        }
        for frame in [
            self.first_saved.take(),
            (self.current == Frame::new(1)).then_some(Frame::ZERO),
        ]
        .into_iter()
        .flatten()
        {
            if let Some(checksum) = self.states.get(frame).and_then(StateSlot::checksum) {
                let index = self.index(frame);
                self.first_checksums[index] = Some((frame, checksum));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny game: a counter per player adding up buttons; `broken_after`
    /// makes loading a state lose a bit after that frame (a save/load bug).
    struct Counter {
        sums: [u32; MAX_PLAYERS],
        frame: u32,
        broken_after: Option<u32>,
    }

    impl Counter {
        fn bytes(&self) -> [u8; 20] {
            let mut out = [0; 20];
            for (i, sum) in self.sums.iter().enumerate() {
                out[i * 4..i * 4 + 4].copy_from_slice(&sum.to_le_bytes());
            }
            out[16..].copy_from_slice(&self.frame.to_le_bytes());
            out
        }

        fn run(&mut self, session: &mut SyncTestSession, requests: &[Request]) {
            for request in requests {
                match *request {
                    Request::Save { frame } => {
                        let bytes = self.bytes();
                        let slot = session.state_slot_mut(frame).expect("slot claimed");
                        slot.buffer_mut().clear();
                        slot.buffer_mut().extend_from_slice(&bytes);
                        slot.set_checksum(Checksum::of(&bytes));
                    }
                    Request::Load { frame } => {
                        let data = session.saved_state(frame).expect("state kept").data();
                        for i in 0..MAX_PLAYERS {
                            self.sums[i] =
                                u32::from_le_bytes(data[i * 4..i * 4 + 4].try_into().unwrap());
                        }
                        self.frame = u32::from_le_bytes(data[16..20].try_into().unwrap());
                        if self.broken_after.is_some_and(|after| self.frame > after) {
                            self.sums[0] ^= 1;
                        }
                    }
                    Request::Advance { inputs, .. } => {
                        for (sum, buttons) in self.sums.iter_mut().zip(inputs) {
                            *sum = sum.wrapping_mul(31).wrapping_add(u32::from(buttons.bits()));
                        }
                        self.frame += 1;
                    }
                }
            }
        }
    }

    fn drive(
        game: &mut Counter,
        distance: u32,
        frames: u32,
    ) -> Result<SyncTestSession, SyncTestError> {
        let mut session = SyncTestSession::new(2, distance)?;
        let mut requests = Vec::new();
        for n in 0..frames {
            session.add_local_input(PlayerId::new(0), Buttons::from_bits(n as u16 % 7))?;
            session.add_local_input(PlayerId::new(1), Buttons::from_bits(n as u16 % 3))?;
            session.advance_frame(&mut requests)?;
            game.run(&mut session, &requests);
        }
        Ok(session)
    }

    #[test]
    fn a_deterministic_game_passes_and_every_resimulated_state_is_compared() {
        let mut game = Counter {
            sums: [0; MAX_PLAYERS],
            frame: 0,
            broken_after: None,
        };
        let session = drive(&mut game, 7, 100).unwrap();
        assert_eq!(game.frame, 100);
        assert!(
            session.comparisons() >= 90 * 7,
            "only {} comparisons",
            session.comparisons()
        );
    }

    #[test]
    fn a_distance_of_one_still_checks_each_frame_after_a_load() {
        let mut game = Counter {
            sums: [0; MAX_PLAYERS],
            frame: 0,
            broken_after: None,
        };
        let session = drive(&mut game, 1, 50).unwrap();
        assert!(session.comparisons() >= 48);
    }

    #[test]
    fn a_state_that_loads_wrongly_is_reported_with_its_frame() {
        let mut game = Counter {
            sums: [0; MAX_PLAYERS],
            frame: 0,
            broken_after: Some(40),
        };
        let err = drive(&mut game, 7, 100).err().expect("mismatch found");
        match err {
            SyncTestError::Mismatch {
                frame,
                first,
                resimulated,
            } => {
                assert!(frame.number() > 40 && frame.number() <= 49, "frame {frame}");
                assert_ne!(first, resimulated);
            }
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn forgetting_an_input_names_the_player() {
        let mut session = SyncTestSession::new(2, 3).unwrap();
        session
            .add_local_input(PlayerId::new(0), Buttons::A)
            .unwrap();
        let err = session.advance_frame(&mut Vec::new()).unwrap_err();
        assert_eq!(
            err,
            SyncTestError::MissingInput {
                player: PlayerId::new(1),
                frame: Frame::ZERO
            }
        );
    }

    #[test]
    fn the_requests_of_a_frame_load_resimulate_and_save() {
        let mut game = Counter {
            sums: [0; MAX_PLAYERS],
            frame: 0,
            broken_after: None,
        };
        let mut session = drive(&mut game, 2, 5).unwrap();
        let mut requests = Vec::new();
        session
            .add_local_input(PlayerId::new(0), Buttons::A)
            .unwrap();
        session
            .add_local_input(PlayerId::new(1), Buttons::B)
            .unwrap();
        session.advance_frame(&mut requests).unwrap();
        let f = Frame::new;
        let kinds: Vec<String> = requests
            .iter()
            .map(|r| match r {
                Request::Save { frame } => format!("save {frame}"),
                Request::Load { frame } => format!("load {frame}"),
                Request::Advance {
                    frame,
                    resimulation,
                    ..
                } => format!("{} {frame}", if *resimulation { "resim" } else { "run" }),
            })
            .collect();
        assert_eq!(
            kinds,
            ["load 3", "resim 3", "save 4", "resim 4", "save 5", "run 5", "save 6"]
        );
        assert_eq!(session.current_frame(), f(6));
    }
}
