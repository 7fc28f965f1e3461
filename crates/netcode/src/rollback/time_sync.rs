//! Keeping peers' frame clocks together.
//!
//! Each peer measures its *frame lag* towards every other peer: how many
//! frames it is simulating ahead of the newest input received from that peer
//! (seed 000's `localFrameLag`). The peer sends its own lag to the other
//! side, which compares: if both run in step the two lags are equal, and a
//! peer `d` frames ahead sees its lag `2d` larger than the other's (one
//! stalled frame moves both lags by one). Averaged over a window (~100
//! frames) to ride out network noise, the difference says how far ahead this
//! peer is; the advice is to run slightly slower (a speed factor within ±2%,
//! which the frontend hides by resampling audio) or, when far apart, to stall
//! whole frames spread out in time (seed 000's cadence table).
//!
//! Input delay would skew the comparison (a peer's delay makes its inputs
//! arrive early), so the lag a peer measures excludes its own input delay:
//! `frame_lag = current - next_awaited_remote_frame - own_input_delay`. With
//! that, both peers' delays cancel out of the difference.

use std::time::Duration;

use super::players::MAX_PLAYERS;

/// How time sync reacts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeSyncConfig {
    /// Frames averaged before each decision.
    pub window_frames: u32,
    /// The largest speed change advised (0.02: between 98% and 102%).
    pub max_speed_adjustment: f32,
    /// From this many frames ahead on, stall frames instead of slowing down.
    pub stall_threshold_frames: f32,
    /// Whether a peer behind may be told to run faster (up to the maximum);
    /// without it only the peer ahead slows down.
    pub allow_speed_up: bool,
}

impl Default for TimeSyncConfig {
    fn default() -> Self {
        TimeSyncConfig {
            window_frames: 100,
            max_speed_adjustment: 0.02,
            stall_threshold_frames: 3.0,
            allow_speed_up: true,
        }
    }
}

/// What the frontend should do with its frame clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TimeSyncAdvice {
    /// Run frames at this multiple of the nominal rate (1.0: as is).
    Speed(f32),
    /// Far ahead: the session stalls this many frames, spread out in time
    /// (`advance_frame` answers `Stalled` on those ticks); run at nominal speed.
    StallFrames {
        /// Frames still to stall.
        frames: u32,
    },
}

impl TimeSyncAdvice {
    /// The nominal speed: nothing to correct.
    pub const NOMINAL: TimeSyncAdvice = TimeSyncAdvice::Speed(1.0);

    /// The speed factor to apply to the frame clock.
    pub fn speed(self) -> f32 {
        match self {
            TimeSyncAdvice::Speed(factor) => factor,
            TimeSyncAdvice::StallFrames { .. } => 1.0,
        }
    }
}

/// How often to stall when `queued` stall frames are waiting: one stall every
/// this many frames. The more to catch up, the denser the stalls (seed 000).
pub const fn stall_period(queued: u32) -> u32 {
    match queued {
        0 => u32::MAX,
        1..=9 => 11 - queued,
        _ => 1,
    }
}

/// Spreads queued stall frames over time with [`stall_period`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StallSchedule {
    queued: u32,
    since_last: u32,
}

impl StallSchedule {
    /// Stall frames still to be spent.
    pub fn queued(&self) -> u32 {
        self.queued
    }

    /// Replaces the stalls still queued.
    pub fn set(&mut self, frames: u32) {
        self.queued = frames;
    }

    /// One frame tick: whether to stall on it.
    pub fn tick(&mut self) -> bool {
        if self.queued == 0 {
            self.since_last = 0;
            return false;
        }
        self.since_last += 1;
        if self.since_last >= stall_period(self.queued) {
            self.since_last = 0;
            self.queued -= 1;
            true
        } else {
            false
        }
    }
}

/// Frame-lag averages of one window, per peer.
#[derive(Clone, Copy, Debug, Default)]
struct LagSums {
    local: i64,
    remote: i64,
    samples: u32,
}

/// The time-sync controller: fed one sample per frame, it gives advice at
/// the end of each window.
#[derive(Clone, Debug)]
pub struct TimeSync {
    config: TimeSyncConfig,
    sums: [LagSums; MAX_PLAYERS],
    frames_in_window: u32,
    /// How far ahead of each peer this machine was over the last window.
    ahead: [Option<f32>; MAX_PLAYERS],
    /// Accumulated error, so a steady clock drift is cancelled fully.
    integral: f32,
    advice: TimeSyncAdvice,
}

impl TimeSync {
    /// A controller with no samples yet, advising nominal speed.
    pub fn new(config: TimeSyncConfig) -> Self {
        TimeSync {
            config,
            sums: [LagSums::default(); MAX_PLAYERS],
            frames_in_window: 0,
            ahead: [None; MAX_PLAYERS],
            integral: 0.0,
            advice: TimeSyncAdvice::NOMINAL,
        }
    }

    /// The settings it was built with.
    pub fn config(&self) -> &TimeSyncConfig {
        &self.config
    }

    /// The advice from the last full window.
    pub fn advice(&self) -> TimeSyncAdvice {
        self.advice
    }

    /// Frames this machine was ahead of `peer` (negative: behind), averaged
    /// over the last complete window; `None` before the peer reported.
    pub fn frames_ahead(&self, peer: usize) -> Option<f32> {
        self.ahead[peer]
    }

    /// Records this frame's lags towards `peer`: ours, and the last one the
    /// peer reported (samples without a report are not counted).
    pub fn sample(&mut self, peer: usize, local_lag: i32, remote_lag: Option<i32>) {
        if let Some(remote_lag) = remote_lag {
            let sums = &mut self.sums[peer];
            sums.local += i64::from(local_lag);
            sums.remote += i64::from(remote_lag);
            sums.samples += 1;
        }
    }

    /// Ends a frame. At the end of a window returns the new advice (whether
    /// or not it changed) and starts the next window.
    pub fn end_frame(&mut self) -> Option<TimeSyncAdvice> {
        self.frames_in_window += 1;
        if self.frames_in_window < self.config.window_frames.max(1) {
            return None;
        }
        self.frames_in_window = 0;
        let mut most_ahead: Option<f32> = None;
        for (peer, sums) in self.sums.iter_mut().enumerate() {
            if sums.samples > 0 {
                let n = sums.samples as f32;
                let ahead = (sums.local as f32 / n - sums.remote as f32 / n) / 2.0;
                self.ahead[peer] = Some(ahead);
                most_ahead = Some(most_ahead.map_or(ahead, |m| m.max(ahead)));
            }
            *sums = LagSums::default();
        }
        let Some(ahead) = most_ahead else {
            return Some(self.advice);
        };
        self.advice = self.advise(ahead);
        Some(self.advice)
    }

    /// A proportional-integral step: slow down in proportion to how far
    /// ahead, plus what steady drift has accumulated, spread over the next
    /// window; stall outright when too far ahead for a gentle correction.
    fn advise(&mut self, ahead: f32) -> TimeSyncAdvice {
        let config = self.config;
        if ahead >= config.stall_threshold_frames {
            self.integral = 0.0;
            return TimeSyncAdvice::StallFrames {
                frames: (ahead + 0.5) as u32,
            };
        }
        let window = config.window_frames.max(1) as f32;
        let max = config.max_speed_adjustment;
        // Each peer corrects half: the peer behind does the other half.
        const PROPORTIONAL: f32 = 0.5;
        const INTEGRAL: f32 = 0.25;
        self.integral =
            (self.integral + ahead).clamp(-max * window / INTEGRAL, max * window / INTEGRAL);
        let correction = (PROPORTIONAL * ahead + INTEGRAL * self.integral) / window;
        let lowest = 1.0 - max;
        let highest = if config.allow_speed_up {
            1.0 + max
        } else {
            1.0
        };
        TimeSyncAdvice::Speed((1.0 - correction).clamp(lowest, highest))
    }
}

/// How long each member waits, after the host decides to start, before
/// beginning frame 0, so that everybody starts together (seed 000's start-up
/// advantage). `round_trip_from_host[i]` is the round trip between the host
/// and member `i` (zero for the host itself). The host's "start" reaches
/// member `i` after half its round trip; each waits for the farthest one.
pub fn start_delays(round_trip_from_host: &[Duration]) -> [Duration; MAX_PLAYERS] {
    let mut delays = [Duration::ZERO; MAX_PLAYERS];
    let farthest = round_trip_from_host
        .iter()
        .map(|rtt| *rtt / 2)
        .max()
        .unwrap_or_default();
    for (delay, rtt) in delays.iter_mut().zip(round_trip_from_host) {
        *delay = farthest - *rtt / 2;
    }
    delays
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(sync: &mut TimeSync, local: i32, remote: i32) -> TimeSyncAdvice {
        loop {
            sync.sample(1, local, Some(remote));
            if let Some(advice) = sync.end_frame() {
                return advice;
            }
        }
    }

    #[test]
    fn peers_in_step_are_told_to_keep_their_speed() {
        let mut sync = TimeSync::new(TimeSyncConfig::default());
        assert_eq!(window(&mut sync, 3, 3), TimeSyncAdvice::Speed(1.0));
        assert_eq!(sync.frames_ahead(1), Some(0.0));
    }

    #[test]
    fn a_peer_slightly_ahead_slows_down_by_at_most_two_percent() {
        let mut sync = TimeSync::new(TimeSyncConfig::default());
        let advice = window(&mut sync, 5, 3);
        assert_eq!(sync.frames_ahead(1), Some(1.0));
        let speed = advice.speed();
        assert!((0.98..1.0).contains(&speed), "{speed}");
        for _ in 0..50 {
            assert!(window(&mut sync, 5, 3).speed() >= 0.98);
        }
    }

    #[test]
    fn a_peer_behind_may_speed_up_unless_told_not_to() {
        let mut sync = TimeSync::new(TimeSyncConfig::default());
        assert!(window(&mut sync, 1, 3).speed() > 1.0);
        let mut only_slow = TimeSync::new(TimeSyncConfig {
            allow_speed_up: false,
            ..TimeSyncConfig::default()
        });
        assert_eq!(window(&mut only_slow, 1, 3).speed(), 1.0);
    }

    #[test]
    fn a_peer_far_ahead_stalls_whole_frames() {
        let mut sync = TimeSync::new(TimeSyncConfig::default());
        assert_eq!(
            window(&mut sync, 12, 2),
            TimeSyncAdvice::StallFrames { frames: 5 }
        );
    }

    #[test]
    fn stalls_are_spread_out_more_densely_when_more_are_queued() {
        let mut schedule = StallSchedule::default();
        schedule.set(1);
        let ticks_until_stall = (1..=20).find(|_| schedule.tick()).unwrap();
        assert_eq!(ticks_until_stall, 10);
        schedule.set(12);
        let stalls: u32 = (0..12).map(|_| u32::from(schedule.tick())).sum();
        assert!(
            stalls >= 2,
            "12 queued stalls should come quickly, got {stalls} in 12 ticks"
        );
        let mut total = stalls;
        for _ in 0..200 {
            total += u32::from(schedule.tick());
        }
        assert_eq!(total, 12);
        assert_eq!(schedule.queued(), 0);
    }

    #[test]
    fn the_cadence_table_matches_seed_000() {
        assert_eq!(stall_period(1), 10);
        assert_eq!(stall_period(5), 6);
        assert_eq!(stall_period(9), 2);
        assert_eq!(stall_period(10), 1);
        assert_eq!(stall_period(40), 1);
    }

    #[test]
    fn members_closer_to_the_host_wait_longer_so_everyone_starts_together() {
        let ms = Duration::from_millis;
        let delays = start_delays(&[ms(0), ms(100), ms(40)]);
        assert_eq!(delays[0], ms(50));
        assert_eq!(delays[1], ms(0));
        assert_eq!(delays[2], ms(30));
        // The start message reaches i after rtt/2; plus the wait, all equal.
        for (i, rtt) in [0u64, 100, 40].into_iter().enumerate() {
            assert_eq!(ms(rtt) / 2 + delays[i], ms(50));
        }
    }
}
