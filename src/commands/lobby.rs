//! `netcade lobby nats://SERVER` (feature `broadcast`): the lobby on NATS,
//! headless. `--list` prints its channels, players and matches in
//! progress; with a game, `--name N` enters its channel and `--challenge
//! NAME` or `--accept-any` plays a match there, ending as `host`/`join`
//! end ([lobby.md](../../docs/lobby.md)).

use crate::commands::outputs::OutputArgs;
use crate::engine::{AppError, Outcome};
use crate::launcher::library::find_by_identity;
use crate::live::broadcast::connect;
use crate::live::lobby::{
    describe_listing, list_lobby, lobby_match, now_unix, Intent, LibraryLookup, LobbySettings,
};
use crate::live::players::{JoinSettings, MatchSettings};
use crate::live::rooms::SignalArgs;
use netcode::lobby::Channel;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// What `lobby` does there.
#[derive(Clone, Debug, clap::Args)]
pub struct LobbyChoice {
    /// The lobby's NATS server (with JetStream):
    /// nats://[USER:PASSWORD@]HOST[:PORT].
    #[arg(value_name = "nats://SERVER")]
    pub server: String,
    /// List the lobby's channels (one per game, with how many are in
    /// each), their players and the matches in progress, and exit.
    #[arg(long, conflicts_with_all = ["challenge", "accept_any", "accept"])]
    pub list: bool,
    /// Challenge the player of this name in your game's channel; play when
    /// it accepts (you host).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["accept_any", "accept"])]
    pub challenge: Option<String>,
    /// Accept the first challenge of a player in your game's channel.
    #[arg(long, conflicts_with = "accept")]
    pub accept_any: bool,
    /// Accept the challenge of the player of this name (the launcher's
    /// Accept); decline others.
    #[arg(long, value_name = "NAME")]
    pub accept: Option<String>,
    /// Play no game of your own: wait in the lobby for a challenge and
    /// find its game in this folder (and its subfolders) by its content,
    /// with an installed core of the challenger's (instead of --core and
    /// --rom).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["list", "challenge", "core", "rom"])]
    pub library: Option<PathBuf>,
    /// Seconds to wait for the other player (its entering the lobby, its
    /// answer, or a challenge).
    #[arg(long, value_name = "S", default_value_t = 120.0)]
    pub wait_s: f64,
}

/// Arguments of `netcade lobby`.
#[derive(Clone, Debug)]
pub struct LobbyArgs {
    /// What it does there.
    pub choice: LobbyChoice,
    /// The match (none with `--list`).
    pub settings: Option<MatchSettings>,
    /// What it shows and keeps.
    pub outputs: OutputArgs,
}

/// By hand, as `spectate`'s: with `--list`, the match's arguments (whose
/// `--core` is otherwise required) are not read.
impl clap::FromArgMatches for LobbyArgs {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut matches.clone())
    }

    fn from_arg_matches_mut(matches: &mut clap::ArgMatches) -> Result<Self, clap::Error> {
        let choice = LobbyChoice::from_arg_matches_mut(matches)?;
        let settings = match choice.list {
            true => None,
            false => Some(MatchSettings::from_arg_matches_mut(matches)?),
        };
        Ok(LobbyArgs {
            choice,
            settings,
            outputs: OutputArgs::from_arg_matches_mut(matches)?,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Args for LobbyArgs {
    fn augment_args(command: clap::Command) -> clap::Command {
        // With --library, the core is the challenge's: `duel` stands in
        // for it until the game is found.
        let command = MatchSettings::augment_args(command).mut_arg("core", |core| {
            core.required(false)
                .required_unless_present_any(["list", "library"])
                .default_value_if(
                    "library",
                    clap::builder::ArgPredicate::IsPresent,
                    Some("duel"),
                )
        });
        OutputArgs::augment_args(LobbyChoice::augment_args(command))
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

/// `netcade lobby`.
pub fn lobby_command(args: &LobbyArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let link = connect(&args.choice.server)?;
    let Some(settings) = &args.settings else {
        let listing = list_lobby(&link)?;
        if args.outputs.json {
            writeln!(out, "{}", listing.to_json())?;
        } else {
            for line in describe_listing(&listing, now_unix()) {
                writeln!(out, "{line}")?;
            }
        }
        return Ok(Outcome::Success);
    };
    let choice = &args.choice;
    let intent = match (&choice.challenge, &choice.accept, choice.accept_any) {
        (Some(name), _, _) => Intent::Challenge(name.clone()),
        (None, Some(name), _) => Intent::AcceptFrom(name.clone()),
        (None, None, true) => Intent::AcceptAny,
        (None, None, false) => {
            return Err(AppError::BadArgument {
                message: "lobby: give --challenge NAME, --accept NAME or --accept-any (or --list)"
                    .into(),
            })
        }
    };
    let Some(name) = settings.chat.name.as_deref() else {
        return Err(AppError::BadArgument {
            message: "lobby: give --name NAME, the name the others see you by".into(),
        });
    };
    if !(args.choice.wait_s.is_finite() && args.choice.wait_s > 0.0) {
        return Err(AppError::BadArgument {
            message: format!(
                "--wait-s {}: expected a positive number of seconds",
                args.choice.wait_s
            ),
        });
    }
    let folders: Vec<PathBuf> = choice.library.iter().cloned().collect();
    if let Some(folder) = folders.first().filter(|folder| !folder.is_dir()) {
        return Err(AppError::BadArgument {
            message: format!("--library {}: not a folder", folder.display()),
        });
    }
    let lookup = |channel: &Channel| {
        let installed = crate::launcher::cores::find_cores();
        find_by_identity(&folders, &channel.identity, &channel.game, &installed)
    };
    let lobby = LobbySettings {
        name,
        intent,
        wait: Duration::from_secs_f64(args.choice.wait_s.min(86_400.0)),
        join: JoinSettings {
            address: None,
            room: None,
            quick: false,
            signal: SignalArgs::default(),
            common: args.outputs.with_default_inputs(settings),
            connect_timeout_s: 10.0,
            slot: None,
            rejoin: false,
            password: None,
        },
        library: choice
            .library
            .as_ref()
            .map(|_| &lookup as &LibraryLookup<'_>),
    };
    args.outputs.play_live(out, |outputs, options, out| {
        lobby_match(&link, &lobby, outputs, options, out)
    })
}
