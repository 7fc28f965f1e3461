//! `netcade run`: run a game unthrottled and report speed and checksums.

use crate::engine::frame_clock::FrameClock;
use crate::engine::inputs::InputSource;
use crate::engine::sinks::run_ahead::{RunAhead, RunAheadArgs};
use crate::engine::sinks::{FinalFrames, FramePass, FrameSink};
use crate::engine::{checksums_json, AppError, Game};
use netcode::checksum::Checksums;
use netcode::emulator::SavestateContext;
use netcode::rollback::Frame;
use std::io::Write;
use std::time::{Duration, Instant};

/// What a run measured.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// Frames run.
    pub frames: u32,
    /// Wall-clock time the frames took.
    pub elapsed: Duration,
    /// Time spent in the core's own calls during the run, if measured.
    pub time_in_core: Option<Duration>,
    /// Checksums of the game after the last frame.
    pub checksums: Checksums,
}

impl RunReport {
    /// Frames run per second of wall-clock time (0 when no time passed).
    pub fn frames_per_second(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if seconds > 0.0 {
            f64::from(self.frames) / seconds
        } else {
            0.0
        }
    }

    /// The share (0–1) of the run's time spent outside the core's own calls:
    /// netcade's own per-frame overhead.
    pub fn overhead_share(&self) -> Option<f64> {
        let in_core = self.time_in_core?.as_secs_f64();
        let total = self.elapsed.as_secs_f64();
        (total > 0.0).then(|| ((total - in_core) / total).clamp(0.0, 1.0))
    }
}

/// Runs `frames` frames as fast as the game goes, drawing each, and hands
/// every frame to `sink`: a local run never rolls back, so each frame is
/// final as soon as it has run.
pub fn run_frames<G: Game + ?Sized>(
    game: &mut G,
    frames: u32,
    inputs: &mut InputSource,
    sink: &mut dyn FrameSink,
) -> Result<RunReport, AppError> {
    let mut no_run_ahead = RunAhead::new(RunAheadArgs::default(), SavestateContext::Normal);
    run_frames_ahead(
        game,
        frames,
        inputs,
        &mut no_run_ahead,
        sink,
        Pace::Unthrottled,
    )
}

/// How fast a local run goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// As fast as the game goes.
    Unthrottled,
    /// At the game's own frame rate, sleeping until each frame is due, as
    /// playing alone does (what a match's CPU is fairly compared with: a
    /// process that sleeps between frames finds its caches cold).
    RealTime,
}

/// [`run_frames`], each frame run and shown through `run_ahead`: with
/// single run-ahead the real frames are not drawn (their pictures are
/// never shown).
pub fn run_frames_ahead<G: Game + ?Sized>(
    game: &mut G,
    frames: u32,
    inputs: &mut InputSource,
    run_ahead: &mut RunAhead,
    sink: &mut dyn FrameSink,
    pace: Pace,
) -> Result<RunReport, AppError> {
    let core_before = game.time_in_core();
    let started = Instant::now();
    let mut clock = FrameClock::new(game.frames_per_second(), 0);
    let pass = if run_ahead.draws_real_frames() {
        FramePass::Shown
    } else {
        FramePass::Unshown
    };
    let mut final_frames = FinalFrames::new(pass == FramePass::Shown);
    for number in 0..frames {
        if pace == Pace::RealTime {
            let now_us = started.elapsed().as_micros() as u64;
            std::thread::sleep(Duration::from_micros(
                clock.next_due_us().saturating_sub(now_us),
            ));
            clock.due(started.elapsed().as_micros() as u64, 1.0);
        }
        let frame_inputs = inputs.next_frame();
        let frame = Frame::new(number);
        run_ahead.run_final(game, &mut final_frames, frame, &frame_inputs, pass, sink)?;
        // A local run's clock is its frame count: frames at the nominal rate.
        let at_us = f64::from(number + 1) * 1e6 / game.frames_per_second().max(1e-3);
        sink.clock_tick(at_us as u64, 1.0);
    }
    let elapsed = started.elapsed();
    // The checksums are the real game's, not of frames run ahead.
    run_ahead.settle(game, &mut final_frames)?;
    let time_in_core = match (core_before, game.time_in_core()) {
        (Some(before), Some(after)) => Some(after.saturating_sub(before)),
        _ => None,
    };
    let mut state = Vec::new();
    game.save_state(&mut state)
        .map_err(AppError::at_frame(frames))?;
    Ok(RunReport {
        frames,
        elapsed,
        time_in_core,
        checksums: Checksums::of_game(game, &state),
    })
}

impl RunReport {
    /// Human lines describing the run.
    pub fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let report = self;
        write!(
            out,
            "ran {} frames in {:.3} s: {:.1} fps",
            report.frames,
            report.elapsed.as_secs_f64(),
            report.frames_per_second()
        )?;
        match report.overhead_share() {
            Some(share) => writeln!(out, ", {:.2}% of the time outside the core", share * 100.0)?,
            None => writeln!(out)?,
        }
        writeln!(out, "checksums: {}", report.checksums)
    }

    /// The run's JSON fields.
    pub fn json(&self) -> serde_json::Value {
        let report = self;
        serde_json::json!({
            "frames": report.frames,
            "seconds": report.elapsed.as_secs_f64(),
            "fps": report.frames_per_second(),
            "overhead_share": report.overhead_share(),
            "checksums": checksums_json(&report.checksums),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::inputs::InputSpec;
    use netcode::checksum::Checksum;
    use netcode::emulator::Emulator;
    use netcode::testing::StubGame;

    #[test]
    fn a_run_reports_its_frames_and_the_checksums_of_where_it_ended() {
        let mut game = StubGame::deterministic();
        let mut inputs = InputSource::open(&InputSpec::Random { seed: 9 }).unwrap();
        let report = run_frames(&mut game, 120, &mut inputs, &mut ()).unwrap();
        assert_eq!(report.frames, 120);
        assert_eq!(game.frames_run(), 120);

        let mut again = StubGame::deterministic();
        let mut inputs = InputSource::open(&InputSpec::Random { seed: 9 }).unwrap();
        assert_eq!(
            run_frames(&mut again, 120, &mut inputs, &mut ())
                .unwrap()
                .checksums,
            report.checksums
        );
        assert!(
            report.overhead_share().is_none(),
            "the stub measures no core time"
        );
    }

    #[test]
    fn a_run_hands_every_frame_to_its_sink_as_final_with_the_memory_checksum() {
        let mut game = StubGame::deterministic();
        let mut log = crate::engine::sinks::ChecksumLog::new(1000);
        let mut inputs = InputSource::open(&InputSpec::Random { seed: 3 }).unwrap();
        run_frames(&mut game, 50, &mut inputs, &mut log).unwrap();
        assert_eq!((log.first_frame(), log.end_frame()), (0, 50));
        let mut again = StubGame::deterministic();
        let mut inputs = InputSource::open(&InputSpec::Random { seed: 3 }).unwrap();
        run_frames(&mut again, 10, &mut inputs, &mut ()).unwrap();
        assert_eq!(
            log.get(10),
            Some(Some(Checksum::of(again.game_memory()))),
            "frame 10's checksum is of the memory it started from"
        );
    }

    #[test]
    fn a_run_reports_the_time_its_game_spent_in_the_core() {
        let mut game = StubGame::deterministic().claiming_time_in_core(Duration::from_millis(2));
        let report = run_frames(&mut game, 20, &mut InputSource::Idle, &mut ()).unwrap();
        assert_eq!(report.time_in_core, Some(Duration::from_millis(40)));
    }

    #[test]
    fn the_overhead_share_is_the_time_not_spent_in_the_core() {
        let report = RunReport {
            frames: 20,
            elapsed: Duration::from_millis(50),
            time_in_core: Some(Duration::from_millis(40)),
            checksums: Checksums::default(),
        };
        let share = report.overhead_share().unwrap();
        assert!((share - 0.2).abs() < 1e-9, "overhead share {share}");
        let unmeasured = RunReport {
            time_in_core: None,
            ..report
        };
        assert_eq!(unmeasured.overhead_share(), None);
    }

    #[test]
    fn the_json_report_has_frames_fps_overhead_and_hex_checksums() {
        let mut game = StubGame::deterministic();
        let report = run_frames(&mut game, 10, &mut InputSource::Idle, &mut ()).unwrap();
        let json = report.json();
        assert_eq!(json["frames"], 10);
        assert!(json["fps"].is_number());
        assert!(json["overhead_share"].is_null());
        for kind in ["memory", "state", "video"] {
            let text = json["checksums"][kind].as_str().unwrap();
            assert_eq!(text.len(), 16, "{kind}: {text}");
            assert!(text.chars().all(|c| c.is_ascii_hexdigit()));
        }
    }
}
