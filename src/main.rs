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
    let json_name = cli.command.as_ref().and_then(Command::json_name);
    if let Some(name) = json_name {
        commands::end_crashes_with_json(name);
    }
    let mut stdout = std::io::stdout().lock();
    let result: Result<Outcome, AppError> = match &cli.command {
        Some(command) => commands::run_command(command, &mut stdout),
        None => commands::run_command(&Command::default(), &mut stdout),
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
