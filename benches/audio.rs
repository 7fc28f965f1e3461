//! The audio pipeline's CPU cost per frame beside a Duel frame's (and a
//! genesis_plus_gx frame's, when the test content is there), measured side
//! by side in one run (`scripts/bench-audio` prints the ratios). The
//! pipeline's frame is what a match costs it: a frame's audio pushed, a
//! frame's worth rendered at 48 kHz, and a rollback that re-pushes 4 frames
//! every 7th frame (spliced where the consumer is: a pessimistic ~500
//! splices a minute); the ring's is the same without rate conversion, and
//! the steady ring's the same without rollbacks. A
//! core's frame is `run_frame` with its picture, the frame a player sees.

#[path = "../tests/support/content.rs"]
#[allow(dead_code)]
mod content;

use criterion::{criterion_group, criterion_main, Criterion};
use libretro_host::{Core, CoreConfig};
use netcade::engine::game::default_arena;
use netcade::engine::game::locate_duel_core;
use netcade::engine::inputs::RandomPlayer;
use netcade::engine::{open_game, GameArgs};
use netcode::audio::{AudioConfig, AudioPipeline, AudioPolicy, AudioRing, RingConfig};
use netcode::emulator::Emulator;
use netcode::rollback::Frame;
use std::hint::black_box;

/// Frames per measured iteration: one rollback among them.
const FRAMES: u32 = 7;

fn frame_audio(frame: u32, timeline: u32) -> Vec<i16> {
    (0..800)
        .flat_map(|i| {
            let value = (((frame * 800 + i) * (3 + timeline)) % 256) as i16 * 64;
            [value, value]
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("audio_vs_duel");
    let mut pipeline =
        AudioPipeline::new(AudioConfig::new(48_000.0, 48_000.0, AudioPolicy::Revoke));
    let predicted: Vec<Vec<i16>> = (0..64).map(|f| frame_audio(f, 0)).collect();
    let corrected: Vec<Vec<i16>> = (0..64).map(|f| frame_audio(f, 1)).collect();
    let mut out = vec![[0i16; 2]; 800];
    let mut frame = 0u32;
    group.bench_function("pipeline_7_frames", |b| {
        b.iter(|| {
            for step in 0..FRAMES {
                if step == 3 && frame >= 4 {
                    for again in frame - 4..frame {
                        pipeline.push(Frame::new(again), true, &corrected[again as usize % 64]);
                    }
                }
                pipeline.push(Frame::new(frame), false, &predicted[frame as usize % 64]);
                // No tap: the speaker's (the WAV output's timeline check is
                // a measurement, not part of playing).
                pipeline.render(&mut out, |_| {});
                frame += 1;
            }
            black_box(&out);
        })
    });

    let mut ring = AudioRing::new(RingConfig::for_rate(48_000.0, AudioPolicy::Revoke));
    let mut taken = vec![[0i16; 2]; 800];
    let mut frame = 0u32;
    group.bench_function("ring_7_frames", |b| {
        b.iter(|| {
            for step in 0..FRAMES {
                if step == 3 && frame >= 4 {
                    for again in frame - 4..frame {
                        ring.push(Frame::new(again), true, &corrected[again as usize % 64]);
                    }
                }
                ring.push(Frame::new(frame), false, &predicted[frame as usize % 64]);
                ring.pull_into(&mut taken, |_| {});
                black_box(&taken);
                frame += 1;
            }
        })
    });

    // The same without rollbacks: what steady play costs, so the cost of
    // a splice (the difference, over one splice in 7 frames) shows apart.
    let mut ring = AudioRing::new(RingConfig::for_rate(48_000.0, AudioPolicy::Revoke));
    let mut frame = 0u32;
    group.bench_function("ring_steady_7_frames", |b| {
        b.iter(|| {
            for _ in 0..FRAMES {
                ring.push(Frame::new(frame), false, &predicted[frame as usize % 64]);
                ring.pull_into(&mut taken, |_| {});
                black_box(&taken);
                frame += 1;
            }
        })
    });

    let core = locate_duel_core().expect("the Duel core is built with netcade");
    let mut game = open_game(&GameArgs {
        core,
        rom: Some(default_arena()),
        ..GameArgs::default()
    })
    .expect("Duel loads");
    let mut players = RandomPlayer::new(7);
    group.bench_function("duel_7_frames", |b| {
        b.iter(|| {
            for _ in 0..FRAMES {
                let inputs = players.next_frame();
                game.run_frame(&inputs, true);
            }
            black_box(game.audio_samples().len());
        })
    });
    if let Some(mut genesis) = open_genesis() {
        group.bench_function("genesis_plus_gx_7_frames", |b| {
            b.iter(|| {
                for _ in 0..FRAMES {
                    genesis.run_frame(&[Default::default(); 2], true);
                }
                black_box(genesis.audio_samples().len());
            })
        });
    }
    group.finish();
}

/// genesis_plus_gx playing Airstriker's attract mode, if the test content
/// is there (`scripts/fetch-test-content`).
fn open_genesis() -> Option<Core> {
    let core_path = content::real_core("genesis_plus_gx")?;
    let rom = content::real_rom("airstriker.md")?;
    let config = CoreConfig {
        // The default stops Airstriker on a 68k address-error screen.
        option_overrides: vec![(
            "genesis_plus_gx_addr_error".to_string(),
            "disabled".to_string(),
        )],
        persist_save_ram: false,
        ..netcade::paths::core_config()
    };
    let mut core = Core::load(&core_path, config).ok()?;
    core.load_content(Some(&rom)).ok()?;
    for _ in 0..600 {
        core.run_frame(&[Default::default(); 2], true);
    }
    Some(core)
}

criterion_group!(benches, bench);
criterion_main!(benches);
