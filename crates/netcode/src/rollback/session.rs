//! The rollback session: inputs in, requests out (save, load, advance),
//! transport-agnostic. The glue feeds it what the protocol endpoints report
//! (remote inputs, frame lags, pings, checksums, disconnects) and sends what
//! it hands out (local inputs, its frame lag, checkpoint checksums).
//!
//! Each tick the frontend:
//! 1. hands over what arrived: `add_remote_input(s)`, `set_remote_frame_lag`,
//!    `set_ping`, `add_remote_checksum`, `disconnect_player`;
//! 2. adds each local player's buttons (`add_local_input`), then calls
//!    `advance_frame(&mut requests)` and carries out every request in order,
//!    whatever the outcome: `Save` → write the state into
//!    `state_slot_mut(frame)` and set its checksum there; `Load` → restore
//!    `saved_state(frame)`; `Advance` → run one frame (do not present it if
//!    `resimulation`);
//! 3. sends to each peer the local inputs from one past that peer's ack
//!    (`player_inputs(local, ack + 1)`), its `frame_lag_report(peer)` with
//!    the quality report, and every `next_checksum_report()`; spectators get
//!    `confirmed_inputs(from)`;
//! 4. drains `next_event()` and applies `time_sync_advice().speed()` to its
//!    frame clock (stall frames are applied by the session itself: the
//!    outcome is `Stalled`).
//!
//! Nothing here allocates per frame once every state slot has held a state.
//!
use std::collections::VecDeque;
use std::time::Duration;

use super::desync::DesyncDetector;
use super::events::{DisconnectReason, Event, FrameOutcome, Request};
use super::frame::Frame;
use super::input_delay::{InputDelayConfig, InputDelayController};
use super::input_queue::{InputError, InputQueue, Predictor, RepeatLastConfirmed};
use super::players::{PlayerId, PlayerKind, PlayerSet, MAX_PLAYERS};
use super::state_ring::{StateRing, StateSlot, StatesOverBudget};
use super::stats::PeerStats;
use super::time_sync::{StallSchedule, TimeSync, TimeSyncAdvice, TimeSyncConfig};
use crate::checksum::Checksum;
use crate::input::Buttons;

/// What went wrong in a call to the session.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// The `SessionConfig` breaks a rule, named in the message (e.g. the
    /// player count is not 2 to 4).
    #[error("invalid session settings: {0}")]
    InvalidConfig(&'static str),
    /// A player id at or past the session's player count.
    #[error("{player} is not in this session (it has {players} players)")]
    UnknownPlayer {
        /// The id given.
        player: PlayerId,
        /// How many players the session has.
        players: usize,
    },
    /// Local input was added for a player whose input comes from a peer.
    #[error("{0} is not a local player: its input comes from the network")]
    NotLocal(PlayerId),
    /// A call meant for a remote player (its input, ping or checksum) named
    /// a local one.
    #[error("{0} is not a remote player: its input is added locally")]
    NotRemote(PlayerId),
    /// Local input was added for a player who has already left.
    #[error("{0} has left the match")]
    PlayerDisconnected(PlayerId),
    /// `advance_frame` was called before every connected local player's
    /// input for the frame was added.
    #[error("no input was added for local player {player} at frame {frame}: call add_local_input before advance_frame")]
    MissingLocalInput {
        /// The local player without input.
        player: PlayerId,
        /// The frame about to run.
        frame: Frame,
    },
    /// The player's input queue refused an input: outside the window it
    /// keeps, or contradicting one already confirmed (for a remote player,
    /// the peer is at fault).
    #[error("input from {player} refused: {source}")]
    RemoteInput {
        /// The player the input was for.
        player: PlayerId,
        /// What was wrong with it.
        source: InputError,
    },
    /// A rollback needs a state older than the ones kept (the frontend did
    /// not carry out a `Save` request, or the history is too short).
    #[error("the state of frame {frame} is not saved any more, so it cannot be restored")]
    StateNotSaved {
        /// The frame the rollback had to go back to.
        frame: Frame,
    },
    /// A disconnection frame lies before the oldest kept state, so the frames
    /// since cannot be re-run without the player.
    #[error("{player} cannot be disconnected at frame {frame}: states are kept back to frame {oldest} only")]
    DisconnectTooFarBack {
        /// The player to disconnect.
        player: PlayerId,
        /// The frame asked for.
        frame: Frame,
        /// The oldest frame a disconnection can still start at.
        oldest: Frame,
    },
    /// Inputs were asked for from a frame older than the input history keeps
    /// (e.g. a peer acknowledging a very old frame).
    #[error("inputs from frame {from} are no longer kept (the oldest kept is frame {oldest})")]
    HistoryLost {
        /// The first frame asked for.
        from: Frame,
        /// The oldest frame still kept.
        oldest: Frame,
    },
    /// The saved states would take more bytes than their budget allows.
    #[error(transparent)]
    StatesOverBudget(#[from] StatesOverBudget),
}

/// The session's phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionState {
    /// Waiting for every remote peer to synchronize; no frame runs yet.
    Synchronizing,
    /// Frames run.
    Running,
    /// Too few players are left; no frame runs any more.
    Ended,
}

/// Settings of a session, built step by step (`SessionConfig::new().local()…`).
#[derive(Clone, Debug)]
pub struct SessionConfig {
    kinds: [PlayerKind; MAX_PLAYERS],
    players: usize,
    max_prediction: u32,
    frame_period: Duration,
    initial_input_delay: u32,
    input_delay: InputDelayConfig,
    time_sync: TimeSyncConfig,
    checksum_interval: u32,
    input_history: u32,
    waiting_report_interval: u32,
    state_bytes: usize,
}

/// The bytes a session's saved states may take by default (256 MiB).
pub const DEFAULT_STATE_BYTES: usize = 256 << 20;

impl Default for SessionConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl SessionConfig {
    /// No players yet; 60 frames per second, 8 frames of prediction, dynamic
    /// input delay 0–4 starting at 0, checksums every 60 frames.
    pub fn new() -> Self {
        SessionConfig {
            kinds: [PlayerKind::Local; MAX_PLAYERS],
            players: 0,
            max_prediction: 8,
            frame_period: Duration::from_nanos(16_666_667),
            initial_input_delay: 0,
            input_delay: InputDelayConfig::default(),
            time_sync: TimeSyncConfig::default(),
            checksum_interval: 60,
            input_history: 64,
            waiting_report_interval: 60,
            state_bytes: DEFAULT_STATE_BYTES,
        }
    }

    /// The most bytes the saved states a rollback may return to can take
    /// (default [`DEFAULT_STATE_BYTES`]); past it `advance_frame` fails.
    pub fn state_bytes(mut self, bytes: usize) -> Self {
        self.state_bytes = bytes;
        self
    }

    /// Adds the next player (P1 first). Up to four.
    pub fn player(mut self, kind: PlayerKind) -> Self {
        if self.players < MAX_PLAYERS {
            self.kinds[self.players] = kind;
        }
        self.players += 1;
        self
    }

    /// Frames that may run ahead of a peer's newest input (default 8).
    /// 0 is lockstep: a frame runs only once every input for it is
    /// confirmed, nothing is saved or loaded (`Request::Checksum` instead
    /// of `Save`), and the input delay covers the round trip.
    pub fn max_prediction(mut self, frames: u32) -> Self {
        self.max_prediction = frames;
        self
    }

    /// The game's frame rate (default 60).
    pub fn frame_rate(mut self, frames_per_second: f64) -> Self {
        if frames_per_second.is_finite() && frames_per_second > 0.0 {
            self.frame_period = Duration::from_secs_f64(1.0 / frames_per_second);
        } else {
            self.frame_period = Duration::ZERO;
        }
        self
    }

    /// The local input delay to start with (see `input_delay::initial_input_delay`).
    pub fn initial_input_delay(mut self, frames: u32) -> Self {
        self.initial_input_delay = frames;
        self
    }

    /// Bounds, adaptiveness and re-simulation budget of the input delay.
    pub fn input_delay(mut self, config: InputDelayConfig) -> Self {
        self.input_delay = config;
        self
    }

    /// How time sync measures and corrects drift between peers.
    pub fn time_sync(mut self, config: TimeSyncConfig) -> Self {
        self.time_sync = config;
        self
    }

    /// Exchange checksums every `frames` confirmed frames (default 60; 1 to hunt a desync).
    pub fn checksum_interval(mut self, frames: u32) -> Self {
        self.checksum_interval = frames;
        self
    }

    /// At least how many past frames of inputs stay available for resending
    /// and for spectators (default 64).
    pub fn input_history(mut self, frames: u32) -> Self {
        self.input_history = frames;
        self
    }

    /// While starving, raise `WaitingForPeer` again every this many calls (default 60).
    pub fn waiting_report_interval(mut self, ticks: u32) -> Self {
        self.waiting_report_interval = ticks.max(1);
        self
    }

    /// How long one frame lasts at the configured frame rate (zero when the
    /// rate given was not a positive number).
    pub fn frame_period(&self) -> Duration {
        self.frame_period
    }

    /// Whether frames wait for confirmed inputs instead of predicting them.
    pub fn is_lockstep(&self) -> bool {
        self.max_prediction == 0
    }

    fn validate(&self) -> Result<(), SessionError> {
        if !(2..=MAX_PLAYERS).contains(&self.players) {
            return Err(SessionError::InvalidConfig("a session has 2 to 4 players"));
        }
        if !self.kinds[..self.players].contains(&PlayerKind::Local) {
            return Err(SessionError::InvalidConfig(
                "at least one player must be local",
            ));
        }
        if self.max_prediction > 120 {
            return Err(SessionError::InvalidConfig(
                "the prediction window must be 0 (lockstep) to 120 frames",
            ));
        }
        if self.frame_period.is_zero() {
            return Err(SessionError::InvalidConfig(
                "the frame rate must be a positive number",
            ));
        }
        if self.input_delay.min_frames > self.input_delay.max_frames
            || self.input_delay.max_frames > 30
        {
            return Err(SessionError::InvalidConfig(
                "input delay bounds must satisfy min <= max <= 30",
            ));
        }
        if self.checksum_interval == 0 {
            return Err(SessionError::InvalidConfig(
                "the checksum interval must be at least one frame",
            ));
        }
        Ok(())
    }

    /// Builds the session with the default prediction (repeat last input).
    pub fn build(self) -> Result<Session, SessionError> {
        self.build_with_predictor(RepeatLastConfirmed)
    }

    /// Builds the session with a custom predictor.
    pub fn build_with_predictor<P: Predictor>(
        self,
        predictor: P,
    ) -> Result<Session<P>, SessionError> {
        self.validate()?;
        Ok(Session::new(self, predictor))
    }
}

/// How many saved states a session keeps. A rollback never goes further
/// back than the prediction window. A departure can: with two or more
/// remote players, the leaver is dropped at the earliest frame any machine
/// still playing holds its inputs to. The machine furthest behind on them
/// runs at most `max_prediction` frames past that frame, sends its own
/// inputs up to `max_delay` frames ahead of its current frame, and we run
/// at most `max_prediction` frames past those: the agreed frame is at most
/// `2 × max_prediction + max_delay + 1` frames back, and is kept.
fn state_ring_len(config: &SessionConfig) -> usize {
    let prediction = config.max_prediction as usize;
    let remote_players = config.kinds[..config.players]
        .iter()
        .filter(|kind| **kind == PlayerKind::Remote)
        .count();
    if remote_players >= 2 {
        2 * prediction + config.input_delay.max_frames as usize + 4
    } else {
        prediction + 2
    }
}

/// A rollback session for 2–4 players. See the module docs and the README
/// section in the report for the frontend's and the glue's duties.
pub struct Session<P: Predictor = RepeatLastConfirmed> {
    config: SessionConfig,
    predictor: P,
    queues: [InputQueue; MAX_PLAYERS],
    local: PlayerSet,
    remote: PlayerSet,
    connected: PlayerSet,
    synchronized: PlayerSet,
    state: SessionState,
    current: Frame,
    states: StateRing,
    delay: InputDelayController,
    time_sync: TimeSync,
    stalls: StallSchedule,
    desync: DesyncDetector,
    next_checkpoint: Frame,
    events: VecDeque<Event>,
    waiting_ticks: u32,
    stats: [PeerStats; MAX_PLAYERS],
    /// Sum of the worst peer's one-way lag (frames) over the time-sync window.
    lag_sum: f32,
    lag_samples: u32,
}

impl<P: Predictor> Session<P> {
    fn new(config: SessionConfig, predictor: P) -> Self {
        let max_delay = config.input_delay.max_frames;
        // Half the ring behind the current frame, half ahead: room for
        // unacknowledged inputs (at most twice prediction + delay), early
        // remote inputs and the history asked for.
        let needed = (2 * (config.max_prediction + 2 * max_delay) + 8).max(config.input_history);
        let capacity = (2 * needed as usize).next_power_of_two();
        let mut local = PlayerSet::EMPTY;
        let mut remote = PlayerSet::EMPTY;
        for (index, kind) in config.kinds[..config.players].iter().enumerate() {
            match kind {
                PlayerKind::Local => local.insert(PlayerId::new(index as u8)),
                PlayerKind::Remote => remote.insert(PlayerId::new(index as u8)),
            }
        }
        let connected = PlayerSet::from_bits(local.bits() | remote.bits());
        let state = if remote.is_empty() {
            SessionState::Running
        } else {
            SessionState::Synchronizing
        };
        let mut events = VecDeque::with_capacity(64);
        events.push_back(if state == SessionState::Running {
            Event::Running
        } else {
            Event::Synchronizing
        });
        let mut delay = InputDelayController::new(
            config.input_delay,
            config.frame_period,
            config.initial_input_delay,
        );
        if config.is_lockstep() {
            delay = delay.in_lockstep();
        }
        let mut stats = [PeerStats::default(); MAX_PLAYERS];
        for stat in &mut stats {
            stat.local_input_delay = delay.delay();
        }
        Session {
            queues: std::array::from_fn(|_| InputQueue::new(capacity)),
            states: StateRing::with_budget(state_ring_len(&config), config.state_bytes),
            time_sync: TimeSync::new(config.time_sync),
            desync: DesyncDetector::new(config.checksum_interval),
            delay,
            predictor,
            local,
            remote,
            connected,
            synchronized: PlayerSet::EMPTY,
            state,
            current: Frame::ZERO,
            stalls: StallSchedule::default(),
            next_checkpoint: Frame::ZERO,
            events,
            waiting_ticks: 0,
            stats,
            lag_sum: 0.0,
            lag_samples: 0,
            config,
        }
    }

    // ----- what the frontend calls every frame -----

    /// Adds a local player's buttons for the current frame. They are used at
    /// `current + input delay`; the frame they landed on is returned, or
    /// `None` when the delay just shrank and that frame already has an input
    /// (the overlapping inputs are dropped, the ones already sent stand).
    pub fn add_local_input(
        &mut self,
        player: PlayerId,
        buttons: Buttons,
    ) -> Result<Option<Frame>, SessionError> {
        self.check_player(player)?;
        if !self.local.contains(player) {
            return Err(SessionError::NotLocal(player));
        }
        if !self.connected.contains(player) {
            return Err(SessionError::PlayerDisconnected(player));
        }
        let target = self.current + self.delay.delay();
        let queue = &mut self.queues[player.index()];
        let last = queue.confirmed_through();
        if last.is_some_and(|last| last >= target) {
            return Ok(None);
        }
        // The delay grew (or the match starts): repeat the last input over the gap.
        let repeated = last
            .and_then(|last| queue.confirmed(last))
            .unwrap_or(Buttons::NONE);
        let mut frame = last.map_or(Frame::ZERO, Frame::next);
        while frame < target {
            queue
                .confirm(frame, repeated, self.current)
                .map_err(|source| SessionError::RemoteInput { player, source })?;
            frame = frame.next();
        }
        queue
            .confirm(target, buttons, self.current)
            .map_err(|source| SessionError::RemoteInput { player, source })?;
        Ok(Some(target))
    }

    /// Decides what the frontend does this tick, writing the requests into
    /// `requests` (cleared first; reuse one list). Carry out every request in
    /// order, whatever the outcome.
    pub fn advance_frame(
        &mut self,
        requests: &mut Vec<Request>,
    ) -> Result<FrameOutcome, SessionError> {
        requests.clear();
        match self.state {
            SessionState::Ended => return Ok(FrameOutcome::Ended),
            SessionState::Synchronizing => return Ok(FrameOutcome::Synchronizing),
            SessionState::Running => {}
        }
        // The states saved by the last call are in the ring now.
        self.states.check_budget()?;
        for player in self.connected_locals() {
            if self.queues[player.index()]
                .next_awaited()
                .is_some_and(|next| next <= self.current)
            {
                return Err(SessionError::MissingLocalInput {
                    player,
                    frame: self.current,
                });
            }
        }
        self.record_final_checkpoints();
        let rolled_back = self.roll_back_if_needed(requests)?;
        self.update_time_sync();

        let starving = self.starving_players();
        if !starving.is_empty() {
            self.waiting_ticks += 1;
            let interval = self.config.waiting_report_interval;
            if self.waiting_ticks == 1 || self.waiting_ticks.is_multiple_of(interval) {
                self.events.push_back(Event::WaitingForPeer {
                    players: starving,
                    ticks: self.waiting_ticks,
                });
            }
            return Ok(FrameOutcome::Waiting {
                players: starving,
                ticks: self.waiting_ticks,
            });
        }
        if self.waiting_ticks > 0 {
            self.events.push_back(Event::StoppedWaiting {
                ticks: self.waiting_ticks,
            });
            self.waiting_ticks = 0;
        }
        if self.stalls.tick() {
            return Ok(FrameOutcome::Stalled);
        }
        let frame = self.current;
        self.save(requests, frame);
        self.simulate(requests, frame, false);
        self.current = frame.next();
        Ok(FrameOutcome::Advanced { rolled_back })
    }

    /// Carries out a pending rollback without running a new frame, writing
    /// its requests into `requests` (cleared first); returns the frames
    /// re-simulated. For a machine that runs no more frames (its last frame
    /// ran, or the match ended) while corrections of frames it ran still
    /// arrive: only a rollback makes those frames final.
    pub fn settle(&mut self, requests: &mut Vec<Request>) -> Result<u32, SessionError> {
        requests.clear();
        if self.state == SessionState::Synchronizing {
            return Ok(0);
        }
        self.states.check_budget()?;
        self.roll_back_if_needed(requests)
    }

    /// Bytes the saved states a rollback may return to take now.
    pub fn state_bytes(&self) -> usize {
        self.states.bytes_held()
    }

    /// The slot to save the state of `frame` into after a `Save` request.
    pub fn state_slot_mut(&mut self, frame: Frame) -> Option<&mut StateSlot> {
        self.states.get_mut(frame)
    }

    /// The state saved for `frame`, for a `Load` request.
    pub fn saved_state(&self, frame: Frame) -> Option<&StateSlot> {
        self.states.get(frame)
    }

    /// The next event to show or log, oldest first.
    pub fn next_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Sets the local input delay now (clamped to the configured bounds);
    /// with dynamic delay on, later adjustments start from it. Raises
    /// `InputDelayChanged` if it changed.
    pub fn set_input_delay(&mut self, frames: u32) {
        let from = self.delay.delay();
        self.delay.set_delay(frames);
        let to = self.delay.delay();
        if to != from {
            self.events.push_back(Event::InputDelayChanged { from, to });
        }
    }

    /// The measured cost of re-simulating one frame (a frame run after a
    /// load, without rendering): raises the input delay when the expected
    /// rollback would not fit in a frame.
    pub fn set_resimulation_cost(&mut self, cost: Duration) {
        self.delay.set_resimulation_cost(cost);
    }

    // ----- what the glue feeds in from the protocol endpoints -----

    /// The handshake with this remote player is done. When all are, the
    /// session runs (`Event::Running`).
    pub fn peer_synchronized(&mut self, player: PlayerId) -> Result<(), SessionError> {
        self.check_remote(player)?;
        self.synchronized.insert(player);
        self.start_if_synchronized();
        Ok(())
    }

    /// Starts the session at `frame` instead of 0, for a machine whose
    /// process restarted and resumes from a state of `frame` every machine
    /// holds: every input before it counts as confirmed (none is held), and
    /// checkpoints are compared from it on. Only before any frame ran.
    pub fn resume_at(&mut self, frame: Frame) -> Result<(), SessionError> {
        if self.state != SessionState::Synchronizing || self.current != Frame::ZERO {
            return Err(SessionError::InvalidConfig(
                "a session resumes at a frame only before it runs",
            ));
        }
        self.current = frame;
        for queue in &mut self.queues {
            queue.start_at(frame);
        }
        self.next_checkpoint = if self.desync.is_checkpoint(frame) {
            frame
        } else {
            self.desync.next_checkpoint_after(frame)
        };
        Ok(())
    }

    /// The confirmed input of a remote player for `frame`. Resent duplicates
    /// and inputs arriving out of order are fine.
    pub fn add_remote_input(
        &mut self,
        player: PlayerId,
        frame: Frame,
        buttons: Buttons,
    ) -> Result<(), SessionError> {
        self.check_remote(player)?;
        self.queues[player.index()]
            .confirm(frame, buttons, self.current)
            .map(|_| ())
            .map_err(|source| SessionError::RemoteInput { player, source })
    }

    /// Consecutive inputs of a remote player, the first at frame `first`.
    pub fn add_remote_inputs(
        &mut self,
        player: PlayerId,
        first: Frame,
        inputs: &[Buttons],
    ) -> Result<(), SessionError> {
        let mut frame = first;
        for &buttons in inputs {
            self.add_remote_input(player, frame, buttons)?;
            frame = frame.next();
        }
        Ok(())
    }

    /// The frame lag the peer reported (the figure from `frame_lag_report`).
    pub fn set_remote_frame_lag(
        &mut self,
        player: PlayerId,
        frame_lag: i32,
    ) -> Result<(), SessionError> {
        self.check_remote(player)?;
        self.stats[player.index()].remote_frame_lag = Some(frame_lag);
        Ok(())
    }

    /// The round trip to this peer as the endpoint measured it.
    pub fn set_ping(&mut self, player: PlayerId, round_trip: Duration) -> Result<(), SessionError> {
        self.check_remote(player)?;
        self.stats[player.index()].ping_ms =
            Some(round_trip.as_millis().min(u128::from(u32::MAX)) as u32);
        Ok(())
    }

    /// A peer's checksum for checkpoint `frame` (sent by its
    /// `next_checksum_report`). A mismatch raises `Event::Desync`.
    pub fn add_remote_checksum(
        &mut self,
        player: PlayerId,
        frame: Frame,
        checksum: Checksum,
    ) -> Result<(), SessionError> {
        self.check_remote(player)?;
        if let Err(mismatch) = self.desync.add_remote(player, frame, checksum) {
            self.events.push_back(Event::Desync {
                frame: mismatch.frame,
                player: mismatch.player,
                local: mismatch.local,
                remote: mismatch.remote,
            });
        }
        Ok(())
    }

    /// `player` leaves: from `at_frame` on their input is `NONE`, confirmed,
    /// and the others go on; with fewer than two players left the match
    /// ends. Every peer must use the same `at_frame` (normally one past the
    /// last input anyone received from the leaver). Inputs of the leaver
    /// before `at_frame` that are still missing are still awaited.
    pub fn disconnect_player(
        &mut self,
        player: PlayerId,
        at_frame: Frame,
        reason: DisconnectReason,
    ) -> Result<(), SessionError> {
        self.check_player(player)?;
        if !self.connected.contains(player) {
            return Ok(());
        }
        self.check_disconnect_frame(player, at_frame)?;
        self.queues[player.index()].disconnect(at_frame, self.current);
        self.connected.remove(player);
        // No machine still playing confirmed further past `at_frame` than
        // its state ring reaches, or it could not have rolled back to it.
        self.desync
            .ignore_checkpoints(at_frame, at_frame + self.states.len() as u32);
        self.events.push_back(Event::Disconnected {
            player,
            at_frame,
            reason,
        });
        if self.connected.len() < 2 {
            self.state = SessionState::Ended;
            self.events.push_back(Event::MatchEnded {
                at_frame: self.current,
            });
        } else {
            self.start_if_synchronized();
        }
        Ok(())
    }

    /// Whether `player` could be disconnected at `at_frame` now: not when
    /// that frame is past and its state is no longer kept
    /// (`DisconnectTooFarBack`). Lets the glue judge a peer's claim before
    /// acting on it.
    pub fn check_disconnect_frame(
        &self,
        player: PlayerId,
        at_frame: Frame,
    ) -> Result<(), SessionError> {
        self.check_player(player)?;
        if self.connected.contains(player)
            && at_frame < self.current
            && self.states.get(at_frame).is_none()
        {
            let oldest = self.current.saturating_back(self.states.len() as u32 - 2);
            return Err(SessionError::DisconnectTooFarBack {
                player,
                frame: at_frame,
                oldest,
            });
        }
        Ok(())
    }

    // ----- what the glue sends out -----

    /// The confirmed inputs of `player` from frame `from` on (for a local
    /// player: what to send to peers, from one past their ack).
    pub fn player_inputs(
        &self,
        player: PlayerId,
        from: Frame,
    ) -> Result<impl Iterator<Item = (Frame, Buttons)> + '_, SessionError> {
        self.check_player(player)?;
        self.check_history(from)?;
        let queue = &self.queues[player.index()];
        let end = queue.confirmed_through().map_or(Frame::ZERO, Frame::next);
        Ok(FrameRange::new(from, end)
            .map_while(move |frame| queue.confirmed(frame).map(|buttons| (frame, buttons))))
    }

    /// Every player's inputs for each confirmed frame from `from` on (with
    /// three or more players a departure can still rewrite them: netplay
    /// hands spectators and replays only final frames).
    pub fn confirmed_inputs(
        &self,
        from: Frame,
    ) -> Result<impl Iterator<Item = (Frame, [Buttons; MAX_PLAYERS])> + '_, SessionError> {
        self.check_history(from)?;
        let end = self.confirmed_frame().map_or(Frame::ZERO, Frame::next);
        let players = self.config.players;
        Ok(FrameRange::new(from, end).map_while(move |frame| {
            let mut inputs = [Buttons::NONE; MAX_PLAYERS];
            for (index, input) in inputs.iter_mut().enumerate().take(players) {
                *input = self.queues[index].confirmed(frame)?;
            }
            Some((frame, inputs))
        }))
    }

    /// The frame lag to report to `player` (quality report). Frames we
    /// simulate past that peer's newest input, less our input delay.
    pub fn frame_lag_report(&self, player: PlayerId) -> Result<i32, SessionError> {
        self.check_remote(player)?;
        Ok(self.frame_lag(player).unwrap_or(0))
    }

    /// One past the last input of `player` known without gaps: where a
    /// disconnect of that player would start if decided now.
    pub fn received_inputs_end(&self, player: PlayerId) -> Frame {
        let queue = &self.queues[player.index().min(MAX_PLAYERS - 1)];
        queue.confirmed_through().map_or(Frame::ZERO, Frame::next)
    }

    /// The next checkpoint checksum to send to every peer, oldest first.
    pub fn next_checksum_report(&mut self) -> Option<(Frame, Checksum)> {
        self.desync.pop_outgoing()
    }

    // ----- what anyone may read -----

    /// The next frame to simulate.
    pub fn current_frame(&self) -> Frame {
        self.current
    }

    /// The first simulated frame found run with a wrong input, until the
    /// next `advance_frame` rolls back to it: states saved after it are
    /// from the mispredicted timeline.
    pub fn pending_rollback(&self) -> Option<Frame> {
        self.queues[..self.config.players]
            .iter()
            .filter_map(InputQueue::first_incorrect)
            .filter(|&wrong| wrong < self.current)
            .min()
    }

    /// The last frame for which every player's input is known.
    pub fn confirmed_frame(&self) -> Option<Frame> {
        match self.first_unconfirmed_frame() {
            Some(frame) => frame.previous(),
            None => self.current.previous(),
        }
    }

    /// The session's phase.
    pub fn state(&self) -> SessionState {
        self.state
    }

    /// How many players the session has (2 to 4), connected or not.
    pub fn players(&self) -> usize {
        self.config.players
    }

    /// Whether `player` is local or remote; `None` for an id outside the session.
    pub fn kind(&self, player: PlayerId) -> Option<PlayerKind> {
        (player.index() < self.config.players).then(|| self.config.kinds[player.index()])
    }

    /// The players who have not left.
    pub fn connected_players(&self) -> PlayerSet {
        self.connected
    }

    /// The local input delay now, in frames.
    pub fn input_delay(&self) -> u32 {
        self.delay.delay()
    }

    /// Time sync's advice from its last complete window.
    pub fn time_sync_advice(&self) -> TimeSyncAdvice {
        self.time_sync.advice()
    }

    /// Ping, lag and rollback figures about `player`; `None` for an id
    /// outside the session.
    pub fn peer_stats(&self, player: PlayerId) -> Option<PeerStats> {
        (player.index() < self.config.players).then(|| self.stats[player.index()])
    }

    /// The settings the session was built with.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    // ----- internals -----

    fn check_player(&self, player: PlayerId) -> Result<(), SessionError> {
        if player.index() < self.config.players {
            Ok(())
        } else {
            Err(SessionError::UnknownPlayer {
                player,
                players: self.config.players,
            })
        }
    }

    fn check_remote(&self, player: PlayerId) -> Result<(), SessionError> {
        self.check_player(player)?;
        if self.remote.contains(player) {
            Ok(())
        } else {
            Err(SessionError::NotRemote(player))
        }
    }

    fn check_history(&self, from: Frame) -> Result<(), SessionError> {
        let kept = self.queues[0].half_window() - 1;
        let oldest = self.current.saturating_back(kept);
        if from < oldest {
            Err(SessionError::HistoryLost { from, oldest })
        } else {
            Ok(())
        }
    }

    fn connected_locals(&self) -> impl Iterator<Item = PlayerId> {
        PlayerSet::from_bits(self.local.bits() & self.connected.bits()).iter()
    }

    fn start_if_synchronized(&mut self) {
        let waiting_for = self.remote.bits() & self.connected.bits() & !self.synchronized.bits();
        if self.state == SessionState::Synchronizing && waiting_for == 0 {
            self.state = SessionState::Running;
            self.events.push_back(Event::Running);
        }
    }

    /// The earliest frame some player's input is still awaited for.
    fn first_unconfirmed_frame(&self) -> Option<Frame> {
        self.queues[..self.config.players]
            .iter()
            .filter_map(InputQueue::next_awaited)
            .min()
    }

    fn frame_lag(&self, player: PlayerId) -> Option<i32> {
        let next = self.queues[player.index()].next_awaited()?;
        Some((self.current.frames_since(next) - i64::from(self.delay.delay())) as i32)
    }

    fn starving_players(&self) -> PlayerSet {
        let mut starving = PlayerSet::EMPTY;
        for player in self.remote.iter() {
            if let Some(next) = self.queues[player.index()].next_awaited() {
                if self.current.frames_since(next) >= i64::from(self.config.max_prediction) {
                    starving.insert(player);
                }
            }
        }
        starving
    }

    fn save(&mut self, requests: &mut Vec<Request>, frame: Frame) {
        self.states.claim(frame);
        requests.push(if self.config.is_lockstep() {
            Request::Checksum { frame }
        } else {
            Request::Save { frame }
        });
    }

    fn simulate(&mut self, requests: &mut Vec<Request>, frame: Frame, resimulation: bool) {
        let mut inputs = [Buttons::NONE; MAX_PLAYERS];
        let mut predicted = PlayerSet::EMPTY;
        for (index, queue) in self.queues[..self.config.players].iter_mut().enumerate() {
            let player = PlayerId::new(index as u8);
            let (buttons, guessed) = queue.input_for_simulation(player, frame, &self.predictor);
            inputs[index] = buttons;
            if guessed {
                predicted.insert(player);
            }
        }
        requests.push(Request::Advance {
            frame,
            inputs,
            predicted,
            resimulation,
        });
    }

    /// Loads the first frame found wrong and re-simulates up to the present.
    fn roll_back_if_needed(&mut self, requests: &mut Vec<Request>) -> Result<u32, SessionError> {
        let current = self.current;
        let mut first: Option<Frame> = None;
        for (index, queue) in self.queues[..self.config.players].iter_mut().enumerate() {
            if let Some(wrong) = queue
                .take_first_incorrect()
                .filter(|&wrong| wrong < current)
            {
                let depth = current - wrong;
                let stats = &mut self.stats[index];
                stats.last_rollback = depth;
                stats.max_rollback = stats.max_rollback.max(depth);
                stats.rollbacks += 1;
                first = Some(first.map_or(wrong, |f| f.min(wrong)));
            }
        }
        let Some(first) = first else {
            return Ok(0);
        };
        // Lockstep runs no frame on a guess, but a departure agreed at an
        // earlier frame would rewrite frames run: no state to go back to.
        if self.states.get(first).is_none() || self.config.is_lockstep() {
            return Err(SessionError::StateNotSaved { frame: first });
        }
        requests.push(Request::Load { frame: first });
        let mut frame = first;
        while frame < current {
            if frame != first {
                self.save(requests, frame);
            }
            self.simulate(requests, frame, true);
            frame = frame.next();
        }
        Ok(current - first)
    }

    /// Makes the match's last frame a checkpoint too (the frames after the
    /// last regular checkpoint are compared there), once its length is
    /// known: before frame 0.
    pub fn set_last_frame(&mut self, frame: Frame) {
        self.desync.set_last_frame(Some(frame));
        if self.next_checkpoint > frame {
            self.next_checkpoint = frame;
        }
    }

    /// Whether the checksums of `frame`'s state are compared with the peers'.
    pub fn is_checkpoint(&self, frame: Frame) -> bool {
        self.desync.is_checkpoint(frame)
    }

    /// Checkpoint states become final once every input before them is
    /// confirmed and no rollback before them is pending: their checksums
    /// then go to the desync detector (and out to the peers). Each
    /// `advance_frame` does it; a machine that stopped running frames calls
    /// it as inputs keep arriving, so its last checkpoints are compared too.
    pub fn record_final_checkpoints(&mut self) {
        let first_unconfirmed = self.first_unconfirmed_frame();
        let pending_fix = self.queues[..self.config.players]
            .iter()
            .filter_map(InputQueue::first_incorrect)
            .min();
        loop {
            let checkpoint = self.next_checkpoint;
            let inputs_known = first_unconfirmed.is_none_or(|next| checkpoint <= next);
            let unaffected = pending_fix.is_none_or(|wrong| wrong >= checkpoint);
            if checkpoint >= self.current || !inputs_known || !unaffected {
                return;
            }
            if let Some(checksum) = self.states.get(checkpoint).and_then(StateSlot::checksum) {
                let events = &mut self.events;
                self.desync.add_local(checkpoint, checksum, |m| {
                    events.push_back(Event::Desync {
                        frame: m.frame,
                        player: m.player,
                        local: m.local,
                        remote: m.remote,
                    })
                });
            }
            self.next_checkpoint = self.desync.next_checkpoint_after(checkpoint);
        }
    }

    /// One time-sync sample per tick; at the end of a window, new advice and
    /// a new input delay.
    fn update_time_sync(&mut self) {
        let frame_secs = self.config.frame_period.as_secs_f32();
        let mut worst_lag: Option<f32> = None;
        let delay = self.delay.delay();
        for player in self.remote.iter() {
            if !self.connected.contains(player) {
                continue;
            }
            let Some(lag) = self.frame_lag(player) else {
                continue;
            };
            let stats = &mut self.stats[player.index()];
            stats.local_frame_lag = lag;
            stats.local_input_delay = delay;
            self.time_sync
                .sample(player.index(), lag, stats.remote_frame_lag);
            if let Some(ping) = stats.ping_ms {
                let one_way = ping as f32 / 1000.0 / frame_secs / 2.0;
                worst_lag = Some(worst_lag.map_or(one_way, |w| w.max(one_way)));
            }
        }
        if let Some(lag) = worst_lag {
            self.lag_sum += lag;
            self.lag_samples += 1;
            // Lockstep waits for every frame the delay does not cover: the
            // delay rises as soon as a round trip says so.
            if self.config.is_lockstep() {
                if let Some(to) = self.delay.raise_for_lockstep(lag) {
                    self.events
                        .push_back(Event::InputDelayChanged { from: delay, to });
                }
            }
        }
        let previous = self.time_sync.advice();
        let Some(advice) = self.time_sync.end_frame() else {
            return;
        };
        for player in self.remote.iter() {
            self.stats[player.index()].frames_ahead = self.time_sync.frames_ahead(player.index());
        }
        if let TimeSyncAdvice::StallFrames { frames } = advice {
            self.stalls.set(frames);
        }
        let changed = match (previous, advice) {
            (TimeSyncAdvice::Speed(a), TimeSyncAdvice::Speed(b)) => (a - b).abs() > 0.0005,
            (a, b) => a != b,
        };
        if changed {
            let frames_ahead = self
                .remote
                .iter()
                .filter_map(|p| self.time_sync.frames_ahead(p.index()))
                .fold(f32::NEG_INFINITY, f32::max);
            self.events.push_back(Event::TimeSync {
                advice,
                frames_ahead,
            });
        }
        if self.lag_samples > 0 {
            let average = self.lag_sum / self.lag_samples as f32;
            self.lag_sum = 0.0;
            self.lag_samples = 0;
            let from = self.delay.delay();
            if let Some(to) = self.delay.update(average) {
                self.events.push_back(Event::InputDelayChanged { from, to });
            }
        }
    }
}

/// Frames `from..end`, as an iterator.
#[derive(Clone, Copy, Debug)]
struct FrameRange {
    next: Frame,
    end: Frame,
}

impl FrameRange {
    fn new(next: Frame, end: Frame) -> Self {
        FrameRange { next, end }
    }
}

impl Iterator for FrameRange {
    type Item = Frame;
    fn next(&mut self) -> Option<Frame> {
        (self.next < self.end).then(|| {
            let frame = self.next;
            self.next = frame.next();
            frame
        })
    }
}
