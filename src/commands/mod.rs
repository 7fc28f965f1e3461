//! The command line: one module per subcommand, each holding its clap
//! arguments (or the engine's, where code other than the command line
//! builds them too) and its `*_command` function. Nothing imports
//! `commands`: `src/main.rs` maps each subcommand to its function.

#[cfg(feature = "broadcast")]
pub mod broadcast;
pub mod debug;
pub mod demo;
pub mod host;
#[cfg(feature = "gui")]
pub mod input;
pub mod join;
pub mod latency;
#[cfg(feature = "broadcast")]
pub mod lobby;
pub mod menu;
#[cfg(not(feature = "gui"))]
mod no_window;
pub mod outputs;
#[cfg(feature = "gui")]
pub mod play;
pub mod probe_core;
pub mod replay;
pub mod run;
pub mod spectate;
pub mod synctest;

#[cfg(not(feature = "gui"))]
pub use no_window::{input, play};

use clap::{Parser, Subcommand};

/// What each exit code means, for `netcade --help`.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  success (a sync-test passed)
  1  a sync-test found a desync, the demo's machines disagreed, a host/join match desynced,
     a spectator's game differed from the host's, a replay failed --verify, or `replay diff`
     found a difference
  2  a user mistake: bad arguments, a missing or unusable core, content or input file,
     failed commands in a debug script, a busy port, a host name that does not resolve,
     a refused netplay handshake, a failed rollback pre-flight with --strict, or credentials
     a NATS server refused
  3  a failure while running: the core could not save or load a state, an output could not be
     written, the netplay host never answered, or a NATS server could not be reached
  4  the core crashed (a fatal signal inside the core; the report names the core, content and frame)
  5  the demo's netplay match did not finish (a machine left, or the simulated time limit passed)
  6  host/join: the peer was lost (silent for 5 s) or left before the match's last frame, or
     the match stalled (no frame final for 10 s although the peer was heard)
  7  replay play --verify: every checkpoint the file holds agrees, but the file is incomplete
     (cut short, damaged, or never ended), so the rest of the match was not verified
130  interrupted by Ctrl-C, SIGTERM or SIGHUP (host, join and spectate leave cleanly first:
     the peer is told and the summary printed)";

/// netcade: a libretro frontend with GGPO-style rollback netplay.
#[derive(Debug, Parser)]
#[command(version, about, after_help = EXIT_CODES)]
// Only a build with the window has a launcher to open without a subcommand.
#[cfg_attr(not(feature = "gui"), command(arg_required_else_help = true))]
pub struct Cli {
    /// More log output on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    #[command(subcommand)]
    /// What to do [default: `menu`, the launcher, in a build with the window].
    pub command: Option<Command>,
}

impl Default for Command {
    /// What `netcade` alone does: open the launcher.
    fn default() -> Self {
        Command::Menu(menu::MenuArgs::default())
    }
}

/// Runs one subcommand, writing its output to `out` (the terminal's, or
/// the launcher's result screen and the terminal both).
pub fn run_command(
    command: &Command,
    out: &mut dyn std::io::Write,
) -> Result<crate::engine::Outcome, crate::engine::AppError> {
    match command {
        Command::Run(args) => run::run_command(args, out),
        Command::Latency(args) => latency::latency_command(args, out),
        Command::Synctest(args) => synctest::synctest_command(args, out),
        Command::Debug(args) => debug::debug_command(args),
        Command::Demo(args) => demo::demo_command(args, out),
        Command::Host(args) => host::host_command(args, out),
        Command::Join(args) => join::join_command(args, out),
        Command::Replay(args) => replay::replay_command(args, out),
        Command::Play(args) => play::play_command(args, out),
        Command::Input(args) => input::input_command(args, out),
        Command::Spectate(args) => spectate::spectate_command(args, out),
        Command::Menu(args) => menu::menu_command(args, out),
        Command::ProbeCore(args) => probe_core::probe_core_command(args, out),
        #[cfg(feature = "broadcast")]
        Command::Broadcast(args) => broadcast::broadcast_command(args, out),
        #[cfg(feature = "broadcast")]
        Command::Lobby(args) => lobby::lobby_command(args, out),
    }
}

impl Command {
    /// The command as its JSON names it, when `--json` was given.
    pub fn json_name(&self) -> Option<&'static str> {
        let (name, json) = match self {
            Command::Run(args) => ("run", args.json),
            Command::Latency(args) => ("latency", args.json),
            Command::Synctest(args) => ("synctest", args.json),
            Command::Demo(args) => ("demo", args.json),
            Command::Host(args) => ("host", args.outputs.json),
            Command::Join(args) => ("join", args.outputs.json),
            Command::Spectate(args) => ("spectate", args.outputs.json),
            #[cfg(feature = "broadcast")]
            Command::Broadcast(args) => ("broadcast", args.outputs.json),
            #[cfg(feature = "broadcast")]
            Command::Lobby(args) => ("lobby", args.outputs.json),
            Command::Replay(args) => match &args.command {
                replay::ReplayCommand::Play(play) => ("replay play", play.json),
                replay::ReplayCommand::Info(info) => ("replay info", info.json),
                replay::ReplayCommand::Diff(diff) => ("replay diff", diff.json),
                replay::ReplayCommand::Inputs(_) | replay::ReplayCommand::TryStates(_) => {
                    return None
                }
            },
            Command::Debug(_)
            | Command::Play(_)
            | Command::Input(_)
            | Command::Menu(_)
            | Command::ProbeCore(_) => return None,
        };
        json.then_some(name)
    }
}

/// Readies the JSON line a command given `--json` ends with if its core
/// crashes (the crash handler cannot format one then).
pub fn end_crashes_with_json(command: &str) {
    libretro_host::end_with_json_on_crash(command);
}

/// The JSON line a command given `--json` ends with when it fails: its
/// name, `"end": "failed"`, the exit code and the error's whole chain.
pub fn failure_json(command: &str, exit_code: u8, error: &str) -> serde_json::Value {
    serde_json::json!({
        "command": command,
        "end": "failed",
        "exit_code": exit_code,
        "error": error,
    })
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a game unthrottled (or in real time); print frames, speed, overhead and checksums.
    Run(run::RunArgs),
    /// Measure a game's own input lag: the frames between reading a press
    /// and showing it, per button, and the run-ahead that hides it.
    Latency(latency::LatencyArgs),
    /// GGPO's sync test: after every frame go back D frames, re-simulate, compare.
    Synctest(synctest::SyncTestArgs),
    /// Frame-step debugger reading commands from stdin (type `help`).
    Debug(debug::DebugArgs),
    /// A netplay match of the bundled Duel core in this process: a host and a
    /// joiner over loopback UDP in real time, with a spectator joining
    /// mid-match, checked in sync (--simulated: two machines over a
    /// simulated network in simulated time, far faster than real time).
    Demo(demo::DemoArgs),
    /// Host a netplay match of 2–4 players over UDP and wait for them to join.
    Host(host::HostArgs),
    /// Join a netplay match hosted at HOST:PORT.
    Join(join::JoinArgs),
    /// Replays: play (verify, seek), info, inputs, diff.
    Replay(replay::ReplayArgs),
    /// Play a game in a window, alone or two on one keyboard (P pauses,
    /// `.` steps, `,` steps back, F1 overlay, F12 screenshot).
    #[cfg_attr(not(feature = "gui"), command(hide = true))]
    Play(play::PlayArgs),
    /// Print the input mapping and its config file; --test shows what you press.
    #[cfg_attr(not(feature = "gui"), command(hide = true))]
    Input(input::InputArgs),
    /// Watch the netplay match hosted at HOST:PORT live, from any moment
    /// (or a broadcast one at nats://SERVER/MATCH, with feature `broadcast`).
    Spectate(spectate::SpectateArgs),
    /// The launcher: pick a game, play, host, join or watch in the window
    /// (what `netcade` alone opens).
    #[cfg_attr(not(feature = "gui"), command(hide = true))]
    Menu(menu::MenuArgs),
    /// What a core declares (name, version, extensions) as JSON: the
    /// launcher asks each core in a child process of its own.
    #[command(hide = true)]
    ProbeCore(probe_core::ProbeCoreArgs),
    /// Republish the match hosted at HOST:PORT (or in --room CODE) into NATS JetStream for any
    /// number of viewers (`spectate nats://SERVER/MATCH`).
    #[cfg(feature = "broadcast")]
    Broadcast(broadcast::BroadcastArgs),
    /// The lobby on a NATS server: list its channels, players and matches
    /// (--list), or enter your game's channel, challenge or accept, and play.
    #[cfg(feature = "broadcast")]
    Lobby(lobby::LobbyArgs),
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[test]
    fn every_subcommands_arguments_have_names_of_their_own() {
        // Flattened argument groups (run-ahead, the link, audio) must not
        // reuse a name another group of the same command took.
        Cli::command().debug_assert();
    }
}
