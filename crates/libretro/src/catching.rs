//! Calls into a core through `catch_shim.cpp`, which stops a C++ exception
//! at the core's edge: Rust cannot catch one, and one that unwound into
//! netcade's frames would end the process with the core unloaded under it.

use std::ffi::{c_char, c_int, c_void, CStr};

extern "C" {
    /// Defined in `catch_shim.cpp`; never unwinds.
    fn netcade_call_catching(
        body: unsafe extern "C-unwind" fn(*mut c_void),
        context: *mut c_void,
        message: *mut c_char,
        capacity: usize,
    ) -> c_int;
}

/// A C++ exception that escaped a call into the core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreException {
    /// What it said (a `std::exception`'s `what()`), or empty.
    pub what: String,
}

/// The longest `what()` kept, in bytes.
const MESSAGE_BYTES: usize = 256;

/// Runs `body`, which calls into a core, and gives its result, or the
/// exception that escaped the core.
pub fn catching<R, F: FnOnce() -> R>(body: F) -> Result<R, CoreException> {
    struct Call<F, R> {
        body: Option<F>,
        result: Option<R>,
    }

    /// # Safety
    /// `context` points to the `Call<F, R>` that `catching` passes.
    unsafe extern "C-unwind" fn trampoline<F: FnOnce() -> R, R>(context: *mut c_void) {
        // SAFETY: per the function's contract; nothing else borrows it
        // during the call.
        let call = unsafe { &mut *context.cast::<Call<F, R>>() };
        if let Some(body) = call.body.take() {
            call.result = Some(body());
        }
    }

    let mut call = Call {
        body: Some(body),
        result: None,
    };
    let mut message = [0 as c_char; MESSAGE_BYTES];
    // SAFETY: the trampoline gets the `Call` it expects, alive for the
    // whole call; the shim writes at most `message.len()` bytes, NUL
    // included.
    let threw = unsafe {
        netcade_call_catching(
            trampoline::<F, R>,
            std::ptr::from_mut(&mut call).cast::<c_void>(),
            message.as_mut_ptr(),
            message.len(),
        )
    };
    match call.result {
        Some(result) if threw == 0 => Ok(result),
        _ => {
            // SAFETY: the shim leaves a NUL-terminated string in `message`.
            let what = unsafe { CStr::from_ptr(message.as_ptr()) };
            Err(CoreException {
                what: what.to_string_lossy().into_owned(),
            })
        }
    }
}
