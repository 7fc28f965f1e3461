//! Netplay on real games: [`NetplayDriver`] carries out a
//! [`NetplaySession`]'s requests on any [`Emulator`] (save, load, advance),
//! hands every frame it runs and every frame that becomes final to a
//! [`FrameSink`], and feeds the session the measured cost of re-simulation.
//!
//! Free of I/O, clocks and randomness: `now` and the stopwatch come in.

use crate::engine::matches::checkpoints::CheckpointStates;
use crate::engine::matches::hooks::TickHooks;
use crate::engine::matches::profile::{between, elapsed_since, LoopProfile};
use crate::engine::sinks::{run_frame, FinalFrame, FramePass, FrameSink};
use crate::engine::AppError;
use netcode::checksum::{memory_checksum, Checksum};
use netcode::emulator::{Emulator, SavestateContext};
use netcode::input::{Buttons, MAX_PLAYERS};
use netcode::netplay::NetplaySession;
use netcode::protocol::Millis;
use netcode::rollback::{Frame, FrameOutcome, Request, StateSlot};
use std::collections::VecDeque;
use std::time::Duration;

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
    /// The latest frame run for the first time and its buttons, to be
    /// shown ([`NetplayDriver::take_shown`]).
    shown: Option<(Frame, [Buttons; MAX_PLAYERS])>,
    /// Whether a state was loaded since `take_shown` last asked (a
    /// rollback or a repair): then the game is not where the buttons say.
    loaded: bool,
    /// Whether first runs are drawn: not when run-ahead shows other
    /// pictures for them.
    pub skip_drawing: bool,
    /// Where the ticks' time went.
    pub profile: LoopProfile,
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
    pub fn advance<A: Ord + Copy + std::hash::Hash, G: Emulator + ?Sized>(
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
        // One our core refuses costs the host's link, not this process.
        if let Some(state) = netplay.take_start_state() {
            if let Err(error) = game.load_state(&state) {
                netplay.host_state_refused(error.to_string());
            }
        }
        // Frame 0, or the frame a restarted machine resumes at.
        let first = netplay.current_frame();
        let outcome = netplay.advance_frame(now, &mut self.requests)?;
        if !self.start_told && !self.requests.is_empty() {
            let lockstep = netplay.settings().is_lockstep();
            self.next_final = first;
            self.tell_match_started(game, sink, lockstep, first)?;
        }
        self.carry_out(netplay, game, sink, hooks)?;
        self.finalize_timed(netplay, sink, hooks);
        Ok(outcome)
    }

    /// For a machine that runs no more frames (its last frame ran, or the
    /// match ended): carries out a rollback that corrections arriving since
    /// call for, then hands the sink every frame now final. Without it a
    /// frame run on a wrong prediction would never become final. Returns
    /// the frames re-simulated.
    pub fn settle<A: Ord + Copy + std::hash::Hash, G: Emulator + ?Sized>(
        &mut self,
        now: Millis,
        netplay: &mut NetplaySession<A>,
        game: &mut G,
        sink: &mut dyn FrameSink,
        hooks: &mut dyn TickHooks,
    ) -> Result<u32, AppError> {
        let rolled_back = netplay.settle(now, &mut self.requests)?;
        game.set_savestate_context(SavestateContext::Netplay);
        self.carry_out(netplay, game, sink, hooks)?;
        self.finalize_timed(netplay, sink, hooks);
        Ok(rolled_back)
    }

    /// Carries out the session's requests in order, timing re-simulation.
    fn carry_out<A: Ord + Copy + std::hash::Hash, G: Emulator + ?Sized>(
        &mut self,
        netplay: &mut NetplaySession<A>,
        game: &mut G,
        sink: &mut dyn FrameSink,
        hooks: &mut dyn TickHooks,
    ) -> Result<(), AppError> {
        let mut timing = ResimulationTiming::default();
        let requests = std::mem::take(&mut self.requests);
        for &request in &requests {
            let began = hooks.profile_clock();
            match request {
                Request::Save { frame } => self.save(netplay, game, frame, sink, hooks)?,
                Request::Checksum { frame } => self.checksum(netplay, game, frame, sink),
                Request::Load { frame } => {
                    timing.loaded(hooks);
                    self.loaded = true;
                    let state = netplay
                        .saved_state(frame)
                        .ok_or(AppError::NoStateSlot { frame })?;
                    game.load_state(state.data())
                        .map_err(AppError::at_frame(frame.number()))?;
                    self.profile.resimulation += elapsed_since(began, hooks);
                }
                Request::Advance {
                    frame,
                    mut inputs,
                    resimulation,
                    ..
                } => {
                    hooks.adjust_inputs(frame, &mut inputs);
                    let players = netplay.session().players();
                    self.run(game, frame, inputs, players, resimulation, sink);
                    let took = elapsed_since(began, hooks);
                    if resimulation {
                        timing.resimulated(hooks);
                        self.profile.resimulation += took;
                    } else {
                        self.profile.first_runs += took;
                        self.profile.frames += 1;
                    }
                }
            }
        }
        self.requests = requests;
        if let Some(per_frame) = timing.per_frame() {
            netplay.set_resimulation_cost(self.resimulation.record(per_frame));
        }
        Ok(())
    }

    /// Tells the sink the state every machine begins frame 0 from (or a
    /// restarted one resumes `first` from), which the game holds before
    /// its first request.
    fn tell_match_started<G: Emulator + ?Sized>(
        &mut self,
        game: &mut G,
        sink: &mut dyn FrameSink,
        netplay_lockstep: bool,
        first: Frame,
    ) -> Result<(), AppError> {
        self.start_told = true;
        let mut start_state = Vec::new();
        let saved = game.save_state(&mut start_state);
        // Lockstep plays cores that cannot save: the replay then starts
        // from the content as loaded (an empty start state).
        if netplay_lockstep {
            if saved.is_err() {
                start_state.clear();
            }
            let memory = lockstep_checksum(game).unwrap_or_default();
            sink.match_started(first, &start_state, memory);
            return Ok(());
        }
        saved.map_err(AppError::at_frame(first.number()))?;
        let memory = netcode::checksum::memory_checksum(game, &mut Vec::new())
            .map_err(AppError::at_frame(first.number()))?;
        sink.match_started(first, &start_state, memory);
        Ok(())
    }

    /// Lockstep's `Save`: the same checksum, into the same slot and the
    /// frame's pending entry, with no state saved.
    fn checksum<A: Ord + Copy + std::hash::Hash, G: Emulator + ?Sized>(
        &mut self,
        netplay: &mut NetplaySession<A>,
        game: &mut G,
        frame: Frame,
        sink: &dyn FrameSink,
    ) {
        let hash_every_frame = sink.wants_checksums();
        let checksum = (hash_every_frame || is_checkpoint(netplay, frame))
            .then(|| lockstep_checksum(game))
            .flatten();
        if let (Some(slot), Some(checksum)) = (netplay.state_slot_mut(frame), checksum) {
            slot.set_checksum(checksum);
        }
        remember(
            &mut self.pending,
            frame,
            checksum.filter(|_| hash_every_frame),
        );
    }

    /// Saves the state at the start of `frame` into the session's slot,
    /// hashed when the sink wants every checksum or the frame is a
    /// checkpoint (whose state is kept for desync repair too).
    fn save<A: Ord + Copy + std::hash::Hash, G: Emulator + ?Sized>(
        &mut self,
        netplay: &mut NetplaySession<A>,
        game: &mut G,
        frame: Frame,
        sink: &dyn FrameSink,
        hooks: &mut dyn TickHooks,
    ) -> Result<(), AppError> {
        let checkpoint = is_checkpoint(netplay, frame);
        let hash_every_save = sink.wants_checksums();
        let slot = netplay
            .state_slot_mut(frame)
            .ok_or(AppError::NoStateSlot { frame })?;
        let hashed = hash_every_save || checkpoint;
        let began = hooks.profile_clock();
        save_state_to_slot(game, slot, frame, hashed)?;
        let saved = hooks.profile_clock();
        let checksum = hashed.then(|| hash_slot(game, slot));
        self.profile.saves += between(began, saved);
        self.profile.hashing += elapsed_since(saved, hooks);
        if checkpoint {
            self.checkpoints.keep(frame, slot.data());
        }
        remember(
            &mut self.pending,
            frame,
            checksum.filter(|_| hash_every_save),
        );
        Ok(())
    }

    /// Runs `frame` with `inputs` and notes them as the buttons its latest
    /// run used.
    fn run<G: Emulator + ?Sized>(
        &mut self,
        game: &mut G,
        frame: Frame,
        inputs: [Buttons; MAX_PLAYERS],
        players: usize,
        resimulation: bool,
        sink: &mut dyn FrameSink,
    ) {
        let pass = if resimulation {
            FramePass::Resimulated
        } else if self.skip_drawing {
            FramePass::Unshown
        } else {
            FramePass::Shown
        };
        run_frame(game, frame, &inputs[..players], pass, sink);
        if !resimulation {
            self.shown = Some((frame, inputs));
        }
        if let Some(pending) = self.pending.iter_mut().rev().find(|p| p.frame == frame) {
            pending.inputs = Some(inputs);
        }
    }

    /// Hands the sink every frame final since last time (`advance` does it
    /// too; a loop also calls it on ticks that run no frame, as inputs keep
    /// arriving). Frame f is final once its inputs and every input before
    /// are final, it was run, and no rollback to it or before waits for the
    /// next `advance` (so its last run, and the state saved at its start,
    /// are the ones every machine has).
    pub fn finalize<A: Ord + Copy + std::hash::Hash>(
        &mut self,
        netplay: &NetplaySession<A>,
        sink: &mut dyn FrameSink,
    ) {
        // Nothing is final here before this machine's first frame (a
        // restarted one's frames before it were never run here).
        if !self.start_told {
            return;
        }
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

    /// [`NetplayDriver::finalize`], its time counted as the final sinks'.
    pub fn finalize_timed<A: Ord + Copy + std::hash::Hash>(
        &mut self,
        netplay: &NetplaySession<A>,
        sink: &mut dyn FrameSink,
        hooks: &mut dyn TickHooks,
    ) {
        let began = hooks.profile_clock();
        self.finalize(netplay, sink);
        self.profile.final_sinks += elapsed_since(began, hooks);
    }

    /// The latest frame run for the first time since the last call, with
    /// its buttons, and whether a state was loaded since the last call.
    pub fn take_shown(&mut self) -> (Option<(Frame, [Buttons; MAX_PLAYERS])>, bool) {
        (self.shown.take(), std::mem::take(&mut self.loaded))
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
    pub fn repair<A: Ord + Copy + std::hash::Hash, G: Emulator + ?Sized>(
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
        self.loaded = true;
        self.checkpoints.keep(frame, host_state);
        let memory =
            memory_checksum(game, &mut Vec::new()).map_err(AppError::at_frame(frame.number()))?;
        sink.state_repaired(frame, host_state, memory);
        let players = netplay.session().players();
        let mut at = frame;
        for inputs in inputs {
            let checkpoint = is_checkpoint(netplay, at);
            if let Some(slot) = netplay.state_slot_mut(at) {
                let checksum = save_to_slot(game, slot, at, true)?;
                if checkpoint {
                    self.checkpoints.keep(at, slot.data());
                }
                if let Some(pending) = self.pending.iter_mut().find(|p| p.frame == at) {
                    if pending.checksum.is_some() {
                        pending.checksum = checksum;
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

/// Whether `frame` is one whose checksums the machines compare.
fn is_checkpoint<A: Ord + Copy + std::hash::Hash>(
    netplay: &NetplaySession<A>,
    frame: Frame,
) -> bool {
    netplay.session().is_checkpoint(frame)
}

/// Saves `game` into `slot` (the state at the start of `frame`) and, when
/// `hashed`, sets and returns the slot's checksum: of game memory, not the
/// raw state, since states can hold incidental bytes that differ between
/// machines (see docs/design.md). A game showing no memory is compared by
/// state, so only then must its bytes be comparable; other saves skip
/// zeroing what the core leaves unwritten.
fn save_to_slot<G: Emulator + ?Sized>(
    game: &mut G,
    slot: &mut StateSlot,
    frame: Frame,
    hashed: bool,
) -> Result<Option<Checksum>, AppError> {
    save_state_to_slot(game, slot, frame, hashed)?;
    Ok(hashed.then(|| hash_slot(game, slot)))
}

/// [`save_to_slot`]'s save: whole (zeroed) when its bytes are what gets
/// hashed, else only what loading reads.
fn save_state_to_slot<G: Emulator + ?Sized>(
    game: &mut G,
    slot: &mut StateSlot,
    frame: Frame,
    hashed: bool,
) -> Result<(), AppError> {
    let saved = if game.game_memory().is_empty() && hashed {
        game.save_state(slot.buffer_mut())
    } else {
        game.save_state_to_load(slot.buffer_mut())
    };
    saved.map_err(AppError::at_frame(frame.number()))
}

/// [`save_to_slot`]'s checksum, kept in the slot.
fn hash_slot<G: Emulator + ?Sized>(game: &G, slot: &mut StateSlot) -> Checksum {
    let checksum = if game.game_memory().is_empty() {
        Checksum::of(slot.data())
    } else {
        Checksum::of(game.game_memory())
    };
    slot.set_checksum(checksum);
    checksum
}

/// The checksum lockstep compares, taken without saving when it can: of
/// game memory, as [`save_to_slot`]'s; a game showing no memory by its
/// state, if its core gives one (else none: nothing to compare).
fn lockstep_checksum<G: Emulator + ?Sized>(game: &mut G) -> Option<Checksum> {
    if !game.game_memory().is_empty() {
        return Some(Checksum::of(game.game_memory()));
    }
    let mut state = Vec::new();
    game.save_state(&mut state).ok()?;
    Some(Checksum::of(&state))
}

/// The stopwatch readings around one tick's re-simulation: at its first
/// load and after each frame re-simulated.
#[derive(Default)]
struct ResimulationTiming {
    started: Option<Duration>,
    frames: u32,
    ended: Duration,
}

impl ResimulationTiming {
    fn loaded(&mut self, hooks: &mut dyn TickHooks) {
        self.started.get_or_insert_with(|| hooks.stopwatch());
    }

    fn resimulated(&mut self, hooks: &mut dyn TickHooks) {
        self.frames += 1;
        self.ended = hooks.stopwatch();
    }

    /// The cost of one frame, if frames were re-simulated after a load.
    fn per_frame(&self) -> Option<Duration> {
        let started = self.started.filter(|_| self.frames > 0)?;
        Some(self.ended.saturating_sub(started) / self.frames)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
