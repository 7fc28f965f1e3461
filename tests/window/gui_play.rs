//! `netcade play` and `netcade input` as a player runs them, in a window
//! on whatever display `DISPLAY` names (`.ci/run`: `xvfb-run`).
#![cfg(feature = "gui")]

use netcade::engine::inputs::{InputSource, InputSpec};
use netcade::engine::png::frame_to_rgb;
use netcade::engine::run::run_frames;
use netcode::emulator::Emulator;
use std::path::Path;
use std::process::{Command, Output};
use support::cli::{stderr, stdout};
use support::screenshot::{read_png, Picture};
use support::{duel_arena, duel_core};

/// Runs `netcade ARGS` with its config directory in `config_dir`.
fn netcade_in(config_dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_netcade"))
        .env("NETCADE_DUEL_CORE", duel_core())
        .env("NETCADE_CONFIG_DIR", config_dir)
        .args(args)
        .output()
        .expect("netcade runs")
}

/// Duel's own picture after `frames` frames of `random:1`, as `run` makes it.
fn duel_frame_after(frames: u32) -> (u32, u32, Vec<u8>) {
    let mut duel = support::load_duel_dojo();
    let mut inputs = InputSource::open(&InputSpec::Random { seed: 1 }).unwrap();
    run_frames(&mut duel.core, frames, &mut inputs, &mut ()).unwrap();
    let frame = duel.core.video_frame().expect("Duel drew");
    (frame.width, frame.height, frame_to_rgb(&frame))
}

fn play_screenshot(config: &Path, shot: &Path, extra: &[&str]) -> Output {
    let arena = duel_arena("dojo");
    let mut args = vec![
        "play",
        "--core",
        "duel",
        "--rom",
        arena.to_str().unwrap(),
        "--inputs",
        "random:1",
        "--frames",
        "45",
        "--screenshot-at",
        "40",
        shot.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    netcade_in(config, &args)
}

#[test]
fn a_screenshot_through_nearest_at_integer_scale_is_duels_own_frame_scaled_pixel_for_pixel() {
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("nearest.png");
    let output = play_screenshot(
        dir.path(),
        &shot,
        &[
            "--shader",
            "nearest",
            "--integer-scale",
            "--window-size",
            "640x480",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("at frame 40"),
        "{}",
        stdout(&output)
    );
    let Picture {
        width,
        height,
        rgb: shown,
    } = read_png(&shot);
    assert_eq!((width, height), (640, 480));
    let (source_w, source_h, source) = duel_frame_after(40);
    assert_eq!((source_w, source_h), (320, 240));
    let mismatches = (0..height)
        .flat_map(|y| (0..width).map(move |x| (x, y)))
        .filter(|&(x, y)| {
            let shown_at = ((y * width + x) * 3) as usize;
            let source_at = (((y / 2) * source_w + x / 2) * 3) as usize;
            shown[shown_at..shown_at + 3] != source[source_at..source_at + 3]
        })
        .count();
    assert_eq!(
        mismatches, 0,
        "pixels differing from Duel's frame scaled 2x"
    );
}

#[test]
fn the_default_shader_fills_the_window_with_a_real_picture_of_the_game() {
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("default.png");
    let output = play_screenshot(dir.path(), &shot, &["--window-size", "800x600"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let Picture {
        width,
        height,
        rgb: shown,
    } = read_png(&shot);
    assert_eq!((width, height), (800, 600));
    // 4:3 in a 4:3 window: no black bars, and every window pixel close to
    // the source pixel under it (sharp bilinear blends only at edges).
    let (source_w, source_h, source) = duel_frame_after(40);
    let mut close = 0usize;
    for y in 0..height {
        for x in 0..width {
            let shown_at = ((y * width + x) * 3) as usize;
            let sx = (x * source_w / width).min(source_w - 1);
            let sy = (y * source_h / height).min(source_h - 1);
            let source_at = ((sy * source_w + sx) * 3) as usize;
            let distance: i32 = (0..3)
                .map(|c| (i32::from(shown[shown_at + c]) - i32::from(source[source_at + c])).abs())
                .max()
                .unwrap();
            if distance <= 24 {
                close += 1;
            }
        }
    }
    let share = close as f64 / f64::from(width * height);
    assert!(
        share > 0.95,
        "only {:.1}% of the window matches the game",
        share * 100.0
    );
}

#[test]
fn a_broken_input_config_names_its_line_and_play_goes_on_with_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("input.toml"),
        "[keyboard.player1]\nup = \"W\"\nright = \"NotAKey\"\n",
    )
    .unwrap();
    let shot = dir.path().join("shot.png");
    let output = play_screenshot(dir.path(), &shot, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.contains("error: ") && err.contains("input.toml line 3") && err.contains("NotAKey"),
        "{err}"
    );
    assert!(err.contains("default input mapping"), "{err}");
}

#[test]
fn input_writes_the_commented_default_config_on_first_run_and_prints_the_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let output = netcade_in(dir.path(), &["input"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let path = dir.path().join("input.toml");
    assert!(
        text.contains(&format!("config: {}", path.display())),
        "{text}"
    );
    assert!(
        text.contains("keyboard player 1: ") && text.contains("RIGHT=D"),
        "{text}"
    );
    assert!(std::fs::read_to_string(&path).unwrap().starts_with('#'));
    // A mistake in the file: `input` is the command to check it, so it fails.
    std::fs::write(&path, "[controller]\nturbo = \"a\"\n").unwrap();
    let output = netcade_in(dir.path(), &["input"]);
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    assert!(stderr(&output).contains("line 2"), "{}", stderr(&output));
}

#[test]
fn a_bad_shader_name_is_refused_naming_the_shaders_there_are() {
    let dir = tempfile::tempdir().unwrap();
    let arena = duel_arena("dojo");
    let output = netcade_in(
        dir.path(),
        &[
            "play",
            "--core",
            "duel",
            "--rom",
            arena.to_str().unwrap(),
            "--shader",
            "blur",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("sharp-bilinear, nearest, crt"),
        "{}",
        stderr(&output)
    );
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn stellas_160_wide_frames_open_a_four_by_three_window_filled_at_that_shape() {
    let (Some(core), Some(rom)) = (
        support::real_core("stella"),
        support::real_rom("boxing.bin"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("stella.png");
    let output = netcade_in(
        dir.path(),
        &[
            "play",
            "--core",
            core.to_str().unwrap(),
            "--rom",
            rom.to_str().unwrap(),
            "--frames",
            "35",
            "--screenshot-at",
            "30",
            shot.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let Picture { width, height, rgb } = read_png(&shot);
    assert_eq!(width * 3, height * 4, "{width}x{height} is not 4:3");
    // The picture reaches the right edge: no letterbox beside a 160:210 grid.
    let right_column_lit = (0..height)
        .filter(|y| {
            let at = ((y * width + width - 1) * 3) as usize;
            rgb[at..at + 3] != [0, 0, 0]
        })
        .count();
    assert!(right_column_lit > height as usize / 2);
}

#[test]
fn play_without_any_display_is_one_clear_error_not_an_invisible_window() {
    let dir = tempfile::tempdir().unwrap();
    let arena = duel_arena("dojo");
    let output = Command::new(env!("CARGO_BIN_EXE_netcade"))
        .env("NETCADE_DUEL_CORE", duel_core())
        .env("NETCADE_CONFIG_DIR", dir.path())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("SDL_VIDEODRIVER")
        .args(["play", "--core", "duel", "--rom", arena.to_str().unwrap()])
        .args(["--frames", "30", "--inputs", "none"])
        .output()
        .expect("netcade runs");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let errors = stderr(&output);
    let error_lines: Vec<&str> = errors.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(error_lines.len(), 1, "{errors}");
    assert!(
        error_lines[0].starts_with("error: no display to open the window on"),
        "{errors}"
    );
    assert!(!errors.contains("XDG_RUNTIME_DIR"), "{errors}");
}

#[test]
fn with_run_ahead_the_window_shows_now_what_it_would_show_n_frames_later() {
    let dir = tempfile::tempdir().unwrap();
    // Duel applies presses 3 frames late; RIGHT is held from frame 30 on.
    let script = dir.path().join("walk.txt");
    std::fs::write(&script, "30x NONE NONE\n60x RIGHT NONE\n").unwrap();
    let arena = duel_arena("dojo");
    let shot = |name: &str, at: &str, run_ahead: &str, mode: &str| {
        let path = dir.path().join(name);
        let args = [
            "play",
            "--core",
            "duel",
            "--rom",
            arena.to_str().unwrap(),
            "--option",
            "duel_input_lag=3",
            "--inputs",
            script.to_str().unwrap(),
            "--frames",
            "50",
            "--run-ahead",
            run_ahead,
            "--run-ahead-mode",
            mode,
            "--screenshot-at",
            at,
            path.to_str().unwrap(),
        ];
        let output = netcade_in(dir.path(), &args);
        assert!(output.status.success(), "{}", stderr(&output));
        read_png(&path).rgb
    };
    let later = shot("later.png", "43", "0", "single");
    for mode in ["single", "preemptive"] {
        let ahead = shot(&format!("ahead-{mode}.png"), "40", "3", mode);
        assert!(ahead == later, "{mode}: frame 43's picture at frame 40");
    }
    assert!(
        later != shot("now.png", "40", "0", "single"),
        "the fighter walks meanwhile"
    );
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn content_the_core_accepts_but_shows_nothing_for_gets_a_calm_note_and_a_real_game_none() {
    let (Some(genesis), Some(stella), Some(boxing)) = (
        support::real_core("genesis_plus_gx"),
        support::real_core("stella"),
        support::real_rom("boxing.bin"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.md");
    // (A much shorter file crashes the core, which netcade reports too.)
    std::fs::write(&text, "hello this is not a rom\n".repeat(200)).unwrap();
    let play = |core: &Path, rom: &Path| {
        let output = netcade_in(
            dir.path(),
            &[
                "play",
                "--core",
                core.to_str().unwrap(),
                "--rom",
                rom.to_str().unwrap(),
                "--frames",
                "330",
                "--no-audio",
            ],
        );
        assert!(output.status.success(), "{}", stderr(&output));
        stderr(&output)
    };
    let told = play(&genesis, &text);
    assert!(
        told.contains("note: nothing to see or hear for 5 s: this may be the wrong ROM"),
        "{told}"
    );
    let boxing_told = play(&stella, &boxing);
    assert!(
        !boxing_told.contains("nothing to see or hear"),
        "{boxing_told}"
    );
}

#[test]
fn duel_loaded_from_a_state_slot_plays_on_as_the_run_that_saved_it_and_resets_to_its_start() {
    use netcade::engine::state_slots::StateSlots;
    use netcade::gui::play::LocalPlay;
    use netcade::gui::window::LocalKey;
    let dir = tempfile::tempdir().unwrap();
    let slots = StateSlots::for_game(dir.path(), "duel", Some(Path::new("dojo.arena")));
    let mut duel = support::load_duel_dojo();
    let mut play = LocalPlay::new(&mut duel.core, 60, 8 << 20, Box::new(()))
        .unwrap()
        .with_slots(slots);
    let at_start = play.checksums();
    let mut inputs = InputSource::open(&InputSpec::Random { seed: 4 }).unwrap();
    let script: Vec<_> = (0..200).map(|_| inputs.next_frame()).collect();
    for held in &script[..100] {
        play.run_frame(*held).unwrap();
    }
    assert_eq!(
        play.local_key(LocalKey::SaveState).unwrap(),
        "saved slot 0 (frame 100)"
    );
    for held in &script[100..] {
        play.run_frame(*held).unwrap();
    }
    let saving_run = play.checksums();
    assert_eq!(
        play.local_key(LocalKey::LoadState).unwrap(),
        "loaded slot 0 (frame 100)"
    );
    for held in &script[100..] {
        play.run_frame(*held).unwrap();
    }
    assert_eq!(play.checksums(), saving_run);
    assert_eq!(play.local_key(LocalKey::Reset).unwrap(), "reset");
    assert_eq!(play.checksums().memory, at_start.memory);
}
