//! How a `host`/`join`/`spectate` match ends, as users run the built
//! binary over real UDP on loopback: the last frame is one number
//! everywhere, the ending reaches everyone even through a delaying, lossy
//! link, and every way of not playing says what happened. The host binds
//! port 0 and writes the port it got to a file; timeouts only guard
//! against a hang.

use std::path::Path;
use std::process::Output;
use std::time::Duration;
use support::cli::{last_json, netcade, spawn_host, spawn_netcade, stdout, Background};

/// Long enough for a short match on a busy machine.
const MATCH_TIMEOUT: Duration = Duration::from_secs(120);

/// The delaying, lossy link of issue 15's spectator case.
const DELAYING_LOSSY_LINK: [&str; 6] = [
    "--sim-latency",
    "30",
    "--sim-jitter",
    "10",
    "--sim-loss",
    "2",
];

/// The Duel core in the dojo arena, as command-line arguments.
fn duel() -> [&'static str; 4] {
    static ARENA: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let arena = ARENA.get_or_init(support::dojo_arena);
    ["--core", "duel", "--rom", arena]
}

fn args<'a>(parts: &[&'a [&'a str]]) -> Vec<&'a str> {
    parts.concat()
}

/// A host and a joiner of one match, each given `common` and then its own
/// arguments; with the port the host listens on.
fn start_match(
    dir: &Path,
    common: &[&str],
    host: &[&str],
    join: &[&str],
) -> (Background, u16, Background) {
    let (host, port) = spawn_host(dir, &args(&[common, host]), MATCH_TIMEOUT);
    let address = format!("127.0.0.1:{port}");
    let join = spawn_netcade(&args(&[&["join", &address], common, join]));
    (host, port, join)
}

/// `replay play FILE --headless --json` with the Duel core: its JSON.
fn replay_played(path: &str) -> serde_json::Value {
    let game = duel();
    let played = netcade(&args(&[
        &["replay", "play", path, "--headless", "--json"],
        &game,
    ]));
    assert!(played.status.success(), "{played:?}");
    last_json(&played)
}

fn finished(side: &str, output: &Output) -> serde_json::Value {
    assert!(output.status.success(), "{side}: {output:?}");
    let json = last_json(output);
    assert_eq!(json["end"], "finished", "{side}: {json}");
    json
}

#[test]
fn a_match_of_n_frames_records_n_frames_and_its_replays_end_on_the_checksums_it_printed() {
    let dir = tempfile::tempdir().unwrap();
    let game = duel();
    // A delaying link lets each machine run ahead of its final frames.
    let common = args(&[&game, &DELAYING_LOSSY_LINK, &["--frames", "300", "--json"]]);
    let (host, _, join) = start_match(
        dir.path(),
        &common,
        &["--inputs", "random:1"],
        &["--inputs", "random:2"],
    );
    let (host, join) = (host.finish(MATCH_TIMEOUT), join.finish(MATCH_TIMEOUT));
    for (side, output) in [("host", &host), ("join", &join)] {
        let json = finished(side, output);
        assert_eq!(json["frames"], 300, "{side}: {json}");
        assert!(
            stdout(output).contains("checksums after 300 frames:"),
            "{side}: {}",
            stdout(output)
        );
        let replay = json["replay"]["path"].as_str().unwrap();
        assert_eq!(json["replay"]["frames"], 300, "{side}: {json}");
        let played = replay_played(replay);
        assert_eq!(played["frames"], 300, "{side}: {played}");
        for kind in ["memory", "state", "video"] {
            assert_eq!(
                played["checksums"][kind], json["checksums"][kind],
                "{side}'s replay ends on the {kind} checksum the match printed"
            );
        }
        let info = stdout(&netcade(&["replay", "info", replay]));
        assert!(info.contains("frames 0..300 = 300"), "{side}: {info}");
    }
}

#[test]
fn a_spectator_joining_mid_match_behind_a_delaying_lossy_link_ends_finished_on_the_players_checksums(
) {
    let dir = tempfile::tempdir().unwrap();
    let game = duel();
    let common = args(&[&game, &DELAYING_LOSSY_LINK, &["--json", "--no-record"]]);
    let common = args(&[&common, &["--frames", "600"]]);
    let (mut host, port, join) = start_match(
        dir.path(),
        &common,
        &["--inputs", "random:1"],
        &["--inputs", "random:2"],
    );
    host.wait_for_stdout("the match began", MATCH_TIMEOUT);
    std::thread::sleep(Duration::from_secs(3));
    let address = format!("127.0.0.1:{port}");
    let spectator = spawn_netcade(&args(&[&["spectate", &address], &common]));
    let players = [
        finished("host", &host.finish(MATCH_TIMEOUT)),
        finished("join", &join.finish(MATCH_TIMEOUT)),
    ];
    let watched = finished("spectator", &spectator.finish(MATCH_TIMEOUT));
    assert_eq!(watched["frames"], 600, "{watched}");
    for player in &players {
        assert_eq!(player["frames"], 600, "{player}");
        for kind in ["memory", "video"] {
            assert_eq!(
                watched["checksums"][kind], player["checksums"][kind],
                "the spectator ends on the players' {kind} checksum"
            );
        }
    }
}

/// The host's and the joiner's outputs, once both played `frames` frames.
fn both_played(host: Background, join: Background, frames: u32) -> (Output, Output) {
    let (host, join) = (host.finish(MATCH_TIMEOUT), join.finish(MATCH_TIMEOUT));
    for (side, output) in [("host", &host), ("join", &join)] {
        let json = finished(side, output);
        assert_eq!(json["frames"], frames, "{side}: {json}");
    }
    (host, join)
}

#[test]
fn the_hosts_frames_win_and_a_joiner_that_gave_others_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let game = duel();
    let common = args(&[&game, &["--json", "--no-record"]]);
    let (host, _, join) = start_match(
        dir.path(),
        &common,
        &["--frames", "120"],
        &["--frames", "600"],
    );
    let (host, join) = both_played(host, join, 120);
    let said = support::cli::stderr(&join);
    assert!(
        said.contains("note: the host's match length wins: --frames 120 (you gave --frames 600)"),
        "{said}"
    );
    assert!(!support::cli::stderr(&host).contains("note:"));
}

#[test]
fn the_hosts_rejoin_window_is_the_matchs_and_a_joiner_that_gave_another_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let game = duel();
    let common = args(&[&game, &["--json", "--no-record", "--frames", "120"]]);
    let (host, _, join) = start_match(dir.path(), &common, &["--rejoin-s", "12"], &[]);
    let (host, join) = both_played(host, join, 120);
    let said = support::cli::stderr(&join);
    assert!(
        said.contains(
            "note: the host's rejoin window wins: --rejoin-s 12 (you gave --rejoin-s 30)"
        ),
        "{said}"
    );
    assert_eq!(said.matches("rejoin window").count(), 1, "{said}");
    assert!(!support::cli::stderr(&host).contains("note:"));
}

/// A loopback port where nothing listens (bound, then let go).
fn silent_address() -> String {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.local_addr().unwrap().to_string()
}

#[test]
fn joining_or_watching_where_nothing_answers_says_no_answer_after_the_connect_timeout_and_exits_3()
{
    // Longer than the 5 s after which a silent peer is dropped.
    let timeout_s = 6.0;
    let game = duel();
    let timeout = timeout_s.to_string();
    let runs: Vec<_> = ["join", "spectate"]
        .into_iter()
        .map(|command| {
            let address = silent_address();
            let head = [command, &address, "--connect-timeout-s", &timeout];
            let args: Vec<String> = args(&[&head, &game])
                .iter()
                .map(|arg| arg.to_string())
                .collect();
            std::thread::spawn(move || {
                let began = std::time::Instant::now();
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let output = netcade(&args);
                (command, address, output, began.elapsed())
            })
        })
        .collect();
    for run in runs {
        let (command, address, output, took) = run.join().unwrap();
        let said = support::cli::stderr(&output);
        assert_eq!(output.status.code(), Some(3), "{command}: {output:?}");
        assert!(
            said.contains(&format!("no answer from {address} within 6 s")),
            "{command}: {said}"
        );
        assert!(
            took.as_secs_f64() >= timeout_s,
            "{command} gave up after {took:?}"
        );
        assert!(!stdout(&output).contains("match"), "{command}: {output:?}");
    }
}

/// The exit code of a command interrupted by Ctrl-C, SIGTERM or SIGHUP.
const EXIT_INTERRUPTED: i32 = 130;

#[test]
fn a_player_sent_sigterm_tells_its_opponent_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let game = duel();
    let common = args(&[&game, &["--json", "--no-record"]]);
    let (mut host, _, mut join) = start_match(dir.path(), &common, &[], &[]);
    host.wait_for_stdout("the match began", MATCH_TIMEOUT);
    join.wait_for_stdout("the match began", MATCH_TIMEOUT);
    let killed_at = std::time::Instant::now();
    join.signal("TERM");
    let join = join.finish(MATCH_TIMEOUT);
    let host = host.finish(MATCH_TIMEOUT);
    assert_eq!(join.status.code(), Some(EXIT_INTERRUPTED), "{join:?}");
    assert_eq!(last_json(&join)["end"], "interrupted");
    assert_eq!(last_json(&host)["end"], "peer_left", "told, not lost");
    assert!(
        killed_at.elapsed() < Duration::from_secs(4),
        "the host did not wait for the silence timeout"
    );
}

#[test]
fn a_host_sent_sighup_while_waiting_exits_130_and_leaves_no_replay_file() {
    let dir = tempfile::tempdir().unwrap();
    let game = duel();
    let replay = dir.path().join("waiting.ncr").display().to_string();
    let (mut host, _) = spawn_host(
        dir.path(),
        &args(&[&game, &["--record", &replay]]),
        MATCH_TIMEOUT,
    );
    host.wait_for_stdout("waiting for a player to join", MATCH_TIMEOUT);
    host.signal("HUP");
    let host = host.finish(MATCH_TIMEOUT);
    assert_eq!(host.status.code(), Some(EXIT_INTERRUPTED), "{host:?}");
    assert!(!Path::new(&replay).exists(), "an empty replay was left");
}

#[test]
fn run_and_synctest_sent_sigterm_exit_130_as_on_ctrl_c() {
    let game = duel();
    for (command, signal) in [("run", "TERM"), ("synctest", "TERM"), ("run", "INT")] {
        let mut running = spawn_netcade(&args(&[&[command, "--frames", "100000000"], &game]));
        std::thread::sleep(Duration::from_millis(500));
        running.signal(signal);
        let output = running.finish(MATCH_TIMEOUT);
        assert_eq!(
            output.status.code(),
            Some(EXIT_INTERRUPTED),
            "{command} after SIG{signal}: {output:?}"
        );
    }
}

#[test]
fn refusals_name_what_happened_a_full_match_or_another_game() {
    let dir = tempfile::tempdir().unwrap();
    let game = duel();
    let moon = support::duel_arena("moon").display().to_string();
    let other_game = ["--core", "duel", "--rom", moon.as_str()];
    let common = args(&[&game, &["--frames", "600", "--no-record"]]);
    let (mut host, port, join) = start_match(dir.path(), &common, &[], &[]);
    host.wait_for_stdout("the match began", MATCH_TIMEOUT);
    let address = format!("127.0.0.1:{port}");
    let third = netcade(&args(&[&["join", &address, "--no-record"], &game]));
    let stranger = netcade(&args(&[
        &["spectate", &address, "--no-record"],
        &other_game,
    ]));
    let (host, _) = (host.finish(MATCH_TIMEOUT), join.finish(MATCH_TIMEOUT));

    for (who, output, says) in [
        ("a third joiner", &third, "error: the host refused to play: the match is full"),
        (
            "a spectator of another game",
            &stranger,
            "error: this match is for Duel 0.1.0 with content 42ffdd6b…; you have Duel 0.1.0 with content",
        ),
    ] {
        assert_eq!(output.status.code(), Some(2), "{who}: {output:?}");
        let said = support::cli::stderr(output);
        assert!(said.starts_with(says), "{who}: {said}");
    }
    assert!(!stdout(&host).contains("a spectator joined"), "{host:?}");
    assert!(
        support::cli::stderr(&host).contains("warning: refused a spectator (different content (ROM)): it has Duel 0.1.0 with content"),
        "{host:?}"
    );
}

#[test]
fn a_netplay_desync_leaves_its_dumps_in_the_data_directory_not_the_current_one() {
    let (cwd, data, ports) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let game = duel();
    // The option leaves state out of Duel's savestate: rollbacks (sure with
    // a latency) make the machines diverge, and the joiner dumps both.
    let common = args(&[
        &game,
        &[
            "--option",
            "duel_inject_nondeterminism=enabled",
            "--mode",
            "rollback",
        ],
        &["--sim-latency", "30", "--frames", "300", "--no-record"],
    ]);
    let port_file = ports.path().join("port").display().to_string();
    let env = [("XDG_DATA_HOME", data.path())];
    let (cwd_path, host_args) = (
        cwd.path().to_path_buf(),
        args(&[&["host", "--port", "0", "--port-file", &port_file], &common])
            .iter()
            .map(|arg| arg.to_string())
            .collect::<Vec<_>>(),
    );
    let data_path = data.path().to_path_buf();
    let host = std::thread::spawn(move || {
        let args: Vec<&str> = host_args.iter().map(String::as_str).collect();
        support::cli::netcade_in_with_env(&cwd_path, &[("XDG_DATA_HOME", &data_path)], &args)
    });
    let port = loop {
        match std::fs::read_to_string(&port_file) {
            Ok(text) if text.ends_with('\n') => break text.trim().to_string(),
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let address = format!("127.0.0.1:{port}");
    let join =
        support::cli::netcade_in_with_env(cwd.path(), &env, &args(&[&["join", &address], &common]));
    let host = host.join().unwrap();
    assert_eq!(join.status.code(), Some(1), "a desync: {join:?}");
    assert_eq!(host.status.code(), Some(1), "a desync: {host:?}");
    let said = support::cli::stderr(&join);
    let dumps = said
        .split("(dumps in ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_else(|| panic!("no dumps named: {said}"));
    assert!(
        Path::new(dumps).starts_with(data.path().join("netcade").join("dumps")),
        "{dumps}"
    );
    let left_here: Vec<_> = std::fs::read_dir(cwd.path()).unwrap().collect();
    assert!(left_here.is_empty(), "{left_here:?}");
}
