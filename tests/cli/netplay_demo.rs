//! `netcade demo` as a user meets it: over real sockets it checks both
//! players and a spectator who joined mid-match; `--simulated` says its
//! times are simulated, leaves nothing in the current directory, finishes at
//! every round trip it accepts, and Ctrl-C leaves no copies of the core behind.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use support::cli::{last_json, stdout};
use support::duel_core;

/// `netcade demo ARGS` run from `dir`, with `dir/tmp` as its temporary directory.
fn demo_in(dir: &Path, args: &[&str]) -> Command {
    let temp = dir.join("tmp");
    std::fs::create_dir_all(&temp).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_netcade"));
    command
        .args(["demo", "--simulated"])
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", &temp)
        .env("NETCADE_DUEL_CORE", duel_core())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Names of what `dir` holds.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn the_demo_says_its_times_are_simulated_and_writes_its_picture_to_the_temporary_directory() {
    let dir = tempfile::tempdir().unwrap();
    let output = demo_in(dir.path(), &["--frames", "120", "--json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = stdout(&output);
    let timed: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
    assert!(!timed.is_empty(), "{text}");
    assert!(timed.iter().all(|l| l.starts_with("[simulated ")), "{text}");
    assert_eq!(
        entries(dir.path()),
        ["tmp"],
        "nothing lands in the current directory"
    );
    let png = dir.path().join("tmp/netcade/netcade-demo.png");
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    assert_eq!(last_json(&output)["png"], png.to_str().unwrap());
    assert_eq!(
        entries(&dir.path().join("tmp")),
        ["netcade"],
        "no core copies left"
    );
}

#[test]
fn the_demo_help_says_which_match_is_real_and_which_simulated() {
    let output = Command::new(env!("CARGO_BIN_EXE_netcade"))
        .args(["demo", "--help"])
        .output()
        .unwrap();
    let help = stdout(&output);
    assert!(help.contains("over loopback UDP in real time"), "{help}");
    assert!(
        help.contains("simulated network in simulated time"),
        "{help}"
    );
    assert!(!help.contains("local run"), "{help}");
}

#[test]
fn the_longest_round_trip_the_demo_accepts_still_finishes_in_sync() {
    let dir = tempfile::tempdir().unwrap();
    let output = demo_in(
        dir.path(),
        &["--frames", "240", "--rtt-ms", "2000", "--json"],
    )
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let netplay = &last_json(&output)["netplay"];
    assert_eq!(netplay["finished"], true, "{netplay}");
    assert_eq!(netplay["in_sync"], true, "{netplay}");
}

#[cfg(unix)]
#[test]
fn ctrl_c_during_the_demo_leaves_no_copies_of_the_core_behind() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = demo_in(dir.path(), &["--frames", "100000000"])
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // The match is under way once both machines run.
    let started = lines.find(|line| {
        line.as_ref()
            .is_ok_and(|line| line.contains("both machines are running"))
    });
    assert!(started.is_some(), "the demo starts its match");
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert!(
        entries(&dir.path().join("tmp")).is_empty(),
        "left behind: {:?}",
        entries(&dir.path().join("tmp"))
    );
}

#[test]
fn the_demo_over_real_sockets_checks_both_players_and_a_spectator_who_joined_mid_match() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_netcade"))
        .args([
            "demo",
            "--frames",
            "780",
            "--json",
            "--audio-out",
            "demo.wav",
        ])
        .current_dir(dir.path())
        .env("TMPDIR", dir.path())
        .env("NETCADE_DUEL_CORE", duel_core())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    for expected in [
        "[host] the match began",
        "[join] the match began",
        "[host] a spectator joined",
        "[spectator] watching from frame",
        "[host] match finished: 780 frames final",
        "[join] match finished: 780 frames final",
        "verdict: in sync over real sockets",
    ] {
        assert!(text.contains(expected), "{expected}: {text}");
    }
    let json = last_json(&output);
    assert_eq!(json["in_sync"], true, "{json}");
    assert_eq!(json["finished"], true, "{json}");
    let joined = json["spectator_joined_at_frame"].as_u64().unwrap();
    assert!((500..760).contains(&joined), "{json}");
    assert!(
        json["compared"]["host_and_spectator"]["frames"]
            .as_u64()
            .unwrap()
            > 20
    );
    // Every machine wrote what its speaker would have played: the players
    // the whole match (13 s at 60 fps), the spectator what it watched.
    let seconds = |name: &str| {
        let wav = hound::WavReader::open(dir.path().join(name)).unwrap();
        f64::from(wav.duration()) / f64::from(wav.spec().sample_rate)
    };
    let (host, joiner, spectator) = (
        seconds("demo.wav"),
        seconds("demo-machine2.wav"),
        seconds("demo-machine3.wav"),
    );
    assert!((12.5..14.0).contains(&host), "host {host} s");
    assert!((12.5..14.0).contains(&joiner), "joiner {joiner} s");
    let watched = (780 - joined) as f64 / 60.0;
    assert!(
        spectator > 0.5 * watched && spectator < watched + 1.0,
        "spectator {spectator} s of {watched} s watched"
    );
    // The core copies are gone.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|entry| entry.ok())
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with("netcade-demo-")
        })
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
