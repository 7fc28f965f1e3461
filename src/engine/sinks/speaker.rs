//! Speaker output (cargo feature `audio`): [`Speaker`] is a [`FrameSink`]
//! that keeps the revocable ring on the frame loop's side and hands the
//! device only what it is about to play, through a wait-free single-producer
//! single-consumer queue (`rtrb`): the device callback never blocks, locks
//! or allocates, and a rollback reaches everything still in the ring. When no
//! usable device exists (no card, or only ALSA's "null" device, which
//! swallows samples without real-time pacing) the speaker falls back to a
//! null output paced by the frame clock, and says so in one log line.
//!
//! For a window (`netcade play`): [`open_speaker`] for the core's rate, then
//! hand it frames as any sink.

use crate::engine::sinks::audio_file::{AudioArgs, DevicePace, BLOCK};
use crate::engine::sinks::{FinishedFrame, FrameSink};
use crate::engine::AppError;
use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use cpal::{FromSample, SizedSample};
use netcode::audio::{AudioConfig, AudioPipeline, RingStats, Stereo};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The speaker options of `host` and `join` (and `play`).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct SpeakerArgs {
    /// Plays on the output device whose name contains NAME [default: the
    /// system's default device; none with --headless].
    #[arg(long, value_name = "NAME")]
    pub audio_device: Option<String>,
    /// Plays no audio.
    #[arg(long, conflicts_with = "audio_device")]
    pub no_audio: bool,
}

/// The device's handoff holds at least this much (ms) beyond one callback's
/// worth, so a late frame loop does not starve the callback at once.
const HANDOFF_MIN_MS: f64 = 10.0;
/// The handoff queue's size (ms): far more than it is ever filled to.
const HANDOFF_CAPACITY_MS: f64 = 250.0;

/// Where a speaker's samples go.
enum Output {
    /// A real device, fed through the handoff.
    Device {
        producer: rtrb::Producer<Stereo>,
        /// Kept alive: dropping it stops the device.
        _stream: cpal::Stream,
        /// The most samples one callback asked for (set by the callback).
        largest_callback: Arc<AtomicUsize>,
        name: String,
    },
    /// No usable device: rendered at the device's nominal pace, discarded.
    Null { pace: DevicePace },
}

/// Audio played on a sound device (or paced without one). See the module docs.
pub struct Speaker {
    pipeline: AudioPipeline,
    output: Output,
    block: Vec<Stereo>,
    /// Sums over ticks of the revocable and handed-over milliseconds.
    latency_sums: (f64, f64, u64),
}

/// Opens the speaker `args` and `speaker` ask for, for a core at
/// `core_rate`: `None` for `--no-audio` (or `--headless` without
/// `--audio-device`). A device named but not found is the user's mistake;
/// any other failure falls back to a null output with one log line.
pub fn open_speaker_for(
    args: &AudioArgs,
    speaker: &SpeakerArgs,
    headless: bool,
    core_rate: f64,
) -> Result<Option<Speaker>, AppError> {
    if speaker.no_audio || (headless && speaker.audio_device.is_none()) {
        return Ok(None);
    }
    open_speaker(args, speaker.audio_device.as_deref(), core_rate).map(Some)
}

/// Opens a speaker for a core at `core_rate` on the device whose name
/// contains `device` (default: the system's), with the ring set up by
/// `args` (latency, crossfade, policy).
pub fn open_speaker(
    args: &AudioArgs,
    device: Option<&str>,
    core_rate: f64,
) -> Result<Speaker, AppError> {
    // alsa-lib writes its own complaints about missing cards to stderr:
    // collect them instead (they go to the debug log).
    #[cfg(target_os = "linux")]
    let alsa_messages = alsa::Output::local_error_handler().ok();
    let opened = open_device(device);
    #[cfg(target_os = "linux")]
    if let Some(messages) = alsa_messages {
        let text = messages.borrow().to_string();
        if !text.is_empty() {
            tracing::debug!("alsa-lib while opening the audio device: {text}");
        }
    }
    match opened {
        Ok(opened) => Ok(Speaker::on_device(args, core_rate, opened)),
        Err(DeviceProblem::NotFound { name, available }) => Err(AppError::BadArgument {
            message: format!(
                "no audio output device is named like `{name}` (devices: {})",
                if available.is_empty() {
                    "none".to_string()
                } else {
                    available.join(", ")
                }
            ),
        }),
        Err(DeviceProblem::Unusable(reason)) => {
            tracing::warn!(
                "no usable audio device ({reason}): audio is not played, only paced by the frame clock"
            );
            Ok(Speaker::null(args, core_rate))
        }
    }
}

/// Why no device was opened.
#[derive(Debug)]
enum DeviceProblem {
    /// The device the user named does not exist.
    NotFound {
        name: String,
        available: Vec<String>,
    },
    /// Nothing usable: a reason for the log.
    Unusable(String),
}

/// A started device stream and its handoff's producer side.
struct OpenedDevice {
    producer: rtrb::Producer<Stereo>,
    stream: cpal::Stream,
    largest_callback: Arc<AtomicUsize>,
    name: String,
    rate: f64,
}

/// Whether a device can pace audio: ALSA's "null" device accepts samples
/// as fast as they come, so pacing by it would race.
pub fn is_real_time_device(id: &str) -> bool {
    let name = id.rsplit(':').next().unwrap_or(id);
    name != "null"
}

fn open_device(wanted: Option<&str>) -> Result<OpenedDevice, DeviceProblem> {
    let host = cpal::default_host();
    let device = match wanted {
        Some(name) => {
            let devices: Vec<cpal::Device> = host
                .output_devices()
                .map(|devices| devices.collect())
                .unwrap_or_default();
            let label = |device: &cpal::Device| {
                let id = device.id().map(|id| id.to_string()).unwrap_or_default();
                format!("{device} ({id})")
            };
            let found = devices
                .iter()
                .position(|device| label(device).contains(name));
            match found {
                Some(index) => devices.into_iter().nth(index),
                None => {
                    return Err(DeviceProblem::NotFound {
                        name: name.to_string(),
                        available: devices.iter().map(label).collect(),
                    })
                }
            }
        }
        None => host.default_output_device(),
    };
    let device = device.ok_or_else(|| DeviceProblem::Unusable("no output device".into()))?;
    let id = device.id().map(|id| id.to_string()).unwrap_or_default();
    if !is_real_time_device(&id) {
        return Err(DeviceProblem::Unusable(format!(
            "{id} discards samples without real-time pacing"
        )));
    }
    let unusable = |what: &str, error: &dyn std::fmt::Display| {
        DeviceProblem::Unusable(format!("{device} ({id}): {what}: {error}"))
    };
    let supported = device
        .default_output_config()
        .map_err(|error| unusable("no output configuration", &error))?;
    let config: cpal::StreamConfig = supported.config();
    let rate = f64::from(config.sample_rate);
    let capacity = (rate * HANDOFF_CAPACITY_MS / 1000.0) as usize;
    let (producer, consumer) = rtrb::RingBuffer::<Stereo>::new(capacity);
    let largest_callback = Arc::new(AtomicUsize::new(0));
    let stream = match supported.sample_format() {
        cpal::SampleFormat::F32 => build::<f32>(&device, &config, consumer, &largest_callback),
        cpal::SampleFormat::I16 => build::<i16>(&device, &config, consumer, &largest_callback),
        cpal::SampleFormat::I32 => build::<i32>(&device, &config, consumer, &largest_callback),
        cpal::SampleFormat::U16 => build::<u16>(&device, &config, consumer, &largest_callback),
        other => {
            return Err(DeviceProblem::Unusable(format!(
                "{device} ({id}): sample format {other} is not supported"
            )))
        }
    }
    .map_err(|error| unusable("cannot open a stream", &error))?;
    stream
        .play()
        .map_err(|error| unusable("cannot start the stream", &error))?;
    Ok(OpenedDevice {
        producer,
        stream,
        largest_callback,
        name: format!("{device} ({id})"),
        rate,
    })
}

/// The device stream: its callback pops what the handoff holds (silence if
/// nothing), wait-free, allocating nothing.
fn build<T>(
    device: &cpal::Device,
    config: &cpal::StreamConfig,
    mut consumer: rtrb::Consumer<Stereo>,
    largest_callback: &Arc<AtomicUsize>,
) -> Result<cpal::Stream, cpal::Error>
where
    T: SizedSample + FromSample<i16>,
{
    let channels = usize::from(config.channels).max(1);
    let largest = Arc::clone(largest_callback);
    device.build_output_stream(
        *config,
        move |data: &mut [T], _: &cpal::OutputCallbackInfo| {
            largest.fetch_max(data.len() / channels, Ordering::Relaxed);
            for frame in data.chunks_mut(channels) {
                let sample = consumer.pop().unwrap_or([0, 0]);
                for (channel, out) in frame.iter_mut().enumerate() {
                    *out = T::from_sample(sample[channel.min(1)]);
                }
            }
        },
        |error| tracing::warn!("audio device: {error}"),
        None,
    )
}

impl Speaker {
    fn on_device(args: &AudioArgs, core_rate: f64, opened: OpenedDevice) -> Speaker {
        tracing::info!("playing audio on {} at {} Hz", opened.name, opened.rate);
        Speaker {
            pipeline: AudioPipeline::new(args.config(core_rate, opened.rate)),
            output: Output::Device {
                producer: opened.producer,
                _stream: opened.stream,
                largest_callback: opened.largest_callback,
                name: opened.name,
            },
            block: vec![[0; 2]; BLOCK],
            latency_sums: (0.0, 0.0, 0),
        }
    }

    /// A speaker with no device: the ring, rate control and resampler run
    /// at the nominal 48 kHz as the frame clock advances; nothing is played.
    pub fn null(args: &AudioArgs, core_rate: f64) -> Speaker {
        let rate = f64::from(crate::engine::sinks::audio_file::HEADLESS_DEVICE_RATE);
        Speaker {
            pipeline: AudioPipeline::new(args.config(core_rate, rate)),
            output: Output::Null {
                pace: DevicePace::new(rate),
            },
            block: vec![[0; 2]; BLOCK],
            latency_sums: (0.0, 0.0, 0),
        }
    }

    /// The device played on (`None`: the null fallback).
    pub fn device_name(&self) -> Option<&str> {
        match &self.output {
            Output::Device { name, .. } => Some(name),
            Output::Null { .. } => None,
        }
    }

    /// Milliseconds of audio still revocable (queued in the ring, not yet
    /// handed to the device).
    pub fn revocable_ms(&self) -> f64 {
        self.pipeline.queued_ms()
    }

    /// Milliseconds handed to the device and not played yet (no longer
    /// revocable; the device's own buffer comes on top).
    pub fn handed_over_ms(&self) -> f64 {
        match &self.output {
            Output::Device { producer, .. } => {
                let held = producer.buffer().capacity() - producer.slots();
                held as f64 * 1000.0 / self.pipeline.config().device_rate
            }
            Output::Null { .. } => 0.0,
        }
    }

    /// The mean over ticks (after the first sound) of the revocable and the
    /// handed-over milliseconds.
    pub fn mean_latency_ms(&self) -> Option<(f64, f64)> {
        let (revocable, handed_over, ticks) = self.latency_sums;
        (ticks > 0).then(|| (revocable / ticks as f64, handed_over / ticks as f64))
    }

    /// One line for a match's summary.
    pub fn describe(&self) -> String {
        let latency = self
            .mean_latency_ms()
            .map_or(String::new(), |(revocable, handed)| {
                format!(
                    "; on average {revocable:.1} ms revocable, {handed:.1} ms handed to the device"
                )
            });
        match self.device_name() {
            Some(name) => format!("audio played on {name}{latency}"),
            None => format!("audio not played (no usable device){latency}"),
        }
    }

    /// Device samples rendered so far.
    pub fn rendered(&self) -> u64 {
        self.pipeline.rendered()
    }

    /// The ring's statistics.
    pub fn ring_stats(&self) -> RingStats {
        self.pipeline.ring_stats()
    }

    /// The pipeline's configuration.
    pub fn config(&self) -> &AudioConfig {
        self.pipeline.config()
    }
}

impl FrameSink for Speaker {
    fn frame_run(&mut self, frame: &FinishedFrame<'_>) {
        self.pipeline
            .push(frame.frame, frame.resimulated, frame.audio);
    }

    fn set_volume(&mut self, volume: f32) {
        self.pipeline.set_volume(volume);
    }

    fn clock_tick(&mut self, now_us: u64, speed: f64) {
        self.pipeline.set_speed(speed);
        let rate = self.pipeline.config().device_rate;
        let wanted = match &mut self.output {
            Output::Device {
                producer,
                largest_callback,
                ..
            } => {
                // Keep only what the device may ask for before the next
                // tick handed over: everything else stays revocable.
                let callback = largest_callback.load(Ordering::Relaxed);
                let target = (rate * HANDOFF_MIN_MS / 1000.0) as usize + 2 * callback;
                let held = producer.buffer().capacity() - producer.slots();
                target.saturating_sub(held) as u64
            }
            Output::Null { pace } => {
                if self.pipeline.queued() == 0 && self.pipeline.rendered() == 0 {
                    return;
                }
                pace.due(now_us, self.pipeline.rendered())
            }
        };
        let mut left = wanted;
        while left > 0 {
            let n = left.min(BLOCK as u64) as usize;
            self.pipeline.render(&mut self.block[..n], |_| {});
            if let Output::Device { producer, .. } = &mut self.output {
                for &sample in &self.block[..n] {
                    // Never full: the target is far below its capacity.
                    let _ = producer.push(sample);
                }
            }
            left -= n as u64;
        }
        if self.pipeline.rendered() > 0 {
            self.latency_sums.0 += self.revocable_ms();
            self.latency_sums.1 += self.handed_over_ms();
            self.latency_sums.2 += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netcode::rollback::Frame;

    fn args() -> AudioArgs {
        AudioArgs {
            audio_out: None,
            audio_policy: netcode::audio::AudioPolicy::Revoke,
            audio_latency: 64.0,
            audio_crossfade: 5.0,
        }
    }

    #[test]
    fn alsas_null_device_is_not_taken_for_a_real_one() {
        assert!(!is_real_time_device("alsa:null"));
        assert!(!is_real_time_device("null"));
        assert!(is_real_time_device("alsa:default"));
        assert!(is_real_time_device("alsa:hw:CARD=PCH,DEV=0"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_alsa_null_device_falls_back_to_a_speaker_paced_by_the_frame_clock() {
        let speaker = open_speaker(&args(), Some("alsa:null"), 48_000.0).unwrap();
        assert_eq!(speaker.device_name(), None);
    }

    #[test]
    fn a_device_that_does_not_exist_is_the_users_mistake() {
        let error = open_speaker(&args(), Some("netcade-no-such-device"), 48_000.0)
            .err()
            .unwrap();
        assert!(
            error.to_string().contains("`netcade-no-such-device`"),
            "{error}"
        );
        assert_eq!(error.exit_code(), 2);
    }

    #[test]
    fn without_a_device_the_speaker_is_paced_by_the_frame_clock() {
        let mut speaker = Speaker::null(&args(), 48_000.0);
        assert_eq!(speaker.device_name(), None);
        let audio = vec![100i16; 1600];
        for frame in 0..120u32 {
            speaker.frame_run(&FinishedFrame {
                frame: Frame::new(frame),
                resimulated: false,
                inputs: &[],
                audio: &audio,
                memory: &[],
            });
            speaker.clock_tick(u64::from(frame) * 16_667, 1.0);
        }
        // 119 frame periods at 48 kHz since the first tick.
        let expected = 119.0 * 16_667.0 * 48_000.0 / 1e6;
        assert!((speaker.rendered() as f64 - expected).abs() < 2.0);
        assert!((40.0..90.0).contains(&speaker.revocable_ms()));
        assert_eq!(speaker.ring_stats().stalls, 0);
    }
}
