//! The existing servers some netplay tests start on loopback: `turnserver`
//! (coturn), `nats-server` and `matchbox_server`.
//!
//! Tests that need one are marked
//! `#[cfg_attr(not(netcade_server_nats_server), ignore = "needs nats-server on PATH")]`
//! (`build.rs` sets the cfg when the program is on `PATH`), so a plain
//! `cargo test` counts them as ignored, never as passed. Run anyway, they
//! call [`server_program`] and return early on `None` after a visible
//! `SKIPPED` line; with `NETCADE_REQUIRE_SERVERS=1` (set by CI) a missing
//! server fails the test instead.

use std::path::PathBuf;
use std::process::Child;

/// The program on `PATH`, or `None` after printing why the calling test is
/// skipped (a panic under `NETCADE_REQUIRE_SERVERS=1`).
pub fn server_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file());
    if found.is_none() {
        let thread = std::thread::current();
        let test = thread.name().unwrap_or("test");
        let message = format!("{program} is not on PATH (.ci/run installs it)");
        if servers_required() {
            panic!("{test}: {message} (NETCADE_REQUIRE_SERVERS=1)");
        }
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "\nSKIPPED {test}: {message}");
    }
    found
}

pub fn servers_required() -> bool {
    std::env::var("NETCADE_REQUIRE_SERVERS").as_deref() == Ok("1")
}

/// A server process the test started, killed (and reaped) when dropped, so
/// a failing test leaves nothing running.
pub struct ServerProcess {
    pub child: Child,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
