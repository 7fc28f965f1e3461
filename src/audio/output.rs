//! From the ring to the device: [`AudioPipeline`] converts the core's rate
//! to the device's with a cubic (Catmull-Rom) resampler whose ratio follows
//! the session's time-sync speed smoothly and, by up to ±0.5 %
//! ([`RateControl`], dynamic rate control), holds the ring's fill near its
//! target so the queue never runs dry or overflows when the producer's and
//! the device's clocks disagree. Pure: the consumer says how many device
//! samples it wants; time is never read.

use crate::audio::ring::{AudioPolicy, AudioRing, Pulled, RingConfig, RingStats, Stereo};
use crate::rollback::Frame;

/// How an [`AudioPipeline`] is set up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AudioConfig {
    /// The core's sample rate (Hz).
    pub core_rate: f64,
    /// The device's sample rate (Hz).
    pub device_rate: f64,
    /// The ring; its `resume_fill` is also the fill rate control aims at.
    pub ring: RingConfig,
    /// The largest rate adjustment for holding the fill (0.005: ±0.5 %).
    pub max_adjust: f64,
    /// How quickly a new time-sync speed is followed (seconds to get 63 %
    /// of the way): smooth, not stepped, pitch changes.
    pub speed_time_constant_s: f64,
}

/// The default target fill, and the latency the ring adds (ms).
pub const DEFAULT_TARGET_MS: f64 = 64.0;
/// The default crossfade at a splice (ms).
pub const DEFAULT_CROSSFADE_MS: f64 = 5.0;

impl AudioConfig {
    /// The defaults for a core at `core_rate` played at `device_rate`:
    /// see [`RingConfig::for_rate`], ±0.5 % rate control, speed changes
    /// followed over 250 ms.
    pub fn new(core_rate: f64, device_rate: f64, policy: AudioPolicy) -> AudioConfig {
        AudioConfig {
            core_rate,
            device_rate,
            ring: RingConfig::for_rate(core_rate, policy),
            max_adjust: 0.005,
            speed_time_constant_s: 0.25,
        }
    }

    /// The same with a crossfade of `ms` milliseconds.
    pub fn with_crossfade_ms(mut self, ms: f64) -> AudioConfig {
        self.ring.crossfade = ((self.core_rate * ms / 1000.0).round() as usize).max(1);
        self
    }

    /// The same aiming at `ms` milliseconds queued.
    pub fn with_target_ms(mut self, ms: f64) -> AudioConfig {
        self.ring.resume_fill = ((self.core_rate * ms / 1000.0).round() as usize).max(1);
        self.ring.capacity = self.ring.capacity.max(self.ring.resume_fill * 4);
        self
    }
}

/// A PI controller turning the ring's fill into a small rate adjustment:
/// proportional for quick answers, integral so a steady clock mismatch ends
/// with the fill on target rather than offset from it.
#[derive(Clone, Debug)]
pub struct RateControl {
    target: f64,
    max_adjust: f64,
    /// The fill, averaged over about 100 ms (it rises a frame at a time).
    average: Option<f64>,
    integral: f64,
    adjust: f64,
}

/// Proportional gain: the whole ±0.5 % at a quarter of the target off.
const PROPORTIONAL: f64 = 0.02;
/// Integral gain (per second of relative error).
const INTEGRAL: f64 = 0.003;
/// Averaging time of the measured fill (s).
const FILL_AVERAGING_S: f64 = 0.1;

impl RateControl {
    /// Aims at `target` samples queued, adjusting by at most `max_adjust`.
    pub fn new(target: f64, max_adjust: f64) -> RateControl {
        RateControl {
            target: target.max(1.0),
            max_adjust,
            average: None,
            integral: 0.0,
            adjust: 0.0,
        }
    }

    /// Takes the fill measured after `seconds` more of output and returns
    /// the adjustment: positive consumes faster.
    pub fn update(&mut self, fill: f64, seconds: f64) -> f64 {
        let average = match self.average {
            None => fill,
            Some(average) => {
                average + (fill - average) * (1.0 - (-seconds / FILL_AVERAGING_S).exp())
            }
        };
        self.average = Some(average);
        let error = (average - self.target) / self.target;
        self.integral = (self.integral + INTEGRAL * error * seconds)
            .clamp(-self.max_adjust, self.max_adjust);
        self.adjust =
            (PROPORTIONAL * error + self.integral).clamp(-self.max_adjust, self.max_adjust);
        self.adjust
    }

    /// The adjustment in force.
    pub fn adjust(&self) -> f64 {
        self.adjust
    }
}

/// The ring, rate control and resampler: frames in, device samples out.
#[derive(Debug)]
pub struct AudioPipeline {
    config: AudioConfig,
    ring: AudioRing,
    rate: RateControl,
    /// The speed time sync asks for, and the one followed so far.
    speed_wanted: f64,
    speed: f64,
    /// The last four core samples, for cubic interpolation between [1] and [2].
    history: [[f32; 2]; 4],
    /// Position between history[1] and history[2] (0–1).
    phase: f64,
    rendered: u64,
}

impl AudioPipeline {
    /// A pipeline with an empty ring.
    pub fn new(config: AudioConfig) -> AudioPipeline {
        AudioPipeline {
            ring: AudioRing::new(config.ring),
            rate: RateControl::new(config.ring.resume_fill as f64, config.max_adjust),
            speed_wanted: 1.0,
            speed: 1.0,
            history: [[0.0; 2]; 4],
            phase: 1.0,
            rendered: 0,
            config,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &AudioConfig {
        &self.config
    }

    /// Adds a frame's audio (see [`AudioRing::push`]).
    pub fn push(&mut self, frame: Frame, resimulated: bool, interleaved: &[i16]) {
        self.ring.push(frame, resimulated, interleaved);
    }

    /// The producer now runs at `speed` times its nominal frame rate (time
    /// sync): followed smoothly from the next samples on.
    pub fn set_speed(&mut self, speed: f64) {
        self.speed_wanted = speed.clamp(0.5, 2.0);
    }

    /// Plays out what is queued without waiting to refill (the end).
    pub fn drain(&mut self) {
        self.ring.drain();
    }

    /// Core samples queued.
    pub fn queued(&self) -> usize {
        self.ring.queued()
    }

    /// Milliseconds of audio queued (at the core's rate).
    pub fn queued_ms(&self) -> f64 {
        self.ring.queued() as f64 * 1000.0 / self.config.core_rate
    }

    /// The ring's statistics.
    pub fn ring_stats(&self) -> RingStats {
        self.ring.stats()
    }

    /// The rate adjustment in force (positive: consuming faster).
    pub fn rate_adjust(&self) -> f64 {
        self.rate.adjust()
    }

    /// Device samples rendered so far.
    pub fn rendered(&self) -> u64 {
        self.rendered
    }

    /// Fills `out` with device samples, telling `tap` about every core
    /// sample taken from the ring.
    pub fn render(&mut self, out: &mut [Stereo], mut tap: impl FnMut(&Pulled)) {
        if out.is_empty() {
            return;
        }
        let seconds = out.len() as f64 / self.config.device_rate;
        let smoothing = 1.0 - (-seconds / self.config.speed_time_constant_s.max(1e-6)).exp();
        self.speed += (self.speed_wanted - self.speed) * smoothing;
        // Only while playing: the fill climbing to the target before the
        // first sound (or after a stall) is no clock error to correct.
        let adjust = if self.ring.is_playing() {
            self.rate.update(self.ring.queued() as f64, seconds)
        } else {
            self.rate.adjust()
        };
        let step = self.config.core_rate / self.config.device_rate * self.speed * (1.0 + adjust);
        for sample in out.iter_mut() {
            while self.phase >= 1.0 {
                let pulled = self.ring.pull();
                tap(&pulled);
                self.history.copy_within(1.., 0);
                self.history[3] = [f32::from(pulled.sample[0]), f32::from(pulled.sample[1])];
                self.phase -= 1.0;
            }
            let t = self.phase as f32;
            *sample = [
                to_i16(catmull_rom(self.history, 0, t)),
                to_i16(catmull_rom(self.history, 1, t)),
            ];
            self.phase += step;
        }
        self.rendered += out.len() as u64;
    }
}

/// Catmull-Rom between `h[1]` and `h[2]` at `t` (exactly `h[1]` at 0).
fn catmull_rom(h: [[f32; 2]; 4], channel: usize, t: f32) -> f32 {
    let [p0, p1, p2, p3] = h.map(|s| s[channel]);
    p1 + 0.5
        * t
        * (p2 - p0 + t * (2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3 + t * (3.0 * (p1 - p2) + p3 - p0)))
}

fn to_i16(value: f32) -> i16 {
    value.round().clamp(f32::from(i16::MIN), f32::from(i16::MAX)) as i16
}
