//! The core's one global instance and its system RAM.
//!
//! libretro calls carry no context pointer, so the loaded game has to be
//! global. It is confined to this module: a `Mutex` reached only through
//! [`with_instance`]. The system RAM is a separate static array of atomics so
//! its address is stable for the whole process, the frontend may read (or
//! write) it between calls through the pointer it was given, and
//! `retro_get_memory_*` need no lock.

use super::frontend::Frontend;
use super::game::LoadedGame;
use crate::layout::STATE_SIZE;
use crate::state::StateBytes;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Mutex, TryLockError};

/// Everything the core knows between calls.
pub struct Instance {
    pub frontend: Frontend,
    pub game: Option<LoadedGame>,
}

static INSTANCE: Mutex<Instance> = Mutex::new(Instance {
    frontend: Frontend::new(),
    game: None,
});

/// Runs `f` on the instance. Returns None (and runs nothing) when called
/// re-entrantly, i.e. by the frontend from inside one of its callbacks while
/// another entry point holds the instance: answering "failed" beats a
/// deadlock. A panic caught earlier does not poison the instance for good:
/// every operation leaves it in a usable state between statements.
pub fn with_instance<R>(f: impl FnOnce(&mut Instance) -> R) -> Option<R> {
    match INSTANCE.try_lock() {
        Ok(mut guard) => Some(f(&mut guard)),
        Err(TryLockError::Poisoned(poisoned)) => {
            INSTANCE.clear_poison();
            let mut guard = poisoned.into_inner();
            Some(f(&mut guard))
        }
        Err(TryLockError::WouldBlock) => None,
    }
}

/// The RAM the frontend sees: a copy of the encoded state, refreshed after
/// every `retro_run`, `retro_reset` and `retro_unserialize`. Writes by the
/// frontend land here but do not change the game (the next refresh
/// overwrites them).
static SYSTEM_RAM: [AtomicU8; STATE_SIZE] = [const { AtomicU8::new(0) }; STATE_SIZE];
/// Whether a game is loaded, i.e. whether `SYSTEM_RAM` is meaningful.
static SYSTEM_RAM_LIVE: AtomicBool = AtomicBool::new(false);

pub fn publish_system_ram(bytes: &StateBytes) {
    for (cell, byte) in SYSTEM_RAM.iter().zip(bytes) {
        cell.store(*byte, Ordering::Relaxed);
    }
}

pub fn set_system_ram_live(live: bool) {
    if !live {
        publish_system_ram(&[0; STATE_SIZE]);
    }
    SYSTEM_RAM_LIVE.store(live, Ordering::Release);
}

/// Stable address of the system RAM (valid for the process's lifetime).
pub fn system_ram_address() -> *mut c_void {
    // AtomicU8 has the layout of u8 and lives in an UnsafeCell, so the
    // frontend may read and write these bytes through a raw pointer.
    SYSTEM_RAM.as_ptr().cast::<c_void>().cast_mut()
}

/// The system RAM's address while a game is loaded.
pub fn live_system_ram() -> Option<*mut c_void> {
    SYSTEM_RAM_LIVE
        .load(Ordering::Acquire)
        .then(system_ram_address)
}

/// Copy of the system RAM as the frontend sees it.
pub fn system_ram_snapshot() -> StateBytes {
    let mut out = [0u8; STATE_SIZE];
    for (byte, cell) in out.iter_mut().zip(&SYSTEM_RAM) {
        *byte = cell.load(Ordering::Relaxed);
    }
    out
}
