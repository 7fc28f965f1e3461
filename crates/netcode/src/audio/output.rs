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
        self.integral =
            (self.integral + INTEGRAL * error * seconds).clamp(-self.max_adjust, self.max_adjust);
        self.adjust =
            (PROPORTIONAL * error + self.integral).clamp(-self.max_adjust, self.max_adjust);
        self.adjust
    }

    /// The adjustment in force.
    pub fn adjust(&self) -> f64 {
        self.adjust
    }
}

/// Core samples taken from the ring at a time.
const TAKEN_RUN: usize = 32;
/// How long a change of volume from silence to full takes: a step would click.
const VOLUME_RAMP_S: f64 = 0.02;

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
    /// Core samples taken from the ring a run at a time (copying runs is
    /// far cheaper than pulling one by one), and how many were used: at
    /// most a run (0.7 ms at 48 kHz) is taken before it is needed, out of
    /// a rollback's reach.
    input: [Stereo; TAKEN_RUN],
    taken: usize,
    rendered: u64,
    /// The volume asked for (0–1), and the one reached so far.
    volume_wanted: f32,
    volume: f32,
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
            input: [[0; 2]; TAKEN_RUN],
            taken: TAKEN_RUN,
            rendered: 0,
            volume_wanted: 1.0,
            volume: 1.0,
            config,
        }
    }

    /// Plays at `volume` (0: silence, 1: as the core made it), reached
    /// over [`VOLUME_RAMP_S`] from the next samples on.
    pub fn set_volume(&mut self, volume: f32) {
        self.volume_wanted = if volume.is_nan() {
            1.0
        } else {
            volume.clamp(0.0, 1.0)
        };
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
        // Locals: the loop's state stays in registers.
        let mut history = self.history;
        let mut phase = self.phase;
        for sample in out.iter_mut() {
            while phase >= 1.0 {
                if self.taken == TAKEN_RUN {
                    self.ring.pull_into(&mut self.input, &mut tap);
                    self.taken = 0;
                }
                let next = self.input[self.taken];
                self.taken += 1;
                history.copy_within(1.., 0);
                history[3] = [f32::from(next[0]), f32::from(next[1])];
                phase -= 1.0;
            }
            let w = catmull_rom_weights(phase as f32);
            let [a, b, c, d] = history;
            // Written out per channel: `array::map` is not inlined here.
            *sample = [
                to_i16(w[0] * a[0] + w[1] * b[0] + w[2] * c[0] + w[3] * d[0]),
                to_i16(w[0] * a[1] + w[1] * b[1] + w[2] * c[1] + w[3] * d[1]),
            ];
            phase += step;
        }
        self.history = history;
        self.phase = phase;
        self.rendered += out.len() as u64;
        self.apply_volume(out);
    }

    /// Scales `out` by the volume, moving it toward the one asked for by
    /// at most a ramp's step per sample.
    fn apply_volume(&mut self, out: &mut [Stereo]) {
        if self.volume == 1.0 && self.volume_wanted == 1.0 {
            return;
        }
        let step = (1.0 / (self.config.device_rate * VOLUME_RAMP_S).max(1.0)) as f32;
        let mut volume = self.volume;
        for sample in out.iter_mut() {
            volume += (self.volume_wanted - volume).clamp(-step, step);
            *sample = sample.map(|channel| to_i16(f32::from(channel) * volume));
        }
        self.volume = volume;
    }
}

/// Catmull-Rom weights of four samples for a point `t` (0–1) between the
/// middle two: computed once per output sample for both channels, and
/// exactly (0, 1, 0, 0) at 0.
fn catmull_rom_weights(t: f32) -> [f32; 4] {
    let t2 = t * t;
    let t3 = t2 * t;
    [
        0.5 * (-t3 + 2.0 * t2 - t),
        0.5 * (3.0 * t3 - 5.0 * t2 + 2.0),
        0.5 * (-3.0 * t3 + 4.0 * t2 + t),
        0.5 * (t3 - t2),
    ]
}

/// Rounds half away from zero; `as` saturates at the i16 range (and is one
/// instruction, where `f32::round` is a library call on baseline x86-64).
fn to_i16(value: f32) -> i16 {
    (value + 0.5f32.copysign(value)) as i16
}

#[cfg(test)]
mod tests {
    use super::*;

    const PER_FRAME: usize = 800;

    /// Plays `seconds` of a producer whose clock runs `producer_rate` times
    /// the consumer's, rendering 2 ms at a time; returns the pipeline and
    /// the fills (ms) seen while playing.
    fn play(seconds: u64, producer_rate: f64, speed: f64) -> (AudioPipeline, f64, f64) {
        let mut pipeline =
            AudioPipeline::new(AudioConfig::new(48_000.0, 48_000.0, AudioPolicy::Revoke));
        pipeline.set_speed(speed);
        let tone: Vec<i16> = (0..PER_FRAME)
            .flat_map(|i| {
                let v = (8_000.0 * (i as f64 * std::f64::consts::TAU / 80.0).sin()) as i16;
                [v, v]
            })
            .collect();
        let frame_us = 1_000_000.0 / 60.0 / producer_rate / speed;
        let mut next_frame_us = 0.0;
        let mut frame = 0u32;
        let mut out = vec![[0i16; 2]; 96];
        let (mut lowest, mut highest) = (f64::MAX, 0.0f64);
        for tick in 0..seconds * 500 {
            let now_us = (tick * 2_000) as f64;
            while next_frame_us <= now_us {
                pipeline.push(Frame::new(frame), false, &tone);
                frame += 1;
                next_frame_us += frame_us;
            }
            pipeline.render(&mut out, |_| {});
            if pipeline.ring.is_playing() {
                lowest = lowest.min(pipeline.queued_ms());
                highest = highest.max(pipeline.queued_ms());
            }
        }
        (pipeline, lowest, highest)
    }

    #[test]
    fn ten_minutes_of_a_clock_off_by_0_3_percent_never_run_dry_or_over_and_end_on_target() {
        for producer_rate in [1.003, 0.997] {
            let (pipeline, lowest, highest) = play(600, producer_rate, 1.0);
            let stats = pipeline.ring_stats();
            assert_eq!(stats.stalls, 0, "at {producer_rate}");
            assert_eq!(stats.silent_samples, 0);
            assert_eq!(stats.overrun_samples, 0);
            assert!(lowest > 20.0 && highest < 120.0, "{lowest}..{highest} ms");
            // The fill rises a frame (16.7 ms) at a time: compare its middle.
            let fill = pipeline.queued_ms();
            assert!(
                (fill - DEFAULT_TARGET_MS).abs() < 10.0 + 1000.0 / 60.0 / 2.0,
                "{fill} ms at {producer_rate}"
            );
            let adjust = pipeline.rate_adjust();
            assert!(
                (adjust - (producer_rate - 1.0)).abs() < 0.0005,
                "adjust {adjust} for {producer_rate}"
            );
        }
    }

    #[test]
    fn a_time_sync_speed_beyond_the_rate_control_range_is_followed() {
        // 2 % faster frames: rate control alone (±0.5 %) would overflow.
        let (pipeline, lowest, highest) = play(60, 1.0, 1.02);
        let stats = pipeline.ring_stats();
        assert_eq!((stats.stalls, stats.overrun_samples), (0, 0));
        assert!(lowest > 20.0 && highest < 120.0, "{lowest}..{highest} ms");
    }

    #[test]
    fn equal_rates_pass_samples_through_unchanged() {
        let mut pipeline = AudioPipeline::new(
            AudioConfig::new(48_000.0, 48_000.0, AudioPolicy::Revoke).with_target_ms(1.0),
        );
        pipeline.rate = RateControl::new(48.0, 0.0);
        let audio: Vec<i16> = (0..1600).map(|i| (i * 7 % 3000) as i16).collect();
        pipeline.push(Frame::new(0), false, &audio);
        pipeline.push(Frame::new(1), false, &audio);
        let mut out = vec![[0i16; 2]; 1200];
        pipeline.render(&mut out, |_| {});
        // After the 5 ms fade-in (240 samples) and the cubic's 2 samples.
        for (index, sample) in out.iter().enumerate().skip(242) {
            let source = index - 2;
            assert_eq!(sample[0], audio[(source % 800) * 2], "at {index}");
        }
    }

    #[test]
    fn a_volume_change_ramps_in_small_steps_and_then_holds() {
        let mut pipeline = AudioPipeline::new(
            AudioConfig::new(48_000.0, 48_000.0, AudioPolicy::Revoke).with_target_ms(1.0),
        );
        pipeline.rate = RateControl::new(48.0, 0.0);
        let loud = vec![10_000i16; 1600];
        for frame in 0..4 {
            pipeline.push(Frame::new(frame), false, &loud);
        }
        let mut out = vec![[0i16; 2]; 600];
        // Past the fade-in, at full volume.
        pipeline.render(&mut out, |_| {});
        assert_eq!(out[599], [10_000, 10_000]);
        pipeline.set_volume(0.5);
        pipeline.render(&mut out, |_| {});
        // Full scale takes 20 ms (960 samples at 48 kHz): a quarter of it, 240.
        let steps: Vec<i32> = out
            .windows(2)
            .map(|pair| i32::from(pair[0][0]) - i32::from(pair[1][0]))
            .collect();
        assert!(
            steps.iter().all(|&step| (0..=12).contains(&step)),
            "{steps:?}"
        );
        assert!((7_400..7_600).contains(&out[239][0]), "{:?}", out[239]);
        assert_eq!(out[599], [5_000, 5_000]);
        pipeline.set_volume(0.0);
        pipeline.render(&mut out, |_| {});
        pipeline.render(&mut out, |_| {});
        assert_eq!(out[599], [0, 0], "muted");
    }

    #[test]
    fn converting_31_4_khz_to_48_khz_keeps_a_tone_at_its_pitch() {
        let core_rate = 31_400.0;
        let mut pipeline =
            AudioPipeline::new(AudioConfig::new(core_rate, 48_000.0, AudioPolicy::Revoke));
        let per_frame = 523;
        let mut n = 0u64;
        let mut out = vec![[0i16; 2]; 800];
        let mut rendered = Vec::new();
        for frame in 0..120 {
            let audio: Vec<i16> = (0..per_frame)
                .flat_map(|_| {
                    n += 1;
                    let v =
                        10_000.0 * (std::f64::consts::TAU * 1_000.0 * n as f64 / core_rate).sin();
                    [v as i16; 2]
                })
                .collect();
            pipeline.push(Frame::new(frame), false, &audio);
            pipeline.render(&mut out, |_| {});
            if frame >= 30 {
                rendered.extend_from_slice(&out);
            }
        }
        // Zero crossings: 2 per period of the 1 kHz tone at 48 kHz.
        let crossings = rendered
            .windows(2)
            .filter(|w| (w[0][0] < 0) != (w[1][0] < 0))
            .count() as f64;
        let hz = crossings / 2.0 / (rendered.len() as f64 / 48_000.0);
        assert!((hz - 1_000.0).abs() < 10.0, "{hz} Hz");
    }

    #[test]
    fn rate_control_consumes_faster_when_fuller_than_its_target() {
        let mut control = RateControl::new(3_000.0, 0.005);
        assert!(control.update(4_000.0, 0.01) > 0.0);
        let mut control = RateControl::new(3_000.0, 0.005);
        assert!(control.update(2_000.0, 0.01) < 0.0);
        assert_eq!(
            control.update(100_000.0, 10.0),
            0.005,
            "never beyond ±0.5 %"
        );
    }
}
