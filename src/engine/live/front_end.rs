//! What a live netplay match shows and hears besides the terminal: one
//! frame loop per role (`netplay_live` for players, `netplay_spectate` for
//! spectators), two front ends. [`Headless`] shows nothing
//! and takes the buttons from `--inputs`; the `gui` feature's window
//! (`gui::netplay::WindowFrontEnd`) presents each shown frame with the
//! overlay and reads the keyboard and controllers.

use crate::engine::Game;
use crate::input::Buttons;
use crate::netplay::NetplayStats;

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
    /// Whether this tick had a frame due but waited for the opponent's input.
    pub waiting: bool,
    /// Spectators watching.
    pub spectators: usize,
    /// A spectator's figures (`None` for players).
    pub spectating: Option<SpectatorView>,
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
}

/// No window: the terminal's status line and `--inputs` only.
#[derive(Clone, Copy, Debug, Default)]
pub struct Headless;

impl FrontEnd for Headless {}

/// How the window shows the game: the `gui` feature's display options, or
/// nothing to choose in a build without a window.
#[cfg(feature = "gui")]
pub type DisplayOptions = crate::gui::window::DisplayArgs;

/// How the window shows the game: nothing to choose in a build without a
/// window.
#[cfg(not(feature = "gui"))]
#[derive(Clone, Debug, Default)]
pub struct DisplayOptions;

/// The front end a match gets: the window, unless `--headless` or built
/// without the `gui` feature.
pub fn open_front_end(
    args: &crate::engine::live::players::MatchArgs,
    game: &dyn Game,
) -> Result<Box<dyn FrontEnd>, crate::engine::AppError> {
    #[cfg(feature = "gui")]
    let display = &args.display;
    #[cfg(not(feature = "gui"))]
    let display = &DisplayOptions;
    open_window_unless_headless(args.headless, display, game)
}

/// The window showing `game` as `display` says, or [`Headless`] with
/// `headless` or in a build without the `gui` feature.
pub fn open_window_unless_headless(
    headless: bool,
    display: &DisplayOptions,
    game: &dyn Game,
) -> Result<Box<dyn FrontEnd>, crate::engine::AppError> {
    #[cfg(feature = "gui")]
    if !headless {
        return Ok(Box::new(crate::gui::front_end::WindowFrontEnd::open(
            game, display,
        )?));
    }
    let _ = (headless, display, game);
    Ok(Box::new(Headless))
}
