//! A game's own input lag L (`netcade latency`): from savestates along a
//! run, each button gets two branches — held from the first frame after
//! the state (the first frame the core reads it), and not held — and L is
//! the first frame of the branch whose picture differs (0: the very frame
//! that read the press). A press cannot show before the game's lag, while
//! the game's situation can delay it (mid-animation, against a wall): a
//! button's lag is the earliest over the states, and the game's the
//! median over its buttons. Run-ahead of L frames hides it all.

use crate::engine::inputs::InputSource;
use crate::engine::AppError;
use netcode::checksum::Checksum;
use netcode::emulator::Emulator;
use netcode::input::{Buttons, BUTTON_NAMES, MAX_PLAYERS};

/// The buttons tried: the RetroPad's twelve (the sticks' clicks and the
/// second shoulders are rarely read).
pub const BUTTONS_TRIED: usize = 12;

/// Where and how far the branches are run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LatencyPlan {
    /// Frames run (with the run's inputs) before the first state.
    pub warmup: u32,
    /// States the branches start from.
    pub states: u32,
    /// Frames between two states.
    pub spacing: u32,
    /// Frames each branch runs: a press not seen by then has no effect.
    pub horizon: u32,
}

/// What the branches found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Latency {
    /// The frames the states were taken at.
    pub state_frames: Vec<u32>,
    /// Each button tried, by name, with its lag: the earliest first
    /// differing frame over the states (`None`: no effect within the
    /// horizon from any of them).
    pub buttons: Vec<(&'static str, Option<u32>)>,
    /// Each state's first differing frame per button, in [`BUTTON_NAMES`]
    /// order (what the earliest is taken over).
    pub by_state: Vec<[Option<u32>; BUTTONS_TRIED]>,
    /// The plan followed.
    pub plan: LatencyPlan,
}

impl Latency {
    /// The game's lag: the median over the buttons that showed (the lower
    /// middle of an even count), `None` when none did.
    pub fn lag_frames(&self) -> Option<u32> {
        let mut lags: Vec<u32> = self.buttons.iter().filter_map(|(_, lag)| *lag).collect();
        lags.sort_unstable();
        lags.get(lags.len().checked_sub(1)? / 2).copied()
    }
}

/// Measures `game`'s lag as `plan` says, its run driven by `inputs`
/// (player 1's buttons in the branches are the button tried or nothing;
/// everyone else holds nothing).
pub fn measure_latency<G: Emulator + ?Sized>(
    game: &mut G,
    inputs: &mut InputSource,
    plan: LatencyPlan,
) -> Result<Latency, AppError> {
    let mut frame = 0;
    let mut state = Vec::new();
    let mut state_frames = Vec::new();
    let mut earliest = [None::<u32>; BUTTONS_TRIED];
    let mut by_state = Vec::new();
    let mut idle = Vec::new();
    let mut pressed = Vec::new();
    for index in 0..plan.states {
        let until = plan.warmup + index * plan.spacing;
        while frame < until {
            game.run_frame(&inputs.next_frame(), true);
            game.check_running().map_err(AppError::at_frame(frame))?;
            frame += 1;
        }
        game.save_state(&mut state)
            .map_err(AppError::at_frame(frame))?;
        state_frames.push(frame);
        branch(game, &state, Buttons::NONE, plan.horizon, &mut idle, frame)?;
        let mut here = [None; BUTTONS_TRIED];
        for (id, (lag, seen)) in earliest.iter_mut().zip(&mut here).enumerate() {
            let button = Buttons::from_bits(1 << id);
            branch(game, &state, button, plan.horizon, &mut pressed, frame)?;
            let differs = idle.iter().zip(&pressed).position(|(a, b)| a != b);
            *seen = differs.map(|at| at as u32);
            if let Some(first) = *seen {
                *lag = Some(lag.map_or(first, |known: u32| known.min(first)));
            }
        }
        by_state.push(here);
        // The run goes on from where it was.
        game.load_state(&state).map_err(AppError::at_frame(frame))?;
    }
    Ok(Latency {
        state_frames,
        buttons: BUTTON_NAMES.iter().copied().zip(earliest).collect(),
        by_state,
        plan,
    })
}

/// Runs `horizon` frames from `state` with player 1 holding `held`,
/// keeping each frame's picture checksum in `pictures`.
fn branch<G: Emulator + ?Sized>(
    game: &mut G,
    state: &[u8],
    held: Buttons,
    horizon: u32,
    pictures: &mut Vec<Checksum>,
    frame: u32,
) -> Result<(), AppError> {
    game.load_state(state).map_err(AppError::at_frame(frame))?;
    pictures.clear();
    let mut inputs = [Buttons::NONE; MAX_PLAYERS];
    inputs[0] = held;
    for _ in 0..horizon {
        game.run_frame(&inputs, true);
        let picture = game
            .video_frame()
            .map_or(Checksum(0), |p| Checksum::of_video(&p));
        pictures.push(picture);
    }
    game.check_running().map_err(AppError::at_frame(frame))
}

#[cfg(test)]
mod tests {
    use super::*;
    use netcode::input::BUTTON_NAMES;
    use netcode::testing::StubGame;

    fn plan() -> LatencyPlan {
        LatencyPlan {
            warmup: 10,
            states: 3,
            spacing: 7,
            horizon: 8,
        }
    }

    #[test]
    fn the_stub_shows_every_press_on_the_frame_that_read_it() {
        // The stub draws what the pad did to its memory on the frame read.
        let mut game = StubGame::deterministic();
        let latency = measure_latency(&mut game, &mut InputSource::Idle, plan()).unwrap();
        assert_eq!(latency.state_frames, [10, 17, 24]);
        assert_eq!(latency.buttons.len(), BUTTONS_TRIED);
        for (button, lag) in &latency.buttons {
            assert_eq!(*lag, Some(0), "{button}");
        }
        assert_eq!(latency.lag_frames(), Some(0));
    }

    #[test]
    fn the_median_is_over_the_buttons_that_showed() {
        let latency = |lags: &[Option<u32>]| Latency {
            state_frames: Vec::new(),
            buttons: BUTTON_NAMES
                .iter()
                .copied()
                .zip(lags.iter().copied())
                .collect(),
            by_state: Vec::new(),
            plan: plan(),
        };
        assert_eq!(
            latency(&[Some(3), None, Some(1), Some(2)]).lag_frames(),
            Some(2)
        );
        assert_eq!(latency(&[Some(3), Some(1)]).lag_frames(), Some(1));
        assert_eq!(latency(&[None, None]).lag_frames(), None);
    }
}
