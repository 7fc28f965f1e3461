//! A joiner killed mid-match and started again with `--rejoin`, as the
//! rejoin tests do it (by address or through a room).

use super::cli::{spawn_netcade_with_env, Background};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The rejoin tickets a joiner keeps under the data directory `data`.
pub fn tickets_in(data: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(data.join("netcade/rejoin"))
        .map(|entries| entries.map(|entry| entry.unwrap().path()).collect())
        .unwrap_or_default()
}

/// Starts `netcade JOIN_ARGS` with the data directory `data`, lets it play
/// for 3 s once `host` says the match began, kills it with SIGKILL
/// (nothing of it survives but the ticket it kept, which is checked), and
/// 2 s later starts it again with `--rejoin`. Returns the new process and
/// when it started.
pub fn kill_and_restart(
    host: &mut Background,
    join_args: &[&str],
    data: &Path,
    timeout: Duration,
) -> (Background, Instant) {
    let env = [("XDG_DATA_HOME", data.as_os_str())];
    let mut first = spawn_netcade_with_env(join_args, &env);
    host.wait_for_stdout("the match began", timeout);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(tickets_in(data).len(), 1, "the joiner keeps a ticket");
    first.kill();
    std::thread::sleep(Duration::from_secs(2));
    let restarted_at = Instant::now();
    let again = spawn_netcade_with_env(&[join_args, &["--rejoin"]].concat(), &env);
    (again, restarted_at)
}
