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

/// coturn on 127.0.0.1 with one static long-term user, its database in a
/// temporary directory, relaying to loopback peers (which a real relay
/// must refuse: see docs/ice.md).
pub struct Coturn {
    /// Where it listens (UDP).
    pub address: std::net::SocketAddr,
    /// The long-term credentials it accepts.
    pub username: &'static str,
    pub password: &'static str,
    _process: ServerProcess,
    _dir: tempfile::TempDir,
}

/// Starts coturn, or `None` (see [`server_program`]) when it is missing.
/// coturn does not report a port it picked, so the port is one the system
/// just gave out as free; the server is ready once it answers a STUN
/// binding request.
pub fn start_coturn() -> Option<Coturn> {
    let program = server_program("turnserver")?;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .and_then(|socket| socket.local_addr())
        .expect("a free UDP port")
        .port();
    let (username, password) = ("netcade", "test-only-secret");
    let log = std::fs::File::create(dir.path().join("turnserver.log")).expect("a log file");
    let child = std::process::Command::new(program)
        .args([
            "-n",
            "--listening-ip",
            "127.0.0.1",
            "--relay-ip",
            "127.0.0.1",
        ])
        .args(["--listening-port", &port.to_string()])
        .args([
            "--allow-loopback-peers",
            "--lt-cred-mech",
            "--realm",
            "netcade",
        ])
        .args(["--user", &format!("{username}:{password}")])
        .arg("--userdb")
        .arg(dir.path().join("turndb.sqlite"))
        .arg("--pidfile")
        .arg(dir.path().join("turnserver.pid"))
        .args(["--no-cli", "--no-tls", "--no-dtls", "--log-file", "stdout"])
        .stdout(log.try_clone().expect("the log file"))
        .stderr(log)
        .spawn()
        .expect("turnserver starts");
    let process = ServerProcess { child };
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    assert!(
        answers_stun(address),
        "coturn did not answer on {address} within 10 s (log: {})",
        dir.path().join("turnserver.log").display()
    );
    Some(Coturn {
        address,
        username,
        password,
        _process: process,
        _dir: dir,
    })
}

/// Asks `server` for a STUN binding until it answers (at most ~10 s).
fn answers_stun(server: std::net::SocketAddr) -> bool {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").expect("a client socket");
    socket
        .set_read_timeout(Some(std::time::Duration::from_millis(100)))
        .expect("a read timeout");
    // A binding request: type 1, no attributes, the magic cookie, an id.
    let mut request = vec![0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xA4, 0x42];
    request.extend_from_slice(b"netcade-test");
    let mut answer = [0u8; 512];
    (0..100).any(|_| {
        socket.send_to(&request, server).is_ok()
            && matches!(socket.recv_from(&mut answer), Ok((length, _)) if length >= 20 && answer[0] == 0x01)
    })
}
