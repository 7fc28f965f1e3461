//! A whole netplay match in one process: machines, each a
//! [`NetplayMachine`] ticking as a real loop's does, over netcade's seeded
//! simulated network, on a simulated clock stepping one millisecond at a
//! time. `netcade demo` plays one with [`SimulatedMatch::play`]; the tests'
//! clusters step the same loop ([`SimulatedMatch::step`]), watching and
//! breaking what they test through [`MatchHooks`].
//!
//! Free of I/O, clocks and randomness: `now`, the network's seed and the
//! stopwatch come in, so the same arguments give the same match.

use crate::engine::frame_clock::FrameClock;
use crate::engine::matches::hooks::TickHooks;
use crate::engine::matches::machine::NetplayMachine;
use crate::engine::sinks::audio_file::AudioSink;
use crate::engine::sinks::{ChecksumLog, FrameSink};
use crate::engine::AppError;
use crate::net::sim::{LinkConditions, SimNet, SimPort, SimSockets};
use crate::net::Transport;
use netcode::emulator::{Emulator, SavestateContext};
use netcode::input::{Buttons, MAX_PLAYERS};
use netcode::netplay::{NetplayConfig, NetplayEvent, NetplaySession, NetplayStats};
use netcode::protocol::{Millis, PlayerSlots, SessionSettings, SessionToken};
use netcode::rollback::{Frame, PlayerId, SessionState};
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::time::Duration;

/// Where a demo machine's frames go: the checksum log of its final frames,
/// and the audio output if one was asked for.
pub type MatchSink = (ChecksumLog, Option<AudioSink>);

/// One machine of a simulated match: its netplay machine (session, game,
/// driver, frame clock, sink), the player it controls (its address on the
/// network too), and what whoever runs the match keeps about it.
pub struct MatchMachine<G, S = MatchSink, N = ()> {
    /// The session, game, driver, clock and sink.
    pub machine: NetplayMachine<u8, G, S>,
    /// The player this machine controls.
    pub player: u8,
    /// How fast this machine's clock runs: 1.0 keeps time, 1.01 runs 1% fast.
    pub clock_rate: f64,
    /// What the match's runner keeps about this machine (the tests: what it
    /// saw and how to perturb it; the demo: nothing).
    pub notes: N,
}

impl<G, S, N> MatchMachine<G, S, N> {
    /// Machine `player`, keeping time, with `notes`.
    pub fn new(machine: NetplayMachine<u8, G, S>, player: u8, notes: N) -> Self {
        MatchMachine {
            machine,
            player,
            clock_rate: 1.0,
            notes,
        }
    }

    /// What this machine knows of the other player's link (machines of a
    /// two-player match have one peer).
    pub fn peer_stats(&self) -> Option<NetplayStats> {
        let netplay = &self.machine.netplay;
        let players = netplay.session().players() as u8;
        (0..players)
            .filter(|&player| player != self.player)
            .find_map(|player| netplay.stats(PlayerId::new(player)))
    }

    /// The next frame this machine runs.
    pub fn current_frame(&self) -> u32 {
        self.machine.netplay.current_frame().number()
    }
}

/// A match machine is its netplay machine with an address and notes.
impl<G, S, N> Deref for MatchMachine<G, S, N> {
    type Target = NetplayMachine<u8, G, S>;
    fn deref(&self) -> &Self::Target {
        &self.machine
    }
}

impl<G, S, N> DerefMut for MatchMachine<G, S, N> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.machine
    }
}

/// What whoever runs a simulated match supplies at each step: each
/// machine's buttons and stopwatch (given that machine's notes), and a look
/// at every datagram and event.
pub trait MatchHooks<G, S, N> {
    /// The buttons local `player` holds for `frame` on the machine with
    /// `notes` (see [`TickHooks::local_input`]).
    fn local_input(&mut self, notes: &mut N, player: PlayerId, frame: Frame) -> Buttons;

    /// The stopwatch of the machine with `notes` (see
    /// [`TickHooks::stopwatch`]).
    fn stopwatch(&mut self, notes: &mut N) -> Duration;

    /// See [`TickHooks::adjust_inputs`]; by default nothing.
    fn adjust_inputs(&mut self, notes: &mut N, frame: Frame, inputs: &mut [Buttons; MAX_PLAYERS]) {
        let _ = (notes, frame, inputs);
    }

    /// A datagram machine `from` sends to `to` at `now`, before it goes on
    /// the wire: whether it goes (as the hook may have rewritten it, playing
    /// the sender: `sender` tags what it rewrote, see
    /// [`NetplaySession::seal_for`]). By default every datagram goes as it is.
    fn on_send(
        &mut self,
        now: Millis,
        from: u8,
        to: u8,
        datagram: &mut Vec<u8>,
        sender: &NetplaySession<u8>,
    ) -> bool {
        let _ = (now, from, to, datagram, sender);
        true
    }

    /// An event the session of machine `index` said at `now`, drained after
    /// that machine's tick (the hook may answer it on the machine).
    fn on_event(
        &mut self,
        now: Millis,
        index: usize,
        machine: &mut MatchMachine<G, S, N>,
        event: NetplayEvent,
    ) -> Result<(), AppError>;

    /// After every machine's tick at `now`: the turn of whatever else is on
    /// the network (spectators). By default nothing.
    fn after_machines(
        &mut self,
        now: Millis,
        sockets: &mut SimSockets<u8>,
    ) -> Result<(), AppError> {
        let _ = (now, sockets);
        Ok(())
    }
}

/// One machine's tick hooks during its tick: the match's hooks with that
/// machine's notes.
struct MachineTurn<'a, H, N, G, S> {
    hooks: &'a mut H,
    notes: &'a mut N,
    machine: PhantomData<fn() -> (G, S)>,
}

impl<H: MatchHooks<G, S, N>, N, G, S> TickHooks for MachineTurn<'_, H, N, G, S> {
    fn local_input(&mut self, player: PlayerId, frame: Frame) -> Buttons {
        self.hooks.local_input(self.notes, player, frame)
    }

    fn stopwatch(&mut self) -> Duration {
        self.hooks.stopwatch(self.notes)
    }

    fn adjust_inputs(&mut self, frame: Frame, inputs: &mut [Buttons; MAX_PLAYERS]) {
        self.hooks.adjust_inputs(self.notes, frame, inputs)
    }
}

/// The datagrams a machine sent during its tick, held until the tick ends
/// so the hooks see each one (their buffers are reused).
#[derive(Default)]
struct Outbox {
    datagrams: Vec<(u8, Vec<u8>)>,
    held: usize,
}

/// A machine's socket during its tick: what arrived, and an outbox.
struct HeldPort<'a> {
    port: SimPort<'a, u8>,
    outbox: &'a mut Outbox,
}

impl Transport for HeldPort<'_> {
    type Address = u8;

    fn send(&mut self, to: u8, datagram: &[u8]) {
        let outbox = &mut *self.outbox;
        if outbox.held == outbox.datagrams.len() {
            outbox.datagrams.push((to, Vec::new()));
        }
        let (address, bytes) = &mut outbox.datagrams[outbox.held];
        *address = to;
        bytes.clear();
        bytes.extend_from_slice(datagram);
        outbox.held += 1;
    }

    fn receive(&mut self, into: &mut Vec<u8>) -> Option<u8> {
        self.port.receive(into)
    }
}

/// Machines over a seeded [`SimNet`], one socket each (at its player's
/// address), stepped one simulated millisecond at a time.
pub struct SimulatedMatch<G, S = MatchSink, N = ()> {
    /// The simulated network, with one socket per machine.
    pub sockets: SimSockets<u8>,
    /// The machines, by player.
    pub machines: Vec<MatchMachine<G, S, N>>,
    /// The simulated moment (ms).
    pub now: Millis,
    outbox: Outbox,
}

impl<G, S, N> SimulatedMatch<G, S, N>
where
    G: DerefMut,
    G::Target: Emulator,
    S: FrameSink,
{
    /// A match of `machines` over a network seeded with `seed` whose links
    /// all have `conditions`, at moment 0.
    pub fn from_machines(
        seed: u64,
        conditions: LinkConditions,
        machines: Vec<MatchMachine<G, S, N>>,
    ) -> Self {
        let mut net = SimNet::new(seed);
        net.set_default_conditions(conditions);
        SimulatedMatch {
            sockets: SimSockets::new(net),
            machines,
            now: 0,
            outbox: Outbox::default(),
        }
    }

    /// One simulated millisecond: deliveries, then each machine's tick (its
    /// datagrams through `hooks.on_send`, then its events to
    /// `hooks.on_event`), then `hooks.after_machines`.
    pub fn step(&mut self, hooks: &mut impl MatchHooks<G, S, N>) -> Result<(), AppError> {
        self.now += 1;
        let now = self.now;
        self.sockets.deliver(now);
        for (index, member) in self.machines.iter_mut().enumerate() {
            let address = member.player;
            let mut port = HeldPort {
                port: self.sockets.port(address),
                outbox: &mut self.outbox,
            };
            let mut turn = MachineTurn {
                hooks: &mut *hooks,
                notes: &mut member.notes,
                machine: PhantomData,
            };
            member
                .machine
                .tick(now * 1000, member.clock_rate, &mut port, &mut turn)?;
            let mut port = self.sockets.port(address);
            for (to, datagram) in &mut self.outbox.datagrams[..self.outbox.held] {
                if hooks.on_send(now, address, *to, datagram, &member.machine.netplay) {
                    port.send(*to, datagram);
                }
            }
            self.outbox.held = 0;
            let events: Vec<NetplayEvent> = member.machine.netplay.events().collect();
            for event in events {
                hooks.on_event(now, index, member, event)?;
            }
        }
        hooks.after_machines(now, &mut self.sockets)
    }
}

/// What a demo match is played with.
#[derive(Clone, Copy, Debug)]
pub struct MatchSetup {
    /// Seed of the simulated network (latency jitter and losses).
    pub seed: u64,
    /// The link between the machines, each way.
    pub conditions: LinkConditions,
    /// Frames every machine plays.
    pub frames: u32,
    /// xxh3 of the content: every machine must load the same.
    pub content_hash: u64,
}

impl MatchSetup {
    /// Enough simulated time for the match, twice over: its frames at full
    /// speed or, on a long link, at the pace the link allows (a machine runs
    /// at most the prediction window ahead of the newest input it holds,
    /// which is one trip old), plus the start-up (a few round trips, and
    /// resends of a handshake that keeps losing datagrams).
    pub fn time_limit_ms(&self) -> Millis {
        let one_way = self.conditions.latency_ms + self.conditions.jitter_ms;
        let window = u64::from(SessionSettings::default().max_prediction.max(1));
        let frame_ms = (1000 / 60 + 1).max(one_way.div_ceil(window));
        let play = u64::from(self.frames) * frame_ms * 2;
        play + 20 * 2 * one_way + 30_000
    }
}

/// Something that happened in a simulated match, for status lines.
#[derive(Clone, Debug, PartialEq)]
pub enum MatchUpdate {
    /// A machine's session said something.
    Event {
        /// The simulated moment.
        at: Millis,
        /// Which machine (0-based).
        machine: usize,
        /// What it said.
        event: NetplayEvent,
    },
    /// Every machine ran frame 0 (reported once).
    AllRunning {
        /// The simulated moment.
        at: Millis,
    },
    /// Sent every [`PROGRESS_EVERY_MS`] of simulated time while running.
    Progress {
        /// The simulated moment.
        at: Millis,
        /// Each machine's next frame.
        frames: Vec<u32>,
        /// Each machine's rollbacks so far.
        rollbacks: Vec<u64>,
    },
}

/// How often [`MatchUpdate::Progress`] is sent (simulated milliseconds).
pub const PROGRESS_EVERY_MS: Millis = 5_000;

/// Checksums a simulated match keeps per machine (16 bytes each: 1 MiB).
pub const CHECKSUM_LOG_FRAMES: usize = 1 << 16;

/// How a simulated match ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchEnd {
    /// Every machine ran all its frames.
    Finished,
    /// A session ended the match (a machine left).
    Ended,
    /// The time limit passed first.
    OutOfTime,
}

/// Players of a demo match (one per machine).
const PLAYERS: u8 = 2;

/// The demo's hooks: each machine's player's buttons from the match's
/// input function, re-simulations timed by its stopwatch, every event to
/// its update function.
struct PlayerHooks<F, W, U> {
    input: F,
    stopwatch: W,
    update: U,
}

impl<G, F, W, U> MatchHooks<G, MatchSink, ()> for PlayerHooks<F, W, U>
where
    F: FnMut(u8, u32) -> Buttons,
    W: FnMut() -> Duration,
    U: FnMut(&MatchUpdate),
{
    fn local_input(&mut self, _: &mut (), player: PlayerId, frame: Frame) -> Buttons {
        (self.input)(player.index() as u8, frame.number())
    }

    fn stopwatch(&mut self, _: &mut ()) -> Duration {
        (self.stopwatch)()
    }

    fn on_event(
        &mut self,
        now: Millis,
        index: usize,
        _: &mut MatchMachine<G, MatchSink, ()>,
        event: NetplayEvent,
    ) -> Result<(), AppError> {
        (self.update)(&MatchUpdate::Event {
            at: now,
            machine: index,
            event,
        });
        Ok(())
    }
}

impl<G> SimulatedMatch<G>
where
    G: DerefMut,
    G::Target: Emulator,
{
    /// The demo's match between `games` (one per player, already loaded
    /// with the same content, at their first frame; boxed, so any game
    /// fits): the machine of player 0 hosts and sends its game's state as
    /// the start state, which the other loads before frame 0.
    pub fn new(setup: MatchSetup, games: [G; PLAYERS as usize]) -> Result<Self, AppError> {
        let mut machines = Vec::new();
        for (player, mut game) in (0u8..).zip(games) {
            let frames_per_second = game.frames_per_second();
            let mut config = config_for(&setup, player, frames_per_second);
            if player == 0 {
                game.set_savestate_context(SavestateContext::Netplay);
                let mut state = Vec::new();
                game.save_state(&mut state).map_err(AppError::at_frame(0))?;
                config.start_state = Some(state);
            }
            let netplay = NetplaySession::new(config, 0)?;
            // The machines' frame clocks are out of phase, as real ones are.
            let clock = FrameClock::new(frames_per_second, 1_000 + u64::from(player) * 3_700);
            let sink = (ChecksumLog::new(CHECKSUM_LOG_FRAMES), None);
            let mut machine = NetplayMachine::new(netplay, game, sink, clock);
            machine.stop_at_frame = Some(setup.frames);
            machines.push(MatchMachine::new(machine, player, ()));
        }
        Ok(Self::from_machines(setup.seed, setup.conditions, machines))
    }

    /// Plays `setup`'s match (the one this was made with) until every
    /// machine has run `setup.frames` frames (or the match ended, or
    /// [`MatchSetup::time_limit_ms`] of simulated time passed), taking each
    /// machine's local buttons from `input(player, frame)`, timing
    /// re-simulations with `stopwatch` (the real clock measures the real
    /// cores; a constant makes re-simulation free) and telling `update`
    /// what happens.
    pub fn play(
        &mut self,
        setup: &MatchSetup,
        input: impl FnMut(u8, u32) -> Buttons,
        stopwatch: impl FnMut() -> Duration,
        update: impl FnMut(&MatchUpdate),
    ) -> Result<MatchEnd, AppError> {
        let mut hooks = PlayerHooks {
            input,
            stopwatch,
            update,
        };
        let limit_ms = setup.time_limit_ms();
        let mut all_running = false;
        let mut next_progress = 0;
        while self.now < limit_ms {
            if self.finished(setup) {
                self.settle(setup, limit_ms, &mut hooks)?;
                return Ok(MatchEnd::Finished);
            }
            if self
                .machines
                .iter()
                .any(|m| m.machine.netplay.state() == SessionState::Ended)
            {
                return Ok(MatchEnd::Ended);
            }
            self.step(&mut hooks)?;
            if !all_running
                && self
                    .machines
                    .iter()
                    .all(|m| m.machine.netplay.started_at().is_some())
            {
                all_running = true;
                next_progress = self.now + PROGRESS_EVERY_MS;
                (hooks.update)(&MatchUpdate::AllRunning { at: self.now });
            }
            if all_running && self.now >= next_progress {
                next_progress += PROGRESS_EVERY_MS;
                (hooks.update)(&MatchUpdate::Progress {
                    at: self.now,
                    frames: self.machines.iter().map(|m| m.current_frame()).collect(),
                    rollbacks: self
                        .machines
                        .iter()
                        .map(|m| m.machine.stats.rollbacks)
                        .collect(),
                });
            }
        }
        Ok(if self.finished(setup) {
            MatchEnd::Finished
        } else {
            MatchEnd::OutOfTime
        })
    }

    /// Once every machine ran its frames, lets them exchange the last inputs
    /// (running no more frames) until every frame run is final on every
    /// machine, so all of them can be compared; at most a few round trips.
    fn settle(
        &mut self,
        setup: &MatchSetup,
        limit_ms: Millis,
        hooks: &mut impl MatchHooks<G, MatchSink, ()>,
    ) -> Result<(), AppError> {
        let one_way = setup.conditions.latency_ms + setup.conditions.jitter_ms;
        let deadline = limit_ms.min(self.now + 8 * one_way + 1_000);
        while self.now < deadline
            && self
                .machines
                .iter()
                .any(|m| m.machine.sink.0.end_frame() < setup.frames)
        {
            self.step(hooks)?;
        }
        Ok(())
    }

    fn finished(&self, setup: &MatchSetup) -> bool {
        self.machines
            .iter()
            .all(|m| m.current_frame() >= setup.frames)
    }
}

/// Machine `player`'s configuration: player 0 hosts, the others dial it and
/// accept the players after them.
fn config_for(setup: &MatchSetup, player: u8, frames_per_second: f64) -> NetplayConfig<u8> {
    let settings = SessionSettings {
        player_count: PLAYERS,
        frame_rate_millihertz: (frames_per_second * 1000.0).round() as u32,
        ..SessionSettings::default()
    };
    let config = NetplayConfig::new(
        // Tokens only need to differ between machines here: nobody else is
        // on the simulated network.
        SessionToken(0x4E45_5400 + u32::from(player)),
        "netcade-demo",
        env!("CARGO_PKG_VERSION"),
        setup.content_hash,
        settings,
        PlayerSlots::single(player),
    );
    one_player_per_machine(config, player)
}

/// Completes the configuration of machine `me` in a match of one player
/// per machine, each at the address of its player (`0..player_count`): it
/// dials every machine before it and accepts every machine after it, so
/// machine 0 hosts and every pair of machines is linked once.
pub fn one_player_per_machine(mut config: NetplayConfig<u8>, me: u8) -> NetplayConfig<u8> {
    for other in 0..config.settings.player_count {
        if other < me {
            config = config.dial(other, PlayerSlots::single(other));
        } else if other > me {
            config = config.accept(Some(other), PlayerSlots::single(other));
        }
    }
    config
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sinks::{
        compare_checksum_logs, ChecksumComparison, FinalFrame, FinishedFrame,
    };
    use netcode::testing::StubGame;

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

    fn play_setup(
        setup: MatchSetup,
        games: [Box<StubGame>; 2],
    ) -> (SimulatedMatch<Box<StubGame>>, MatchEnd) {
        let mut game_match = SimulatedMatch::new(setup, games).unwrap();
        let end = game_match
            .play(&setup, buttons, || Duration::ZERO, |_| {})
            .unwrap();
        (game_match, end)
    }

    fn play(games: [Box<StubGame>; 2], frames: u32) -> (SimulatedMatch<Box<StubGame>>, MatchEnd) {
        play_setup(lossy_setup(frames), games)
    }

    fn deterministic_pair() -> [Box<StubGame>; 2] {
        [
            Box::new(StubGame::deterministic()),
            Box::new(StubGame::deterministic()),
        ]
    }

    fn compare(game_match: &SimulatedMatch<Box<StubGame>>) -> ChecksumComparison {
        compare_checksum_logs(
            &game_match.machines[0].machine.sink.0,
            &game_match.machines[1].machine.sink.0,
        )
    }

    #[test]
    fn two_machines_agree_on_every_final_frame_over_a_lossy_link() {
        let (game_match, end) = play(deterministic_pair(), 600);
        assert_eq!(end, MatchEnd::Finished);
        let comparison = compare(&game_match);
        assert_eq!(comparison.first_difference, None);
        assert_eq!(comparison.compared, 600, "every frame run is compared");
        let [a, b] = [&game_match.machines[0], &game_match.machines[1]];
        assert!(
            a.machine.stats.rollbacks + b.machine.stats.rollbacks > 0,
            "the lossy link never rolled back"
        );
        assert!(a.peer_stats().unwrap().ping_ms.is_some());
    }

    #[test]
    fn a_joiner_whose_game_differs_at_load_begins_from_the_hosts_start_state() {
        let mut joiner = StubGame::deterministic();
        for frame in 0..7 {
            joiner.run_frame(&[buttons(0, frame), buttons(1, frame)], false);
        }
        let games = [Box::new(StubGame::deterministic()), Box::new(joiner)];
        let (game_match, end) = play(games, 300);
        assert_eq!(end, MatchEnd::Finished);
        let comparison = compare(&game_match);
        assert_eq!(comparison.first_difference, None, "{comparison:?}");
        assert_eq!(comparison.compared, 300);
    }

    #[test]
    fn the_same_setup_plays_the_same_match() {
        let (first, _) = play(deterministic_pair(), 300);
        let (second, _) = play(deterministic_pair(), 300);
        for (a, b) in first.machines.iter().zip(&second.machines) {
            assert!(a
                .machine
                .sink
                .0
                .checksums()
                .eq(b.machine.sink.0.checksums()));
            assert_eq!(a.machine.stats, b.machine.stats);
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
        let comparison = compare(&game_match);
        assert!(comparison.first_difference.is_some(), "{comparison:?}");
    }

    #[test]
    fn a_two_second_round_trip_still_finishes_within_the_time_limit() {
        let setup = MatchSetup {
            conditions: LinkConditions::latency(1000).with_jitter(10),
            ..lossy_setup(600)
        };
        let (game_match, end) = play_setup(setup, deterministic_pair());
        assert_eq!(end, MatchEnd::Finished);
        assert_eq!(compare(&game_match).first_difference, None);
    }

    /// Records what the driver hands a sink.
    #[derive(Default)]
    struct Recorder {
        runs: Vec<(u32, bool, usize)>,
        finalized: Vec<(u32, Vec<Buttons>)>,
    }

    impl FrameSink for Recorder {
        fn frame_run(&mut self, frame: &FinishedFrame<'_>) {
            self.runs
                .push((frame.frame.number(), frame.resimulated, frame.audio.len()));
        }

        fn frame_finalized(&mut self, frame: &FinalFrame<'_>) {
            self.finalized
                .push((frame.frame.number(), frame.inputs.to_vec()));
        }
    }

    /// What a test machine's re-simulation costs, and what it heard.
    struct Costly {
        cost: Duration,
        elapsed: Duration,
        events: Vec<NetplayEvent>,
    }

    type TestMachine = MatchMachine<Box<StubGame>, Recorder, Costly>;

    /// Every machine presses `buttons` and keeps its events.
    struct Pressing;

    impl<G> MatchHooks<G, Recorder, Costly> for Pressing {
        fn local_input(&mut self, _: &mut Costly, player: PlayerId, frame: Frame) -> Buttons {
            buttons(player.index() as u8, frame.number())
        }

        fn stopwatch(&mut self, costly: &mut Costly) -> Duration {
            costly.elapsed += costly.cost;
            costly.elapsed
        }

        fn on_event(
            &mut self,
            _: Millis,
            _: usize,
            machine: &mut MatchMachine<G, Recorder, Costly>,
            event: NetplayEvent,
        ) -> Result<(), AppError> {
            machine.notes.events.push(event);
            Ok(())
        }
    }

    /// Plays a lossy two-machine match of `games` with recording sinks,
    /// re-simulations of machine 1 costing `resimulation_cost` each.
    fn play_with_sinks(
        frames: u32,
        resimulation_cost: Duration,
        games: [StubGame; 2],
    ) -> [TestMachine; 2] {
        let setup = lossy_setup(frames);
        let machines = (0..2u8)
            .zip(games)
            .map(|(player, game)| {
                let netplay = NetplaySession::new(config_for(&setup, player, 60.0), 0).unwrap();
                let clock = FrameClock::new(60.0, 1_000 + u64::from(player) * 3_700);
                let game = Box::new(game);
                let mut machine = NetplayMachine::new(netplay, game, Recorder::default(), clock);
                machine.stop_at_frame = Some(frames);
                let cost = if player == 1 {
                    resimulation_cost
                } else {
                    Duration::ZERO
                };
                let costly = Costly {
                    cost,
                    elapsed: Duration::ZERO,
                    events: Vec::new(),
                };
                MatchMachine::new(machine, player, costly)
            })
            .collect();
        let mut game_match = SimulatedMatch::from_machines(setup.seed, setup.conditions, machines);
        while game_match.now + 1 < 60_000
            && game_match
                .machines
                .iter()
                .any(|m| m.current_frame() < frames)
        {
            game_match.step(&mut Pressing).unwrap();
        }
        game_match.machines.try_into().ok().unwrap()
    }

    #[test]
    fn the_sink_hears_every_frame_run_and_every_frame_once_it_is_final() {
        let [sink, other] = play_with_sinks(300, Duration::ZERO, stubs()).map(|m| m.machine.sink);
        let first_runs: Vec<u32> = sink
            .runs
            .iter()
            .filter(|(_, resimulated, _)| !resimulated)
            .map(|&(frame, _, _)| frame)
            .collect();
        assert_eq!(first_runs, (0..300).collect::<Vec<_>>());
        assert!(
            sink.runs.iter().any(|&(_, resimulated, _)| resimulated),
            "the lossy link caused rollbacks"
        );
        assert!(sink.runs.iter().all(|&(_, _, audio)| audio > 0));
        let final_count = sink.finalized.len() as u32;
        assert!(final_count > 280, "{final_count} frames final");
        let frames: Vec<u32> = sink.finalized.iter().map(|(frame, _)| *frame).collect();
        assert_eq!(frames, (0..final_count).collect::<Vec<_>>());
        // Final frames carry the buttons every machine ran them with.
        let common = sink.finalized.len().min(other.finalized.len());
        assert!(common > 280);
        assert_eq!(sink.finalized[..common], other.finalized[..common]);
        let mut distinct: Vec<_> = sink.finalized.iter().map(|(_, inputs)| inputs).collect();
        distinct.sort_by_key(|inputs| inputs.iter().map(|b| b.bits()).collect::<Vec<_>>());
        distinct.dedup();
        assert!(distinct.len() > 10, "the players pressed buttons");
    }

    #[test]
    fn a_slow_resimulation_raises_the_input_delay() {
        let [_, fast_there] =
            play_with_sinks(600, Duration::ZERO, stubs()).map(|m| m.machine.netplay);
        let [_, slow_there] =
            play_with_sinks(600, Duration::from_millis(6), stubs()).map(|m| m.machine.netplay);
        assert!(
            slow_there.input_delay() > fast_there.input_delay(),
            "slow {} fast {}",
            slow_there.input_delay(),
            fast_there.input_delay()
        );
    }

    fn stubs() -> [StubGame; 2] {
        [StubGame::deterministic(), StubGame::deterministic()]
    }

    #[test]
    fn without_a_sink_asking_for_checksums_checkpoints_are_still_hashed_and_compared() {
        let games = [StubGame::deterministic(), StubGame::with_hidden_state()];
        let [here, _] = play_with_sinks(300, Duration::ZERO, games);
        assert!(
            here.notes
                .events
                .iter()
                .any(|event| matches!(event, NetplayEvent::Desync { .. })),
            "the desync was not reported"
        );
        let [here, _] = play_with_sinks(300, Duration::ZERO, stubs());
        assert!(!here
            .notes
            .events
            .iter()
            .any(|event| matches!(event, NetplayEvent::Desync { .. })));
    }
}
