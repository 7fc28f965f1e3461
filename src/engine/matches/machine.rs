//! One netplay tick, the same for the real-time loop, the demo's simulated
//! machines and the tests' clusters: read the transport → hand each datagram
//! to the session → for each frame the [`FrameClock`] says is due: add the
//! local players' buttons, let the [`NetplayDriver`] carry out the session's
//! requests → poll the session and send what it hands out.
//!
//! Start-up: while the session answers `Starting { in_ms }`, the frame clock's
//! next frame moves to that moment (as a frontend showing a countdown would),
//! so every machine begins frame 0 when the host said.

use crate::engine::frame_clock::FrameClock;
use crate::engine::matches::driver::NetplayDriver;
use crate::engine::matches::hooks::TickHooks;
use crate::engine::matches::profile::elapsed_since;
use crate::engine::sinks::run_ahead::{RunAhead, RunAheadArgs, RunAheadCounts};
use crate::engine::sinks::{run_frame, FinalFrames, FramePass, FrameSink};
use crate::engine::AppError;
use crate::net::Transport;
use netcode::checksum::memory_checksum;
use netcode::emulator::{Emulator, EmulatorError, SavestateContext};
use netcode::netplay::{NetplaySession, Repair, SpectatorPhase, SpectatorSession};
use netcode::protocol::Millis;
use netcode::rollback::{Frame, FrameOutcome, PlayerId, PlayerKind, SessionState};

/// What a machine's ticks came to, for summaries and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TickStats {
    /// Frame ticks (each frame the clock said was due).
    pub ticks: u64,
    /// Rollbacks carried out.
    pub rollbacks: u64,
    /// The deepest rollback (frames re-simulated).
    pub deepest_rollback: u32,
    /// Ticks spent waiting for a peer's inputs.
    pub waiting_ticks: u64,
    /// Ticks stalled by time sync (a machine ahead lets the others catch up).
    pub stalled_ticks: u64,
    /// The moment this machine ran frame 0.
    pub started_at: Option<Millis>,
    /// Ticks that answered `Synchronizing` or `Starting` after frame 0 ran
    /// (a restart: must stay 0).
    pub start_outcomes_after_start: u64,
}

/// One machine of a netplay match: its session, its game, the driver
/// between them, its frame clock and where its frames go.
pub struct NetplayMachine<A: Ord + Copy + std::hash::Hash, G, S> {
    /// The netplay session (its state, its events).
    pub netplay: NetplaySession<A>,
    /// The game the session's requests are carried out on.
    pub game: G,
    /// Receives every frame run and every frame final.
    pub sink: S,
    /// Carries out the session's requests.
    pub driver: NetplayDriver,
    /// When frames are due.
    pub clock: FrameClock,
    /// What the ticks came to.
    pub stats: TickStats,
    /// Frames stop being run at this frame (the machine still answers its
    /// peers, which may be a few frames behind).
    pub stop_at_frame: Option<u32>,
    /// How each frame is shown once the session ran it (off unless set
    /// with [`NetplayMachine::set_run_ahead`]).
    run_ahead: RunAhead,
    datagram: Vec<u8>,
}

impl<A, G, S> NetplayMachine<A, G, S>
where
    A: Ord + Copy + std::hash::Hash,
    G: std::ops::DerefMut,
    G::Target: Emulator,
    S: FrameSink,
{
    /// A machine whose frames follow `clock`.
    pub fn new(netplay: NetplaySession<A>, game: G, sink: S, clock: FrameClock) -> Self {
        NetplayMachine {
            netplay,
            game,
            sink,
            driver: NetplayDriver::new(),
            clock,
            stats: TickStats::default(),
            stop_at_frame: None,
            run_ahead: RunAhead::new(RunAheadArgs::default(), SavestateContext::Netplay),
            datagram: Vec::new(),
        }
    }

    /// Shows each frame with run-ahead as `args` say: frames ahead run only
    /// for the frame shown, after the session's, never in re-simulation.
    pub fn set_run_ahead(&mut self, args: RunAheadArgs) {
        self.run_ahead = RunAhead::new(args, SavestateContext::Netplay);
        self.driver.skip_drawing = self.run_ahead.is_on();
        self.netplay.set_run_ahead(args.ahead);
    }

    /// What run-ahead did so far.
    pub fn run_ahead_counts(&self) -> RunAheadCounts {
        self.run_ahead.counts()
    }

    /// The next frame to run.
    pub fn current_frame(&self) -> u32 {
        self.netplay.current_frame().number()
    }

    /// One pass of the loop at `now_us` (µs since the session was created):
    /// what arrived, the frames due (at the session's time-sync speed times
    /// `clock_rate`, the machine's own clock error in simulations, else 1),
    /// then what to send. Drain `netplay.events()` after it.
    pub fn tick<T: Transport<Address = A>>(
        &mut self,
        now_us: u64,
        clock_rate: f64,
        transport: &mut T,
        hooks: &mut dyn TickHooks,
    ) -> Result<(), AppError> {
        let now = now_us / 1000;
        let began = hooks.profile_clock();
        while let Some(from) = transport.receive(&mut self.datagram) {
            self.netplay.handle_datagram(now, from, &self.datagram);
        }
        let driver = &self.driver;
        self.netplay
            .repair_spectators(|frame| driver.checkpoint_state(frame).map(<[u8]>::to_vec));
        self.driver.profile.network += elapsed_since(began, hooks);
        let speed = clock_rate * f64::from(self.netplay.frames_per_second_factor());
        let due = self.clock.due(now_us, speed);
        let mut ran = 0;
        while ran < due
            && self
                .stop_at_frame
                .is_none_or(|stop| self.current_frame() < stop)
        {
            self.run_frame(now, hooks)?;
            ran += 1;
        }
        if self.runs_no_more_frames() {
            // Corrections of frames already run may still arrive: only a
            // rollback makes those frames final now.
            let rolled_back = self.driver.settle(
                now,
                &mut self.netplay,
                &mut *self.game,
                &mut self.sink,
                hooks,
            )?;
            self.stats.record_rollback(rolled_back);
        } else if ran == 0 {
            // Inputs that arrived may have made frames final all the same.
            self.driver
                .finalize_timed(&self.netplay, &mut self.sink, hooks);
        }
        self.sink.clock_tick(now_us, speed);
        let began = hooks.profile_clock();
        self.netplay
            .poll(now, |to, datagram| transport.send(to, datagram));
        self.driver.profile.network += elapsed_since(began, hooks);
        Ok(())
    }

    /// Whether no frame runs from now on: the last frame asked for ran,
    /// or the match ended.
    fn runs_no_more_frames(&self) -> bool {
        self.stop_at_frame
            .is_some_and(|stop| self.current_frame() >= stop)
            || self.netplay.state() == SessionState::Ended
    }

    /// One frame tick: the local buttons, then the session's requests.
    fn run_frame(&mut self, now: Millis, hooks: &mut dyn TickHooks) -> Result<(), AppError> {
        self.stats.ticks += 1;
        let frame = self.netplay.current_frame();
        for player in (0..self.netplay.session().players() as u8).map(PlayerId::new) {
            let session = self.netplay.session();
            if session.kind(player) == Some(PlayerKind::Local)
                && session.connected_players().contains(player)
            {
                let buttons = hooks.local_input(player, frame);
                self.netplay.add_local_input(player, buttons)?;
            }
        }
        let outcome = self.driver.advance(
            now,
            &mut self.netplay,
            &mut *self.game,
            &mut self.sink,
            hooks,
        )?;
        let (shown, loaded) = self.driver.take_shown();
        if loaded {
            self.run_ahead.forget();
        }
        if let Some((frame, inputs)) = shown {
            let players = self.netplay.session().players();
            let began = hooks.profile_clock();
            self.run_ahead
                .show(&mut *self.game, frame, &inputs[..players], &mut self.sink)?;
            self.driver.profile.run_ahead += elapsed_since(began, hooks);
        }
        let stats = &mut self.stats;
        match outcome {
            FrameOutcome::Advanced { rolled_back } => stats.record_rollback(rolled_back),
            FrameOutcome::Waiting { .. } => stats.waiting_ticks += 1,
            FrameOutcome::Stalled => stats.stalled_ticks += 1,
            _ => {}
        }
        match outcome {
            FrameOutcome::Synchronizing | FrameOutcome::Starting { .. } => {
                if stats.started_at.is_some() {
                    stats.start_outcomes_after_start += 1;
                }
                if let FrameOutcome::Starting { in_ms } = outcome {
                    // Wake up exactly at the start moment.
                    self.clock.start_at((now + in_ms) * 1000);
                }
            }
            FrameOutcome::Ended => {}
            _ => {
                stats.started_at.get_or_insert(now);
            }
        }
        Ok(())
    }
}

impl TickStats {
    /// Counts a rollback that re-simulated `depth` frames (none when 0).
    fn record_rollback(&mut self, depth: u32) {
        if depth > 0 {
            self.rollbacks += 1;
            self.deepest_rollback = self.deepest_rollback.max(depth);
        }
    }
}

/// Loads the state a watch starts (or resumes) from at `frame`. No state
/// at frame 0 is a lockstep match of a core that cannot save, watched
/// from its content as loaded.
pub fn load_watched_state<G: Emulator + ?Sized>(
    game: &mut G,
    frame: Frame,
    state: &[u8],
) -> Result<(), EmulatorError> {
    game.set_savestate_context(SavestateContext::Netplay);
    if state.is_empty() && frame.number() == 0 {
        return Ok(());
    }
    game.load_state(state)
}

/// What a spectator's ticks came to, for summaries and tests.
#[derive(Clone, Debug, Default)]
pub struct SpectatorStats {
    /// The frame the host's savestate was taken at (where watching began).
    pub joined_at_frame: Option<u32>,
    /// Frames run, shown or not.
    pub frames_run: u64,
    /// Of those, frames run with video off to catch up.
    pub catch_up_frames: u64,
    /// Frames buffered (behind the newest final frame received) at each of
    /// the latest frames shown, oldest first.
    pub recent_delays: std::collections::VecDeque<u32>,
    /// Frames behind the players' present (estimated: see
    /// `SpectatorSession::behind_live`) at each of the latest frames shown.
    pub recent_live_delays: std::collections::VecDeque<u32>,
    /// Times the game was repaired from the host's state of a checkpoint
    /// whose checksums differed.
    pub repairs: u64,
}

/// Delays kept for [`SpectatorStats::recent_delays`] (10 s at 60 fps).
const RECENT_DELAYS_KEPT: usize = 600;

impl SpectatorStats {
    /// The median of the recent delays, in frames.
    pub fn median_delay(&self) -> Option<u32> {
        median(&self.recent_delays)
    }

    /// The median of the recent delays behind live, in frames.
    pub fn median_live_delay(&self) -> Option<u32> {
        median(&self.recent_live_delays)
    }
}

fn median(values: &std::collections::VecDeque<u32>) -> Option<u32> {
    let mut sorted: Vec<u32> = values.iter().copied().collect();
    sorted.sort_unstable();
    sorted.get(sorted.len() / 2).copied()
}

impl SpectatorStats {
    /// Notes the delays at a frame shown.
    pub fn record_shown(&mut self, delay: u32, live_delay: u32) {
        for (kept, value) in [
            (&mut self.recent_delays, delay),
            (&mut self.recent_live_delays, live_delay),
        ] {
            if kept.len() == RECENT_DELAYS_KEPT {
                kept.pop_front();
            }
            kept.push_back(value);
        }
    }
}

/// A spectator's machine: its session, its game, where its frames go and
/// its frame clock (at nominal speed, nudged by the jitter buffer).
pub struct SpectatorMachine<A, G, S> {
    /// The spectator session (its state, its events).
    pub spectator: SpectatorSession<A>,
    /// The game the frames are run on.
    pub game: G,
    /// Receives every frame run; each is final at once.
    pub sink: S,
    /// When frames are due.
    pub clock: FrameClock,
    /// What the ticks came to.
    pub stats: SpectatorStats,
    /// No frame from this one on is run.
    pub stop_at_frame: Option<u32>,
    datagram: Vec<u8>,
    scratch: Vec<u8>,
    final_frames: FinalFrames,
}

impl<A, G, S> SpectatorMachine<A, G, S>
where
    A: Copy + PartialEq,
    G: std::ops::DerefMut,
    G::Target: Emulator,
    S: FrameSink,
{
    /// A spectator whose frames follow `clock`.
    pub fn new(spectator: SpectatorSession<A>, game: G, sink: S, clock: FrameClock) -> Self {
        SpectatorMachine {
            spectator,
            game,
            sink,
            clock,
            stats: SpectatorStats::default(),
            stop_at_frame: None,
            datagram: Vec::new(),
            scratch: Vec::new(),
            // Frames caught up on are not drawn: no picture checksums.
            final_frames: FinalFrames::new(false),
        }
    }

    /// The next frame to run.
    pub fn current_frame(&self) -> u32 {
        self.spectator.next_frame().number()
    }

    /// Whether every frame to watch was run.
    pub fn finished(&self) -> bool {
        self.spectator.phase() == SpectatorPhase::Ended
            || self
                .stop_at_frame
                .is_some_and(|stop| self.current_frame() >= stop)
    }

    /// One pass at `now_us` (µs since the session was created): what
    /// arrived, the host's savestate if it came, the frames due (as many
    /// as the jitter buffer says for each frame the clock has due), then
    /// what to send. Drain `spectator.next_event()` after it.
    pub fn tick<T: Transport<Address = A>>(
        &mut self,
        now_us: u64,
        transport: &mut T,
    ) -> Result<(), AppError> {
        let now = now_us / 1000;
        while let Some(from) = transport.receive(&mut self.datagram) {
            self.spectator.handle_datagram(now, from, &self.datagram);
        }
        if let Some((frame, state)) = self.spectator.take_state() {
            if let Err(error) = load_watched_state(&mut *self.game, frame, &state) {
                // The watch ends with a reason; the host is told.
                self.spectator.state_refused(error.to_string());
                self.spectator
                    .poll(now, |to, datagram| transport.send(to, datagram));
                return Ok(());
            }
            self.stats.joined_at_frame = Some(frame.number());
            // The replay recorder starts from the host's bytes at this frame.
            let memory = memory_checksum(&mut *self.game, &mut self.scratch)
                .map_err(AppError::at_frame(frame.number()))?;
            self.sink.match_started(frame, &state, memory);
            self.clock.start_at(now_us);
        }
        if let Some(repair) = self.spectator.take_repair() {
            self.repair(repair)?;
        }
        let due = self.clock.due(now_us, self.spectator.speed());
        for _ in 0..due {
            let batch = self.spectator.due();
            for index in 0..batch.frames {
                if self.finished() {
                    break;
                }
                let shown = index + 1 == batch.frames;
                if !self.run_frame(shown)? {
                    break;
                }
                if shown {
                    let (delay, live) = (self.spectator.buffered(), self.spectator.behind_live());
                    self.stats.record_shown(delay, live);
                } else {
                    self.stats.catch_up_frames += 1;
                }
            }
        }
        self.sink.clock_tick(now_us, self.spectator.speed());
        self.spectator
            .poll(now, |to, datagram| transport.send(to, datagram));
        Ok(())
    }

    /// Loads the host's state of a desynced checkpoint and runs again, with
    /// video off, every frame played since, as a member's repair does. A
    /// state our core refuses ends the watch instead.
    fn repair(&mut self, repair: Repair) -> Result<(), AppError> {
        let players = self.spectator.players();
        self.game.set_savestate_context(SavestateContext::Netplay);
        if let Err(error) = self.game.load_state(&repair.state) {
            self.spectator.state_refused(error.to_string());
            return Ok(());
        }
        let memory = memory_checksum(&mut *self.game, &mut self.scratch)
            .map_err(AppError::at_frame(repair.frame.number()))?;
        self.sink
            .state_repaired(repair.frame, &repair.state, memory);
        let mut frame = repair.frame;
        for inputs in &repair.inputs {
            run_frame(
                &mut *self.game,
                frame,
                &inputs[..players],
                FramePass::Resimulated,
                &mut self.sink,
            );
            frame = frame.next();
        }
        self.stats.repairs += 1;
        Ok(())
    }

    /// Runs the next buffered frame (shown or not; the last frame watched is
    /// always shown, so that its picture is the match's). Returns false when
    /// none was buffered. A checkpoint's checksum is taken first, to compare
    /// with the host's.
    fn run_frame(&mut self, shown: bool) -> Result<bool, AppError> {
        let Some((frame, inputs)) = self.spectator.next_inputs() else {
            return Ok(false);
        };
        if self.spectator.is_checkpoint(frame) {
            let checksum = memory_checksum(&mut *self.game, &mut self.scratch)
                .map_err(AppError::at_frame(frame.number()))?;
            self.spectator.add_checksum(frame, checksum);
        }
        let last = self
            .stop_at_frame
            .is_some_and(|stop| frame.next().number() >= stop)
            || self.spectator.phase() == SpectatorPhase::Ended;
        let players = self.spectator.players();
        let pass = if shown || last {
            FramePass::Shown
        } else {
            FramePass::Unshown
        };
        self.final_frames.run(
            &mut *self.game,
            frame,
            &inputs[..players],
            pass,
            &mut self.sink,
        )?;
        if pass == FramePass::Shown {
            // Spectators never run ahead: what they show is the frame.
            self.sink.frame_shown(frame, self.game.video_frame());
        }
        self.stats.frames_run += 1;
        Ok(true)
    }
}
