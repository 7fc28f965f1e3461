//! The libretro C API as netcade uses it: constants, `#[repr(C)]` structs and
//! the function-pointer types of a core's exports and of the frontend callbacks.
//!
//! Written from the libretro API (libretro.h, API version 1); only what the host
//! needs is declared.

use std::ffi::{c_char, c_uint, c_void};

pub const RETRO_API_VERSION: c_uint = 1;

// Input devices and joypad ids.
pub const RETRO_DEVICE_MASK: c_uint = 0xff;
pub const RETRO_DEVICE_JOYPAD: c_uint = 1;
pub const RETRO_DEVICE_ID_JOYPAD_MASK: c_uint = 256;

// Memory regions for retro_get_memory_data / retro_get_memory_size.
pub const RETRO_MEMORY_SAVE_RAM: c_uint = 0;
pub const RETRO_MEMORY_SYSTEM_RAM: c_uint = 2;

// Memory descriptor flags.
pub const RETRO_MEMDESC_CONST: u64 = 1 << 0;

// Pixel formats (enum retro_pixel_format, an int in C).
pub const RETRO_PIXEL_FORMAT_0RGB1555: i32 = 0;
pub const RETRO_PIXEL_FORMAT_XRGB8888: i32 = 1;
pub const RETRO_PIXEL_FORMAT_RGB565: i32 = 2;

// Log levels (enum retro_log_level).
pub const RETRO_LOG_DEBUG: c_uint = 0;
pub const RETRO_LOG_INFO: c_uint = 1;
pub const RETRO_LOG_WARN: c_uint = 2;

pub const RETRO_LANGUAGE_ENGLISH: c_uint = 0;

// enum retro_savestate_context
pub const RETRO_SAVESTATE_CONTEXT_NORMAL: i32 = 0;
pub const RETRO_SAVESTATE_CONTEXT_RUNAHEAD_SAME_INSTANCE: i32 = 1;
pub const RETRO_SAVESTATE_CONTEXT_ROLLBACK_NETPLAY: i32 = 3;

/// Options v1/v2 definitions carry a fixed-size values array of this length.
pub const RETRO_NUM_CORE_OPTION_VALUES_MAX: usize = 128;

/// Passed as frame data by hardware-rendered cores; netcade only hosts
/// software-rendered ones, so it is treated like a duplicated frame.
pub const RETRO_HW_FRAME_BUFFER_VALID: *const c_void = usize::MAX as *const c_void;

/// Or-ed into environment commands that are not yet frozen in the API;
/// stripped before matching.
pub const RETRO_ENVIRONMENT_EXPERIMENTAL: c_uint = 0x10000;

pub const RETRO_SERIALIZATION_QUIRK_CORE_VARIABLE_SIZE: u64 = 1 << 2;

/// Environment commands (without the experimental flag).
pub mod env {
    use std::ffi::c_uint;
    pub const GET_CAN_DUPE: c_uint = 3;
    pub const SET_MESSAGE: c_uint = 6;
    pub const SHUTDOWN: c_uint = 7;
    pub const SET_PERFORMANCE_LEVEL: c_uint = 8;
    pub const GET_SYSTEM_DIRECTORY: c_uint = 9;
    pub const SET_PIXEL_FORMAT: c_uint = 10;
    pub const SET_INPUT_DESCRIPTORS: c_uint = 11;
    pub const GET_VARIABLE: c_uint = 15;
    pub const SET_VARIABLES: c_uint = 16;
    pub const GET_VARIABLE_UPDATE: c_uint = 17;
    pub const SET_SUPPORT_NO_GAME: c_uint = 18;
    pub const GET_LIBRETRO_PATH: c_uint = 19;
    pub const GET_LOG_INTERFACE: c_uint = 27;
    pub const GET_CORE_ASSETS_DIRECTORY: c_uint = 30;
    pub const GET_SAVE_DIRECTORY: c_uint = 31;
    pub const SET_SYSTEM_AV_INFO: c_uint = 32;
    pub const SET_SUBSYSTEM_INFO: c_uint = 34;
    pub const SET_CONTROLLER_INFO: c_uint = 35;
    pub const SET_MEMORY_MAPS: c_uint = 36;
    pub const SET_GEOMETRY: c_uint = 37;
    pub const GET_USERNAME: c_uint = 38;
    pub const GET_LANGUAGE: c_uint = 39;
    pub const SET_SERIALIZATION_QUIRKS: c_uint = 44;
    pub const GET_AUDIO_VIDEO_ENABLE: c_uint = 47;
    pub const GET_FASTFORWARDING: c_uint = 49;
    pub const GET_INPUT_BITMASKS: c_uint = 51;
    pub const GET_CORE_OPTIONS_VERSION: c_uint = 52;
    pub const SET_CORE_OPTIONS: c_uint = 53;
    pub const SET_CORE_OPTIONS_INTL: c_uint = 54;
    pub const SET_CORE_OPTIONS_DISPLAY: c_uint = 55;
    pub const GET_MESSAGE_INTERFACE_VERSION: c_uint = 59;
    pub const SET_MESSAGE_EXT: c_uint = 60;
    pub const GET_INPUT_MAX_USERS: c_uint = 61;
    pub const SET_CORE_OPTIONS_V2: c_uint = 67;
    pub const SET_CORE_OPTIONS_V2_INTL: c_uint = 68;
    /// Experimental (72 | EXPERIMENTAL); matched with the flag stripped.
    pub const GET_SAVESTATE_CONTEXT: c_uint = 72;
}

#[repr(C)]
pub struct RetroSystemInfo {
    pub library_name: *const c_char,
    pub library_version: *const c_char,
    pub valid_extensions: *const c_char,
    pub need_fullpath: bool,
    pub block_extract: bool,
}

#[repr(C)]
pub struct RetroGameInfo {
    pub path: *const c_char,
    pub data: *const c_void,
    pub size: usize,
    pub meta: *const c_char,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct RetroGameGeometry {
    pub base_width: c_uint,
    pub base_height: c_uint,
    pub max_width: c_uint,
    pub max_height: c_uint,
    pub aspect_ratio: f32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct RetroSystemTiming {
    pub fps: f64,
    pub sample_rate: f64,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct RetroSystemAvInfo {
    pub geometry: RetroGameGeometry,
    pub timing: RetroSystemTiming,
}

#[repr(C)]
pub struct RetroVariable {
    pub key: *const c_char,
    pub value: *const c_char,
}

#[repr(C)]
pub struct RetroCoreOptionValue {
    pub value: *const c_char,
    pub label: *const c_char,
}

#[repr(C)]
pub struct RetroCoreOptionDefinition {
    pub key: *const c_char,
    pub desc: *const c_char,
    pub info: *const c_char,
    pub values: [RetroCoreOptionValue; RETRO_NUM_CORE_OPTION_VALUES_MAX],
    pub default_value: *const c_char,
}

#[repr(C)]
pub struct RetroCoreOptionsIntl {
    pub us: *const RetroCoreOptionDefinition,
    pub local: *const RetroCoreOptionDefinition,
}

#[repr(C)]
pub struct RetroCoreOptionV2Definition {
    pub key: *const c_char,
    pub desc: *const c_char,
    pub desc_categorized: *const c_char,
    pub info: *const c_char,
    pub info_categorized: *const c_char,
    pub category_key: *const c_char,
    pub values: [RetroCoreOptionValue; RETRO_NUM_CORE_OPTION_VALUES_MAX],
    pub default_value: *const c_char,
}

#[repr(C)]
pub struct RetroCoreOptionV2Category {
    pub key: *const c_char,
    pub desc: *const c_char,
    pub info: *const c_char,
}

#[repr(C)]
pub struct RetroCoreOptionsV2 {
    pub categories: *const RetroCoreOptionV2Category,
    pub definitions: *const RetroCoreOptionV2Definition,
}

#[repr(C)]
pub struct RetroCoreOptionsV2Intl {
    pub us: *const RetroCoreOptionsV2,
    pub local: *const RetroCoreOptionsV2,
}

#[repr(C)]
pub struct RetroMemoryDescriptor {
    pub flags: u64,
    pub ptr: *mut c_void,
    pub offset: usize,
    pub start: usize,
    pub select: usize,
    pub disconnect: usize,
    pub len: usize,
    pub addrspace: *const c_char,
}

#[repr(C)]
pub struct RetroMemoryMap {
    pub descriptors: *const RetroMemoryDescriptor,
    pub num_descriptors: c_uint,
}

#[repr(C)]
pub struct RetroInputDescriptor {
    pub port: c_uint,
    pub device: c_uint,
    pub index: c_uint,
    pub id: c_uint,
    pub description: *const c_char,
}

#[repr(C)]
pub struct RetroMessage {
    pub msg: *const c_char,
    pub frames: c_uint,
}

#[repr(C)]
pub struct RetroMessageExt {
    pub msg: *const c_char,
    pub duration: c_uint,
    pub priority: c_uint,
    pub level: c_uint,
    pub target: c_uint,
    pub kind: c_uint,
    pub progress: i8,
}

/// `void (*)(enum retro_log_level, const char *fmt, ...)`: printf-style.
/// netcade's is the C shim in `log_shim.c` (stable Rust cannot define
/// C-variadic functions), which formats the line and calls back into Rust.
pub type RetroLogPrintf = unsafe extern "C" fn(level: c_uint, fmt: *const c_char, ...);

extern "C" {
    /// The log callback handed to cores, defined in `log_shim.c`.
    pub fn netcade_core_log_printf(level: c_uint, fmt: *const c_char, ...);
}

#[repr(C)]
pub struct RetroLogCallback {
    pub log: RetroLogPrintf,
}

// Callbacks the frontend hands to the core.
pub type RetroEnvironment = unsafe extern "C" fn(cmd: c_uint, data: *mut c_void) -> bool;
pub type RetroVideoRefresh =
    unsafe extern "C" fn(data: *const c_void, width: c_uint, height: c_uint, pitch: usize);
pub type RetroAudioSample = unsafe extern "C" fn(left: i16, right: i16);
pub type RetroAudioSampleBatch = unsafe extern "C" fn(data: *const i16, frames: usize) -> usize;
pub type RetroInputPoll = unsafe extern "C" fn();
pub type RetroInputState =
    unsafe extern "C" fn(port: c_uint, device: c_uint, index: c_uint, id: c_uint) -> i16;

// The core's exports. Those netcade calls through `catching` may unwind (a
// C++ core's exception), which the shim stops; the getters never do.
pub type RetroSetEnvironmentFn = unsafe extern "C-unwind" fn(RetroEnvironment);
pub type RetroSetVideoRefreshFn = unsafe extern "C-unwind" fn(RetroVideoRefresh);
pub type RetroSetAudioSampleFn = unsafe extern "C-unwind" fn(RetroAudioSample);
pub type RetroSetAudioSampleBatchFn = unsafe extern "C-unwind" fn(RetroAudioSampleBatch);
pub type RetroSetInputPollFn = unsafe extern "C-unwind" fn(RetroInputPoll);
pub type RetroSetInputStateFn = unsafe extern "C-unwind" fn(RetroInputState);
pub type RetroInitFn = unsafe extern "C-unwind" fn();
pub type RetroDeinitFn = unsafe extern "C-unwind" fn();
pub type RetroApiVersionFn = unsafe extern "C" fn() -> c_uint;
pub type RetroGetSystemInfoFn = unsafe extern "C-unwind" fn(*mut RetroSystemInfo);
pub type RetroGetSystemAvInfoFn = unsafe extern "C-unwind" fn(*mut RetroSystemAvInfo);
pub type RetroSetControllerPortDeviceFn = unsafe extern "C-unwind" fn(c_uint, c_uint);
pub type RetroResetFn = unsafe extern "C-unwind" fn();
pub type RetroRunFn = unsafe extern "C-unwind" fn();
pub type RetroSerializeSizeFn = unsafe extern "C-unwind" fn() -> usize;
pub type RetroSerializeFn = unsafe extern "C-unwind" fn(*mut c_void, usize) -> bool;
pub type RetroUnserializeFn = unsafe extern "C-unwind" fn(*const c_void, usize) -> bool;
pub type RetroLoadGameFn = unsafe extern "C-unwind" fn(*const RetroGameInfo) -> bool;
pub type RetroUnloadGameFn = unsafe extern "C-unwind" fn();
pub type RetroGetMemoryDataFn = unsafe extern "C" fn(c_uint) -> *mut c_void;
pub type RetroGetMemorySizeFn = unsafe extern "C" fn(c_uint) -> usize;
