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

/// The TCP port process `pid` listens on, read from `/proc` (Linux): for
/// servers told to bind port 0 that do not print the port they got.
/// Waits up to `timeout` for the socket to appear.
pub fn listening_tcp_port(pid: u32, timeout: std::time::Duration) -> Option<u16> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if let Some(port) = listening_port_now(pid) {
            return Some(port);
        }
        if std::time::Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn listening_port_now(pid: u32) -> Option<u16> {
    // The process's sockets, by inode: its fds link to `socket:[INODE]`.
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()?
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .filter_map(|target| {
            let target = target.to_string_lossy().into_owned();
            let inode = target.strip_prefix("socket:[")?.strip_suffix(']')?;
            Some(inode.to_string())
        })
        .collect();
    const LISTEN: &str = "0A";
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .find_map(|table| {
            let text = std::fs::read_to_string(table).ok()?;
            text.lines().skip(1).find_map(|line| {
                // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
                let fields: Vec<&str> = line.split_whitespace().collect();
                let (local, state, inode) = (fields.get(1)?, fields.get(3)?, fields.get(9)?);
                if *state != LISTEN || !inodes.iter().any(|ours| ours == inode) {
                    return None;
                }
                u16::from_str_radix(local.rsplit(':').next()?, 16).ok()
            })
        })
}

/// A `nats-server` with JetStream the test started on a free loopback
/// port (read from its log), storing in the test's folder.
pub struct NatsServer {
    pub process: ServerProcess,
    pub port: u16,
}

impl NatsServer {
    /// `nats://127.0.0.1:PORT`, with `user:password@` when given.
    pub fn url(&self, credentials: Option<&str>) -> String {
        match credentials {
            Some(credentials) => format!("nats://{credentials}@127.0.0.1:{}", self.port),
            None => format!("nats://127.0.0.1:{}", self.port),
        }
    }
}

/// Starts `nats-server` with JetStream in `dir` (its config file sets
/// port -1, so the server picks a free port and logs it), `extra` added
/// to the configuration (e.g. an `authorization` block); `None` when the
/// program is missing (see [`server_program`]).
pub fn start_nats(dir: &std::path::Path, extra: &str) -> Option<NatsServer> {
    let program = server_program("nats-server")?;
    let config = dir.join("nats.conf");
    let log = dir.join("nats.log");
    let store = dir.join("jetstream");
    std::fs::write(
        &config,
        format!(
            "listen: \"127.0.0.1:-1\"\njetstream {{ store_dir: {:?} }}\n{extra}\n",
            store.display().to_string()
        ),
    )
    .unwrap();
    let child = std::process::Command::new(program)
        .arg("-c")
        .arg(&config)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("nats-server starts");
    let process = ServerProcess { child };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let port = text
            .lines()
            .find_map(|line| line.split("Listening for client connections on ").nth(1))
            .and_then(|address| address.trim().rsplit(':').next()?.parse().ok());
        if let Some(port) = port {
            return Some(NatsServer { process, port });
        }
        assert!(
            std::time::Instant::now() < deadline,
            "nats-server did not say its port: {text}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A matchbox_server on 127.0.0.1 (port 0, read back from /proc) and its
/// `ws://` URL, or `None` (the test is skipped) when the program is not on
/// PATH.
pub fn signaling_server() -> Option<(ServerProcess, String)> {
    let program = server_program("matchbox_server")?;
    let child = std::process::Command::new(program)
        .arg("127.0.0.1:0")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("matchbox_server starts");
    let server = ServerProcess { child };
    let port = listening_tcp_port(server.child.id(), std::time::Duration::from_secs(120))
        .expect("matchbox_server listens");
    Some((server, format!("ws://127.0.0.1:{port}")))
}

/// A headless RetroArch hosting a netplay match, started by a test on a
/// free port: its config has null drivers and nothing that reaches past
/// loopback (no lobby announce, relay server or NAT traversal); its log
/// is `retroarch.log` in the test's folder.
pub struct RetroArchHost {
    pub process: ServerProcess,
    pub port: u16,
    pub log: PathBuf,
}

impl RetroArchHost {
    /// What RetroArch has logged so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Its log once it holds `text`, or as it is after `timeout`.
    pub fn log_once_it_says(&self, text: &str, timeout: std::time::Duration) -> String {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let log = self.log_text();
            if log.contains(text) || std::time::Instant::now() > deadline {
                return log;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// A port free on loopback now (bound, read back and released).
pub fn free_tcp_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind port 0");
    listener.local_addr().unwrap().port()
}

/// Starts `retroarch` in `dir` hosting `rom` on `core` for `max_frames`
/// frames, with the config lines `extra` added (a password, …); `None`
/// when the program is missing (see [`server_program`]).
pub fn start_retroarch_host(
    dir: &std::path::Path,
    core: &std::path::Path,
    rom: &std::path::Path,
    max_frames: u32,
    extra: &str,
) -> Option<RetroArchHost> {
    let port = free_tcp_port();
    let netplay = ["--host".to_string(), "--port".into(), port.to_string()];
    let process = start_retroarch(dir, core, rom, max_frames, extra, &netplay)?;
    listening_tcp_port(process.child.id(), std::time::Duration::from_secs(30))
        .expect("retroarch hosts: see retroarch.log");
    Some(RetroArchHost {
        process,
        port,
        log: dir.join("retroarch.log"),
    })
}

/// Starts `retroarch` in `dir` joining the netplay host on loopback `port`
/// with `rom` on `core` for `max_frames` frames (its log is
/// `retroarch.log` in `dir`, as [`RetroArchHost`]'s).
pub fn start_retroarch_client(
    dir: &std::path::Path,
    core: &std::path::Path,
    rom: &std::path::Path,
    port: u16,
    max_frames: u32,
    extra: &str,
) -> Option<RetroArchHost> {
    let netplay = [
        "--connect".to_string(),
        "127.0.0.1".into(),
        "--port".into(),
        port.to_string(),
    ];
    let process = start_retroarch(dir, core, rom, max_frames, extra, &netplay)?;
    Some(RetroArchHost {
        process,
        port,
        log: dir.join("retroarch.log"),
    })
}

/// Starts `retroarch` in `dir` with `netplay`'s arguments (`--host …` or
/// `--connect …`): null drivers, nothing past loopback, its config and
/// caches in `dir`.
fn start_retroarch(
    dir: &std::path::Path,
    core: &std::path::Path,
    rom: &std::path::Path,
    max_frames: u32,
    extra: &str,
    netplay: &[String],
) -> Option<ServerProcess> {
    let program = server_program("retroarch")?;
    // RetroArch finds a core's info (whether it can play netplay) only for
    // cores in its core folder: a link to the test's core goes there.
    let cores = dir.join("cores");
    std::fs::create_dir_all(&cores).unwrap();
    let linked = cores.join(core.file_name().unwrap());
    let _ = std::fs::remove_file(&linked);
    std::os::unix::fs::symlink(core, &linked).unwrap();
    let config = dir.join("retroarch.cfg");
    let line = |key: &str, value: &str| format!("{key} = \"{value}\"\n");
    let mut text = String::new();
    for (key, value) in [
        ("config_save_on_exit", "false"),
        ("video_driver", "null"),
        ("audio_driver", "null"),
        ("audio_enable", "false"),
        ("input_driver", "null"),
        ("input_joypad_driver", "null"),
        ("menu_driver", "null"),
        ("netplay_public_announce", "false"),
        ("netplay_use_mitm_server", "false"),
        ("netplay_nat_traversal", "false"),
        ("netplay_check_frames", "30"),
        ("netplay_nickname", "rahost"),
        ("network_cmd_enable", "false"),
        ("discord_allow", "false"),
        ("cheevos_enable", "false"),
        // Paced at the core's frame rate (null video has no vsync).
        ("vrr_runloop_enable", "true"),
        ("libretro_info_path", "/usr/share/libretro/info"),
    ] {
        text.push_str(&line(key, value));
    }
    for (key, folder) in [
        ("libretro_directory", "cores"),
        ("savefile_directory", "saves"),
        ("savestate_directory", "states"),
        ("system_directory", "system"),
    ] {
        text.push_str(&line(key, &dir.join(folder).display().to_string()));
    }
    text.push_str(extra);
    std::fs::write(&config, text).unwrap();
    let log = dir.join("retroarch.log");
    let child = std::process::Command::new(program)
        .current_dir(dir)
        // Its config and caches stay in the test's folder.
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir)
        // Its GameMode client aborts without a D-Bus session otherwise.
        .env("DBUS_FATAL_WARNINGS", "0")
        .arg("--config")
        .arg(&config)
        .arg("-L")
        .arg(&linked)
        .arg(rom)
        .args(netplay)
        .args(["--max-frames", &max_frames.to_string(), "--verbose"])
        .stdout(std::process::Stdio::null())
        // RetroArch logs to stderr.
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("retroarch starts");
    Some(ServerProcess { child })
}
