//! The real `netcade` binary driving the Duel core: run, synctest, debug and
//! demo, as users and scripts call them.

use std::path::PathBuf;
use std::process::Command;
use support::cli::{
    last_json, netcade, netcade_as_user, netcade_binary_as_user, netcade_in_with_env,
    netcade_with_stdin, stderr, stdout,
};
use support::{duel_arena, duel_core};

fn on_duel<'a>(command: &'a str, core: &'a str, arena: &'a str) -> Vec<&'a str> {
    vec![command, "--core", core, "--rom", arena]
}

fn assert_hex_checksums(json: &serde_json::Value) {
    for kind in ["memory", "state", "video"] {
        let value = json["checksums"][kind].as_str().unwrap_or_default();
        assert_eq!(value.len(), 16, "{kind}: {json}");
        assert!(value.chars().all(|c| c.is_ascii_hexdigit()), "{json}");
    }
}

#[test]
fn run_reports_the_same_checksums_for_the_same_seed_in_two_processes() {
    let (core, arena) = (duel_core(), duel_arena("dojo"));
    let (core, arena) = (core.to_str().unwrap(), arena.to_str().unwrap());
    let run = |seed: &str| {
        let mut args = on_duel("run", core, arena);
        args.extend(["--frames", "600", "--inputs", seed, "--json"]);
        let output = netcade(&args);
        assert!(output.status.success(), "{output:?}");
        last_json(&output)
    };
    let first = run("random:5");
    assert_eq!(first["frames"], 600);
    assert!(first["fps"].as_f64().unwrap() > 0.0);
    let share = first["overhead_share"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&share), "{first}");
    assert_hex_checksums(&first);
    assert_eq!(run("random:5")["checksums"], first["checksums"]);
    assert_ne!(run("random:6")["checksums"], first["checksums"]);
}

#[test]
fn run_realtime_goes_at_the_games_own_60_fps_and_ends_as_an_unthrottled_run() {
    let (core, arena) = (duel_core(), duel_arena("dojo"));
    let (core, arena) = (core.to_str().unwrap(), arena.to_str().unwrap());
    let run = |pace: &[&str]| {
        let mut args = on_duel("run", core, arena);
        args.extend(["--frames", "30", "--inputs", "random:5", "--json"]);
        args.extend(pace);
        let output = netcade(&args);
        assert!(output.status.success(), "{output:?}");
        last_json(&output)
    };
    let (realtime, unthrottled) = (run(&["--realtime"]), run(&[]));
    // Frame 29 is due 29/60 s after frame 0: never sooner.
    assert!(
        realtime["seconds"].as_f64().unwrap() >= 29.0 / 60.0,
        "{realtime}"
    );
    assert_eq!(realtime["checksums"], unthrottled["checksums"]);
}

#[test]
fn run_plays_an_input_script() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("walk.inputs");
    std::fs::write(
        &script,
        "# walk towards each other\n90x RIGHT LEFT\n30x B A\n",
    )
    .unwrap();
    let (core, arena) = (duel_core(), duel_arena("dojo"));
    let mut args = on_duel("run", core.to_str().unwrap(), arena.to_str().unwrap());
    args.extend([
        "--frames",
        "120",
        "--json",
        "--inputs",
        script.to_str().unwrap(),
    ]);
    let scripted = last_json(&netcade(&args));
    args.pop();
    args.push("none");
    let idle = last_json(&netcade(&args));
    assert_eq!(scripted["frames"], 120);
    assert_ne!(scripted["checksums"]["memory"], idle["checksums"]["memory"]);
}

#[test]
fn an_input_script_shorter_than_the_run_is_said_once_for_run_and_synctest() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("walk.inputs");
    std::fs::write(&script, "90x RIGHT LEFT\n30x B A\n").unwrap();
    let (core, arena) = (duel_core(), duel_arena("dojo"));
    for command in ["run", "synctest"] {
        let mut args = on_duel(command, core.to_str().unwrap(), arena.to_str().unwrap());
        args.extend(["--inputs", script.to_str().unwrap(), "--frames"]);
        let long = netcade(&[args.as_slice(), &["300"]].concat());
        assert!(long.status.success(), "{long:?}");
        let warnings: Vec<String> = stderr(&long)
            .lines()
            .filter(|line| line.starts_with("warning: "))
            .map(str::to_string)
            .collect();
        assert_eq!(warnings.len(), 1, "{command}: {long:?}");
        assert!(warnings[0].contains("walk.inputs"), "{warnings:?}");
        assert!(warnings[0].contains("describes 120 frames"), "{warnings:?}");

        let exact = netcade(&[args.as_slice(), &["120"]].concat());
        assert!(exact.status.success(), "{exact:?}");
        assert!(!stderr(&exact).contains("warning"), "{command}: {exact:?}");
    }
}

#[test]
fn synctest_passes_on_duel_with_a_verdict_line() {
    let (core, arena) = (duel_core(), duel_arena("dojo"));
    let mut args = on_duel("synctest", core.to_str().unwrap(), arena.to_str().unwrap());
    args.extend([
        "--frames",
        "600",
        "--check-distance",
        "7",
        "--compare",
        "all",
        "--json",
    ]);
    let output = netcade(&args);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(stdout(&output)
        .contains("sync-test passed: 600 frames, distance 7, compared memory+state+video"));
    let json = last_json(&output);
    assert_eq!(json["passed"], true);
    assert_eq!(json["frames"], 600);
    assert_hex_checksums(&json);
    // Distance 7 keeps 8 frames, each a 118-byte state and 118 bytes of RAM.
    assert_eq!(json["history_bytes"], 8 * 236, "{json}");
}

#[test]
fn synctest_catches_injected_nondeterminism_names_the_bytes_and_dumps_both_versions() {
    let dumps = tempfile::tempdir().unwrap();
    let (core, arena) = (duel_core(), duel_arena("dojo"));
    let mut args = on_duel("synctest", core.to_str().unwrap(), arena.to_str().unwrap());
    args.extend([
        "--frames",
        "600",
        "--check-distance",
        "4",
        "--option",
        "duel_inject_nondeterminism=enabled",
        "--dump-dir",
        dumps.path().to_str().unwrap(),
        "--json",
    ]);
    let output = netcade(&args);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    // fighter1.x is RAM offset 39 = 0x27: the byte the core flips.
    assert!(text.contains("sync-test FAILED at frame "), "{text}");
    assert!(text.contains("memory differs at 0x0027..0x0028"), "{text}");
    let json = last_json(&output);
    assert_eq!(json["passed"], false);
    assert_eq!(json["desync"]["memory"]["ranges"][0], "0x0027..0x0028");
    let dump_dir = PathBuf::from(json["desync"]["dump_dir"].as_str().unwrap());
    assert!(dump_dir.starts_with(dumps.path()));
    for file in [
        "first-pass.state",
        "first-pass.memory",
        "resimulated.state",
        "resimulated.memory",
    ] {
        assert!(dump_dir.join(file).is_file(), "{file} missing");
    }
    assert_ne!(
        std::fs::read(dump_dir.join("first-pass.memory")).unwrap(),
        std::fs::read(dump_dir.join("resimulated.memory")).unwrap()
    );
}

#[test]
fn a_desync_found_from_a_checkout_leaves_its_dumps_in_the_data_directory_not_the_current_one() {
    let (cwd, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (core, arena) = (duel_core(), duel_arena("dojo"));
    let mut args = on_duel("synctest", core.to_str().unwrap(), arena.to_str().unwrap());
    args.extend([
        "--frames",
        "120",
        "--check-distance",
        "4",
        "--option",
        "duel_inject_nondeterminism=enabled",
        "--json",
    ]);
    let output = netcade_in_with_env(cwd.path(), &[("XDG_DATA_HOME", data.path())], &args);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let dump_dir = PathBuf::from(last_json(&output)["desync"]["dump_dir"].as_str().unwrap());
    assert!(
        dump_dir.starts_with(data.path().join("netcade").join("dumps")),
        "{}",
        dump_dir.display()
    );
    let left_here: Vec<_> = std::fs::read_dir(cwd.path()).unwrap().collect();
    assert!(left_here.is_empty(), "{left_here:?}");
}

#[test]
fn a_dump_dir_that_cannot_be_written_keeps_the_verdict_and_the_desync_exit() {
    let dir = tempfile::tempdir().unwrap();
    // A file where the dump directory should go: nothing can be made under it.
    let blocked = dir.path().join("not-a-directory");
    std::fs::write(&blocked, b"").unwrap();
    let (core, arena) = (duel_core(), duel_arena("dojo"));
    let mut args = on_duel("synctest", core.to_str().unwrap(), arena.to_str().unwrap());
    args.extend([
        "--frames",
        "100",
        "--check-distance",
        "4",
        "--option",
        "duel_inject_nondeterminism=enabled",
        "--dump-dir",
        blocked.to_str().unwrap(),
        "--json",
    ]);
    let output = netcade(&args);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        stdout(&output).contains("sync-test FAILED at frame "),
        "{output:?}"
    );
    let json = last_json(&output);
    assert_eq!(json["passed"], false);
    assert!(json["desync"]["dump_dir"].is_null(), "{json}");
    assert!(json["desync"]["dump_error"].is_string(), "{json}");
    let errors = stderr(&output);
    assert!(
        errors.starts_with("error: cannot write the dump directory"),
        "{errors}"
    );
}

#[test]
fn synctest_refuses_a_check_distance_longer_than_the_run() {
    let (core, arena) = (duel_core(), duel_arena("dojo"));
    let mut args = on_duel("synctest", core.to_str().unwrap(), arena.to_str().unwrap());
    args.extend(["--frames", "10", "--check-distance", "50"]);
    let output = netcade(&args);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(stdout(&output).is_empty(), "{output:?}");
    let errors = stderr(&output);
    assert!(
        errors.starts_with("error: a check distance of 50 needs more than 50 frames (got 10)"),
        "{errors}"
    );
    assert_eq!(errors.lines().count(), 1, "{errors}");
}

#[test]
fn a_settle_window_does_not_hide_injected_nondeterminism() {
    let dumps = tempfile::tempdir().unwrap();
    let (core, arena) = (duel_core(), duel_arena("dojo"));
    let mut args = on_duel("synctest", core.to_str().unwrap(), arena.to_str().unwrap());
    args.extend([
        "--frames",
        "600",
        "--check-distance",
        "4",
        "--settle-frames",
        "8",
        "--option",
        "duel_inject_nondeterminism=enabled",
        "--dump-dir",
        dumps.path().to_str().unwrap(),
        "--json",
    ]);
    let output = netcade(&args);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let json = last_json(&output);
    assert_eq!(json["passed"], false);
    assert_eq!(json["desync"]["memory"]["ranges"][0], "0x0027..0x0028");
    assert!(
        json["desync"]["still_differing_at"].as_u64().is_some(),
        "{json}"
    );
}

#[test]
fn debug_steps_back_and_forth_and_diffs_through_stdin() {
    let (core, arena) = (duel_core(), duel_arena("dojo"));
    let args = on_duel("debug", core.to_str().unwrap(), arena.to_str().unwrap());
    let script = "step 60\nmark\ninput 1 RIGHT\nstep 30\nback 30\ngoto 90\nbogus\ndiff\ngoto 60\n";
    let output = netcade_with_stdin(&args, script);
    // `bogus` failed in a script: the exit says so, the error is on stderr.
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let errors = stderr(&output);
    assert_eq!(
        errors.trim_end(),
        "error: unknown command \"bogus\" (try help)"
    );
    let text = stdout(&output);
    assert!(!text.contains("error:"), "{text}");
    let statuses: Vec<&str> = text.lines().filter(|l| l.starts_with("frame=")).collect();
    let at = |frame: &str| -> Vec<&str> {
        statuses
            .iter()
            .copied()
            .filter(|l| l.starts_with(&format!("frame={frame} ")))
            .collect()
    };
    let at_60 = at("60");
    assert!(
        at_60.len() >= 3 && at_60.iter().all(|l| *l == at_60[0]),
        "{text}"
    );
    let at_90 = at("90");
    assert!(
        at_90.len() == 3 && at_90.iter().all(|l| *l == at_90[0]),
        "{text}"
    );
    assert!(text.contains("diff frame 60 -> frame 90"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("memory: 0x")), "{text}");
}

#[test]
fn demo_plays_a_netplay_match_in_sync_over_a_lossy_link_and_saves_a_png() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("last.png");
    let output = netcade(&[
        "demo",
        "--simulated",
        "--frames",
        "300",
        "--png",
        png.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
    let json = last_json(&output);
    assert_eq!(json["frames"], 300);
    assert_hex_checksums(&json);
    let netplay = &json["netplay"];
    assert_eq!(netplay["in_sync"], true, "{json}");
    assert_eq!(netplay["desync_reports"], 0, "{json}");
    // Nearly every frame is confirmed on both machines and compared.
    assert!(
        netplay["compared_frames"].as_u64().unwrap() >= 290,
        "{json}"
    );
    for machine in netplay["machines"].as_array().unwrap() {
        assert_eq!(machine["frames"], 300, "{json}");
        // 100 ms round trip with 2% loss: predictions go wrong and roll back.
        assert!(machine["rollbacks"].as_u64().unwrap() > 0, "{json}");
        let ping = machine["ping_ms"].as_u64().unwrap();
        assert!((80..=150).contains(&ping), "{json}");
        assert!(machine["bytes_received"].as_u64().unwrap() > 0, "{json}");
    }
    let text = stdout(&output);
    assert!(text.contains("netplay in sync"), "{text}");
    assert!(text.contains(png.to_str().unwrap()), "{text}");
}

#[test]
fn demo_reports_a_desync_when_one_machine_runs_a_nondeterministic_duel() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("last.png");
    // A checkpoint (every 60 frames) reports the injected flips only when
    // they left its state different; with the default seed the first that
    // does is frame 360, so the run covers ten checkpoints.
    let output = netcade(&[
        "demo",
        "--simulated",
        "--frames",
        "600",
        "--machine2-option",
        "duel_inject_nondeterminism=enabled",
        "--png",
        png.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let json = last_json(&output);
    let netplay = &json["netplay"];
    assert_eq!(netplay["in_sync"], false, "{json}");
    assert!(netplay["first_difference"].is_u64(), "{json}");
    assert!(netplay["desync_reports"].as_u64().unwrap() > 0, "{json}");
    assert!(stdout(&output).contains("netplay DESYNC"), "{output:?}");
}

#[test]
fn demo_without_the_duel_library_says_how_to_build_it() {
    let output = Command::new(env!("CARGO_BIN_EXE_netcade"))
        .args(["demo"])
        .env("NETCADE_DUEL_CORE", "/nonexistent/libduel.so")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(text.contains("/nonexistent/libduel.so"), "{text}");
    assert!(text.contains("cargo build --release -p duel"), "{text}");
    assert!(!text.contains("panicked"), "{text}");
}

#[test]
fn the_bundled_duel_is_found_by_name_next_to_the_netcade_binary() {
    let dir = tempfile::tempdir().unwrap();
    let arena = duel_arena("dojo");
    let output = netcade_as_user(
        dir.path(),
        &[
            "run",
            "--core",
            "duel",
            "--rom",
            arena.to_str().unwrap(),
            "--frames",
            "60",
        ],
        "",
    );
    assert!(output.status.success(), "{output:?}");
    assert!(stdout(&output).starts_with("Duel "), "{output:?}");
}

#[test]
fn a_netcade_binary_without_duel_beside_it_says_where_it_looked_and_how_to_build_it() {
    let dir = tempfile::tempdir().unwrap();
    let lonely = dir.path().join("netcade");
    std::fs::copy(env!("CARGO_BIN_EXE_netcade"), &lonely).unwrap();
    let arena = duel_arena("dojo");
    let output = netcade_binary_as_user(
        &lonely,
        dir.path(),
        &[
            "run",
            "--core",
            "duel",
            "--rom",
            arena.to_str().unwrap(),
            "--frames",
            "1",
        ],
        "",
    );
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let text = stderr(&output);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with("error: the Duel core library was not found"),
        "{text}"
    );
    assert!(
        text.contains(&dir.path().join("deps").display().to_string()),
        "{text}"
    );
    assert!(text.contains("cargo build --release -p duel"), "{text}");
}
