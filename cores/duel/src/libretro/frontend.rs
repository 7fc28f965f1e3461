//! Safe, typed calls into the frontend's callbacks. Every call through a C
//! function pointer lives here; a callback the frontend did not give is
//! skipped (a query then answers "no").

use crate::layout::STATE_SIZE;
use crate::render::{Framebuffer, HEIGHT, PITCH, WIDTH};
use libretro_rs::sys::*;
use std::ffi::{c_char, c_uint, c_void, CStr, CString};

/// Not in libretro-rs 0.1.3's bindings (libretro.h: 72, experimental).
const RETRO_ENVIRONMENT_GET_SAVESTATE_CONTEXT: u32 = 72 | RETRO_ENVIRONMENT_EXPERIMENTAL;

/// The core option that turns on the injected non-determinism.
pub const OPTION_INJECT_NONDETERMINISM: &CStr = c"duel_inject_nondeterminism";
const OPTION_INJECT_NONDETERMINISM_VALUES: &CStr =
    c"Inject non-determinism (testing); disabled|enabled";

/// The core option giving the game its own input lag: a press is applied
/// that many frames after the frame that read it (what run-ahead hides).
pub const OPTION_INPUT_LAG: &CStr = c"duel_input_lag";
const OPTION_INPUT_LAG_VALUES: &CStr = c"Input lag in frames (testing); 0|1|2|3|4";

pub type LogFn = unsafe extern "C" fn(level: retro_log_level, fmt: *const c_char, ...);

/// The callbacks the frontend handed to `retro_set_*`.
#[derive(Clone, Copy, Default)]
pub struct Frontend {
    pub environment: retro_environment_t,
    pub video_refresh: retro_video_refresh_t,
    pub audio_sample: retro_audio_sample_t,
    pub audio_sample_batch: retro_audio_sample_batch_t,
    pub input_poll: retro_input_poll_t,
    pub input_state: retro_input_state_t,
    pub log: Option<LogFn>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
    Info,
    Warn,
    Error,
}

impl Frontend {
    pub const fn new() -> Frontend {
        Frontend {
            environment: None,
            video_refresh: None,
            audio_sample: None,
            audio_sample_batch: None,
            input_poll: None,
            input_state: None,
            log: None,
        }
    }

    /// Sends `cmd` with `data` to the environment callback; false if there is
    /// none or the frontend does not know the command.
    ///
    /// # Safety
    /// `data` must point to what the libretro API specifies for `cmd` (or be
    /// null where the API allows it), valid for the duration of the call.
    unsafe fn environment(&self, cmd: u32, data: *mut c_void) -> bool {
        match self.environment {
            // SAFETY: the frontend gave this callback for exactly this use;
            // the caller guarantees `data` matches `cmd`.
            Some(env) => unsafe { env(cmd as c_uint, data) },
            None => false,
        }
    }

    pub fn has_environment(&self) -> bool {
        self.environment.is_some()
    }

    /// Writes a message through the frontend's log interface, or to stderr
    /// for warnings and errors when it gave none.
    pub fn log(&self, level: LogLevel, message: &str) {
        match self.log {
            Some(log) => {
                let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
                let level = match level {
                    LogLevel::Info => retro_log_level_RETRO_LOG_INFO,
                    LogLevel::Warn => retro_log_level_RETRO_LOG_WARN,
                    LogLevel::Error => retro_log_level_RETRO_LOG_ERROR,
                };
                // SAFETY: printf-style call with a constant "%s\n" format and
                // one NUL-terminated string argument that outlives the call.
                unsafe { log(level, c"Duel: %s\n".as_ptr(), text.as_ptr()) };
            }
            None if level != LogLevel::Info => eprintln!("Duel: {message}"),
            None => {}
        }
    }

    /// Asks for the frontend's log interface (GET_LOG_INTERFACE).
    pub fn fetch_log_interface(&mut self) {
        let mut callback = retro_log_callback { log: None };
        // SAFETY: GET_LOG_INTERFACE takes a `struct retro_log_callback *`.
        let ok = unsafe {
            self.environment(
                RETRO_ENVIRONMENT_GET_LOG_INTERFACE,
                (&mut callback as *mut retro_log_callback).cast(),
            )
        };
        if ok && callback.log.is_some() {
            self.log = callback.log;
        }
    }

    /// Declares the core's options (SET_VARIABLES). The array lives on the
    /// stack: frontends copy it during the call, as the API expects.
    pub fn declare_options(&self) {
        let variables = [
            retro_variable {
                key: OPTION_INJECT_NONDETERMINISM.as_ptr(),
                value: OPTION_INJECT_NONDETERMINISM_VALUES.as_ptr(),
            },
            retro_variable {
                key: OPTION_INPUT_LAG.as_ptr(),
                value: OPTION_INPUT_LAG_VALUES.as_ptr(),
            },
            retro_variable {
                key: std::ptr::null(),
                value: std::ptr::null(),
            },
        ];
        // SAFETY: SET_VARIABLES takes a `{NULL, NULL}`-terminated array of
        // `struct retro_variable` whose strings are static.
        unsafe {
            self.environment(
                RETRO_ENVIRONMENT_SET_VARIABLES,
                variables.as_ptr().cast_mut().cast(),
            );
        }
    }

    /// Whether the nondeterminism option is "enabled" (GET_VARIABLE);
    /// disabled when the frontend answers nothing.
    pub fn inject_nondeterminism_enabled(&self) -> bool {
        self.option_value(OPTION_INJECT_NONDETERMINISM)
            .is_some_and(|value| value == b"enabled")
    }

    /// The input lag option's frames (GET_VARIABLE); 0 when the frontend
    /// answers nothing or something else.
    pub fn input_lag(&self) -> usize {
        self.option_value(OPTION_INPUT_LAG)
            .and_then(|value| std::str::from_utf8(&value).ok()?.parse().ok())
            .filter(|&lag| lag <= crate::state::MAX_INPUT_LAG)
            .unwrap_or(0)
    }

    /// The value the frontend gives option `key` (GET_VARIABLE), if any.
    fn option_value(&self, key: &CStr) -> Option<Vec<u8>> {
        let mut variable = retro_variable {
            key: key.as_ptr(),
            value: std::ptr::null(),
        };
        // SAFETY: GET_VARIABLE takes a `struct retro_variable *` with `key`
        // set; the frontend fills `value`.
        let ok = unsafe {
            self.environment(
                RETRO_ENVIRONMENT_GET_VARIABLE,
                (&mut variable as *mut retro_variable).cast(),
            )
        };
        if !ok || variable.value.is_null() {
            return None;
        }
        // SAFETY: a non-null `value` is a NUL-terminated string owned by the
        // frontend, valid at least until the next environment call; it is
        // copied out here.
        let value = unsafe { CStr::from_ptr(variable.value) };
        Some(value.to_bytes().to_vec())
    }

    /// Whether the user changed an option since the last query
    /// (GET_VARIABLE_UPDATE).
    pub fn options_changed(&self) -> bool {
        let mut updated = false;
        // SAFETY: GET_VARIABLE_UPDATE takes a `bool *`.
        let ok = unsafe {
            self.environment(
                RETRO_ENVIRONMENT_GET_VARIABLE_UPDATE,
                (&mut updated as *mut bool).cast(),
            )
        };
        ok && updated
    }

    /// What the frontend says the state being saved or loaded is for
    /// (GET_SAVESTATE_CONTEXT: 0 normal, 1 run-ahead in this instance, 2
    /// run-ahead in another instance, 3 netplay rollback); None if it does
    /// not answer.
    pub fn savestate_context(&self) -> Option<i32> {
        let mut context: i32 = -1;
        // SAFETY: GET_SAVESTATE_CONTEXT takes an `int *` (the enum
        // `retro_savestate_context`).
        let ok = unsafe {
            self.environment(
                RETRO_ENVIRONMENT_GET_SAVESTATE_CONTEXT,
                (&mut context as *mut i32).cast(),
            )
        };
        ok.then_some(context)
    }

    /// Asks for XRGB8888 video (SET_PIXEL_FORMAT); false if refused.
    pub fn set_pixel_format_xrgb8888(&self) -> bool {
        let mut format: retro_pixel_format = retro_pixel_format_RETRO_PIXEL_FORMAT_XRGB8888;
        // SAFETY: SET_PIXEL_FORMAT takes a `const enum retro_pixel_format *`.
        unsafe {
            self.environment(
                RETRO_ENVIRONMENT_SET_PIXEL_FORMAT,
                (&mut format as *mut retro_pixel_format).cast(),
            )
        }
    }

    /// Says this core needs content (SET_SUPPORT_NO_GAME false).
    pub fn declare_no_game_unsupported(&self) {
        let mut supported = false;
        // SAFETY: SET_SUPPORT_NO_GAME takes a `const bool *`.
        unsafe {
            self.environment(
                RETRO_ENVIRONMENT_SET_SUPPORT_NO_GAME,
                (&mut supported as *mut bool).cast(),
            );
        }
    }

    /// Names the buttons Duel uses, for both players (SET_INPUT_DESCRIPTORS).
    pub fn describe_inputs(&self) {
        const BUTTONS: [(u32, &CStr); 6] = [
            (RETRO_DEVICE_ID_JOYPAD_LEFT, c"Walk left"),
            (RETRO_DEVICE_ID_JOYPAD_RIGHT, c"Walk right"),
            (RETRO_DEVICE_ID_JOYPAD_UP, c"Jump"),
            (RETRO_DEVICE_ID_JOYPAD_B, c"Jump"),
            (RETRO_DEVICE_ID_JOYPAD_A, c"Attack"),
            (RETRO_DEVICE_ID_JOYPAD_START, c"New match (after a match)"),
        ];
        let describe = |port: u32, (id, description): (u32, &CStr)| retro_input_descriptor {
            port,
            device: RETRO_DEVICE_JOYPAD,
            index: 0,
            id,
            description: description.as_ptr(),
        };
        let end = retro_input_descriptor {
            port: 0,
            device: 0,
            index: 0,
            id: 0,
            description: std::ptr::null(),
        };
        let mut descriptors = [end; 2 * BUTTONS.len() + 1];
        for (slot, (port, button)) in descriptors
            .iter_mut()
            .zip((0..2).flat_map(|port| BUTTONS.map(|b| (port, b))))
        {
            *slot = describe(port, button);
        }
        // SAFETY: SET_INPUT_DESCRIPTORS takes an array of
        // `struct retro_input_descriptor` ended by a null description, with
        // static strings; frontends copy it during the call.
        unsafe {
            self.environment(
                RETRO_ENVIRONMENT_SET_INPUT_DESCRIPTORS,
                descriptors.as_ptr().cast_mut().cast(),
            );
        }
    }

    /// Announces the system RAM as the core's one memory region
    /// (SET_MEMORY_MAPS). Returns whether the frontend accepted it.
    pub fn announce_memory_map(&self, system_ram: *mut c_void) -> bool {
        let descriptor = retro_memory_descriptor {
            flags: u64::from(RETRO_MEMDESC_SYSTEM_RAM),
            ptr: system_ram,
            offset: 0,
            start: 0,
            select: 0,
            disconnect: 0,
            len: STATE_SIZE,
            addrspace: std::ptr::null(),
        };
        let map = retro_memory_map {
            descriptors: &descriptor,
            num_descriptors: 1,
        };
        // SAFETY: SET_MEMORY_MAPS takes a `const struct retro_memory_map *`;
        // the descriptor's `ptr` is the process-lifetime system RAM.
        unsafe {
            self.environment(
                RETRO_ENVIRONMENT_SET_MEMORY_MAPS,
                (&map as *const retro_memory_map).cast_mut().cast(),
            )
        }
    }

    /// Whether `video_refresh(NULL, ..)` may repeat the last frame.
    pub fn can_dupe(&self) -> bool {
        let mut can = false;
        // SAFETY: GET_CAN_DUPE takes a `bool *`.
        let ok = unsafe {
            self.environment(
                RETRO_ENVIRONMENT_GET_CAN_DUPE,
                (&mut can as *mut bool).cast(),
            )
        };
        ok && can
    }

    /// Whether `input_state` answers RETRO_DEVICE_ID_JOYPAD_MASK queries.
    pub fn supports_input_bitmasks(&self) -> bool {
        let mut supported = false;
        // SAFETY: GET_INPUT_BITMASKS takes a `bool *`. Some frontends only
        // answer through the return value, so that is what counts.
        unsafe {
            self.environment(
                RETRO_ENVIRONMENT_GET_INPUT_BITMASKS,
                (&mut supported as *mut bool).cast(),
            )
        }
    }

    /// False only when the frontend said it discards video this frame
    /// (GET_AUDIO_VIDEO_ENABLE bit 0 clear).
    pub fn wants_video(&self) -> bool {
        let mut flags: i32 = 0;
        // SAFETY: GET_AUDIO_VIDEO_ENABLE takes an `int *`.
        let ok = unsafe {
            self.environment(
                RETRO_ENVIRONMENT_GET_AUDIO_VIDEO_ENABLE,
                (&mut flags as *mut i32).cast(),
            )
        };
        !ok || flags & 1 != 0
    }

    pub fn poll_input(&self) {
        if let Some(poll) = self.input_poll {
            // SAFETY: `retro_input_poll_t` takes no arguments.
            unsafe { poll() };
        }
    }

    /// The RetroPad buttons held on `port` as a bitmask (bit n = joypad id
    /// n), only the `wanted` bits; nothing held without an input callback.
    pub fn read_pad(&self, port: u32, bitmasks: bool, wanted: u16) -> u16 {
        let Some(input_state) = self.input_state else {
            return 0;
        };
        if bitmasks {
            // SAFETY: a plain call with integer arguments.
            let mask =
                unsafe { input_state(port, RETRO_DEVICE_JOYPAD, 0, RETRO_DEVICE_ID_JOYPAD_MASK) };
            return mask as u16 & wanted;
        }
        let mut held = 0u16;
        for id in 0..16u32 {
            if wanted & (1 << id) != 0 {
                // SAFETY: a plain call with integer arguments.
                let down = unsafe { input_state(port, RETRO_DEVICE_JOYPAD, 0, id) };
                if down != 0 {
                    held |= 1 << id;
                }
            }
        }
        held
    }

    /// Hands a whole frame of interleaved stereo samples to the batch
    /// callback (repeating while it accepts part of them), or sample by
    /// sample if only the single-sample callback exists.
    pub fn play_audio(&self, samples: &[i16]) {
        let frames = samples.len() / 2;
        if let Some(batch) = self.audio_sample_batch {
            let mut done = 0;
            // Bounded: a frontend that keeps accepting 0 frames is given up on.
            for _ in 0..8 {
                if done >= frames {
                    break;
                }
                let rest = &samples[done * 2..frames * 2];
                // SAFETY: `rest` holds `frames - done` interleaved stereo
                // frames, valid for the call.
                let accepted = unsafe { batch(rest.as_ptr(), frames - done) };
                if accepted == 0 {
                    break;
                }
                done += accepted.min(frames - done);
            }
        } else if let Some(single) = self.audio_sample {
            for lr in samples.chunks_exact(2) {
                // SAFETY: a plain call with two samples.
                unsafe { single(lr[0], lr[1]) };
            }
        }
    }

    /// Shows `frame`, or repeats the previous one when `frame` is None.
    pub fn show_video(&self, frame: Option<&Framebuffer>) {
        let Some(refresh) = self.video_refresh else {
            return;
        };
        let data = frame.map_or(std::ptr::null(), |fb| fb.as_ptr().cast::<c_void>());
        // SAFETY: `data` is null (a dupe, only sent when GET_CAN_DUPE said
        // yes) or `HEIGHT` rows of `PITCH` bytes, valid for the call.
        unsafe { refresh(data, WIDTH as c_uint, HEIGHT as c_uint, PITCH) };
    }
}
