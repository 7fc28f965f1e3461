//! A core that crashes the process is reported by the netcade binary: the
//! core, the content, what netcade was asking of it, a likely cause, and
//! exit code 4. The crashing cores are fakes compiled at test time.

mod support;

use std::process::Output;
use support::cli::{netcade, stderr};
use support::fake_core::FakeCore;

/// Runs `netcade COMMAND --core <fake> --rom game.fake --frames 5` (a
/// sync-test checks 2 frames back).
fn run_fake(core: FakeCore, command: &str) -> (Output, String) {
    let dir = tempfile::tempdir().unwrap();
    let library = core.build(dir.path());
    let content = dir.path().join("game.fake");
    std::fs::write(&content, b"a game for the fake core").unwrap();
    let mut args = vec![
        command,
        "--core",
        library.to_str().unwrap(),
        "--rom",
        content.to_str().unwrap(),
        "--frames",
        "5",
    ];
    if command == "synctest" {
        // A check distance must fit in the run.
        args.extend(["--check-distance", "2"]);
    }
    let output = netcade(&args);
    let text = stderr(&output);
    (output, text)
}

fn assert_crash_report(output: &Output, text: &str, must_mention: &[&str]) {
    assert_eq!(output.status.code(), Some(4), "stderr: {text}");
    assert!(text.starts_with("error: core Fake ("), "stderr: {text}");
    for part in must_mention {
        assert!(text.contains(part), "stderr lacks {part:?}: {text}");
    }
    assert!(
        text.lines().any(|line| line.starts_with("hint: ")),
        "stderr: {text}"
    );
}

#[test]
fn a_core_crashing_while_loading_content_is_named_with_the_file_and_exits_4() {
    let (output, text) = run_fake(
        FakeCore {
            in_load_game: "crash_with_sigfpe();",
            ..FakeCore::default()
        },
        "run",
    );
    assert_crash_report(
        &output,
        &text,
        &[
            "fake_libretro.so",
            "crashed with SIGFPE",
            "while loading the content",
            "game.fake",
            "the core takes .fake files",
        ],
    );
}

#[test]
fn a_core_crashing_in_a_frame_is_reported_with_the_frame_number() {
    let (output, text) = run_fake(
        FakeCore {
            in_run: "if (frames == 3) crash_with_sigsegv();",
            ..FakeCore::default()
        },
        "run",
    );
    assert_crash_report(
        &output,
        &text,
        &[
            "crashed with SIGSEGV",
            "while running frame 3",
            "game.fake; the core takes .fake files",
        ],
    );
}

#[test]
fn a_core_overflowing_its_stack_is_reported_too() {
    let (output, text) = run_fake(
        FakeCore {
            in_run: "if (frames == 2) crash_with_stack_overflow(0);",
            ..FakeCore::default()
        },
        "run",
    );
    assert_crash_report(
        &output,
        &text,
        &["SIGSEGV", "stack overflow", "while running frame 2"],
    );
}

#[test]
fn a_crash_on_a_thread_the_core_started_is_blamed_on_the_core() {
    let (output, text) = run_fake(
        FakeCore {
            in_run: "if (frames == 2) crash_on_own_thread();",
            ..FakeCore::default()
        },
        "run",
    );
    assert_crash_report(
        &output,
        &text,
        &[
            "crashed with SIGSEGV",
            "on a thread of its own while netcade was running frame 2",
        ],
    );
}

#[test]
fn a_core_crashing_while_saving_a_state_says_so() {
    // The sync-test saves a state before its first frame.
    let (output, text) = run_fake(
        FakeCore {
            in_serialize: "crash_with_sigsegv();",
            ..FakeCore::default()
        },
        "synctest",
    );
    assert_crash_report(
        &output,
        &text,
        &["while saving a state before the first frame", "savestate"],
    );
}

#[test]
fn a_core_that_does_not_crash_is_not_reported() {
    let (output, text) = run_fake(FakeCore::default(), "run");
    assert_eq!(output.status.code(), Some(0), "stderr: {text}");
    assert!(!text.contains("crashed"), "stderr: {text}");
}

#[test]
fn the_exit_code_of_a_crashed_core_is_documented_in_the_help() {
    let output = netcade(&["--help"]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.lines()
            .any(|line| line.trim_start().starts_with("4  the core crashed")),
        "{text}"
    );
}
