//! `netcade replay`: `play` (in a window, or headless: verify, seek),
//! `info`, `inputs` and `diff`.

use crate::checksum::Checksums;
use crate::engine::playback::{
    frames_held, game_checksums, load_replay, open_replay_game, verify, Keyframes, ReplayGameArgs,
    ReplayPlayback,
};
use crate::engine::replay_tools::{
    common_frames, first_difference, inputs_script, ReplayDifference,
};
use crate::engine::sinks::audio_file::AudioArgs;
use crate::engine::sinks::FrameSink;
use crate::engine::{checksums_json, AppError, Game, Outcome};
use crate::replay::{Replay, ReplayEvent, FORMAT_VERSION};
use crate::rollback::Frame;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant, UNIX_EPOCH};

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
/// Arguments of `netcade replay play`.
#[derive(Clone, Debug, clap::Args)]
pub struct PlayArgs {
    /// The replay file.
    pub file: PathBuf,
    /// Which core and content to play it with.
    #[command(flatten)]
    pub game: ReplayGameArgs,
    /// Play without a window, at full speed, and print the final checksums
    /// (required in a build without the `gui` feature).
    #[arg(long)]
    pub headless: bool,
    /// The window's playback speed: 0.25 (a quarter) to 8 times the
    /// core's frame rate.
    #[arg(long, value_name = "X", default_value_t = 1.0, value_parser = parse_speed, conflicts_with = "headless")]
    pub speed: f64,
    /// How the window shows the game (builds with the `gui` feature).
    #[cfg(feature = "gui")]
    #[command(flatten)]
    pub display: crate::gui::window::DisplayArgs,
    /// Check every recorded checkpoint; report the first mismatching frame
    /// and the memory regions that differ (exit 1).
    #[arg(long, conflicts_with_all = ["seek", "frames"])]
    pub verify: bool,
    /// Land on the start of FRAME first (keyframes are built on load).
    #[arg(long, value_name = "FRAME")]
    pub seek: Option<u32>,
    /// Play N frames (from the seek frame, else from the start) [default: to
    /// the replay's end].
    #[arg(long, value_name = "N")]
    pub frames: Option<u32>,
    /// Ends the output with one JSON object on its own line.
    #[arg(long)]
    pub json: bool,
    /// Audio output (`--audio-out` for the headless playback's sound).
    #[command(flatten)]
    pub audio: AudioArgs,
    /// The speaker (the window's playback).
    #[cfg(feature = "audio")]
    #[command(flatten)]
    pub speaker: crate::engine::sinks::speaker::SpeakerArgs,
}

/// The slowest and fastest `--speed`.
pub const SPEED_RANGE: std::ops::RangeInclusive<f64> = 0.25..=8.0;

/// Parses `--speed X`: a multiple of the frame rate within [`SPEED_RANGE`].
pub fn parse_speed(text: &str) -> Result<f64, String> {
    let speed: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    if !SPEED_RANGE.contains(&speed) {
        return Err(format!(
            "{speed} is outside {}..{} (times the core's frame rate)",
            SPEED_RANGE.start(),
            SPEED_RANGE.end()
        ));
    }
    Ok(speed)
}

/// `netcade replay play`.
pub fn play_command(args: &PlayArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    // `--verify` is a check, not a showing: it always runs flat out.
    let in_window = !args.headless && !args.verify;
    #[cfg(not(feature = "gui"))]
    if in_window {
        return Err(AppError::BadArgument {
            message: "replay play shows the replay in a window, and this netcade was built without one: pass --headless, or build with --features gui".into(),
        });
    }
    let replay = load_replay(&args.file)?;
    let mut game = open_replay_game(&replay, &args.game)?;
    let game = game.as_mut();
    writeln!(
        out,
        "{}: {} ({}) of {}",
        args.file.display(),
        frames_held(&replay),
        replay.frames(),
        game.title()
    )?;
    let mut json = serde_json::json!({
        "command": "replay play",
        "replay": args.file.display().to_string(),
        "game": game.title(),
    });
    if args.verify {
        let verification = verify(&replay, game)?;
        let seconds = verification.elapsed.as_secs_f64();
        let fps = if seconds > 0.0 {
            f64::from(verification.frames) / seconds
        } else {
            0.0
        };
        json["frames"] = verification.frames.into();
        json["first_frame"] = replay.start_frame().number().into();
        json["seconds"] = seconds.into();
        json["fps"] = fps.into();
        json["checkpoints_checked"] = verification.checked.into();
        let outcome = match &verification.mismatch {
            None => {
                writeln!(
                    out,
                    "verified: {} checkpoints agree over {} frames ({:.3} s, {fps:.1} fps)",
                    verification.checked, verification.frames, seconds
                )?;
                json["verified"] = true.into();
                Outcome::Success
            }
            Some(mismatch) => {
                writeln!(
                    out,
                    "mismatch at frame {}: {} checksum {} recorded, {} played ({} earlier checkpoints agree)",
                    mismatch.frame.number(),
                    mismatch.kind,
                    mismatch.recorded,
                    mismatch.played,
                    verification.checked
                )?;
                if mismatch.replayed_memory.is_identical() {
                    writeln!(
                        out,
                        "playing frames {}..{} again gives the same memory: this playback is deterministic, the recorded run differed",
                        mismatch.last_good.number(),
                        mismatch.frame.number()
                    )?;
                } else {
                    writeln!(
                        out,
                        "playing frames {}..{} again changes memory regions {}: this playback is not deterministic",
                        mismatch.last_good.number(),
                        mismatch.frame.number(),
                        mismatch.replayed_memory
                    )?;
                }
                json["verified"] = false.into();
                json["mismatch"] = serde_json::json!({
                    "frame": mismatch.frame.number(),
                    "kind": mismatch.kind,
                    "recorded": mismatch.recorded.to_string(),
                    "played": mismatch.played.to_string(),
                    "last_good_frame": mismatch.last_good.number(),
                    "replayed_memory": mismatch.replayed_memory.to_json(),
                });
                Outcome::ReplayMismatch
            }
        };
        json["checksums"] = checksums_json(&game_checksums(game, verification.stopped_at)?);
        if args.json {
            writeln!(out, "{json}")?;
        }
        return Ok(outcome);
    }

    let mut playback = ReplayPlayback::start(&replay, game)?;
    if let Some(seek) = args.seek {
        json["seek"] = seek_replay(&replay, game, &mut playback, seek, out)?;
    }
    let start = playback.frame().number();
    let frames = args
        .frames
        .unwrap_or_else(|| replay.end_frame().number().saturating_sub(start));
    let started = Instant::now();
    let (end, checksums) = if in_window {
        window_playback(args, &replay, game, start, frames, out)?
    } else {
        let end = start.saturating_add(frames);
        let mut audio = args.audio.open_sink(game.sample_rate(), Some(end))?;
        let frame_us = 1e6 / game.frames_per_second().max(1e-3);
        for _ in 0..frames {
            let frame = playback.frame();
            // Recorded frames are final: the speaker's stream is theirs.
            playback.step(game, true, &mut audio)?;
            let played = f64::from(frame.number() - start + 1);
            audio.clock_tick((played * frame_us) as u64, 1.0);
        }
        if let Some(summary) = audio.map(|sink| sink.finish()).transpose()? {
            writeln!(out, "{}", summary.describe())?;
            json["audio"] = summary.json();
        }
        let end = playback.frame();
        (end, game_checksums(game, end)?)
    };
    let elapsed = started.elapsed();
    let seconds = elapsed.as_secs_f64();
    let played = end.number().saturating_sub(start);
    let fps = if seconds > 0.0 {
        f64::from(played) / seconds
    } else {
        0.0
    };
    writeln!(
        out,
        "played frames {start}..{} in {seconds:.3} s: {fps:.1} fps",
        end.number()
    )?;
    writeln!(
        out,
        "checksums: memory {} state {} video {}",
        checksums.memory, checksums.state, checksums.video
    )?;
    if args.json {
        json["first_frame"] = start.into();
        json["frames"] = played.into();
        json["seconds"] = seconds.into();
        json["fps"] = fps.into();
        json["checksums"] = checksums_json(&checksums);
        writeln!(out, "{json}")?;
    }
    Ok(Outcome::Success)
}

/// Puts `playback` at the start of `seek` through keyframes (built first)
/// and says how long that took and the checksums there; returns the JSON
/// of it.
fn seek_replay(
    replay: &Replay,
    game: &mut dyn Game,
    playback: &mut ReplayPlayback<'_>,
    seek: u32,
    out: &mut dyn Write,
) -> Result<serde_json::Value, AppError> {
    let (start, end) = (replay.start_frame().number(), replay.end_frame().number());
    if seek < start {
        return Err(AppError::BadArgument {
            message: format!(
                "--seek {seek}: the replay starts at frame {start} (it was recorded from there, by a spectator who joined then); seek to frames {start}..={end}"
            ),
        });
    }
    if seek > end {
        return Err(AppError::BadArgument {
            message: format!("--seek {seek}: the replay holds {}", frames_held(replay)),
        });
    }
    let built = Instant::now();
    let keyframes = Keyframes::build(replay, game)?;
    let build_time = built.elapsed();
    let sought = Instant::now();
    keyframes.seek(playback, game, Frame::new(seek))?;
    let seek_time = sought.elapsed();
    let at = game_checksums(game, Frame::new(seek))?;
    writeln!(
        out,
        "keyframes: {} ({} KiB) built in {:.3} s; seek to frame {seek} took {:.3} ms",
        keyframes.len(),
        keyframes.bytes() / 1024,
        build_time.as_secs_f64(),
        seek_time.as_secs_f64() * 1000.0
    )?;
    writeln!(
        out,
        "at frame {seek}: memory {} state {} video {}",
        at.memory, at.state, at.video
    )?;
    Ok(serde_json::json!({
        "frame": seek,
        "keyframes": keyframes.len(),
        "keyframe_bytes": keyframes.bytes(),
        "keyframe_build_seconds": build_time.as_secs_f64(),
        "seek_seconds": seek_time.as_secs_f64(),
        "checksums": checksums_json(&at),
    }))
}

/// Plays `frames` frames from `start` in the window (at `--speed`, with
/// the stepping keys); returns the frame it ended at and its checksums.
#[cfg(feature = "gui")]
fn window_playback(
    args: &PlayArgs,
    replay: &Replay,
    game: &mut dyn Game,
    start: u32,
    frames: u32,
    out: &mut dyn Write,
) -> Result<(Frame, Checksums), AppError> {
    let screenshot_at = args.display.screenshot_request()?;
    let end = start.saturating_add(frames);
    if let Some((at, _)) = screenshot_at.as_ref().filter(|(at, _)| *at > end) {
        return Err(AppError::BadArgument {
            message: format!("--screenshot-at {at}: playback ends at frame {end}"),
        });
    }
    let audio = crate::gui::play::audio_output(game, &args.audio, &args.speaker)?;
    crate::gui::play::replay_in_window(
        replay,
        game,
        audio,
        start,
        crate::gui::play::Pacing {
            frames: Some(frames),
            speed: args.speed,
            screenshot_at,
        },
        &args.display,
        out,
    )
}

/// Without the `gui` feature there is no window (refused before this).
#[cfg(not(feature = "gui"))]
fn window_playback(
    _args: &PlayArgs,
    _replay: &Replay,
    _game: &mut dyn Game,
    _start: u32,
    _frames: u32,
    _out: &mut dyn Write,
) -> Result<(Frame, Checksums), AppError> {
    unreachable!("play_command refuses the window in a build without it")
}
