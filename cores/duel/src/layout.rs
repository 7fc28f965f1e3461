//! Byte layout of Duel's state: the savestate *and* the system RAM the core
//! exposes (`RETRO_MEMORY_SYSTEM_RAM`) are the same [`STATE_SIZE`] bytes, all
//! integers little-endian, no padding.
//!
//! | offset | len | field                  | meaning                                             |
//! |-------:|----:|------------------------|-----------------------------------------------------|
//! |      0 |   1 | `version`              | state format version ([`crate::state::STATE_VERSION`]) |
//! |      1 |   1 | `phase`                | 0 fighting, 1 round over, 2 match over              |
//! |      2 |   1 | `round`                | round number, from 1                                |
//! |      3 |   1 | `round_winner`         | last round: 0 none yet, 1 player 1, 2 player 2, 3 draw |
//! |      4 |   1 | `round_end`            | last round ended by: 0 not yet, 1 KO, 2 time-out    |
//! |      5 |   4 | `frame`                | u32 frames stepped since the match (re)started      |
//! |      9 |   2 | `timer_frames`         | u16 frames left on the round timer (60 per second)  |
//! |     11 |   2 | `phase_frames`         | u16 frames left in the between-rounds pause         |
//! |     13 |   2 | `arena.floor`          | i16 pixel row of the floor                          |
//! |     15 |   2 | `arena.wall_left`      | i16                                                 |
//! |     17 |   2 | `arena.wall_right`     | i16                                                 |
//! |     19 |   1 | `arena.round_seconds`  | u8                                                  |
//! |     20 |   1 | `arena.rounds_to_win`  | u8                                                  |
//! |     21 |   2 | `arena.gravity`        | u16, 1/16 px per frame²                             |
//! |     23 |  16 | `arena.sky` … `arena.fighter2` | four u32 0x00RRGGBB colours                 |
//! |     39 |  26 | `fighter1.*`           | player 1's fighter (fields below)                   |
//! |     65 |  26 | `fighter2.*`           | player 2's fighter (same fields)                    |
//! |     91 |   1 | `audio.sfx`            | sound playing: 0 none, 1 jump, 2 hit, 3 KO          |
//! |     92 |   4 | `audio.elapsed`        | u32 samples since the sound started                 |
//! |     96 |   4 | `audio.phase`          | u32 oscillator phase (full turn = 2³²)              |
//! |    100 |   2 | `audio.noise`          | u16 noise LFSR (the game's only PRNG, seeded)       |
//! |    102 |  16 | `input_queue`          | pads read but not applied yet (input lag): 4 frames × 2 u16 pads, newest first |
//!
//! Each fighter block (offsets relative to the block; fighter 1 at 39,
//! fighter 2 at 65):
//!
//! | rel | len | field           | meaning                                                  |
//! |----:|----:|-----------------|----------------------------------------------------------|
//! |   0 |   4 | `x`             | i32 body centre, 1/16 px ([`crate::state::SUBPIXELS`])   |
//! |   4 |   4 | `height`        | i32 feet above the floor, 1/16 px, ≥ 0                   |
//! |   8 |   4 | `vy`            | i32 vertical speed, 1/16 px per frame, up is positive    |
//! |  12 |   2 | `drift`         | i16 horizontal speed kept through a jump                 |
//! |  14 |   2 | `push`          | i16 knock-back speed, decays to 0                        |
//! |  16 |   2 | `health`        | u16, 0..=100                                             |
//! |  18 |   1 | `facing`        | i8, +1 facing right, -1 facing left                      |
//! |  19 |   1 | `action`        | 0 idle, 1 walking, 2 airborne, 3 attacking, 4 blocking, 5 hit-stun, 6 block-stun, 7 knocked out |
//! |  20 |   2 | `action_frames` | u16 frames spent in (attack) or left of (stun) the action |
//! |  22 |   1 | `attack_landed` | 1 once the current attack has hit                         |
//! |  23 |   1 | `round_wins`    | rounds won this match                                    |
//! |  24 |   2 | `prev_buttons`  | u16 last frame's RetroPad bits (for press edges)         |
//!
//! The non-determinism option (see [`crate::libretro::game`]) perturbs
//! `fighter1.x` (offset 39, lowest bit) and nothing else.
//!
//! [`RAM_FIELDS`] lists every field by name; [`RAM_REGIONS`] groups them.

/// A named byte range of the state / system RAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RamField {
    pub name: &'static str,
    pub offset: usize,
    pub len: usize,
}

impl RamField {
    pub const fn end(&self) -> usize {
        self.offset + self.len
    }

    pub fn range(&self) -> std::ops::Range<usize> {
        self.offset..self.end()
    }
}

/// Declares consecutive fields (offset of each = end of the previous), the
/// [`RAM_FIELDS`] table and [`STATE_SIZE`] from one list, so the encoder,
/// the decoder and the documented table cannot drift apart.
macro_rules! ram_layout {
    ($($name:ident : $ty:ty => $label:literal),* $(,)?) => {
        ram_layout!(@at 0usize; $($name : $ty => $label),*);
        /// Every field of the state in offset order.
        pub const RAM_FIELDS: &[RamField] = &[$($name),*];
    };
    (@at $offset:expr; ) => {
        /// Size in bytes of the encoded state (= `retro_serialize_size` and the
        /// system RAM size).
        pub const STATE_SIZE: usize = $offset;
    };
    (@at $offset:expr; $name:ident : $ty:ty => $label:literal $(, $rn:ident : $rt:ty => $rl:literal)*) => {
        pub const $name: RamField = RamField {
            name: $label,
            offset: $offset,
            len: std::mem::size_of::<$ty>(),
        };
        ram_layout!(@at $name.end(); $($rn : $rt => $rl),*);
    };
}

ram_layout! {
    VERSION: u8 => "version",
    PHASE: u8 => "phase",
    ROUND: u8 => "round",
    ROUND_WINNER: u8 => "round_winner",
    ROUND_END: u8 => "round_end",
    FRAME: u32 => "frame",
    TIMER_FRAMES: u16 => "timer_frames",
    PHASE_FRAMES: u16 => "phase_frames",

    ARENA_FLOOR: i16 => "arena.floor",
    ARENA_WALL_LEFT: i16 => "arena.wall_left",
    ARENA_WALL_RIGHT: i16 => "arena.wall_right",
    ARENA_ROUND_SECONDS: u8 => "arena.round_seconds",
    ARENA_ROUNDS_TO_WIN: u8 => "arena.rounds_to_win",
    ARENA_GRAVITY: u16 => "arena.gravity",
    ARENA_SKY: u32 => "arena.sky",
    ARENA_GROUND: u32 => "arena.ground",
    ARENA_FIGHTER1: u32 => "arena.fighter1",
    ARENA_FIGHTER2: u32 => "arena.fighter2",

    F1_X: i32 => "fighter1.x",
    F1_HEIGHT: i32 => "fighter1.height",
    F1_VY: i32 => "fighter1.vy",
    F1_DRIFT: i16 => "fighter1.drift",
    F1_PUSH: i16 => "fighter1.push",
    F1_HEALTH: u16 => "fighter1.health",
    F1_FACING: i8 => "fighter1.facing",
    F1_ACTION: u8 => "fighter1.action",
    F1_ACTION_FRAMES: u16 => "fighter1.action_frames",
    F1_ATTACK_LANDED: u8 => "fighter1.attack_landed",
    F1_ROUND_WINS: u8 => "fighter1.round_wins",
    F1_PREV_BUTTONS: u16 => "fighter1.prev_buttons",

    F2_X: i32 => "fighter2.x",
    F2_HEIGHT: i32 => "fighter2.height",
    F2_VY: i32 => "fighter2.vy",
    F2_DRIFT: i16 => "fighter2.drift",
    F2_PUSH: i16 => "fighter2.push",
    F2_HEALTH: u16 => "fighter2.health",
    F2_FACING: i8 => "fighter2.facing",
    F2_ACTION: u8 => "fighter2.action",
    F2_ACTION_FRAMES: u16 => "fighter2.action_frames",
    F2_ATTACK_LANDED: u8 => "fighter2.attack_landed",
    F2_ROUND_WINS: u8 => "fighter2.round_wins",
    F2_PREV_BUTTONS: u16 => "fighter2.prev_buttons",

    AUDIO_SFX: u8 => "audio.sfx",
    AUDIO_ELAPSED: u32 => "audio.elapsed",
    AUDIO_PHASE: u32 => "audio.phase",
    AUDIO_NOISE: u16 => "audio.noise",

    INPUT_QUEUE: [u16; 8] => "input_queue",
}

/// The fields of one fighter, so one encoder serves both.
#[derive(Clone, Copy, Debug)]
pub struct FighterFields {
    pub x: RamField,
    pub height: RamField,
    pub vy: RamField,
    pub drift: RamField,
    pub push: RamField,
    pub health: RamField,
    pub facing: RamField,
    pub action: RamField,
    pub action_frames: RamField,
    pub attack_landed: RamField,
    pub round_wins: RamField,
    pub prev_buttons: RamField,
}

pub const FIGHTER_FIELDS: [FighterFields; 2] = [
    FighterFields {
        x: F1_X,
        height: F1_HEIGHT,
        vy: F1_VY,
        drift: F1_DRIFT,
        push: F1_PUSH,
        health: F1_HEALTH,
        facing: F1_FACING,
        action: F1_ACTION,
        action_frames: F1_ACTION_FRAMES,
        attack_landed: F1_ATTACK_LANDED,
        round_wins: F1_ROUND_WINS,
        prev_buttons: F1_PREV_BUTTONS,
    },
    FighterFields {
        x: F2_X,
        height: F2_HEIGHT,
        vy: F2_VY,
        drift: F2_DRIFT,
        push: F2_PUSH,
        health: F2_HEALTH,
        facing: F2_FACING,
        action: F2_ACTION,
        action_frames: F2_ACTION_FRAMES,
        attack_landed: F2_ATTACK_LANDED,
        round_wins: F2_ROUND_WINS,
        prev_buttons: F2_PREV_BUTTONS,
    },
];

/// Coarse regions of the RAM, for reports that say *where* two states differ.
pub const RAM_REGIONS: &[RamField] = &[
    RamField {
        name: "match",
        offset: VERSION.offset,
        len: PHASE_FRAMES.end() - VERSION.offset,
    },
    RamField {
        name: "arena",
        offset: ARENA_FLOOR.offset,
        len: ARENA_FIGHTER2.end() - ARENA_FLOOR.offset,
    },
    RamField {
        name: "fighter1",
        offset: F1_X.offset,
        len: F1_PREV_BUTTONS.end() - F1_X.offset,
    },
    RamField {
        name: "fighter2",
        offset: F2_X.offset,
        len: F2_PREV_BUTTONS.end() - F2_X.offset,
    },
    RamField {
        name: "audio",
        offset: AUDIO_SFX.offset,
        len: AUDIO_NOISE.end() - AUDIO_SFX.offset,
    },
    RamField {
        name: "input lag",
        offset: INPUT_QUEUE.offset,
        len: INPUT_QUEUE.len,
    },
];

/// The named field containing byte `offset`, if any.
pub fn field_at(offset: usize) -> Option<&'static RamField> {
    RAM_FIELDS.iter().find(|f| f.range().contains(&offset))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_tile_the_state_without_gaps_or_overlaps() {
        let mut expected = 0;
        for field in RAM_FIELDS {
            assert_eq!(
                field.offset, expected,
                "{} starts at the wrong offset",
                field.name
            );
            expected = field.end();
        }
        assert_eq!(expected, STATE_SIZE);
    }

    #[test]
    fn regions_tile_the_state_too() {
        let mut expected = 0;
        for region in RAM_REGIONS {
            assert_eq!(region.offset, expected, "{}", region.name);
            expected = region.end();
        }
        assert_eq!(expected, STATE_SIZE);
    }

    #[test]
    fn the_documented_offsets_match_the_table() {
        assert_eq!(STATE_SIZE, 118);
        assert_eq!(INPUT_QUEUE.offset, 102);
        assert_eq!(F1_X.offset, 39);
        assert_eq!(F2_X.offset, 65);
        assert_eq!(F1_PREV_BUTTONS.end() - F1_X.offset, 26);
        assert_eq!(AUDIO_SFX.offset, 91);
        assert_eq!(AUDIO_NOISE.offset, 100);
        assert_eq!(ARENA_SKY.offset, 23);
        assert_eq!(field_at(40).map(|f| f.name), Some("fighter1.x"));
        assert_eq!(field_at(STATE_SIZE), None);
    }
}
