//! Netplay on real games: [`NetplayDriver`] carries out a
//! [`NetplaySession`]'s requests on any [`Emulator`] (save, load, advance),
//! hands every frame it runs and every frame that becomes final to a
//! [`FrameSink`], and feeds the session the measured cost of re-simulation;
//! [`SimulatedMatch`] plays a whole match between machines in one process
//! over netcade's seeded simulated network, on a simulated clock
//! (`netcade demo`), each machine ticking through
//! [`NetplayMachine::tick`](crate::engine::netplay::machine::NetplayMachine::tick).
//!
//! Both are free of I/O, clocks and randomness: `now`, the network's seed and
//! the stopwatch come in, so the same arguments give the same match.

use crate::checksum::Checksum;
use crate::emulator::{Emulator, SavestateContext};
use crate::engine::frame_clock::FrameClock;
use crate::engine::netplay::desync_diagnosis::CheckpointStates;
use crate::engine::netplay::machine::{NetplayMachine, TickHooks};
use crate::engine::sinks::audio_file::AudioSink;
use crate::engine::sinks::{run_frame, ChecksumLog, FinalFrame, FramePass, FrameSink};
use crate::engine::AppError;
use crate::input::{Buttons, MAX_PLAYERS};
use crate::net::sim::{LinkConditions, SimNet, SimSockets};
use crate::netplay::{NetplayConfig, NetplayEvent, NetplaySession, NetplayStats};
use crate::protocol::{Millis, PlayerSlots, SessionSettings, SessionToken};
use std::collections::VecDeque;
use std::ops::DerefMut;
use std::time::Duration;

use crate::rollback::{Frame, FrameOutcome, PlayerId, Request, SessionState};

/// Frames run but not final yet kept: the state ring's reach (a few dozen
/// frames) with room to spare.
const PENDING_FRAMES: usize = 256;

/// Carries out one machine's netplay requests on its game. See the module docs.
#[derive(Debug, Default)]
pub struct NetplayDriver {
    requests: Vec<Request>,
    /// Frames run but not final yet, oldest first (the latest run of each:
    /// a re-simulation replaces mispredicted ones).
    pending: VecDeque<PendingFrame>,
    /// The next frame to hand to the sink as final.
    next_final: Frame,
    resimulation: ResimulationCost,
    /// The latest checkpoints' states: what the host sends a member whose
    /// checksum differed, and what a member diffs the host's against.
    checkpoints: CheckpointStates,
    /// The buttons of the latest final frames, oldest first: a repair
    /// re-simulates from a checkpoint some way back.
    final_inputs: VecDeque<(Frame, [Buttons; MAX_PLAYERS])>,
    /// Whether the sink heard the state frame 0 began from.
    start_told: bool,
}

/// Final frames whose buttons are kept for repairs: more than the
/// checkpoint states kept reach back (8 checkpoints of 60 frames).
const FINAL_INPUTS_KEPT: usize = 1024;

impl NetplayDriver {
    /// A driver at frame 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// One frame tick: asks the session what to do at `now` and does it to
    /// `game`, telling `sink` about every frame run and every frame now
    /// final. Local inputs must have been added first. `hooks.stopwatch`
    /// times re-simulations, whose median cost per frame goes to the session
    /// (a slow core raises the input delay instead of missing frames).
    pub fn advance<A: Ord + Copy, G: Emulator + ?Sized>(
        &mut self,
        now: Millis,
        netplay: &mut NetplaySession<A>,
        game: &mut G,
        sink: &mut dyn FrameSink,
        hooks: &mut dyn TickHooks,
    ) -> Result<FrameOutcome, AppError> {
        game.set_savestate_context(SavestateContext::Netplay);
        // Before frame 0: the host's start state replaces whatever this
        // machine's game holds, so every machine begins from the same bytes.
        if let Some(state) = netplay.take_start_state() {
            game.load_state(&state).map_err(AppError::at_frame(0))?;
        }
        let outcome = netplay.advance_frame(now, &mut self.requests)?;
        if !self.start_told && !self.requests.is_empty() {
            // The game holds the state every machine begins frame 0 from.
            self.start_told = true;
            let mut start_state = Vec::new();
            game.save_state(&mut start_state)
                .map_err(AppError::at_frame(0))?;
            let memory = crate::checksum::memory_checksum(game, &mut Vec::new())
                .map_err(AppError::at_frame(0))?;
            sink.match_started(Frame::new(0), &start_state, memory);
        }
        let players = netplay.session().players();
        let checkpoint_interval = u32::from(netplay.settings().checksum_interval);
        let hash_every_save = sink.wants_checksums();
        let mut resimulation_started: Option<Duration> = None;
        let mut resimulated_frames = 0u32;
        let mut resimulation_ended = Duration::ZERO;
        for &request in &self.requests {
            match request {
                Request::Save { frame } => {
                    let slot = netplay
                        .state_slot_mut(frame)
                        .ok_or(AppError::NoStateSlot { frame })?;
                    let checkpoint =
                        checkpoint_interval != 0 && frame.number() % checkpoint_interval == 0;
                    let hashed = hash_every_save || checkpoint;
                    // Game memory, not the raw state: states can hold
                    // incidental bytes that differ between machines (see
                    // docs/design.md). A game showing no memory is compared by
                    // state, so only then must its bytes be comparable;
                    // other saves skip zeroing what the core leaves unwritten.
                    let by_state = game.game_memory().is_empty();
                    let saved = if by_state && hashed {
                        game.save_state(slot.buffer_mut())
                    } else {
                        game.save_state_to_load(slot.buffer_mut())
                    };
                    saved.map_err(AppError::at_frame(frame.number()))?;
                    if !hashed {
                        remember(&mut self.pending, frame, None);
                        continue;
                    }
                    if checkpoint {
                        self.checkpoints.keep(frame, slot.data());
                    }
                    let memory = game.game_memory();
                    let checksum = if by_state {
                        Checksum::of(slot.data())
                    } else {
                        Checksum::of(memory)
                    };
                    slot.set_checksum(checksum);
                    remember(
                        &mut self.pending,
                        frame,
                        hash_every_save.then_some(checksum),
                    );
                }
                Request::Load { frame } => {
                    resimulation_started.get_or_insert_with(|| hooks.stopwatch());
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
                    hooks.adjust_inputs(frame, &mut inputs);
                    let pass = if resimulation {
                        FramePass::Resimulated
                    } else {
                        FramePass::Shown
                    };
                    run_frame(game, frame, &inputs[..players], pass, sink);
                    if let Some(pending) = self.pending.iter_mut().rev().find(|p| p.frame == frame)
                    {
                        pending.inputs = Some(inputs);
                    }
                    if resimulation {
                        resimulated_frames += 1;
                        resimulation_ended = hooks.stopwatch();
                    }
                }
            }
        }
        if let Some(started) = resimulation_started.filter(|_| resimulated_frames > 0) {
            let per_frame = resimulation_ended.saturating_sub(started) / resimulated_frames;
            netplay.set_resimulation_cost(self.resimulation.record(per_frame));
        }
        self.finalize(netplay, sink);
        Ok(outcome)
    }

    /// Hands the sink every frame final since last time (`advance` does it
    /// too; a loop also calls it on ticks that run no frame, as inputs keep
    /// arriving). Frame f is final once its inputs and every input before
    /// are final, it was run, and no rollback to it or before waits for the
    /// next `advance` (so its last run, and the state saved at its start,
    /// are the ones every machine has).
    pub fn finalize<A: Ord + Copy>(
        &mut self,
        netplay: &NetplaySession<A>,
        sink: &mut dyn FrameSink,
    ) {
        let Some(finalized) = netplay.finalized_frame() else {
            return;
        };
        let mut end = finalized.next().min(netplay.current_frame());
        if let Some(wrong) = netplay.session().pending_rollback() {
            end = end.min(wrong);
        }
        while self.next_final < end {
            let frame = self.next_final;
            while self.pending.front().is_some_and(|p| p.frame < frame) {
                self.pending.pop_front();
            }
            let pending = self.pending.front().filter(|p| p.frame == frame);
            let inputs = pending.and_then(|p| p.inputs);
            if let Some(inputs) = inputs {
                if self.final_inputs.len() == FINAL_INPUTS_KEPT {
                    self.final_inputs.pop_front();
                }
                self.final_inputs.push_back((frame, inputs));
            }
            let players = netplay.session().players();
            sink.frame_finalized(&FinalFrame {
                frame,
                // Never missing while the pending ring outreaches the
                // session's windows; if it were, nothing proves the frame.
                checksum: pending.and_then(|p| p.checksum),
                video: None,
                inputs: inputs.as_ref().map_or(&[][..], |inputs| &inputs[..players]),
            });
            self.next_final = frame.next();
        }
    }

    /// The buttons final frame `frame` was run with, while it is among the
    /// latest final frames kept.
    pub fn final_inputs(&self, frame: Frame) -> Option<[Buttons; MAX_PLAYERS]> {
        self.final_inputs
            .iter()
            .rev()
            .find(|(kept, _)| *kept == frame)
            .map(|(_, inputs)| *inputs)
    }

    /// This machine's state of checkpoint `frame` (saved at its start), while
    /// it is among the latest few checkpoints.
    pub fn checkpoint_state(&self, frame: Frame) -> Option<&[u8]> {
        self.checkpoints.get(frame)
    }

    /// Replaces this machine's game from checkpoint `frame` on with the
    /// host's: loads `host_state` and re-simulates every frame up to the
    /// present with the buttons each was last run with, saving into the
    /// session's state slots on the way, so a later rollback loads repaired
    /// states and the checksums still to be compared are the repaired ones.
    /// Returns false (and changes nothing) when the buttons of a frame since
    /// `frame` are no longer kept.
    pub fn repair<A: Ord + Copy, G: Emulator + ?Sized>(
        &mut self,
        netplay: &mut NetplaySession<A>,
        game: &mut G,
        frame: Frame,
        host_state: &[u8],
        sink: &mut dyn FrameSink,
    ) -> Result<bool, AppError> {
        let present = netplay.current_frame();
        let mut inputs = Vec::new();
        let mut at = frame;
        while at < present {
            let known = self.final_inputs(at).or_else(|| {
                self.pending
                    .iter()
                    .find(|p| p.frame == at)
                    .and_then(|p| p.inputs)
            });
            let Some(known) = known else {
                return Ok(false);
            };
            inputs.push(known);
            at = at.next();
        }
        game.set_savestate_context(SavestateContext::Netplay);
        game.load_state(host_state)
            .map_err(AppError::at_frame(frame.number()))?;
        self.checkpoints.keep(frame, host_state);
        sink.state_repaired(frame, host_state);
        let players = netplay.session().players();
        let checkpoint_interval = u32::from(netplay.settings().checksum_interval);
        let by_state = game.game_memory().is_empty();
        let mut at = frame;
        for inputs in inputs {
            if let Some(slot) = netplay.state_slot_mut(at) {
                let saved = if by_state {
                    game.save_state(slot.buffer_mut())
                } else {
                    game.save_state_to_load(slot.buffer_mut())
                };
                saved.map_err(AppError::at_frame(at.number()))?;
                let checksum = if by_state {
                    Checksum::of(slot.data())
                } else {
                    Checksum::of(game.game_memory())
                };
                slot.set_checksum(checksum);
                if checkpoint_interval != 0 && at.number() % checkpoint_interval == 0 {
                    self.checkpoints.keep(at, slot.data());
                }
                if let Some(pending) = self.pending.iter_mut().find(|p| p.frame == at) {
                    if pending.checksum.is_some() {
                        pending.checksum = Some(checksum);
                    }
                }
            }
            run_frame(game, at, &inputs[..players], FramePass::Resimulated, sink);
            at = at.next();
        }
        Ok(true)
    }

    /// Bytes the kept checkpoint states take (bounded, for desync repair).
    pub fn checkpoint_state_bytes(&self) -> usize {
        self.checkpoints.bytes()
    }

    /// The median cost of re-simulating one frame over recent rollbacks, if
    /// any were timed.
    pub fn resimulation_cost(&self) -> Option<Duration> {
        self.resimulation.median()
    }
}

/// A frame run but not final yet: the checksum of the state saved at its
/// start (if hashed) and the buttons it was last run with.
#[derive(Clone, Copy, Debug)]
struct PendingFrame {
    frame: Frame,
    checksum: Option<Checksum>,
    inputs: Option<[Buttons; MAX_PLAYERS]>,
}

/// Starts `frame`'s entry in `pending` (at most [`PENDING_FRAMES`]): saves
/// after a load come in frame order, so every later entry is from the
/// mispredicted timeline and goes.
fn remember(pending: &mut VecDeque<PendingFrame>, frame: Frame, checksum: Option<Checksum>) {
    while pending.back().is_some_and(|p| p.frame >= frame) {
        pending.pop_back();
    }
    pending.push_back(PendingFrame {
        frame,
        checksum,
        inputs: None,
    });
    if pending.len() > PENDING_FRAMES {
        pending.pop_front();
    }
}

/// Per-frame costs of the most recent rollbacks, and their median (one slow
/// rollback, a page fault or a busy moment, should not raise the delay).
#[derive(Clone, Debug, Default)]
pub struct ResimulationCost {
    samples: [Duration; RESIMULATION_SAMPLES],
    count: usize,
    next: usize,
}

/// Rollbacks the re-simulation cost is the median of.
const RESIMULATION_SAMPLES: usize = 15;

impl ResimulationCost {
    /// Adds one rollback's cost per frame; returns the new median.
    pub fn record(&mut self, per_frame: Duration) -> Duration {
        self.samples[self.next] = per_frame;
        self.next = (self.next + 1) % RESIMULATION_SAMPLES;
        self.count = (self.count + 1).min(RESIMULATION_SAMPLES);
        self.median().unwrap_or(per_frame)
    }

    /// The median of the samples held.
    pub fn median(&self) -> Option<Duration> {
        if self.count == 0 {
            return None;
        }
        let mut sorted = self.samples;
        let held = &mut sorted[..self.count];
        held.sort_unstable();
        Some(held[self.count / 2])
    }
}

/// Where a simulated machine's frames go: the checksum log of its final
/// frames, and the audio output if one was asked for.
pub type MatchSink = (ChecksumLog, Option<AudioSink>);

/// One machine of a simulated match: its netplay machine (session, game,
/// driver, frame clock) with a checksum log of its final frames, and the
/// player it controls (its address on the network too).
pub struct MatchMachine<G> {
    /// The session, game, driver, clock and checksum log (and audio).
    pub machine: NetplayMachine<u8, G, MatchSink>,
    /// The player this machine controls.
    pub player: u8,
}

impl<G> MatchMachine<G> {
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

/// What a simulated match is played with.
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

/// Two machines, each one player of the game, over a seeded [`SimNet`]: the
/// machine of player 0 hosts, the other dials it.
pub struct SimulatedMatch<G> {
    /// The simulated network, with one socket per machine.
    pub sockets: SimSockets<u8>,
    /// The machines, by player.
    pub machines: Vec<MatchMachine<G>>,
    /// The simulated moment (ms).
    pub now: Millis,
    setup: MatchSetup,
}

/// Players of a simulated match (one per machine).
const PLAYERS: u8 = 2;

/// A simulated machine's loop: its player's buttons from the match's
/// input function, re-simulations timed by the match's stopwatch.
struct PlayerHooks<'a, F, W> {
    player: u8,
    input: &'a mut F,
    stopwatch: &'a mut W,
}

impl<F, W> TickHooks for PlayerHooks<'_, F, W>
where
    F: FnMut(u8, u32) -> Buttons,
    W: FnMut() -> Duration,
{
    fn local_input(&mut self, _player: PlayerId, frame: Frame) -> Buttons {
        (self.input)(self.player, frame.number())
    }

    fn stopwatch(&mut self) -> Duration {
        (self.stopwatch)()
    }
}

impl<G> SimulatedMatch<G>
where
    G: DerefMut,
    G::Target: Emulator,
{
    /// A match between `games` (one per player, already loaded with the same
    /// content, at their first frame; boxed, so any game fits). The host
    /// (player 0) sends its game's state as the start state, which the other
    /// loads before frame 0.
    pub fn new(setup: MatchSetup, games: [G; PLAYERS as usize]) -> Result<Self, AppError> {
        let mut net = SimNet::new(setup.seed);
        net.set_default_conditions(setup.conditions);
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
            let mut machine = NetplayMachine::new(
                netplay,
                game,
                (ChecksumLog::new(CHECKSUM_LOG_FRAMES), None),
                clock,
            );
            machine.stop_at_frame = Some(setup.frames);
            machines.push(MatchMachine { machine, player });
        }
        Ok(SimulatedMatch {
            sockets: SimSockets::new(net),
            machines,
            now: 0,
            setup,
        })
    }

    /// Plays until every machine has run `setup.frames` frames (or the match
    /// ended, or [`MatchSetup::time_limit_ms`] of simulated time passed),
    /// taking each machine's local buttons from `input(player, frame)`,
    /// timing re-simulations with `stopwatch` (the real clock measures the
    /// real cores; a constant makes re-simulation free) and telling `update`
    /// what happens.
    pub fn play(
        &mut self,
        mut input: impl FnMut(u8, u32) -> Buttons,
        mut stopwatch: impl FnMut() -> Duration,
        mut update: impl FnMut(&MatchUpdate),
    ) -> Result<MatchEnd, AppError> {
        let limit_ms = self.setup.time_limit_ms();
        let mut all_running = false;
        let mut next_progress = 0;
        while self.now < limit_ms {
            if self.finished() {
                self.settle(limit_ms, &mut input, &mut stopwatch, &mut update)?;
                return Ok(MatchEnd::Finished);
            }
            if self
                .machines
                .iter()
                .any(|m| m.machine.netplay.state() == SessionState::Ended)
            {
                return Ok(MatchEnd::Ended);
            }
            self.step(&mut input, &mut stopwatch, &mut update)?;
            if !all_running
                && self
                    .machines
                    .iter()
                    .all(|m| m.machine.netplay.started_at().is_some())
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
                    rollbacks: self
                        .machines
                        .iter()
                        .map(|m| m.machine.stats.rollbacks)
                        .collect(),
                });
            }
        }
        Ok(if self.finished() {
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
        limit_ms: Millis,
        input: &mut impl FnMut(u8, u32) -> Buttons,
        stopwatch: &mut impl FnMut() -> Duration,
        update: &mut impl FnMut(&MatchUpdate),
    ) -> Result<(), AppError> {
        let one_way = self.setup.conditions.latency_ms + self.setup.conditions.jitter_ms;
        let deadline = limit_ms.min(self.now + 8 * one_way + 1_000);
        while self.now < deadline
            && self
                .machines
                .iter()
                .any(|m| m.machine.sink.0.end_frame() < self.setup.frames)
        {
            self.step(input, stopwatch, update)?;
        }
        Ok(())
    }

    fn finished(&self) -> bool {
        self.machines
            .iter()
            .all(|m| m.current_frame() >= self.setup.frames)
    }

    /// One simulated millisecond: deliveries, then each machine's tick.
    fn step(
        &mut self,
        input: &mut impl FnMut(u8, u32) -> Buttons,
        stopwatch: &mut impl FnMut() -> Duration,
        update: &mut impl FnMut(&MatchUpdate),
    ) -> Result<(), AppError> {
        self.now += 1;
        let now = self.now;
        self.sockets.deliver(now);
        for (index, machine) in self.machines.iter_mut().enumerate() {
            let mut hooks = PlayerHooks {
                player: machine.player,
                input: &mut *input,
                stopwatch: &mut *stopwatch,
            };
            let mut port = self.sockets.port(machine.player);
            machine
                .machine
                .tick(now * 1000, 1.0, &mut port, &mut hooks)?;
            for event in machine.machine.netplay.events() {
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
    use crate::engine::sinks::{compare_checksum_logs, ChecksumComparison, FinishedFrame};
    use crate::engine::testing::StubGame;

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
        let end = game_match.play(buttons, || Duration::ZERO, |_| {}).unwrap();
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

    /// Plays a lossy two-machine match of `games` with recording sinks,
    /// re-simulations of machine 1 costing `resimulation_cost` each.
    fn play_with_sinks(
        frames: u32,
        resimulation_cost: Duration,
        games: [StubGame; 2],
    ) -> ([Recorder; 2], [NetplaySession<u8>; 2]) {
        let setup = lossy_setup(frames);
        let mut sockets = SimSockets::new({
            let mut net = SimNet::new(setup.seed);
            net.set_default_conditions(setup.conditions);
            net
        });
        let mut machines: Vec<_> = (0..2u8)
            .zip(games)
            .map(|(player, game)| {
                let netplay = NetplaySession::new(config_for(&setup, player, 60.0), 0).unwrap();
                let clock = FrameClock::new(60.0, 1_000 + u64::from(player) * 3_700);
                let game = Box::new(game);
                let mut machine = NetplayMachine::new(netplay, game, Recorder::default(), clock);
                machine.stop_at_frame = Some(frames);
                machine
            })
            .collect();
        struct Costly {
            player: u8,
            cost: Duration,
            elapsed: Duration,
        }
        impl TickHooks for Costly {
            fn local_input(&mut self, _: PlayerId, frame: Frame) -> Buttons {
                buttons(self.player, frame.number())
            }
            fn stopwatch(&mut self) -> Duration {
                self.elapsed += self.cost;
                self.elapsed
            }
        }
        let mut hooks = [0u8, 1].map(|player| Costly {
            player,
            cost: if player == 1 {
                resimulation_cost
            } else {
                Duration::ZERO
            },
            elapsed: Duration::ZERO,
        });
        for now in 1..60_000u64 {
            if machines.iter().all(|m| m.current_frame() >= frames) {
                break;
            }
            sockets.deliver(now);
            for (player, machine) in (0u8..).zip(&mut machines) {
                let mut port = sockets.port(player);
                machine
                    .tick(now * 1000, 1.0, &mut port, &mut hooks[player as usize])
                    .unwrap();
            }
        }
        let [a, b]: [_; 2] = machines.try_into().ok().unwrap();
        ([a.sink, b.sink], [a.netplay, b.netplay])
    }

    #[test]
    fn the_sink_hears_every_frame_run_and_every_frame_once_it_is_final() {
        let ([sink, other], _) = play_with_sinks(300, Duration::ZERO, stubs());
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
        let (_, [_, fast_there]) = play_with_sinks(600, Duration::ZERO, stubs());
        let (_, [_, slow_there]) = play_with_sinks(600, Duration::from_millis(6), stubs());
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
        let (_, [mut here, _]) = play_with_sinks(300, Duration::ZERO, games);
        assert!(
            here.events()
                .any(|event| matches!(event, NetplayEvent::Desync { .. })),
            "the desync was not reported"
        );
        let (_, [mut here, _]) = play_with_sinks(300, Duration::ZERO, stubs());
        assert!(!here
            .events()
            .any(|event| matches!(event, NetplayEvent::Desync { .. })));
    }

    #[test]
    fn the_median_resimulation_cost_ignores_one_slow_rollback() {
        let mut cost = ResimulationCost::default();
        assert_eq!(cost.median(), None);
        for micros in [100, 120, 90_000, 110, 105] {
            cost.record(Duration::from_micros(micros));
        }
        assert_eq!(cost.median(), Some(Duration::from_micros(110)));
    }

    #[test]
    fn pending_checksums_stay_bounded_however_long_the_match() {
        let mut pending = VecDeque::new();
        for frame in 0..10_000 {
            remember(
                &mut pending,
                Frame::new(frame),
                Some(Checksum(u64::from(frame))),
            );
        }
        assert_eq!(pending.len(), PENDING_FRAMES);
        remember(&mut pending, Frame::new(9_990), Some(Checksum(1)));
        let last = pending.back().unwrap();
        assert_eq!(
            (last.frame, last.checksum),
            (Frame::new(9_990), Some(Checksum(1)))
        );
        assert_eq!(pending.len(), PENDING_FRAMES - 9);
    }
}
