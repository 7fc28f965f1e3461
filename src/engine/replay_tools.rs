//! `netcade replay`: `play` (see `replay_play`), `info`, `inputs` and `diff`.

use crate::engine::playback::{frames_held, load_replay, play_command, PlayArgs};
use crate::engine::{AppError, Outcome};
use crate::input::Buttons;
use crate::replay::{Replay, ReplayEvent, FORMAT_VERSION};
use crate::rollback::Frame;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, UNIX_EPOCH};

/// Arguments of `netcade replay`.
#[derive(Clone, Debug, clap::Args)]
pub struct ReplayArgs {
    /// What to do with a replay.
    #[command(subcommand)]
    pub command: ReplayCommand,
}

/// The `netcade replay` subcommands.
#[derive(Clone, Debug, clap::Subcommand)]
pub enum ReplayCommand {
    /// Play a replay back (headless: at full speed), verify it, or seek in it.
    Play(PlayArgs),
    /// Print a replay's header and end record.
    Info(InfoArgs),
    /// Print a replay's inputs as an input script (`run --inputs FILE` reads it).
    Inputs(InputsArgs),
    /// Name the first frame where two replays' inputs or checksums differ.
    Diff(DiffArgs),
}

/// Arguments of `netcade replay info`.
#[derive(Clone, Debug, clap::Args)]
pub struct InfoArgs {
    /// The replay file.
    pub file: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `netcade replay inputs`.
#[derive(Clone, Debug, clap::Args)]
pub struct InputsArgs {
    /// The replay file.
    pub file: PathBuf,
}

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

/// `netcade replay …`.
pub fn replay_command(args: &ReplayArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    match &args.command {
        ReplayCommand::Play(args) => play_command(args, out),
        ReplayCommand::Info(args) => info_command(args, out),
        ReplayCommand::Inputs(args) => inputs_command(args, out),
        ReplayCommand::Diff(args) => diff_command(args, out),
    }
}

/// `2026-11-22T21:04:17Z`.
fn date_text(unix: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(unix)).to_string()
}

fn end_text(replay: &Replay) -> String {
    match (replay.end, replay.cut_at) {
        (Some((frames, reason)), _) => format!("{} after {frames} frames", reason.name()),
        (None, Some(offset)) => format!("none: the file is cut short at byte {offset}"),
        (None, None) => "none: the recording was stopped before it could end".into(),
    }
}

fn repairs(replay: &Replay) -> usize {
    replay
        .events
        .iter()
        .filter(|event| matches!(event, ReplayEvent::Repair { .. }))
        .count()
}

/// `netcade replay info`.
pub fn info_command(args: &InfoArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let replay = load_replay(&args.file)?;
    let header = &replay.header;
    let options: Vec<String> = header
        .core_options
        .iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    let departures: Vec<(u32, u8)> = replay
        .events
        .iter()
        .filter_map(|event| match event {
            ReplayEvent::PlayerLeft { frame, player } => Some((frame.number(), *player)),
            ReplayEvent::Repair { .. } => None,
        })
        .collect();
    if args.json {
        let json = serde_json::json!({
            "file": args.file.display().to_string(),
            "bytes": replay.bytes,
            "format_version": FORMAT_VERSION,
            "netcade_version": header.netcade_version,
            "recorded_at": date_text(header.recorded_at_unix),
            "core": {"name": header.core_name, "version": header.core_version, "path": header.core_path},
            "content": {"name": header.content_name, "path": header.content_path, "hash": header.content_hash.to_string()},
            "core_options": header.core_options.iter().map(|(k, v)| serde_json::json!({"key": k, "value": v})).collect::<Vec<_>>(),
            "players": header.players,
            "player_names": header.player_names,
            "frames_per_second": header.frames_per_second,
            "sample_rate": header.sample_rate,
            "start_state": {"bytes": header.start_state.len(), "memory_checksum": header.start_memory_checksum.to_string()},
            "start_frame": replay.start_frame().number(),
            "end_frame": replay.end_frame().number(),
            "frames": replay.frames(),
            "checkpoints": replay.checkpoints.len(),
            "repairs": repairs(&replay),
            "departures": departures.iter().map(|(frame, player)| serde_json::json!({"frame": frame, "player": player + 1})).collect::<Vec<_>>(),
            "end": replay.end.map(|(frames, reason)| serde_json::json!({"frames": frames, "reason": reason.name()})),
            "cut_at": replay.cut_at,
        });
        writeln!(out, "{json}")?;
        return Ok(Outcome::Success);
    }
    writeln!(
        out,
        "replay: {} ({} bytes, format version {FORMAT_VERSION})",
        args.file.display(),
        replay.bytes
    )?;
    writeln!(
        out,
        "recorded: {} with netcade {}",
        date_text(header.recorded_at_unix),
        header.netcade_version
    )?;
    writeln!(
        out,
        "core: {} {} ({})",
        header.core_name, header.core_version, header.core_path
    )?;
    if header.content_name.is_empty() {
        writeln!(out, "content: none")?;
    } else {
        writeln!(
            out,
            "content: {} (hash {}, {})",
            header.content_name, header.content_hash, header.content_path
        )?;
    }
    let options = if options.is_empty() {
        "defaults".to_string()
    } else {
        options.join(" ")
    };
    writeln!(out, "core options: {options}")?;
    let names = if header.player_names.is_empty() {
        String::new()
    } else {
        format!(" ({})", header.player_names.join(", "))
    };
    writeln!(out, "players: {}{names}", header.players)?;
    writeln!(
        out,
        "timing: {:.3} fps, {} Hz audio",
        header.frames_per_second, header.sample_rate
    )?;
    writeln!(
        out,
        "start state: frame {}, {} bytes, memory checksum {}",
        replay.start_frame().number(),
        header.start_state.len(),
        header.start_memory_checksum
    )?;
    writeln!(
        out,
        "frames: {} = {} ({:.1} s), {} checkpoints, {} desync repairs, {} departures",
        frames_held(&replay),
        replay.frames(),
        f64::from(replay.frames()) / header.frames_per_second,
        replay.checkpoints.len(),
        repairs(&replay),
        departures.len()
    )?;
    writeln!(out, "end: {}", end_text(&replay))?;
    Ok(Outcome::Success)
}

/// The replay's inputs as an input script: one line per run of identical
/// frames (from the replay's start frame), every player's buttons on it.
pub fn inputs_script(replay: &Replay) -> String {
    let players = usize::from(replay.header.players);
    let mut script = String::new();
    let mut run: Option<(u32, [Buttons; crate::input::MAX_PLAYERS])> = None;
    let flush = |script: &mut String, count: u32, inputs: &[Buttons]| {
        let buttons: Vec<String> = inputs.iter().map(Buttons::to_string).collect();
        if count == 1 {
            script.push_str(&format!("{}\n", buttons.join(" ")));
        } else {
            script.push_str(&format!("{count}x {}\n", buttons.join(" ")));
        }
    };
    for frame in replay.start_frame().number()..replay.end_frame().number() {
        let inputs = replay.inputs(Frame::new(frame));
        run = match run {
            Some((count, held)) if held == inputs => Some((count + 1, held)),
            Some((count, held)) => {
                flush(&mut script, count, &held[..players]);
                Some((1, inputs))
            }
            None => Some((1, inputs)),
        };
    }
    if let Some((count, held)) = run {
        flush(&mut script, count, &held[..players]);
    }
    script
}

/// `netcade replay inputs`.
pub fn inputs_command(args: &InputsArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let replay = load_replay(&args.file)?;
    if repairs(&replay) > 0 {
        eprintln!(
            "warning: {} has desync repairs, which an input script cannot hold: running the script may end elsewhere",
            args.file.display()
        );
    }
    let start = replay.start_frame().number();
    if start > 0 {
        // `run --inputs` plays from the game as loaded (frame 0); this
        // script's first line is frame `start`'s, after the host's game ran
        // `start` frames this replay does not hold.
        eprintln!(
            "warning: {} starts at frame {start} (a spectator's recording): `run --inputs` plays a script from frame 0 of the game as loaded, so this script does not reproduce the replay; `netcade replay play` does",
            args.file.display()
        );
        writeln!(
            out,
            "# inputs of {} ({} {}, {}): the first line is frame {start}'s; `run --inputs` would need the state at frame {start}, which only the replay holds",
            args.file.display(),
            replay.header.core_name,
            replay.header.core_version,
            frames_held(&replay),
        )?;
    } else {
        writeln!(
            out,
            "# inputs of {} ({} {}, {} frames): run with --frames {}",
            args.file.display(),
            replay.header.core_name,
            replay.header.core_version,
            replay.frames(),
            replay.frames()
        )?;
    }
    out.write_all(inputs_script(&replay).as_bytes())?;
    Ok(Outcome::Success)
}

/// Where two replays first differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplayDifference {
    /// They begin from different start states.
    StartState,
    /// Frame `frame`'s buttons differ for these players (1-based).
    Inputs {
        /// The frame.
        frame: u32,
        /// The players whose buttons differ.
        players: Vec<usize>,
    },
    /// The checkpoint of `frame` differs in `kind` (`memory` or `video`).
    Checksum {
        /// The frame.
        frame: u32,
        /// Which checksum.
        kind: &'static str,
    },
    /// Everything both hold agrees, but one ends earlier.
    Length {
        /// The end frame of the first (the frame after its last).
        a: u32,
        /// The end frame of the second.
        b: u32,
    },
    /// The two hold no frame in common (frames `a.0..a.1` and `b.0..b.1`).
    NoCommonFrames {
        /// The first's start and end frames.
        a: (u32, u32),
        /// The second's.
        b: (u32, u32),
    },
}

impl ReplayDifference {
    fn frame(&self) -> u32 {
        match self {
            ReplayDifference::StartState => 0,
            ReplayDifference::Inputs { frame, .. } | ReplayDifference::Checksum { frame, .. } => {
                *frame
            }
            ReplayDifference::Length { a, b } => (*a).min(*b),
            ReplayDifference::NoCommonFrames { a, b } => a.0.max(b.0),
        }
    }
}

/// The frames both replays hold, numbered as in the match (a spectator's
/// replay starts where they joined), or `None` when they share none.
pub fn common_frames(a: &Replay, b: &Replay) -> Option<std::ops::Range<u32>> {
    let start = a.start_frame().max(b.start_frame()).number();
    let end = a.end_frame().min(b.end_frame()).number();
    (start < end).then_some(start..end)
}

/// The first difference between `a` and `b` over the frames both hold, if
/// any, compared frame by frame in the match's numbering: a spectator's
/// replay, which starts later, is compared with a player's over the frames
/// after the spectator joined. A checksum differing at the same frame as the
/// inputs is reported as the inputs (the cause).
pub fn first_difference(a: &Replay, b: &Replay) -> Option<ReplayDifference> {
    let Some(common) = common_frames(a, b) else {
        return Some(ReplayDifference::NoCommonFrames {
            a: (a.start_frame().number(), a.end_frame().number()),
            b: (b.start_frame().number(), b.end_frame().number()),
        });
    };
    // Start states compare only when both begin at the same frame; a later
    // start is checked by the other's checkpoints instead.
    if a.start_frame() == b.start_frame()
        && a.header.start_memory_checksum != b.header.start_memory_checksum
    {
        return Some(ReplayDifference::StartState);
    }
    let inputs = common.clone().find_map(|frame| {
        let (here, there) = (a.inputs(Frame::new(frame)), b.inputs(Frame::new(frame)));
        let players: Vec<usize> = (0..crate::input::MAX_PLAYERS)
            .filter(|&player| here[player] != there[player])
            .map(|player| player + 1)
            .collect();
        (!players.is_empty()).then_some(ReplayDifference::Inputs { frame, players })
    });
    let checksum = a.checkpoints.iter().find_map(|here| {
        if !common.contains(&here.frame.number()) {
            return None;
        }
        let there = b.checkpoint(here.frame)?;
        if here.memory != there.memory {
            Some(ReplayDifference::Checksum {
                frame: here.frame.number(),
                kind: "memory",
            })
        } else if here.video.is_some() && there.video.is_some() && here.video != there.video {
            Some(ReplayDifference::Checksum {
                frame: here.frame.number(),
                kind: "video",
            })
        } else {
            None
        }
    });
    let first = match (inputs, checksum) {
        (Some(inputs), Some(checksum)) if checksum.frame() <= inputs.frame() => {
            // A checkpoint of frame f is taken before f runs: inputs of f
            // cannot have caused it.
            Some(checksum)
        }
        (Some(inputs), _) => Some(inputs),
        (None, checksum) => checksum,
    };
    first.or_else(|| {
        (a.end_frame() != b.end_frame()).then_some(ReplayDifference::Length {
            a: a.end_frame().number(),
            b: b.end_frame().number(),
        })
    })
}

/// `netcade replay diff`.
pub fn diff_command(args: &DiffArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let a = load_replay(&args.a)?;
    let b = load_replay(&args.b)?;
    let difference = first_difference(&a, &b);
    let text = match &difference {
        None if a.start_frame() == b.start_frame() => format!(
            "identical: {} frames, same inputs and checksums",
            a.frames()
        ),
        None => {
            let common = common_frames(&a, &b).unwrap_or_default();
            format!(
                "identical over frames {}..{} (both hold them), same inputs and checksums; the first holds {}, the second {}",
                common.start,
                common.end,
                frames_held(&a),
                frames_held(&b)
            )
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
        Some(ReplayDifference::Length { a, b }) => {
            format!(
                "the same up to frame {}, then one ends: at frame {a} against frame {b}",
                (*a).min(*b)
            )
        }
        Some(ReplayDifference::NoCommonFrames { a, b }) => format!(
            "no frame in common: the first holds frames {}..{}, the second frames {}..{}",
            a.0, a.1, b.0, b.1
        ),
    };
    writeln!(out, "{text}")?;
    if args.json {
        let json = serde_json::json!({
            "command": "replay diff",
            "identical": difference.is_none(),
            "frame": difference.as_ref().map(ReplayDifference::frame),
            "difference": match &difference {
                None => serde_json::Value::Null,
                Some(ReplayDifference::StartState) => serde_json::json!({"kind": "start_state"}),
                Some(ReplayDifference::Inputs { players, .. }) => serde_json::json!({"kind": "inputs", "players": players}),
                Some(ReplayDifference::Checksum { kind, .. }) => serde_json::json!({"kind": "checksum", "checksum": kind}),
                Some(ReplayDifference::Length { a, b }) => serde_json::json!({"kind": "length", "frames": [a, b]}),
                Some(ReplayDifference::NoCommonFrames { a, b }) => serde_json::json!({"kind": "no_common_frames", "frames": [[a.0, a.1], [b.0, b.1]]}),
            },
        });
        writeln!(out, "{json}")?;
    }
    Ok(if difference.is_none() {
        Outcome::Success
    } else {
        Outcome::ReplayMismatch
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::Checksum;
    use crate::replay::{read_replay, EndReason, ReplayHeader, ReplayWriter};

    /// A 2-player replay of frames `start..end`, player 1 holding A from
    /// `pressed_at` on (when given), with the memory checksum of frame `f`
    /// being `f`.
    fn replay(start: u32, end: u32, pressed_at: Option<u32>) -> Replay {
        let header = ReplayHeader {
            netcade_version: "0.1.0".into(),
            core_name: "Duel".into(),
            core_version: "0.1.0".into(),
            core_path: String::new(),
            content_name: String::new(),
            content_path: String::new(),
            content_hash: Checksum(0),
            core_options: vec![],
            players: 2,
            frames_per_second: 60.0,
            sample_rate: 48_000.0,
            recorded_at_unix: 0,
            player_names: vec![],
            start_frame: Frame::new(start),
            start_state: vec![1, 2, 3],
            start_memory_checksum: Checksum(u64::from(start)),
        };
        let mut writer = ReplayWriter::new(Vec::new(), &header).unwrap();
        for frame in start..end {
            let held = pressed_at.is_some_and(|at| frame >= at);
            let inputs = [if held { Buttons::A } else { Buttons::NONE }, Buttons::NONE];
            let memory = Checksum(u64::from(frame));
            writer
                .frame(Frame::new(frame), &inputs, Some(memory), None)
                .unwrap();
        }
        let bytes = writer.finish(EndReason::Finished).unwrap().0;
        read_replay(&bytes[..]).unwrap()
    }

    #[test]
    fn a_replay_starting_later_is_compared_over_the_frames_both_hold() {
        let player = replay(0, 600, Some(100));
        let spectator = replay(250, 600, Some(100));
        assert_eq!(common_frames(&player, &spectator), Some(250..600));
        assert_eq!(first_difference(&player, &spectator), None);
        assert_eq!(first_difference(&spectator, &player), None);
    }

    #[test]
    fn a_difference_after_the_later_start_is_named_by_the_matchs_frame() {
        let player = replay(0, 600, Some(400));
        let spectator = replay(250, 600, Some(401));
        assert_eq!(
            first_difference(&player, &spectator),
            Some(ReplayDifference::Inputs {
                frame: 400,
                players: vec![1]
            })
        );
    }

    #[test]
    fn replays_holding_no_frame_in_common_are_said_to() {
        let early = replay(0, 200, None);
        let late = replay(300, 600, None);
        assert_eq!(
            first_difference(&early, &late),
            Some(ReplayDifference::NoCommonFrames {
                a: (0, 200),
                b: (300, 600)
            })
        );
    }

    #[test]
    fn a_spectators_inputs_script_starts_at_the_frame_it_joined_at() {
        let spectator = replay(250, 600, Some(400));
        assert_eq!(inputs_script(&spectator), "150x NONE NONE\n200x A NONE\n");
    }
}
