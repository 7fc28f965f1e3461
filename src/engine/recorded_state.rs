//! Loading a savestate a replay carries (its start state, a desync repair).
//! A replay is shared between strangers, and a core trusts its states: one
//! no core of its kind saved (noise of the right size) can leave it corrupt,
//! to crash later or at exit. So each is checked against the game memory the
//! recording had once it was loaded, and one that fails puts the game back
//! as it was and refuses the replay.

use crate::engine::AppError;
use netcode::checksum::{memory_checksum, Checksum};
use netcode::emulator::{Emulator, EmulatorError};
use netcode::rollback::Frame;

/// What a replay says the game loads at the start of a frame.
#[derive(Clone, Copy, Debug)]
pub struct RecordedState<'r> {
    /// The savestate's bytes.
    pub bytes: &'r [u8],
    /// The game memory's checksum once it is loaded (as
    /// [`memory_checksum`] takes it), if the replay recorded one.
    pub memory: Option<Checksum>,
    /// What it is, for messages: `the replay's start state`, `slot 3's state`.
    pub what: &'r str,
}

/// Loads `state` into `game` at the start of `frame` and checks the memory
/// it leaves. If the core refuses the state, or the memory is not the
/// recording's, the game gets back the state it had and the replay is
/// refused, naming the state and the frame.
pub fn load_recorded_state<G: Emulator + ?Sized>(
    game: &mut G,
    frame: Frame,
    state: RecordedState<'_>,
) -> Result<(), AppError> {
    let mut before = Vec::new();
    game.save_state(&mut before)
        .map_err(AppError::at_frame(frame.number()))?;
    let refusal = match game.load_state(state.bytes) {
        Err(EmulatorError::LoadFailed { reason }) => {
            Some(format!("the core refused it ({reason})"))
        }
        Err(other) => return Err(AppError::at_frame(frame.number())(other)),
        Ok(()) => match state.memory {
            Some(recorded) => {
                let loaded = memory_checksum(game, &mut Vec::new())
                    .map_err(AppError::at_frame(frame.number()))?;
                (loaded != recorded).then(|| {
                    format!(
                        "loaded, it gives the game memory checksum {loaded} where the replay \
                         recorded {recorded}"
                    )
                })
            }
            None => None,
        },
    };
    let Some(refusal) = refusal else {
        return Ok(());
    };
    game.load_state(&before)
        .map_err(AppError::at_frame(frame.number()))?;
    Err(AppError::ReplayRefused {
        reason: format!(
            "{} of frame {} is not a state this core saved: {refusal}; the file was changed \
             or damaged",
            state.what,
            frame.number()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use netcode::input::Buttons;
    use netcode::testing::StubGame;

    /// A stub game that ran `frames` frames with `held` pressed.
    fn game_after(frames: u32, held: Buttons) -> StubGame {
        let mut game = StubGame::deterministic();
        for _ in 0..frames {
            game.run_frame(&[held, Buttons::NONE], false);
        }
        game
    }

    fn state_of(game: &mut StubGame) -> Vec<u8> {
        let mut state = Vec::new();
        game.save_state(&mut state).unwrap();
        state
    }

    #[test]
    fn a_recorded_state_that_gives_the_recorded_memory_is_loaded() {
        let mut other = game_after(30, Buttons::RIGHT);
        let (bytes, memory) = (state_of(&mut other), Checksum::of(other.game_memory()));
        let mut game = game_after(5, Buttons::NONE);
        let state = RecordedState {
            bytes: &bytes,
            memory: Some(memory),
            what: "the replay's repair state",
        };
        load_recorded_state(&mut game, Frame::new(5), state).unwrap();
        assert_eq!(state_of(&mut game), bytes);
    }

    #[test]
    fn a_recorded_state_that_gives_other_memory_is_refused_and_the_game_is_as_it_was() {
        let bytes = state_of(&mut game_after(30, Buttons::RIGHT));
        let mut game = game_after(5, Buttons::NONE);
        let before = state_of(&mut game);
        let state = RecordedState {
            bytes: &bytes,
            memory: Some(Checksum(12345)),
            what: "the replay's start state",
        };
        let error = load_recorded_state(&mut game, Frame::new(0), state)
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("the replay's start state of frame 0 is not a state this core saved"),
            "{error}"
        );
        assert!(error.contains("where the replay recorded"), "{error}");
        assert_eq!(state_of(&mut game), before);
    }
}
