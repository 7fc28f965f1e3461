//! Running netcade itself in a child process for work that may crash,
//! hang or take a while (probing a core, measuring a game's lag, trying a
//! replay's states): the launcher's window stays responsive, and a core
//! that crashes costs the child only.

use std::path::Path;
use std::process::ExitStatus;

/// How a child failed.
#[derive(Debug)]
pub enum ChildFailure {
    /// It could not be started: the `error:` line saying why.
    NotStarted(String),
    /// It was still running at the timeout, and was killed.
    TimedOut {
        /// Its subcommand.
        command: String,
        /// The timeout.
        seconds: u64,
    },
    /// It ended with a failure: an exit code, or a signal.
    Failed {
        /// How it ended.
        status: ExitStatus,
        /// The line its stderr names its error in, if it wrote one.
        error_line: Option<String>,
    },
}

impl std::fmt::Display for ChildFailure {
    /// The child's own `error:` line, or one saying how it ended.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChildFailure::NotStarted(line) => f.write_str(line),
            ChildFailure::TimedOut { command, seconds } => {
                write!(
                    f,
                    "error: netcade {command} did not answer within {seconds} s"
                )
            }
            ChildFailure::Failed {
                error_line: Some(line),
                ..
            } => f.write_str(line),
            ChildFailure::Failed { status, .. } => write!(f, "error: {status}"),
        }
    }
}

/// Runs `program ARGS` and gives its standard output (at most
/// `max_output` bytes) once it exits successfully, or the child's own
/// `error:` line; a child past `timeout` is killed.
pub fn run_in_child(
    program: &Path,
    args: &[String],
    timeout: std::time::Duration,
    max_output: u64,
) -> Result<String, String> {
    run_child(program, args, timeout, max_output).map_err(|failure| failure.to_string())
}

/// [`run_in_child`], saying how the child failed.
pub fn run_child(
    program: &Path,
    args: &[impl AsRef<std::ffi::OsStr>],
    timeout: std::time::Duration,
    max_output: u64,
) -> Result<String, ChildFailure> {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| {
            ChildFailure::NotStarted(format!("error: cannot run {}: {err}", program.display()))
        })?;
    // Read while it runs: a child whose output fills the pipe would
    // otherwise wait for us forever.
    let pipe_reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(pipe) = pipe {
                let _ = pipe.take(max_output).read_to_string(&mut text);
            }
            text
        })
    };
    let stdout = pipe_reader(child.stdout.take().map(|pipe| Box::new(pipe) as Box<_>));
    let stderr = pipe_reader(child.stderr.take().map(|pipe| Box::new(pipe) as Box<_>));
    let started = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < timeout => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ChildFailure::TimedOut {
                    command: args
                        .first()
                        .map(|arg| arg.as_ref().to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    seconds: timeout.as_secs(),
                });
            }
        }
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    if status.success() {
        Ok(stdout)
    } else {
        Err(ChildFailure::Failed {
            status,
            error_line: first_error_line(&stderr),
        })
    }
}

/// The line a failed command's stderr names its error in (its `error:`
/// line, else its first line).
pub fn first_error_line(stderr: &str) -> Option<String> {
    let lines = || {
        stderr
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
    };
    lines()
        .find(|line| line.starts_with("error:"))
        .or_else(|| lines().next())
        .map(str::to_string)
}
