//! The player's window (cargo feature `gui`): an SDL2 window with an
//! OpenGL 3.3 core context through `glow`, the display shaders of
//! `shaders/`, keyboard and game controller input mapped to the RetroPad,
//! the netplay overlay, a joiner's connecting screen (`connecting`), the menus drawn with egui (`ui`, `match_menu`), the
//! launcher's window (`menu`: its screens over `crate::launcher`'s model),
//! and `netcade play` (local play with in-window frame stepping on the
//! debugger's engine).
//!
//! The window never paces the emulation: frame loops run on their own
//! clock and hand the window a frame to present (vsync is off unless asked
//! for). Re-simulated frames are never presented: only the picture a loop
//! shows after its frames ran.

pub mod chat_box;
pub mod connecting;
pub mod front_end;
pub mod input_map;
pub mod layout;
pub mod match_menu;
pub mod menu;
pub mod overlay;
pub mod play;
pub mod renderer;
pub mod timeline;
pub mod ui;
pub mod volume;
pub mod waiting;
pub mod window;

use std::path::PathBuf;

/// What went wrong in the window, its GL context or the input config.
#[derive(Debug, thiserror::Error)]
pub enum GuiError {
    /// SDL could not start, open the window or make the GL context.
    #[error("cannot {what}: {reason} (is there a display? set DISPLAY, or run under xvfb-run)")]
    Sdl {
        /// What was being done (`open the window`).
        what: &'static str,
        /// SDL's message.
        reason: String,
    },
    /// Nothing to open a window on (on Linux: neither an X server nor a
    /// Wayland compositor is named in the environment).
    #[error("no display to open the window on: neither DISPLAY nor WAYLAND_DISPLAY is set (run it in a desktop session or under xvfb-run; host, join, spectate and replay play take --headless)")]
    NoDisplay,
    /// A shader did not compile or link, or a GL object could not be made.
    #[error(transparent)]
    Gl(#[from] libretro_host::gl::GlError),
    /// The input config file has a mistake.
    #[error("{} line {line}: {message}", path.display())]
    Config {
        /// The config file.
        path: PathBuf,
        /// Its line (1-based) with the mistake.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The input config file could not be read or written.
    #[error("cannot read or write the input config {}", path.display())]
    ConfigFile {
        /// The config file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl GuiError {
    /// Whether the user can fix it in their files (exit 2) rather than
    /// the machine failing (exit 3).
    pub fn is_user_mistake(&self) -> bool {
        matches!(self, GuiError::Config { .. } | GuiError::NoDisplay)
    }
}

/// The engine knows no window: a window's failure reaches it as a front
/// end's, with its whole chain of causes in the message.
impl From<GuiError> for crate::engine::AppError {
    fn from(error: GuiError) -> Self {
        crate::engine::AppError::FrontEnd {
            message: crate::engine::error::error_chain(&error),
            user_mistake: error.is_user_mistake(),
        }
    }
}
