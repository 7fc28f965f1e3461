//! A deterministic netplay match: N machines over a seeded `SimNet`, on a
//! simulated clock stepping one millisecond at a time, run by netcade's own
//! `SimulatedMatch` (the demo's loop: each machine a `NetplayMachine`, with
//! the tick and frame clock of a real loop, driving its own game). Each
//! machine runs frames at 60 fps × its clock-rate error × the session's
//! time-sync speed, and logs the checksum of its game's memory at the start
//! of every frame once that frame is final (no rollback or departure can
//! change it), so tests compare machines frame by frame. The cluster adds
//! what the tests watch and break: events and desync answers per machine,
//! datagrams counted, lost or rewritten by kind, spectators. Same seed,
//! same run.

use netcade::engine::frame_clock::FrameClock;
use netcade::engine::matches::desync_diagnosis::DesyncAnswer;
use netcade::engine::matches::hooks::TickHooks;
use netcade::engine::matches::machine::{NetplayMachine, SpectatorMachine};
use netcade::engine::matches::simulated::{
    one_player_per_machine, MatchHooks, MatchMachine, SimulatedMatch,
};
use netcade::engine::sinks::ChecksumLog;
use netcade::engine::AppError;
use netcade::net::sim::{LinkConditions, SimNet, SimPort, SimSockets};
use netcade::net::Transport;
use netcode::checksum::Checksum;
use netcode::emulator::Emulator;
use netcode::input::{Buttons, MAX_PLAYERS};
use netcode::netplay::{
    NetplayConfig, NetplayEvent, NetplaySession, SpectatorConfig, SpectatorEvent, SpectatorSession,
};
use netcode::protocol::{
    auth, EndpointConfig, Event, Handshake, Millis, PeerEndpoint, PlayerSlots, SessionSettings,
    SessionToken,
};
use netcode::rollback::{Frame, PlayerId, SessionState};
use netcode::testing::StubGame;
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

/// The stub game for up to four players: every player's buttons move it,
/// so any difference in anyone's inputs shows in memory.
pub fn party_game() -> Box<StubGame> {
    Box::new(StubGame::deterministic().players(MAX_PLAYERS))
}

/// A cluster whose machines play the party game.
pub type PartyCluster = Cluster<Box<StubGame>>;

/// `players` machines of the party game over links of `conditions`.
pub fn party_cluster(players: u8, seed: u64, conditions: LinkConditions) -> PartyCluster {
    Cluster::new(MatchSetup::new(players, seed, conditions), |_| party_game())
}

/// What the tests keep about each machine, and how they perturb it; its
/// loop's hooks press `pad` for every local player.
#[derive(Debug, Default)]
pub struct MachineNotes {
    /// Every event its session said, with the moment.
    pub events: Vec<(Millis, NetplayEvent)>,
    /// From this frame on, player 1's input is flipped on this machine only.
    pub perturb_from: Option<Frame>,
    /// The modelled cost of re-simulating one frame on this machine.
    pub resimulation_cost: Duration,
    /// What this machine did about desyncs (a host sending its state, a
    /// member diagnosing and repairing), as a real loop does.
    pub desync_answers: Vec<DesyncAnswer>,
    elapsed: Duration,
}

impl TickHooks for MachineNotes {
    fn local_input(&mut self, player: PlayerId, frame: Frame) -> Buttons {
        pad(player.index() as u8, frame.number())
    }

    fn stopwatch(&mut self) -> Duration {
        // The driver reads it at a rollback's load and after each
        // re-simulated frame: one cost per frame in between.
        self.elapsed += self.resimulation_cost;
        self.elapsed
    }

    fn adjust_inputs(&mut self, frame: Frame, inputs: &mut [Buttons; MAX_PLAYERS]) {
        if self.perturb_from.is_some_and(|from| frame >= from) {
            inputs[1] = Buttons::from_bits(inputs[1].bits() ^ 0x80);
        }
    }
}

/// One machine of a cluster: netcade's netplay machine (session, game,
/// driver, frame clock, checksum log of final frames) and its notes.
pub type Machine<G> = MatchMachine<G, ChecksumLog, MachineNotes>;

/// Checksums logged per machine: far more frames than any test plays.
const LOGGED_FRAMES: usize = 1 << 17;

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
    pub fn replay<G>(&self, mut game: G, players: usize) -> Vec<Checksum>
    where
        G: DerefMut,
        G::Target: Emulator,
    {
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
pub struct Watcher<G> {
    pub node: SpectatorMachine<u8, G, ChecksumLog>,
    pub address: u8,
    pub events: Vec<(Millis, SpectatorEvent)>,
}

impl<G> Watcher<G> {
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

/// N machines over a simulated network, one per player (addresses 0..N):
/// netcade's simulated match (`machines`, `now`, `sockets` through it) and
/// what the tests add to it.
pub struct Cluster<G> {
    pub game_match: SimulatedMatch<G, ChecksumLog, MachineNotes>,
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
    /// Rewrites datagrams on the wire (`(now, from, to, datagram)`, without
    /// its tag, which the sender puts back on): a hostile machine for tests
    /// of misbehaving peers.
    pub tamper: Option<Box<Tamper>>,
}

impl<G> Deref for Cluster<G> {
    type Target = SimulatedMatch<G, ChecksumLog, MachineNotes>;
    fn deref(&self) -> &Self::Target {
        &self.game_match
    }
}

impl<G> DerefMut for Cluster<G> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.game_match
    }
}

/// The cluster's side of each step: machines press `pad` (perturbed as
/// their notes say), datagrams are counted, lost and rewritten, events are
/// noted and desyncs answered as a real loop does, then the spectators
/// take their turn.
struct ClusterHooks<'a, G> {
    sent_by_kind: &'a mut [u64; 256],
    lose_kind: &'a [(u8, u8, Millis)],
    tamper: &'a mut Option<Box<Tamper>>,
    spectator: &'a mut Option<Spectator>,
    watchers: &'a mut [Watcher<G>],
}

impl<G> MatchHooks<G, ChecksumLog, MachineNotes> for ClusterHooks<'_, G>
where
    G: DerefMut,
    G::Target: Emulator,
{
    fn local_input(&mut self, notes: &mut MachineNotes, player: PlayerId, frame: Frame) -> Buttons {
        notes.local_input(player, frame)
    }

    fn stopwatch(&mut self, notes: &mut MachineNotes) -> Duration {
        notes.stopwatch()
    }

    fn adjust_inputs(
        &mut self,
        notes: &mut MachineNotes,
        frame: Frame,
        inputs: &mut [Buttons; MAX_PLAYERS],
    ) {
        notes.adjust_inputs(frame, inputs)
    }

    fn on_send(
        &mut self,
        now: Millis,
        from: u8,
        to: u8,
        datagram: &mut Vec<u8>,
        sender: &NetplaySession<u8>,
    ) -> bool {
        let kind = datagram.get(3).copied().unwrap_or(0);
        self.sent_by_kind[kind as usize] += 1;
        let lost = self
            .lose_kind
            .iter()
            .any(|&(sender, lost, until)| sender == from && lost == kind && now < until);
        if let Some(tamper) = self.tamper.as_mut().filter(|_| !lost) {
            // The tamper sees the datagram as encoded; the sender tags
            // what it made of it, as a machine breaking the rules would.
            datagram.truncate(auth::without_tag(datagram).len());
            tamper(now, from, to, datagram);
            sender.seal_for(to, datagram);
        }
        !lost
    }

    fn on_event(
        &mut self,
        now: Millis,
        _: usize,
        machine: &mut Machine<G>,
        event: NetplayEvent,
    ) -> Result<(), AppError> {
        let answer = machine.answer_desync(&event)?;
        if !matches!(answer, DesyncAnswer::Nothing) {
            machine.notes.desync_answers.push(answer);
        }
        machine.notes.events.push((now, event));
        Ok(())
    }

    fn after_machines(
        &mut self,
        now: Millis,
        sockets: &mut SimSockets<u8>,
    ) -> Result<(), AppError> {
        for watcher in self.watchers.iter_mut() {
            let mut port = sockets.port(watcher.address);
            watcher.node.tick(now * 1000, &mut port)?;
            while let Some(event) = watcher.node.spectator.next_event() {
                watcher.events.push((now, event));
            }
        }
        if let Some(spectator) = self.spectator.as_mut() {
            let mut port = sockets.port(spectator.address);
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
        Ok(())
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

impl<G> Cluster<G>
where
    G: DerefMut,
    G::Target: Emulator,
{
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
        let machines = (0..setup.players)
            .map(|me| {
                let mut config = config_for(&setup, me);
                let mut game = game(me);
                adjust(me, &mut config, &mut game);
                let netplay = NetplaySession::new(config, 0).expect("a valid configuration");
                // Machines start their frame clocks out of phase.
                let clock = FrameClock::new(60.0, 1000 + u64::from(me) * 3_700);
                let log = ChecksumLog::new(LOGGED_FRAMES);
                let machine = NetplayMachine::new(netplay, game, log, clock);
                MatchMachine::new(machine, me, MachineNotes::default())
            })
            .collect();
        Cluster {
            game_match: SimulatedMatch::from_machines(setup.seed, setup.conditions, machines),
            sent_by_kind: [0; 256],
            lose_kind: Vec::new(),
            spectator: None,
            watchers: Vec::new(),
            tamper: None,
        }
    }

    /// The simulated network (conditions, partitions).
    pub fn net(&mut self) -> &mut SimNet<u8> {
        &mut self.game_match.sockets.net
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
            node: SpectatorMachine::new(session, game, ChecksumLog::new(LOGGED_FRAMES), clock),
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

    /// One millisecond of the simulated match, with the cluster's hooks.
    pub fn step(&mut self) {
        let mut hooks = ClusterHooks {
            sent_by_kind: &mut self.sent_by_kind,
            lose_kind: &self.lose_kind,
            tamper: &mut self.tamper,
            spectator: &mut self.spectator,
            watchers: &mut self.watchers,
        };
        self.game_match
            .step(&mut hooks)
            .expect("the netplay session advances and the game follows");
        for machine in &self.game_match.machines {
            assert!(
                !machine.game.game_memory().is_empty(),
                "the game shows its memory"
            );
        }
    }

    /// Cuts `machine` off from every other machine, both ways.
    pub fn isolate(&mut self, machine: u8) {
        for other in 0..self.machines.len() as u8 {
            if other != machine {
                self.net().partition(machine, other);
            }
        }
    }

    /// Undoes `isolate`.
    pub fn reconnect(&mut self, machine: u8) {
        for other in 0..self.machines.len() as u8 {
            if other != machine {
                self.net().heal(machine, other);
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
                !any_event(&machine.notes.events, |e| matches!(
                    e,
                    NetplayEvent::Desync { .. } | NetplayEvent::Disconnected { .. }
                )),
                "machine {} saw a desync or a disconnect",
                machine.player
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
        let all: Vec<Vec<Checksum>> = machines.iter().map(|&m| self.final_checksums(m)).collect();
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
        while self.now < limit && self.machines.iter().any(|m| m.stats.started_at.is_none()) {
            self.step();
        }
    }

    /// The moments the machines ran frame 0, by machine.
    pub fn start_moments(&self) -> Vec<Millis> {
        self.machines
            .iter()
            .map(|m| {
                m.stats
                    .started_at
                    .unwrap_or_else(|| panic!("machine {} never started", m.player))
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
        &self.machines[machine].notes.events
    }

    /// The checksums of every final frame of `machine`, from frame 0.
    pub fn final_checksums(&self, machine: usize) -> Vec<Checksum> {
        let log = &self.machines[machine].sink;
        assert_eq!(log.first_frame(), 0, "the log still holds frame 0");
        log.checksums()
            .map(|c| c.expect("every final frame was saved"))
            .collect()
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
