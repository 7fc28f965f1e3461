//! The one face every game has for the rest of netcade: advance a frame with
//! each player's buttons, save and load state, show memory, video and audio.
//!
//! The libretro host (`crate::libretro::Core`) implements it for real cores;
//! tests implement it with small pure-Rust games. Frame loops (`run`,
//! `synctest`, `debug`, netplay) are written against this trait only.

use crate::input::Buttons;

/// Pixel layouts libretro cores hand to `video_refresh`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PixelFormat {
    /// 0RGB1555, libretro's default.
    Rgb1555,
    /// XRGB8888: 32 bits a pixel, the top byte ignored.
    Xrgb8888,
    /// RGB565: 16 bits a pixel.
    Rgb565,
}

impl PixelFormat {
    /// How many bytes one pixel takes in this format (2 or 4).
    pub const fn bytes_per_pixel(self) -> usize {
        match self {
            PixelFormat::Xrgb8888 => 4,
            PixelFormat::Rgb1555 | PixelFormat::Rgb565 => 2,
        }
    }
}

/// The last frame a game drew. `pixels` holds `height` rows of `pitch` bytes,
/// of which the first `width * bytes_per_pixel` of each row are the picture.
#[derive(Clone, Copy, Debug)]
pub struct VideoFrame<'a> {
    /// Visible width, in pixels.
    pub width: u32,
    /// Visible height, in pixels (rows).
    pub height: u32,
    /// Bytes from the start of one row to the start of the next, padding included.
    pub pitch: usize,
    /// How each pixel is laid out.
    pub format: PixelFormat,
    /// The picture bytes: `height` rows of `pitch` bytes each.
    pub pixels: &'a [u8],
}

impl VideoFrame<'_> {
    /// The visible bytes of each row, without the padding up to `pitch`.
    pub fn rows(&self) -> impl Iterator<Item = &[u8]> {
        let visible = self.width as usize * self.format.bytes_per_pixel();
        self.pixels
            .chunks(self.pitch.max(1))
            .take(self.height as usize)
            .map(move |row| &row[..visible.min(row.len())])
    }
}

/// What went wrong inside a game while netcade drove it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmulatorError {
    /// The game has no state to save (a state size of 0) or its save call
    /// failed; rollback and sync-test cannot work with it.
    #[error("the core could not save its state ({reason})")]
    SaveFailed {
        /// Why, naming the core: e.g. `retro_serialize of core X returned false`.
        reason: String,
    },
    /// The core asked to stop (libretro's SHUTDOWN) and cannot go on.
    #[error("the core stopped ({reason})")]
    CoreStopped {
        /// Why, naming the core, the content and the frame it stopped on.
        reason: String,
        /// Whether it stopped on its very first frame: then it never ran
        /// the content at all (FBNeo with a zip that is not a romset).
        on_first_frame: bool,
    },
    /// The game rejected a state: wrong size for it, or its load call failed.
    #[error("the core refused to load a saved state ({reason})")]
    LoadFailed {
        /// Why, naming the core and the sizes when they disagree.
        reason: String,
    },
}

/// What the states a frame loop saves and loads are for. Some cores skip or
/// add work by it (libretro's GET_SAVESTATE_CONTEXT; FBNeo warns when a
/// frontend cannot say).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SavestateContext {
    /// A state that may be kept or leave this process: a user's save, a
    /// dump to a file.
    #[default]
    Normal,
    /// A rollback inside this process, re-simulating in the same instance
    /// (sync-test, debugger); libretro's "run-ahead, same instance".
    Rollback,
    /// A netplay rollback: every machine saves and loads the same states.
    Netplay,
}

/// A game netcade can drive frame by frame and roll back.
pub trait Emulator {
    /// Advances one frame with `inputs[port]` held on each port (missing
    /// ports hold nothing). With `render == false` the game may skip drawing
    /// (re-simulated frames are never shown); the last drawn frame stays.
    fn run_frame(&mut self, inputs: &[Buttons], render: bool);

    /// Advances one frame run ahead of the frame shown (run-ahead): its
    /// sound is never heard, so the game may skip making it; `render` as
    /// for [`Emulator::run_frame`]. A game that cannot skip it just runs.
    fn run_frame_unheard(&mut self, inputs: &[Buttons], render: bool) {
        self.run_frame(inputs, render);
    }

    /// Writes the whole state into `into` (resized as needed, reused across
    /// calls so steady-state saving does not allocate). The bytes depend
    /// only on the game, never on what `into` held: they can be hashed,
    /// compared, compressed and dumped.
    fn save_state(&mut self, into: &mut Vec<u8>) -> Result<(), EmulatorError>;

    /// Whether the game can go on: an error once it has stopped by itself
    /// (a libretro core that asked to shut down).
    fn check_running(&self) -> Result<(), EmulatorError> {
        Ok(())
    }

    /// Like [`Emulator::save_state`], for a state that is only ever loaded
    /// again (a rollback's): bytes the game does not write may keep what
    /// `into` held before, which loading ignores, so games whose states are
    /// mostly padding skip clearing it. Never hash or compare these bytes.
    fn save_state_to_load(&mut self, into: &mut Vec<u8>) -> Result<(), EmulatorError> {
        self.save_state(into)
    }

    /// Restores a state written by `save_state`.
    fn load_state(&mut self, from: &[u8]) -> Result<(), EmulatorError>;

    /// Says what the states saved and loaded from now on are for (until
    /// told otherwise; [`SavestateContext::Normal`] at first). Games that do
    /// not care ignore it.
    fn set_savestate_context(&mut self, _context: SavestateContext) {}

    /// The game's own memory (system RAM, or the regions of its memory map),
    /// the default basis for determinism checksums. Empty if the game exposes
    /// none.
    fn game_memory(&self) -> &[u8];

    /// The last frame drawn, if any.
    fn video_frame(&self) -> Option<VideoFrame<'_>>;

    /// Interleaved stereo samples produced by the last `run_frame`.
    fn audio_samples(&self) -> &[i16];

    /// Frames per second the game runs at.
    fn frames_per_second(&self) -> f64;

    /// Audio samples per second (per channel).
    fn sample_rate(&self) -> f64;
}
