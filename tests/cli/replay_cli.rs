//! `netcade run --record` and `netcade replay …` as users run them, on the
//! real stella core (ignored while scripts/fetch-test-content has not run,
//! see `support::content`) and on Duel.

use std::path::{Path, PathBuf};
use support::cli::{assert_refusals, last_json, netcade, record_duel, refusal, stderr, stdout};

/// The stella core and combat.bin, or `None` (the test is skipped).
fn stella() -> Option<(String, String)> {
    let core = support::real_core("stella")?;
    let rom = support::real_rom("combat.bin")?;
    Some((core.display().to_string(), rom.display().to_string()))
}

/// Records `frames` frames of `inputs` on stella into `dir/name`; returns
/// the path and the run's JSON.
fn record(
    (core, rom): &(String, String),
    dir: &Path,
    name: &str,
    frames: u32,
    inputs: &str,
) -> (PathBuf, serde_json::Value) {
    let path = dir.join(name);
    let path_text = path.display().to_string();
    let frames = frames.to_string();
    let output = netcade(&[
        "run", "--core", core, "--rom", rom, "--frames", &frames, "--inputs", inputs, "--record",
        &path_text, "--json",
    ]);
    assert!(output.status.success(), "{output:?}");
    (path, last_json(&output))
}

fn replay(args: &[&str]) -> std::process::Output {
    let mut all = vec!["replay"];
    all.extend_from_slice(args);
    netcade(&all)
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn a_recorded_run_plays_back_to_its_final_checksums_and_verifies() {
    let Some(game) = stella() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (path, run) = record(&game, dir.path(), "run.ncr", 1200, "random:5");
    let path = path.display().to_string();
    assert_eq!(run["replay"]["path"], path.as_str());
    assert_eq!(run["replay"]["frames"], 1200);

    let played = replay(&["play", &path, "--headless", "--json"]);
    assert!(played.status.success(), "{played:?}");
    assert_eq!(
        last_json(&played)["checksums"]["memory"],
        run["checksums"]["memory"]
    );
    assert_eq!(
        last_json(&played)["checksums"]["video"],
        run["checksums"]["video"]
    );

    let verified = replay(&["play", &path, "--headless", "--verify", "--json"]);
    assert!(verified.status.success(), "{verified:?}");
    let json = last_json(&verified);
    assert_eq!(json["verified"], true);
    // Every 60 frames, and the last.
    assert_eq!(json["checkpoints_checked"], 21);
    assert_eq!(json["checksums"]["memory"], run["checksums"]["memory"]);
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn a_seek_lands_on_the_memory_and_picture_of_playing_straight_there() {
    let Some(game) = stella() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = record(&game, dir.path(), "seek.ncr", 2000, "random:6");
    let path = path.display().to_string();
    // Before, on and after the keyframe of frame 900, and the last frame.
    for target in ["899", "900", "901", "1801", "2000"] {
        let straight = replay(&["play", &path, "--headless", "--frames", target, "--json"]);
        assert!(straight.status.success(), "{straight:?}");
        let sought = replay(&[
            "play",
            &path,
            "--headless",
            "--seek",
            target,
            "--frames",
            "0",
            "--json",
        ]);
        assert!(sought.status.success(), "{sought:?}");
        let (straight, sought) = (last_json(&straight), last_json(&sought));
        assert_eq!(
            sought["seek"]["checksums"], straight["checksums"],
            "frame {target}"
        );
        assert_eq!(sought["checksums"], straight["checksums"], "frame {target}");
    }
    // Seeking then playing on ends where playing straight does.
    let on = replay(&[
        "play",
        &path,
        "--headless",
        "--seek",
        "950",
        "--frames",
        "50",
        "--json",
    ]);
    let straight = replay(&["play", &path, "--headless", "--frames", "1000", "--json"]);
    assert_eq!(
        last_json(&on)["checksums"],
        last_json(&straight)["checksums"]
    );
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn exported_inputs_rerun_by_run_reproduce_the_replays_final_checksum() {
    let Some(game) = stella() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (path, run) = record(&game, dir.path(), "inputs.ncr", 900, "random:7");
    let exported = replay(&["inputs", &path.display().to_string()]);
    assert!(exported.status.success(), "{exported:?}");
    let script = dir.path().join("inputs.txt");
    std::fs::write(&script, stdout(&exported)).unwrap();
    let script_text = script.display().to_string();
    let (_, rerun) = record(&game, dir.path(), "again.ncr", 900, &script_text);
    assert_eq!(rerun["checksums"]["memory"], run["checksums"]["memory"]);
    assert_eq!(rerun["checksums"]["video"], run["checksums"]["video"]);
    // And the re-run's replay holds the very same inputs and checkpoints.
    let diff = replay(&[
        "diff",
        &path.display().to_string(),
        &dir.path().join("again.ncr").display().to_string(),
    ]);
    assert!(diff.status.success(), "{diff:?}");
    assert!(stdout(&diff).starts_with("identical"), "{diff:?}");
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn diff_names_the_frame_and_player_where_two_runs_part() {
    let Some(game) = stella() else { return };
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.txt");
    let b = dir.path().join("b.txt");
    std::fs::write(&a, "250x RIGHT NONE\n100x UP NONE\n").unwrap();
    std::fs::write(&b, "250x RIGHT NONE\n100x UP B\n").unwrap();
    let (a, _) = record(&game, dir.path(), "a.ncr", 350, &a.display().to_string());
    let (b, _) = record(&game, dir.path(), "b.ncr", 350, &b.display().to_string());
    let diff = replay(&[
        "diff",
        &a.display().to_string(),
        &b.display().to_string(),
        "--json",
    ]);
    assert_eq!(diff.status.code(), Some(1), "{diff:?}");
    assert!(
        stdout(&diff).starts_with("frame 250: the inputs of player 2 differ"),
        "{diff:?}"
    );
    let json = last_json(&diff);
    assert_eq!(json["frame"], 250);
    assert_eq!(json["difference"]["players"], serde_json::json!([2]));
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn a_cut_replay_plays_up_to_its_last_whole_record_and_says_where_it_was_cut() {
    let Some(game) = stella() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = record(&game, dir.path(), "cut.ncr", 600, "random:8");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 30]).unwrap();
    let path = path.display().to_string();
    let played = replay(&["play", &path, "--headless", "--verify", "--json"]);
    // What it holds verifies, but a cut file cannot pass for a whole match.
    assert_eq!(played.status.code(), Some(7), "{played:?}");
    let warning = stderr(&played);
    assert!(warning.contains("is cut short at byte"), "{warning}");
    assert!(
        stdout(&played).contains("incomplete: the file is cut short at byte"),
        "{played:?}"
    );
    let json = last_json(&played);
    assert_eq!(json["verified"], true);
    assert_eq!(json["complete"], false);
    let frames = json["frames"].as_u64().unwrap();
    assert!((540..600).contains(&frames), "{frames}");
    let info = replay(&["info", &path]);
    assert!(
        stdout(&info).contains("end: none: the file is cut short at byte"),
        "{info:?}"
    );
}

/// Records `frames` frames of Duel in `arena` played by `random:3` into
/// `dir/name`; returns its path as a command line takes it.
fn duel_replay(dir: &Path, name: &str, arena: &str, frames: u32) -> String {
    record_duel(dir, name, arena, frames, "random:3")
        .display()
        .to_string()
}

#[test]
fn playing_past_a_replays_end_stops_at_its_end_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = duel_replay(dir.path(), "short.ncr", "dojo", 120);
    let played = replay(&["play", &path, "--headless", "--frames", "3000", "--json"]);
    assert!(played.status.success(), "{played:?}");
    let text = stdout(&played);
    assert!(
        text.contains("the replay ends at frame 120: played 120 frames of the 3000 asked for"),
        "{text}"
    );
    assert!(text.contains("played frames 0..120 in"), "{text}");
    let json = last_json(&played);
    assert_eq!(json["frames"], 120);
    assert_eq!(json["frames_asked"], 3000);
    let whole = last_json(&replay(&["play", &path, "--headless", "--json"]));
    assert_eq!(
        json["checksums"], whole["checksums"],
        "the end is the replay's own"
    );
}

#[test]
fn diff_of_two_games_says_their_content_differs() {
    let dir = tempfile::tempdir().unwrap();
    let dojo = duel_replay(dir.path(), "dojo.ncr", "dojo", 60);
    let moon = duel_replay(dir.path(), "moon.ncr", "moon", 60);
    let diff = replay(&["diff", &dojo, &moon, "--json"]);
    assert_eq!(diff.status.code(), Some(1), "{diff:?}");
    let text = stdout(&diff);
    assert!(
        text.starts_with(
            "the replays are of different games: the content differs (dojo.arena (hash "
        ),
        "{text}"
    );
    assert_eq!(last_json(&diff)["difference"]["kind"], "game");
}

#[test]
fn a_missing_replay_file_or_one_that_is_not_a_replay_is_the_users_mistake() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere.ncr").display().to_string();
    let opening = format!("cannot open the replay {missing}");
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "hello").unwrap();
    let notes = notes.display().to_string();
    let not_a_replay = format!(
        "error: cannot read the replay {notes}: not a netcade replay (it does not start with NCREPLAY)"
    );
    assert_refusals(&[
        refusal(&["replay", "info", &missing], &opening, 2),
        refusal(&["replay", "play", &missing, "--headless"], &opening, 2),
        refusal(&["replay", "inputs", &missing], &opening, 2),
        refusal(&["replay", "info", &notes], &not_a_replay, 2)
            .starting(&not_a_replay)
            .alone(),
    ]);
}

#[test]
fn verifying_a_replay_without_its_end_record_exits_apart_from_a_whole_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = duel_replay(dir.path(), "whole.ncr", "dojo", 300);
    let whole = replay(&["play", &path, "--verify"]);
    assert_eq!(whole.status.code(), Some(0), "{whole:?}");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let cut = replay(&["play", &path, "--verify", "--json"]);
    assert_eq!(cut.status.code(), Some(7), "{cut:?}");
    assert!(stdout(&cut).contains("incomplete: "), "{cut:?}");
    assert_eq!(last_json(&cut)["complete"], false);
}

#[test]
fn a_replay_with_one_damaged_byte_plays_up_to_the_damage_and_verify_says_what_it_verified() {
    let dir = tempfile::tempdir().unwrap();
    let path = duel_replay(dir.path(), "damaged.ncr", "dojo", 600);
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();

    let verified = replay(&["play", &path, "--headless", "--verify", "--json"]);
    assert_eq!(verified.status.code(), Some(7), "{verified:?}");
    let warning = stderr(&verified);
    assert!(
        warning.contains("is damaged: the record at byte "),
        "{warning}"
    );
    let text = stdout(&verified);
    assert!(
        text.contains("incomplete: the file is damaged: the record at byte "),
        "{text}"
    );
    assert!(text.contains("only frames 0.."), "{text}");
    let json = last_json(&verified);
    assert_eq!(json["verified"], true, "{json}");
    assert_eq!(json["complete"], false, "{json}");
    let frames = json["frames"].as_u64().unwrap();
    assert!((60..600).contains(&frames), "{json}");

    let info = last_json(&replay(&["info", &path, "--json"]));
    let offset = info["cut_at"]
        .as_u64()
        .expect("the damaged record's offset");
    assert!(offset <= middle as u64, "{info}");
    let damage = info["damage"].as_str().unwrap_or_default();
    assert!(damage.contains(&format!("byte {offset}")), "{info}");
    let text = stdout(&replay(&["info", &path]));
    assert!(
        text.contains(&format!(
            "end: none: the file is damaged: the record at byte {offset}"
        )),
        "{text}"
    );
}

#[test]
fn info_shows_the_header_and_the_end_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("duel.ncr");
    let arena = support::dojo_arena();
    let recorded = netcade(&[
        "run",
        "--core",
        "duel",
        "--rom",
        &arena,
        "--frames",
        "120",
        "--record",
        &path.display().to_string(),
    ]);
    assert!(recorded.status.success(), "{recorded:?}");
    let info = replay(&["info", &path.display().to_string(), "--json"]);
    assert!(info.status.success(), "{info:?}");
    let json = last_json(&info);
    assert_eq!(json["core"]["name"], "Duel");
    assert_eq!(json["content"]["name"], "dojo.arena");
    assert_eq!(json["frames"], 120);
    assert_eq!(json["players"], 2);
    assert_eq!(json["end"]["reason"], "finished");
    let text = stdout(&replay(&["info", &path.display().to_string()]));
    assert!(text.contains("end: finished after 120 frames"), "{text}");
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn the_debugger_steps_through_a_replays_recorded_inputs() {
    let Some(game) = stella() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = record(&game, dir.path(), "debug.ncr", 400, "random:9");
    let path = path.display().to_string();
    let script = "step 250\nback 50\ngoto 300\ninput 1 RIGHT\nquit\n";
    let session = support::cli::netcade_with_stdin(&["debug", "--replay", &path], script);
    // The refused `input` makes a script fail; every other answer stands.
    assert_eq!(session.status.code(), Some(2), "{session:?}");
    assert_eq!(
        stderr(&session).trim(),
        "error: input: the replay decides the buttons"
    );
    let answers = stdout(&session);
    let at = |frame: u32| {
        let played = replay(&[
            "play",
            &path,
            "--headless",
            "--frames",
            &frame.to_string(),
            "--json",
        ]);
        last_json(&played)["checksums"]["memory"]
            .as_str()
            .unwrap()
            .to_string()
    };
    for frame in [250, 200, 300] {
        assert!(
            answers.contains(&format!("frame={frame} memory={}", at(frame))),
            "frame {frame}: {answers}"
        );
    }
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn a_replay_is_refused_with_another_rom_or_by_another_core_before_it_is_given_the_content() {
    let Some(game) = stella() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = record(&game, dir.path(), "combat.ncr", 60, "none");
    let path = path.display().to_string();
    let play = ["replay", "play", &path, "--headless"];
    let mut refusals = Vec::new();
    if let Some(boxing) = support::real_rom("boxing.bin") {
        let other_rom = "error: the replay was recorded with content combat.bin";
        let boxing = boxing.display().to_string();
        let args = [&play[..], &["--rom", &boxing]].concat();
        refusals.push(
            refusal(&args, other_rom, 2)
                .starting(other_rom)
                .mentioning("boxing.bin is different"),
        );
    }
    if let Some(genesis) = support::real_core("genesis_plus_gx") {
        let other_core =
            "error: the replay was recorded with the core Stella, this core is Genesis Plus GX";
        let genesis = genesis.display().to_string();
        let args = [&play[..], &["--core", &genesis]].concat();
        refusals.push(refusal(&args, other_core, 2).starting(other_core));
    }
    assert_refusals(&refusals);
}

/// A copy of the replay at `path` with the inputs of its last `frames`
/// frames rewritten (every button held) and everything else as recorded:
/// its header, its checkpoints, its end.
fn with_last_inputs_rewritten(path: &str, frames: u32) -> String {
    use netcode::input::Buttons;
    let rewritten = format!("{path}.rewritten.ncr");
    let hold_everything =
        |frame: netcode::rollback::Frame, (_, end): (u32, u32), inputs: &mut [Buttons]| {
            if frame.number() >= end - frames {
                inputs.fill(Buttons::from_bits(0x0fff));
            }
        };
    let rewrite = support::replays::Rewrite {
        inputs: Some(&hold_everything),
        ..Default::default()
    };
    support::replays::rewrite_replay(Path::new(path), Path::new(&rewritten), rewrite);
    rewritten
}

#[test]
fn verify_catches_inputs_rewritten_after_the_last_regular_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    // 650 frames: checkpoints every 60 up to 600, then 49 frames more.
    let path = duel_replay(dir.path(), "honest.ncr", "dojo", 650);
    let honest = replay(&["play", &path, "--verify"]);
    assert_eq!(honest.status.code(), Some(0), "{honest:?}");
    let rewritten = with_last_inputs_rewritten(&path, 45);
    let verified = replay(&["play", &rewritten, "--verify", "--json"]);
    assert_ne!(verified.status.code(), Some(0), "{verified:?}");
    assert!(
        stdout(&verified).contains("mismatch at frame 649"),
        "{verified:?}"
    );
    assert_eq!(last_json(&verified)["verified"], false);
}
