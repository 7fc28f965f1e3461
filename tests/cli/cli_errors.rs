//! The real `netcade` binary on bad arguments: a clear message, a non-zero
//! exit code, never a panic.

use support::cli::{assert_refusals, netcade, refusal, Refusal};

/// A user's mistake: exit code 2 and an `error:` line mentioning `message`.
fn mistake(args: &[&str], message: &str) -> Refusal {
    refusal(args, message, 2)
}

#[test]
fn a_missing_core_file_or_input_script_is_named_and_exits_2() {
    let core = tempfile::NamedTempFile::new().unwrap();
    let core = core.path().to_str().unwrap();
    let missing = "/nonexistent/missing_core.so";
    let script = "/nonexistent/play.inputs";
    assert_refusals(&[
        mistake(&["run", "--core", missing, "--frames", "10"], missing).starting("error: "),
        mistake(&["synctest", "--core", missing, "--frames", "10"], missing).starting("error: "),
        mistake(&["debug", "--core", missing], missing).starting("error: "),
        mistake(
            &["run", "--core", core, "--frames", "10", "--inputs", script],
            script,
        ),
    ]);
}

#[test]
fn a_bad_input_script_line_is_named_by_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad.inputs");
    std::fs::write(&script, "RIGHT NONE\n10x RIGHT+JUMP\n").unwrap();
    let core = dir.path().join("core.so");
    std::fs::write(&core, b"not a core").unwrap();
    let (core, script) = (core.to_str().unwrap(), script.to_str().unwrap());
    assert_refusals(&[mistake(
        &[
            "synctest", "--core", core, "--frames", "10", "--inputs", script,
        ],
        "bad.inputs:2:",
    )
    .mentioning("JUMP")]);
}

#[test]
fn missing_and_malformed_arguments_are_usage_errors() {
    let run = ["run", "--core", "x.so", "--frames"];
    let mut refusals = vec![
        mistake(&["run", "--core", "x.so"], "--frames"),
        mistake(&[&run[..], &["ten"]].concat(), "ten"),
        mistake(
            &[&run[..], &["1", "--option", "novalue"]].concat(),
            "KEY=VALUE",
        ),
        mistake(
            &[
                "synctest",
                "--core",
                "x.so",
                "--frames",
                "1",
                "--compare",
                "audio",
            ],
            "audio",
        ),
        mistake(
            &[&run[..], &["1", "--inputs", "random:abc"]].concat(),
            "seed",
        ),
    ];
    for command in ["join", "spectate"] {
        for timeout in ["0", "-3", "1e20", "NaN"] {
            let timeout = format!("--connect-timeout-s={timeout}");
            let args = [
                command,
                "127.0.0.1:9",
                "--core",
                "duel",
                "--rom",
                "cores/duel/arenas/dojo.arena",
                "--headless",
                &timeout,
            ];
            refusals.push(mistake(&args, "--connect-timeout-s"));
        }
    }
    for window in ["-1", "3601", "soon"] {
        let window = format!("--rejoin-s={window}");
        let args = [
            "join",
            "127.0.0.1:9",
            "--core",
            "duel",
            "--rom",
            "cores/duel/arenas/dojo.arena",
            &window,
        ];
        refusals.push(mistake(&args, "--rejoin-s"));
    }
    // A build without the window answers its commands with how to build it.
    #[cfg(not(feature = "gui"))]
    for args in [&["play", "--core", "duel"][..], &["input", "--test"][..]] {
        refusals.push(mistake(args, "--features gui").not_mentioning("replay"));
    }
    assert_refusals(&refusals);
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
    let nondeterminism = "duel_inject_nondeterminism=maybe";
    let mut refusals = vec![
        mistake(
            &["run", "--core", text, "--rom", arena, "--frames", "10"],
            "notes.txt is not a loadable shared library",
        ),
        mistake(
            &[
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
        mistake(
            &["run", "--core", core, "--rom", text, "--frames", "10"],
            "core Duel refused the content",
        ),
        mistake(
            &["run", "--core", core, "--frames", "10"],
            "core Duel needs a content file",
        ),
        mistake(
            &on_duel("run", &["--frames", "10", "--option", "no_such_option=1"]),
            "no option `no_such_option`",
        ),
        mistake(
            &on_duel("run", &["--frames", "10", "--option", nondeterminism]),
            "allowed values: disabled, enabled",
        ),
        mistake(&on_duel("run", &["--frames", "0"]), "--frames"),
        mistake(
            &on_duel("synctest", &["--frames", "10", "--check-distance", "0"]),
            "--check-distance",
        ),
        mistake(
            &on_duel("synctest", &["--frames", "10", "--settle-frames", "1000"]),
            "--settle-frames",
        ),
        mistake(&on_duel("debug", &["--history", "1000000"]), "--history"),
        mistake(&["demo", "--frames", "0"], "--frames"),
        mistake(&["demo", "--rom", text], "core Duel refused the content"),
    ];
    if let Some(libc) = &libc {
        refusals.push(mistake(
            &["run", "--core", libc.to_str().unwrap(), "--frames", "10"],
            "is a shared library but not a libretro core",
        ));
    }
    assert_refusals(&refusals);
}
