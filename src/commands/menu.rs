//! `netcade menu` (and `netcade` alone in a build with the window): the
//! launcher. Every session it starts is a command line, parsed by the same
//! [`Cli`](super::Cli) as the terminal's and run by [`super::run_command`].

use crate::engine::{AppError, Outcome};
use crate::launcher::forms::GameChoice;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `netcade menu`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct MenuArgs {
    /// Start with this core chosen (`duel`, or a core's path).
    #[arg(long, value_name = "CORE")]
    pub core: Option<String>,
    /// Start with this content chosen (with --core).
    #[arg(long, value_name = "ROM", requires = "core")]
    pub rom: Option<PathBuf>,
    /// Drive the launcher from a script of clicks, typing, keys and
    /// screenshots, one step a line (tests and the manual's pictures; see
    /// docs/window.md).
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
}

impl MenuArgs {
    /// The game chosen on the command line, if any.
    pub fn game(&self) -> Option<GameChoice> {
        self.core.as_ref().map(|core| GameChoice {
            core: core.clone(),
            rom: self.rom.clone(),
        })
    }
}

/// `netcade menu`.
#[cfg(feature = "gui")]
pub fn menu_command(args: &MenuArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let options = crate::gui::menu::LauncherOptions {
        game: args.game(),
        script: args.script.clone(),
    };
    let interrupted = crate::gui::menu::run_launcher(&options, &mut |line| run_line(line, out))?;
    Ok(if interrupted {
        Outcome::Interrupted
    } else {
        Outcome::Success
    })
}

/// `netcade menu` in a build without the window.
#[cfg(not(feature = "gui"))]
pub fn menu_command(_args: &MenuArgs, _out: &mut dyn Write) -> Result<Outcome, AppError> {
    super::no_window::needs_window_command("menu")
}

/// Runs a command line the launcher built, as `netcade` would run it typed
/// in a terminal: what it printed (kept for the result screen) and how it
/// ended.
pub fn run_line(line: &[String], out: &mut dyn Write) -> crate::launcher::SessionEnd {
    use crate::launcher::{KeepOutput, SessionEnd};
    // The terminal shows what ran, as it would have been typed.
    let typed = crate::launcher::forms::shell_words("netcade", line);
    let _ = writeln!(out, "$ {typed}");
    let mut keep = KeepOutput {
        out,
        kept: Vec::new(),
    };
    let began = std::time::Instant::now();
    // A report left by an earlier session is not this one's.
    let _ = crate::engine::report::take_last_report();
    let parsed = <super::Cli as clap::Parser>::try_parse_from(
        std::iter::once("netcade").chain(line.iter().map(String::as_str)),
    );
    let (exit_code, error) = match parsed {
        Err(error) => (
            crate::engine::error::EXIT_USER_MISTAKE,
            Some(error.render().to_string().trim_end().to_string()),
        ),
        Ok(super::Cli {
            command: None | Some(super::Command::Menu(_)),
            ..
        }) => (
            crate::engine::error::EXIT_USER_MISTAKE,
            Some("error: the launcher is open already".to_string()),
        ),
        Ok(super::Cli {
            command: Some(command),
            ..
        }) => match super::run_command(&command, &mut keep) {
            Ok(outcome) => (outcome.exit_code(), None),
            Err(error) => (
                error.exit_code(),
                Some(format!(
                    "error: {}",
                    crate::engine::error::error_chain(&error)
                )),
            ),
        },
    };
    if let Some(error) = &error {
        eprintln!("{error}");
    }
    SessionEnd {
        command_line: line.to_vec(),
        exit_code,
        output: String::from_utf8_lossy(&keep.kept).into_owned(),
        error,
        report: crate::engine::report::take_last_report(),
        took: began.elapsed(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launcher::forms::{DelayChoice, HostForm, JoinForm, JoinWay, Session};

    /// What the command line parses `line` (after `netcade`) into.
    fn parsed(line: &[String]) -> String {
        let cli = <super::super::Cli as clap::Parser>::try_parse_from(
            std::iter::once("netcade").chain(line.iter().map(String::as_str)),
        );
        format!(
            "{:?}",
            cli.map(|cli| cli.command).map_err(|err| err.to_string())
        )
    }

    fn typed(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    /// A copy of Duel of the test's own: a library file loads once a
    /// process, and other tests load Duel too.
    fn own_duel() -> crate::engine::core_copies::CoreCopies {
        let duel = crate::engine::game::resolve_core(std::path::Path::new("duel")).unwrap();
        crate::engine::core_copies::CoreCopies::new(&duel, 1).unwrap()
    }

    fn arena() -> GameChoice {
        GameChoice {
            core: "duel".to_string(),
            rom: Some(PathBuf::from("cores/duel/arenas/dojo.arena")),
        }
    }

    #[test]
    fn each_form_starts_exactly_what_its_command_line_would() {
        let game = arena();
        let rom = "--core duel --rom cores/duel/arenas/dojo.arena";
        let cases = [
            (
                Session::Play { players: 2 },
                format!("play --players 2 {rom}"),
            ),
            (
                Session::Host(HostForm::default()),
                format!("host --port 7000 {rom}"),
            ),
            (
                Session::Host(HostForm {
                    port: 0,
                    delay: DelayChoice::Fixed(2),
                    record: false,
                    max_spectators: 4,
                    frames: Some(300),
                    room: false,
                    retroarch: false,
                }),
                format!(
                    "host --port 0 --delay 2 --no-record --max-spectators 4 --frames 300 {rom}"
                ),
            ),
            (
                Session::Join(JoinForm {
                    address: " 192.168.1.5:7000 ".to_string(),
                    delay: DelayChoice::Auto,
                    record: true,
                    ..JoinForm::default()
                }),
                format!("join 192.168.1.5:7000 {rom}"),
            ),
            (
                Session::Spectate {
                    address: "[::1]:7000".to_string(),
                },
                format!("spectate [::1]:7000 {rom}"),
            ),
            (
                Session::Host(HostForm {
                    room: true,
                    ..HostForm::default()
                }),
                format!("host --port 7000 --room {rom}"),
            ),
            (
                Session::Join(JoinForm {
                    way: JoinWay::Room,
                    room_code: " 7kq-m2x ".to_string(),
                    record: true,
                    ..JoinForm::default()
                }),
                format!("join --room 7kq-m2x {rom}"),
            ),
            (
                Session::Join(JoinForm {
                    way: JoinWay::Quick,
                    ..JoinForm::default()
                }),
                format!("join --quick --no-record {rom}"),
            ),
            (
                Session::Host(HostForm {
                    retroarch: true,
                    port: 55435,
                    frames: Some(600),
                    ..HostForm::default()
                }),
                format!("host --retroarch --port 55435 --frames 600 {rom}"),
            ),
            (
                Session::Join(JoinForm {
                    address: "retroarch://192.168.1.20".to_string(),
                    record: true,
                    ..JoinForm::default()
                }),
                format!("join retroarch://192.168.1.20 {rom}"),
            ),
            (
                Session::Spectate {
                    address: "retroarch://192.168.1.20:55500".to_string(),
                },
                format!("spectate retroarch://192.168.1.20:55500 {rom}"),
            ),
        ];
        for (session, line) in cases {
            let from_form = parsed(&session.command_line(&game));
            assert!(from_form.starts_with("Ok("), "{session:?}: {from_form}");
            assert_eq!(from_form, parsed(&typed(&line)), "{session:?}");
        }
    }

    #[test]
    fn the_forms_start_from_the_netplay_defaults_and_carry_the_settings_switches() {
        use crate::launcher::settings::{NetplayDefaults, Settings};
        let mut settings = Settings {
            netplay: NetplayDefaults {
                name: "ann".to_string(),
                port: 7123,
                delay: DelayChoice::Fixed(3),
                port_mapping: false,
                lobby: String::new(),
            },
            ..Settings::default()
        };
        settings.paths.saves = Some(PathBuf::from("/games/saves"));
        let options = [("duel_speed".to_string(), "fast".to_string())];
        settings
            .core_options
            .insert("duel".to_string(), options.into_iter().collect());
        let game = arena();
        let rom = "--core duel --rom cores/duel/arenas/dojo.arena";
        let switches = "--option duel_speed=fast --save-dir /games/saves";
        let with_settings = |session: &Session| {
            let mut line = session.command_line(&game);
            line.extend(settings.session_args(session, &game));
            line
        };
        let mut join = settings.netplay.join_form();
        join.address = "10.0.0.2:7123".to_string();
        let cases = [
            (
                Session::Host(settings.netplay.host_form()),
                format!("host --port 7123 --delay 3 {rom} --name ann --no-port-mapping {switches}"),
            ),
            (
                Session::Join(join),
                format!(
                    "join 10.0.0.2:7123 --delay 3 {rom} --name ann --no-port-mapping {switches}"
                ),
            ),
            (
                Session::Play { players: 2 },
                format!("play --players 2 {rom} {switches}"),
            ),
        ];
        for (session, line) in cases {
            let from_form = parsed(&with_settings(&session));
            assert!(from_form.starts_with("Ok("), "{session:?}: {from_form}");
            assert_eq!(from_form, parsed(&typed(&line)), "{session:?}");
        }
    }

    #[test]
    fn each_rejoin_ticket_is_offered_as_join_rejoin_with_the_game_it_names() {
        use crate::launcher::rejoins::rejoin_offers;
        use crate::live::players::{RejoinableMatch, TicketGame};
        let pitfall = GameChoice {
            core: "/cores/stella_libretro.so".to_string(),
            rom: Some(PathBuf::from("/roms/pitfall.a26")),
        };
        let kept = |host: &str, content_hash, game| RejoinableMatch {
            host: host.parse().unwrap(),
            core_name: "any".to_string(),
            content_hash,
            game,
        };
        let found = [
            // The ticket names its game.
            kept(
                "127.0.0.1:7000",
                1,
                Some(TicketGame {
                    core: PathBuf::from("duel"),
                    rom: Some(PathBuf::from("cores/duel/arenas/dojo.arena")),
                }),
            ),
            // It does not: the recent game with its content.
            kept("[::1]:7001", 0x5171, None),
            // Nor does any recent game: the game chosen is used.
            kept("10.0.0.9:7000", 99, None),
        ];
        let mut hash_of = |rom: &std::path::Path| {
            (rom == std::path::Path::new("/roms/pitfall.a26")).then_some(0x5171)
        };
        let offers = rejoin_offers(&found, &[arena(), pitfall.clone()], &mut hash_of);
        let labels: Vec<_> = offers.iter().map(|offer| offer.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "Rejoin the match at 127.0.0.1:7000",
                "Rejoin the match at [::1]:7001",
                "Rejoin the match at 10.0.0.9:7000"
            ]
        );
        assert_eq!(offers[2].game, None);
        let lines = [
            "join 127.0.0.1:7000 --rejoin --core duel --rom cores/duel/arenas/dojo.arena",
            "join [::1]:7001 --rejoin --core /cores/stella_libretro.so --rom /roms/pitfall.a26",
        ];
        for (offer, line) in offers.iter().zip(lines) {
            let from_offer = offer.session.command_line(offer.game.as_ref().unwrap());
            assert_eq!(from_offer, typed(line));
            let parsed_offer = parsed(&from_offer);
            assert!(parsed_offer.contains("rejoin: true"), "{parsed_offer}");
        }
    }

    #[test]
    fn each_replay_action_is_the_replay_command_that_does_it() {
        use crate::launcher::replays::ReplayAction;
        let replay = PathBuf::from("/data/replays/a.ncr");
        let cases = [
            (
                ReplayAction::Play { speed: 2.5 },
                "replay play /data/replays/a.ncr --speed 2.5",
            ),
            (ReplayAction::Info, "replay info /data/replays/a.ncr"),
            (
                ReplayAction::Verify,
                "replay play /data/replays/a.ncr --headless --verify",
            ),
        ];
        for (action, line) in cases {
            let from_screen = parsed(&action.command_line(&replay));
            assert!(from_screen.starts_with("Ok("), "{action:?}: {from_screen}");
            assert_eq!(from_screen, parsed(&typed(line)), "{action:?}");
        }
    }

    #[test]
    fn a_session_that_cannot_start_ends_with_the_command_lines_own_error() {
        let mut terminal = Vec::new();
        let duel = own_duel();
        let core = duel.paths[0].display().to_string();
        let missing = typed(&format!(
            "run --core {core} --rom /nonexistent/dojo.arena --frames 1"
        ));
        let end = run_line(&missing, &mut terminal);
        assert_eq!(end.exit_code, crate::engine::error::EXIT_USER_MISTAKE);
        assert_eq!(
            end.error.as_deref(),
            Some("error: content file /nonexistent/dojo.arena does not exist")
        );
        assert_eq!(end.command_line, missing);

        let unknown = run_line(&typed("host --port many"), &mut terminal);
        assert_eq!(unknown.exit_code, crate::engine::error::EXIT_USER_MISTAKE);
        assert!(unknown.error.unwrap().contains("'many'"));

        let nested = run_line(&typed("menu"), &mut terminal);
        assert_eq!(
            nested.error.as_deref(),
            Some("error: the launcher is open already")
        );
    }

    #[test]
    fn a_finished_session_keeps_its_summary_for_the_result_screen() {
        let mut terminal = Vec::new();
        let duel = own_duel();
        let core = duel.paths[0].display().to_string();
        let line = format!("run --core {core} --rom cores/duel/arenas/dojo.arena --frames 3");
        let end = run_line(&typed(&line), &mut terminal);
        assert_eq!(
            (end.exit_code, end.error.as_deref()),
            (0, None),
            "{}",
            end.output
        );
        assert_eq!(
            String::from_utf8(terminal).unwrap(),
            format!("$ netcade {line}\n{}", end.output)
        );
        assert!(end.output.contains("frames"), "{}", end.output);
    }
}
