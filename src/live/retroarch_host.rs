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
use crate::engine::sinks::{FrameSink, MatchSinks, SinksSummary};
use crate::engine::{open_game, AppError, MatchSaveDir, Outcome};
use crate::live::front_end::{FrontEnd, LiveOutputs, MatchView};
use crate::live::options::{interrupted, LiveOptions};
use crate::live::players::port_file::PortFile;
use crate::live::players::HostSettings;
use crate::live::retroarch::{
    content_crc, drain_link, RetroArchEnd, RetroArchFrames, MAX_STATE_BYTES,
};
use crate::live::session_loop::LiveMatch;
use crate::net::tcp::{Received, TcpLink, TcpListening};
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
    end: RetroArchEnd,
    outcome: Outcome,
    seconds: f64,
    sinks: SinksSummary,
}

impl Report for HostReport {
    fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "hosted {} frames of {} for RetroArch players on TCP port {}: {}",
            self.frames,
            self.title,
            self.port,
            self.end.words("the players")
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
            "state checks: {} CRCs sent, {} states sent, {} asked for by players; {} stalls asked",
            self.stats.crcs_sent,
            self.stats.states_sent,
            self.stats.states_asked,
            self.stats.stalls_sent
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
            "stalls_sent": self.stats.stalls_sent,
            "end": self.end.json_name(),
            "ended": self.end.words("the players"),
            "seconds": self.seconds,
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
        // As RetroArch with "Allow pausing" on: a player's pause holds
        // everyone's clock, and its resume lets it go.
        allow_pausing: true,
    };
    let listening = TcpListening::bind(settings.port).map_err(|source| AppError::Bind {
        address: format!("TCP port {}", settings.port),
        source,
    })?;
    let port = listening.port();
    let front = outputs.front_end.open_front_end(game.as_ref())?;
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
        vec![nick.clone(), "RetroArch player".into()],
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
        front,
        port,
        new_picture: false,
        window_buttons: None,
        nick,
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
    /// The window (or none), with the waiting panel until a player came.
    front: Box<dyn FrontEnd>,
    /// The TCP port listened on.
    port: u16,
    /// Whether frames ran since the front end last showed one.
    new_picture: bool,
    /// The window's player's buttons (none: `--inputs` plays).
    window_buttons: Option<netcode::input::Buttons>,
    /// The name we host under, for our chat lines.
    nick: String,
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

    fn run(
        &mut self,
        listening: &TcpListening,
        out: &mut dyn Write,
    ) -> Result<RetroArchEnd, AppError> {
        let mut received = Vec::new();
        loop {
            self.read_front_end();
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
            if self.session.handshaking() {
                // The SYNC a new connection gets carries the save RAM now.
                let sram = self.match_frames.game.save_ram().unwrap_or_default();
                self.session.set_sram(sram);
            }
            self.session.poll(self.now_ms());
            self.tell_events(out)?;
            if self.had_player && !self.session.has_players() {
                self.flush();
                return Ok(self.players_left());
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
                    return Ok(RetroArchEnd::Finished);
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
                return Ok(RetroArchEnd::Interrupted);
            }
            if self.show(played) {
                self.players = self.session.players();
                self.session.leave();
                self.flush();
                return Ok(if self.had_player {
                    RetroArchEnd::WindowClosed
                } else {
                    RetroArchEnd::Cancelled
                });
            }
            if !played {
                std::thread::sleep(IDLE_WAIT);
            }
        }
    }

    /// The end when the last player left: early when frames were asked for.
    fn players_left(&self) -> RetroArchEnd {
        if self.stop_after.is_none() {
            RetroArchEnd::PeerLeft
        } else {
            RetroArchEnd::PeerLeftEarly
        }
    }

    /// Reads the window's player's buttons and what was done in it.
    fn read_front_end(&mut self) {
        self.window_buttons = self.front.local_buttons();
        if let Some(volume) = self.front.volume_changed() {
            self.match_frames.sinks.set_volume(volume);
        }
        while let Some(line) = self.front.take_chat_line() {
            self.session.say(&line);
            self.front.show_chat(&self.nick, &line);
        }
    }

    /// Shows the match (the waiting panel until a player came); whether
    /// the player left in the window (or cancelled the wait).
    fn show(&mut self, played: bool) -> bool {
        let view = MatchView {
            frame: self.match_frames.frames,
            new_picture: std::mem::take(&mut self.new_picture) || played,
            listening: (!self.had_player).then_some(self.port),
            connection: (!self.players.is_empty()).then(|| {
                let each = self.players.iter().map(|player| match player.ping_ms {
                    Some(ping) => format!("{} ping {ping} ms", player.nick),
                    None => player.nick.clone(),
                });
                format!("RetroArch: {}", each.collect::<Vec<_>>().join(", "))
            }),
            ..MatchView::default()
        };
        self.front.present(self.match_frames.game.as_ref(), &view);
        self.front.quit_requested()
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
        let scripted = self.inputs.next_frame()[0];
        let local = self.window_buttons.unwrap_or(scripted);
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
                    self.front
                        .notice(&format!("{nick} plays as player {}", port + 1));
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
                ServerEvent::Paused { nick } => {
                    self.front.notice(&format!("{nick} paused"));
                    writeln!(out, "{nick} paused the match")?
                }
                ServerEvent::Resumed { nick } => {
                    self.front.notice(&format!("{nick} resumed"));
                    // The clock does not catch up the paused time.
                    self.clock = None;
                    writeln!(out, "{nick} resumed")?
                }
                ServerEvent::Chat { author, text } => {
                    self.front.show_chat(&author, &text);
                    writeln!(out, "<{author}> {text}")?
                }
                ServerEvent::Refused { nick, why } => {
                    let who = if nick.is_empty() {
                        "a RetroArch peer".to_string()
                    } else {
                        nick
                    };
                    eprintln!("warning: {who} was turned away: it {why}")
                }
                ServerEvent::Left { nick, was_playing } => {
                    self.front.notice(&format!("{nick} left"));
                    writeln!(
                        out,
                        "{nick} {}",
                        if was_playing {
                            "stopped playing"
                        } else {
                            "left"
                        }
                    )?
                }
            }
        }
        Ok(())
    }

    fn finish(mut self, end: RetroArchEnd, port: u16) -> Result<LiveMatch, AppError> {
        let players = self.players;
        let (outcome, reason) = end.outcome();
        let stats = self.session.stats();
        // The goodbyes get 200 ms each to leave, once the match is over.
        self.links.values_mut().for_each(drain_link);
        let frames = self.match_frames.frames;
        let title = self.match_frames.game.title();
        let (log, sinks) = self.match_frames.sinks.finish(reason)?;
        let report = HostReport {
            title,
            port,
            frames,
            players,
            stats,
            end,
            outcome,
            seconds: self.started.elapsed().as_secs_f64(),
            sinks,
        };
        Ok(LiveMatch {
            outcome,
            log,
            report: Some(Box::new(report)),
        })
    }
}

/// The most a connection may have queued, unsent, before it is dropped:
/// a few states (a reload queued behind another) and room for the frames'.
fn queue_limit(largest_state: usize) -> usize {
    largest_state.saturating_mul(3).saturating_add(1 << 20)
}
