//! Driving the launcher with a controller alone: the D-pad moves between
//! widgets (as Tab and Shift+Tab do), A or Start presses the one chosen
//! (Space), B goes back (Esc). The keys are fed to the window as SDL
//! events, the path the keyboard's take.

use netcode::input::Buttons;
use sdl2::keyboard::{Keycode, Mod};

/// The keys standing for the buttons pressed since `before` (held
/// buttons repeat nothing).
pub fn pad_keys(before: Buttons, now: Buttons) -> Vec<(Keycode, Mod)> {
    let next = (Keycode::Tab, Mod::NOMOD);
    let previous = (Keycode::Tab, Mod::LSHIFTMOD);
    let press = (Keycode::Space, Mod::NOMOD);
    let back = (Keycode::Escape, Mod::NOMOD);
    [
        (Buttons::DOWN, next),
        (Buttons::RIGHT, next),
        (Buttons::UP, previous),
        (Buttons::LEFT, previous),
        (Buttons::A, press),
        (Buttons::START, press),
        (Buttons::B, back),
    ]
    .into_iter()
    .filter(|(button, _)| now.contains(*button) && !before.contains(*button))
    .map(|(_, key)| key)
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_d_pad_moves_a_or_start_presses_and_b_goes_back_once_per_press() {
        assert_eq!(
            pad_keys(Buttons::NONE, Buttons::DOWN),
            [(Keycode::Tab, Mod::NOMOD)]
        );
        assert_eq!(
            pad_keys(Buttons::NONE, Buttons::UP),
            [(Keycode::Tab, Mod::LSHIFTMOD)]
        );
        assert_eq!(
            pad_keys(Buttons::NONE, Buttons::A),
            [(Keycode::Space, Mod::NOMOD)]
        );
        assert_eq!(
            pad_keys(Buttons::NONE, Buttons::B),
            [(Keycode::Escape, Mod::NOMOD)]
        );
        assert!(
            pad_keys(Buttons::DOWN, Buttons::DOWN).is_empty(),
            "held: once"
        );
        assert!(
            pad_keys(Buttons::A, Buttons::NONE).is_empty(),
            "let go: nothing"
        );
    }
}
