//! Tells the tests whether the real cores and ROMs of
//! `scripts/fetch-test-content` are there (`cfg(netcade_test_content)`):
//! tests that need them are ignored without them, so a plain `cargo test`
//! counts them as ignored rather than passed, and runs them once they are.
//! Likewise for the servers some netplay tests start on loopback
//! (`cfg(netcade_server_turnserver)`, `…_nats_server`, `…_matchbox_server`
//! when the program is on `PATH`).

use std::path::{Path, PathBuf};

fn main() {
    detect_test_content();
    detect_servers();
}

/// The servers tests start on loopback, found on `PATH` (as
/// `tests/support/servers.rs` finds them).
fn detect_servers() {
    println!("cargo:rerun-if-env-changed=PATH");
    let path = std::env::var_os("PATH").unwrap_or_default();
    for program in ["turnserver", "nats-server", "matchbox_server", "retroarch"] {
        let cfg = format!("netcade_server_{}", program.replace('-', "_"));
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        if std::env::split_paths(&path).any(|dir| dir.join(program).is_file()) {
            println!("cargo:rustc-cfg={cfg}");
        }
    }
}

/// The same rule as `scripts/fetch-test-content` and `tests/support/content.rs`:
/// `$NETCADE_TEST_CONTENT`, else `${XDG_CACHE_HOME:-$HOME/.cache}/netcade/test-content`.
fn detect_test_content() {
    println!("cargo::rustc-check-cfg=cfg(netcade_test_content)");
    for variable in ["NETCADE_TEST_CONTENT", "XDG_CACHE_HOME", "HOME"] {
        println!("cargo:rerun-if-env-changed={variable}");
    }
    let Some(dir) = content_dir() else { return };
    // Watch the nearest folder that exists, so fetching the content later
    // (which creates or fills it) makes cargo look again. Cargo scans a
    // watched folder recursively, so never climb above the cache folder.
    let watchable = |path: &&Path| path.parent().is_some() && path.is_dir();
    if let Some(existing) = dir.ancestors().take(3).find(watchable) {
        println!("cargo:rerun-if-changed={}", existing.display());
    }
    let cores = dir.join("cores");
    if cores.is_dir() {
        println!("cargo:rerun-if-changed={}", cores.display());
        println!("cargo:rustc-cfg=netcade_test_content");
    }
}

fn content_dir() -> Option<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    if let Some(dir) = non_empty("NETCADE_TEST_CONTENT") {
        return Some(PathBuf::from(dir));
    }
    let cache = non_empty("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| non_empty("HOME").map(|home| Path::new(&home).join(".cache")))?;
    Some(cache.join("netcade").join("test-content"))
}
