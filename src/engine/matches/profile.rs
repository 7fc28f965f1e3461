//! Where a player's frame ticks spend their time, phase by phase, read
//! from the loop's profile clock ([`TickHooks::profile_clock`]): what a match
//! adds to emulating the game (saves, hashing, re-simulation, the final
//! frames' sinks, the network) against what it shares with a solo run.
//! What the phases leave of the process's CPU time is the loop waking up
//! and everything else.
//!
use crate::engine::matches::hooks::TickHooks;
use std::time::Duration;

/// The time from `began` to `ended` (nothing when either is unknown).
pub fn between(began: Option<Duration>, ended: Option<Duration>) -> Duration {
    match (began, ended) {
        (Some(began), Some(ended)) => ended.saturating_sub(began),
        _ => Duration::ZERO,
    }
}

/// The time since `began` on `hooks`' profile clock.
pub fn elapsed_since(began: Option<Duration>, hooks: &mut dyn TickHooks) -> Duration {
    between(began, hooks.profile_clock())
}

/// Time spent in each phase of a machine's ticks so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopProfile {
    /// Frames run for the first time (the session's), with what their
    /// sinks do as each runs (the audio ring).
    pub first_runs: Duration,
    /// Loads and re-simulated frames after rollbacks.
    pub resimulation: Duration,
    /// States saved into the session's slots.
    pub saves: Duration,
    /// Checksums of the saved frames' memory.
    pub hashing: Duration,
    /// Final frames handed to the sinks: the checksum log, the replay
    /// recorder, `--audio-out`, a relay.
    pub final_sinks: Duration,
    /// Frames run ahead for the pictures shown, their saves and loads.
    pub run_ahead: Duration,
    /// Datagrams read and handled, the session polled, datagrams sent.
    pub network: Duration,
    /// Frames run for the first time.
    pub frames: u64,
}

impl LoopProfile {
    /// Each phase's mean microseconds per frame, by name, in the order
    /// listed (all 0 before any frame).
    pub fn per_frame_us(&self) -> [(&'static str, f64); 7] {
        let per_frame = |phase: Duration| {
            if self.frames == 0 {
                0.0
            } else {
                phase.as_secs_f64() * 1e6 / self.frames as f64
            }
        };
        [
            ("emulation", per_frame(self.first_runs)),
            ("resimulation", per_frame(self.resimulation)),
            ("saves", per_frame(self.saves)),
            ("hashing", per_frame(self.hashing)),
            ("final_sinks", per_frame(self.final_sinks)),
            ("run_ahead", per_frame(self.run_ahead)),
            ("network", per_frame(self.network)),
        ]
    }

    /// `emulation 180 µs, resimulation 40 µs, …` per frame.
    pub fn describe(&self) -> String {
        let phases = self
            .per_frame_us()
            .map(|(name, us)| format!("{} {us:.0} µs", name.replace('_', " ")));
        phases.join(", ")
    }

    /// `{"emulation_us": …, …}` per frame.
    pub fn json(&self) -> serde_json::Value {
        let phases: serde_json::Map<String, serde_json::Value> = self
            .per_frame_us()
            .into_iter()
            .map(|(name, us)| (format!("{name}_us"), us.into()))
            .collect();
        serde_json::Value::Object(phases)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_phase_is_given_per_frame_first_run() {
        let profile = LoopProfile {
            first_runs: Duration::from_millis(20),
            saves: Duration::from_millis(5),
            frames: 100,
            ..LoopProfile::default()
        };
        let phases = profile.per_frame_us();
        assert_eq!(phases[0], ("emulation", 200.0));
        assert_eq!(phases[2], ("saves", 50.0));
        assert!(profile
            .describe()
            .starts_with("emulation 200 µs, resimulation 0 µs, saves 50 µs"));
        assert_eq!(profile.json()["saves_us"], 50.0);
        assert_eq!(LoopProfile::default().per_frame_us()[0].1, 0.0);
    }
}
