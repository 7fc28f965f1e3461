//! A spectator's playback buffer (seed 001): play only after a delay sized
//! from the arrival jitter measured, so late frames still come in time, and
//! run extra frames when far behind, so the delay converges to a small
//! constant instead of growing. Pure: arrival times come in as parameters.

use std::collections::VecDeque;

/// How the buffer sizes its delay and catches up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JitterConfig {
    /// Nominal frames per second of the match.
    pub frames_per_second: f64,
    /// The delay never goes below this many frames.
    pub min_delay_frames: u32,
    /// Nor above this many (a very bad link plays late, not never).
    pub max_delay_frames: u32,
    /// Frames beyond the delay before catching up begins.
    pub catch_up_threshold_frames: u32,
    /// Extra frames run per due frame while catching up (video off).
    pub max_catch_up_per_frame: u32,
}

impl JitterConfig {
    /// The defaults for a match at `frames_per_second`: at least 6 frames of
    /// delay, catching up at up to 4× speed once 4 frames too far behind.
    pub fn new(frames_per_second: f64) -> Self {
        JitterConfig {
            frames_per_second,
            min_delay_frames: 6,
            max_delay_frames: 120,
            catch_up_threshold_frames: 4,
            max_catch_up_per_frame: 3,
        }
    }
}

/// Arrivals measured for the delay (two seconds of frames at 60 fps).
const ARRIVAL_WINDOW: usize = 120;

/// An arrival bringing more frames than this at once is a backlog being
/// delivered (after the savestate, or after an outage), not the live
/// stream's pace: it says nothing about jitter.
const MAX_FRAMES_PER_SAMPLE: u32 = 8;

/// Frames of margin above the measured spread.
const MARGIN_FRAMES: u32 = 2;

/// Most the playback speed strays from nominal to hold the delay.
const MAX_SPEED_CHANGE: f64 = 0.02;

/// Playing or waiting to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Playback {
    /// Filling up to the delay before playing (at the start, and after the
    /// buffer ran dry).
    Buffering,
    /// Playing one frame per due frame (more while catching up).
    Playing,
}

/// What the buffer decided for one due frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Due {
    /// Frames to run now; the last one is shown, the others run with video off.
    pub frames: u32,
    /// Of those, extra frames run to catch up.
    pub catch_up: u32,
}

/// The jitter buffer of a spectator. See the module docs.
#[derive(Clone, Debug)]
pub struct JitterBuffer {
    config: JitterConfig,
    period_ms: f64,
    /// Each recent arrival's time less its frame's place in the stream
    /// (`now - frame × period`): their spread is the jitter.
    offsets: VecDeque<f64>,
    delay_frames: u32,
    playback: Playback,
    catching_up: bool,
    /// Frames run to catch up, in all.
    catch_up_frames: u64,
    /// Times the buffer ran dry while playing.
    starvations: u64,
}

impl JitterBuffer {
    /// An empty buffer, buffering, at the minimum delay.
    pub fn new(config: JitterConfig) -> Self {
        JitterBuffer {
            period_ms: 1000.0 / config.frames_per_second.max(1.0),
            delay_frames: config.min_delay_frames,
            config,
            offsets: VecDeque::with_capacity(ARRIVAL_WINDOW),
            playback: Playback::Buffering,
            catching_up: false,
            catch_up_frames: 0,
            starvations: 0,
        }
    }

    /// Frames up to `end` (exclusive) have arrived at `now_ms`, `count` of
    /// them with this arrival. Resizes the delay from the spread of recent
    /// arrivals.
    pub fn on_arrival(&mut self, now_ms: u64, end: u32, count: u32) {
        if count == 0 || count > MAX_FRAMES_PER_SAMPLE {
            return;
        }
        if self.offsets.len() == ARRIVAL_WINDOW {
            self.offsets.pop_front();
        }
        self.offsets
            .push_back(now_ms as f64 - f64::from(end) * self.period_ms);
        let (low, high) = self
            .offsets
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), &o| {
                (low.min(o), high.max(o))
            });
        let spread_frames = ((high - low) / self.period_ms).ceil() as u32;
        self.delay_frames = (spread_frames + MARGIN_FRAMES)
            .clamp(self.config.min_delay_frames, self.config.max_delay_frames);
    }

    /// The delay aimed at, in frames buffered.
    pub fn delay_frames(&self) -> u32 {
        self.delay_frames
    }

    /// Buffering or playing.
    pub fn playback(&self) -> Playback {
        self.playback
    }

    /// Extra frames run to catch up so far.
    pub fn catch_up_frames(&self) -> u64 {
        self.catch_up_frames
    }

    /// Times playback ran dry and buffered again.
    pub fn starvations(&self) -> u64 {
        self.starvations
    }

    /// One frame fell due with `buffered` frames waiting to be played;
    /// `ended`: no more will come (play out what is left).
    pub fn due(&mut self, buffered: u32, ended: bool) -> Due {
        let idle = Due {
            frames: 0,
            catch_up: 0,
        };
        if self.playback == Playback::Buffering {
            if buffered == 0 || (buffered < self.delay_frames && !ended) {
                return idle;
            }
            self.playback = Playback::Playing;
        }
        if buffered == 0 {
            if !ended {
                self.playback = Playback::Buffering;
                self.starvations += 1;
            }
            return idle;
        }
        let threshold = self.delay_frames + self.config.catch_up_threshold_frames;
        if buffered > threshold {
            self.catching_up = true;
        }
        if buffered <= self.delay_frames {
            self.catching_up = false;
        }
        // Down to the delay, counting the frame due now as one of the
        // frames that arrive meanwhile.
        let catch_up = if self.catching_up {
            buffered
                .saturating_sub(self.delay_frames)
                .min(self.config.max_catch_up_per_frame)
        } else {
            0
        };
        self.catch_up_frames += u64::from(catch_up);
        Due {
            frames: 1 + catch_up,
            catch_up,
        }
    }

    /// The speed to run the frame clock at (1.0: nominal), a little faster
    /// with more than the delay buffered and a little slower with less, so
    /// that clocks running at slightly different rates hold the delay
    /// without catching up or running dry.
    pub fn speed(&self, buffered: u32) -> f64 {
        if self.playback == Playback::Buffering {
            return 1.0;
        }
        let delay = f64::from(self.delay_frames.max(1));
        let error = (f64::from(buffered) - delay) / delay;
        1.0 + (error * MAX_SPEED_CHANGE).clamp(-MAX_SPEED_CHANGE, MAX_SPEED_CHANGE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer() -> JitterBuffer {
        JitterBuffer::new(JitterConfig::new(60.0))
    }

    #[test]
    fn playback_waits_for_the_minimum_delay_on_a_steady_stream() {
        let mut jitter = buffer();
        for frame in 1..=60u32 {
            jitter.on_arrival(u64::from(frame) * 1000 / 60, frame, 1);
        }
        assert_eq!(jitter.delay_frames(), 6);
        assert_eq!(jitter.due(5, false).frames, 0);
        assert_eq!(jitter.due(6, false).frames, 1);
        assert_eq!(jitter.playback(), Playback::Playing);
    }

    #[test]
    fn the_delay_grows_with_the_arrival_jitter_measured() {
        let mut jitter = buffer();
        // Frames arriving up to 100 ms late, every fifth one.
        for frame in 1..=120u32 {
            let late = if frame % 5 == 0 { 100 } else { 0 };
            jitter.on_arrival(u64::from(frame) * 1000 / 60 + late, frame, 1);
        }
        // A spread just over 100 ms (arrivals are whole milliseconds): 7
        // frames, plus the margin of 2.
        assert_eq!(jitter.delay_frames(), 9);
    }

    #[test]
    fn a_backlog_arriving_at_once_is_not_taken_for_jitter() {
        let mut jitter = buffer();
        jitter.on_arrival(0, 300, 300);
        for frame in 301..=360u32 {
            jitter.on_arrival(u64::from(frame - 300) * 1000 / 60, frame, 1);
        }
        assert_eq!(jitter.delay_frames(), 6);
    }

    #[test]
    fn far_behind_it_catches_up_to_the_delay_and_stops() {
        let mut jitter = buffer();
        let mut buffered = 40u32;
        let mut ticks = 0;
        while buffered > 6 {
            let due = jitter.due(buffered, false);
            assert!(due.frames >= 1 && due.frames <= 4);
            buffered = buffered - due.frames + 1; // one new frame per tick
            ticks += 1;
        }
        assert!(ticks <= 12, "{ticks} ticks to catch up 34 frames");
        assert_eq!(jitter.catch_up_frames(), 34);
        assert_eq!(jitter.due(buffered, false).catch_up, 0, "caught up");
        // A little more than the delay is left alone (no flapping).
        assert_eq!(jitter.due(8, false).catch_up, 0);
    }

    #[test]
    fn running_dry_buffers_again_up_to_the_delay() {
        let mut jitter = buffer();
        assert_eq!(jitter.due(6, false).frames, 1);
        assert_eq!(jitter.due(0, false).frames, 0);
        assert_eq!(jitter.playback(), Playback::Buffering);
        assert_eq!(jitter.starvations(), 1);
        assert_eq!(jitter.due(3, false).frames, 0);
        assert_eq!(jitter.due(6, false).frames, 1);
    }

    #[test]
    fn once_the_stream_ended_what_is_left_plays_out_without_waiting() {
        let mut jitter = buffer();
        assert_eq!(jitter.due(2, true).frames, 1);
        assert_eq!(jitter.due(1, true).frames, 1);
        assert_eq!(jitter.due(0, true).frames, 0);
        assert_eq!(jitter.starvations(), 0);
    }

    #[test]
    fn the_clock_runs_slightly_fast_above_the_delay_and_slow_below() {
        let mut jitter = buffer();
        jitter.due(6, false);
        assert_eq!(jitter.speed(6), 1.0);
        assert!(jitter.speed(9) > 1.0 && jitter.speed(9) <= 1.02);
        assert!(jitter.speed(3) < 1.0 && jitter.speed(3) >= 0.98);
    }
}
