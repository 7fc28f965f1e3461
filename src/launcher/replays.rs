//! The launcher's replays: the recordings in the replays folder, newest
//! first, narrowed by a filter, and what it can do with one (play at a
//! speed, show its header, verify it), each as the `replay` command line
//! that does it.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The most recordings listed (the newest).
pub const MAX_LISTED: usize = 500;

/// A recording in the folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayFile {
    /// Its path.
    pub path: PathBuf,
    /// When it was last written.
    pub modified: SystemTime,
}

impl ReplayFile {
    /// Its file name.
    pub fn name(&self) -> String {
        self.path
            .file_name()
            .map_or_else(String::new, |name| name.to_string_lossy().into_owned())
    }
}

/// The `*.ncr` files in `folder`, newest first, at most [`MAX_LISTED`].
pub fn list_replays(folder: &Path) -> Vec<ReplayFile> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut replays: Vec<ReplayFile> = entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "ncr"))
        .filter_map(|entry| {
            let modified = entry.metadata().ok()?.modified().ok()?;
            Some(ReplayFile {
                path: entry.path(),
                modified,
            })
        })
        .collect();
    replays.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
    replays.truncate(MAX_LISTED);
    replays
}

/// The replays whose name holds every word of `filter` (any case).
pub fn matching<'a>(replays: &'a [ReplayFile], filter: &str) -> Vec<&'a ReplayFile> {
    let words: Vec<String> = filter.split_whitespace().map(str::to_lowercase).collect();
    replays
        .iter()
        .filter(|replay| {
            let name = replay.name().to_lowercase();
            words.iter().all(|word| name.contains(word.as_str()))
        })
        .collect()
}

/// The replay the Play, Info and Verify buttons act on: the one `chosen`
/// if the filter still shows it, else the newest the filter shows (a
/// player who just finished a match finds it chosen).
pub fn chosen_or_newest(
    replays: &[ReplayFile],
    filter: &str,
    chosen: Option<&Path>,
) -> Option<PathBuf> {
    let shown = matching(replays, filter);
    shown
        .iter()
        .find(|replay| Some(replay.path.as_path()) == chosen)
        .or(shown.first())
        .map(|replay| replay.path.clone())
}

/// What the list shows of a replay: its header in a line, or why its
/// header could not be read.
pub type HeaderLine = Result<String, String>;

/// The line for the replay at `path`, from its header alone.
pub fn header_line(path: &Path) -> HeaderLine {
    let file = std::fs::File::open(path).map_err(|err| format!("cannot open it: {err}"))?;
    let header = netcode::replay::read_replay_header(std::io::BufReader::new(file))
        .map_err(|err| err.to_string())?;
    let content = match header.content_name.as_str() {
        "" => "no content".to_string(),
        name => name.to_string(),
    };
    let mut line = format!(
        "{} {}, {content}, {} player{}",
        header.core_name,
        header.core_version,
        header.players,
        if header.players == 1 { "" } else { "s" }
    );
    if !header.player_names.is_empty() {
        line.push_str(&format!(": {}", header.player_names.join(", ")));
    }
    if header.start_frame.number() > 0 {
        line.push_str(&format!(", from frame {}", header.start_frame.number()));
    }
    Ok(line)
}

/// The headers of listed replays, read on a worker thread in the list's
/// order (newest first) so the list shows at once and fills in as they
/// are read. Dropping it stops the worker after the header it is reading.
pub struct HeaderReader {
    results: std::sync::mpsc::Receiver<(PathBuf, HeaderLine)>,
    read: std::collections::HashMap<PathBuf, HeaderLine>,
    /// How many are being read.
    asked: usize,
}

impl HeaderReader {
    /// Starts reading the headers of `replays` (at most [`MAX_LISTED`]).
    pub fn start(replays: &[ReplayFile]) -> HeaderReader {
        let paths: Vec<PathBuf> = replays
            .iter()
            .take(MAX_LISTED)
            .map(|replay| replay.path.clone())
            .collect();
        let (send, results) = std::sync::mpsc::channel();
        let asked = paths.len();
        std::thread::spawn(move || {
            for path in paths {
                let line = header_line(&path);
                if send.send((path, line)).is_err() {
                    return;
                }
            }
        });
        HeaderReader {
            results,
            read: std::collections::HashMap::new(),
            asked,
        }
    }

    /// Takes the headers read since the last call.
    pub fn update(&mut self) {
        self.read.extend(self.results.try_iter());
    }

    /// Whether headers are still being read.
    pub fn reading(&self) -> bool {
        self.read.len() < self.asked
    }

    /// The line for `path`, once its header was read.
    pub fn line(&self, path: &Path) -> Option<&HeaderLine> {
        self.read.get(path)
    }
}

/// What to do with a replay.
#[derive(Clone, Debug, PartialEq)]
pub enum ReplayAction {
    /// Play it in the window at this speed (0.25 to 8).
    Play {
        /// Times the core's frame rate.
        speed: f32,
    },
    /// Show its header and end record.
    Info,
    /// Check every checkpoint, headless and flat out.
    Verify,
}

impl ReplayAction {
    /// The command line (after the program's name) that does it to `replay`.
    pub fn command_line(&self, replay: &Path) -> Vec<String> {
        let path = replay.display().to_string();
        let words: Vec<&str> = match self {
            ReplayAction::Play { .. } => vec!["replay", "play", &path, "--speed"],
            ReplayAction::Info => vec!["replay", "info", &path],
            ReplayAction::Verify => vec!["replay", "play", &path, "--headless", "--verify"],
        };
        let mut line: Vec<String> = words.into_iter().map(str::to_string).collect();
        if let ReplayAction::Play { speed } = self {
            line.push(speed.to_string());
        }
        line
    }
}

/// Writes a short replay of Duel on `content` at `path` (tests of the
/// lists that read replays).
#[cfg(test)]
pub(crate) fn write_test_replay(path: &Path, content: &str) {
    use netcode::checksum::Checksum;
    use netcode::replay::{EndReason, ReplayHeader, ReplayWriter};
    let header = ReplayHeader {
        netcade_version: "0.1.0".into(),
        core_name: "Duel".into(),
        core_version: "0.1.0".into(),
        core_path: "/cores/libduel.so".into(),
        content_name: content.into(),
        content_path: "/roms/dojo.arena".into(),
        content_hash: Checksum(1),
        core_options: vec![],
        players: 2,
        frames_per_second: 60.0,
        sample_rate: 48_000.0,
        recorded_at_unix: 1_795_381_457,
        player_names: vec!["host".into(), "127.0.0.1:7000".into()],
        start_frame: netcode::rollback::Frame::new(0),
        start_state: vec![7; 100],
        start_memory_checksum: Checksum(0),
    };
    let file = std::fs::File::create(path).unwrap();
    let writer = ReplayWriter::new(file, &header).unwrap();
    writer.finish(EndReason::Finished).unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_are_listed_newest_first_and_narrowed_by_every_word_of_the_filter() {
        let dir = tempfile::tempdir().unwrap();
        let names = [
            "2026-11-20_duel_dojo.ncr",
            "2026-11-21_stella_combat.ncr",
            "notes.txt",
        ];
        for (age, name) in names.iter().enumerate() {
            let path = dir.path().join(name);
            std::fs::write(&path, b"x").unwrap();
            let when = SystemTime::now() - std::time::Duration::from_secs(100 * (3 - age as u64));
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        let listed = list_replays(dir.path());
        let listed_names: Vec<String> = listed.iter().map(ReplayFile::name).collect();
        assert_eq!(
            listed_names,
            ["2026-11-21_stella_combat.ncr", "2026-11-20_duel_dojo.ncr"]
        );
        let found: Vec<String> = matching(&listed, "DUEL 11-20")
            .iter()
            .map(|r| r.name())
            .collect();
        assert_eq!(found, ["2026-11-20_duel_dojo.ncr"]);
        assert_eq!(matching(&listed, "").len(), 2);
        assert!(list_replays(&dir.path().join("none")).is_empty());
    }

    #[test]
    fn the_buttons_act_on_the_replay_chosen_or_else_the_newest_one_shown() {
        let replay = |name: &str, age: u64| ReplayFile {
            path: PathBuf::from(name),
            modified: SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000 - age),
        };
        let listed = [replay("new_stella.ncr", 1), replay("old_duel.ncr", 2)];
        let path = |name: &str| Some(PathBuf::from(name));
        assert_eq!(chosen_or_newest(&listed, "", None), path("new_stella.ncr"));
        let old = Path::new("old_duel.ncr");
        assert_eq!(
            chosen_or_newest(&listed, "", Some(old)),
            path("old_duel.ncr")
        );
        // A choice the filter hides is not acted on unseen.
        assert_eq!(
            chosen_or_newest(&listed, "stella", Some(old)),
            path("new_stella.ncr")
        );
        assert_eq!(chosen_or_newest(&listed, "nothing", None), None);
    }

    #[test]
    fn the_list_reads_each_replays_header_on_a_worker_and_names_what_is_wrong_with_a_bad_one() {
        let dir = tempfile::tempdir().unwrap();
        write_test_replay(&dir.path().join("good.ncr"), "dojo.arena");
        std::fs::write(dir.path().join("bad.ncr"), b"not a replay at all").unwrap();
        let listed = list_replays(dir.path());
        let mut headers = HeaderReader::start(&listed);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while listed
            .iter()
            .any(|replay| headers.line(&replay.path).is_none())
        {
            assert!(std::time::Instant::now() < deadline, "headers never read");
            std::thread::yield_now();
            headers.update();
        }
        assert_eq!(
            headers.line(&dir.path().join("good.ncr")),
            Some(&Ok(
                "Duel 0.1.0, dojo.arena, 2 players: host, 127.0.0.1:7000".to_string()
            ))
        );
        let bad = headers.line(&dir.path().join("bad.ncr")).unwrap();
        assert_eq!(
            bad.clone().unwrap_err(),
            netcode::replay::ReplayError::NotAReplay.to_string()
        );
    }
}
