//! A deterministic netplay match: N machines, each netcade's
//! `NetplayMachine` (the same tick and frame clock as the demo and a real
//! loop) driving its own game, over a seeded `SimNet`, on a simulated clock
//! stepping one millisecond at a time. Each machine runs frames at 60 fps ×
//! its clock-rate error × the session's time-sync speed, and logs the
//! checksum of its game's memory at the start of every frame once that frame
//! is final (no rollback or departure can change it), so tests compare
//! machines frame by frame. Same seed, same run.

use netcade::checksum::Checksum;
use netcade::emulator::{Emulator, EmulatorError, SavestateContext, VideoFrame};
use netcade::engine::frame_clock::FrameClock;
use netcade::engine::netplay::desync_diagnosis::DesyncAnswer;
use netcade::engine::netplay::hooks::TickHooks;
use netcade::engine::netplay::machine::{NetplayMachine, SpectatorMachine};
use netcade::engine::netplay::simulated::one_player_per_machine;
use netcade::engine::sinks::ChecksumLog;
use netcade::input::{Buttons, MAX_PLAYERS};
use netcade::net::sim::{LinkConditions, SimNet, SimPort, SimSockets};
use netcade::net::Transport;
use netcade::netplay::{
    NetplayConfig, NetplayEvent, NetplaySession, SpectatorConfig, SpectatorEvent, SpectatorSession,
};
use netcade::protocol::{
    EndpointConfig, Event, Handshake, Millis, PeerEndpoint, PlayerSlots, SessionSettings,
    SessionToken,
};
use netcade::rollback::{Frame, PlayerId, SessionState};
use std::ops::{Deref, DerefMut};
use std::time::Duration;

/// A pad that changes every few frames, like a person's, different per player.
pub fn pad(player: u8, frame: u32) -> Buttons {
    let mut x =
        u64::from(frame / 4).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (u64::from(player) + 1) << 40;
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 32;
    Buttons::from_bits(x as u16 & 0x0FFF)
}

/// A tiny deterministic game for up to four players: every player's buttons
/// move it and feed a running hash, so any difference in anyone's inputs
/// shows in memory.
#[derive(Clone, Debug, Default)]
pub struct PartyGame {
    memory: [u8; 16],
}

impl Emulator for PartyGame {
    fn run_frame(&mut self, inputs: &[Buttons], _render: bool) {
        for (player, buttons) in inputs.iter().enumerate().take(4) {
            let bits = buttons.bits();
            let position = &mut self.memory[player];
            if bits & 0x80 != 0 {
                *position = position.wrapping_add(1);
            }
            if bits & 0x40 != 0 {
                *position = position.wrapping_sub(1);
            }
            let hash = u64::from_le_bytes(self.memory[8..16].try_into().unwrap());
            let hash = (hash ^ u64::from(bits) ^ (player as u64) << 16)
                .wrapping_mul(0x0000_0100_0000_01B3)
                .rotate_left(7);
            self.memory[8..16].copy_from_slice(&hash.to_le_bytes());
        }
        self.memory[4] = self.memory[4].wrapping_add(1);
    }

    fn save_state(&mut self, into: &mut Vec<u8>) -> Result<(), EmulatorError> {
        into.clear();
        into.extend_from_slice(&self.memory);
        Ok(())
    }

    fn load_state(&mut self, from: &[u8]) -> Result<(), EmulatorError> {
        self.memory = from.try_into().map_err(|_| EmulatorError::LoadFailed {
            reason: format!("{} bytes is not a party game state", from.len()),
        })?;
        Ok(())
    }

    fn game_memory(&self) -> &[u8] {
        &self.memory
    }

    fn video_frame(&self) -> Option<VideoFrame<'_>> {
        None
    }

    fn audio_samples(&self) -> &[i16] {
        &[]
    }

    fn frames_per_second(&self) -> f64 {
        60.0
    }

    fn sample_rate(&self) -> f64 {
        48_000.0
    }
}

/// The Duel core through the real libretro FFI path, with its private copy
/// and directories kept alive as long as it runs.
pub struct DuelGame {
    duel: super::LoadedDuel,
}

impl DuelGame {
    pub fn load() -> DuelGame {
        Self::load_arena("dojo")
    }

    /// Duel with the arena shipped as `name` (`"dojo"`, `"moon"`).
    pub fn load_arena(name: &str) -> DuelGame {
        DuelGame {
            duel: super::load_duel(name),
        }
    }
}

impl Emulator for DuelGame {
    fn run_frame(&mut self, inputs: &[Buttons], render: bool) {
        self.duel.core.run_frame(inputs, render)
    }
    fn save_state(&mut self, into: &mut Vec<u8>) -> Result<(), EmulatorError> {
        self.duel.core.save_state(into)
    }
    fn load_state(&mut self, from: &[u8]) -> Result<(), EmulatorError> {
        self.duel.core.load_state(from)
    }
    fn set_savestate_context(&mut self, context: SavestateContext) {
        self.duel.core.set_savestate_context(context)
    }
    fn game_memory(&self) -> &[u8] {
        self.duel.core.game_memory()
    }
    fn video_frame(&self) -> Option<VideoFrame<'_>> {
        self.duel.core.video_frame()
    }
    fn audio_samples(&self) -> &[i16] {
        self.duel.core.audio_samples()
    }
    fn frames_per_second(&self) -> f64 {
        self.duel.core.frames_per_second()
    }
    fn sample_rate(&self) -> f64 {
        self.duel.core.sample_rate()
    }
}

/// One machine: netcade's netplay machine (session, game, driver, frame
/// clock, checksum log of final frames) and what the tests look at.
pub struct Machine<G: Emulator> {
    /// Ticked by `NetplayMachine::tick`, as the demo's and a real loop's are.
    pub node: NetplayMachine<u8, Box<G>, ChecksumLog>,
    pub address: u8,
    /// 1.0 keeps time; 1.01 runs 1% fast.
    pub clock_rate: f64,
    pub events: Vec<(Millis, NetplayEvent)>,
    /// From this frame on, player 1's input is flipped on this machine only.
    pub perturb_from: Option<Frame>,
    /// The modelled cost of re-simulating one frame on this machine.
    pub resimulation_cost: Duration,
    /// What this machine did about desyncs (a host sending its state, a
    /// member diagnosing and repairing), as a real loop does.
    pub desync_answers: Vec<DesyncAnswer>,
}

impl<G: Emulator> Deref for Machine<G> {
    type Target = NetplayMachine<u8, Box<G>, ChecksumLog>;
    fn deref(&self) -> &Self::Target {
        &self.node
    }
}

impl<G: Emulator> DerefMut for Machine<G> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.node
    }
}

/// Checksums logged per machine: far more frames than any test plays.
const LOGGED_FRAMES: usize = 1 << 17;

/// What a test machine's loop supplies: `pad` for its local players, a
/// perturbation, a modelled re-simulation cost.
pub struct MachineHooks {
    pub perturb_from: Option<Frame>,
    pub cost_per_reading: Duration,
    pub elapsed: Duration,
}

impl MachineHooks {
    /// `pad` for every local player, nothing perturbed, re-simulation free.
    pub fn pad() -> Self {
        MachineHooks {
            perturb_from: None,
            cost_per_reading: Duration::ZERO,
            elapsed: Duration::ZERO,
        }
    }
}

impl TickHooks for MachineHooks {
    fn local_input(&mut self, player: PlayerId, frame: Frame) -> Buttons {
        pad(player.index() as u8, frame.number())
    }

    fn stopwatch(&mut self) -> Duration {
        // The driver reads it at a rollback's load and after each
        // re-simulated frame: one cost per frame in between.
        self.elapsed += self.cost_per_reading;
        self.elapsed
    }

    fn adjust_inputs(&mut self, frame: Frame, inputs: &mut [Buttons; MAX_PLAYERS]) {
        if self.perturb_from.is_some_and(|from| frame >= from) {
            inputs[1] = Buttons::from_bits(inputs[1].bits() ^ 0x80);
        }
    }
}

impl<G: Emulator> Machine<G> {
    /// The checksums of every final frame, from frame 0.
    pub fn final_checksums(&self) -> Vec<Checksum> {
        assert_eq!(self.sink.first_frame(), 0, "the log still holds frame 0");
        self.sink
            .checksums()
            .map(|c| c.expect("every final frame was saved"))
            .collect()
    }

    /// The simulated moment this machine ran frame 0.
    pub fn started_at(&self) -> Option<Millis> {
        self.stats.started_at
    }
}

/// A watcher of the match: a bare protocol endpoint dialling machine 0,
/// keeping every player's inputs it is fed, by frame.
pub struct Spectator {
    pub endpoint: PeerEndpoint,
    pub address: u8,
    /// Every player's buttons per frame, as received.
    pub inputs: Vec<[Option<Buttons>; MAX_PLAYERS]>,
}

impl Spectator {
    /// Plays `game` on the inputs received, from frame 0 while every
    /// player's input of a frame is known, returning the checksum of its
    /// memory at the start of each frame (what machines log as final).
    pub fn replay<E: Emulator>(&self, mut game: E, players: usize) -> Vec<Checksum> {
        let mut checksums = Vec::new();
        for row in &self.inputs {
            let Some(inputs) = row[..players].iter().copied().collect::<Option<Vec<_>>>() else {
                break;
            };
            checksums.push(Checksum::of(game.game_memory()));
            game.run_frame(&inputs, false);
        }
        checksums
    }
}

/// A netcade spectator: its machine (session, game, frame clock, checksum
/// log of the frames it played) and its events.
pub struct Watcher<G: Emulator> {
    pub node: SpectatorMachine<u8, Box<G>, ChecksumLog>,
    pub address: u8,
    pub events: Vec<(Millis, SpectatorEvent)>,
}

impl<G: Emulator> Watcher<G> {
    /// The checksums it logged, by frame, from the frame it joined at.
    pub fn checksums(&self) -> Vec<(u32, Checksum)> {
        let first = self.node.sink.first_frame();
        self.node
            .sink
            .checksums()
            .enumerate()
            .map(|(index, checksum)| (first + index as u32, checksum.expect("logged")))
            .collect()
    }
}

/// Match settings for the harness.
#[derive(Clone, Copy, Debug)]
pub struct MatchSetup {
    pub players: u8,
    pub seed: u64,
    pub conditions: LinkConditions,
    pub checksum_interval: u16,
    pub max_prediction: u8,
}

impl MatchSetup {
    pub fn new(players: u8, seed: u64, conditions: LinkConditions) -> Self {
        MatchSetup {
            players,
            seed,
            conditions,
            checksum_interval: 60,
            max_prediction: 8,
        }
    }
}

/// Rewrites a datagram `(now, from, to, datagram)` before it goes on the wire.
pub type Tamper = dyn FnMut(Millis, u8, u8, &mut Vec<u8>);

/// N machines over a simulated network, one per player (addresses 0..N).
pub struct Cluster<G: Emulator> {
    /// The network, with one socket per machine.
    pub sockets: SimSockets<u8>,
    pub machines: Vec<Machine<G>>,
    pub now: Millis,
    /// Datagrams sent, by message kind (the header's fourth byte).
    pub sent_by_kind: [u64; 256],
    /// Datagrams of `kind` sent by machine `from` before `until` are lost
    /// (`(from, kind, until)`): targeted loss for tests of resends.
    pub lose_kind: Vec<(u8, u8, Millis)>,
    /// A spectator of machine 0, once `add_spectator` was called.
    pub spectator: Option<Spectator>,
    /// netcade's spectators of machine 0, playing their own games, added by
    /// `add_watcher`.
    pub watchers: Vec<Watcher<G>>,
    /// Rewrites datagrams on the wire (`(now, from, to, datagram)`): a
    /// hostile machine for tests of misbehaving peers.
    pub tamper: Option<Box<Tamper>>,
}

/// A machine's socket, counting what it sends by kind and losing what
/// `lose_kind` says.
struct TestPort<'a> {
    port: SimPort<'a, u8>,
    from: u8,
    now: Millis,
    sent_by_kind: &'a mut [u64; 256],
    lose_kind: &'a [(u8, u8, Millis)],
    tamper: &'a mut Option<Box<Tamper>>,
}

impl Transport for TestPort<'_> {
    type Address = u8;

    fn send(&mut self, to: u8, datagram: &[u8]) {
        let kind = datagram.get(3).copied().unwrap_or(0);
        self.sent_by_kind[kind as usize] += 1;
        let (from, now) = (self.from, self.now);
        let lost = self
            .lose_kind
            .iter()
            .any(|&(sender, lost, until)| sender == from && lost == kind && now < until);
        if lost {
            return;
        }
        match self.tamper {
            Some(tamper) => {
                let mut bytes = datagram.to_vec();
                tamper(now, from, to, &mut bytes);
                self.port.send(to, &bytes);
            }
            None => self.port.send(to, datagram),
        }
    }

    fn receive(&mut self, into: &mut Vec<u8>) -> Option<u8> {
        self.port.receive(into)
    }
}

/// What every machine agrees on before connecting.
pub fn settings(setup: &MatchSetup) -> SessionSettings {
    SessionSettings {
        player_count: setup.players,
        checksum_interval: setup.checksum_interval,
        max_prediction: setup.max_prediction,
        ..SessionSettings::default()
    }
}

/// The handshake every machine of the match presents.
pub const CORE_NAME: &str = "netcade-test";
pub const CORE_VERSION: &str = "1";
pub const CONTENT_HASH: u64 = 0xC0FFEE;

/// Machine `me`'s configuration (machine 0 hosts, every pair is linked).
pub fn config_for(setup: &MatchSetup, me: u8) -> NetplayConfig<u8> {
    let config = NetplayConfig::new(
        SessionToken(0x5EED_0000 + u32::from(me) + 1),
        CORE_NAME,
        CORE_VERSION,
        CONTENT_HASH,
        settings(setup),
        PlayerSlots::single(me),
    );
    one_player_per_machine(config, me)
}

impl<G: Emulator> Cluster<G> {
    /// A match with the default configuration for each machine.
    pub fn new(setup: MatchSetup, game: impl FnMut(u8) -> G) -> Self {
        Self::with_configs(setup, game, |_, _| {})
    }

    /// A match whose configurations `adjust` may change first.
    pub fn with_configs(
        setup: MatchSetup,
        game: impl FnMut(u8) -> G,
        mut adjust: impl FnMut(u8, &mut NetplayConfig<u8>),
    ) -> Self {
        Self::with_games_and_configs(setup, game, |me, config, _| adjust(me, config))
    }

    /// A match whose configurations `adjust` may change first, seeing each
    /// machine's game as loaded (e.g. to give the host its start state).
    pub fn with_games_and_configs(
        setup: MatchSetup,
        mut game: impl FnMut(u8) -> G,
        mut adjust: impl FnMut(u8, &mut NetplayConfig<u8>, &mut G),
    ) -> Self {
        let mut net = SimNet::new(setup.seed);
        net.set_default_conditions(setup.conditions);
        let machines = (0..setup.players)
            .map(|me| {
                let mut config = config_for(&setup, me);
                let mut game = Box::new(game(me));
                adjust(me, &mut config, &mut game);
                let netplay = NetplaySession::new(config, 0).expect("a valid configuration");
                // Machines start their frame clocks out of phase.
                let clock = FrameClock::new(60.0, 1000 + u64::from(me) * 3_700);
                Machine {
                    node: NetplayMachine::new(
                        netplay,
                        game,
                        ChecksumLog::new(LOGGED_FRAMES),
                        clock,
                    ),
                    address: me,
                    clock_rate: 1.0,
                    events: Vec::new(),
                    perturb_from: None,
                    resimulation_cost: Duration::ZERO,
                    desync_answers: Vec::new(),
                }
            })
            .collect();
        Cluster {
            sockets: SimSockets::new(net),
            machines,
            now: 0,
            sent_by_kind: [0; 256],
            lose_kind: Vec::new(),
            spectator: None,
            watchers: Vec::new(),
            tamper: None,
        }
    }

    /// The simulated network (conditions, partitions).
    pub fn net(&mut self) -> &mut SimNet<u8> {
        &mut self.sockets.net
    }

    /// A spectator dialling machine 0 (whose configuration must accept
    /// spectators) from address `address`.
    pub fn add_spectator(&mut self, setup: &MatchSetup, address: u8) {
        let mut config = EndpointConfig::joiner(Handshake {
            core_name: CORE_NAME.into(),
            core_version: CORE_VERSION.into(),
            content_hash: CONTENT_HASH,
            local_slots: PlayerSlots::NONE,
            settings: settings(setup),
            ..Handshake::default()
        });
        config.first_frame = Frame::ZERO;
        self.spectator = Some(Spectator {
            endpoint: PeerEndpoint::new(config, self.now).expect("a valid spectator"),
            address,
            inputs: Vec::new(),
        });
    }

    /// A netcade spectator of machine 0 at `address`, watching on `game`
    /// (the same game as the players', as loaded), from now on.
    pub fn add_watcher(&mut self, setup: &MatchSetup, address: u8, game: G) {
        self.add_watcher_with(setup, address, game, |_| {});
    }

    /// `add_watcher` with a configuration `adjust` may change first.
    pub fn add_watcher_with(
        &mut self,
        setup: &MatchSetup,
        address: u8,
        game: G,
        adjust: impl FnOnce(&mut SpectatorConfig<u8>),
    ) {
        let mut config =
            SpectatorConfig::new(0u8, CORE_NAME, CORE_VERSION, CONTENT_HASH, settings(setup));
        adjust(&mut config);
        let session = SpectatorSession::new(config, self.now).expect("a valid spectator");
        let clock = FrameClock::new(60.0, self.now * 1000);
        self.watchers.push(Watcher {
            node: SpectatorMachine::new(
                session,
                Box::new(game),
                ChecksumLog::new(LOGGED_FRAMES),
                clock,
            ),
            address,
            events: Vec::new(),
        });
    }

    /// Advances the simulation to `until` milliseconds.
    pub fn run_until(&mut self, until: Millis) {
        while self.now < until {
            self.step();
        }
    }

    /// One millisecond: deliveries, then each machine's tick.
    pub fn step(&mut self) {
        self.now += 1;
        let now = self.now;
        self.sockets.deliver(now);
        for machine in &mut self.machines {
            let mut port = TestPort {
                port: self.sockets.port(machine.address),
                from: machine.address,
                now,
                sent_by_kind: &mut self.sent_by_kind,
                lose_kind: &self.lose_kind,
                tamper: &mut self.tamper,
            };
            let mut hooks = MachineHooks {
                perturb_from: machine.perturb_from,
                cost_per_reading: machine.resimulation_cost,
                elapsed: Duration::ZERO,
            };
            let clock_rate = machine.clock_rate;
            machine
                .node
                .tick(now * 1000, clock_rate, &mut port, &mut hooks)
                .expect("the netplay session advances and the game follows");
            assert!(
                !machine.game.game_memory().is_empty(),
                "the game shows its memory"
            );
            let events: Vec<NetplayEvent> = machine.node.netplay.events().collect();
            for event in events {
                let answer = machine
                    .node
                    .answer_desync(&event)
                    .expect("a desync is answered");
                if !matches!(answer, DesyncAnswer::Nothing) {
                    machine.desync_answers.push(answer);
                }
                machine.events.push((now, event));
            }
        }
        for watcher in &mut self.watchers {
            let mut port = self.sockets.port(watcher.address);
            watcher
                .node
                .tick(now * 1000, &mut port)
                .expect("the spectator's game follows");
            while let Some(event) = watcher.node.spectator.next_event() {
                watcher.events.push((now, event));
            }
        }
        if let Some(spectator) = &mut self.spectator {
            let mut port = self.sockets.port(spectator.address);
            exchange(&mut port, &mut spectator.endpoint, now, 0);
            for event in spectator.endpoint.drain_events() {
                if let Event::RemoteInput {
                    player,
                    frame,
                    buttons,
                } = event
                {
                    let at = frame.number() as usize;
                    if spectator.inputs.len() <= at {
                        spectator.inputs.resize(at + 1, [None; MAX_PLAYERS]);
                    }
                    spectator.inputs[at][player as usize] = Some(buttons);
                }
            }
        }
    }

    /// Cuts `machine` off from every other machine, both ways.
    pub fn isolate(&mut self, machine: u8) {
        for other in 0..self.machines.len() as u8 {
            if other != machine {
                self.sockets.net.partition(machine, other);
            }
        }
    }

    /// Undoes `isolate`.
    pub fn reconnect(&mut self, machine: u8) {
        for other in 0..self.machines.len() as u8 {
            if other != machine {
                self.sockets.net.heal(machine, other);
            }
        }
    }

    /// Asserts that the given machines agree on every frame final on all of
    /// them, and that at least `at_least` frames were compared. Returns how many.
    pub fn assert_same_final_checksums(&self, machines: &[usize], at_least: usize) -> usize {
        self.assert_same_checksums_before(machines, at_least, usize::MAX)
    }

    /// Asserts that every machine agrees on every final frame (at least
    /// `at_least` compared) and that none saw a desync or a disconnect.
    pub fn assert_all_in_sync_without_trouble(&self, at_least: usize) {
        let everyone: Vec<usize> = (0..self.machines.len()).collect();
        self.assert_same_final_checksums(&everyone, at_least);
        for machine in &self.machines {
            assert!(
                !any_event(&machine.events, |e| matches!(
                    e,
                    NetplayEvent::Desync { .. } | NetplayEvent::Disconnected { .. }
                )),
                "machine {} saw a desync or a disconnect",
                machine.address
            );
        }
    }

    /// `assert_same_final_checksums` for the frames before `end` only.
    pub fn assert_same_checksums_before(
        &self,
        machines: &[usize],
        at_least: usize,
        end: usize,
    ) -> usize {
        let all: Vec<Vec<Checksum>> = machines
            .iter()
            .map(|&m| self.machines[m].final_checksums())
            .collect();
        let common = all.iter().map(Vec::len).min().unwrap_or(0).min(end);
        assert!(
            common >= at_least,
            "only {common} frames are final on every machine, expected at least {at_least}"
        );
        let mut distinct: Vec<Checksum> = all[0][..common].to_vec();
        distinct.sort_by_key(|c| c.0);
        distinct.dedup();
        assert!(
            common < 2 || distinct.len() > common / 2,
            "the games barely change ({} distinct checksums in {common} frames)",
            distinct.len()
        );
        for frame in 0..common {
            for (index, checksums) in all.iter().enumerate().skip(1) {
                assert_eq!(
                    checksums[frame], all[0][frame],
                    "machines {} and {} differ at frame {frame}",
                    machines[0], machines[index]
                );
            }
        }
        common
    }

    /// Runs until every machine has run frame 0 (at most until `limit`).
    pub fn run_until_started(&mut self, limit: Millis) {
        while self.now < limit && self.machines.iter().any(|m| m.started_at().is_none()) {
            self.step();
        }
    }

    /// The moments the machines ran frame 0, by machine.
    pub fn start_moments(&self) -> Vec<Millis> {
        self.machines
            .iter()
            .map(|m| {
                m.started_at()
                    .unwrap_or_else(|| panic!("machine {} never started", m.address))
            })
            .collect()
    }

    /// How far apart the first and the last machine ran frame 0 (ms).
    pub fn start_spread(&self) -> Millis {
        let moments = self.start_moments();
        moments.iter().max().unwrap() - moments.iter().min().unwrap()
    }

    /// Every machine's events that match.
    pub fn events_of(&self, machine: usize) -> &[(Millis, NetplayEvent)] {
        &self.machines[machine].events
    }

    pub fn all_running(&self) -> bool {
        self.machines
            .iter()
            .all(|m| m.netplay.state() == SessionState::Running)
    }
}

/// One millisecond of a bare endpoint at `port` talking to machine `to`:
/// it takes in what arrived and sends what is due.
pub fn exchange(port: &mut SimPort<'_, u8>, endpoint: &mut PeerEndpoint, now: Millis, to: u8) {
    let mut datagram = Vec::new();
    while port.receive(&mut datagram).is_some() {
        endpoint.handle_datagram(now, &datagram);
    }
    for datagram in endpoint.poll_datagrams(now) {
        port.send(to, &datagram);
    }
}

/// Whether any event of `events` matches.
pub fn any_event(
    events: &[(Millis, NetplayEvent)],
    matches: impl Fn(&NetplayEvent) -> bool,
) -> bool {
    events.iter().any(|(_, event)| matches(event))
}
