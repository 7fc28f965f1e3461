//! One player's inputs over a sliding window of frames: confirmed inputs,
//! the predictions the simulation used, and the first frame found wrong.
//!
//! A fixed ring (power-of-two capacity, allocated once) holds half its
//! capacity behind the current frame (history for resending and spectators)
//! and half ahead (inputs that arrive early, local input delay).

use super::frame::Frame;
use super::players::PlayerId;
use crate::input::Buttons;

/// Guesses a player's buttons for a frame whose real input has not arrived.
///
/// Predictions never need to agree between peers (wrong ones are rolled
/// back), but a good guess means fewer rollbacks.
pub trait Predictor {
    /// The guess for `player` at `frame`, knowing the player's last confirmed
    /// input (`None` before any input arrived).
    fn predict(
        &self,
        player: PlayerId,
        frame: Frame,
        last_confirmed: Option<(Frame, Buttons)>,
    ) -> Buttons;
}

/// Repeats the last confirmed input (GGPO's and INVERSUS's prediction): held
/// buttons tend to stay held.
#[derive(Clone, Copy, Debug, Default)]
pub struct RepeatLastConfirmed;

impl Predictor for RepeatLastConfirmed {
    fn predict(&self, _: PlayerId, _: Frame, last_confirmed: Option<(Frame, Buttons)>) -> Buttons {
        last_confirmed.map_or(Buttons::NONE, |(_, buttons)| buttons)
    }
}

/// What adding a confirmed input did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confirmation {
    /// New input stored.
    Stored,
    /// New input stored, and it differs from the prediction already simulated.
    Mispredicted,
    /// Already known with the same buttons (resent input): nothing changed.
    Duplicate,
    /// The player left before this frame; their input there is fixed.
    AfterDisconnect,
}

/// Why a confirmed input was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// The input's frame is further from the current frame, either way, than
    /// the queue's window reaches.
    #[error("input for frame {frame} is outside the window around frame {current} (±{half_window} frames)")]
    OutOfWindow {
        /// The frame the input was for.
        frame: Frame,
        /// The session's current frame.
        current: Frame,
        /// How many frames either side of `current` are kept.
        half_window: u32,
    },
    /// A confirmed input arrived again with different buttons: confirmed
    /// inputs never change, so the sender is at fault.
    #[error("input for frame {frame} was already confirmed as {had}, now received as {got}")]
    Conflicting {
        /// The frame the input was for.
        frame: Frame,
        /// The buttons confirmed first.
        had: Buttons,
        /// The different buttons received now.
        got: Buttons,
    },
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    frame: Option<Frame>,
    buttons: Buttons,
    confirmed: bool,
}

const EMPTY_SLOT: Slot = Slot {
    frame: None,
    buttons: Buttons::NONE,
    confirmed: false,
};

/// One player's input window. See the module docs.
#[derive(Clone, Debug)]
pub struct InputQueue {
    slots: Box<[Slot]>,
    mask: u32,
    /// Every frame up to and including this one is confirmed.
    confirmed_through: Option<Frame>,
    first_incorrect: Option<Frame>,
    /// The player left: from this frame on their input is `NONE`, confirmed.
    fixed_from: Option<Frame>,
}

impl InputQueue {
    /// A queue holding `capacity` frames, rounded up to a power of two (≥ 16).
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(16).next_power_of_two();
        InputQueue {
            slots: vec![EMPTY_SLOT; capacity].into_boxed_slice(),
            mask: capacity as u32 - 1,
            confirmed_through: None,
            first_incorrect: None,
            fixed_from: None,
        }
    }

    /// Takes every frame before `frame` as confirmed, holding none of
    /// them: for a session resuming mid-match.
    pub fn start_at(&mut self, frame: Frame) {
        self.confirmed_through = frame.previous();
    }

    /// How many frames of input the ring holds (a power of two).
    pub fn capacity(&self) -> u32 {
        self.mask + 1
    }

    /// How far from the current frame (either way) inputs are kept.
    pub fn half_window(&self) -> u32 {
        self.capacity() / 2
    }

    fn slot(&self, frame: Frame) -> &Slot {
        &self.slots[(frame.number() & self.mask) as usize]
    }

    fn slot_mut(&mut self, frame: Frame) -> &mut Slot {
        &mut self.slots[(frame.number() & self.mask) as usize]
    }

    /// Every frame up to this one has a confirmed input (`None`: not even
    /// frame 0 yet). After a disconnect whose frame is reached this stays at
    /// the frame before it; see [`InputQueue::is_confirmed_forever`].
    pub fn confirmed_through(&self) -> Option<Frame> {
        self.confirmed_through
    }

    /// The next frame whose input is still awaited (`None` once the player
    /// has left and every input before that is known).
    pub fn next_awaited(&self) -> Option<Frame> {
        let next = self.confirmed_through.map_or(Frame::ZERO, Frame::next);
        match self.fixed_from {
            Some(fixed) if next >= fixed => None,
            _ => Some(next),
        }
    }

    /// Whether every input of this player, to the end of time, is known.
    pub fn is_confirmed_forever(&self) -> bool {
        self.next_awaited().is_none()
    }

    /// The frame from which the player's input is fixed to `NONE`.
    pub fn disconnected_from(&self) -> Option<Frame> {
        self.fixed_from
    }

    /// The confirmed input at `frame`, if known and still in the window.
    pub fn confirmed(&self, frame: Frame) -> Option<Buttons> {
        if self.fixed_from.is_some_and(|fixed| frame >= fixed) {
            return Some(Buttons::NONE);
        }
        let slot = self.slot(frame);
        (slot.frame == Some(frame) && slot.confirmed).then_some(slot.buttons)
    }

    /// The last input before `frame` that is confirmed, if still held.
    fn last_confirmed_before(&self, frame: Frame) -> Option<(Frame, Buttons)> {
        let through = self.confirmed_through?;
        let at = if through < frame {
            through
        } else {
            frame.previous()?
        };
        self.confirmed(at).map(|buttons| (at, buttons))
    }

    /// The earliest simulated frame whose input turned out wrong, and forget
    /// it (the caller rolls back to it).
    pub fn take_first_incorrect(&mut self) -> Option<Frame> {
        self.first_incorrect.take()
    }

    /// The earliest simulated frame whose input turned out wrong, left in
    /// place; `None` when every prediction used so far held.
    pub fn first_incorrect(&self) -> Option<Frame> {
        self.first_incorrect
    }

    fn note_incorrect(&mut self, frame: Frame) {
        self.first_incorrect = Some(self.first_incorrect.map_or(frame, |f| f.min(frame)));
    }

    /// Adds the real input of `frame`. `current` is the next frame the
    /// session will simulate: frames before it were simulated, so a stored
    /// prediction that differs marks them for rollback.
    pub fn confirm(
        &mut self,
        frame: Frame,
        buttons: Buttons,
        current: Frame,
    ) -> Result<Confirmation, InputError> {
        if self.fixed_from.is_some_and(|fixed| frame >= fixed) {
            return Ok(Confirmation::AfterDisconnect);
        }
        let half = self.half_window();
        if frame.frames_since(current).unsigned_abs() >= u64::from(half) {
            if self
                .confirmed_through
                .is_some_and(|through| frame <= through)
            {
                // Too old to check, but confirmed long ago: a late resend.
                return Ok(Confirmation::Duplicate);
            }
            return Err(InputError::OutOfWindow {
                frame,
                current,
                half_window: half,
            });
        }
        let slot = *self.slot(frame);
        let outcome = if slot.frame == Some(frame) {
            if slot.confirmed {
                return if slot.buttons == buttons {
                    Ok(Confirmation::Duplicate)
                } else {
                    Err(InputError::Conflicting {
                        frame,
                        had: slot.buttons,
                        got: buttons,
                    })
                };
            }
            if slot.buttons != buttons && frame < current {
                self.note_incorrect(frame);
                Confirmation::Mispredicted
            } else {
                Confirmation::Stored
            }
        } else if self
            .confirmed_through
            .is_some_and(|through| frame <= through)
        {
            return Ok(Confirmation::Duplicate);
        } else {
            Confirmation::Stored
        };
        *self.slot_mut(frame) = Slot {
            frame: Some(frame),
            buttons,
            confirmed: true,
        };
        self.advance_confirmed_through();
        Ok(outcome)
    }

    fn advance_confirmed_through(&mut self) {
        loop {
            let next = self.confirmed_through.map_or(Frame::ZERO, Frame::next);
            if self.fixed_from.is_some_and(|fixed| next >= fixed) {
                return;
            }
            let slot = self.slot(next);
            if slot.frame == Some(next) && slot.confirmed {
                self.confirmed_through = Some(next);
            } else {
                return;
            }
        }
    }

    /// The input the simulation uses for `frame`: the confirmed one, or a
    /// prediction that is remembered so the real input can be checked
    /// against it. Returns the buttons and whether they were predicted.
    pub fn input_for_simulation<P: Predictor + ?Sized>(
        &mut self,
        player: PlayerId,
        frame: Frame,
        predictor: &P,
    ) -> (Buttons, bool) {
        if let Some(buttons) = self.confirmed(frame) {
            return (buttons, false);
        }
        let guess = predictor.predict(player, frame, self.last_confirmed_before(frame));
        *self.slot_mut(frame) = Slot {
            frame: Some(frame),
            buttons: guess,
            confirmed: false,
        };
        (guess, true)
    }

    /// The input the simulation last used (or will use) at `frame`, confirmed
    /// or predicted, if the window still holds it.
    pub fn used(&self, frame: Frame) -> Option<Buttons> {
        if self.fixed_from.is_some_and(|fixed| frame >= fixed) {
            return Some(Buttons::NONE);
        }
        let slot = self.slot(frame);
        (slot.frame == Some(frame)).then_some(slot.buttons)
    }

    /// The player leaves: from `from` on their input is `NONE`, confirmed.
    /// Inputs received for those frames are discarded, even confirmed ones
    /// (the frame is agreed between machines, some of which held fewer
    /// inputs: what leaves the session for good waits for the netplay
    /// session's finalized frame); if the simulation used anything else
    /// there (`from < current`), that frame is marked wrong.
    pub fn disconnect(&mut self, from: Frame, current: Frame) {
        let from = self.fixed_from.map_or(from, |fixed| fixed.min(from));
        let mut frame = from;
        while frame < current {
            let slot = self.slot(frame);
            if slot.frame == Some(frame) && slot.buttons != Buttons::NONE {
                self.note_incorrect(frame);
                break;
            }
            frame = frame.next();
        }
        self.fixed_from = Some(from);
        if self
            .confirmed_through
            .is_some_and(|through| through >= from)
        {
            self.confirmed_through = from.previous();
        }
        self.advance_confirmed_through();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: PlayerId = PlayerId::new(1);

    fn f(n: u32) -> Frame {
        Frame::new(n)
    }

    #[test]
    fn the_default_prediction_repeats_the_last_confirmed_input() {
        let mut queue = InputQueue::new(32);
        queue.confirm(f(0), Buttons::A, f(0)).unwrap();
        assert_eq!(
            queue.input_for_simulation(P, f(0), &RepeatLastConfirmed),
            (Buttons::A, false)
        );
        assert_eq!(
            queue.input_for_simulation(P, f(1), &RepeatLastConfirmed),
            (Buttons::A, true)
        );
        assert_eq!(
            queue.input_for_simulation(P, f(2), &RepeatLastConfirmed),
            (Buttons::A, true)
        );
    }

    #[test]
    fn a_real_input_that_differs_from_the_simulated_prediction_marks_the_frame_wrong() {
        let mut queue = InputQueue::new(32);
        for n in 0..4 {
            queue.input_for_simulation(P, f(n), &RepeatLastConfirmed);
        }
        assert_eq!(
            queue.confirm(f(0), Buttons::NONE, f(4)),
            Ok(Confirmation::Stored)
        );
        assert_eq!(
            queue.confirm(f(2), Buttons::B, f(4)),
            Ok(Confirmation::Mispredicted)
        );
        assert_eq!(
            queue.confirm(f(1), Buttons::UP, f(4)),
            Ok(Confirmation::Mispredicted)
        );
        assert_eq!(queue.first_incorrect(), Some(f(1)));
        assert_eq!(queue.confirmed_through(), Some(f(2)));
        assert_eq!(queue.take_first_incorrect(), Some(f(1)));
        assert_eq!(queue.first_incorrect(), None);
    }

    #[test]
    fn resent_inputs_are_harmless_and_contradicting_ones_are_refused() {
        let mut queue = InputQueue::new(32);
        queue.confirm(f(0), Buttons::A, f(0)).unwrap();
        assert_eq!(
            queue.confirm(f(0), Buttons::A, f(0)),
            Ok(Confirmation::Duplicate)
        );
        assert!(matches!(
            queue.confirm(f(0), Buttons::B, f(0)),
            Err(InputError::Conflicting { .. })
        ));
        assert_eq!(queue.confirmed(f(0)), Some(Buttons::A));
    }

    #[test]
    fn inputs_arriving_out_of_order_fill_the_gap_before_counting_as_confirmed() {
        let mut queue = InputQueue::new(32);
        queue.confirm(f(2), Buttons::A, f(0)).unwrap();
        queue.confirm(f(0), Buttons::A, f(0)).unwrap();
        assert_eq!(queue.confirmed_through(), Some(f(0)));
        queue.confirm(f(1), Buttons::A, f(0)).unwrap();
        assert_eq!(queue.confirmed_through(), Some(f(2)));
        assert_eq!(queue.next_awaited(), Some(f(3)));
    }

    #[test]
    fn inputs_far_outside_the_window_are_refused_without_touching_the_ring() {
        let mut queue = InputQueue::new(32);
        let err = queue.confirm(f(100), Buttons::A, f(10)).unwrap_err();
        assert!(matches!(
            err,
            InputError::OutOfWindow {
                half_window: 16,
                ..
            }
        ));
        assert_eq!(queue.confirmed(f(100)), None);
    }

    #[test]
    fn a_disconnected_player_is_confirmed_as_idle_from_the_disconnect_frame_on() {
        let mut queue = InputQueue::new(32);
        for n in 0..6 {
            queue.input_for_simulation(P, f(n), &RepeatLastConfirmed);
        }
        queue.confirm(f(0), Buttons::NONE, f(6)).unwrap();
        queue.confirm(f(1), Buttons::NONE, f(6)).unwrap();
        queue.confirm(f(2), Buttons::A, f(6)).unwrap();
        assert_eq!(queue.take_first_incorrect(), Some(f(2)));
        // The agreed leaving frame is 2: the A we saw there is discarded.
        queue.disconnect(f(2), f(6));
        assert_eq!(queue.first_incorrect(), Some(f(2)));
        assert!(queue.is_confirmed_forever());
        assert_eq!(queue.confirmed(f(2)), Some(Buttons::NONE));
        assert_eq!(queue.confirmed(f(50)), Some(Buttons::NONE));
        assert_eq!(
            queue.confirm(f(7), Buttons::B, f(6)),
            Ok(Confirmation::AfterDisconnect)
        );
    }

    #[test]
    fn a_disconnect_ahead_of_the_received_inputs_still_awaits_the_gap() {
        let mut queue = InputQueue::new(32);
        queue.confirm(f(0), Buttons::NONE, f(0)).unwrap();
        queue.disconnect(f(3), f(0));
        assert_eq!(queue.next_awaited(), Some(f(1)));
        queue.confirm(f(1), Buttons::NONE, f(0)).unwrap();
        queue.confirm(f(2), Buttons::NONE, f(0)).unwrap();
        assert!(queue.is_confirmed_forever());
    }
}
