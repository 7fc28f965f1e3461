//! `netcade run` and `synctest` on real cores (fetched by
//! scripts/fetch-test-content; skipped visibly when absent).

mod support;

use std::path::Path;
use std::process::Output;

fn netcade(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_netcade"))
        .args(args)
        .output()
        .expect("the netcade binary runs")
}

fn last_json(output: &Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&output.stdout);
    let last = text.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|err| panic!("{err}: {output:?}"))
}

fn run_json(core: &Path, rom: &Path, frames: &str, inputs: &str) -> serde_json::Value {
    let output = netcade(&[
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
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    last_json(&output)
}

#[test]
fn stella_runs_and_sync_tests_the_two_player_atari_games() {
    let Some(core) = support::real_core("stella") else {
        return;
    };
    for game in ["boxing.bin", "combat.bin", "surround.bin", "tennis.bin"] {
        let Some(rom) = support::real_rom(game) else {
            return;
        };
        let json = run_json(&core, &rom, "600", "random:1");
        assert_eq!(json["frames"], 600, "{game}: {json}");
        assert_eq!(
            run_json(&core, &rom, "600", "random:1")["checksums"]["memory"],
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
fn genesis_plus_gx_runs_airstriker_past_its_title_with_random_play() {
    let (Some(core), Some(rom)) = (
        support::real_core("genesis_plus_gx"),
        support::real_rom("airstriker.md"),
    ) else {
        return;
    };
    // Random play taps START now and then, which leaves the title: the
    // picture then differs from a game nobody touches.
    let played = run_json(&core, &rom, "3000", "random:1");
    let idle = run_json(&core, &rom, "3000", "none");
    assert_eq!(played["frames"], 3000);
    assert_ne!(played["checksums"]["memory"], idle["checksums"]["memory"]);
    assert_ne!(played["checksums"]["video"], idle["checksums"]["video"]);
    assert!(played["overhead_share"].as_f64().is_some(), "{played}");
}
