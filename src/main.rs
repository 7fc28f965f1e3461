//! The `netcade` command line: parses arguments and hands over to `netcade::engine`.

// Unsafe code belongs in the library's `libretro` module only.
#![forbid(unsafe_code)]

use clap::{Parser, Subcommand};
use netcade::engine::debugger::{debug_command, DebugArgs};
use netcade::engine::demo::simulated::{demo_command, DemoArgs};
use netcade::engine::error::error_chain;
use netcade::engine::live::players::{host_command, join_command, HostArgs, JoinArgs};
use netcade::engine::live::spectator::{spectate_command, SpectateArgs};
use netcade::engine::replay_tools::{replay_command, ReplayArgs};
use netcade::engine::run::{run_command, RunArgs};
use netcade::engine::synctest::{synctest_command, SyncTestArgs};
use netcade::engine::{init_logging, AppError, Outcome};
#[cfg(feature = "gui")]
use netcade::gui::play::{input_command, play_command, InputArgs, PlayArgs};
use std::process::ExitCode;

const EXIT_CODES: &str = "\
Exit codes:
  0  success (a sync-test passed)
  1  a sync-test found a desync, the demo's machines disagreed, a host/join match desynced,
     a replay failed --verify, or `replay diff` found a difference
  2  a user mistake: bad arguments, a missing or unusable core, content or input file,
     failed commands in a debug script, a busy port, a host name that does not resolve,
     a refused netplay handshake, or a failed rollback pre-flight with --strict
  3  a failure while running: the core could not save or load a state, an output could not be
     written, or the netplay host never answered
  4  the core crashed (a fatal signal inside the core; the report names the core, content and frame)
  5  the demo's netplay match did not finish (a machine left, or the simulated time limit passed)
  6  host/join: the peer was lost (silent for 5 s) or left before the match's last frame";

/// netcade: a libretro frontend with GGPO-style rollback netplay.
#[derive(Debug, Parser)]
#[command(version, about, after_help = EXIT_CODES)]
struct Cli {
    /// More log output on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a game unthrottled; print frames, speed, overhead and checksums.
    Run(RunArgs),
    /// GGPO's sync test: after every frame go back D frames, re-simulate, compare.
    Synctest(SyncTestArgs),
    /// Frame-step debugger reading commands from stdin (type `help`).
    Debug(DebugArgs),
    /// A netplay match of the bundled Duel core in this process: a host and a
    /// joiner over loopback UDP in real time, with a spectator joining
    /// mid-match, checked in sync (--simulated: two machines over a
    /// simulated network in simulated time, far faster than real time).
    Demo(DemoArgs),
    /// Host a two-player netplay match over UDP and wait for a player to join.
    Host(HostArgs),
    /// Join a netplay match hosted at HOST:PORT.
    Join(JoinArgs),
    /// Replays: play (verify, seek), info, inputs, diff.
    Replay(ReplayArgs),
    /// Play a game in a window, alone or two on one keyboard (P pauses,
    /// `.` steps, `,` steps back, F1 overlay, F12 screenshot).
    #[cfg(feature = "gui")]
    Play(PlayArgs),
    /// Print the input mapping and its config file; --test shows what you press.
    #[cfg(feature = "gui")]
    Input(InputArgs),
    /// Watch the netplay match hosted at HOST:PORT live, from any moment.
    Spectate(SpectateArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let mut stdout = std::io::stdout().lock();
    let result: Result<Outcome, AppError> = match &cli.command {
        Command::Run(args) => run_command(args, &mut stdout),
        Command::Synctest(args) => synctest_command(args, &mut stdout),
        Command::Debug(args) => debug_command(args),
        Command::Demo(args) => demo_command(args, &mut stdout),
        Command::Host(args) => host_command(args, &mut stdout),
        Command::Join(args) => join_command(args, &mut stdout),
        Command::Replay(args) => replay_command(args, &mut stdout),
        #[cfg(feature = "gui")]
        Command::Play(args) => play_command(args, &mut stdout),
        #[cfg(feature = "gui")]
        Command::Input(args) => input_command(args, &mut stdout),
        Command::Spectate(args) => spectate_command(args, &mut stdout),
    };
    match result {
        Ok(outcome) => ExitCode::from(outcome.exit_code()),
        Err(error) => {
            eprintln!("error: {}", error_chain(&error));
            ExitCode::from(error.exit_code())
        }
    }
}
