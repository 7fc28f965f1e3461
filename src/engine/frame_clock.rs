//! When frames are due: the one pacing rule of every netplay loop (the real
//! one, the demo's simulated machines, the tests' clusters). Pure: the time
//! is a parameter, in microseconds since any fixed moment.

/// A frame clock: frames fall due every period (the nominal frame period
/// divided by the speed factor time sync asks for), from a start moment on.
#[derive(Clone, Debug)]
pub struct FrameClock {
    period_us: f64,
    next_due_us: f64,
    /// Most frames [`FrameClock::due`] hands out in one call.
    max_per_call: u32,
    /// Most overdue frames kept: a machine that fell further behind (a pause,
    /// a slow core) skips the rest rather than racing to catch up.
    max_backlog: u32,
}

impl FrameClock {
    /// A clock of `frames_per_second` whose first frame is due at `start_us`,
    /// handing out one frame per call and keeping any backlog.
    pub fn new(frames_per_second: f64, start_us: u64) -> Self {
        FrameClock {
            period_us: 1_000_000.0 / frames_per_second.max(1e-3),
            next_due_us: start_us as f64,
            max_per_call: 1,
            max_backlog: u32::MAX,
        }
    }

    /// Hands out up to `per_call` frames per call and keeps at most
    /// `backlog` overdue frames (both at least 1).
    pub fn with_catch_up(mut self, per_call: u32, backlog: u32) -> Self {
        self.max_per_call = per_call.max(1);
        self.max_backlog = backlog.max(1);
        self
    }

    /// How many frames to run at `now_us`, with the frame rate multiplied by
    /// `speed` (1.0: nominal; time sync's factor times the machine's own
    /// clock error in simulations). Counts them as run.
    pub fn due(&mut self, now_us: u64, speed: f64) -> u32 {
        let now = now_us as f64;
        let period = self.period_us / speed.max(1e-3);
        if now >= self.next_due_us {
            let overdue = ((now - self.next_due_us) / period).floor() + 1.0;
            let backlog = f64::from(self.max_backlog);
            if overdue > backlog {
                // Forget the frames beyond the backlog: they are not run at all.
                self.next_due_us += (overdue - backlog) * period;
            }
        }
        let mut frames = 0;
        while frames < self.max_per_call && now >= self.next_due_us {
            self.next_due_us += period;
            frames += 1;
        }
        frames
    }

    /// The next frame is due at `at_us` (a start moment agreed with peers).
    pub fn start_at(&mut self, at_us: u64) {
        self.next_due_us = at_us as f64;
    }

    /// When the next frame is due (µs, rounded up): a loop may sleep until then.
    pub fn next_due_us(&self) -> u64 {
        self.next_due_us.ceil() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames handed out by calling every millisecond from 0 to `until_ms`.
    fn run_every_ms(clock: &mut FrameClock, until_ms: u64, speed: f64) -> u32 {
        (0..=until_ms).map(|ms| clock.due(ms * 1000, speed)).sum()
    }

    #[test]
    fn sixty_frames_fall_due_in_a_second_from_the_start_moment() {
        let mut clock = FrameClock::new(60.0, 5_000);
        assert_eq!(clock.due(4_999, 1.0), 0);
        // Due at 5 ms, then every 16.67 ms: the 60th at 988.3 ms.
        assert_eq!(run_every_ms(&mut clock, 988, 1.0), 59);
        assert_eq!(clock.due(989_000, 1.0), 1);
        assert!((1_004_999..=1_005_001).contains(&clock.next_due_us()));
    }

    #[test]
    fn the_speed_factor_runs_the_clock_faster_or_slower() {
        let mut fast = FrameClock::new(60.0, 0);
        let mut slow = FrameClock::new(60.0, 0);
        assert_eq!(run_every_ms(&mut fast, 9_999, 1.01), 606);
        assert_eq!(run_every_ms(&mut slow, 9_999, 0.99), 594);
    }

    #[test]
    fn a_late_caller_catches_up_within_the_limits_and_skips_the_rest() {
        let mut clock = FrameClock::new(60.0, 0).with_catch_up(2, 3);
        // 110 ms late: 7 frames overdue, 3 kept, 2 per call.
        assert_eq!(clock.due(110_000, 1.0), 2);
        assert_eq!(clock.due(110_000, 1.0), 1);
        assert_eq!(clock.due(110_000, 1.0), 0);
        assert!(clock.next_due_us() > 110_000);
    }

    #[test]
    fn a_new_start_moment_moves_the_next_frame() {
        let mut clock = FrameClock::new(60.0, 0);
        assert_eq!(clock.due(0, 1.0), 1);
        clock.start_at(250_000);
        assert_eq!(clock.due(249_999, 1.0), 0);
        assert_eq!(clock.due(250_000, 1.0), 1);
    }
}
