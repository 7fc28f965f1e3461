//! Small pure-Rust games for testing frame loops without a libretro core.
//!
//! [`StubGame::deterministic`] is a tiny two-player game whose whole state is
//! in its savestate: re-simulating from a saved state always gives the same
//! frames. [`StubGame::with_hidden_state`] keeps a counter outside its
//! savestate and writes it into game memory at [`HIDDEN_STATE_OFFSET`], the
//! kind of bug sync-tests exist to catch.

use crate::emulator::{Emulator, EmulatorError, PixelFormat, VideoFrame};
use crate::engine::game::Game;
use crate::input::Buttons;

/// Bytes of game memory the stub exposes.
pub const STUB_MEMORY_SIZE: usize = 64;
/// Where the hidden-state variant writes its hidden counter (2 bytes).
pub const HIDDEN_STATE_OFFSET: usize = 0x10;
const WIDTH: u32 = 16;
const HEIGHT: u32 = 8;
const STATE_MAGIC: &[u8; 4] = b"STUB";
const STATE_SIZE: usize = STATE_MAGIC.len() + 4 + STUB_MEMORY_SIZE;

// Memory layout: per player (0 and 1) x at 2p, y at 2p+1; score of player p at
// 4+p; a mixing value at 8..12 that every input feeds.
const MIX_OFFSET: usize = 8;

/// A deterministic (or deliberately not) two-player stub game.
#[derive(Clone, Debug)]
pub struct StubGame {
    memory: [u8; STUB_MEMORY_SIZE],
    frames_run: u32,
    /// Counts every frame ever run, restored by nothing: the hidden state.
    hidden_ticks: Option<u16>,
    pixels: Vec<u8>,
    audio: Vec<i16>,
    drawn: bool,
}

impl StubGame {
    /// A game whose whole state is saved and loaded.
    pub fn deterministic() -> Self {
        StubGame {
            memory: [0; STUB_MEMORY_SIZE],
            frames_run: 0,
            hidden_ticks: None,
            pixels: vec![0; (WIDTH * HEIGHT * 4) as usize],
            audio: vec![0; 1600],
            drawn: false,
        }
    }

    /// A game with a counter left out of its savestate, shown in memory at
    /// `HIDDEN_STATE_OFFSET..HIDDEN_STATE_OFFSET + 2`.
    pub fn with_hidden_state() -> Self {
        StubGame {
            hidden_ticks: Some(0),
            ..StubGame::deterministic()
        }
    }

    /// Frames run since the last load (or since the start).
    pub fn frames_run(&self) -> u32 {
        self.frames_run
    }

    fn draw(&mut self) {
        for (index, pixel) in self.pixels.chunks_exact_mut(4).enumerate() {
            let x = (index as u32 % WIDTH) as u8;
            let y = (index as u32 / WIDTH) as u8;
            let mut colour = [0u8; 4];
            for (player, channel) in colour.iter_mut().take(2).enumerate() {
                if self.memory[2 * player] % WIDTH as u8 == x
                    && self.memory[2 * player + 1] % HEIGHT as u8 == y
                {
                    *channel = 0xff;
                }
            }
            colour[2] = self.memory[MIX_OFFSET + (index % 4)];
            pixel.copy_from_slice(&colour);
        }
        self.drawn = true;
    }
}

impl Emulator for StubGame {
    fn run_frame(&mut self, inputs: &[Buttons], render: bool) {
        for player in 0..2 {
            let held = inputs.get(player).copied().unwrap_or_default();
            let (x, y) = (2 * player, 2 * player + 1);
            if held.contains(Buttons::RIGHT) {
                self.memory[x] = self.memory[x].wrapping_add(1);
            }
            if held.contains(Buttons::LEFT) {
                self.memory[x] = self.memory[x].wrapping_sub(1);
            }
            if held.contains(Buttons::DOWN) {
                self.memory[y] = self.memory[y].wrapping_add(1);
            }
            if held.contains(Buttons::UP) {
                self.memory[y] = self.memory[y].wrapping_sub(1);
            }
            if held.contains(Buttons::B) && self.memory[0] == self.memory[2] {
                self.memory[4 + player] = self.memory[4 + player].wrapping_add(1);
            }
            let mix =
                u32::from_le_bytes(self.memory[MIX_OFFSET..MIX_OFFSET + 4].try_into().unwrap());
            let mixed = mix
                .rotate_left(5)
                .wrapping_mul(0x9e37_79b9)
                .wrapping_add(u32::from(held.bits()) + player as u32);
            self.memory[MIX_OFFSET..MIX_OFFSET + 4].copy_from_slice(&mixed.to_le_bytes());
        }
        self.frames_run += 1;
        self.memory[12..16].copy_from_slice(&self.frames_run.to_le_bytes());
        if let Some(ticks) = &mut self.hidden_ticks {
            *ticks = ticks.wrapping_add(1);
            self.memory[HIDDEN_STATE_OFFSET..HIDDEN_STATE_OFFSET + 2]
                .copy_from_slice(&ticks.to_le_bytes());
        }
        for (index, sample) in self.audio.iter_mut().enumerate() {
            *sample = (index as i16).wrapping_mul(i16::from(self.memory[MIX_OFFSET]));
        }
        if render {
            self.draw();
        }
    }

    fn save_state(&mut self, into: &mut Vec<u8>) -> Result<(), EmulatorError> {
        into.clear();
        into.extend_from_slice(STATE_MAGIC);
        into.extend_from_slice(&self.frames_run.to_le_bytes());
        into.extend_from_slice(&self.memory);
        Ok(())
    }

    fn load_state(&mut self, from: &[u8]) -> Result<(), EmulatorError> {
        if from.len() != STATE_SIZE || !from.starts_with(STATE_MAGIC) {
            return Err(EmulatorError::LoadFailed {
                reason: format!(
                    "not a stub game state ({} bytes, expected {STATE_SIZE})",
                    from.len()
                ),
            });
        }
        let (frames, memory) = from[STATE_MAGIC.len()..].split_at(4);
        self.frames_run = u32::from_le_bytes(frames.try_into().unwrap());
        self.memory.copy_from_slice(memory);
        Ok(())
    }

    fn game_memory(&self) -> &[u8] {
        &self.memory
    }

    fn video_frame(&self) -> Option<VideoFrame<'_>> {
        self.drawn.then_some(VideoFrame {
            width: WIDTH,
            height: HEIGHT,
            pitch: (WIDTH * 4) as usize,
            format: PixelFormat::Xrgb8888,
            pixels: &self.pixels,
        })
    }

    fn audio_samples(&self) -> &[i16] {
        &self.audio
    }

    fn frames_per_second(&self) -> f64 {
        60.0
    }

    fn sample_rate(&self) -> f64 {
        48_000.0
    }
}

impl Game for StubGame {
    fn core_name(&self) -> String {
        "stub game".to_string()
    }

    fn core_version(&self) -> String {
        "1".to_string()
    }

    fn title(&self) -> String {
        if self.hidden_ticks.is_some() {
            "stub game (with hidden state)".to_string()
        } else {
            "stub game".to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(game: &mut StubGame, frames: u32) {
        for frame in 0..frames {
            let held = if frame % 3 == 0 {
                Buttons::RIGHT | Buttons::B
            } else {
                Buttons::DOWN
            };
            game.run_frame(&[held, Buttons::LEFT], true);
        }
    }

    #[test]
    fn the_deterministic_stub_replays_the_same_from_a_saved_state() {
        let mut game = StubGame::deterministic();
        play(&mut game, 5);
        let mut saved = Vec::new();
        game.save_state(&mut saved).unwrap();
        play(&mut game, 10);
        let first = game.game_memory().to_vec();
        game.load_state(&saved).unwrap();
        play(&mut game, 10);
        assert_eq!(game.game_memory(), &first[..]);
    }

    #[test]
    fn the_hidden_state_stub_does_not_replay_the_same() {
        let mut game = StubGame::with_hidden_state();
        let mut saved = Vec::new();
        game.save_state(&mut saved).unwrap();
        play(&mut game, 10);
        let first = game.game_memory().to_vec();
        game.load_state(&saved).unwrap();
        play(&mut game, 10);
        assert_ne!(game.game_memory(), &first[..]);
        let differing: Vec<usize> = (0..STUB_MEMORY_SIZE)
            .filter(|&i| game.game_memory()[i] != first[i])
            .collect();
        assert!(differing
            .iter()
            .all(|&i| (HIDDEN_STATE_OFFSET..HIDDEN_STATE_OFFSET + 2).contains(&i)));
    }

    #[test]
    fn the_stub_refuses_a_state_that_is_not_its_own() {
        let mut game = StubGame::deterministic();
        assert!(game.load_state(b"garbage").is_err());
    }
}
