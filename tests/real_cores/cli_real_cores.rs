//! `netcade run` and `synctest` on real cores (fetched by
//! scripts/fetch-test-content; ignored while it is missing, see
//! `support::content`).

use std::path::Path;
use std::process::Output;
use support::cli::{last_json, netcade};

/// `netcade run … --json` with `options` (`KEY=VALUE`) set, which must succeed.
fn run_json(
    core: &Path,
    rom: &Path,
    frames: &str,
    inputs: &str,
    options: &[&str],
) -> serde_json::Value {
    let mut args = vec![
        "run",
        "--core",
        core.to_str().unwrap(),
        "--rom",
        rom.to_str().unwrap(),
        "--frames",
        frames,
        "--inputs",
        inputs,
        "--json",
    ];
    for option in options {
        args.extend_from_slice(&["--option", option]);
    }
    let output = netcade(&args);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    last_json(&output)
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn stella_runs_and_sync_tests_the_two_player_atari_games() {
    let Some(core) = support::real_core("stella") else {
        return;
    };
    for game in ["boxing.bin", "combat.bin", "surround.bin", "tennis.bin"] {
        let Some(rom) = support::real_rom(game) else {
            return;
        };
        let json = run_json(&core, &rom, "600", "random:1", &[]);
        assert_eq!(json["frames"], 600, "{game}: {json}");
        assert_eq!(
            run_json(&core, &rom, "600", "random:1", &[])["checksums"]["memory"],
            json["checksums"]["memory"],
            "{game}"
        );

        let output = netcade(&[
            "synctest",
            "--core",
            core.to_str().unwrap(),
            "--rom",
            rom.to_str().unwrap(),
            "--frames",
            "300",
            "--check-distance",
            "7",
            "--json",
        ]);
        assert_eq!(output.status.code(), Some(0), "{game}: {output:?}");
        assert_eq!(last_json(&output)["passed"], true, "{game}");
    }
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn genesis_plus_gx_runs_airstriker_past_its_title_with_random_play() {
    let (Some(core), Some(rom)) = (
        support::real_core("genesis_plus_gx"),
        support::real_rom("airstriker.md"),
    ) else {
        return;
    };
    // Random play taps START now and then, which leaves the title: the
    // picture then differs from a game nobody touches. (Without the option
    // the game stops at genesis_plus_gx's address-error screen.)
    let played = run_json(&core, &rom, "3000", "random:1", &[NO_ADDRESS_ERRORS]);
    let idle = run_json(&core, &rom, "3000", "none", &[NO_ADDRESS_ERRORS]);
    assert_eq!(played["frames"], 3000);
    assert_ne!(played["checksums"]["memory"], idle["checksums"]["memory"]);
    assert_ne!(played["checksums"]["video"], idle["checksums"]["video"]);
    assert!(played["overhead_share"].as_f64().is_some(), "{played}");
}

/// Waits out the logo, presses START on Airstriker's title, then flies and
/// fires: the game is played, not left on its title.
const AIRSTRIKER_PLAY: &str = "\
420x NONE
5x START
40x NONE
40x RIGHT+B
40x LEFT+B
30x UP
30x DOWN+B
40x RIGHT
40x LEFT+B
30x UP+B
30x DOWN
40x RIGHT+B
40x LEFT+B
30x UP
30x DOWN+B
";

/// Airstriker performs a 68k access genesis_plus_gx treats as an address
/// error (its default), which stops the game at a crash screen before the
/// title; the address-error option off lets it run as on other emulators.
const NO_ADDRESS_ERRORS: &str = "genesis_plus_gx_addr_error=disabled";

fn airstriker_synctest(core: &Path, rom: &Path, script: &Path, extra: &[&str]) -> Output {
    let dumps = tempfile::tempdir().unwrap();
    let mut args = vec![
        "synctest",
        "--core",
        core.to_str().unwrap(),
        "--rom",
        rom.to_str().unwrap(),
        "--frames",
        "1000",
        "--check-distance",
        "7",
        "--inputs",
        script.to_str().unwrap(),
        "--dump-dir",
        dumps.path().to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    netcade(&args)
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn genesis_plus_gx_sync_tests_airstriker_being_played_with_a_settle_window() {
    let (Some(core), Some(rom)) = (
        support::real_core("genesis_plus_gx"),
        support::real_rom("airstriker.md"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("airstriker.txt");
    std::fs::write(&script, AIRSTRIKER_PLAY).unwrap();

    // The script leaves the title: the game's memory is not the idle one.
    let played = run_json(
        &core,
        &rom,
        "1000",
        script.to_str().unwrap(),
        &[NO_ADDRESS_ERRORS],
    );
    let idle = run_json(&core, &rom, "1000", "none", &[NO_ADDRESS_ERRORS]);
    assert_ne!(played["checksums"]["memory"], idle["checksums"]["memory"]);
    assert_ne!(played["checksums"]["video"], idle["checksums"]["video"]);

    // genesis_plus_gx does not restore the picture size while the game has
    // not yet set up its display (frames 1-4): those rollbacks draw a blank
    // picture of another size for a few frames. Strictly, that fails...
    let strict = airstriker_synctest(&core, &rom, &script, &["--option", NO_ADDRESS_ERRORS]);
    assert_eq!(strict.status.code(), Some(1), "{strict:?}");
    let json = last_json(&strict);
    assert_eq!(json["desync"]["differing"], serde_json::json!(["video"]));
    assert!(json["desync"]["frame"].as_u64().unwrap() <= 4, "{json}");

    // ...and with a settle window it passes, naming what healed.
    let settled = airstriker_synctest(
        &core,
        &rom,
        &script,
        &["--option", NO_ADDRESS_ERRORS, "--settle-frames", "8"],
    );
    assert_eq!(settled.status.code(), Some(0), "{settled:?}");
    let json = last_json(&settled);
    assert_eq!(json["passed"], true, "{json}");
    assert_eq!(json["settle_frames"], 8);
    assert!(
        json["transient_differences"].as_u64().unwrap() > 0,
        "{json}"
    );
    assert_eq!(json["transient_kinds"], serde_json::json!(["video"]));
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn picodrive_fails_airstriker_sync_test_even_with_a_settle_window() {
    // picodrive's states do not carry all of its timing: after a load the
    // game's memory goes its own way and stays there. A settle window must
    // not hide that.
    let (Some(core), Some(rom)) = (
        support::real_core("picodrive"),
        support::real_rom("airstriker.md"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("airstriker.txt");
    std::fs::write(&script, AIRSTRIKER_PLAY).unwrap();
    let output = airstriker_synctest(&core, &rom, &script, &["--settle-frames", "8"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let json = last_json(&output);
    assert_eq!(json["passed"], false);
    assert!(
        json["desync"]["still_differing_at"].as_u64().is_some(),
        "{json}"
    );
    assert!(json["desync"]["differing"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!("memory")));
}

#[test]
fn a_run_that_requires_test_content_runs_the_real_core_tests() {
    if std::env::var("NETCADE_REQUIRE_CONTENT").as_deref() == Ok("1") {
        // Built by build.rs's look at the content directory, not a constant
        // of the code.
        let built_with_content = cfg!(netcade_test_content);
        assert!(
            built_with_content,
            "NETCADE_REQUIRE_CONTENT=1, but the tests were built without the test content, \
             so the real-core tests are ignored: run scripts/fetch-test-content first"
        );
    }
}
