//! `netcade replay play`: a replay in a window at `--speed`, or headless at
//! full speed (`--verify` checks every recorded checkpoint, `--seek` lands
//! on a frame through keyframes).

use crate::commands::outputs::ShowArgs;
use crate::engine::playback::{
    frames_held, load_replay, verify, Keyframes, ReplayGameArgs, ReplayPlayback, Verification,
};
use crate::engine::report::{write_report, Report};
use crate::engine::sinks::audio_file::{AudioArgs, AudioSummary};
use crate::engine::sinks::frame_log::FrameLog;
use crate::engine::sinks::FrameSink;
use crate::engine::state_trial::open_replay_game;
use crate::engine::{checksums_json, AppError, Game, Outcome};
use netcode::checksum::Checksums;
use netcode::replay::Replay;
use netcode::rollback::Frame;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Arguments of `netcade replay play`.
#[derive(Clone, Debug, clap::Args)]
pub struct PlayArgs {
    /// The replay file.
    pub file: PathBuf,
    /// Which core and content to play it with.
    #[command(flatten)]
    pub game: ReplayGameArgs,
    /// The window (`--headless`: none, play at full speed and print the
    /// final checksums; required in a build without the `gui` feature)
    /// and the speaker.
    #[command(flatten)]
    pub show: ShowArgs,
    /// The window's playback speed: 0.25 (a quarter) to 8 times the
    /// core's frame rate.
    #[arg(long, value_name = "X", default_value_t = 1.0, value_parser = parse_speed, conflicts_with = "headless")]
    pub speed: f64,
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
    /// Writes one line per frame shown to PATH: `FRAME VIDEO AUDIO MEMORY`
    /// (the frame number, hex checksums of the picture, the audio and the
    /// memory), to compare with the match's own `--frame-log` (headless).
    #[arg(long, value_name = "PATH")]
    pub frame_log: Option<PathBuf>,
    /// Audio output (`--audio-out` for the headless playback's sound).
    #[command(flatten)]
    pub audio: AudioArgs,
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
    let in_window = !args.show.headless && !args.verify;
    #[cfg(not(feature = "gui"))]
    if in_window {
        return Err(AppError::BadArgument {
            message: "replay play shows the replay in a window, and this netcade was built without one: pass --headless, or build with --features gui".into(),
        });
    }
    let replay = load_replay(&args.file)?;
    let mut game = open_replay_game(&args.file, &replay, &args.game)?;
    let game = game.as_mut();
    writeln!(
        out,
        "{}: {} ({}) of {}",
        args.file.display(),
        frames_held(&replay),
        replay.frames(),
        game.title()
    )?;
    let about = PlayedReplay {
        file: args.file.clone(),
        game: game.title(),
    };
    if args.verify {
        let verification = verify(&replay, game)?;
        let report = VerifyReport {
            about,
            first_frame: replay.start_frame().number(),
            checksums: Checksums::of_game_now(game),
            verification,
            incomplete: incompleteness(&replay),
        };
        write_report(&report, args.json, out)?;
        return Ok(match (&report.verification.mismatch, &report.incomplete) {
            (Some(_), _) => Outcome::ReplayMismatch,
            (None, Some(_)) => Outcome::ReplayIncomplete,
            (None, None) => Outcome::Success,
        });
    }
    let report = play_replay(args, &replay, game, in_window, about, out)?;
    write_report(&report, args.json, out)?;
    Ok(Outcome::Success)
}

/// Plays the frames asked for (after a seek, if asked), in the window or
/// flat out with the sound to `--audio-out`.
fn play_replay(
    args: &PlayArgs,
    replay: &Replay,
    game: &mut dyn Game,
    in_window: bool,
    about: PlayedReplay,
    out: &mut dyn Write,
) -> Result<PlaybackReport, AppError> {
    let mut playback = ReplayPlayback::start(replay, game)?;
    let seek = match args.seek {
        Some(seek) => Some(seek_replay(replay, game, &mut playback, seek)?),
        None => None,
    };
    let start = playback.frame().number();
    // Past its last frame a replay holds nothing to play: stop there.
    let held = replay.end_frame().number().saturating_sub(start);
    let frames = args.frames.map_or(held, |asked| asked.min(held));
    let cut_to_end = args.frames.filter(|&asked| asked > held);
    let started = Instant::now();
    let (end, checksums, audio) = if in_window {
        let (end, checksums) = window_playback(args, replay, game, start, frames, out)?;
        (end, checksums, None)
    } else {
        let end = start.saturating_add(frames);
        let audio = args.audio.open_sink(game.sample_rate(), Some(end))?;
        let mut sinks = (audio, FrameLog::open(args.frame_log.as_deref())?);
        let frame_us = 1e6 / game.frames_per_second().max(1e-3);
        for _ in 0..frames {
            let frame = playback.frame();
            // Recorded frames are final: the speaker's stream is theirs.
            playback.step(game, true, &mut sinks)?;
            let played = f64::from(frame.number() - start + 1);
            sinks.clock_tick((played * frame_us) as u64, 1.0);
        }
        let (audio, frame_log) = sinks;
        frame_log.map(FrameLog::finish).transpose()?;
        let audio = audio.map(|sink| sink.finish()).transpose()?;
        let end = playback.frame();
        (end, Checksums::of_game_now(game), audio)
    };
    Ok(PlaybackReport {
        about,
        seek,
        cut_to_end,
        audio,
        start,
        end: end.number(),
        elapsed: started.elapsed(),
        checksums,
    })
}

/// Which replay was played, on what.
struct PlayedReplay {
    file: PathBuf,
    game: String,
}

impl PlayedReplay {
    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "command": "replay play",
            "replay": self.file.display().to_string(),
            "game": self.game,
        })
    }
}

/// Frames per second over `elapsed` (0 when no time passed).
fn frames_per_second(frames: u32, elapsed: Duration) -> f64 {
    let seconds = elapsed.as_secs_f64();
    if seconds > 0.0 {
        f64::from(frames) / seconds
    } else {
        0.0
    }
}

/// Why a replay is incomplete, if it is: verifying it proves only the
/// frames it holds.
fn incompleteness(replay: &Replay) -> Option<String> {
    match (replay.stops_short(), replay.end) {
        (Some(why), _) => Some(format!("the file is {why}")),
        (None, None) => Some("the file has no end record (the recording was stopped)".into()),
        (None, Some(_)) => None,
    }
}

/// `replay play --verify`: what the checkpoints said.
struct VerifyReport {
    about: PlayedReplay,
    first_frame: u32,
    verification: Verification,
    /// The game's checksums where verification stopped.
    checksums: Checksums,
    /// Why the file is incomplete, if it is.
    incomplete: Option<String>,
}

impl Report for VerifyReport {
    fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let verification = &self.verification;
        let seconds = verification.elapsed.as_secs_f64();
        let fps = frames_per_second(verification.frames, verification.elapsed);
        let Some(mismatch) = &verification.mismatch else {
            writeln!(
                out,
                "verified: {} checkpoints agree over {} frames ({seconds:.3} s, {fps:.1} fps)",
                verification.checked, verification.frames
            )?;
            if let Some(why) = &self.incomplete {
                writeln!(
                    out,
                    "incomplete: {why}; only frames {}..{} were verified",
                    self.first_frame,
                    verification.stopped_at.number()
                )?;
            }
            return Ok(());
        };
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
            )
        } else {
            writeln!(
                out,
                "playing frames {}..{} again changes memory regions {}: this playback is not deterministic",
                mismatch.last_good.number(),
                mismatch.frame.number(),
                mismatch.replayed_memory
            )
        }
    }

    fn json(&self) -> serde_json::Value {
        let verification = &self.verification;
        let mut json = self.about.json();
        json["frames"] = verification.frames.into();
        json["first_frame"] = self.first_frame.into();
        json["seconds"] = verification.elapsed.as_secs_f64().into();
        json["fps"] = frames_per_second(verification.frames, verification.elapsed).into();
        json["checkpoints_checked"] = verification.checked.into();
        json["verified"] = verification.mismatch.is_none().into();
        json["complete"] = self.incomplete.is_none().into();
        if let Some(why) = &self.incomplete {
            json["incomplete"] = why.clone().into();
        }
        if let Some(mismatch) = &verification.mismatch {
            json["mismatch"] = serde_json::json!({
                "frame": mismatch.frame.number(),
                "kind": mismatch.kind,
                "recorded": mismatch.recorded.to_string(),
                "played": mismatch.played.to_string(),
                "last_good_frame": mismatch.last_good.number(),
                "replayed_memory": mismatch.replayed_memory.to_json(),
            });
        }
        json["checksums"] = checksums_json(&self.checksums);
        json
    }
}

/// `--seek`: the keyframes built and the landing.
struct SeekReport {
    frame: u32,
    keyframes: usize,
    keyframe_bytes: usize,
    build_time: Duration,
    seek_time: Duration,
    /// The game's checksums at the start of `frame`.
    checksums: Checksums,
}

/// A playback (after a seek, if any): the frames played and where they
/// ended.
struct PlaybackReport {
    about: PlayedReplay,
    seek: Option<SeekReport>,
    /// `--frames` asked for more than the replay holds from the start
    /// frame: playback stopped at its end.
    cut_to_end: Option<u32>,
    /// The headless playback's `--audio-out`.
    audio: Option<AudioSummary>,
    start: u32,
    end: u32,
    elapsed: Duration,
    checksums: Checksums,
}

impl Report for PlaybackReport {
    fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if let Some(seek) = &self.seek {
            writeln!(
                out,
                "keyframes: {} ({} KiB) built in {:.3} s; seek to frame {} took {:.3} ms",
                seek.keyframes,
                seek.keyframe_bytes / 1024,
                seek.build_time.as_secs_f64(),
                seek.frame,
                seek.seek_time.as_secs_f64() * 1000.0
            )?;
            writeln!(out, "at frame {}: {}", seek.frame, seek.checksums)?;
        }
        if let Some(audio) = &self.audio {
            writeln!(out, "{}", audio.describe())?;
        }
        let played = self.end.saturating_sub(self.start);
        if let Some(asked) = self.cut_to_end {
            writeln!(
                out,
                "the replay ends at frame {}: played {played} frames of the {asked} asked for",
                self.end
            )?;
        }
        writeln!(
            out,
            "played frames {}..{} in {:.3} s: {:.1} fps",
            self.start,
            self.end,
            self.elapsed.as_secs_f64(),
            frames_per_second(played, self.elapsed)
        )?;
        writeln!(out, "checksums: {}", self.checksums)
    }

    fn json(&self) -> serde_json::Value {
        let mut json = self.about.json();
        if let Some(seek) = &self.seek {
            json["seek"] = serde_json::json!({
                "frame": seek.frame,
                "keyframes": seek.keyframes,
                "keyframe_bytes": seek.keyframe_bytes,
                "keyframe_build_seconds": seek.build_time.as_secs_f64(),
                "seek_seconds": seek.seek_time.as_secs_f64(),
                "checksums": checksums_json(&seek.checksums),
            });
        }
        if let Some(audio) = &self.audio {
            json["audio"] = audio.json();
        }
        let played = self.end.saturating_sub(self.start);
        json["first_frame"] = self.start.into();
        json["frames"] = played.into();
        json["frames_asked"] = self.cut_to_end.into();
        json["seconds"] = self.elapsed.as_secs_f64().into();
        json["fps"] = frames_per_second(played, self.elapsed).into();
        json["checksums"] = checksums_json(&self.checksums);
        json
    }
}

/// Puts `playback` at the start of `seek` through keyframes (built first),
/// timing both.
fn seek_replay(
    replay: &Replay,
    game: &mut dyn Game,
    playback: &mut ReplayPlayback<'_>,
    seek: u32,
) -> Result<SeekReport, AppError> {
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
    Ok(SeekReport {
        frame: seek,
        keyframes: keyframes.len(),
        keyframe_bytes: keyframes.bytes(),
        build_time,
        seek_time,
        checksums: Checksums::of_game_now(game),
    })
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
    let screenshot_at = args.show.display.screenshot_request()?;
    let end = start.saturating_add(frames);
    if let Some((at, _)) = screenshot_at.as_ref().filter(|(at, _)| *at > end) {
        return Err(AppError::BadArgument {
            message: format!("--screenshot-at {at}: playback ends at frame {end}"),
        });
    }
    let audio = crate::gui::play::audio_output(game, &args.audio, &args.show.speaker)?;
    crate::gui::play::replay_in_window(
        replay,
        game,
        audio,
        start,
        crate::gui::play::Pacing {
            frames: Some(frames),
            speed: args.speed,
            screenshot_at,
            timeline: None,
        },
        &args.show.display,
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
