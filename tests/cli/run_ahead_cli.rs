//! The game's own lag and run-ahead as players see them: `netcade latency`
//! finds Duel's configured lag, and `--run-ahead N` takes exactly N frames
//! off the lag shown (the first frame whose picture differs in
//! `--frame-log`, pressed against not pressed), down to zero, in local play
//! and on both sides of a match, without changing what is heard or how the
//! match ends.

use std::path::{Path, PathBuf};
use std::time::Duration;
use support::cli::{last_json, netcade, spawn_host, spawn_netcade};

/// Duel's lag in these tests.
const LAG: u32 = 3;

/// The frame the press is read on in the scripts below.
const PRESS_AT: u32 = 60;

fn duel(lag: u32) -> Vec<String> {
    [
        "--core".to_string(),
        "duel".to_string(),
        "--rom".to_string(),
        support::dojo_arena(),
        "--option".to_string(),
        format!("duel_input_lag={lag}"),
    ]
    .to_vec()
}

fn strings(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// A two-player script in `dir`: nothing, then both players holding
/// `held` from [`PRESS_AT`] on (for `frames` frames in all). In a match
/// each machine plays its own player's column.
fn script(dir: &Path, name: &str, held: &str, frames: u32) -> PathBuf {
    let path = dir.join(name);
    let text = format!(
        "{PRESS_AT}x NONE NONE\n{}x {held} {held}\n",
        frames - PRESS_AT
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// The frame log's lines as (frame, picture, audio, memory).
fn frame_log(path: &Path) -> Vec<(u32, String, String, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            assert_eq!(fields.len(), 4, "{line}");
            (
                fields[0].parse().unwrap(),
                fields[1].to_string(),
                fields[2].to_string(),
                fields[3].to_string(),
            )
        })
        .collect()
}

/// Frames from the press to the first picture that differs between the
/// two logs.
fn shown_lag(pressed: &Path, idle: &Path) -> u32 {
    let (pressed, idle) = (frame_log(pressed), frame_log(idle));
    let first = pressed
        .iter()
        .zip(&idle)
        .find(|(a, b)| a.1 != b.1)
        .map(|(a, b)| {
            assert_eq!(a.0, b.0, "both logs list the same frames");
            a.0
        })
        .expect("the press never showed");
    first - PRESS_AT
}

#[test]
fn latency_reports_duels_configured_input_lag_exactly() {
    for lag in 0..=4 {
        let game = duel(lag);
        let args = [vec!["latency"], strings(&game), vec!["--json"]].concat();
        let output = netcade(&args);
        assert!(output.status.success(), "{output:?}");
        let json = last_json(&output);
        assert_eq!(json["lag_frames"], lag, "{json}");
        for button in ["LEFT", "RIGHT", "A", "B"] {
            assert_eq!(json["buttons"][button], lag, "{button}: {json}");
        }
        // Duel reads no other buttons during a round.
        assert!(json["buttons"]["X"].is_null(), "{json}");
        assert_eq!(json["suggested_run_ahead"], lag, "{json}");
    }
}

/// Runs 100 frames of Duel with `--run-ahead ahead` in `mode`, player 1
/// holding `held` from [`PRESS_AT`]; returns the frame log.
fn local_run(dir: &Path, held: &str, ahead: u32, mode: &str) -> PathBuf {
    let inputs = script(dir, &format!("{held}.txt"), held, 100);
    let log = dir.join(format!("{held}-{ahead}-{mode}.log"));
    let ahead = ahead.to_string();
    let mut args = vec!["run".to_string()];
    args.extend(duel(LAG));
    for arg in [
        "--frames",
        "100",
        "--inputs",
        inputs.to_str().unwrap(),
        "--frame-log",
        log.to_str().unwrap(),
        "--run-ahead",
        &ahead,
        "--run-ahead-mode",
        mode,
    ] {
        args.push(arg.to_string());
    }
    let output = netcade(&strings(&args));
    assert!(output.status.success(), "{output:?}");
    log
}

#[test]
fn run_ahead_takes_exactly_n_frames_off_the_lag_shown_in_local_play_down_to_zero() {
    let dir = tempfile::tempdir().unwrap();
    let plain = local_run(dir.path(), "RIGHT", 0, "single");
    for mode in ["single", "preemptive"] {
        for ahead in 0..=4 {
            let pressed = local_run(dir.path(), "RIGHT", ahead, mode);
            let idle = local_run(dir.path(), "NONE", ahead, mode);
            assert_eq!(
                shown_lag(&pressed, &idle),
                LAG.saturating_sub(ahead),
                "--run-ahead {ahead} --run-ahead-mode {mode}"
            );
            // What is heard and the game itself are the real frames'.
            let heard = |log: &Path| -> Vec<(String, String)> {
                frame_log(log).into_iter().map(|l| (l.2, l.3)).collect()
            };
            assert_eq!(heard(&pressed), heard(&plain), "{mode} {ahead}");
        }
    }
}

#[test]
fn the_audio_written_with_run_ahead_is_the_audio_without() {
    let dir = tempfile::tempdir().unwrap();
    let wav = |name: &str, ahead: &str, mode: &str| {
        let path = dir.path().join(name);
        let mut args = vec!["run".to_string()];
        args.extend(duel(LAG));
        for arg in [
            "--frames",
            "300",
            "--inputs",
            "random:3",
            "--audio-out",
            path.to_str().unwrap(),
            "--run-ahead",
            ahead,
            "--run-ahead-mode",
            mode,
        ] {
            args.push(arg.to_string());
        }
        let output = netcade(&strings(&args));
        assert!(output.status.success(), "{output:?}");
        std::fs::read(path).unwrap()
    };
    let plain = wav("plain.wav", "0", "single");
    assert!(
        plain.iter().skip(44).any(|&byte| byte != 0),
        "Duel made a sound"
    );
    assert!(plain == wav("single.wav", "2", "single"));
    assert!(plain == wav("preemptive.wav", "3", "preemptive"));
}

/// What a local run of Duel with random buttons left with `--run-ahead
/// ahead` in `mode`: its audio, frame log, replay and summary.
struct LocalOutputs {
    audio: Vec<u8>,
    frame_log: Vec<(u32, String, String, String)>,
    replay: PathBuf,
    summary: serde_json::Value,
}

fn local_outputs(dir: &Path, ahead: u32, mode: &str) -> LocalOutputs {
    let name = |what: &str| dir.join(format!("{mode}-{ahead}.{what}"));
    let (audio, log, replay) = (name("wav"), name("log"), name("ncr"));
    let ahead = ahead.to_string();
    let mut args = vec!["run".to_string()];
    args.extend(duel(LAG));
    for arg in [
        "--frames",
        "400",
        "--inputs",
        "random:3",
        "--audio-out",
        audio.to_str().unwrap(),
        "--frame-log",
        log.to_str().unwrap(),
        "--record",
        replay.to_str().unwrap(),
        "--run-ahead",
        &ahead,
        "--run-ahead-mode",
        mode,
        "--json",
    ] {
        args.push(arg.to_string());
    }
    let output = netcade(&strings(&args));
    assert!(output.status.success(), "{output:?}");
    LocalOutputs {
        audio: std::fs::read(audio).unwrap(),
        frame_log: frame_log(&log),
        replay,
        summary: last_json(&output),
    }
}

#[test]
fn preemptive_run_ahead_leaves_the_sound_the_frame_log_and_the_replay_of_a_run_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let plain = local_outputs(dir.path(), 0, "single");
    let heard = |outputs: &LocalOutputs| -> Vec<(u32, String, String)> {
        let log = outputs.frame_log.iter();
        log.map(|(frame, _, audio, memory)| (*frame, audio.clone(), memory.clone()))
            .collect()
    };
    for ahead in 1..=4 {
        let preemptive = local_outputs(dir.path(), ahead, "preemptive");
        assert!(
            preemptive.audio == plain.audio,
            "run-ahead {ahead}: --audio-out"
        );
        assert_eq!(
            heard(&preemptive),
            heard(&plain),
            "run-ahead {ahead}: AUDIO and MEMORY"
        );
        assert_eq!(
            preemptive.summary["checksums"]["memory"], plain.summary["checksums"]["memory"],
            "run-ahead {ahead}: the final memory"
        );
        // The same inputs and checkpoints, pictures included (a replay
        // without them would be shorter), and it plays back verified.
        let (a, b) = (
            plain.replay.to_str().unwrap(),
            preemptive.replay.to_str().unwrap(),
        );
        let diff = netcade(&["replay", "diff", a, b]);
        assert!(diff.status.success(), "run-ahead {ahead}: {diff:?}");
        let size = |path: &Path| std::fs::metadata(path).unwrap().len();
        assert_eq!(
            size(&preemptive.replay),
            size(&plain.replay),
            "run-ahead {ahead}"
        );
        let verified = netcade(&["replay", "play", b, "--headless", "--verify", "--json"]);
        assert!(verified.status.success(), "run-ahead {ahead}: {verified:?}");
        assert_eq!(last_json(&verified)["verified"], true);
    }
}

/// A match long enough for the press and its lag.
const MATCH_FRAMES: u32 = 150;

/// Plays a match of Duel over the link conditioner (`one_way_ms` each way)
/// with both players running ahead `ahead` frames in `run_ahead_mode`, both
/// holding `held` from [`PRESS_AT`]; returns each side's frame log and
/// final JSON.
fn match_with_run_ahead(
    dir: &Path,
    one_way_ms: u32,
    held: &str,
    ahead: u32,
    run_ahead_mode: &str,
) -> [(PathBuf, serde_json::Value); 2] {
    match_with_run_ahead_in(dir, "rollback", one_way_ms, held, ahead, run_ahead_mode)
        .map(|(log, json, _)| (log, json))
}

/// [`match_with_run_ahead`] in `--mode mode`, with each side's stderr.
fn match_with_run_ahead_in(
    dir: &Path,
    mode: &str,
    one_way_ms: u32,
    held: &str,
    ahead: u32,
    run_ahead_mode: &str,
) -> [(PathBuf, serde_json::Value, String); 2] {
    let inputs = script(dir, &format!("{held}-match.txt"), held, MATCH_FRAMES);
    let frames = MATCH_FRAMES.to_string();
    let ahead = ahead.to_string();
    let one_way_ms = one_way_ms.to_string();
    let logs = ["host", "join"]
        .map(|side| dir.join(format!("{side}-{held}-{ahead}-{run_ahead_mode}.log")));
    let common = |log: &Path| {
        let mut args = duel(LAG);
        for arg in [
            "--frames",
            &frames,
            "--inputs",
            inputs.to_str().unwrap(),
            "--delay",
            "0",
            "--mode",
            mode,
            "--sim-latency",
            &one_way_ms,
            "--run-ahead",
            &ahead,
            "--run-ahead-mode",
            run_ahead_mode,
            "--frame-log",
            log.to_str().unwrap(),
            "--no-record",
            "--headless",
            "--json",
        ] {
            args.push(arg.to_string());
        }
        args
    };
    let host_args = common(&logs[0]);
    // A folder of its own for the host's port file: an earlier match's is stale.
    let port_dir = tempfile::tempdir_in(dir).unwrap();
    let (host, port) = spawn_host(
        port_dir.path(),
        &strings(&host_args),
        Duration::from_secs(60),
    );
    let address = format!("127.0.0.1:{port}");
    let join_args = [vec!["join".to_string(), address], common(&logs[1])].concat();
    let join = spawn_netcade(&strings(&join_args));
    let timeout = Duration::from_secs(120);
    let (host, join) = (host.finish(timeout), join.finish(timeout));
    for output in [&host, &join] {
        assert!(output.status.success(), "{output:?}");
    }
    let [host_log, join_log] = logs;
    [
        (host_log, last_json(&host), support::cli::stderr(&host)),
        (join_log, last_json(&join), support::cli::stderr(&join)),
    ]
}

#[test]
fn a_lockstep_match_turns_run_ahead_off_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    for (_, json, stderr) in
        match_with_run_ahead_in(dir.path(), "lockstep", 0, "RIGHT", 2, "single")
    {
        assert!(
            stderr.contains("warning: --run-ahead is off: a lockstep match"),
            "{stderr}"
        );
        let players = json["netplay"]["players"].as_str().unwrap();
        assert_eq!(
            players,
            "P1: delay 0, run-ahead 0; P2: delay 0, run-ahead 0"
        );
    }
}

#[test]
fn in_a_match_each_side_sees_its_own_press_n_frames_sooner_and_the_match_ends_the_same() {
    let dir = tempfile::tempdir().unwrap();
    // 60 ms and 100 ms round trips, in both run-ahead modes (preemptive
    // keeps its ahead state across frames, which rollbacks must not spoil).
    for (one_way_ms, runs) in [
        (
            30,
            &[
                (0, "single"),
                (1, "single"),
                (2, "single"),
                (3, "single"),
                (4, "single"),
                (1, "preemptive"),
                (2, "preemptive"),
                (4, "preemptive"),
            ][..],
        ),
        (50, &[(0, "single"), (3, "single"), (3, "preemptive")][..]),
    ] {
        let mut endings = Vec::new();
        for &(ahead, run_ahead_mode) in runs {
            let pressed =
                match_with_run_ahead(dir.path(), one_way_ms, "RIGHT", ahead, run_ahead_mode);
            let idle = match_with_run_ahead(dir.path(), one_way_ms, "NONE", ahead, run_ahead_mode);
            let sides = ["host", "join"].iter().zip(pressed.iter().zip(&idle));
            for (side, (pressed, idle)) in sides {
                assert_eq!(
                    shown_lag(&pressed.0, &idle.0),
                    LAG.saturating_sub(ahead),
                    "{side} with --run-ahead {ahead} {run_ahead_mode}, {one_way_ms} ms each way"
                );
                // Each player is shown the other's run-ahead.
                let players = pressed.1["netplay"]["players"].as_str().unwrap();
                assert_eq!(
                    players,
                    format!("P1: delay 0, run-ahead {ahead}; P2: delay 0, run-ahead {ahead}"),
                    "{side}"
                );
            }
            endings.push(pressed.map(|(_, json)| json["checksums"].clone()));
        }
        for ending in &endings {
            assert_eq!(ending[0], ending[1], "host and joiner agree");
            assert_eq!(*ending, endings[0], "run-ahead changes nothing in the game");
        }
    }
}

#[test]
fn a_replay_played_back_logs_the_frames_of_the_run_that_recorded_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    let (replay, recorded, played) = (path("run.ncr"), path("run.log"), path("played.log"));
    let mut run = vec!["run".to_string()];
    run.extend(duel(LAG));
    for arg in [
        "--frames", "200", "--inputs", "random:4", "--record", &replay,
    ] {
        run.push(arg.to_string());
    }
    run.extend(["--frame-log".to_string(), recorded.clone()]);
    assert!(netcade(&strings(&run)).status.success());
    let play = [
        "replay",
        "play",
        &replay,
        "--headless",
        "--frame-log",
        &played,
    ];
    let output = netcade(&play);
    assert!(output.status.success(), "{output:?}");
    let recorded = frame_log(Path::new(&recorded));
    assert_eq!(recorded.len(), 200);
    assert_eq!(frame_log(Path::new(&played)), recorded);
}
