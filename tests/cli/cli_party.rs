//! Matches of three and four players as users run them: one `netcade host
//! --players N` and N-1 `netcade join` processes of the built binary over
//! real UDP on loopback, the joiners knowing only the host. Verdicts never
//! depend on timing: timeouts only guard against a hang.

use serde_json::Value;
use std::path::Path;
use std::process::Output;
use std::time::Duration;
use support::cli::{last_json, spawn_host, spawn_netcade, Background};

/// Long enough for a match of a few seconds on a busy machine.
const MATCH_TIMEOUT: Duration = Duration::from_secs(180);

/// Plays a match of `players`: the host with `host_args`, joiner `k` with
/// `join_args(k)` (k = 1..players), every process with `common`; returns
/// every process's output, the host's first.
fn play_party(
    players: u8,
    common: &[&str],
    host_args: &[&str],
    join_args: impl Fn(u8) -> Vec<String>,
    frames: u32,
) -> Vec<Output> {
    play_party_watched(players, common, host_args, join_args, frames, false).0
}

/// [`play_party`], with a spectator of the host too when `watched` (its
/// output second).
fn play_party_watched(
    players: u8,
    common: &[&str],
    host_args: &[&str],
    join_args: impl Fn(u8) -> Vec<String>,
    frames: u32,
    watched: bool,
) -> (Vec<Output>, Option<Output>) {
    let dir = tempfile::tempdir().unwrap();
    let players_arg = players.to_string();
    let frames_arg = frames.to_string();
    let mut args = vec!["--players", &players_arg, "--frames", &frames_arg, "--json"];
    args.extend_from_slice(common);
    args.extend_from_slice(host_args);
    let (host, port) = spawn_host(dir.path(), &args, MATCH_TIMEOUT);
    let address = format!("127.0.0.1:{port}");
    let joiners: Vec<Background> = (1..players)
        .map(|k| {
            let own = join_args(k);
            let mut args = vec!["join", address.as_str(), "--json"];
            args.extend_from_slice(common);
            args.extend(own.iter().map(String::as_str));
            spawn_netcade(&args)
        })
        .collect();
    let spectator = watched.then(|| {
        let mut args = vec!["spectate", address.as_str(), "--json"];
        args.extend_from_slice(common);
        spawn_netcade(&args)
    });
    let timeout = MATCH_TIMEOUT + Duration::from_secs(u64::from(frames) / 60);
    let mut outputs = vec![host.finish(timeout)];
    outputs.extend(joiners.into_iter().map(|joiner| joiner.finish(timeout)));
    (
        outputs,
        spectator.map(|spectator| spectator.finish(timeout)),
    )
}

/// Every process of a match of `players` finished all `frames`, with no
/// desync and the same game memory and picture; returns their JSON
/// summaries.
fn assert_same_ending(outputs: &[Output], players: usize, frames: u32) -> Vec<Value> {
    let summaries: Vec<Value> = outputs
        .iter()
        .map(|output| {
            assert!(output.status.success(), "{output:?}");
            last_json(output)
        })
        .collect();
    for json in &summaries {
        assert_eq!(json["end"], "finished", "{json}");
        assert_eq!(json["frames"], frames, "{json}");
        assert_eq!(json["netplay"]["desyncs"], 0, "{json}");
        let peers = json["netplay"]["peers"].as_array().unwrap();
        assert_eq!(
            peers.len(),
            players - 1,
            "one entry per other player: {json}"
        );
    }
    for kind in ["memory", "video"] {
        let host = &summaries[0]["checksums"][kind];
        assert!(host.is_string(), "{}", summaries[0]);
        for json in &summaries[1..] {
            assert_eq!(&json["checksums"][kind], host, "{kind}");
        }
    }
    summaries
}

/// The other players a summary lists, by slot.
fn other_players(json: &Value) -> Vec<u64> {
    let peers = json["netplay"]["peers"].as_array().unwrap();
    peers
        .iter()
        .map(|peer| peer["player"].as_u64().unwrap())
        .collect()
}

fn duel_game(saves: &Path) -> Vec<String> {
    let arena = support::dojo_arena();
    let saves = saves.display().to_string();
    [
        "--core",
        "duel",
        "--rom",
        &arena,
        "--headless",
        "--save-dir",
        &saves,
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn three_duel_players_who_know_only_the_host_play_in_sync_with_its_delay_floor_and_the_slot_asked_for(
) {
    let saves = tempfile::tempdir().unwrap();
    // The player's own save RAM, which no match may touch.
    let srm = saves.path().join("dojo.srm");
    let bytes: Vec<u8> = (0..=255).collect();
    std::fs::write(&srm, &bytes).unwrap();
    let game = duel_game(saves.path());
    let common: Vec<&str> = game.iter().map(String::as_str).collect();
    // Joiner 1 asks for player 3; joiner 2 takes the first free slot and
    // fixes its delay above the host's floor.
    let outputs = play_party(
        3,
        &common,
        &["--min-delay", "3", "--inputs", "random:1"],
        |k| {
            let mut args = vec!["--inputs".to_string(), format!("random:{}", k + 1)];
            let own = if k == 1 {
                ["--slot", "3"]
            } else {
                ["--delay", "4"]
            };
            args.extend(own.map(String::from));
            args
        },
        300,
    );
    let summaries = assert_same_ending(&outputs, 3, 300);
    assert_eq!(other_players(&summaries[0]), [1, 2]);
    assert_eq!(other_players(&summaries[1]), [0, 1], "joiner 1 is player 3");
    assert_eq!(summaries[1]["netplay"]["player"], 2);
    assert_eq!(other_players(&summaries[2]), [0, 2], "joiner 2 is player 2");
    for json in &summaries {
        let delays = json["netplay"]["input_delays"].as_array().unwrap();
        assert_eq!(delays.len(), 3, "every player's delay: {json}");
        for delay in delays {
            assert!(delay["input_delay"].as_u64().unwrap() >= 3, "{json}");
        }
        assert_eq!(delays[1]["input_delay"], 4, "player 2's own: {json}");
    }
    for output in &outputs {
        let status = String::from_utf8_lossy(&output.stdout);
        assert!(status.contains("input delays P1 3 P2 4 P3 3"), "{status}");
    }
    assert_eq!(
        std::fs::read(&srm).unwrap(),
        bytes,
        "the save file is untouched"
    );
    let match_folders = saves.path().join("netplay");
    let left: Vec<_> = std::fs::read_dir(&match_folders)
        .map(|dir| dir.flatten().map(|entry| entry.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "empty match folders are removed: {left:?}");
}

#[test]
fn a_spectator_of_a_three_player_match_sees_every_player_and_ends_on_their_checksums() {
    let saves = tempfile::tempdir().unwrap();
    let game = duel_game(saves.path());
    let common: Vec<&str> = game.iter().map(String::as_str).collect();
    let (outputs, spectator) = play_party_watched(
        3,
        &common,
        &["--inputs", "random:1"],
        |k| vec!["--inputs".to_string(), format!("random:{}", k + 1)],
        300,
        true,
    );
    let summaries = assert_same_ending(&outputs, 3, 300);
    let watched = spectator.unwrap();
    assert!(watched.status.success(), "{watched:?}");
    let watched = last_json(&watched);
    assert_eq!(watched["end"], "finished", "{watched}");
    assert_eq!(
        watched["checksums"]["memory"], summaries[0]["checksums"]["memory"],
        "{watched}"
    );
}

#[test]
fn when_one_of_three_players_leaves_the_other_two_agree_where_and_play_to_the_end_in_sync() {
    let saves = tempfile::tempdir().unwrap();
    let game = duel_game(saves.path());
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "--players",
        "3",
        "--frames",
        "900",
        "--json",
        "--inputs",
        "random:1",
    ];
    args.extend(game.iter().map(String::as_str));
    let (host, port) = spawn_host(dir.path(), &args, MATCH_TIMEOUT);
    let address = format!("127.0.0.1:{port}");
    let mut joiners: Vec<Background> = (2..4)
        .map(|seed| {
            let inputs = format!("random:{seed}");
            let mut args = vec!["join", address.as_str(), "--json", "--inputs", &inputs];
            args.extend(game.iter().map(String::as_str));
            spawn_netcade(&args)
        })
        .collect();
    joiners[1].wait_for_stdout("the match began", MATCH_TIMEOUT);
    std::thread::sleep(Duration::from_secs(2));
    joiners[1].interrupt();
    let timeout = MATCH_TIMEOUT + Duration::from_secs(15);
    let leaver = joiners.pop().unwrap().finish(timeout);
    let stayer = joiners.pop().unwrap().finish(timeout);
    let host = host.finish(timeout);
    assert_eq!(leaver.status.code(), Some(130), "{leaver:?}");
    for output in [&host, &stayer] {
        let warnings = String::from_utf8_lossy(&output.stderr);
        assert!(
            warnings.contains("left at frame") && warnings.contains("the match goes on"),
            "{warnings}"
        );
    }
    assert_same_ending(&[host, stayer], 3, 900);
}

#[test]
fn a_joiner_asking_for_a_slot_beyond_the_match_is_refused_with_the_reason() {
    let saves = tempfile::tempdir().unwrap();
    let game = duel_game(saves.path());
    let common: Vec<&str> = game.iter().map(String::as_str).collect();
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["--players", "2", "--frames", "120"];
    args.extend_from_slice(&common);
    let (mut host, port) = spawn_host(dir.path(), &args, MATCH_TIMEOUT);
    let address = format!("127.0.0.1:{port}");
    let mut join = vec![
        "join",
        address.as_str(),
        "--slot",
        "4",
        "--connect-timeout-s",
        "5",
    ];
    join.extend_from_slice(&common);
    let refused = support::cli::netcade(&join);
    host.kill();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("error: --slot 4: the host's match has 2 players"),
        "{stderr}"
    );
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn four_stella_players_play_a_minute_through_100_ms_and_5_percent_loss_to_equal_checksums() {
    let (Some(core), Some(rom)) = (
        support::real_core("stella"),
        support::real_rom("boxing.bin"),
    ) else {
        return;
    };
    let (core, rom) = (core.display().to_string(), rom.display().to_string());
    let saves = tempfile::tempdir().unwrap();
    let saves_arg = saves.path().display().to_string();
    // Each process delays what it sends by 50 ms: 100 ms round trips.
    let common = [
        "--core",
        &core,
        "--rom",
        &rom,
        "--headless",
        "--save-dir",
        &saves_arg,
        "--sim-latency",
        "50",
        "--sim-loss",
        "5",
    ];
    let outputs = play_party(
        4,
        &common,
        &["--inputs", "random:1"],
        |k| vec!["--inputs".to_string(), format!("random:{}", k + 1)],
        3600,
    );
    assert_same_ending(&outputs, 4, 3600);
}
