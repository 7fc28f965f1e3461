//! `netcade host` and `netcade join` as users run them: two processes of the
//! built binary playing over real UDP on loopback. The host binds port 0 and
//! writes the port it got to a file (no fixed ports that could collide).
//! Verdicts never depend on timing: timeouts are generous and only guard
//! against a hang.

use std::net::UdpSocket;
use std::path::Path;
use std::time::Duration;
use support::cli::{
    assert_refusals, last_json, netcade, netcade_in_with_env, refusal, spawn_host, spawn_netcade,
    stderr, stdout, Background,
};
use support::restart::{kill_and_restart, tickets_in};

/// Long enough for a 600-frame match (10 s) on a busy machine.
const MATCH_TIMEOUT: Duration = Duration::from_secs(120);

/// The exit code `host`/`join` document for a lost peer.
const EXIT_PEER_LOST: i32 = 6;

/// Starts a host of `game` on a free port; returns it and the port it
/// listens on.
fn start_host(dir: &Path, game: &[&str], extra: &[&str]) -> (Background, u16) {
    spawn_host(dir, &[game, extra].concat(), MATCH_TIMEOUT)
}

fn start_join(port: u16, game: &[&str], extra: &[&str]) -> Background {
    start_join_at(&format!("127.0.0.1:{port}"), game, extra)
}

fn start_join_at(address: &str, game: &[&str], extra: &[&str]) -> Background {
    let mut args = vec!["join", address];
    args.extend_from_slice(game);
    args.extend_from_slice(extra);
    spawn_netcade(&args)
}

/// Plays a whole match of `frames` frames; returns host's and joiner's output.
fn play_match(
    game: &[&str],
    frames: u32,
    during: impl FnOnce(u16, &mut Background),
) -> (std::process::Output, std::process::Output) {
    let dir = tempfile::tempdir().unwrap();
    let frames_count = frames;
    let frames = frames.to_string();
    let host_args = ["--frames", &frames, "--inputs", "random:1", "--json"];
    let join_args = ["--frames", &frames, "--inputs", "random:2", "--json"];
    let (mut host, port) = start_host(dir.path(), game, &host_args);
    let join = start_join(port, game, &join_args);
    during(port, &mut host);
    // Real time paces the match: a long one gets its own length on top.
    let timeout = MATCH_TIMEOUT + Duration::from_secs(u64::from(frames_count) / 60);
    let host = host.finish(timeout);
    let join = join.finish(timeout);
    (host, join)
}

/// Both sides finished every frame, agree on the final checksums and saw
/// no desync.
fn assert_same_ending(host: &std::process::Output, join: &std::process::Output, frames: u32) {
    for (side, output) in [("host", host), ("join", join)] {
        assert!(output.status.success(), "{side}: {output:?}");
    }
    let (host_json, join_json) = (last_json(host), last_json(join));
    for json in [&host_json, &join_json] {
        assert_eq!(json["end"], "finished", "{json}");
        assert_eq!(json["frames"], frames, "{json}");
        assert_eq!(json["netplay"]["desyncs"], 0, "{json}");
        let wire = &json["netplay"]["wire"];
        assert!(wire["sent_bytes_per_s"].as_f64().unwrap() > 0.0, "{json}");
        assert!(
            wire["received_bytes_per_s"].as_f64().unwrap() > 0.0,
            "{json}"
        );
        assert!(
            wire["sent_datagrams_per_s"].as_f64().unwrap() > 0.0,
            "{json}"
        );
        assert!(json["netplay"]["peers"][0]["ping_ms"].is_number(), "{json}");
        // The saved states are reported, and bounded: a Duel or Atari state
        // is under a kilobyte, a Genesis one ~1 MB, never a history of them.
        let state_bytes = json["netplay"]["state_bytes"].as_u64().unwrap();
        assert!((1..=256 << 20).contains(&state_bytes), "{json}");
        assert!(json["netplay"]["peers"][0]["rollbacks"]["count"].is_number());
    }
    // Game memory and picture, netplay's default comparison: raw states
    // may hold incidental bytes that differ between processes (stella's do).
    for kind in ["memory", "video"] {
        let checksum = &host_json["checksums"][kind];
        assert!(checksum.is_string(), "{host_json}");
        assert_eq!(checksum, &join_json["checksums"][kind], "{kind}");
    }
}

#[test]
fn a_duel_host_and_joiner_play_600_frames_over_udp_and_end_on_the_same_checksums() {
    let arena = support::dojo_arena();
    let game = ["--core", "duel", "--rom", &arena, "--headless"];
    let (host, join) = play_match(&game, 600, |_, _| {});
    assert_same_ending(&host, &join, 600);
    assert!(stdout(&host).contains("match finished: 600 frames final"));
    assert!(
        !stderr(&host).contains("pre-flight"),
        "Duel restores faithfully"
    );
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn a_stella_host_and_joiner_play_boxing_over_udp_and_end_on_the_same_checksums() {
    let Some((core, rom)) = real_game("stella", "boxing.bin") else {
        return;
    };
    let game = ["--core", &core, "--rom", &rom];
    let (host, join) = play_match(&game, 600, |_, _| {});
    assert_same_ending(&host, &join, 600);
}

/// A real core and ROM from the test content, as command-line paths, or
/// `None` once the lookup has said why the calling test is skipped.
fn real_game(core: &str, rom: &str) -> Option<(String, String)> {
    let core = support::real_core(core)?;
    let rom = support::real_rom(rom)?;
    Some((core.display().to_string(), rom.display().to_string()))
}

/// Issue 6's rough link, the same on both sides: 100 ms round trip ±20 ms,
/// 5 % loss, 1 % duplicates, reordering.
const ROUGH_LINK: [&str; 10] = [
    "--sim-latency",
    "50",
    "--sim-jitter",
    "10",
    "--sim-loss",
    "5",
    "--sim-dup",
    "1",
    "--sim-reorder",
    "1",
];

/// A minute of play over [`ROUGH_LINK`] ends in sync on both sides.
fn assert_a_minute_over_a_rough_link_ends_in_sync(game: &[&str]) {
    let mut args = game.to_vec();
    args.extend_from_slice(&ROUGH_LINK);
    let (host, join) = play_match(&args, 3600, |_, _| {});
    assert_same_ending(&host, &join, 3600);
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn a_minute_of_stella_boxing_over_a_lossy_jittery_link_ends_in_sync() {
    let Some((core, rom)) = real_game("stella", "boxing.bin") else {
        return;
    };
    assert_a_minute_over_a_rough_link_ends_in_sync(&["--core", &core, "--rom", &rom]);
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn a_minute_of_genesis_airstriker_over_a_lossy_jittery_link_ends_in_sync() {
    let Some((core, rom)) = real_game("genesis_plus_gx", "airstriker.md") else {
        return;
    };
    // With default options Airstriker stops on a 68k address-error screen.
    assert_a_minute_over_a_rough_link_ends_in_sync(&[
        "--core",
        &core,
        "--rom",
        &rom,
        "--option",
        "genesis_plus_gx_addr_error=disabled",
    ]);
}

#[test]
fn junk_datagrams_fired_at_the_host_during_a_match_are_counted_and_harmless() {
    let arena = support::dojo_arena();
    let game = ["--core", "duel", "--rom", &arena];
    let junk_count = 200;
    let (host, join) = play_match(&game, 600, |port, host| {
        host.wait_for_stdout("the match began", MATCH_TIMEOUT);
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        for index in 0..junk_count {
            // Every other one well-formed but with a session token nobody
            // uses; the rest garbage of real datagrams' lengths.
            let junk = if index % 2 == 0 {
                wrong_token_keep_alive(index as u16)
            } else {
                let length = 1 + index % 60;
                (0..length)
                    .map(|byte| (index * 31 + byte * 7) as u8)
                    .collect()
            };
            socket.send_to(&junk, ("127.0.0.1", port)).unwrap();
            if index % 20 == 0 {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    });
    assert_same_ending(&host, &join, 600);
    let dropped = last_json(&host)["netplay"]["dropped_datagrams"]
        .as_u64()
        .unwrap();
    // Loopback may lose a datagram under load; most arrive and all that do
    // are dropped.
    assert!(
        (junk_count as u64 / 2..=junk_count as u64).contains(&dropped),
        "{dropped} dropped"
    );
    assert_eq!(last_json(&join)["netplay"]["dropped_datagrams"], 0);
}

/// A well-formed keep-alive of a session that does not exist.
fn wrong_token_keep_alive(sequence: u16) -> Vec<u8> {
    use netcode::protocol::{encode, Header, Message, Sequence, SessionToken, PROTOCOL_VERSION};
    let header = Header {
        version: PROTOCOL_VERSION,
        session: SessionToken(0xBAD_70CE),
        sequence: Sequence(sequence),
    };
    let mut datagram = Vec::new();
    encode(&header, &Message::KeepAlive, &mut datagram).unwrap();
    datagram
}

#[test]
fn when_the_joiner_is_killed_mid_match_the_host_reports_the_lost_peer_and_exits_6() {
    let dir = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    let game = ["--core", "duel", "--rom", &arena];
    // No rejoin window: the silent peer is dropped after 5 s, as before there was one.
    let (mut host, port) = start_host(dir.path(), &game, &["--json", "--rejoin-s", "0"]);
    let mut join = start_join(port, &game, &[]);
    host.wait_for_stdout("the match began", MATCH_TIMEOUT);
    join.wait_for_stdout("the match began", MATCH_TIMEOUT);
    join.kill();
    let host = host.finish(MATCH_TIMEOUT);
    assert_eq!(host.status.code(), Some(EXIT_PEER_LOST), "{host:?}");
    let errors = stderr(&host);
    assert!(
        errors.contains("warning: waiting for P2… (nothing heard for"),
        "{errors}"
    );
    assert!(
        stdout(&host).contains("match ended (the peer was lost): "),
        "{host:?}"
    );
    assert_eq!(last_json(&host)["end"], "peer_lost");
}

#[test]
fn ctrl_c_leaves_cleanly_and_the_peer_is_told_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    let game = ["--core", "duel", "--rom", &arena];
    let (mut host, port) = start_host(dir.path(), &game, &["--json"]);
    let mut join = start_join(port, &game, &["--json"]);
    host.wait_for_stdout("the match began", MATCH_TIMEOUT);
    join.wait_for_stdout("the match began", MATCH_TIMEOUT);
    join.interrupt();
    let join = join.finish(MATCH_TIMEOUT);
    assert_eq!(join.status.code(), Some(130), "interrupted: {join:?}");
    assert!(stdout(&join).contains("match interrupted: "), "{join:?}");
    assert_eq!(last_json(&join)["end"], "interrupted");
    let host = host.finish(MATCH_TIMEOUT);
    // Told, not timed out: no silence warning, and the end says so.
    assert!(host.status.success(), "{host:?}");
    assert_eq!(last_json(&host)["end"], "peer_left", "{host:?}");
    assert!(!stderr(&host).contains("nothing heard"), "{host:?}");
}

#[test]
fn a_joiner_with_other_content_is_refused_while_the_host_keeps_its_slot_for_the_right_one() {
    let dir = tempfile::tempdir().unwrap();
    let (dojo, moon) = (
        support::dojo_arena(),
        support::duel_arena("moon").display().to_string(),
    );
    let right = ["--core", "duel", "--rom", dojo.as_str()];
    let host_args = ["--frames", "120", "--inputs", "random:1", "--json"];
    let (host, port) = start_host(dir.path(), &right, &host_args);
    let wrong = start_join(port, &["--core", "duel", "--rom", &moon], &[]).finish(MATCH_TIMEOUT);
    assert_eq!(wrong.status.code(), Some(2), "{wrong:?}");
    let errors = stderr(&wrong);
    assert!(
        errors.starts_with("error: this match is for Duel 0.1.0 with content"),
        "the host's values first: {errors}"
    );
    assert_eq!(errors.lines().count(), 1, "{errors}");

    let join_args = ["--frames", "120", "--inputs", "random:2", "--json"];
    let join = start_join(port, &right, &join_args).finish(MATCH_TIMEOUT);
    let host = host.finish(MATCH_TIMEOUT);
    assert_same_ending(&host, &join, 120);
    let warnings = stderr(&host);
    let refusals: Vec<&str> = warnings
        .lines()
        .filter(|line| line.contains("refused a joiner"))
        .collect();
    assert_eq!(refusals.len(), 1, "{warnings}");
    assert!(
        refusals[0].starts_with(
            "warning: refused a joiner (different content (ROM)): it has Duel 0.1.0 with content"
        ),
        "{warnings}"
    );
    assert!(
        refusals[0].ends_with("still waiting for a player to join"),
        "{warnings}"
    );
}

#[test]
fn the_joiner_plays_with_the_hosts_core_options_over_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    let game = ["--core", "duel", "--rom", arena.as_str()];
    let host_args = ["--frames", "300", "--inputs", "random:1", "--json"];
    let (host, port) = start_host(dir.path(), &game, &host_args);
    // Nondeterministic on the joiner alone, it would desync at once.
    let join_args = [
        "--frames",
        "300",
        "--inputs",
        "random:2",
        "--json",
        "--option",
        "duel_inject_nondeterminism=enabled",
    ];
    let join = start_join(port, &game, &join_args).finish(MATCH_TIMEOUT);
    let host = host.finish(MATCH_TIMEOUT);
    assert_same_ending(&host, &join, 300);
    let notes = stderr(&join);
    let overridden: Vec<&str> = notes
        .lines()
        .filter(|line| line.contains("core options"))
        .collect();
    assert_eq!(
        overridden,
        ["note: the host's core options win, loading the core again with them: duel_inject_nondeterminism: enabled → default"],
        "{notes}"
    );
    assert!(!stderr(&host).contains("core options"), "{host:?}");
    // Its own option, dropped for the host's, is not warned about.
    assert!(!notes.contains("pre-flight"), "{notes}");
}

#[test]
fn a_joiner_taking_on_the_hosts_unfaithful_core_option_warns_of_its_pre_flight() {
    let dir = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    let game = ["--core", "duel", "--rom", arena.as_str()];
    let unfaithful = ["--option", UNFAITHFUL];
    // Rollback forced on the host: auto would choose lockstep.
    let (host, port) = start_host(
        dir.path(),
        &game,
        &[
            &["--frames", "60", "--inputs", "none", "--mode", "rollback"][..],
            &unfaithful,
        ]
        .concat(),
    );
    let join = start_join(port, &game, &["--frames", "60", "--inputs", "none"]);
    let join = join.finish(MATCH_TIMEOUT);
    host.finish(MATCH_TIMEOUT);
    let errors = stderr(&join);
    assert!(
        errors.contains("note: the host's core options win"),
        "{errors}"
    );
    assert!(
        errors.contains("warning: rollback pre-flight: Duel"),
        "{errors}"
    );
}

#[test]
fn the_joiner_begins_from_the_hosts_start_state() {
    let arena = support::dojo_arena();
    let game = ["--core", "duel", "--rom", &arena];
    let (host, join) = play_match(&game, 120, |_, _| {});
    assert_same_ending(&host, &join, 120);
    let joined = stdout(&join);
    assert!(
        joined.contains("loaded the host's start state ("),
        "{joined}"
    );
    assert!(!stdout(&host).contains("loaded the host's start state"));
}

#[test]
fn a_conditioned_link_over_laminar_still_ends_in_sync_and_its_latency_shows_in_the_ping() {
    let arena = support::dojo_arena();
    let link = [
        "--core",
        "duel",
        "--rom",
        &arena,
        "--transport",
        "laminar",
        "--sim-latency",
        "40",
        "--sim-jitter",
        "5",
        "--sim-loss",
        "5",
        "--sim-dup",
        "1",
        "--sim-reorder",
        "1",
    ];
    let (host, join) = play_match(&link, 300, |_, _| {});
    assert_same_ending(&host, &join, 300);
    for output in [&host, &join] {
        let json = last_json(output);
        let ping = json["netplay"]["peers"][0]["ping_ms"].as_f64().unwrap();
        // 40 ms each way (±5) from both conditioners.
        assert!(ping >= 70.0, "ping {ping} ms: {json}");
    }
}

#[test]
fn a_joiner_reaches_the_host_over_ipv6_loopback() {
    if UdpSocket::bind("[::1]:0").is_err() {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: this machine has no IPv6 loopback"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    let game = ["--core", "duel", "--rom", &arena];
    let frames = ["--frames", "120", "--json"];
    let (host, port) = start_host(dir.path(), &game, &frames);
    let join = start_join_at(&format!("[::1]:{port}"), &game, &frames);
    let (join, host) = (join.finish(MATCH_TIMEOUT), host.finish(MATCH_TIMEOUT));
    assert_same_ending(&host, &join, 120);
}

#[test]
fn a_busy_port_a_host_name_that_does_not_resolve_no_answer_or_a_strict_pre_flight_is_one_clear_error(
) {
    let busy = UdpSocket::bind("0.0.0.0:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    // A bound socket that never answers: the datagrams are not refused.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let address = silent.local_addr().unwrap().to_string();
    let arena = support::dojo_arena();
    let duel = ["--core", "duel", "--rom", &arena];
    let unfaithful = [&duel[..], &["--option", UNFAITHFUL]].concat();
    let listening = format!("cannot listen on UDP port {port}");
    let no_answer = format!("no answer from {address} within 1 s");
    let silent_join = ["join", &address, "--connect-timeout-s", "1"];
    let strict = ["host", "--port", "0", "--strict", "--mode", "rollback"];
    assert_refusals(&[
        refusal(
            &[&["host", "--port", &port][..], &duel].concat(),
            &listening,
            2,
        )
        .mentioning("in use")
        .in_the_error_line(),
        refusal(
            &[&["join", "no-such-host.invalid:7000"][..], &duel].concat(),
            "cannot find the host no-such-host.invalid:7000",
            2,
        )
        .in_the_error_line(),
        refusal(&[&silent_join[..], &duel].concat(), &no_answer, 3).in_the_error_line(),
        refusal(
            &[&strict[..], &unfaithful].concat(),
            "rollback pre-flight: Duel",
            2,
        )
        .mentioning("--strict")
        .in_the_error_line(),
    ]);
}

#[test]
fn a_join_that_fails_while_running_ends_its_json_output_with_why() {
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let address = silent.local_addr().unwrap().to_string();
    let arena = support::dojo_arena();
    let output = netcade(&[
        "join",
        &address,
        "--connect-timeout-s",
        "1",
        "--core",
        "duel",
        "--rom",
        &arena,
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let json = last_json(&output);
    assert_eq!(json["command"], "join");
    assert_eq!(json["end"], "failed");
    assert_eq!(json["exit_code"], 3);
    assert!(
        json["error"]
            .as_str()
            .is_some_and(|error| error.starts_with(&format!("no answer from {address}"))),
        "{json}"
    );
}

/// The option that makes Duel fail the rollback pre-flight.
const UNFAITHFUL: &str = "duel_inject_nondeterminism=enabled";

#[test]
fn a_core_that_fails_the_rollback_pre_flight_is_warned_about_without_strict() {
    // The host: a warning, then it goes ahead (and is interrupted while
    // it waits).
    let arena = support::dojo_arena();
    let unfaithful = ["--core", "duel", "--rom", &arena, "--option", UNFAITHFUL];
    let dir = tempfile::tempdir().unwrap();
    let (mut host, _) = start_host(dir.path(), &unfaithful, &["--mode", "rollback"]);
    host.wait_for_stdout("waiting for a player to join", MATCH_TIMEOUT);
    host.interrupt();
    let errors = stderr(&host.finish(MATCH_TIMEOUT));
    assert!(
        errors.contains("warning: rollback pre-flight: Duel"),
        "{errors}"
    );

    // A joiner knows the options it plays with once the host answers: one
    // that nobody answers runs no pre-flight (see the tests above for
    // joiners that are answered).
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let address = silent.local_addr().unwrap().to_string();
    let mut lenient = vec!["join", &address, "--connect-timeout-s", "1"];
    lenient.extend_from_slice(&unfaithful);
    let output = netcade(&lenient);
    let errors = stderr(&output);
    assert!(!errors.contains("pre-flight"), "{errors}");
    assert!(errors.contains("error: no answer"), "{errors}");
}

/// Duel's fighter records (fighter 1's x at 0x27, through fighter 2's last
/// byte): see cores/duel's RAM layout.
const DUEL_FIGHTER_BYTES: std::ops::Range<usize> = 0x27..0x5b;

#[test]
fn a_desync_in_a_live_match_names_the_fighter_bytes_that_diverged_is_repaired_and_the_match_finishes(
) {
    let arena = support::dojo_arena();
    // The option leaves state out of Duel's savestate: the two machines'
    // different rollbacks make them diverge. A latency makes rollbacks sure.
    let game = [
        "--core",
        "duel",
        "--rom",
        &arena,
        "--option",
        "duel_inject_nondeterminism=enabled",
        "--sim-latency",
        "30",
        // Auto would play it in lockstep, where nothing desyncs.
        "--mode",
        "rollback",
    ];
    let dir = tempfile::tempdir().unwrap();
    let dumps = dir.path().join("dumps");
    let dumps_arg = dumps.display().to_string();
    let common = ["--frames", "600", "--json", "--dump-dir", &dumps_arg];
    let (host, port) = start_host(
        dir.path(),
        &game,
        &[&common[..], &["--inputs", "random:1"]].concat(),
    );
    let join = start_join(
        port,
        &game,
        &[&common[..], &["--inputs", "random:2"]].concat(),
    );
    let (host, join) = (host.finish(MATCH_TIMEOUT), join.finish(MATCH_TIMEOUT));
    for (side, output) in [("host", &host), ("join", &join)] {
        // A desync, even diagnosed, makes the match a failed one: exit 1.
        assert_eq!(output.status.code(), Some(1), "{side}: {output:?}");
        let json = last_json(output);
        assert_eq!(json["end"], "finished", "{side}: {json}");
        assert!(
            json["netplay"]["desyncs"].as_u64().unwrap() >= 1,
            "{side}: {json}"
        );
    }
    let joined = last_json(&join);
    assert!(
        joined["netplay"]["desyncs_diagnosed"].as_u64().unwrap() >= 1,
        "{joined}"
    );
    assert!(
        joined["netplay"]["repairs"].as_u64().unwrap() >= 1,
        "{joined}"
    );
    assert!(stderr(&join).contains("loaded the host's state of frame"));
    let ranges = joined["netplay"]["last_desync_memory_diff"]["ranges"]
        .as_array()
        .unwrap_or_else(|| panic!("{joined}"));
    let starts: Vec<usize> = ranges
        .iter()
        .map(|range| {
            let text = range.as_str().unwrap();
            let start = text.split("..").next().unwrap();
            usize::from_str_radix(start.trim_start_matches("0x"), 16).unwrap()
        })
        .collect();
    assert!(
        starts
            .iter()
            .any(|start| DUEL_FIGHTER_BYTES.contains(start)),
        "no fighter byte in {ranges:?}"
    );
    let report_dir = std::fs::read_dir(&dumps)
        .unwrap()
        .next()
        .expect("a dump directory")
        .unwrap()
        .path();
    let report = std::fs::read_to_string(report_dir.join("report.txt")).unwrap();
    assert!(report.contains("game memory bytes: 0x"), "{report}");
    for name in ["ours.state", "host.state", "ours.memory", "host.memory"] {
        assert!(report_dir.join(name).exists(), "{name}");
    }
    assert!(stderr(&join).contains("game memory differs from the host's at"));
}

fn start_spectator(port: u16, game: &[&str], extra: &[&str]) -> Background {
    let address = format!("127.0.0.1:{port}");
    let mut args = vec!["spectate", address.as_str()];
    args.extend_from_slice(game);
    args.extend_from_slice(extra);
    spawn_netcade(&args)
}

#[test]
fn a_spectator_joining_around_frame_1000_ends_on_the_players_checksums_a_few_frames_behind() {
    let arena = support::dojo_arena();
    let game = ["--core", "duel", "--rom", &arena, "--headless"];
    let mut spectator = None;
    let (host, join) = play_match(&game, 1500, |port, host| {
        host.wait_for_stdout("the match began", MATCH_TIMEOUT);
        // About frame 1000 of the match; the verdict does not depend on it.
        std::thread::sleep(Duration::from_millis(1000 * 1000 / 60));
        spectator = Some(start_spectator(
            port,
            &game,
            &["--frames", "1500", "--json"],
        ));
    });
    assert_same_ending(&host, &join, 1500);
    let spectator = spectator.unwrap().finish(MATCH_TIMEOUT);
    assert!(spectator.status.success(), "{spectator:?}");
    let watched = last_json(&spectator);
    assert_eq!(watched["end"], "finished", "{watched}");
    assert_eq!(watched["frames"], 1500, "{watched}");
    let joined = watched["spectator"]["joined_at_frame"].as_u64().unwrap();
    assert!((500..1450).contains(&joined), "{watched}");
    let host_json = last_json(&host);
    for kind in ["memory", "video"] {
        assert_eq!(
            watched["checksums"][kind], host_json["checksums"][kind],
            "{kind}"
        );
    }
    let aimed = watched["spectator"]["aimed_delay_frames"].as_u64().unwrap();
    let delay = watched["spectator"]["delay_frames"].as_u64().unwrap();
    assert!(aimed >= 6, "{watched}");
    assert!(delay <= aimed + 4, "{watched}");
    // Behind the players: the buffer, plus how far final frames trail them.
    let live = watched["spectator"]["behind_live_frames"].as_u64().unwrap();
    assert!(live >= delay && live <= delay + 20, "{watched}");
    assert!(
        watched["netplay"]["wire"]["received_bytes_per_s"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(stdout(&host).contains("a spectator joined"), "{host:?}");
}

#[test]
fn a_spectator_killed_mid_match_leaves_the_players_undisturbed() {
    let arena = support::dojo_arena();
    let game = ["--core", "duel", "--rom", &arena];
    let (host, join) = play_match(&game, 900, |port, host| {
        host.wait_for_stdout("the match began", MATCH_TIMEOUT);
        let mut spectator = start_spectator(port, &game, &[]);
        spectator.wait_for_stdout("watching from frame", MATCH_TIMEOUT);
        spectator.kill();
    });
    // (That the players never wait for a spectator is checked without
    // wall-clock timing in tests/netplay/netplay_spectator.rs.)
    assert_same_ending(&host, &join, 900);
    for output in [&host, &join] {
        assert!(!stderr(output).contains("waiting for P"));
    }
}

#[test]
fn spectating_a_host_with_other_content_is_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let (dojo, moon) = (
        support::dojo_arena(),
        support::duel_arena("moon").display().to_string(),
    );
    let (mut host, port) = start_host(dir.path(), &["--core", "duel", "--rom", &dojo], &[]);
    let refused =
        start_spectator(port, &["--core", "duel", "--rom", &moon], &[]).finish(MATCH_TIMEOUT);
    host.kill();
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let errors = stderr(&refused);
    assert!(
        errors.starts_with("error: this match is for Duel 0.1.0 with content"),
        "{errors}"
    );
    assert_eq!(errors.lines().count(), 1, "{errors}");
}

/// A UDP relay between a joiner and the host that can cut the link: the
/// joiner dials the relay's port, the host sees the relay's address.
struct Relay {
    port: u16,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Set: the relay sends on to the host from a new port (and clears it).
    rebind: std::sync::Arc<std::sync::atomic::AtomicBool>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Relay {
    fn to_host(host_port: u16) -> Relay {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let front = UdpSocket::bind("127.0.0.1:0").unwrap();
        let back = UdpSocket::bind("127.0.0.1:0").unwrap();
        for socket in [&front, &back] {
            socket
                .set_read_timeout(Some(Duration::from_millis(1)))
                .unwrap();
        }
        let port = front.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let rebind = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let (cut_flag, rebind_flag, stop_flag) = (cut.clone(), rebind.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut back = back;
            let mut joiner = None;
            let mut buffer = [0u8; 2048];
            while !stop_flag.load(Ordering::Relaxed) {
                if rebind_flag.swap(false, Ordering::Relaxed) {
                    back = UdpSocket::bind("127.0.0.1:0").unwrap();
                    back.set_read_timeout(Some(Duration::from_millis(1)))
                        .unwrap();
                }
                let cut = cut_flag.load(Ordering::Relaxed);
                if let Ok((length, from)) = front.recv_from(&mut buffer) {
                    joiner = Some(from);
                    if !cut {
                        let _ = back.send_to(&buffer[..length], ("127.0.0.1", host_port));
                    }
                }
                if let Ok((length, _)) = back.recv_from(&mut buffer) {
                    if let (Some(joiner), false) = (joiner, cut) {
                        let _ = front.send_to(&buffer[..length], joiner);
                    }
                }
            }
        });
        Relay {
            port,
            cut,
            rebind,
            stop,
            thread: Some(thread),
        }
    }

    fn set_cut(&self, cut: bool) {
        self.cut.store(cut, std::sync::atomic::Ordering::Relaxed);
    }

    /// From now on the host sees the joiner at another port, as after a
    /// NAT rebinding (what the old port is sent no longer reaches it).
    fn rebind(&self) {
        self.rebind
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A 900-frame Duel match whose joiner, behind a relay, is cut off 3 s
/// after the match began for `outage`, then reconnected (from a new port
/// when `new_port`): the outputs of host and joiner, which ended alike.
fn play_through_outage(
    game: &[&str],
    outage: Duration,
    new_port: bool,
) -> (std::process::Output, std::process::Output) {
    let dir = tempfile::tempdir().unwrap();
    let host_args = ["--frames", "900", "--inputs", "random:1", "--json"];
    let join_args = ["--frames", "900", "--inputs", "random:2", "--json"];
    let (mut host, port) = start_host(dir.path(), game, &host_args);
    let relay = Relay::to_host(port);
    let join = start_join(relay.port, game, &join_args);
    host.wait_for_stdout("the match began", MATCH_TIMEOUT);
    std::thread::sleep(Duration::from_secs(3));
    relay.set_cut(true);
    std::thread::sleep(outage);
    if new_port {
        relay.rebind();
    }
    relay.set_cut(false);
    let timeout = MATCH_TIMEOUT + outage + Duration::from_secs(15);
    let (host, join) = (host.finish(timeout), join.finish(timeout));
    drop(relay);
    assert_same_ending(&host, &join, 900);
    (host, join)
}

#[test]
fn a_two_second_outage_stalls_both_sides_and_the_match_resumes_in_sync() {
    let arena = support::dojo_arena();
    let game = ["--core", "duel", "--rom", &arena];
    let (host, join) = play_through_outage(&game, Duration::from_secs(2), false);
    for output in [&host, &join] {
        let errors = stderr(output);
        assert!(errors.contains("warning: waiting for P"), "{errors}");
        assert!(errors.contains(" is heard again"), "{errors}");
        // Stalled through most of the outage (not run ahead blindly).
        let stalls = last_json(output)["netplay"]["stall_frames"]
            .as_u64()
            .unwrap();
        assert!(stalls > 60, "{stalls} stall frames");
    }
}

#[test]
fn a_joiner_cut_off_for_ten_seconds_comes_back_from_a_new_port_and_the_hosts_replay_verifies_across_the_gap(
) {
    let arena = support::dojo_arena();
    let game = ["--core", "duel", "--rom", &arena];
    // Twice the 5 s after which a silent peer used to be dropped.
    let (host, join) = play_through_outage(&game, Duration::from_secs(10), true);
    let errors = stderr(&host);
    assert!(errors.contains("warning: waiting for P2…"), "{errors}");
    assert!(
        errors.contains("note: P2 is back, from a new address"),
        "{errors}"
    );
    let host_json = last_json(&host);
    // docs/measurements.md: frames lost and the match's time beyond its
    // 15 s and the outage's 10 s (`-- --nocapture` shows them).
    for (side, output) in [("host", &host), ("join", &join)] {
        let json = last_json(output);
        eprintln!(
            "{side}: {} stall frames, {:.2} s in all",
            json["netplay"]["stall_frames"], json["seconds"]
        );
    }
    verified_replay(&host_json, &game);
}

/// Plays the replay the host's summary `host_json` names with `--verify`:
/// it verifies over the match's 900 frames and ends on the checksum the
/// match ended on (the host's replay runs across any gap). Its summary.
fn verified_replay(host_json: &serde_json::Value, game: &[&str]) -> serde_json::Value {
    let replay = host_json["replay"]["path"].as_str().unwrap();
    let verified = netcade(
        &[
            &["replay", "play", replay, "--headless", "--verify", "--json"][..],
            game,
        ]
        .concat(),
    );
    assert!(verified.status.success(), "{verified:?}");
    let played = last_json(&verified);
    assert_eq!(played["frames"], 900, "{played}");
    assert_eq!(
        played["checksums"]["memory"], host_json["checksums"]["memory"],
        "the replay ends where the match ended"
    );
    played
}

#[test]
fn a_host_with_max_spectators_0_refuses_a_spectator_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    let game = ["--core", "duel", "--rom", arena.as_str()];
    let (mut host, port) = start_host(dir.path(), &game, &["--max-spectators", "0"]);
    let refused = start_spectator(port, &game, &[]).finish(MATCH_TIMEOUT);
    host.kill();
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let errors = stderr(&refused);
    assert_eq!(
        errors.trim_end(),
        "error: the host refused to let us watch: no spectators allowed",
        "{errors}"
    );
}

#[test]
fn a_joiner_killed_mid_match_and_restarted_with_rejoin_ends_on_the_hosts_checksum_and_the_hosts_replay_verifies(
) {
    let (dir, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let arena = support::dojo_arena();
    let game = ["--core", "duel", "--rom", &arena];
    let host_args = ["--frames", "900", "--inputs", "random:1", "--json"];
    let (mut host, port) = start_host(dir.path(), &game, &host_args);
    let address = format!("127.0.0.1:{port}");
    let join_args = [
        &["join", address.as_str()][..],
        &game,
        &["--frames", "900", "--inputs", "random:2", "--json"],
    ]
    .concat();
    let (mut again, restarted_at) =
        kill_and_restart(&mut host, &join_args, data.path(), MATCH_TIMEOUT);
    let timeout = MATCH_TIMEOUT + Duration::from_secs(15);
    again.wait_for_stdout("resuming the match at frame", timeout);
    let restart_to_play = restarted_at.elapsed();
    let (host, again) = (host.finish(timeout), again.finish(timeout));
    assert_same_ending(&host, &again, 900);
    let errors = stderr(&host);
    assert!(
        errors.contains("note: P2 is back, from a new address"),
        "{errors}"
    );
    assert!(
        errors.contains("note: P2 restarted: sent it the state of frame"),
        "{errors}"
    );
    let said = stdout(&again);
    assert!(said.contains("resuming the match at frame"), "{said}");
    assert!(
        tickets_in(data.path()).is_empty(),
        "a match that ended leaves no ticket"
    );
    // docs/measurements.md: the stall and the restarted side's first frame
    // (`-- --nocapture` shows them).
    let (host_json, again_json) = (last_json(&host), last_json(&again));
    eprintln!(
        "restart to play: {} ms; host: {} stall frames, {:.2} s in all; restarted joiner: replay from frame {}, {:.2} s",
        restart_to_play.as_millis(),
        host_json["netplay"]["stall_frames"],
        host_json["seconds"],
        900 - again_json["replay"]["frames"].as_u64().unwrap(),
        again_json["seconds"]
    );
    let played = verified_replay(&host_json, &game);
    assert_eq!(played["first_frame"], 0, "{played}");
}

#[test]
fn join_rejoin_without_a_ticket_or_with_a_damaged_one_says_so_in_one_line() {
    let (dir, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let arena = support::dojo_arena();
    let env = [("XDG_DATA_HOME", data.path())];
    let args = [
        "join",
        "127.0.0.1:9",
        "--rejoin",
        "--core",
        "duel",
        "--rom",
        &arena,
    ];
    let none = netcade_in_with_env(dir.path(), &env, &args);
    assert_eq!(none.status.code(), Some(2), "{none:?}");
    let errors = stderr(&none);
    assert!(
        errors.starts_with(
            "error: no match to rejoin at 127.0.0.1:9: this machine holds no ticket for it"
        ),
        "{errors}"
    );
    assert_eq!(errors.lines().count(), 1, "{errors}");

    let tickets = data.path().join("netcade/rejoin");
    std::fs::create_dir_all(&tickets).unwrap();
    std::fs::write(
        tickets.join("127_0_0_1_9.ticket"),
        "netcade rejoin ticket 1\nhost 127.0.0.1:9\nslot 1\ntoken zz\n",
    )
    .unwrap();
    let damaged = netcade_in_with_env(dir.path(), &env, &args);
    assert_eq!(damaged.status.code(), Some(2), "{damaged:?}");
    let errors = stderr(&damaged);
    assert!(errors.starts_with("error: the rejoin ticket "), "{errors}");
    assert!(
        errors.contains("cannot be used: its session token is not 8 hex digits"),
        "{errors}"
    );
    assert_eq!(errors.lines().count(), 1, "{errors}");
}

#[test]
fn joining_a_retroarch_address_where_nothing_listens_is_one_error_line() {
    // A port just freed: nothing listens on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let address = format!("retroarch://127.0.0.1:{port}");
    let arena = support::dojo_arena();
    let output = netcade(&[
        "join",
        &address,
        "--core",
        "duel",
        "--rom",
        &arena,
        "--headless",
        "--frames",
        "10",
    ]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let error = stderr(&output);
    assert!(
        error.starts_with(&format!(
            "error: cannot connect to RetroArch host 127.0.0.1:{port}"
        )),
        "{error}"
    );
    assert_eq!(error.lines().count(), 1, "{error}");
    let output = netcade(&["join", "retroarch://", "--core", "duel", "--headless"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("names no host"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn hosting_retroarch_players_on_a_busy_port_is_one_error_line() {
    let taken = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let arena = support::dojo_arena();
    let output = netcade(&[
        "host",
        "--retroarch",
        "--port",
        &port,
        "--core",
        "duel",
        "--rom",
        &arena,
        "--headless",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let error = stderr(&output);
    assert!(
        error.starts_with(&format!("error: cannot listen on TCP port {port}")),
        "{error}"
    );
    assert_eq!(error.lines().count(), 1, "{error}");
}

#[test]
fn a_retroarch_password_without_retroarch_is_refused() {
    let output = netcade(&[
        "host",
        "--password",
        "sesame",
        "--core",
        "duel",
        "--headless",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("--retroarch"),
        "{}",
        stderr(&output)
    );
}
