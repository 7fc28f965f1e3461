//! What a live netplay match shows and hears besides the terminal: one
//! frame loop (`netplay_live`), two front ends. [`Headless`] shows nothing
//! and takes the buttons from `--inputs`; the `gui` feature's window
//! (`gui::netplay::WindowFrontEnd`) presents each shown frame with the
//! overlay and reads the keyboard and controllers.

use crate::app::Game;
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
}

/// A live match's front end.
pub trait FrontEnd {
    /// This machine's player's buttons now, when the front end reads
    /// devices (`None`: the `--inputs` source plays).
    fn local_buttons(&mut self) -> Option<Buttons> {
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
}

/// No window: the terminal's status line and `--inputs` only.
#[derive(Clone, Copy, Debug, Default)]
pub struct Headless;

impl FrontEnd for Headless {}

/// The front end a match gets: the window, unless `--headless` or built
/// without the `gui` feature.
pub fn open_front_end(
    args: &crate::app::netplay_live::MatchArgs,
    game: &dyn Game,
) -> Result<Box<dyn FrontEnd>, crate::app::AppError> {
    #[cfg(feature = "gui")]
    if !args.headless {
        return Ok(Box::new(crate::gui::netplay::WindowFrontEnd::open(
            game,
            &args.display,
        )?));
    }
    let _ = (args, game);
    Ok(Box::new(Headless))
}
