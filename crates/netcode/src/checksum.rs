//! xxh3 checksums of what a game is: its memory, its full state, its picture.

use crate::emulator::{Emulator, VideoFrame};
use std::fmt;
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

/// A 64-bit xxh3 checksum, shown as 16 hex digits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Checksum(pub u64);

impl Checksum {
    /// The xxh3-64 checksum of `bytes`.
    pub fn of(bytes: &[u8]) -> Checksum {
        Checksum(xxh3_64(bytes))
    }

    /// The checksum of the visible pixels (row padding is left out: cores may
    /// leave garbage there).
    pub fn of_video(frame: &VideoFrame<'_>) -> Checksum {
        let mut hasher = Xxh3::new();
        hasher.update(&frame.width.to_le_bytes());
        hasher.update(&frame.height.to_le_bytes());
        for row in frame.rows() {
            hasher.update(row);
        }
        Checksum(hasher.digest())
    }
}

impl fmt::Display for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// The three checksums netcade reports for a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checksums {
    /// Checksum of the game's own memory (`Emulator::game_memory`): system
    /// RAM or its memory map.
    pub memory: Checksum,
    /// Checksum of the full serialized state.
    pub state: Checksum,
    /// Checksum of the last drawn frame's visible pixels; zero when none was
    /// taken (nothing drawn yet, or a sync-test not comparing video).
    pub video: Checksum,
}

impl Checksums {
    /// Checksums of `game` as it is now; `state` is the game's serialized
    /// state (already saved by the caller, who usually needs it anyway).
    pub fn of_game<G: Emulator + ?Sized>(game: &G, state: &[u8]) -> Checksums {
        Checksums {
            memory: Checksum::of(game.game_memory()),
            state: Checksum::of(state),
            video: game
                .video_frame()
                .map(|frame| Checksum::of_video(&frame))
                .unwrap_or_default(),
        }
    }
}

impl Checksums {
    /// Checksums of `game` as it is now, saving its state for the `state`
    /// one: of no bytes when its core cannot save (a lockstep match's).
    pub fn of_game_now<G: Emulator + ?Sized>(game: &mut G) -> Checksums {
        let mut state = Vec::new();
        if game.save_state(&mut state).is_err() {
            state.clear();
        }
        Checksums::of_game(game, &state)
    }
}

/// `memory … state … video …`, as summaries print them.
impl std::fmt::Display for Checksums {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "memory {} state {} video {}",
            self.memory, self.state, self.video
        )
    }
}

/// The checksum every machine logs for a frame about to run, a final frame
/// carries and a replay checkpoint holds: of the game's memory, or for a
/// game that shows none, of its whole state (saved into `scratch`).
pub fn memory_checksum<G: Emulator + ?Sized>(
    game: &mut G,
    scratch: &mut Vec<u8>,
) -> Result<Checksum, crate::emulator::EmulatorError> {
    if game.game_memory().is_empty() {
        game.save_state(scratch)?;
        Ok(Checksum::of(scratch))
    } else {
        Ok(Checksum::of(game.game_memory()))
    }
}
