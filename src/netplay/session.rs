//! The glue between one rollback [`Session`] and the protocol endpoints of
//! the other machines, sans-IO: datagrams and `now` in, datagrams, requests
//! and events out.

use std::collections::VecDeque;
use std::time::Duration;

use super::checkpoint_state;
use super::config::{Connect, NetplayConfig};
use super::events::{NetplayError, NetplayEvent, NetplayStats, PeerFault, SpectatorDrop};
use super::startup::{self, Begin, StartMessage, StartPhase, StartUp};
use crate::encoding::state_blob::{self, StateBlobError};
use crate::input::Buttons;
use crate::protocol::{
    self, codec, ConnectionState, DisconnectCause, EndpointConfig, Event as NetEvent, Handshake,
    HandshakeLimiter, Header, Message, Millis, PeerEndpoint, PeerTable, PlayerSlots, RejectReason,
    Sequence, SessionSettings, SessionToken, MAX_BLOB_SIZE, MAX_UNACKED_FRAMES, PROTOCOL_VERSION,
};
use crate::rollback::{
    DisconnectReason, Event as SessionEvent, Frame, FrameOutcome, PlayerId, PlayerKind, PlayerSet,
    Request, Session, SessionConfig, SessionError, SessionState, StateSlot, MAX_PLAYERS,
};
use crate::rollback::{InputDelayConfig, TimeSyncAdvice};

/// Where the link to one peer machine is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LinkState {
    /// No endpoint yet: waiting for the peer's Hello.
    AwaitingHello,
    /// An endpoint exists (handshaking or running).
    Open,
    /// The endpoint is closed: the peer's players are leaving or gone.
    Closed,
}

/// One peer machine with players in the match.
#[derive(Clone, Debug)]
struct Link<A> {
    address: Option<A>,
    /// The address the configuration named, if any: what a reopened slot
    /// accepts again.
    configured_address: Option<A>,
    players: PlayerSlots,
    connect: Connect,
    state: LinkState,
    /// The player whose figures stand for the link (its lowest slot).
    first_player: PlayerId,
}

/// A machine watching the match.
#[derive(Clone, Copy, Debug)]
struct Spectator<A> {
    address: A,
    /// The next final frame to hand to its endpoint.
    next_frame: Frame,
    open: bool,
    snapshot: Snapshot,
}

/// Where a spectator is with the savestate it starts watching from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Snapshot {
    /// Not sent yet: it goes once the spectator proved its address.
    Due,
    /// On its way (the spectator's inputs start at its frame).
    Sending,
    /// The spectator has it: inputs flow.
    Delivered,
}

/// Final frames kept for spectators (a minute at 60 fps, 8 bytes each):
/// a spectator is fed from here while it receives its savestate and until
/// it acknowledges, and is dropped once it needs a frame older than this.
pub const SPECTATOR_BACKLOG_FRAMES: usize = 3600;

/// Every player's final inputs of the latest final frames, for spectators.
#[derive(Clone, Debug, Default)]
struct FinalRows {
    /// The frame of `rows[0]`.
    start: Frame,
    rows: VecDeque<[Buttons; MAX_PLAYERS]>,
}

impl FinalRows {
    /// One past the last frame held.
    fn end(&self) -> Frame {
        self.start + self.rows.len() as u32
    }

    fn push(&mut self, row: [Buttons; MAX_PLAYERS]) {
        if self.rows.len() == SPECTATOR_BACKLOG_FRAMES {
            self.rows.pop_front();
            self.start = self.start.next();
        }
        self.rows.push_back(row);
    }

    fn get(&self, frame: Frame) -> Option<&[Buttons; MAX_PLAYERS]> {
        if frame < self.start {
            return None;
        }
        self.rows.get((frame - self.start) as usize)
    }
}

/// Refusals waiting for the next poll at most; more are dropped unanswered
/// (each address is rate-limited, so this bounds a flood from many).
const MAX_PENDING_REFUSALS: usize = 16;

/// A remote player leaving the match, until every peer agrees on the frame.
#[derive(Clone, Copy, Debug)]
struct Departure {
    /// One past the last input of the player we hold: what we tell peers.
    view: Frame,
    reason: DisconnectReason,
    decided: bool,
}

/// A member's progress with the start-up host's start state.
#[derive(Clone, Debug, PartialEq, Eq)]
enum StartStateWait {
    /// None comes (we host, or the host sends none): Ready when synchronized.
    NotAwaited,
    /// The host's handshake said one follows.
    Awaited,
    /// It arrived, for the frontend to take and load.
    Arrived(Vec<u8>),
    /// The frontend took it: Ready may go out.
    Taken,
}

/// A netplay match for 2–4 players over any transport, keyed by address `A`.
///
/// Each tick the frontend: hands over every datagram that arrived
/// (`handle_datagram`), adds each local player's buttons
/// (`add_local_input`), calls `advance_frame` and carries out every request
/// (saves into `state_slot_mut`, loads from `saved_state`), calls `poll` to
/// send what is due, drains `next_event`, and runs its frame clock at
/// `frames_per_second_factor()` times the nominal rate.
///
/// Disconnects: when a peer falls silent for the timeout (or says goodbye),
/// each remaining machine announces the frame up to which it holds that
/// peer's inputs; once it has the announcements of every other machine still
/// playing, all of them drop the leaver at the earliest announced frame, so
/// all simulate the same inputs. Two players: the match ends; more: it goes on.
///
/// Start-up: frame 0 begins on every machine at the same moment. The machine
/// of player 0 measures its round trips to the others and tells each how
/// long to wait (see `netplay::startup`); until then `advance_frame`
/// answers `Synchronizing`, then `Starting { in_ms }` (tick again at that
/// moment), and local inputs are held back.
///
/// Start state: the host (machine of player 0) given one in its
/// configuration sends it, lz4-compressed, to each member once their
/// handshake is done; a member says Ready only after the frontend took it
/// (`take_start_state`, announced by `StartStateArrived`) to load it.
pub struct NetplaySession<A: Ord + Copy> {
    config: NetplayConfig<A>,
    session: Session,
    endpoints: PeerTable<A>,
    links: Vec<Link<A>>,
    spectators: Vec<Spectator<A>>,
    /// The final inputs spectators are fed from (kept only when they are accepted).
    final_rows: FinalRows,
    /// Handshakes per address, for every Hello that would open a link.
    handshakes: HandshakeLimiter<A>,
    /// Rejects to send to addresses we opened no endpoint for.
    refusals: VecDeque<(A, Vec<u8>)>,
    /// The last joiner refused and why, so that its retried Hellos are
    /// refused without telling the frontend again.
    last_refused: Option<(A, RejectReason)>,
    local_players: PlayerSlots,
    local_count: usize,
    /// The next frame of local inputs to hand to the endpoints.
    next_local_frame: Frame,
    departures: [Option<Departure>; MAX_PLAYERS],
    events: VecDeque<NetplayEvent>,
    waiting_since: Option<Millis>,
    left: bool,
    /// An error found while handling datagrams, returned by the next `advance_frame`.
    pending_error: Option<NetplayError>,
    dropped_unknown: u64,
    now: Millis,
    startup: StartUp,
    /// The quality-report interval once play begins (the start-up measures faster).
    quality_report_interval_ms: Millis,
    /// The host's start state as sent (compressed), if we send one.
    start_state_blob: Option<Vec<u8>>,
    start_state_wait: StartStateWait,
}

impl<A: Ord + Copy> NetplaySession<A> {
    /// Checks the configuration, builds the rollback session and opens the
    /// links we dial (they send Hello at the first `poll`).
    pub fn new(config: NetplayConfig<A>, now: Millis) -> Result<Self, NetplayError> {
        let settings = config.settings;
        let players = settings.player_count as usize;
        if !(2..=MAX_PLAYERS).contains(&players) {
            return Err(invalid(format!(
                "a match has 2 to {MAX_PLAYERS} players, not {players}"
            )));
        }
        let all = PlayerSlots((1u16 << players) as u8 - 1);
        if config.local_players.is_empty() || !config.local_players.fit_in(players as u8) {
            return Err(invalid(format!(
                "the local players {:#04x} must be some of the {players} players",
                config.local_players.0
            )));
        }
        let mut covered = config.local_players;
        for peer in &config.peers {
            if peer.players.is_empty() || !peer.players.fit_in(players as u8) {
                return Err(invalid(format!(
                    "a peer's players {:#04x} must be some of the {players} players",
                    peer.players.0
                )));
            }
            if peer.players.overlaps(covered) {
                return Err(invalid(format!(
                    "players {:#04x} are claimed twice",
                    peer.players.0 & covered.0
                )));
            }
            if peer.connect == Connect::Dial && peer.address.is_none() {
                return Err(invalid("a peer we dial needs an address".to_string()));
            }
            covered = PlayerSlots(covered.0 | peer.players.0);
        }
        if covered != all {
            return Err(invalid(format!(
                "nobody controls players {:#04x}",
                all.0 & !covered.0
            )));
        }
        if settings.input_delay_min > settings.input_delay_max {
            return Err(invalid(
                "the input delay minimum is above its maximum".to_string(),
            ));
        }
        let start_state_blob = config
            .sends_start_state()
            .then(|| state_blob::compress(config.start_state.as_deref().unwrap_or_default()));
        if let Some(blob) = &start_state_blob {
            if blob.len() > MAX_BLOB_SIZE {
                return Err(invalid(format!(
                    "the start state compresses to {} bytes, over the {MAX_BLOB_SIZE}-byte blob limit",
                    blob.len()
                )));
            }
        }

        let mut session_config = SessionConfig::new();
        for slot in 0..players as u8 {
            session_config = session_config.player(if config.local_players.contains(slot) {
                PlayerKind::Local
            } else {
                PlayerKind::Remote
            });
        }
        let session = session_config
            .max_prediction(u32::from(settings.max_prediction))
            .frame_rate(f64::from(settings.frame_rate_millihertz) / 1000.0)
            .checksum_interval(u32::from(settings.checksum_interval))
            .input_delay(InputDelayConfig {
                min_frames: u32::from(settings.input_delay_min),
                max_frames: u32::from(settings.input_delay_max),
                dynamic: config.dynamic_input_delay,
                ..InputDelayConfig::default()
            })
            .initial_input_delay(config.initial_input_delay)
            .time_sync(config.time_sync)
            .build()?;

        let links: Vec<Link<A>> = config
            .peers
            .iter()
            .map(|peer| Link {
                address: peer.address,
                configured_address: peer.address,
                players: peer.players,
                connect: peer.connect,
                state: LinkState::AwaitingHello,
                first_player: PlayerId::new(peer.players.iter().next().unwrap_or(0)),
            })
            .collect();
        // The start-up host is the machine of player 0 (see `startup`).
        let startup = if links.is_empty() {
            StartUp::alone(now)
        } else if config.local_players.contains(0) {
            StartUp::host(
                links.len(),
                config.start_lead_ms,
                config.compensate_start_latency,
            )
        } else {
            let host_link = links
                .iter()
                .position(|link| link.players.contains(0))
                .unwrap_or(0);
            StartUp::member(host_link)
        };
        let mut netplay = NetplaySession {
            local_players: config.local_players,
            local_count: config.local_players.count(),
            handshakes: HandshakeLimiter::new(config.handshake_limit),
            config,
            session,
            endpoints: PeerTable::new(),
            links,
            spectators: Vec::new(),
            final_rows: FinalRows::default(),
            refusals: VecDeque::new(),
            last_refused: None,
            next_local_frame: Frame::ZERO,
            departures: [None; MAX_PLAYERS],
            events: VecDeque::with_capacity(32),
            waiting_since: None,
            left: false,
            pending_error: None,
            dropped_unknown: 0,
            now,
            startup,
            quality_report_interval_ms: 0,
            start_state_blob,
            start_state_wait: StartStateWait::NotAwaited,
        };
        netplay.quality_report_interval_ms =
            EndpointConfig::joiner(netplay.config.handshake(netplay.local_players))
                .quality_report_interval_ms;
        for index in 0..netplay.links.len() {
            let link = &netplay.links[index];
            if let (Connect::Dial, Some(address)) = (link.connect, link.address) {
                let handshake = netplay.config.handshake(netplay.local_players);
                let endpoint = PeerEndpoint::new(netplay.endpoint_config(None, handshake), now)?;
                netplay.endpoints.insert(address, endpoint);
                netplay.links[index].state = LinkState::Open;
            }
        }
        netplay.pull_session_events();
        Ok(netplay)
    }

    // ----- what the frontend calls every tick -----

    /// Takes in one datagram from `from`. Datagrams from unknown addresses
    /// are dropped and counted, except a Hello from a peer we accept (or a
    /// spectator, if allowed), which opens its link.
    pub fn handle_datagram(&mut self, now: Millis, from: A, datagram: &[u8]) {
        self.now = now;
        if self.endpoints.get(&from).is_some() {
            self.endpoints.handle_datagram(now, from, datagram);
        } else if !self.accept_hello(now, from, datagram) {
            self.dropped_unknown += 1;
            return;
        }
        self.pump_endpoint(from);
        self.decide_departures();
        self.pull_session_events();
    }

    /// Adds a local player's buttons for the current frame (used after the
    /// input delay; see `rollback::Session::add_local_input`).
    pub fn add_local_input(
        &mut self,
        player: PlayerId,
        buttons: Buttons,
    ) -> Result<Option<Frame>, NetplayError> {
        Ok(self.session.add_local_input(player, buttons)?)
    }

    /// Decides what the frontend does this tick, writing the requests into
    /// `requests` (cleared first). Carry out every request, whatever the outcome.
    pub fn advance_frame(
        &mut self,
        now: Millis,
        requests: &mut Vec<Request>,
    ) -> Result<FrameOutcome, NetplayError> {
        self.now = now;
        requests.clear();
        if let Some(error) = self.pending_error.take() {
            return Err(error);
        }
        if self.left {
            return Ok(FrameOutcome::Ended);
        }
        if self.session.state() != SessionState::Ended {
            let synchronized = self.session.state() == SessionState::Running;
            let waiting = match self.startup.begin(now, synchronized) {
                Begin::NotYet => Some(FrameOutcome::Synchronizing),
                Begin::In(in_ms) => Some(FrameOutcome::Starting { in_ms }),
                Begin::Now => {
                    self.on_started();
                    None
                }
                Begin::Running => None,
            };
            if let Some(outcome) = waiting {
                self.pull_session_events();
                return Ok(outcome);
            }
        }
        self.send_local_inputs()?;
        self.report_frame_lags();
        let outcome = self.session.advance_frame(requests);
        self.pull_session_events();
        Ok(outcome?)
    }

    /// Runs the endpoints' timers and hands every datagram due to `send`
    /// with its destination: inputs, acks, quality reports (with our frame
    /// lag), checksums, keep-alives.
    pub fn poll(&mut self, now: Millis, mut send: impl FnMut(A, &[u8])) {
        self.now = now;
        self.poll_startup(now);
        self.feed_spectators();
        while let Some((frame, checksum)) = self.session.next_checksum_report() {
            for index in 0..self.links.len() {
                if let Some(endpoint) = self.open_endpoint(index) {
                    endpoint.send_checksum(frame, checksum);
                }
            }
        }
        for (address, datagram) in self.refusals.drain(..) {
            send(address, &datagram);
        }
        self.endpoints.poll(now, &mut send);
        for index in 0..self.links.len() {
            if let Some(address) = self.links[index].address {
                self.pump_endpoint(address);
            }
        }
        for index in 0..self.spectators.len() {
            let address = self.spectators[index].address;
            self.pump_endpoint(address);
        }
        self.remove_closed_spectators();
        self.decide_departures();
        self.pull_session_events();
    }

    /// The start-up host's start state, once it arrived (see
    /// [`NetplayEvent::StartStateArrived`]): load it into the game before
    /// frame 0. Taking it lets this machine say Ready. `None` before it
    /// arrives, after it was taken, and when none comes.
    pub fn take_start_state(&mut self) -> Option<Vec<u8>> {
        if !matches!(self.start_state_wait, StartStateWait::Arrived(_)) {
            return None;
        }
        match std::mem::replace(&mut self.start_state_wait, StartStateWait::Taken) {
            StartStateWait::Arrived(state) => Some(state),
            _ => None,
        }
    }

    /// The start-up host's handshake (its core, content, core options and
    /// settings, which win), once synchronized with it; `None` on the host.
    pub fn host_handshake(&self) -> Option<&Handshake> {
        if self.local_players.contains(0) {
            return None;
        }
        let link = self.links.iter().find(|link| link.players.contains(0))?;
        self.endpoints.get(&link.address?)?.remote_handshake()
    }

    /// The next event to show or log, oldest first.
    pub fn next_event(&mut self) -> Option<NetplayEvent> {
        self.events.pop_front()
    }

    /// Every pending event, oldest first.
    pub fn events(&mut self) -> impl Iterator<Item = NetplayEvent> + '_ {
        self.events.drain(..)
    }

    /// The speed to run the frame clock at (1.0: nominal), from time sync.
    pub fn frames_per_second_factor(&self) -> f32 {
        self.session.time_sync_advice().speed()
    }

    /// Leaves the match: every peer is told, and the match ends here.
    pub fn leave(&mut self) {
        if self.left {
            return;
        }
        self.left = true;
        for (_, endpoint) in self.endpoints.iter_mut() {
            endpoint.disconnect(protocol::DisconnectReason::Quit);
        }
        self.events.push_back(NetplayEvent::MatchEnded {
            at_frame: self.session.current_frame(),
        });
    }

    // ----- passthroughs to the rollback session -----

    /// The slot to save the state of `frame` into after a `Save` request.
    pub fn state_slot_mut(&mut self, frame: Frame) -> Option<&mut StateSlot> {
        self.session.state_slot_mut(frame)
    }

    /// The state saved for `frame`, for a `Load` request.
    pub fn saved_state(&self, frame: Frame) -> Option<&StateSlot> {
        self.session.saved_state(frame)
    }

    /// Sets the local input delay now (within the agreed bounds).
    pub fn set_input_delay(&mut self, frames: u32) {
        self.session.set_input_delay(frames);
        self.pull_session_events();
    }

    /// The measured cost of one re-simulated frame (raises the delay when
    /// rollbacks would not fit in a frame).
    pub fn set_resimulation_cost(&mut self, cost: Duration) {
        self.session.set_resimulation_cost(cost);
    }

    /// The rollback session underneath, for reading.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The next frame to simulate.
    pub fn current_frame(&self) -> Frame {
        self.session.current_frame()
    }

    /// The last frame every player's input is known for.
    pub fn confirmed_frame(&self) -> Option<Frame> {
        self.session.confirmed_frame()
    }

    /// The settings every machine of the match agreed on.
    pub fn settings(&self) -> &SessionSettings {
        &self.config.settings
    }

    /// The last frame whose every input is final: confirmed here, and beyond
    /// the reach of any departure still to be decided (a departure fixes the
    /// leaver's input to `NONE` from the earliest frame any machine holds,
    /// which can rewrite inputs confirmed here). Spectators, replays and
    /// checksum logs take only final frames: they leave the session for good.
    ///
    /// With two players connected a departure ends the match, so nothing is
    /// re-simulated and confirmed is final. With more, every other machine
    /// `M` holds each player's inputs at least up to where `M`'s own inputs
    /// prove it had simulated (its input delay and prediction window behind
    /// them), and no further than any departure frame it announced.
    pub fn finalized_frame(&self) -> Option<Frame> {
        let confirmed = self.session.confirmed_frame()?;
        let connected = self.session.connected_players();
        if connected.len() < 3 {
            return Some(confirmed);
        }
        let settings = &self.config.settings;
        // One more than the window, for a machine stalled on the frame after
        // the last one it simulated.
        let behind = u32::from(settings.max_prediction) + u32::from(settings.input_delay_max) + 1;
        let mut end = confirmed.next();
        for link in &self.links {
            if link.state != LinkState::Open {
                continue;
            }
            let Some(endpoint) = link.address.and_then(|a| self.endpoints.get(&a)) else {
                continue;
            };
            if !endpoint.is_running() {
                continue;
            }
            let machine_inputs_end = link
                .players
                .iter()
                .map(|player| self.session.received_inputs_end(PlayerId::new(player)))
                .min()
                .unwrap_or(Frame::ZERO);
            let held_there = machine_inputs_end.saturating_back(behind);
            let announced = endpoint.remote_connection_status().disconnected_at;
            for player in connected.iter() {
                if link.players.contains(player.index() as u8) {
                    continue;
                }
                end = end.min(held_there);
                if let Some(at) = announced[player.index()] {
                    end = end.min(at);
                }
            }
        }
        end.previous()
    }

    /// Synchronizing until frame 0 runs, then running; ended once the match is over or we left it.
    pub fn state(&self) -> SessionState {
        if self.left {
            SessionState::Ended
        } else {
            self.session.state()
        }
    }

    /// The local input delay in force, in frames.
    pub fn input_delay(&self) -> u32 {
        self.session.input_delay()
    }

    /// Time sync's current advice: the speed factor to run at, or frames to stall.
    pub fn time_sync_advice(&self) -> TimeSyncAdvice {
        self.session.time_sync_advice()
    }

    /// Stats of a remote player (ping, frame advantage, rollbacks, delay, traffic).
    pub fn stats(&self, player: PlayerId) -> Option<NetplayStats> {
        if self.session.kind(player) != Some(PlayerKind::Remote) {
            return None;
        }
        let peer = self.session.peer_stats(player)?;
        let mut stats = NetplayStats {
            ping_ms: peer.ping_ms,
            frames_ahead: peer.frames_ahead,
            local_frame_lag: peer.local_frame_lag,
            remote_frame_lag: peer.remote_frame_lag,
            last_rollback: peer.last_rollback,
            max_rollback: peer.max_rollback,
            rollbacks: peer.rollbacks,
            local_input_delay: self.session.input_delay(),
            ..NetplayStats::default()
        };
        let link = self
            .links
            .iter()
            .find(|link| link.players.contains(player.index() as u8))?;
        if let Some(endpoint) = link.address.and_then(|a| self.endpoints.get(&a)) {
            let traffic = endpoint.stats();
            stats.ping_ms = traffic.ping_ms.or(stats.ping_ms);
            stats.bytes_sent = traffic.bytes_sent;
            stats.bytes_received = traffic.bytes_received;
            stats.datagrams_sent = traffic.datagrams_sent;
            stats.datagrams_received = traffic.datagrams_received;
        }
        Some(stats)
    }

    /// Datagrams dropped because they came from an address with no link.
    pub fn dropped_unknown(&self) -> u64 {
        self.dropped_unknown + self.endpoints.dropped_unknown()
    }

    /// Where this machine is in the start-up (see `netplay::startup`).
    pub fn start_phase(&self) -> StartPhase {
        self.startup.phase()
    }

    /// The moment frame 0 began here, once it has.
    pub fn started_at(&self) -> Option<Millis> {
        match self.startup.phase() {
            StartPhase::Started { at } => Some(at),
            _ => None,
        }
    }

    /// Spectators currently fed.
    pub fn spectator_count(&self) -> usize {
        self.spectators.iter().filter(|s| s.open).count()
    }

    /// Peer endpoints held: one per open or closing link or spectator.
    pub fn endpoint_count(&self) -> usize {
        self.endpoints.len()
    }

    /// Hellos dropped because their address made too many handshakes.
    pub fn refused_handshakes(&self) -> u64 {
        self.handshakes.refused()
    }

    // ----- start-up -----

    /// Sends the start-up's due messages (Ready, Start) and, on the host,
    /// decides the start moment once everyone is ready and measured.
    /// The host keeps resending after its own start, until every member has
    /// its Start.
    fn poll_startup(&mut self, now: Millis) {
        // A member with a start state to load is not ready before it did.
        let start_state_loaded = matches!(
            self.start_state_wait,
            StartStateWait::NotAwaited | StartStateWait::Taken
        );
        let synchronized = self.session.state() == SessionState::Running && start_state_loaded;
        let (startup, endpoints, links) = (&mut self.startup, &mut self.endpoints, &self.links);
        let decided = startup.poll(now, synchronized, |message| {
            let (StartMessage::Ready { link } | StartMessage::Start { link, .. }) = message;
            let Some(address) = links[link]
                .address
                .filter(|_| links[link].state == LinkState::Open)
            else {
                return;
            };
            let Some(endpoint) = endpoints.get_mut(&address) else {
                return;
            };
            match message {
                StartMessage::Ready { .. } => endpoint.send_ready(),
                StartMessage::Start { delay_ms, .. } => endpoint.send_start(delay_ms),
            }
        });
        if let Some(start_at) = decided {
            self.events.push_back(NetplayEvent::Starting {
                in_ms: start_at.saturating_sub(now),
            });
        }
    }

    /// Frame 0 begins: play-time report rates, and the frontend is told.
    fn on_started(&mut self) {
        let interval = self.quality_report_interval_ms;
        for (_, endpoint) in self.endpoints.iter_mut() {
            endpoint.set_quality_report_interval(interval);
        }
        self.events.push_back(NetplayEvent::Running);
    }

    // ----- links -----

    fn endpoint_config(
        &self,
        token: Option<protocol::SessionToken>,
        local: protocol::Handshake,
    ) -> EndpointConfig {
        let mut config = match token {
            Some(token) => EndpointConfig::host(token, local),
            None => EndpointConfig::joiner(local),
        };
        config.interrupt_after_ms = self.config.interrupt_after_ms;
        config.disconnect_after_ms = self.config.disconnect_after_ms;
        // The only blobs a player's link takes are the host's start state
        // and its state of a checkpoint that desynced (a frame number more).
        config.max_blob_size =
            checkpoint_state::max_checkpoint_blob_size(self.config.max_start_state_bytes)
                .min(MAX_BLOB_SIZE);
        if self.startup.is_host() && !self.startup.has_started() {
            config.quality_report_interval_ms = startup::STARTUP_QUALITY_INTERVAL_MS;
        }
        config
    }

    /// The endpoint of link `index`, if the link is open.
    fn open_endpoint(&mut self, index: usize) -> Option<&mut PeerEndpoint> {
        let link = &self.links[index];
        let endpoint = self.endpoints.get_mut(&link.address?)?;
        (link.state == LinkState::Open && endpoint.state() != ConnectionState::Disconnected)
            .then_some(endpoint)
    }

    /// A Hello from an address with no endpoint: opens the link of the
    /// peer it claims to be (or a spectator's). Returns whether it was taken.
    fn accept_hello(&mut self, now: Millis, from: A, datagram: &[u8]) -> bool {
        let Ok((_, Message::Hello(hello))) = codec::decode(datagram) else {
            return false;
        };
        if self.left || !self.handshakes.allow(now, from) {
            return false;
        }
        if hello.local_slots.is_empty() {
            if !self.config.accept_spectators {
                self.refuse(from, RejectReason::NotAccepting);
                return true;
            }
            // Closed ones are not counted: they are dropped within a few
            // polls, as soon as their goodbyes are out.
            if self.spectator_count() >= self.config.max_spectators {
                self.refuse(from, RejectReason::SpectatorsFull);
                return true;
            }
            // We relay every player's confirmed input to the spectator.
            let all = PlayerSlots((1u16 << self.session.players()) as u8 - 1);
            let mut handshake = self.config.handshake(all);
            // A spectator is sent no start state: it gets the savestate of
            // a recent final frame instead (see `feed_spectators`).
            handshake.start_state = false;
            let mut config = self.endpoint_config(Some(self.config.token), handshake);
            // A spectator only watches: it has nothing to send us in bulk.
            config.max_blob_size = 0;
            let Ok(mut endpoint) = PeerEndpoint::new(config, now) else {
                return false;
            };
            endpoint.handle_datagram(now, datagram);
            self.endpoints.insert(from, endpoint);
            self.spectators.push(Spectator {
                address: from,
                next_frame: Frame::ZERO,
                open: true,
                snapshot: Snapshot::Due,
            });
            self.events.push_back(NetplayEvent::SpectatorJoined);
            return true;
        }
        let Some(index) = self.links.iter().position(|link| {
            link.connect == Connect::Accept
                && link.state == LinkState::AwaitingHello
                && link.players == hello.local_slots
                && link.address.is_none_or(|address| address == from)
        }) else {
            self.refuse(from, RejectReason::NotAccepting);
            return true;
        };
        let handshake = self.config.handshake(self.local_players);
        let config = self.endpoint_config(Some(self.config.token), handshake);
        let Ok(mut endpoint) = PeerEndpoint::new(config, now) else {
            return false;
        };
        // The match may not wait for this link, but the peer needs our
        // inputs from the first frame.
        if self.next_local_frame > Frame::ZERO {
            let mut frame = Frame::ZERO;
            let mut row = [Buttons::NONE; MAX_PLAYERS];
            while frame < self.next_local_frame {
                if self.local_row(frame, &mut row).is_err()
                    || endpoint
                        .add_local_input(frame, &row[..self.local_count])
                        .is_err()
                {
                    return false;
                }
                frame = frame.next();
            }
        }
        endpoint.handle_datagram(now, datagram);
        self.endpoints.insert(from, endpoint);
        let link = &mut self.links[index];
        link.address = Some(from);
        link.state = LinkState::Open;
        true
    }

    /// Answers a Hello we open no endpoint for with a Reject saying why.
    /// The Reject carries no session token: the address is not trusted.
    fn refuse(&mut self, to: A, reason: RejectReason) {
        if self.refusals.len() >= MAX_PENDING_REFUSALS {
            return;
        }
        let header = Header {
            version: PROTOCOL_VERSION,
            session: SessionToken::UNKNOWN,
            sequence: Sequence(0),
        };
        let reject = Message::Reject {
            reason,
            host: self.config.handshake(self.local_players),
        };
        let mut datagram = Vec::new();
        if codec::encode(&header, &reject, &mut datagram).is_ok() {
            self.refusals.push_back((to, datagram));
        }
    }

    /// Forgets spectators whose connection is over (goodbyes sent), so
    /// that spectators coming and going leave nothing behind.
    fn remove_closed_spectators(&mut self) {
        let endpoints = &mut self.endpoints;
        self.spectators.retain(|spectator| {
            let closed = endpoints
                .get(&spectator.address)
                .is_none_or(PeerEndpoint::is_closed);
            if closed {
                endpoints.remove(&spectator.address);
            }
            !closed
        });
    }

    /// Every local player's confirmed input at `frame`, slots ascending.
    fn local_row(
        &self,
        frame: Frame,
        row: &mut [Buttons; MAX_PLAYERS],
    ) -> Result<(), NetplayError> {
        for (slot, player) in self.local_players.iter().enumerate() {
            let player = PlayerId::new(player);
            row[slot] = self
                .session
                .player_inputs(player, frame)?
                .next()
                .map_or(Buttons::NONE, |(_, buttons)| buttons);
        }
        Ok(())
    }

    /// Hands the local inputs confirmed since last time to every peer.
    fn send_local_inputs(&mut self) -> Result<(), NetplayError> {
        let mut end: Option<Frame> = None;
        for player in self.local_players.iter() {
            let player_end = self.session.received_inputs_end(PlayerId::new(player));
            end = Some(end.map_or(player_end, |e: Frame| e.min(player_end)));
        }
        let Some(end) = end else { return Ok(()) };
        let mut row = [Buttons::NONE; MAX_PLAYERS];
        while self.next_local_frame < end {
            let frame = self.next_local_frame;
            self.local_row(frame, &mut row)?;
            for index in 0..self.links.len() {
                let link = &self.links[index];
                let Some(address) = link.address.filter(|_| link.state == LinkState::Open) else {
                    continue;
                };
                if let Some(endpoint) = self.endpoints.get_mut(&address) {
                    if endpoint.state() != ConnectionState::Disconnected {
                        endpoint.add_local_input(frame, &row[..self.local_count])?;
                    }
                }
            }
            self.next_local_frame = frame.next();
        }
        Ok(())
    }

    /// Our frame lag towards each peer, for its quality reports. Taken just
    /// before the session advances, when the session takes its own sample:
    /// measured after the frame counter moved on, it would read one frame
    /// high and both sides would think themselves behind and speed up.
    fn report_frame_lags(&mut self) {
        for link in &self.links {
            let Some(address) = link.address.filter(|_| link.state == LinkState::Open) else {
                continue;
            };
            let lag = self
                .session
                .frame_lag_report(link.first_player)
                .unwrap_or(0);
            let lag = lag.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16;
            if let Some(endpoint) = self.endpoints.get_mut(&address) {
                endpoint.set_local_frame_advantage(lag);
            }
        }
    }

    /// Keeps the inputs of every frame final since last time, for spectators.
    fn extend_final_rows(&mut self) {
        let Some(finalized) = self.finalized_frame() else {
            return;
        };
        let from = self.final_rows.end();
        match self.session.confirmed_inputs(from) {
            Ok(inputs) => {
                for (_, row) in inputs.take_while(|&(frame, _)| frame <= finalized) {
                    self.final_rows.push(row);
                }
            }
            Err(_) => {
                // Not polled for longer than the session keeps inputs: start
                // over from the next final frame (spectators needing the
                // frames missed are dropped).
                self.final_rows = FinalRows {
                    start: finalized.next(),
                    rows: VecDeque::new(),
                };
            }
        }
    }

    /// The frame a spectator joining now starts from: the latest whose
    /// saved state (taken at its start) follows only final inputs and is
    /// still the one every machine has, and whose inputs we keep.
    fn snapshot_frame(&self) -> Option<Frame> {
        let mut frame = self.finalized_frame().map_or(Frame::ZERO, Frame::next);
        // Only frames already run have their state saved.
        frame = frame.min(self.session.current_frame().previous()?);
        if let Some(wrong) = self.session.pending_rollback() {
            frame = frame.min(wrong);
        }
        (frame >= self.final_rows.start).then_some(frame)
    }

    /// Sends each new spectator the savestate it starts from, and hands
    /// each the frames final since its last ones. A spectator never holds
    /// the players back: one that needs frames older than the backlog kept
    /// is dropped.
    fn feed_spectators(&mut self) {
        if self.spectators.is_empty() {
            if self.config.accept_spectators {
                self.extend_final_rows();
            }
            return;
        }
        self.extend_final_rows();
        let players = self.session.players();
        let snapshot_frame = self.snapshot_frame();
        // To a spectator the frame-advantage field of quality reports says
        // how far our present is past the frames it is fed, so that it can
        // tell how far behind live it watches.
        let lead = self.session.current_frame().number()
            - self
                .final_rows
                .end()
                .number()
                .min(self.session.current_frame().number());
        let lead = lead.min(i16::MAX as u32) as i16;
        for spectator in &mut self.spectators {
            if !spectator.open {
                continue;
            }
            let Some(endpoint) = self.endpoints.get_mut(&spectator.address) else {
                continue;
            };
            // Nothing in bulk to an address until it shows it got our
            // Welcome there: a Hello in someone else's name must not turn
            // us into a stream of inputs aimed at them.
            if !endpoint.is_running() || !endpoint.peer_knows_session() {
                continue;
            }
            endpoint.set_local_frame_advantage(lead);
            let mut drop = None;
            match spectator.snapshot {
                Snapshot::Due => {
                    let Some(frame) = snapshot_frame else {
                        continue;
                    };
                    let Some(state) = self.session.saved_state(frame) else {
                        continue;
                    };
                    let blob = checkpoint_state::compress_checkpoint(frame, state.data());
                    if blob.len() > MAX_BLOB_SIZE {
                        drop = Some(SpectatorDrop::StateTooLarge { bytes: blob.len() });
                    } else if endpoint.send_inputs_from(frame) && endpoint.send_blob(blob).is_ok() {
                        spectator.next_frame = frame;
                        spectator.snapshot = Snapshot::Sending;
                    }
                }
                // Still sending, or sent: either way a spectator whose first
                // frame left the backlog can never be fed, so it goes now
                // rather than holding its blob on the players' uplink.
                Snapshot::Sending if spectator.next_frame < self.final_rows.start => {
                    drop = Some(SpectatorDrop::FellBehind {
                        frames: SPECTATOR_BACKLOG_FRAMES as u32,
                    });
                }
                Snapshot::Sending => {}
                Snapshot::Delivered => {
                    if spectator.next_frame < self.final_rows.start {
                        drop = Some(SpectatorDrop::FellBehind {
                            frames: SPECTATOR_BACKLOG_FRAMES as u32,
                        });
                    } else {
                        // A late joiner catches up over several polls, as
                        // its acks make room, rather than overflowing the
                        // endpoint's queue.
                        let room =
                            MAX_UNACKED_FRAMES.saturating_sub(endpoint.stats().unacked_frames + 1);
                        let end = self.final_rows.end().min(spectator.next_frame + room);
                        while spectator.next_frame < end {
                            let frame = spectator.next_frame;
                            let Some(row) = self.final_rows.get(frame) else {
                                break;
                            };
                            if endpoint.add_local_input(frame, &row[..players]).is_err() {
                                break;
                            }
                            spectator.next_frame = frame.next();
                        }
                    }
                }
            }
            if let Some(reason) = drop {
                endpoint.disconnect(protocol::DisconnectReason::Quit);
                spectator.open = false;
                self.events
                    .push_back(NetplayEvent::SpectatorDropped { reason });
            }
        }
    }

    /// Routes every pending event of the endpoint at `address`.
    fn pump_endpoint(&mut self, address: A) {
        let link = self.links.iter().position(|l| l.address == Some(address));
        loop {
            let Some(event) = self
                .endpoints
                .get_mut(&address)
                .and_then(PeerEndpoint::next_event)
            else {
                return;
            };
            match link {
                Some(index) => self.on_link_event(index, event),
                None => self.on_spectator_event(address, event),
            }
        }
    }

    fn on_spectator_event(&mut self, address: A, event: NetEvent) {
        if let NetEvent::BlobDelivered { .. } = event {
            if let Some(spectator) = self
                .spectators
                .iter_mut()
                .find(|s| s.address == address && s.snapshot == Snapshot::Sending)
            {
                spectator.snapshot = Snapshot::Delivered;
            }
        }
        if let NetEvent::Disconnected { .. } = event {
            if let Some(spectator) = self
                .spectators
                .iter_mut()
                .find(|s| s.address == address && s.open)
            {
                spectator.open = false;
                self.events.push_back(NetplayEvent::SpectatorLeft);
            }
        }
    }

    fn on_link_event(&mut self, index: usize, event: NetEvent) {
        let link = self.links[index].clone();
        let players = player_set(link.players);
        match event {
            NetEvent::Synchronized {
                settings,
                remote_slots,
                ..
            } => {
                if remote_slots != link.players || settings != self.config.settings {
                    self.close_for_fault(index, PeerFault::WrongPlayersOrSettings);
                    return;
                }
                self.start_state_handshake(index);
                for player in link.players.iter() {
                    let result = self.session.peer_synchronized(PlayerId::new(player));
                    self.record(result);
                }
                self.events
                    .push_back(NetplayEvent::PeerSynchronized { players });
            }
            NetEvent::Rejected(rejection) => {
                let reason = rejection.reason;
                let refused_joiner = rejection.by_us && self.reopens(index);
                // A joiner retrying its Hello is refused again, but told of once.
                let repeated = refused_joiner
                    && link
                        .address
                        .is_some_and(|address| self.last_refused == Some((address, reason)));
                if !repeated {
                    self.events.push_back(NetplayEvent::Rejected(rejection));
                }
                if refused_joiner {
                    if let Some(address) = link.address {
                        self.last_refused = Some((address, reason));
                        self.refuse(address, reason);
                    }
                    self.reopen_slot(index);
                }
            }
            NetEvent::RemoteInput {
                player,
                frame,
                buttons,
            } => {
                if !link.players.contains(player) || self.departures[player as usize].is_some() {
                    return;
                }
                // Inputs are sent only once started: the member has begun.
                self.startup.on_start_acknowledged(index);
                let player = PlayerId::new(player);
                if let Err(error) = self.session.add_remote_input(player, frame, buttons) {
                    self.close_for_fault(index, PeerFault::RejectedInput { player, error });
                }
            }
            NetEvent::RemoteFrameAdvantage(lag) => {
                for player in link.players.iter() {
                    let result = self
                        .session
                        .set_remote_frame_lag(PlayerId::new(player), i32::from(lag));
                    self.record(result);
                }
            }
            NetEvent::Ping { rtt_ms, sample_ms } => {
                self.startup.on_round_trip(index, sample_ms);
                let rtt = Duration::from_millis(u64::from(rtt_ms));
                for player in link.players.iter() {
                    let result = self.session.set_ping(PlayerId::new(player), rtt);
                    self.record(result);
                }
            }
            NetEvent::RemoteChecksum { frame, checksum } => {
                let result = self
                    .session
                    .add_remote_checksum(link.first_player, frame, checksum);
                self.record(result);
            }
            NetEvent::RemoteSeesDisconnect { player, at } => {
                // A machine still playing dropped `player`: drop it too, so
                // that every machine announces its view and all agree.
                // Claims about our own players are its view, not ours: we
                // are here, and play on.
                let player_index = player as usize;
                if player_index < self.session.players() && !self.local_players.contains(player) {
                    let claim = self
                        .session
                        .check_disconnect_frame(PlayerId::new(player), at);
                    if let Err(SessionError::DisconnectTooFarBack {
                        player,
                        frame,
                        oldest,
                    }) = claim
                    {
                        let fault = PeerFault::ImpossibleDeparture {
                            player,
                            at_frame: frame,
                            oldest,
                        };
                        self.close_for_fault(index, fault);
                        return;
                    }
                    if let Some(leaver) = self.links.iter().position(|l| l.players.contains(player))
                    {
                        if self.links[leaver].state != LinkState::Closed {
                            self.close_link(leaver, DisconnectReason::TimedOut);
                        }
                    }
                }
            }
            NetEvent::NetworkInterrupted { silent_for_ms } => {
                self.events.push_back(NetplayEvent::NetworkInterrupted {
                    players,
                    silent_for_ms,
                });
            }
            NetEvent::NetworkResumed => {
                self.events
                    .push_back(NetplayEvent::NetworkResumed { players });
            }
            NetEvent::Disconnected {
                cause: DisconnectCause::Unacknowledged { frames },
            } => self.close_for_fault(index, PeerFault::StoppedAcknowledging { frames }),
            NetEvent::Disconnected { cause } => {
                let reason = match cause {
                    DisconnectCause::Timeout { .. } => DisconnectReason::TimedOut,
                    DisconnectCause::PeerLeft(protocol::DisconnectReason::Quit) => {
                        DisconnectReason::Quit
                    }
                    DisconnectCause::PeerLeft(protocol::DisconnectReason::Timeout) => {
                        DisconnectReason::TimedOut
                    }
                    DisconnectCause::PeerLeft(protocol::DisconnectReason::Desync) => {
                        DisconnectReason::Desynchronized
                    }
                    DisconnectCause::PeerLeft(_)
                    | DisconnectCause::Rejected(_)
                    | DisconnectCause::Unacknowledged { .. } => DisconnectReason::ProtocolViolation,
                };
                self.close_link(index, reason);
            }
            NetEvent::PeerReady => self.startup.on_peer_ready(index),
            NetEvent::StartRequested { delay_ms } => {
                if let Some(start_at) = self.startup.on_start_requested(self.now, index, delay_ms) {
                    self.events.push_back(NetplayEvent::Starting {
                        in_ms: start_at - self.now,
                    });
                }
            }
            NetEvent::StartAcknowledged => self.startup.on_start_acknowledged(index),
            NetEvent::BlobReceived { bytes, .. } if self.awaits_start_state_on(index) => {
                match state_blob::decompress(&bytes, self.config.max_start_state_bytes) {
                    Ok(state) => {
                        self.events
                            .push_back(NetplayEvent::StartStateArrived { bytes: state.len() });
                        self.start_state_wait = StartStateWait::Arrived(state);
                    }
                    Err(error) => self.close_for_fault(index, PeerFault::BadStartState(error)),
                }
            }
            NetEvent::BlobRefused { size, .. } if self.awaits_start_state_on(index) => {
                let error = StateBlobError::TooLarge {
                    size: size as usize,
                    max: state_blob::max_blob_size(self.config.max_start_state_bytes)
                        .min(MAX_BLOB_SIZE),
                };
                self.close_for_fault(index, PeerFault::BadStartState(error));
            }
            NetEvent::BlobReceived { bytes, .. } if self.links[index].players.contains(0) => {
                match checkpoint_state::decompress_checkpoint(
                    &bytes,
                    self.config.max_start_state_bytes,
                ) {
                    Ok((frame, state)) => self
                        .events
                        .push_back(NetplayEvent::HostCheckpointState { frame, state }),
                    Err(error) => self.close_for_fault(index, PeerFault::BadCheckpointState(error)),
                }
            }
            NetEvent::BlobReceived { .. }
            | NetEvent::BlobDelivered { .. }
            | NetEvent::BlobRefused { .. } => {}
        }
    }

    /// Link `index` finished its handshake: the host sends the member its
    /// start state; a member learns from the host's handshake whether one
    /// comes.
    fn start_state_handshake(&mut self, index: usize) {
        let from_host = self.links[index].players.contains(0);
        if let Some(blob) = self.start_state_blob.clone() {
            if let Some(endpoint) = self.open_endpoint(index) {
                // The first blob on a fresh link: never over the cap (checked
                // in `new`) nor behind another.
                let sent = endpoint.send_blob(blob);
                debug_assert!(sent.is_ok(), "{sent:?}");
            }
        } else if from_host && self.start_state_wait == StartStateWait::NotAwaited {
            let announced = self
                .open_endpoint(index)
                .and_then(|endpoint| endpoint.remote_handshake())
                .is_some_and(|handshake| handshake.start_state);
            if announced {
                self.start_state_wait = StartStateWait::Awaited;
            }
        }
    }

    /// The host answers a desync with `player`'s machine: sends it our state
    /// of checkpoint `frame` (as saved at the start of that frame) so that it
    /// can name the bytes that differ. Returns whether it went out: not to a
    /// closed link, nor while another blob is still on its way (the member
    /// diagnoses one checkpoint at a time). Only the start-up host sends.
    pub fn send_checkpoint_state(&mut self, player: PlayerId, frame: Frame, state: &[u8]) -> bool {
        if !self.startup.is_host() || state.len() > self.config.max_start_state_bytes {
            return false;
        }
        let Some(index) = self
            .links
            .iter()
            .position(|link| link.players.contains(player.index() as u8))
        else {
            return false;
        };
        let blob = checkpoint_state::compress_checkpoint(frame, state);
        self.open_endpoint(index)
            .is_some_and(|endpoint| endpoint.send_blob(blob).is_ok())
    }

    /// Whether link `index` is the host's and its start state is awaited.
    fn awaits_start_state_on(&self, index: usize) -> bool {
        self.start_state_wait == StartStateWait::Awaited && self.links[index].players.contains(0)
    }

    /// The peer of link `index` did something no honest peer does: only its
    /// link pays (its players leave as on a disconnect), never this machine
    /// or the other links.
    fn close_for_fault(&mut self, index: usize, fault: PeerFault) {
        if self.links[index].state == LinkState::Closed {
            return;
        }
        self.events.push_back(NetplayEvent::PeerFault {
            players: player_set(self.links[index].players),
            fault,
        });
        self.close_link(index, DisconnectReason::ProtocolViolation);
    }

    /// The link is over: its players leave once every machine still
    /// playing has said how far it holds their inputs.
    fn close_link(&mut self, index: usize, reason: DisconnectReason) {
        if self.links[index].state == LinkState::Closed {
            return;
        }
        if self.reopens(index) {
            // Nothing was played with this joiner: another may take its slot.
            if let Some(endpoint) = self.open_endpoint(index) {
                endpoint.disconnect(protocol::DisconnectReason::ProtocolError);
            }
            self.events.push_back(NetplayEvent::JoinerLeftBeforeStart {
                players: player_set(self.links[index].players),
            });
            self.reopen_slot(index);
            return;
        }
        let link = &mut self.links[index];
        link.state = LinkState::Closed;
        let players = link.players;
        self.startup.on_link_closed(index);
        if let Some(endpoint) = link.address.and_then(|a| self.endpoints.get_mut(&a)) {
            endpoint.disconnect(match reason {
                DisconnectReason::ProtocolViolation => protocol::DisconnectReason::ProtocolError,
                _ => protocol::DisconnectReason::Quit,
            });
        }
        for player in players.iter() {
            let view = self.session.received_inputs_end(PlayerId::new(player));
            self.departures[player as usize] = Some(Departure {
                view,
                reason,
                decided: false,
            });
            for other in &self.links {
                if let Some(endpoint) = other
                    .address
                    .filter(|_| other.state == LinkState::Open)
                    .and_then(|a| self.endpoints.get_mut(&a))
                {
                    endpoint.set_local_connection_status(player, Some(view));
                }
            }
        }
    }

    /// Whether link `index` goes back to waiting for a joiner when it fails:
    /// a link we accept, before the start moment was decided.
    fn reopens(&self, index: usize) -> bool {
        self.links[index].connect == Connect::Accept
            && self.startup.phase() == StartPhase::Waiting
            && !self.left
    }

    /// Link `index` waits for a Hello again, as when the session began: its
    /// endpoint is dropped (a refusal already queued still goes out) and the
    /// start-up forgets what it measured of that joiner.
    fn reopen_slot(&mut self, index: usize) {
        let link = &mut self.links[index];
        if let Some(address) = link.address.take() {
            self.endpoints.remove(&address);
        }
        link.address = link.configured_address;
        link.state = LinkState::AwaitingHello;
        self.startup.on_link_reopened(index);
    }

    /// Drops each leaving player whose frame every machine still playing
    /// has announced, at the earliest announced frame.
    fn decide_departures(&mut self) {
        for player in 0..self.session.players() {
            let Some(departure) = self.departures[player] else {
                continue;
            };
            if departure.decided {
                continue;
            }
            let mut at = departure.view;
            // The link whose announcement set `at`, if not our own view.
            let mut earliest_claimer = None;
            let mut everyone_said = true;
            for (index, link) in self.links.iter().enumerate() {
                if link.state != LinkState::Open || link.players.contains(player as u8) {
                    continue;
                }
                let Some(endpoint) = link.address.and_then(|a| self.endpoints.get(&a)) else {
                    continue;
                };
                if !endpoint.is_running() {
                    continue;
                }
                match endpoint.remote_connection_status().disconnected_at[player] {
                    Some(frame) if frame < at => {
                        at = frame;
                        earliest_claimer = Some(index);
                    }
                    Some(_) => {}
                    None => everyone_said = false,
                }
            }
            if !everyone_said {
                continue;
            }
            if let Some(departure) = &mut self.departures[player] {
                departure.decided = true;
            }
            let result =
                self.session
                    .disconnect_player(PlayerId::new(player as u8), at, departure.reason);
            if let Err(SessionError::DisconnectTooFarBack {
                player,
                frame,
                oldest,
            }) = result
            {
                if let Some(claimer) = earliest_claimer {
                    // The state ring is sized so that no machine still
                    // playing can announce a frame this old (see
                    // `rollback::session`): the claimer lies or is broken.
                    // Its link closes and the others decide without it.
                    if let Some(departure) = &mut self.departures[player.index()] {
                        departure.decided = false;
                    }
                    let fault = PeerFault::ImpossibleDeparture {
                        player,
                        at_frame: frame,
                        oldest,
                    };
                    self.close_for_fault(claimer, fault);
                    self.decide_departures();
                    return;
                }
                // Our own view is too old (not seen in the cases analysed):
                // following the others is impossible, so leave rather than
                // fail every tick.
                self.events.push_back(NetplayEvent::DepartureTooFarBack {
                    player,
                    at_frame: frame,
                    oldest,
                });
                self.leave();
                return;
            }
            self.record(result);
        }
    }

    /// Keeps the first error of a call that cannot return one, for the next
    /// `advance_frame`.
    fn record(&mut self, result: Result<(), crate::rollback::SessionError>) {
        if let Err(error) = result {
            self.pending_error.get_or_insert(error.into());
        }
    }

    /// Turns the rollback session's events into netplay events.
    fn pull_session_events(&mut self) {
        while let Some(event) = self.session.next_event() {
            let event = match event {
                SessionEvent::Synchronizing => NetplayEvent::Synchronizing,
                // Running is told when frame 0 begins (`on_started`).
                SessionEvent::Running if !self.startup.has_started() => continue,
                SessionEvent::Running => NetplayEvent::Running,
                SessionEvent::WaitingForPeer { players, ticks } => {
                    if ticks == 1 || self.waiting_since.is_none() {
                        self.waiting_since = Some(self.now);
                    }
                    NetplayEvent::WaitingForPeer {
                        players,
                        waited_ms: self.now - self.waiting_since.unwrap_or(self.now),
                    }
                }
                SessionEvent::StoppedWaiting { .. } => NetplayEvent::StoppedWaiting {
                    waited_ms: self
                        .waiting_since
                        .take()
                        .map_or(0, |since| self.now - since),
                },
                SessionEvent::TimeSync {
                    advice,
                    frames_ahead,
                } => NetplayEvent::TimeSync {
                    advice,
                    frames_ahead,
                },
                SessionEvent::InputDelayChanged { from, to } => {
                    NetplayEvent::InputDelayChanged { from, to }
                }
                SessionEvent::Desync {
                    frame,
                    player,
                    local,
                    remote,
                } => NetplayEvent::Desync {
                    frame,
                    player,
                    local,
                    remote,
                },
                SessionEvent::Disconnected {
                    player,
                    at_frame,
                    reason,
                } => NetplayEvent::Disconnected {
                    player,
                    at_frame,
                    reason,
                },
                SessionEvent::MatchEnded { at_frame } => {
                    for spectator in &mut self.spectators {
                        if let Some(endpoint) = self.endpoints.get_mut(&spectator.address) {
                            endpoint.disconnect(protocol::DisconnectReason::Quit);
                        }
                        spectator.open = false;
                    }
                    NetplayEvent::MatchEnded { at_frame }
                }
            };
            self.events.push_back(event);
        }
    }
}

fn invalid(message: String) -> NetplayError {
    NetplayError::InvalidConfig(message)
}

fn player_set(slots: PlayerSlots) -> PlayerSet {
    slots.iter().map(PlayerId::new).collect()
}
