//! How many frames local input waits before it is used (seed 000's
//! `CalcInputLagFrames`): none on a good network, more as the worst peer's
//! lag grows, through thresholds that differ going up and coming down so the
//! delay does not flap.
//!
//! The lag here is the one-way trip to the worst peer in frames (half the
//! round trip), which does not depend on the delay chosen, so raising the
//! delay does not by itself lower it again.

use std::time::Duration;

/// Bounds and budget for the delay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InputDelayConfig {
    /// Fewest frames of local delay (0 by default).
    pub min_frames: u32,
    /// Most frames of local delay (4 by default: more feels sluggish).
    pub max_frames: u32,
    /// Whether the delay follows the network; if not it stays at its initial value.
    pub dynamic: bool,
    /// The share of a frame's time re-simulation may take (rest: rendering, audio).
    pub resimulation_budget: f32,
}

impl Default for InputDelayConfig {
    fn default() -> Self {
        InputDelayConfig {
            min_frames: 0,
            max_frames: 4,
            dynamic: true,
            resimulation_budget: 0.75,
        }
    }
}

/// The lag (frames) from which the delay rises to `level` (seed 000's table,
/// continued in steps of two frames past 4).
fn rise_threshold(level: u32) -> f32 {
    match level {
        0 => f32::NEG_INFINITY,
        1 => 2.0,
        2 => 3.0,
        3 => 6.0,
        4 => 8.0,
        n => 2.0 * n as f32,
    }
}

/// The lag (frames) at or under which the delay falls from `level`.
fn fall_threshold(level: u32) -> f32 {
    match level {
        0 => f32::NEG_INFINITY,
        1 => 1.0,
        2 => 2.0,
        3 => 5.0,
        4 => 7.0,
        n => 2.0 * n as f32 - 1.0,
    }
}

/// The hysteresis step: the delay to use given the current one and the
/// worst peer's one-way lag in frames, within `min..=max`.
pub fn next_input_delay(current: u32, worst_peer_lag: f32, min: u32, max: u32) -> u32 {
    let mut delay = current.clamp(min, max);
    while delay < max && worst_peer_lag >= rise_threshold(delay + 1) {
        delay += 1;
    }
    while delay > min && worst_peer_lag <= fall_threshold(delay) {
        delay -= 1;
    }
    delay
}

/// Lockstep's delay: a frame waits until every input for it arrived, so the
/// delay must cover the one-way lag plus half a frame of scheduling; it
/// rises to that at once and falls only once a frame more than it is
/// covered (a band of one frame, so it does not flap).
pub fn lockstep_input_delay(current: u32, worst_peer_lag: f32, min: u32, max: u32) -> u32 {
    let needed = (worst_peer_lag.max(0.0) + 0.5).ceil() as u32;
    current.clamp(needed, needed + 1).clamp(min, max)
}

/// The delay to start a match with, from the worst measured round trip.
pub fn initial_input_delay(
    worst_round_trip: Duration,
    frame_period: Duration,
    config: &InputDelayConfig,
) -> u32 {
    let one_way_frames =
        worst_round_trip.as_secs_f32() / frame_period.as_secs_f32().max(1e-6) / 2.0;
    next_input_delay(
        config.min_frames,
        one_way_frames,
        config.min_frames,
        config.max_frames,
    )
}

/// The smallest delay at which re-simulating the expected rollback fits in a
/// frame: with delay `d` about `ceil(lag) - d` frames are predicted and
/// re-simulated, each costing `resimulation_cost`, plus the frame itself.
pub fn delay_for_resimulation_cost(
    worst_peer_lag: f32,
    resimulation_cost: Duration,
    frame_period: Duration,
    config: &InputDelayConfig,
) -> u32 {
    let budget = frame_period.as_secs_f32() * config.resimulation_budget;
    let cost = resimulation_cost.as_secs_f32();
    let expected_depth = worst_peer_lag.max(0.0).ceil() as u32;
    let mut delay = config.min_frames;
    while delay < config.max_frames {
        let frames = expected_depth.saturating_sub(delay) + 1;
        if frames as f32 * cost <= budget {
            break;
        }
        delay += 1;
    }
    delay
}

/// The delay state: the hysteresis machine plus the re-simulation cost floor.
#[derive(Clone, Debug)]
pub struct InputDelayController {
    config: InputDelayConfig,
    frame_period: Duration,
    delay: u32,
    resimulation_cost: Option<Duration>,
    /// Lockstep's rule ([`lockstep_input_delay`]) instead of the hysteresis.
    lockstep: bool,
}

impl InputDelayController {
    /// Starts at `initial` frames of delay (clamped to the configured range).
    pub fn new(config: InputDelayConfig, frame_period: Duration, initial: u32) -> Self {
        let delay = initial.clamp(config.min_frames, config.max_frames);
        InputDelayController {
            config,
            frame_period,
            delay,
            resimulation_cost: None,
            lockstep: false,
        }
    }

    /// Follows lockstep's rule: the delay covers the lag (nothing is
    /// re-simulated, so no cost floor).
    pub fn in_lockstep(mut self) -> Self {
        self.lockstep = true;
        self
    }

    /// Lockstep: raises the delay now when `worst_peer_lag` (frames, one
    /// sample) needs more. Returns the new delay if it changed.
    pub fn raise_for_lockstep(&mut self, worst_peer_lag: f32) -> Option<u32> {
        if !self.config.dynamic {
            return None;
        }
        let needed = lockstep_input_delay(
            self.delay,
            worst_peer_lag,
            self.config.min_frames,
            self.config.max_frames,
        );
        (needed > self.delay).then(|| {
            self.delay = needed;
            needed
        })
    }

    /// The local input delay now, in frames.
    pub fn delay(&self) -> u32 {
        self.delay
    }

    /// The settings it was built with.
    pub fn config(&self) -> &InputDelayConfig {
        &self.config
    }

    /// Sets the delay, within the configured bounds.
    pub fn set_delay(&mut self, frames: u32) {
        self.delay = frames.clamp(self.config.min_frames, self.config.max_frames);
    }

    /// The measured cost of re-simulating one frame (reported by the frontend).
    pub fn set_resimulation_cost(&mut self, cost: Duration) {
        self.resimulation_cost = Some(cost);
    }

    /// Re-decides the delay from the worst peer's one-way lag (frames, averaged).
    /// Returns the new delay if it changed.
    pub fn update(&mut self, worst_peer_lag: f32) -> Option<u32> {
        if !self.config.dynamic {
            return None;
        }
        let InputDelayConfig {
            min_frames,
            max_frames,
            ..
        } = self.config;
        if self.lockstep {
            let delay = lockstep_input_delay(self.delay, worst_peer_lag, min_frames, max_frames);
            return (delay != self.delay).then(|| {
                self.delay = delay;
                delay
            });
        }
        let mut delay = next_input_delay(self.delay, worst_peer_lag, min_frames, max_frames);
        if let Some(cost) = self.resimulation_cost {
            let floor =
                delay_for_resimulation_cost(worst_peer_lag, cost, self.frame_period, &self.config);
            delay = delay.max(floor);
        }
        (delay != self.delay).then(|| {
            self.delay = delay;
            delay
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAME: Duration = Duration::from_micros(16_667);

    #[test]
    fn the_delay_follows_seed_000s_thresholds() {
        assert_eq!(next_input_delay(0, 1.9, 0, 4), 0);
        assert_eq!(next_input_delay(0, 2.0, 0, 4), 1);
        assert_eq!(next_input_delay(0, 3.0, 0, 4), 2);
        assert_eq!(next_input_delay(0, 9.0, 0, 4), 4);
        assert_eq!(next_input_delay(4, 7.0, 0, 4), 3);
        assert_eq!(next_input_delay(3, 5.0, 0, 4), 2);
        assert_eq!(next_input_delay(2, 1.0, 0, 4), 0);
    }

    #[test]
    fn lockstep_covers_the_one_way_lag_and_falls_only_a_frame_past_it() {
        // 40 ms round trip: 1.2 frames each way.
        assert_eq!(lockstep_input_delay(0, 1.2, 0, 12), 2);
        // 100 ms: 3 frames each way.
        assert_eq!(lockstep_input_delay(0, 3.0, 0, 12), 4);
        assert_eq!(lockstep_input_delay(5, 3.0, 0, 12), 5);
        assert_eq!(lockstep_input_delay(6, 3.0, 0, 12), 5);
        assert_eq!(lockstep_input_delay(0, 30.0, 0, 12), 12);
        assert_eq!(lockstep_input_delay(0, 0.0, 2, 12), 2);
    }

    #[test]
    fn the_delay_does_not_flap_around_a_threshold() {
        let mut delay = 0;
        for lag in [2.0, 1.5, 2.0, 1.2, 2.5, 1.9, 2.0] {
            delay = next_input_delay(delay, lag, 0, 4);
            assert_eq!(delay, 1, "lag {lag}");
        }
        assert_eq!(next_input_delay(delay, 1.0, 0, 4), 0);
    }

    #[test]
    fn the_delay_stays_within_its_configured_bounds() {
        assert_eq!(next_input_delay(0, 50.0, 0, 4), 4);
        assert_eq!(next_input_delay(0, 50.0, 0, 6), 6);
        assert_eq!(next_input_delay(3, 0.0, 2, 6), 2);
        assert_eq!(next_input_delay(0, 0.0, 1, 4), 1);
    }

    #[test]
    fn the_initial_delay_comes_from_half_the_worst_round_trip() {
        let config = InputDelayConfig::default();
        assert_eq!(
            initial_input_delay(Duration::from_millis(20), FRAME, &config),
            0
        );
        // 110 ms round trip: 3.3 frames one way.
        assert_eq!(
            initial_input_delay(Duration::from_millis(110), FRAME, &config),
            2
        );
        assert_eq!(
            initial_input_delay(Duration::from_millis(80), FRAME, &config),
            1
        );
        assert_eq!(
            initial_input_delay(Duration::from_millis(400), FRAME, &config),
            4
        );
    }

    #[test]
    fn an_expensive_resimulation_raises_the_delay_until_the_rollback_fits() {
        let config = InputDelayConfig::default();
        // 3 frames of lag, 4 ms per re-simulated frame, 12.5 ms budget:
        // delay 0 → 4 frames = 16 ms (too much), delay 1 → 12 ms fits.
        let lag = 3.0;
        assert_eq!(
            delay_for_resimulation_cost(lag, Duration::from_millis(4), FRAME, &config),
            1
        );
        assert_eq!(
            delay_for_resimulation_cost(lag, Duration::from_micros(300), FRAME, &config),
            0
        );
        let mut controller = InputDelayController::new(config, FRAME, 0);
        assert_eq!(controller.update(1.0), None);
        controller.set_resimulation_cost(Duration::from_millis(4));
        assert_eq!(controller.update(3.0), Some(2)); // the table already says 2 at 3 frames
        controller.set_resimulation_cost(Duration::from_millis(8));
        assert_eq!(controller.update(3.0), Some(3));
    }
}
