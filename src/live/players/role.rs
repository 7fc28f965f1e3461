//! The players' side of the real-time loop (`host`, `join`): this
//! machine's buttons into each tick, the session's events answered (desync
//! diagnosis and repair) and told, the match's end, and its summary.

use crate::engine::frame_clock::FrameClock;
use crate::engine::inputs::{FrameInputs, InputSource};
use crate::engine::matches::desync_diagnosis::DesyncAnswer;
use crate::engine::matches::hooks::TickHooks;
use crate::engine::matches::machine::NetplayMachine;
use crate::engine::sinks::{FrameSink, MatchSinks, SinksSummary};
use crate::engine::{AppError, Game, Outcome};
use crate::live::chat::LiveChat;
use crate::live::front_end::{
    anyone_runs_ahead, delays_text, lags_text, FrontEnd, MatchView, PlayerFigures,
};
use crate::live::narrator::Narrator;
use crate::live::options::LiveEvent;
use crate::live::players::args::MatchSettings;
use crate::live::players::report::{Desyncs, MatchEnd, MatchReport, Rollbacks};
use crate::live::session_loop::{DatagramSession, LiveMatch, LiveRole};
use crate::live::wire::LiveTransport;
use netcode::checksum::Checksums;
use netcode::input::Buttons;
use netcode::netplay::wording::{ConnectionWords, Seat as WordsSeat};
use netcode::netplay::{LinkFingerprints, NetplayEvent, NetplayStats};
use netcode::protocol::{Fingerprint, PlayerSlots};
use netcode::rollback::{DisconnectReason, Frame, PlayerId, SessionState};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// After its last frame is final, how long a machine keeps answering a
/// peer that may still miss some of its inputs, beyond two round trips.
const LINGER: Duration = Duration::from_secs(1);

/// A player's machine: its session, game and sinks.
pub(crate) type PlayerMachine = NetplayMachine<SocketAddr, Box<dyn Game>, MatchSinks>;

/// Which side of the match this machine is.
pub(crate) struct Seat {
    /// The command, for the JSON.
    pub(crate) command: &'static str,
    /// This machine's player.
    pub(crate) me: u8,
    /// The peer's player.
    pub(crate) peer: u8,
    /// The address dialled and how long to wait for it (the joiner).
    pub(crate) connect_timeout: Option<(String, Duration)>,
    /// The code of the room a host waits in for its player, shown with
    /// its port until the match begins.
    pub(crate) room_code: Option<String>,
}

/// This machine's buttons: its player's column of the input source, one
/// row per frame (the session asks again while it synchronizes).
struct LiveHooks {
    inputs: InputSource,
    /// The window's buttons for this machine's player, when it has one
    /// (held together with the input source's).
    device: Option<Buttons>,
    current: Option<(Frame, FrameInputs)>,
    started: Instant,
}

impl TickHooks for LiveHooks {
    fn local_input(&mut self, player: PlayerId, frame: Frame) -> Buttons {
        let row = match self.current {
            Some((at, row)) if at == frame => row,
            _ => {
                let mut row = self.inputs.next_frame();
                if let Some(buttons) = self.device {
                    row[player.index()] = row[player.index()] | buttons;
                }
                self.current = Some((frame, row));
                row
            }
        };
        row[player.index()]
    }

    fn stopwatch(&mut self) -> Duration {
        self.started.elapsed()
    }

    fn profile_clock(&mut self) -> Option<Duration> {
        Some(self.started.elapsed())
    }
}

/// How the match is coming to its end.
#[derive(Default)]
struct Ending {
    /// Whether the peer finished the handshake (the joiner's connect
    /// timeout runs until then).
    answered: bool,
    peer_gone: Option<MatchEnd>,
    /// Other players whose departure the machines agreed on.
    left_players: u8,
    /// When every frame asked for was final.
    done_at: Option<Instant>,
    /// The traffic when the last frame became final: the wire figures
    /// cover the match, not the goodbye after it.
    wire_until: Option<(u64, Vec<(u8, NetplayStats)>)>,
    /// When we left (ms into the session).
    left_ms: u64,
}

/// One player's machine in the real-time loop.
pub(crate) struct PlayersRole {
    machine: PlayerMachine,
    hooks: LiveHooks,
    seat: Seat,
    frames: Option<u32>,
    dump_dir: PathBuf,
    inputs: String,
    desyncs: Desyncs,
    ending: Ending,
    /// The frame and the waiting ticks before the last tick.
    before: (u32, u64),
    /// When the status line was last shown, and the bytes received and
    /// sent by then.
    status_last: Option<(Instant, u64, u64)>,
    /// What the player reads about the connection.
    words: ConnectionWords,
    chat: LiveChat,
    /// The host's port, shown until the match begins.
    listening: Option<u16>,
    /// `--peer-key`: the only key the host (for a joiner) or the joiner
    /// (for the host) may have.
    peer_key: Option<Fingerprint>,
    /// The links whose keys were shown, in the order they were agreed.
    links: Vec<LinkFingerprints>,
    /// The code of the host's room, shown with it.
    room_code: Option<String>,
}

impl PlayersRole {
    /// `machine` playing as `seat`, with buttons from `inputs`, as
    /// `settings` say; the session's clock began at `started`.
    pub(crate) fn new(
        seat: Seat,
        settings: &MatchSettings,
        mut machine: PlayerMachine,
        inputs: InputSource,
        started: Instant,
    ) -> Self {
        // `--frames N` is frames 0..N-1: frame N never runs, so no frame
        // past the match's last becomes final, here or at a spectator.
        machine.stop_at_frame = settings.frames;
        let words = ConnectionWords::new(
            if seat.me == 0 {
                WordsSeat::Host
            } else {
                WordsSeat::Joiner
            },
            PlayerId::new(seat.me),
            usize::from(machine.netplay.settings().player_count.saturating_sub(1)),
        );
        PlayersRole {
            machine,
            hooks: LiveHooks {
                inputs,
                device: None,
                current: None,
                started,
            },
            seat,
            frames: settings.frames,
            dump_dir: crate::paths::dump_dir(settings.dump_dir.as_deref()),
            inputs: settings.input_spec().to_string(),
            desyncs: Desyncs::default(),
            ending: Ending::default(),
            before: (0, 0),
            status_last: None,
            words,
            chat: LiveChat::new(&settings.chat),
            listening: None,
            peer_key: settings.peer_key,
            links: Vec::new(),
            room_code: None,
        }
    }

    /// Milliseconds since the session's clock began.
    fn now_ms(&self) -> u64 {
        self.hooks.started.elapsed().as_millis() as u64
    }

    /// A host waiting for its players on UDP port `port` (and in the room
    /// `room_code`): the front end shows it until the match begins.
    pub(crate) fn listening_on(&mut self, port: u16, room_code: Option<String>) {
        self.listening = Some(port);
        self.room_code = room_code;
    }

    fn peer_stats(&self) -> Option<NetplayStats> {
        self.machine.netplay.stats(PlayerId::new(self.seat.peer))
    }

    /// Every other player's figures, by slot (the departed have none).
    fn all_peer_stats(&self) -> Vec<(u8, NetplayStats)> {
        let players = self.machine.netplay.settings().player_count;
        (0..players)
            .filter(|&slot| slot != self.seat.me)
            .filter_map(|slot| Some((slot, self.machine.netplay.stats(PlayerId::new(slot))?)))
            .collect()
    }

    /// Every player's input delay, by slot, ours included (`None`: not
    /// reported yet).
    fn delays(&self, peers: &[(u8, NetplayStats)]) -> Vec<(u8, Option<u32>)> {
        let mut delays = vec![(self.seat.me, Some(self.machine.netplay.input_delay()))];
        delays.extend(
            peers
                .iter()
                .map(|(slot, stats)| (*slot, stats.remote_input_delay)),
        );
        delays.sort_unstable();
        delays
    }

    /// Every player's run-ahead, by slot, ours included (`None`: not
    /// reported yet).
    fn run_aheads(&self, peers: &[(u8, NetplayStats)]) -> Vec<(u8, Option<u32>)> {
        let ours = u32::from(self.machine.netplay.run_ahead());
        let mut run_aheads = vec![(self.seat.me, Some(ours))];
        run_aheads.extend(
            peers
                .iter()
                .map(|(slot, stats)| (*slot, stats.remote_run_ahead)),
        );
        run_aheads.sort_unstable();
        run_aheads
    }

    fn handle_event(
        &mut self,
        event: NetplayEvent,
        narrator: &mut Narrator<'_>,
    ) -> Result<(), AppError> {
        match &event {
            // The host keeps waiting: the session reopened the slot.
            NetplayEvent::Rejected(rejection) if rejection.by_us && self.seat.me == 0 => {
                narrator.warn(&format!(
                    "{}; still waiting for a player to join",
                    rejection.explanation()
                ))?;
            }
            NetplayEvent::JoinerLeftBeforeStart { .. } => narrator.warn(
                "the joiner left before the match began; still waiting for a player to join",
            )?,
            NetplayEvent::Rejected(rejection) => {
                return Err(AppError::HandshakeRefused {
                    reason: rejection.explanation(),
                })
            }
            NetplayEvent::Desync {
                frame,
                local,
                remote,
                ..
            } => {
                self.desyncs.detected += 1;
                narrator.warn(&format!(
                    "desync at frame {frame}: our checksum {local}, the peer's {remote}"
                ))?;
                self.machine.answer_desync(&event)?;
            }
            NetplayEvent::HostCheckpointState { frame, .. } => {
                self.compare_with_host_state(&event, *frame, narrator)?;
            }
            NetplayEvent::NetworkInterrupted {
                players,
                silent_for_ms,
            } => narrator.warn(&format!(
                "waiting for {players}… (nothing heard for {silent_for_ms} ms)"
            ))?,
            NetplayEvent::NetworkResumed { players } => {
                narrator.note_and_show(&format!("{players} is heard again"))?;
            }
            NetplayEvent::PeerRejoined { players } => {
                narrator.note_and_show(&format!("{players} is back, from a new address"))?;
            }
            NetplayEvent::ResumeStateSent { players, frame } => {
                narrator.note_and_show(&format!(
                    "{players} restarted: sent it the state of frame {frame} to resume from"
                ))?;
            }
            NetplayEvent::ResumeStateArrived { frame, .. } => {
                narrator.say_and_show(&format!("resuming the match at frame {frame}"))?;
            }
            NetplayEvent::PeerFault { fault, .. } => {
                narrator.warn_and_show(&format!("closed the link to the peer: {fault}"))?;
            }
            NetplayEvent::Disconnected {
                player,
                reason,
                at_frame,
            } if player.index() != usize::from(self.seat.me) => {
                self.on_player_left(player.index() as u8, *reason, *at_frame, narrator)?;
            }
            NetplayEvent::Stalled { stalled_for_ms, .. } => {
                self.ending.peer_gone.get_or_insert(MatchEnd::Stalled);
                narrator.warn_and_show(&format!(
                    "no frame became final for {stalled_for_ms} ms although the peer is heard: left the match"
                ))?;
            }
            NetplayEvent::PeerSynchronized { .. } => {
                self.ending.answered = true;
                self.show_new_keys(narrator)?;
            }
            NetplayEvent::SpectatorLeft => narrator.notice("a spectator left"),
            NetplayEvent::StartStateArrived { bytes } => {
                narrator.say(&format!("loaded the host's start state ({bytes} bytes)"))?;
            }
            NetplayEvent::Running => {
                narrator.say_and_show("the match began")?;
                narrator.signal(LiveEvent::MatchBegan);
            }
            NetplayEvent::SpectatorJoined { keys: Some(keys) } => narrator.say_and_show(&format!(
                "a spectator joined: fingerprint {} (its key {}); the same on its screen means nobody sits in between",
                keys.link, keys.peer_key
            ))?,
            NetplayEvent::SpectatorJoined { keys: None } => {
                narrator.say_and_show("a spectator joined")?
            }
            NetplayEvent::Chat(line) => self.chat.received(line, narrator)?,
            NetplayEvent::SpectatorDesync {
                frame,
                local,
                remote,
            } => narrator.warn(&format!(
                "a spectator's game diverged at frame {frame} (its checksum {remote}, ours {local}): sent it our state"
            ))?,
            NetplayEvent::SpectatorRefused(rejection) => narrator.warn(&rejection.explanation())?,
            NetplayEvent::RoomGuessesSpent { retry_in_ms } => narrator.warn_and_show(&format!(
                "too many failed room-code exchanges (someone may be guessing the code): answering no new player or spectator for {} s",
                retry_in_ms.div_ceil(1000)
            ))?,
            NetplayEvent::SpectatorDropped { reason } => {
                narrator.warn_and_show(&format!("stopped feeding a spectator: {reason}"))?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Shows the keys of each link newly agreed, to compare with the other
    /// side's screen, and holds the pinned link to `--peer-key`.
    fn show_new_keys(&mut self, narrator: &mut Narrator<'_>) -> Result<(), AppError> {
        for keys in self.machine.netplay.link_fingerprints() {
            if self.links.iter().any(|shown| shown.players == keys.players) {
                continue;
            }
            self.links.push(keys);
            let who = players_label(keys.players);
            narrator.say_and_show(&format!(
                "link to {who}: fingerprint {} ({who}'s key {}); the same on both screens means nobody sits in between",
                keys.link, keys.peer_key
            ))?;
            // A joiner pins its host; the host (of two players) its joiner.
            let pinned = self.seat.me == 0 || keys.players.contains(0);
            match self.peer_key {
                Some(wanted) if pinned && wanted != keys.peer_key => {
                    return Err(AppError::HandshakeRefused {
                        reason: format!(
                            "{who}'s key is {}, not the --peer-key {wanted}: a machine may sit between you; left the match",
                            keys.peer_key
                        ),
                    })
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The machines agreed that player `slot` left at `at_frame`: with
    /// others still playing the match goes on, else it ends.
    fn on_player_left(
        &mut self,
        slot: u8,
        reason: DisconnectReason,
        at_frame: Frame,
        narrator: &mut Narrator<'_>,
    ) -> Result<(), AppError> {
        self.machine.sink.player_left(at_frame, slot);
        self.ending.left_players += 1;
        let others = self.machine.netplay.settings().player_count - 1;
        if self.ending.left_players < others {
            // The others play on (or finished, and linger for the last inputs).
            if self.ending.done_at.is_none() {
                narrator.warn_and_show(&format!(
                    "player {} left at frame {at_frame}: the match goes on",
                    slot + 1
                ))?;
            }
            return Ok(());
        }
        let gone = *self.ending.peer_gone.get_or_insert(match reason {
            DisconnectReason::Quit => MatchEnd::PeerLeft,
            DisconnectReason::Stalled => MatchEnd::Stalled,
            _ => MatchEnd::PeerLost,
        });
        narrator.notice(gone.describe());
        Ok(())
    }

    /// The joiner compares its state of a desynced `frame` with the
    /// host's, writes both to the dump directory and repairs its game
    /// when it still can.
    fn compare_with_host_state(
        &mut self,
        event: &NetplayEvent,
        frame: Frame,
        narrator: &mut Narrator<'_>,
    ) -> Result<(), AppError> {
        match self.machine.answer_desync(event)? {
            DesyncAnswer::TooLate => narrator.warn(&format!(
                "the host's state of frame {frame} arrived after ours was dropped: not compared"
            ))?,
            DesyncAnswer::Diagnosed {
                diagnosis,
                repaired,
            } => {
                let dumps = diagnosis.write_dumps(&self.dump_dir)?;
                narrator.warn(&format!(
                    "desync at frame {frame}: {} (dumps in {})",
                    diagnosis.summary(),
                    dumps.display()
                ))?;
                self.desyncs.diagnosed += 1;
                if repaired {
                    self.desyncs.repaired += 1;
                    narrator.note(&format!(
                        "loaded the host's state of frame {frame} and re-simulated to the present"
                    ))?;
                    self.words.desync_repaired(frame, self.now_ms());
                } else {
                    narrator.warn(&format!(
                        "frame {frame} is too far back to re-simulate from: not repaired"
                    ))?;
                }
                self.desyncs.last_memory_diff = Some(diagnosis.memory_diff);
            }
            DesyncAnswer::Nothing | DesyncAnswer::StateSent | DesyncAnswer::AlreadyRepaired => {}
        }
        Ok(())
    }

    /// Ends the match's outputs and sums it up.
    pub(crate) fn finish(
        mut self,
        end: MatchEnd,
        transport: &LiveTransport,
    ) -> Result<LiveMatch, AppError> {
        // A host's window left before anyone joined: nothing was played.
        let end = match end {
            MatchEnd::WindowClosed
                if self.listening.is_some() && self.machine.netplay.started_at().is_none() =>
            {
                MatchEnd::Cancelled
            }
            end => end,
        };
        let (ended_ms, peers) = match self.ending.wire_until.take() {
            Some(until) => until,
            None => (self.ending.left_ms, self.all_peer_stats()),
        };
        let mut report = self.report(end, ended_ms, peers, transport);
        let (log, outputs) = self.machine.sink.finish(end.end_reason())?;
        report.outputs = outputs;
        let outcome = match end {
            _ if report.desyncs.detected > 0 => Outcome::NetplayFailed,
            MatchEnd::Finished | MatchEnd::WindowClosed | MatchEnd::Cancelled => Outcome::Success,
            MatchEnd::Interrupted => Outcome::Interrupted,
            MatchEnd::PeerLeft if self.frames.is_none() => Outcome::Success,
            MatchEnd::PeerLeft | MatchEnd::PeerLost | MatchEnd::Stalled => Outcome::PeerLost,
        };
        Ok(LiveMatch {
            outcome,
            log,
            report: Some(Box::new(report)),
        })
    }

    /// The summary of a match that ended as `end`, its traffic counted
    /// from every link's `peers` figures up to `ended_ms`.
    fn report(
        &mut self,
        end: MatchEnd,
        ended_ms: u64,
        peers: Vec<(u8, NetplayStats)>,
        transport: &LiveTransport,
    ) -> MatchReport {
        let total = |figure: fn(&NetplayStats) -> u64| -> u64 {
            peers.iter().map(|(_, stats)| figure(stats)).sum()
        };
        let sent = (total(|s| s.bytes_sent), total(|s| s.datagrams_sent));
        let received = (total(|s| s.bytes_received), total(|s| s.datagrams_received));
        let delays = self.delays(&peers);
        let run_aheads = self.run_aheads(&peers);
        let final_end = self.machine.sink.log.end_frame();
        let frames = self
            .frames
            .map_or(final_end, |frames| frames.min(final_end));
        let checksums = checksums_after(&mut self.machine, frames);
        let tick = self.machine.stats;
        let seconds = self
            .machine
            .netplay
            .started_at()
            .map_or(0.0, |at| ended_ms.saturating_sub(at) as f64 / 1000.0);
        MatchReport {
            command: self.seat.command,
            lockstep: self.machine.netplay.settings().is_lockstep(),
            game: self.machine.game.title(),
            end,
            frames,
            checksums,
            me: self.seat.me,
            input_delay: self.machine.netplay.input_delay(),
            delays,
            run_aheads,
            profile: self.machine.driver.profile,
            peers,
            rollbacks: Rollbacks {
                count: tick.rollbacks,
                mean_depth: if tick.rollbacks == 0 {
                    0.0
                } else {
                    self.machine.sink.resimulated_frames as f64 / tick.rollbacks as f64
                },
                max_depth: tick.deepest_rollback,
            },
            stall_frames: tick.waiting_ticks + tick.stalled_ticks,
            desyncs: std::mem::take(&mut self.desyncs),
            wire: transport.traffic(seconds, sent, received),
            dropped_datagrams: self.machine.netplay.dropped_datagrams(),
            refused_room_guesses: self.machine.netplay.refused_room_guesses(),
            path: transport.ice_path(),
            state_bytes: self.machine.netplay.session().state_bytes()
                + self.machine.driver.checkpoint_state_bytes(),
            inputs: self.inputs.clone(),
            chat: self.chat.counts,
            outputs: SinksSummary::default(),
            key: self.machine.netplay.key_fingerprint(),
            links: self.links.clone(),
        }
    }
}

impl LiveRole for PlayersRole {
    type End = MatchEnd;
    const INTERRUPTED: MatchEnd = MatchEnd::Interrupted;
    const WINDOW_CLOSED: MatchEnd = MatchEnd::WindowClosed;

    fn game(&self) -> &dyn Game {
        self.machine.game.as_ref()
    }

    fn clock(&self) -> &FrameClock {
        &self.machine.clock
    }

    fn read_front_end(&mut self, front: &mut dyn FrontEnd) {
        self.hooks.device = front.local_buttons();
        if let Some(volume) = front.volume_changed() {
            self.machine.sink.set_volume(volume);
        }
    }

    fn tick(&mut self, now_us: u64, transport: &mut LiveTransport) -> Result<(), AppError> {
        for (slot, address) in transport.players_found() {
            if self.machine.netplay.place_roster_peer(slot, address) {
                tracing::info!("P{} is at {address} (its path found with ICE)", slot + 1);
            }
        }
        self.before = (
            self.machine.current_frame(),
            self.machine.stats.waiting_ticks,
        );
        self.machine.tick(now_us, 1.0, transport, &mut self.hooks)?;
        let waited = self.machine.stats.waiting_ticks > self.before.1;
        let stats = self.peer_stats();
        self.words.figures(waited, stats.as_ref(), self.now_ms());
        Ok(())
    }

    fn handle_events(&mut self, narrator: &mut Narrator<'_>) -> Result<(), AppError> {
        let events: Vec<NetplayEvent> = self.machine.netplay.events().collect();
        for event in events {
            self.words.event(&event, self.now_ms());
            self.handle_event(event, narrator)?;
        }
        Ok(())
    }

    fn send_chat(&mut self, now_us: u64, narrator: &mut Narrator<'_>) -> Result<(), AppError> {
        let netplay = &mut self.machine.netplay;
        let frame = netplay.current_frame().number();
        let mut send = |now, author: &str, text: &str| netplay.send_chat(now, author, text);
        Ok(self
            .chat
            .send_due(frame, now_us / 1000, narrator, &mut send)?)
    }

    fn ended(&mut self, now_us: u64) -> Option<MatchEnd> {
        let final_end = self.machine.sink.log.end_frame();
        if self.ending.done_at.is_none() && self.frames.is_some_and(|frames| final_end >= frames) {
            // Every frame asked for is final: keep answering while the
            // peer may still miss our last inputs.
            self.ending.done_at = Some(Instant::now());
            self.ending.wire_until = Some((now_us / 1000, self.all_peer_stats()));
        }
        if let Some(done) = self.ending.done_at {
            let ping = self
                .peer_stats()
                .and_then(|stats| stats.ping_ms)
                .unwrap_or(0);
            let linger = LINGER + Duration::from_millis(2 * u64::from(ping));
            let over = self.ending.peer_gone.is_some() || done.elapsed() >= linger;
            return over.then_some(MatchEnd::Finished);
        }
        if let Some(gone) = self.ending.peer_gone {
            return Some(gone);
        }
        (self.machine.netplay.state() == SessionState::Ended).then_some(MatchEnd::PeerLost)
    }

    fn give_up(&self) -> Result<(), AppError> {
        match &self.seat.connect_timeout {
            Some((address, timeout))
                if !self.ending.answered && self.hooks.started.elapsed() >= *timeout =>
            {
                Err(AppError::NoAnswer {
                    address: address.clone(),
                    seconds: timeout.as_secs_f64(),
                })
            }
            _ => Ok(()),
        }
    }

    fn status_line(&mut self, every: Duration) -> Option<String> {
        let stats = self.peer_stats()?;
        // Nothing to show before the match began.
        self.machine.netplay.started_at()?;
        let peers = self.all_peer_stats();
        let received: u64 = peers.iter().map(|(_, s)| s.bytes_received).sum();
        let sent: u64 = peers.iter().map(|(_, s)| s.bytes_sent).sum();
        let now = Instant::now();
        let (since, received_before, sent_before) =
            *self.status_last.get_or_insert((now, received, sent));
        let elapsed = now.duration_since(since);
        if elapsed < every {
            return None;
        }
        self.status_last = Some((now, received, sent));
        let kbps = |bytes: u64| bytes as f64 * 8.0 / 1000.0 / elapsed.as_secs_f64();
        let words = self.words.line(self.now_ms());
        let corner = self.words.corner(self.now_ms());
        let said = words
            .into_iter()
            .chain(corner)
            .map(|said| format!("{said} | "));
        let delays = self.delays(&peers);
        let run_aheads = self.run_aheads(&peers);
        let lags = if anyone_runs_ahead(&run_aheads) {
            format!(" | {}", lags_text(&delays, &run_aheads))
        } else {
            String::new()
        };
        Some(
            said.collect::<String>()
                + &status_text(
                    self.machine.current_frame(),
                    self.machine.netplay.settings().is_lockstep(),
                    &stats,
                    &delays,
                    kbps(received.saturating_sub(received_before)),
                    kbps(sent.saturating_sub(sent_before)),
                )
                + &lags,
        )
    }

    fn view(&self) -> MatchView {
        let (frame_before, waits_before) = self.before;
        MatchView {
            frame: self.machine.current_frame(),
            new_picture: self.machine.current_frame() != frame_before,
            stats: self.peer_stats(),
            delays: self.delays(&self.all_peer_stats()),
            seat: Some(self.seat.me),
            waiting: self.machine.stats.waiting_ticks > waits_before,
            spectators: self.machine.netplay.spectator_count(),
            spectating: None,
            players: self
                .all_peer_stats()
                .into_iter()
                .map(|(slot, stats)| PlayerFigures {
                    slot,
                    ping_ms: stats.ping_ms,
                    delay: stats.remote_input_delay,
                    run_ahead: stats.remote_run_ahead,
                    last_rollback: stats.last_rollback,
                    fingerprint: self
                        .links
                        .iter()
                        .find(|keys| keys.players.contains(slot))
                        .map(|keys| keys.link),
                })
                .collect(),
            connection: self.words.line(self.now_ms()),
            desync: self.words.corner(self.now_ms()),
            listening: self
                .listening
                .filter(|_| self.machine.netplay.started_at().is_none()),
            room_code: self
                .room_code
                .clone()
                .filter(|_| self.machine.netplay.started_at().is_none()),
        }
    }

    fn leave(&mut self, elapsed: Duration) {
        // Tells the peer (a no-op once the match ended).
        self.machine.netplay.leave();
        self.ending.left_ms = elapsed.as_millis() as u64;
    }

    fn datagram_session(&mut self) -> &mut dyn DatagramSession {
        &mut self.machine.netplay
    }
}

/// `frame 1234 | ping 12 ms | delay 1 | rollback 2 | advantage +0.4 | kbps in 25.1 out 24.9 | delays P1 1 P2 0`:
/// the ping and advantage towards the first other player, our delay
/// (`lockstep` in place of the rollback depth in lockstep), all links'
/// traffic and every player's delay.
fn status_text(
    frame: u32,
    lockstep: bool,
    stats: &NetplayStats,
    delays: &[(u8, Option<u32>)],
    kbps_in: f64,
    kbps_out: f64,
) -> String {
    let ping = stats
        .ping_ms
        .map_or_else(|| "?".to_string(), |ping| ping.to_string());
    let advantage = stats
        .frames_ahead
        .map_or_else(|| "?".to_string(), |ahead| format!("{ahead:+.1}"));
    let mode = if lockstep {
        "lockstep".to_string()
    } else {
        format!("rollback {}", stats.last_rollback)
    };
    format!(
        "frame {frame} | ping {ping} ms | delay {} | {mode} | advantage {advantage} | kbps in {kbps_in:.1} out {kbps_out:.1} | delays {}",
        stats.local_input_delay,
        delays_text(delays)
    )
}

/// The checksums of the game after `frames` final frames, as `run --frames`
/// prints them: the state saved at the start of the last one, run again
/// with its final buttons, drawn. `None` when that state is no longer kept.
fn checksums_after(machine: &mut PlayerMachine, frames: u32) -> Option<Checksums> {
    if machine.netplay.settings().is_lockstep() {
        return lockstep_checksums_after(machine, frames);
    }
    let last = Frame::new(frames.checked_sub(1)?);
    let inputs = machine.driver.final_inputs(last)?;
    let state = machine.netplay.saved_state(last)?.data().to_vec();
    let players = machine.netplay.session().players();
    let game = &mut machine.game;
    game.load_state(&state).ok()?;
    game.run_frame(&inputs[..players], true);
    let mut end_state = Vec::new();
    game.save_state(&mut end_state).ok()?;
    Some(Checksums::of_game(game.as_ref(), &end_state))
}

/// Lockstep's: every frame run is final, so the game stands after the last
/// one when no frame ran since. A core that cannot save gives the
/// checksum of no state.
fn lockstep_checksums_after(machine: &mut PlayerMachine, frames: u32) -> Option<Checksums> {
    if machine.netplay.current_frame() != Frame::new(frames) || frames == 0 {
        return None;
    }
    Some(Checksums::of_game_now(machine.game.as_mut()))
}

/// The players of a link as the terminal names them (`P2`, `P2+P3`).
fn players_label(players: PlayerSlots) -> String {
    let labels: Vec<String> = players
        .iter()
        .map(|slot| format!("P{}", slot + 1))
        .collect();
    labels.join("+")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_line_shows_frame_ping_delay_rollback_advantage_traffic_and_every_players_delay() {
        let stats = NetplayStats {
            ping_ms: Some(12),
            frames_ahead: Some(0.4),
            local_input_delay: 1,
            last_rollback: 2,
            ..NetplayStats::default()
        };
        let delays = [(0, Some(1)), (1, Some(3)), (2, None)];
        assert_eq!(
            status_text(1234, false, &stats, &delays, 25.06, 24.94),
            "frame 1234 | ping 12 ms | delay 1 | rollback 2 | advantage +0.4 | kbps in 25.1 out 24.9 | delays P1 1 P2 3 P3 ?"
        );
        assert_eq!(
            status_text(1234, true, &stats, &delays, 25.06, 24.94),
            "frame 1234 | ping 12 ms | delay 1 | lockstep | advantage +0.4 | kbps in 25.1 out 24.9 | delays P1 1 P2 3 P3 ?"
        );
    }
}
