//! `netcade join retroarch://HOST[:PORT]`: a netcade player in a RetroArch
//! host's match. The pure client session (`netcode::retroarch`) speaks the
//! protocol over a TCP link; this loop feeds it the socket's bytes, loads
//! the host's savestates into the game and runs each frame once the
//! session has every player's input of it: in lockstep with the host's
//! frame clock (RetroArch rolls back on its side for our late input).
//! Frames go through the engine's sinks as any final frame does (frame
//! log, audio file, replay), numbered from 0 at the host's savestate.

use crate::engine::inputs::InputSource;
use crate::engine::report::Report;
use crate::engine::sinks::recorder::match_recorder;
use crate::engine::sinks::{FinalFrames, FramePass, FrameSink, MatchSinks, SinksSummary};
use crate::engine::{open_game, AppError, Game, MatchSaveDir, Outcome};
use crate::live::front_end::{
    ConnectStep, ConnectingScreen, FrontEnd, LiveOutputs, MatchView, OpenFrontEnd,
};
use crate::live::options::{interrupted, LiveOptions};
use crate::live::players::{JoinSettings, JOIN_CANCELLED};
use crate::live::session_loop::LiveMatch;
use crate::net::tcp::{Received, TcpLink};
use netcode::checksum::memory_checksum;
use netcode::emulator::SavestateContext;
use netcode::input::{Buttons, FrameInputs, MAX_PLAYERS, NO_INPUTS};
use netcode::replay::EndReason;
use netcode::retroarch::{
    state_crc, ClientConfig, ClientEnd, ClientEvent, ClientSession, ClientStats, DEFAULT_PORT,
};
use netcode::rollback::Frame;
use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

/// The scheme of a RetroArch host's address.
pub const SCHEME: &str = "retroarch://";

/// The most bytes a RetroArch savestate or SRAM may have (the largest
/// cores' states, PlayStation's and Saturn's, are a few MiB).
pub(super) const MAX_STATE_BYTES: usize = 64 * 1024 * 1024;

/// Frames our input goes out ahead of the frame played (see
/// [`ClientConfig::input_lead`]): enough for a netcade host on a LAN.
const INPUT_LEAD: u32 = 2;

/// Longest wait for the host's bytes between two looks at the clock.
const LONGEST_WAIT: Duration = Duration::from_millis(4);

/// Whether `address` names a RetroArch host.
pub fn is_retroarch_address(address: &str) -> bool {
    address.starts_with(SCHEME)
}

/// `retroarch://HOST[:PORT]` as a socket address (port 55435 by default).
pub fn resolve_retroarch(address: &str) -> Result<SocketAddr, AppError> {
    let rest = address.strip_prefix(SCHEME).unwrap_or(address);
    let rest = rest.trim_end_matches('/');
    let bad = |reason: &str| AppError::UnresolvableHost {
        address: address.to_string(),
        reason: reason.to_string(),
    };
    if rest.is_empty() {
        return Err(bad("it names no host: retroarch://HOST[:PORT]"));
    }
    let with_port = match rest.rsplit_once(':') {
        // An IPv6 address in brackets, or a name with a port.
        Some((_, port)) if !rest.ends_with(']') && !port.contains(']') => {
            port.parse::<u16>()
                .map_err(|_| bad("its port is not a number from 0 to 65535"))?;
            rest.to_string()
        }
        _ => format!("{rest}:{DEFAULT_PORT}"),
    };
    with_port
        .to_socket_addrs()
        .map_err(|error| bad(&error.to_string()))?
        .next()
        .ok_or_else(|| bad("it has no address"))
}

/// How a RetroArch match went.
struct RetroArchReport {
    host: String,
    address: SocketAddr,
    title: String,
    frames: u32,
    first_host_frame: Option<u32>,
    last_host_frame: Option<u32>,
    port: Option<u32>,
    stats: ClientStats,
    end: RetroArchEnd,
    outcome: Outcome,
    seconds: f64,
    sinks: SinksSummary,
}

/// How a match with RetroArch peers ended, as its summary and the
/// launcher's result screen say it (the JSON names are netcade matches').
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RetroArchEnd {
    /// Every frame asked for was played.
    Finished,
    /// Ctrl-C, SIGTERM or SIGHUP.
    Interrupted,
    /// The window was closed, or Leave chosen in it.
    WindowClosed,
    /// The host's Cancel before any RetroArch player came.
    Cancelled,
    /// The other side left (the host, or the host's last player), after
    /// the last frame asked for or with none asked for.
    PeerLeft,
    /// The other side left before the last frame asked for.
    PeerLeftEarly,
}

impl RetroArchEnd {
    /// The end in words; `other`: who left ("the host", "the players").
    pub(super) fn words(self, other: &str) -> String {
        match self {
            RetroArchEnd::Finished => "finished".to_string(),
            RetroArchEnd::Interrupted => "interrupted".to_string(),
            RetroArchEnd::WindowClosed => "you left".to_string(),
            RetroArchEnd::Cancelled => "hosting cancelled before anyone joined".to_string(),
            RetroArchEnd::PeerLeft => format!("{other} left"),
            RetroArchEnd::PeerLeftEarly => format!("{other} left before the last frame"),
        }
    }

    /// The JSON's `end`, named as a netcade match's.
    pub(super) fn json_name(self) -> &'static str {
        match self {
            RetroArchEnd::Finished => "finished",
            RetroArchEnd::Interrupted => "interrupted",
            RetroArchEnd::WindowClosed => "window_closed",
            RetroArchEnd::Cancelled => "cancelled",
            RetroArchEnd::PeerLeft | RetroArchEnd::PeerLeftEarly => "peer_left",
        }
    }

    /// The exit's outcome and the replay's end record.
    pub(super) fn outcome(self) -> (Outcome, EndReason) {
        match self {
            RetroArchEnd::Finished => (Outcome::Success, EndReason::Finished),
            RetroArchEnd::Interrupted => (Outcome::Interrupted, EndReason::Interrupted),
            RetroArchEnd::WindowClosed | RetroArchEnd::Cancelled => {
                (Outcome::Success, EndReason::Interrupted)
            }
            RetroArchEnd::PeerLeft => (Outcome::Success, EndReason::Disconnect),
            RetroArchEnd::PeerLeftEarly => (Outcome::PeerLost, EndReason::Disconnect),
        }
    }
}

impl Report for RetroArchReport {
    fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "played {} frames of {} with RetroArch host {} ({}){}: {}",
            self.frames,
            self.title,
            self.host,
            self.address,
            self.port
                .map(|port| format!(" as player {}", port + 1))
                .unwrap_or_default(),
            self.end.words("the host")
        )?;
        if let (Some(first), Some(last)) = (self.first_host_frame, self.last_host_frame) {
            writeln!(out, "host frames {first}..{last}")?;
        }
        writeln!(
            out,
            "state checks: {} of the host's CRCs compared, {} mismatched; {} host states loaded; {} stalls asked{}",
            self.stats.crc_checks,
            self.stats.crc_mismatches,
            self.stats.states_loaded,
            self.stats.stalls,
            self.stats
                .ping_ms
                .map(|ping| format!("; ping {ping} ms"))
                .unwrap_or_default()
        )?;
        self.sinks.describe(out)
    }

    fn json(&self) -> serde_json::Value {
        let mut json = serde_json::json!({
            "role": "retroarch-client",
            "host": self.host,
            "address": self.address.to_string(),
            "game": self.title,
            "frames": self.frames,
            "first_host_frame": self.first_host_frame,
            "last_host_frame": self.last_host_frame,
            "port": self.port,
            "crc_checks": self.stats.crc_checks,
            "crc_mismatches": self.stats.crc_mismatches,
            "states_loaded": self.stats.states_loaded,
            "stalls": self.stats.stalls,
            "ping_ms": self.stats.ping_ms,
            "end": self.end.json_name(),
            "ended": self.end.words("the host"),
            "seconds": self.seconds,
            "outcome": format!("{:?}", self.outcome),
        });
        self.sinks.add_to_json(&mut json);
        json
    }
}

/// Plays in the RetroArch host's match at `address` (`retroarch://…`)
/// with the game and buttons `settings` name, until `--frames` are played,
/// the host leaves or Ctrl-C.
pub fn join_retroarch(
    settings: &JoinSettings,
    address: &str,
    outputs: &LiveOutputs<'_>,
    options: &LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    let seat = RetroArchSeat {
        address,
        game: &settings.common.game,
        frames: settings.common.frames,
        inputs: settings.common.input_spec(),
        nick: settings.common.chat.name.clone(),
        password: settings.password.clone(),
        connect_timeout_s: settings.connect_timeout_s,
        spectate: false,
    };
    play_retroarch(&seat, outputs, options, out)
}

/// Watches the RetroArch host's match at `address` (`retroarch://…`) as
/// a spectator (RetroArch's NOINPUT mode: the host's stream, no input of
/// ours), until `frames` are watched, the host leaves or Ctrl-C.
pub fn spectate_retroarch(
    settings: &crate::live::spectator::SpectateSettings,
    address: &str,
    outputs: &LiveOutputs<'_>,
    options: &LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    let seat = RetroArchSeat {
        address,
        game: &settings.game,
        frames: settings.frames,
        inputs: crate::engine::inputs::InputSpec::Idle,
        nick: settings.chat.name.clone(),
        password: settings.password.clone(),
        connect_timeout_s: settings.connect_timeout_s,
        spectate: true,
    };
    play_retroarch(&seat, outputs, options, out)
}

/// Where and how a RetroArch host's match is joined.
struct RetroArchSeat<'a> {
    address: &'a str,
    game: &'a crate::engine::GameArgs,
    frames: Option<u32>,
    inputs: crate::engine::inputs::InputSpec,
    nick: Option<String>,
    password: Option<String>,
    connect_timeout_s: f64,
    /// Watch only.
    spectate: bool,
}

fn play_retroarch(
    seat: &RetroArchSeat<'_>,
    outputs: &LiveOutputs<'_>,
    options: &LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    let address = seat.address;
    let game_args = seat.game;
    let host = resolve_retroarch(address)?;
    let saves = MatchSaveDir::create(game_args, if seat.spectate { "spectate" } else { "join" })?;
    let mut game = open_game(&saves.game_args(game_args))?;
    let mut state = Vec::new();
    game.save_state(&mut state).map_err(AppError::at_frame(0))?;
    let config = ClientConfig {
        nick: seat.nick.clone().unwrap_or_else(|| "netcade".into()),
        password: seat.password.clone(),
        core_name: game.core_name(),
        core_version: game.core_version(),
        content_crc: content_crc(game_args)?,
        state_size: state.len(),
        max_state_bytes: MAX_STATE_BYTES,
        spectate: seat.spectate,
        input_lead: INPUT_LEAD,
    };
    let timeout = Duration::from_secs_f64(seat.connect_timeout_s.max(0.1));
    // The window opens now, before anything waits on the network.
    let mut screen = outputs.front_end.connecting(address)?;
    let started = Instant::now();
    let Some(mut link) = connect_showing(host, timeout, started, screen.as_mut())? else {
        return Ok(join_cancelled(out)?);
    };
    writeln!(
        out,
        "{} RetroArch host {host} with {}",
        if seat.spectate { "watching" } else { "joining" },
        game.title()
    )?;
    options.take_ctrl_c();
    let inputs = InputSource::open(&seat.inputs)?;
    let recorder = match_recorder(
        &outputs.sinks.record,
        game.as_ref(),
        game_args,
        2,
        vec!["RetroArch host".into(), config.nick.clone()],
    )?;
    let sinks = MatchSinks::open(&outputs.sinks, recorder, game.as_ref(), seat.frames)?;
    let nick = config.nick.clone();
    let mut play = RetroArchPlay {
        session: ClientSession::new(config),
        match_frames: RetroArchFrames::new(game, sinks, state),
        inputs,
        first_host_frame: None,
        last_host_frame: None,
        stop_after: seat.frames,
        started,
        timeout,
        port: None,
        screen,
        opener: outputs.front_end,
        front: None,
        window_buttons: None,
        new_picture: false,
        nick,
    };
    let end = play.run(&mut link, out)?;
    if matches!(end, PlayEnd::Cancelled) {
        play.session.leave();
        play.flush(&mut link, &mut Vec::new());
        drain_link(&mut link);
        return Ok(join_cancelled(out)?);
    }
    play.finish(end, host, &mut link)
}

/// Connects to `host` on a worker thread while `screen` shows the wait
/// (a silent address takes the whole timeout): the link, or none when the
/// player cancelled.
fn connect_showing(
    host: SocketAddr,
    timeout: Duration,
    started: Instant,
    screen: &mut dyn ConnectingScreen,
) -> Result<Option<TcpLink>, AppError> {
    let (done, outcome) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // The receiver is gone when the player cancelled: nothing to tell.
        let _ = done.send(TcpLink::connect(host, timeout));
    });
    loop {
        if screen.show(ConnectStep::Handshake, started.elapsed(), timeout) {
            return Ok(None);
        }
        match outcome.recv_timeout(Duration::from_millis(1)) {
            Ok(link) => {
                return link.map(Some).map_err(|source| AppError::Connect {
                    address: format!("RetroArch host {host}"),
                    source,
                })
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(AppError::Connect {
                    address: format!("RetroArch host {host}"),
                    source: std::io::Error::other("the connecting thread ended"),
                })
            }
        }
    }
}

/// A join the player cancelled before its match began: no summary, the
/// form shows again in the launcher.
fn join_cancelled(out: &mut dyn Write) -> std::io::Result<LiveMatch> {
    writeln!(out, "{JOIN_CANCELLED}")?;
    Ok(LiveMatch {
        outcome: Outcome::Success,
        log: crate::engine::sinks::ChecksumLog::new(1),
        report: None,
    })
}

/// Gives a link's last bytes (a goodbye) 200 ms to leave.
pub(super) fn drain_link(link: &mut TcpLink) {
    let deadline = Instant::now() + Duration::from_millis(200);
    while link.queued() > 0 && Instant::now() < deadline {
        if link.flush().is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The CRC-32 of the content file, as RetroArch's INFO carries it (0: no
/// content).
pub(super) fn content_crc(game: &crate::engine::GameArgs) -> Result<u32, AppError> {
    let Some(rom) = &game.rom else {
        return Ok(0);
    };
    let bytes = std::fs::read(rom).map_err(|source| AppError::OpenFile {
        what: "the content",
        path: rom.clone(),
        source,
    })?;
    Ok(state_crc(&bytes))
}

/// How the loop ended.
enum PlayEnd {
    /// `--frames` were played.
    Finished,
    /// The session ended (the host left, or an error).
    Session(ClientEnd),
    /// Ctrl-C.
    Interrupted,
    /// The window was closed, or Leave chosen in it.
    WindowClosed,
    /// Cancel on the connecting screen, before the host's state came.
    Cancelled,
}

/// The game of a match with RetroArch peers and where its frames go: each
/// frame's ports' buttons in, the frame run and shown through the sinks.
pub(super) struct RetroArchFrames {
    pub(super) game: Box<dyn Game>,
    pub(super) sinks: MatchSinks,
    final_frames: FinalFrames,
    scratch: Vec<u8>,
    /// Frames played.
    pub(super) frames: u32,
}

impl RetroArchFrames {
    pub(super) fn new(game: Box<dyn Game>, sinks: MatchSinks, scratch: Vec<u8>) -> Self {
        RetroArchFrames {
            game,
            sinks,
            final_frames: FinalFrames::new(true),
            scratch,
            frames: 0,
        }
    }

    /// The game's state now, as RetroArch's peers send and hash it.
    pub(super) fn state(&mut self) -> Result<&[u8], AppError> {
        self.game
            .save_state(&mut self.scratch)
            .map_err(AppError::at_frame(self.frames))?;
        Ok(&self.scratch)
    }

    /// The CRC-32 RetroArch checks of the state now, when `wanted`.
    pub(super) fn crc_if(&mut self, wanted: bool) -> Result<Option<u32>, AppError> {
        Ok(if wanted {
            Some(state_crc(self.state()?))
        } else {
            None
        })
    }

    /// Marks the match's start (or a repair) at `state`, the game's now.
    pub(super) fn mark_state(&mut self, first: bool, state: &[u8]) -> Result<(), AppError> {
        let ours = Frame::new(self.frames);
        let memory = memory_checksum(&mut *self.game, &mut self.scratch)
            .map_err(AppError::at_frame(self.frames))?;
        if first {
            self.sinks.match_started(ours, state, memory);
        } else {
            // A repair: the frames the host's state skips are not played here.
            self.sinks.state_repaired(ours, state, memory);
        }
        Ok(())
    }

    /// Runs the next frame with each port's libretro joypad bits.
    pub(super) fn run(&mut self, ports: [u32; 16]) -> Result<(), AppError> {
        let mut inputs: FrameInputs = NO_INPUTS;
        for (held, port) in inputs.iter_mut().zip(ports) {
            *held = Buttons::from_bits(port as u16);
        }
        let frame = Frame::new(self.frames);
        self.final_frames.run(
            &mut *self.game,
            frame,
            &inputs[..2],
            FramePass::Shown,
            &mut self.sinks,
        )?;
        self.sinks.frame_shown(frame, self.game.video_frame());
        self.frames += 1;
        Ok(())
    }
}

struct RetroArchPlay<'a> {
    session: ClientSession,
    match_frames: RetroArchFrames,
    inputs: InputSource,
    first_host_frame: Option<u32>,
    last_host_frame: Option<u32>,
    stop_after: Option<u32>,
    started: Instant,
    timeout: Duration,
    /// Our port (0-based), once the host gave us one.
    port: Option<u32>,
    /// Shows the wait until the host's state comes.
    screen: Box<dyn ConnectingScreen>,
    /// Opens the match's front end once the host's state is loaded.
    opener: &'a dyn OpenFrontEnd,
    /// The match's front end, once its game is the host's.
    front: Option<Box<dyn FrontEnd>>,
    /// The window's player's buttons (none: `--inputs` plays).
    window_buttons: Option<Buttons>,
    /// Whether frames ran since the front end last showed one.
    new_picture: bool,
    /// The name we play under, for our chat lines.
    nick: String,
}

impl RetroArchPlay<'_> {
    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    fn run(&mut self, link: &mut TcpLink, out: &mut dyn Write) -> Result<PlayEnd, AppError> {
        let mut received = Vec::new();
        let mut outgoing = Vec::new();
        loop {
            if let Some(front) = &mut self.front {
                self.window_buttons = front.local_buttons();
                if let Some(volume) = front.volume_changed() {
                    self.match_frames.sinks.set_volume(volume);
                }
                while let Some(line) = front.take_chat_line() {
                    self.session.say(&line);
                    front.show_chat(&self.nick, &line);
                }
            }
            received.clear();
            match link.receive(&mut received) {
                Ok(Received::Closed) => self.session.closed(),
                Ok(Received::Bytes(_)) => self.session.receive(&received, self.now_ms()),
                Err(_) => self.session.closed(),
            }
            self.session.poll(self.now_ms());
            if let Some(end) = self.tell_events(out)? {
                return Ok(PlayEnd::Session(end));
            }
            if let Some((frame, state)) = self.session.take_state() {
                self.load_host_state(frame, &state)?;
            }
            while let Some(frame) = self.session.ready_frame() {
                if self
                    .stop_after
                    .is_some_and(|stop| self.match_frames.frames >= stop)
                {
                    self.session.leave();
                    self.flush(link, &mut outgoing);
                    return Ok(PlayEnd::Finished);
                }
                self.play_frame(frame)?;
            }
            self.flush(link, &mut outgoing);
            if interrupted() {
                self.session.leave();
                self.flush(link, &mut outgoing);
                return Ok(PlayEnd::Interrupted);
            }
            if let Some(end) = self.show() {
                if matches!(end, PlayEnd::WindowClosed) {
                    self.session.leave();
                    self.flush(link, &mut outgoing);
                }
                return Ok(end);
            }
            if !self.session.is_connected() && self.started.elapsed() > self.timeout {
                return Err(AppError::NoAnswer {
                    address: "the RetroArch host".into(),
                    seconds: self.timeout.as_secs_f64(),
                });
            }
            link.wait(LONGEST_WAIT);
        }
    }

    /// Shows the match (or the wait for it) after a pass of the loop: the
    /// end, when the player cancelled or left in the window.
    fn show(&mut self) -> Option<PlayEnd> {
        let Some(front) = &mut self.front else {
            let step = if self.session.is_connected() {
                ConnectStep::LoadingHostState
            } else {
                ConnectStep::Handshake
            };
            let cancelled = self.screen.show(step, self.started.elapsed(), self.timeout);
            return cancelled.then_some(PlayEnd::Cancelled);
        };
        let stats = self.session.stats();
        let view = MatchView {
            frame: self.match_frames.frames,
            new_picture: std::mem::take(&mut self.new_picture),
            connection: Some(format!(
                "RetroArch host {}{}",
                self.session.host_nick(),
                stats
                    .ping_ms
                    .map(|ping| format!(", ping {ping} ms"))
                    .unwrap_or_default()
            )),
            ..MatchView::default()
        };
        front.present(self.match_frames.game.as_ref(), &view);
        front.quit_requested().then_some(PlayEnd::WindowClosed)
    }

    fn flush(&mut self, link: &mut TcpLink, outgoing: &mut Vec<u8>) {
        self.session.take_outgoing(outgoing);
        if !outgoing.is_empty() {
            // A host that stops reading ends the match on the next read.
            let _ = link.send(outgoing);
            outgoing.clear();
        }
    }

    /// Says what happened; the end, once the session ended.
    fn tell_events(&mut self, out: &mut dyn Write) -> Result<Option<ClientEnd>, AppError> {
        while let Some(event) = self.session.next_event() {
            match event {
                ClientEvent::Connected {
                    host,
                    protocol,
                    frame,
                } => writeln!(
                    out,
                    "connected to {host} (RetroArch netplay protocol {protocol}), its frame {frame}"
                )?,
                ClientEvent::CoreVersionDiffers { host } => eprintln!(
                    "warning: the host runs version {host} of the core; this is {}",
                    self.match_frames.game.core_version()
                ),
                ClientEvent::ContentDiffers => {
                    eprintln!("warning: the host's content is not the same file as yours")
                }
                ClientEvent::Playing { devices, frame, .. } => {
                    self.port = (0..16).find(|port| devices & (1 << port) != 0);
                    writeln!(
                        out,
                        "playing as player {} from the host's frame {frame}",
                        self.port.map_or(0, |port| port + 1)
                    )?
                }
                ClientEvent::PlayRefused(reason) => writeln!(
                    out,
                    "the host refused to let us play ({}): watching",
                    match reason {
                        1 => "not allowed",
                        2 => "no free player slot",
                        3 => "too soon",
                        4 => "that slot is taken",
                        _ => "no reason given",
                    }
                )?,
                ClientEvent::PlayerJoined { nick, devices } => {
                    writeln!(out, "{nick} plays (ports {devices:#x})")?
                }
                ClientEvent::PlayerLeft { nick } => writeln!(out, "{nick} stopped playing")?,
                ClientEvent::Chat { author, text } => {
                    if let Some(front) = &mut self.front {
                        front.show_chat(&author, &text);
                    }
                    writeln!(out, "<{author}> {text}")?
                }
                ClientEvent::Paused(nick) => {
                    self.notice(&format!("{nick} paused"));
                    writeln!(out, "{nick} paused")?
                }
                ClientEvent::Resumed => {
                    self.notice("resumed");
                    writeln!(out, "resumed")?
                }
                ClientEvent::Desynced { frame } => {
                    self.notice(&format!("desync at the host's frame {frame}: repairing"));
                    eprintln!(
                        "warning: the host's state of its frame {frame} is not ours: asking for its state"
                    )
                }
                ClientEvent::Ended(end) => return Ok(Some(end)),
            }
        }
        Ok(None)
    }

    /// Tells the window's player something briefly.
    fn notice(&mut self, text: &str) {
        if let Some(front) = &mut self.front {
            front.notice(text);
        }
    }

    fn load_host_state(&mut self, frame: u32, state: &[u8]) -> Result<(), AppError> {
        let game = &mut self.match_frames.game;
        game.set_savestate_context(SavestateContext::Netplay);
        game.load_state(state)
            .map_err(AppError::at_frame(self.match_frames.frames))?;
        let first = self.first_host_frame.is_none();
        if first {
            self.first_host_frame = Some(frame);
            // The match's window takes over the connecting screen's.
            self.screen.hand_over();
            self.front = Some(
                self.opener
                    .open_front_end(self.match_frames.game.as_ref())?,
            );
        }
        self.new_picture = true;
        self.match_frames.mark_state(first, state)
    }

    fn play_frame(&mut self, host_frame: u32) -> Result<(), AppError> {
        let crc = self
            .match_frames
            .crc_if(self.session.wants_crc(host_frame))?;
        let column = self.port.unwrap_or(1) as usize % MAX_PLAYERS;
        let scripted = self.inputs.next_frame()[column];
        let local = self.window_buttons.unwrap_or(scripted);
        let ports = self.session.play_frame(u32::from(local.bits()), crc);
        self.match_frames.run(ports)?;
        self.new_picture = true;
        self.last_host_frame = Some(host_frame);
        Ok(())
    }

    fn finish(
        mut self,
        end: PlayEnd,
        address: SocketAddr,
        link: &mut TcpLink,
    ) -> Result<LiveMatch, AppError> {
        // Our goodbye, given a moment to leave.
        drain_link(link);
        let played_out = self.stop_after.is_none();
        let end = match end {
            PlayEnd::Finished => RetroArchEnd::Finished,
            PlayEnd::Interrupted => RetroArchEnd::Interrupted,
            PlayEnd::WindowClosed => RetroArchEnd::WindowClosed,
            PlayEnd::Cancelled => RetroArchEnd::Cancelled,
            PlayEnd::Session(ClientEnd::HostLeft) if played_out => RetroArchEnd::PeerLeft,
            PlayEnd::Session(ClientEnd::HostLeft) => RetroArchEnd::PeerLeftEarly,
            PlayEnd::Session(end) => return Err(AppError::RetroArch(end)),
        };
        let (outcome, reason) = end.outcome();
        let (log, sinks) = self.match_frames.sinks.finish(reason)?;
        let report = RetroArchReport {
            host: self.session.host_nick().to_string(),
            address,
            title: self.match_frames.game.title(),
            frames: self.match_frames.frames,
            first_host_frame: self.first_host_frame,
            last_host_frame: self.last_host_frame,
            port: self.port,
            stats: self.session.stats(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retroarch_address_takes_the_default_port_unless_it_names_one() {
        let port = |address: &str| resolve_retroarch(address).map(|found| found.port());
        assert_eq!(port("retroarch://127.0.0.1").unwrap(), DEFAULT_PORT);
        assert_eq!(port("retroarch://127.0.0.1:55500/").unwrap(), 55500);
        assert_eq!(port("retroarch://[::1]").unwrap(), DEFAULT_PORT);
        assert_eq!(port("retroarch://[::1]:7000").unwrap(), 7000);
        let error = port("retroarch://127.0.0.1:99999").unwrap_err().to_string();
        assert!(error.contains("port is not a number"), "{error}");
        let error = port("retroarch://").unwrap_err().to_string();
        assert!(error.contains("names no host"), "{error}");
    }
}
