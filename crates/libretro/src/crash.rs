//! The report printed when a core crashes the process (SIGSEGV, SIGFPE, …).
//!
//! Cores crash inside their own code when handed content for another system
//! (snes9x, melonDS and Beetle Saturn do). A fatal-signal handler then names
//! the core, the content and what netcade was asking of the core, suggests
//! the likely cause and exits with [`CORE_CRASHED_EXIT_CODE`].
//!
//! The handler may only do async-signal-safe things, so everything it prints
//! is prepared beforehand: each [`Core`](super::Core) owns a [`CrashScene`]
//! with its texts formatted at load time (in a mapping of its own, read-only
//! once written, so a core that corrupts the heap cannot garble them), and
//! marks it as the scene of the current thread around every call into the
//! core ([`InCore`]). Per call that
//! costs a thread-local store and a few atomic stores. A signal on a thread
//! that never called into a core is blamed on the core called last (cores
//! run renderer and audio threads of their own); one on a thread that drives
//! cores but is not inside a call goes to the handler that was there before
//! (Rust's stack-overflow report, or the default action).

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};

/// The exit code of a process whose core crashed.
pub const CORE_CRASHED_EXIT_CODE: u8 = 4;

/// The signals reported; each is fatal by default.
const FATAL_SIGNALS: [c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGABRT,
];

/// Room for the handler on the alternate stack, which is what lets a stack
/// overflow (a fault on the exhausted stack itself) be reported.
const ALTERNATE_STACK_BYTES: usize = 64 * 1024;

/// What netcade is asking of the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    /// `retro_init` and the calls around it.
    Starting = 0,
    LoadingContent = 1,
    /// `retro_run`; the scene's frame is the 1-based number of this call.
    RunningFrame = 2,
    SavingState = 3,
    LoadingState = 4,
    Resetting = 5,
    Unloading = 6,
}

impl Phase {
    fn from_u8(value: u8) -> Phase {
        match value {
            1 => Phase::LoadingContent,
            2 => Phase::RunningFrame,
            3 => Phase::SavingState,
            4 => Phase::LoadingState,
            5 => Phase::Resetting,
            6 => Phase::Unloading,
            _ => Phase::Starting,
        }
    }

    /// The likely cause, as a line of its own.
    fn hint(self) -> &'static [u8] {
        match self {
            Phase::Starting => {
                b"hint: the core failed in its own start-up, before any content; the core file \
                  may be damaged or built for another machine\n"
            }
            Phase::LoadingContent => {
                b"hint: cores crash like this when given a file for another system or a \
                  damaged file; check that the content is a game for this core\n"
            }
            Phase::RunningFrame => {
                b"hint: in the first frames this usually means the content is for another \
                  system, or a BIOS file the core needs is missing from the system directory; \
                  later it is a bug in the core\n"
            }
            Phase::SavingState | Phase::LoadingState => {
                b"hint: the core's savestate code crashed; a state from another version of \
                  the core, or a core whose savestates are broken, does this\n"
            }
            Phase::Resetting | Phase::Unloading => {
                b"hint: this is a bug in the core, not something the content can fix\n"
            }
        }
    }
}

/// The most bytes of each text the report prints; longer ones are cut.
const CORE_TEXT_BYTES: usize = 4096;
const EXTENSIONS_TEXT_BYTES: usize = 1024;
const CONTENT_TEXT_BYTES: usize = 4096;

/// A text of at most `N` bytes kept in place, with its length beside it.
#[repr(C)]
struct Text<const N: usize> {
    len: usize,
    bytes: [u8; N],
}

impl<const N: usize> Text<N> {
    fn get(&self) -> &[u8] {
        &self.bytes[..self.len.min(N)]
    }

    /// Holds `text`, or its first bytes and `...` if it is longer than `N`.
    fn set(&mut self, text: &[u8]) {
        const CUT: &[u8] = b"...";
        let len = if text.len() <= N {
            self.bytes[..text.len()].copy_from_slice(text);
            text.len()
        } else {
            let kept = N - CUT.len();
            self.bytes[..kept].copy_from_slice(&text[..kept]);
            self.bytes[kept..].copy_from_slice(CUT);
            N
        };
        self.len = len;
    }
}

/// The texts of a report, on pages that are read-only once written.
#[repr(C)]
struct Texts {
    /// `core NAME (PATH)`, or `core PATH` before the core said its name.
    core: Text<CORE_TEXT_BYTES>,
    /// `the core takes .a .b files`, or empty.
    extensions: Text<EXTENSIONS_TEXT_BYTES>,
    /// The content's path, or empty.
    content: Text<CONTENT_TEXT_BYTES>,
}

/// What changes while the core runs, on a page of its own before the texts.
#[repr(C)]
struct Progress {
    phase: AtomicU8,
    frame: AtomicU64,
    /// Where the texts begin in the mapping (a page size), set once.
    texts_offset: AtomicUsize,
}

/// A scene's mapping: a page of [`Progress`], then the pages of [`Texts`].
/// The address is all a report needs, so the signal handler is handed it
/// and reads nothing on the heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mapped(std::ptr::NonNull<u8>);

impl Mapped {
    fn progress(&self) -> &Progress {
        // SAFETY: a `Mapped` is only made from a live scene's mapping (and
        // the handler only sees those of live scenes, cleared before they
        // are unmapped), whose first page is readable and writable,
        // page-aligned, and holds a `Progress` (all atomics, valid at 0).
        unsafe { &*self.0.as_ptr().cast::<Progress>() }
    }

    fn texts_start(&self) -> *mut u8 {
        self.0
            .as_ptr()
            .wrapping_add(self.progress().texts_offset.load(Ordering::Relaxed))
    }

    fn texts(&self) -> &Texts {
        // SAFETY: as in `progress`; the pages from `texts_offset` on hold a
        // `Texts` (integers and bytes, zero at first), readable while the
        // scene lives and written only in `CrashScene::edit_texts`, which
        // takes `&mut` of the owning scene.
        unsafe { &*self.texts_start().cast::<Texts>() }
    }
}

/// Everything the crash report says about one loaded core, prepared before
/// any call into it. It lives in a memory mapping of its own rather than
/// on the heap, its texts on pages made read-only once written: a core
/// that corrupts the heap (a state it trusted, a bug) can neither free
/// nor overwrite what its crash report prints.
#[derive(Debug)]
pub struct CrashScene {
    mapped: Mapped,
    /// The mapping's length in bytes.
    len: usize,
}

// SAFETY: the mapping is owned by the scene alone; its progress is atomics
// and its texts are changed only through `&mut self`.
unsafe impl Send for CrashScene {}
// SAFETY: as above: through `&self` only atomics are written.
unsafe impl Sync for CrashScene {}

impl CrashScene {
    /// The scene of the core file `core_path`, starting up; an error if
    /// the system gives no memory to map.
    pub fn new(core_path: &std::path::Path) -> std::io::Result<CrashScene> {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
            .ok()
            .filter(|&page| page >= std::mem::size_of::<Progress>())
            .unwrap_or(4096);
        let len = page + std::mem::size_of::<Texts>().div_ceil(page) * page;
        // SAFETY: an anonymous private mapping at an address the kernel
        // picks touches no existing memory; the result is checked.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let base = std::ptr::NonNull::new(base.cast::<u8>())
            .ok_or_else(|| std::io::Error::other("mmap gave a null mapping"))?;
        // A fresh anonymous mapping is zeroed: phase `Starting`, frame 0,
        // every text empty.
        let mut scene = CrashScene {
            mapped: Mapped(base),
            len,
        };
        scene
            .mapped
            .progress()
            .texts_offset
            .store(page, Ordering::Relaxed);
        scene.edit_texts(|texts| {
            texts
                .core
                .set(format!("core {}", core_path.display()).as_bytes())
        });
        Ok(scene)
    }

    /// Makes the text pages writable for `edit`, then read-only again.
    fn edit_texts(&mut self, edit: impl FnOnce(&mut Texts)) {
        let texts = self.mapped.texts_start();
        let texts_len = self.len - self.mapped.progress().texts_offset.load(Ordering::Relaxed);
        // SAFETY: `texts..texts + texts_len` is whole pages of this scene's
        // own mapping; `&mut self` makes this the only access to them while
        // they are writable. If a protection change fails the pages stay
        // as they were: writable (a weaker report, never a wrong one) or
        // read-only, in which case nothing is written.
        unsafe {
            if libc::mprotect(texts.cast(), texts_len, libc::PROT_READ | libc::PROT_WRITE) != 0 {
                return;
            }
            edit(&mut *texts.cast::<Texts>());
            libc::mprotect(texts.cast(), texts_len, libc::PROT_READ);
        }
    }

    /// Names the core once it said who it is and what files it takes.
    pub fn describe_core(&mut self, name: &str, path: &std::path::Path, extensions: &[String]) {
        let core = format!("core {name} ({})", path.display());
        let extensions = if extensions.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = extensions.iter().map(|ext| format!(".{ext}")).collect();
            format!("the core takes {} files", list.join(" "))
        };
        self.edit_texts(|texts| {
            texts.core.set(core.as_bytes());
            texts.extensions.set(extensions.as_bytes());
        });
    }

    pub fn describe_content(&mut self, content: Option<&std::path::Path>) {
        let content = content.map_or(String::new(), |path| path.display().to_string());
        self.edit_texts(|texts| texts.content.set(content.as_bytes()));
    }

    /// Records what the next calls into the core are for; `frame` is the
    /// frame being run, or the frames run so far for the other phases.
    pub fn set_phase(&self, phase: Phase, frame: u64) {
        let progress = self.mapped.progress();
        progress.frame.store(frame, Ordering::Relaxed);
        progress.phase.store(phase as u8, Ordering::Relaxed);
    }

    /// Writes the report of a crash by `cause` (a signal's description)
    /// through `write`, without allocating. `in_call` says whether it came
    /// from the thread calling into the core, rather than from a thread of
    /// the core's own.
    #[cfg(test)]
    fn report(&self, cause: &[u8], in_call: bool, write: &mut dyn FnMut(&[u8])) {
        self.mapped.report(cause, in_call, write)
    }
}

impl Mapped {
    /// Writes the report of a crash by `cause` (a signal's description)
    /// through `write`, without allocating. `in_call` says whether it came
    /// from the thread calling into the core, rather than from a thread of
    /// the core's own.
    fn report(&self, cause: &[u8], in_call: bool, write: &mut dyn FnMut(&[u8])) {
        let progress = self.progress();
        let phase = Phase::from_u8(progress.phase.load(Ordering::Relaxed));
        let frame = progress.frame.load(Ordering::Relaxed);
        let texts = self.texts();
        let (core, extensions, content) = (
            texts.core.get(),
            texts.extensions.get(),
            texts.content.get(),
        );
        let mut digits = [0u8; 20];
        write(b"error: ");
        write(core);
        write(b" crashed with ");
        write(cause);
        write(if in_call {
            b" while "
        } else {
            b" on a thread of its own while netcade was "
        });
        match phase {
            Phase::Starting => write(b"starting up"),
            Phase::LoadingContent => {
                write(b"loading the content ");
                write(content);
                if !extensions.is_empty() {
                    write(b" (");
                    write(extensions);
                    write(b")");
                }
            }
            Phase::RunningFrame => {
                write(b"running frame ");
                write(decimal(frame, &mut digits));
            }
            Phase::SavingState | Phase::LoadingState => {
                let what: &[u8] = if phase == Phase::SavingState {
                    b"saving a state"
                } else {
                    b"loading a state"
                };
                write(what);
                if frame == 0 {
                    write(b" before the first frame");
                } else {
                    write(b" after frame ");
                    write(decimal(frame, &mut digits));
                }
            }
            Phase::Resetting => write(b"resetting"),
            Phase::Unloading => write(b"shutting down"),
        }
        if phase != Phase::LoadingContent && !content.is_empty() {
            write(b" (content ");
            write(content);
            if !extensions.is_empty() {
                write(b"; ");
                write(extensions);
            }
            write(b")");
        }
        write(b"\n");
        write(phase.hint());
    }
}

fn signal_description(signal: c_int) -> &'static [u8] {
    match signal {
        libc::SIGSEGV => b"SIGSEGV (an invalid memory access or a stack overflow)",
        libc::SIGBUS => b"SIGBUS (a misaligned or unbacked memory access)",
        libc::SIGFPE => b"SIGFPE (an arithmetic fault such as a division by zero)",
        libc::SIGILL => b"SIGILL (an illegal instruction)",
        libc::SIGABRT => b"SIGABRT (the core aborted itself)",
        _ => b"a fatal signal",
    }
}

/// `value` in decimal, written into the end of `digits`.
fn decimal(mut value: u64, digits: &mut [u8; 20]) -> &[u8] {
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            return &digits[start..];
        }
    }
}

impl Drop for CrashScene {
    fn drop(&mut self) {
        let this = self.mapped.0.as_ptr();
        // Neither this thread's scene nor the latest may outlive it: a
        // report must never read freed texts.
        let _ = CURRENT.try_with(|current| {
            if std::ptr::eq(current.get(), this.cast_const()) {
                current.set(std::ptr::null());
            }
        });
        let _ = LATEST.compare_exchange(
            this,
            std::ptr::null_mut(),
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        // SAFETY: the mapping was made in `new` with this length and is
        // unmapped once, here; no report can reach it any more (above).
        unsafe {
            libc::munmap(self.mapped.0.as_ptr().cast(), self.len);
        }
    }
}

/// The scene of the core whose call started last on any thread, for a
/// signal on a thread of a core's own (a renderer, an audio thread), which
/// never entered a call. Cleared when that scene is dropped.
static LATEST: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());

thread_local! {
    /// The scene of the core this thread is calling into, or null.
    static CURRENT: Cell<*const u8> = const { Cell::new(std::ptr::null()) };
    /// Whether this thread drives cores (it loaded one): a signal here
    /// outside a call is netcade's own, never a core thread's.
    static DRIVES_CORES: Cell<bool> = const { Cell::new(false) };
}

/// Marks a scene as this thread's until dropped (calls may nest).
pub struct InCore {
    previous: *const u8,
}

impl InCore {
    /// `scene` must outlive the guard.
    pub fn enter(scene: &CrashScene) -> InCore {
        let mapped = scene.mapped.0.as_ptr();
        LATEST.store(mapped, Ordering::Release);
        let previous = CURRENT.with(|current| current.replace(mapped.cast_const()));
        InCore { previous }
    }
}

impl Drop for InCore {
    fn drop(&mut self) {
        CURRENT.with(|current| current.set(self.previous));
    }
}

/// The handlers that were installed before ours, one per [`FATAL_SIGNALS`].
static PREVIOUS: [OnceLock<libc::sigaction>; FATAL_SIGNALS.len()] =
    [const { OnceLock::new() }; FATAL_SIGNALS.len()];

/// Installs the fatal-signal handler (once per process) and gives the
/// calling thread an alternate signal stack if it has none. Called by
/// [`Core::load`](super::Core::load) on the thread that will drive the core.
pub fn install() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        for (index, &signal) in FATAL_SIGNALS.iter().enumerate() {
            // SAFETY: a zeroed sigaction is a valid "default" value; the
            // fields set below make it ours. `sigemptyset` and `sigaction`
            // get valid pointers to locals.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_fatal_signal as *const () as libc::sighandler_t;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                let mut previous: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, &action, &mut previous) == 0 {
                    let _ = PREVIOUS[index].set(previous);
                }
            }
        }
    });
    DRIVES_CORES.with(|drives| drives.set(true));
    ensure_alternate_stack();
}

fn ensure_alternate_stack() {
    thread_local! {
        static HAS_STACK: Cell<bool> = const { Cell::new(false) };
    }
    if HAS_STACK.with(Cell::get) {
        return;
    }
    // SAFETY: `sigaltstack` reads and writes `stack_t` values owned here. The
    // memory given to the kernel is leaked, so it stays valid for as long as
    // the thread may use it (a few per process: one per core-driving thread).
    unsafe {
        let mut current: libc::stack_t = std::mem::zeroed();
        if libc::sigaltstack(std::ptr::null(), &mut current) == 0
            && current.ss_flags & libc::SS_DISABLE == 0
        {
            // Rust's runtime gave this thread one already.
            HAS_STACK.with(|has| has.set(true));
            return;
        }
        let size = ALTERNATE_STACK_BYTES.max(libc::SIGSTKSZ);
        let memory = Box::leak(vec![0u8; size].into_boxed_slice());
        let stack = libc::stack_t {
            ss_sp: memory.as_mut_ptr().cast::<c_void>(),
            ss_flags: 0,
            ss_size: size,
        };
        if libc::sigaltstack(&stack, std::ptr::null_mut()) == 0 {
            HAS_STACK.with(|has| has.set(true));
        }
    }
}

/// Writes all of `bytes` to stderr with write(2), giving up on an error.
fn write_stderr(bytes: &[u8]) {
    write_fd(2, bytes);
}

/// Writes all of `bytes` to file descriptor `fd` with write(2), giving up
/// on an error.
fn write_fd(fd: c_int, bytes: &[u8]) {
    let mut rest = bytes;
    while !rest.is_empty() {
        // SAFETY: `rest` is a live byte slice of the given length.
        let written = unsafe { libc::write(fd, rest.as_ptr().cast::<c_void>(), rest.len()) };
        if written <= 0 {
            return;
        }
        rest = &rest[written as usize..];
    }
}

/// The start of the JSON line a command given `--json` ends stdout with if
/// its core crashes (the signal and the exit code follow), prepared
/// beforehand as the handler may not format.
static CRASH_JSON: OnceLock<Box<[u8]>> = OnceLock::new();

/// Makes a crash of the core end stdout with a JSON line for `command`:
/// `{"command": …, "end": "core_crashed", "exit_code": 4, "error": "…"}`
/// (the error names the signal; stderr has the whole report).
pub fn end_with_json_on_crash(command: &str) {
    let start = format!(
        "{{\"command\":{},\"end\":\"core_crashed\",\"exit_code\":{CORE_CRASHED_EXIT_CODE},\"error\":\"the core crashed with ",
        serde_json::Value::from(command)
    );
    let _ = CRASH_JSON.set(start.into_bytes().into());
}

/// The JSON line of [`end_with_json_on_crash`], if asked for, to stdout;
/// `cause` is already escaped for a JSON string.
fn write_crash_json(cause: &[u8]) {
    if let Some(start) = CRASH_JSON.get() {
        write_fd(1, b"\n");
        write_fd(1, start);
        write_fd(1, cause);
        write_fd(1, b"\"}\n");
    }
}

/// A C++ exception escaped a call into the core that has no way to fail (a
/// frame, a reset, its start-up): the core is in no state to go on, so this
/// is reported as its crash, and the process ends as for a signal. `what`
/// is what the exception said, or empty.
pub fn exception_escaped(scene: &CrashScene, what: &str) -> ! {
    let cause = if what.is_empty() {
        "a C++ exception".to_string()
    } else {
        format!("a C++ exception ({what})")
    };
    let quoted = serde_json::Value::from(cause.as_str()).to_string();
    report_and_exit(
        scene.mapped,
        cause.as_bytes(),
        &quoted.as_bytes()[1..quoted.len() - 1],
        true,
    )
}

/// Writes the crash report of `scene` for `cause` (and `json_cause`, the
/// same escaped for a JSON string, on the `--json` line) and ends the
/// process with [`CORE_CRASHED_EXIT_CODE`]; async-signal-safe, as the
/// signal handler needs.
fn report_and_exit(scene: Mapped, cause: &[u8], json_cause: &[u8], in_call: bool) -> ! {
    scene.report(cause, in_call, &mut write_stderr);
    write_crash_json(json_cause);
    // SAFETY: _exit is async-signal-safe and ends the process at once;
    // nothing runs the broken core's code again (its unload, its static
    // destructors).
    unsafe { libc::_exit(c_int::from(CORE_CRASHED_EXIT_CODE)) }
}

extern "C" fn on_fatal_signal(signal: c_int, info: *mut libc::siginfo_t, _context: *mut c_void) {
    // Nothing below panics (no allocation, no locks, no formatting
    // machinery, as a signal handler requires); the guard only keeps an
    // unwind from ever crossing into the kernel's frame.
    let _ = std::panic::catch_unwind(|| report_or_pass_on(signal, info));
}

fn report_or_pass_on(signal: c_int, info: *mut libc::siginfo_t) {
    let current = CURRENT.try_with(Cell::get).unwrap_or(std::ptr::null());
    let drives_cores = DRIVES_CORES.try_with(Cell::get).unwrap_or(false);
    let (scene, in_call) = if !current.is_null() {
        (current, true)
    } else if drives_cores {
        (std::ptr::null(), false)
    } else {
        (LATEST.load(Ordering::Acquire).cast_const(), false)
    };
    // The current scene belongs to a core whose call is in progress on
    // this thread (the signal is delivered to the thread that faulted), so
    // the `Core` owning it is alive; the latest scene is cleared before its
    // `Core` unmaps it.
    if let Some(scene) = std::ptr::NonNull::new(scene.cast_mut()).map(Mapped) {
        // A signal's description is plain ASCII: safe in a JSON string.
        let cause = signal_description(signal);
        report_and_exit(scene, cause, cause, in_call);
    }
    pass_to_previous_handler(signal, info);
}

/// Not a core's crash: restores the handler that was there before and lets
/// the signal reach it.
fn pass_to_previous_handler(signal: c_int, info: *mut libc::siginfo_t) {
    let previous = FATAL_SIGNALS
        .iter()
        .position(|&fatal| fatal == signal)
        .and_then(|index| PREVIOUS[index].get());
    // SAFETY: restores a sigaction the kernel gave us (or the default),
    // then re-raises; all async-signal-safe.
    unsafe {
        match previous {
            Some(previous) => libc::sigaction(signal, previous, std::ptr::null_mut()),
            None => {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(signal, &default, std::ptr::null_mut())
            }
        };
        // A fault caused by an instruction happens again when the handler
        // returns, now reaching the restored handler; a signal that was sent
        // (kill, raise, abort) has to be sent again.
        let sent = info.is_null() || (*info).si_code <= 0;
        if sent {
            libc::raise(signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn report_of(scene: &CrashScene, signal: c_int) -> String {
        let mut out = Vec::new();
        scene.report(signal_description(signal), true, &mut |bytes| {
            out.extend_from_slice(bytes)
        });
        String::from_utf8(out).unwrap()
    }

    fn described_scene() -> CrashScene {
        let mut scene = CrashScene::new(Path::new("/cores/snes9x_libretro.so")).unwrap();
        scene.describe_core(
            "Snes9x",
            Path::new("/cores/snes9x_libretro.so"),
            &["smc".to_string(), "sfc".to_string()],
        );
        scene.describe_content(Some(Path::new("/roms/sonic.md")));
        scene
    }

    #[test]
    fn numbers_are_written_in_decimal_without_allocating() {
        let mut digits = [0u8; 20];
        assert_eq!(decimal(0, &mut digits), b"0");
        assert_eq!(decimal(1234, &mut digits), b"1234");
        assert_eq!(
            decimal(u64::MAX, &mut digits),
            u64::MAX.to_string().as_bytes()
        );
    }

    #[test]
    fn a_crash_while_loading_names_core_content_signal_and_what_the_core_takes() {
        let scene = described_scene();
        scene.set_phase(Phase::LoadingContent, 0);
        let report = report_of(&scene, libc::SIGFPE);
        assert_eq!(
            report.lines().next().unwrap(),
            "error: core Snes9x (/cores/snes9x_libretro.so) crashed with SIGFPE (an arithmetic \
             fault such as a division by zero) while loading the content /roms/sonic.md (the \
             core takes .smc .sfc files)"
        );
        assert!(report.lines().nth(1).unwrap().starts_with("hint: "));
        assert!(report.contains("another system"), "{report}");
    }

    #[test]
    fn a_crash_in_a_frame_names_the_frame_and_the_content() {
        let scene = described_scene();
        scene.set_phase(Phase::RunningFrame, 57);
        let report = report_of(&scene, libc::SIGSEGV);
        assert!(
            report.contains("SIGSEGV")
                && report.contains(
                    "while running frame 57 (content /roms/sonic.md; the core takes .smc .sfc files)"
                ),
            "{report}"
        );
    }

    #[test]
    fn a_crash_in_a_savestate_call_says_which_and_when() {
        let scene = described_scene();
        scene.set_phase(Phase::SavingState, 0);
        assert!(report_of(&scene, libc::SIGSEGV)
            .contains("while saving a state before the first frame"));
        scene.set_phase(Phase::LoadingState, 9);
        let report = report_of(&scene, libc::SIGBUS);
        assert!(
            report.contains("while loading a state after frame 9"),
            "{report}"
        );
        assert!(report.contains("savestate"), "{report}");
    }

    #[test]
    fn before_the_core_says_its_name_the_report_names_its_file() {
        let scene = CrashScene::new(Path::new("/cores/broken_libretro.so")).unwrap();
        let report = report_of(&scene, libc::SIGILL);
        assert!(
            report.starts_with("error: core /cores/broken_libretro.so crashed with SIGILL")
                && report.contains("while starting up"),
            "{report}"
        );
    }

    #[test]
    fn a_crash_on_a_thread_of_the_cores_own_says_so() {
        let scene = described_scene();
        scene.set_phase(Phase::RunningFrame, 4);
        let mut out = Vec::new();
        scene.report(signal_description(libc::SIGSEGV), false, &mut |bytes| {
            out.extend_from_slice(bytes)
        });
        let report = String::from_utf8(out).unwrap();
        assert!(
            report.contains("on a thread of its own while netcade was running frame 4"),
            "{report}"
        );
    }

    #[test]
    fn the_scene_is_this_threads_only_while_inside_a_call() {
        let scene = described_scene();
        assert!(CURRENT.with(Cell::get).is_null());
        {
            let _inside = InCore::enter(&scene);
            assert_eq!(
                CURRENT.with(Cell::get),
                scene.mapped.0.as_ptr().cast_const()
            );
        }
        assert!(CURRENT.with(Cell::get).is_null());
    }

    /// The permissions (`r--p`, …) of the mapping that holds `address`, as
    /// /proc/self/maps lists them, and its name (`[heap]`, or empty).
    fn mapping_of(address: usize) -> (String, String) {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        maps.lines()
            .find_map(|line| {
                let mut fields = line.split_whitespace();
                let (start, end) = fields.next()?.split_once('-')?;
                let range =
                    usize::from_str_radix(start, 16).ok()?..usize::from_str_radix(end, 16).ok()?;
                let permissions = fields.next()?.to_string();
                let name = fields.nth(3).unwrap_or("").to_string();
                range.contains(&address).then_some((permissions, name))
            })
            .expect("a mapping holds the address")
    }

    #[test]
    fn what_the_report_prints_is_off_the_heap_and_read_only_once_written() {
        let scene = described_scene();
        for text in [
            scene.mapped.texts().core.get(),
            scene.mapped.texts().extensions.get(),
            scene.mapped.texts().content.get(),
        ] {
            let (permissions, name) = mapping_of(text.as_ptr() as usize);
            assert!(permissions.starts_with("r--"), "{permissions} {name}");
            assert_ne!(name, "[heap]");
        }
        // Its progress stays writable, beside the texts but not among them.
        let progress = scene.mapped.progress() as *const Progress as usize;
        assert!(mapping_of(progress).0.starts_with("rw-"));
        scene.set_phase(Phase::RunningFrame, 3);
        assert!(report_of(&scene, libc::SIGSEGV).contains("while running frame 3"));
    }

    #[test]
    fn texts_longer_than_their_room_are_cut_and_marked() {
        let mut scene = described_scene();
        let long = "d/".repeat(CONTENT_TEXT_BYTES);
        scene.describe_content(Some(Path::new(&long)));
        let content = scene.mapped.texts().content.get();
        assert_eq!(content.len(), CONTENT_TEXT_BYTES);
        assert!(content.ends_with(b"d/d..."));
        scene.describe_content(None);
        assert!(scene.mapped.texts().content.get().is_empty());
    }
}
