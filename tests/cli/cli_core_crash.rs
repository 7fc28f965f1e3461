//! A core that crashes the process is reported by the netcade binary: the
//! core, the content, what netcade was asking of it, a likely cause, and
//! exit code 4. The crashing cores are fakes compiled at test time.

use std::path::Path;
use support::cli::{assert_refusals, last_json, netcade, refusal, stderr, Refusal};
use support::fake_core::FakeCore;

/// `netcade COMMAND --core <fake> --rom game.fake --frames 5` (a sync-test
/// checks 2 frames back) with `core` built into `dir`.
fn fake_args(dir: &Path, core: &FakeCore, command: &str) -> Vec<String> {
    let library = core.build(dir);
    let content = dir.join("game.fake");
    std::fs::write(&content, b"a game for the fake core").unwrap();
    let mut args = vec![command.to_string(), "--core".into()];
    args.push(library.display().to_string());
    args.extend(["--rom".into(), content.display().to_string()]);
    args.extend(["--frames".into(), "5".into()]);
    if command == "synctest" {
        // A check distance must fit in the run.
        args.extend(["--check-distance".into(), "2".into()]);
    }
    args
}

/// A crash report: exit code 4, the core named first, a likely cause on a
/// `hint:` line, and each of `mentions`.
fn crash_report(dir: &Path, core: FakeCore, command: &str, mentions: &[&str]) -> Refusal {
    let args = fake_args(dir, &core, command);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut report = refusal(&args, "\nhint: ", 4).starting("error: core Fake (");
    for mention in mentions {
        report = report.mentioning(mention);
    }
    report
}

/// A fake core running `code` in `retro_run`.
fn crashing_in_run(code: &'static str) -> FakeCore {
    FakeCore {
        in_run: code,
        ..FakeCore::default()
    }
}

#[test]
fn a_core_crashing_is_reported_with_what_netcade_asked_of_it_and_exits_4() {
    let dir = tempfile::tempdir().unwrap();
    // Each fake core and its content in a folder of its own.
    let folder = |name: &str| {
        let folder = dir.path().join(name);
        std::fs::create_dir(&folder).unwrap();
        folder
    };
    let loading = FakeCore {
        in_load_game: "crash_with_sigfpe();",
        ..FakeCore::default()
    };
    // The sync-test saves a state before its first frame.
    let saving = FakeCore {
        in_serialize: "crash_with_sigsegv();",
        ..FakeCore::default()
    };
    assert_refusals(&[
        crash_report(
            &folder("loading"),
            loading,
            "run",
            &[
                "fake_libretro.so",
                "crashed with SIGFPE",
                "while loading the content",
                "game.fake",
                "the core takes .fake files",
            ],
        ),
        crash_report(
            &folder("in-frame"),
            crashing_in_run("if (frames == 3) crash_with_sigsegv();"),
            "run",
            &[
                "crashed with SIGSEGV",
                "while running frame 3",
                "game.fake; the core takes .fake files",
            ],
        ),
        crash_report(
            &folder("stack"),
            crashing_in_run("if (frames == 2) crash_with_stack_overflow(0);"),
            "run",
            &["SIGSEGV", "stack overflow", "while running frame 2"],
        ),
        crash_report(
            &folder("thread"),
            crashing_in_run("if (frames == 2) crash_on_own_thread();"),
            "run",
            &[
                "crashed with SIGSEGV",
                "on a thread of its own while netcade was running frame 2",
            ],
        ),
        crash_report(
            &folder("saving"),
            saving,
            "synctest",
            &["while saving a state before the first frame", "savestate"],
        ),
    ]);
}

/// The JSON line `run --json` of `core` (built into `dir`) ends with,
/// which must exit 4, as a crashed core's run does.
fn crashed_run_json(dir: &Path, core: &FakeCore) -> serde_json::Value {
    let mut args = fake_args(dir, core, "run");
    args.push("--json".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = netcade(&args);
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    last_json(&output)
}

#[test]
fn a_crashed_cores_command_ends_its_json_output_with_the_crash() {
    let dir = tempfile::tempdir().unwrap();
    let core = crashing_in_run("if (frames == 3) crash_with_sigsegv();");
    let json = crashed_run_json(dir.path(), &core);
    assert_eq!(json["command"], "run");
    assert_eq!(json["end"], "core_crashed");
    assert_eq!(json["exit_code"], 4);
    assert!(
        json["error"]
            .as_str()
            .is_some_and(|error| error.contains("SIGSEGV")),
        "{json}"
    );
}

#[test]
fn a_core_that_does_not_crash_is_not_reported() {
    let dir = tempfile::tempdir().unwrap();
    let args = fake_args(dir.path(), &FakeCore::default(), "run");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = netcade(&args);
    let text = stderr(&output);
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

#[test]
fn an_exception_escaping_a_cpp_core_in_a_frame_is_reported_as_its_crash() {
    let dir = tempfile::tempdir().unwrap();
    let core = FakeCore {
        in_run: r#"if (frames == 3) throw_from_core("the emulated CPU jammed");"#,
        cplusplus: true,
        ..FakeCore::default()
    };
    assert_refusals(&[crash_report(
        dir.path(),
        core.clone(),
        "run",
        &[
            "crashed with a C++ exception (the emulated CPU jammed)",
            "while running frame 3",
        ],
    )]);
    let json = crashed_run_json(dir.path(), &core);
    assert_eq!(json["end"], "core_crashed");
    assert_eq!(
        json["error"],
        "the core crashed with a C++ exception (the emulated CPU jammed)"
    );
}

#[test]
fn a_cpp_core_throwing_on_a_state_it_cannot_read_has_refused_it_and_nothing_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let core = FakeCore {
        in_unserialize: r#"throw_from_core("unreadable state");"#,
        cplusplus: true,
        ..FakeCore::default()
    };
    let args = fake_args(dir.path(), &core, "synctest");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = netcade(&args);
    let text = stderr(&output);
    assert!(!text.contains("crashed"), "{text}");
    assert!(
        text.contains("core Fake threw a C++ exception loading the state: unreadable state"),
        "{text}"
    );
    assert!(!output.status.success(), "{output:?}");
}
