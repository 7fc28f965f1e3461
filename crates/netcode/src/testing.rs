//! One small pure-Rust game for testing frame loops without a libretro core.
//!
//! [`StubGame::deterministic`] is a tiny game whose whole state is in its
//! savestate: re-simulating from a saved state always gives the same
//! frames. Options change one thing each, so tests build the game they need
//! instead of wrapping it: [`StubGame::with_hidden_state`] keeps a counter
//! outside its savestate and writes it into game memory at
//! [`HIDDEN_STATE_OFFSET`] (the kind of bug sync-tests exist to catch);
//! [`StubGame::players`] lets more players' buttons move it;
//! [`StubGame::state_tail`] makes its state large;
//! [`StubGame::claiming_time_in_core`] reports time spent in its core;
//! [`StubGame::glitching_after_loads`] shows one wrong byte for the frame
//! after each load.

use crate::emulator::{Emulator, EmulatorError, PixelFormat, VideoFrame};
use crate::input::{Buttons, MAX_PLAYERS};
use std::time::Duration;

/// Bytes of game memory the stub exposes.
pub const STUB_MEMORY_SIZE: usize = 64;
/// Where the hidden-state variant writes its hidden counter (2 bytes).
pub const HIDDEN_STATE_OFFSET: usize = 0x10;
/// The byte a glitching stub shows wrong for the frame after a load.
pub const GLITCH_OFFSET: usize = 0x20;
/// Bytes of the stub's own state (before any tail).
pub const STUB_STATE_SIZE: usize = STATE_MAGIC.len() + 4 + STUB_MEMORY_SIZE;
const WIDTH: u32 = 16;
const HEIGHT: u32 = 8;
const STATE_MAGIC: &[u8; 4] = b"STUB";

// Memory layout: per player p x and y at 2p and 2p+1 for players 0 and 1,
// at 0x18 + 2(p-2) and the byte after for players 2 and 3; score of player
// p (0 or 1) at 4+p; a mixing value at 8..12 that every input feeds; the
// frames run at 12..16.
const MIX_OFFSET: usize = 8;
const FRAMES_OFFSET: usize = 12;
const MORE_PLAYERS_OFFSET: usize = 0x18;

/// A deterministic (or deliberately not) stub game. See the module docs.
#[derive(Clone, Debug)]
pub struct StubGame {
    memory: [u8; STUB_MEMORY_SIZE],
    frames_run: u32,
    /// Counts every frame ever run, restored by nothing: the hidden state.
    hidden_ticks: Option<u16>,
    /// Players whose buttons move the game.
    players: usize,
    /// Bytes saved after the stub's own state and taken back by a load.
    state_tail: Option<Vec<u8>>,
    /// Time claimed in the core per frame run, and the frames ever run.
    time_in_core: Option<(Duration, u32)>,
    glitch: Glitch,
    /// Whether it refuses to save its state, as some cores do.
    refuses_to_save: bool,
    pixels: Vec<u8>,
    audio: Vec<i16>,
    drawn: bool,
}

/// A stub that glitches after loads: whether it just loaded, and the
/// memory it shows for the frame after (game memory, one byte wrong).
#[derive(Clone, Debug, Default)]
struct Glitch {
    enabled: bool,
    just_loaded: bool,
    shown: Option<[u8; STUB_MEMORY_SIZE]>,
}

impl StubGame {
    /// A two-player game whose whole state is saved and loaded.
    pub fn deterministic() -> Self {
        StubGame {
            memory: [0; STUB_MEMORY_SIZE],
            frames_run: 0,
            hidden_ticks: None,
            players: 2,
            state_tail: None,
            time_in_core: None,
            glitch: Glitch::default(),
            refuses_to_save: false,
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

    /// This game, moved by the buttons of `players` players (2 to
    /// [`MAX_PLAYERS`]; a frame run with fewer inputs gives the others
    /// none).
    pub fn players(self, players: usize) -> Self {
        StubGame {
            players: players.clamp(2, MAX_PLAYERS),
            ..self
        }
    }

    /// This game, saving `tail` after its own state (as real cores' states
    /// are large) and taking the tail of any state it loads: a state of
    /// many chunks, or one that compresses far, whose tail the game's
    /// memory never shows.
    pub fn state_tail(self, tail: Vec<u8>) -> Self {
        StubGame {
            state_tail: Some(tail),
            ..self
        }
    }

    /// This game, claiming `per_frame` of time spent in its core for each
    /// frame it runs (without spending it).
    pub fn claiming_time_in_core(self, per_frame: Duration) -> Self {
        StubGame {
            time_in_core: Some((per_frame, 0)),
            ..self
        }
    }

    /// This game, showing one byte of memory wrong ([`GLITCH_OFFSET`]) for
    /// the frame after each load, which the next frame overwrites: like a
    /// core that does not restore some state the game rewrites at once.
    pub fn glitching_after_loads(self) -> Self {
        StubGame {
            glitch: Glitch {
                enabled: true,
                ..Glitch::default()
            },
            ..self
        }
    }

    /// This game, refusing to save its state (a core that does not
    /// serialize): it can play only in lockstep.
    pub fn refusing_to_save(self) -> Self {
        StubGame {
            refuses_to_save: true,
            ..self
        }
    }

    /// Frames run since the last load (or since the start).
    pub fn frames_run(&self) -> u32 {
        self.frames_run
    }

    /// The bytes saved after the stub's own state (see
    /// [`StubGame::state_tail`]).
    pub fn tail(&self) -> &[u8] {
        self.state_tail.as_deref().unwrap_or_default()
    }

    /// Where player `player`'s x and y are in memory.
    fn position(player: usize) -> (usize, usize) {
        let x = if player < 2 {
            2 * player
        } else {
            MORE_PLAYERS_OFFSET + 2 * (player - 2)
        };
        (x, x + 1)
    }

    /// Moves each player by the buttons held and feeds them to the mix.
    fn play(&mut self, inputs: &[Buttons]) {
        for player in 0..self.players {
            let held = inputs.get(player).copied().unwrap_or_default();
            let (x, y) = Self::position(player);
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
            if player < 2 && held.contains(Buttons::B) && self.memory[0] == self.memory[2] {
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
        self.play(inputs);
        self.frames_run += 1;
        self.memory[FRAMES_OFFSET..FRAMES_OFFSET + 4]
            .copy_from_slice(&self.frames_run.to_le_bytes());
        if let Some(ticks) = &mut self.hidden_ticks {
            *ticks = ticks.wrapping_add(1);
            self.memory[HIDDEN_STATE_OFFSET..HIDDEN_STATE_OFFSET + 2]
                .copy_from_slice(&ticks.to_le_bytes());
        }
        for (index, sample) in self.audio.iter_mut().enumerate() {
            *sample = (index as i16).wrapping_mul(i16::from(self.memory[MIX_OFFSET]));
        }
        if let Some((_, frames)) = &mut self.time_in_core {
            *frames += 1;
        }
        let glitch = &mut self.glitch;
        glitch.shown = std::mem::take(&mut glitch.just_loaded).then(|| {
            let mut shown = self.memory;
            shown[GLITCH_OFFSET] ^= 0x40;
            shown
        });
        if render {
            self.draw();
        }
    }

    fn save_state(&mut self, into: &mut Vec<u8>) -> Result<(), EmulatorError> {
        if self.refuses_to_save {
            return Err(EmulatorError::SaveFailed {
                reason: "the stub game refuses to save".to_string(),
            });
        }
        into.clear();
        into.extend_from_slice(STATE_MAGIC);
        into.extend_from_slice(&self.frames_run.to_le_bytes());
        into.extend_from_slice(&self.memory);
        into.extend_from_slice(self.tail());
        Ok(())
    }

    fn load_state(&mut self, from: &[u8]) -> Result<(), EmulatorError> {
        let sized = match self.state_tail {
            Some(_) => from.len() >= STUB_STATE_SIZE,
            None => from.len() == STUB_STATE_SIZE,
        };
        if !sized || !from.starts_with(STATE_MAGIC) {
            return Err(EmulatorError::LoadFailed {
                reason: format!(
                    "not a stub game state ({} bytes, expected {STUB_STATE_SIZE})",
                    from.len()
                ),
            });
        }
        let (own, tail) = from.split_at(STUB_STATE_SIZE);
        let (frames, memory) = own[STATE_MAGIC.len()..].split_at(4);
        self.frames_run = u32::from_le_bytes(frames.try_into().unwrap());
        self.memory.copy_from_slice(memory);
        if let Some(kept) = &mut self.state_tail {
            kept.clear();
            kept.extend_from_slice(tail);
        }
        self.glitch.just_loaded = self.glitch.enabled;
        self.glitch.shown = None;
        Ok(())
    }

    fn game_memory(&self) -> &[u8] {
        self.glitch.shown.as_ref().unwrap_or(&self.memory)
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

impl StubGame {
    /// The core name a stub reports, as a libretro core reports its own.
    pub const CORE_NAME: &'static str = "stub game";
    /// The core version a stub reports.
    pub const CORE_VERSION: &'static str = "1";

    /// Time the stub claims to have spent in its core since it was made,
    /// if it was made [claiming](StubGame::claiming_time_in_core) any.
    pub fn time_in_core(&self) -> Option<Duration> {
        self.time_in_core
            .map(|(per_frame, frames)| per_frame * frames)
    }

    /// What is running, for reports: says whether the state is hidden.
    pub fn title(&self) -> String {
        if self.hidden_ticks.is_some() {
            "stub game (with hidden state)".to_string()
        } else {
            Self::CORE_NAME.to_string()
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

    #[test]
    fn a_state_tail_is_saved_after_the_stubs_state_and_taken_back_by_a_load() {
        let mut host = StubGame::deterministic().state_tail(vec![7; 100]);
        play(&mut host, 3);
        let mut state = Vec::new();
        host.save_state(&mut state).unwrap();
        assert_eq!(state.len(), STUB_STATE_SIZE + 100);
        let mut joiner = StubGame::deterministic().state_tail(vec![1; 5]);
        joiner.load_state(&state).unwrap();
        assert_eq!(joiner.tail(), &[7; 100][..]);
        assert_eq!(joiner.game_memory(), host.game_memory());
        assert!(StubGame::deterministic().load_state(&state).is_err());
    }

    #[test]
    fn the_buttons_of_every_player_it_takes_move_the_game() {
        let pressed = [Buttons::NONE, Buttons::NONE, Buttons::NONE, Buttons::RIGHT];
        let mut two = StubGame::deterministic();
        two.run_frame(&pressed, false);
        let mut idle = StubGame::deterministic().players(4);
        idle.run_frame(&[Buttons::NONE; 4], false);
        let mut four = StubGame::deterministic().players(4);
        four.run_frame(&pressed, false);
        assert_ne!(four.game_memory(), idle.game_memory());
        assert_eq!(
            four.game_memory()[MORE_PLAYERS_OFFSET + 2],
            1,
            "player 4's x"
        );
        assert_eq!(two.game_memory()[MORE_PLAYERS_OFFSET + 2], 0);
    }

    #[test]
    fn a_glitching_stub_shows_one_wrong_byte_for_the_frame_after_a_load_only() {
        let mut game = StubGame::deterministic().glitching_after_loads();
        let mut plain = StubGame::deterministic();
        let mut saved = Vec::new();
        game.save_state(&mut saved).unwrap();
        game.load_state(&saved).unwrap();
        for frames in 1..=2 {
            play(&mut game, 1);
            play(&mut plain, 1);
            let differing: Vec<usize> = (0..STUB_MEMORY_SIZE)
                .filter(|&i| game.game_memory()[i] != plain.game_memory()[i])
                .collect();
            let expected = if frames == 1 {
                vec![GLITCH_OFFSET]
            } else {
                vec![]
            };
            assert_eq!(differing, expected, "after {frames} frames");
        }
        let mut state = Vec::new();
        game.save_state(&mut state).unwrap();
        let mut plain_state = Vec::new();
        plain.save_state(&mut plain_state).unwrap();
        assert_eq!(state, plain_state, "the glitch never reaches a state");
    }

    #[test]
    fn a_stub_claiming_time_in_core_counts_every_frame_it_runs() {
        let mut game = StubGame::deterministic().claiming_time_in_core(Duration::from_millis(2));
        assert_eq!(StubGame::deterministic().time_in_core(), None);
        let mut saved = Vec::new();
        game.save_state(&mut saved).unwrap();
        play(&mut game, 3);
        game.load_state(&saved).unwrap();
        play(&mut game, 2);
        assert_eq!(game.time_in_core(), Some(Duration::from_millis(10)));
    }
}
