//! `netcade replay diff`: the first frame where two replays part.

use crate::engine::playback::{frames_held, load_replay};
use crate::engine::report::{write_report, Report};
use crate::engine::{AppError, Outcome};
use netcode::replay::tools::{common_frames, first_difference, ReplayDifference};
use netcode::replay::Replay;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `netcade replay diff`.
#[derive(Clone, Debug, clap::Args)]
pub struct DiffArgs {
    /// The first replay.
    pub a: PathBuf,
    /// The second replay.
    pub b: PathBuf,
    /// Ends the output with one JSON object on its own line.
    #[arg(long)]
    pub json: bool,
}

/// `netcade replay diff`.
pub fn diff_command(args: &DiffArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let a = load_replay(&args.a)?;
    let b = load_replay(&args.b)?;
    let report = DiffReport {
        difference: first_difference(&a, &b),
        a: &a,
        b: &b,
    };
    write_report(&report, args.json, out)?;
    Ok(if report.difference.is_none() {
        Outcome::Success
    } else {
        Outcome::ReplayMismatch
    })
}

/// Where two replays part, if they do.
struct DiffReport<'a> {
    a: &'a Replay,
    b: &'a Replay,
    difference: Option<ReplayDifference>,
}

impl Report for DiffReport<'_> {
    fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let (a, b) = (self.a, self.b);
        let text = match &self.difference {
            None if a.start_frame() == b.start_frame() => format!(
                "identical: {} frames, same inputs and checksums",
                a.frames()
            ),
            None => {
                let common = common_frames(a, b).unwrap_or_default();
                format!(
                    "identical over frames {}..{} (both hold them), same inputs and checksums; the first holds {}, the second {}",
                    common.start,
                    common.end,
                    frames_held(a),
                    frames_held(b)
                )
            }
            Some(ReplayDifference::Game { what, a, b }) => {
                format!("the replays are of different games: the {what} differs ({a} against {b})")
            }
            Some(ReplayDifference::StartState) => format!(
                "the start states differ (frame {})",
                a.start_frame().number()
            ),
            Some(ReplayDifference::Inputs { frame, players }) => {
                let names: Vec<String> = players.iter().map(|p| format!("player {p}")).collect();
                format!(
                    "frame {frame}: the inputs of {} differ",
                    names.join(" and ")
                )
            }
            Some(ReplayDifference::Checksum { frame, kind }) => {
                format!("frame {frame}: the {kind} checksums differ with the same inputs before it")
            }
            Some(ReplayDifference::Length { a, b }) => format!(
                "the same up to frame {}, then one ends: at frame {a} against frame {b}",
                (*a).min(*b)
            ),
            Some(ReplayDifference::NoCommonFrames { a, b }) => format!(
                "no frame in common: the first holds frames {}..{}, the second frames {}..{}",
                a.0, a.1, b.0, b.1
            ),
        };
        writeln!(out, "{text}")
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "command": "replay diff",
            "identical": self.difference.is_none(),
            "frame": self.difference.as_ref().map(ReplayDifference::frame),
            "difference": match &self.difference {
                None => serde_json::Value::Null,
                Some(ReplayDifference::Game { what, a, b }) => serde_json::json!({"kind": "game", "differs": what, "values": [a, b]}),
                Some(ReplayDifference::StartState) => serde_json::json!({"kind": "start_state"}),
                Some(ReplayDifference::Inputs { players, .. }) => serde_json::json!({"kind": "inputs", "players": players}),
                Some(ReplayDifference::Checksum { kind, .. }) => serde_json::json!({"kind": "checksum", "checksum": kind}),
                Some(ReplayDifference::Length { a, b }) => serde_json::json!({"kind": "length", "frames": [a, b]}),
                Some(ReplayDifference::NoCommonFrames { a, b }) => serde_json::json!({"kind": "no_common_frames", "frames": [[a.0, a.1], [b.0, b.1]]}),
            },
        })
    }
}
