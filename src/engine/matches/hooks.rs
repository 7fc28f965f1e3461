//! What a netplay machine's loop supplies each tick besides time and the
//! network, shared by the driver (which times re-simulations and may adjust
//! a frame's buttons) and the machine (which asks for local buttons).

use netcode::input::{Buttons, MAX_PLAYERS};
use netcode::rollback::{Frame, PlayerId};
use std::time::Duration;

/// What a machine's loop supplies each tick besides time and the network.
pub trait TickHooks {
    /// The buttons local `player` holds for `frame` (the frame being run now;
    /// the session applies its input delay).
    fn local_input(&mut self, player: PlayerId, frame: Frame) -> Buttons;

    /// A monotonic time, read around re-simulations to measure their cost:
    /// the real clock in a real loop, a modelled cost in simulations.
    fn stopwatch(&mut self) -> Duration;

    /// A monotonic time the loop's phases are profiled by
    /// ([`LoopProfile`](crate::engine::matches::profile::LoopProfile)):
    /// the real clock in a real loop; none (nothing profiled) by default,
    /// so simulations stay free of clocks.
    fn profile_clock(&mut self) -> Option<Duration> {
        None
    }

    /// Changes the buttons a frame is run with on this machine only (tests
    /// make one machine diverge with it); by default nothing.
    fn adjust_inputs(&mut self, frame: Frame, inputs: &mut [Buttons; MAX_PLAYERS]) {
        let _ = (frame, inputs);
    }
}
