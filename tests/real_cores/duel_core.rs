//! The Duel test core driven through netcade's real libretro FFI path.

use libretro_host::{Core, LibretroError};
use netcode::checksum::{Checksum, Checksums};
use netcode::emulator::{Emulator, PixelFormat};
use netcode::input::Buttons;
use support::{config_in, duel_arena, duel_core_copy, load_core, load_duel};

/// Both fighters walk in, jump and attack on a fixed rhythm.
fn fight_inputs(frame: u32) -> [Buttons; 2] {
    let p1 = match frame % 90 {
        0..=29 => Buttons::RIGHT,
        30..=34 => Buttons::UP,
        35..=50 => Buttons::A,
        _ => Buttons::NONE,
    };
    let p2 = match (frame + 40) % 75 {
        0..=24 => Buttons::LEFT,
        25..=40 => Buttons::A | Buttons::LEFT,
        41..=44 => Buttons::B,
        _ => Buttons::RIGHT,
    };
    [p1, p2]
}

fn run_frames(core: &mut Core, first: u32, count: u32) -> Vec<Checksums> {
    let mut state = Vec::new();
    (first..first + count)
        .map(|frame| {
            core.run_frame(&fight_inputs(frame), true);
            core.save_state(&mut state).unwrap();
            Checksums::of_game(core, &state)
        })
        .collect()
}

#[test]
fn duel_loads_an_arena_and_runs_with_picture_and_sound() {
    let mut duel = load_duel("dojo");
    assert_eq!(duel.core.info().name, "Duel");
    assert_eq!(duel.core.av_info().fps, 60.0);
    assert_eq!(duel.core.sample_rate(), 48_000.0);

    let mut heard_sound = false;
    for frame in 0..240 {
        duel.core.run_frame(&fight_inputs(frame), true);
        assert_eq!(
            duel.core.audio_samples().len(),
            800 * 2,
            "48 kHz stereo at 60 fps"
        );
        heard_sound |= duel.core.audio_samples().iter().any(|&s| s != 0);
    }
    assert!(heard_sound, "jumps and hits make sound");
    let video = duel.core.video_frame().expect("Duel draws every frame");
    assert_eq!((video.width, video.height), (320, 240));
    assert_eq!(video.format, PixelFormat::Xrgb8888);
    let mut state = Vec::new();
    duel.core.save_state(&mut state).unwrap();
    assert_eq!(
        duel.core.game_memory(),
        &state[..],
        "Duel's system RAM is its whole savestate"
    );
}

#[test]
fn a_restored_duel_state_replays_the_run_it_was_taken_from() {
    let mut duel = load_duel("dojo");
    run_frames(&mut duel.core, 0, 100);
    let mut saved = Vec::new();
    duel.core.save_state(&mut saved).unwrap();

    let first_run = run_frames(&mut duel.core, 100, 200);
    duel.core.load_state(&saved).unwrap();
    let replay = run_frames(&mut duel.core, 100, 200);
    assert_eq!(first_run, replay);
}

#[test]
fn the_arena_changes_the_game() {
    let mut dojo = load_duel("dojo");
    let mut moon = load_duel("moon");
    let dojo_run = run_frames(&mut dojo.core, 0, 60);
    let moon_run = run_frames(&mut moon.core, 0, 60);
    assert_ne!(dojo_run.last(), moon_run.last());
}

#[test]
fn duel_declares_its_nondeterminism_option_off_by_default() {
    let duel = load_duel("dojo");
    let option = duel
        .core
        .options()
        .iter()
        .find(|option| option.key == "duel_inject_nondeterminism")
        .expect("Duel declares the option");
    assert_eq!(option.default, "disabled");
    assert_eq!(option.current, "disabled");
}

#[test]
fn with_injected_nondeterminism_a_restored_state_no_longer_replays_the_same_run() {
    let mut duel = load_core(
        duel_core_copy(),
        &duel_arena("dojo"),
        &[("duel_inject_nondeterminism", "enabled")],
    )
    .unwrap();
    run_frames(&mut duel.core, 0, 30);
    let mut saved = Vec::new();
    duel.core.save_state(&mut saved).unwrap();
    let first_run = run_frames(&mut duel.core, 30, 60);
    duel.core.load_state(&saved).unwrap();
    let replay = run_frames(&mut duel.core, 30, 60);

    let first_difference = first_run
        .iter()
        .zip(&replay)
        .position(|(a, b)| a.memory != b.memory)
        .expect("the hidden counter makes the replay differ");
    assert!(first_difference < 60);
}

#[test]
fn a_file_that_is_not_an_arena_is_refused_naming_core_and_file() {
    let copy = duel_core_copy();
    let dirs = tempfile::tempdir().unwrap();
    let bogus = dirs.path().join("not-an-arena.arena");
    std::fs::write(&bogus, "this is not an arena\n").unwrap();
    let mut core = Core::load(&copy.path, config_in(dirs.path())).unwrap();
    let err = core.load_content(Some(&bogus)).unwrap_err();
    assert!(
        matches!(err, LibretroError::ContentRejected { .. }),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("Duel"), "{message}");
    assert!(message.contains("not-an-arena.arena"), "{message}");
}

#[test]
fn duel_memory_checksum_follows_the_game_not_the_picture() {
    let mut duel = load_duel("dojo");
    duel.core.run_frame(&[Buttons::NONE; 2], true);
    let before = Checksum::of(duel.core.game_memory());
    duel.core.run_frame(&[Buttons::RIGHT, Buttons::LEFT], false);
    assert_ne!(before, Checksum::of(duel.core.game_memory()));
}
