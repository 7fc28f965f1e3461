//! Running the real `netcade` binary from an integration test, as users and
//! scripts do, and reading what it printed.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `netcade ARGS` with nothing on stdin. `demo` finds the Duel core
/// cargo built for this test run.
pub fn netcade(args: &[&str]) -> Output {
    netcade_with_stdin(args, "")
}

/// Runs `netcade ARGS` with `stdin` as its standard input.
pub fn netcade_with_stdin(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_netcade"))
        .args(args)
        .env("NETCADE_DUEL_CORE", super::duel_core())
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
