//! The per-core state the libretro callbacks write into, and the one place
//! that finds it.
//!
//! libretro callbacks carry no user pointer, so the host keeps a thread-local
//! pointer to the context of the core it is calling into. [`ActiveContext`]
//! sets it for the duration of each call into a core and restores it after;
//! every `extern "C"` callback here reads it through [`with_active`], which
//! also catches panics so none unwinds into C. A callback that arrives while
//! no call is in progress on its thread (a core calling from a thread of its
//! own) finds no context and is ignored.

use super::core::{AvInfo, InputDescriptor, MemoryDescriptor};
use super::environment;
use super::ffi::{self, RETRO_DEVICE_ID_JOYPAD_MASK, RETRO_DEVICE_JOYPAD, RETRO_DEVICE_MASK};
use super::options::OptionStore;
use netcode::emulator::{PixelFormat, SavestateContext, VideoFrame};
use netcode::input::Buttons;
use std::cell::Cell;
use std::collections::HashSet;
use std::ffi::{c_char, c_uint, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

/// RetroPad ports the host answers input for.
pub const MAX_PORTS: usize = 4;

/// Largest audio batch accepted in one callback (frames), far above what any
/// core produces per frame; a larger count is treated as a core bug.
const MAX_AUDIO_BATCH_FRAMES: usize = 1 << 20;

/// Largest picture accepted, in bytes (a 4096×4096 XRGB8888 frame).
const MAX_FRAME_BYTES: usize = 4096 * 4096 * 4;

/// The last picture a core drew, rows packed without padding.
#[derive(Debug)]
pub struct FrameBuffer {
    pub pixels: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub format: PixelFormat,
    pub present: bool,
}

impl FrameBuffer {
    fn new() -> Self {
        FrameBuffer {
            pixels: Vec::new(),
            width: 0,
            height: 0,
            format: PixelFormat::Rgb1555,
            present: false,
        }
    }

    /// Copies the visible part of `height` rows of `pitch` bytes from `source`
    /// (which holds at least `(height - 1) * pitch + width * bpp` bytes),
    /// reusing the buffer's allocation.
    pub fn store(
        &mut self,
        source: &[u8],
        width: u32,
        height: u32,
        pitch: usize,
        format: PixelFormat,
    ) {
        let row_bytes = width as usize * format.bytes_per_pixel();
        self.pixels.clear();
        for row in 0..height as usize {
            let start = row * pitch;
            self.pixels
                .extend_from_slice(&source[start..start + row_bytes]);
        }
        self.width = width;
        self.height = height;
        self.format = format;
        self.present = true;
    }

    pub fn as_video_frame(&self) -> Option<VideoFrame<'_>> {
        self.present.then(|| VideoFrame {
            width: self.width,
            height: self.height,
            pitch: self.width as usize * self.format.bytes_per_pixel(),
            format: self.format,
            pixels: &self.pixels,
        })
    }
}

/// NUL-terminated strings the host hands to the core; they live as long as
/// the context so the pointers stay valid.
#[derive(Debug)]
pub struct HostStrings {
    pub system_dir: CString,
    pub save_dir: CString,
    pub core_assets_dir: CString,
    pub libretro_path: CString,
    pub username: CString,
}

/// Everything the callbacks of one loaded core read and write.
#[derive(Debug)]
pub struct CoreContext {
    /// The core's name once known, for log lines.
    pub core_name: String,
    pub pixel_format: PixelFormat,
    pub frame: FrameBuffer,
    /// Interleaved stereo samples of the current / last `retro_run`.
    pub audio: Vec<i16>,
    pub inputs: [Buttons; MAX_PORTS],
    /// Whether the frame being run will be shown (GET_AUDIO_VIDEO_ENABLE).
    pub render_video: bool,
    /// Whether the frame being run will be heard (GET_AUDIO_VIDEO_ENABLE):
    /// not a frame run ahead.
    pub play_audio: bool,
    pub options: OptionStore,
    pub strings: HostStrings,
    pub support_no_game: bool,
    pub serialization_quirks: u64,
    pub memory_descriptors: Vec<MemoryDescriptor>,
    pub input_descriptors: Vec<InputDescriptor>,
    pub av_info: AvInfo,
    pub performance_level: u32,
    /// Environment commands already reported as unsupported.
    pub unknown_commands: HashSet<c_uint>,
    /// Set when a video_refresh could not be used, so it is reported once.
    pub bad_frame_reported: bool,
    /// Set when the core sent SHUTDOWN: it cannot go on (FBNeo does this on
    /// its first frame when a zip is not a romset it knows).
    pub shutdown_requested: bool,
    /// The first error lines the core logged (a few, each cut short): the
    /// words a core gives for content it cannot run (FBNeo: "None of those
    /// archives was found in your paths") before failing later.
    pub core_errors: Vec<String>,
    /// What the frame loop's states are for.
    pub savestate_context: SavestateContext,
    /// Whether the core is inside retro_serialize(_size) or
    /// retro_unserialize: only then is `savestate_context` the answer to
    /// GET_SAVESTATE_CONTEXT (RetroArch answers NORMAL at other times).
    pub in_savestate_call: bool,
}

impl CoreContext {
    pub fn new(options: OptionStore, strings: HostStrings) -> Self {
        CoreContext {
            core_name: String::from("(loading)"),
            pixel_format: PixelFormat::Rgb1555,
            frame: FrameBuffer::new(),
            audio: Vec::new(),
            inputs: [Buttons::NONE; MAX_PORTS],
            render_video: true,
            play_audio: true,
            options,
            strings,
            support_no_game: false,
            serialization_quirks: 0,
            memory_descriptors: Vec::new(),
            input_descriptors: Vec::new(),
            av_info: AvInfo::default(),
            performance_level: 0,
            unknown_commands: HashSet::new(),
            bad_frame_reported: false,
            shutdown_requested: false,
            core_errors: Vec::new(),
            savestate_context: SavestateContext::Normal,
            in_savestate_call: false,
        }
    }

    /// The answer to `input_state`: RetroPad buttons on ports 0–3, nothing else.
    pub fn input_state(&self, port: c_uint, device: c_uint, id: c_uint) -> i16 {
        let Some(buttons) = self.inputs.get(port as usize) else {
            return 0;
        };
        if device & RETRO_DEVICE_MASK != RETRO_DEVICE_JOYPAD {
            return 0;
        }
        if id == RETRO_DEVICE_ID_JOYPAD_MASK {
            // The bitmask is the i16 with the same bits.
            buttons.bits() as i16
        } else {
            i16::from(buttons.is_held(id))
        }
    }
}

thread_local! {
    static ACTIVE: Cell<*mut CoreContext> = const { Cell::new(std::ptr::null_mut()) };
}

/// Makes a context the active one on this thread until dropped.
pub struct ActiveContext {
    previous: *mut CoreContext,
}

impl ActiveContext {
    /// `context` must stay valid, and not be borrowed by the host, until the
    /// guard is dropped: callbacks turn it into a `&mut` while it is active.
    pub fn activate(context: *mut CoreContext) -> ActiveContext {
        let previous = ACTIVE.with(|active| active.replace(context));
        ActiveContext { previous }
    }
}

impl Drop for ActiveContext {
    fn drop(&mut self) {
        ACTIVE.with(|active| active.set(self.previous));
    }
}

static ORPHAN_CALLBACK_REPORTED: AtomicBool = AtomicBool::new(false);

/// Runs `body` on the active context, or answers `default` when there is none
/// or `body` panics. Never unwinds.
fn with_active<R: Copy>(callback: &str, default: R, body: impl FnOnce(&mut CoreContext) -> R) -> R {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let context = ACTIVE.try_with(Cell::get).unwrap_or(std::ptr::null_mut());
        if context.is_null() {
            if !ORPHAN_CALLBACK_REPORTED.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "a core called {callback} outside a call from netcade (from a thread of its own?); ignored"
                );
            }
            return default;
        }
        // SAFETY: `ActiveContext::activate` was given a pointer to a live
        // context that the host does not borrow while the core runs, and the
        // callbacks run one at a time on this thread, so this is the only
        // reference for the duration of `body`.
        let context = unsafe { &mut *context };
        body(context)
    }));
    outcome.unwrap_or_else(|_| {
        tracing::error!("netcade panicked inside the {callback} callback; answered a default");
        default
    })
}

/// Reads a C string the core passed, if any.
///
/// # Safety
/// `text` is null or points to a NUL-terminated string valid for `'a`.
pub unsafe fn c_str<'a>(text: *const c_char) -> Option<&'a CStr> {
    if text.is_null() {
        None
    } else {
        // SAFETY: non-null and NUL-terminated per the caller's contract.
        Some(unsafe { CStr::from_ptr(text) })
    }
}

pub unsafe extern "C" fn environment_callback(command: c_uint, data: *mut c_void) -> bool {
    with_active("environment", false, |context| {
        // SAFETY: `data` is what the core passed with `command`; the handler
        // reads it only as the type the libretro API defines for the command.
        unsafe { environment::handle(context, command, data) }
    })
}

pub unsafe extern "C" fn video_refresh_callback(
    data: *const c_void,
    width: c_uint,
    height: c_uint,
    pitch: usize,
) {
    with_active("video_refresh", (), |context| {
        // A NULL frame is a duplicate of the last one (GET_CAN_DUPE).
        if data.is_null() || data == ffi::RETRO_HW_FRAME_BUFFER_VALID {
            return;
        }
        let format = context.pixel_format;
        let row_bytes = width as usize * format.bytes_per_pixel();
        let usable = width > 0
            && height > 0
            && pitch >= row_bytes
            && (height as usize).saturating_mul(pitch) <= MAX_FRAME_BYTES;
        if !usable {
            if !std::mem::replace(&mut context.bad_frame_reported, true) {
                tracing::warn!(
                    core = %context.core_name,
                    "ignored a video frame of {width}x{height} with pitch {pitch}"
                );
            }
            return;
        }
        let length = (height as usize - 1) * pitch + row_bytes;
        // SAFETY: the core hands `height` rows of `pitch` bytes at `data`, the
        // last one at least `width` pixels long, valid during this call.
        let source = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), length) };
        context.frame.store(source, width, height, pitch, format);
    })
}

pub unsafe extern "C" fn audio_sample_callback(left: i16, right: i16) {
    with_active("audio_sample", (), |context| {
        context.audio.extend_from_slice(&[left, right]);
    })
}

pub unsafe extern "C" fn audio_sample_batch_callback(data: *const i16, frames: usize) -> usize {
    with_active("audio_sample_batch", frames, |context| {
        if data.is_null() || frames == 0 || frames > MAX_AUDIO_BATCH_FRAMES {
            return frames;
        }
        // SAFETY: the core hands `frames` interleaved stereo frames (two i16
        // each) at `data`, valid during this call.
        let samples = unsafe { std::slice::from_raw_parts(data, frames * 2) };
        context.audio.extend_from_slice(samples);
        frames
    })
}

pub unsafe extern "C" fn input_poll_callback() {}

pub unsafe extern "C" fn input_state_callback(
    port: c_uint,
    device: c_uint,
    _index: c_uint,
    id: c_uint,
) -> i16 {
    with_active("input_state", 0, |context| {
        context.input_state(port, device, id)
    })
}

/// A core's log line, already formatted by the C shim behind
/// [`ffi::RetroLogPrintf`]. Needs no context, so it also works from a core's
/// own threads.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string (the shim's line buffer).
#[no_mangle]
pub unsafe extern "C" fn netcade_core_log_line(level: c_uint, text: *const c_char) {
    let _ = catch_unwind(|| {
        // SAFETY: the shim passes its NUL-terminated line buffer.
        let Some(text) = (unsafe { c_str(text) }) else {
            return;
        };
        let text = text.to_string_lossy();
        let text = text.trim_end();
        #[cfg(test)]
        tests::LOGGED.with(|logged| logged.borrow_mut().push(text.to_string()));
        // One level quieter than the core says for debug and info: cores
        // log chattily at info (genesis_plus_gx on every memory query).
        match level {
            ffi::RETRO_LOG_DEBUG => tracing::trace!(target: "netcade::core", "{text}"),
            ffi::RETRO_LOG_INFO => tracing::debug!(target: "netcade::core", "{text}"),
            ffi::RETRO_LOG_WARN => tracing::warn!(target: "netcade::core", "{text}"),
            _ => {
                tracing::error!(target: "netcade::core", "{text}");
                remember_core_error(text);
            }
        }
    });
}

/// The most error lines a context keeps, and the most characters of each.
const KEPT_CORE_ERRORS: usize = 3;
const KEPT_CORE_ERROR_CHARS: usize = 200;

/// Keeps `text` in the active context's `core_errors` when the line comes
/// from the thread netcade called the core on; lines from a core's own
/// threads only go to the log.
fn remember_core_error(text: &str) {
    let context = ACTIVE.try_with(Cell::get).unwrap_or(std::ptr::null_mut());
    if context.is_null() {
        return;
    }
    // SAFETY: a non-null ACTIVE pointer is valid while its guard lives, and
    // the host does not borrow the context during a call into the core (the
    // invariant `with_active` relies on too).
    let context = unsafe { &mut *context };
    if context.core_errors.len() < KEPT_CORE_ERRORS {
        context
            .core_errors
            .push(text.chars().take(KEPT_CORE_ERROR_CHARS).collect());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    thread_local! {
        /// Lines logged on this thread, so tests can read what cores said.
        pub(super) static LOGGED: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    }

    #[test]
    fn core_log_lines_are_formatted_printf_style() {
        LOGGED.with(|logged| logged.borrow_mut().clear());
        // SAFETY: a NUL-terminated format whose conversions match the
        // arguments, as a core would pass.
        unsafe {
            ffi::netcade_core_log_printf(
                ffi::RETRO_LOG_WARN,
                c"%s located at: %d%%\n".as_ptr(),
                c"BIOS".as_ptr(),
                42 as std::ffi::c_int,
            );
            ffi::netcade_core_log_printf(ffi::RETRO_LOG_INFO, std::ptr::null());
        }
        let logged = LOGGED.with(|logged| logged.borrow().clone());
        assert_eq!(logged, ["BIOS located at: 42%"]);
    }

    fn context() -> CoreContext {
        let strings = HostStrings {
            system_dir: CString::default(),
            save_dir: CString::default(),
            core_assets_dir: CString::default(),
            libretro_path: CString::default(),
            username: CString::default(),
        };
        CoreContext::new(OptionStore::default(), strings)
    }

    #[test]
    fn joypad_queries_answer_each_ports_buttons_by_id_and_as_a_mask() {
        let mut context = context();
        context.inputs[1] = Buttons::RIGHT | Buttons::B;
        assert_eq!(context.input_state(1, RETRO_DEVICE_JOYPAD, 7), 1);
        assert_eq!(context.input_state(1, RETRO_DEVICE_JOYPAD, 6), 0);
        assert_eq!(
            context.input_state(1, RETRO_DEVICE_JOYPAD, RETRO_DEVICE_ID_JOYPAD_MASK),
            (Buttons::RIGHT | Buttons::B).bits() as i16
        );
        assert_eq!(context.input_state(0, RETRO_DEVICE_JOYPAD, 7), 0);
    }

    #[test]
    fn other_devices_and_ports_beyond_four_answer_nothing() {
        let mut context = context();
        context.inputs = [Buttons::from_bits(0xffff); MAX_PORTS];
        // RETRO_DEVICE_ANALOG = 5, RETRO_DEVICE_MOUSE = 2.
        assert_eq!(context.input_state(0, 5, 0), 0);
        assert_eq!(context.input_state(0, 2, 0), 0);
        assert_eq!(context.input_state(4, RETRO_DEVICE_JOYPAD, 0), 0);
        // A subclassed joypad (device | id << 8) still is a joypad.
        assert_eq!(context.input_state(0, RETRO_DEVICE_JOYPAD | (1 << 8), 0), 1);
    }

    #[test]
    fn all_sixteen_buttons_held_read_back_as_the_full_mask() {
        let mut context = context();
        context.inputs[0] = Buttons::from_bits(0xffff);
        let mask = context.input_state(0, RETRO_DEVICE_JOYPAD, RETRO_DEVICE_ID_JOYPAD_MASK);
        assert_eq!(mask as u16, 0xffff);
    }

    #[test]
    fn a_stored_frame_drops_the_row_padding() {
        let mut frame = FrameBuffer::new();
        // 2x2 RGB565 with a pitch of 6 bytes (2 bytes padding per row).
        let source = [1, 2, 3, 4, 0xee, 0xee, 5, 6, 7, 8];
        frame.store(&source, 2, 2, 6, PixelFormat::Rgb565);
        let video = frame.as_video_frame().unwrap();
        assert_eq!(video.pixels, &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(video.pitch, 4);
    }

    #[test]
    fn a_callback_without_an_active_context_answers_the_default() {
        // SAFETY: no core is active on this test thread; the callback must
        // notice that and not touch anything.
        let answer = unsafe { input_state_callback(0, RETRO_DEVICE_JOYPAD, 0, 0) };
        assert_eq!(answer, 0);
        // SAFETY: as above.
        let accepted =
            unsafe { environment_callback(ffi::env::GET_CAN_DUPE, std::ptr::null_mut()) };
        assert!(!accepted);
    }

    #[test]
    fn the_active_context_is_restored_when_the_guard_drops() {
        let mut outer = context();
        let mut inner = context();
        outer.inputs[0] = Buttons::A;
        let _outer = ActiveContext::activate(&mut outer);
        {
            let _inner = ActiveContext::activate(&mut inner);
            // SAFETY: `inner` is live and not borrowed while active.
            assert_eq!(
                unsafe { input_state_callback(0, RETRO_DEVICE_JOYPAD, 0, 8) },
                0
            );
        }
        // SAFETY: `outer` is live and not borrowed while active.
        assert_eq!(
            unsafe { input_state_callback(0, RETRO_DEVICE_JOYPAD, 0, 8) },
            1
        );
    }
}
