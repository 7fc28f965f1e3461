//! Opening a game for a command: a libretro core plus its content.

use crate::app::AppError;
use crate::emulator::Emulator;
use crate::libretro::{parse_option_override, Core, CoreConfig};
use std::path::PathBuf;
use std::time::Duration;

/// A game the app's frame loops drive: an [`Emulator`] that may also say how
/// long it spent inside the core's own code (for overhead figures).
pub trait Game: Emulator {
    /// Total time spent in the core's own calls since it was opened, if the
    /// game measures it.
    fn time_in_core(&self) -> Option<Duration> {
        None
    }

    /// What is running, for reports (`Duel 0.1.0`).
    fn title(&self) -> String;
}

/// Which core to load, with which content and core options.
#[derive(Clone, Debug, Default, PartialEq, Eq, clap::Args)]
pub struct GameArgs {
    /// The libretro core (a shared library, e.g. genesis_plus_gx_libretro.so).
    #[arg(long, value_name = "CORE")]
    pub core: PathBuf,
    /// The content the core loads (a ROM, or a Duel arena).
    #[arg(long, value_name = "ROM")]
    pub rom: Option<PathBuf>,
    /// Sets a core option, overriding its default (repeatable).
    #[arg(long = "option", value_name = "KEY=VALUE", value_parser = parse_option_override)]
    pub options: Vec<(String, String)>,
}

/// Loads the core and its content as `args` say.
///
/// SRAM is not read from or written to the save directory: headless runs
/// must start from the same memory every time to be comparable.
pub fn open_game(args: &GameArgs) -> Result<Box<dyn Game>, AppError> {
    let config = CoreConfig {
        option_overrides: args.options.clone(),
        persist_save_ram: false,
        ..CoreConfig::default()
    };
    let mut core = Core::load(&args.core, config)?;
    core.load_content(args.rom.as_deref())?;
    tracing::info!(
        core = %args.core.display(),
        "loaded {} {}",
        core.info().name,
        core.info().version
    );
    Ok(Box::new(core))
}

impl Game for Core {
    fn time_in_core(&self) -> Option<Duration> {
        Some(Core::time_in_core(self))
    }

    fn title(&self) -> String {
        format!("{} {}", self.info().name, self.info().version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_core_is_reported_by_path() {
        let args = GameArgs {
            core: "/nonexistent/core.so".into(),
            ..GameArgs::default()
        };
        let err = open_game(&args).err().unwrap();
        assert!(err.to_string().contains("/nonexistent/core.so"));
        assert_eq!(err.exit_code(), crate::app::error::EXIT_USER_MISTAKE);
    }
}
