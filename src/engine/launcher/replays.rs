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
}
