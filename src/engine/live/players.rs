//! `netcade host` and `netcade join`: a two-player match over real UDP,
//! headless. The real-time frame loop here paces the one
//! [`NetplayMachine::tick`] (the demo and the tests run the same tick on a
//! simulated clock) with the monotonic clock: it waits in the kernel until
//! the next frame's deadline or a datagram's arrival, whichever comes first
//! ([`Transport::wait`]), and frames fall due from the start moment on (the
//! [`FrameClock`]), so the pace never drifts.
//!
//! Before the match a rollback pre-flight sync-tests the loaded core with the
//! one sync-test engine. It runs on the match's own core and then restores
//! the state the core had just after loading: every machine runs the same
//! pre-flight (same frames, same buttons), so even a core that restores its
//! state imperfectly starts the match the same way everywhere.

use crate::checksum::{Checksum, Checksums};
use crate::diff::ByteDiff;
use crate::engine::frame_clock::FrameClock;
use crate::engine::inputs::{FrameInputs, InputSource, InputSpec, RandomPlayer};
use crate::engine::live::front_end::{open_front_end, MatchView};
use crate::engine::netplay::desync_diagnosis::DesyncAnswer;
use crate::engine::netplay::hooks::TickHooks;
use crate::engine::netplay::machine::NetplayMachine;
use crate::engine::sinks::audio_file::{AudioArgs, AudioSink, AudioSummary};
use crate::engine::sinks::recorder::{
    finish_match_recording, match_recorder, RecordArgs, RecordingSummary, ReplayRecorder,
};
use crate::engine::sinks::{ChecksumLog, FinalFrame, FinishedFrame, FrameSink};
use crate::engine::{checksums_json, open_game, AppError, Game, GameArgs, Outcome};
use crate::input::Buttons;
use crate::net::link::{LinkArgs, LinkTransport};
use crate::net::{ip_udp_header_bytes, NetError, Transport, IPV4_UDP_HEADER_BYTES};
use crate::netplay::{NetplayConfig, NetplayEvent, NetplaySession, NetplayStats};
use crate::protocol::{CoreOption, PlayerSlots, SessionSettings, SessionToken, MAX_CORE_OPTIONS};
use crate::replay::EndReason;
use crate::rollback::synctest::{run_sync_test, SyncTestSettings};
use crate::rollback::{DisconnectReason, Frame, PlayerId};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::{IsTerminal, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Options `host` and `join` share.
#[derive(Clone, Debug, clap::Args)]
pub struct MatchArgs {
    /// The core, its content and options: the same on every machine.
    #[command(flatten)]
    pub game: GameArgs,
    /// No window: the terminal only, buttons from --inputs (always so in
    /// a build without the `gui` feature).
    #[arg(long)]
    pub headless: bool,
    /// How the window shows the game (builds with the `gui` feature).
    #[cfg(feature = "gui")]
    #[command(flatten)]
    pub display: crate::gui::window::DisplayArgs,
    /// Where this machine's buttons come from: none, random:SEED (the
    /// player's column of `run --inputs random:SEED`), or an input script file.
    #[arg(long, value_name = "SOURCE", default_value_t = InputSpec::default())]
    pub inputs: InputSpec,
    /// End the match cleanly after N frames on every machine [default: play
    /// until Ctrl-C or the peer leaves]. Both machines must give the same N.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub frames: Option<u32>,
    /// End the output with one JSON object on its own line.
    #[arg(long)]
    pub json: bool,
    /// Refuse to play (exit 2) when the rollback pre-flight finds that the
    /// core does not restore its state faithfully (else: a warning).
    #[arg(long)]
    pub strict: bool,
    /// Local input delay in frames: `auto` follows the network, a number
    /// (0–4) keeps it fixed.
    #[arg(long, value_name = "auto|N", default_value_t = DelayArg::Auto)]
    pub delay: DelayArg,
    /// The socket transport and the link conditioner over it.
    #[command(flatten)]
    pub link: LinkArgs,
    /// Where the joiner writes both versions of a desynced checkpoint and
    /// the report naming the bytes that differ.
    #[arg(long, value_name = "DIR", default_value = "netcade-dumps")]
    pub dump_dir: PathBuf,
    /// Where the match's replay goes (`--record PATH`, `--no-record`).
    #[command(flatten)]
    pub record: RecordArgs,
    /// Audio output.
    #[command(flatten)]
    pub audio: AudioArgs,
    /// The speaker.
    #[cfg(feature = "audio")]
    #[command(flatten)]
    pub speaker: crate::engine::sinks::speaker::SpeakerArgs,
}

/// Arguments of `netcade host`.
#[derive(Clone, Debug, clap::Args)]
pub struct HostArgs {
    /// What both commands take.
    #[command(flatten)]
    pub common: MatchArgs,
    /// The UDP port to listen on (0: any free port; see --port-file).
    #[arg(long, default_value_t = 7000)]
    pub port: u16,
    /// Players in the match (one per machine; only 2 for now).
    #[arg(long, default_value_t = 2)]
    pub players: u8,
    /// Writes the port listened on to this file once bound.
    #[arg(long, value_name = "PATH")]
    pub port_file: Option<PathBuf>,
    /// Spectators fed at most at once (0: none accepted).
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub max_spectators: usize,
}

/// Arguments of `netcade join`.
#[derive(Clone, Debug, clap::Args)]
pub struct JoinArgs {
    /// The host's address: HOST:PORT (a name or an IP; IPv6 in brackets, `[::1]:7000`).
    #[arg(value_name = "HOST:PORT")]
    pub address: String,
    /// What both commands take.
    #[command(flatten)]
    pub common: MatchArgs,
    /// Seconds to wait for the host to answer before giving up.
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    pub connect_timeout_s: f64,
}

/// `--delay`: follow the network, or a fixed number of frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DelayArg {
    /// The delay follows the network (seed 000's hysteresis).
    Auto,
    /// This many frames, always.
    Fixed(u8),
}

impl fmt::Display for DelayArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DelayArg::Auto => f.write_str("auto"),
            DelayArg::Fixed(frames) => write!(f, "{frames}"),
        }
    }
}

impl FromStr for DelayArg {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if text.eq_ignore_ascii_case("auto") {
            return Ok(DelayArg::Auto);
        }
        let most = SessionSettings::default().input_delay_max;
        match text.parse::<u8>() {
            Ok(frames) if frames <= most => Ok(DelayArg::Fixed(frames)),
            _ => Err(format!(
                "expected auto or a number of frames from 0 to {most}"
            )),
        }
    }
}

/// Silence before the peer is reported interrupted, and gone (the session's
/// timings: a warning at 750 ms, the peer dropped at 5 s).
const INTERRUPT_AFTER_MS: u64 = 750;
const DISCONNECT_AFTER_MS: u64 = 5_000;

/// Longest wait between two looks at the network and the session's timers
/// when no frame is due sooner (datagrams wake the loop at once).
const LONGEST_WAIT: Duration = Duration::from_millis(8);

/// Wait between two looks while shaking hands, before any frame is due.
const HANDSHAKE_POLL: Duration = Duration::from_millis(1);

/// How often the status line is redrawn on a terminal, and printed as a
/// plain line otherwise.
const STATUS_EVERY_TERMINAL: Duration = Duration::from_millis(250);
const STATUS_EVERY_PLAIN: Duration = Duration::from_secs(5);

/// After its last frame is final, how long a machine keeps answering a
/// peer that may still miss some of its inputs, beyond two round trips.
const LINGER: Duration = Duration::from_secs(1);

/// The pre-flight: about a second of frames, going back this far each frame.
const PREFLIGHT_DISTANCE: u32 = 4;

/// Set by Ctrl-C: leave the match (the peer is told) and print the summary.
pub(crate) static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// How a live machine presents itself and what it takes on for the process.
#[derive(Clone, Copy, Debug)]
pub struct LiveOptions {
    /// The status line is redrawn in place (a terminal) rather than printed
    /// as plain lines.
    pub status_in_place: bool,
    /// How often a plain status line is printed.
    pub plain_status_every: Duration,
    /// Ctrl-C leaves the match (the peer is told) instead of killing the
    /// process: a command owns the process; machines sharing one do not.
    pub handle_ctrl_c: bool,
}

impl LiveOptions {
    /// A command's: in place on a terminal, plain lines every 5 s otherwise.
    pub fn for_stdout() -> Self {
        LiveOptions {
            status_in_place: std::io::stdout().is_terminal(),
            plain_status_every: STATUS_EVERY_PLAIN,
            handle_ctrl_c: true,
        }
    }
}

/// A match played to its end, for callers that compare machines (the demo).
#[derive(Debug)]
pub struct LiveMatch {
    /// How it ended, as the command's exit code says.
    pub outcome: Outcome,
    /// The checksums of the latest final frames it played.
    pub log: ChecksumLog,
}

/// Hosts a match (see [`host_command`]) and returns how it went.
pub fn host_match(
    args: &HostArgs,
    options: LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    if args.players != 2 {
        return Err(AppError::BadArgument {
            message: format!(
                "--players {}: only two-player matches can be hosted for now",
                args.players
            ),
        });
    }
    let inputs = open_inputs(&args.common)?;
    let transport = bind_listening(&args.common.link, args.port)?;
    let bound = transport.inner().local_address();
    if let Some(path) = &args.port_file {
        std::fs::write(path, format!("{}\n", bound.port())).map_err(|source| {
            AppError::WriteFile {
                what: "the port file",
                path: path.clone(),
                source,
            }
        })?;
    }
    let mut game = open_game(&args.common.game)?;
    preflight(game.as_mut(), args.common.strict)?;
    writeln!(
        out,
        "hosting {} on UDP port {}: waiting for a player to join",
        game.title(),
        bound.port()
    )?;
    let role = Role {
        command: "host",
        me: 0,
        peer: 1,
        connect_timeout: None,
    };
    // Every member begins from the host's game as loaded: save RAM, clocks
    // and anything the core seeded at load are the same everywhere.
    let mut start_state = Vec::new();
    game.save_state(&mut start_state)
        .map_err(AppError::at_frame(0))?;
    let mut config = match_config(&args.common, game.as_ref(), role.me)?
        .accept(None, PlayerSlots::single(role.peer));
    config.start_state = Some(start_state);
    config.accept_spectators = args.max_spectators > 0;
    config.max_spectators = args.max_spectators;
    if options.handle_ctrl_c {
        install_interrupt_handler();
    }
    let started = Instant::now();
    let netplay = NetplaySession::new(config, 0)?;
    let transport = LiveTransport::new(transport);
    let recorder = match_recorder(
        &args.common.record,
        game.as_ref(),
        &args.common.game,
        2,
        vec![],
    )?;
    let machine = Machine {
        game,
        netplay,
        transport,
        started,
        recorder,
    };
    play(role, &args.common, machine, inputs, options, out)
}

/// Joins a match (see [`join_command`]) and returns how it went.
pub fn join_match(
    args: &JoinArgs,
    options: LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    let (host, transport) =
        connect_to_host(&args.address, args.connect_timeout_s, &args.common.link)?;
    let inputs = open_inputs(&args.common)?;
    let mut game = open_game(&args.common.game)?;
    preflight(game.as_mut(), args.common.strict)?;
    writeln!(
        out,
        "joining {} ({host}) with {}",
        args.address,
        game.title()
    )?;
    let role = Role {
        command: "join",
        me: 1,
        peer: 0,
        connect_timeout: Some((
            args.address.clone(),
            Duration::from_secs_f64(args.connect_timeout_s),
        )),
    };
    let config = match_config(&args.common, game.as_ref(), role.me)?
        .dial(host, PlayerSlots::single(role.peer));
    if options.handle_ctrl_c {
        install_interrupt_handler();
    }
    let started = Instant::now();
    let mut netplay = NetplaySession::new(config, 0)?;
    let mut transport = LiveTransport::new(transport);
    await_host_handshake(&mut netplay, &mut transport, started, &role);
    let host_options = netplay
        .host_handshake()
        .map(|host| host_option_overrides(&host.core_options));
    let mut game_args = args.common.game.clone();
    let game = match host_options {
        Some(host_options) => {
            game_args.options = host_options.clone();
            adopt_host_options(game, &args.common.game, host_options)?
        }
        None => game,
    };
    let names = vec![args.address.clone()];
    let recorder = match_recorder(&args.common.record, game.as_ref(), &game_args, 2, names)?;
    let machine = Machine {
        game,
        netplay,
        transport,
        started,
        recorder,
    };
    play(role, &args.common, machine, inputs, options, out)
}

/// Shakes hands with the host before anything is run: the joiner learns
/// the host's core options while nothing of its game is used yet. Returns
/// once the host's handshake is known, or once the session ended (refused),
/// the connect timeout passed or Ctrl-C was pressed: `play` reports those.
fn await_host_handshake(
    netplay: &mut NetplaySession<SocketAddr>,
    transport: &mut LiveTransport,
    started: Instant,
    role: &Role,
) {
    let mut datagram = Vec::new();
    loop {
        let now = started.elapsed().as_millis() as u64;
        while let Some(from) = transport.receive(&mut datagram) {
            netplay.handle_datagram(now, from, &datagram);
        }
        netplay.poll(now, |to, bytes| transport.send(to, bytes));
        let timed_out = role
            .connect_timeout
            .as_ref()
            .is_some_and(|(_, timeout)| started.elapsed() >= *timeout);
        if netplay.host_handshake().is_some()
            || netplay.state() == crate::rollback::SessionState::Ended
            || timed_out
            || INTERRUPTED.load(Ordering::Relaxed)
        {
            return;
        }
        transport.wait(HANDSHAKE_POLL);
    }
}

/// The host's core options as `--option` overrides.
pub(crate) fn host_option_overrides(options: &[CoreOption]) -> Vec<(String, String)> {
    options
        .iter()
        .map(|option| (option.key.clone(), option.value.clone()))
        .collect()
}

/// The host's options win: when the joiner's `--option`s differ from the
/// host's, its core is loaded again with the host's (before the host's
/// start state is loaded into it) and one `note:` line says what changed.
pub(crate) fn adopt_host_options(
    game: Box<dyn Game>,
    args: &GameArgs,
    host_options: Vec<(String, String)>,
) -> Result<Box<dyn Game>, AppError> {
    let Some(changes) = option_changes(&args.options, &host_options) else {
        return Ok(game);
    };
    eprintln!("note: the host's core options win, loading the core again with them: {changes}");
    // A core library is loaded once per process: the old one goes first.
    drop(game);
    open_game(&GameArgs {
        options: host_options,
        ..args.clone()
    })
}

/// What differs between our `--option`s and the host's, as
/// `key: ours → the host's` (`default` for an option not given), or `None`
/// when they agree.
fn option_changes(ours: &[(String, String)], host: &[(String, String)]) -> Option<String> {
    // A later `--option` of the same key wins, as when the core is loaded.
    let ours: BTreeMap<&str, &str> = ours.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let host: BTreeMap<&str, &str> = host.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let keys: BTreeSet<&str> = ours.keys().chain(host.keys()).copied().collect();
    let changes: Vec<String> = keys
        .into_iter()
        .filter(|key| ours.get(key) != host.get(key))
        .map(|key| {
            let value = |options: &BTreeMap<&str, &str>| -> String {
                options.get(key).copied().unwrap_or("default").to_string()
            };
            format!("{key}: {} → {}", value(&ours), value(&host))
        })
        .collect();
    (!changes.is_empty()).then(|| changes.join(", "))
}

/// This machine's input source; an input script shorter than `--frames`
/// is said once, as `run` says it.
fn open_inputs(args: &MatchArgs) -> Result<InputSource, AppError> {
    Ok(match args.frames {
        Some(frames) => InputSource::open_for_run(&args.inputs, frames)?,
        None => InputSource::open(&args.inputs)?,
    })
}

/// Which side of the match this machine is.
struct Role {
    command: &'static str,
    /// This machine's player, and the peer's.
    me: u8,
    peer: u8,
    /// The address dialled and how long to wait for it (the joiner).
    connect_timeout: Option<(String, Duration)>,
}

/// Binds the host's port: IPv6 and IPv4 both where the system allows (a
/// dual-stack socket), else IPv4 only.
fn bind_listening(link: &LinkArgs, port: u16) -> Result<LinkTransport, AppError> {
    match link.open(SocketAddr::from(([0u16; 8], port))) {
        Ok(transport) => Ok(transport),
        Err(NetError::Bind { source, .. }) if source.kind() != std::io::ErrorKind::AddrInUse => {
            link.open(SocketAddr::from(([0u8; 4], port)))
                .map_err(bind_error)
        }
        Err(error) => Err(bind_error(error)),
    }
}

/// A socket that could not be bound (a busy port, most often).
pub(crate) fn bind_error(NetError::Bind { address, source }: NetError) -> AppError {
    AppError::Bind {
        address: format!("UDP port {}", address.port()),
        source,
    }
}

/// What a finished match's sinks left behind, said after its summary and
/// added to its JSON: the same for players and spectators.
pub(crate) struct MatchOutputs<'a> {
    /// The replay written, if recording.
    pub recording: Option<&'a RecordingSummary>,
    /// The `--audio-out` file written.
    pub audio: Option<&'a AudioSummary>,
    /// The speaker's line, if one played.
    pub speaker: Option<String>,
}

impl MatchOutputs<'_> {
    /// Writes the outputs' lines, then `json` (when asked for) with their
    /// `replay` and `audio` added, as the last line.
    pub(crate) fn describe(
        &self,
        json: Option<serde_json::Value>,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        if let Some(recording) = self.recording {
            writeln!(out, "replay: {}", recording.path.display())?;
        }
        if let Some(audio) = self.audio {
            writeln!(out, "{}", audio.describe())?;
        }
        if let Some(speaker) = &self.speaker {
            writeln!(out, "{speaker}")?;
        }
        if let Some(mut json) = json {
            json["replay"] = self
                .recording
                .map_or(serde_json::Value::Null, RecordingSummary::json);
            if let Some(audio) = self.audio {
                json["audio"] = audio.json();
            }
            writeln!(out, "{json}")?;
        }
        Ok(())
    }
}

/// The start of `join` and `spectate`: checks `--connect-timeout-s`,
/// resolves the host's `HOST:PORT` and binds a socket of its address family
/// on any free port.
pub(crate) fn connect_to_host(
    address: &str,
    connect_timeout_s: f64,
    link: &LinkArgs,
) -> Result<(SocketAddr, LinkTransport), AppError> {
    // An hour is far beyond any real wait, and keeps the Duration made of
    // it in range.
    if !(connect_timeout_s > 0.0 && connect_timeout_s <= 3600.0) {
        return Err(AppError::BadArgument {
            message: format!(
                "--connect-timeout-s {connect_timeout_s}: expected a number of seconds above 0, at most 3600"
            ),
        });
    }
    let host = resolve_host(address)?;
    let local: SocketAddr = if host.is_ipv4() {
        SocketAddr::from(([0u8; 4], 0))
    } else {
        SocketAddr::from(([0u16; 8], 0))
    };
    let transport = link.open(local).map_err(bind_error)?;
    Ok((host, transport))
}

/// The first address `HOST:PORT` names.
pub fn resolve_host(address: &str) -> Result<SocketAddr, AppError> {
    let unresolvable = |reason: String| AppError::UnresolvableHost {
        address: address.to_string(),
        reason,
    };
    if !address.contains(':') {
        return Err(unresolvable("expected HOST:PORT".into()));
    }
    address
        .to_socket_addrs()
        .map_err(|error| unresolvable(error.to_string()))?
        .next()
        .ok_or_else(|| unresolvable("the name has no address".into()))
}

/// The session configuration both sides build the same way from the same
/// core and content (the handshake checks they did).
fn match_config(
    args: &MatchArgs,
    game: &dyn Game,
    me: u8,
) -> Result<NetplayConfig<SocketAddr>, AppError> {
    let content_hash = content_hash(&args.game)?;
    let settings = SessionSettings {
        player_count: 2,
        frame_rate_millihertz: (game.frames_per_second() * 1000.0).round() as u32,
        ..SessionSettings::default()
    };
    let mut config = NetplayConfig::new(
        session_token(),
        game.core_name(),
        game.core_version(),
        content_hash,
        settings,
        PlayerSlots::single(me),
    );
    if args.game.options.len() > MAX_CORE_OPTIONS {
        return Err(AppError::BadArgument {
            message: format!(
                "{} --option flags: at most {MAX_CORE_OPTIONS} fit in a netplay handshake",
                args.game.options.len()
            ),
        });
    }
    // Only the options set: the handshake already made sure both sides run
    // the same core version, so the defaults are the same.
    config.core_options = args
        .game
        .options
        .iter()
        .map(|(key, value)| CoreOption {
            key: key.clone(),
            value: value.clone(),
        })
        .collect();
    config.interrupt_after_ms = INTERRUPT_AFTER_MS;
    config.disconnect_after_ms = DISCONNECT_AFTER_MS;
    if let DelayArg::Fixed(frames) = args.delay {
        config.initial_input_delay = u32::from(frames);
        config.dynamic_input_delay = false;
    }
    Ok(config)
}

/// xxh3 of the content file, as handshakes carry it (0 with no content).
pub(crate) fn content_hash(game: &GameArgs) -> Result<u64, AppError> {
    Ok(match &game.rom {
        Some(rom) => {
            let content = std::fs::read(rom).map_err(|source| AppError::PrepareFile {
                what: "the content",
                path: rom.clone(),
                source,
            })?;
            Checksum::of(&content).0
        }
        None => 0,
    })
}

/// A token nobody else guesses: guards the links we accept against
/// datagrams from other sessions.
fn session_token() -> SessionToken {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let mut seed = nanos.to_le_bytes().to_vec();
    seed.extend_from_slice(&std::process::id().to_le_bytes());
    SessionToken(Checksum::of(&seed).0 as u32)
}

/// The rollback pre-flight (see the module docs): warns, or with `strict`
/// refuses, when the core does not re-simulate what it ran.
fn preflight(game: &mut dyn Game, strict: bool) -> Result<(), AppError> {
    let mut loaded = Vec::new();
    game.save_state(&mut loaded)
        .map_err(AppError::at_frame(0))?;
    let frames = (game.frames_per_second().round() as u32).max(PREFLIGHT_DISTANCE + 1);
    let mut buttons = RandomPlayer::new(0);
    let report = run_sync_test(
        game,
        SyncTestSettings::new(frames, PREFLIGHT_DISTANCE),
        &mut || buttons.next_frame(),
        &mut |_| {},
    )?;
    game.load_state(&loaded).map_err(AppError::at_frame(0))?;
    if report.desync.is_none() {
        tracing::info!("rollback pre-flight: {}", report.verdict());
        return Ok(());
    }
    let verdict = report.verdict();
    if strict {
        return Err(AppError::PreflightFailed {
            game: game.title(),
            verdict,
        });
    }
    eprintln!(
        "warning: rollback pre-flight: {} does not restore its state faithfully ({verdict}); the match may desync",
        game.title()
    );
    Ok(())
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
}

/// Where this machine's frames go: the checksum log of final frames, and
/// how many frames were re-simulated.
struct LiveSink {
    log: ChecksumLog,
    resimulated_frames: u64,
    recorder: Option<ReplayRecorder>,
    audio: Option<AudioSink>,
    #[cfg(feature = "audio")]
    speaker: Option<crate::engine::sinks::speaker::Speaker>,
}

impl FrameSink for LiveSink {
    fn frame_run(&mut self, frame: &FinishedFrame<'_>) {
        if frame.resimulated {
            self.resimulated_frames += 1;
        }
        self.audio.frame_run(frame);
        #[cfg(feature = "audio")]
        self.speaker.frame_run(frame);
    }

    fn frame_finalized(&mut self, frame: &FinalFrame<'_>) {
        self.log.frame_finalized(frame);
        self.recorder.frame_finalized(frame);
        self.audio.frame_finalized(frame);
    }

    fn clock_tick(&mut self, now_us: u64, speed: f64) {
        self.audio.clock_tick(now_us, speed);
        #[cfg(feature = "audio")]
        self.speaker.clock_tick(now_us, speed);
    }

    fn wants_checksums(&self) -> bool {
        true
    }

    fn match_started(&mut self, frame: Frame, start_state: &[u8], memory: Checksum) {
        self.recorder.match_started(frame, start_state, memory);
    }

    fn state_repaired(&mut self, frame: Frame, state: &[u8]) {
        self.recorder.state_repaired(frame, state);
    }

    fn player_left(&mut self, frame: Frame, player: u8) {
        self.recorder.player_left(frame, player);
    }
}

/// What became of the match's desyncs.
#[derive(Clone, Debug, Default)]
struct Desyncs {
    /// Checkpoints whose checksums differed here and at the peer.
    detected: u64,
    /// Of those, compared with the host's state of the frame (the joiner).
    diagnosed: u64,
    /// Of those, replaced by the host's state and re-simulated.
    repaired: u64,
    /// The game memory bytes that differed at the last diagnosed one.
    last_memory_diff: Option<ByteDiff>,
}

/// How a match ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MatchEnd {
    /// Every frame asked for is final.
    Finished,
    /// Ctrl-C: we left, the peer was told.
    Interrupted,
    /// The window was closed: we left, the peer was told.
    WindowClosed,
    /// The peer said it was leaving.
    PeerLeft,
    /// Nothing heard from the peer for the disconnect timeout (or it broke
    /// the protocol and its link was closed).
    PeerLost,
}

impl MatchEnd {
    fn describe(self) -> &'static str {
        match self {
            MatchEnd::Finished => "finished",
            MatchEnd::Interrupted => "interrupted (Ctrl-C)",
            MatchEnd::WindowClosed => "the window was closed",
            MatchEnd::PeerLeft => "the peer left",
            MatchEnd::PeerLost => "the peer was lost",
        }
    }

    fn json_name(self) -> &'static str {
        match self {
            MatchEnd::Finished => "finished",
            MatchEnd::Interrupted => "interrupted",
            MatchEnd::WindowClosed => "window_closed",
            MatchEnd::PeerLeft => "peer_left",
            MatchEnd::PeerLost => "peer_lost",
        }
    }
}

type LiveMachine = NetplayMachine<SocketAddr, Box<dyn Game>, LiveSink>;

/// Plays the match in real time, then prints its summary (and JSON).
fn play(
    role: Role,
    args: &MatchArgs,
    machine: Machine,
    inputs: InputSource,
    options: LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    let Machine {
        game,
        netplay,
        mut transport,
        started,
        recorder,
    } = machine;
    let mut front = open_front_end(args, game.as_ref())?;
    let frames_per_second = game.frames_per_second();
    let sink = LiveSink {
        log: ChecksumLog::new(1 << 16),
        resimulated_frames: 0,
        recorder,
        audio: args.audio.open_sink(game.sample_rate(), args.frames)?,
        #[cfg(feature = "audio")]
        speaker: crate::engine::sinks::speaker::open_speaker_for(
            &args.audio,
            &args.speaker,
            args.headless,
            game.sample_rate(),
        )?,
    };
    let clock = FrameClock::new(frames_per_second, 0).with_catch_up(2, 10);
    let mut machine: LiveMachine = NetplayMachine::new(netplay, game, sink, clock);
    let mut hooks = LiveHooks {
        inputs,
        device: None,
        current: None,
        started,
    };
    let mut status = StatusLine::new(options);
    let mut desyncs = Desyncs::default();
    // Whether the peer finished the handshake (the joiner's connect timeout
    // runs until then).
    let mut answered = false;
    let mut peer_gone: Option<MatchEnd> = None;
    let mut done_at: Option<Instant> = None;
    // The traffic when the last frame became final: the wire figures cover
    // the match, not the goodbye after it.
    let mut wire_until: Option<(u64, Option<NetplayStats>)> = None;
    let end = loop {
        let now_us = started.elapsed().as_micros() as u64;
        hooks.device = front.local_buttons();
        let (frame_before, waits_before) = (machine.current_frame(), machine.stats.waiting_ticks);
        machine.tick(now_us, 1.0, &mut transport, &mut hooks)?;
        let events: Vec<NetplayEvent> = machine.netplay.events().collect();
        for event in events {
            match event {
                // The host keeps waiting: the session reopened the slot.
                NetplayEvent::Rejected(rejection) if rejection.by_us && role.me == 0 => {
                    status.interrupt(out)?;
                    eprintln!(
                        "warning: {}; still waiting for a player to join",
                        rejection.explanation()
                    );
                }
                NetplayEvent::JoinerLeftBeforeStart { .. } => {
                    status.interrupt(out)?;
                    eprintln!(
                        "warning: the joiner left before the match began; still waiting for a player to join"
                    );
                }
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
                    desyncs.detected += 1;
                    status.interrupt(out)?;
                    eprintln!("warning: desync at frame {frame}: our checksum {local}, the peer's {remote}");
                    front.notice(&format!("desync at frame {frame}"));
                    machine.answer_desync(&event)?;
                }
                NetplayEvent::HostCheckpointState { frame, .. } => {
                    status.interrupt(out)?;
                    match machine.answer_desync(&event)? {
                        DesyncAnswer::TooLate => eprintln!("warning: the host's state of frame {frame} arrived after ours was dropped: not compared"),
                        DesyncAnswer::Diagnosed { diagnosis, repaired } => {
                            let dumps = diagnosis.write_dumps(&args.dump_dir)?;
                            eprintln!(
                                "warning: desync at frame {frame}: {} (dumps in {})",
                                diagnosis.summary(),
                                dumps.display()
                            );
                            desyncs.diagnosed += 1;
                            if repaired {
                                desyncs.repaired += 1;
                                eprintln!("note: loaded the host's state of frame {frame} and re-simulated to the present");
                                front.notice(&format!("desync at frame {frame} repaired"));
                            } else {
                                eprintln!("warning: frame {frame} is too far back to re-simulate from: not repaired");
                            }
                            desyncs.last_memory_diff = Some(diagnosis.memory_diff);
                        }
                        DesyncAnswer::Nothing | DesyncAnswer::StateSent | DesyncAnswer::AlreadyRepaired => {}
                    }
                }
                NetplayEvent::NetworkInterrupted { silent_for_ms, .. } => {
                    status.interrupt(out)?;
                    eprintln!("warning: nothing heard from the peer for {silent_for_ms} ms");
                    front.notice(&format!(
                        "nothing heard from the peer for {silent_for_ms} ms"
                    ));
                }
                NetplayEvent::NetworkResumed { .. } => {
                    status.interrupt(out)?;
                    eprintln!("note: the peer is heard again");
                    front.notice("the peer is heard again");
                }
                NetplayEvent::PeerFault { fault, .. } => {
                    status.interrupt(out)?;
                    eprintln!("warning: closed the link to the peer: {fault}");
                    front.notice(&format!("closed the link to the peer: {fault}"));
                }
                NetplayEvent::Disconnected {
                    player,
                    reason,
                    at_frame,
                } if player.index() == usize::from(role.peer) => {
                    machine.sink.player_left(at_frame, role.peer);
                    let gone = *peer_gone.get_or_insert(match reason {
                        DisconnectReason::Quit => MatchEnd::PeerLeft,
                        _ => MatchEnd::PeerLost,
                    });
                    front.notice(gone.describe());
                }
                NetplayEvent::PeerSynchronized { .. } => answered = true,
                NetplayEvent::SpectatorLeft => front.notice("a spectator left"),
                NetplayEvent::StartStateArrived { bytes } => {
                    status.interrupt(out)?;
                    writeln!(out, "loaded the host's start state ({bytes} bytes)")?;
                }
                NetplayEvent::Running => {
                    status.interrupt(out)?;
                    writeln!(out, "the match began")?;
                    front.notice("the match began");
                }
                NetplayEvent::SpectatorJoined => {
                    status.interrupt(out)?;
                    writeln!(out, "a spectator joined")?;
                    front.notice("a spectator joined");
                }
                NetplayEvent::SpectatorDropped { reason } => {
                    status.interrupt(out)?;
                    eprintln!("warning: stopped feeding a spectator: {reason}");
                    front.notice(&format!("stopped feeding a spectator: {reason}"));
                }
                _ => {}
            }
        }
        let final_end = machine.sink.log.end_frame();
        if done_at.is_none() && args.frames.is_some_and(|frames| final_end >= frames) {
            // Every frame asked for is final: run no more, but keep
            // answering while the peer may still miss our last inputs.
            machine.stop_at_frame = Some(machine.current_frame());
            done_at = Some(Instant::now());
            wire_until = Some((now_us / 1000, peer_stats(&machine, role.peer)));
        }
        if let Some(done) = done_at {
            let ping = peer_stats(&machine, role.peer)
                .and_then(|stats| stats.ping_ms)
                .unwrap_or(0);
            let linger = LINGER + Duration::from_millis(2 * u64::from(ping));
            if peer_gone.is_some() || done.elapsed() >= linger {
                break MatchEnd::Finished;
            }
        } else if let Some(gone) = peer_gone {
            break gone;
        } else if machine.netplay.state() == crate::rollback::SessionState::Ended {
            break MatchEnd::PeerLost;
        }
        if INTERRUPTED.load(Ordering::Relaxed) {
            break MatchEnd::Interrupted;
        }
        if let Some((address, timeout)) = &role.connect_timeout {
            if !answered && started.elapsed() >= *timeout {
                return Err(AppError::NoAnswer {
                    address: address.clone(),
                    seconds: timeout.as_secs_f64(),
                });
            }
        }
        status.update(&machine, role.peer, out)?;
        let view = MatchView {
            frame: machine.current_frame(),
            new_picture: machine.current_frame() != frame_before,
            stats: peer_stats(&machine, role.peer),
            waiting: machine.stats.waiting_ticks > waits_before,
            spectators: machine.netplay.spectator_count(),
            spectating: None,
        };
        front.present(machine.game.as_ref(), &view);
        if front.quit_requested() {
            break MatchEnd::WindowClosed;
        }
        wait_for_next_frame(&mut transport, &machine.clock, started);
    };
    // Tell the peer we are leaving (a no-op once the match ended).
    machine.netplay.leave();
    let now_us = started.elapsed().as_micros() as u64;
    machine.tick(now_us, 1.0, &mut transport, &mut hooks)?;
    status.interrupt(out)?;

    let (ended_ms, stats) =
        wire_until.unwrap_or_else(|| (now_us / 1000, peer_stats(&machine, role.peer)));
    let wire = Wire {
        stats: stats.unwrap_or_default(),
        ended_ms,
    };
    let had_desyncs = desyncs.detected > 0;
    let recording = finish_recording(machine.sink.recorder.take(), end);
    let report = Report::gather(&mut machine, &role, args, end, desyncs, wire, &transport);
    report.describe(out)?;
    let audio = machine
        .sink
        .audio
        .take()
        .map(AudioSink::finish)
        .transpose()?;
    #[cfg(feature = "audio")]
    let speaker = machine
        .sink
        .speaker
        .as_ref()
        .map(|speaker| speaker.describe());
    #[cfg(not(feature = "audio"))]
    let speaker = None;
    let outputs = MatchOutputs {
        recording: recording.as_ref(),
        audio: audio.as_ref(),
        speaker,
    };
    outputs.describe(args.json.then(|| report.json()), out)?;
    let outcome = match end {
        _ if had_desyncs => Outcome::NetplayFailed,
        MatchEnd::Finished | MatchEnd::Interrupted | MatchEnd::WindowClosed => Outcome::Success,
        MatchEnd::PeerLeft if args.frames.is_none() => Outcome::Success,
        MatchEnd::PeerLeft | MatchEnd::PeerLost => Outcome::PeerLost,
    };
    Ok(LiveMatch {
        outcome,
        log: machine.sink.log,
    })
}

/// Ends the match's replay; a recording that failed is a warning, not the
/// match's failure.
fn finish_recording(recorder: Option<ReplayRecorder>, end: MatchEnd) -> Option<RecordingSummary> {
    let reason = match end {
        MatchEnd::Finished => EndReason::Finished,
        MatchEnd::Interrupted | MatchEnd::WindowClosed => EndReason::Interrupted,
        MatchEnd::PeerLeft | MatchEnd::PeerLost => EndReason::Disconnect,
    };
    finish_match_recording(recorder, reason)
}

/// Makes Ctrl-C set [`INTERRUPTED`] instead of killing the process, so the
/// peer is told and the summary printed.
pub(crate) fn install_interrupt_handler() {
    if let Err(error) = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::Relaxed)) {
        tracing::warn!(
            "no Ctrl-C handler ({error}): Ctrl-C ends the match without telling the peer"
        );
    }
}

fn peer_stats(machine: &LiveMachine, peer: u8) -> Option<NetplayStats> {
    machine.netplay.stats(PlayerId::new(peer))
}

/// Sleeps in the kernel until `clock`'s next frame is due or a datagram
/// arrives, and at most [`LONGEST_WAIT`] (the session's timers run between
/// frames too): the pacing of every real-time loop.
pub(crate) fn wait_for_next_frame(
    transport: &mut LiveTransport,
    clock: &FrameClock,
    started: Instant,
) {
    let now_us = started.elapsed().as_micros() as u64;
    let wait = Duration::from_micros(clock.next_due_us().saturating_sub(now_us)).min(LONGEST_WAIT);
    transport.wait(wait);
}

/// Prints a live status line: on a terminal one line redrawn in place;
/// otherwise a plain line now and then (no escape codes in logs and pipes).
pub(crate) struct StatusPrinter {
    terminal: bool,
    plain_every: Duration,
    shown: bool,
}

impl StatusPrinter {
    pub(crate) fn new(options: LiveOptions) -> Self {
        StatusPrinter {
            terminal: options.status_in_place,
            plain_every: options.plain_status_every,
            shown: false,
        }
    }

    /// How often a line is printed.
    pub(crate) fn every(&self) -> Duration {
        if self.terminal {
            STATUS_EVERY_TERMINAL
        } else {
            self.plain_every
        }
    }

    /// Shows `line`, in place of the last one on a terminal.
    pub(crate) fn print(&mut self, line: &str, out: &mut dyn Write) -> std::io::Result<()> {
        if self.terminal {
            write!(out, "\r\x1b[K{line}")?;
            self.shown = true;
        } else {
            writeln!(out, "{line}")?;
        }
        out.flush()
    }

    /// Ends a line drawn in place, so what is printed next starts clean.
    pub(crate) fn interrupt(&mut self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.shown {
            self.shown = false;
            writeln!(out)?;
        }
        Ok(())
    }
}

/// The players' status line: frame, ping, delay, rollback, advantage, traffic.
struct StatusLine {
    printer: StatusPrinter,
    last: Option<(Instant, u64, u64)>,
}

impl StatusLine {
    fn new(options: LiveOptions) -> Self {
        StatusLine {
            printer: StatusPrinter::new(options),
            last: None,
        }
    }

    /// Redraws the line when it is due.
    fn update(
        &mut self,
        machine: &LiveMachine,
        peer: u8,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        let every = self.printer.every();
        let Some(stats) = peer_stats(machine, peer) else {
            return Ok(());
        };
        if machine.netplay.started_at().is_none() {
            return Ok(());
        }
        let now = Instant::now();
        let (since, received_before, sent_before) =
            *self
                .last
                .get_or_insert((now, stats.bytes_received, stats.bytes_sent));
        let elapsed = now.duration_since(since);
        if elapsed < every {
            return Ok(());
        }
        self.last = Some((now, stats.bytes_received, stats.bytes_sent));
        let kbps = |bytes: u64| bytes as f64 * 8.0 / 1000.0 / elapsed.as_secs_f64();
        let line = status_text(
            machine.current_frame(),
            &stats,
            kbps(stats.bytes_received - received_before),
            kbps(stats.bytes_sent - sent_before),
        );
        self.printer.print(&line, out)
    }

    fn interrupt(&mut self, out: &mut dyn Write) -> std::io::Result<()> {
        self.printer.interrupt(out)
    }
}

/// `frame 1234 | ping 12 ms | delay 1 | rollback 2 | advantage +0.4 | kbps in 25.1 out 24.9`
fn status_text(frame: u32, stats: &NetplayStats, kbps_in: f64, kbps_out: f64) -> String {
    let ping = stats
        .ping_ms
        .map_or_else(|| "?".to_string(), |ping| ping.to_string());
    let advantage = stats
        .frames_ahead
        .map_or_else(|| "?".to_string(), |ahead| format!("{ahead:+.1}"));
    format!(
        "frame {frame} | ping {ping} ms | delay {} | rollback {} | advantage {advantage} | kbps in {kbps_in:.1} out {kbps_out:.1}",
        stats.local_input_delay, stats.last_rollback
    )
}

/// The peer link's figures and the moment (ms since the session began)
/// they were taken.
struct Wire {
    stats: NetplayStats,
    ended_ms: u64,
}

/// What the summary and the JSON say.
struct Report {
    command: &'static str,
    game: String,
    end: MatchEnd,
    /// Frames final on this machine (all of them agreed with the peer).
    frames: u32,
    checksums: Option<Checksums>,
    peer: u8,
    stats: NetplayStats,
    rollbacks: u64,
    mean_rollback: f64,
    max_rollback: u32,
    stall_frames: u64,
    desyncs: Desyncs,
    /// The link's traffic, over the match's seconds.
    wire: WireTraffic,
    dropped_datagrams: u64,
    /// Bytes the saved states took at the end: the rollback window's and
    /// the checkpoints kept for desync repair (both bounded).
    state_bytes: usize,
    inputs: String,
}

impl Report {
    fn gather(
        machine: &mut LiveMachine,
        role: &Role,
        args: &MatchArgs,
        end: MatchEnd,
        desyncs: Desyncs,
        wire: Wire,
        transport: &LiveTransport,
    ) -> Report {
        let Wire { stats, ended_ms } = wire;
        let final_end = machine.sink.log.end_frame();
        let frames = args
            .frames
            .map_or(final_end, |frames| frames.min(final_end));
        let checksums = checksums_after(machine, frames);
        let tick = machine.stats;
        let seconds = machine
            .netplay
            .started_at()
            .map_or(0.0, |at| ended_ms.saturating_sub(at) as f64 / 1000.0);
        let wire = WireTraffic {
            seconds,
            sent_bytes: stats.bytes_sent + transport.header_bytes * stats.datagrams_sent,
            received_bytes: stats.bytes_received
                + transport.header_bytes * stats.datagrams_received,
            datagrams_sent: stats.datagrams_sent,
        };
        Report {
            command: role.command,
            game: machine.game.title(),
            end,
            frames,
            checksums,
            peer: role.peer,
            stats,
            rollbacks: tick.rollbacks,
            mean_rollback: if tick.rollbacks == 0 {
                0.0
            } else {
                machine.sink.resimulated_frames as f64 / tick.rollbacks as f64
            },
            max_rollback: tick.deepest_rollback,
            stall_frames: tick.waiting_ticks + tick.stalled_ticks,
            desyncs,
            wire,
            dropped_datagrams: machine.netplay.dropped_unknown(),
            state_bytes: machine.netplay.session().state_bytes()
                + machine.driver.checkpoint_state_bytes(),
            inputs: args.inputs.to_string(),
        }
    }

    fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "match {}: {} frames final, {:.1} s, {}",
            self.end.describe(),
            self.frames,
            self.wire.seconds,
            self.game
        )?;
        let ping = self
            .stats
            .ping_ms
            .map_or_else(|| "?".to_string(), |ping| format!("{ping} ms"));
        writeln!(
            out,
            "player {}: ping {ping}, input delay {}, rollbacks {} (mean depth {:.1}, max {}), stall frames {}",
            self.peer + 1,
            self.stats.local_input_delay,
            self.rollbacks,
            self.mean_rollback,
            self.max_rollback,
            self.stall_frames
        )?;
        writeln!(
            out,
            "wire (with IP/UDP headers): sent {:.0} B/s ({:.1} datagrams/s), received {:.0} B/s; dropped {} stray datagrams",
            self.wire.sent_bytes_per_s(),
            self.wire.sent_datagrams_per_s(),
            self.wire.received_bytes_per_s(),
            self.dropped_datagrams
        )?;
        writeln!(
            out,
            "saved states: {:.1} MiB (rollback window and desync-repair checkpoints)",
            self.state_bytes as f64 / f64::from(1 << 20)
        )?;
        writeln!(
            out,
            "desyncs: {} ({} diagnosed, {} repaired)",
            self.desyncs.detected, self.desyncs.diagnosed, self.desyncs.repaired
        )?;
        if let Some(checksums) = &self.checksums {
            writeln!(
                out,
                "checksums after frame {}: memory {} state {} video {}",
                self.frames, checksums.memory, checksums.state, checksums.video
            )?;
        }
        Ok(())
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "command": self.command,
            "game": self.game,
            "inputs": self.inputs,
            "end": self.end.json_name(),
            "frames": self.frames,
            "seconds": self.wire.seconds,
            "checksums": self.checksums.as_ref().map(checksums_json),
            "netplay": {
                "peers": [{
                    "player": self.peer,
                    "ping_ms": self.stats.ping_ms,
                    "input_delay": self.stats.local_input_delay,
                    "frames_ahead": self.stats.frames_ahead,
                    "rollbacks": {
                        "count": self.rollbacks,
                        "mean_depth": self.mean_rollback,
                        "max_depth": self.max_rollback,
                    },
                }],
                "stall_frames": self.stall_frames,
                "desyncs": self.desyncs.detected,
                "desyncs_diagnosed": self.desyncs.diagnosed,
                "repairs": self.desyncs.repaired,
                "last_desync_memory_diff": self.desyncs.last_memory_diff.as_ref().map(ByteDiff::to_json),
                "wire": self.wire.json(),
                "dropped_datagrams": self.dropped_datagrams,
                "state_bytes": self.state_bytes,
            },
        })
    }
}

/// A link's traffic over a match, with 28 (IPv4) or 48 (IPv6) bytes of
/// IP/UDP header counted per datagram: the summaries' wire line and the
/// JSON's `wire`, for players and spectators alike.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WireTraffic {
    /// Seconds the traffic was counted over.
    pub(crate) seconds: f64,
    /// Bytes sent, headers included.
    pub(crate) sent_bytes: u64,
    /// Bytes received, headers included.
    pub(crate) received_bytes: u64,
    /// Datagrams sent.
    pub(crate) datagrams_sent: u64,
}

impl WireTraffic {
    fn per_second(&self, count: u64) -> f64 {
        if self.seconds > 0.0 {
            count as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// Bytes sent per second.
    pub(crate) fn sent_bytes_per_s(&self) -> f64 {
        self.per_second(self.sent_bytes)
    }

    /// Bytes received per second.
    pub(crate) fn received_bytes_per_s(&self) -> f64 {
        self.per_second(self.received_bytes)
    }

    /// Datagrams sent per second.
    pub(crate) fn sent_datagrams_per_s(&self) -> f64 {
        self.per_second(self.datagrams_sent)
    }

    /// The JSON's `wire`.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "sent_bytes_per_s": self.sent_bytes_per_s(),
            "received_bytes_per_s": self.received_bytes_per_s(),
            "sent_datagrams_per_s": self.sent_datagrams_per_s(),
        })
    }
}

/// What a match is played with: the game, the session (its clock began at
/// `started`) and the socket.
struct Machine {
    game: Box<dyn Game>,
    netplay: NetplaySession<SocketAddr>,
    transport: LiveTransport,
    started: Instant,
    recorder: Option<ReplayRecorder>,
}

/// The socket transport, noting the IP and UDP header bytes each datagram
/// to the peer costs on the wire, for the wire figures.
pub(crate) struct LiveTransport {
    link: LinkTransport,
    pub(crate) header_bytes: u64,
}

impl LiveTransport {
    pub(crate) fn new(link: LinkTransport) -> Self {
        LiveTransport {
            link,
            header_bytes: IPV4_UDP_HEADER_BYTES,
        }
    }
}

impl Transport for LiveTransport {
    type Address = SocketAddr;

    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        self.header_bytes = ip_udp_header_bytes(to);
        self.link.send(to, datagram);
    }

    fn receive(&mut self, into: &mut Vec<u8>) -> Option<SocketAddr> {
        self.link.receive(into)
    }

    fn wait(&mut self, timeout: Duration) {
        self.link.wait(timeout);
    }
}

/// The checksums of the game after `frames` final frames, as `run --frames`
/// prints them: the state saved at the start of the last one, run again
/// with its final buttons, drawn. `None` when that state is no longer kept.
fn checksums_after(machine: &mut LiveMachine, frames: u32) -> Option<Checksums> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_changes_name_each_differing_key_with_ours_then_the_hosts() {
        let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
        let ours = [
            pair("a", "1"),
            pair("b", "2"),
            pair("b", "3"),
            pair("c", "4"),
        ];
        let host = [pair("b", "3"), pair("c", "5"), pair("d", "6")];
        assert_eq!(
            option_changes(&ours, &host).as_deref(),
            Some("a: 1 → default, c: 4 → 5, d: default → 6")
        );
        assert_eq!(option_changes(&ours[1..3], &host[..1]), None);
    }

    #[test]
    fn delay_is_auto_or_a_small_number_of_frames() {
        assert_eq!("auto".parse::<DelayArg>(), Ok(DelayArg::Auto));
        assert_eq!("3".parse::<DelayArg>(), Ok(DelayArg::Fixed(3)));
        assert!("9".parse::<DelayArg>().is_err());
        assert!("soon".parse::<DelayArg>().is_err());
    }

    #[test]
    fn host_addresses_resolve_with_ipv6_in_brackets_and_bad_ones_are_named() {
        assert_eq!(
            resolve_host("[::1]:7000").unwrap(),
            "[::1]:7000".parse::<SocketAddr>().unwrap()
        );
        assert_eq!(resolve_host("127.0.0.1:9").unwrap().port(), 9);
        let error = resolve_host("no-such-host.invalid:7000").unwrap_err();
        assert!(
            error.to_string().contains("no-such-host.invalid:7000"),
            "{error}"
        );
        assert!(resolve_host("localhost").is_err(), "a port is required");
    }

    #[test]
    fn the_status_line_shows_frame_ping_delay_rollback_advantage_and_traffic() {
        let stats = NetplayStats {
            ping_ms: Some(12),
            frames_ahead: Some(0.4),
            local_input_delay: 1,
            last_rollback: 2,
            ..NetplayStats::default()
        };
        assert_eq!(
            status_text(1234, &stats, 25.06, 24.94),
            "frame 1234 | ping 12 ms | delay 1 | rollback 2 | advantage +0.4 | kbps in 25.1 out 24.9"
        );
    }
}
