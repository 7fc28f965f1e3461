//! The glue between one rollback [`Session`] and the protocol endpoints of
//! the other machines, sans-IO: datagrams and `now` in, datagrams, requests
//! and events out. The session's concerns each have a file of `impl` blocks:
//! links (Hellos, refusals, endpoint events), inputs, the start-up, blobs
//! (start and checkpoint states), spectators and departures.

mod blobs;
mod chat;
mod departures;
mod inputs;
mod links;
mod rejoin;
mod restart;
mod roster;
mod setup;
mod spectator_checks;
mod spectators;
mod start;
mod unproven;
mod watchdog;

pub use unproven::{MAX_UNPROVEN, UNPROVEN_FOR_MS};
pub use watchdog::HEARD_WITHIN_MS;

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use super::chat::ChatOutbox;
use super::config::{Connect, NetplayConfig};
use super::events::{LinkFingerprints, NetplayError, NetplayEvent, NetplayStats};
use super::startup::{Begin, StartPhase, StartUp};
use crate::input::Buttons;
use crate::protocol::{
    self, CookieJar, EndpointConfig, Handshake, HandshakeLimiter, Millis, PeerEndpoint, PeerTable,
    PlayerSlots, RejectReason, RoomGuesses, SessionSettings,
};
use crate::rollback::{
    Event as SessionEvent, Frame, FrameOutcome, PlayerId, PlayerKind, PlayerSet, Request, Session,
    SessionState, StateSlot, TimeSyncAdvice, MAX_PLAYERS,
};
use blobs::StartStateWait;
pub(crate) use blobs::DAMAGED;
use departures::Departure;
use rejoin::Rejoins;
use restart::Resume;
use spectator_checks::SpectatorChecks;
use spectators::{FinalRows, Spectator};

pub use restart::RejoinTicket;
pub use spectators::SPECTATOR_BACKLOG_FRAMES;

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
    /// Placed by [`NetplaySession::place_roster_peer`]: until its handshake
    /// is done, a later path for its slot may move it (a room's peer that
    /// claimed the slot and found a path first cannot hold the place).
    placed: bool,
    /// The latest frame the peer sent its checksum of: it held every
    /// player's inputs through it, so it announces no departure before.
    checksummed: Option<Frame>,
    /// Its chat lines as one sender's (from its first line), unless it is
    /// the host's, which relays its spectators' lines.
    chat_limit: Option<crate::protocol::ChatRateLimit>,
}

impl<A> Link<A> {
    /// Whether the link waits for a joiner's Hello.
    fn is_open_slot(&self) -> bool {
        self.connect == Connect::Accept && self.state == LinkState::AwaitingHello
    }
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
pub struct NetplaySession<A: Ord + Copy + std::hash::Hash> {
    config: NetplayConfig<A>,
    session: Session,
    endpoints: PeerTable<A>,
    links: Vec<Link<A>>,
    spectators: Vec<Spectator<A>>,
    /// The final inputs spectators are fed from (kept only when they are accepted).
    final_rows: FinalRows,
    /// Our checkpoint checksums for spectators, and those whose game differed.
    spectator_checks: SpectatorChecks<A>,
    /// Handshakes per address, for every Hello that would open a link.
    handshakes: HandshakeLimiter<A>,
    /// The cookies a Hello must carry before anything is kept for it.
    cookies: CookieJar,
    /// Peers that echoed a cookie but have not proven they hold their key.
    unproven: BTreeMap<A, unproven::Unproven>,
    /// The room-code guesses we may still answer (met by room code only).
    room_guesses: RoomGuesses,
    /// Rejects and cookies to send to addresses we opened no endpoint for.
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
    /// The last final frame and since when frames were asked for without
    /// another becoming final.
    progress: Option<(Option<Frame>, Millis)>,
    dropped_unknown: u64,
    now: Millis,
    startup: StartUp,
    /// The quality-report interval once play begins (the start-up measures faster).
    quality_report_interval_ms: Millis,
    /// The frames our pictures run ahead, told to the peers.
    run_ahead: u8,
    /// The host's start state as sent (compressed), if we send one.
    start_state_blob: Option<Vec<u8>>,
    start_state_wait: StartStateWait,
    /// When the start-up host last sent its roster.
    roster_sent_at: Option<Millis>,
    /// New addresses of the peers, challenged to prove who they are.
    rejoins: Rejoins<A>,
    /// Whether this machine restarted, and how far it resumed.
    resume: Resume,
    /// Our own chat limit.
    chat: ChatOutbox,
}

impl<A: Ord + Copy + std::hash::Hash> NetplaySession<A> {
    /// Checks the configuration, builds the rollback session and opens the
    /// links we dial (they send Hello at the first `poll`).
    pub fn new(config: NetplayConfig<A>, now: Millis) -> Result<Self, NetplayError> {
        setup::check_players(&config)?;
        let start_state_blob = setup::start_state_blob(&config)?;
        let session = setup::rollback_session(&config)?;
        let links = setup::links(&config);
        // A restarted machine resumes a match long begun: no start-up.
        let startup = match config.resume {
            Some(_) => StartUp::alone(now),
            None => setup::startup(&config, &links, now),
        };
        let quality_report_interval_ms =
            EndpointConfig::joiner(config.handshake(config.local_players))
                .quality_report_interval_ms;
        let rejoins = Rejoins::new(config.rejoin_seed);
        let mut netplay = NetplaySession {
            local_players: config.local_players,
            local_count: config.local_players.count(),
            handshakes: HandshakeLimiter::new(config.handshake_limit),
            cookies: CookieJar::new(&config.secret),
            unproven: BTreeMap::new(),
            room_guesses: RoomGuesses::new(config.room_guess_limit, now),
            config,
            session,
            endpoints: PeerTable::new(),
            links,
            spectators: Vec::new(),
            final_rows: FinalRows::default(),
            spectator_checks: SpectatorChecks::default(),
            refusals: VecDeque::new(),
            last_refused: None,
            next_local_frame: Frame::ZERO,
            departures: [None; MAX_PLAYERS],
            events: VecDeque::with_capacity(32),
            waiting_since: None,
            left: false,
            pending_error: None,
            progress: None,
            dropped_unknown: 0,
            now,
            startup,
            quality_report_interval_ms,
            run_ahead: 0,
            start_state_blob,
            start_state_wait: StartStateWait::NotAwaited,
            roster_sent_at: None,
            rejoins,
            resume: Resume::No,
            chat: ChatOutbox::new(now),
        };
        match netplay.config.resume {
            Some(host_key) => netplay.open_resumed_link(now, host_key)?,
            None => netplay.open_dialed_links(now)?,
        }
        netplay.pull_session_events();
        Ok(netplay)
    }

    /// Opens the links we dial: they send Hello at the first `poll`.
    fn open_dialed_links(&mut self, now: Millis) -> Result<(), NetplayError> {
        for index in 0..self.links.len() {
            self.open_dialed_link(now, index)?;
        }
        Ok(())
    }

    /// Opens link `index` if we dial it and know where it is.
    fn open_dialed_link(&mut self, now: Millis, index: usize) -> Result<(), NetplayError> {
        let link = &self.links[index];
        if let (Connect::Dial, Some(address), LinkState::AwaitingHello) =
            (link.connect, link.address, link.state)
        {
            let handshake = self.config.handshake(self.local_players);
            let endpoint = PeerEndpoint::new(self.endpoint_config(None, handshake), now)?;
            self.endpoints.insert(address, endpoint);
            self.links[index].state = LinkState::Open;
        }
        Ok(())
    }

    // ----- what the frontend calls every tick -----

    /// Takes in one datagram from `from`. Datagrams from unknown addresses
    /// are dropped and counted, except a Hello from a peer we accept (or a
    /// spectator, if allowed), which opens its link, and a player's from a
    /// new address (see `rejoin`).
    pub fn handle_datagram(&mut self, now: Millis, from: A, datagram: &[u8]) {
        self.now = now;
        let taken = if self.endpoints.get(&from).is_some() {
            self.endpoints.handle_datagram(now, from, datagram);
            true
        } else {
            self.unproven_datagram(now, from, datagram)
                || self.accept_hello(now, from, datagram)
                || self.rejoin_from(now, from, datagram)
        };
        if !taken {
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
        // Before the state to resume from arrived, no frame is known yet.
        if self.resume == Resume::AwaitingState {
            return Ok(None);
        }
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
        if self.awaits_resume() {
            self.pull_session_events();
            return Ok(FrameOutcome::Synchronizing);
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
        if self.stalled(now) {
            return Ok(FrameOutcome::Ended);
        }
        self.send_local_inputs()?;
        self.report_frame_lags();
        let outcome = self.session.advance_frame(requests);
        self.pull_session_events();
        Ok(outcome?)
    }

    /// Carries out a pending rollback without running a new frame (see
    /// `rollback::Session::settle`), once this machine runs no more frames;
    /// nothing after we left. Returns the frames re-simulated.
    pub fn settle(
        &mut self,
        now: Millis,
        requests: &mut Vec<Request>,
    ) -> Result<u32, NetplayError> {
        self.now = now;
        requests.clear();
        if self.left {
            return Ok(0);
        }
        Ok(self.session.settle(requests)?)
    }

    /// Runs the endpoints' timers and hands every datagram due to `send`
    /// with its destination: inputs, acks, quality reports (with our frame
    /// lag), checksums, keep-alives.
    pub fn poll(&mut self, now: Millis, mut send: impl FnMut(A, &[u8])) {
        self.now = now;
        self.poll_startup(now);
        self.poll_roster(now);
        self.feed_spectators();
        self.session.record_final_checkpoints();
        while let Some((frame, checksum)) = self.session.next_checksum_report() {
            for index in 0..self.links.len() {
                if let Some(endpoint) = self.open_endpoint(index) {
                    endpoint.send_checksum(frame, checksum);
                }
            }
            self.send_checksum_to_spectators(frame, checksum);
        }
        for (address, datagram) in self.refusals.drain(..) {
            send(address, &datagram);
        }
        self.poll_unproven(now, &mut send);
        self.send_rejoin_challenges(now, &mut send);
        self.send_resume_states();
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

    /// The start-up host's handshake (its core, content, core options and
    /// settings, which win), once synchronized with it; `None` on the host.
    pub fn host_handshake(&self) -> Option<&Handshake> {
        if self.local_players.contains(0) {
            return None;
        }
        let link = self.links.iter().find(|link| link.players.contains(0))?;
        self.endpoints.get(&link.address?)?.remote_handshake()
    }

    /// The fingerprint of this machine's public key (which a peer pins).
    pub fn key_fingerprint(&self) -> protocol::Fingerprint {
        protocol::Fingerprint::of_key(&self.config.secret.public_key())
    }

    /// The keys of every link whose handshake is done, for the players to
    /// compare: its peer's players, the link's fingerprint and the
    /// fingerprint of the peer's public key (see `protocol::Fingerprint`).
    pub fn link_fingerprints(&self) -> Vec<LinkFingerprints> {
        self.links
            .iter()
            .filter_map(|link| {
                let endpoint = self.endpoints.get(&link.address?)?;
                endpoint.remote_handshake()?;
                Some(LinkFingerprints {
                    players: link.players,
                    link: endpoint.fingerprint()?,
                    peer_key: endpoint.peer_key()?,
                })
            })
            .collect()
    }

    /// Why the start-up host refused our Hello, with the handshake of its
    /// Reject (its settings win), if it did.
    pub fn host_refusal(&self) -> Option<(RejectReason, &Handshake)> {
        let link = self.links.iter().find(|link| link.players.contains(0))?;
        self.endpoints.get(&link.address?)?.refusal()
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
        self.leave_because(protocol::DisconnectReason::Quit);
    }

    /// Leaves the match telling every peer `reason`.
    fn leave_because(&mut self, reason: protocol::DisconnectReason) {
        if self.left {
            return;
        }
        self.left = true;
        for (_, endpoint) in self.endpoints.iter_mut() {
            endpoint.disconnect(reason);
        }
        self.events.push_back(NetplayEvent::MatchEnded {
            at_frame: self.session.current_frame(),
        });
    }

    /// Whether every link is closed with its goodbyes delivered (or given
    /// up on): after [`NetplaySession::leave`], nothing more needs sending.
    pub fn all_links_closed(&self) -> bool {
        self.endpoints.all_closed()
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

    /// Says how many frames this machine's pictures run ahead: the peers
    /// are told with the input delay, to show every player's.
    pub fn set_run_ahead(&mut self, frames: u8) {
        self.run_ahead = frames;
    }

    /// This machine's run-ahead in frames.
    pub fn run_ahead(&self) -> u8 {
        self.run_ahead
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
            stats.remote_input_delay = traffic.remote_input_delay.map(u32::from);
            stats.remote_run_ahead = traffic.remote_run_ahead.map(u32::from);
        }
        Some(stats)
    }

    /// Tags `datagram` (encoded, untagged) as the link to `to` tags what it
    /// sends (a handshake, such as a cookie or a Reject to an address with
    /// no link, as every handshake is); false when there is no such link
    /// or it has no keys yet. For tests that play a machine breaking the
    /// protocol's rules.
    pub fn seal_for(&self, to: A, datagram: &mut Vec<u8>) -> bool {
        let kind = datagram.get(3).copied().unwrap_or(0);
        match self.endpoints.get(&to).or(self.unproven_endpoint(to)) {
            Some(endpoint) => endpoint.seal(datagram),
            None if protocol::codec::is_handshake_kind(kind) => {
                protocol::auth::seal_handshake(datagram);
                true
            }
            None => false,
        }
    }

    /// Datagrams dropped because they came from an address with no link.
    pub fn dropped_unknown(&self) -> u64 {
        self.dropped_unknown + self.endpoints.dropped_unknown()
    }

    /// Every datagram dropped for what it was: from an address with no
    /// link, or on a link (see [`protocol::EndpointStats::dropped_bad`]).
    pub fn dropped_datagrams(&self) -> u64 {
        let on_links: u64 = self
            .endpoints
            .iter()
            .map(|(_, endpoint)| endpoint.stats().dropped_bad())
            .sum();
        self.dropped_unknown() + on_links
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

    /// Peer endpoints held: one per open or closing link or spectator.
    pub fn endpoint_count(&self) -> usize {
        self.endpoints.len()
    }

    /// Hellos dropped because their address made too many handshakes.
    pub fn refused_handshakes(&self) -> u64 {
        self.handshakes.refused()
    }

    /// Hellos of a room left unanswered because too many of its
    /// exchanges failed (see `protocol::room_guesses`).
    pub fn refused_room_guesses(&self) -> u64 {
        self.room_guesses.refused()
    }

    /// Room-code exchanges that may still fail at `now` before Hellos go
    /// unanswered.
    pub fn room_guesses_left(&mut self, now: Millis) -> u32 {
        self.room_guesses.left(now)
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
                    self.close_spectators();
                    NetplayEvent::MatchEnded { at_frame }
                }
            };
            self.events.push_back(event);
        }
    }
}

fn player_set(slots: PlayerSlots) -> PlayerSet {
    slots.iter().map(PlayerId::new).collect()
}
