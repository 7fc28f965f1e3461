//! A spectator's side of a match, sans-IO: it says Hello with no players,
//! receives the host's savestate of a recent final frame (lz4, by blob
//! transfer), then every player's final inputs from that frame on, and plays
//! them through a [`JitterBuffer`]. It sends only acks and keep-alives: the
//! players never wait for it.

use std::collections::VecDeque;

use super::chat::{from_seat, ChatOutbox, ChatRefused, ChatShown, SPECTATOR_SEAT};
use super::checkpoint_state;
use super::jitter::{Due, JitterBuffer, JitterConfig, Playback};
use super::{LinkFingerprints, NetplayError};
use crate::checksum::Checksum;
use crate::encoding::StateBlobError;
use crate::input::{Buttons, MAX_PLAYERS};
use crate::protocol::{
    DisconnectCause, EndpointConfig, Event as NetEvent, Handshake, LinkSecret, Millis,
    PeerEndpoint, PlayerSlots, Rejection, RoomPassword, SessionSettings, MAX_BLOB_SIZE,
};
use crate::rollback::desync::{DesyncDetector, Mismatch};
use crate::rollback::{Frame, PlayerId};

/// Frames received but not played kept at most: beyond, the host sends
/// faster than any match runs, and the link is closed.
pub const MAX_BUFFERED_FRAMES: usize = 2 * super::session::SPECTATOR_BACKLOG_FRAMES;

/// What a spectator needs to say Hello.
#[derive(Clone, Debug)]
pub struct SpectatorConfig<A> {
    /// The host's address.
    pub host: A,
    /// Our core, version and content hash: the host refuses others.
    pub core_name: String,
    /// The core's version.
    pub core_version: String,
    /// xxh3 of the content (ROM).
    pub content_hash: u64,
    /// Our proposal; the host's settings win (its frame rate must match ours).
    pub settings: SessionSettings,
    /// Our x25519 secret for the link's keys: drawn by the caller for real
    /// watching, [`LinkSecret::well_known`] by default.
    pub secret: LinkSecret,
    /// The room code the spectator found the host by, if it did: it
    /// authenticates the link's keys.
    pub room_password: Option<RoomPassword>,
    /// Silence after which the host is reported interrupted.
    pub interrupt_after_ms: Millis,
    /// Silence after which the host is given up.
    pub disconnect_after_ms: Millis,
    /// No state and no new frame from a host heard all along for this
    /// long ends the watch ([`SpectatorEvent::Stalled`]).
    pub stall_after_ms: Millis,
    /// Added to `stall_after_ms` once watching: the players may be
    /// waiting that long for one of them to come back (their rejoin window).
    pub rejoin_window_ms: Millis,
    /// The largest savestate accepted, expanded.
    pub max_state_bytes: usize,
    /// Bounds of the jitter buffer's delay and catch-up (its frame rate is
    /// replaced by the host's).
    pub jitter: JitterConfig,
}

impl<A> SpectatorConfig<A> {
    /// A spectator of the host at `host` with the default timings and limits.
    pub fn new(
        host: A,
        core_name: impl Into<String>,
        core_version: impl Into<String>,
        content_hash: u64,
        settings: SessionSettings,
    ) -> Self {
        SpectatorConfig {
            host,
            core_name: core_name.into(),
            core_version: core_version.into(),
            content_hash,
            settings,
            secret: LinkSecret::well_known(),
            room_password: None,
            interrupt_after_ms: 750,
            disconnect_after_ms: 5000,
            stall_after_ms: 10_000,
            rejoin_window_ms: 0,
            max_state_bytes: 16 << 20,
            jitter: JitterConfig::new(f64::from(settings.frame_rate_millihertz) / 1000.0),
        }
    }
}

/// What happened, for the frontend to show or act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpectatorEvent {
    /// The host welcomed us: a match of `players` players.
    Welcomed {
        /// Players in the match.
        players: usize,
    },
    /// The host refused us (another core, content, version; or full).
    Rejected(Rejection),
    /// The savestate arrived: take it ([`SpectatorSession::take_state`]) and
    /// load it; frames play from `frame` on.
    StateArrived {
        /// The frame whose start the state is.
        frame: Frame,
        /// Its size, expanded.
        bytes: usize,
    },
    /// The host's savestate could not be read: we left.
    BadState(StateBlobError),
    /// Nothing heard from the host for a while.
    NetworkInterrupted {
        /// How long.
        silent_for_ms: Millis,
    },
    /// The host is heard again.
    NetworkResumed,
    /// The link is over (the match ended, the host left or was lost): what
    /// was received plays out.
    HostGone(DisconnectCause),
    /// The host sent more frames than anyone can be behind: we left.
    Flooded,
    /// Our core refused to load a state the host sent (what it said): we
    /// left.
    StateRefused(String),
    /// Our checksum of checkpoint `frame` differs from the host's (which
    /// the players agree on): our game diverged. Our checksum went to the
    /// host, which answers with its state of the frame to repair from.
    Desync {
        /// The checkpoint frame.
        frame: Frame,
        /// Our checksum of it.
        local: Checksum,
        /// The host's.
        host: Checksum,
    },
    /// The host's state of a desynced checkpoint arrived: take it
    /// ([`SpectatorSession::take_repair`]) to load it and run again the
    /// frames played since.
    RepairArrived {
        /// The checkpoint frame.
        frame: Frame,
    },
    /// The host's state of checkpoint `frame` arrived, but the inputs of a
    /// frame played since are no longer kept: not repaired.
    TooLateToRepair {
        /// The checkpoint frame.
        frame: Frame,
    },
    /// A line of chat from a player or another spectator.
    Chat(ChatShown),
    /// Welcomed, the host was heard, yet no state and no new frame came
    /// for `stalled_for_ms`: we left.
    Stalled {
        /// How long nothing came, in ms.
        stalled_for_ms: Millis,
    },
}

/// Where the spectator is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpectatorPhase {
    /// Saying Hello until the host answers.
    Connecting,
    /// Welcomed; the savestate is on its way.
    AwaitingState,
    /// Playing (or buffering) the frames received.
    Watching,
    /// Nothing more will be played.
    Ended,
}

/// A spectator of one host. Each tick the frontend hands over the datagrams
/// that arrived (`handle_datagram`), loads the state once it arrives
/// (`take_state`), and for each frame its clock says is due asks
/// [`SpectatorSession::due`] how many frames to run and takes each one's
/// inputs ([`SpectatorSession::next_inputs`]); then `poll`s to send.
pub struct SpectatorSession<A> {
    host: A,
    endpoint: PeerEndpoint,
    max_state_bytes: usize,
    jitter_config: JitterConfig,
    jitter: JitterBuffer,
    phase: SpectatorPhase,
    players: usize,
    state: Option<(Frame, Vec<u8>)>,
    /// The next frame to play, and the inputs of it and those after.
    next_frame: Frame,
    rows: VecDeque<[Buttons; MAX_PLAYERS]>,
    /// Frames whose every player's input arrived end here.
    received_end: Frame,
    /// No more frames come.
    host_gone: bool,
    /// How far the host's present is past its newest final frame, as it
    /// last reported.
    host_lead: u32,
    events: VecDeque<SpectatorEvent>,
    dropped_foreign: u64,
    /// Our own chat limit.
    chat: ChatOutbox,
    now: Millis,
    stall_after_ms: Millis,
    rejoin_window_ms: Millis,
    /// Where the watch was, and since when it has not moved while the host
    /// was heard.
    progress: ((SpectatorPhase, Frame), Millis),
    /// Our checkpoint checksums against the host's.
    checksums: DesyncDetector,
    /// The inputs of the latest frames played, for running them again
    /// after loading the host's state of a desynced checkpoint.
    played: VecDeque<(Frame, [Buttons; MAX_PLAYERS])>,
    /// The host's state of a desynced checkpoint, with the inputs of every
    /// frame played since, for the frontend to take.
    repair: Option<Repair>,
}

/// What repairs a spectator's game: the host's state of a checkpoint, and
/// the inputs of every frame played since, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repair {
    /// The checkpoint frame (the state as saved at its start).
    pub frame: Frame,
    /// The host's state of it.
    pub state: Vec<u8>,
    /// Each frame's inputs from `frame` to the next frame to play.
    pub inputs: Vec<[Buttons; MAX_PLAYERS]>,
}

/// Frames played whose inputs are kept for a repair: more than the host's
/// kept checkpoint states reach back.
const PLAYED_FRAMES_KEPT: usize = 1024;

impl<A: Copy + PartialEq> SpectatorSession<A> {
    /// A spectator that says Hello at the first `poll`.
    pub fn new(config: SpectatorConfig<A>, now: Millis) -> Result<Self, NetplayError> {
        let handshake = Handshake {
            core_name: config.core_name,
            core_version: config.core_version,
            content_hash: config.content_hash,
            local_slots: PlayerSlots::NONE,
            settings: config.settings,
            ..Handshake::default()
        };
        let mut endpoint_config = EndpointConfig::joiner(handshake);
        endpoint_config.secret = config.secret;
        endpoint_config.room_password = config.room_password;
        endpoint_config.interrupt_after_ms = config.interrupt_after_ms;
        endpoint_config.disconnect_after_ms = config.disconnect_after_ms;
        endpoint_config.max_blob_size =
            checkpoint_state::max_checkpoint_blob_size(config.max_state_bytes).min(MAX_BLOB_SIZE);
        let endpoint = PeerEndpoint::new(endpoint_config, now)?;
        Ok(SpectatorSession {
            host: config.host,
            endpoint,
            max_state_bytes: config.max_state_bytes,
            jitter: JitterBuffer::new(config.jitter),
            jitter_config: config.jitter,
            phase: SpectatorPhase::Connecting,
            players: 0,
            state: None,
            next_frame: Frame::ZERO,
            rows: VecDeque::new(),
            received_end: Frame::ZERO,
            host_gone: false,
            host_lead: 0,
            events: VecDeque::new(),
            dropped_foreign: 0,
            chat: ChatOutbox::new(now),
            now,
            stall_after_ms: config.stall_after_ms,
            rejoin_window_ms: config.rejoin_window_ms,
            progress: ((SpectatorPhase::Connecting, Frame::ZERO), now),
            checksums: DesyncDetector::new(u32::from(config.settings.checksum_interval)),
            played: VecDeque::new(),
            repair: None,
        })
    }

    /// Takes in one datagram; anything not from the host is dropped and counted.
    pub fn handle_datagram(&mut self, now: Millis, from: A, datagram: &[u8]) {
        self.now = now;
        if from != self.host {
            self.dropped_foreign += 1;
            return;
        }
        let before = self.received_end;
        self.endpoint.handle_datagram(now, datagram);
        self.pump();
        // Ending drops what was buffered: nothing arrived then.
        let arrived = self.received_end.number().saturating_sub(before.number());
        if arrived > 0 {
            self.jitter
                .on_arrival(now, self.received_end.number(), arrived);
        }
    }

    /// Sends what is due (Hello, acks, keep-alives) to the host.
    pub fn poll(&mut self, now: Millis, mut send: impl FnMut(A, &[u8])) {
        self.now = now;
        self.watch_for_stalls(now);
        let host = self.host;
        self.endpoint
            .poll(now, &mut |datagram| send(host, datagram));
        self.pump();
    }

    /// Ends the watch when, welcomed and with the host still heard, no
    /// state and no new frame came for `stall_after_ms`.
    fn watch_for_stalls(&mut self, now: Millis) {
        let at = (self.phase, self.received_end);
        let (was, since) = self.progress;
        // A silent host is the disconnect timeout's to end.
        if at != was || self.endpoint.silent_for(now) >= super::session::HEARD_WITHIN_MS {
            self.progress = (at, now);
            return;
        }
        let waiting = matches!(
            self.phase,
            SpectatorPhase::AwaitingState | SpectatorPhase::Watching
        );
        let stalled_for_ms = now.saturating_sub(since);
        let limit = match self.phase {
            SpectatorPhase::Watching => self.stall_after_ms + self.rejoin_window_ms,
            _ => self.stall_after_ms,
        };
        if waiting && !self.host_gone && stalled_for_ms >= limit {
            self.end_with(SpectatorEvent::Stalled { stalled_for_ms });
        }
    }

    /// The host's savestate, once arrived: load it before running frames.
    pub fn take_state(&mut self) -> Option<(Frame, Vec<u8>)> {
        self.state.take()
    }

    /// How many frames to run for one frame the clock says is due (the
    /// last is shown, the others are run with video off to catch up).
    /// Nothing before the state was taken.
    pub fn due(&mut self) -> Due {
        if self.phase != SpectatorPhase::Watching || self.state.is_some() {
            return Due {
                frames: 0,
                catch_up: 0,
            };
        }
        let due = self.jitter.due(self.buffered(), self.host_gone);
        if self.host_gone && self.buffered() == 0 {
            self.phase = SpectatorPhase::Ended;
        }
        due
    }

    /// The next frame to play and every player's inputs for it; `None`
    /// when none is buffered.
    pub fn next_inputs(&mut self) -> Option<(Frame, [Buttons; MAX_PLAYERS])> {
        if self.next_frame >= self.received_end {
            return None;
        }
        let row = self.rows.pop_front()?;
        let frame = self.next_frame;
        self.next_frame = frame.next();
        if self.played.len() == PLAYED_FRAMES_KEPT {
            self.played.pop_front();
        }
        self.played.push_back((frame, row));
        if self.host_gone && self.buffered() == 0 {
            self.phase = SpectatorPhase::Ended;
        }
        Some((frame, row))
    }

    /// Whether `frame` is a checkpoint, whose checksum (of the game as it
    /// is before the frame runs, see `checksum::memory_checksum`) the
    /// frontend hands to [`SpectatorSession::add_checksum`].
    pub fn is_checkpoint(&self, frame: Frame) -> bool {
        self.checksums.is_checkpoint(frame)
    }

    /// Our checksum of checkpoint `frame`: compared with the host's, and
    /// sent to the host, which answers a difference with its state.
    pub fn add_checksum(&mut self, frame: Frame, checksum: Checksum) {
        let mut differs = None;
        self.checksums
            .add_local(frame, checksum, |mismatch| differs = Some(mismatch));
        // Only the host's reports are compared: ours need not queue.
        while self.checksums.pop_outgoing().is_some() {}
        self.endpoint.send_checksum(frame, checksum);
        if let Some(mismatch) = differs {
            self.on_mismatch(mismatch);
        }
    }

    /// Our core refused to load a state the host sent (`reason`, what it
    /// said): the watch ends, and the host is told.
    pub fn state_refused(&mut self, reason: String) {
        self.end_with(SpectatorEvent::StateRefused(reason));
    }

    /// The host's state of a desynced checkpoint and the inputs to run
    /// again after loading it, once it arrived.
    pub fn take_repair(&mut self) -> Option<Repair> {
        self.repair.take()
    }

    /// The speed to run the frame clock at (see [`JitterBuffer::speed`]).
    pub fn speed(&self) -> f64 {
        self.jitter.speed(self.buffered())
    }

    /// Frames received and not played yet: how far behind the newest final
    /// frame of the match we know of playback is.
    pub fn buffered(&self) -> u32 {
        self.received_end - self.next_frame.min(self.received_end)
    }

    /// How many frames playback is behind the players' present, estimated:
    /// the frames buffered, plus how far the host said its present is past
    /// its newest final frame, plus the frames that pass while a datagram
    /// comes from the host (half the round trip).
    pub fn behind_live(&self) -> u32 {
        let one_way_ms = f64::from(self.endpoint.stats().ping_ms.unwrap_or(0)) / 2.0;
        let in_flight = (one_way_ms * self.jitter_config.frames_per_second / 1000.0).round() as u32;
        self.buffered() + self.host_lead + in_flight
    }

    /// The next frame to play.
    pub fn next_frame(&self) -> Frame {
        self.next_frame
    }

    /// Players in the match (0 until welcomed).
    pub fn players(&self) -> usize {
        self.players
    }

    /// Where the spectator is.
    pub fn phase(&self) -> SpectatorPhase {
        self.phase
    }

    /// Whether the jitter buffer is playing or filling up.
    pub fn playback(&self) -> Playback {
        self.jitter.playback()
    }

    /// The jitter buffer, for its delay and counters.
    pub fn jitter(&self) -> &JitterBuffer {
        &self.jitter
    }

    /// The host's handshake (its core options win), once welcomed.
    pub fn host_handshake(&self) -> Option<&Handshake> {
        self.endpoint.remote_handshake()
    }

    /// The fingerprint of this machine's public key.
    pub fn key_fingerprint(&self) -> crate::protocol::Fingerprint {
        self.endpoint.own_key()
    }

    /// The link's fingerprint and the host's key's, once welcomed.
    pub fn link_fingerprints(&self) -> Option<LinkFingerprints> {
        self.endpoint.remote_handshake()?;
        Some(LinkFingerprints {
            players: self.endpoint.remote_slots(),
            link: self.endpoint.fingerprint()?,
            peer_key: self.endpoint.peer_key()?,
        })
    }

    /// The link's traffic and ping.
    pub fn link_stats(&self) -> crate::protocol::EndpointStats {
        self.endpoint.stats()
    }

    /// Datagrams dropped: from other addresses, or for what they were
    /// from the host's (see [`crate::protocol::EndpointStats::dropped_bad`]).
    pub fn dropped_datagrams(&self) -> u64 {
        self.dropped_foreign + self.endpoint.stats().dropped_bad()
    }

    /// The next event, oldest first.
    pub fn next_event(&mut self) -> Option<SpectatorEvent> {
        self.events.pop_front()
    }

    /// Whether the link to the host is closed with the goodbyes delivered
    /// (or given up on): nothing more needs sending.
    pub fn link_closed(&self) -> bool {
        self.endpoint.is_closed()
    }

    /// Sends `text` to the players (the host relays it), as `author`
    /// (empty: "spectator N" as the host numbers us). Returns the line as
    /// shown here.
    pub fn send_chat(
        &mut self,
        now: Millis,
        author: &str,
        text: &str,
    ) -> Result<ChatShown, ChatRefused> {
        let line = self.chat.line(now, author, text)?;
        if !self.endpoint.send_chat(line.clone()) {
            return Err(ChatRefused::NoOneToTell);
        }
        Ok(from_seat(SPECTATOR_SEAT.to_string(), line))
    }

    /// Leaves: the host is told, and nothing more is played.
    pub fn leave(&mut self) {
        self.endpoint
            .disconnect(crate::protocol::DisconnectReason::Quit);
        self.phase = SpectatorPhase::Ended;
    }

    fn pump(&mut self) {
        while let Some(event) = self.endpoint.next_event() {
            self.on_event(event);
        }
    }

    fn on_event(&mut self, event: NetEvent) {
        match event {
            NetEvent::Synchronized {
                settings,
                remote_slots,
                ..
            } => self.on_welcomed(settings, remote_slots),
            NetEvent::Rejected(rejection) => {
                self.phase = SpectatorPhase::Ended;
                self.events.push_back(SpectatorEvent::Rejected(rejection));
            }
            NetEvent::BlobReceived { bytes, .. } if self.phase == SpectatorPhase::AwaitingState => {
                self.on_state(&bytes)
            }
            NetEvent::BlobReceived { bytes, .. } if self.phase == SpectatorPhase::Watching => {
                self.on_repair_state(&bytes)
            }
            // A repair's state that arrived damaged is not used: the next
            // checkpoint that differs asks again.
            NetEvent::BlobDamaged { .. } if self.phase == SpectatorPhase::AwaitingState => self
                .end_with(SpectatorEvent::BadState(StateBlobError::Corrupt(
                    super::session::DAMAGED.to_string(),
                ))),
            NetEvent::RemoteChecksum { frame, checksum } => {
                if let Err(mismatch) = self.checksums.add_remote(PlayerId::new(0), frame, checksum)
                {
                    self.on_mismatch(mismatch);
                }
            }
            NetEvent::RemoteInput {
                player,
                frame,
                buttons,
            } if self.phase == SpectatorPhase::Watching => self.on_input(player, frame, buttons),
            NetEvent::RemoteFrameAdvantage(lead) => {
                self.host_lead = u32::try_from(lead).unwrap_or(0);
            }
            NetEvent::NetworkInterrupted { silent_for_ms } => self
                .events
                .push_back(SpectatorEvent::NetworkInterrupted { silent_for_ms }),
            NetEvent::NetworkResumed => self.events.push_back(SpectatorEvent::NetworkResumed),
            // The host labels every line it sends us (its own as P1's) and
            // is trusted to, as it is with the inputs it feeds us.
            NetEvent::Chat(line) if line.author.is_empty() => self
                .events
                .push_back(SpectatorEvent::Chat(from_seat("P1".to_string(), line))),
            NetEvent::Chat(line) => self.events.push_back(SpectatorEvent::Chat(ChatShown {
                author: line.author,
                text: line.text,
            })),
            NetEvent::Disconnected { cause } => {
                self.host_gone = true;
                if self.phase != SpectatorPhase::Watching || self.buffered() == 0 {
                    self.phase = SpectatorPhase::Ended;
                }
                self.events.push_back(SpectatorEvent::HostGone(cause));
            }
            _ => {}
        }
    }

    /// The host's Welcome: it must feed every player's inputs; the jitter
    /// buffer paces the match's frame rate.
    fn on_welcomed(&mut self, settings: SessionSettings, remote_slots: PlayerSlots) {
        self.players = usize::from(settings.player_count).min(MAX_PLAYERS);
        // The match's last frame is a checkpoint too (the host's length).
        let last = self
            .endpoint
            .remote_handshake()
            .and_then(|host| host.match_frames)
            .and_then(Frame::last_of);
        self.checksums = DesyncDetector::new(u32::from(settings.checksum_interval)).ending_at(last);
        let all = PlayerSlots((1u16 << self.players) as u8 - 1);
        if remote_slots != all {
            // A host feeds spectators every player's inputs.
            self.end_with(SpectatorEvent::HostGone(DisconnectCause::PeerLeft(
                crate::protocol::DisconnectReason::ProtocolError,
            )));
            return;
        }
        let fps = f64::from(settings.frame_rate_millihertz) / 1000.0;
        self.jitter_config.frames_per_second = fps;
        self.jitter = JitterBuffer::new(self.jitter_config);
        self.phase = SpectatorPhase::AwaitingState;
        self.events.push_back(SpectatorEvent::Welcomed {
            players: self.players,
        });
    }

    /// The savestate to start watching from: inputs follow from its frame.
    fn on_state(&mut self, bytes: &[u8]) {
        match checkpoint_state::decompress_checkpoint(bytes, self.max_state_bytes) {
            Ok((frame, state)) => {
                self.endpoint.expect_remote_inputs_from(frame);
                self.next_frame = frame;
                self.received_end = frame;
                self.events.push_back(SpectatorEvent::StateArrived {
                    frame,
                    bytes: state.len(),
                });
                self.state = Some((frame, state));
                self.phase = SpectatorPhase::Watching;
            }
            Err(error) => self.end_with(SpectatorEvent::BadState(error)),
        }
    }

    /// Our checkpoint checksum differs from the host's: say so (our
    /// checksum has gone to the host, which sends its state).
    fn on_mismatch(&mut self, mismatch: Mismatch) {
        self.events.push_back(SpectatorEvent::Desync {
            frame: mismatch.frame,
            local: mismatch.local,
            host: mismatch.remote,
        });
    }

    /// The host's state of a checkpoint we reported differently: kept with
    /// the inputs of every frame played since, when they still are.
    fn on_repair_state(&mut self, bytes: &[u8]) {
        let Ok((frame, state)) =
            checkpoint_state::decompress_checkpoint(bytes, self.max_state_bytes)
        else {
            // Not a state we can use: the next checkpoint reports again.
            return;
        };
        let inputs: Vec<_> = self
            .played
            .iter()
            .filter(|(played, _)| *played >= frame)
            .map(|(_, row)| *row)
            .collect();
        let reaches_back = self
            .played
            .front()
            .is_some_and(|(oldest, _)| *oldest <= frame);
        if frame > self.next_frame || (frame < self.next_frame && !reaches_back) {
            self.events
                .push_back(SpectatorEvent::TooLateToRepair { frame });
            return;
        }
        self.repair = Some(Repair {
            frame,
            state,
            inputs,
        });
        self.events
            .push_back(SpectatorEvent::RepairArrived { frame });
    }

    /// One player's input of the next frame; a frame is whole once the last
    /// player's arrived. More frames than the buffer holds end the watch.
    fn on_input(&mut self, player: u8, frame: Frame, buttons: Buttons) {
        let player = usize::from(player);
        if frame != self.received_end || player >= self.players {
            return;
        }
        if player == 0 {
            if self.rows.len() >= MAX_BUFFERED_FRAMES {
                self.end_with(SpectatorEvent::Flooded);
                return;
            }
            self.rows.push_back([Buttons::NONE; MAX_PLAYERS]);
        }
        if let Some(row) = self.rows.back_mut() {
            row[player] = buttons;
        }
        if player + 1 == self.players {
            self.received_end = frame.next();
        }
    }

    fn end_with(&mut self, event: SpectatorEvent) {
        let reason = match event {
            SpectatorEvent::Stalled { .. } => crate::protocol::DisconnectReason::Stalled,
            _ => crate::protocol::DisconnectReason::ProtocolError,
        };
        self.endpoint.disconnect(reason);
        self.host_gone = true;
        self.phase = SpectatorPhase::Ended;
        self.rows.clear();
        self.received_end = self.next_frame;
        self.events.push_back(event);
    }
}
