//! The libretro API: every `retro_*` function the frontend calls.
//!
//! Each is thin: it catches panics (never unwinding into C), checks the
//! pointers it was given, and hands typed values to [`Instance`]. Strings
//! given to C are NUL-terminated statics.

use super::game::Content;
use super::instance::{live_system_ram, with_instance, Instance};
use crate::arena::MAX_ARENA_BYTES;
use crate::audio::SAMPLE_RATE;
use crate::layout::STATE_SIZE;
use crate::render::{HEIGHT, WIDTH};
use libretro_rs::sys::*;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicI32, Ordering};

pub const LIBRARY_NAME: &str = "Duel\0";
pub const LIBRARY_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
pub const VALID_EXTENSIONS: &str = "arena\0";

/// Runs `body`, turning a panic into `fallback` so it never crosses into C.
fn guard<R>(fallback: R, body: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// Runs `f` on the instance inside a panic guard; `fallback` if the
/// instance is busy (a re-entrant call) or `f` panicked.
fn on_instance<R: Copy>(fallback: R, f: impl FnOnce(&mut Instance) -> R) -> R {
    guard(fallback, || with_instance(f).unwrap_or(fallback))
}

#[no_mangle]
pub extern "C" fn retro_api_version() -> c_uint {
    guard(RETRO_API_VERSION, || RETRO_API_VERSION)
}

#[no_mangle]
pub extern "C" fn retro_set_environment(callback: retro_environment_t) {
    on_instance((), |instance| {
        instance.frontend.environment = callback;
        instance.frontend.log = None;
        instance.frontend.fetch_log_interface();
        instance.frontend.declare_no_game_unsupported();
        instance.frontend.declare_options();
    })
}

#[no_mangle]
pub extern "C" fn retro_set_video_refresh(callback: retro_video_refresh_t) {
    on_instance((), |instance| instance.frontend.video_refresh = callback)
}

#[no_mangle]
pub extern "C" fn retro_set_audio_sample(callback: retro_audio_sample_t) {
    on_instance((), |instance| instance.frontend.audio_sample = callback)
}

#[no_mangle]
pub extern "C" fn retro_set_audio_sample_batch(callback: retro_audio_sample_batch_t) {
    on_instance((), |instance| {
        instance.frontend.audio_sample_batch = callback
    })
}

#[no_mangle]
pub extern "C" fn retro_set_input_poll(callback: retro_input_poll_t) {
    on_instance((), |instance| instance.frontend.input_poll = callback)
}

#[no_mangle]
pub extern "C" fn retro_set_input_state(callback: retro_input_state_t) {
    on_instance((), |instance| instance.frontend.input_state = callback)
}

#[no_mangle]
pub extern "C" fn retro_init() {
    on_instance((), |instance| {
        if instance.frontend.log.is_none() {
            instance.frontend.fetch_log_interface();
        }
    })
}

#[no_mangle]
pub extern "C" fn retro_deinit() {
    // Callbacks stay: a frontend may init again without setting them anew.
    on_instance((), Instance::unload_game)
}

/// # Safety
/// `info` must be null or point to a writable `retro_system_info`.
#[no_mangle]
pub unsafe extern "C" fn retro_get_system_info(info: *mut retro_system_info) {
    guard((), || {
        if info.is_null() {
            return;
        }
        let answer = retro_system_info {
            library_name: LIBRARY_NAME.as_ptr().cast::<c_char>(),
            library_version: LIBRARY_VERSION.as_ptr().cast::<c_char>(),
            valid_extensions: VALID_EXTENSIONS.as_ptr().cast::<c_char>(),
            need_fullpath: false,
            block_extract: false,
        };
        // SAFETY: `info` is non-null and, per the libretro API, points to a
        // writable `retro_system_info`; the strings are NUL-terminated
        // statics that outlive the process's use of them.
        unsafe { info.write(answer) };
    })
}

/// # Safety
/// `info` must be null or point to a writable `retro_system_av_info`.
#[no_mangle]
pub unsafe extern "C" fn retro_get_system_av_info(info: *mut retro_system_av_info) {
    guard((), || {
        if info.is_null() {
            return;
        }
        let answer = retro_system_av_info {
            geometry: retro_game_geometry {
                base_width: WIDTH as c_uint,
                base_height: HEIGHT as c_uint,
                max_width: WIDTH as c_uint,
                max_height: HEIGHT as c_uint,
                aspect_ratio: 4.0 / 3.0,
            },
            timing: retro_system_timing {
                fps: 60.0,
                sample_rate: f64::from(SAMPLE_RATE),
            },
        };
        // SAFETY: `info` is non-null and points to a writable
        // `retro_system_av_info` (libretro API).
        unsafe { info.write(answer) };
    })
}

#[no_mangle]
pub extern "C" fn retro_set_controller_port_device(_port: c_uint, _device: c_uint) {
    // Both ports are always RetroPads; other devices are ignored.
}

#[no_mangle]
pub extern "C" fn retro_reset() {
    on_instance((), Instance::reset)
}

#[no_mangle]
pub extern "C" fn retro_run() {
    on_instance((), Instance::run)
}

#[no_mangle]
pub extern "C" fn retro_serialize_size() -> usize {
    // A constant: the frontend may ask before loading and keep the answer.
    guard(STATE_SIZE, || STATE_SIZE)
}

/// # Safety
/// `data` must be null or point to `size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn retro_serialize(data: *mut c_void, size: usize) -> bool {
    on_instance(false, |instance| {
        if data.is_null() || size < STATE_SIZE {
            return false;
        }
        // SAFETY: `data` is non-null and the frontend provides `size` ≥
        // STATE_SIZE writable bytes for this call; only STATE_SIZE are
        // borrowed, and nothing else aliases them during the call.
        let out = unsafe { std::slice::from_raw_parts_mut(data.cast::<u8>(), STATE_SIZE) };
        record_savestate_context(instance);
        instance.serialize(out)
    })
}

/// # Safety
/// `data` must be null or point to `size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn retro_unserialize(data: *const c_void, size: usize) -> bool {
    on_instance(false, |instance| {
        if data.is_null() {
            return false;
        }
        if size != STATE_SIZE {
            return instance.refuse_state_of_size(size);
        }
        // SAFETY: `data` is non-null and the frontend provides `size` (=
        // STATE_SIZE) readable bytes for this call.
        let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), STATE_SIZE) };
        record_savestate_context(instance);
        instance.unserialize(bytes)
    })
}

/// The last answer to GET_SAVESTATE_CONTEXT, or -1 before any answer.
static LAST_SAVESTATE_CONTEXT: AtomicI32 = AtomicI32::new(-1);

/// Asks what the state being saved or loaded is for, as cores that skip or
/// add work by context do. Duel's states are the same either way; it only
/// keeps the answer for [`duel_last_savestate_context`].
fn record_savestate_context(instance: &Instance) {
    if let Some(context) = instance.frontend.savestate_context() {
        LAST_SAVESTATE_CONTEXT.store(context, Ordering::Relaxed);
    }
}

/// Test hook: what the frontend last answered to GET_SAVESTATE_CONTEXT
/// during `retro_serialize` or `retro_unserialize` (0 normal, 1 run-ahead
/// in this instance, 2 run-ahead in another, 3 netplay rollback), or -1 if
/// it never answered.
#[no_mangle]
pub extern "C" fn duel_last_savestate_context() -> c_int {
    guard(-1, || LAST_SAVESTATE_CONTEXT.load(Ordering::Relaxed))
}

#[no_mangle]
pub extern "C" fn retro_cheat_reset() {}

#[no_mangle]
pub extern "C" fn retro_cheat_set(_index: c_uint, _enabled: bool, _code: *const c_char) {}

/// # Safety
/// `game` must be null or point to a valid `retro_game_info` whose `data` (if non-null) holds `size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn retro_load_game(game: *const retro_game_info) -> bool {
    on_instance(false, |instance| {
        // SAFETY: a non-null `game` points to a `retro_game_info` valid for
        // this call (libretro API); `as_ref` maps null to None.
        let info = unsafe { game.as_ref() };
        let content = match info {
            None => Content::Missing,
            Some(info) if info.data.is_null() && info.path.is_null() => Content::Missing,
            Some(info) if info.data.is_null() => Content::PathOnly,
            Some(info) if info.size > MAX_ARENA_BYTES => Content::TooBig(info.size),
            Some(info) => {
                // SAFETY: `data` is non-null and holds `size` readable bytes
                // for the duration of this call; `size` is bounded above.
                Content::Bytes(unsafe {
                    std::slice::from_raw_parts(info.data.cast::<u8>(), info.size)
                })
            }
        };
        instance.load_game(content)
    })
}

#[no_mangle]
pub extern "C" fn retro_load_game_special(
    _game_type: c_uint,
    _info: *const retro_game_info,
    _num_info: usize,
) -> bool {
    false
}

#[no_mangle]
pub extern "C" fn retro_unload_game() {
    on_instance((), Instance::unload_game)
}

#[no_mangle]
pub extern "C" fn retro_get_region() -> c_uint {
    guard(RETRO_REGION_NTSC, || RETRO_REGION_NTSC)
}

#[no_mangle]
pub extern "C" fn retro_get_memory_data(id: c_uint) -> *mut c_void {
    guard(std::ptr::null_mut(), || match id {
        RETRO_MEMORY_SYSTEM_RAM => live_system_ram().unwrap_or(std::ptr::null_mut()),
        _ => std::ptr::null_mut(),
    })
}

#[no_mangle]
pub extern "C" fn retro_get_memory_size(id: c_uint) -> usize {
    guard(0, || match id {
        RETRO_MEMORY_SYSTEM_RAM if live_system_ram().is_some() => STATE_SIZE,
        _ => 0,
    })
}
