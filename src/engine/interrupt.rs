//! What an interrupt does to a command. Ctrl-C, SIGTERM and SIGHUP (a
//! closed terminal, `kill`) are one interrupt: a live match takes it as a
//! flag and leaves cleanly, the peer told ([`on_interrupt`]); any other
//! command exits at once ([`exit_on_interrupt`]). Either way the command
//! ends with [`EXIT_INTERRUPTED`].

use crate::engine::error::EXIT_INTERRUPTED;
use std::path::PathBuf;
use std::sync::{Mutex, Once};

/// Directories to remove when an interrupt exits the process.
static REMOVE_ON_INTERRUPT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Makes an interrupt call `handler` instead of ending the process (the
/// handler is the process's: install it once). Without one, `without`
/// says what an interrupt costs.
pub(crate) fn on_interrupt(handler: impl FnMut() + Send + 'static, without: &str) {
    if let Err(error) = ctrlc::set_handler(handler) {
        tracing::warn!("no handler for Ctrl-C, SIGTERM and SIGHUP ({error}): {without}");
    }
}

/// Makes an interrupt remove the directories registered with
/// [`remove_on_interrupt`] and exit with [`EXIT_INTERRUPTED`] (once per
/// process; later calls do nothing).
pub fn exit_on_interrupt() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        on_interrupt(
            || {
                for dir in registered().iter() {
                    let _ = std::fs::remove_dir_all(dir);
                }
                std::process::exit(i32::from(EXIT_INTERRUPTED));
            },
            "an interrupted command may leave temporary files behind",
        );
    });
}

/// Removes `dir` if an interrupt exits the process (see
/// [`exit_on_interrupt`]) until [`keep_on_interrupt`] says otherwise.
pub fn remove_on_interrupt(dir: PathBuf) {
    registered().push(dir);
}

/// No longer removes `dir` on an interrupt (it is gone already).
pub fn keep_on_interrupt(dir: &PathBuf) {
    registered().retain(|registered| registered != dir);
}

fn registered() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    REMOVE_ON_INTERRUPT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
