//! Opening a game for a command: a libretro core plus its content.

use crate::app::AppError;
use crate::emulator::Emulator;
use crate::libretro::{Core, CoreConfig};
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
    #[arg(long = "option", value_name = "KEY=VALUE", value_parser = parse_core_option)]
    pub options: Vec<(String, String)>,
}

/// Parses `KEY=VALUE` (the value may contain `=`; the key may not be empty).
pub fn parse_core_option(text: &str) -> Result<(String, String), AppError> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_string(), value.to_string()))
        }
        _ => Err(AppError::BadCoreOption {
            text: text.to_string(),
        }),
    }
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
    fn core_options_split_at_the_first_equals_sign() {
        assert_eq!(
            parse_core_option("duel_chaos=on").unwrap(),
            ("duel_chaos".to_string(), "on".to_string())
        );
        assert_eq!(
            parse_core_option("a=b=c").unwrap(),
            ("a".to_string(), "b=c".to_string())
        );
        assert!(parse_core_option("novalue").is_err());
        assert!(parse_core_option("=x").is_err());
    }

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
