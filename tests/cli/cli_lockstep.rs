//! Cores that cannot roll back play in lockstep: real `host`, `join` and
//! `spectate` processes over UDP on loopback, with a fake core that refuses
//! to save its state and with Duel's injected non-determinism (state left
//! out of its savestate), both of which rollback could not play.

use serde_json::Value;
use std::path::Path;
use std::time::Duration;
use support::cli::{last_json, netcade, spawn_host, spawn_netcade, stderr, stdout};
use support::fake_core::FakeCore;

/// Long enough for a 300-frame match (5 s) on a busy machine.
const MATCH_TIMEOUT: Duration = Duration::from_secs(120);

/// `--core <fake> --rom game.fake`, the fake core built into `dir` with
/// `serializes` deciding whether `retro_serialize` works.
fn fake_game(dir: &Path, serializes: bool) -> Vec<String> {
    let core = FakeCore {
        in_serialize: if serializes { "" } else { "return false;" },
        ..FakeCore::default()
    };
    std::fs::create_dir_all(dir).unwrap();
    let library = core.build(dir);
    // The same content for every build, so every machine's matches.
    let content = dir.parent().unwrap().join("game.fake");
    std::fs::write(&content, b"a game for the fake core").unwrap();
    vec![
        "--core".into(),
        library.display().to_string(),
        "--rom".into(),
        content.display().to_string(),
    ]
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// Each side finished every frame in lockstep: no rollback, no state
/// held, no desync, and the same game memory and picture at the end.
fn assert_same_lockstep_ending(host: &Value, join: &Value, frames: u32) {
    for json in [host, join] {
        assert_eq!(json["end"], "finished", "{json}");
        assert_eq!(json["frames"], frames, "{json}");
        let netplay = &json["netplay"];
        assert_eq!(netplay["mode"], "lockstep", "{json}");
        assert_eq!(netplay["desyncs"], 0, "{json}");
        assert_eq!(netplay["state_bytes"], 0, "{json}");
        assert_eq!(netplay["peers"][0]["rollbacks"]["count"], 0, "{json}");
    }
    for kind in ["memory", "video"] {
        let checksum = &host["checksums"][kind];
        assert!(checksum.is_string(), "{host}");
        assert_eq!(checksum, &join["checksums"][kind], "{kind}");
    }
}

#[test]
fn a_core_that_cannot_save_plays_in_lockstep_is_watched_from_frame_0_and_its_replay_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let game = fake_game(&dir.path().join("core"), false);
    let replay = dir.path().join("host.ncr");
    let replay_arg = replay.display().to_string();
    let host_args = [
        "--frames",
        "300",
        "--inputs",
        "random:1",
        "--json",
        "--record",
        &replay_arg,
    ];
    let (mut host, port) = spawn_host(
        dir.path(),
        &[&strs(&game)[..], &host_args[..]].concat(),
        MATCH_TIMEOUT,
    );
    let address = format!("127.0.0.1:{port}");
    host.wait_for_stdout("waiting for a player to join", MATCH_TIMEOUT);
    let watched = [
        "spectate",
        &address,
        "--frames",
        "300",
        "--json",
        "--no-record",
    ];
    let spectator = spawn_netcade(&[&watched[..], &strs(&game)[..]].concat());
    let joined = [
        "join", &address, "--frames", "300", "--inputs", "random:2", "--json",
    ];
    let join = spawn_netcade(&[&joined[..], &strs(&game)[..]].concat()).finish(MATCH_TIMEOUT);
    let host = host.finish(MATCH_TIMEOUT);
    let spectator = spectator.finish(MATCH_TIMEOUT);
    for output in [&host, &join, &spectator] {
        assert!(output.status.success(), "{output:?}");
    }
    let (host_json, join_json) = (last_json(&host), last_json(&join));
    assert_same_lockstep_ending(&host_json, &join_json, 300);
    let said = stderr(&host);
    assert!(
        said.contains("note: rollback pre-flight: Fake 1 cannot save and restore its state")
            && said.contains("playing in lockstep"),
        "{said}"
    );
    assert!(
        stderr(&join).contains("note: the host plays this match in lockstep"),
        "{join:?}"
    );
    assert!(stdout(&host).contains(", Fake 1, lockstep\n"), "{host:?}");
    // The spectator had no state to load: it played from the content as
    // loaded, every frame, to the players' checksums.
    assert!(
        stderr(&spectator).contains("note: the match plays in lockstep"),
        "{spectator:?}"
    );
    let watched = last_json(&spectator);
    assert_eq!(watched["spectator"]["joined_at_frame"], 0, "{watched}");
    assert_eq!(watched["spectator"]["desyncs"], 0, "{watched}");
    assert_eq!(
        watched["checksums"]["memory"],
        host_json["checksums"]["memory"]
    );
    // The replay starts from the content as loaded and verifies.
    let verified = netcade(&["replay", "play", &replay_arg, "--headless", "--verify"]);
    assert!(verified.status.success(), "{verified:?}");
}

#[test]
fn rollback_is_refused_clearly_on_a_core_that_cannot_save() {
    let dir = tempfile::tempdir().unwrap();
    let game = fake_game(&dir.path().join("core"), false);
    let forced = [
        &["host", "--port", "0", "--mode", "rollback"][..],
        &strs(&game),
    ]
    .concat();
    let refused = netcade(&forced);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let error = stderr(&refused);
    assert!(
        error.starts_with("error: --mode rollback, but the rollback pre-flight found that Fake 1 cannot save and restore its state")
            && error.contains("--mode lockstep or auto"),
        "{error}"
    );
}

#[test]
fn a_joiner_whose_core_cannot_save_refuses_a_host_playing_with_rollback() {
    let dir = tempfile::tempdir().unwrap();
    // The same core name, version and content: only the joiner's build
    // refuses to save.
    let saving = fake_game(&dir.path().join("saving"), true);
    let unsaving = fake_game(&dir.path().join("unsaving"), false);
    let (mut host, port) = spawn_host(dir.path(), &strs(&saving), MATCH_TIMEOUT);
    let address = format!("127.0.0.1:{port}");
    let join = netcade(&[&["join", &address][..], &strs(&unsaving)[..]].concat());
    host.interrupt();
    let host = host.finish(MATCH_TIMEOUT);
    assert_eq!(join.status.code(), Some(2), "{join:?}");
    let error = stderr(&join);
    assert!(
        error.contains("error: the host plays this match with rollback, but the rollback pre-flight found that Fake 1 cannot save")
            && error.contains("the host can choose --mode lockstep or auto"),
        "{error}"
    );
    assert!(!stderr(&host).contains("in lockstep"), "{host:?}");
}

#[test]
fn duel_with_state_left_out_of_its_savestate_plays_in_lockstep_where_strict_refused_it() {
    let dir = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    // Rollback would desync it at once on this link (see cli_netplay).
    let game = [
        "--core",
        "duel",
        "--rom",
        &arena,
        "--option",
        "duel_inject_nondeterminism=enabled",
        "--sim-latency",
        "30",
        "--frames",
        "300",
        "--json",
    ];
    let (host, port) = spawn_host(
        dir.path(),
        &[&game[..], &["--strict", "--inputs", "random:1"]].concat(),
        MATCH_TIMEOUT,
    );
    let address = format!("127.0.0.1:{port}");
    let join = spawn_netcade(&[&["join", &address, "--inputs", "random:2"][..], &game].concat());
    let (join, host) = (join.finish(MATCH_TIMEOUT), host.finish(MATCH_TIMEOUT));
    for output in [&host, &join] {
        assert!(output.status.success(), "{output:?}");
    }
    assert_same_lockstep_ending(&last_json(&host), &last_json(&join), 300);
    let said = stderr(&host);
    assert!(
        said.contains("note: rollback pre-flight: Duel")
            && said.contains("does not restore its state faithfully"),
        "{said}"
    );
    // The input delay covered the 60 ms round trip.
    let delay = last_json(&join)["netplay"]["peers"][0]["input_delay"]
        .as_u64()
        .unwrap();
    assert!(delay >= 2, "input delay {delay}");
}
