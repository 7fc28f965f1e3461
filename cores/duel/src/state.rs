//! The whole game state: one fixed-size plain struct, encoded to and from a
//! fixed-size little-endian byte array (see [`crate::layout`] for offsets).

use crate::arena::ArenaRules;
use crate::layout::*;
use std::fmt;

/// Version byte at offset 0 of every encoded state.
pub const STATE_VERSION: u8 = 2;
/// Positions and speeds are in 1/16 pixel.
pub const SUBPIXELS: i32 = 16;
pub const MAX_HEALTH: u16 = 100;
/// Fighter body size in pixels.
pub const FIGHTER_WIDTH: i32 = 24;
pub const FIGHTER_HEIGHT: i32 = 48;
/// The most frames of input lag Duel can be given (core option
/// `duel_input_lag`): the length of [`State::input_queue`].
pub const MAX_INPUT_LAG: usize = 4;
/// Seed of the noise generator at every match start.
pub const NOISE_SEED: u16 = 0xace1;

/// An encoded state.
pub type StateBytes = [u8; STATE_SIZE];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    Fighting = 0,
    /// The pause after a KO or time-out, before the next round or match end.
    RoundOver = 1,
    /// Someone won the match; START on either pad starts a new one.
    MatchOver = 2,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Action {
    Idle = 0,
    Walking = 1,
    Airborne = 2,
    Attacking = 3,
    Blocking = 4,
    HitStun = 5,
    BlockStun = 6,
    KnockedOut = 7,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RoundWinner {
    None = 0,
    Player1 = 1,
    Player2 = 2,
    Draw = 3,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RoundEnd {
    NotYet = 0,
    KnockOut = 1,
    TimeOut = 2,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Sfx {
    Silence = 0,
    Jump = 1,
    Hit = 2,
    KnockOut = 3,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fighter {
    pub x: i32,
    pub height: i32,
    pub vy: i32,
    pub drift: i16,
    pub push: i16,
    pub health: u16,
    pub facing: i8,
    pub action: Action,
    pub action_frames: u16,
    pub attack_landed: bool,
    pub round_wins: u8,
    pub prev_buttons: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AudioState {
    pub sfx: Sfx,
    pub elapsed: u32,
    pub phase: u32,
    pub noise: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    pub phase: Phase,
    pub round: u8,
    pub round_winner: RoundWinner,
    pub round_end: RoundEnd,
    pub frame: u32,
    pub timer_frames: u16,
    pub phase_frames: u16,
    pub rules: ArenaRules,
    pub fighters: [Fighter; 2],
    pub audio: AudioState,
    /// Both pads as read on each of the last frames, newest first, waiting
    /// out the input lag (see [`crate::sim::step_with_lag`]). In the state
    /// so that a rollback replays a lagged press exactly.
    pub input_queue: [[u16; 2]; MAX_INPUT_LAG],
}

/// Why bytes are not a Duel state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    WrongSize { expected: usize, found: usize },
    WrongVersion { expected: u8, found: u8 },
    BadField { field: &'static str, value: i64 },
    BadArena(String),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::WrongSize { expected, found } => {
                write!(f, "state is {found} bytes, expected {expected}")
            }
            DecodeError::WrongVersion { expected, found } => {
                write!(
                    f,
                    "state version {found}, this core reads version {expected}"
                )
            }
            DecodeError::BadField { field, value } => {
                write!(f, "state field `{field}` has impossible value {value}")
            }
            DecodeError::BadArena(why) => write!(f, "state carries a bad arena: {why}"),
        }
    }
}

impl std::error::Error for DecodeError {}

impl Fighter {
    /// A fighter at the start of a round, standing at `x` pixels.
    pub fn at(x_pixels: i32, facing: i8, round_wins: u8) -> Fighter {
        Fighter {
            x: x_pixels * SUBPIXELS,
            height: 0,
            vy: 0,
            drift: 0,
            push: 0,
            health: MAX_HEALTH,
            facing,
            action: Action::Idle,
            action_frames: 0,
            attack_landed: false,
            round_wins,
            prev_buttons: 0,
        }
    }
}

impl State {
    /// A fresh match on an arena.
    pub fn new(rules: ArenaRules) -> State {
        let mut state = State {
            phase: Phase::Fighting,
            round: 1,
            round_winner: RoundWinner::None,
            round_end: RoundEnd::NotYet,
            frame: 0,
            timer_frames: 0,
            phase_frames: 0,
            rules,
            fighters: [Fighter::at(0, 1, 0); 2],
            audio: AudioState {
                sfx: Sfx::Silence,
                elapsed: 0,
                phase: 0,
                noise: NOISE_SEED,
            },
            input_queue: [[0; 2]; MAX_INPUT_LAG],
        };
        state.start_round();
        state
    }

    /// Puts both fighters back on their marks, full health, timer full;
    /// keeps round wins and the round number.
    pub fn start_round(&mut self) {
        let left = i32::from(self.rules.wall_left);
        let right = i32::from(self.rules.wall_right);
        let quarter = (right - left) / 4;
        let wins = [self.fighters[0].round_wins, self.fighters[1].round_wins];
        self.fighters = [
            Fighter::at(left + quarter, 1, wins[0]),
            Fighter::at(right - quarter, -1, wins[1]),
        ];
        self.phase = Phase::Fighting;
        self.timer_frames = u16::from(self.rules.round_seconds) * 60;
        self.phase_frames = 0;
    }

    /// Seconds shown on the round timer (rounded up).
    pub fn timer_seconds(&self) -> u16 {
        self.timer_frames.div_ceil(60)
    }

    pub fn encode(&self) -> StateBytes {
        let mut out = [0u8; STATE_SIZE];
        let mut w = Writer(&mut out);
        w.put(VERSION, [STATE_VERSION]);
        w.put(PHASE, [self.phase as u8]);
        w.put(ROUND, [self.round]);
        w.put(ROUND_WINNER, [self.round_winner as u8]);
        w.put(ROUND_END, [self.round_end as u8]);
        w.put(FRAME, self.frame.to_le_bytes());
        w.put(TIMER_FRAMES, self.timer_frames.to_le_bytes());
        w.put(PHASE_FRAMES, self.phase_frames.to_le_bytes());

        let r = &self.rules;
        w.put(ARENA_FLOOR, r.floor.to_le_bytes());
        w.put(ARENA_WALL_LEFT, r.wall_left.to_le_bytes());
        w.put(ARENA_WALL_RIGHT, r.wall_right.to_le_bytes());
        w.put(ARENA_ROUND_SECONDS, [r.round_seconds]);
        w.put(ARENA_ROUNDS_TO_WIN, [r.rounds_to_win]);
        w.put(ARENA_GRAVITY, r.gravity.to_le_bytes());
        w.put(ARENA_SKY, r.sky.to_le_bytes());
        w.put(ARENA_GROUND, r.ground.to_le_bytes());
        w.put(ARENA_FIGHTER1, r.fighter1.to_le_bytes());
        w.put(ARENA_FIGHTER2, r.fighter2.to_le_bytes());

        for (f, at) in self.fighters.iter().zip(FIGHTER_FIELDS) {
            w.put(at.x, f.x.to_le_bytes());
            w.put(at.height, f.height.to_le_bytes());
            w.put(at.vy, f.vy.to_le_bytes());
            w.put(at.drift, f.drift.to_le_bytes());
            w.put(at.push, f.push.to_le_bytes());
            w.put(at.health, f.health.to_le_bytes());
            w.put(at.facing, f.facing.to_le_bytes());
            w.put(at.action, [f.action as u8]);
            w.put(at.action_frames, f.action_frames.to_le_bytes());
            w.put(at.attack_landed, [u8::from(f.attack_landed)]);
            w.put(at.round_wins, [f.round_wins]);
            w.put(at.prev_buttons, f.prev_buttons.to_le_bytes());
        }

        let a = &self.audio;
        w.put(AUDIO_SFX, [a.sfx as u8]);
        w.put(AUDIO_ELAPSED, a.elapsed.to_le_bytes());
        w.put(AUDIO_PHASE, a.phase.to_le_bytes());
        w.put(AUDIO_NOISE, a.noise.to_le_bytes());

        let mut queue = [0u8; INPUT_QUEUE.len];
        for (bytes, pad) in queue
            .chunks_exact_mut(2)
            .zip(self.input_queue.as_flattened())
        {
            bytes.copy_from_slice(&pad.to_le_bytes());
        }
        w.put(INPUT_QUEUE, queue);
        out
    }

    /// Decodes and validates a state: wrong size, wrong version, or any field
    /// the game could never produce is an error (never a panic).
    pub fn decode(bytes: &[u8]) -> Result<State, DecodeError> {
        let bytes: &StateBytes = bytes.try_into().map_err(|_| DecodeError::WrongSize {
            expected: STATE_SIZE,
            found: bytes.len(),
        })?;
        let r = Reader(bytes);
        let version = r.u8(VERSION);
        if version != STATE_VERSION {
            return Err(DecodeError::WrongVersion {
                expected: STATE_VERSION,
                found: version,
            });
        }

        let rules = ArenaRules {
            floor: i16::from_le_bytes(r.get(ARENA_FLOOR)),
            wall_left: i16::from_le_bytes(r.get(ARENA_WALL_LEFT)),
            wall_right: i16::from_le_bytes(r.get(ARENA_WALL_RIGHT)),
            round_seconds: r.u8(ARENA_ROUND_SECONDS),
            rounds_to_win: r.u8(ARENA_ROUNDS_TO_WIN),
            gravity: u16::from_le_bytes(r.get(ARENA_GRAVITY)),
            sky: u32::from_le_bytes(r.get(ARENA_SKY)),
            ground: u32::from_le_bytes(r.get(ARENA_GROUND)),
            fighter1: u32::from_le_bytes(r.get(ARENA_FIGHTER1)),
            fighter2: u32::from_le_bytes(r.get(ARENA_FIGHTER2)),
        };
        rules.validate().map_err(DecodeError::BadArena)?;

        let mut fighters = [Fighter::at(0, 1, 0); 2];
        for (f, at) in fighters.iter_mut().zip(FIGHTER_FIELDS) {
            let facing = i8::from_le_bytes(r.get(at.facing));
            if facing != 1 && facing != -1 {
                return Err(bad(at.facing, facing));
            }
            let health = u16::from_le_bytes(r.get(at.health));
            if health > MAX_HEALTH {
                return Err(bad(at.health, health));
            }
            let height = i32::from_le_bytes(r.get(at.height));
            if height < 0 {
                return Err(bad(at.height, height));
            }
            *f = Fighter {
                x: i32::from_le_bytes(r.get(at.x)),
                height,
                vy: i32::from_le_bytes(r.get(at.vy)),
                drift: i16::from_le_bytes(r.get(at.drift)),
                push: i16::from_le_bytes(r.get(at.push)),
                health,
                facing,
                action: action_from(r.u8(at.action))
                    .ok_or_else(|| bad(at.action, r.u8(at.action)))?,
                action_frames: u16::from_le_bytes(r.get(at.action_frames)),
                attack_landed: bool_from(r.u8(at.attack_landed))
                    .ok_or_else(|| bad(at.attack_landed, r.u8(at.attack_landed)))?,
                round_wins: r.u8(at.round_wins),
                prev_buttons: u16::from_le_bytes(r.get(at.prev_buttons)),
            };
        }

        let phase = match r.u8(PHASE) {
            0 => Phase::Fighting,
            1 => Phase::RoundOver,
            2 => Phase::MatchOver,
            v => return Err(bad(PHASE, v)),
        };
        let round_winner = match r.u8(ROUND_WINNER) {
            0 => RoundWinner::None,
            1 => RoundWinner::Player1,
            2 => RoundWinner::Player2,
            3 => RoundWinner::Draw,
            v => return Err(bad(ROUND_WINNER, v)),
        };
        let round_end = match r.u8(ROUND_END) {
            0 => RoundEnd::NotYet,
            1 => RoundEnd::KnockOut,
            2 => RoundEnd::TimeOut,
            v => return Err(bad(ROUND_END, v)),
        };
        let sfx = match r.u8(AUDIO_SFX) {
            0 => Sfx::Silence,
            1 => Sfx::Jump,
            2 => Sfx::Hit,
            3 => Sfx::KnockOut,
            v => return Err(bad(AUDIO_SFX, v)),
        };

        let mut input_queue = [[0u16; 2]; MAX_INPUT_LAG];
        let queue: [u8; INPUT_QUEUE.len] = r.get(INPUT_QUEUE);
        for (pad, bytes) in input_queue
            .as_flattened_mut()
            .iter_mut()
            .zip(queue.chunks_exact(2))
        {
            *pad = u16::from_le_bytes([bytes[0], bytes[1]]);
            // The game keeps only the buttons it reads.
            if *pad & !crate::sim::USED_BUTTONS != 0 {
                return Err(bad(INPUT_QUEUE, *pad));
            }
        }

        Ok(State {
            phase,
            round: r.u8(ROUND),
            round_winner,
            round_end,
            frame: u32::from_le_bytes(r.get(FRAME)),
            timer_frames: u16::from_le_bytes(r.get(TIMER_FRAMES)),
            phase_frames: u16::from_le_bytes(r.get(PHASE_FRAMES)),
            rules,
            fighters,
            audio: AudioState {
                sfx,
                elapsed: u32::from_le_bytes(r.get(AUDIO_ELAPSED)),
                phase: u32::from_le_bytes(r.get(AUDIO_PHASE)),
                noise: u16::from_le_bytes(r.get(AUDIO_NOISE)),
            },
            input_queue,
        })
    }
}

fn bad(field: RamField, value: impl Into<i64>) -> DecodeError {
    DecodeError::BadField {
        field: field.name,
        value: value.into(),
    }
}

fn action_from(value: u8) -> Option<Action> {
    Some(match value {
        0 => Action::Idle,
        1 => Action::Walking,
        2 => Action::Airborne,
        3 => Action::Attacking,
        4 => Action::Blocking,
        5 => Action::HitStun,
        6 => Action::BlockStun,
        7 => Action::KnockedOut,
        _ => return None,
    })
}

fn bool_from(value: u8) -> Option<bool> {
    match value {
        0 => Some(false),
        1 => Some(true),
        _ => None,
    }
}

struct Writer<'a>(&'a mut StateBytes);

impl Writer<'_> {
    fn put<const N: usize>(&mut self, field: RamField, bytes: [u8; N]) {
        debug_assert_eq!(field.len, N, "{} is {} bytes", field.name, field.len);
        self.0[field.offset..field.offset + N].copy_from_slice(&bytes);
    }
}

struct Reader<'a>(&'a StateBytes);

impl Reader<'_> {
    fn get<const N: usize>(&self, field: RamField) -> [u8; N] {
        debug_assert_eq!(field.len, N, "{} is {} bytes", field.name, field.len);
        let mut out = [0u8; N];
        out.copy_from_slice(&self.0[field.offset..field.offset + N]);
        out
    }

    fn u8(&self, field: RamField) -> u8 {
        self.get::<1>(field)[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::dojo;

    fn busy_state() -> State {
        let mut s = dojo();
        s.phase = Phase::RoundOver;
        s.round = 3;
        s.round_winner = RoundWinner::Player2;
        s.round_end = RoundEnd::KnockOut;
        s.frame = 0x0102_0304;
        s.timer_frames = 1234;
        s.phase_frames = 77;
        s.fighters[0].x = -5;
        s.fighters[0].vy = -300;
        s.fighters[0].action = Action::BlockStun;
        s.fighters[0].attack_landed = true;
        s.fighters[1].health = 3;
        s.fighters[1].push = -64;
        s.fighters[1].facing = 1;
        s.fighters[1].prev_buttons = 0xffff;
        s.audio = AudioState {
            sfx: Sfx::KnockOut,
            elapsed: 999,
            phase: 0xdead_beef,
            noise: 7,
        };
        s.input_queue[1] = [crate::sim::PAD_A, crate::sim::PAD_LEFT];
        s
    }

    #[test]
    fn encode_then_decode_gives_back_the_same_state() {
        let state = busy_state();
        let bytes = state.encode();
        assert_eq!(State::decode(&bytes), Ok(state));
        assert_eq!(State::decode(&bytes).unwrap().encode(), bytes);
    }

    #[test]
    fn fields_land_at_their_documented_offsets_little_endian() {
        let state = busy_state();
        let bytes = state.encode();
        assert_eq!(bytes[VERSION.offset], STATE_VERSION);
        assert_eq!(&bytes[FRAME.range()], &[4, 3, 2, 1]);
        assert_eq!(&bytes[F1_X.range()], &(-5i32).to_le_bytes());
        assert_eq!(&bytes[F2_HEALTH.range()], &[3, 0]);
        assert_eq!(&bytes[AUDIO_PHASE.range()], &[0xef, 0xbe, 0xad, 0xde]);
        assert_eq!(&bytes[INPUT_QUEUE.offset + 4..][..4], &[0, 1, 64, 0]);
    }

    #[test]
    fn decode_rejects_the_wrong_size() {
        let bytes = busy_state().encode();
        assert_eq!(
            State::decode(&bytes[..STATE_SIZE - 1]),
            Err(DecodeError::WrongSize {
                expected: STATE_SIZE,
                found: STATE_SIZE - 1
            })
        );
        let mut longer = bytes.to_vec();
        longer.push(0);
        assert!(matches!(
            State::decode(&longer),
            Err(DecodeError::WrongSize { .. })
        ));
        assert!(matches!(
            State::decode(&[]),
            Err(DecodeError::WrongSize { .. })
        ));
    }

    #[test]
    fn decode_rejects_another_version() {
        let mut bytes = busy_state().encode();
        bytes[VERSION.offset] = STATE_VERSION + 1;
        assert_eq!(
            State::decode(&bytes),
            Err(DecodeError::WrongVersion {
                expected: STATE_VERSION,
                found: STATE_VERSION + 1
            })
        );
    }

    #[test]
    fn decode_rejects_impossible_values_and_names_the_field() {
        let cases: [(RamField, u8); 7] = [
            (INPUT_QUEUE, 0x04),
            (PHASE, 9),
            (F1_ACTION, 200),
            (F2_FACING, 0),
            (F1_ATTACK_LANDED, 2),
            (AUDIO_SFX, 4),
            (ARENA_ROUNDS_TO_WIN, 0),
        ];
        for (field, value) in cases {
            let mut bytes = busy_state().encode();
            bytes[field.offset] = value;
            let err = State::decode(&bytes).expect_err(field.name);
            let message = err.to_string();
            let short = field.name.rsplit('.').next().unwrap_or(field.name);
            assert!(
                message.contains(short),
                "{message} should name {}",
                field.name
            );
        }
    }

    #[test]
    fn decoding_arbitrary_bytes_never_panics() {
        let mut bytes = busy_state().encode();
        let mut x: u32 = 12345;
        for _ in 0..2000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let at = (x >> 8) as usize % STATE_SIZE;
            bytes[at] = (x >> 20) as u8;
            let _ = State::decode(&bytes);
        }
    }
}
