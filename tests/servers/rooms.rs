//! Meeting through rooms as users do: netcade processes of the built binary
//! and a real, unmodified `matchbox_server` on loopback (bound to port 0;
//! the port is read from /proc). Verdicts never depend on timing: timeouts
//! only guard against a hang.

use netcade::live::rooms::{Hello, RoomRole};
use netcade::net::room::{RoomClient, RoomEvent, SignalServer};
use netcode::protocol::PROTOCOL_VERSION;
use std::process::Output;
use std::time::Duration;
use support::cli::room_code;
use support::cli::{last_json, spawn_netcade, stderr, stdout, Background};
use support::servers::signaling_server;

/// Long enough for a short match on a busy machine.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(120);

/// Frames of each match: two seconds of Duel.
const FRAMES: &str = "120";

pub(crate) fn duel(arena: &str) -> Vec<String> {
    let rom = match arena {
        "dojo" => support::dojo_arena(),
        other => support::duel_arena(other).display().to_string(),
    };
    ["--core", "duel", "--rom", &rom, "--headless", "--no-record"]
        .map(String::from)
        .to_vec()
}

/// `netcade ARGS` with the game and the signaling server, in the
/// background; a player presses `random:SEED`'s buttons (seed 0: a
/// spectator, who presses none).
pub(crate) fn start(args: &[&str], game: &[String], signal: &str, seed: u32) -> Background {
    start_for(FRAMES, args, game, signal, seed)
}

/// [`start`], for `frames` frames.
pub(crate) fn start_for(
    frames: &str,
    args: &[&str],
    game: &[String],
    signal: &str,
    seed: u32,
) -> Background {
    let inputs = format!("random:{seed}");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(game.iter().map(String::as_str));
    all.extend(["--signal", signal, "--frames", frames, "--json"]);
    if seed > 0 {
        all.extend(["--inputs", &inputs]);
    }
    spawn_netcade(&all)
}

/// `host --room` of `game` pressing `random:1`'s buttons, and its code.
pub(crate) fn host_a_room(game: &[String], signal: &str) -> (Background, String) {
    let mut host = start(&["host", "--port", "0", "--room"], game, signal, 1);
    let code = room_code(&mut host);
    (host, code)
}

/// Both finished every frame on the same checksums.
pub(crate) fn assert_played_in_sync(a: &Output, b: &Output) {
    for output in [a, b] {
        assert!(output.status.success(), "{output:?}");
    }
    let (a, b) = (last_json(a), last_json(b));
    for json in [&a, &b] {
        assert_eq!(json["end"], "finished", "{json}");
        assert_eq!(json["frames"], 120, "{json}");
        assert_eq!(json["netplay"]["desyncs"], 0, "{json}");
    }
    for kind in ["memory", "video"] {
        assert!(a["checksums"][kind].is_string(), "{a}");
        assert_eq!(a["checksums"][kind], b["checksums"][kind], "{kind}");
    }
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn a_room_code_pairs_two_processes_that_play_duel_to_equal_checksums_with_a_spectator() {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    let game = duel("dojo");
    let (mut host, code) = host_a_room(&game, &signal);
    let join = start(&["join", "--room", &code.to_lowercase()], &game, &signal, 2);
    host.wait_for_stdout("the match began", TIMEOUT);
    let spectator = start(&["spectate", "--room", &code], &game, &signal, 0);
    let (host, join) = (host.finish(TIMEOUT), join.finish(TIMEOUT));
    assert_played_in_sync(&host, &join);
    assert!(
        stdout(&join).contains(&format!("joining room {code}")),
        "{join:?}"
    );
    // ICE found the path through the room: on one machine, a direct one.
    for player in [&host, &join] {
        let path = &last_json(player)["netplay"]["path"];
        assert_eq!(path["kind"], "direct", "{path}");
        assert!(stdout(player).contains("path: direct, connected in"));
    }
    let spectator = spectator.finish(TIMEOUT);
    assert!(spectator.status.success(), "{spectator:?}");
    assert!(stdout(&spectator).contains(&format!("spectating room {code}")));
    let watched = last_json(&spectator);
    assert_eq!(watched["end"], "finished", "{watched}");
    assert_eq!(
        watched["checksums"]["memory"],
        last_json(&host)["checksums"]["memory"]
    );
    // The spectator too found its path with ICE, on the host's one socket.
    assert_eq!(watched["netplay"]["path"]["kind"], "direct", "{watched}");
}

/// The host of a room for `players` and its joiners, each by the code,
/// play Duel to the same checksums: the joiners found one another with ICE
/// through the room, each on its one game socket.
fn players_meet_by_room_code_and_play_in_sync(players: u8) {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    let game = duel("dojo");
    let count = players.to_string();
    let mut host = start(
        &["host", "--port", "0", "--room", "--players", &count],
        &game,
        &signal,
        1,
    );
    let code = room_code(&mut host);
    let joiners: Vec<Background> = (2..=u32::from(players))
        .map(|seed| start(&["join", "--room", &code], &game, &signal, seed))
        .collect();
    let host = host.finish(TIMEOUT);
    let joiners: Vec<Output> = joiners.into_iter().map(|j| j.finish(TIMEOUT)).collect();
    for joiner in &joiners {
        assert_played_in_sync(&host, joiner);
        assert_eq!(last_json(joiner)["netplay"]["path"]["kind"], "direct");
    }
    assert!(
        stdout(&host).contains(&format!(
            "the other players run `netcade join --room {code}`"
        )),
        "{host:?}"
    );
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn three_players_meet_by_room_code_and_play_duel_to_equal_checksums() {
    players_meet_by_room_code_and_play_in_sync(3);
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn four_players_meet_by_room_code_and_play_duel_to_equal_checksums() {
    players_meet_by_room_code_and_play_in_sync(4);
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn a_spectator_who_comes_before_the_player_is_met_once_the_match_runs_and_watches_it() {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    let game = duel("dojo");
    // Long enough a match for the spectator to find its path.
    let frames = "600";
    let mut host = start_for(
        frames,
        &["host", "--port", "0", "--room"],
        &game,
        &signal,
        1,
    );
    let code = room_code(&mut host);
    let spectator = start_for(frames, &["spectate", "--room", &code], &game, &signal, 0);
    let join = start_for(frames, &["join", "--room", &code], &game, &signal, 2);
    let (host, join) = (host.finish(TIMEOUT), join.finish(TIMEOUT));
    let host_json = last_json(&host);
    assert_eq!(host_json["end"], "finished", "{host:?}");
    assert_eq!(host_json["checksums"], last_json(&join)["checksums"]);
    let spectator = spectator.finish(TIMEOUT);
    assert!(spectator.status.success(), "{spectator:?}");
    let watched = last_json(&spectator);
    assert_eq!(watched["end"], "finished", "{watched}");
    assert_eq!(watched["checksums"], host_json["checksums"]);
    assert_eq!(watched["netplay"]["path"]["kind"], "direct", "{watched}");
    assert!(stdout(&spectator).contains("path: direct"), "{spectator:?}");
}

#[test]
#[cfg_attr(
    not(all(netcade_server_matchbox_server, netcade_server_turnserver)),
    ignore = "needs matchbox_server and turnserver on PATH"
)]
fn a_relay_only_host_plays_a_room_match_in_sync_through_a_coturn_relay() {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    let Some(coturn) = support::coturn::start_coturn() else {
        return;
    };
    let turn = format!(
        "turn:{}:{}@{}",
        coturn.username, coturn.password, coturn.address
    );
    let game = duel("dojo");
    let relayed = ["--turn", &turn, "--relay-only"];
    let host_args = [&["host", "--port", "0", "--room"][..], &relayed].concat();
    let mut host = start(&host_args, &game, &signal, 1);
    let code = room_code(&mut host);
    let join_args = ["join", "--room", &code, "--turn", &turn];
    let join = start(&join_args, &game, &signal, 2);
    let (host, join) = (host.finish(TIMEOUT), join.finish(TIMEOUT));
    assert_played_in_sync(&host, &join);
    for player in [&host, &join] {
        let path = &last_json(player)["netplay"]["path"];
        assert_eq!(path["kind"], "relay", "{path}");
    }
    let host_path = &last_json(&host)["netplay"]["path"];
    assert_eq!(
        host_path["relay"],
        coturn.address.ip().to_string(),
        "{host_path}"
    );
    // The wire figures count what the socket sent: each side's datagrams
    // leave through its own relayed candidate and carry a bound channel's
    // 4-byte ChannelData header (the first few, before the binding's
    // answer, a Send indication).
    for player in [&host, &join] {
        let wire = &last_json(player)["netplay"]["wire"];
        let framing = wire["relay_framing_bytes_per_datagram"]
            .as_f64()
            .expect("the wire's relay framing");
        assert!((4.0..=4.5).contains(&framing), "{wire}");
        let summary = format!("(relay framing {framing:.1} B a datagram included)");
        assert!(stdout(player).contains(&summary), "{}", stdout(player));
    }
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn a_player_who_finds_no_path_says_so_in_one_line_and_the_host_waits_for_the_next() {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    // A relay-only host whose relay is not there has nothing to offer.
    let nowhere = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let dead_relay = format!("turn:u:p@{}", nowhere.local_addr().unwrap());
    drop(nowhere);
    let game = duel("dojo");
    let host_args = [
        "host",
        "--port",
        "0",
        "--room",
        "--relay-only",
        "--turn",
        &dead_relay,
    ];
    let mut host = start(&host_args, &game, &signal, 1);
    let code = room_code(&mut host);
    let join = start(&["join", "--room", &code], &game, &signal, 2).finish(TIMEOUT);
    assert_eq!(join.status.code(), Some(3), "{join:?}");
    let errors = stderr(&join);
    assert!(
        errors.starts_with("error: no route to the opponent: direct and relayed paths failed")
            && errors.contains("check that UDP is allowed"),
        "{errors}"
    );
    assert_eq!(errors.lines().count(), 1, "{errors}");
    // The host loses that player only: it says so and waits for the next.
    host.wait_for_stderr("a player of the room found no path", TIMEOUT);
    host.interrupt();
    let host = host.finish(TIMEOUT);
    let warnings = stderr(&host);
    assert!(
        warnings.contains("; waiting for the next") && !warnings.contains("error: no route"),
        "{warnings}"
    );
}

/// A misbehaving peer in room `code`: greeted by the host as a player is,
/// it answers with a player's hello of the host's game, then sends `then`
/// in place of ICE's messages (or nothing at all), and stays.
pub(crate) fn rogue_player(signal: &str, code: &str, then: Option<&str>) -> RoomClient {
    let server: SignalServer = signal.parse().unwrap();
    let mut rogue = RoomClient::enter(&server, &room_of(code), None, TIMEOUT).unwrap();
    let (host, greeting) = next_signal(&mut rogue);
    let mut hello = Hello::decode(&greeting).unwrap();
    hello.role = RoomRole::Player;
    rogue.send(&host, &hello.encode()).unwrap();
    if let Some(garbage) = then {
        rogue.send(&host, garbage).unwrap();
    }
    rogue
}

/// The name of room `code` on the signaling server: its first half.
pub(crate) fn room_of(code: &str) -> String {
    format!(
        "netcade{PROTOCOL_VERSION}-room-{}",
        &code.replace('-', "")[..3]
    )
}

/// A peer in room `code` that sends every peer it hears of (the host that
/// greets it, each later arrival) one signal over 64 KiB, until `stop`.
fn oversized_sender(
    signal: &str,
    code: &str,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    let server: SignalServer = signal.parse().unwrap();
    let mut rogue = RoomClient::enter(&server, &room_of(code), None, TIMEOUT).unwrap();
    std::thread::spawn(move || {
        let huge = "x".repeat(100 << 10);
        let mut victims = std::collections::BTreeSet::new();
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            let peer = match rogue.wait(Duration::from_millis(50)).unwrap() {
                Some(RoomEvent::Signal { from, .. }) | Some(RoomEvent::Arrived(from)) => from,
                _ => continue,
            };
            if victims.insert(peer.clone()) {
                rogue.send(&peer, &huge).unwrap();
            }
        }
        victims.len()
    })
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn an_oversized_signal_in_the_room_ends_neither_the_hosts_room_nor_a_spectators_search() {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    let game = duel("dojo");
    let (mut host, code) = host_a_room(&game, &signal);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let rogue = oversized_sender(&signal, &code, stop.clone());
    let join = start(&["join", "--room", &code], &game, &signal, 2);
    host.wait_for_stdout("the match began", TIMEOUT);
    let spectator = start(&["spectate", "--room", &code], &game, &signal, 0);
    let (host, join) = (host.finish(TIMEOUT), join.finish(TIMEOUT));
    let spectator = spectator.finish(TIMEOUT);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let victims = rogue.join().unwrap();
    assert!(
        victims >= 3,
        "the host, the joiner and the spectator: {victims}"
    );
    assert_played_in_sync(&host, &join);
    assert!(
        !stderr(&host).contains("cannot find this match"),
        "{host:?}"
    );
    assert!(spectator.status.success(), "{spectator:?}");
    assert_eq!(last_json(&spectator)["end"], "finished");
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn a_room_host_forgets_players_whose_path_fails_and_plays_the_next_one() {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    let game = duel("dojo");
    let (mut host, code) = host_a_room(&game, &signal);
    let _garbage = rogue_player(&signal, &code, Some("ice-credentials ??? !!!"));
    host.wait_for_stderr("netcade cannot read", TIMEOUT);
    // One that never answers costs the host its 15 s of trying.
    let _silent = rogue_player(&signal, &code, None);
    host.wait_for_stderr("no route to the opponent", TIMEOUT);
    let join_args = ["join", "--room", &code, "--connect-timeout-s", "60"];
    let join = start(&join_args, &game, &signal, 2);
    let (host, join) = (host.finish(TIMEOUT), join.finish(TIMEOUT));
    assert_played_in_sync(&host, &join);
    let warnings = stderr(&host);
    let forgotten = warnings
        .matches("a player of the room found no path")
        .count();
    assert_eq!(forgotten, 2, "{warnings}");
}

/// Waits for the next signal in `room`, from anyone.
pub(crate) fn next_signal(room: &mut RoomClient) -> (netcade::net::room::PeerId, String) {
    loop {
        match room.wait(TIMEOUT).unwrap() {
            Some(RoomEvent::Signal { from, text }) => return (from, text),
            Some(_) => {}
            None => panic!("nobody signalled"),
        }
    }
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn a_peer_posing_as_the_host_costs_the_joiner_one_failed_path_and_it_plays_the_real_host() {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    let game = duel("dojo");
    let (mut host, code) = host_a_room(&game, &signal);
    // The rogue learns the host's hello from its greeting, and answers the
    // joiner with it while the real host is paused: it wins the race.
    let server: SignalServer = signal.parse().unwrap();
    let mut rogue = RoomClient::enter(&server, &room_of(&code), None, TIMEOUT).unwrap();
    let (_, posing) = next_signal(&mut rogue);
    assert_eq!(Hello::decode(&posing).unwrap().role, RoomRole::Host);
    host.signal("STOP");
    let join = start(&["join", "--room", &code], &game, &signal, 2);
    let joiner = loop {
        match rogue.wait(TIMEOUT).unwrap() {
            Some(RoomEvent::Arrived(joiner)) => break joiner,
            Some(_) => {}
            None => panic!("the joiner never entered the room"),
        }
    };
    rogue.send(&joiner, &posing).unwrap();
    // The joiner chose the rogue: its ICE messages come, and go unanswered.
    while !next_signal(&mut rogue).1.starts_with("ice-") {}
    host.signal("CONT");
    let join = join.finish(TIMEOUT);
    assert!(join.status.success(), "{join:?}");
    assert!(
        stderr(&join).contains("warning: a host of the room found no path"),
        "{join:?}"
    );
    let host = host.finish(TIMEOUT);
    assert_played_in_sync(&host, &join);
    drop(rogue);
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn a_quick_match_partner_that_never_speaks_costs_a_turn_in_the_queue_not_the_match() {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    let game = duel("dojo");
    let identity = netcode::protocol::Identity {
        protocol_version: PROTOCOL_VERSION,
        core_name: "Duel".into(),
        core_version: "0.1.0".into(),
        content_hash: netcade::engine::sinks::recorder::content_checksum(Some(
            std::path::Path::new(&game[3]),
        ))
        .unwrap()
        .0,
    };
    // First in the queue, so the next player is grouped with it; it never
    // says a word.
    let server: SignalServer = signal.parse().unwrap();
    let queue = netcade::live::rooms::quick_room(&identity);
    let mut rogue = RoomClient::enter(&server, &queue, Some(2), TIMEOUT).unwrap();
    let mut first = start(&["join", "--quick"], &game, &signal, 1);
    first.wait_for_stdout("in the quick match", TIMEOUT);
    let grouped = rogue.wait(TIMEOUT).unwrap();
    assert!(
        matches!(grouped, Some(RoomEvent::Arrived(_))),
        "the first player was grouped with the rogue: {grouped:?}"
    );
    let second = start(&["join", "--quick"], &game, &signal, 2);
    let (first, second) = (first.finish(TIMEOUT), second.finish(TIMEOUT));
    assert_played_in_sync(&first, &second);
    drop(rogue);
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn a_joiner_of_other_content_is_refused_in_the_room_before_any_datagram() {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    let mut host = start(
        &["host", "--port", "0", "--room"],
        &duel("dojo"),
        &signal,
        1,
    );
    let code = room_code(&mut host);
    let wrong = start(&["join", "--room", &code], &duel("moon"), &signal, 2).finish(TIMEOUT);
    assert_eq!(wrong.status.code(), Some(2), "{wrong:?}");
    let errors = stderr(&wrong);
    assert!(
        errors.starts_with("error: this match is for Duel 0.1.0 with content"),
        "the handshake's message, the host's values first: {errors}"
    );
    assert_eq!(errors.lines().count(), 1, "{errors}");
    // The right player still gets the match; the host never saw the wrong one.
    let join = start(&["join", "--room", &code], &duel("dojo"), &signal, 2).finish(TIMEOUT);
    let host = host.finish(TIMEOUT);
    assert_played_in_sync(&host, &join);
    assert!(!stderr(&host).contains("refused"), "{host:?}");
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn quick_match_pairs_exactly_two_players_while_a_third_waits() {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    let game = duel("dojo");
    let mut players: Vec<Background> = (1..=3)
        .map(|seed| start(&["join", "--quick"], &game, &signal, seed))
        .collect();
    for player in &mut players {
        player.wait_for_stdout("in the quick match", TIMEOUT);
    }
    // Two of the three began a match; wait for both to finish.
    let mut finished = Vec::new();
    let mut waiting = Vec::new();
    for player in players {
        match player.finish_within(Duration::from_secs(30)) {
            Ok(output) => finished.push(output),
            Err(printed) => waiting.push(printed),
        }
    }
    assert_eq!(finished.len(), 2, "waiting: {waiting:?}");
    assert_played_in_sync(&finished[0], &finished[1]);
    let hosts = finished
        .iter()
        .filter(|output| stdout(output).contains("hosting Duel"))
        .count();
    assert_eq!(hosts, 1, "one of the pair hosts: {finished:?}");
    assert_eq!(waiting.len(), 1);
    assert!(!waiting[0].contains("the match began"), "{}", waiting[0]);
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn quick_match_never_pairs_players_of_different_roms() {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    let mut first = start(&["join", "--quick"], &duel("dojo"), &signal, 1);
    first.wait_for_stdout("in the quick match", TIMEOUT);
    let mut other_rom = start(&["join", "--quick"], &duel("moon"), &signal, 2);
    other_rom.wait_for_stdout("in the quick match", TIMEOUT);
    // Queued after the moon player: pairs with the dojo player anyway.
    let same_rom = start(&["join", "--quick"], &duel("dojo"), &signal, 3);
    let (first, same_rom) = (first.finish(TIMEOUT), same_rom.finish(TIMEOUT));
    assert_played_in_sync(&first, &same_rom);
    let printed = other_rom.stdout_so_far();
    assert!(!printed.contains("the match began"), "{printed}");
    other_rom.kill();
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn the_signaling_server_going_away_before_pairing_is_one_clear_error() {
    let Some((mut server, signal)) = signaling_server() else {
        return;
    };
    let mut waiting = start(&["join", "--quick"], &duel("dojo"), &signal, 1);
    waiting.wait_for_stdout("in the quick match", TIMEOUT);
    let mut host = start(
        &["host", "--port", "0", "--room"],
        &duel("dojo"),
        &signal,
        2,
    );
    room_code(&mut host);
    let _ = server.child.kill();
    let _ = server.child.wait();
    let left = waiting.finish(TIMEOUT);
    assert_eq!(left.status.code(), Some(3), "{left:?}");
    let errors = stderr(&left);
    assert_eq!(errors.lines().count(), 1, "{errors}");
    assert!(
        errors.starts_with("error: the signaling server failed")
            && errors.contains("while waiting for another player; nobody was paired"),
        "{errors}"
    );

    // A host keeps its UDP port open for joiners who know it, and says
    // once that its room is gone.
    host.wait_for_stderr(
        "new players cannot find this match through its room",
        TIMEOUT,
    );
    host.interrupt();
    let host = host.finish(TIMEOUT);
    let warnings = stderr(&host);
    assert_eq!(warnings.matches("its room").count(), 1, "{warnings}");

    // And a server that is not there at all says where it looked.
    let nobody = start(&["join", "--room", "7KQ-M2X"], &duel("dojo"), &signal, 1).finish(TIMEOUT);
    assert_eq!(nobody.status.code(), Some(3), "{nobody:?}");
    let errors = stderr(&nobody);
    assert!(
        errors.starts_with(&format!(
            "error: cannot enter a room on the signaling server {signal} (--signal)"
        )),
        "{errors}"
    );
}

/// `netcade ARGS` with `$NETCADE_CONFIG_DIR` set to `config`, to its end.
fn run_with_config(config: &std::path::Path, args: &[&str]) -> Output {
    let env = [("NETCADE_CONFIG_DIR", config.as_os_str())];
    support::cli::spawn_netcade_with_env(args, &env).finish(TIMEOUT)
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn the_server_list_in_the_config_directory_names_the_signaling_server() {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    let config = tempfile::tempdir().unwrap();
    std::fs::write(
        config.path().join("servers.txt"),
        format!("signal {signal}\n"),
    )
    .unwrap();
    let mut args = vec!["join", "--room", "7KQ-M2X", "--connect-timeout-s", "0.5"];
    let game = duel("dojo");
    args.extend(game.iter().map(String::as_str));
    let alone = run_with_config(config.path(), &args);
    assert_eq!(alone.status.code(), Some(3), "{alone:?}");
    assert!(
        stderr(&alone).starts_with("error: no host in room 7KQ-M2X within 0.5 s"),
        "the room was entered on the listed server: {alone:?}"
    );
}

#[test]
fn a_bad_server_list_or_room_code_is_one_clear_error_before_anything_runs() {
    let config = tempfile::tempdir().unwrap();
    let list = config.path().join("servers.txt");
    std::fs::write(&list, "signal wss://rooms.example.org:443\n").unwrap();
    let game = duel("dojo");
    let with_game = |args: &[&'static str]| {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(game.iter().map(String::as_str));
        all
    };
    let bad_list = run_with_config(config.path(), &with_game(&["join", "--quick"]));
    assert_eq!(bad_list.status.code(), Some(2), "{bad_list:?}");
    let errors = stderr(&bad_list);
    assert!(
        errors.starts_with(&format!("error: {}: line 1: ", list.display()))
            && errors.contains("TLS"),
        "{errors}"
    );
    assert_eq!(errors.lines().count(), 1, "{errors}");

    for args in [
        &["join", "--room", "7KQ-M0X"][..],
        &["spectate", "--room", "nope"],
        &["host", "--room", "TOO-LONGX"],
        &["join", "--signal", "http://a:1", "--quick"],
        &["join", "127.0.0.1:7000", "--quick"],
        &["join", "--turn", "turn:127.0.0.1:3478", "--quick"],
        &["join"],
    ] {
        let refused = run_with_config(config.path(), &with_game(args));
        assert_eq!(refused.status.code(), Some(2), "{args:?}: {refused:?}");
        assert!(stderr(&refused).starts_with("error: "), "{refused:?}");
    }
}
