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
    let mut command = Command::new(env!("CARGO_BIN_EXE_netcade"));
    command.env("NETCADE_DUEL_CORE", super::duel_core());
    finish(command, args, stdin)
}

/// Runs `netcade ARGS` in `dir` as a user would type it: nothing tells it
/// where the Duel core is, so `--core duel` finds it by itself.
pub fn netcade_as_user(dir: &Path, args: &[&str], stdin: &str) -> Output {
    netcade_binary_as_user(Path::new(env!("CARGO_BIN_EXE_netcade")), dir, args, stdin)
}

/// Runs a netcade executable (the built one, or a copy of it) like
/// [`netcade_as_user`].
pub fn netcade_binary_as_user(binary: &Path, dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut command = Command::new(binary);
    command.current_dir(dir).env_remove("NETCADE_DUEL_CORE");
    finish(command, args, stdin)
}

fn finish(mut command: Command, args: &[&str], stdin: &str) -> Output {
    let mut child = command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the netcade binary runs");
    let mut input = child.stdin.take().expect("stdin is piped");
    input
        .write_all(stdin.as_bytes())
        .expect("netcade reads its stdin");
    drop(input);
    child.wait_with_output().expect("netcade ends")
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
