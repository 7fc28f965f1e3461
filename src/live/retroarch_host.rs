//! `netcade host --retroarch`: RetroArch players join a netcade host over
//! TCP. The pure host session (`netcode::retroarch::ServerSession`) speaks
//! the protocol on each connection; this loop accepts them, feeds it their
//! bytes, sends the game's state when the session asks and runs each frame
//! at the game's rate once every player's input of it came. The host
//! plays the first port with `--inputs`; frames go through the engine's
//! sinks (frame log, audio file, replay) from frame 0.

use crate::engine::inputs::InputSource;
use crate::engine::report::Report;
use crate::engine::sinks::recorder::match_recorder;
use crate::engine::sinks::{MatchSinks, SinksSummary};
use crate::engine::{open_game, AppError, MatchSaveDir, Outcome};
use crate::live::front_end::LiveOutputs;
use crate::live::options::{interrupted, LiveOptions};
use crate::live::players::port_file::PortFile;
use crate::live::players::HostSettings;
use crate::live::retroarch::{content_crc, RetroArchFrames, MAX_STATE_BYTES};
use crate::live::session_loop::LiveMatch;
use crate::net::tcp::{Received, TcpLink, TcpListening};
use netcode::replay::EndReason;
use netcode::retroarch::{
    ConnectionId, PlayerInfo, ServerConfig, ServerEvent, ServerSession, ServerStats,
};
use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

/// The wait between two looks at the connections when nothing happened.
const IDLE_WAIT: Duration = Duration::from_millis(1);
/// Frames behind the clock after which it is set back rather than caught
/// up (the host waited for a player's input).
const MOST_FRAMES_BEHIND: u32 = 8;

/// How a RetroArch-hosted match went.
struct HostReport {
    title: String,
    port: u16,
    frames: u32,
    players: Vec<PlayerInfo>,
    stats: ServerStats,
    end: String,
    outcome: Outcome,
    sinks: SinksSummary,
}

impl Report for HostReport {
    fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "hosted {} frames of {} for RetroArch players on TCP port {}: {}",
            self.frames, self.title, self.port, self.end
        )?;
        for player in &self.players {
            writeln!(
                out,
                "{}: {}{}",
                player.nick,
                player
                    .port
                    .map_or("watched".to_string(), |port| format!("player {}", port + 1)),
                player
                    .ping_ms
                    .map(|ping| format!(", ping {ping} ms"))
                    .unwrap_or_default()
            )?;
        }
        writeln!(
            out,
            "state checks: {} CRCs sent, {} states sent, {} asked for by players",
            self.stats.crcs_sent, self.stats.states_sent, self.stats.states_asked
        )?;
        self.sinks.describe(out)
    }

    fn json(&self) -> serde_json::Value {
        let players: Vec<_> = self
            .players
            .iter()
            .map(|player| {
                serde_json::json!({
                    "nick": player.nick,
                    "port": player.port,
                    "ping_ms": player.ping_ms,
                })
            })
            .collect();
        let mut json = serde_json::json!({
            "role": "retroarch-host",
            "port": self.port,
            "game": self.title,
            "frames": self.frames,
            "players": players,
            "crcs_sent": self.stats.crcs_sent,
            "states_sent": self.stats.states_sent,
            "states_asked": self.stats.states_asked,
            "end": self.end,
            "outcome": format!("{:?}", self.outcome),
        });
        self.sinks.add_to_json(&mut json);
        json
    }
}

/// Hosts the game `settings` name for RetroArch players on TCP
/// `--port`, until `--frames` are played, the last player leaves or
/// Ctrl-C.
pub fn host_retroarch(
    settings: &HostSettings,
    outputs: &LiveOutputs<'_>,
    options: &LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    let common = &settings.common;
    let retroarch = &settings.retroarch;
    let saves = MatchSaveDir::create(&common.game, "host")?;
    let mut game = open_game(&saves.game_args(&common.game))?;
    let mut state = Vec::new();
    game.save_state(&mut state).map_err(AppError::at_frame(0))?;
    let nick = common.chat.name.clone().unwrap_or_else(|| "netcade".into());
    let config = ServerConfig {
        nick: nick.clone(),
        password: retroarch.password.clone(),
        spectate_password: retroarch.spectate_password.clone(),
        core_name: game.core_name(),
        core_version: game.core_version(),
        content_crc: content_crc(&common.game)?,
        ports: 2,
        check_frames: retroarch.check_frames,
        max_state_bytes: MAX_STATE_BYTES,
    };
    let listening = TcpListening::bind(settings.port).map_err(|source| AppError::Bind {
        address: format!("TCP port {}", settings.port),
        source,
    })?;
    let port = listening.port();
    options.take_ctrl_c();
    let _port_file = match &settings.port_file {
        Some(path) => Some(PortFile::write(path, port)?),
        None => None,
    };
    writeln!(
        out,
        "hosting {} for RetroArch players on TCP port {port}: waiting for a player",
        game.title()
    )?;
    let inputs = InputSource::open(&common.input_spec())?;
    let recorder = match_recorder(
        &outputs.sinks.record,
        game.as_ref(),
        &common.game,
        2,
        vec![nick, "RetroArch player".into()],
    )?;
    let sinks = MatchSinks::open(&outputs.sinks, recorder, game.as_ref(), common.frames)?;
    let frame_time = Duration::from_secs_f64(1.0 / game.frames_per_second().max(1.0));
    let mut host = RetroArchHost {
        session: ServerSession::new(config),
        match_frames: RetroArchFrames::new(game, sinks, state),
        inputs,
        links: BTreeMap::new(),
        started: Instant::now(),
        clock: None,
        frame_time,
        stop_after: common.frames,
        salt_seed: salt_seed(),
        had_player: false,
        marked: false,
        largest_state: 0,
        players: Vec::new(),
    };
    let end = host.run(&listening, out)?;
    host.finish(end, port)
}

/// A salt seed from the clock and the process: a password's salt only has
/// to differ between connections and runs, as RetroArch's does.
fn salt_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos() as u64);
    nanos ^ (u64::from(std::process::id()) << 32) | 1
}

/// How the loop ended.
enum HostEnd {
    Finished,
    PlayersLeft,
    Interrupted,
}

struct RetroArchHost {
    session: ServerSession,
    match_frames: RetroArchFrames,
    inputs: InputSource,
    links: BTreeMap<ConnectionId, TcpLink>,
    started: Instant,
    /// When frame `.1` is due: the frame clock, from the first frame.
    clock: Option<(Instant, u32)>,
    frame_time: Duration,
    stop_after: Option<u32>,
    salt_seed: u64,
    had_player: bool,
    /// Whether the match's start went to the sinks.
    marked: bool,
    /// The connections as last seen, for the report.
    players: Vec<PlayerInfo>,
    /// The largest state sent so far (what a connection may need queued).
    largest_state: usize,
}

impl RetroArchHost {
    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    fn next_salt(&mut self) -> u32 {
        // xorshift64: a salt is no secret, only different each time.
        let mut x = self.salt_seed;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.salt_seed = x;
        (x >> 32) as u32
    }

    fn run(&mut self, listening: &TcpListening, out: &mut dyn Write) -> Result<HostEnd, AppError> {
        let mut received = Vec::new();
        loop {
            while let Some((mut link, _address)) = listening.accept() {
                let salt = self.next_salt();
                match self.session.accept(salt) {
                    Some(id) => {
                        self.links.insert(id, link);
                    }
                    None => {
                        let _ = link.send(&ServerSession::full_header());
                    }
                }
            }
            let ids: Vec<ConnectionId> = self.links.keys().copied().collect();
            for id in ids {
                received.clear();
                let link = self.links.get_mut(&id).expect("a link");
                match link.receive(&mut received) {
                    Ok(Received::Bytes(0)) => {}
                    Ok(Received::Bytes(_)) => self.session.receive(id, &received, self.now_ms()),
                    Ok(Received::Closed) | Err(_) => self.session.closed(id),
                }
            }
            self.session.poll(self.now_ms());
            self.tell_events(out)?;
            if self.had_player && !self.session.has_players() {
                self.flush();
                return Ok(HostEnd::PlayersLeft);
            }
            if self.session.wants_state() {
                let state = self.match_frames.state()?.to_vec();
                if !self.marked {
                    self.marked = true;
                    self.match_frames.mark_state(true, &state)?;
                }
                self.largest_state = self.largest_state.max(state.len());
                self.session.send_state(&state);
            }
            let mut played = false;
            while let Some(frame) = self.session.ready_frame() {
                if self.stop_after.is_some_and(|stop| frame >= stop) {
                    self.players = self.session.players();
                    self.session.leave();
                    self.flush();
                    return Ok(HostEnd::Finished);
                }
                if !self.due(frame) {
                    break;
                }
                self.play_frame(frame)?;
                played = true;
            }
            self.flush();
            if interrupted() {
                self.players = self.session.players();
                self.session.leave();
                self.flush();
                return Ok(HostEnd::Interrupted);
            }
            if !played {
                std::thread::sleep(IDLE_WAIT);
            }
        }
    }

    /// Whether `frame` is due by the clock (set back when it fell far
    /// behind, waiting for a player).
    fn due(&mut self, frame: u32) -> bool {
        let now = Instant::now();
        let (since, first) = *self.clock.get_or_insert((now, frame));
        let due = since + self.frame_time * (frame - first);
        if now >= due + self.frame_time * MOST_FRAMES_BEHIND {
            self.clock = Some((now, frame));
        }
        now >= due
    }

    fn play_frame(&mut self, frame: u32) -> Result<(), AppError> {
        let crc = self.match_frames.crc_if(self.session.wants_crc(frame))?;
        let local = self.inputs.next_frame()[0];
        let ports = self.session.play_frame(u32::from(local.bits()), crc);
        if frame % 60 == 0 {
            self.players = self.session.players();
        }
        self.match_frames.run(ports)
    }

    /// Sends every connection its bytes; forgets the closed ones.
    fn flush(&mut self) {
        let mut outgoing = Vec::new();
        let ids: Vec<ConnectionId> = self.links.keys().copied().collect();
        for id in ids {
            self.session.take_outgoing(id, &mut outgoing);
            let link = self.links.get_mut(&id).expect("a link");
            if !outgoing.is_empty() {
                // A failed send is found closed on the next read.
                let _ = link.send(&outgoing);
                outgoing.clear();
            }
            // A peer that stops reading while it asks for more (pings, the
            // state) costs its own link, never the host's memory.
            if link.queued() > queue_limit(self.largest_state) {
                self.session.closed(id);
            }
            if !self.session.is_open(id) {
                // Its last bytes (a goodbye, a NAK) go if the kernel takes
                // them now: the match never waits on a leaving peer.
                let _ = link.flush();
                self.links.remove(&id);
                self.session.forget(id);
            }
        }
    }

    fn tell_events(&mut self, out: &mut dyn Write) -> Result<(), AppError> {
        while let Some(event) = self.session.next_event() {
            match event {
                ServerEvent::Connected { nick, protocol, .. } => writeln!(
                    out,
                    "{nick} connected (RetroArch netplay protocol {protocol})"
                )?,
                ServerEvent::CoreVersionDiffers { nick, version } => eprintln!(
                    "warning: {nick} runs version {version} of the core; this is {}",
                    self.match_frames.game.core_version()
                ),
                ServerEvent::ContentDiffers { nick } => {
                    eprintln!("warning: {nick}'s content is not the same file as yours")
                }
                ServerEvent::Playing {
                    nick, port, frame, ..
                } => {
                    self.had_player = true;
                    writeln!(
                        out,
                        "{nick} plays as player {} from frame {frame}",
                        port + 1
                    )?
                }
                ServerEvent::PlayRefused { nick, reason } => writeln!(
                    out,
                    "{nick} may only watch ({})",
                    if reason == 1 {
                        "it gave the spectators' password"
                    } else {
                        "no free player slot"
                    }
                )?,
                ServerEvent::StateAsked { nick } => {
                    eprintln!("warning: {nick}'s state is not ours (its CRC check): sending ours")
                }
                ServerEvent::Chat { author, text } => writeln!(out, "<{author}> {text}")?,
                ServerEvent::Refused { nick, why } => {
                    let who = if nick.is_empty() {
                        "a RetroArch peer".to_string()
                    } else {
                        nick
                    };
                    eprintln!("warning: {who} was turned away: it {why}")
                }
                ServerEvent::Left { nick, was_playing } => writeln!(
                    out,
                    "{nick} {}",
                    if was_playing {
                        "stopped playing"
                    } else {
                        "left"
                    }
                )?,
            }
        }
        Ok(())
    }

    fn finish(mut self, end: HostEnd, port: u16) -> Result<LiveMatch, AppError> {
        let players = self.players;
        let (outcome, reason, text) = match end {
            HostEnd::Finished => (Outcome::Success, EndReason::Finished, "finished"),
            HostEnd::Interrupted => (Outcome::Interrupted, EndReason::Interrupted, "interrupted"),
            HostEnd::PlayersLeft if self.stop_after.is_none() => {
                (Outcome::Success, EndReason::Disconnect, "the players left")
            }
            HostEnd::PlayersLeft => (
                Outcome::PeerLost,
                EndReason::Disconnect,
                "the players left before the last frame",
            ),
        };
        let stats = self.session.stats();
        drain(self.links.values_mut());
        let frames = self.match_frames.frames;
        let title = self.match_frames.game.title();
        let (log, sinks) = self.match_frames.sinks.finish(reason)?;
        let report = HostReport {
            title,
            port,
            frames,
            players,
            stats,
            end: text.to_string(),
            outcome,
            sinks,
        };
        Ok(LiveMatch {
            outcome,
            log,
            report: Some(Box::new(report)),
        })
    }
}

/// Gives the links' last bytes (the goodbyes) 200 ms in all to leave, once
/// the match is over.
fn drain<'a>(links: impl Iterator<Item = &'a mut TcpLink>) {
    let deadline = Instant::now() + Duration::from_millis(200);
    for link in links {
        while link.queued() > 0 && Instant::now() < deadline {
            if link.flush().is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// The most a connection may have queued, unsent, before it is dropped:
/// a few states (a reload queued behind another) and room for the frames'.
fn queue_limit(largest_state: usize) -> usize {
    largest_state.saturating_mul(3).saturating_add(1 << 20)
}
