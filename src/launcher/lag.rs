//! A game's own input lag, measured for the launcher: `netcade latency` runs
//! in a child (it plays a few thousand frames of the game), and its answer
//! comes back on a worker thread while the window goes on drawing.

use crate::engine::child::run_in_child;
use crate::launcher::forms::GameChoice;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, TryRecvError};

/// How long a measurement may take (a heavy core in a debug build).
pub const LAG_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// The most of `netcade latency --json`'s output read.
const MAX_LATENCY_OUTPUT: u64 = 256 * 1024;

/// What `netcade latency --json` found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeasuredLag {
    /// The median lag over the buttons that changed the picture, if any did.
    pub lag_frames: Option<u32>,
    /// The run-ahead that hides it.
    pub suggested_run_ahead: Option<u8>,
}

impl MeasuredLag {
    /// Reads the JSON line that ends `netcade latency --json`'s output.
    pub fn from_output(stdout: &str) -> Option<MeasuredLag> {
        let json: serde_json::Value = serde_json::from_str(stdout.lines().last()?).ok()?;
        let frames = |key: &str| json.get(key).and_then(serde_json::Value::as_u64);
        (json.get("command")? == "latency").then(|| MeasuredLag {
            lag_frames: frames("lag_frames").and_then(|lag| u32::try_from(lag).ok()),
            suggested_run_ahead: frames("suggested_run_ahead")
                .and_then(|ahead| u8::try_from(ahead).ok()),
        })
    }
}

/// A measurement under way in a child process.
pub struct LagMeasurement {
    game: GameChoice,
    answer: Receiver<Result<MeasuredLag, String>>,
}

impl LagMeasurement {
    /// Starts `program latency` on `game` with `game_args` (its core
    /// options and folders, as a session of it would have them).
    pub fn start(program: PathBuf, game: &GameChoice, game_args: Vec<String>) -> LagMeasurement {
        let mut args = vec![
            "latency".to_string(),
            "--core".to_string(),
            game.core.clone(),
        ];
        if let Some(rom) = &game.rom {
            args.extend(["--rom".to_string(), rom.display().to_string()]);
        }
        args.extend(game_args);
        args.push("--json".to_string());
        let (sender, answer) = channel();
        std::thread::spawn(move || {
            let measured =
                run_in_child(&program, &args, LAG_TIMEOUT, MAX_LATENCY_OUTPUT).and_then(|stdout| {
                    MeasuredLag::from_output(&stdout)
                        .ok_or_else(|| "error: netcade latency gave no answer".to_string())
                });
            let _ = sender.send(measured);
        });
        LagMeasurement {
            game: game.clone(),
            answer,
        }
    }

    /// The game being measured.
    pub fn game(&self) -> &GameChoice {
        &self.game
    }

    /// The answer, once it came.
    pub fn poll(&self) -> Option<Result<MeasuredLag, String>> {
        match self.answer.try_recv() {
            Ok(answer) => Some(answer),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err("error: the measurement stopped".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lag_and_the_suggestion_are_read_from_the_json_line_latency_ends_with() {
        let output = "dojo: input lag 2 frames\n{\"command\":\"latency\",\"lag_frames\":2,\"suggested_run_ahead\":2}\n";
        assert_eq!(
            MeasuredLag::from_output(output),
            Some(MeasuredLag {
                lag_frames: Some(2),
                suggested_run_ahead: Some(2)
            })
        );
        let silent = "{\"command\":\"latency\",\"lag_frames\":null,\"suggested_run_ahead\":null}";
        assert_eq!(
            MeasuredLag::from_output(silent),
            Some(MeasuredLag {
                lag_frames: None,
                suggested_run_ahead: None
            })
        );
        assert_eq!(MeasuredLag::from_output("{\"command\":\"run\"}"), None);
        assert_eq!(MeasuredLag::from_output("no json"), None);
    }
}
