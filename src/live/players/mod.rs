//! `netcade host` and `netcade join`: a two-player match over real UDP,
//! in the one real-time loop (`session_loop`) with the players' role.
//!
//! Before the match a rollback pre-flight (`mode`) tests the loaded core,
//! on the match's own core (a joiner's once it took on the host's core
//! options); from it the host chooses rollback or lockstep.

pub mod args;
mod mode;
pub(crate) mod port_file;
mod report;
mod restart;
mod role;
mod ticket;

pub use args::{
    DelayArg, HostSettings, JoinSettings, MatchSettings, ModeArg, RetroArchHostArgs,
    DEFAULT_REJOIN_S,
};
use mode::{host_mode, join_mode, preflight};
pub use ticket::{rejoin_folder, rejoinable_matches, RejoinableMatch, TicketGame};

use crate::engine::frame_clock::FrameClock;
use crate::engine::inputs::InputSource;
use crate::engine::matches::machine::NetplayMachine;
use crate::engine::sinks::recorder::{match_recorder, ReplayRecorder};
use crate::engine::sinks::MatchSinks;
use crate::engine::{open_game, AppError, Game, MatchSaveDir};
use crate::live::connect::{
    adopt_host_options, bind_ipv4, bind_listening, bind_toward, connect_timeout, content_hash,
    host_option_overrides, link_secret, random_bytes, SOCKET_ADDRESSES,
};
use crate::live::front_end::{ConnectStep, ConnectingScreen, LiveOutputs, MatchView};
use crate::live::narrator::Narrator;
use crate::live::options::{LiveEvent, LiveOptions};
use crate::live::rooms::{
    find_host_thread, host_room, identity_of, quick_pair_thread, reach_host, room_code, FoundHost,
    HostWay, HostedRoom, OpenedRoom, QuickPairing, RoomCode, RoomRole, RoomThread,
};
use crate::live::session_loop::{run_live, shake_hands, LiveMatch};
use crate::live::wire::LiveTransport;
use crate::net::link::LinkTransport;
use netcode::checksum::Checksum;
use netcode::netplay::{NetplayConfig, NetplaySession};
use netcode::protocol::{
    CoreOption, Fingerprint, LinkSecret, PlayerSlots, RejectReason, SessionSettings, SessionToken,
    MAX_CORE_OPTIONS,
};
use netcode::rollback::SessionState;
use port_file::PortFile;
use role::{PlayersRole, Seat};
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Silence before the peer is reported interrupted, and gone (the session's
/// timings: a warning at 750 ms, the peer dropped at 5 s).
const INTERRUPT_AFTER_MS: u64 = 750;
const DISCONNECT_AFTER_MS: u64 = 5_000;

/// What a joiner's summary says when its player cancelled on the
/// connecting screen, before the match began.
pub const JOIN_CANCELLED: &str = "joining cancelled before the match began";

/// Hellos a joiner says at most: one to learn the host's settings, one per
/// slot it may try.
const MAX_SEAT_ATTEMPTS: usize = 1 + netcode::rollback::MAX_PLAYERS;

/// Hosts a match: binds the port, waits for a player, plays, and returns
/// how it went.
pub fn host_match(
    settings: &HostSettings,
    outputs: &LiveOutputs<'_>,
    options: &LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    let transport = match settings.room {
        // Its player's path is found with ICE, whose candidates are IPv4.
        Some(_) => bind_ipv4(&settings.common.link, settings.port)?,
        None => bind_listening(&settings.common.link, settings.port)?,
    };
    host_on(settings, transport, outputs, options, out)
}

/// Hosts a match on the game socket `transport` (bound by `host`, or by a
/// quick match before it knew it would host).
fn host_on(
    settings: &HostSettings,
    transport: LinkTransport,
    outputs: &LiveOutputs<'_>,
    options: &LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    if settings.common.peer_key.is_some() && settings.players > 2 {
        return Err(AppError::BadArgument {
            message: "--peer-key on the host pins its one joiner's key: a match of 3 or 4 has several (pin the host's key on each joiner instead)".into(),
        });
    }
    let saves = MatchSaveDir::create(&settings.common.game, "host")?;
    let common = &in_match_folder(&settings.common, &saves);
    let inputs = open_inputs(common)?;
    let bound = transport.inner().local_address();
    options.signal(LiveEvent::Listening { address: bound });
    let mut game = open_game(&common.game)?;
    let found = preflight(game.as_mut())?;
    let lockstep = host_mode(common.mode, &found, common.strict, &game.title())?;
    let (opened, code_shown) = match open_room(settings, game.as_ref(), &transport, out)? {
        Some((room, code)) => (Some(room), Some(code.to_string())),
        None => (None, None),
    };
    let room_password = opened.as_ref().map(OpenedRoom::password);
    let joiners = settings.players - 1;
    // Signals are ours before anyone is told we wait: a SIGHUP after the
    // line below is an interruption, never a kill.
    options.take_ctrl_c();
    // Written once an interrupt ends the host cleanly, so the file goes
    // with it.
    let _port_file = match &settings.port_file {
        Some(path) => Some(PortFile::write(path, bound.port())?),
        None => None,
    };
    writeln!(
        out,
        "hosting {} on UDP port {}: waiting for {} to join",
        game.title(),
        bound.port(),
        if joiners == 1 {
            "a player".to_string()
        } else {
            format!("{joiners} players")
        }
    )?;
    // The window opens now, and a room's host waits in it for its player
    // (Cancel, Esc or closing it stops waiting: the match's loop says so).
    let mut front = outputs.front_end.open_front_end(game.as_ref())?;
    let waiting = MatchView {
        listening: Some(bound.port()),
        room_code: code_shown.clone(),
        ..MatchView::default()
    };
    let mut still_waiting = || {
        front.handle_events();
        front.present(game.as_ref(), &waiting);
        !front.quit_requested()
    };
    let (_room, transport) = meet_player(opened, settings, transport, &mut still_waiting)?;
    let seat = Seat {
        command: "host",
        me: 0,
        peer: 1,
        connect_timeout: None,
        room_code: code_shown,
    };
    // Every member begins from the host's game as loaded: save RAM, clocks
    // and anything the core seeded at load are the same everywhere. A core
    // that cannot save (lockstep) begins from each machine's own load.
    let agreed = SessionSettings {
        player_count: settings.players,
        input_delay_min: settings.min_delay,
        rejoin_window_s: common.rejoin_s,
        ..SessionSettings::default()
    }
    .in_mode(lockstep);
    let secret = common.link_secret.clone().map_or_else(link_secret, Ok)?;
    let mut config = match_config(common, game.as_ref(), seat.me, agreed, secret)?;
    config.room_password = room_password;
    say_own_key(&config.secret, out)?;
    for slot in 1..settings.players {
        config = config.accept(None, PlayerSlots::single(slot));
    }
    if found.saves_states() {
        let mut start_state = Vec::new();
        game.save_state(&mut start_state)
            .map_err(AppError::at_frame(0))?;
        config.start_state = Some(start_state);
    }
    config.accept_spectators = settings.max_spectators > 0;
    config.max_spectators = settings.max_spectators;
    let started = Instant::now();
    let netplay = NetplaySession::new(config, 0)?;
    let recorder = match_recorder(
        &outputs.sinks.record,
        game.as_ref(),
        &common.game,
        settings.players,
        vec![],
    )?;
    let table = Table {
        game,
        netplay,
        transport: LiveTransport::new(transport),
        started,
        recorder,
        front,
    };
    play(seat, common, outputs, table, inputs, options, out)
}

/// `host --room`: opens the room and prints its code.
fn open_room(
    settings: &HostSettings,
    game: &dyn Game,
    transport: &LinkTransport,
    out: &mut dyn Write,
) -> Result<Option<(OpenedRoom, RoomCode)>, AppError> {
    let Some(chosen) = settings.room else {
        return Ok(None);
    };
    let code = room_code(chosen)?;
    let identity = identity_of(game, &settings.common.game)?;
    let room = host_room(
        &settings.signal,
        code,
        identity,
        settings.players,
        transport,
    )?;
    let others = match settings.players {
        2 => "the other player runs",
        _ => "the other players run",
    };
    writeln!(
        out,
        "room code {code}: {others} `netcade join --room {code}`, spectators `netcade spectate --room {code}`"
    )?;
    Ok(Some((room, code)))
}

/// `host --room`: waits for the room's player and finds the path to it,
/// while `still_waiting` says so.
fn meet_player(
    opened: Option<OpenedRoom>,
    settings: &HostSettings,
    transport: LinkTransport,
    still_waiting: &mut dyn FnMut() -> bool,
) -> Result<(Option<HostedRoom>, LinkTransport), AppError> {
    match opened {
        Some(opened) => opened.meet_player(&settings.signal, transport, still_waiting),
        None => Ok((None, transport)),
    }
}

/// Joins the match hosted at `settings.address` (or in its room, or the
/// quick match's), plays, and returns how it went.
pub fn join_match(
    settings: &JoinSettings,
    outputs: &LiveOutputs<'_>,
    options: &LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    // The arguments and the host's address are checked before the game is
    // loaded; a room compares games, so there the game comes first.
    let saves = MatchSaveDir::create(&settings.common.game, "join")?;
    let common = &in_match_folder(&settings.common, &saves);
    if settings.rejoin {
        return restart::rejoin_match(settings, common, outputs, options, out);
    }
    let open = || Ok((open_game(&common.game)?, common.game.clone()));
    if settings.quick {
        let (game, args) = open()?;
        let identity = identity_of(game.as_ref(), &args)?;
        let mut screen = outputs.front_end.connecting("a quick match")?;
        let queue = quick_pair_thread(&settings.signal, identity, &common.link);
        // The queue waits for as long as it takes: no time limit to show.
        let paired = match await_showing(queue, Duration::MAX, screen.as_mut(), out)? {
            Some(paired) => paired,
            None => return cancelled_before_the_match(out),
        };
        return match paired {
            QuickPairing::Join(found) => {
                let pair = (found, game);
                join_found(
                    settings,
                    common,
                    pair,
                    outputs,
                    screen.as_mut(),
                    options,
                    out,
                )
            }
            QuickPairing::Host(transport, _room) => {
                // The host's side loads its game itself, in its own folder.
                drop((game, saves));
                screen.hand_over();
                let host = quick_host_settings(settings);
                host_on(&host, transport, outputs, options, out)
            }
        };
    }
    let way = HostWay {
        address: settings.address.as_deref(),
        room: settings.room,
        signal: &settings.signal,
    };
    // The window opens now, before anything waits on the network.
    let mut screen = outputs.front_end.connecting(&way.describe())?;
    let (link, timeout) = (&common.link, settings.connect_timeout_s);
    let (found, game) = match (way.address, way.room) {
        (None, Some(code)) => {
            let (game, args) = open()?;
            let identity = identity_of(game.as_ref(), &args)?;
            let ours = (RoomRole::Player, identity);
            let timeout = connect_timeout(timeout)?;
            let search = find_host_thread(way.signal, code, ours, link, timeout);
            match await_showing(search, timeout, screen.as_mut(), out)? {
                Some(found) => (found, game),
                None => return cancelled_before_the_match(out),
            }
        }
        _ => reach_host(way, RoomRole::Player, link, timeout, open)?,
    };
    join_found(
        settings,
        common,
        (found, game),
        outputs,
        screen.as_mut(),
        options,
        out,
    )
}

/// Waits for the room's `work` (a search for its host, a quick match's
/// queue), showing its steps on `screen` each millisecond and writing its
/// lines to `out`; `None` when the player cancelled (the work is left to
/// end on its own thread, at its deadline, its sockets with it).
pub(crate) fn await_showing<T: Send + 'static>(
    search: RoomThread<T>,
    timeout: Duration,
    screen: &mut dyn ConnectingScreen,
    out: &mut dyn Write,
) -> Result<Option<T>, AppError> {
    let started = Instant::now();
    let mut step = ConnectStep::EnteringRoom;
    loop {
        // Read before the steps: a search ended has sent them all.
        let finished = search.is_finished();
        while let Ok(line) = search.lines.try_recv() {
            out.write_all(&line)?;
        }
        while let Ok(next) = search.steps.try_recv() {
            // Each step is shown once, even one passed within a millisecond.
            if screen.show(next, started.elapsed(), timeout) {
                return Ok(None);
            }
            step = next;
        }
        if finished {
            return search.found().map(Some);
        }
        if screen.show(step, started.elapsed(), timeout) {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The end of a join its player cancelled before the match began: said
/// in [`JOIN_CANCELLED`]'s words, which the launcher reads.
pub fn cancelled_before_the_match(out: &mut dyn Write) -> Result<LiveMatch, AppError> {
    writeln!(out, "{JOIN_CANCELLED}")?;
    Ok(LiveMatch {
        outcome: crate::engine::Outcome::Success,
        log: crate::engine::sinks::ChecksumLog::new(1),
        report: None,
    })
}

/// Two players who agreed elsewhere (the lobby) to play, on the path found
/// between them.
pub enum Paired {
    /// Host the match on this game socket.
    Host(Box<LinkTransport>),
    /// Join the host found.
    Join(Box<FoundHost>),
}

/// Plays the match of a pairing made elsewhere, as a quick match's two
/// sides play it: `settings` is the match as this player asked for it;
/// `screen`, the wait's, shows a joiner's handshake and a host's window
/// takes its place.
pub fn play_paired(
    settings: &JoinSettings,
    paired: Paired,
    outputs: &LiveOutputs<'_>,
    screen: &mut dyn ConnectingScreen,
    options: &LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    match paired {
        Paired::Host(transport) => {
            screen.hand_over();
            let host = quick_host_settings(settings);
            host_on(&host, *transport, outputs, options, out)
        }
        Paired::Join(found) => {
            let saves = MatchSaveDir::create(&settings.common.game, "join")?;
            let common = &in_match_folder(&settings.common, &saves);
            let game = open_game(&common.game)?;
            let pair = (*found, game);
            join_found(settings, common, pair, outputs, screen, options, out)
        }
    }
}

/// The settings of a paired match's host (a quick match's, the lobby's):
/// the match as the player asked for it, two players, on the socket
/// already bound; no spectators, who would have no way to find it.
fn quick_host_settings(settings: &JoinSettings) -> HostSettings {
    HostSettings {
        common: settings.common.clone(),
        port: 0,
        players: 2,
        min_delay: 0,
        port_file: None,
        max_spectators: 0,
        room: None,
        signal: settings.signal.clone(),
        retroarch: Default::default(),
    }
}

/// Plays the match of the host `found`, with this machine's `game`; `common`
/// is the match's settings with the game's saves in the match's folder.
/// `screen` shows the handshake, and its Cancel ends the join there.
fn join_found(
    settings: &JoinSettings,
    common: &MatchSettings,
    (found, game): (FoundHost, Box<dyn Game>),
    outputs: &LiveOutputs<'_>,
    screen: &mut dyn ConnectingScreen,
    options: &LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    let inputs = open_inputs(common)?;
    let found_address = found.address;
    writeln!(
        out,
        "joining {} ({}) with {}",
        found.label,
        found.address,
        game.title()
    )?;
    let label = found.label.clone();
    // One key for every attempt: the host may pin the one we print.
    let secret = common.link_secret.clone().map_or_else(link_secret, Ok)?;
    say_own_key(&secret, out)?;
    options.take_ctrl_c();
    let (mut found, mut host) = (found, found_address);
    // The room the host was found in, kept for a match of 3 or 4.
    let mut room = None;
    let Seated {
        seat,
        netplay,
        mut transport,
        started,
        ..
    } = loop {
        // Kept through the handshake; a room's host that never answers
        // (anyone in the room can pose as it) costs one try.
        let next = found.next.take();
        let within = next.as_ref().map(|next| next.handshake_within());
        let seated = take_a_seat(settings, found, game.as_ref(), within, &secret, screen)?;
        if seated.cancelled {
            // Nothing began: the host forgets an unanswered Hello.
            return cancelled_before_the_match(out);
        }
        // A room's host whose keys do not prove the code (another match
        // whose code begins alike, or a machine posing as the host) costs
        // one try too; the last one's refusal says the code did not match.
        let refusal = seated.netplay.host_refusal().map(|(reason, _)| reason);
        let unanswered = seated.netplay.host_handshake().is_none()
            && matches!(refusal, None | Some(RejectReason::RoomCodeMismatch))
            && !crate::live::options::interrupted();
        match next {
            Some(next) if unanswered => match next.try_next()? {
                Some(other) => {
                    host = other.address;
                    found = other;
                }
                None => break seated,
            },
            next => {
                room = next;
                break seated;
            }
        }
    };
    // The other joiners are met in the room, each on a path of its own.
    let more_players = netplay.host_handshake().is_some() && netplay.settings().player_count > 2;
    let _room = match room.filter(|_| more_players) {
        Some(room) => match room.meet_other_players(seat.me, transport.link_mut())? {
            Some((serving, paths)) => {
                transport.find_players_by(paths);
                Some(serving)
            }
            None => None,
        },
        None => None,
    };
    if netplay.host_handshake().is_some() {
        // The host answered: what is left is loading its game (its core
        // options, the pre-flight), then the match's window takes over.
        let timeout = seat
            .connect_timeout
            .as_ref()
            .map_or(Duration::ZERO, |(_, t)| *t);
        screen.show(ConnectStep::LoadingHostState, started.elapsed(), timeout);
    }
    note_host_rejoin_window(common, &netplay);
    // Kept while the match runs: a killed process comes back with it.
    let _ticket = ticket_key(settings, host)
        .and_then(|key| restart::keep_joiners_ticket(&netplay, key, host, seat.me, &common.game));
    let host_options = netplay
        .host_handshake()
        .map(|host| host_option_overrides(&host.core_options));
    let host_lockstep = netplay
        .host_handshake()
        .is_some_and(|host| host.settings.is_lockstep());
    let agreed = adopt_host_frames(
        common,
        netplay.host_handshake().map(|host| host.match_frames),
    );
    let mut game_args = common.game.clone();
    let game = match host_options {
        Some(host_options) => {
            game_args.options = host_options.clone();
            let mut game = adopt_host_options(game, &common.game, host_options)?;
            // On the core as the match runs it: with the host's options.
            let found = preflight(game.as_mut())?;
            join_mode(host_lockstep, &found, common.strict, &game.title())?;
            game
        }
        // No match will be played: the loop reports why.
        None => game,
    };
    let names = vec![label];
    let players = netplay.settings().player_count;
    let recorder = match_recorder(
        &outputs.sinks.record,
        game.as_ref(),
        &game_args,
        players,
        names,
    )?;
    // The match's window takes over the connecting screen's.
    screen.hand_over();
    let front = outputs.front_end.open_front_end(game.as_ref())?;
    let table = Table {
        game,
        netplay,
        transport,
        started,
        recorder,
        front,
    };
    play(seat, &agreed, outputs, table, inputs, options, out)
}

/// How a restarted process finds this match's ticket: by the host's
/// address, or its room's code; a quick match has no way back.
fn ticket_key(settings: &JoinSettings, host: SocketAddr) -> Option<ticket::TicketKey> {
    match (settings.quick, settings.room) {
        (true, _) => None,
        (false, Some(code)) => Some(ticket::TicketKey::Room(code)),
        (false, None) => Some(ticket::TicketKey::Address(host)),
    }
}

/// A joiner linked to the host, or refused for good, or out of time.
struct Seated {
    seat: Seat,
    netplay: NetplaySession<SocketAddr>,
    transport: LiveTransport,
    started: Instant,
    /// The player cancelled on the connecting screen.
    cancelled: bool,
}

/// Says Hello to the host until it answers, claiming `--slot` or else the
/// first free slot, with the host's settings (its player count and delay
/// floor, learnt from its Reject): each attempt on a fresh socket, so that
/// a late Reject of the last one is not taken for the next, except on a
/// path ICE found, which belongs to its socket (its NAT mapping, its relay
/// allocation): there a Reject naming the settings already adopted is
/// taken as late, and asked again. The joiner
/// learns the host's core options while nothing of its game is used yet;
/// a refusal, the timeout or Ctrl-C is the loop's to report. `screen`
/// shows the wait each millisecond, and its Cancel stops it there.
fn take_a_seat(
    settings: &JoinSettings,
    found: FoundHost,
    game: &dyn Game,
    answer_within: Option<Duration>,
    secret: &LinkSecret,
    screen: &mut dyn ConnectingScreen,
) -> Result<Seated, AppError> {
    let common = &settings.common;
    let (host, label, mut first) = (found.address, found.label, Some(found.transport));
    let keep_socket = first
        .as_ref()
        .is_some_and(|link| link.inner().ice_path().is_some());
    let timeout =
        answer_within.unwrap_or_else(|| Duration::from_secs_f64(settings.connect_timeout_s));
    let mut slot = settings.slot.map_or(1, |player| player - 1);
    // We propose rollback; a host in lockstep refuses us with its settings,
    // and the retry takes them.
    let mut agreed = SessionSettings {
        player_count: (slot + 1).max(2),
        rejoin_window_s: common.rejoin_s,
        ..SessionSettings::default()
    };
    for attempt in 0..=MAX_SEAT_ATTEMPTS {
        let transport = first
            .take()
            .map_or_else(|| bind_toward(host, &common.link), Ok)?;
        let mut config = match_config(common, game, slot, agreed, secret.clone())?
            .dial(host, PlayerSlots::single(0));
        config.room_password = settings.room.map(|code| code.password());
        if settings.room.is_some() {
            config.roster = config.roster.map(|_| crate::live::rooms::PATHS_BY_ICE);
        }
        for other in (1..agreed.player_count).filter(|&other| other != slot) {
            config = config.from_roster(PlayerSlots::single(other));
        }
        let started = Instant::now();
        let mut netplay = NetplaySession::new(config, 0)?;
        let mut transport = LiveTransport::new(transport);
        let mut cancelled = false;
        shake_hands(
            &mut netplay,
            &mut transport,
            started,
            Some(timeout),
            |netplay| {
                cancelled = screen.show(ConnectStep::Handshake, started.elapsed(), timeout);
                cancelled
                    || netplay.host_handshake().is_some()
                    || netplay.host_refusal().is_some()
                    || netplay.state() == SessionState::Ended
            },
        );
        let retry = match attempt {
            _ if cancelled => None,
            MAX_SEAT_ATTEMPTS => None,
            _ => next_request(
                &netplay,
                (slot, agreed),
                settings.slot.is_some(),
                keep_socket,
            )?,
        };
        let Some((next_slot, next_settings)) = retry else {
            let seat = Seat {
                command: "join",
                me: slot,
                peer: 0,
                connect_timeout: Some((label, timeout)),
                room_code: None,
            };
            return Ok(Seated {
                seat,
                netplay,
                transport,
                started,
                cancelled,
            });
        };
        tracing::info!("the host refused slot {slot}; asking again for slot {next_slot}");
        if keep_socket {
            first = Some(transport.into_link());
        }
        (slot, agreed) = (next_slot, next_settings);
    }
    unreachable!("the last attempt returns")
}

/// What to ask the host for next after it refused `asked` (our slot and
/// settings), or `None` when its answer is final: its settings when they
/// differ from ours (or, on the socket of an ICE path, `same_socket`, when
/// a late refusal names the ones already adopted), the next slot when
/// ours was taken and none was chosen with `--slot`.
fn next_request(
    netplay: &NetplaySession<SocketAddr>,
    (slot, agreed): (u8, SessionSettings),
    slot_chosen: bool,
    same_socket: bool,
) -> Result<Option<(u8, SessionSettings)>, AppError> {
    Ok(match netplay.host_refusal() {
        Some((RejectReason::Settings, host)) => {
            let theirs = SessionSettings {
                frame_rate_millihertz: agreed.frame_rate_millihertz,
                ..host.settings
            };
            if slot >= theirs.player_count {
                return Err(AppError::BadArgument {
                    message: format!(
                        "--slot {}: the host's match has {} players",
                        slot + 1,
                        theirs.player_count
                    ),
                });
            }
            (theirs != agreed || same_socket).then_some((slot, theirs))
        }
        Some((RejectReason::SlotTaken, _)) if !slot_chosen => {
            (slot + 1 < agreed.player_count).then_some((slot + 1, agreed))
        }
        _ => None,
    })
}

/// The host's match length wins, as its core options do: `settings` with
/// the host's `--frames` (`host`: none before the host answered), and a
/// `note:` line when ours differed.
fn adopt_host_frames(settings: &MatchSettings, host: Option<Option<u32>>) -> MatchSettings {
    let mut agreed = settings.clone();
    let Some(host_frames) = host else {
        return agreed;
    };
    if host_frames != settings.frames {
        let length = |frames: Option<u32>| {
            frames.map_or_else(|| "no --frames".to_string(), |n| format!("--frames {n}"))
        };
        eprintln!(
            "note: the host's match length wins: {} (you gave {})",
            length(host_frames),
            length(settings.frames)
        );
    }
    agreed.frames = host_frames;
    agreed
}

/// The host's rejoin window is the match's (the joiner's settings took it
/// on its Reject): a `note:` line when ours differed.
fn note_host_rejoin_window(settings: &MatchSettings, netplay: &NetplaySession<SocketAddr>) {
    let Some(host) = netplay.host_handshake() else {
        return;
    };
    let window = host.settings.rejoin_window_s;
    if window != settings.rejoin_s {
        eprintln!(
            "note: the host's rejoin window wins: --rejoin-s {window} (you gave --rejoin-s {})",
            settings.rejoin_s
        );
    }
}

/// What a match is played with once connected: the game, the session (its
/// clock began at `started`), the socket, the replay recorder and the
/// front end showing it.
struct Table {
    game: Box<dyn Game>,
    netplay: NetplaySession<SocketAddr>,
    transport: LiveTransport,
    started: Instant,
    recorder: Option<ReplayRecorder>,
    front: Box<dyn crate::live::front_end::FrontEnd>,
}

/// Plays the match in real time and sums it up.
fn play(
    seat: Seat,
    settings: &MatchSettings,
    outputs: &LiveOutputs<'_>,
    table: Table,
    inputs: InputSource,
    options: &LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    let Table {
        game,
        netplay,
        mut transport,
        started,
        recorder,
        front,
    } = table;
    let sinks = MatchSinks::open(&outputs.sinks, recorder, game.as_ref(), settings.frames)?;
    let clock = FrameClock::new(game.frames_per_second(), 0).with_catch_up(2, 10);
    let lockstep = netplay.settings().is_lockstep();
    let mut machine = NetplayMachine::new(netplay, game, sinks, clock);
    if lockstep && settings.run_ahead.ahead > 0 {
        // Run-ahead loads a state back into the game, which lockstep never
        // trusts its core to do (its pre-flight found it cannot).
        eprintln!(
            "warning: --run-ahead is off: a lockstep match never loads a state into its game, and run-ahead would"
        );
    } else {
        machine.set_run_ahead(settings.run_ahead);
    }
    let (hosting, room_code) = (seat.me == 0, seat.room_code.clone());
    let mut role = PlayersRole::new(seat, settings, machine, inputs, started);
    if hosting {
        role.listening_on(transport.local_port(), room_code);
    }
    let mut narrator = Narrator::new(out, front, options);
    if let Some(path) = transport.ice_path() {
        narrator.say_and_show(&format!("path: {}", path.describe()))?;
    }
    let end = run_live(&mut role, &mut transport, started, &mut narrator)?;
    role.finish(end, &transport)
}

/// `settings` with the match's own save folder for the core.
fn in_match_folder(settings: &MatchSettings, saves: &MatchSaveDir) -> MatchSettings {
    MatchSettings {
        game: saves.game_args(&settings.game),
        ..settings.clone()
    }
}

/// This machine's input source; an input script shorter than `--frames`
/// is said once, as `run` says it.
fn open_inputs(settings: &MatchSettings) -> Result<InputSource, AppError> {
    let spec = settings.input_spec();
    Ok(match settings.frames {
        Some(frames) => InputSource::open_for_run(&spec, frames)?,
        None => InputSource::open(&spec)?,
    })
}

/// The session configuration both sides build the same way from the same
/// core and content (the handshake checks they did).
fn match_config(
    settings: &MatchSettings,
    game: &dyn Game,
    me: u8,
    agreed: SessionSettings,
    secret: LinkSecret,
) -> Result<NetplayConfig<SocketAddr>, AppError> {
    let content_hash = content_hash(&settings.game)?;
    let session = SessionSettings {
        frame_rate_millihertz: (game.frames_per_second() * 1000.0).round() as u32,
        ..agreed
    };
    let mut config = NetplayConfig::new(
        session_token(),
        game.core_name(),
        game.core_version(),
        content_hash,
        session,
        PlayerSlots::single(me),
    );
    let options = &settings.game.options;
    if options.len() > MAX_CORE_OPTIONS {
        return Err(AppError::BadArgument {
            message: format!(
                "{} --option flags: at most {MAX_CORE_OPTIONS} fit in a netplay handshake",
                options.len()
            ),
        });
    }
    // Only the options set: the handshake already made sure both sides run
    // the same core version, so the defaults are the same.
    config.core_options = options
        .iter()
        .map(|(key, value)| CoreOption {
            key: key.clone(),
            value: value.clone(),
        })
        .collect();
    config.secret = secret;
    config.roster = (session.player_count > 2).then_some(SOCKET_ADDRESSES);
    config.match_frames = settings.frames;
    config.interrupt_after_ms = INTERRUPT_AFTER_MS;
    config.disconnect_after_ms = DISCONNECT_AFTER_MS;
    // The host's window, which a joiner adopts with its settings.
    config.rejoin_window_ms = u64::from(session.rejoin_window_s) * 1000;
    config.rejoin_seed = u64::from_le_bytes(random_bytes()?);
    if let DelayArg::Fixed(frames) = settings.delay {
        config.initial_input_delay = u32::from(frames);
        config.dynamic_input_delay = false;
    }
    Ok(config)
}

/// Prints this machine's key's fingerprint, which the other side may pin
/// with `--peer-key`.
fn say_own_key(secret: &LinkSecret, out: &mut dyn Write) -> Result<(), AppError> {
    let key = Fingerprint::of_key(&secret.public_key());
    writeln!(
        out,
        "key {key}: the other side may pin it with --peer-key {key}"
    )?;
    Ok(())
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
