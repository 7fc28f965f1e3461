//! The revocable ring: audio queued as per-frame chunks, so a rollback can
//! replace what its mispredicted frames made before the consumer reaches it.
//! Pure: no device, no clock; buffers are reused, so once every chunk buffer
//! has grown to a frame's size nothing is allocated per frame.

use crate::rollback::Frame;
use std::collections::VecDeque;
use std::f32::consts::FRAC_PI_2;

/// One stereo sample: left, right.
pub type Stereo = [i16; 2];

/// What happens to the audio of re-simulated frames.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AudioPolicy {
    /// Replace the queued audio of corrected frames with the re-simulated
    /// audio, crossfading where the consumer is (netcade's behaviour).
    #[default]
    Revoke,
    /// Keep the predicted audio and throw the re-simulated audio away (what
    /// other rollback frontends do), for comparison.
    Drop,
}

impl std::fmt::Display for AudioPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AudioPolicy::Revoke => "revoke",
            AudioPolicy::Drop => "drop",
        })
    }
}

impl std::str::FromStr for AudioPolicy {
    type Err = String;

    /// The names [`AudioPolicy`] displays as: `revoke`, `drop`.
    fn from_str(name: &str) -> Result<AudioPolicy, String> {
        match name {
            "revoke" => Ok(AudioPolicy::Revoke),
            "drop" => Ok(AudioPolicy::Drop),
            _ => Err(format!("unknown audio policy {name:?} (revoke or drop)")),
        }
    }
}

/// How a ring behaves; lengths in stereo samples at the core's rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RingConfig {
    /// Revoke or drop re-simulated audio.
    pub policy: AudioPolicy,
    /// Length of the crossfade at a splice, and of the fades into and out
    /// of a stall (at least 1).
    pub crossfade: usize,
    /// Most samples queued: beyond it the oldest are skipped (an overrun).
    pub capacity: usize,
    /// Most chunks (frames) queued, whatever their size.
    pub max_chunks: usize,
    /// After a stall (or before the first sound), playing starts again once
    /// this many samples are queued: the latency a device would buffer.
    pub resume_fill: usize,
}

impl RingConfig {
    /// The defaults for a core producing `sample_rate` samples a second:
    /// 5 ms crossfades, playing from 64 ms queued, at most 500 ms queued.
    pub fn for_rate(sample_rate: f64, policy: AudioPolicy) -> RingConfig {
        let samples = |ms: f64| ((sample_rate * ms / 1000.0).round() as usize).max(1);
        RingConfig {
            policy,
            crossfade: samples(5.0),
            capacity: samples(500.0),
            max_chunks: 256,
            resume_fill: samples(64.0),
        }
    }
}

/// What the ring did, for summaries and measurements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingStats {
    /// Corrections that landed where the consumer was, crossfaded.
    pub splices: u64,
    /// Queued samples replaced by re-simulated audio.
    pub revoked_samples: u64,
    /// Re-simulated samples not queued: their frame was already played
    /// (revoke) or the policy drops them (drop).
    pub discarded_samples: u64,
    /// Times the queue ran dry and the output faded to silence.
    pub stalls: u64,
    /// Silent samples handed out while stalled (after the first sound).
    pub silent_samples: u64,
    /// Queued samples skipped because the queue was full.
    pub overrun_samples: u64,
    /// The largest change between consecutive output samples during a
    /// crossfade, and from the last sample before it.
    pub largest_splice_step: u16,
}

/// A sample the consumer took: its value and where in the game's audio it
/// came from (`None` for silence).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pulled {
    /// The value handed out (mixed during a crossfade, faded at a stall).
    pub sample: Stereo,
    /// The frame and the sample within it that was played.
    pub source: Option<(Frame, u32)>,
}

/// A frame's audio.
#[derive(Debug)]
struct Chunk {
    frame: Frame,
    samples: Vec<Stereo>,
}

/// A crossfade from the revoked stream (its next samples, kept when the
/// correction landed) to the stream now queued.
#[derive(Debug)]
struct Crossfade {
    from: Vec<[f32; 2]>,
    len: usize,
    position: usize,
    /// The equal-power curve (sin, cos) for a fade of the configured
    /// length, computed once: a fade's trigonometry is not redone per
    /// sample or per splice.
    curve: Vec<[f32; 2]>,
    /// The gains (fade-out, fade-in) at each position of this fade, for
    /// the correlation measured so far.
    gains: Vec<[f32; 2]>,
}

impl Crossfade {
    fn new(length: usize) -> Crossfade {
        let curve = (0..length)
            .map(|position| {
                let (sin, cos) = Crossfade::angle(position, length).sin_cos();
                [sin, cos]
            })
            .collect();
        Crossfade {
            from: vec![[0.0; 2]; length],
            len: 0,
            position: 0,
            curve,
            gains: vec![[0.0; 2]; length],
        }
    }

    fn angle(position: usize, len: usize) -> f32 {
        (position as f32 + 0.5) / len as f32 * FRAC_PI_2
    }

    fn active(&self) -> bool {
        self.position < self.len
    }

    /// Sets the gains for streams of correlation `correlation` (0–1).
    /// Equal power (cos² + sin² = 1) keeps the loudness of unrelated
    /// streams; streams that are alike would add up louder (+3 dB, and
    /// steeper steps, for identical ones), so both gains are scaled by
    /// 1/√(1 + 2·sin·cos·r): identical streams pass unchanged.
    fn set_correlation(&mut self, correlation: f32) {
        let len = self.len;
        let gains_for = |[sin, cos]: [f32; 2]| {
            let scale = 1.0 / (1.0 + 2.0 * sin * cos * correlation).sqrt();
            [cos * scale, sin * scale]
        };
        if len == self.curve.len() {
            for (gains, &curve) in self.gains.iter_mut().zip(&self.curve) {
                *gains = gains_for(curve);
            }
        } else {
            // A fade cut short (little was queued): its own curve.
            for (position, gains) in self.gains[..len].iter_mut().enumerate() {
                let (sin, cos) = Crossfade::angle(position, len).sin_cos();
                *gains = gains_for([sin, cos]);
            }
        }
    }

    /// Mixes `to` with the revoked stream at `position`.
    fn mix(&self, position: usize, to: [f32; 2]) -> [f32; 2] {
        mix(self.from[position], self.gains[position], to)
    }
}

/// `from` faded out and `to` faded in by `[fade_out, fade_in]`.
#[inline]
fn mix(from: [f32; 2], [fade_out, fade_in]: [f32; 2], to: [f32; 2]) -> [f32; 2] {
    [
        from[0] * fade_out + to[0] * fade_in,
        from[1] * fade_out + to[1] * fade_in,
    ]
}

/// Running sums for a correlation, four lanes each.
#[derive(Default)]
struct Sums {
    both: [f64; 4],
    from: [f64; 4],
    to: [f64; 4],
}

impl Sums {
    fn add(&mut self, from: &[[f32; 2]], to: &[Stereo]) {
        let lanes = |from: &[[f32; 2]], to: &[Stereo]| -> ([f64; 4], [f64; 4]) {
            let mut a = [0.0; 4];
            let mut b = [0.0; 4];
            for (lane, (from, to)) in from.iter().zip(to).enumerate() {
                for channel in 0..2 {
                    a[2 * lane + channel] = f64::from(from[channel]);
                    b[2 * lane + channel] = f64::from(to[channel]);
                }
            }
            (a, b)
        };
        for (from, to) in from.chunks(2).zip(to.chunks(2)) {
            let (a, b) = lanes(from, to);
            for lane in 0..4 {
                self.both[lane] += a[lane] * b[lane];
                self.from[lane] += a[lane] * a[lane];
                self.to[lane] += b[lane] * b[lane];
            }
        }
    }
}

/// Audio per frame between the frame loop and the consumer. See the module docs.
#[derive(Debug)]
pub struct AudioRing {
    config: RingConfig,
    chunks: VecDeque<Chunk>,
    spare: Vec<Vec<Stereo>>,
    /// Samples of the front chunk already played.
    read: usize,
    /// Samples queued and not played yet.
    queued: usize,
    /// The next sample to play when nothing is queued: a frame and an
    /// offset into it (not 0 after a correction landed inside a frame).
    next_frame: Frame,
    next_offset: usize,
    /// The newest frame pushed.
    newest: Option<Frame>,
    fade: Crossfade,
    scratch: Vec<[f32; 2]>,
    /// Output gain (0–1) for the fades into and out of stalls.
    gain: f32,
    playing: bool,
    /// Whether anything was ever played (silence before it is no stall).
    sounded: bool,
    /// Play out whatever is queued without waiting for `resume_fill`.
    draining: bool,
    last_output: Stereo,
    /// Samples to watch after a splice for the splice-step statistic.
    watch_steps: usize,
    stats: RingStats,
}

impl AudioRing {
    /// An empty ring.
    pub fn new(mut config: RingConfig) -> AudioRing {
        config.crossfade = config.crossfade.max(1);
        config.max_chunks = config.max_chunks.max(1);
        config.capacity = config.capacity.max(config.resume_fill + 1);
        AudioRing {
            config,
            chunks: VecDeque::with_capacity(config.max_chunks + 1),
            spare: Vec::with_capacity(config.max_chunks + 1),
            read: 0,
            queued: 0,
            next_frame: Frame::new(0),
            next_offset: 0,
            newest: None,
            fade: Crossfade::new(config.crossfade),
            scratch: vec![[0.0; 2]; config.crossfade],
            gain: 0.0,
            playing: false,
            sounded: false,
            draining: false,
            last_output: [0; 2],
            watch_steps: 0,
            stats: RingStats::default(),
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &RingConfig {
        &self.config
    }

    /// Samples queued and not played yet.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Whether the consumer gets queued audio (not silence: before the
    /// first sound, or stalled).
    pub fn is_playing(&self) -> bool {
        self.playing
    }

    /// What the ring did so far.
    pub fn stats(&self) -> RingStats {
        self.stats
    }

    /// Adds the audio `frame` made (interleaved stereo). A frame at or
    /// before the newest one pushed is a re-simulation after a rollback:
    /// under [`AudioPolicy::Revoke`] every queued sample of it and later
    /// frames is revoked and this audio takes its place from where the
    /// consumer is; played audio is never touched. Under
    /// [`AudioPolicy::Drop`] re-simulated audio is thrown away.
    pub fn push(&mut self, frame: Frame, resimulated: bool, interleaved: &[i16]) {
        let count = interleaved.len() / 2;
        if resimulated && self.config.policy == AudioPolicy::Drop {
            self.stats.discarded_samples += count as u64;
            return;
        }
        if self.newest.is_some_and(|newest| frame <= newest) {
            self.revoke_from(frame);
        }
        self.newest = Some(frame);
        // A frame without sound (many real cores' first frames) queues
        // nothing: an empty chunk would never be played out of the queue.
        if count == 0 {
            return;
        }
        let skip = if self.chunks.is_empty() {
            if frame < self.next_frame {
                self.stats.discarded_samples += count as u64;
                return;
            }
            let skip = if frame == self.next_frame {
                self.next_offset.min(count)
            } else {
                0
            };
            self.next_frame = frame;
            self.next_offset = 0;
            self.read = skip;
            skip
        } else {
            0
        };
        self.stats.discarded_samples += skip as u64;
        let mut samples = self.spare.pop().unwrap_or_default();
        samples.clear();
        samples.extend(interleaved.chunks_exact(2).map(|pair| [pair[0], pair[1]]));
        self.queued += count - skip;
        self.chunks.push_back(Chunk { frame, samples });
        if self.queued > self.config.capacity || self.chunks.len() > self.config.max_chunks {
            self.skip_oldest();
        }
    }

    /// Plays out what is queued without waiting for the resume fill again
    /// (the end of a match).
    pub fn drain(&mut self) {
        self.draining = true;
    }

    /// Fills `out` as [`AudioRing::pull`] would, one sample after another,
    /// telling `tap` about each. The fast path: while playing at full gain
    /// with more than a crossfade queued, a run of a chunk is copied whole,
    /// and only the samples of an active crossfade are mixed (from gains
    /// computed once per splice); the rest goes through `pull`.
    pub fn pull_into(&mut self, out: &mut [Stereo], mut tap: impl FnMut(&Pulled)) {
        let mut done = 0;
        while done < out.len() {
            let steady = self.playing && self.gain >= 1.0 && self.queued > self.config.crossfade;
            if !steady {
                let pulled = self.pull();
                tap(&pulled);
                out[done] = pulled.sample;
                done += 1;
                continue;
            }
            if self.fade.active() && self.fade.position == 0 {
                self.measure_correlation();
            }
            let chunk = &self.chunks[0];
            // The last `crossfade` queued samples go one by one: they fade
            // out if nothing follows them (the gain stays 1 before them).
            let run = (out.len() - done)
                .min(chunk.samples.len() - self.read)
                .min(self.queued - self.config.crossfade);
            let taken = &chunk.samples[self.read..self.read + run];
            let target = &mut out[done..done + run];
            let fade = &mut self.fade;
            let mixed = if fade.active() {
                run.min(fade.len - fade.position)
            } else {
                0
            };
            // Zipped slices, no indexing: no bounds checks in the loop.
            let positions = fade.position..fade.position + mixed;
            for (((sample, raw), from), gains) in target[..mixed]
                .iter_mut()
                .zip(&taken[..mixed])
                .zip(&fade.from[positions.clone()])
                .zip(&fade.gains[positions])
            {
                let value = mix(*from, *gains, [f32::from(raw[0]), f32::from(raw[1])]);
                *sample = [to_i16(value[0]), to_i16(value[1])];
            }
            fade.position += mixed;
            target[mixed..].copy_from_slice(&taken[mixed..]);
            let watched = run.min(self.watch_steps);
            if watched > 0 {
                let mut previous = self.last_output;
                let mut largest = self.stats.largest_splice_step;
                for &sample in &target[..watched] {
                    largest = largest.max(sample_step(previous, sample));
                    previous = sample;
                }
                self.stats.largest_splice_step = largest;
                self.watch_steps -= watched;
            }
            for (offset, &sample) in (self.read..).zip(target.iter()) {
                tap(&Pulled {
                    sample,
                    source: Some((chunk.frame, offset as u32)),
                });
            }
            self.last_output = target[run - 1];
            let ended = self.read + run == chunk.samples.len();
            self.read += run;
            self.queued -= run;
            done += run;
            if ended {
                self.retire_front();
            }
        }
    }

    /// Hands out the next sample: silence while stalled, the queued audio
    /// otherwise, fading out as the queue runs dry and back in after.
    pub fn pull(&mut self) -> Pulled {
        if !self.playing {
            let ready = if self.draining {
                self.queued > 0
            } else {
                self.queued >= self.config.resume_fill
            };
            if !ready {
                return self.silence();
            }
            self.playing = true;
            self.sounded = true;
            self.gain = 0.0;
        }
        if self.queued == 0 {
            self.playing = false;
            // Running out at the end is no stall.
            if !self.draining {
                self.stats.stalls += 1;
            }
            // The revoked stream is stale after a stall: the fade-in covers it.
            self.fade.len = 0;
            return self.silence();
        }
        let steps = self.config.crossfade as f32;
        if self.gain >= 1.0
            && self.queued > self.config.crossfade
            && !self.fade.active()
            && self.watch_steps == 0
        {
            // Steady play: the sample as it is.
            let chunk = &self.chunks[0];
            let pulled = Pulled {
                sample: chunk.samples[self.read],
                source: Some((chunk.frame, self.read as u32)),
            };
            self.read += 1;
            self.queued -= 1;
            if self.read == chunk.samples.len() {
                self.retire_front();
            }
            self.last_output = pulled.sample;
            return pulled;
        }
        // Rising by one step a sample, and never above what is left, so the
        // gain reaches 0 exactly when the queue runs dry.
        self.gain = (self.gain + 1.0 / steps)
            .min(self.queued as f32 / steps)
            .min(1.0);
        let fading = self.fade.active();
        if fading && self.fade.position == 0 {
            self.measure_correlation();
        }
        let chunk = &self.chunks[0];
        let source = (chunk.frame, self.read as u32);
        let raw = chunk.samples[self.read];
        self.read += 1;
        self.queued -= 1;
        if self.read == chunk.samples.len() {
            self.retire_front();
        }
        let mut value = [f32::from(raw[0]), f32::from(raw[1])];
        if fading {
            value = self.fade.mix(self.fade.position, value);
            self.fade.position += 1;
        }
        // A smooth (raised-cosine) curve for the stall fades.
        let gain = 0.5 - 0.5 * (self.gain * std::f32::consts::PI).cos();
        let sample = [to_i16(value[0] * gain), to_i16(value[1] * gain)];
        if self.watch_steps > 0 {
            self.watch_steps -= 1;
            let step = sample_step(self.last_output, sample);
            self.stats.largest_splice_step = self.stats.largest_splice_step.max(step);
        }
        self.last_output = sample;
        Pulled {
            sample,
            source: Some(source),
        }
    }

    fn silence(&mut self) -> Pulled {
        if self.sounded {
            self.stats.silent_samples += 1;
        }
        self.last_output = [0; 2];
        Pulled {
            sample: [0; 2],
            source: None,
        }
    }

    /// The front chunk was played to its end.
    fn retire_front(&mut self) {
        if let Some(chunk) = self.chunks.pop_front() {
            self.next_frame = chunk.frame.next();
            self.next_offset = 0;
            self.spare.push(chunk.samples);
        }
        self.read = 0;
    }

    /// Removes every queued sample of `frame` and later frames; when the
    /// consumer is inside the revoked audio (or past `frame` already), keeps
    /// the revoked stream's next samples to crossfade from.
    fn revoke_from(&mut self, frame: Frame) {
        let Some(first) = self.chunks.iter().position(|chunk| chunk.frame >= frame) else {
            return;
        };
        if first == 0 {
            let front = self.chunks[0].frame;
            let inside = self.read > 0 || front > frame || self.fade.active();
            if inside && self.playing && self.keep_crossfade() {
                self.stats.splices += 1;
            }
            self.next_frame = front;
            self.next_offset = self.read;
        }
        while self.chunks.len() > first {
            let Some(chunk) = self.chunks.pop_back() else {
                break;
            };
            let start = if self.chunks.len() == first && first == 0 {
                self.read
            } else {
                0
            };
            let unplayed = chunk.samples.len() - start;
            self.queued -= unplayed;
            self.stats.revoked_samples += unplayed as u64;
            self.spare.push(chunk.samples);
        }
        if first == 0 {
            self.read = 0;
        }
    }

    /// Keeps the next samples the consumer would have played (through any
    /// crossfade still going) as the start of a new crossfade; false when
    /// nothing is queued to fade from.
    fn keep_crossfade(&mut self) -> bool {
        let wanted = self.config.crossfade;
        let mut kept = 0;
        let mut position = self.fade.position;
        if position == 0 && self.fade.active() {
            // Nothing of that fade played yet, nothing measured: its gains
            // are for unrelated streams.
            self.fade.set_correlation(0.0);
        }
        for (index, chunk) in self.chunks.iter().enumerate() {
            let start = if index == 0 { self.read } else { 0 };
            let count = (chunk.samples.len() - start).min(wanted - kept);
            let kept_now = &mut self.scratch[kept..kept + count];
            for (slot, raw) in kept_now.iter_mut().zip(&chunk.samples[start..]) {
                *slot = [f32::from(raw[0]), f32::from(raw[1])];
            }
            // The part the crossfade still going would have mixed.
            let mixing = count.min(self.fade.len.saturating_sub(position));
            for (offset, slot) in kept_now[..mixing].iter_mut().enumerate() {
                *slot = self.fade.mix(position + offset, *slot);
            }
            position += mixing;
            kept += count;
            if kept == wanted {
                break;
            }
        }
        if kept == 0 {
            return false;
        }
        std::mem::swap(&mut self.scratch, &mut self.fade.from);
        self.fade.len = kept;
        self.fade.position = 0;
        self.watch_steps = kept + 1;
        true
    }

    /// Measures the correlation (0–1; unlike or opposed streams count as
    /// 0) of the revoked samples being faded from with the samples queued
    /// from the consumer's position on, over the fade's length, and sets
    /// the fade's gains for it.
    fn measure_correlation(&mut self) {
        // Sums in four lanes (two samples' two channels): independent
        // additions the compiler can put side by side.
        let mut sums = Sums::default();
        let mut from = &self.fade.from[..self.fade.len];
        for (index, chunk) in self.chunks.iter().enumerate() {
            let start = if index == 0 { self.read } else { 0 };
            let to = &chunk.samples[start..];
            let length = to.len().min(from.len());
            sums.add(&from[..length], &to[..length]);
            from = &from[length..];
            if from.is_empty() {
                break;
            }
        }
        let [both, from_energy, to_energy] =
            [sums.both, sums.from, sums.to].map(|lanes| lanes.iter().sum::<f64>());
        let energy = (from_energy * to_energy).sqrt();
        let correlation = if energy > 0.0 {
            (both / energy).clamp(0.0, 1.0) as f32
        } else {
            0.0
        };
        self.fade.set_correlation(correlation);
    }

    /// The queue is over its bounds: skips the oldest audio, crossfading
    /// from where the consumer was.
    fn skip_oldest(&mut self) {
        if self.playing {
            self.keep_crossfade();
        }
        while self.queued > self.config.capacity || self.chunks.len() > self.config.max_chunks {
            let Some(chunk) = self.chunks.pop_front() else {
                break;
            };
            let unplayed = chunk.samples.len() - self.read;
            self.queued -= unplayed;
            self.stats.overrun_samples += unplayed as u64;
            self.next_frame = chunk.frame.next();
            self.spare.push(chunk.samples);
            self.read = 0;
        }
    }
}

/// Rounds half away from zero; `as` saturates at the i16 range (and is one
/// instruction, where `f32::round` is a library call on baseline x86-64).
fn to_i16(value: f32) -> i16 {
    (value + 0.5f32.copysign(value)) as i16
}

/// The larger of the two channels' changes from `a` to `b`.
#[inline]
pub fn sample_step(a: Stereo, b: Stereo) -> u16 {
    let left = (i32::from(a[0]) - i32::from(b[0])).unsigned_abs();
    let right = (i32::from(a[1]) - i32::from(b[1])).unsigned_abs();
    left.max(right).min(u32::from(u16::MAX)) as u16
}

/// The largest change between consecutive samples of `samples`.
pub fn largest_step(samples: &[Stereo]) -> u16 {
    samples
        .windows(2)
        .map(|pair| sample_step(pair[0], pair[1]))
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAME_SAMPLES: usize = 10;

    fn small_ring(crossfade: usize, policy: AudioPolicy) -> AudioRing {
        AudioRing::new(RingConfig {
            policy,
            crossfade,
            capacity: 1000,
            max_chunks: 64,
            resume_fill: 20,
        })
    }

    /// Frame `frame`'s audio in timeline `timeline`: every sample says which
    /// frame, sample and timeline it is.
    fn frame_audio(frame: u32, timeline: i16) -> Vec<i16> {
        (0..FRAME_SAMPLES as i16)
            .flat_map(|i| {
                let value = frame as i16 * 100 + i + timeline * 5000;
                [value, -value]
            })
            .collect()
    }

    fn pull_n(ring: &mut AudioRing, n: usize) -> Vec<Pulled> {
        (0..n).map(|_| ring.pull()).collect()
    }

    #[test]
    fn a_rollback_replaces_exactly_the_queued_audio_of_the_corrected_frames() {
        let mut ring = small_ring(4, AudioPolicy::Revoke);
        for frame in 0..5 {
            ring.push(Frame::new(frame), false, &frame_audio(frame, 0));
        }
        let played = pull_n(&mut ring, 25);
        // A rollback to frame 1 while frame 2 plays: frames 1-4 again.
        for frame in 1..5 {
            ring.push(Frame::new(frame), true, &frame_audio(frame, 1));
        }
        ring.push(Frame::new(5), false, &frame_audio(5, 1));
        let rest = pull_n(&mut ring, 25);

        let sources: Vec<(u32, u32)> = played
            .iter()
            .chain(&rest)
            .map(|p| p.source.map(|(f, i)| (f.number(), i)).unwrap())
            .collect();
        let expected: Vec<(u32, u32)> = (0..5)
            .flat_map(|f| (0..FRAME_SAMPLES as u32).map(move |i| (f, i)))
            .collect();
        assert_eq!(sources, expected, "nothing repeated, nothing skipped");
        // Played audio was the prediction (after the start's fade-in).
        for pulled in &played[4..] {
            let (frame, i) = pulled.source.unwrap();
            assert_eq!(pulled.sample[0], frame.number() as i16 * 100 + i as i16);
        }
        // After the 4-sample crossfade, only corrected audio.
        for pulled in &rest[4..] {
            let (frame, i) = pulled.source.unwrap();
            assert_eq!(
                pulled.sample,
                [
                    frame.number() as i16 * 100 + i as i16 + 5000,
                    -(frame.number() as i16 * 100 + i as i16 + 5000)
                ]
            );
        }
        let stats = ring.stats();
        assert_eq!(stats.splices, 1);
        assert_eq!(stats.revoked_samples, 5 + 10 + 10);
        assert_eq!(
            stats.discarded_samples,
            10 + 5,
            "frame 1 and the played half of frame 2 come too late"
        );
    }

    #[test]
    fn frames_without_sound_between_frames_with_sound_play_through() {
        for pull_in_runs in [false, true] {
            let mut ring = small_ring(4, AudioPolicy::Revoke);
            ring.push(Frame::new(0), false, &[]);
            for frame in 1..6 {
                let audio = if frame % 2 == 0 {
                    Vec::new()
                } else {
                    frame_audio(frame, 0)
                };
                ring.push(Frame::new(frame), false, &audio);
            }
            ring.drain();
            let played: Vec<Pulled> = if pull_in_runs {
                let mut out = vec![[0, 0]; 3 * FRAME_SAMPLES];
                let mut taps = Vec::new();
                ring.pull_into(&mut out, |pulled| taps.push(*pulled));
                taps
            } else {
                pull_n(&mut ring, 3 * FRAME_SAMPLES)
            };
            let frames: Vec<u32> = played
                .iter()
                .filter_map(|pulled| pulled.source.map(|(frame, _)| frame.number()))
                .collect();
            assert_eq!(frames.len(), 3 * FRAME_SAMPLES, "runs: {pull_in_runs}");
            assert!(frames.iter().all(|frame| frame % 2 == 1), "{frames:?}");
        }
    }

    #[test]
    fn a_rollback_that_lands_before_the_consumer_needs_no_splice() {
        let mut ring = small_ring(4, AudioPolicy::Revoke);
        for frame in 0..5 {
            ring.push(Frame::new(frame), false, &frame_audio(frame, 0));
        }
        pull_n(&mut ring, 15);
        for frame in 3..5 {
            ring.push(Frame::new(frame), true, &frame_audio(frame, 1));
        }
        ring.push(Frame::new(5), false, &frame_audio(5, 1));
        let rest = pull_n(&mut ring, 35);
        assert_eq!(ring.stats().splices, 0);
        assert_eq!(ring.stats().revoked_samples, 20);
        for pulled in &rest[15..] {
            let (frame, i) = pulled.source.unwrap();
            assert!(frame.number() >= 3);
            assert_eq!(
                pulled.sample[0],
                frame.number() as i16 * 100 + i as i16 + 5000
            );
        }
    }

    #[test]
    fn the_drop_policy_keeps_playing_the_prediction() {
        let mut ring = small_ring(4, AudioPolicy::Drop);
        for frame in 0..5 {
            ring.push(Frame::new(frame), false, &frame_audio(frame, 0));
        }
        pull_n(&mut ring, 25);
        for frame in 1..5 {
            ring.push(Frame::new(frame), true, &frame_audio(frame, 1));
        }
        ring.push(Frame::new(5), false, &frame_audio(5, 1));
        let rest = pull_n(&mut ring, 25);
        for pulled in &rest {
            let (frame, i) = pulled.source.unwrap();
            let timeline = if frame.number() == 5 { 5000 } else { 0 };
            assert_eq!(
                pulled.sample[0],
                frame.number() as i16 * 100 + i as i16 + timeline
            );
        }
        assert_eq!(ring.stats().revoked_samples, 0);
        assert_eq!(ring.stats().discarded_samples, 40);
    }

    const RATE: f64 = 48_000.0;
    const PER_FRAME: usize = 800;

    /// `frames` frames of a tone of `hz` and amplitude `amplitude`, silent
    /// before frame `from`, its phase counted from frame `from` on.
    fn tone_frames(frames: u32, from: u32, hz: f64, amplitude: f64) -> Vec<Vec<i16>> {
        (0..frames)
            .map(|frame| {
                (0..PER_FRAME)
                    .flat_map(|i| {
                        let n = (frame * PER_FRAME as u32 + i as u32) as f64;
                        let start = f64::from(from) * PER_FRAME as f64;
                        let value = if n < start {
                            0.0
                        } else {
                            amplitude * (std::f64::consts::TAU * hz * (n - start) / RATE).sin()
                        };
                        [value.round() as i16; 2]
                    })
                    .collect()
            })
            .collect()
    }

    fn default_ring() -> AudioRing {
        AudioRing::new(RingConfig::for_rate(RATE, AudioPolicy::Revoke))
    }

    /// Plays `predicted` frames, the consumer `played` samples in when a
    /// rollback to `rollback_to` brings `corrected`; returns every sample
    /// output once playing.
    fn splice(
        predicted: &[Vec<i16>],
        corrected: &[Vec<i16>],
        rollback_to: u32,
        played: usize,
    ) -> (Vec<Stereo>, RingStats) {
        let mut ring = default_ring();
        let mut out = Vec::new();
        for (frame, audio) in (0..).zip(predicted) {
            ring.push(Frame::new(frame), false, audio);
        }
        while out.len() < played {
            let pulled = ring.pull();
            if pulled.source.is_some() {
                out.push(pulled.sample);
            }
        }
        for (frame, audio) in (rollback_to..).zip(&corrected[rollback_to as usize..]) {
            ring.push(Frame::new(frame), true, audio);
        }
        while ring.queued() > 0 {
            out.push(ring.pull().sample);
        }
        (out, ring.stats())
    }

    fn own_largest_step(frames: &[Vec<i16>]) -> u16 {
        let samples: Vec<Stereo> = frames
            .iter()
            .flat_map(|f| f.chunks_exact(2).map(|p| [p[0], p[1]]))
            .collect();
        largest_step(&samples)
    }

    #[test]
    fn a_splice_never_steps_further_than_the_stream_itself_where_a_hard_cut_does() {
        // A sound a mispredicted frame started is revoked, and one that
        // should have started two frames earlier starts late.
        let tone = tone_frames(12, 4, 440.0, 12_000.0);
        let silence = tone_frames(12, 12, 440.0, 12_000.0);
        for (predicted, corrected) in [(&tone, &silence), (&silence, &tone)] {
            let own = own_largest_step(predicted).max(own_largest_step(corrected));
            // The consumer is 1/3 into frame 5 when the rollback to 2 lands.
            let played = 5 * PER_FRAME + 270;
            let (out, stats) = splice(predicted, corrected, 2, played);
            assert_eq!(stats.splices, 1);
            assert!(
                stats.largest_splice_step <= own,
                "splice step {} over the stream's own {own}",
                stats.largest_splice_step
            );
            let cut_step = sample_step(
                [predicted[5][2 * 269], predicted[5][2 * 269 + 1]],
                [corrected[5][2 * 270], corrected[5][2 * 270 + 1]],
            );
            assert!(cut_step > own, "a hard cut steps {cut_step}, over {own}");
            // Beyond the crossfade the corrected stream plays as it is.
            let after = played + 240;
            let corrected_flat: Vec<i16> = corrected.concat();
            assert_eq!(out[after][0], corrected_flat[2 * after]);
        }
    }

    #[test]
    fn a_splice_between_streams_alike_is_not_louder_or_steeper_than_they_are() {
        // The same square wave, the correction a little quieter: an
        // equal-power mix of the two in phase would step 1.4x as far.
        let square = |amplitude: f64| -> Vec<Vec<i16>> {
            tone_frames(12, 0, 440.0, 1.0)
                .into_iter()
                .map(|frame| {
                    frame
                        .into_iter()
                        .map(|v| {
                            if v >= 0 {
                                amplitude as i16
                            } else {
                                -amplitude as i16
                            }
                        })
                        .collect()
                })
                .collect()
        };
        let (predicted, corrected) = (square(12_000.0), square(10_000.0));
        let own = own_largest_step(&predicted).max(own_largest_step(&corrected));
        for played in [5 * PER_FRAME + 10, 5 * PER_FRAME + 300, 6 * PER_FRAME + 77] {
            let (out, stats) = splice(&predicted, &corrected, 2, played);
            assert_eq!(stats.splices, 1);
            assert!(stats.largest_splice_step <= own, "{stats:?} over {own}");
            let peak = out.iter().map(|s| s[0].unsigned_abs()).max().unwrap();
            assert!(peak <= 12_000, "peak {peak}");
        }
        // A correction that changes nothing passes through unchanged.
        let (out, _) = splice(&predicted, &predicted, 2, 5 * PER_FRAME + 10);
        let flat: Vec<i16> = predicted.concat();
        // (Up to the fade-out where the queue runs dry.)
        for (index, sample) in out.iter().enumerate().take(out.len() - 240).skip(300) {
            assert!((sample[0] - flat[2 * index]).abs() <= 1, "at {index}");
        }
    }

    fn rms(samples: &[Stereo]) -> f64 {
        let sum: f64 = samples.iter().map(|s| f64::from(s[0]).powi(2)).sum();
        (sum / samples.len() as f64).sqrt()
    }

    #[test]
    fn an_equal_power_crossfade_keeps_a_steady_tones_loudness_within_1_db() {
        // The corrected tone is a quarter period later (uncorrelated with
        // the predicted one at each instant: what equal power is for).
        let predicted = tone_frames(12, 0, 1_000.0, 10_000.0);
        let mut corrected = tone_frames(12, 0, 1_000.0, 10_000.0);
        for (number, frame) in corrected.iter_mut().enumerate() {
            for (index, value) in frame.iter_mut().enumerate() {
                let n = (number * PER_FRAME + index / 2) as f64;
                *value =
                    (10_000.0 * (std::f64::consts::TAU * 1_000.0 * n / RATE).cos()).round() as i16;
            }
        }
        let played = 5 * PER_FRAME + 100;
        let (out, _) = splice(&predicted, &corrected, 3, played);
        let steady = rms(&out[PER_FRAME..PER_FRAME + 480]);
        // One period (48 samples) at a time, across the 240-sample fade.
        for window in out[played - 96..played + 336].chunks(48) {
            let db = 20.0 * (rms(window) / steady).log10();
            assert!(db.abs() < 1.0, "{db:.2} dB");
        }
    }

    #[test]
    fn a_stall_fades_out_to_silence_and_back_in_without_repeating_audio() {
        let mut ring = default_ring();
        let steady = vec![8_000i16; PER_FRAME * 2];
        for frame in 0..6 {
            ring.push(Frame::new(frame), false, &steady);
        }
        let mut out: Vec<Pulled> = (0..PER_FRAME * 8).map(|_| ring.pull()).collect();
        // The queue ran dry after 6 frames: the last 5 ms fade out.
        let last = out.iter().rposition(|p| p.source.is_some()).unwrap();
        assert_eq!(last, 6 * PER_FRAME - 1);
        let fade_out: Vec<i16> = out[last - 240..=last].iter().map(|p| p.sample[0]).collect();
        assert!(fade_out.windows(2).all(|w| w[1] <= w[0]), "falls steadily");
        assert!(fade_out[0] >= 7_900 && fade_out[240] < 50, "{fade_out:?}");
        assert!(out[last + 1..].iter().all(|p| p.sample == [0, 0]));
        assert_eq!(ring.stats().stalls, 1);
        assert!(ring.stats().silent_samples >= 2 * PER_FRAME as u64);

        // Play resumes once the latency's worth is queued, fading in.
        for frame in 6..12 {
            ring.push(Frame::new(frame), false, &steady);
        }
        out.clear();
        out.extend((0..PER_FRAME).map(|_| ring.pull()));
        assert_eq!(out[0].source, Some((Frame::new(6), 0)));
        let fade_in: Vec<i16> = out[..=240].iter().map(|p| p.sample[0]).collect();
        assert!(fade_in.windows(2).all(|w| w[1] >= w[0]), "rises steadily");
        assert!(fade_in[0] < 50 && fade_in[240] == 8_000);
    }

    #[test]
    fn pulling_runs_hands_out_exactly_what_pulling_one_by_one_does() {
        let mut one_by_one = default_ring();
        let mut in_runs = default_ring();
        let tone = tone_frames(40, 3, 440.0, 9_000.0);
        let other = tone_frames(40, 1, 660.0, 9_000.0);
        let (mut singles, mut runs) = (Vec::new(), Vec::new());
        let mut out = vec![[0i16; 2]; 1000];
        for frame in 0..40u32 {
            for ring in [&mut one_by_one, &mut in_runs] {
                if frame % 7 == 6 {
                    for again in frame - 6..frame {
                        ring.push(Frame::new(again), true, &other[again as usize]);
                    }
                }
                // A stall: frames 20 to 24 come late.
                if !(20..25).contains(&frame) {
                    ring.push(Frame::new(frame), false, &tone[frame as usize]);
                }
            }
            let block = 600 + (frame as usize * 37) % 400;
            for _ in 0..block {
                singles.push(one_by_one.pull());
            }
            in_runs.pull_into(&mut out[..block], |pulled| runs.push(*pulled));
            assert_eq!(
                &out[..block],
                &singles[singles.len() - block..]
                    .iter()
                    .map(|p| p.sample)
                    .collect::<Vec<_>>()[..]
            );
        }
        assert_eq!(singles, runs);
        assert_eq!(one_by_one.stats(), in_runs.stats());
        assert!(one_by_one.stats().splices > 0 && one_by_one.stats().stalls > 0);
    }

    #[test]
    fn crossfades_mixed_a_run_at_a_time_equal_crossfades_mixed_sample_by_sample() {
        // Splices landing inside a run, a second one while the first
        // crossfade is still going, and runs of odd sizes crossing the
        // fades' ends: the fast path must hand out the careful path's
        // samples exactly.
        let timelines = [
            tone_frames(30, 0, 440.0, 9_000.0),
            tone_frames(30, 2, 700.0, 11_000.0),
            tone_frames(30, 5, 300.0, 7_000.0),
        ];
        let (mut careful, mut fast) = (default_ring(), default_ring());
        let (mut careful_out, mut fast_out) = (Vec::new(), Vec::new());
        let mut block = vec![[0i16; 2]; 1000];
        let mut sizes = [13usize, 97, 1, 240, 333, 7, 800].iter().cycle();
        for frame in 0..30u32 {
            // Rollbacks of 4 frames at frames 8 and 16 and, 50 samples
            // into the crossfade that one starts, again.
            let mut rollbacks = Vec::new();
            if frame == 8 || frame == 16 {
                rollbacks.push((frame - 4, 1));
            }
            if frame == 17 {
                rollbacks.push((frame - 5, 2));
            }
            for ring in [&mut careful, &mut fast] {
                for &(from, timeline) in &rollbacks {
                    for again in from..frame {
                        ring.push(
                            Frame::new(again),
                            true,
                            &timelines[timeline][again as usize],
                        );
                    }
                }
                ring.push(Frame::new(frame), false, &timelines[0][frame as usize]);
            }
            let mut left = PER_FRAME;
            while left > 0 {
                let size = (*sizes.next().unwrap()).min(left);
                let size = if frame == 16 { size.min(50) } else { size };
                careful_out.extend((0..size).map(|_| careful.pull()));
                fast.pull_into(&mut block[..size], |pulled| fast_out.push(*pulled));
                assert_eq!(
                    &block[..size],
                    &careful_out[careful_out.len() - size..]
                        .iter()
                        .map(|p| p.sample)
                        .collect::<Vec<_>>()[..]
                );
                left -= size;
                if frame == 16 {
                    break;
                }
            }
        }
        assert_eq!(careful_out, fast_out);
        assert_eq!(careful.stats(), fast.stats());
        assert!(careful.stats().splices >= 3, "{:?}", careful.stats());
    }

    #[test]
    fn the_queue_stays_within_its_capacity_skipping_the_oldest_audio() {
        let mut ring = small_ring(4, AudioPolicy::Revoke);
        for frame in 0..200 {
            ring.push(Frame::new(frame), false, &frame_audio(frame % 50, 0));
        }
        assert!(ring.queued() <= 1000);
        assert!(ring.chunks.len() <= 64);
        assert!(ring.stats().overrun_samples >= 1000);
        assert_eq!(ring.pull().source, Some((Frame::new(136), 0)));
    }
}
