//! netcade against a real RetroArch (Debian's 1.14, protocol 6) on
//! loopback with stella: `join retroarch://127.0.0.1:PORT` plays in a
//! RetroArch host's match, and RetroArch's own CRC checks (every 30
//! frames) find netcade's states equal to the host's; `host --retroarch`
//! hosts a RetroArch player, whose checks of netcade's CRCs find its
//! states equal to netcade's.

use std::path::PathBuf;
use std::time::Duration;
use support::cli::spawn_host;
use support::cli::{last_json, netcade, spawn_netcade, stderr, stdout};
use support::servers::{start_retroarch_client, start_retroarch_host, RetroArchHost};
use support::{real_core, real_rom};

fn stella_boxing() -> Option<(PathBuf, PathBuf)> {
    Some((real_core("stella")?, real_rom("boxing.bin")?))
}

/// RetroArch hosting stella Boxing for `max_frames` frames in a folder of
/// its own (kept while the test runs), with the config lines `extra`; or
/// `None` after a SKIPPED line when something is missing.
fn host_boxing(
    max_frames: u32,
    extra: &str,
) -> Option<(tempfile::TempDir, RetroArchHost, (PathBuf, PathBuf))> {
    let game = stella_boxing()?;
    let dir = tempfile::tempdir().unwrap();
    let host = start_retroarch_host(dir.path(), &game.0, &game.1, max_frames, extra)?;
    Some((dir, host, game))
}

/// `netcade COMMAND retroarch://127.0.0.1:PORT` with `game`, headless,
/// then `extra` (no replay unless `extra` records one).
fn against(command: &str, port: u16, game: &(PathBuf, PathBuf), extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec![
        command.into(),
        format!("retroarch://127.0.0.1:{port}"),
        "--core".into(),
        game.0.display().to_string(),
        "--rom".into(),
        game.1.display().to_string(),
        "--headless".into(),
    ];
    if !extra.contains(&"--record") {
        args.push("--no-record".into());
    }
    args.extend(extra.iter().map(|arg| arg.to_string()));
    args
}

fn run_against(
    command: &str,
    port: u16,
    game: &(PathBuf, PathBuf),
    extra: &[&str],
) -> std::process::Output {
    let args = against(command, port, game, extra);
    netcade(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn spawn_against(
    command: &str,
    port: u16,
    game: &(PathBuf, PathBuf),
    extra: &[&str],
) -> support::cli::Background {
    let args = against(command, port, game, extra);
    spawn_netcade(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn join(host: &RetroArchHost, game: &(PathBuf, PathBuf), extra: &[&str]) -> std::process::Output {
    run_against("join", host.port, game, extra)
}

#[test]
#[cfg_attr(
    not(all(netcade_server_retroarch, netcade_test_content)),
    ignore = "needs retroarch on PATH and the real cores (scripts/fetch-test-content)"
)]
fn a_netcade_player_plays_a_retroarch_hosts_match_with_every_crc_matching() {
    let Some((dir, host, game)) = host_boxing(3600, "") else {
        return;
    };
    let frame_log = dir.path().join("frames.txt");
    let replay = dir.path().join("match.ncr");
    let output = join(
        &host,
        &game,
        &[
            "--frames",
            "1800",
            "--inputs",
            "random:7",
            "--json",
            "--frame-log",
            frame_log.to_str().unwrap(),
            "--record",
            replay.to_str().unwrap(),
        ],
    );
    assert!(
        output.status.success(),
        "{}\n{}\nRetroArch:\n{}",
        stdout(&output),
        stderr(&output),
        host.log_text()
    );
    let report = last_json(&output);
    assert_eq!(report["frames"], 1800, "{report}");
    assert_eq!(report["port"], 1, "netcade plays player 2: {report}");
    // One check every 30 frames, on frames both sides played.
    let checks = report["crc_checks"].as_u64().unwrap();
    assert!(checks >= 50, "only {checks} CRC checks: {report}");
    assert_eq!(report["crc_mismatches"], 0, "{report}\n{}", stderr(&output));
    assert_eq!(report["states_loaded"], 1, "no repair was needed: {report}");
    let log = std::fs::read_to_string(&frame_log).unwrap();
    assert_eq!(log.lines().count(), 1800);
    let (first, last) = (&report["first_host_frame"], &report["last_host_frame"]);
    assert_eq!(
        last.as_u64().unwrap() - first.as_u64().unwrap(),
        1799,
        "{report}"
    );
    // The match's replay plays back to the same checkpoints.
    let verified = netcade(&[
        "replay",
        "play",
        replay.to_str().unwrap(),
        "--headless",
        "--verify",
    ]);
    assert!(verified.status.success(), "{}", stderr(&verified));
    // The host saw us play and leave.
    let ra = host.log_once_it_says("\"netcade\" has disconnected", Duration::from_secs(10));
    assert!(ra.contains("netcade has joined as player 2"), "{ra}");
    assert!(ra.contains("\"netcade\" has disconnected"), "{ra}");
    assert!(!ra.contains("desync"), "{ra}");
    // RetroArch computed the same content CRC-32 as the one netcade sent.
    assert!(!ra.contains("CRC32s differ"), "{ra}");
}

#[test]
#[cfg_attr(
    not(all(netcade_server_retroarch, netcade_test_content)),
    ignore = "needs retroarch on PATH and the real cores (scripts/fetch-test-content)"
)]
fn joining_a_retroarch_host_with_another_core_names_both_cores() {
    let Some(other) = real_core("genesis_plus_gx").zip(real_rom("airstriker.md")) else {
        return;
    };
    let Some((_dir, host, _)) = host_boxing(1200, "") else {
        return;
    };
    let output = join(&host, &other, &["--frames", "60"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let error = stderr(&output);
    assert!(
        error.contains("error: the host runs Stella")
            && error.contains("you chose Genesis Plus GX"),
        "{error}"
    );
}

#[test]
#[cfg_attr(
    not(all(netcade_server_retroarch, netcade_test_content)),
    ignore = "needs retroarch on PATH and the real cores (scripts/fetch-test-content)"
)]
fn a_retroarch_host_with_a_password_refuses_a_wrong_one_and_lets_the_right_one_play() {
    let password = "netplay_password = \"sesame\"\n";
    let Some((_dir, host, game)) = host_boxing(2400, password) else {
        return;
    };
    let none = join(&host, &game, &["--frames", "60"]);
    assert_eq!(none.status.code(), Some(2), "{}", stderr(&none));
    assert!(
        stderr(&none).contains("give --password"),
        "{}",
        stderr(&none)
    );
    let wrong = join(&host, &game, &["--frames", "60", "--password", "open"]);
    assert_eq!(wrong.status.code(), Some(2), "{}", stderr(&wrong));
    assert!(
        stderr(&wrong).contains("the host refused the password"),
        "{}",
        stderr(&wrong)
    );
    let right = join(
        &host,
        &game,
        &["--frames", "120", "--password", "sesame", "--json"],
    );
    assert!(
        right.status.success(),
        "{}\n{}",
        stderr(&right),
        host.log_text()
    );
    assert_eq!(last_json(&right)["crc_mismatches"], 0);
}

#[test]
#[cfg_attr(
    not(all(netcade_server_retroarch, netcade_test_content)),
    ignore = "needs retroarch on PATH and the real cores (scripts/fetch-test-content)"
)]
fn states_that_differ_from_the_hosts_are_found_by_its_crcs_and_replaced_by_its_resend() {
    // Another cartridge of the same size: every frame's state departs from
    // the host's, so every check mismatches and asks for the host's state.
    let Some(other_rom) = real_rom("combat.bin") else {
        return;
    };
    let Some((_dir, host, game)) = host_boxing(2400, "") else {
        return;
    };
    let ours = (game.0.clone(), other_rom);
    let output = join(
        &host,
        &ours,
        &["--frames", "600", "--inputs", "random:3", "--json"],
    );
    assert!(
        output.status.success(),
        "{}\n{}",
        stderr(&output),
        host.log_text()
    );
    assert!(
        stderr(&output).contains("not the same file as yours"),
        "{}",
        stderr(&output)
    );
    let report = last_json(&output);
    let mismatches = report["crc_mismatches"].as_u64().unwrap();
    let loaded = report["states_loaded"].as_u64().unwrap();
    assert!(mismatches >= 10, "{report}");
    // The first state, then one resent for (nearly) every mismatch: a
    // mismatch found while a resend is on its way asks for none.
    assert!(loaded > mismatches / 2 + 1, "{report}");
    assert!(stderr(&output).contains("asking for its state"));
}

#[test]
#[cfg_attr(
    not(all(netcade_server_retroarch, netcade_test_content)),
    ignore = "needs retroarch on PATH and the real cores (scripts/fetch-test-content)"
)]
fn a_retroarch_host_killed_mid_match_ends_it_cleanly_with_the_peer_lost() {
    let Some((_dir, mut host, game)) = host_boxing(7200, "") else {
        return;
    };
    let mut joiner = spawn_against("join", host.port, &game, &["--frames", "3600", "--json"]);
    joiner.wait_for_stdout("playing as player 2", Duration::from_secs(20));
    std::thread::sleep(Duration::from_secs(2));
    host.process.child.kill().unwrap();
    let output = joiner.finish(Duration::from_secs(20));
    assert_eq!(output.status.code(), Some(6), "{}", stderr(&output));
    let report = last_json(&output);
    assert_eq!(
        report["ended"], "the host left before the last frame",
        "{report}"
    );
    let frames = report["frames"].as_u64().unwrap();
    assert!((60..3600).contains(&frames), "{report}");
}

/// `netcade host --retroarch` hosting stella Boxing (`game`) on a free
/// port with the arguments `extra`, its port read back.
fn host_for_retroarch(
    dir: &std::path::Path,
    game: &(PathBuf, PathBuf),
    extra: &[&str],
) -> (support::cli::Background, u16) {
    let (core, rom) = (game.0.to_str().unwrap(), game.1.to_str().unwrap());
    let mut args = vec!["--retroarch", "--core", core, "--rom", rom, "--headless"];
    if !extra.contains(&"--record") {
        args.push("--no-record");
    }
    args.extend_from_slice(extra);
    spawn_host(dir, &args, Duration::from_secs(20))
}

/// A RetroArch of its own folder in `dir` joining loopback `port` with
/// `core` and `rom` for `max_frames` frames.
fn retroarch_joins(
    dir: &std::path::Path,
    core: &std::path::Path,
    rom: &std::path::Path,
    port: u16,
    max_frames: u32,
) -> Option<RetroArchHost> {
    let folder = dir.join("retroarch");
    std::fs::create_dir_all(&folder).unwrap();
    start_retroarch_client(&folder, core, rom, port, max_frames, "")
}

#[test]
#[cfg_attr(
    not(all(netcade_server_retroarch, netcade_test_content)),
    ignore = "needs retroarch on PATH and the real cores (scripts/fetch-test-content)"
)]
fn a_retroarch_player_plays_a_netcade_hosts_match_and_finds_every_crc_equal() {
    let Some(game) = stella_boxing() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let frame_log = dir.path().join("frames.txt");
    let replay = dir.path().join("match.ncr");
    let (host, port) = host_for_retroarch(
        dir.path(),
        &game,
        &[
            "--record",
            replay.to_str().unwrap(),
            "--frames",
            "1200",
            "--inputs",
            "random:5",
            "--json",
            "--frame-log",
            frame_log.to_str().unwrap(),
        ],
    );
    let Some(client) = retroarch_joins(dir.path(), &game.0, &game.1, port, 6000) else {
        return;
    };
    let output = host.finish(Duration::from_secs(90));
    assert!(
        output.status.success(),
        "{}\n{}\nRetroArch:\n{}",
        stdout(&output),
        stderr(&output),
        client.log_text()
    );
    let report = last_json(&output);
    assert_eq!(report["frames"], 1200, "{report}");
    assert_eq!(
        report["players"][0]["port"], 1,
        "RetroArch plays player 2: {report}"
    );
    // One CRC every 30 frames, and RetroArch never asked for our state:
    // each one it checked matched its own.
    let crcs = report["crcs_sent"].as_u64().unwrap();
    assert!(crcs >= 39, "only {crcs} CRCs: {report}");
    assert_eq!(report["states_asked"], 0, "{report}");
    assert_eq!(report["states_sent"], 1, "{report}");
    // A player running ahead of the host's clock is told to wait, at most
    // once in 120 frames (RetroArch 1.14 keeps within its own latency).
    let stalls = report["stalls_sent"].as_u64().expect("stalls counted");
    assert!(stalls <= 1200 / 120, "{stalls} stalls: {report}");
    eprintln!("STALLs sent to RetroArch: {stalls}");
    assert_eq!(
        std::fs::read_to_string(&frame_log).unwrap().lines().count(),
        1200
    );
    // The match's replay plays back to the same checkpoints.
    let verified = netcade(&[
        "replay",
        "play",
        replay.to_str().unwrap(),
        "--headless",
        "--verify",
    ]);
    assert!(verified.status.success(), "{}", stderr(&verified));
    let ra = client.log_once_it_says("disconnected", Duration::from_secs(10));
    assert!(ra.contains("joined as player 2"), "{ra}");
    assert!(!ra.contains("CRC32s differ"), "{ra}");
    assert!(!ra.contains("different core"), "{ra}");
    // Pausing is allowed now, and nobody paused: RetroArch never stopped.
    assert!(!ra.contains("paused"), "{ra}");
}

#[test]
#[cfg_attr(
    not(all(netcade_server_retroarch, netcade_test_content)),
    ignore = "needs retroarch on PATH and the real cores (scripts/fetch-test-content)"
)]
fn a_retroarch_player_with_other_states_asks_for_the_hosts_and_gets_it() {
    // Another cartridge of the same size on RetroArch's side: its states
    // depart from netcade's, its CRC checks find it and ask for ours.
    let Some((game, other_rom)) = stella_boxing().zip(real_rom("combat.bin")) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (host, port) = host_for_retroarch(dir.path(), &game, &["--frames", "600", "--json"]);
    let Some(client) = retroarch_joins(dir.path(), &game.0, &other_rom, port, 6000) else {
        return;
    };
    let output = host.finish(Duration::from_secs(60));
    assert!(
        output.status.success(),
        "{}\n{}",
        stderr(&output),
        client.log_text()
    );
    let report = last_json(&output);
    let asked = report["states_asked"].as_u64().unwrap();
    assert!(asked >= 3, "{report}");
    assert_eq!(
        report["states_sent"].as_u64().unwrap(),
        asked + 1,
        "{report}"
    );
    assert!(
        stderr(&output).contains("is not the same file as yours"),
        "{}",
        stderr(&output)
    );
}

#[test]
#[cfg_attr(
    not(all(netcade_server_retroarch, netcade_test_content)),
    ignore = "needs retroarch on PATH and the real cores (scripts/fetch-test-content)"
)]
fn a_netcade_spectator_of_a_retroarch_host_ends_on_frames_agreeing_with_its_crcs() {
    // RetroArch's host checks its match only while someone plays with it:
    // a netcade player joins first, then a netcade spectator watches.
    let Some((dir, host, game)) = host_boxing(7200, "") else {
        return;
    };
    let frame_log = dir.path().join("frames.txt");
    let mut player = spawn_against(
        "join",
        host.port,
        &game,
        &[
            "--frames", "2400", "--inputs", "random:9", "--name", "player",
        ],
    );
    player.wait_for_stdout("playing as player 2", Duration::from_secs(20));
    let output = run_against(
        "spectate",
        host.port,
        &game,
        &[
            "--frames",
            "900",
            "--json",
            "--frame-log",
            frame_log.to_str().unwrap(),
        ],
    );
    assert!(
        output.status.success(),
        "{}\n{}\nRetroArch:\n{}",
        stdout(&output),
        stderr(&output),
        host.log_text()
    );
    let report = last_json(&output);
    assert_eq!(report["frames"], 900, "{report}");
    assert_eq!(
        report["port"],
        serde_json::Value::Null,
        "a spectator plays no port: {report}"
    );
    let checks = report["crc_checks"].as_u64().unwrap();
    assert!(checks >= 25, "only {checks} CRC checks: {report}");
    assert_eq!(report["crc_mismatches"], 0, "{report}");
    assert_eq!(report["states_loaded"], 1, "{report}");
    assert_eq!(
        std::fs::read_to_string(&frame_log).unwrap().lines().count(),
        900
    );
    let played = player.finish(Duration::from_secs(60));
    assert!(played.status.success(), "{}", stderr(&played));
    let ra = host.log_text();
    assert!(
        !ra.contains("netcade has joined as player"),
        "it only watched: {ra}"
    );
}

#[test]
#[cfg_attr(
    not(all(netcade_server_retroarch, netcade_test_content)),
    ignore = "needs retroarch on PATH and the real cores (scripts/fetch-test-content)"
)]
fn a_netcade_host_for_retroarch_players_checks_passwords_to_play_and_to_watch() {
    let Some(game) = stella_boxing() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (host, port) = host_for_retroarch(
        dir.path(),
        &game,
        &[
            "--password",
            "sesame",
            "--spectate-password",
            "peek",
            "--json",
        ],
    );
    let join = |extra: &[&str]| run_against("join", port, &game, extra);
    let none = join(&["--frames", "60"]);
    assert_eq!(none.status.code(), Some(2), "{}", stderr(&none));
    assert!(stderr(&none).contains("error: the host asks for a password: give --password"));
    let wrong = join(&["--frames", "60", "--password", "open"]);
    assert_eq!(wrong.status.code(), Some(2), "{}", stderr(&wrong));
    let error = stderr(&wrong);
    assert!(
        error.contains("error: the host refused the password"),
        "{error}"
    );
    assert_eq!(error.matches("error:").count(), 1, "{error}");
    let watcher = join(&["--frames", "60", "--password", "peek", "--json"]);
    assert!(watcher.status.success(), "{}", stderr(&watcher));
    assert!(stdout(&watcher).contains("the host refused to let us play (not allowed): watching"));
    assert_eq!(last_json(&watcher)["port"], serde_json::Value::Null);
    let player = join(&[
        "--frames",
        "300",
        "--password",
        "sesame",
        "--json",
        "--inputs",
        "random:4",
    ]);
    assert!(player.status.success(), "{}", stderr(&player));
    let played = last_json(&player);
    assert_eq!(played["port"], 1, "{played}");
    assert_eq!(played["crc_mismatches"], 0, "{played}");
    assert!(played["crc_checks"].as_u64().unwrap() >= 9, "{played}");
    // The only player left: the host ends, having turned away the two
    // wrong passwords without ending.
    let hosted = host.finish(Duration::from_secs(20));
    assert!(hosted.status.success(), "{}", stderr(&hosted));
    let warnings = stderr(&hosted);
    assert_eq!(
        warnings.matches("gave no right password").count(),
        2,
        "{warnings}"
    );
    assert_eq!(last_json(&hosted)["ended"], "the players left");
}

#[test]
#[cfg_attr(
    not(all(netcade_server_retroarch, netcade_test_content)),
    ignore = "needs retroarch on PATH and the real cores (scripts/fetch-test-content)"
)]
fn another_core_joining_a_netcade_host_is_turned_away_naming_both_cores() {
    let Some((game, other)) =
        stella_boxing().zip(real_core("genesis_plus_gx").zip(real_rom("airstriker.md")))
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (mut host, port) = host_for_retroarch(dir.path(), &game, &[]);
    // A netcade joiner is told both cores.
    let joiner = run_against("join", port, &other, &[]);
    assert_eq!(joiner.status.code(), Some(2), "{}", stderr(&joiner));
    let error = stderr(&joiner);
    assert!(
        error.contains("error: the host runs Stella")
            && error.contains("you chose Genesis Plus GX"),
        "{error}"
    );
    // A RetroArch one leaves on reading our core, which the host names.
    let Some(client) = retroarch_joins(dir.path(), &other.0, &other.1, port, 600) else {
        return;
    };
    host.wait_for_stderr(
        "RetroArch leaves there only when it runs another core",
        Duration::from_secs(30),
    );
    let ra = client.log_once_it_says("running a different core", Duration::from_secs(10));
    assert!(ra.contains("running a different core"), "{ra}");
    host.interrupt();
    let output = host.finish(Duration::from_secs(20));
    let warnings = stderr(&output);
    assert!(
        warnings.contains("left on reading this host's core, Stella"),
        "{warnings}"
    );
}

#[test]
#[cfg_attr(
    not(all(netcade_server_retroarch, netcade_test_content)),
    ignore = "needs retroarch on PATH and the real cores (scripts/fetch-test-content)"
)]
fn a_retroarch_player_killed_mid_match_ends_the_netcade_hosts_match_cleanly() {
    let Some(game) = stella_boxing() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (mut host, port) = host_for_retroarch(dir.path(), &game, &["--frames", "3600", "--json"]);
    let Some(mut client) = retroarch_joins(dir.path(), &game.0, &game.1, port, 7200) else {
        return;
    };
    host.wait_for_stdout("plays as player 2", Duration::from_secs(30));
    std::thread::sleep(Duration::from_secs(2));
    client.process.child.kill().unwrap();
    let output = host.finish(Duration::from_secs(20));
    assert_eq!(output.status.code(), Some(6), "{}", stderr(&output));
    let report = last_json(&output);
    assert_eq!(
        report["ended"], "the players left before the last frame",
        "{report}"
    );
    let frames = report["frames"].as_u64().unwrap();
    assert!((60..3600).contains(&frames), "{report}");
}
