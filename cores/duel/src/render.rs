//! Draws a [`State`] into a 320x240 XRGB8888 frame: the arena, both
//! fighters as coloured shapes that show what they are doing, and the HUD
//! (health bars, round timer, round pips, round and match messages) in a
//! tiny hand-drawn 3x5 font. Pure: the same state always gives the same
//! pixels.

use crate::sim::{hitbox, match_leader, ATTACK_ACTIVE, ATTACK_HIGH, ATTACK_LOW, ATTACK_STARTUP};
use crate::state::*;

pub const WIDTH: usize = 320;
pub const HEIGHT: usize = 240;
/// Bytes per row of the frame handed to the frontend.
pub const PITCH: usize = WIDTH * 4;

/// One frame of XRGB8888 pixels, row-major.
pub type Framebuffer = [u32; WIDTH * HEIGHT];

/// A zeroed framebuffer on the heap (300 KB is too big for some stacks).
pub fn new_framebuffer() -> Box<Framebuffer> {
    vec![0u32; WIDTH * HEIGHT]
        .into_boxed_slice()
        .try_into()
        .unwrap_or_else(|_| unreachable!("the vector has exactly WIDTH * HEIGHT pixels"))
}

const SKIN: u32 = 0xf0_c0_90;
const EYE: u32 = 0x10_10_10;
const WHITE: u32 = 0xff_ff_ff;
const SHIELD: u32 = 0x90_e0_ff;
const BAR_BACK: u32 = 0x50_10_10;
const BAR_FILL: u32 = 0xf0_d0_20;
const PIP_WON: u32 = 0xff_c0_20;
const PIP_EMPTY: u32 = 0x40_40_40;
const TEXT: u32 = 0xff_ff_ff;
const TEXT_SHADOW: u32 = 0x00_00_00;
const HEALTH_BAR_WIDTH: i64 = 128;
/// Frames at a round's start during which "ROUND n" is shown.
const ROUND_BANNER_FRAMES: u16 = 60;

pub fn render(state: &State, fb: &mut Framebuffer) {
    let rules = &state.rules;
    let floor = i64::from(rules.floor);
    fill_rect(fb, 0, 0, WIDTH as i64, floor, rules.sky);
    fill_rect(
        fb,
        0,
        floor,
        WIDTH as i64,
        HEIGHT as i64 - floor,
        rules.ground,
    );
    // Outside the walls is shaded.
    let shade = dim(rules.sky);
    fill_rect(fb, 0, 0, i64::from(rules.wall_left), floor, shade);
    let right = i64::from(rules.wall_right);
    fill_rect(fb, right, 0, WIDTH as i64 - right, floor, shade);

    let colours = [rules.fighter1, rules.fighter2];
    for (f, colour) in state.fighters.iter().zip(colours) {
        draw_fighter(fb, f, floor, colour);
    }
    draw_hud(state, fb);
}

fn dim(colour: u32) -> u32 {
    (colour >> 1) & 0x7f_7f_7f
}

fn lighten(colour: u32) -> u32 {
    ((colour >> 1) & 0x7f_7f_7f) + 0x80_80_80
}

/// Screen x of a world x in subpixels.
fn screen_x(x: i32) -> i64 {
    i64::from(x) / i64::from(SUBPIXELS)
}

fn draw_fighter(fb: &mut Framebuffer, f: &Fighter, floor: i64, colour: u32) {
    let x = screen_x(f.x);
    let feet = floor - i64::from(f.height) / i64::from(SUBPIXELS);
    let w = i64::from(FIGHTER_WIDTH);
    let h = i64::from(FIGHTER_HEIGHT);
    let facing = if f.facing >= 0 { 1 } else { -1 };

    if f.action == Action::KnockedOut {
        // Lying flat, head on the side away from the winner.
        fill_rect(fb, x - h / 2, feet - 12, h, 12, colour);
        let head_x = if facing > 0 {
            x - h / 2 - 12
        } else {
            x + h / 2
        };
        fill_rect(fb, head_x, feet - 12, 12, 12, SKIN);
        return;
    }

    let stunned_flash = f.action == Action::HitStun && f.action_frames % 4 < 2;
    let body = if stunned_flash { WHITE } else { colour };
    fill_rect(fb, x - w / 2, feet - h, w, h, body);
    // Head with an eye on the side it faces.
    fill_rect(fb, x - 6, feet - h - 12, 12, 12, SKIN);
    fill_rect(fb, x + facing * 3 - 1, feet - h - 8, 2, 2, EYE);

    match f.action {
        Action::Attacking => {
            let arm_top = feet - i64::from(ATTACK_HIGH);
            let arm_height = i64::from(ATTACK_HIGH - ATTACK_LOW);
            let (length, arm_colour) = if hitbox(f).is_some() {
                (i64::from(crate::sim::ATTACK_REACH) + 4, WHITE)
            } else if f.action_frames < ATTACK_STARTUP {
                (6, lighten(colour))
            } else if f.action_frames < ATTACK_STARTUP + ATTACK_ACTIVE + 3 {
                (14, lighten(colour))
            } else {
                (8, lighten(colour))
            };
            let start = x + facing * (w / 2 - 4);
            let left = if facing > 0 { start } else { start - length };
            fill_rect(fb, left, arm_top, length, arm_height, arm_colour);
        }
        Action::Blocking | Action::BlockStun => {
            let shield_x = x + facing * (w / 2 + 2) - if facing > 0 { 0 } else { 4 };
            fill_rect(fb, shield_x, feet - h + 4, 4, h - 12, SHIELD);
        }
        _ => {}
    }
}

fn draw_hud(state: &State, fb: &mut Framebuffer) {
    // Health bars: player 1 drains towards the left edge, player 2 towards
    // the right edge.
    let bars = [8i64, WIDTH as i64 - 8 - HEALTH_BAR_WIDTH];
    for (i, (f, bar_x)) in state.fighters.iter().zip(bars).enumerate() {
        fill_rect(fb, bar_x - 1, 7, HEALTH_BAR_WIDTH + 2, 10, TEXT_SHADOW);
        fill_rect(fb, bar_x, 8, HEALTH_BAR_WIDTH, 8, BAR_BACK);
        let filled = HEALTH_BAR_WIDTH * i64::from(f.health.min(MAX_HEALTH)) / i64::from(MAX_HEALTH);
        let fill_x = if i == 0 {
            bar_x
        } else {
            bar_x + HEALTH_BAR_WIDTH - filled
        };
        fill_rect(fb, fill_x, 8, filled, 8, BAR_FILL);

        for pip in 0..i64::from(state.rules.rounds_to_win) {
            let pip_x = if i == 0 {
                bar_x + pip * 10
            } else {
                bar_x + HEALTH_BAR_WIDTH - 6 - pip * 10
            };
            let won = pip < i64::from(f.round_wins);
            fill_rect(fb, pip_x, 20, 6, 6, if won { PIP_WON } else { PIP_EMPTY });
        }
    }

    let seconds = state.timer_seconds().min(99);
    let digits = [b'0' + (seconds / 10) as u8, b'0' + (seconds % 10) as u8];
    draw_text_centered(fb, 4, 3, &digits);

    match state.phase {
        Phase::Fighting => {
            let full = u16::from(state.rules.round_seconds) * 60;
            if full.saturating_sub(state.timer_frames) < ROUND_BANNER_FRAMES {
                let mut banner = *b"ROUND  ";
                banner[6] = b'0' + state.round % 10;
                draw_text_centered(fb, 80, 4, &banner);
            }
        }
        Phase::RoundOver => {
            let headline: &[u8] = match state.round_end {
                RoundEnd::KnockOut => b"KO",
                RoundEnd::TimeOut => b"TIME",
                RoundEnd::NotYet => b"",
            };
            draw_text_centered(fb, 70, 8, headline);
            draw_text_centered(fb, 120, 3, winner_text(state.round_winner));
        }
        Phase::MatchOver => {
            draw_text_centered(fb, 70, 5, winner_text(match_leader(state)));
            draw_text_centered(fb, 120, 2, b"PRESS START");
        }
    }
}

fn winner_text(winner: RoundWinner) -> &'static [u8] {
    match winner {
        RoundWinner::Player1 => b"P1 WINS",
        RoundWinner::Player2 => b"P2 WINS",
        RoundWinner::Draw => b"DRAW",
        RoundWinner::None => b"",
    }
}

/// Fills a rectangle, clipped to the frame.
fn fill_rect(fb: &mut Framebuffer, x: i64, y: i64, w: i64, h: i64, colour: u32) {
    let x0 = x.clamp(0, WIDTH as i64) as usize;
    let x1 = x.saturating_add(w).clamp(0, WIDTH as i64) as usize;
    let y0 = y.clamp(0, HEIGHT as i64) as usize;
    let y1 = y.saturating_add(h).clamp(0, HEIGHT as i64) as usize;
    if x0 >= x1 {
        return;
    }
    for row in y0..y1 {
        fb[row * WIDTH + x0..row * WIDTH + x1].fill(colour);
    }
}

/// 3x5 glyphs, one row per byte, bit 2 is the leftmost pixel.
fn glyph(c: u8) -> Option<[u8; 5]> {
    Some(match c {
        b'0' => [0b111, 0b101, 0b101, 0b101, 0b111],
        b'1' => [0b010, 0b110, 0b010, 0b010, 0b111],
        b'2' => [0b111, 0b001, 0b111, 0b100, 0b111],
        b'3' => [0b111, 0b001, 0b111, 0b001, 0b111],
        b'4' => [0b101, 0b101, 0b111, 0b001, 0b001],
        b'5' => [0b111, 0b100, 0b111, 0b001, 0b111],
        b'6' => [0b111, 0b100, 0b111, 0b101, 0b111],
        b'7' => [0b111, 0b001, 0b001, 0b010, 0b010],
        b'8' => [0b111, 0b101, 0b111, 0b101, 0b111],
        b'9' => [0b111, 0b101, 0b111, 0b001, 0b111],
        b'A' => [0b010, 0b101, 0b111, 0b101, 0b101],
        b'D' => [0b110, 0b101, 0b101, 0b101, 0b110],
        b'E' => [0b111, 0b100, 0b110, 0b100, 0b111],
        b'I' => [0b111, 0b010, 0b010, 0b010, 0b111],
        b'K' => [0b101, 0b101, 0b110, 0b101, 0b101],
        b'M' => [0b101, 0b111, 0b111, 0b101, 0b101],
        b'N' => [0b110, 0b101, 0b101, 0b101, 0b101],
        b'O' => [0b010, 0b101, 0b101, 0b101, 0b010],
        b'P' => [0b110, 0b101, 0b110, 0b100, 0b100],
        b'R' => [0b110, 0b101, 0b110, 0b101, 0b101],
        b'S' => [0b011, 0b100, 0b010, 0b001, 0b110],
        b'T' => [0b111, 0b010, 0b010, 0b010, 0b010],
        b'U' => [0b101, 0b101, 0b101, 0b101, 0b111],
        b'W' => [0b101, 0b101, 0b111, 0b111, 0b101],
        _ => return None,
    })
}

/// Draws text centred on the screen's width, with a one-pixel shadow.
fn draw_text_centered(fb: &mut Framebuffer, y: i64, scale: i64, text: &[u8]) {
    let width = (text.len() as i64 * 4 - 1) * scale;
    let x = (WIDTH as i64 - width) / 2;
    draw_text(fb, x + 1, y + 1, scale, TEXT_SHADOW, text);
    draw_text(fb, x, y, scale, TEXT, text);
}

fn draw_text(fb: &mut Framebuffer, x: i64, y: i64, scale: i64, colour: u32, text: &[u8]) {
    for (i, &c) in text.iter().enumerate() {
        let Some(rows) = glyph(c) else { continue };
        let gx = x + i as i64 * 4 * scale;
        for (r, bits) in rows.iter().enumerate() {
            for col in 0..3 {
                if bits & (0b100 >> col) != 0 {
                    let px = gx + col * scale;
                    let py = y + r as i64 * scale;
                    fill_rect(fb, px, py, scale, scale, colour);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::dojo;
    use crate::sim::{step, PAD_A, PAD_RIGHT};

    fn picture(s: &State) -> Box<Framebuffer> {
        let mut fb = new_framebuffer();
        render(s, &mut fb);
        fb
    }

    fn pixel(fb: &Framebuffer, x: usize, y: usize) -> u32 {
        fb[y * WIDTH + x]
    }

    #[test]
    fn the_same_state_draws_the_same_pixels() {
        let s = dojo();
        assert_eq!(picture(&s), picture(&s));
    }

    #[test]
    fn the_health_bar_shrinks_when_health_is_lost() {
        let mut s = dojo();
        let full = picture(&s);
        assert_eq!(pixel(&full, 8 + 120, 12), BAR_FILL);
        s.fighters[0].health = MAX_HEALTH / 2;
        let half = picture(&s);
        assert_eq!(pixel(&half, 8 + 120, 12), BAR_BACK);
        assert_eq!(pixel(&half, 8 + 10, 12), BAR_FILL);
    }

    #[test]
    fn fighters_look_different_when_attacking_or_blocking() {
        let idle = picture(&dojo());
        let mut attacking = dojo();
        for _ in 0..ATTACK_STARTUP + 1 {
            step(&mut attacking, [PAD_A, 0]);
        }
        assert_ne!(picture(&attacking), idle);
        let mut blocking = dojo();
        step(&mut blocking, [0, PAD_RIGHT]);
        assert_eq!(blocking.fighters[1].action, Action::Blocking);
        let mut moved_only = dojo();
        moved_only.fighters[1].x = blocking.fighters[1].x;
        assert_ne!(picture(&blocking), picture(&moved_only));
    }

    #[test]
    fn the_timer_digits_change_as_seconds_pass() {
        let mut s = dojo();
        let at_60 = picture(&s);
        for _ in 0..60 {
            step(&mut s, [0, 0]);
        }
        let at_59 = picture(&s);
        let timer_area = |fb: &Framebuffer| -> Vec<u32> {
            (4..20)
                .flat_map(|y| (140..180).map(move |x| (x, y)))
                .map(|(x, y)| pixel(fb, x, y))
                .collect()
        };
        assert_ne!(timer_area(&at_60), timer_area(&at_59));
    }

    #[test]
    fn fighters_far_outside_the_screen_are_clipped_not_a_crash() {
        let mut s = dojo();
        s.fighters[0].x = i32::MIN;
        s.fighters[1].x = i32::MAX;
        s.fighters[1].height = i32::MAX;
        s.fighters[0].action = Action::Attacking;
        s.fighters[0].action_frames = ATTACK_STARTUP;
        let _ = picture(&s);
    }
}
