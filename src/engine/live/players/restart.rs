//! `join HOST:PORT --rejoin`: a joiner whose process was killed comes back
//! to its match with the ticket it kept (see `ticket`), from a new socket.
//! The host challenges it as any player heard from a new address; it
//! proves itself with the link's key, gets the state of the first frame
//! the host lacks its inputs for, and plays on from there. Its replay and
//! summary begin at that frame; the host's run on without a gap.

use super::ticket::{keep_ticket, read_ticket, KeptTicket, Ticket};
use super::{
    adopt_host_frames, match_config, open_inputs, play, JoinSettings, MatchSettings, Seat, Table,
};
use crate::engine::live::connect::{
    adopt_host_options, connect_to_host, content_hash, host_option_overrides,
};
use crate::engine::live::front_end::LiveOutputs;
use crate::engine::live::options::LiveOptions;
use crate::engine::live::session_loop::LiveMatch;
use crate::engine::live::wire::LiveTransport;
use crate::engine::sinks::recorder::match_recorder;
use crate::engine::{open_game, AppError, Game};
use crate::netplay::NetplaySession;
use crate::protocol::PlayerSlots;
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Comes back to the match hosted at `settings.address`; `common` is the
/// match's settings with the game's saves in this run's folder.
pub(super) fn rejoin_match(
    settings: &JoinSettings,
    common: &MatchSettings,
    outputs: &LiveOutputs<'_>,
    options: &LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    let Some(address) = settings.address.as_deref() else {
        return Err(AppError::BadArgument {
            message: "--rejoin comes back to the host's HOST:PORT".into(),
        });
    };
    let (host, transport) = connect_to_host(address, settings.connect_timeout_s, &common.link)?;
    let ticket = read_ticket(host)?;
    let rejoin = ticket.rejoin().map_err(|why| AppError::BadArgument {
        message: format!("the rejoin ticket cannot be used: {why}"),
    })?;
    let welcome = &ticket.welcome;
    if welcome.settings.is_lockstep() {
        return Err(AppError::BadArgument {
            message: "the match at {address} runs in lockstep, which keeps no state to resume from: it cannot be rejoined after a restart".replace("{address}", address),
        });
    }
    let game = open_game(&common.game)?;
    check_same_game(&ticket, game.as_ref(), common)?;
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
        "rejoining the match at {address} ({host}) as P{} with {}",
        ticket.slot + 1,
        game.title()
    )?;
    let players = welcome.settings.player_count;
    let recorder = match_recorder(
        &outputs.sinks.record,
        game.as_ref(),
        &game_args,
        players,
        vec![address.to_string()],
    )?;
    options.take_ctrl_c();
    let started = Instant::now();
    let netplay = NetplaySession::new(config, 0)?;
    let seat = Seat {
        command: "join",
        me: ticket.slot,
        peer: 0,
        connect_timeout: Some((
            address.to_string(),
            Duration::from_secs_f64(settings.connect_timeout_s),
        )),
    };
    let _kept = keep_ticket(&ticket);
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
    host: SocketAddr,
    slot: u8,
) -> Option<KeptTicket> {
    let welcome = netplay.host_handshake()?.clone();
    if welcome.settings.is_lockstep() {
        return None;
    }
    let rejoin = netplay.rejoin_ticket()?;
    keep_ticket(&Ticket {
        host,
        slot,
        token: rejoin.token,
        secret: rejoin.secret,
        welcome,
    })
}
