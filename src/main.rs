//! The `netcade` command line: parses arguments and hands each subcommand
//! to its function in `netcade::commands`.

// Unsafe code belongs in the library's `libretro` module only.
#![forbid(unsafe_code)]

use clap::Parser;
use netcade::commands::{self, Cli, Command};
use netcade::engine::error::error_chain;
use netcade::engine::{init_logging, AppError, Outcome};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let json_name = cli.command.json_name();
    if let Some(name) = json_name {
        commands::end_crashes_with_json(name);
    }
    let mut stdout = std::io::stdout().lock();
    let result: Result<Outcome, AppError> = match &cli.command {
        Command::Run(args) => commands::run::run_command(args, &mut stdout),
        Command::Synctest(args) => commands::synctest::synctest_command(args, &mut stdout),
        Command::Debug(args) => commands::debug::debug_command(args),
        Command::Demo(args) => commands::demo::demo_command(args, &mut stdout),
        Command::Host(args) => commands::host::host_command(args, &mut stdout),
        Command::Join(args) => commands::join::join_command(args, &mut stdout),
        Command::Replay(args) => commands::replay::replay_command(args, &mut stdout),
        Command::Play(args) => commands::play::play_command(args, &mut stdout),
        Command::Input(args) => commands::input::input_command(args, &mut stdout),
        Command::Spectate(args) => commands::spectate::spectate_command(args, &mut stdout),
        #[cfg(feature = "broadcast")]
        Command::Broadcast(args) => commands::broadcast::broadcast_command(args, &mut stdout),
    };
    match result {
        Ok(outcome) => ExitCode::from(outcome.exit_code()),
        Err(error) => {
            let chain = error_chain(&error);
            eprintln!("error: {chain}");
            if let Some(name) = json_name {
                let json = commands::failure_json(name, error.exit_code(), &chain);
                let _ = writeln!(stdout, "{json}");
            }
            ExitCode::from(error.exit_code())
        }
    }
}
