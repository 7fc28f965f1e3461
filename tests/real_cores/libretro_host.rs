//! The libretro host against real cores (stella, genesis_plus_gx) and against
//! files that are not cores. Real-core tests need the content from
//! `scripts/fetch-test-content` and are ignored while it is missing (see
//! `support::content`). Each test loads its own copy of a core
//! file, because one file hosts only one core instance per process.

use libretro_host::{Core, CoreConfig, LibretroError};
use netcode::checksum::Checksum;
use netcode::emulator::Emulator;
use netcode::input::Buttons;
use std::path::Path;
use support::cli::{netcade, stderr};
use support::fake_core::FakeCore;
use support::{
    config_in, load_core, real_core, real_core_copy, real_rom, system_c_library, LoadedCore,
};

fn load_real(core_name: &str, rom_name: &str) -> Option<LoadedCore> {
    let copy = real_core_copy(core_name)?;
    let rom = real_rom(rom_name)?;
    Some(load_core(copy, &rom, &[]).expect("the real core loads and takes its ROM"))
}

/// Deterministic varied input for player 1 and 2; START is pressed now and
/// then so games leave their title screens.
fn scripted_inputs(frame: u32) -> [Buttons; 2] {
    let mut x = frame.wrapping_mul(2_654_435_761) ^ 0x9e37_79b9;
    x ^= x >> 15;
    x = x.wrapping_mul(0x85eb_ca6b);
    x ^= x >> 13;
    let movement = [
        Buttons::NONE,
        Buttons::LEFT,
        Buttons::RIGHT,
        Buttons::UP,
        Buttons::DOWN,
    ];
    let mut one = movement[(x % 5) as usize];
    if x & 0x100 != 0 {
        one = one | Buttons::B;
    }
    if frame % 90 < 4 {
        one = one | Buttons::START;
    }
    let two = movement[((x >> 8) % 5) as usize]
        | if x & 0x1000 != 0 {
            Buttons::A
        } else {
            Buttons::NONE
        };
    [one, two]
}

/// Runs `frames` frames from `first`, returning each frame's memory and video checksums.
fn run_recording(core: &mut Core, first: u32, frames: u32) -> Vec<(Checksum, Checksum)> {
    (first..first + frames)
        .map(|frame| {
            core.run_frame(&scripted_inputs(frame), true);
            let video = core.video_frame().expect("a frame was drawn");
            (Checksum::of(core.game_memory()), Checksum::of_video(&video))
        })
        .collect()
}

/// Runs `frames` frames and checks the picture, the sound and its rate.
fn runs_with_picture_and_sound(core_name: &str, rom_name: &str, frames: u32) {
    let Some(mut loaded) = load_real(core_name, rom_name) else {
        return;
    };
    let core = &mut loaded.core;
    let av = core.av_info();
    assert!((49.0..=61.0).contains(&av.fps), "fps {}", av.fps);
    assert!(av.sample_rate > 8000.0, "sample rate {}", av.sample_rate);

    let mut any_sound = false;
    let mut samples = 0;
    for frame in 0..frames {
        core.run_frame(&scripted_inputs(frame), true);
        samples += core.audio_samples().len();
        any_sound |= core.audio_samples().iter().any(|&sample| sample != 0);
    }
    let video = core.video_frame().expect("the core drew a frame");
    assert!(video.width > 0 && video.height > 0);
    assert!(
        video.rows().any(|row| row.iter().any(|&byte| byte != 0)),
        "the picture is all black"
    );
    assert!(any_sound, "{frames} frames of silence");
    // About sample_rate / fps stereo frames per video frame.
    let per_frame = samples as f64 / 2.0 / f64::from(frames);
    let expected = av.sample_rate / av.fps;
    assert!(
        (per_frame - expected).abs() < expected * 0.1,
        "{per_frame} audio frames per video frame, expected about {expected}"
    );
    assert!(
        !core.game_memory().is_empty(),
        "the core exposes game memory"
    );
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn stella_runs_boxing_with_picture_and_sound() {
    runs_with_picture_and_sound("stella", "boxing.bin", 300);
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn genesis_plus_gx_runs_airstriker_with_picture_and_sound() {
    // Airstriker is silent for its first 361 frames (its logo screen).
    runs_with_picture_and_sound("genesis_plus_gx", "airstriker.md", 600);
}

fn a_restored_state_replays_the_run_it_was_taken_from(core_name: &str, rom_name: &str) {
    let Some(mut loaded) = load_real(core_name, rom_name) else {
        return;
    };
    let core = &mut loaded.core;
    run_recording(core, 0, 200);
    let mut state = Vec::new();
    core.save_state(&mut state).expect("the core saves");
    let first_pass = run_recording(core, 200, 60);
    core.load_state(&state).expect("the core restores");
    let second_pass = run_recording(core, 200, 60);
    assert_eq!(first_pass, second_pass);
    // The run did change the game, so equal checksums mean something.
    assert_ne!(first_pass.first(), first_pass.last());
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn a_restored_stella_state_replays_the_run_it_was_taken_from() {
    a_restored_state_replays_the_run_it_was_taken_from("stella", "boxing.bin");
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn a_restored_genesis_plus_gx_state_replays_the_run_it_was_taken_from() {
    a_restored_state_replays_the_run_it_was_taken_from("genesis_plus_gx", "airstriker.md");
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn a_saved_state_does_not_depend_on_what_the_buffer_held_before() {
    // genesis_plus_gx promises far more bytes than it writes.
    let Some(mut loaded) = load_real("genesis_plus_gx", "airstriker.md") else {
        return;
    };
    let core = &mut loaded.core;
    run_recording(core, 0, 30);
    let mut fresh = Vec::new();
    core.save_state(&mut fresh).unwrap();
    let mut reused = vec![0xAA; fresh.len() + 4096];
    core.save_state(&mut reused).unwrap();
    assert_eq!(Checksum::of(&fresh), Checksum::of(&reused));
    assert_eq!(fresh.len(), reused.len());
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn a_state_of_the_wrong_size_is_refused() {
    let Some(mut loaded) = load_real("stella", "boxing.bin") else {
        return;
    };
    let core = &mut loaded.core;
    let mut state = Vec::new();
    core.save_state(&mut state).unwrap();
    state.truncate(state.len() / 2);
    let err = core.load_state(&state).unwrap_err();
    assert!(err.to_string().contains("bytes"), "{err}");
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn genesis_plus_gx_is_answered_the_default_of_every_option() {
    // It crashes in retro_load_game if GET_VARIABLE answers NULL, so loading
    // at all is most of the test.
    let Some(loaded) = load_real("genesis_plus_gx", "airstriker.md") else {
        return;
    };
    let options = loaded.core.options();
    assert!(!options.is_empty(), "genesis_plus_gx declares options");
    for option in options {
        assert_eq!(option.current, option.default, "option {}", option.key);
        assert!(
            option.values.contains(&option.default),
            "option {}",
            option.key
        );
    }
}

/// An option of genesis_plus_gx with a value other than its default.
fn some_option_and_other_value(core: &Core) -> (String, String, String) {
    let option = core
        .options()
        .iter()
        .find(|option| option.values.len() > 1)
        .expect("an option with a choice");
    let other = option
        .values
        .iter()
        .find(|value| **value != option.default)
        .unwrap();
    (option.key.clone(), option.default.clone(), other.clone())
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn an_option_override_replaces_the_default_the_core_is_answered() {
    let Some(copy) = real_core_copy("genesis_plus_gx") else {
        return;
    };
    let Some(rom) = real_rom("airstriker.md") else {
        return;
    };
    let dirs = tempfile::tempdir().unwrap();
    let (key, default, other) = {
        let mut core = Core::load(&copy.path, config_in(dirs.path())).unwrap();
        core.load_content(Some(&rom)).unwrap();
        some_option_and_other_value(&core)
    };
    let config = CoreConfig {
        option_overrides: vec![(key.clone(), other.clone())],
        ..config_in(dirs.path())
    };
    let mut core = Core::load(&copy.path, config).expect("the file loads again once unloaded");
    core.load_content(Some(&rom)).unwrap();
    let option = core
        .options()
        .iter()
        .find(|option| option.key == key)
        .unwrap();
    assert_eq!(option.current, other);
    assert_eq!(option.default, default);
    core.run_frame(&[], true);
}

fn load_genesis_with_override(key: &str, value: &str) -> Option<Result<(), LibretroError>> {
    let copy = real_core_copy("genesis_plus_gx")?;
    let rom = real_rom("airstriker.md")?;
    let dirs = tempfile::tempdir().unwrap();
    let config = CoreConfig {
        option_overrides: vec![(key.to_string(), value.to_string())],
        ..config_in(dirs.path())
    };
    let mut core = Core::load(&copy.path, config).unwrap();
    Some(core.load_content(Some(&rom)))
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn an_override_of_an_option_the_core_never_declared_is_refused_naming_the_known_ones() {
    let Some(result) = load_genesis_with_override("genesis_plus_gx_no_such_option", "on") else {
        return;
    };
    match result {
        Err(err @ LibretroError::UnknownOption { .. }) => {
            let message = err.to_string();
            assert!(
                message.contains("genesis_plus_gx_no_such_option"),
                "{message}"
            );
            assert!(message.contains("Genesis Plus GX"), "{message}");
            if let LibretroError::UnknownOption { known, .. } = &err {
                assert!(!known.is_empty());
                assert!(message.contains(&known[0]), "{message}");
            }
        }
        other => panic!("expected UnknownOption, got {other:?}"),
    }
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn an_override_with_a_value_the_option_does_not_allow_is_refused_listing_the_allowed_ones() {
    let Some(loaded) = load_real("genesis_plus_gx", "airstriker.md") else {
        return;
    };
    let (key, default, _) = some_option_and_other_value(&loaded.core);
    drop(loaded);
    let result = load_genesis_with_override(&key, "certainly-not-a-value").unwrap();
    match result {
        Err(LibretroError::InvalidOptionValue {
            core,
            key: bad_key,
            value,
            allowed,
        }) => {
            assert_eq!(core, "Genesis Plus GX");
            assert_eq!(bad_key, key);
            assert_eq!(value, "certainly-not-a-value");
            assert!(allowed.contains(&default));
        }
        other => panic!("expected InvalidOptionValue, got {other:?}"),
    }
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn loading_the_same_core_file_twice_is_refused_but_a_copy_is_independent() {
    let Some(copy) = real_core_copy("stella") else {
        return;
    };
    let Some(second_copy) = real_core_copy("stella") else {
        return;
    };
    let dirs = tempfile::tempdir().unwrap();
    let first = Core::load(&copy.path, config_in(dirs.path())).unwrap();

    let err = Core::load(&copy.path, config_in(dirs.path())).unwrap_err();
    assert!(
        matches!(err, LibretroError::AlreadyLoaded { .. }),
        "{err:?}"
    );
    assert!(
        err.to_string().contains(&copy.path.display().to_string()),
        "{err}"
    );

    // A copy of the file is another library with its own globals.
    let second =
        Core::load(&second_copy.path, config_in(dirs.path())).expect("a copy loads alongside");
    drop(second);
    drop(first);
    Core::load(&copy.path, config_in(dirs.path())).expect("the file loads again once unloaded");
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn two_copies_of_a_core_run_side_by_side_as_separate_games() {
    let Some(mut one) = load_real("stella", "boxing.bin") else {
        return;
    };
    let Some(mut two) = load_real("stella", "boxing.bin") else {
        return;
    };
    for frame in 0..120 {
        one.core.run_frame(&scripted_inputs(frame), true);
        two.core.run_frame(&scripted_inputs(frame), true);
    }
    assert_eq!(one.core.game_memory(), two.core.game_memory());
    for frame in 120..240 {
        one.core.run_frame(&scripted_inputs(frame), true);
        two.core.run_frame(&[Buttons::NONE, Buttons::NONE], true);
    }
    assert_ne!(one.core.game_memory(), two.core.game_memory());
}

fn message_names(err: &LibretroError, path: &Path) {
    let message = err.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
}

#[test]
fn a_missing_core_file_is_reported_by_path() {
    let dirs = tempfile::tempdir().unwrap();
    let path = dirs.path().join("no_such_libretro.so");
    let err = Core::load(&path, config_in(dirs.path())).unwrap_err();
    assert!(matches!(err, LibretroError::CoreMissing { .. }), "{err:?}");
    message_names(&err, &path);
}

#[test]
fn a_text_file_given_as_core_is_not_a_shared_library() {
    let dirs = tempfile::tempdir().unwrap();
    let path = dirs.path().join("notes_libretro.so");
    std::fs::write(&path, "these are not machine instructions\n").unwrap();
    let err = Core::load(&path, config_in(dirs.path())).unwrap_err();
    assert!(matches!(err, LibretroError::NotALibrary { .. }), "{err:?}");
    message_names(&err, &path);
}

#[test]
fn a_shared_library_without_libretro_functions_is_not_a_libretro_core() {
    let Some(libc) = system_c_library() else {
        eprintln!("SKIPPED a_shared_library_without_libretro_functions_is_not_a_libretro_core: no libc found in /proc/self/maps");
        return;
    };
    let dirs = tempfile::tempdir().unwrap();
    let err = Core::load(&libc, config_in(dirs.path())).unwrap_err();
    match &err {
        LibretroError::NotALibretroCore { symbol, .. } => assert!(symbol.starts_with("retro_")),
        other => panic!("expected NotALibretroCore, got {other:?}"),
    }
    message_names(&err, &libc);
    assert!(err.to_string().contains("retro_set_environment"), "{err}");
}

#[test]
fn a_core_of_another_libretro_api_version_is_refused_naming_both_versions() {
    let dirs = tempfile::tempdir().unwrap();
    let core = FakeCore {
        api_version: 2,
        ..FakeCore::default()
    }
    .build(dirs.path());
    let err = Core::load(&core, config_in(dirs.path())).unwrap_err();
    match &err {
        LibretroError::WrongApiVersion {
            found, expected, ..
        } => assert_eq!((*found, *expected), (2, 1)),
        other => panic!("expected WrongApiVersion, got {other:?}"),
    }
    message_names(&err, &core);
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn a_missing_content_file_is_reported_by_path() {
    let Some(copy) = real_core_copy("stella") else {
        return;
    };
    let dirs = tempfile::tempdir().unwrap();
    let mut core = Core::load(&copy.path, config_in(dirs.path())).unwrap();
    let path = dirs.path().join("no_such_game.bin");
    let err = core.load_content(Some(&path)).unwrap_err();
    assert!(
        matches!(err, LibretroError::ContentMissing { .. }),
        "{err:?}"
    );
    message_names(&err, &path);
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn content_the_core_refuses_is_reported_with_core_and_path() {
    let copy = support::duel_core_copy();
    let dirs = tempfile::tempdir().unwrap();
    let mut core = Core::load(&copy.path, config_in(dirs.path())).unwrap();
    let path = dirs.path().join("notes.arena");
    std::fs::write(&path, b"not an arena\n").unwrap();
    let err = core.load_content(Some(&path)).unwrap_err();
    match &err {
        LibretroError::ContentRejected { core: name, .. } => assert_eq!(name, "Duel"),
        other => panic!("expected ContentRejected, got {other:?}"),
    }
    message_names(&err, &path);
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn an_empty_content_file_is_reported_as_empty_before_the_core_sees_it() {
    // Stella would take the empty file and run a blank cartridge.
    let Some(copy) = real_core_copy("stella") else {
        return;
    };
    let dirs = tempfile::tempdir().unwrap();
    let mut core = Core::load(&copy.path, config_in(dirs.path())).unwrap();
    let path = dirs.path().join("empty.bin");
    std::fs::write(&path, b"").unwrap();
    let err = core.load_content(Some(&path)).unwrap_err();
    assert!(matches!(err, LibretroError::ContentEmpty { .. }), "{err:?}");
    message_names(&err, &path);
    assert!(err.to_string().contains("is empty (0 bytes)"), "{err}");
}

#[test]
fn a_core_that_asks_to_shut_down_while_loading_has_not_loaded_the_content() {
    let dirs = tempfile::tempdir().unwrap();
    let library = FakeCore {
        in_load_game: "ask_to_shut_down();",
        ..FakeCore::default()
    }
    .build(dirs.path());
    let mut core = Core::load(&library, config_in(dirs.path())).unwrap();
    let path = dirs.path().join("game.fake");
    std::fs::write(&path, b"a game the core gives up on").unwrap();
    let err = core.load_content(Some(&path)).unwrap_err();
    match &err {
        LibretroError::ContentAbandoned { core: name, .. } => assert_eq!(name, "Fake"),
        other => panic!("expected ContentAbandoned, got {other:?}"),
    }
    message_names(&err, &path);
    assert!(err.to_string().contains("asked to shut down"), "{err}");
}

#[test]
fn a_directory_given_as_core_or_content_is_called_a_directory() {
    let dirs = tempfile::tempdir().unwrap();
    let err = Core::load(dirs.path(), config_in(dirs.path())).unwrap_err();
    assert!(
        matches!(err, LibretroError::CoreIsDirectory { .. }),
        "{err:?}"
    );
    message_names(&err, dirs.path());

    let copy = support::duel_core_copy();
    let mut core = Core::load(&copy.path, config_in(dirs.path())).unwrap();
    let err = core.load_content(Some(dirs.path())).unwrap_err();
    assert!(
        matches!(err, LibretroError::ContentIsDirectory { .. }),
        "{err:?}"
    );
    message_names(&err, dirs.path());
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn fbneo_given_a_zip_that_is_not_a_romset_says_so_before_anything_else() {
    let Some(fbneo) = real_core("fbneo") else {
        return;
    };
    let dirs = tempfile::tempdir().unwrap();
    // FBNeo picks the game by the zip's name, so the bytes do not matter.
    // Named like a romset it knows, it logs why it cannot run it at load;
    // named like nothing it knows, it says nothing and asks to shut down on
    // its first frame. Either way the first words are the real cause.
    let known = dirs.path().join("sf2.zip");
    let unknown = dirs.path().join("holiday_photos.zip");
    for zip in [&known, &unknown] {
        std::fs::write(zip, b"PK not really a zip").unwrap();
    }
    let fbneo = fbneo.to_str().unwrap();
    let cases: [(&str, &std::path::Path, i32, &[&str]); 5] = [
        (
            "run",
            &known,
            2,
            &["could not run the content", "None of those archives"],
        ),
        (
            "synctest",
            &known,
            2,
            &["could not run the content", "None of those archives"],
        ),
        (
            "host",
            &known,
            2,
            &["could not run the content", "None of those archives"],
        ),
        (
            "run",
            &unknown,
            2,
            &[
                "the game failed at frame 0: the core stopped",
                "asked to shut down on its first frame",
            ],
        ),
        // synctest saves before the first frame, where FBNeo only answers a
        // state size of 0.
        ("synctest", &unknown, 3, &["could not use the content"]),
    ];
    for (command, zip, code, must_mention) in cases {
        let zip = zip.to_str().unwrap();
        let mut args = vec![command, "--core", fbneo, "--rom", zip, "--frames", "200"];
        match command {
            "synctest" => args.extend(["--check-distance", "1"]),
            "host" => args.extend(["--port", "0"]),
            _ => {}
        }
        let output = netcade(&args);
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(code), "{command} {zip}: {text}");
        for part in must_mention.iter().chain(&[zip, "not a romset"]) {
            assert!(
                text.contains(part),
                "{command} {zip}: stderr lacks {part:?}: {text}"
            );
        }
        assert!(!text.contains("does not support savestates"), "{text}");
        // FBNeo warns at start-up when the frontend cannot say what a state
        // is for (GET_SAVESTATE_CONTEXT).
        assert!(!text.contains("SAVESTATE_CONTEXT"), "{text}");
    }
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn a_core_that_needs_content_refuses_to_start_without() {
    let Some(copy) = real_core_copy("genesis_plus_gx") else {
        return;
    };
    let dirs = tempfile::tempdir().unwrap();
    let mut core = Core::load(&copy.path, config_in(dirs.path())).unwrap();
    assert!(!core.supports_no_game());
    let err = core.load_content(None).unwrap_err();
    assert!(
        matches!(err, LibretroError::ContentRequired { .. }),
        "{err:?}"
    );
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn save_ram_is_restored_from_and_written_back_to_the_save_directory() {
    let Some(copy) = real_core_copy("genesis_plus_gx") else {
        return;
    };
    let Some(rom) = real_rom("airstriker.md") else {
        return;
    };
    let dirs = tempfile::tempdir().unwrap();
    let config = CoreConfig {
        persist_save_ram: true,
        ..config_in(dirs.path())
    };
    let saved = config.save_dir.join("airstriker.srm");
    std::fs::create_dir_all(&config.save_dir).unwrap();
    let pattern: Vec<u8> = (0..1024u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&saved, &pattern).unwrap();

    let mut core = Core::load(&copy.path, config).unwrap();
    core.load_content(Some(&rom)).unwrap();
    assert_eq!(core.save_ram_path().as_deref(), Some(saved.as_path()));
    let sram_len = {
        let sram = core.save_ram().expect("genesis_plus_gx exposes save RAM");
        assert_eq!(&sram[..pattern.len()], pattern.as_slice());
        sram.len()
    };
    core.run_frame(&[], true);
    std::fs::remove_file(&saved).unwrap();
    drop(core);

    // Written back on unload. (While the game runs genesis_plus_gx reports
    // its save RAM only up to the last byte that is not 0xFF.)
    let written = std::fs::read(&saved).expect("save RAM written back");
    assert!(written.len() >= pattern.len() && written.len() <= sram_len);
    assert_eq!(&written[..pattern.len()], pattern.as_slice());
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn save_ram_is_left_alone_when_persistence_is_off() {
    let Some(copy) = real_core_copy("genesis_plus_gx") else {
        return;
    };
    let Some(rom) = real_rom("airstriker.md") else {
        return;
    };
    let dirs = tempfile::tempdir().unwrap();
    let config = config_in(dirs.path());
    let saved = config.save_dir.join("airstriker.srm");
    std::fs::create_dir_all(&config.save_dir).unwrap();
    std::fs::write(&saved, [0x5a; 512]).unwrap();

    let mut core = Core::load(&copy.path, config).unwrap();
    core.load_content(Some(&rom)).unwrap();
    assert_ne!(&core.save_ram().unwrap()[..512], &[0x5a; 512][..]);
    drop(core);
    assert_eq!(std::fs::read(&saved).unwrap(), vec![0x5a; 512]);
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn frames_run_without_rendering_still_make_sound_and_keep_the_last_picture() {
    let Some(mut loaded) = load_real("genesis_plus_gx", "airstriker.md") else {
        return;
    };
    let core = &mut loaded.core;
    // Past Airstriker's silent logo screen (361 frames).
    run_recording(core, 0, 400);
    let mut any_sound = false;
    for frame in 400..460 {
        core.run_frame(&scripted_inputs(frame), false);
        any_sound |= core.audio_samples().iter().any(|&sample| sample != 0);
    }
    assert!(any_sound);
    assert!(core.video_frame().is_some());
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn the_time_spent_inside_the_core_is_measured() {
    let Some(mut loaded) = load_real("stella", "boxing.bin") else {
        return;
    };
    let core = &mut loaded.core;
    core.reset_time_in_core();
    let started = std::time::Instant::now();
    run_recording(core, 0, 60);
    let wall = started.elapsed();
    let inside = core.time_in_core();
    assert!(inside > std::time::Duration::ZERO);
    assert!(inside <= wall);
    core.reset_time_in_core();
    assert_eq!(core.time_in_core(), std::time::Duration::ZERO);
}

fn steady_state_frames_saves_and_loads_do_not_allocate(core_name: &str, rom_name: &str) {
    let Some(mut loaded) = load_real(core_name, rom_name) else {
        return;
    };
    let core = &mut loaded.core;
    let mut state = Vec::new();
    // Warm up: buffers reach their working size.
    for frame in 0..120 {
        core.run_frame(&scripted_inputs(frame), frame % 2 == 0);
        core.save_state(&mut state).unwrap();
    }
    let allocations = allocation_counter::measure(|| {
        for frame in 120..240 {
            core.run_frame(&scripted_inputs(frame), frame % 2 == 0);
            core.save_state(&mut state).unwrap();
            let _ = Checksum::of(core.game_memory());
            if frame % 10 == 0 {
                core.load_state(&state).unwrap();
            }
        }
    })
    .count_total;
    assert_eq!(allocations, 0, "the host allocated in steady state");
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn steady_state_stella_frames_saves_and_loads_do_not_allocate() {
    steady_state_frames_saves_and_loads_do_not_allocate("stella", "boxing.bin");
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn steady_state_genesis_plus_gx_frames_saves_and_loads_do_not_allocate() {
    steady_state_frames_saves_and_loads_do_not_allocate("genesis_plus_gx", "airstriker.md");
}
