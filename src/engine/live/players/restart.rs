//! `join HOST:PORT --rejoin`: a joiner whose process was killed comes back
//! to its match with the ticket it kept (see `ticket`), from a new socket.
//! The host challenges it as any player heard from a new address; it
//! proves itself with the link's key, gets the state of the first frame
//! the host lacks its inputs for, and plays on from there. Its replay and
//! summary begin at that frame; the host's run on without a gap.
//!
//! `join --room CODE --rejoin` finds the host through its room, which the
//! host keeps open through the match, and dials the address of the host's
//! game socket its room hello gives, as a spectator does (no new ICE
//! exchange: the host's socket runs one ICE agent, its first player's).

use super::ticket::{keep_ticket, read_ticket, KeptTicket, Ticket, TicketKey};
use super::{
    adopt_host_frames, match_config, open_inputs, play, JoinSettings, MatchSettings, Seat, Table,
};
use crate::engine::live::connect::{
    adopt_host_options, connect_timeout, connect_to_host, content_hash, host_option_overrides,
};
use crate::engine::live::front_end::LiveOutputs;
use crate::engine::live::options::LiveOptions;
use crate::engine::live::rooms::{find_host, identity_of, RoomRole};
use crate::engine::live::session_loop::LiveMatch;
use crate::engine::live::wire::LiveTransport;
use crate::engine::sinks::recorder::match_recorder;
use crate::engine::{open_game, AppError, Game};
use crate::net::link::LinkTransport;
use crate::netplay::NetplaySession;
use crate::protocol::PlayerSlots;
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
    let (key, direct) = match (settings.address.as_deref(), settings.room) {
        (Some(address), _) => {
            let (host, transport) =
                connect_to_host(address, settings.connect_timeout_s, &common.link)?;
            let label = address.to_string();
            (
                TicketKey::Address(host),
                Some(Reached {
                    host,
                    transport,
                    label,
                }),
            )
        }
        (None, Some(code)) => (TicketKey::Room(code), None),
        (None, None) => {
            return Err(AppError::BadArgument {
                message: "--rejoin comes back to the host's HOST:PORT or --room CODE".into(),
            })
        }
    };
    let ticket = read_ticket(key)?;
    let rejoin = ticket.rejoin().map_err(|why| AppError::BadArgument {
        message: format!("the rejoin ticket cannot be used: {why}"),
    })?;
    let welcome = &ticket.welcome;
    if welcome.settings.is_lockstep() {
        return Err(AppError::BadArgument {
            message: format!("the match {key} runs in lockstep, which keeps no state to resume from: it cannot be rejoined after a restart"),
        });
    }
    let game = open_game(&common.game)?;
    check_same_game(&ticket, game.as_ref(), common)?;
    let Reached {
        host,
        transport,
        label,
    } = match (direct, key) {
        (Some(reached), _) => reached,
        (None, TicketKey::Room(code)) => {
            let identity = identity_of(game.as_ref(), &common.game)?;
            let timeout = connect_timeout(settings.connect_timeout_s)?;
            let found = find_host(
                &settings.signal,
                code,
                (RoomRole::Spectator, identity),
                &common.link,
                timeout,
            )?;
            Reached {
                host: found.address,
                transport: found.transport,
                label: found.label,
            }
        }
        (None, TicketKey::Address(_)) => unreachable!("a direct address is reached first"),
    };
    let host_options = host_option_overrides(&welcome.core_options);
    let mut game_args = common.game.clone();
    game_args.options = host_options.clone();
    let game = adopt_host_options(game, &common.game, host_options)?;
    let agreed = adopt_host_frames(common, Some(welcome.match_frames));
    let mut config = match_config(&agreed, game.as_ref(), ticket.slot, welcome.settings)?
        .dial(host, PlayerSlots::single(0));
    rejoin.apply(&mut config);
    let inputs = open_inputs(&agreed)?;
    writeln!(
        out,
        "rejoining the match {key} ({host}) as P{} with {}",
        ticket.slot + 1,
        game.title()
    )?;
    let players = welcome.settings.player_count;
    let recorder = match_recorder(
        &outputs.sinks.record,
        game.as_ref(),
        &game_args,
        players,
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
    };
    let _kept = keep_ticket(key, &ticket);
    let table = Table {
        game,
        netplay,
        transport: LiveTransport::new(transport),
        started,
        recorder,
    };
    play(seat, &agreed, outputs, table, inputs, options, out)
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
/// state to resume from) or before the host answered.
pub(super) fn keep_joiners_ticket(
    netplay: &NetplaySession<SocketAddr>,
    key: TicketKey,
    host: SocketAddr,
    slot: u8,
) -> Option<KeptTicket> {
    let welcome = netplay.host_handshake()?.clone();
    if welcome.settings.is_lockstep() {
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
        },
    )
}
