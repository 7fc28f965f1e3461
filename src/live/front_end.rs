//! What a live match shows and hears besides the terminal: the
//! [`FrontEnd`] the one real-time loop (`session_loop`) presents each tick
//! to, for players and spectators alike. [`Headless`] shows nothing and
//! takes the buttons from `--inputs`; the window (the `gui` feature's
//! front end) presents each shown frame with the overlay and reads the
//! keyboard and controllers. The command chooses which ([`OpenFrontEnd`]);
//! the engine opens it once the game is loaded.

use crate::engine::sinks::SinkChoices;
use crate::engine::{AppError, Game};
use netcode::input::Buttons;
use netcode::netplay::NetplayStats;
use std::time::Duration;

/// The match as a front end shows it after a tick.
#[derive(Clone, Debug, Default)]
pub struct MatchView {
    /// The frame the game is at.
    pub frame: u32,
    /// Whether frames ran since the last view (the picture is new). Frames
    /// re-simulated by a rollback are not drawn: the picture is always the
    /// newest frame's.
    pub new_picture: bool,
    /// The peer link's figures, once the match runs.
    pub stats: Option<NetplayStats>,
    /// Every player's input delay by slot, this machine's included
    /// (`None`: not reported yet); empty for a spectator.
    pub delays: Vec<(u8, Option<u32>)>,
    /// This machine's player slot (0: P1); `None` for a spectator, and
    /// before a host knows its seat.
    pub seat: Option<u8>,
    /// Whether this tick had a frame due but waited for the opponent's input.
    pub waiting: bool,
    /// Spectators watching.
    pub spectators: usize,
    /// A spectator's figures (`None` for players).
    pub spectating: Option<SpectatorView>,
    /// The connection in words, when there is something to say
    /// ([`netcode::netplay::wording`]).
    pub connection: Option<String>,
    /// A recent desync, for a corner ("desync at frame 1234, repaired").
    pub desync: Option<String>,
    /// Each other player's figures, by slot (empty for a spectator).
    pub players: Vec<PlayerFigures>,
    /// The host's UDP port while it waits for its players, before the
    /// match began (`None` once it began, and at joiners and spectators).
    pub listening: Option<u16>,
    /// The code of the room the host waits in, meanwhile (`host --room`).
    pub room_code: Option<String>,
}

/// One other player's figures, for the match menu's connection panel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlayerFigures {
    /// The player's slot (0: player 1).
    pub slot: u8,
    /// Round trip to their machine, once measured.
    pub ping_ms: Option<u32>,
    /// Their input delay, once reported.
    pub delay: Option<u32>,
    /// Their run-ahead, once reported.
    pub run_ahead: Option<u32>,
    /// Depth of the last rollback their inputs caused.
    pub last_rollback: u32,
    /// The fingerprint of the link to their machine, once agreed: to read
    /// to each other (the same on both screens unless a machine sits in
    /// between).
    pub fingerprint: Option<netcode::protocol::Fingerprint>,
}

/// `P2: ping 12 ms, delay 2, last rollback 1`: one line per other player.
pub fn player_lines(players: &[PlayerFigures]) -> Vec<String> {
    let known = |value: Option<u32>, unit: &str| {
        value.map_or_else(|| "?".to_string(), |value| format!("{value}{unit}"))
    };
    players
        .iter()
        .map(|player| {
            let run_ahead = match player.run_ahead {
                Some(frames) if frames > 0 => format!(", run-ahead {frames}"),
                _ => String::new(),
            };
            let keys = player
                .fingerprint
                .map_or_else(String::new, |link| format!(", fingerprint {link}"));
            format!(
                "P{}: ping {}, delay {}{run_ahead}, last rollback {}{keys}",
                player.slot + 1,
                known(player.ping_ms, " ms"),
                known(player.delay, ""),
                player.last_rollback
            )
        })
        .collect()
}

/// What a spectator's front end shows besides the game.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpectatorView {
    /// Round trip to the host, once measured.
    pub ping_ms: Option<u32>,
    /// Frames the picture trails the players by (estimated).
    pub behind_live: u32,
    /// Final frames received and not yet played.
    pub buffered: u32,
}

/// A live match's front end.
pub trait FrontEnd {
    /// This machine's player's buttons now, when the front end reads
    /// devices (`None`: the `--inputs` source plays). Handles the window's
    /// events as [`FrontEnd::handle_events`] does.
    fn local_buttons(&mut self) -> Option<Buttons> {
        self.handle_events();
        None
    }

    /// Handles what the player did since the last call (hotkeys, closing
    /// the window) without reading buttons: a spectator's loop, which has
    /// no player, calls this each tick.
    fn handle_events(&mut self) {}

    /// The volume (0–1) the player chose since the last call, if any.
    fn volume_changed(&mut self) -> Option<f32> {
        None
    }

    /// Shows the game after a tick.
    fn present(&mut self, game: &dyn Game, view: &MatchView) {
        let _ = (game, view);
    }

    /// Tells the player something briefly (a desync repaired, the peer gone).
    fn notice(&mut self, text: &str) {
        let _ = text;
    }

    /// Whether the player asked to leave (closed the window).
    fn quit_requested(&mut self) -> bool {
        false
    }

    /// A line the player typed in the chat box and sent (each once).
    fn take_chat_line(&mut self) -> Option<String> {
        None
    }

    /// Types a scripted line into the front end's chat box as a player
    /// would, to come back through [`FrontEnd::take_chat_line`]; false
    /// when it has no chat box (the line is then sent directly).
    fn type_chat(&mut self, text: &str) -> bool {
        let _ = text;
        false
    }

    /// Shows a line of chat (ours or another machine's).
    fn show_chat(&mut self, author: &str, text: &str) {
        let _ = (author, text);
    }
}

/// No window: the terminal's status line and `--inputs` only.
#[derive(Clone, Copy, Debug, Default)]
pub struct Headless;

impl FrontEnd for Headless {}

/// Where a joiner is on its way into a match, as its connecting screen
/// names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectStep {
    /// Entering the room on the signaling server.
    EnteringRoom,
    /// Asking the signaling server's room for the host.
    FindingHost,
    /// Trying the paths to the host's machine (ICE's checks).
    PunchingThrough,
    /// Going through a relay server, no direct path having answered.
    Relaying,
    /// Saying Hello to the host and waiting for its answer.
    Handshake,
    /// The host answered: loading its game as the match begins.
    LoadingHostState,
}

impl ConnectStep {
    /// Every step, in the order a join goes through them.
    pub const ALL: [ConnectStep; 6] = [
        ConnectStep::EnteringRoom,
        ConnectStep::FindingHost,
        ConnectStep::PunchingThrough,
        ConnectStep::Relaying,
        ConnectStep::Handshake,
        ConnectStep::LoadingHostState,
    ];

    /// The step in words, for a person.
    pub fn words(self) -> &'static str {
        match self {
            ConnectStep::EnteringRoom => "Entering the room",
            ConnectStep::FindingHost => "Finding the host",
            ConnectStep::PunchingThrough => "Punching through to the host's machine",
            ConnectStep::Relaying => "Going through a relay",
            ConnectStep::Handshake => "Shaking hands with the host",
            ConnectStep::LoadingHostState => "Loading the host's game",
        }
    }
}

/// What a joiner shows while it connects, before its match's front end
/// opens: the step it is at, and a way to give up.
pub trait ConnectingScreen {
    /// Shows that the join is at `step`, `waited` into it of at most
    /// `timeout`; whether the player cancelled. Called every time the
    /// connection is pumped (each millisecond): it draws at most once a
    /// frame.
    fn show(&mut self, step: ConnectStep, waited: Duration, timeout: Duration) -> bool;

    /// Lets the match's front end take over what this one showed (the
    /// window), just before it opens.
    fn hand_over(&mut self) {}
}

/// Shows nothing and is never cancelled (Ctrl-C ends a headless join).
impl ConnectingScreen for Headless {
    fn show(&mut self, _step: ConnectStep, _waited: Duration, _timeout: Duration) -> bool {
        false
    }
}

/// Opens a live match's front end for its game, once that is loaded (a
/// joiner's and a spectator's with the host's core options).
pub trait OpenFrontEnd {
    /// The front end showing `game`.
    fn open_front_end(&self, game: &dyn Game) -> Result<Box<dyn FrontEnd>, AppError>;

    /// The screen a joiner shows while it connects to `host` (before its
    /// game is loaded).
    fn connecting(&self, host: &str) -> Result<Box<dyn ConnectingScreen>, AppError> {
        let _ = host;
        Ok(Box::new(Headless))
    }
}

impl OpenFrontEnd for Headless {
    fn open_front_end(&self, _game: &dyn Game) -> Result<Box<dyn FrontEnd>, AppError> {
        Ok(Box::new(Headless))
    }
}

/// What a live match shows and keeps besides the terminal, as its command
/// chose.
pub struct LiveOutputs<'a> {
    /// Opens the front end.
    pub front_end: &'a dyn OpenFrontEnd,
    /// Where the frames go.
    pub sinks: SinkChoices,
}

/// `P1: delay 1, run-ahead 0; P2: delay 2, run-ahead 1`: each player's
/// input delay and run-ahead, by slot (`?` until reported).
pub fn lags_text(delays: &[(u8, Option<u32>)], run_aheads: &[(u8, Option<u32>)]) -> String {
    let known = |value: Option<u32>| value.map_or_else(|| "?".to_string(), |v| v.to_string());
    let each = delays.iter().map(|(slot, delay)| {
        let run_ahead = run_aheads
            .iter()
            .find(|(other, _)| other == slot)
            .and_then(|(_, frames)| *frames);
        format!(
            "P{}: delay {}, run-ahead {}",
            slot + 1,
            known(*delay),
            known(run_ahead)
        )
    });
    each.collect::<Vec<_>>().join("; ")
}

/// Whether any player runs ahead (then status lines say each one's).
pub fn anyone_runs_ahead(run_aheads: &[(u8, Option<u32>)]) -> bool {
    run_aheads
        .iter()
        .any(|(_, frames)| frames.is_some_and(|f| f > 0))
}

/// `P1 1 P2 ?`: each player's input delay (`?` until reported).
pub fn delays_text(delays: &[(u8, Option<u32>)]) -> String {
    let each = delays.iter().map(|(slot, delay)| {
        let delay = delay.map_or_else(|| "?".to_string(), |d| d.to_string());
        format!("P{} {delay}", slot + 1)
    });
    each.collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_other_player_has_a_line_of_ping_delay_and_rollback() {
        let players = [
            PlayerFigures {
                slot: 1,
                ping_ms: Some(12),
                delay: Some(2),
                run_ahead: Some(0),
                last_rollback: 1,
                fingerprint: "VVSYW-D3M2T".parse().ok(),
            },
            PlayerFigures {
                slot: 2,
                ..PlayerFigures::default()
            },
        ];
        assert_eq!(
            player_lines(&players),
            [
                "P2: ping 12 ms, delay 2, last rollback 1, fingerprint VVSYW-D3M2T",
                "P3: ping ?, delay ?, last rollback 0"
            ]
        );
    }

    #[test]
    fn a_player_running_ahead_says_so_beside_their_delay() {
        let running_ahead = PlayerFigures {
            slot: 1,
            ping_ms: Some(12),
            delay: Some(2),
            run_ahead: Some(1),
            last_rollback: 0,
            fingerprint: None,
        };
        assert_eq!(
            player_lines(&[running_ahead]),
            ["P2: ping 12 ms, delay 2, run-ahead 1, last rollback 0"]
        );
        let lags = lags_text(&[(0, Some(1)), (1, Some(2))], &[(0, Some(0)), (1, Some(1))]);
        assert_eq!(lags, "P1: delay 1, run-ahead 0; P2: delay 2, run-ahead 1");
        assert_eq!(lags_text(&[(1, None)], &[]), "P2: delay ?, run-ahead ?");
        assert!(anyone_runs_ahead(&[(0, Some(0)), (1, Some(1))]));
        assert!(!anyone_runs_ahead(&[(0, Some(0)), (1, None)]));
    }
}
