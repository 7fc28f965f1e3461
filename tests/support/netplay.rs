//! A deterministic netplay match: N machines, each a `NetplaySession` driving
//! its own game, over a seeded `SimNet`, on a simulated clock stepping one
//! millisecond at a time. Each machine runs frames on its own clock (60 fps ×
//! its clock-rate error × the session's time-sync speed), and records the
//! checksum of its game's memory at the start of every frame once that frame
//! is final (all inputs before it confirmed), so tests compare machines frame
//! by frame. Same seed, same run.
//!
//! Start-up: while a session answers `Starting { in_ms }` the machine ticks
//! next at that moment (as a frontend showing a countdown would), and each
//! machine records the simulated millisecond at which it ran frame 0.

use netcade::app::netplay_match::NetplayDriver;
use netcade::checksum::Checksum;
use netcade::emulator::{Emulator, EmulatorError, VideoFrame};
use netcade::input::Buttons;
use netcade::libretro::{Core, CoreConfig};
use netcade::net::sim::{LinkConditions, SimNet};
use netcade::netplay::{NetplayConfig, NetplayEvent, NetplaySession};
use netcade::protocol::{Millis, PlayerSlots, SessionSettings, SessionToken};
use netcade::rollback::{Frame, FrameOutcome, PlayerId, SessionState};

/// The nominal frame period in microseconds (60 fps).
const FRAME_US: f64 = 1_000_000.0 / 60.0;

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
    core: Core,
    _copy: super::CoreCopy,
    _dirs: tempfile::TempDir,
}

impl DuelGame {
    pub fn load() -> DuelGame {
        let copy = super::duel_core_copy();
        let dirs = tempfile::tempdir().unwrap();
        let config = CoreConfig {
            system_dir: dirs.path().join("system"),
            save_dir: dirs.path().join("saves"),
            persist_save_ram: false,
            ..CoreConfig::default()
        };
        let mut core = Core::load(&copy.path, config).expect("the Duel core loads");
        core.load_content(Some(&super::duel_arena("dojo")))
            .expect("the dojo arena loads");
        DuelGame {
            core,
            _copy: copy,
            _dirs: dirs,
        }
    }
}

impl Emulator for DuelGame {
    fn run_frame(&mut self, inputs: &[Buttons], render: bool) {
        self.core.run_frame(inputs, render)
    }
    fn save_state(&mut self, into: &mut Vec<u8>) -> Result<(), EmulatorError> {
        self.core.save_state(into)
    }
    fn load_state(&mut self, from: &[u8]) -> Result<(), EmulatorError> {
        self.core.load_state(from)
    }
    fn game_memory(&self) -> &[u8] {
        self.core.game_memory()
    }
    fn video_frame(&self) -> Option<VideoFrame<'_>> {
        self.core.video_frame()
    }
    fn audio_samples(&self) -> &[i16] {
        self.core.audio_samples()
    }
    fn frames_per_second(&self) -> f64 {
        self.core.frames_per_second()
    }
    fn sample_rate(&self) -> f64 {
        self.core.sample_rate()
    }
}

/// One machine: its netplay session, its game and its frame clock.
pub struct Machine<G: Emulator> {
    pub netplay: NetplaySession<u8>,
    pub game: G,
    pub address: u8,
    /// 1.0 keeps time; 1.01 runs 1% fast.
    pub clock_rate: f64,
    next_frame_at_us: f64,
    /// Carries out the session's requests and keeps final frames' checksums.
    driver: NetplayDriver,
    pub events: Vec<(Millis, NetplayEvent)>,
    /// From this frame on, player 1's input is flipped on this machine only.
    pub perturb_from: Option<Frame>,
    pub waiting_ticks: u64,
    pub stalled_ticks: u64,
    pub ticks: u64,
    /// The simulated moment this machine ran frame 0.
    pub started_at: Option<Millis>,
    /// Ticks that answered `Synchronizing` or `Starting` after frame 0 ran
    /// (a restart: must stay 0).
    pub start_outcomes_after_start: u64,
    /// Whether the machine is switched on (off: it neither runs nor answers).
    pub running: bool,
}

impl<G: Emulator> Machine<G> {
    /// The checksums of every final frame, from frame 0.
    pub fn final_checksums(&self) -> Vec<Checksum> {
        self.driver
            .final_checksums()
            .iter()
            .map(|c| c.expect("every final frame was saved"))
            .collect()
    }

    pub fn current_frame(&self) -> u32 {
        self.netplay.current_frame().number()
    }

    /// One frame tick: inputs, advance, carry out the requests, record.
    fn tick(&mut self, now: Millis) {
        self.ticks += 1;
        let frame = self.netplay.current_frame().number();
        for player in 0..self.netplay.session().players() as u8 {
            let id = PlayerId::new(player);
            if self.netplay.session().kind(id) == Some(netcade::rollback::PlayerKind::Local)
                && self.netplay.session().connected_players().contains(id)
            {
                self.netplay
                    .add_local_input(id, pad(player, frame))
                    .expect("local input is taken");
            }
        }
        let perturb_from = self.perturb_from;
        let outcome = self
            .driver
            .advance_with(now, &mut self.netplay, &mut self.game, |frame, inputs| {
                if perturb_from.is_some_and(|from| frame >= from) {
                    inputs[1] = Buttons::from_bits(inputs[1].bits() ^ 0x80);
                }
            })
            .expect("the netplay session advances and the game follows");
        assert!(
            !self.game.game_memory().is_empty(),
            "the game shows its memory"
        );
        match outcome {
            FrameOutcome::Waiting { .. } => self.waiting_ticks += 1,
            FrameOutcome::Stalled => self.stalled_ticks += 1,
            _ => {}
        }
        match outcome {
            FrameOutcome::Synchronizing | FrameOutcome::Starting { .. } => {
                if self.started_at.is_some() {
                    self.start_outcomes_after_start += 1;
                }
                if let FrameOutcome::Starting { in_ms } = outcome {
                    // Wake up exactly at the start moment.
                    self.next_frame_at_us = (now + in_ms) as f64 * 1000.0;
                }
            }
            FrameOutcome::Ended => {}
            _ => {
                self.started_at.get_or_insert(now);
            }
        }
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
    pub net: SimNet<u8>,
    pub machines: Vec<Machine<G>>,
    pub now: Millis,
    /// Datagrams sent, by message kind (the header's fourth byte).
    pub sent_by_kind: [u64; 256],
    /// Datagrams of `kind` sent by machine `from` before `until` are lost
    /// (`(from, kind, until)`): targeted loss for tests of resends.
    pub lose_kind: Vec<(u8, u8, Millis)>,
    /// Rewrites datagrams on the wire (`(now, from, to, datagram)`): a
    /// hostile machine for tests of misbehaving peers.
    pub tamper: Option<Box<Tamper>>,
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

/// Machine `me`'s configuration: it dials every machine before it and
/// accepts every machine after it (machine 0 is the host).
pub fn config_for(setup: &MatchSetup, me: u8) -> NetplayConfig<u8> {
    let mut config = NetplayConfig::new(
        SessionToken(0x5EED_0000 + u32::from(me) + 1),
        "netcade-test",
        "1",
        0xC0FFEE,
        settings(setup),
        PlayerSlots::single(me),
    );
    for other in 0..setup.players {
        if other < me {
            config = config.dial(other, PlayerSlots::single(other));
        } else if other > me {
            config = config.accept(Some(other), PlayerSlots::single(other));
        }
    }
    config
}

impl<G: Emulator> Cluster<G> {
    /// A match with the default configuration for each machine.
    pub fn new(setup: MatchSetup, game: impl FnMut(u8) -> G) -> Self {
        Self::with_configs(setup, game, |_, _| {})
    }

    /// A match whose configurations `adjust` may change first.
    pub fn with_configs(
        setup: MatchSetup,
        mut game: impl FnMut(u8) -> G,
        mut adjust: impl FnMut(u8, &mut NetplayConfig<u8>),
    ) -> Self {
        let mut net = SimNet::new(setup.seed);
        net.set_default_conditions(setup.conditions);
        let machines = (0..setup.players)
            .map(|me| {
                let mut config = config_for(&setup, me);
                adjust(me, &mut config);
                Machine {
                    netplay: NetplaySession::new(config, 0).expect("a valid configuration"),
                    game: game(me),
                    address: me,
                    clock_rate: 1.0,
                    // Machines start their frame clocks out of phase.
                    next_frame_at_us: 1000.0 + f64::from(me) * 3_700.0,
                    driver: NetplayDriver::new(),
                    events: Vec::new(),
                    perturb_from: None,
                    waiting_ticks: 0,
                    stalled_ticks: 0,
                    ticks: 0,
                    started_at: None,
                    start_outcomes_after_start: 0,
                    running: true,
                }
            })
            .collect();
        Cluster {
            net,
            machines,
            now: 0,
            sent_by_kind: [0; 256],
            lose_kind: Vec::new(),
            tamper: None,
        }
    }

    /// Advances the simulation to `until` milliseconds.
    pub fn run_until(&mut self, until: Millis) {
        while self.now < until {
            self.step();
        }
    }

    /// One millisecond: deliveries, frame ticks that are due, polls.
    pub fn step(&mut self) {
        self.now += 1;
        let now = self.now;
        for delivery in self.net.deliver_due(now) {
            let machine = &mut self.machines[delivery.to as usize];
            if machine.running {
                machine
                    .netplay
                    .handle_datagram(now, delivery.from, &delivery.bytes);
            }
        }
        let now_us = now as f64 * 1000.0;
        for machine in &mut self.machines {
            if !machine.running {
                continue;
            }
            if now_us >= machine.next_frame_at_us {
                let speed =
                    machine.clock_rate * f64::from(machine.netplay.frames_per_second_factor());
                machine.next_frame_at_us += FRAME_US / speed;
                machine.tick(now);
            }
            let net = &mut self.net;
            let sent_by_kind = &mut self.sent_by_kind;
            let lose_kind = &self.lose_kind;
            let tamper = &mut self.tamper;
            let from = machine.address;
            machine.netplay.poll(now, |to, bytes| {
                let kind = bytes.get(3).copied().unwrap_or(0);
                sent_by_kind[kind as usize] += 1;
                let lost = lose_kind
                    .iter()
                    .any(|&(sender, lost, until)| sender == from && lost == kind && now < until);
                if lost {
                    return;
                }
                match tamper {
                    Some(tamper) => {
                        let mut bytes = bytes.to_vec();
                        tamper(now, from, to, &mut bytes);
                        net.send(now, from, to, &bytes);
                    }
                    None => net.send(now, from, to, bytes),
                }
            });
            machine
                .events
                .extend(machine.netplay.events().map(|event| (now, event)));
        }
    }

    /// Cuts `machine` off from every other machine, both ways.
    pub fn isolate(&mut self, machine: u8) {
        for other in 0..self.machines.len() as u8 {
            if other != machine {
                self.net.partition(machine, other);
            }
        }
    }

    /// Undoes `isolate`.
    pub fn reconnect(&mut self, machine: u8) {
        for other in 0..self.machines.len() as u8 {
            if other != machine {
                self.net.heal(machine, other);
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
        while self.now < limit && self.machines.iter().any(|m| m.started_at.is_none()) {
            self.step();
        }
    }

    /// The moments the machines ran frame 0, by machine.
    pub fn start_moments(&self) -> Vec<Millis> {
        self.machines
            .iter()
            .map(|m| {
                m.started_at
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

/// Whether any event of `events` matches.
pub fn any_event(
    events: &[(Millis, NetplayEvent)],
    matches: impl Fn(&NetplayEvent) -> bool,
) -> bool {
    events.iter().any(|(_, event)| matches(event))
}
