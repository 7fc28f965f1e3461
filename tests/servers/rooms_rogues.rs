//! Peers that pose as players or hosts in a real, unmodified
//! `matchbox_server` room on loopback and then never finish: each costs
//! its own meeting, never the real players' match. Verdicts never depend
//! on timing (a real joiner with the default 10 s to find its host must
//! play); the times printed are the figures of docs/measurements.md.

use crate::rooms::{
    assert_played_in_sync, duel, host_a_room, next_signal, rogue_player, room_of, start, TIMEOUT,
};
use netcade::live::rooms::{Hello, RoomRole};
use netcade::net::ice::{IceConfig, IceRole};
use netcade::net::link::{connect_ice, LinkArgs, LinkTransport};
use netcade::net::room::{RoomClient, SignalServer};
use netcade::net::Transport;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::cli::room_code;
use support::servers::signaling_server;

/// A path ICE found, kept answering ICE's checks (as netcade's socket
/// does through a match) while every netcade datagram over it goes
/// unanswered, until dropped.
struct SilentPath {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl SilentPath {
    fn keep(mut link: LinkTransport) -> SilentPath {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut ignored = Vec::new();
            while !stopped.load(Ordering::Relaxed) {
                while link.receive(&mut ignored).is_some() {}
                link.wait(Duration::from_millis(5));
            }
        });
        SilentPath {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for SilentPath {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A peer that answers the host's greeting with a player's hello of its
/// game, finds the path to the host with ICE like a player, and then
/// never says a netcade word over it.
fn player_that_stalls_the_handshake(signal: &str, code: &str) -> (RoomClient, SilentPath) {
    let server: SignalServer = signal.parse().unwrap();
    let mut rogue = RoomClient::enter(&server, &room_of(code), None, TIMEOUT).unwrap();
    let (host, greeting) = next_signal(&mut rogue);
    let mut hello = Hello::decode(&greeting).unwrap();
    hello.role = RoomRole::Player;
    rogue.send(&host, &hello.encode()).unwrap();
    // Bound as a player's game socket is: ICE pairs its address.
    let link = LinkArgs::default()
        .open("0.0.0.0:0".parse().unwrap())
        .unwrap();
    let mut channel = rogue.channel_to(host);
    let (link, _) = connect_ice(
        link,
        &mut channel,
        IceConfig::default(),
        IceRole::Controlled,
    )
    .expect("the rogue finds its path to the host");
    (rogue, SilentPath::keep(link))
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
    let (host, code) = host_a_room(&game, &signal);
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
    let (host, code) = host_a_room(&game, &signal);
    let (_rogue, _its_link) = player_that_stalls_the_handshake(&signal, &code);
    let join = start(&["join", "--room", &code], &game, &signal, 2);
    let (host, join) = (host.finish(TIMEOUT), join.finish(TIMEOUT));
    assert_played_in_sync(&host, &join);
}

/// A peer in room `code` that learns the host's hello from its greeting,
/// with the host paused (`STOP`) until the next peer arrives, answers that
/// newcomer first with the host's hello (as `dial` changes it): it wins
/// the race. Returns the rogue and the newcomer it fooled; the host goes
/// on (`CONT`) once `then` ran.
fn host_impostor(
    signal: &str,
    code: &str,
    host: &mut support::cli::Background,
    newcomer: impl FnOnce() -> support::cli::Background,
    dial: impl FnOnce(&mut Hello),
    then: impl FnOnce(&mut RoomClient, netcade::net::room::PeerId),
) -> (RoomClient, support::cli::Background) {
    let server: SignalServer = signal.parse().unwrap();
    let mut rogue = RoomClient::enter(&server, &room_of(code), None, TIMEOUT).unwrap();
    let (_, greeting) = next_signal(&mut rogue);
    let mut posing = Hello::decode(&greeting).unwrap();
    assert_eq!(posing.role, RoomRole::Host);
    dial(&mut posing);
    host.signal("STOP");
    let fooled = newcomer();
    let victim = loop {
        match rogue.wait(TIMEOUT).unwrap() {
            Some(netcade::net::room::RoomEvent::Arrived(peer)) => break peer,
            Some(_) => {}
            None => panic!("the newcomer never entered the room"),
        }
    };
    rogue.send(&victim, &posing.encode()).unwrap();
    then(&mut rogue, victim);
    host.signal("CONT");
    (rogue, fooled)
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn a_fake_host_that_finds_the_path_but_never_shakes_hands_costs_the_joiner_one_try() {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    let game = duel("dojo");
    let (mut host, code) = host_a_room(&game, &signal);
    let began = Instant::now();
    let mut its_link = None;
    let (_rogue, join) = host_impostor(
        &signal,
        &code,
        &mut host,
        || start(&["join", "--room", &code], &game, &signal, 2),
        |_| {},
        |rogue, joiner| {
            // The joiner's ICE messages come; the rogue answers them as a
            // host would, and then says nothing over the path.
            let link = LinkArgs::default()
                .open("0.0.0.0:0".parse().unwrap())
                .unwrap();
            let mut channel = rogue.channel_to(joiner);
            let config = IceConfig::default();
            let (link, _) = connect_ice(link, &mut channel, config, IceRole::Controlling)
                .expect("the rogue finds its path to the joiner");
            its_link = Some(SilentPath::keep(link));
        },
    );
    let join = join.finish(TIMEOUT);
    eprintln!(
        "the joiner fooled by a silent host played after {:.2} s",
        began.elapsed().as_secs_f64()
    );
    let host = host.finish(TIMEOUT);
    assert_played_in_sync(&host, &join);
    assert!(
        support::cli::stderr(&join)
            .contains("warning: a host of the room never answered the handshake; trying the next"),
        "{join:?}"
    );
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn a_fake_host_that_never_answers_a_spectators_ice_costs_it_one_try() {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    let game = duel("dojo");
    // Long enough a match for the spectator's detour.
    let frames = "1500";
    let host_args = ["host", "--port", "0", "--room"];
    let mut host = crate::rooms::start_for(frames, &host_args, &game, &signal, 1);
    let code = room_code(&mut host);
    let join = crate::rooms::start_for(frames, &["join", "--room", &code], &game, &signal, 2);
    host.wait_for_stdout("the match began", TIMEOUT);
    let began = Instant::now();
    let (_rogue, spectator) = host_impostor(
        &signal,
        &code,
        &mut host,
        || start(&["spectate", "--room", &code], &game, &signal, 0),
        // It greets the spectator as the host, and never answers its ICE.
        |_| {},
        |_, _| {},
    );
    let spectator = spectator.finish(TIMEOUT);
    eprintln!(
        "the spectator fooled by a host that never answers its ICE watched after {:.2} s",
        began.elapsed().as_secs_f64()
    );
    assert!(spectator.status.success(), "{spectator:?}");
    assert_eq!(support::cli::last_json(&spectator)["end"], "finished");
    assert!(
        support::cli::stderr(&spectator)
            .contains("warning: a host of the room found no path (no route to the opponent"),
        "{spectator:?}"
    );
    for player in [host.finish(TIMEOUT), join.finish(TIMEOUT)] {
        assert!(player.status.success(), "{player:?}");
    }
}
