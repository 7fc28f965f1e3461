//! `netcade demo`: a match of the bundled Duel core in one process, on real
//! sockets (`live`) or over the simulated network in simulated time
//! (`simulated`).

pub mod args;
pub mod live;
pub mod simulated;

pub use args::DemoArgs;

use crate::engine::{AppError, Outcome};
use std::io::Write;

/// `netcade demo`.
pub fn demo_command(args: &DemoArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    if args.simulated {
        simulated::simulated_demo(args, out)
    } else {
        live::live_demo(args, out)
    }
}
