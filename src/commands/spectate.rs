//! `netcade spectate HOST:PORT`: watch a match live, from any moment; with
//! feature `broadcast`, `spectate nats://SERVER/MATCH` watches a broadcast
//! one and `--list nats://SERVER` lists them.

use crate::commands::outputs::OutputArgs;
use crate::engine::{AppError, Outcome};
use crate::live::retroarch::{is_retroarch_address, spectate_retroarch};
use crate::live::spectator::{spectate_match, SpectateSettings};
use std::io::Write;

/// Arguments of `netcade spectate`.
#[cfg(not(feature = "broadcast"))]
#[derive(Clone, Debug, clap::Args)]
pub struct SpectateArgs {
    /// The match to watch.
    #[command(flatten)]
    pub settings: SpectateSettings,
    /// What it shows and keeps.
    #[command(flatten)]
    pub outputs: OutputArgs,
}

/// Arguments of `netcade spectate`, with the broadcast's.
#[cfg(feature = "broadcast")]
#[derive(Clone, Debug)]
pub struct SpectateArgs {
    /// The match to watch (none with `--list`).
    pub settings: Option<SpectateSettings>,
    /// What it shows and keeps.
    pub outputs: OutputArgs,
    /// A broadcast match's arguments.
    pub broadcast: BroadcastViewArgs,
}

/// What `spectate` takes for a broadcast match.
#[cfg(feature = "broadcast")]
#[derive(Clone, Debug, clap::Args)]
pub struct BroadcastViewArgs {
    /// A broadcast match: watch from its first frame rather than its
    /// newest savestate.
    #[arg(long)]
    pub from_start: bool,
    /// List the matches broadcast on a NATS server, with how many watch
    /// each, and exit.
    #[arg(long, value_name = "nats://SERVER", exclusive = true)]
    pub list: Option<String>,
    /// Save a finished broadcast match's replay from the server's object
    /// store into MATCH.ncr in the current folder, and exit.
    #[arg(long, value_name = "nats://SERVER/MATCH", exclusive = true)]
    pub save_replay: Option<String>,
}

/// By hand: with `--list` alone, the match's (required) arguments are not
/// read; a flattened `Option` of them would never be read at all (clap
/// leaves nested argument groups empty).
#[cfg(feature = "broadcast")]
impl clap::FromArgMatches for SpectateArgs {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut matches.clone())
    }

    fn from_arg_matches_mut(matches: &mut clap::ArgMatches) -> Result<Self, clap::Error> {
        let broadcast = BroadcastViewArgs::from_arg_matches_mut(matches)?;
        let settings = match (&broadcast.list, &broadcast.save_replay) {
            (None, None) => Some(SpectateSettings::from_arg_matches_mut(matches)?),
            _ => None,
        };
        Ok(SpectateArgs {
            settings,
            outputs: OutputArgs::from_arg_matches_mut(matches)?,
            broadcast,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

#[cfg(feature = "broadcast")]
impl clap::Args for SpectateArgs {
    fn augment_args(command: clap::Command) -> clap::Command {
        let command = SpectateSettings::augment_args(command);
        BroadcastViewArgs::augment_args(OutputArgs::augment_args(command))
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

/// `netcade spectate`.
pub fn spectate_command(args: &SpectateArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    #[cfg(feature = "broadcast")]
    if let Some(server) = &args.broadcast.list {
        return list_broadcasts(server, out);
    }
    #[cfg(feature = "broadcast")]
    if let Some(address) = &args.broadcast.save_replay {
        return save_broadcast_replay(address, out);
    }
    let settings = args.settings()?;
    let broadcast = settings
        .address
        .as_deref()
        .filter(|address| address.starts_with("nats://"));
    let retroarch = settings
        .address
        .as_deref()
        .is_some_and(is_retroarch_address);
    if settings.peer_key.is_some() && (broadcast.is_some() || retroarch) {
        return Err(AppError::BadArgument {
            message:
                "--peer-key pins a netcade host's key: a broadcast or a RetroArch host has none"
                    .into(),
        });
    }
    if let Some(address) = broadcast {
        return watch_broadcast(args, settings, address, out);
    }
    if let Some(address) = settings
        .address
        .as_deref()
        .filter(|a| is_retroarch_address(a))
    {
        return args.outputs.play_live(out, |outputs, options, out| {
            spectate_retroarch(settings, address, outputs, options, out)
        });
    }
    args.outputs.play_live(out, |outputs, options, out| {
        spectate_match(settings, outputs, options, out)
    })
}

impl SpectateArgs {
    /// The match to watch.
    #[cfg(not(feature = "broadcast"))]
    fn settings(&self) -> Result<&SpectateSettings, AppError> {
        Ok(&self.settings)
    }

    /// The match to watch: there unless listing.
    #[cfg(feature = "broadcast")]
    fn settings(&self) -> Result<&SpectateSettings, AppError> {
        self.settings.as_ref().ok_or_else(|| AppError::BadArgument {
            message: "spectate needs HOST:PORT or nats://SERVER/MATCH".into(),
        })
    }
}

#[cfg(not(feature = "broadcast"))]
fn watch_broadcast(
    _args: &SpectateArgs,
    _settings: &SpectateSettings,
    address: &str,
    _out: &mut dyn Write,
) -> Result<Outcome, AppError> {
    Err(AppError::BadArgument {
        message: format!(
            "{address} is a broadcast match: this netcade was built without feature `broadcast` (cargo build --features broadcast)"
        ),
    })
}

#[cfg(feature = "broadcast")]
fn watch_broadcast(
    args: &SpectateArgs,
    settings: &SpectateSettings,
    address: &str,
    out: &mut dyn Write,
) -> Result<Outcome, AppError> {
    use crate::live::broadcast::{self, ViewerSettings};
    let (server, name) = broadcast::split_nats_address(address)?;
    let Some(name) = name else {
        return Err(AppError::BadArgument {
            message: format!(
                "{address} names no match: nats://SERVER/MATCH (spectate --list nats://SERVER lists them)"
            ),
        });
    };
    let settings = ViewerSettings {
        spectate: settings,
        server,
        name,
        from_start: args.broadcast.from_start,
    };
    args.outputs.play_live(out, |outputs, options, out| {
        broadcast::watch_broadcast(&settings, outputs, options, out)
    })
}

/// `netcade spectate --save-replay nats://SERVER/MATCH`.
#[cfg(feature = "broadcast")]
fn save_broadcast_replay(address: &str, out: &mut dyn Write) -> Result<Outcome, AppError> {
    use crate::live::broadcast;
    let (server, Some(name)) = broadcast::split_nats_address(address)? else {
        return Err(AppError::BadArgument {
            message: format!("{address} names no match: nats://SERVER/MATCH"),
        });
    };
    let link = broadcast::connect(&server)?;
    let replay = broadcast::fetch_replay(&link, &name)?;
    let path = std::path::PathBuf::from(format!("{name}.ncr"));
    std::fs::write(&path, &replay).map_err(|source| AppError::WriteFile {
        what: "the replay",
        path: path.clone(),
        source,
    })?;
    writeln!(
        out,
        "replay of {name}: {} ({} bytes)",
        path.display(),
        replay.len()
    )?;
    Ok(Outcome::Success)
}

/// `netcade spectate --list nats://SERVER`.
#[cfg(feature = "broadcast")]
fn list_broadcasts(server: &str, out: &mut dyn Write) -> Result<Outcome, AppError> {
    use crate::live::broadcast;
    let (server, _) = broadcast::split_nats_address(server)?;
    let link = broadcast::connect(&server)?;
    let matches = broadcast::list_matches(&link)?;
    if matches.is_empty() {
        writeln!(out, "no live matches on {server}")?;
    }
    let now_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    for entry in matches {
        writeln!(out, "{}", entry.describe(now_unix))?;
    }
    Ok(Outcome::Success)
}
