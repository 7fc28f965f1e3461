//! Recording matches and runs: [`ReplayRecorder`] is a [`FrameSink`] that
//! streams every final frame into a replay file, and [`RecordArgs`] is how
//! commands choose the file (`--record PATH`, `--no-record`).

use crate::engine::game::resolve_core;
use crate::engine::sinks::{FinalFrame, FrameSink};
use crate::engine::{AppError, Game, GameArgs};
use netcode::checksum::Checksum;
use netcode::replay::{EndReason, ReplayHeader, ReplayWriter};
use netcode::rollback::Frame;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// How a netplay command records its match.
#[derive(Clone, Debug, Default, PartialEq, Eq, clap::Args)]
pub struct RecordArgs {
    /// Write the match's replay to PATH [default: a new file in the `replays`
    /// folder of netcade's data directory, ~/.local/share/netcade/replays].
    #[arg(long, value_name = "PATH", conflicts_with = "no_record")]
    pub record: Option<PathBuf>,
    /// Do not record the match.
    #[arg(long)]
    pub no_record: bool,
}

/// The environment variable that replaces the default replays folder.
pub const REPLAY_DIR_ENV: &str = "NETCADE_REPLAY_DIR";

/// Where recordings go unless `--record` says: `$NETCADE_REPLAY_DIR`, else
/// `replays/` in the data directory (none without a home).
pub fn replays_folder() -> Option<PathBuf> {
    std::env::var_os(REPLAY_DIR_ENV)
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .or_else(|| crate::paths::data_dir().map(|dir| dir.join("replays")))
}

impl RecordArgs {
    /// The file to record into, if any: `--record`, else a new file named
    /// after the date, the core and the content in the replays folder.
    pub fn target(&self, header: &ReplayHeader) -> Result<Option<PathBuf>, AppError> {
        if self.no_record {
            return Ok(None);
        }
        if let Some(path) = &self.record {
            return Ok(Some(path.clone()));
        }
        let no_home = || {
            AppError::BadArgument {
            message: format!(
                "no home directory to keep replays in: give --record PATH, --no-record or {REPLAY_DIR_ENV}"
            ),
        }
        };
        let dir = replays_folder().ok_or_else(no_home)?;
        std::fs::create_dir_all(&dir).map_err(|source| AppError::WriteFile {
            what: "the replays folder",
            path: dir.clone(),
            source,
        })?;
        Ok(Some(unused_path(&dir, &replay_file_stem(header))))
    }
}

/// `2026-11-22_21-04-17_stella_combat`: the date (UTC), the core and the
/// content, in characters every file system takes.
pub fn replay_file_stem(header: &ReplayHeader) -> String {
    let date = humantime::format_rfc3339_seconds(
        UNIX_EPOCH + std::time::Duration::from_secs(header.recorded_at_unix),
    )
    .to_string()
    .trim_end_matches('Z')
    .replace('T', "_")
    .replace(':', "-");
    let content = Path::new(&header.content_name)
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut stem = format!("{date}_{}", header.core_name);
    if !content.is_empty() {
        stem.push('_');
        stem.push_str(&content);
    }
    // Anything else becomes one `_` between words, none at the end.
    let mut name = String::with_capacity(stem.len());
    for c in stem.chars() {
        if c.is_ascii_alphanumeric() || c == '-' {
            name.push(c.to_ascii_lowercase());
        } else if !name.ends_with('_') {
            name.push('_');
        }
    }
    name.trim_end_matches('_').to_string()
}

/// `dir/stem.ncr`, or `dir/stem-2.ncr`, … when taken.
fn unused_path(dir: &Path, stem: &str) -> PathBuf {
    let mut path = dir.join(format!("{stem}.ncr"));
    let mut attempt = 1;
    while path.exists() {
        attempt += 1;
        path = dir.join(format!("{stem}-{attempt}.ncr"));
    }
    path
}

/// The xxh3 of the content file (zero without content), as netplay
/// handshakes and replay headers compare it.
pub fn content_checksum(rom: Option<&Path>) -> Result<Checksum, AppError> {
    let Some(rom) = rom else {
        return Ok(Checksum(0));
    };
    let content = std::fs::read(rom).map_err(|source| AppError::PrepareFile {
        what: "the content",
        path: rom.to_path_buf(),
        source,
    })?;
    Ok(Checksum::of(&content))
}

/// The header of a replay of `game` (loaded as `args` say) beginning from
/// `start_state`, with `players` players named `player_names`, recorded now.
pub fn replay_header(
    game: &dyn Game,
    args: &GameArgs,
    players: u8,
    player_names: Vec<String>,
    start_state: Vec<u8>,
) -> Result<ReplayHeader, AppError> {
    let absolute = |path: &Path| {
        std::path::absolute(path)
            .unwrap_or_else(|_| path.to_path_buf())
            .display()
            .to_string()
    };
    let core_path = resolve_core(&args.core)?;
    let recorded_at_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|since| since.as_secs())
        .unwrap_or(0);
    Ok(ReplayHeader {
        netcade_version: env!("CARGO_PKG_VERSION").to_string(),
        core_name: game.core_name(),
        core_version: game.core_version(),
        core_path: absolute(&core_path),
        content_name: args
            .rom
            .as_deref()
            .and_then(Path::file_name)
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default(),
        content_path: args.rom.as_deref().map(absolute).unwrap_or_default(),
        content_hash: content_checksum(args.rom.as_deref())?,
        core_options: args.options.clone(),
        players,
        frames_per_second: game.frames_per_second(),
        sample_rate: game.sample_rate(),
        recorded_at_unix,
        player_names,
        start_frame: Frame::new(0),
        start_memory_checksum: if game.game_memory().is_empty() {
            Checksum::of(&start_state)
        } else {
            Checksum::of(game.game_memory())
        },
        start_state,
    })
}

/// Where a recording went, for the summary and the JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordingSummary {
    /// The replay file.
    pub path: PathBuf,
    /// Frames recorded.
    pub frames: u32,
    /// Bytes written.
    pub bytes: u64,
}

impl RecordingSummary {
    /// `{"path": …, "frames": …, "bytes": …}`.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "path": self.path.display().to_string(),
            "frames": self.frames,
            "bytes": self.bytes,
        })
    }
}

/// Streams every final frame into a replay file. A write failure stops the
/// recording (the match goes on) and is reported by [`ReplayRecorder::finish`].
pub struct ReplayRecorder {
    /// The header still waiting for the match's start state (netplay: the
    /// file is created when frame 0 is about to run).
    waiting: Option<ReplayHeader>,
    writer: Option<ReplayWriter<BufWriter<File>>>,
    path: PathBuf,
    failure: Option<std::io::Error>,
    /// Whether the file did not exist before (only then is an unused one
    /// removed).
    created_here: bool,
}

impl ReplayRecorder {
    /// Creates the file at `path` and writes `header` into it.
    pub fn create(path: &Path, header: &ReplayHeader) -> Result<Self, AppError> {
        let writer = open_writer(path, header).map_err(|source| AppError::WriteFile {
            what: "the replay",
            path: path.to_path_buf(),
            source,
        })?;
        Ok(ReplayRecorder {
            waiting: None,
            writer: Some(writer),
            path: path.to_path_buf(),
            failure: None,
            created_here: true,
        })
    }

    /// A recorder that creates the file at `path` once the match is about
    /// to start ([`FrameSink::match_started`]), with `header` and the start
    /// state. Checks now that the file can be created.
    pub fn create_at_start(path: &Path, header: ReplayHeader) -> Result<Self, AppError> {
        // An existing file is opened without emptying it: it is replaced
        // only once the match starts, and never removed if it does not.
        let created_here = !path.exists();
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|source| AppError::WriteFile {
                what: "the replay",
                path: path.to_path_buf(),
                source,
            })?;
        Ok(ReplayRecorder {
            waiting: Some(header),
            writer: None,
            path: path.to_path_buf(),
            failure: None,
            created_here,
        })
    }

    /// The replay file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn keep(&mut self, result: std::io::Result<()>) {
        if let Err(error) = result {
            tracing::warn!(path = %self.path.display(), "replay recording stopped: {error}");
            self.writer = None;
            self.failure.get_or_insert(error);
        }
    }

    /// Writes the end record and closes the file.
    pub fn finish(mut self, reason: EndReason) -> Result<RecordingSummary, AppError> {
        let write_error = |path: &Path, source| AppError::WriteFile {
            what: "the replay",
            path: path.to_path_buf(),
            source,
        };
        if let Some(failure) = self.failure.take() {
            return Err(write_error(&self.path, failure));
        }
        let Some(writer) = self.writer.take() else {
            // The match never started: dropping removes the empty file.
            return Err(write_error(
                &self.path,
                std::io::Error::other("the match never started, so nothing was recorded"),
            ));
        };
        let frames = writer.frames();
        let (_, bytes) = writer
            .finish(reason)
            .map_err(|source| write_error(&self.path, source))?;
        Ok(RecordingSummary {
            path: std::mem::take(&mut self.path),
            frames,
            bytes,
        })
    }
}

/// A match that never started (refused, abandoned before frame 0) leaves
/// no empty file behind.
impl Drop for ReplayRecorder {
    fn drop(&mut self) {
        if self.waiting.is_some() && self.created_here && !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn open_writer(
    path: &Path,
    header: &ReplayHeader,
) -> std::io::Result<ReplayWriter<BufWriter<File>>> {
    ReplayWriter::new(BufWriter::new(File::create(path)?), header)
}

impl FrameSink for ReplayRecorder {
    fn frame_finalized(&mut self, frame: &FinalFrame<'_>) {
        if let Some(writer) = &mut self.writer {
            let result = writer.frame(frame.frame, frame.inputs, frame.checksum, frame.video);
            self.keep(result);
        }
    }

    fn wants_checksums(&self) -> bool {
        true
    }

    fn match_started(&mut self, frame: Frame, start_state: &[u8], memory: Checksum) {
        let Some(header) = self.waiting.take() else {
            return;
        };
        let header = header.starting_at(frame, start_state, memory);
        let result = open_writer(&self.path, &header).map(|writer| self.writer = Some(writer));
        self.keep(result);
    }

    fn state_repaired(&mut self, frame: Frame, state: &[u8], memory: Checksum) {
        if let Some(writer) = &mut self.writer {
            let result = writer.repair(frame, state, memory);
            self.keep(result);
        }
    }

    fn player_left(&mut self, frame: Frame, player: u8) {
        if let Some(writer) = &mut self.writer {
            let result = writer.player_left(frame, player);
            self.keep(result);
        }
    }
}

/// The recorder of a netplay match (`host`, `join`, `spectate`), or `None`
/// with `--no-record`: `game_args` as the match runs them (the host's core
/// options for a joiner or a spectator). The file is created now and
/// written from the frame [`FrameSink::match_started`] names.
pub fn match_recorder(
    record: &RecordArgs,
    game: &dyn Game,
    game_args: &GameArgs,
    players: u8,
    player_names: Vec<String>,
) -> Result<Option<ReplayRecorder>, AppError> {
    let header = replay_header(game, game_args, players, player_names, Vec::new())?;
    match record.target(&header)? {
        Some(path) => Ok(Some(ReplayRecorder::create_at_start(&path, header)?)),
        None => Ok(None),
    }
}

/// Ends a netplay match's replay, if it was recorded, with `reason`; a
/// recording that failed is a warning, not the match's failure.
pub fn finish_match_recording(
    recorder: Option<ReplayRecorder>,
    reason: EndReason,
) -> Option<RecordingSummary> {
    match recorder?.finish(reason) {
        Ok(summary) => Some(summary),
        Err(error) => {
            eprintln!("warning: {}", crate::engine::error::error_chain(&error));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netcode::input::Buttons;
    use netcode::replay::read_replay;

    fn header() -> ReplayHeader {
        ReplayHeader {
            netcade_version: "0.1.0".into(),
            core_name: "Stella".into(),
            core_version: "3.9.3".into(),
            core_path: "/cores/stella_libretro.so".into(),
            content_name: "Combat (1977).bin".into(),
            content_path: "/roms/Combat (1977).bin".into(),
            content_hash: Checksum(1),
            core_options: vec![],
            players: 2,
            frames_per_second: 60.0,
            sample_rate: 31_400.0,
            recorded_at_unix: 1_795_381_457,
            player_names: vec![],
            start_frame: Frame::new(0),
            start_state: vec![],
            start_memory_checksum: Checksum(0),
        }
    }

    #[test]
    fn a_replay_file_is_named_after_its_date_core_and_content() {
        assert_eq!(
            replay_file_stem(&header()),
            "2026-11-22_21-04-17_stella_combat_1977"
        );
    }

    #[test]
    fn a_match_recorder_writes_its_header_with_the_start_state_it_is_told() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("match.ncr");
        let mut recorder = ReplayRecorder::create_at_start(&path, header()).unwrap();
        recorder.match_started(Frame::new(0), &[7; 40], Checksum(77));
        for frame in 0..90 {
            recorder.frame_finalized(&FinalFrame {
                frame: Frame::new(frame),
                inputs: &[Buttons::A, Buttons::NONE],
                checksum: Some(Checksum(u64::from(frame))),
                video: None,
            });
        }
        let summary = recorder.finish(EndReason::Disconnect).unwrap();
        assert_eq!(
            (summary.frames, summary.path.as_path()),
            (90, path.as_path())
        );
        let replay = read_replay(std::fs::File::open(&path).unwrap()).unwrap();
        assert_eq!(replay.header.start_state, vec![7; 40]);
        assert_eq!(replay.header.start_memory_checksum, Checksum(77));
        assert_eq!(replay.frames(), 90);
        assert_eq!(replay.end, Some((90, EndReason::Disconnect)));
        assert_eq!(summary.bytes, std::fs::metadata(&path).unwrap().len());
    }

    #[test]
    fn a_recording_that_starts_mid_match_numbers_its_frames_as_the_match_does() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("watched.ncr");
        let mut recorder = ReplayRecorder::create_at_start(&path, header()).unwrap();
        recorder.match_started(Frame::new(300), &[9; 40], Checksum(99));
        for frame in 300..420 {
            recorder.frame_finalized(&FinalFrame {
                frame: Frame::new(frame),
                inputs: &[Buttons::from_bits(frame as u16), Buttons::NONE],
                checksum: Some(Checksum(u64::from(frame))),
                video: None,
            });
        }
        let summary = recorder.finish(EndReason::Finished).unwrap();
        assert_eq!(summary.frames, 120);
        let replay = read_replay(std::fs::File::open(&path).unwrap()).unwrap();
        assert_eq!(
            (replay.start_frame(), replay.end_frame(), replay.frames()),
            (Frame::new(300), Frame::new(420), 120)
        );
        assert_eq!(replay.header.start_state, vec![9; 40]);
        assert_eq!(replay.inputs(Frame::new(301))[0], Buttons::from_bits(301));
        assert_eq!(replay.inputs(Frame::new(299))[0], Buttons::NONE);
        let frames: Vec<u32> = replay
            .checkpoints
            .iter()
            .map(|c| c.frame.number())
            .collect();
        // Every 60 frames of the match, and the last one recorded.
        assert_eq!(frames, vec![300, 360, 419]);
        assert_eq!(replay.end, Some((120, EndReason::Finished)));
    }

    #[test]
    fn a_match_that_never_started_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("never.ncr");
        let recorder = ReplayRecorder::create_at_start(&path, header()).unwrap();
        assert!(path.exists(), "created at once, to fail early");
        assert!(recorder.finish(EndReason::Interrupted).is_err());
        assert!(!path.exists());
        let abandoned = ReplayRecorder::create_at_start(&path, header()).unwrap();
        drop(abandoned);
        assert!(!path.exists());
    }

    #[test]
    fn a_match_that_never_started_leaves_an_existing_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kept.ncr");
        std::fs::write(&path, b"an earlier replay").unwrap();
        let recorder = ReplayRecorder::create_at_start(&path, header()).unwrap();
        assert!(recorder.finish(EndReason::Interrupted).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"an earlier replay");
    }

    #[test]
    fn no_record_records_nothing_and_record_names_the_file() {
        let none = RecordArgs {
            record: None,
            no_record: true,
        };
        assert_eq!(none.target(&header()).unwrap(), None);
        let chosen = RecordArgs {
            record: Some(PathBuf::from("mine.ncr")),
            no_record: false,
        };
        assert_eq!(
            chosen.target(&header()).unwrap(),
            Some(PathBuf::from("mine.ncr"))
        );
    }
}
