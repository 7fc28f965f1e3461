//! `netcade replay info`: a replay's header and end record.

use crate::engine::playback::{frames_held, load_replay};
use crate::engine::report::Report;
use crate::engine::{AppError, Outcome};
use netcode::replay::tools::repairs;
use netcode::replay::{Replay, ReplayEvent, FORMAT_VERSION};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

/// Arguments of `netcade replay info`.
#[derive(Clone, Debug, clap::Args)]
pub struct InfoArgs {
    /// The replay file.
    pub file: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `netcade replay info`.
pub fn info_command(args: &InfoArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let replay = load_replay(&args.file)?;
    let info = ReplayInfo {
        file: &args.file,
        replay: &replay,
    };
    // Info is the header itself: JSON replaces the text rather than ending it.
    if args.json {
        writeln!(out, "{}", info.json())?;
    } else {
        info.describe(out)?;
    }
    Ok(Outcome::Success)
}

/// What `replay info` says of a replay.
struct ReplayInfo<'a> {
    file: &'a Path,
    replay: &'a Replay,
}

impl ReplayInfo<'_> {
    /// `(frame, player)` of each departure, players 0-based.
    fn departures(&self) -> Vec<(u32, u8)> {
        self.replay
            .events
            .iter()
            .filter_map(|event| match event {
                ReplayEvent::PlayerLeft { frame, player } => Some((frame.number(), *player)),
                ReplayEvent::Repair { .. } => None,
            })
            .collect()
    }

    fn describe_header(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let header = &self.replay.header;
        writeln!(
            out,
            "replay: {} ({} bytes, format version {FORMAT_VERSION})",
            self.file.display(),
            self.replay.bytes
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
            writeln!(out, "content: none")
        } else {
            writeln!(
                out,
                "content: {} (hash {}, {})",
                header.content_name, header.content_hash, header.content_path
            )
        }
    }
}

impl Report for ReplayInfo<'_> {
    fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let (replay, header) = (self.replay, &self.replay.header);
        self.describe_header(out)?;
        let options: Vec<String> = header
            .core_options
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect();
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
            frames_held(replay),
            replay.frames(),
            f64::from(replay.frames()) / header.frames_per_second,
            replay.checkpoints.len(),
            repairs(replay),
            self.departures().len()
        )?;
        writeln!(out, "end: {}", end_text(replay))
    }

    fn json(&self) -> serde_json::Value {
        let (replay, header) = (self.replay, &self.replay.header);
        serde_json::json!({
            "file": self.file.display().to_string(),
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
            "repairs": repairs(replay),
            "departures": self.departures().iter().map(|(frame, player)| serde_json::json!({"frame": frame, "player": player + 1})).collect::<Vec<_>>(),
            "end": replay.end.map(|(frames, reason)| serde_json::json!({"frames": frames, "reason": reason.name()})),
            "cut_at": replay.cut_at,
            "damage": replay.damage.as_ref().map(ToString::to_string),
        })
    }
}

/// `2026-11-22T21:04:17Z`.
fn date_text(unix: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(unix)).to_string()
}

fn end_text(replay: &Replay) -> String {
    match (replay.end, replay.stops_short()) {
        (Some((frames, reason)), None) => format!("{} after {frames} frames", reason.name()),
        (Some((frames, reason)), Some(why)) => {
            format!(
                "{} after {frames} frames, then the file is {why}",
                reason.name()
            )
        }
        (None, Some(why)) => format!("none: the file is {why}"),
        (None, None) => "none: the recording was stopped before it could end".into(),
    }
}
