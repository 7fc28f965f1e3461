//! Peers that pose as players or hosts in a real, unmodified
//! `matchbox_server` room on loopback and then never finish: each costs
//! its own meeting, never the real players' match. Verdicts never depend
//! on timing (a real joiner with the default 10 s to find its host must
//! play); the times printed are the figures of docs/measurements.md.

use crate::rooms::{
    assert_played_in_sync, duel, next_signal, rogue_player, room_of, start, TIMEOUT,
};
use netcade::live::rooms::{Hello, RoomRole};
use netcade::net::ice::{IceConfig, IceRole};
use netcade::net::link::{connect_ice, LinkArgs, LinkTransport};
use netcade::net::room::{RoomClient, SignalServer};
use std::time::Instant;
use support::servers::{room_code, signaling_server};

/// A peer that answers the host's greeting with a player's hello of its
/// game, finds the path to the host with ICE like a player, and then
/// never says a netcade word over it; returned with the link it holds.
fn player_that_stalls_the_handshake(signal: &str, code: &str) -> (RoomClient, LinkTransport) {
    let server: SignalServer = signal.parse().unwrap();
    let mut rogue = RoomClient::enter(&server, &room_of(code), None, TIMEOUT).unwrap();
    let (host, greeting) = next_signal(&mut rogue);
    let mut hello = Hello::decode(&greeting).unwrap();
    hello.role = RoomRole::Player;
    rogue.send(&host, &hello.encode()).unwrap();
    let link = LinkArgs::default()
        .open("127.0.0.1:0".parse().unwrap())
        .unwrap();
    let mut channel = rogue.channel_to(host);
    let (link, _) = connect_ice(
        link,
        &mut channel,
        IceConfig::default(),
        IceRole::Controlled,
    )
    .expect("the rogue finds its path to the host");
    (rogue, link)
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn four_fake_players_that_never_answer_ice_do_not_keep_a_room_host_from_its_real_joiner() {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    let game = duel("dojo");
    let mut host = start(&["host", "--port", "0", "--room"], &game, &signal, 1);
    let code = room_code(&mut host);
    let _rogues: Vec<RoomClient> = (0..4).map(|_| rogue_player(&signal, &code, None)).collect();
    let began = Instant::now();
    // The default --connect-timeout-s: 10 s to find the host.
    let mut join = start(&["join", "--room", &code], &game, &signal, 2);
    join.wait_for_stdout("the match began", TIMEOUT);
    eprintln!(
        "the real joiner's match began {:.2} s after it started, beside 4 fake players",
        began.elapsed().as_secs_f64()
    );
    let (host, join) = (host.finish(TIMEOUT), join.finish(TIMEOUT));
    assert_played_in_sync(&host, &join);
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn a_fake_player_that_finds_the_path_but_never_shakes_hands_costs_the_host_its_meeting_only() {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    let game = duel("dojo");
    let mut host = start(&["host", "--port", "0", "--room"], &game, &signal, 1);
    let code = room_code(&mut host);
    let (_rogue, _its_link) = player_that_stalls_the_handshake(&signal, &code);
    let join = start(&["join", "--room", &code], &game, &signal, 2);
    let (host, join) = (host.finish(TIMEOUT), join.finish(TIMEOUT));
    assert_played_in_sync(&host, &join);
}
