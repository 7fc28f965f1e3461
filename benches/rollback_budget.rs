//! The rollback budget of real cores: how many frames one 16.7 ms display
//! frame can re-simulate (load a state, then run and save each frame, video
//! off), through netcade's `Emulator` path and through bare libretro calls on
//! the same core (`Core::bare_rollback`: nothing but `retro_unserialize`,
//! `retro_run` and `retro_serialize`), measured side by side in one run.
//!
//!
//! Then the heavy frame of a 100 ms match with run-ahead 2: a rollback as
//! deep as such a match's deepest (load, then re-simulate and save each
//! frame, video off), the new frame and its save, and the frames ahead
//! shown through netcade's own [`RunAhead`] (single and preemptive; the
//! rollback spoils preemptive's kept state every frame, its worst case),
//! timed frame by frame against the 16.7 ms a frame has.
//!
//! Run: `cargo bench --bench rollback_budget` (needs the test content:
//! `scripts/fetch-test-content`). Prints, per core, the median over runs of
//! the frames that fit in the budget for each path and their ratio
//! (target ≥ 0.98). netcade's path is the one its rollbacks take: `load_state`,
//! then `run_frame` without video and `save_state_to_load` per frame.

#[path = "../tests/support/content.rs"]
#[allow(dead_code)]
mod content;

use libretro_host::{Core, CoreConfig};
use netcade::engine::sinks::run_ahead::{RunAhead, RunAheadArgs, RunAheadMode};
use netcode::emulator::{Emulator, SavestateContext};
use netcode::input::Buttons;
use netcode::rollback::Frame;
use std::time::{Duration, Instant};

/// One displayed frame at 60 fps.
const BUDGET: Duration = Duration::from_micros(16_667);
/// Frames re-simulated by each measured rollback.
const ROLLBACK_FRAMES: usize = 8;
/// Rollbacks per run (the run's figure is their median).
const ROLLBACKS_PER_RUN: usize = 200;
/// Runs of each path, alternating (the figure reported is their median).
const RUNS: usize = 9;

/// A core and game in gameplay: `start_taps` frames at which START and B
/// are pressed (for a few frames) to leave title screens before measuring.
struct Workload {
    core: &'static str,
    rom: &'static str,
    options: &'static [(&'static str, &'static str)],
    warm_up_frames: u32,
    start_taps: &'static [u32],
}

const WORKLOADS: &[Workload] = &[
    Workload {
        core: "stella",
        rom: "boxing.bin",
        options: &[],
        warm_up_frames: 600,
        start_taps: &[60],
    },
    Workload {
        core: "genesis_plus_gx",
        rom: "airstriker.md",
        // The default stops Airstriker on a 68k address-error screen.
        options: &[("genesis_plus_gx_addr_error", "disabled")],
        warm_up_frames: 1700,
        // Title, then the menu, then the first level (B fires as well).
        start_taps: &[200, 400, 600, 800],
    },
];

fn open(workload: &Workload) -> Option<Core> {
    let core_path = content::real_core(workload.core)?;
    let rom = content::real_rom(workload.rom)?;
    let config = CoreConfig {
        option_overrides: workload
            .options
            .iter()
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect(),
        persist_save_ram: false,
        ..netcade::paths::core_config()
    };
    let mut core = Core::load(&core_path, config).expect("the core loads");
    core.load_content(Some(&rom)).expect("the content loads");
    for frame in 0..workload.warm_up_frames {
        let pressed = workload
            .start_taps
            .iter()
            .any(|&tap| (tap..tap + 6).contains(&frame));
        let held = if pressed {
            Buttons::START | Buttons::B
        } else {
            Buttons::NONE
        };
        core.run_frame(&[held, Buttons::NONE], true);
    }
    Some(core)
}

/// A run's median rollback time and median load time.
struct RunTimes {
    rollback: Duration,
    load: Duration,
}

impl RunTimes {
    /// Frames that fit in the budget: one load, then run + save per frame.
    fn frames_in_budget(&self) -> f64 {
        let per_frame =
            (self.rollback.saturating_sub(self.load)).as_secs_f64() / ROLLBACK_FRAMES as f64;
        (BUDGET.saturating_sub(self.load)).as_secs_f64() / per_frame
    }
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn median_f64(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Which path a timed rollback takes.
#[derive(Clone, Copy)]
enum Path {
    /// netcade's rollback: `save_state_to_load`.
    Netcade,
    /// The same with `save_state`, which zeroes the promised buffer first
    /// (what every rollback save did before): shows what that costs.
    NetcadeZeroing,
    Bare,
}

const PATHS: [Path; 3] = [Path::Netcade, Path::NetcadeZeroing, Path::Bare];

/// One run: the paths' rollbacks (and loads alone) alternate one by one,
/// so all see the same machine load.
fn run_all(mut work: impl FnMut(Path, bool)) -> [RunTimes; 3] {
    let mut times: [[Vec<Duration>; 2]; 3] = Default::default();
    for round in 0..ROLLBACKS_PER_RUN {
        // Forwards then backwards: no path always follows the same one.
        let order = if round % 2 == 0 { [0, 1, 2] } else { [2, 1, 0] };
        for index in order {
            let path = PATHS[index];
            for (kind, load_only) in [false, true].into_iter().enumerate() {
                let started = Instant::now();
                work(path, load_only);
                times[index][kind].push(started.elapsed());
            }
        }
    }
    times.map(|[mut rollback, mut load]| RunTimes {
        rollback: median(&mut rollback),
        load: median(&mut load),
    })
}

fn measure(workload: &Workload) {
    let Some(mut core) = open(workload) else {
        println!("{}: skipped (no test content)", workload.core);
        return;
    };
    let mut start = Vec::new();
    core.save_state(&mut start).expect("the core saves");
    let mut ring: Vec<Vec<u8>> = vec![start.clone(); ROLLBACK_FRAMES];
    let mut bare_ring = ring.clone();
    let idle = [Buttons::NONE; 2];

    let mut zeroing_ring = ring.clone();
    let mut figures: [Vec<f64>; 3] = Default::default();
    for _ in 0..RUNS {
        let times = run_all(|path, load_only| match path {
            Path::Netcade | Path::NetcadeZeroing => {
                core.load_state(&start).expect("the core loads its state");
                if load_only {
                    return;
                }
                let zeroing = matches!(path, Path::NetcadeZeroing);
                let slots = if zeroing {
                    &mut zeroing_ring
                } else {
                    &mut ring
                };
                for slot in slots.iter_mut() {
                    core.run_frame(&idle, false);
                    let saved = if zeroing {
                        core.save_state(slot)
                    } else {
                        core.save_state_to_load(slot)
                    };
                    saved.expect("the core saves");
                }
            }
            Path::Bare => {
                let frames: &mut [Vec<u8>] = if load_only { &mut [] } else { &mut bare_ring };
                assert!(core.bare_rollback(&start, frames));
            }
        });
        for (figure, time) in figures.iter_mut().zip(&times) {
            figure.push(time.frames_in_budget());
        }
    }
    let [ours, zeroing, bare] = figures.map(|mut runs| median_f64(&mut runs));
    println!(
        "{} + {}: frames per 16.7 ms: netcade {ours:.1}, bare libretro calls {bare:.1}, ratio {:.3} (zeroing every save: {zeroing:.1}, ratio {:.3}); medians of {RUNS} runs of {ROLLBACKS_PER_RUN} rollbacks of {ROLLBACK_FRAMES} frames",
        workload.core,
        workload.rom,
        ours / bare,
        zeroing / bare
    );
}

/// Frames a 100 ms match re-simulates at its deepest: the round trip at
/// 60 fps with no input delay (the deepest measured in such matches,
/// with their chosen delay of 2, is 5: docs/measurements.md).
const DEEPEST_100_MS_ROLLBACK: usize = 6;
/// Frames shown ahead.
const RUN_AHEAD: u8 = 2;
/// Match frames timed per run.
const MATCH_FRAMES_PER_RUN: usize = 200;

/// One frame of a 100 ms match at its worst with run-ahead `mode`: the
/// deepest rollback from `start`, then the new frame, then the frames
/// ahead. The buttons change every frame.
fn match_frame(
    core: &mut Core,
    start: &[u8],
    slots: &mut [Vec<u8>],
    run_ahead: &mut RunAhead,
    number: u32,
) {
    let held = if number % 2 == 0 {
        Buttons::RIGHT | Buttons::B
    } else {
        Buttons::LEFT
    };
    let inputs = [held, Buttons::NONE];
    core.set_savestate_context(SavestateContext::Rollback);
    core.load_state(start).expect("the core loads its state");
    // The re-simulated frames and the new one, each saved for a later rollback.
    for slot in slots.iter_mut() {
        core.run_frame(&inputs, false);
        core.save_state_to_load(slot).expect("the core saves");
    }
    core.set_savestate_context(SavestateContext::Netplay);
    // A rollback spoils a kept ahead state, as in a match.
    run_ahead.forget();
    run_ahead
        .show(core, Frame::new(number), &inputs, &mut ())
        .expect("the frames ahead run");
}

/// The median time of a 100 ms match's worst frame with run-ahead 2 in
/// each mode, and of its rollback alone, over [`RUNS`] runs.
fn measure_match_frame(workload: &Workload) {
    let Some(mut core) = open(workload) else {
        println!("{}: skipped (no test content)", workload.core);
        return;
    };
    let mut start = Vec::new();
    core.save_state(&mut start).expect("the core saves");
    let mut slots = vec![start.clone(); DEEPEST_100_MS_ROLLBACK + 1];
    let modes = [
        None,
        Some(RunAheadMode::Single),
        Some(RunAheadMode::Preemptive),
    ];
    let mut run_aheads = modes.map(|mode| {
        let args = RunAheadArgs {
            ahead: if mode.is_some() { RUN_AHEAD } else { 0 },
            ahead_mode: mode.unwrap_or_default(),
        };
        RunAhead::new(args, SavestateContext::Netplay)
    });
    let mut figures: [Vec<Duration>; 3] = Default::default();
    for _ in 0..RUNS {
        let mut times: [Vec<Duration>; 3] = Default::default();
        for number in 0..MATCH_FRAMES_PER_RUN as u32 {
            // The modes alternate frame by frame: all see the same load.
            for (index, run_ahead) in run_aheads.iter_mut().enumerate() {
                let started = Instant::now();
                match_frame(&mut core, &start, &mut slots, run_ahead, number);
                times[index].push(started.elapsed());
            }
        }
        for (figure, mut time) in figures.iter_mut().zip(times) {
            figure.push(median(&mut time));
        }
    }
    let [rollback, single, preemptive] = figures.map(|mut runs| median(&mut runs));
    let share = |time: Duration| 100.0 * time.as_secs_f64() / BUDGET.as_secs_f64();
    println!(
        "{} + {}: a 100 ms match's frame with its deepest rollback ({DEEPEST_100_MS_ROLLBACK} frames re-simulated, then the new frame): {:.2} ms ({:.0} % of 16.7 ms); with run-ahead {RUN_AHEAD} single {:.2} ms ({:.0} %), preemptive {:.2} ms ({:.0} %); medians of {RUNS} runs of {MATCH_FRAMES_PER_RUN} frames",
        workload.core,
        workload.rom,
        rollback.as_secs_f64() * 1e3,
        share(rollback),
        single.as_secs_f64() * 1e3,
        share(single),
        preemptive.as_secs_f64() * 1e3,
        share(preemptive),
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs it once,
    // which only needs to prove it works.
    let quick = !std::env::args().any(|arg| arg == "--bench");
    for workload in WORKLOADS {
        if quick {
            if let Some(mut core) = open(workload) {
                let mut state = Vec::new();
                core.save_state(&mut state).expect("the core saves");
                assert!(core.bare_rollback(&state, &mut [state.clone()]));
                let args = RunAheadArgs {
                    ahead: RUN_AHEAD,
                    ahead_mode: RunAheadMode::Preemptive,
                };
                let mut run_ahead = RunAhead::new(args, SavestateContext::Netplay);
                let mut slots = vec![state.clone(); 2];
                match_frame(&mut core, &state, &mut slots, &mut run_ahead, 0);
            }
            continue;
        }
        measure(workload);
        measure_match_frame(workload);
    }
}
