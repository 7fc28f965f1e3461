//! Replays of real netplay matches: `netcade host`, `netcade join` and
//! `netcade spectate` over loopback UDP record their matches, and each
//! replay plays back to the match's checksums.

use std::time::Duration;
use support::cli::{last_json, netcade, spawn_host, spawn_netcade, stderr, stdout};

/// Generous: only guards against a hang.
const MATCH_TIMEOUT: Duration = Duration::from_secs(120);

/// Plays a `frames`-frame Duel match with `extra` on both sides, each
/// recording into `dir`; returns both sides' JSON and replay paths.
fn recorded_match(
    dir: &std::path::Path,
    frames: u32,
    extra: &[&str],
) -> [(serde_json::Value, String); 2] {
    recorded_match_watched(dir, frames, extra, None).0
}

/// One machine's JSON summary and replay path.
type Recorded = (serde_json::Value, String);

/// [`recorded_match`], with a spectator joining `watch_after` after the
/// match began (when given) and recording too; returns its JSON and replay
/// path as well.
fn recorded_match_watched(
    dir: &std::path::Path,
    frames: u32,
    extra: &[&str],
    watch_after: Option<Duration>,
) -> ([Recorded; 2], Option<Recorded>) {
    let arena = support::dojo_arena();
    let frames = frames.to_string();
    let host_replay = dir.join("host.ncr").display().to_string();
    let join_replay = dir.join("join.ncr").display().to_string();
    let mut host_args = vec![
        "--core",
        "duel",
        "--rom",
        &arena,
        "--frames",
        &frames,
        "--inputs",
        "random:1",
        "--json",
        "--record",
        &host_replay,
    ];
    host_args.extend_from_slice(extra);
    let (mut host, port) = spawn_host(dir, &host_args, MATCH_TIMEOUT);
    let address = format!("127.0.0.1:{port}");
    let mut join_args = vec![
        "join",
        &address,
        "--core",
        "duel",
        "--rom",
        &arena,
        "--frames",
        &frames,
        "--inputs",
        "random:2",
        "--json",
        "--record",
        &join_replay,
    ];
    join_args.extend_from_slice(extra);
    let join = spawn_netcade(&join_args);
    let spectator_replay = dir.join("spectator.ncr").display().to_string();
    let spectator = watch_after.map(|after| {
        host.wait_for_stdout("the match began", MATCH_TIMEOUT);
        std::thread::sleep(after);
        spawn_netcade(&[
            "spectate",
            &address,
            "--core",
            "duel",
            "--rom",
            &arena,
            "--frames",
            &frames,
            "--json",
            "--record",
            &spectator_replay,
        ])
    });
    let join = join.finish(MATCH_TIMEOUT);
    let host = host.finish(MATCH_TIMEOUT);
    let (host, join) = (last_json(&host), last_json(&join));
    assert_eq!(host["replay"]["path"], host_replay.as_str(), "{host}");
    assert_eq!(join["replay"]["path"], join_replay.as_str(), "{join}");
    let spectator = spectator.map(|spectator| {
        let watched = spectator.finish(MATCH_TIMEOUT);
        assert!(watched.status.success(), "{watched:?}");
        assert!(
            stdout(&watched).contains(&format!("\nreplay: {spectator_replay}\n")),
            "{watched:?}"
        );
        let watched = last_json(&watched);
        assert_eq!(
            watched["replay"]["path"],
            spectator_replay.as_str(),
            "{watched}"
        );
        (watched, spectator_replay)
    });
    ([(host, host_replay), (join, join_replay)], spectator)
}

#[test]
fn a_match_is_recorded_into_the_replays_folder_unless_told_not_to() {
    let dir = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    let game = [
        "--core", "duel", "--rom", &arena, "--frames", "60", "--json",
    ];
    let (host, port) = spawn_host(
        dir.path(),
        &[&game[..], &["--no-record"]].concat(),
        MATCH_TIMEOUT,
    );
    let address = format!("127.0.0.1:{port}");
    let join = spawn_netcade(&[&["join", &address][..], &game[..]].concat()).finish(MATCH_TIMEOUT);
    let (host, join) = (last_json(&host.finish(MATCH_TIMEOUT)), last_json(&join));
    assert!(host["replay"].is_null(), "{host}");
    let path = std::path::PathBuf::from(join["replay"]["path"].as_str().unwrap());
    assert!(
        path.starts_with(support::cli::test_replay_dir()),
        "{path:?}"
    );
    let name = path.file_name().unwrap().to_str().unwrap();
    // 2026-11-22_21-04-17_duel_dojo.ncr (-2 … when taken).
    assert!(
        name.starts_with("20") && name.contains("_duel_dojo"),
        "{name}"
    );
    assert!(name.ends_with(".ncr"), "{name}");
    let verified = netcade(&[
        "replay",
        "play",
        path.to_str().unwrap(),
        "--headless",
        "--verify",
    ]);
    assert!(verified.status.success(), "{verified:?}");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn both_sides_of_a_recorded_match_verify_and_play_back_to_the_matchs_checksums() {
    let dir = tempfile::tempdir().unwrap();
    let sides = recorded_match(dir.path(), 300, &["--sim-latency", "20"]);
    for (json, replay) in &sides {
        assert_eq!(json["end"], "finished", "{json}");
        let verified = netcade(&["replay", "play", replay, "--headless", "--verify", "--json"]);
        assert!(verified.status.success(), "{verified:?}");
        let verdict = last_json(&verified);
        assert_eq!(verdict["verified"], true);
        assert!(
            verdict["checkpoints_checked"].as_u64().unwrap() >= 5,
            "{verdict}"
        );
        let played = netcade(&[
            "replay",
            "play",
            replay,
            "--headless",
            "--frames",
            "300",
            "--json",
        ]);
        assert!(played.status.success(), "{played:?}");
        assert_eq!(
            last_json(&played)["checksums"]["memory"],
            json["checksums"]["memory"]
        );
    }
    // Both machines recorded the same final frames (one may hold a few more).
    let diff = stdout(&netcade(&["replay", "diff", &sides[0].1, &sides[1].1]));
    assert!(
        diff.starts_with("identical") || diff.contains("then one ends"),
        "{diff}"
    );
    let info = last_json(&netcade(&["replay", "info", &sides[1].1, "--json"]));
    assert!(
        info["player_names"][0]
            .as_str()
            .unwrap()
            .starts_with("127.0.0.1:"),
        "{info}"
    );
    assert_eq!(info["end"]["reason"], "finished");
}

#[test]
fn the_joiners_replay_keeps_each_desync_repair_with_the_hosts_state() {
    let dir = tempfile::tempdir().unwrap();
    let dumps = dir.path().join("dumps").display().to_string();
    // As in cli_netplay: state left out of Duel's savestate makes the
    // machines' different rollbacks diverge, and the joiner repairs.
    let extra = [
        "--option",
        "duel_inject_nondeterminism=enabled",
        "--mode",
        "rollback",
        "--sim-latency",
        "30",
        "--dump-dir",
        &dumps,
    ];
    let [_, (joined, replay)] = recorded_match(dir.path(), 600, &extra);
    let repairs = joined["netplay"]["repairs"].as_u64().unwrap();
    assert!(repairs >= 1, "{joined}");
    let info = last_json(&netcade(&["replay", "info", &replay, "--json"]));
    assert_eq!(info["repairs"].as_u64(), Some(repairs), "{info}");
    assert_eq!(info["core_options"][0]["value"], "enabled", "{info}");
    // The core is not deterministic, so verifying would fail: playing it
    // through, loading each repair on the way, still works.
    let played = netcade(&["replay", "play", &replay, "--headless", "--json"]);
    assert!(played.status.success(), "{played:?}");
}

#[test]
fn a_match_left_with_ctrl_c_ends_each_replay_with_why_it_ended() {
    let dir = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    let host_replay = dir.path().join("host.ncr").display().to_string();
    let join_replay = dir.path().join("join.ncr").display().to_string();
    let game = ["--core", "duel", "--rom", &arena, "--json"];
    let (mut host, port) = spawn_host(
        dir.path(),
        &[&game[..], &["--record", &host_replay]].concat(),
        MATCH_TIMEOUT,
    );
    let address = format!("127.0.0.1:{port}");
    let mut join = spawn_netcade(
        &[
            &["join", &address][..],
            &game[..],
            &["--record", &join_replay],
        ]
        .concat(),
    );
    host.wait_for_stdout("the match began", MATCH_TIMEOUT);
    join.wait_for_stdout("the match began", MATCH_TIMEOUT);
    join.interrupt();
    let (host, join) = (host.finish(MATCH_TIMEOUT), join.finish(MATCH_TIMEOUT));
    let info = |path: &str| last_json(&netcade(&["replay", "info", path, "--json"]));
    let (hosted, joined) = (info(&host_replay), info(&join_replay));
    assert_eq!(joined["end"]["reason"], "interrupted", "{join:?}");
    assert_eq!(hosted["end"]["reason"], "disconnect", "{host:?}");
    assert_eq!(hosted["departures"][0]["player"], 2, "{hosted}");
    for replay in [&host_replay, &join_replay] {
        let verified = netcade(&["replay", "play", replay, "--headless", "--verify"]);
        assert!(verified.status.success(), "{verified:?}");
    }
}

#[test]
fn a_spectators_replay_starts_where_they_joined_verifies_and_matches_the_hosts() {
    let dir = tempfile::tempdir().unwrap();
    // About frame 400 of 900; the verdicts do not depend on exactly when.
    let (sides, spectator) = recorded_match_watched(
        dir.path(),
        900,
        &[],
        Some(Duration::from_millis(400 * 1000 / 60)),
    );
    let [(hosted, host_replay), _] = sides;
    let (watched, replay) = spectator.unwrap();
    assert_eq!(watched["end"], "finished", "{watched}");
    let joined = watched["spectator"]["joined_at_frame"].as_u64().unwrap();
    assert!((1..840).contains(&joined), "{watched}");
    let info = last_json(&netcade(&["replay", "info", &replay, "--json"]));
    assert_eq!(info["start_frame"].as_u64(), Some(joined), "{info}");
    assert_eq!(info["end_frame"], 900, "{info}");

    let verified = netcade(&[
        "replay",
        "play",
        &replay,
        "--headless",
        "--verify",
        "--json",
    ]);
    assert!(verified.status.success(), "{verified:?}");
    let verdict = last_json(&verified);
    assert_eq!(verdict["verified"], true, "{verdict}");
    assert!(
        verdict["checkpoints_checked"].as_u64().unwrap() >= 1,
        "{verdict}"
    );
    let played = last_json(&netcade(&[
        "replay",
        "play",
        &replay,
        "--headless",
        "--json",
    ]));
    assert_eq!(played["first_frame"].as_u64(), Some(joined), "{played}");
    assert_eq!(played["checksums"]["memory"], hosted["checksums"]["memory"]);

    // Compared by the match's frame numbers over the frames both hold.
    let diff = netcade(&["replay", "diff", &host_replay, &replay, "--json"]);
    let text = stdout(&diff);
    assert!(
        text.starts_with(&format!("identical over frames {joined}..")),
        "{text}"
    );
    assert!(diff.status.success(), "{diff:?}");

    // Seeking and stepping use the match's numbering too.
    let seek_memory = |path: &str, frame: u64| {
        let frame = frame.to_string();
        let sought = netcade(&[
            "replay",
            "play",
            path,
            "--headless",
            "--seek",
            &frame,
            "--frames",
            "0",
            "--json",
        ]);
        assert!(sought.status.success(), "{sought:?}");
        last_json(&sought)["seek"]["checksums"]["memory"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let later = joined + 100;
    assert_eq!(
        seek_memory(&replay, later),
        seek_memory(&host_replay, later)
    );
    let session =
        support::cli::netcade_with_stdin(&["debug", "--replay", &replay], "step 100\nquit\n");
    assert!(session.status.success(), "{session:?}");
    assert!(
        stdout(&session).contains(&format!(
            "frame={later} memory={}",
            seek_memory(&host_replay, later)
        )),
        "{session:?}"
    );
    let before = netcade(&["replay", "play", &replay, "--headless", "--seek", "0"]);
    assert_eq!(before.status.code(), Some(2), "{before:?}");
    assert_eq!(
        stderr(&before).trim(),
        format!(
            "error: --seek 0: the replay starts at frame {joined} (it was recorded from there, by a spectator who joined then); seek to frames {joined}..=900"
        )
    );
    let inputs = netcade(&["replay", "inputs", &replay]);
    assert!(inputs.status.success(), "{inputs:?}");
    assert!(
        stderr(&inputs).contains(&format!("starts at frame {joined}")),
        "{inputs:?}"
    );
}

#[test]
fn a_spectator_told_not_to_record_leaves_no_replay() {
    let dir = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    let game = [
        "--core",
        "duel",
        "--rom",
        &arena,
        "--frames",
        "300",
        "--json",
        "--no-record",
    ];
    let (mut host, port) = spawn_host(dir.path(), &game, MATCH_TIMEOUT);
    let address = format!("127.0.0.1:{port}");
    let join = spawn_netcade(&[&["join", &address][..], &game[..]].concat());
    host.wait_for_stdout("the match began", MATCH_TIMEOUT);
    let watched = netcade(&[&["spectate", &address][..], &game[..]].concat());
    let _ = (join.finish(MATCH_TIMEOUT), host.finish(MATCH_TIMEOUT));
    assert!(watched.status.success(), "{watched:?}");
    let watched = last_json(&watched);
    assert!(watched["replay"].is_null(), "{watched}");
    assert!(
        watched["spectator"]["joined_at_frame"].as_u64().is_some(),
        "{watched}"
    );
}
