//! The C entry points driven the way a frontend drives them, with a stub
//! frontend whose callbacks record what the core sends. The core's instance
//! is process-global, so these tests take turns through `TURN`.

use super::entry::*;
use super::frontend::{OPTION_INJECT_NONDETERMINISM, OPTION_INPUT_LAG};
use super::game::nondeterminism_strikes;
use crate::layout::{F1_X, FRAME, RAM_FIELDS, STATE_SIZE, VERSION};
use crate::render::{HEIGHT, PITCH, WIDTH};
use crate::sim::{PAD_A, PAD_LEFT, PAD_RIGHT, PAD_UP};
use libretro_rs::sys::{
    retro_game_geometry, retro_game_info, retro_input_descriptor, retro_memory_map,
    retro_pixel_format_RETRO_PIXEL_FORMAT_XRGB8888, retro_system_av_info, retro_system_info,
    retro_system_timing, retro_variable, RETRO_DEVICE_ID_JOYPAD_MASK, RETRO_DEVICE_JOYPAD,
    RETRO_ENVIRONMENT_GET_AUDIO_VIDEO_ENABLE, RETRO_ENVIRONMENT_GET_CAN_DUPE,
    RETRO_ENVIRONMENT_GET_INPUT_BITMASKS, RETRO_ENVIRONMENT_GET_VARIABLE,
    RETRO_ENVIRONMENT_GET_VARIABLE_UPDATE, RETRO_ENVIRONMENT_SET_INPUT_DESCRIPTORS,
    RETRO_ENVIRONMENT_SET_MEMORY_MAPS, RETRO_ENVIRONMENT_SET_PIXEL_FORMAT,
    RETRO_ENVIRONMENT_SET_SUPPORT_NO_GAME, RETRO_ENVIRONMENT_SET_VARIABLES, RETRO_MEMORY_SAVE_RAM,
    RETRO_MEMORY_SYSTEM_RAM, RETRO_MEMORY_VIDEO_RAM, RETRO_REGION_NTSC,
};
use std::cell::RefCell;
use std::ffi::{c_char, c_uint, c_void, CStr, CString};
use std::sync::{Mutex, MutexGuard};

use crate::fixtures::DOJO;

static TURN: Mutex<()> = Mutex::new(());

#[derive(Default)]
struct Stub {
    refuse_pixel_format: bool,
    bitmasks: bool,
    video_enabled: bool,
    option_value: Option<CString>,
    input_lag: Option<CString>,
    option_changed: bool,
    pixel_format: Option<u32>,
    declared_options: Vec<(String, String)>,
    input_descriptors: usize,
    memory_map: Option<(usize, usize)>,
    no_game_supported: Option<bool>,
    pads: [u16; 2],
    audio_calls: Vec<usize>,
    last_audio: Vec<i16>,
    video_calls: Vec<(bool, u32, u32, usize)>,
    last_video: Vec<u8>,
}

thread_local! {
    static STUB: RefCell<Stub> = RefCell::new(Stub::default());
}

fn stub<R>(f: impl FnOnce(&mut Stub) -> R) -> R {
    STUB.with_borrow_mut(f)
}

unsafe fn c_text(p: *const c_char) -> String {
    // SAFETY: callers pass non-null NUL-terminated strings from the core.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

unsafe extern "C" fn environment(cmd: c_uint, data: *mut c_void) -> bool {
    // SAFETY (whole function): `data` has the type the libretro API gives
    // for `cmd`; the core under test is what we are checking.
    unsafe {
        match cmd {
            RETRO_ENVIRONMENT_SET_PIXEL_FORMAT => stub(|s| {
                if s.refuse_pixel_format {
                    return false;
                }
                s.pixel_format = Some(*data.cast::<u32>());
                true
            }),
            RETRO_ENVIRONMENT_SET_VARIABLES => {
                let mut var = data.cast::<retro_variable>();
                let mut declared = Vec::new();
                while !(*var).key.is_null() {
                    declared.push((c_text((*var).key), c_text((*var).value)));
                    var = var.add(1);
                }
                stub(|s| s.declared_options = declared);
                true
            }
            RETRO_ENVIRONMENT_GET_VARIABLE => {
                let var = &mut *data.cast::<retro_variable>();
                let key = c_text(var.key);
                stub(|s| match &s.option_value {
                    Some(value) if key == "duel_inject_nondeterminism" => {
                        var.value = value.as_ptr();
                        true
                    }
                    _ => match &s.input_lag {
                        Some(value) if key == "duel_input_lag" => {
                            var.value = value.as_ptr();
                            true
                        }
                        _ => false,
                    },
                })
            }
            RETRO_ENVIRONMENT_GET_VARIABLE_UPDATE => {
                *data.cast::<bool>() = stub(|s| std::mem::take(&mut s.option_changed));
                true
            }
            RETRO_ENVIRONMENT_SET_INPUT_DESCRIPTORS => {
                let mut d = data.cast::<retro_input_descriptor>();
                let mut count = 0;
                while !(*d).description.is_null() {
                    count += 1;
                    d = d.add(1);
                }
                stub(|s| s.input_descriptors = count);
                true
            }
            RETRO_ENVIRONMENT_SET_MEMORY_MAPS => {
                let map = &*data.cast::<retro_memory_map>();
                let first = &*map.descriptors;
                stub(|s| s.memory_map = Some((first.ptr as usize, first.len)));
                true
            }
            RETRO_ENVIRONMENT_SET_SUPPORT_NO_GAME => {
                let value = *data.cast::<bool>();
                stub(|s| s.no_game_supported = Some(value));
                true
            }
            RETRO_ENVIRONMENT_GET_INPUT_BITMASKS => stub(|s| s.bitmasks),
            RETRO_ENVIRONMENT_GET_CAN_DUPE => {
                *data.cast::<bool>() = true;
                true
            }
            RETRO_ENVIRONMENT_GET_AUDIO_VIDEO_ENABLE => {
                *data.cast::<i32>() = if stub(|s| s.video_enabled) { 3 } else { 2 };
                true
            }
            _ => false,
        }
    }
}

unsafe extern "C" fn video_refresh(
    data: *const c_void,
    width: c_uint,
    height: c_uint,
    pitch: usize,
) {
    let pixels = if data.is_null() {
        Vec::new()
    } else {
        // SAFETY: the core promises `height` rows of `pitch` bytes.
        unsafe { std::slice::from_raw_parts(data.cast::<u8>(), height as usize * pitch) }.to_vec()
    };
    stub(|s| {
        s.video_calls.push((!data.is_null(), width, height, pitch));
        if !pixels.is_empty() {
            s.last_video = pixels;
        }
    });
}

unsafe extern "C" fn audio_batch(data: *const i16, frames: usize) -> usize {
    // SAFETY: the core promises `frames` interleaved stereo frames.
    let samples = unsafe { std::slice::from_raw_parts(data, frames * 2) }.to_vec();
    stub(|s| {
        s.audio_calls.push(frames);
        s.last_audio = samples;
    });
    frames
}

unsafe extern "C" fn input_poll() {}

unsafe extern "C" fn input_state(port: c_uint, device: c_uint, _index: c_uint, id: c_uint) -> i16 {
    if device != RETRO_DEVICE_JOYPAD || port > 1 {
        return 0;
    }
    let (held, bitmasks) = stub(|s| (s.pads[port as usize], s.bitmasks));
    if id == RETRO_DEVICE_ID_JOYPAD_MASK {
        assert!(bitmasks, "mask query without bitmask support");
        held as i16
    } else {
        i16::from(held & (1 << id) != 0)
    }
}

/// A fresh core with the stub attached; the option answers `option`.
fn start(option: Option<&str>) -> MutexGuard<'static, ()> {
    let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    retro_unload_game();
    retro_deinit();
    stub(|s| {
        *s = Stub {
            video_enabled: true,
            option_value: option.map(|v| CString::new(v).unwrap()),
            ..Stub::default()
        }
    });
    retro_set_environment(Some(environment));
    retro_set_video_refresh(Some(video_refresh));
    retro_set_audio_sample_batch(Some(audio_batch));
    retro_set_input_poll(Some(input_poll));
    retro_set_input_state(Some(input_state));
    retro_init();
    turn
}

fn load(bytes: &[u8]) -> bool {
    let info = retro_game_info {
        path: std::ptr::null(),
        data: bytes.as_ptr().cast(),
        size: bytes.len(),
        meta: std::ptr::null(),
    };
    // SAFETY: `info` and its bytes live across the call.
    unsafe { retro_load_game(&info) }
}

fn run(frames: usize, pads: [u16; 2]) {
    stub(|s| s.pads = pads);
    for _ in 0..frames {
        retro_run();
    }
}

fn ram() -> Vec<u8> {
    let ptr = retro_get_memory_data(RETRO_MEMORY_SYSTEM_RAM);
    let len = retro_get_memory_size(RETRO_MEMORY_SYSTEM_RAM);
    assert!(!ptr.is_null());
    // SAFETY: the core exposes `len` bytes at `ptr` while a game is loaded.
    unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) }.to_vec()
}

fn save() -> Vec<u8> {
    let mut buffer = vec![0u8; retro_serialize_size()];
    // SAFETY: `buffer` has exactly the promised size.
    assert!(unsafe { retro_serialize(buffer.as_mut_ptr().cast(), buffer.len()) });
    buffer
}

fn restore(bytes: &[u8]) -> bool {
    // SAFETY: `bytes` is readable for its length.
    unsafe { retro_unserialize(bytes.as_ptr().cast(), bytes.len()) }
}

/// A repeatable mix of walking, jumping and attacking.
fn scripted(frames: usize) -> Vec<u8> {
    let moves = [
        [PAD_RIGHT, PAD_LEFT],
        [PAD_RIGHT | PAD_A, PAD_UP],
        [0, PAD_A],
        [PAD_UP, PAD_RIGHT],
        [PAD_A, PAD_LEFT | PAD_A],
    ];
    let mut rams = Vec::new();
    for i in 0..frames {
        run(1, moves[(i / 7) % moves.len()]);
        rams.extend(ram());
        rams.extend(stub(|s| {
            s.last_video.iter().step_by(97).copied().collect::<Vec<_>>()
        }));
    }
    rams
}

fn differing_fields(a: &[u8], b: &[u8]) -> Vec<&'static str> {
    RAM_FIELDS
        .iter()
        .filter(|f| a[f.range()] != b[f.range()])
        .map(|f| f.name)
        .collect()
}

#[test]
fn system_info_names_the_core_with_nul_terminated_strings() {
    let mut info = retro_system_info {
        library_name: std::ptr::null(),
        library_version: std::ptr::null(),
        valid_extensions: std::ptr::null(),
        need_fullpath: true,
        block_extract: true,
    };
    // SAFETY: `info` is a writable retro_system_info.
    unsafe { retro_get_system_info(&mut info) };
    // SAFETY: the core answered with static NUL-terminated strings.
    unsafe {
        assert_eq!(c_text(info.library_name), "Duel");
        assert_eq!(c_text(info.library_version), "0.1.0");
        assert_eq!(c_text(info.valid_extensions), "arena");
    }
    assert!(!info.need_fullpath);
    assert!(!info.block_extract);
    assert_eq!(retro_api_version(), 1);
    assert_eq!(retro_get_region(), RETRO_REGION_NTSC);
    // SAFETY: null is explicitly allowed and ignored.
    unsafe { retro_get_system_info(std::ptr::null_mut()) };
}

#[test]
fn av_info_is_320x240_at_60_fps_with_48_khz_audio() {
    let mut av = retro_system_av_info {
        geometry: retro_game_geometry {
            base_width: 0,
            base_height: 0,
            max_width: 0,
            max_height: 0,
            aspect_ratio: 0.0,
        },
        timing: retro_system_timing {
            fps: 0.0,
            sample_rate: 0.0,
        },
    };
    // SAFETY: `av` is a writable retro_system_av_info.
    unsafe { retro_get_system_av_info(&mut av) };
    assert_eq!(
        (av.geometry.base_width, av.geometry.base_height),
        (320, 240)
    );
    assert_eq!(av.timing.fps, 60.0);
    assert_eq!(av.timing.sample_rate, 48_000.0);
}

/// fighter1.x after each of `frames` frames, pressing RIGHT on frame
/// `press` only, with the input lag option answering `lag`.
fn walk_with_lag(lag: Option<&str>, press: usize, frames: usize) -> Vec<Vec<u8>> {
    let _turn = start(None);
    stub(|s| s.input_lag = lag.map(|v| CString::new(v).unwrap()));
    assert!(load(DOJO));
    (0..frames)
        .map(|frame| {
            run(
                1,
                if frame == press {
                    [PAD_RIGHT, 0]
                } else {
                    [0, 0]
                },
            );
            ram()[F1_X.range()].to_vec()
        })
        .collect()
}

#[test]
fn the_input_lag_option_applies_a_press_that_many_frames_later() {
    let prompt = walk_with_lag(None, 3, 10);
    assert_ne!(prompt[3], prompt[2], "a press moves fighter 1 at once");
    assert_eq!(walk_with_lag(Some("3"), 0, 10), prompt);
    assert_eq!(walk_with_lag(Some("0"), 3, 10), prompt);
    // An answer the core does not offer means no lag.
    assert_eq!(walk_with_lag(Some("9"), 3, 10), prompt);
}

#[test]
fn set_environment_declares_the_option_and_no_game_unsupported() {
    let _turn = start(None);
    let options = stub(|s| s.declared_options.clone());
    assert_eq!(
        options,
        [
            (
                OPTION_INJECT_NONDETERMINISM.to_str().unwrap().to_string(),
                "Inject non-determinism (testing); disabled|enabled".to_string()
            ),
            (
                OPTION_INPUT_LAG.to_str().unwrap().to_string(),
                "Input lag in frames (testing); 0|1|2|3|4".to_string()
            )
        ]
    );
    assert_eq!(stub(|s| s.no_game_supported), Some(false));
}

#[test]
fn loading_null_or_non_arena_content_fails_cleanly() {
    let _turn = start(None);
    // SAFETY: null is handled by the core.
    assert!(!unsafe { retro_load_game(std::ptr::null()) });
    let nothing = retro_game_info {
        path: std::ptr::null(),
        data: std::ptr::null(),
        size: 0,
        meta: std::ptr::null(),
    };
    // SAFETY: a valid struct with null members.
    assert!(!unsafe { retro_load_game(&nothing) });
    assert!(!load(b"\x7fELF\x02\x01\x01"));
    assert!(!load(b"netcade-arena 1\nname X\nfloor 9999\n"));
    // A size beyond any arena is refused before the bytes are touched.
    let tiny = [0u8; 4];
    let lying = retro_game_info {
        path: std::ptr::null(),
        data: tiny.as_ptr().cast(),
        size: usize::MAX / 2,
        meta: std::ptr::null(),
    };
    // SAFETY: the core must not read past `tiny`, which is what we check.
    assert!(!unsafe { retro_load_game(&lying) });
    assert_eq!(retro_get_memory_size(RETRO_MEMORY_SYSTEM_RAM), 0);
    assert!(retro_get_memory_data(RETRO_MEMORY_SYSTEM_RAM).is_null());
}

#[test]
fn a_frontend_refusing_xrgb8888_fails_the_load() {
    let _turn = start(None);
    stub(|s| s.refuse_pixel_format = true);
    assert!(!load(DOJO));
}

#[test]
fn loading_an_arena_sets_xrgb8888_inputs_and_the_memory_map() {
    let _turn = start(None);
    assert!(load(DOJO));
    assert_eq!(
        stub(|s| s.pixel_format),
        Some(retro_pixel_format_RETRO_PIXEL_FORMAT_XRGB8888)
    );
    assert_eq!(stub(|s| s.input_descriptors), 12);
    let ram_ptr = retro_get_memory_data(RETRO_MEMORY_SYSTEM_RAM) as usize;
    assert_eq!(stub(|s| s.memory_map), Some((ram_ptr, STATE_SIZE)));
}

#[test]
fn every_run_sends_800_stereo_frames_and_a_320x240_frame() {
    let _turn = start(None);
    assert!(load(DOJO));
    run(3, [0, 0]);
    run(1, [PAD_UP, 0]);
    assert_eq!(stub(|s| s.audio_calls.clone()), [800; 4]);
    let calls = stub(|s| s.video_calls.clone());
    assert_eq!(calls, [(true, WIDTH as u32, HEIGHT as u32, PITCH); 4]);
    assert!(stub(|s| s.last_audio.iter().any(|&v| v != 0)), "jump tone");
}

#[test]
fn system_ram_is_the_savestate_at_a_stable_address() {
    let _turn = start(None);
    assert!(load(DOJO));
    let address = retro_get_memory_data(RETRO_MEMORY_SYSTEM_RAM);
    run(10, [PAD_RIGHT, 0]);
    assert_eq!(retro_get_memory_data(RETRO_MEMORY_SYSTEM_RAM), address);
    assert_eq!(ram(), save());
    assert_eq!(ram()[FRAME.range()], 10u32.to_le_bytes());
    assert!(retro_get_memory_data(RETRO_MEMORY_SAVE_RAM).is_null());
    assert_eq!(retro_get_memory_size(RETRO_MEMORY_VIDEO_RAM), 0);
}

#[test]
fn save_run_restore_rerun_reproduces_ram_and_video() {
    let _turn = start(None);
    assert!(load(DOJO));
    scripted(50);
    let saved = save();
    let first = scripted(120);
    assert!(restore(&saved));
    assert_eq!(ram(), saved, "RAM is refreshed on unserialize");
    let second = scripted(120);
    assert!(first == second, "the rerun diverged");
}

#[test]
fn unserialize_rejects_wrong_size_version_and_null() {
    let _turn = start(None);
    assert!(load(DOJO));
    run(5, [PAD_RIGHT, 0]);
    let good = save();
    assert!(!restore(&good[..STATE_SIZE - 1]));
    let mut longer = good.clone();
    longer.push(0);
    assert!(!restore(&longer));
    let mut other_version = good.clone();
    other_version[VERSION.offset] ^= 0x80;
    assert!(!restore(&other_version));
    // SAFETY: null is handled by the core.
    assert!(!unsafe { retro_unserialize(std::ptr::null(), STATE_SIZE) });
    assert_eq!(ram(), good, "a refused state changes nothing");
    let mut small = [0u8; 8];
    // SAFETY: `small` is writable for its length, which is too small.
    assert!(!unsafe { retro_serialize(small.as_mut_ptr().cast(), small.len()) });
}

#[test]
fn reset_restarts_the_match() {
    let _turn = start(None);
    assert!(load(DOJO));
    run(30, [PAD_RIGHT, PAD_LEFT]);
    retro_reset();
    let fresh = crate::fixtures::dojo().encode();
    assert_eq!(ram(), fresh);
}

#[test]
fn with_the_option_disabled_a_replay_matches_exactly() {
    let _turn = start(Some("disabled"));
    assert!(load(DOJO));
    let saved = save();
    let first = scripted(40);
    assert!(restore(&saved));
    assert!(first == scripted(40));
}

#[test]
fn injected_nondeterminism_makes_a_replay_differ_in_fighter1_x_only() {
    // Calls n+1 (first pass) and n+2 (replay of the same frame): exactly
    // one of them is struck.
    let n = (0..100u64)
        .find(|&n| nondeterminism_strikes(n + 1) != nondeterminism_strikes(n + 2))
        .unwrap();
    let _turn = start(Some("enabled"));
    assert!(load(DOJO));
    run(n as usize, [0, 0]);
    let saved = save();
    run(1, [0, 0]);
    let first = ram();
    assert!(restore(&saved));
    run(1, [0, 0]);
    assert_eq!(differing_fields(&first, &ram()), [F1_X.name]);
}

#[test]
fn the_option_can_be_switched_on_while_running() {
    // The hidden counter also counts calls made while the option is off: a
    // first pass of m calls (1..=m, off) is replayed as calls m+1..=2m (on),
    // struck an odd number of times so the flips do not cancel out.
    let m = (1..100u64)
        .find(|&m| {
            (m + 1..=2 * m)
                .filter(|&c| nondeterminism_strikes(c))
                .count()
                % 2
                == 1
        })
        .unwrap() as usize;
    let _turn = start(Some("disabled"));
    assert!(load(DOJO));
    let saved = save();
    run(m, [0, 0]);
    let first = ram();
    assert!(restore(&saved));
    stub(|s| {
        s.option_value = Some(CString::new("enabled").unwrap());
        s.option_changed = true;
    });
    run(m, [0, 0]);
    assert_eq!(differing_fields(&first, &ram()), [F1_X.name]);
}

/// GGPO's sync-test in miniature: after each frame, reload the state from
/// `distance` frames back, re-simulate and compare RAM with the first pass.
/// Returns the first frame whose re-simulation differed.
fn sync_test(distance: usize, frames: usize) -> Option<usize> {
    let pads = |f: usize| {
        [
            if f % 40 < 20 { PAD_RIGHT } else { PAD_LEFT },
            PAD_UP * (f % 3 == 0) as u16,
        ]
    };
    let mut before = Vec::new();
    let mut after = Vec::new();
    for f in 0..frames {
        before.push(save());
        run(1, pads(f));
        after.push(ram());
        if f + 1 >= distance {
            let from = f + 1 - distance;
            assert!(restore(&before[from]));
            for (g, expected) in after.iter().enumerate().skip(from) {
                run(1, pads(g));
                if ram() != *expected {
                    return Some(g);
                }
            }
        }
    }
    None
}

#[test]
fn a_sync_test_catches_the_injected_nondeterminism_at_any_check_distance() {
    for distance in 1..=10 {
        let _turn = start(Some("enabled"));
        assert!(load(DOJO));
        assert!(
            sync_test(distance, 60).is_some(),
            "distance {distance} missed the injected non-determinism"
        );
    }
}

#[test]
fn a_sync_test_passes_with_the_option_disabled() {
    for distance in [1, 4, 7] {
        let _turn = start(Some("disabled"));
        assert!(load(DOJO));
        assert_eq!(sync_test(distance, 60), None, "distance {distance}");
    }
}

#[test]
fn bitmask_and_per_button_input_give_the_same_game() {
    let play = |bitmasks: bool| {
        let _turn = start(None);
        stub(|s| s.bitmasks = bitmasks);
        assert!(load(DOJO));
        scripted(60)
    };
    assert!(play(true) == play(false));
}

#[test]
fn with_video_disabled_the_core_sends_a_dupe() {
    let _turn = start(None);
    assert!(load(DOJO));
    stub(|s| s.video_enabled = false);
    run(1, [0, 0]);
    assert_eq!(
        stub(|s| s.video_calls.last().copied()).map(|c| c.0),
        Some(false)
    );
}

#[test]
fn missing_callbacks_skip_output_without_crashing() {
    let _turn = start(None);
    assert!(load(DOJO));
    retro_set_video_refresh(None);
    retro_set_audio_sample_batch(None);
    retro_set_input_poll(None);
    retro_set_input_state(None);
    retro_run();
    assert_eq!(ram()[FRAME.range()], 1u32.to_le_bytes());
}

#[test]
fn calls_without_a_game_are_harmless() {
    let _turn = start(None);
    retro_run();
    retro_reset();
    let mut buffer = vec![0u8; STATE_SIZE];
    // SAFETY: `buffer` is writable for STATE_SIZE bytes.
    assert!(!unsafe { retro_serialize(buffer.as_mut_ptr().cast(), buffer.len()) });
    assert!(!restore(&buffer));
    assert!(retro_get_memory_data(RETRO_MEMORY_SYSTEM_RAM).is_null());
    assert_eq!(retro_serialize_size(), STATE_SIZE);
    assert!(load(DOJO));
    retro_unload_game();
    assert_eq!(retro_get_memory_size(RETRO_MEMORY_SYSTEM_RAM), 0);
}
