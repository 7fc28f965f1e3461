//! What the entry points do once pointers are checked and turned into
//! slices: load an arena, run a frame, reset, save and load state.
//!
//! ## Injected non-determinism
//!
//! With the core option `duel_inject_nondeterminism` set to `enabled`, a
//! hidden counter of `retro_run` calls — deliberately *not* part of the
//! savestate, and counting re-simulated frames too — decides on about one
//! call in [`NONDETERMINISM_ODDS`] to flip the lowest bit of `fighter1.x`
//! (system RAM offset 39, see [`crate::layout`]) after the frame is
//! simulated. Which calls strike is a hash of the counter, not a fixed
//! period: a period could line up with a sync-test's check distance (e.g.
//! every 5th call with distance 5) so that every re-simulated frame is
//! struck exactly like its first pass and nothing shows. Replaying frames
//! after `retro_unserialize` thus gives different RAM, which a sync-test
//! must catch. With the option disabled (the default) the core is fully
//! deterministic. The counter starts at 0 on `retro_load_game`.

use super::frontend::LogLevel;
use super::instance::{publish_system_ram, set_system_ram_live, system_ram_address, Instance};
use crate::arena::{Arena, ArenaError, MAX_ARENA_BYTES};
use crate::audio::{mix_audio, AUDIO_SAMPLES_PER_VIDEO_FRAME};
use crate::layout::STATE_SIZE;
use crate::render::{new_framebuffer, render, Framebuffer};
use crate::sim::{step_with_lag, USED_BUTTONS};
use crate::state::State;

/// About one `retro_run` call in this many is struck by the injected
/// non-determinism.
pub const NONDETERMINISM_ODDS: u64 = 5;

/// Whether call number `call` (from 1) is struck: a fixed integer hash of
/// the counter (SplitMix64's finaliser), so strikes are aperiodic.
pub fn nondeterminism_strikes(call: u64) -> bool {
    let mut z = call.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    z % NONDETERMINISM_ODDS == 0
}

/// A game loaded from an arena file.
pub struct LoadedGame {
    pub arena: Arena,
    pub state: State,
    framebuffer: Box<Framebuffer>,
    audio: [i16; AUDIO_SAMPLES_PER_VIDEO_FRAME],
    inject_nondeterminism: bool,
    /// Frames between reading a press and applying it (core option).
    input_lag: usize,
    /// Hidden from the savestate on purpose (see the module docs).
    run_calls: u64,
    input_bitmasks: bool,
    can_dupe: bool,
}

/// What `retro_load_game` was given.
pub enum Content<'a> {
    Missing,
    PathOnly,
    TooBig(usize),
    Bytes(&'a [u8]),
}

impl Instance {
    pub fn load_game(&mut self, content: Content<'_>) -> bool {
        let frontend = self.frontend;
        let bytes = match content {
            Content::Bytes(bytes) => bytes,
            Content::Missing => {
                frontend.log(
                    LogLevel::Error,
                    "no content given: Duel needs an arena file (.arena)",
                );
                return false;
            }
            Content::PathOnly => {
                frontend.log(
                    LogLevel::Error,
                    "the frontend passed only a path; Duel asks for the arena's bytes (need_fullpath is false)",
                );
                return false;
            }
            Content::TooBig(size) => {
                let err = ArenaError::TooBig { size };
                frontend.log(LogLevel::Error, &format!("cannot load arena: {err}"));
                return false;
            }
        };
        debug_assert!(bytes.len() <= MAX_ARENA_BYTES);
        let arena = match Arena::parse(bytes) {
            Ok(arena) => arena,
            Err(err) => {
                frontend.log(LogLevel::Error, &format!("cannot load arena: {err}"));
                return false;
            }
        };
        if !frontend.has_environment() {
            frontend.log(
                LogLevel::Error,
                "the frontend gave no environment callback, so XRGB8888 video cannot be set",
            );
            return false;
        }
        if !frontend.set_pixel_format_xrgb8888() {
            frontend.log(LogLevel::Error, "the frontend refused XRGB8888 video");
            return false;
        }
        frontend.describe_inputs();
        frontend.announce_memory_map(system_ram_address());

        let state = State::new(arena.rules);
        let game = LoadedGame {
            state,
            framebuffer: new_framebuffer(),
            audio: [0; AUDIO_SAMPLES_PER_VIDEO_FRAME],
            inject_nondeterminism: frontend.inject_nondeterminism_enabled(),
            input_lag: frontend.input_lag(),
            run_calls: 0,
            input_bitmasks: frontend.supports_input_bitmasks(),
            can_dupe: frontend.can_dupe(),
            arena,
        };
        frontend.log(
            LogLevel::Info,
            &format!(
                "loaded arena \"{}\"{}",
                game.arena.name,
                if game.inject_nondeterminism {
                    " with injected non-determinism ENABLED"
                } else {
                    ""
                }
            ),
        );
        publish_system_ram(&game.state.encode());
        set_system_ram_live(true);
        self.game = Some(game);
        true
    }

    pub fn unload_game(&mut self) {
        self.game = None;
        set_system_ram_live(false);
    }

    pub fn run(&mut self) {
        let frontend = self.frontend;
        let Some(game) = self.game.as_mut() else {
            return;
        };
        frontend.poll_input();
        if frontend.options_changed() {
            game.inject_nondeterminism = frontend.inject_nondeterminism_enabled();
            game.input_lag = frontend.input_lag();
        }
        let inputs = [0, 1].map(|port| frontend.read_pad(port, game.input_bitmasks, USED_BUTTONS));

        step_with_lag(&mut game.state, inputs, game.input_lag);
        game.run_calls = game.run_calls.wrapping_add(1);
        if game.inject_nondeterminism && nondeterminism_strikes(game.run_calls) {
            game.state.fighters[0].x ^= 1;
        }

        mix_audio(&mut game.state, &mut game.audio);
        frontend.play_audio(&game.audio);

        if frontend.wants_video() || !game.can_dupe {
            render(&game.state, &mut game.framebuffer);
            frontend.show_video(Some(&game.framebuffer));
        } else {
            frontend.show_video(None);
        }
        publish_system_ram(&game.state.encode());
    }

    /// Restarts the match on the same arena.
    pub fn reset(&mut self) {
        if let Some(game) = self.game.as_mut() {
            game.state = State::new(game.arena.rules);
            publish_system_ram(&game.state.encode());
        }
    }

    /// Writes exactly `STATE_SIZE` bytes at the start of `out`.
    pub fn serialize(&self, out: &mut [u8]) -> bool {
        let Some(game) = self.game.as_ref() else {
            return false;
        };
        match out.get_mut(..STATE_SIZE) {
            Some(head) => {
                head.copy_from_slice(&game.state.encode());
                true
            }
            None => false,
        }
    }

    pub fn refuse_state_of_size(&self, size: usize) -> bool {
        if self.game.is_some() {
            self.frontend.log(
                LogLevel::Warn,
                &format!("refusing savestate: it is {size} bytes, expected {STATE_SIZE}"),
            );
        }
        false
    }

    pub fn unserialize(&mut self, bytes: &[u8]) -> bool {
        let frontend = self.frontend;
        let Some(game) = self.game.as_mut() else {
            return false;
        };
        match State::decode(bytes) {
            Ok(state) => {
                game.state = state;
                publish_system_ram(&game.state.encode());
                true
            }
            Err(err) => {
                frontend.log(LogLevel::Warn, &format!("refusing savestate: {err}"));
                false
            }
        }
    }
}
