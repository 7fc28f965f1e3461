//! The `netcade` binary run as users and scripts run it: every command's
//! output, exit code and files, with Duel and (when fetched) real cores.

mod audio_cli;
mod cli_chat;
mod cli_core_crash;
mod cli_duel;
mod cli_errors;
mod cli_files;
mod cli_keys;
mod cli_lockstep;
mod cli_match_endings;
mod cli_netplay;
mod cli_party;
mod cli_seats;
mod hostile_path;
mod launcher_cores;
mod netplay_demo;
mod readme_commands;
mod replay_cli;
mod replay_netplay;
mod run_ahead_cli;
