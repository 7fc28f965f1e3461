//! The launcher's forms. Each one becomes a command line (`netcade host
//! --core … --port …`), which the command line's own parser turns into the
//! command's arguments: the launcher and the terminal run one code path,
//! and the form can show the player the command it stands for.

use std::path::PathBuf;

/// The game a session plays: a core (`duel`, or a path) and its content.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GameChoice {
    /// `--core`: `duel` or a core's path.
    pub core: String,
    /// `--rom`, if the core takes content.
    pub rom: Option<PathBuf>,
}

impl GameChoice {
    /// How the launcher names it: the content's file name and the core's.
    pub fn label(&self) -> String {
        let file_name = |path: &std::path::Path| {
            path.file_name().map_or_else(
                || path.display().to_string(),
                |name| name.to_string_lossy().into_owned(),
            )
        };
        let core = file_name(std::path::Path::new(&self.core));
        match &self.rom {
            Some(rom) => format!("{} ({core})", file_name(rom)),
            None => core,
        }
    }

    fn push_args(&self, line: &mut Vec<String>) {
        line.extend(["--core".to_string(), self.core.clone()]);
        if let Some(rom) = &self.rom {
            line.extend(["--rom".to_string(), rom.display().to_string()]);
        }
    }
}

/// The local input delay a player asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DelayChoice {
    /// Follows the network.
    #[default]
    Auto,
    /// This many frames, always (0–4).
    Fixed(u8),
}

/// The Host form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostForm {
    /// The UDP port to listen on (0: any free port).
    pub port: u16,
    /// The local input delay.
    pub delay: DelayChoice,
    /// Whether the match is recorded as a replay.
    pub record: bool,
    /// Spectators fed at most at once.
    pub max_spectators: usize,
    /// Frames the match lasts (none: until a player leaves).
    pub frames: Option<u32>,
    /// Whether the match also opens a room, whose code the other player
    /// types instead of an address (`--room`).
    pub room: bool,
    /// Whether RetroArch players join it, over RetroArch's netplay
    /// protocol (`--retroarch`; no room then).
    pub retroarch: bool,
}

impl Default for HostForm {
    fn default() -> Self {
        HostForm {
            frames: None,
            room: false,
            retroarch: false,
            port: 7000,
            delay: DelayChoice::Auto,
            record: true,
            max_spectators: 32,
        }
    }
}

/// How the Join form finds the host.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JoinWay {
    /// At the HOST:PORT it gave.
    #[default]
    Address,
    /// In the room whose code it gave (`--room CODE`).
    Room,
    /// Paired with anyone waiting to play the same game (`--quick`).
    Quick,
}

/// The Join form.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JoinForm {
    /// How the host is found.
    pub way: JoinWay,
    /// The host's HOST:PORT.
    pub address: String,
    /// The room code the host gave.
    pub room_code: String,
    /// The local input delay.
    pub delay: DelayChoice,
    /// Whether the match is recorded as a replay.
    pub record: bool,
}

/// What the player asked the launcher to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Session {
    /// Local play, 1 or 2 players on this machine.
    Play {
        /// Players at this keyboard (1–2).
        players: u8,
    },
    /// Host a match.
    Host(HostForm),
    /// Join a match.
    Join(JoinForm),
    /// Come back to the match at HOST:PORT this machine left when its
    /// process was killed (`join HOST:PORT --rejoin`).
    Rejoin {
        /// The host's HOST:PORT.
        address: String,
    },
    /// Watch a match live at HOST:PORT.
    Spectate {
        /// The host's HOST:PORT.
        address: String,
    },
    /// A match met in the lobby at `server`: challenging a player there,
    /// or accepting its challenge.
    Lobby {
        /// The lobby's `nats://` URL.
        server: String,
        /// What is done there.
        meeting: LobbyMeeting,
    },
}

/// How a match is met in the lobby.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LobbyMeeting {
    /// Challenge this player (`--challenge NAME`): we host.
    Challenge(String),
    /// Accept this player's challenge (`--accept NAME`): we join.
    Accept(String),
}

impl Session {
    /// The command line (after the program's name) that starts this
    /// session of `game`.
    pub fn command_line(&self, game: &GameChoice) -> Vec<String> {
        let words = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let mut line = match self {
            Session::Play { players } => words(&["play", "--players", &players.to_string()]),
            Session::Host(form) if form.retroarch => {
                let mut line = words(&["host", "--retroarch", "--port", &form.port.to_string()]);
                if let Some(frames) = form.frames {
                    line.extend(words(&["--frames", &frames.to_string()]));
                }
                if !form.record {
                    line.push("--no-record".to_string());
                }
                line
            }
            Session::Host(form) => {
                let mut line = words(&["host", "--port", &form.port.to_string()]);
                push_match_args(&mut line, form.delay, form.record);
                if form.max_spectators != HostForm::default().max_spectators {
                    let max = form.max_spectators.to_string();
                    line.extend(words(&["--max-spectators", &max]));
                }
                if let Some(frames) = form.frames {
                    line.extend(words(&["--frames", &frames.to_string()]));
                }
                if form.room {
                    line.push("--room".to_string());
                }
                line
            }
            Session::Join(form) => {
                let mut line = match form.way {
                    JoinWay::Address => words(&["join", form.address.trim()]),
                    JoinWay::Room => words(&["join", "--room", form.room_code.trim()]),
                    JoinWay::Quick => words(&["join", "--quick"]),
                };
                push_match_args(&mut line, form.delay, form.record);
                line
            }
            Session::Rejoin { address } => words(&["join", address.trim(), "--rejoin"]),
            Session::Spectate { address } => words(&["spectate", address.trim()]),
            Session::Lobby { server, meeting } => {
                let (switch, name) = match meeting {
                    LobbyMeeting::Challenge(name) => ("--challenge", name),
                    LobbyMeeting::Accept(name) => ("--accept", name),
                };
                words(&["lobby", server.trim(), switch, name])
            }
        };
        game.push_args(&mut line);
        line
    }
}

/// `--delay N` when fixed, `--no-record` when not recording.
fn push_match_args(line: &mut Vec<String>, delay: DelayChoice, record: bool) {
    if let DelayChoice::Fixed(frames) = delay {
        line.extend(["--delay".to_string(), frames.to_string()]);
    }
    if !record {
        line.push("--no-record".to_string());
    }
}

/// A command line as a player would type it in a POSIX shell: words with
/// spaces or shell characters are single-quoted.
pub fn shell_words(program: &str, line: &[String]) -> String {
    let quote = |word: &str| {
        let plain = !word.is_empty()
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./:=@[],+".contains(c));
        if plain {
            word.to_string()
        } else {
            format!("'{}'", word.replace('\'', r"'\''"))
        }
    };
    std::iter::once(program)
        .chain(line.iter().map(String::as_str))
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_line_is_shown_with_awkward_words_quoted() {
        let line = vec![
            "play".to_string(),
            "--rom".to_string(),
            "/home/me/My Games/it's.a26".to_string(),
        ];
        assert_eq!(
            shell_words("netcade", &line),
            r"netcade play --rom '/home/me/My Games/it'\''s.a26'"
        );
    }

    #[test]
    fn a_host_for_retroarch_players_is_host_retroarch_on_its_port_without_a_room() {
        let game = GameChoice {
            core: "stella_libretro.so".to_string(),
            rom: None,
        };
        let form = HostForm {
            retroarch: true,
            port: 55435,
            frames: Some(600),
            record: false,
            ..HostForm::default()
        };
        assert_eq!(
            Session::Host(form).command_line(&game),
            [
                "host",
                "--retroarch",
                "--port",
                "55435",
                "--frames",
                "600",
                "--no-record",
                "--core",
                "stella_libretro.so"
            ]
        );
    }

    #[test]
    fn a_game_is_named_by_its_content_and_core_file_names() {
        let game = GameChoice {
            core: "/usr/lib/libretro/stella_libretro.so".to_string(),
            rom: Some(PathBuf::from("/roms/pitfall.a26")),
        };
        assert_eq!(game.label(), "pitfall.a26 (stella_libretro.so)");
        let duel = GameChoice {
            core: "duel".to_string(),
            rom: None,
        };
        assert_eq!(duel.label(), "duel");
    }
}
