//! `netcade spectate HOST:PORT`: watch a match live, from any moment. The
//! host sends its savestate of a recent final frame, then every player's
//! final inputs; this machine plays them on its own copy of the game
//! through the jitter buffer, in the one real-time loop (`session_loop`)
//! with the spectator's role, and ends after the match's last final frame
//! with a summary. The frames watched are recorded into a replay that
//! starts at the host's savestate's frame (`--record`, `--no-record`).

pub(crate) mod report;
mod role;

use crate::engine::frame_clock::FrameClock;
use crate::engine::matches::machine::SpectatorMachine;
use crate::engine::sinks::recorder::match_recorder;
use crate::engine::sinks::{ChecksumLog, MatchSinks, RelaySink};
use crate::engine::{open_game, AppError, Game, GameArgs, MatchSaveDir, Outcome};
use crate::live::connect::{adopt_host_options, content_hash, host_option_overrides, link_secret};
use crate::live::front_end::LiveOutputs;
use crate::live::narrator::Narrator;
use crate::live::options::{interrupted, LiveOptions};
use crate::live::players::DEFAULT_REJOIN_S;
use crate::live::rooms::{reach_host, FoundHost, HostWay, RoomCode, RoomRole, SignalArgs};
use crate::live::session_loop::{run_live, shake_hands, LiveMatch};
use crate::live::wire::LiveTransport;
use crate::net::link::LinkArgs;
use netcode::netplay::{SpectatorConfig, SpectatorEvent, SpectatorPhase, SpectatorSession};
use netcode::protocol::{Fingerprint, PublicKey, SessionSettings};
use report::WatchKeys;
use role::SpectatorRole;
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Settings of `netcade spectate`.
#[derive(Clone, Debug, clap::Args)]
pub struct SpectateSettings {
    /// The host's address: HOST:PORT (a name or an IP; IPv6 in brackets),
    /// or retroarch://HOST[:PORT] for a RetroArch host; or --room CODE.
    #[arg(
        value_name = "HOST:PORT",
        required_unless_present = "room",
        conflicts_with = "room"
    )]
    pub address: Option<String>,
    /// Watch the match whose room code the host printed (`host --room`).
    #[arg(long, value_name = "CODE")]
    pub room: Option<RoomCode>,
    /// The signaling server of `--room`.
    #[command(flatten)]
    pub signal: SignalArgs,
    /// The core and content: the same as the players'.
    #[command(flatten)]
    pub game: GameArgs,
    /// Watch frames up to N-1 of the match, as the players' `--frames N`
    /// [default: watch until the match ends].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub frames: Option<u32>,
    /// Seconds to wait for the host to answer before giving up.
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    pub connect_timeout_s: f64,
    /// The socket transport and the link conditioner over it.
    #[command(flatten)]
    pub link: LinkArgs,
    /// Your name in the chat and lines to say.
    #[command(flatten)]
    pub chat: crate::live::chat::ChatArgs,
    /// The password a RetroArch host (`retroarch://HOST[:PORT]`) asks for
    /// (its spectators' or its players').
    #[arg(long, value_name = "PASSWORD")]
    pub password: Option<String>,
    /// Watch only a host whose key has this fingerprint (the `key` line
    /// the host printed); any other key ends the watch with an error.
    #[arg(long, value_name = "FINGERPRINT")]
    pub peer_key: Option<Fingerprint>,
}

/// Watches the match hosted at `settings.address` and returns how it went,
/// with the checksums of the frames watched.
pub fn spectate_match(
    settings: &SpectateSettings,
    outputs: &LiveOutputs<'_>,
    options: &LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    spectate_match_relaying(settings, outputs, options, out, None)
}

/// What a watch knows of its match once the host welcomed it.
pub struct RelayStart<'a> {
    /// The game.
    pub game: &'a dyn Game,
    /// Its arguments as the host runs them (the host's core options).
    pub args: &'a GameArgs,
    /// Players in the match.
    pub players: u8,
    /// Their names.
    pub names: Vec<String>,
    /// The host's public key: one per host process, so it names the
    /// match to every spectator of it.
    pub host_key: Option<PublicKey>,
}

/// Makes the sink a watch passes the match on to (a broadcast).
pub type RelayMaker<'a> = &'a dyn Fn(RelayStart<'_>) -> Result<Box<dyn RelaySink + Send>, AppError>;

/// [`spectate_match`], passing every frame on to the sink `relay` makes.
pub fn spectate_match_relaying(
    settings: &SpectateSettings,
    outputs: &LiveOutputs<'_>,
    options: &LiveOptions,
    out: &mut dyn Write,
    relay: Option<RelayMaker<'_>>,
) -> Result<LiveMatch, AppError> {
    let saves = MatchSaveDir::create(&settings.game, "spectate")?;
    let (mut found, game) = find_host(settings, &saves)?;
    writeln!(
        out,
        "spectating {} ({}) with {}",
        found.label,
        found.address,
        game.title()
    )?;
    options.take_ctrl_c();
    let connect_timeout = Duration::from_secs_f64(settings.connect_timeout_s);
    let (spectator, mut transport, label, started) = loop {
        // A room's host that never answers (anyone in the room can pose
        // as it) costs one try.
        let next = found.next.take();
        let timeout = next
            .as_ref()
            .map_or(connect_timeout, |next| next.handshake_within());
        let (host, label) = (found.address, found.label);
        let mut transport = LiveTransport::new(found.transport);
        let mut config = spectator_config(host, game.as_ref(), settings)?;
        if relay.is_some() {
            // Passing the match on, a watch plays each frame as soon as it
            // is whole: its viewers' own buffers absorb the jitter.
            config.jitter.min_delay_frames = 0;
        }
        let started = Instant::now();
        let mut spectator = SpectatorSession::new(config, 0)?;
        if await_welcome(&mut spectator, &mut transport, started, timeout)? {
            break (spectator, transport, label, started);
        }
        let other = match next {
            Some(next) if !interrupted() => next.try_next()?,
            _ => None,
        };
        match other {
            Some(other) => found = other,
            None => return unanswered(label, timeout.as_secs_f64()),
        }
    };
    if let Some(path) = transport.ice_path() {
        writeln!(out, "path: {}", path.describe())?;
    }
    let keys = show_host_keys(&spectator, settings.peer_key, out)?;
    let host_options = spectator
        .host_handshake()
        .map(|handshake| host_option_overrides(&handshake.core_options))
        .unwrap_or_default();
    let host_frames = spectator
        .host_handshake()
        .and_then(|host| host.match_frames);
    let frames = watched_frames(settings.frames, host_frames);
    if spectator
        .host_handshake()
        .is_some_and(|host| host.settings.is_lockstep())
    {
        eprintln!(
            "note: the match plays in lockstep, whose host keeps no states: watching it from frame 0"
        );
    }
    let game_args = GameArgs {
        options: host_options.clone(),
        ..settings.game.clone()
    };
    let game = adopt_host_options(game, &saves.game_args(&settings.game), host_options)?;
    let players = spectator.players().clamp(1, netcode::input::MAX_PLAYERS) as u8;
    let names = vec![label];
    let relay = relay
        .map(|make| make_relay(make, &spectator, game.as_ref(), &game_args, &names))
        .transpose()?;
    let recorder = match_recorder(
        &outputs.sinks.record,
        game.as_ref(),
        &game_args,
        players,
        names,
    )?;
    let front = outputs.front_end.open_front_end(game.as_ref())?;
    let sinks = MatchSinks {
        relay,
        ..MatchSinks::open(&outputs.sinks, recorder, game.as_ref(), frames)?
    };
    let clock = FrameClock::new(game.frames_per_second(), 0).with_catch_up(2, 10);
    let machine = SpectatorMachine::new(spectator, game, sinks, clock);
    let mut role = SpectatorRole::new(machine, frames, &settings.chat, keys);
    let mut narrator = Narrator::new(out, front, options);
    let end = run_live(&mut role, &mut transport, started, &mut narrator)?;
    role.finish(end, &transport)
}

/// Tells the keys of our link to the host that welcomed `spectator`, to
/// compare with the host's screen, and holds the host to `peer_key`.
fn show_host_keys(
    spectator: &SpectatorSession<SocketAddr>,
    peer_key: Option<Fingerprint>,
    out: &mut dyn Write,
) -> Result<Option<WatchKeys>, AppError> {
    let Some(host) = spectator.link_fingerprints() else {
        return Ok(None);
    };
    let keys = WatchKeys {
        ours: spectator.key_fingerprint(),
        host,
    };
    writeln!(out, "{}", keys.describe())?;
    match peer_key {
        Some(wanted) if wanted != host.peer_key => Err(AppError::HandshakeRefused {
            reason: format!(
                "P1's key is {}, not the --peer-key {wanted}: a machine may sit between you; left the match",
                host.peer_key
            ),
        }),
        _ => Ok(Some(keys)),
    }
}

/// The host `settings` name (an address or a room), and this machine's
/// game, its saves in the match's folder `saves`.
fn find_host(
    settings: &SpectateSettings,
    saves: &MatchSaveDir,
) -> Result<(FoundHost, Box<dyn Game>), AppError> {
    let way = HostWay {
        address: settings.address.as_deref(),
        room: settings.room,
        signal: &settings.signal,
    };
    let open = || {
        let game = open_game(&saves.game_args(&settings.game))?;
        Ok((game, settings.game.clone()))
    };
    let (link, timeout) = (&settings.link, settings.connect_timeout_s);
    reach_host(way, RoomRole::Spectator, link, timeout, open)
}

/// The sink `make` makes for the match `spectator` was welcomed to, of
/// `game` as `args` run it, watched as `names` say.
fn make_relay(
    make: RelayMaker<'_>,
    spectator: &SpectatorSession<SocketAddr>,
    game: &dyn Game,
    args: &GameArgs,
    names: &[String],
) -> Result<Box<dyn RelaySink + Send>, AppError> {
    make(RelayStart {
        game,
        args,
        players: spectator.players().clamp(1, netcode::input::MAX_PLAYERS) as u8,
        names: names.to_vec(),
        host_key: spectator.host_handshake().and_then(|host| host.public_key),
    })
}

/// Our Hello to `host`: our game, at its frame rate, and a fresh secret.
fn spectator_config(
    host: SocketAddr,
    game: &dyn Game,
    settings: &SpectateSettings,
) -> Result<SpectatorConfig<SocketAddr>, AppError> {
    let mut config = SpectatorConfig::new(
        host,
        game.core_name(),
        game.core_version(),
        content_hash(&settings.game)?,
        SessionSettings {
            frame_rate_millihertz: (game.frames_per_second() * 1000.0).round() as u32,
            ..SessionSettings::default()
        },
    );
    config.secret = link_secret()?;
    config.room_password = settings.room.map(|code| code.password());
    // The players wait this long for one of them by default: so does a spectator.
    config.rejoin_window_ms = u64::from(DEFAULT_REJOIN_S) * 1000;
    Ok(config)
}

/// No welcome came: Ctrl-C ended the wait, or the host never answered.
fn unanswered(label: String, seconds: f64) -> Result<LiveMatch, AppError> {
    if interrupted() {
        return Ok(LiveMatch {
            outcome: Outcome::Interrupted,
            log: ChecksumLog::new(1),
            report: None,
        });
    }
    Err(AppError::NoAnswer {
        address: label,
        seconds,
    })
}

/// How many of the match's frames to watch: ours (`--frames`) or the
/// match's own length (the host's), whichever ends first.
fn watched_frames(ours: Option<u32>, host: Option<u32>) -> Option<u32> {
    match (ours, host) {
        (Some(ours), Some(host)) => Some(ours.min(host)),
        (ours, host) => ours.or(host),
    }
}

/// Says Hello until the host welcomes or refuses us, the timeout passes or
/// Ctrl-C is pressed: whether the host welcomed us (its refusal is an
/// error). Events before the welcome are not told.
fn await_welcome(
    spectator: &mut SpectatorSession<SocketAddr>,
    transport: &mut LiveTransport,
    started: Instant,
    timeout: Duration,
) -> Result<bool, AppError> {
    let mut refused = None;
    shake_hands(spectator, transport, started, Some(timeout), |spectator| {
        if spectator.host_handshake().is_some() {
            return true;
        }
        if let Some(SpectatorEvent::Rejected(rejection)) = spectator.next_event() {
            refused = Some(rejection);
            return true;
        }
        spectator.phase() == SpectatorPhase::Ended
    });
    if let Some(rejection) = refused {
        return Err(AppError::HandshakeRefused {
            reason: rejection.explanation(),
        });
    }
    Ok(spectator.host_handshake().is_some())
}
