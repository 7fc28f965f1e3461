//! Seeded random play: the same seed gives the same presses on every
//! machine, so a random match is repeated exactly from its seed.

use super::{Buttons, FrameInputs, NO_INPUTS};
use crate::random::SplitMix64;

/// How many players the random player presses buttons for.
pub const RANDOM_PLAYERS: usize = 2;

/// Seeded random play that looks like a person: each player holds a
/// direction and some buttons for a random stretch of frames, then changes;
/// now and then presses START briefly (title screens need it).
#[derive(Clone, Debug)]
pub struct RandomPlayer {
    rng: SplitMix64,
    held: [Buttons; RANDOM_PLAYERS],
    frames_left: [u32; RANDOM_PLAYERS],
}

const DIRECTIONS: [Buttons; 9] = [
    Buttons::NONE,
    Buttons::LEFT,
    Buttons::RIGHT,
    Buttons::UP,
    Buttons::DOWN,
    Buttons::from_bits(Buttons::LEFT.bits() | Buttons::UP.bits()),
    Buttons::from_bits(Buttons::RIGHT.bits() | Buttons::UP.bits()),
    Buttons::from_bits(Buttons::LEFT.bits() | Buttons::DOWN.bits()),
    Buttons::from_bits(Buttons::RIGHT.bits() | Buttons::DOWN.bits()),
];
const ACTIONS: [Buttons; 4] = [Buttons::B, Buttons::A, Buttons::Y, Buttons::X];

impl RandomPlayer {
    /// A player whose presses follow from `seed` alone.
    pub fn new(seed: u64) -> Self {
        RandomPlayer {
            rng: SplitMix64::new(seed),
            held: [Buttons::NONE; RANDOM_PLAYERS],
            frames_left: [0; RANDOM_PLAYERS],
        }
    }

    /// The next frame's inputs: the first [`RANDOM_PLAYERS`] ports play,
    /// the others hold nothing.
    pub fn next_frame(&mut self) -> FrameInputs {
        let mut inputs = NO_INPUTS;
        for (player, input) in inputs.iter_mut().take(RANDOM_PLAYERS).enumerate() {
            if self.frames_left[player] == 0 {
                let (held, stretch) = self.choose();
                self.held[player] = held;
                self.frames_left[player] = stretch;
            }
            self.frames_left[player] -= 1;
            *input = self.held[player];
        }
        inputs
    }

    /// A new set of held buttons and how many frames to hold it.
    fn choose(&mut self) -> (Buttons, u32) {
        // A short START tap, then (next choice) something else: a press
        // followed by a release is what menus react to.
        if self.rng.chance(1, 12) {
            return (Buttons::START, 2 + self.rng.below(5) as u32);
        }
        let mut held = DIRECTIONS[self.rng.below(DIRECTIONS.len() as u64) as usize];
        for action in ACTIONS {
            if self.rng.chance(1, 4) {
                held = held | action;
            }
        }
        (held, 3 + self.rng.below(38) as u32)
    }
}
