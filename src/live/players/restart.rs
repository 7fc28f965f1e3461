//! `join HOST:PORT --rejoin`: a joiner whose process was killed comes back
//! to its match with the ticket it kept (see `ticket`), from a new socket.
//! The host challenges it as any player heard from a new address; it
//! proves itself with the link's key, gets the state of the first frame
//! the host lacks its inputs for, and plays on from there. Its replay and
//! summary begin at that frame; the host's run on without a gap.
//!
//! `join --room CODE --rejoin` finds the host through its room, which the
//! host keeps open through the match, and a new path to it with ICE, as a
//! spectator does (the host meets it beside the match on its socket).

use super::ticket::{keep_ticket, read_ticket, KeptTicket, Ticket, TicketGame, TicketKey};
use super::{
    adopt_host_frames, await_showing, cancelled_before_the_match, match_config, open_inputs, play,
    JoinSettings, MatchSettings, Seat, Table,
};
use crate::engine::sinks::recorder::match_recorder;
use crate::engine::{open_game, AppError, Game};
use crate::live::connect::{
    adopt_host_options, connect_timeout, connect_to_host, content_hash, host_option_overrides,
};
use crate::live::front_end::{ConnectingScreen, LiveOutputs};
use crate::live::options::LiveOptions;
use crate::live::rooms::{find_host_thread, identity_of, RoomCode, RoomRole};
use crate::live::session_loop::LiveMatch;
use crate::live::wire::LiveTransport;
use crate::net::link::LinkTransport;
use netcode::netplay::{NetplaySession, RejoinTicket};
use netcode::protocol::PlayerSlots;
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Where the host is, and the socket to dial it from.
struct Reached {
    host: SocketAddr,
    transport: LinkTransport,
    label: String,
}

/// Comes back to the match hosted at `settings.address` (or in its room);
/// `common` is the match's settings with the game's saves in this run's
/// folder.
pub(super) fn rejoin_match(
    settings: &JoinSettings,
    common: &MatchSettings,
    outputs: &LiveOutputs<'_>,
    options: &LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    let way = way_back(settings, common)?;
    let key = way.key();
    let mut ticket = read_ticket(key)?;
    let rejoin = usable(key, &ticket)?;
    let welcome = &ticket.welcome;
    // The window opens now, before anything waits on the network.
    let mut screen = outputs.front_end.connecting(&way.describe())?;
    let game = open_game(&common.game)?;
    check_same_game(&ticket, game.as_ref(), common)?;
    let Reached {
        host,
        transport,
        label,
    } = match way {
        Way::Direct(reached) => *reached,
        Way::Room(code) => {
            match through_room(settings, common, code, game.as_ref(), screen.as_mut(), out)? {
                Some(reached) => reached,
                None => return cancelled_before_the_match(out),
            }
        }
    };
    let host_options = host_option_overrides(&welcome.core_options);
    let mut game_args = common.game.clone();
    game_args.options = host_options.clone();
    let game = adopt_host_options(game, &common.game, host_options)?;
    let agreed = adopt_host_frames(common, Some(welcome.match_frames));
    let mut config = match_config(
        &agreed,
        game.as_ref(),
        ticket.slot,
        welcome.settings,
        rejoin.secret.clone(),
    )?
    .dial(host, PlayerSlots::single(0));
    rejoin.apply(&mut config);
    config.room_password = settings.room.map(|code| code.password());
    let inputs = open_inputs(&agreed)?;
    writeln!(
        out,
        "rejoining the match {key} ({host}) as P{} with {}",
        ticket.slot + 1,
        game.title()
    )?;
    let recorder = match_recorder(
        &outputs.sinks.record,
        game.as_ref(),
        &game_args,
        welcome.settings.player_count,
        vec![label.clone()],
    )?;
    options.take_ctrl_c();
    let started = Instant::now();
    let netplay = NetplaySession::new(config, 0)?;
    let seat = Seat {
        command: "join",
        me: ticket.slot,
        peer: 0,
        connect_timeout: Some((label, Duration::from_secs_f64(settings.connect_timeout_s))),
        room_code: None,
    };
    // Kept again with the game as this process names it.
    ticket.game = Some(TicketGame::of(&common.game));
    let kept = keep_ticket(key, &ticket);
    // The match's window takes over the connecting screen's.
    screen.hand_over();
    let front = outputs.front_end.open_front_end(game.as_ref())?;
    let table = Table {
        game,
        netplay,
        transport: LiveTransport::new(transport),
        started,
        recorder,
        front,
    };
    let played = play(seat, &agreed, outputs, table, inputs, options, out);
    // Not taken back (no answer, Ctrl-C while waiting): another try may be.
    if let (Err(_), Some(kept)) = (&played, kept) {
        kept.keep_on_disk();
    }
    played
}

/// How `--rejoin` finds its host again: at its address (resolved at once,
/// so a typo fails before anything loads), or through its room.
enum Way {
    Direct(Box<Reached>),
    Room(RoomCode),
}

impl Way {
    /// The host in words, as the connecting screen names it.
    fn describe(&self) -> String {
        match self {
            Way::Direct(reached) => reached.label.clone(),
            Way::Room(code) => format!("room {code}"),
        }
    }

    /// The ticket this way back reads.
    fn key(&self) -> TicketKey {
        match self {
            Way::Direct(reached) => TicketKey::Address(reached.host),
            Way::Room(code) => TicketKey::Room(*code),
        }
    }
}

fn way_back(settings: &JoinSettings, common: &MatchSettings) -> Result<Way, AppError> {
    match (settings.address.as_deref(), settings.room) {
        (Some(address), _) => {
            let (host, transport) =
                connect_to_host(address, settings.connect_timeout_s, &common.link)?;
            let label = address.to_string();
            let reached = Reached {
                host,
                transport,
                label,
            };
            Ok(Way::Direct(Box::new(reached)))
        }
        (None, Some(code)) => Ok(Way::Room(code)),
        (None, None) => Err(AppError::BadArgument {
            message: "--rejoin comes back to the host's HOST:PORT or --room CODE".into(),
        }),
    }
}

/// What the session needs from `ticket`, if its match can be rejoined
/// after a restart: two players, rolling back (lockstep keeps no state).
fn usable(key: TicketKey, ticket: &Ticket) -> Result<RejoinTicket, AppError> {
    let settings = ticket.welcome.settings;
    let refusal = if settings.player_count != 2 {
        Some(format!(
            "the match {key} has {} players: a restarted player comes back to a two-player match only",
            settings.player_count
        ))
    } else if settings.is_lockstep() {
        Some(format!("the match {key} runs in lockstep, which keeps no state to resume from: it cannot be rejoined after a restart"))
    } else {
        None
    };
    if let Some(message) = refusal {
        return Err(AppError::BadArgument { message });
    }
    ticket.rejoin().map_err(|why| AppError::BadArgument {
        message: format!("the rejoin ticket cannot be used: {why}"),
    })
}

/// Finds the host of room `code` and a path to it, as a spectator does,
/// showing the search on `screen`; `None` when the player cancelled.
fn through_room(
    settings: &JoinSettings,
    common: &MatchSettings,
    code: RoomCode,
    game: &dyn Game,
    screen: &mut dyn ConnectingScreen,
    out: &mut dyn Write,
) -> Result<Option<Reached>, AppError> {
    let identity = identity_of(game, &common.game)?;
    let timeout = connect_timeout(settings.connect_timeout_s)?;
    let ours = (RoomRole::Spectator, identity);
    let search = find_host_thread(&settings.signal, code, ours, &common.link, timeout);
    let found = await_showing(search, timeout, screen, out)?;
    Ok(found.map(|found| Reached {
        host: found.address,
        transport: found.transport,
        label: found.label,
    }))
}

/// The ticket's match is played with the core and content loaded here.
fn check_same_game(
    ticket: &Ticket,
    game: &dyn Game,
    common: &MatchSettings,
) -> Result<(), AppError> {
    let welcome = &ticket.welcome;
    let content = content_hash(&common.game)?;
    if game.core_name() != welcome.core_name
        || game.core_version() != welcome.core_version
        || content != welcome.content_hash
    {
        return Err(AppError::BadArgument {
            message: format!(
                "the match at {} plays {} {} with content {:016x}; you loaded {} {} with content {content:016x}",
                ticket.host,
                welcome.core_name,
                welcome.core_version,
                welcome.content_hash,
                game.core_name(),
                game.core_version()
            ),
        });
    }
    Ok(())
}

/// The ticket of a joiner whose handshake with the host at `host` is done,
/// kept on disk while the match runs; none on the host, in lockstep (no
/// state to resume from), with more than two players (a restarted player
/// dials the host alone) or before the host answered.
pub(super) fn keep_joiners_ticket(
    netplay: &NetplaySession<SocketAddr>,
    key: TicketKey,
    host: SocketAddr,
    slot: u8,
    game: &crate::engine::GameArgs,
) -> Option<KeptTicket> {
    let welcome = netplay.host_handshake()?.clone();
    if welcome.settings.is_lockstep() || welcome.settings.player_count != 2 {
        return None;
    }
    let rejoin = netplay.rejoin_ticket()?;
    keep_ticket(
        key,
        &Ticket {
            host,
            slot,
            token: rejoin.token,
            secret: rejoin.secret,
            welcome,
            game: Some(TicketGame::of(game)),
        },
    )
}
