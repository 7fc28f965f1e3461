//! Duel: netcade's own deterministic two-player libretro test core.
//!
//! A tiny fighting game — two fighters who walk, jump, attack and block,
//! rounds against a timer, a HUD, tone sound effects — built so netcade's
//! rollback, sync-test and replay code can be tested against a core whose
//! every byte of state is known.
//!
//! The game itself is pure and independent of libretro:
//! [`sim::step`] advances a [`state::State`] by one frame from both pads,
//! [`render::render`] draws it, [`audio::mix_audio`] produces its 800 stereo
//! samples. [`state::State::encode`] / [`state::State::decode`] give the
//! fixed-size savestate, which is also the system RAM the core exposes
//! (layout in [`layout`]). The content ("ROM") is an arena file
//! ([`arena`]; shipped ones are in `cores/duel/arenas/`).
//!
//! The `retro_*` C entry points live in [`libretro`] (built as `libduel.so`).

#![deny(unsafe_op_in_unsafe_fn)]

pub mod arena;
pub mod audio;
pub mod layout;
pub mod libretro;
pub mod render;
pub mod sim;
pub mod state;

pub use arena::{Arena, ArenaError};
pub use audio::mix_audio;
pub use layout::{RamField, RAM_FIELDS, RAM_REGIONS, STATE_SIZE};
pub use render::render;
pub use sim::step;
pub use state::State;

/// Games on the shipped arenas, where the unit tests start.
#[cfg(test)]
pub(crate) mod fixtures {
    use crate::{Arena, State};

    pub(crate) const DOJO: &[u8] = include_bytes!("../arenas/dojo.arena");
    pub(crate) const MOON: &[u8] = include_bytes!("../arenas/moon.arena");

    /// A new game in the dojo, the arena players open by default.
    pub(crate) fn dojo() -> State {
        on(DOJO)
    }

    /// A new game on the moon (other gravity, timer and start positions).
    pub(crate) fn moon() -> State {
        on(MOON)
    }

    fn on(arena: &[u8]) -> State {
        State::new(Arena::parse(arena).expect("the shipped arenas parse").rules)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audio::AUDIO_SAMPLES_PER_VIDEO_FRAME;
    use crate::fixtures::dojo;
    use crate::render::new_framebuffer;
    use crate::sim::{PAD_A, PAD_LEFT, PAD_RIGHT, PAD_START, PAD_UP};

    /// A busy, repeatable input script: each player changes what they hold
    /// every few frames, chosen by a small xorshift seeded per test.
    fn script(seed: u32, frames: usize) -> Vec<[u16; 2]> {
        let choices = [
            0,
            PAD_LEFT,
            PAD_RIGHT,
            PAD_A,
            PAD_UP,
            PAD_RIGHT | PAD_A,
            PAD_LEFT | PAD_UP,
            PAD_START,
        ];
        let mut x = seed.max(1);
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        let mut held = [0u16; 2];
        (0..frames)
            .map(|_| {
                for h in &mut held {
                    if next() % 6 == 0 {
                        *h = choices[next() as usize % choices.len()];
                    }
                }
                held
            })
            .collect()
    }

    /// Runs a script the way the core does (step, audio, video) and returns
    /// a digest of everything each frame produced.
    fn play(state: &mut State, inputs: &[[u16; 2]]) -> Vec<(Vec<u8>, u64, u64)> {
        let mut fb = new_framebuffer();
        let mut audio = [0i16; AUDIO_SAMPLES_PER_VIDEO_FRAME];
        inputs
            .iter()
            .enumerate()
            .map(|(i, &pads)| {
                step(state, pads);
                mix_audio(state, &mut audio);
                let fold = |acc: u64, v: u64| acc.rotate_left(5) ^ v;
                let audio_sum = audio.iter().fold(0, |a, &s| fold(a, s as u16 as u64));
                // Drawing is slow in debug builds; every 16th frame and the
                // last are enough to see video diverge.
                let video_sum = if i % 16 == 0 || i + 1 == inputs.len() {
                    render(state, &mut fb);
                    fb.iter().fold(0, |a, &p| fold(a, u64::from(p)))
                } else {
                    0
                };
                (state.encode().to_vec(), audio_sum, video_sum)
            })
            .collect()
    }

    #[test]
    fn the_same_inputs_give_the_same_bytes_every_time() {
        let inputs = script(7, 1500);
        let first = play(&mut dojo(), &inputs);
        let second = play(&mut dojo(), &inputs);
        assert!(first == second);
        // The script really plays: health is lost and the timer runs.
        let end = State::decode(&first.last().unwrap().0).unwrap();
        assert!(end.fighters.iter().any(|f| f.health < state::MAX_HEALTH) || end.round > 1);
    }

    #[test]
    fn different_inputs_give_different_states() {
        let a = play(&mut dojo(), &script(1, 300));
        let b = play(&mut dojo(), &script(2, 300));
        assert_ne!(a.last().unwrap().0, b.last().unwrap().0);
    }

    #[test]
    fn a_restored_state_replays_the_run_it_was_taken_from() {
        let inputs = script(99, 900);
        let mut state = dojo();
        play(&mut state, &inputs[..300]);
        let saved = state.encode();
        let original = play(&mut state, &inputs[300..]);

        let mut restored = State::decode(&saved).unwrap();
        let replay = play(&mut restored, &inputs[300..]);
        assert!(original == replay, "the replay diverged");
    }

    #[test]
    fn a_jump_is_heard_in_the_next_800_stereo_frames() {
        let mut state = dojo();
        let frames = play(&mut state, &[[0, 0], [PAD_UP, 0]]);
        assert_eq!(frames[0].1, 0, "silence before the jump");
        assert_ne!(frames[1].1, 0, "a tone on the jump");
    }
}
