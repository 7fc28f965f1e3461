//! The window commands of a build without the `gui` feature: whatever
//! their arguments, the answer is how to build the window. They stand in
//! for `play` and `input`, so the command line reads the same either way.

use crate::engine::{AppError, Outcome};
use std::io::Write;

/// The arguments of a window command in a build without the window.
#[derive(Clone, Debug, clap::Args)]
pub struct NeedsWindow {
    /// Ignored.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub rest: Vec<String>,
}

/// A window command (`play`, `input`) asked of a build without the window.
pub(crate) fn needs_window_command(command: &str) -> Result<Outcome, AppError> {
    Err(AppError::BadArgument {
        message: format!(
            "`netcade {command}` opens a window, and this netcade was built without one: build it with `cargo build --release --features gui` (which needs the system packages libsdl2-dev and libasound2-dev)"
        ),
    })
}

/// `netcade play` without a window.
pub mod play {
    use super::*;

    /// Any arguments.
    pub type PlayArgs = NeedsWindow;

    /// Says how to get the window.
    pub fn play_command(_args: &PlayArgs, _out: &mut dyn Write) -> Result<Outcome, AppError> {
        needs_window_command("play")
    }
}

/// `netcade input` without a window.
pub mod input {
    use super::*;

    /// Any arguments.
    pub type InputArgs = NeedsWindow;

    /// Says how to get the window.
    pub fn input_command(_args: &InputArgs, _out: &mut dyn Write) -> Result<Outcome, AppError> {
        needs_window_command("input")
    }
}
