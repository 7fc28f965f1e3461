//! Once warmed up, the audio pipeline (ring, crossfades, rate control,
//! resampler) allocates nothing per frame, rollbacks and stalls included.

use netcode::audio::{AudioConfig, AudioPipeline, AudioPolicy};
use netcode::rollback::Frame;

/// A frame's audio: a tone whose pitch depends on the timeline, so a
/// re-simulation really differs from the prediction.
fn audio(frame: u32, timeline: u32, out: &mut [i16]) {
    for (i, pair) in out.chunks_exact_mut(2).enumerate() {
        let n = frame as usize * 800 + i;
        let value = ((n * (3 + timeline as usize)) % 200) as i16 * 50;
        pair.copy_from_slice(&[value, value]);
    }
}

/// 60 frames a second with a rollback of 4 frames every 7th frame and a
/// 150 ms stall every 400 frames; the consumer renders a frame's worth
/// 100 samples at a time.
fn play(pipeline: &mut AudioPipeline, frames: std::ops::Range<u32>, buffer: &mut [i16]) {
    let mut out = [[0i16; 2]; 100];
    for frame in frames {
        if frame % 7 == 0 && frame >= 4 {
            for again in frame - 4..frame {
                audio(again, 1, buffer);
                pipeline.push(Frame::new(again), true, buffer);
            }
        }
        audio(frame, 0, buffer);
        pipeline.push(Frame::new(frame), false, buffer);
        let renders = if frame % 400 == 399 { 8 + 72 } else { 8 };
        for _ in 0..renders {
            pipeline.render(&mut out, |_| {});
        }
    }
}

#[test]
fn a_warmed_up_pipeline_allocates_nothing_per_frame() {
    let mut pipeline =
        AudioPipeline::new(AudioConfig::new(48_000.0, 48_000.0, AudioPolicy::Revoke));
    let mut buffer = vec![0i16; 1600];
    play(&mut pipeline, 0..600, &mut buffer);
    let allocations =
        allocation_counter::measure(|| play(&mut pipeline, 600..3000, &mut buffer)).count_total;
    let stats = pipeline.ring_stats();
    assert!(stats.revoked_samples > 0 && stats.splices > 0, "{stats:?}");
    assert!(stats.stalls > 0, "{stats:?}");
    assert_eq!(allocations, 0, "allocations during 2400 frames");
}
