//! coturn on loopback for the ICE tests (its own file, so the servers'
//! shared helpers stay as they are).

use super::servers::{server_program, ServerProcess};

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
