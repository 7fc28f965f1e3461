//! `host` and `join` in windows (built with `gui`, without `--headless`):
//! two windows on one display play a whole match in sync, with the
//! overlay drawn over the game.
#![cfg(feature = "gui")]

use std::path::Path;
use std::process::Output;
use std::time::Duration;
use support::cli::{last_json, spawn_host_with_env, spawn_netcade_with_env, stderr, Background};
use support::screenshot::{read_png, OVERLAY_TEXT};

const MATCH_TIMEOUT: Duration = Duration::from_secs(60);

fn spawn_in_window(args: &[&str], config: &Path) -> Background {
    spawn_netcade_with_env(args, &[("NETCADE_CONFIG_DIR", config.as_os_str())])
}

/// A host and a joiner (`join 127.0.0.1:PORT` followed by `join_args`),
/// each in a window with its input config in `dir`, played to the end.
fn play_in_two_windows(dir: &Path, host_args: &[&str], join_args: &[&str]) -> (Output, Output) {
    let in_window = [("NETCADE_CONFIG_DIR", dir.as_os_str())];
    let (host, port) = spawn_host_with_env(dir, host_args, &in_window, MATCH_TIMEOUT);
    let address = format!("127.0.0.1:{port}");
    let join = spawn_in_window(&[&["join", &address][..], join_args].concat(), dir);
    let host = host.finish(MATCH_TIMEOUT + Duration::from_secs(10));
    let join = join.finish(MATCH_TIMEOUT + Duration::from_secs(10));
    (host, join)
}

#[test]
fn a_host_and_a_joiner_in_two_windows_play_600_frames_in_sync_with_the_overlay_shown() {
    let dir = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    let shot = dir.path().join("host.png");
    let shot_arg = shot.display().to_string();
    let game = [
        "--core", "duel", "--rom", &arena, "--frames", "600", "--json",
    ];
    let mut host_args = vec![
        "--inputs",
        "random:1",
        "--overlay",
        "--screenshot-at",
        "300",
        &shot_arg,
    ];
    host_args.extend_from_slice(&game);
    let join_args = [&["--inputs", "random:2"][..], &game].concat();
    let (host, join) = play_in_two_windows(dir.path(), &host_args, &join_args);
    for (side, output) in [("host", &host), ("join", &join)] {
        assert!(output.status.success(), "{side}: {}", stderr(output));
        assert!(
            !stderr(output).contains("cannot open"),
            "{side}: {}",
            stderr(output)
        );
    }
    let (host_json, join_json) = (last_json(&host), last_json(&join));
    for json in [&host_json, &join_json] {
        assert_eq!(json["end"], "finished", "{json}");
        assert_eq!(json["frames"], 600, "{json}");
        assert_eq!(json["netplay"]["desyncs"], 0, "{json}");
    }
    for kind in ["memory", "video"] {
        assert_eq!(
            host_json["checksums"][kind], join_json["checksums"][kind],
            "{kind}"
        );
    }
    // The host's window at frame 300: the game with the overlay's panel
    // (its text is drawn opaque in the overlay's text colour).
    let picture = read_png(&shot);
    assert_eq!(picture.size(), (960, 720));
    let text_pixels = picture.count_colour(0..120, OVERLAY_TEXT);
    assert!(
        text_pixels > 200,
        "overlay text pixels in the top rows: {text_pixels}"
    );
}

#[test]
fn players_in_windows_without_inputs_play_with_their_own_devices_only() {
    let dir = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    let game = [
        "--core", "duel", "--rom", &arena, "--frames", "120", "--json",
    ];
    let small = [&game[..], &["--window-size", "320x240"]].concat();
    let (host, join) = play_in_two_windows(dir.path(), &small, &small);
    for (side, output) in [("host", &host), ("join", &join)] {
        assert!(output.status.success(), "{side}: {}", stderr(output));
        let json = last_json(output);
        assert_eq!(json["end"], "finished", "{side}: {json}");
        // No bot pressing buttons alongside the player's keyboard.
        assert_eq!(json["inputs"], "none", "{side}: {json}");
    }
}

#[test]
fn a_spectator_in_a_window_draws_the_game_and_ends_on_the_players_checksums() {
    let dir = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    let game = [
        "--core", "duel", "--rom", &arena, "--frames", "600", "--json",
    ];
    let headless = |side: &[&'static str]| {
        let mut args = side.to_vec();
        args.extend_from_slice(&game);
        args.push("--headless");
        args
    };
    let (mut host, port) = support::cli::spawn_host(
        dir.path(),
        &headless(&["--inputs", "random:1"]),
        MATCH_TIMEOUT,
    );
    let address = format!("127.0.0.1:{port}");
    let mut join_args = vec!["join", address.as_str()];
    join_args.extend_from_slice(&headless(&["--inputs", "random:2"]));
    let join = support::cli::spawn_netcade(&join_args);
    host.wait_for_stdout("the match began", MATCH_TIMEOUT);
    let shot = dir.path().join("spectator.png");
    let shot_arg = shot.display().to_string();
    let mut watch_args = vec![
        "spectate",
        address.as_str(),
        "--window-size",
        "640x480",
        "--overlay",
        "--screenshot-at",
        "450",
        &shot_arg,
    ];
    watch_args.extend_from_slice(&game);
    let spectator = spawn_in_window(&watch_args, dir.path());
    let host = host.finish(MATCH_TIMEOUT + Duration::from_secs(10));
    let join = join.finish(MATCH_TIMEOUT + Duration::from_secs(10));
    let spectator = spectator.finish(MATCH_TIMEOUT + Duration::from_secs(10));
    for (side, output) in [("host", &host), ("join", &join), ("spectator", &spectator)] {
        assert!(output.status.success(), "{side}: {}", stderr(output));
    }
    let (host_json, watched) = (last_json(&host), last_json(&spectator));
    assert_eq!(watched["end"], "finished", "{watched}");
    assert_eq!(watched["frames"], 600, "{watched}");
    for kind in ["memory", "video"] {
        assert_eq!(
            host_json["checksums"][kind], watched["checksums"][kind],
            "{kind}"
        );
    }
    // The window's picture near frame 450: the game (many colours over the
    // whole window), with the overlay's spectator panel over it.
    let picture = read_png(&shot);
    assert_eq!(picture.size(), (640, 480));
    picture.assert_the_lower_half_shows_the_game();
    let text_pixels = picture.count_colour(0..100, OVERLAY_TEXT);
    assert!(text_pixels > 200, "overlay text pixels: {text_pixels}");
}

#[test]
fn three_players_in_three_windows_play_in_sync() {
    let dir = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    let game = [
        "--core", "duel", "--rom", &arena, "--frames", "300", "--json",
    ];
    let in_window = [("NETCADE_CONFIG_DIR", dir.path().as_os_str())];
    let host_args = [&["--players", "3", "--inputs", "random:1"][..], &game].concat();
    let (host, port) = spawn_host_with_env(dir.path(), &host_args, &in_window, MATCH_TIMEOUT);
    let address = format!("127.0.0.1:{port}");
    let joiners: Vec<Background> = ["random:2", "random:3"]
        .iter()
        .map(|inputs| {
            let args = [&["join", &address, "--inputs", inputs][..], &game].concat();
            spawn_in_window(&args, dir.path())
        })
        .collect();
    let timeout = MATCH_TIMEOUT + Duration::from_secs(10);
    let mut outputs = vec![host.finish(timeout)];
    outputs.extend(joiners.into_iter().map(|joiner| joiner.finish(timeout)));
    let summaries: Vec<_> = outputs
        .iter()
        .map(|output| {
            assert!(output.status.success(), "{}", stderr(output));
            last_json(output)
        })
        .collect();
    for json in &summaries {
        assert_eq!(json["end"], "finished", "{json}");
        assert_eq!(json["frames"], 300, "{json}");
        assert_eq!(
            json["checksums"]["memory"],
            summaries[0]["checksums"]["memory"]
        );
    }
}
