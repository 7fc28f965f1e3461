//! The real `netcade` binary on bad arguments: a clear message, a non-zero
//! exit code, never a panic.

mod support;

use std::process::Output;
use support::cli::{netcade, stderr};

fn assert_user_mistake(output: &Output, must_mention: &str) {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(2), "stderr: {text}");
    assert!(
        text.contains(must_mention),
        "stderr lacks {must_mention:?}: {text}"
    );
    assert!(!text.contains("panicked"), "stderr: {text}");
}

#[test]
fn a_missing_core_file_is_named_and_exits_2() {
    for command in ["run", "synctest", "debug"] {
        let mut args = vec![command, "--core", "/nonexistent/missing_core.so"];
        if command != "debug" {
            args.extend(["--frames", "10"]);
        }
        let output = netcade(&args);
        assert_user_mistake(&output, "/nonexistent/missing_core.so");
        assert!(
            stderr(&output).starts_with("error: "),
            "{}",
            stderr(&output)
        );
    }
}

#[test]
fn a_missing_input_script_is_named_and_exits_2() {
    let core = tempfile::NamedTempFile::new().unwrap();
    let output = netcade(&[
        "run",
        "--core",
        core.path().to_str().unwrap(),
        "--frames",
        "10",
        "--inputs",
        "/nonexistent/play.inputs",
    ]);
    assert_user_mistake(&output, "/nonexistent/play.inputs");
}

#[test]
fn a_bad_input_script_line_is_named_by_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad.inputs");
    std::fs::write(&script, "RIGHT NONE\n10x RIGHT+JUMP\n").unwrap();
    let core = dir.path().join("core.so");
    std::fs::write(&core, b"not a core").unwrap();
    let output = netcade(&[
        "synctest",
        "--core",
        core.to_str().unwrap(),
        "--frames",
        "10",
        "--inputs",
        script.to_str().unwrap(),
    ]);
    assert_user_mistake(&output, "bad.inputs:2:");
    assert!(stderr(&output).contains("JUMP"));
}

#[test]
fn missing_and_malformed_arguments_are_usage_errors() {
    assert_user_mistake(&netcade(&["run", "--core", "x.so"]), "--frames");
    assert_user_mistake(
        &netcade(&["run", "--core", "x.so", "--frames", "ten"]),
        "ten",
    );
    assert_user_mistake(
        &netcade(&[
            "run", "--core", "x.so", "--frames", "1", "--option", "novalue",
        ]),
        "KEY=VALUE",
    );
    assert_user_mistake(
        &netcade(&[
            "synctest",
            "--core",
            "x.so",
            "--frames",
            "1",
            "--compare",
            "audio",
        ]),
        "audio",
    );
    assert_user_mistake(
        &netcade(&[
            "run",
            "--core",
            "x.so",
            "--frames",
            "1",
            "--inputs",
            "random:abc",
        ]),
        "seed",
    );
}

#[test]
#[cfg(not(feature = "gui"))]
fn the_window_commands_of_a_build_without_the_window_say_how_to_build_it() {
    for args in [&["play", "--core", "duel"][..], &["input", "--test"][..]] {
        let output = netcade(args);
        assert_user_mistake(&output, "--features gui");
        assert!(!stderr(&output).contains("replay"), "{output:?}");
    }
}

#[test]
fn help_lists_the_commands_and_exit_codes() {
    let output = netcade(&["--help"]);
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    for word in ["run", "synctest", "debug", "demo", "Exit codes"] {
        assert!(text.contains(word), "help lacks {word}: {text}");
    }
}

#[test]
fn every_mistake_with_core_content_or_options_is_named_on_one_line_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let text_file = dir.path().join("notes.txt");
    std::fs::write(&text_file, "not a core, not an arena\n").unwrap();
    let libc = support::system_c_library();
    let (core, arena) = (support::duel_core(), support::duel_arena("dojo"));
    let (core, arena, text) = (
        core.to_str().unwrap(),
        arena.to_str().unwrap(),
        text_file.to_str().unwrap(),
    );
    let on_duel = |command: &'static str, rest: &[&'static str]| {
        let mut args = vec![command, "--core", core, "--rom", arena];
        args.extend_from_slice(rest);
        args
    };
    let mut mistakes: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["run", "--core", text, "--rom", arena, "--frames", "10"],
            "notes.txt is not a loadable shared library",
        ),
        (
            vec![
                "run",
                "--core",
                core,
                "--rom",
                "/nonexistent/pit.arena",
                "--frames",
                "10",
            ],
            "content file /nonexistent/pit.arena does not exist",
        ),
        (
            vec!["run", "--core", core, "--rom", text, "--frames", "10"],
            "core Duel refused the content",
        ),
        (
            vec!["run", "--core", core, "--frames", "10"],
            "core Duel needs a content file",
        ),
        (
            on_duel("run", &["--frames", "10", "--option", "no_such_option=1"]),
            "no option `no_such_option`",
        ),
        (
            on_duel(
                "run",
                &[
                    "--frames",
                    "10",
                    "--option",
                    "duel_inject_nondeterminism=maybe",
                ],
            ),
            "allowed values: disabled, enabled",
        ),
        (on_duel("run", &["--frames", "0"]), "--frames"),
        (
            on_duel("synctest", &["--frames", "10", "--check-distance", "0"]),
            "--check-distance",
        ),
        (
            on_duel("synctest", &["--frames", "10", "--settle-frames", "1000"]),
            "--settle-frames",
        ),
        (on_duel("debug", &["--history", "1000000"]), "--history"),
        (vec!["demo", "--frames", "0"], "--frames"),
        (vec!["demo", "--rom", text], "core Duel refused the content"),
    ];
    if let Some(libc) = &libc {
        mistakes.push((
            vec!["run", "--core", libc.to_str().unwrap(), "--frames", "10"],
            "is a shared library but not a libretro core",
        ));
    }
    for (args, must_mention) in mistakes {
        let output = netcade(&args);
        assert_user_mistake(&output, must_mention);
        assert!(
            stderr(&output)
                .lines()
                .any(|line| line.starts_with("error: ")),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn a_connect_timeout_out_of_range_is_refused_by_join_and_spectate() {
    for command in ["join", "spectate"] {
        for timeout in ["0", "-3", "1e20", "NaN"] {
            let output = netcade(&[
                command,
                "127.0.0.1:9",
                "--core",
                "duel",
                "--rom",
                "cores/duel/arenas/dojo.arena",
                "--headless",
                &format!("--connect-timeout-s={timeout}"),
            ]);
            assert_user_mistake(&output, "--connect-timeout-s");
        }
    }
}
