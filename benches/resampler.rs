//! netcade's resampler (Catmull-Rom cubic inside `AudioPipeline`) against
//! rubato 5's asynchronous resamplers (sinc, 128 taps; cubic polynomial),
//! converting stella's 31.4 kHz to 48 kHz: quality first (signal to noise
//! and distortion of a 1 kHz + 9 kHz two-tone signal, printed), then cost
//! per 800 output samples (criterion), each fed from the same ring.
//!
//! Run: `cargo bench --bench resampler`.

use criterion::{criterion_group, criterion_main, Criterion};
use netcode::audio::{AudioConfig, AudioPipeline, AudioPolicy, AudioRing, RingConfig, Stereo};
use netcode::rollback::Frame;
use rubato::audioadapter_buffers::direct::InterleavedSlice;
use rubato::{
    Async, FixedAsync, PolynomialDegree, Resampler, SincInterpolationParameters, WindowFunction,
};
use std::f64::consts::TAU;
use std::hint::black_box;

const CORE_RATE: f64 = 31_400.0;
const DEVICE_RATE: f64 = 48_000.0;
const TONES: [f64; 2] = [1_000.0, 9_000.0];
/// Core samples per frame (31 400 / 60, rounded).
const PER_FRAME: usize = 523;

/// `seconds` of the two tones at the core's rate, interleaved stereo i16.
fn two_tones(seconds: f64) -> Vec<i16> {
    let samples = (CORE_RATE * seconds) as usize;
    (0..samples)
        .flat_map(|n| {
            let t = n as f64 / CORE_RATE;
            let value: f64 = TONES.iter().map(|hz| 10_000.0 * (TAU * hz * t).sin()).sum();
            [value as i16; 2]
        })
        .collect()
}

/// Signal to noise and distortion (dB) of a 48 kHz window of the two tones:
/// the best fit of sines and cosines at the tones' frequencies is the
/// signal, the rest noise. The window holds whole periods of both.
fn sinad_db(left: &[f64]) -> f64 {
    let n = left.len() as f64;
    let mut fitted = vec![0.0; left.len()];
    for hz in TONES {
        let (mut a, mut b) = (0.0, 0.0);
        for (k, x) in left.iter().enumerate() {
            let phase = TAU * hz * k as f64 / DEVICE_RATE;
            a += x * phase.sin();
            b += x * phase.cos();
        }
        let (a, b) = (2.0 * a / n, 2.0 * b / n);
        for (k, y) in fitted.iter_mut().enumerate() {
            let phase = TAU * hz * k as f64 / DEVICE_RATE;
            *y += a * phase.sin() + b * phase.cos();
        }
    }
    let signal: f64 = fitted.iter().map(|y| y * y).sum();
    let noise: f64 = left.iter().zip(&fitted).map(|(x, y)| (x - y).powi(2)).sum();
    10.0 * (signal / noise).log10()
}

fn cubic_pipeline() -> AudioPipeline {
    let mut config = AudioConfig::new(CORE_RATE, DEVICE_RATE, AudioPolicy::Revoke);
    // A fixed ratio: the tones must stay at their frequencies.
    config.max_adjust = 0.0;
    AudioPipeline::new(config)
}

/// netcade's pipeline: a frame in, a frame's worth out.
fn cubic_output(input: &[i16]) -> Vec<f64> {
    let mut pipeline = cubic_pipeline();
    let mut out = vec![[0i16; 2]; 800];
    let mut left = Vec::new();
    for (frame, chunk) in (0..).zip(input.chunks(PER_FRAME * 2)) {
        pipeline.push(Frame::new(frame), false, chunk);
        pipeline.render(&mut out, |_| {});
        left.extend(out.iter().map(|s| f64::from(s[0])));
    }
    left
}

fn rubato_output(resampler: &mut dyn Resampler<f32>, input: &[i16]) -> Vec<f64> {
    let samples: Vec<f32> = input.iter().map(|&v| f32::from(v)).collect();
    let frames = samples.len() / 2;
    let mut out = vec![0.0f32; (frames as f64 * DEVICE_RATE / CORE_RATE) as usize * 2 + 4096];
    let capacity = out.len() / 2;
    let input = InterleavedSlice::new(&samples, 2, frames).unwrap();
    let mut output = InterleavedSlice::new_mut(&mut out, 2, capacity).unwrap();
    let (_, written) = resampler
        .process_all_into_buffer(&input, &mut output, frames, None)
        .unwrap();
    out[..written * 2]
        .chunks_exact(2)
        .map(|s| f64::from(s[0]))
        .collect()
}

fn sinc() -> Async<f32> {
    let parameters = SincInterpolationParameters::new(128, WindowFunction::Blackman2);
    Async::<f32>::new_sinc(
        DEVICE_RATE / CORE_RATE,
        1.1,
        &parameters,
        800,
        2,
        FixedAsync::Output,
    )
    .unwrap()
}

fn poly() -> Async<f32> {
    Async::<f32>::new_poly(
        DEVICE_RATE / CORE_RATE,
        1.1,
        PolynomialDegree::Cubic,
        800,
        2,
        FixedAsync::Output,
    )
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let input = two_tones(3.0);
    // One second from 1.5 s on: past any start-up and fade-in.
    let window = |left: Vec<f64>| sinad_db(&left[72_000..120_000]);
    println!(
        "SINAD 31.4 -> 48 kHz, 1 kHz + 9 kHz: netcade cubic {:.1} dB, rubato sinc-128 {:.1} dB, rubato cubic {:.1} dB",
        window(cubic_output(&input)),
        window(rubato_output(&mut sinc(), &input)),
        window(rubato_output(&mut poly(), &input)),
    );

    let mut group = c.benchmark_group("resample_800_samples");
    let frames: Vec<&[i16]> = input.chunks(PER_FRAME * 2).collect();
    let mut pipeline = cubic_pipeline();
    let mut out = vec![[0i16; 2]; 800];
    let mut frame = 0u32;
    group.bench_function("netcade_cubic", |b| {
        b.iter(|| {
            let chunk = frames[frame as usize % frames.len()];
            pipeline.push(Frame::new(frame), false, chunk);
            pipeline.render(&mut out, |_| {});
            frame += 1;
            black_box(&out);
        })
    });
    for (name, mut resampler) in [("rubato_sinc_128", sinc()), ("rubato_cubic", poly())] {
        let mut ring = AudioRing::new(RingConfig::for_rate(CORE_RATE, AudioPolicy::Revoke));
        let mut pulled: Vec<f32> = Vec::with_capacity(4096);
        let mut out = vec![0.0f32; 1600];
        let mut frame = 0u32;
        group.bench_function(name, |b| {
            b.iter(|| {
                let chunk = frames[frame as usize % frames.len()];
                ring.push(Frame::new(frame), false, chunk);
                frame += 1;
                let needed = resampler.input_frames_next();
                pulled.clear();
                for _ in 0..needed {
                    let sample: Stereo = ring.pull().sample;
                    pulled.extend([f32::from(sample[0]), f32::from(sample[1])]);
                }
                let input = InterleavedSlice::new(&pulled, 2, needed).unwrap();
                let mut output = InterleavedSlice::new_mut(&mut out, 2, 800).unwrap();
                resampler
                    .process_into_buffer(&input, &mut output, None)
                    .unwrap();
                black_box(&out);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
