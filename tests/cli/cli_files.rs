//! Where netcade lets a core read and write: the system (BIOS) and save
//! directories, chosen by flag, by environment variable, or under netcade's
//! data directory.

use std::path::Path;
use support::cli::netcade_as_user;
use support::duel_arena;

/// Runs Duel for one frame in `dir` with `extra` arguments and `env`.
fn run_duel(dir: &Path, extra: &[&str], env: &[(&str, &Path)]) {
    let arena = duel_arena("dojo");
    let mut args = vec!["run", "--core", "duel", "--rom", arena.to_str().unwrap()];
    args.extend(["--frames", "1"]);
    args.extend(extra);
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_netcade"));
    command
        .current_dir(dir)
        .args(&args)
        .env_remove("NETCADE_DUEL_CORE")
        .env_remove("NETCADE_SYSTEM_DIR")
        .env_remove("NETCADE_SAVE_DIR")
        .env("XDG_DATA_HOME", dir.join("data-home"));
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
}

#[test]
fn by_default_the_core_gets_system_and_save_folders_in_the_xdg_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    run_duel(dir.path(), &[], &[]);
    let data = dir.path().join("data-home/netcade");
    assert!(data.join("system").is_dir());
    assert!(data.join("saves").is_dir());
}

#[test]
fn flags_choose_the_system_and_save_directories_over_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let (system, saves) = (dir.path().join("bios"), dir.path().join("memory-cards"));
    let (env_system, env_saves) = (dir.path().join("env-bios"), dir.path().join("env-saves"));
    run_duel(
        dir.path(),
        &[
            "--system-dir",
            system.to_str().unwrap(),
            "--save-dir",
            saves.to_str().unwrap(),
        ],
        &[
            ("NETCADE_SYSTEM_DIR", &env_system),
            ("NETCADE_SAVE_DIR", &env_saves),
        ],
    );
    assert!(system.is_dir() && saves.is_dir());
    assert!(!env_system.exists() && !env_saves.exists());
    assert!(
        !dir.path().join("data-home").exists(),
        "nothing written elsewhere"
    );
}

#[test]
fn environment_variables_choose_them_when_no_flag_does() {
    let dir = tempfile::tempdir().unwrap();
    let (system, saves) = (dir.path().join("bios"), dir.path().join("memory-cards"));
    run_duel(
        dir.path(),
        &[],
        &[
            ("NETCADE_SYSTEM_DIR", &system),
            ("NETCADE_SAVE_DIR", &saves),
        ],
    );
    assert!(system.is_dir() && saves.is_dir());
    assert!(
        !dir.path().join("data-home").exists(),
        "nothing written elsewhere"
    );
}

#[test]
fn the_demo_gives_its_cores_the_directories_the_environment_names() {
    let dir = tempfile::tempdir().unwrap();
    let (system, saves) = (dir.path().join("bios"), dir.path().join("memory-cards"));
    let png = dir.path().join("last-frame.png");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_netcade"))
        .current_dir(dir.path())
        .args([
            "demo",
            "--simulated",
            "--frames",
            "30",
            "--png",
            png.to_str().unwrap(),
        ])
        .env_remove("NETCADE_DUEL_CORE")
        .env("NETCADE_SYSTEM_DIR", &system)
        .env("NETCADE_SAVE_DIR", &saves)
        .env("XDG_DATA_HOME", dir.path().join("data-home"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(system.is_dir() && saves.is_dir());
    assert!(
        !dir.path().join("data-home").exists(),
        "nothing written elsewhere"
    );
}

#[test]
fn a_run_writes_nothing_into_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
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
            "--system-dir",
            data.path().join("system").to_str().unwrap(),
            "--save-dir",
            data.path().join("saves").to_str().unwrap(),
        ],
        "",
    );
    assert!(output.status.success(), "{output:?}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_chosen_directory_that_cannot_be_created_is_one_error_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-folder");
    std::fs::write(&file, "").unwrap();
    let system = file.join("system");
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
            "1",
            "--system-dir",
            system.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let text = String::from_utf8_lossy(&output.stderr);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("error: cannot create directory"), "{text}");
    assert!(text.contains(&system.display().to_string()), "{text}");
    assert!(text.contains("--system-dir"), "{text}");
}

#[test]
fn a_hosts_port_file_replaces_a_link_left_at_its_path_and_goes_when_the_host_ends() {
    let dir = tempfile::tempdir().unwrap();
    // Someone who can write to the folder points the port file at a file
    // of the user's.
    let victim = dir.path().join("precious.txt");
    std::fs::write(&victim, "the user's own words\n").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("port")).unwrap();
    let arena = support::dojo_arena();
    let game = ["--core", "duel", "--rom", &arena, "--headless"];
    let frames = ["--frames", "60", "--no-record"];
    let timeout = std::time::Duration::from_secs(120);
    let (host, port) =
        support::cli::spawn_host(dir.path(), &[&game[..], &frames].concat(), timeout);
    let address = format!("127.0.0.1:{port}");
    let join = support::cli::spawn_netcade(&[&["join", &address][..], &game, &frames].concat());
    for output in [host.finish(timeout), join.finish(timeout)] {
        assert!(output.status.success(), "{output:?}");
    }
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "the user's own words\n"
    );
    assert!(std::fs::symlink_metadata(dir.path().join("port")).is_err());
}
