//! The simulation: one pure function from (state, both pads) to the next
//! state. Integer math only, both fighters decided from the same snapshot so
//! neither player's port order matters.

use crate::state::*;

/// RetroPad bits (bit n = `RETRO_DEVICE_ID_JOYPAD_*` id n).
pub const PAD_B: u16 = 1 << 0;
pub const PAD_START: u16 = 1 << 3;
pub const PAD_UP: u16 = 1 << 4;
pub const PAD_LEFT: u16 = 1 << 6;
pub const PAD_RIGHT: u16 = 1 << 7;
pub const PAD_A: u16 = 1 << 8;
/// The only buttons the game reads; others are dropped on entry to [`step`]
/// so they leave no trace in the state.
pub const USED_BUTTONS: u16 = PAD_B | PAD_START | PAD_UP | PAD_LEFT | PAD_RIGHT | PAD_A;

/// Speeds in 1/16 px per frame.
pub const WALK_SPEED: i32 = 2 * SUBPIXELS;
pub const BACK_SPEED: i32 = SUBPIXELS;
pub const JUMP_SPEED: i32 = 6 * SUBPIXELS;
/// Attack timeline in frames: startup, then active (the fist can hit), then
/// recovery.
pub const ATTACK_STARTUP: u16 = 5;
pub const ATTACK_ACTIVE: u16 = 4;
pub const ATTACK_RECOVERY: u16 = 10;
pub const ATTACK_TOTAL: u16 = ATTACK_STARTUP + ATTACK_ACTIVE + ATTACK_RECOVERY;
/// How far the fist reaches past the body, and the band of height it covers
/// (pixels above the attacker's feet).
pub const ATTACK_REACH: i32 = 20;
pub const ATTACK_LOW: i32 = 26;
pub const ATTACK_HIGH: i32 = 34;
pub const HIT_DAMAGE: u16 = 10;
/// Damage a blocked attack still does.
pub const CHIP_DAMAGE: u16 = 1;
pub const HIT_STUN: u16 = 18;
pub const BLOCK_STUN: u16 = 10;
/// Knock-back speeds (1/16 px per frame), decaying by `PUSH_DECAY` a frame.
pub const HIT_PUSH: i16 = 64;
pub const BLOCK_PUSH: i16 = 40;
pub const PUSH_DECAY: i16 = 8;
/// Pause between a round's end and what comes next.
pub const ROUND_OVER_FRAMES: u16 = 120;
/// A match with this many rounds ends even if draws kept anyone from winning.
pub const MAX_ROUNDS: u8 = 9;

/// An axis-aligned box in 1/16 px, y measured upwards from the floor;
/// half-open on both axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Box2 {
    pub left: i32,
    pub right: i32,
    pub bottom: i32,
    pub top: i32,
}

impl Box2 {
    pub fn overlaps(&self, other: &Box2) -> bool {
        self.left < other.right
            && other.left < self.right
            && self.bottom < other.top
            && other.bottom < self.top
    }
}

/// Where a fighter can be hit: the whole body.
pub fn hurtbox(f: &Fighter) -> Box2 {
    let half = FIGHTER_WIDTH * SUBPIXELS / 2;
    Box2 {
        left: f.x - half,
        right: f.x + half,
        bottom: f.height,
        top: f.height + FIGHTER_HEIGHT * SUBPIXELS,
    }
}

/// Where a fighter's attack hits, if the attack is in its active frames.
pub fn hitbox(f: &Fighter) -> Option<Box2> {
    let active = f.action == Action::Attacking
        && (ATTACK_STARTUP..ATTACK_STARTUP + ATTACK_ACTIVE).contains(&f.action_frames);
    if !active {
        return None;
    }
    let near = (FIGHTER_WIDTH / 2 - 4) * SUBPIXELS;
    let far = (FIGHTER_WIDTH / 2 + ATTACK_REACH) * SUBPIXELS;
    let (left, right) = if f.facing >= 0 {
        (f.x + near, f.x + far)
    } else {
        (f.x - far, f.x - near)
    };
    Some(Box2 {
        left,
        right,
        bottom: f.height + ATTACK_LOW * SUBPIXELS,
        top: f.height + ATTACK_HIGH * SUBPIXELS,
    })
}

/// Advances the game one frame with `inputs[n]` held on port n.
pub fn step(state: &mut State, inputs: [u16; 2]) {
    step_applying(state, inputs.map(|held| held & USED_BUTTONS));
}

/// [`step`] for a game with `lag` frames of input lag (0 to
/// [`MAX_INPUT_LAG`], more counts as the most): the pads `read` this frame
/// are applied `lag` frames later, those read `lag` frames ago now. Lag 0
/// is [`step`], the queue left as it is.
pub fn step_with_lag(state: &mut State, read: [u16; 2], lag: usize) {
    let lag = lag.min(MAX_INPUT_LAG);
    if lag == 0 {
        return step(state, read);
    }
    let applied = state.input_queue[lag - 1];
    state.input_queue.copy_within(..MAX_INPUT_LAG - 1, 1);
    state.input_queue[0] = read.map(|held| held & USED_BUTTONS);
    step_applying(state, applied);
}

fn step_applying(state: &mut State, inputs: [u16; 2]) {
    let inputs = inputs.map(|held| held & USED_BUTTONS);
    state.frame = state.frame.wrapping_add(1);
    match state.phase {
        Phase::Fighting => fight(state, inputs),
        Phase::RoundOver => {
            // Nobody controls a fighter now, but attacks and stuns run out
            // and jumps come down.
            let xs = [state.fighters[0].x, state.fighters[1].x];
            for (me, f) in state.fighters.iter_mut().enumerate() {
                control(f, 0, false, false, xs[1 - me]);
                move_body(f, &state.rules);
            }
            separate_and_clamp(state);
            state.phase_frames = state.phase_frames.saturating_sub(1);
            if state.phase_frames == 0 {
                finish_pause(state);
            }
        }
        Phase::MatchOver => {
            let start_pressed = (0..2).any(|i| pressed(state, inputs, i, PAD_START));
            if start_pressed {
                // Presses already read still arrive, however much lag.
                let queue = state.input_queue;
                *state = State::new(state.rules);
                state.input_queue = queue;
            }
        }
    }
    for (f, held) in state.fighters.iter_mut().zip(inputs) {
        f.prev_buttons = held;
    }
}

fn pressed(state: &State, inputs: [u16; 2], player: usize, mask: u16) -> bool {
    inputs[player] & mask != 0 && state.fighters[player].prev_buttons & mask == 0
}

fn fight(state: &mut State, inputs: [u16; 2]) {
    let xs = [state.fighters[0].x, state.fighters[1].x];
    let mut sfx = Sfx::Silence;
    for me in 0..2 {
        let attack = pressed(state, inputs, me, PAD_A);
        let jump = pressed(state, inputs, me, PAD_UP) || pressed(state, inputs, me, PAD_B);
        let held = inputs[me];
        let f = &mut state.fighters[me];
        if control(f, held, attack, jump, xs[1 - me]) {
            sfx = louder(sfx, Sfx::Jump);
        }
        move_body(f, &state.rules);
    }
    separate_and_clamp(state);

    // Both attacks are judged before either lands, so a trade hits both.
    let hits = [
        lands(&state.fighters[0], &state.fighters[1]),
        lands(&state.fighters[1], &state.fighters[0]),
    ];
    for (attacker, hit) in hits.into_iter().enumerate() {
        if hit {
            let facing = state.fighters[attacker].facing;
            state.fighters[attacker].attack_landed = true;
            take_hit(&mut state.fighters[1 - attacker], facing);
            sfx = louder(sfx, Sfx::Hit);
        }
    }

    state.timer_frames = state.timer_frames.saturating_sub(1);
    let knocked_out = [state.fighters[0].health == 0, state.fighters[1].health == 0];
    let ended = if knocked_out[0] || knocked_out[1] {
        for (f, ko) in state.fighters.iter_mut().zip(knocked_out) {
            if ko {
                f.action = Action::KnockedOut;
                f.action_frames = 0;
            }
        }
        sfx = louder(sfx, Sfx::KnockOut);
        Some((
            RoundEnd::KnockOut,
            winner_by(!knocked_out[0], !knocked_out[1]),
        ))
    } else if state.timer_frames == 0 {
        let (h0, h1) = (state.fighters[0].health, state.fighters[1].health);
        Some((RoundEnd::TimeOut, winner_by(h0 > h1, h1 > h0)))
    } else {
        None
    };
    if let Some((how, winner)) = ended {
        state.round_end = how;
        state.round_winner = winner;
        let index = match winner {
            RoundWinner::Player1 => Some(0),
            RoundWinner::Player2 => Some(1),
            RoundWinner::None | RoundWinner::Draw => None,
        };
        if let Some(i) = index {
            let wins = &mut state.fighters[i].round_wins;
            *wins = wins.saturating_add(1);
        }
        state.phase = Phase::RoundOver;
        state.phase_frames = ROUND_OVER_FRAMES;
    }
    if sfx != Sfx::Silence {
        start_sound(&mut state.audio, sfx);
    }
}

fn winner_by(first_ahead: bool, second_ahead: bool) -> RoundWinner {
    match (first_ahead, second_ahead) {
        (true, false) => RoundWinner::Player1,
        (false, true) => RoundWinner::Player2,
        _ => RoundWinner::Draw,
    }
}

fn louder(a: Sfx, b: Sfx) -> Sfx {
    if b as u8 > a as u8 {
        b
    } else {
        a
    }
}

/// A new sound replaces the playing one unless that one matters more.
pub fn start_sound(audio: &mut AudioState, sfx: Sfx) {
    if sfx as u8 >= audio.sfx as u8 {
        audio.sfx = sfx;
        audio.elapsed = 0;
        audio.phase = 0;
    }
}

/// Applies one fighter's pad to its action. Returns true if it jumped.
fn control(f: &mut Fighter, held: u16, attack: bool, jump: bool, opponent_x: i32) -> bool {
    match f.action {
        Action::HitStun | Action::BlockStun => {
            f.action_frames = f.action_frames.saturating_sub(1);
            if f.action_frames == 0 {
                f.action = if f.height > 0 {
                    Action::Airborne
                } else {
                    Action::Idle
                };
            }
            false
        }
        Action::Attacking => {
            f.action_frames = f.action_frames.saturating_add(1);
            if f.action_frames >= ATTACK_TOTAL {
                f.action = Action::Idle;
                f.action_frames = 0;
            }
            false
        }
        Action::Airborne | Action::KnockedOut => false,
        Action::Idle | Action::Walking | Action::Blocking => {
            if opponent_x != f.x {
                f.facing = if opponent_x > f.x { 1 } else { -1 };
            }
            let left = held & PAD_LEFT != 0;
            let right = held & PAD_RIGHT != 0;
            // Both directions at once cancel out.
            let direction: i32 = match (left, right) {
                (true, false) => -1,
                (false, true) => 1,
                _ => 0,
            };
            let back = direction != 0 && direction != i32::from(f.facing);
            let forward = direction != 0 && !back;
            f.action_frames = 0;
            if attack {
                f.action = Action::Attacking;
                f.attack_landed = false;
                false
            } else if jump {
                f.action = Action::Airborne;
                f.vy = JUMP_SPEED;
                f.height = f.height.max(1);
                f.drift = (direction * if back { BACK_SPEED } else { WALK_SPEED }) as i16;
                true
            } else if back {
                f.action = Action::Blocking;
                f.x = f.x.saturating_add(direction * BACK_SPEED);
                false
            } else if forward {
                f.action = Action::Walking;
                f.x = f.x.saturating_add(direction * WALK_SPEED);
                false
            } else {
                f.action = Action::Idle;
                false
            }
        }
    }
}

/// Gravity, jump drift and knock-back.
fn move_body(f: &mut Fighter, rules: &crate::arena::ArenaRules) {
    if f.height > 0 || f.vy > 0 {
        f.height = f.height.saturating_add(f.vy);
        f.vy = f.vy.saturating_sub(i32::from(rules.gravity));
        f.x = f.x.saturating_add(i32::from(f.drift));
        if f.height <= 0 {
            f.height = 0;
            f.vy = 0;
            f.drift = 0;
            if f.action == Action::Airborne {
                f.action = Action::Idle;
            }
        }
    }
    if f.push != 0 {
        f.x = f.x.saturating_add(i32::from(f.push));
        let decay = PUSH_DECAY.min(f.push.saturating_abs());
        f.push -= decay * f.push.signum();
    }
}

/// Keeps bodies from overlapping (unless one is clear over the other's head)
/// and inside the walls.
fn separate_and_clamp(state: &mut State) {
    let half = FIGHTER_WIDTH * SUBPIXELS / 2;
    let min_x = i32::from(state.rules.wall_left) * SUBPIXELS + half;
    let max_x = i32::from(state.rules.wall_right) * SUBPIXELS - half;
    let [a, b] = &mut state.fighters;
    a.x = a.x.clamp(min_x, max_x);
    b.x = b.x.clamp(min_x, max_x);
    let width = FIGHTER_WIDTH * SUBPIXELS;
    let vertical_overlap = (a.height - b.height).abs() < FIGHTER_HEIGHT * SUBPIXELS;
    let gap = (a.x - b.x).abs();
    if !vertical_overlap || gap >= width {
        return;
    }
    // The one further left (player 1 on a tie) goes left.
    let (left, right) = if a.x <= b.x { (a, b) } else { (b, a) };
    let overlap = width - gap;
    left.x -= overlap / 2;
    right.x += overlap - overlap / 2;
    if left.x < min_x {
        left.x = min_x;
        right.x = min_x + width;
    }
    if right.x > max_x {
        right.x = max_x;
        left.x = max_x - width;
    }
}

fn lands(attacker: &Fighter, defender: &Fighter) -> bool {
    !attacker.attack_landed
        && defender.action != Action::KnockedOut
        && hitbox(attacker).is_some_and(|hit| hit.overlaps(&hurtbox(defender)))
}

fn take_hit(f: &mut Fighter, attacker_facing: i8) {
    let blocking = f.height == 0 && matches!(f.action, Action::Blocking | Action::BlockStun);
    let direction = if attacker_facing >= 0 { 1 } else { -1 };
    if blocking {
        f.health = f.health.saturating_sub(CHIP_DAMAGE);
        f.action = Action::BlockStun;
        f.action_frames = BLOCK_STUN;
        f.push = direction * BLOCK_PUSH;
    } else {
        f.health = f.health.saturating_sub(HIT_DAMAGE);
        f.action = Action::HitStun;
        f.action_frames = HIT_STUN;
        f.push = direction * HIT_PUSH;
    }
}

/// Starting a round after the pause, or ending the match.
fn finish_pause(state: &mut State) {
    let needed = state.rules.rounds_to_win;
    let someone_won = state.fighters.iter().any(|f| f.round_wins >= needed);
    if someone_won || state.round >= MAX_ROUNDS {
        state.phase = Phase::MatchOver;
    } else {
        state.round += 1;
        state.start_round();
    }
}

/// Who won the match so far: more round wins, or a draw.
pub fn match_leader(state: &State) -> RoundWinner {
    let (a, b) = (state.fighters[0].round_wins, state.fighters[1].round_wins);
    winner_by(a > b, b > a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{dojo, moon};

    /// Fighters one body apart in the middle of the dojo, facing each other.
    fn close_quarters() -> State {
        let mut s = dojo();
        s.fighters[0].x = 150 * SUBPIXELS;
        s.fighters[1].x = (150 + FIGHTER_WIDTH + 2) * SUBPIXELS;
        s
    }

    fn run(s: &mut State, frames: usize, inputs: [u16; 2]) {
        for _ in 0..frames {
            step(s, inputs);
        }
    }

    /// Player 1 presses A once, player 2 holds `p2` throughout.
    fn p1_attacks(s: &mut State, p2: u16) {
        step(s, [PAD_A, p2]);
        run(s, ATTACK_TOTAL as usize + 2, [0, p2]);
    }

    #[test]
    fn with_input_lag_a_press_is_applied_exactly_that_many_frames_later() {
        for lag in 0..=MAX_INPUT_LAG {
            let mut lagged = dojo();
            let mut prompt = dojo();
            // The press is read on frame 0; the prompt game gets it on frame `lag`.
            for frame in 0..12 {
                let read = if frame == 0 { [PAD_RIGHT, 0] } else { [0, 0] };
                let now = if frame == lag { [PAD_RIGHT, 0] } else { [0, 0] };
                step_with_lag(&mut lagged, read, lag);
                step(&mut prompt, now);
                assert_eq!(lagged.fighters, prompt.fighters, "lag {lag}, frame {frame}");
            }
        }
    }

    #[test]
    fn a_hit_costs_health_and_pushes_back() {
        let mut s = close_quarters();
        let x_before = s.fighters[1].x;
        p1_attacks(&mut s, 0);
        assert_eq!(s.fighters[1].health, MAX_HEALTH - HIT_DAMAGE);
        assert_eq!(s.fighters[0].health, MAX_HEALTH);
        assert!(
            s.fighters[1].x > x_before,
            "the hit pushes the defender away"
        );
        assert_eq!(s.audio.sfx, Sfx::Hit);
    }

    #[test]
    fn an_attack_hits_only_once() {
        let mut s = close_quarters();
        step(&mut s, [PAD_A, 0]);
        for _ in 0..ATTACK_TOTAL {
            step(&mut s, [0, 0]);
        }
        assert_eq!(s.fighters[1].health, MAX_HEALTH - HIT_DAMAGE);
    }

    #[test]
    fn a_defender_stunned_by_a_hit_cannot_act() {
        let mut s = close_quarters();
        run(&mut s, ATTACK_STARTUP as usize + 1, [PAD_A, 0]);
        assert_eq!(s.fighters[1].action, Action::HitStun);
        step(&mut s, [0, PAD_A]);
        assert_eq!(s.fighters[1].action, Action::HitStun);
    }

    #[test]
    fn blocking_reduces_damage() {
        let mut s = close_quarters();
        // Player 2 faces left, so holding RIGHT is holding back.
        p1_attacks(&mut s, PAD_RIGHT);
        let blocked_loss = MAX_HEALTH - s.fighters[1].health;
        assert_eq!(blocked_loss, CHIP_DAMAGE);
        assert!(blocked_loss < HIT_DAMAGE);
    }

    #[test]
    fn holding_towards_the_opponent_does_not_block() {
        let mut s = close_quarters();
        p1_attacks(&mut s, PAD_LEFT);
        assert_eq!(s.fighters[1].health, MAX_HEALTH - HIT_DAMAGE);
    }

    #[test]
    fn an_attack_out_of_reach_misses() {
        let mut s = dojo();
        p1_attacks(&mut s, 0);
        assert_eq!(s.fighters[1].health, MAX_HEALTH);
    }

    #[test]
    fn fighters_face_each_other_after_crossing() {
        let mut s = close_quarters();
        s.fighters[0].x = s.fighters[1].x + 40 * SUBPIXELS;
        step(&mut s, [0, 0]);
        assert_eq!(s.fighters[0].facing, -1);
        assert_eq!(s.fighters[1].facing, 1);
    }

    #[test]
    fn a_jump_rises_then_lands_on_the_floor() {
        let mut s = dojo();
        step(&mut s, [PAD_UP, 0]);
        assert_eq!(s.fighters[0].action, Action::Airborne);
        assert_eq!(s.audio.sfx, Sfx::Jump);
        run(&mut s, 10, [0, 0]);
        assert!(s.fighters[0].height > 0);
        run(&mut s, 60, [0, 0]);
        assert_eq!(s.fighters[0].height, 0);
        assert_eq!(s.fighters[0].action, Action::Idle);
    }

    #[test]
    fn walls_hold_fighters_in_the_arena() {
        let mut s = dojo();
        run(&mut s, 300, [PAD_LEFT, PAD_RIGHT]);
        let half = FIGHTER_WIDTH / 2;
        assert_eq!(
            s.fighters[0].x,
            (i32::from(s.rules.wall_left) + half) * SUBPIXELS
        );
        assert_eq!(
            s.fighters[1].x,
            (i32::from(s.rules.wall_right) - half) * SUBPIXELS
        );
    }

    #[test]
    fn fighters_cannot_walk_through_each_other() {
        let mut s = dojo();
        run(&mut s, 200, [PAD_RIGHT, PAD_LEFT]);
        let gap = s.fighters[1].x - s.fighters[0].x;
        assert!(gap >= FIGHTER_WIDTH * SUBPIXELS, "gap {gap}");
    }

    #[test]
    fn timer_expiry_ends_the_round_and_the_healthier_fighter_wins() {
        let mut s = close_quarters();
        p1_attacks(&mut s, 0);
        let frames_left = s.timer_frames as usize;
        run(&mut s, frames_left - 1, [0, 0]);
        assert_eq!(s.phase, Phase::Fighting);
        step(&mut s, [0, 0]);
        assert_eq!(s.phase, Phase::RoundOver);
        assert_eq!(s.round_end, RoundEnd::TimeOut);
        assert_eq!(s.round_winner, RoundWinner::Player1);
        assert_eq!(s.fighters[0].round_wins, 1);
    }

    #[test]
    fn the_timer_counts_seconds_at_sixty_frames_each() {
        let mut s = dojo();
        assert_eq!(s.timer_seconds(), 60);
        run(&mut s, 60, [0, 0]);
        assert_eq!(s.timer_seconds(), 59);
        run(&mut s, 1, [0, 0]);
        assert_eq!(s.timer_seconds(), 59);
    }

    /// Player 1 punches player 2 until the round ends with a KO.
    fn knock_out_player_two(s: &mut State) {
        let round = s.round;
        for _ in 0..100 {
            if s.phase != Phase::Fighting {
                break;
            }
            s.fighters[0].x = s.fighters[1].x - (FIGHTER_WIDTH + 2) * SUBPIXELS;
            p1_attacks(s, 0);
        }
        assert_eq!(s.phase, Phase::RoundOver);
        assert_eq!(s.round, round);
        assert_eq!(s.round_end, RoundEnd::KnockOut);
        assert_eq!(s.fighters[1].action, Action::KnockedOut);
        run(s, ATTACK_TOTAL as usize, [PAD_A, PAD_A]);
        assert_eq!(
            s.fighters[0].action,
            Action::Idle,
            "the winner's attack runs out"
        );
        assert_eq!(
            s.fighters[1].action,
            Action::KnockedOut,
            "the loser stays down"
        );
        let pause = (0..=ROUND_OVER_FRAMES)
            .position(|_| {
                step(s, [0, 0]);
                s.phase != Phase::RoundOver
            })
            .expect("the pause after a round ends");
        assert!(pause < ROUND_OVER_FRAMES as usize);
    }

    #[test]
    fn knockouts_lead_to_the_next_round_then_match_over_and_start_restarts() {
        let mut s = close_quarters();
        knock_out_player_two(&mut s);
        assert_eq!(s.phase, Phase::Fighting);
        assert_eq!(s.round, 2);
        assert_eq!(s.fighters[0].round_wins, 1);
        assert_eq!(
            s.fighters[1].health, MAX_HEALTH,
            "health refills each round"
        );
        assert_eq!(s.timer_frames, 60 * 60);

        knock_out_player_two(&mut s);
        assert_eq!(s.phase, Phase::MatchOver);
        assert_eq!(match_leader(&s), RoundWinner::Player1);

        // Nothing but START leaves the match-over screen.
        run(&mut s, 30, [PAD_A | PAD_LEFT, PAD_B]);
        assert_eq!(s.phase, Phase::MatchOver);
        step(&mut s, [0, PAD_START]);
        assert_eq!(s.phase, Phase::Fighting);
        assert_eq!(s.round, 1);
        assert_eq!(s.fighters[0].round_wins, 0);
    }

    #[test]
    fn a_ko_plays_the_ko_sound() {
        let mut s = close_quarters();
        s.fighters[1].health = 1;
        p1_attacks(&mut s, 0);
        assert_eq!(s.audio.sfx, Sfx::KnockOut);
    }

    #[test]
    fn draws_cannot_make_a_match_last_forever() {
        let mut s = moon();
        let round_frames = 15 * 60 + ROUND_OVER_FRAMES as usize;
        run(&mut s, round_frames * MAX_ROUNDS as usize, [0, 0]);
        assert_eq!(s.phase, Phase::MatchOver);
        assert_eq!(match_leader(&s), RoundWinner::Draw);
    }

    #[test]
    fn the_arena_changes_the_game() {
        let dojo = dojo();
        let moon = moon();
        assert_ne!(dojo.timer_frames, moon.timer_frames);
        assert_ne!(dojo.fighters[0].x, moon.fighters[0].x);
        // Lower gravity keeps a jump in the air longer.
        let airtime = |mut s: State| {
            step(&mut s, [PAD_UP, 0]);
            (0..500)
                .position(|_| {
                    step(&mut s, [0, 0]);
                    s.fighters[0].height == 0
                })
                .unwrap()
        };
        assert!(airtime(moon) > airtime(dojo));
    }
}
