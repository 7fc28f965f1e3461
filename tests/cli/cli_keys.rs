//! The keys players can check in a match by address: each side prints its
//! key and the link's fingerprint (the same on both screens unless a
//! machine sits in between: `tests/netplay/netplay_keys.rs`), and
//! `--peer-key` pins the other side's key; a spectator shows and pins
//! its host's the same way.

use std::path::Path;
use std::time::Duration;
use support::cli::{last_json, spawn_host, spawn_netcade, stderr, stdout, Background};

const TIMEOUT: Duration = Duration::from_secs(120);

/// The word after `prefix` on the first line that begins with it.
fn word_after(output: &str, prefix: &str) -> String {
    let line = output
        .lines()
        .find_map(|line| line.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line begins with {prefix:?}: {output}"));
    line.split([' ', ':', ';', ')']).next().unwrap().to_string()
}

/// A host started in `dir` with `args`, its address on loopback and the
/// key it printed before it waits.
fn host_showing_its_key(dir: &Path, args: &[&str]) -> (Background, String, String) {
    let (mut host, port) = spawn_host(dir, args, TIMEOUT);
    host.wait_for_stdout("--peer-key", TIMEOUT);
    let key = word_after(&host.stdout_so_far(), "key ");
    (host, format!("127.0.0.1:{port}"), key)
}

fn game(arena: &str) -> Vec<&str> {
    vec![
        "--core",
        "duel",
        "--rom",
        arena,
        "--headless",
        "--frames",
        "120",
    ]
}

#[test]
fn both_sides_of_a_match_by_address_show_one_fingerprint_and_a_joiner_pinning_the_hosts_key_plays()
{
    let arena = support::dojo_arena();
    let dir = tempfile::tempdir().unwrap();
    let host_args = [game(&arena), vec!["--inputs", "random:1", "--json"]].concat();
    let (host, address, host_key) = host_showing_its_key(dir.path(), &host_args);
    let join_args = [
        vec!["join", &address],
        game(&arena),
        vec!["--inputs", "random:2", "--json", "--peer-key", &host_key],
    ]
    .concat();
    let join = spawn_netcade(&join_args).finish(TIMEOUT);
    let host = host.finish(TIMEOUT);
    assert!(join.status.success(), "{}", stderr(&join));
    assert!(host.status.success(), "{}", stderr(&host));
    let joiner_key = word_after(&stdout(&join), "key ");
    let seen_by_joiner = word_after(&stdout(&join), "link to P1: fingerprint ");
    let seen_by_host = word_after(&stdout(&host), "link to P2: fingerprint ");
    assert_eq!(seen_by_joiner, seen_by_host);
    assert!(stdout(&join).contains(&format!("P1's key {host_key}")));
    assert!(stdout(&host).contains(&format!("P2's key {joiner_key}")));
    let (host_json, join_json) = (last_json(&host), last_json(&join));
    assert_eq!(host_json["netplay"]["key"], host_key.as_str());
    let link = &join_json["netplay"]["links"][0];
    assert_eq!(link["fingerprint"], seen_by_host.as_str());
    assert_eq!(link["peer_key"], host_key.as_str());
    assert_eq!(link["players"], serde_json::json!([1]));
}

#[test]
fn a_joiner_pinning_another_key_than_the_hosts_is_refused_with_one_clear_error() {
    let arena = support::dojo_arena();
    let dir = tempfile::tempdir().unwrap();
    let host_args = [game(&arena), vec!["--inputs", "random:1"]].concat();
    let (mut host, address, host_key) = host_showing_its_key(dir.path(), &host_args);
    let other = if host_key.starts_with('0') {
        "11111-11111"
    } else {
        "00000-00000"
    };
    let join_args = [
        vec!["join", &address],
        game(&arena),
        vec!["--inputs", "random:2", "--peer-key", other],
    ]
    .concat();
    let join = spawn_netcade(&join_args).finish(TIMEOUT);
    host.kill();
    assert_eq!(join.status.code(), Some(2), "{}", stderr(&join));
    let error = stderr(&join);
    assert!(
        error.contains(&format!(
            "error: P1's key is {host_key}, not the --peer-key {other}"
        )),
        "{error}"
    );
}

#[test]
fn a_peer_key_that_is_no_fingerprint_is_refused_before_anything_runs() {
    let output = support::cli::netcade(&[
        "join",
        "127.0.0.1:9",
        "--core",
        "duel",
        "--peer-key",
        "K7QD2",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("expected a key fingerprint like K7QD2-MXA4P"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_spectator_shows_the_fingerprint_the_host_shows_and_one_pinning_another_key_is_refused() {
    let arena = support::dojo_arena();
    let dir = tempfile::tempdir().unwrap();
    // Ten seconds: long enough for two spectators to come while it runs.
    let long_game = |arena| {
        let mut args = game(arena);
        *args.last_mut().unwrap() = "600";
        args
    };
    let host_args = [long_game(&arena), vec!["--inputs", "random:1"]].concat();
    let (mut host, address, host_key) = host_showing_its_key(dir.path(), &host_args);
    let join_args = [
        vec!["join", &address],
        long_game(&arena),
        vec!["--inputs", "random:2"],
    ]
    .concat();
    let join = spawn_netcade(&join_args);
    host.wait_for_stdout("the match began", TIMEOUT);
    let other = if host_key.starts_with('0') {
        "11111-11111"
    } else {
        "00000-00000"
    };
    let watch = |key: &str| {
        let args = [
            vec!["spectate", &address],
            long_game(&arena),
            vec!["--json", "--peer-key", key],
        ]
        .concat();
        spawn_netcade(&args).finish(TIMEOUT)
    };
    let refused = watch(other);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains(&format!(
            "error: P1's key is {host_key}, not the --peer-key {other}"
        )),
        "{}",
        stderr(&refused)
    );
    let spectator = watch(&host_key);
    let (host, join) = (host.finish(TIMEOUT), join.finish(TIMEOUT));
    assert!(spectator.status.success(), "{}", stderr(&spectator));
    assert!(host.status.success() && join.status.success());
    let seen_by_spectator = word_after(&stdout(&spectator), "link to P1: fingerprint ");
    assert!(stdout(&spectator).contains(&format!("P1's key {host_key}")));
    let json = last_json(&spectator);
    let spectator_key = json["netplay"]["key"].as_str().unwrap().to_string();
    let link = &json["netplay"]["links"][0];
    assert_eq!(link["fingerprint"], seen_by_spectator.as_str());
    assert_eq!(link["peer_key"], host_key.as_str());
    // The host showed the same fingerprint for its spectator, with its key.
    assert!(
        stdout(&host).contains(&format!(
            "a spectator joined: fingerprint {seen_by_spectator} (its key {spectator_key})"
        )),
        "{}",
        stdout(&host)
    );
}

#[test]
fn a_peer_key_for_a_retroarch_host_which_has_no_key_is_one_clear_error() {
    let output = support::cli::netcade(&[
        "spectate",
        "retroarch://127.0.0.1:9",
        "--core",
        "duel",
        "--peer-key",
        "K7QD2-MXA4P",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("error: --peer-key pins a netcade host's key"),
        "{}",
        stderr(&output)
    );
}
