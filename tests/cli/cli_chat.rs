//! Chat between two real processes over UDP on loopback: lines a
//! `--chat-script` says on one side are printed on the other as
//! `chat NAME: text`, and both summaries count them. Verdicts never depend
//! on timing: timeouts only guard against a hang.

use std::path::{Path, PathBuf};
use std::time::Duration;
use support::cli::{last_json, netcade, spawn_host, spawn_netcade, stderr, stdout};

const MATCH_TIMEOUT: Duration = Duration::from_secs(120);

fn chat_script(dir: &Path, name: &str, lines: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, lines).unwrap();
    path
}

#[test]
fn lines_a_chat_script_says_on_one_side_are_printed_on_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    let game = ["--core", "duel", "--rom", &arena, "--headless"];
    let host_script = chat_script(dir.path(), "host.chat", "30 hello from the host\n");
    let join_script = chat_script(
        dir.path(),
        "join.chat",
        "# the joiner answers\n60 hi back, good luck\n",
    );
    let (host_script, join_script) = (
        host_script.display().to_string(),
        join_script.display().to_string(),
    );
    let common = ["--frames", "300", "--json"];
    let host_args = [
        &game[..],
        &common,
        &["--name", "Ana", "--chat-script", &host_script],
    ]
    .concat();
    let (host, port) = spawn_host(dir.path(), &host_args, MATCH_TIMEOUT);
    let address = format!("127.0.0.1:{port}");
    let join_args = [
        &["join", &address][..],
        &game,
        &common,
        &["--chat-script", &join_script],
    ]
    .concat();
    let join = spawn_netcade(&join_args);
    let (host, join) = (host.finish(MATCH_TIMEOUT), join.finish(MATCH_TIMEOUT));
    for (side, output) in [("host", &host), ("join", &join)] {
        assert!(output.status.success(), "{side}: {}", stderr(output));
    }
    assert!(
        stdout(&join).contains("chat P1 Ana: hello from the host"),
        "{}",
        stdout(&join)
    );
    assert!(
        stdout(&host).contains("chat P2: hi back, good luck"),
        "{}",
        stdout(&host)
    );
    for output in [&host, &join] {
        let chat = &last_json(output)["netplay"]["chat"];
        assert_eq!(
            (chat["sent"].as_u64(), chat["received"].as_u64()),
            (Some(1), Some(1)),
            "{chat}"
        );
    }
}

#[test]
fn a_chat_script_with_a_bad_line_is_refused_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let script = chat_script(dir.path(), "bad.chat", "10 fine\nlater hello\n");
    let script = script.display().to_string();
    let arena = support::dojo_arena();
    let output = netcade(&[
        "host",
        "--core",
        "duel",
        "--rom",
        &arena,
        "--headless",
        "--chat-script",
        &script,
    ]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let error = stderr(&output);
    assert!(
        error.contains("error:") && error.contains("line 2: `later` is not a frame number"),
        "{error}"
    );
}

#[test]
fn a_spectators_line_reaches_both_players_and_the_hosts_line_reaches_the_spectator() {
    let dir = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    let game = [
        "--core",
        "duel",
        "--rom",
        &arena,
        "--headless",
        "--frames",
        "600",
    ];
    let host_script = chat_script(dir.path(), "host.chat", "500 the host speaks\n");
    let watch_script = chat_script(dir.path(), "watch.chat", "200 nice match\n");
    let (host_script, watch_script) = (
        host_script.display().to_string(),
        watch_script.display().to_string(),
    );
    let host_args = [&game[..], &["--name", "Ana", "--chat-script", &host_script]].concat();
    let (mut host, port) = spawn_host(dir.path(), &host_args, MATCH_TIMEOUT);
    let address = format!("127.0.0.1:{port}");
    let join = spawn_netcade(&[&["join", &address][..], &game].concat());
    host.wait_for_stdout("the match began", MATCH_TIMEOUT);
    let watch_args = [
        &["spectate", &address][..],
        &game,
        &["--chat-script", &watch_script],
    ]
    .concat();
    let watch = spawn_netcade(&watch_args);
    let (host, join, watch) = (
        host.finish(MATCH_TIMEOUT),
        join.finish(MATCH_TIMEOUT),
        watch.finish(MATCH_TIMEOUT),
    );
    for (side, output) in [("host", &host), ("join", &join), ("spectator", &watch)] {
        assert!(output.status.success(), "{side}: {}", stderr(output));
    }
    for (side, output) in [("host", &host), ("join", &join)] {
        assert!(
            stdout(output).contains("chat spectator 1: nice match"),
            "{side}: {}",
            stdout(output)
        );
    }
    assert!(
        stdout(&watch).contains("chat P1 Ana: the host speaks"),
        "{}",
        stdout(&watch)
    );
}
