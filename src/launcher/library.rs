//! The game library: the ROM folders chosen in Settings, walked and hashed
//! (CRC-32, as libretro's databases name games) on a worker thread into a
//! list of games by name ([`LibraryScan`]), kept in `library.json` in the
//! data directory so a rescan hashes only what changed; and which
//! installed core plays each game ([`choose_core`]), with the option fixes
//! known for some cores ([`known_fixes`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, Instant, UNIX_EPOCH};

/// The most files one scan lists (a library larger than this is cut, and
/// says so).
pub const MAX_GAMES: usize = 200_000;

/// How deep below a ROM folder the scan goes.
pub const MAX_DEPTH: usize = 12;

/// Files larger than this are listed but not hashed (disc images).
pub const MAX_HASHED_BYTES: u64 = 1024 * 1024 * 1024;

/// The largest `library.json` read back.
pub const MAX_INDEX_BYTES: u64 = 128 * 1024 * 1024;

/// Extensions that are never games (notes, pictures, saves, replays).
const NOT_GAMES: &[&str] = &[
    "txt", "nfo", "diz", "pdf", "htm", "html", "jpg", "jpeg", "png", "gif", "bmp", "webp", "xml",
    "json", "ini", "cfg", "toml", "info", "log", "srm", "sav", "state", "ncr", "md5", "sha1",
    "sfv", "dat", "db", "so", "dll", "dylib",
];

/// One game of the library: a content file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibraryGame {
    /// The file.
    pub path: PathBuf,
    /// Its name as listed: the file name without its extension.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// When it last changed, in seconds since 1970 (to hash it again).
    pub modified: u64,
    /// Its CRC-32, once hashed (none for files over [`MAX_HASHED_BYTES`]
    /// or unreadable).
    pub crc32: Option<u32>,
}

impl LibraryGame {
    /// Its extension, lower case.
    pub fn extension(&self) -> String {
        self.path
            .extension()
            .map(|ext| ext.to_string_lossy().to_lowercase())
            .unwrap_or_default()
    }

    /// Whether `search` (words, any case) is in its name.
    pub fn matches(&self, search: &str) -> bool {
        let name = self.name.to_lowercase();
        search
            .split_whitespace()
            .all(|word| name.contains(&word.to_lowercase()))
    }

    /// The bytes it takes in memory.
    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.path.as_os_str().len() + self.name.capacity()
    }
}

/// Whether a file named `path` may be a game.
pub fn may_be_a_game(path: &Path) -> bool {
    let Some(ext) = path.extension() else {
        return false;
    };
    let ext = ext.to_string_lossy().to_lowercase();
    !NOT_GAMES.contains(&ext.as_str())
        && !path
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with('.'))
}

/// The name a file is listed by.
pub fn game_name(path: &Path) -> String {
    path.file_stem()
        .map(|stem| stem.to_string_lossy().replace('_', " "))
        .unwrap_or_default()
}

/// The games in `folders`, walked breadth first, at most [`MAX_GAMES`] and
/// [`MAX_DEPTH`] deep, without following links to folders (a loop costs
/// nothing). `found` gets them in batches as they are found.
fn walk(folders: &[PathBuf], found: &mut dyn FnMut(Vec<LibraryGame>) -> bool) {
    let mut queue: std::collections::VecDeque<(PathBuf, usize)> =
        folders.iter().map(|folder| (folder.clone(), 0)).collect();
    let mut batch = Vec::new();
    let mut listed = 0usize;
    let mut last_sent = Instant::now();
    while let Some((folder, depth)) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                if depth < MAX_DEPTH {
                    queue.push_back((path, depth + 1));
                }
                continue;
            }
            if !may_be_a_game(&path) || listed >= MAX_GAMES {
                continue;
            }
            let Ok(metadata) = std::fs::metadata(&path) else {
                continue;
            };
            if !metadata.is_file() {
                continue;
            }
            let modified = metadata
                .modified()
                .ok()
                .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |since| since.as_secs());
            listed += 1;
            batch.push(LibraryGame {
                name: game_name(&path),
                path,
                size: metadata.len(),
                modified,
                crc32: None,
            });
            // The first games show at once; then a batch every 50 ms.
            if listed <= 64 || last_sent.elapsed() > Duration::from_millis(50) {
                if !found(std::mem::take(&mut batch)) {
                    return;
                }
                last_sent = Instant::now();
            }
        }
    }
    if !batch.is_empty() {
        found(batch);
    }
}

/// The CRC-32 of the file at `path`, read 64 KiB at a time.
pub fn crc32_of(path: &Path) -> std::io::Result<u32> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut hasher = crc32fast::Hasher::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            return Ok(hasher.finalize());
        }
        hasher.update(&buffer[..read]);
    }
}

/// What the scanning thread tells the screen.
enum News {
    /// Games found (not hashed yet).
    Found(Vec<LibraryGame>),
    /// (index in the list, CRC-32) of games hashed.
    Hashed(Vec<(usize, Option<u32>)>),
    /// Every file was listed and hashed.
    Done,
}

/// How long a scan took so far, for the screen and the measurements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanTimes {
    /// From the start to the first games listed.
    pub first_listed: Option<Duration>,
    /// From the start to every file listed and hashed.
    pub finished: Option<Duration>,
}

/// A library being scanned: its games as they come in.
pub struct LibraryScan {
    folders: Vec<PathBuf>,
    games: Vec<LibraryGame>,
    news: Receiver<News>,
    started: Instant,
    times: ScanTimes,
    hashed: usize,
}

impl LibraryScan {
    /// Starts scanning `folders` on a worker thread, which reads the index
    /// at `index` first (a game whose size and time are unchanged is not
    /// hashed again) and writes it anew at the end.
    pub fn start(folders: Vec<PathBuf>, index: PathBuf) -> LibraryScan {
        let (sender, news) = std::sync::mpsc::channel();
        let to_scan = folders.clone();
        std::thread::Builder::new()
            .name("library scan".to_string())
            .spawn(move || scan(&to_scan, &index, &sender))
            .map_err(|error| tracing::warn!("cannot start the library scan: {error}"))
            .ok();
        LibraryScan {
            folders,
            games: Vec::new(),
            news,
            started: Instant::now(),
            times: ScanTimes::default(),
            hashed: 0,
        }
    }

    /// The folders it scans.
    pub fn folders(&self) -> &[PathBuf] {
        &self.folders
    }

    /// Takes in what the worker found; whether anything changed.
    pub fn update(&mut self) -> bool {
        let mut changed = false;
        while let Ok(news) = self.news.try_recv() {
            changed = true;
            match news {
                News::Found(games) => {
                    if self.times.first_listed.is_none() && !games.is_empty() {
                        self.times.first_listed = Some(self.started.elapsed());
                    }
                    self.games.extend(games);
                }
                News::Hashed(hashes) => {
                    for (index, crc32) in hashes {
                        if let Some(game) = self.games.get_mut(index) {
                            game.crc32 = crc32;
                            self.hashed += 1;
                        }
                    }
                }
                News::Done => {
                    self.times.finished = Some(self.started.elapsed());
                    tracing::info!(
                        "library: the first games listed after {} ms, all {} listed and hashed after {} ms; the index takes {} bytes in memory",
                        self.times.first_listed.unwrap_or_default().as_millis(),
                        self.games.len(),
                        self.started.elapsed().as_millis(),
                        self.heap_bytes()
                    );
                }
            }
        }
        changed
    }

    /// Whether it is still under way.
    pub fn scanning(&self) -> bool {
        self.times.finished.is_none()
    }

    /// The games found so far, in the order found.
    pub fn games(&self) -> &[LibraryGame] {
        &self.games
    }

    /// How many have been hashed.
    pub fn hashed(&self) -> usize {
        self.hashed
    }

    /// How long it took so far.
    pub fn times(&self) -> ScanTimes {
        self.times
    }

    /// The bytes the games take in memory.
    pub fn heap_bytes(&self) -> usize {
        self.games.iter().map(LibraryGame::heap_bytes).sum()
    }
}

/// The worker: lists, then hashes, then writes the index.
fn scan(folders: &[PathBuf], index: &Path, news: &Sender<News>) {
    let known: HashMap<PathBuf, LibraryGame> = load_index(index)
        .into_iter()
        .map(|game| (game.path.clone(), game))
        .collect();
    let mut games = Vec::new();
    walk(folders, &mut |batch| {
        games.extend(batch.iter().cloned());
        news.send(News::Found(batch)).is_ok()
    });
    let mut hashes = Vec::new();
    let mut last_sent = Instant::now();
    for (index, game) in games.iter_mut().enumerate() {
        let unchanged = known.get(&game.path).filter(|old| {
            old.size == game.size && old.modified == game.modified && old.crc32.is_some()
        });
        game.crc32 = match unchanged {
            Some(old) => old.crc32,
            None if game.size > MAX_HASHED_BYTES => None,
            None => crc32_of(&game.path).ok(),
        };
        hashes.push((index, game.crc32));
        if last_sent.elapsed() > Duration::from_millis(50) {
            if news
                .send(News::Hashed(std::mem::take(&mut hashes)))
                .is_err()
            {
                return;
            }
            last_sent = Instant::now();
        }
    }
    if let Err(error) = save_index(index, &games) {
        tracing::warn!("cannot write {}: {error}", index.display());
    }
    let _ = news.send(News::Hashed(hashes));
    let _ = news.send(News::Done);
}

/// Where the index lives: `library.json` in the data directory.
pub fn index_path() -> PathBuf {
    crate::paths::data_subdir("library.json")
}

/// The index's text.
pub fn index_to_json(games: &[LibraryGame]) -> String {
    let games: Vec<serde_json::Value> = games
        .iter()
        .map(|game| {
            serde_json::json!({
                "path": game.path.display().to_string(),
                "size": game.size,
                "modified": game.modified,
                "crc32": game.crc32.map(|crc| format!("{crc:08x}")),
            })
        })
        .collect();
    serde_json::Value::Array(games).to_string()
}

/// Reads the index's text back: its games, or what is wrong with it. Read
/// as typed entries, at most [`MAX_GAMES`]: a file of anything else (a
/// list of millions of numbers) fails at its first wrong entry, before
/// anything is built of it.
pub fn index_from_json(text: &str) -> Result<Vec<LibraryGame>, String> {
    use serde::de::{Deserializer, Error, SeqAccess, Visitor};
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Entry {
        path: String,
        size: u64,
        modified: u64,
        crc32: Option<String>,
    }
    struct Games;
    impl<'de> Visitor<'de> for Games {
        type Value = Vec<LibraryGame>;
        fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
            formatter.write_str("a list of games")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut games = Vec::new();
            while let Some(entry) = seq.next_element::<Entry>()? {
                if games.len() == MAX_GAMES {
                    return Err(A::Error::custom(format!("more than {MAX_GAMES} games")));
                }
                let crc32 = match entry.crc32 {
                    None => None,
                    Some(crc) => Some(u32::from_str_radix(&crc, 16).map_err(|_| {
                        let at = games.len() + 1;
                        A::Error::custom(format!("game {at}: \"crc32\" is not 8 hex digits"))
                    })?),
                };
                let path = PathBuf::from(entry.path);
                games.push(LibraryGame {
                    name: game_name(&path),
                    path,
                    size: entry.size,
                    modified: entry.modified,
                    crc32,
                });
            }
            Ok(games)
        }
    }
    let mut reader = serde_json::Deserializer::from_str(text);
    let games = reader
        .deserialize_seq(Games)
        .map_err(|err| format!("not an index of games: {err}"))?;
    reader
        .end()
        .map_err(|err| format!("not an index of games: {err}"))?;
    Ok(games)
}

/// The index at `path`: empty when there is none; a damaged one is
/// reported and read as empty (the scan writes it again).
pub fn load_index(path: &Path) -> Vec<LibraryGame> {
    use std::io::Read;
    let mut text = String::new();
    let read = std::fs::File::open(path)
        .and_then(|file| file.take(MAX_INDEX_BYTES + 1).read_to_string(&mut text));
    match read {
        Err(_) => Vec::new(),
        Ok(bytes) if bytes as u64 > MAX_INDEX_BYTES => {
            tracing::warn!(
                "{}: larger than {MAX_INDEX_BYTES} bytes; scanning anew",
                path.display()
            );
            Vec::new()
        }
        Ok(_) => index_from_json(&text).unwrap_or_else(|problem| {
            tracing::warn!("{}: {problem}; scanning anew", path.display());
            Vec::new()
        }),
    }
}

/// Writes the index to `path` (making its folder), through a temporary
/// file so a reader never sees half of it.
pub fn save_index(path: &Path, games: &[LibraryGame]) -> std::io::Result<()> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    let partial = path.with_extension("json.partial");
    std::fs::write(&partial, index_to_json(games))?;
    std::fs::rename(&partial, path)
}

/// What choosing a core for a game knows of one installed core.
#[derive(Clone, Copy, Debug)]
pub struct CoreCandidate<'a> {
    /// The content extensions it takes.
    pub extensions: &'a [String],
    /// The game databases (systems) it plays, from its info file.
    pub databases: &'a [String],
}

/// The sizes a system's cartridges come in, for extensions several
/// systems share (`.bin`: an Atari 2600 game is at most 64 KiB, a Mega
/// Drive game at least 128 KiB).
const CARTRIDGE_SIZES: &[(&str, u64, u64)] = &[
    ("Atari - 2600", 0, 64 * 1024),
    ("Atari - 7800", 0, 144 * 1024),
    ("Sega - Mega Drive - Genesis", 128 * 1024, 10 * 1024 * 1024),
    ("Sega - Master System - Mark III", 8 * 1024, 1024 * 1024),
];

/// Whether a game of `size` bytes fits one of `databases` (any size when
/// none has known sizes).
fn size_fits(databases: &[String], size: u64) -> bool {
    let known: Vec<_> = CARTRIDGE_SIZES
        .iter()
        .filter(|(system, _, _)| databases.iter().any(|database| database == system))
        .collect();
    known.is_empty()
        || known
            .iter()
            .any(|(_, least, most)| (*least..=*most).contains(&size))
}

/// Which of `cores` plays the game at `path` of `size` bytes: those that
/// take its extension; of them, one whose systems' cartridges come in its
/// size; then the one taking the fewest extensions (the most specific).
pub fn choose_core(path: &Path, size: u64, cores: &[CoreCandidate<'_>]) -> Option<usize> {
    let extension = path
        .extension()
        .map(|ext| ext.to_string_lossy().to_lowercase())?;
    cores
        .iter()
        .enumerate()
        .filter(|(_, core)| core.extensions.contains(&extension))
        .min_by_key(|(_, core)| (!size_fits(core.databases, size), core.extensions.len()))
        .map(|(index, _)| index)
}

/// An option value known to help some games of a core, set as their
/// default with the reason shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnownFix {
    /// The option's key.
    pub key: &'static str,
    /// Its value.
    pub value: &'static str,
    /// Why, in a sentence.
    pub note: &'static str,
}

/// The fixes known for a core, by its file's name
/// (`genesis_plus_gx_libretro.so`).
pub fn known_fixes(core: &str) -> &'static [KnownFix] {
    let stem = Path::new(core)
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    match stem.as_str() {
        "genesis_plus_gx_libretro" => &[KnownFix {
            key: "genesis_plus_gx_addr_error",
            value: "disabled",
            note: "homebrew such as Airstriker trips the 68K address-error check and stops on \
                   its error screen; real hardware does not check",
        }],
        "parallel_n64_libretro" => &[KnownFix {
            key: "parallel-n64-gfxplugin",
            value: "angrylion",
            note: "the software renderer: netcade gives cores no GL context",
        }],
        _ => &[],
    }
}

/// The content file and core in `folders` that play the game `identity`
/// names: a file of the same content hash (each file hashed as a match
/// is, whole) and an installed core of its name that takes the file's
/// extension, of `installed` (the cores found). When none, says in words
/// what is missing.
pub fn find_by_identity(
    folders: &[PathBuf],
    identity: &netcode::protocol::Identity,
    title: &str,
    installed: &[String],
) -> Result<(PathBuf, PathBuf), String> {
    let needs = format!(
        "this match needs {title} for {} {}",
        identity.core_name, identity.core_version
    );
    let mut games = Vec::new();
    walk(folders, &mut |batch| {
        games.extend(batch);
        true
    });
    let Some(game) = games.iter().find(|game| {
        game.size <= MAX_HASHED_BYTES
            && crate::engine::sinks::recorder::content_checksum(Some(&game.path))
                .is_ok_and(|hash| hash.0 == identity.content_hash)
    }) else {
        return Err(format!("{needs}, which is not in your library"));
    };
    let extension = game.extension();
    let core = installed.iter().find(|core| {
        super::core_info::find_info(Path::new(core))
            .and_then(Result::ok)
            .is_some_and(|info| {
                info.core_name == identity.core_name && info.extensions.contains(&extension)
            })
    });
    match core {
        Some(core) => Ok((PathBuf::from(core), game.path.clone())),
        None => Err(format!(
            "{needs}: {} is in your library, but no installed core is {}",
            game.path.display(),
            identity.core_name
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|item| item.to_string()).collect()
    }

    #[test]
    fn a_scan_lists_the_games_in_the_folders_and_their_subfolders_and_hashes_them() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("library.json");
        let roms = dir.path().join("roms");
        std::fs::create_dir_all(roms.join("atari/more")).unwrap();
        std::fs::write(roms.join("atari/Boxing_1980.bin"), b"boxing").unwrap();
        std::fs::write(roms.join("atari/more/combat.a26"), b"combat").unwrap();
        std::fs::write(roms.join("atari/readme.txt"), b"notes").unwrap();
        std::fs::write(roms.join(".hidden.bin"), b"x").unwrap();
        std::fs::write(roms.join("sonic.md"), b"sonic").unwrap();
        let mut scan =
            LibraryScan::start(vec![roms.clone(), dir.path().join("gone")], index.clone());
        let deadline = Instant::now() + Duration::from_secs(10);
        while scan.scanning() {
            assert!(Instant::now() < deadline, "the scan never ended");
            scan.update();
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut names: Vec<&str> = scan.games().iter().map(|game| game.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["Boxing 1980", "combat", "sonic"]);
        assert_eq!(scan.hashed(), 3);
        let boxing = scan
            .games()
            .iter()
            .find(|game| game.name == "Boxing 1980")
            .unwrap();
        assert_eq!(boxing.crc32, Some(crc32fast::hash(b"boxing")));
        assert!(boxing.matches("box 1980") && !boxing.matches("boxing 1981"));
        assert!(scan.times().first_listed <= scan.times().finished);
        assert!(scan.heap_bytes() > 3 * std::mem::size_of::<LibraryGame>());
        // The index was written, and a game unchanged is not hashed again.
        let index_read = load_index(&index);
        assert_eq!(index_read.len(), 3);
        let mut stale = index_read.clone();
        for game in &mut stale {
            game.crc32 = Some(7);
        }
        save_index(&index, &stale).unwrap();
        let mut again = LibraryScan::start(vec![roms], index);
        while again.scanning() {
            again.update();
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(again.games().iter().all(|game| game.crc32 == Some(7)));
    }

    #[test]
    fn the_index_survives_its_file_and_a_damaged_one_is_an_error() {
        let games = vec![
            LibraryGame {
                path: PathBuf::from("/roms/boxing.bin"),
                name: "boxing".to_string(),
                size: 2048,
                modified: 1_700_000_000,
                crc32: Some(0xc3ef_b9bd),
            },
            LibraryGame {
                path: PathBuf::from("/roms/big disc.iso"),
                name: "big disc".to_string(),
                size: 4 << 30,
                modified: 0,
                crc32: None,
            },
        ];
        assert_eq!(index_from_json(&index_to_json(&games)), Ok(games));
        let numbers = format!("[{}0]", "0,".repeat(1_000_000));
        for (text, problem) in [
            ("[{\"path\"", "EOF while parsing"),
            ("{}", "expected a list of games"),
            ("[{\"size\": 1, \"modified\": 1}]", "missing field `path`"),
            (
                "[{\"path\": \"a\", \"size\": -1, \"modified\": 1}]",
                "invalid value: integer `-1`",
            ),
            (
                "[{\"path\": \"a\", \"size\": 1, \"modified\": 1, \"crc32\": \"xyz\"}]",
                "game 1: \"crc32\" is not 8 hex digits",
            ),
            // A million numbers fail at the first, with nothing built of them.
            (numbers.as_str(), "invalid type: integer `0`"),
            ("[] trailing", "trailing characters"),
        ] {
            let error = index_from_json(text).unwrap_err();
            assert!(error.starts_with("not an index of games"), "{error}");
            assert!(
                error.contains(problem),
                "{}: {error}",
                &text[..text.len().min(40)]
            );
        }
    }

    #[test]
    fn a_bin_file_goes_to_the_core_whose_system_has_cartridges_of_its_size() {
        let (stella_ext, genesis_ext, nes_ext) = (
            strings(&["a26", "bin"]),
            strings(&["mdx", "md", "smd", "gen", "bin", "cue", "iso", "sms"]),
            strings(&["nes"]),
        );
        let (stella_db, genesis_db) = (
            strings(&["Atari - 2600"]),
            strings(&[
                "Sega - Master System - Mark III",
                "Sega - Mega Drive - Genesis",
            ]),
        );
        // Genesis first: the order the cores were found in must not decide.
        let cores = [
            CoreCandidate {
                extensions: &genesis_ext,
                databases: &genesis_db,
            },
            CoreCandidate {
                extensions: &nes_ext,
                databases: &[],
            },
            CoreCandidate {
                extensions: &stella_ext,
                databases: &stella_db,
            },
        ];
        assert_eq!(
            choose_core(Path::new("/r/boxing.bin"), 2048, &cores),
            Some(2)
        );
        assert_eq!(
            choose_core(Path::new("/r/sonic.bin"), 512 * 1024, &cores),
            Some(0)
        );
        assert_eq!(
            choose_core(Path::new("/r/airstriker.MD"), 119_580, &cores),
            Some(0)
        );
        assert_eq!(
            choose_core(Path::new("/r/mario.nes"), 40_976, &cores),
            Some(1)
        );
        assert_eq!(choose_core(Path::new("/r/doom.wad"), 1, &cores), None);
        assert_eq!(choose_core(Path::new("/r/README"), 1, &cores), None);
    }

    #[test]
    fn the_known_option_fixes_are_those_of_the_core_named() {
        let fixes = known_fixes("/cores/genesis_plus_gx_libretro.so");
        assert_eq!(
            (fixes[0].key, fixes[0].value),
            ("genesis_plus_gx_addr_error", "disabled")
        );
        assert_eq!(
            known_fixes("parallel_n64_libretro.so")[0].value,
            "angrylion"
        );
        assert!(known_fixes("duel").is_empty());
        assert!(known_fixes("/cores/stella_libretro.so").is_empty());
    }

    #[test]
    fn notes_pictures_and_hidden_files_are_not_games() {
        for path in ["a.txt", "b.PNG", ".c.bin", "d", "e.srm"] {
            assert!(!may_be_a_game(Path::new(path)), "{path}");
        }
        for path in ["a.bin", "b.MD", "c.zip", "d.a26"] {
            assert!(may_be_a_game(Path::new(path)), "{path}");
        }
    }
}
