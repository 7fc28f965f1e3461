//! Netplay on real games: [`NetplayDriver`] carries out a
//! [`NetplaySession`]'s requests on any [`Emulator`] (save, load, advance)
//! and keeps the checksum of every frame once it is final, and
//! [`SimulatedMatch`] plays a whole match between machines in one process
//! over netcade's seeded simulated network, on a simulated millisecond
//! clock (`netcade demo`).
//!
//! Both are free of I/O, clocks and randomness: `now` and the network's seed
//! come in, so the same arguments give the same match. The driver is what a
//! real `host`/`join` frame loop calls each frame too.

use crate::app::AppError;
use crate::checksum::Checksum;
use crate::emulator::{Emulator, SavestateContext};
use crate::input::{Buttons, MAX_PLAYERS};
use crate::net::sim::{LinkConditions, SimNet};
use crate::netplay::{NetplayConfig, NetplayEvent, NetplaySession, NetplayStats};
use crate::protocol::{Millis, PlayerSlots, SessionSettings, SessionToken};
use std::ops::DerefMut;

use crate::rollback::{Frame, FrameOutcome, PlayerId, PlayerKind, Request, SessionState};

/// Carries out one machine's netplay requests on its game, and remembers the
/// checksum of the game's memory at the start of every frame; a frame's
/// checksum is *final* once every input before it is confirmed (no rollback
/// can change it any more), so two machines' final checksums must agree.
#[derive(Debug, Default)]
pub struct NetplayDriver {
    requests: Vec<Request>,
    /// Checksum of the state saved at the start of each frame (the latest
    /// save: re-simulations overwrite mispredicted ones).
    saved: Vec<Option<Checksum>>,
    /// Frames `0..final_frames` of `saved` are final.
    final_frames: usize,
}

impl NetplayDriver {
    pub fn new() -> Self {
        Self::default()
    }

    /// One frame tick: asks the session what to do at `now` and does it to
    /// `game`. Local inputs must have been added first.
    pub fn advance<A: Ord + Copy, G: Emulator + ?Sized>(
        &mut self,
        now: Millis,
        netplay: &mut NetplaySession<A>,
        game: &mut G,
    ) -> Result<FrameOutcome, AppError> {
        self.advance_with(now, netplay, game, |_, _| {})
    }

    /// [`Self::advance`], letting `adjust_inputs` change the buttons each
    /// simulated frame is run with (tests use it to make one machine differ).
    pub fn advance_with<A: Ord + Copy, G: Emulator + ?Sized>(
        &mut self,
        now: Millis,
        netplay: &mut NetplaySession<A>,
        game: &mut G,
        mut adjust_inputs: impl FnMut(Frame, &mut [Buttons; MAX_PLAYERS]),
    ) -> Result<FrameOutcome, AppError> {
        game.set_savestate_context(SavestateContext::Netplay);
        let outcome = netplay.advance_frame(now, &mut self.requests)?;
        let players = netplay.session().players();
        for &request in &self.requests {
            match request {
                Request::Save { frame } => {
                    let slot = netplay
                        .state_slot_mut(frame)
                        .ok_or(AppError::NoStateSlot { frame })?;
                    // Game memory, not the raw state: states can hold
                    // incidental bytes that differ between machines (see
                    // DESIGN.md). A game showing no memory is compared by
                    // state, so only then must its bytes be comparable.
                    let by_state = game.game_memory().is_empty();
                    let saved = if by_state {
                        game.save_state(slot.buffer_mut())
                    } else {
                        game.save_state_to_load(slot.buffer_mut())
                    };
                    saved.map_err(AppError::at_frame(frame.number()))?;
                    let memory = game.game_memory();
                    let checksum = if by_state {
                        Checksum::of(slot.data())
                    } else {
                        Checksum::of(memory)
                    };
                    slot.set_checksum(checksum);
                    let at = frame.number() as usize;
                    if self.saved.len() <= at {
                        self.saved.resize(at + 1, None);
                    }
                    self.saved[at] = Some(checksum);
                }
                Request::Load { frame } => {
                    let state = netplay
                        .saved_state(frame)
                        .ok_or(AppError::NoStateSlot { frame })?;
                    game.load_state(state.data())
                        .map_err(AppError::at_frame(frame.number()))?;
                }
                Request::Advance {
                    frame,
                    mut inputs,
                    resimulation,
                    ..
                } => {
                    adjust_inputs(frame, &mut inputs);
                    game.run_frame(&inputs[..players], !resimulation);
                }
            }
        }
        // The state at the start of frame f is final once every input before
        // f is confirmed (the rollbacks they caused were just carried out).
        let simulated = netplay.current_frame().number() as usize;
        let confirmed_end = netplay
            .confirmed_frame()
            .map_or(0, |frame| frame.number() as usize + 1);
        let final_frames = (confirmed_end + 1).min(simulated).min(self.saved.len());
        self.final_frames = self.final_frames.max(final_frames);
        Ok(outcome)
    }

    /// The checksum of every final frame, from frame 0 (`None`: the
    /// session never asked to save that frame, which it always should).
    pub fn final_checksums(&self) -> &[Option<Checksum>] {
        &self.saved[..self.final_frames]
    }
}

/// How two machines' final checksums compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChecksumComparison {
    /// Frames final on both machines, all compared.
    pub compared: usize,
    /// The first frame whose checksums differ.
    pub first_difference: Option<u32>,
}

/// Compares the final checksums of two machines frame by frame (a frame
/// never saved counts as a difference: nothing proves it agreed).
pub fn compare_final_checksums(a: &NetplayDriver, b: &NetplayDriver) -> ChecksumComparison {
    let (a, b) = (a.final_checksums(), b.final_checksums());
    let compared = a.len().min(b.len());
    let first_difference = (0..compared)
        .find(|&frame| a[frame].is_none() || a[frame] != b[frame])
        .map(|frame| frame as u32);
    ChecksumComparison {
        compared,
        first_difference,
    }
}

/// One machine of a simulated match: its session, its game and its frame clock.
pub struct MatchMachine<G> {
    pub netplay: NetplaySession<u8>,
    pub game: G,
    pub driver: NetplayDriver,
    /// The player this machine controls (its address on the network too).
    pub player: u8,
    next_frame_at_us: f64,
    /// Rollbacks this machine carried out, and the deepest (frames).
    pub rollbacks: u64,
    pub deepest_rollback: u32,
    /// Ticks spent waiting for the peer's inputs or stalled by time sync.
    pub waiting_ticks: u64,
    pub stalled_ticks: u64,
}

impl<G> MatchMachine<G> {
    /// What this machine knows of the other player's link (machines of a
    /// two-player match have one peer).
    pub fn peer_stats(&self) -> Option<NetplayStats> {
        let players = self.netplay.session().players() as u8;
        (0..players)
            .filter(|&player| player != self.player)
            .find_map(|player| self.netplay.stats(PlayerId::new(player)))
    }

    pub fn current_frame(&self) -> u32 {
        self.netplay.current_frame().number()
    }
}

/// What a simulated match is played with.
#[derive(Clone, Copy, Debug)]
pub struct MatchSetup {
    /// Seed of the simulated network (latency jitter and losses).
    pub seed: u64,
    pub conditions: LinkConditions,
    /// Frames every machine plays.
    pub frames: u32,
    /// xxh3 of the content: every machine must load the same.
    pub content_hash: u64,
}

/// Something that happened in a simulated match, for status lines.
#[derive(Clone, Debug, PartialEq)]
pub enum MatchUpdate {
    /// A machine's session said something.
    Event {
        at: Millis,
        machine: usize,
        event: NetplayEvent,
    },
    /// Every machine ran frame 0 (reported once).
    AllRunning { at: Millis },
    /// Sent every `progress_every_ms` of simulated time while running.
    Progress {
        at: Millis,
        frames: Vec<u32>,
        rollbacks: Vec<u64>,
    },
}

/// How often [`MatchUpdate::Progress`] is sent (simulated milliseconds).
pub const PROGRESS_EVERY_MS: Millis = 5_000;

/// Two machines, each one player of the game, over a seeded [`SimNet`]: the
/// machine of player 0 hosts, the other dials it.
pub struct SimulatedMatch<G> {
    pub net: SimNet<u8>,
    pub machines: Vec<MatchMachine<G>>,
    pub now: Millis,
    setup: MatchSetup,
}

/// Players of a simulated match (one per machine).
const PLAYERS: u8 = 2;

impl<G> SimulatedMatch<G>
where
    G: DerefMut,
    G::Target: Emulator,
{
    /// A match between `games` (one per player, already loaded with the same
    /// content, at their first frame; boxed, so any game fits).
    pub fn new(setup: MatchSetup, games: [G; PLAYERS as usize]) -> Result<Self, AppError> {
        let mut net = SimNet::new(setup.seed);
        net.set_default_conditions(setup.conditions);
        let mut machines = Vec::new();
        for (player, game) in (0u8..).zip(games) {
            let frames_per_second = game.frames_per_second();
            let netplay = NetplaySession::new(config_for(&setup, player, frames_per_second), 0)?;
            machines.push(MatchMachine {
                netplay,
                game,
                driver: NetplayDriver::new(),
                player,
                // The machines' frame clocks are out of phase, as real ones are.
                next_frame_at_us: 1_000.0 + f64::from(player) * 3_700.0,
                rollbacks: 0,
                deepest_rollback: 0,
                waiting_ticks: 0,
                stalled_ticks: 0,
            });
        }
        Ok(SimulatedMatch {
            net,
            machines,
            now: 0,
            setup,
        })
    }

    /// Plays until every machine has run `setup.frames` frames (or the match
    /// ended, or `limit_ms` of simulated time passed), taking each machine's
    /// local buttons from `input(player, frame)` and telling `update` what
    /// happens. Returns whether every machine finished its frames.
    pub fn play(
        &mut self,
        limit_ms: Millis,
        mut input: impl FnMut(u8, u32) -> Buttons,
        mut update: impl FnMut(&MatchUpdate),
    ) -> Result<bool, AppError> {
        let mut all_running = false;
        let mut next_progress = 0;
        while self.now < limit_ms {
            if self.finished() {
                return Ok(true);
            }
            if self
                .machines
                .iter()
                .any(|m| m.netplay.state() == SessionState::Ended)
            {
                return Ok(false);
            }
            self.step(&mut input, &mut update)?;
            if !all_running
                && self
                    .machines
                    .iter()
                    .all(|m| m.netplay.started_at().is_some())
            {
                all_running = true;
                next_progress = self.now + PROGRESS_EVERY_MS;
                update(&MatchUpdate::AllRunning { at: self.now });
            }
            if all_running && self.now >= next_progress {
                next_progress += PROGRESS_EVERY_MS;
                update(&MatchUpdate::Progress {
                    at: self.now,
                    frames: self.machines.iter().map(|m| m.current_frame()).collect(),
                    rollbacks: self.machines.iter().map(|m| m.rollbacks).collect(),
                });
            }
        }
        Ok(self.finished())
    }

    fn finished(&self) -> bool {
        self.machines
            .iter()
            .all(|m| m.current_frame() >= self.setup.frames)
    }

    /// One simulated millisecond: deliveries, the frame ticks that are due,
    /// every session's timers and datagrams.
    fn step(
        &mut self,
        input: &mut impl FnMut(u8, u32) -> Buttons,
        update: &mut impl FnMut(&MatchUpdate),
    ) -> Result<(), AppError> {
        self.now += 1;
        let now = self.now;
        for delivery in self.net.deliver_due(now) {
            if let Some(machine) = self.machines.get_mut(delivery.to as usize) {
                machine
                    .netplay
                    .handle_datagram(now, delivery.from, &delivery.bytes);
            }
        }
        let now_us = now as f64 * 1_000.0;
        let target = self.setup.frames;
        for (index, machine) in self.machines.iter_mut().enumerate() {
            // A machine that played its frames stops running them but still
            // answers its peer, which may be a few frames behind.
            if now_us >= machine.next_frame_at_us && machine.current_frame() < target {
                let frame_us = 1_000_000.0 / machine.game.frames_per_second();
                let speed = f64::from(machine.netplay.frames_per_second_factor());
                machine.next_frame_at_us += frame_us / speed;
                tick(machine, now, input)?;
            }
            let net = &mut self.net;
            let from = machine.player;
            machine
                .netplay
                .poll(now, |to, bytes| net.send(now, from, to, bytes));
            for event in machine.netplay.events() {
                update(&MatchUpdate::Event {
                    at: now,
                    machine: index,
                    event,
                });
            }
        }
        Ok(())
    }
}

/// One frame tick of `machine`: its player's buttons, then the session's requests.
fn tick<G>(
    machine: &mut MatchMachine<G>,
    now: Millis,
    input: &mut impl FnMut(u8, u32) -> Buttons,
) -> Result<(), AppError>
where
    G: DerefMut,
    G::Target: Emulator,
{
    let player = PlayerId::new(machine.player);
    let session = machine.netplay.session();
    if session.kind(player) == Some(PlayerKind::Local)
        && session.connected_players().contains(player)
    {
        let buttons = input(machine.player, machine.current_frame());
        machine.netplay.add_local_input(player, buttons)?;
    }
    let outcome = machine
        .driver
        .advance(now, &mut machine.netplay, &mut *machine.game)?;
    match outcome {
        FrameOutcome::Advanced { rolled_back } if rolled_back > 0 => {
            machine.rollbacks += 1;
            machine.deepest_rollback = machine.deepest_rollback.max(rolled_back);
        }
        FrameOutcome::Waiting { .. } => machine.waiting_ticks += 1,
        FrameOutcome::Stalled => machine.stalled_ticks += 1,
        _ => {}
    }
    Ok(())
}

/// Machine `player`'s configuration: player 0 hosts, the others dial it and
/// accept the players after them.
fn config_for(setup: &MatchSetup, player: u8, frames_per_second: f64) -> NetplayConfig<u8> {
    let settings = SessionSettings {
        player_count: PLAYERS,
        frame_rate_millihertz: (frames_per_second * 1000.0).round() as u32,
        ..SessionSettings::default()
    };
    let mut config = NetplayConfig::new(
        // Tokens only need to differ between machines here: nobody else is
        // on the simulated network.
        SessionToken(0x4E45_5400 + u32::from(player)),
        "netcade-demo",
        env!("CARGO_PKG_VERSION"),
        setup.content_hash,
        settings,
        PlayerSlots::single(player),
    );
    for other in 0..PLAYERS {
        if other < player {
            config = config.dial(other, PlayerSlots::single(other));
        } else if other > player {
            config = config.accept(Some(other), PlayerSlots::single(other));
        }
    }
    config
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::testing::StubGame;

    fn lossy_setup(frames: u32) -> MatchSetup {
        MatchSetup {
            seed: 7,
            conditions: LinkConditions::latency(40).with_jitter(10).with_loss(0.05),
            frames,
            content_hash: 1,
        }
    }

    /// Buttons that change every few frames, differently per player.
    fn buttons(player: u8, frame: u32) -> Buttons {
        let mixed = (u64::from(frame / 5) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (u64::from(player) << 33);
        Buttons::from_bits((mixed >> 40) as u16 & 0x0FFF)
    }

    fn play(games: [Box<StubGame>; 2], frames: u32) -> (SimulatedMatch<Box<StubGame>>, bool) {
        let mut game_match = SimulatedMatch::new(lossy_setup(frames), games).unwrap();
        let finished = game_match.play(60_000, buttons, |_| {}).unwrap();
        (game_match, finished)
    }

    fn deterministic_pair() -> [Box<StubGame>; 2] {
        [
            Box::new(StubGame::deterministic()),
            Box::new(StubGame::deterministic()),
        ]
    }

    #[test]
    fn two_machines_agree_on_every_confirmed_frame_over_a_lossy_link() {
        let (game_match, finished) = play(deterministic_pair(), 600);
        assert!(finished);
        let [a, b] = [&game_match.machines[0], &game_match.machines[1]];
        let comparison = compare_final_checksums(&a.driver, &b.driver);
        assert_eq!(comparison.first_difference, None);
        assert!(comparison.compared >= 590, "{comparison:?}");
        assert!(
            a.rollbacks + b.rollbacks > 0,
            "the lossy link never rolled back"
        );
        assert!(a.peer_stats().unwrap().ping_ms.is_some());
    }

    #[test]
    fn the_same_setup_plays_the_same_match() {
        let (first, _) = play(deterministic_pair(), 300);
        let (second, _) = play(deterministic_pair(), 300);
        for (a, b) in first.machines.iter().zip(&second.machines) {
            assert_eq!(a.driver.final_checksums(), b.driver.final_checksums());
            assert_eq!(a.rollbacks, b.rollbacks);
            assert_eq!(first.now, second.now);
        }
    }

    #[test]
    fn a_game_that_replays_differently_on_one_machine_is_caught() {
        let games = [
            Box::new(StubGame::deterministic()),
            Box::new(StubGame::with_hidden_state()),
        ];
        let (game_match, _) = play(games, 300);
        let comparison = compare_final_checksums(
            &game_match.machines[0].driver,
            &game_match.machines[1].driver,
        );
        assert!(comparison.first_difference.is_some(), "{comparison:?}");
    }
}
