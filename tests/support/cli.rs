//! Running the real `netcade` binary from an integration test, as users and
//! scripts do, and reading what it printed.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `netcade ARGS` with nothing on stdin. `demo` and `--core duel` find
/// the Duel core cargo built for this test run.
pub fn netcade(args: &[&str]) -> Output {
    netcade_with_stdin(args, "")
}

/// Runs `netcade ARGS` with `stdin` as its standard input.
pub fn netcade_with_stdin(args: &[&str], stdin: &str) -> Output {
    let mut command = Command::new(super::netcade_binary());
    command.env("NETCADE_DUEL_CORE", super::duel_core());
    finish(command, args, stdin)
}

/// Runs `netcade ARGS` in `dir` as a user would type it: nothing tells it
/// where the Duel core is, so `--core duel` finds it by itself.
pub fn netcade_as_user(dir: &Path, args: &[&str], stdin: &str) -> Output {
    netcade_binary_as_user(super::netcade_binary().as_path(), dir, args, stdin)
}

/// Runs a netcade executable (the built one, or a copy of it) like
/// [`netcade_as_user`].
pub fn netcade_binary_as_user(binary: &Path, dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut command = Command::new(binary);
    command.current_dir(dir).env_remove("NETCADE_DUEL_CORE");
    finish(command, args, stdin)
}

/// Runs `netcade ARGS` in `dir` with the variables `env` set (a home of
/// its own, `XDG_DATA_HOME`, …); the Duel core is found as by [`netcade`].
pub fn netcade_in_with_env(dir: &Path, env: &[(&str, &Path)], args: &[&str]) -> Output {
    let mut command = Command::new(super::netcade_binary());
    command
        .current_dir(dir)
        .env("NETCADE_DUEL_CORE", super::duel_core());
    for (name, value) in env {
        command.env(name, value);
    }
    finish(command, args, "")
}

/// Where the tests' `host` and `join` keep the replays they record, rather
/// than the user's data directory.
pub fn test_replay_dir() -> std::path::PathBuf {
    super::target_tmp_dir().join("replays")
}

/// Gives a netcade the tests start a data directory and a config folder of
/// the test run's own (unless the test chose them): its rejoin tickets,
/// match saves and recent lists stay out of the user's, and its server
/// list names no public STUN server. And none asks a router for a port
/// mapping (a `upnp` or `natpmp` build would ask the real network's),
/// unless the test chose to (the NAT lab's, whose router is the lab's).
fn keep_out_of_the_users_data_and_network(command: &mut Command) {
    let chosen = |command: &Command, wanted: &str| {
        command
            .get_envs()
            .any(|(name, value)| name == wanted && value.is_some())
    };
    if !chosen(command, "NETCADE_NO_PORT_MAPPING") {
        command.env("NETCADE_NO_PORT_MAPPING", "1");
    }
    if !chosen(command, "XDG_DATA_HOME") {
        command.env("XDG_DATA_HOME", super::target_tmp_dir().join("data"));
    }
    if !chosen(command, "NETCADE_CONFIG_DIR") {
        command.env("NETCADE_CONFIG_DIR", loopback_config_dir());
    }
}

/// A config folder whose server list names no STUN server or relay (the
/// defaults are public ones) and a signaling server on loopback where
/// nothing listens: a test that gives none of its own reaches nothing
/// beyond this machine.
fn loopback_config_dir() -> std::path::PathBuf {
    const LIST: &str = "signal ws://127.0.0.1:9\n";
    let dir = super::target_tmp_dir().join("config-loopback");
    let list = dir.join("servers.txt");
    if std::fs::read_to_string(&list).ok().as_deref() != Some(LIST) {
        std::fs::create_dir_all(&dir).expect("cannot create the tests' config folder");
        // Written whole under a name of its own first: tests start in
        // parallel, in several processes and threads.
        let writer = format!("{}-{:?}", std::process::id(), std::thread::current().id());
        let partial = dir.join(format!("servers.txt.{writer}"));
        std::fs::write(&partial, LIST).expect("cannot write servers.txt");
        if std::fs::rename(&partial, &list).is_err() && !list.exists() {
            panic!("cannot place {}", list.display());
        }
    }
    dir
}

fn finish(mut command: Command, args: &[&str], stdin: &str) -> Output {
    keep_out_of_the_users_data_and_network(&mut command);
    command
        .env("NETCADE_REPLAY_DIR", test_replay_dir())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = spawn_copy_safely(&mut command);
    let mut input = child.stdin.take().expect("stdin is piped");
    input
        .write_all(stdin.as_bytes())
        .expect("netcade reads its stdin");
    drop(input);
    child.wait_with_output().expect("netcade ends")
}

/// Spawns `command`. A test that has just copied an executable can meet
/// "text file busy": another test thread forked while the copy's write
/// handle was open, and the child holds it until its own exec. The window
/// is short, so try again a few times.
fn spawn_copy_safely(command: &mut Command) -> std::process::Child {
    for _ in 0..50 {
        match command.spawn() {
            Err(error) if error.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            spawned => return spawned.expect("the netcade binary runs"),
        }
    }
    command.spawn().expect("the netcade binary runs")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The JSON object `--json` puts on the last line of stdout.
pub fn last_json(output: &Output) -> serde_json::Value {
    let text = stdout(output);
    let last = text.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|err| panic!("{err}: {output:?}"))
}

/// A `netcade` started in the background, its output read as it comes.
pub struct Background {
    child: std::process::Child,
    stdout: std::sync::Arc<std::sync::Mutex<String>>,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

/// Starts `netcade ARGS` in the background (finding Duel as [`netcade`] does).
pub fn spawn_netcade(args: &[&str]) -> Background {
    spawn_netcade_with_env(args, &[])
}

/// [`spawn_netcade`] with environment variables set for it.
pub fn spawn_netcade_with_env(args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Background {
    spawn_netcade_by(Command::new(super::netcade_binary()), args, env)
}

/// [`spawn_netcade_with_env`] inside the network namespace `ns` (as root).
pub fn spawn_netcade_in_netns(
    ns: &str,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> Background {
    let mut command = Command::new("ip");
    command
        .args(["netns", "exec", ns])
        .arg(super::netcade_binary());
    spawn_netcade_by(command, args, env)
}

fn spawn_netcade_by(
    mut command: Command,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> Background {
    command
        .env("NETCADE_DUEL_CORE", super::duel_core())
        .env("NETCADE_REPLAY_DIR", test_replay_dir())
        .envs(env.iter().copied());
    keep_out_of_the_users_data_and_network(&mut command);
    let mut child = command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the netcade binary runs");
    let stdout = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let readers = vec![
        drain(child.stdout.take().expect("piped"), stdout.clone()),
        drain(child.stderr.take().expect("piped"), stderr.clone()),
    ];
    Background {
        child,
        stdout,
        stderr,
        readers,
    }
}

fn drain(
    mut from: impl std::io::Read + Send + 'static,
    into: std::sync::Arc<std::sync::Mutex<String>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        while let Ok(read) = from.read(&mut buffer) {
            if read == 0 {
                break;
            }
            into.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buffer[..read]));
        }
    })
}

impl Background {
    /// Everything printed on stdout so far.
    pub fn stdout_so_far(&self) -> String {
        self.stdout.lock().unwrap().clone()
    }

    /// Waits until stdout contains `text` (panics after `timeout`, killing it).
    pub fn wait_for_stdout(&mut self, text: &str, timeout: std::time::Duration) {
        let stdout = self.stdout.clone();
        self.wait_for(&stdout, text, timeout);
    }

    /// Waits until stderr contains `text` (panics after `timeout`, killing it).
    pub fn wait_for_stderr(&mut self, text: &str, timeout: std::time::Duration) {
        let stderr = self.stderr.clone();
        self.wait_for(&stderr, text, timeout);
    }

    fn wait_for(
        &mut self,
        output: &std::sync::Mutex<String>,
        text: &str,
        timeout: std::time::Duration,
    ) {
        let deadline = std::time::Instant::now() + timeout;
        while !output.lock().unwrap().contains(text) {
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "netcade did not print {text:?} within {timeout:?}; stdout: {}\nstderr: {}",
                    self.stdout_so_far(),
                    self.stderr.lock().unwrap()
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Sends it SIGINT, as Ctrl-C in its terminal would.
    pub fn interrupt(&mut self) {
        let status = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -INT failed");
    }

    /// Sends it `signal` (`TERM`, `HUP`…), as `kill -SIGNAL` would.
    pub fn signal(&mut self, signal: &str) {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{signal} failed");
    }

    /// Kills it at once (SIGKILL on Unix: no chance to say goodbye).
    pub fn kill(&mut self) {
        self.child.kill().expect("the child can be killed");
        let _ = self.child.wait();
    }

    /// Waits for it to end and returns what it printed; kills it and
    /// panics if it runs past `timeout`.
    pub fn finish(self, timeout: std::time::Duration) -> Output {
        self.finish_within(timeout)
            .unwrap_or_else(|printed| panic!("netcade still ran after {timeout:?}; {printed}"))
    }

    /// Waits for it to end and returns what it printed, or kills it when
    /// it runs past `timeout` and returns what it had printed.
    pub fn finish_within(mut self, timeout: std::time::Duration) -> Result<Output, String> {
        let deadline = std::time::Instant::now() + timeout;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("waiting works") {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return Err(format!(
                    "stdout: {}\nstderr: {}",
                    self.stdout_so_far(),
                    self.stderr.lock().unwrap()
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        for reader in self.readers.drain(..) {
            let _ = reader.join();
        }
        let take = |text: &std::sync::Arc<std::sync::Mutex<String>>| {
            std::mem::take(&mut *text.lock().unwrap()).into_bytes()
        };
        Ok(Output {
            status,
            stdout: take(&self.stdout),
            stderr: take(&self.stderr),
        })
    }
}

/// Starts `netcade host` on a free port (`--port 0`, read back from its
/// `--port-file` in `dir`); returns it and the port.
pub fn spawn_host(dir: &Path, args: &[&str], timeout: std::time::Duration) -> (Background, u16) {
    spawn_host_with_env(dir, args, &[], timeout)
}

/// [`spawn_host`] with environment variables set for it.
pub fn spawn_host_with_env(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
    timeout: std::time::Duration,
) -> (Background, u16) {
    let port_file = dir.join("port");
    let port_file_arg = port_file.display().to_string();
    let mut all = vec!["host", "--port", "0", "--port-file", &port_file_arg];
    all.extend_from_slice(args);
    let host = spawn_netcade_with_env(&all, env);
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if let Ok(text) = std::fs::read_to_string(&port_file) {
            if let Ok(port) = text.trim().parse::<u16>() {
                return (host, port);
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the host never wrote its port"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Records `frames` frames of Duel in the arena `arena` (`"dojo"`,
/// `"moon"`) played by `inputs` into `dir/name`; returns the replay's path.
pub fn record_duel(
    dir: &Path,
    name: &str,
    arena: &str,
    frames: u32,
    inputs: &str,
) -> std::path::PathBuf {
    let path = dir.join(name);
    let arena = super::duel_arena(arena).display().to_string();
    let (path_text, frames) = (path.display().to_string(), frames.to_string());
    let recorded = netcade(&[
        "run", "--core", "duel", "--rom", &arena, "--frames", &frames, "--inputs", inputs,
        "--record", &path_text,
    ]);
    assert!(recorded.status.success(), "{recorded:?}");
    path
}

/// A command line netcade must refuse, and how: its exit code, its one
/// `error:` line, what stderr must and must not mention, and what it
/// starts with if that is checked. Tests of refusals are tables of these
/// (see [`assert_refusals`]).
#[derive(Clone, Debug)]
pub struct Refusal {
    pub args: Vec<String>,
    pub code: i32,
    pub starts: Option<String>,
    pub mentions: Vec<String>,
    pub lacks: Vec<String>,
    /// Whether stderr is its `starts` text alone.
    pub alone: bool,
    /// Whether the mentions are all in the `error:` line.
    pub in_error_line: bool,
}

/// `netcade ARGS` refused with exit code `code` and an `error:` line that
/// mentions `message`.
pub fn refusal(args: &[&str], message: &str, code: i32) -> Refusal {
    Refusal {
        args: args.iter().map(|arg| arg.to_string()).collect(),
        code,
        starts: None,
        mentions: vec![message.to_string()],
        lacks: Vec::new(),
        alone: false,
        in_error_line: false,
    }
}

impl Refusal {
    /// Stderr starts with `text` (an `error: …` line's beginning): nothing
    /// is printed before it.
    pub fn starting(mut self, text: &str) -> Self {
        self.starts = Some(text.to_string());
        self
    }

    /// Stderr also mentions `text`.
    pub fn mentioning(mut self, text: &str) -> Self {
        self.mentions.push(text.to_string());
        self
    }

    /// Stderr does not mention `text`.
    pub fn not_mentioning(mut self, text: &str) -> Self {
        self.lacks.push(text.to_string());
        self
    }

    /// Stderr is its `starts` text and nothing else.
    pub fn alone(mut self) -> Self {
        self.alone = true;
        self
    }

    /// The mentions are all in the `error:` line, not elsewhere in stderr.
    pub fn in_the_error_line(mut self) -> Self {
        self.in_error_line = true;
        self
    }

    /// What is wrong with `output` as this refusal, if anything.
    fn fault(&self, output: &Output) -> Option<String> {
        let text = stderr(output);
        let mut error_lines = text.lines().filter(|l| l.starts_with("error:"));
        let error_line = error_lines.next().unwrap_or_default();
        let error_lines = usize::from(!error_line.is_empty()) + error_lines.count();
        let searched = if self.in_error_line {
            error_line
        } else {
            &text
        };
        let missing = self
            .mentions
            .iter()
            .find(|m| !searched.contains(m.as_str()));
        let present = self
            .lacks
            .iter()
            .chain(std::iter::once(&"panicked".to_string()))
            .find(|l| text.contains(l.as_str()))
            .cloned();
        let fault = if output.status.code() != Some(self.code) {
            format!(
                "exit code {:?}, expected {}",
                output.status.code(),
                self.code
            )
        } else if let Some(starts) = self.starts.as_ref().filter(|s| !text.starts_with(*s)) {
            format!("stderr does not start with {starts:?}")
        } else if self.alone && Some(text.trim_end()) != self.starts.as_deref() {
            format!("stderr is more than {:?}", self.starts)
        } else if error_lines != 1 {
            format!("{error_lines} `error:` lines, expected one")
        } else if let Some(missing) = missing {
            format!("stderr lacks {missing:?}")
        } else if let Some(present) = present {
            format!("stderr mentions {present:?}")
        } else {
            return None;
        };
        Some(format!("{:?}: {fault}; stderr: {text}", self.args))
    }
}

/// Runs every refusal (at once, each netcade a process of its own) and
/// asserts each, naming every one that failed.
pub fn assert_refusals(refusals: &[Refusal]) {
    let faults: Vec<String> = std::thread::scope(|scope| {
        let runs: Vec<_> = refusals
            .iter()
            .map(|refusal| {
                scope.spawn(move || {
                    let args: Vec<&str> = refusal.args.iter().map(String::as_str).collect();
                    refusal.fault(&netcade(&args))
                })
            })
            .collect();
        runs.into_iter()
            .filter_map(|run| run.join().expect("a refusal's run"))
            .collect()
    });
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

/// The code a `host --room` printed (`room code 7KQ-M2X: …`).
pub fn room_code(host: &mut Background) -> String {
    // The line after it: the code's line is whole by then.
    host.wait_for_stdout("hosting ", std::time::Duration::from_secs(120));
    let printed = host.stdout_so_far();
    let line = printed
        .lines()
        .find(|line| line.starts_with("room code "))
        .expect("a code");
    let code = line.split_whitespace().nth(2).expect("a code");
    code.trim_end_matches(':').to_string()
}
