//! `--audio-out PATH.wav`: the stream a speaker would get (after revocation,
//! crossfades and rate control, at the device's rate), consumed at the
//! nominal device rate as the loop's frame clock advances, written to a WAV
//! file. [`AudioSink`] is a [`FrameSink`], so it listens to `run`, the demo
//! and `host`/`join` the same way.

use crate::engine::sinks::{FinalFrame, FinishedFrame, FrameSink};
use crate::engine::AppError;
use netcode::audio::ring::sample_step;
use netcode::audio::{AudioConfig, AudioPipeline, AudioPolicy, RingStats, Stereo, TimelineCheck};
use netcode::audio::{Pulled, TimelineCounts};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// The rate a headless output consumes at (Hz): a typical device's.
pub const HEADLESS_DEVICE_RATE: u32 = 48_000;

/// The audio options shared by `run`, `demo`, `host` and `join`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct AudioArgs {
    /// Writes the audio a speaker would play to this WAV file (48 kHz stereo).
    #[arg(long, value_name = "PATH.wav")]
    pub audio_out: Option<PathBuf>,
    /// What happens to re-simulated frames' audio: `revoke` replaces the
    /// queued audio of corrected frames (crossfaded); `drop` keeps the
    /// predicted audio, as other rollback frontends do.
    #[arg(long, value_name = "POLICY", default_value_t = AudioPolicy::Revoke, value_parser = audio_policy_names())]
    pub audio_policy: AudioPolicy,
    /// Milliseconds of audio queued ahead of the speaker (the ring's target).
    #[arg(long, value_name = "MS", default_value_t = 64.0, value_parser = parse_latency_ms)]
    pub audio_latency: f64,
    /// Length of the crossfade where corrected audio is spliced in (ms).
    #[arg(long, value_name = "MS", default_value_t = 5.0, value_parser = parse_crossfade_ms)]
    pub audio_crossfade: f64,
}

fn parse_ms(text: &str, range: std::ops::RangeInclusive<f64>) -> Result<f64, String> {
    let ms: f64 = text
        .trim_end_matches("ms")
        .parse()
        .map_err(|_| format!("`{text}` is not a number of milliseconds"))?;
    if range.contains(&ms) {
        Ok(ms)
    } else {
        Err(format!(
            "{ms} ms is outside {} to {} ms",
            range.start(),
            range.end()
        ))
    }
}

/// `--audio-policy`'s names, each with what it does (as `--help` lists them).
fn audio_policy_names() -> impl clap::builder::TypedValueParser<Value = AudioPolicy> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new([
        PossibleValue::new("revoke").help(
            "Replace the queued audio of corrected frames with the re-simulated audio, \
             crossfading where the consumer is (netcade's behaviour)",
        ),
        PossibleValue::new("drop").help(
            "Keep the predicted audio and throw the re-simulated audio away (what other \
             rollback frontends do), for comparison",
        ),
    ])
    .try_map(|name| name.parse::<AudioPolicy>())
}

fn parse_latency_ms(text: &str) -> Result<f64, String> {
    parse_ms(text, 10.0..=1000.0)
}

fn parse_crossfade_ms(text: &str) -> Result<f64, String> {
    parse_ms(text, 0.1..=50.0)
}

impl AudioArgs {
    /// The pipeline's configuration for a core at `core_rate` played at
    /// `device_rate`.
    pub fn config(&self, core_rate: f64, device_rate: f64) -> AudioConfig {
        AudioConfig::new(core_rate, device_rate, self.audio_policy)
            .with_target_ms(self.audio_latency)
            .with_crossfade_ms(self.audio_crossfade)
    }

    /// The WAV sink asked for, if any, for a core at `core_rate` whose
    /// match ends after `frames` frames (if known).
    pub fn open_sink(
        &self,
        core_rate: f64,
        frames: Option<u32>,
    ) -> Result<Option<AudioSink>, AppError> {
        self.audio_out
            .as_deref()
            .map(|path| {
                AudioSink::create(
                    path,
                    self.config(core_rate, f64::from(HEADLESS_DEVICE_RATE)),
                    frames,
                )
            })
            .transpose()
    }

    /// These options for machine `index` (0-based) of a match played in
    /// one process: its audio goes to its own file (see [`machine_audio_path`]).
    pub fn for_machine(&self, index: usize) -> AudioArgs {
        AudioArgs {
            audio_out: self
                .audio_out
                .as_deref()
                .map(|path| machine_audio_path(path, index)),
            ..self.clone()
        }
    }
}

/// Where machine `index` (0-based) of a match played in one process writes
/// its audio: machine 1 to `path`, the others beside it
/// (`match.wav` → `match-machine2.wav`).
pub fn machine_audio_path(path: &Path, index: usize) -> PathBuf {
    if index == 0 {
        return path.to_path_buf();
    }
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let mut name = format!("{stem}-machine{}", index + 1);
    if let Some(extension) = path.extension() {
        name.push('.');
        name.push_str(&extension.to_string_lossy());
    }
    path.with_file_name(name)
}

/// What an audio output did, for the summary.
#[derive(Clone, Debug)]
pub struct AudioSummary {
    /// The WAV file.
    pub path: PathBuf,
    /// Revoke or drop.
    pub policy: AudioPolicy,
    /// Device samples written (stereo).
    pub samples: u64,
    /// Their length in seconds at the device rate.
    pub seconds: f64,
    /// The ring's statistics.
    pub ring: RingStats,
    /// Played samples against the confirmed timeline.
    pub timeline: TimelineCounts,
    /// The largest change between consecutive samples written.
    pub largest_step: u16,
}

impl AudioSummary {
    /// One human line.
    pub fn describe(&self) -> String {
        format!(
            "audio ({}): {:.2} s written to {}; {:.2}% of played samples as confirmed, {} splices (largest step {}), {} stalls, {} overrun samples",
            self.policy,
            self.seconds,
            self.path.display(),
            self.timeline.identical_share() * 100.0,
            self.ring.splices,
            self.ring.largest_splice_step,
            self.ring.stalls,
            self.ring.overrun_samples
        )
    }

    /// The JSON fields.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "path": self.path.display().to_string(),
            "policy": self.policy.to_string(),
            "device_rate": HEADLESS_DEVICE_RATE,
            "samples": self.samples,
            "seconds": self.seconds,
            "splices": self.ring.splices,
            "largest_splice_step": self.ring.largest_splice_step,
            "largest_step": self.largest_step,
            "revoked_samples": self.ring.revoked_samples,
            "discarded_samples": self.ring.discarded_samples,
            "stalls": self.ring.stalls,
            "silent_samples": self.ring.silent_samples,
            "overrun_samples": self.ring.overrun_samples,
            "compared_samples": self.timeline.compared,
            "identical_samples": self.timeline.identical,
            "identical_share": self.timeline.identical_share(),
        })
    }
}

/// Device samples rendered at a time.
pub const BLOCK: usize = 512;

/// A device's pace without a device: the samples one consuming at `rate`
/// since the first clock reading would have taken by now (the headless
/// outputs, and the speaker's fallback when no device is usable).
#[derive(Clone, Copy, Debug)]
pub struct DevicePace {
    rate: f64,
    started_us: Option<u64>,
}

impl DevicePace {
    /// A pace of `rate` samples a second, from the first [`DevicePace::due`].
    pub fn new(rate: f64) -> DevicePace {
        DevicePace {
            rate,
            started_us: None,
        }
    }

    /// How many samples to render at `now_us` when `rendered` were so far.
    pub fn due(&mut self, now_us: u64, rendered: u64) -> u64 {
        let started = *self.started_us.get_or_insert(now_us);
        let due = (now_us.saturating_sub(started) as f64 * self.rate / 1e6) as u64;
        due.saturating_sub(rendered)
    }
}

/// Writes what a speaker would play to a WAV file. See the module docs.
pub struct AudioSink {
    pipeline: AudioPipeline,
    check: TimelineCheck,
    wav: hound::WavWriter<BufWriter<File>>,
    path: PathBuf,
    block: Vec<Stereo>,
    /// Starts at the first tick after the first audio.
    pace: DevicePace,
    /// The match's last frame: once it has run, what is queued plays out
    /// and the output stops.
    last_frame: Option<u32>,
    /// No more audio comes: play out what is queued, then stop.
    draining: bool,
    ended: bool,
    previous: Stereo,
    largest_step: u16,
    error: Option<hound::Error>,
}

impl AudioSink {
    /// Creates the WAV file at `path`.
    pub fn create(
        path: &Path,
        config: AudioConfig,
        frames: Option<u32>,
    ) -> Result<AudioSink, AppError> {
        let spec = hound::WavSpec {
            channels: 2,
            sample_rate: config.device_rate.round() as u32,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let wav = hound::WavWriter::create(path, spec).map_err(|error| AppError::WriteFile {
            what: "the audio",
            path: path.to_path_buf(),
            source: into_io(error),
        })?;
        Ok(AudioSink {
            pipeline: AudioPipeline::new(config),
            check: TimelineCheck::new(),
            wav,
            path: path.to_path_buf(),
            block: vec![[0; 2]; BLOCK],
            pace: DevicePace::new(config.device_rate),
            last_frame: frames.and_then(|frames| frames.checked_sub(1)),
            draining: false,
            ended: false,
            previous: [0; 2],
            largest_step: 0,
            error: None,
        })
    }

    /// Renders `count` device samples into the file.
    fn render(&mut self, mut count: u64) {
        while count > 0 && !self.ended {
            let n = count.min(BLOCK as u64) as usize;
            let check = &mut self.check;
            self.pipeline
                .render(&mut self.block[..n], |pulled: &Pulled| check.played(pulled));
            for &sample in &self.block[..n] {
                self.largest_step = self.largest_step.max(sample_step(self.previous, sample));
                self.previous = sample;
                if self.error.is_none() {
                    let written = self
                        .wav
                        .write_sample(sample[0])
                        .and_then(|()| self.wav.write_sample(sample[1]));
                    if let Err(error) = written {
                        self.error = Some(error);
                    }
                }
            }
            count -= n as u64;
            self.ended = self.draining && self.pipeline.queued() == 0;
        }
    }

    fn drain(&mut self) {
        self.pipeline.drain();
        self.draining = true;
    }

    /// Plays out what is queued, closes the file and says what was done.
    pub fn finish(mut self) -> Result<AudioSummary, AppError> {
        self.drain();
        // Bounded: the ring holds at most its capacity.
        let mut rounds = 0;
        while !self.ended && self.pipeline.queued() > 0 && rounds < 10_000 {
            self.render(BLOCK as u64);
            rounds += 1;
        }
        let samples = u64::from(self.wav.len()) / 2;
        let write_error = |source| AppError::WriteFile {
            what: "the audio",
            path: self.path.clone(),
            source,
        };
        if let Some(error) = self.error.take() {
            return Err(write_error(into_io(error)));
        }
        let summary = AudioSummary {
            path: self.path.clone(),
            policy: self.pipeline.config().ring.policy,
            samples,
            seconds: samples as f64 / self.pipeline.config().device_rate,
            ring: self.pipeline.ring_stats(),
            timeline: self.check.counts(),
            largest_step: self.largest_step,
        };
        self.wav
            .finalize()
            .map_err(|error| write_error(into_io(error)))?;
        Ok(summary)
    }
}

impl FrameSink for AudioSink {
    fn frame_run(&mut self, frame: &FinishedFrame<'_>) {
        self.pipeline
            .push(frame.frame, frame.resimulated, frame.audio);
        self.check.frame_run(frame.frame, frame.audio);
        if !frame.resimulated && self.last_frame == Some(frame.frame.number()) {
            self.drain();
        }
    }

    fn frame_finalized(&mut self, frame: &FinalFrame<'_>) {
        self.check.frame_finalized(frame.frame);
    }

    fn set_volume(&mut self, volume: f32) {
        self.pipeline.set_volume(volume);
    }

    fn clock_tick(&mut self, now_us: u64, speed: f64) {
        self.pipeline.set_speed(speed);
        if self.pipeline.queued() == 0 && self.pipeline.rendered() == 0 {
            return;
        }
        let count = self.pace.due(now_us, self.pipeline.rendered());
        self.render(count);
    }
}

fn into_io(error: hound::Error) -> std::io::Error {
    match error {
        hound::Error::IoError(error) => error,
        other => std::io::Error::other(other),
    }
}
