//! Save state slots of local play: ten per game, in the data directory's
//! `states/CORE/CONTENT/`. A slot file holds the frame it was saved at,
//! the core that saved it, the game memory's checksum once loaded and the
//! savestate (lz4, as on the wire). Slot files are read as untrusted bytes
//! (a file may be truncated, or another core's): every length is checked
//! before it is used, and loading checks the memory the state leaves (see
//! `recorded_state`).

use netcode::checksum::Checksum;
use netcode::encoding::state_blob::{self, StateBlobError};
use std::path::{Path, PathBuf};

/// Slots per game (0–9).
pub const SLOTS: u8 = 10;
/// The first bytes of a slot file, with its format's version.
const MAGIC: &[u8; 8] = b"ncstate1";
/// The longest core name kept.
const MAX_CORE_NAME: usize = 255;

/// What a slot holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedState {
    /// The frame the state stands at the start of.
    pub frame: u32,
    /// The name of the core that saved it (with its version).
    pub core: String,
    /// The game memory's checksum once it is loaded.
    pub memory: Checksum,
    /// The core's savestate.
    pub state: Vec<u8>,
}

/// Why a slot cannot be saved or loaded.
#[derive(Debug, thiserror::Error)]
pub enum SlotError {
    /// Nothing was saved in it.
    #[error("slot {0} is empty")]
    Empty(u8),
    /// The file is not a slot file, or is cut short.
    #[error("slot {slot} is not a netcade save state ({reason})")]
    Unreadable {
        /// The slot.
        slot: u8,
        /// What is wrong.
        reason: String,
    },
    /// Another core saved it.
    #[error("slot {slot} was saved by {saved_by}, not {core}")]
    OtherCore {
        /// The slot.
        slot: u8,
        /// The core that saved it.
        saved_by: String,
        /// The core playing now.
        core: String,
    },
    /// The file system refused.
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        /// `read` or `write`.
        what: &'static str,
        /// The slot file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The bytes of a slot file holding `saved`.
pub fn encode(saved: &SavedState) -> Vec<u8> {
    let core = &saved.core.as_bytes()[..saved.core.len().min(MAX_CORE_NAME)];
    let mut bytes = Vec::with_capacity(MAGIC.len() + 13 + core.len() + saved.state.len() / 2);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&saved.frame.to_le_bytes());
    bytes.extend_from_slice(&saved.memory.0.to_le_bytes());
    bytes.push(core.len() as u8);
    bytes.extend_from_slice(core);
    bytes.extend_from_slice(&state_blob::compress(&saved.state));
    bytes
}

/// What the slot file `bytes` holds, its state at most `max_state_bytes`.
pub fn decode(bytes: &[u8], max_state_bytes: usize) -> Result<SavedState, String> {
    let rest = bytes
        .strip_prefix(MAGIC)
        .ok_or("it does not begin as one")?;
    let (frame, rest) = rest.split_first_chunk::<4>().ok_or("cut short")?;
    let (memory, rest) = rest.split_first_chunk::<8>().ok_or("cut short")?;
    let (&core_length, rest) = rest.split_first().ok_or("cut short")?;
    let (core, blob) = rest
        .split_at_checked(usize::from(core_length))
        .ok_or("cut short")?;
    let core = std::str::from_utf8(core).map_err(|_| "its core's name is not text")?;
    let state = state_blob::decompress(blob, max_state_bytes)
        .map_err(|error: StateBlobError| error.to_string().replace("start state", "state"))?;
    Ok(SavedState {
        frame: u32::from_le_bytes(*frame),
        core: core.to_owned(),
        memory: Checksum(u64::from_le_bytes(*memory)),
        state,
    })
}

/// The slots of one game, and the one chosen.
#[derive(Clone, Debug)]
pub struct StateSlots {
    dir: PathBuf,
    chosen: u8,
}

impl StateSlots {
    /// The slots of `content` played with the core named `core_file` (its
    /// library's file stem), in `states_dir`.
    pub fn for_game(states_dir: &Path, core_file: &str, content: Option<&Path>) -> Self {
        let content = content.and_then(Path::file_name).map_or_else(
            || "no-content".to_owned(),
            |name| name.to_string_lossy().into_owned(),
        );
        StateSlots {
            dir: states_dir
                .join(file_safe(core_file))
                .join(file_safe(&content)),
            chosen: 0,
        }
    }

    /// The slot chosen (0–9).
    pub fn chosen(&self) -> u8 {
        self.chosen
    }

    /// Chooses the next slot (`forward`) or the previous one, round.
    pub fn choose_next(&mut self, forward: bool) -> u8 {
        self.chosen = if forward {
            (self.chosen + 1) % SLOTS
        } else {
            (self.chosen + SLOTS - 1) % SLOTS
        };
        self.chosen
    }

    /// The chosen slot's file.
    pub fn path(&self) -> PathBuf {
        self.dir.join(format!("slot{}.state", self.chosen))
    }

    /// Writes `saved` into the chosen slot (through a temporary file, so a
    /// crash never leaves half a slot).
    pub fn write(&self, saved: &SavedState) -> Result<PathBuf, SlotError> {
        let path = self.path();
        let io = |what, source| SlotError::Io {
            what,
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(|error| io("write", error))?;
        let partial = path.with_extension("state.partial");
        std::fs::write(&partial, encode(saved)).map_err(|error| io("write", error))?;
        std::fs::rename(&partial, &path).map_err(|error| io("write", error))?;
        Ok(path)
    }

    /// Reads the chosen slot, saved by `core` (its name and version), its
    /// state at most `max_state_bytes`.
    pub fn read(&self, core: &str, max_state_bytes: usize) -> Result<SavedState, SlotError> {
        let path = self.path();
        let slot = self.chosen;
        // A slot file is a state and a few bytes: one far bigger is not one.
        let most = state_blob::max_blob_size(max_state_bytes) + MAGIC.len() + 13 + MAX_CORE_NAME;
        let bytes = match read_at_most(&path, most) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(SlotError::Empty(slot))
            }
            Err(source) => {
                return Err(SlotError::Io {
                    what: "read",
                    path,
                    source,
                })
            }
        };
        let saved = decode(&bytes, max_state_bytes)
            .map_err(|reason| SlotError::Unreadable { slot, reason })?;
        if saved.core != core {
            return Err(SlotError::OtherCore {
                slot,
                saved_by: saved.core,
                core: core.to_owned(),
            });
        }
        Ok(saved)
    }
}

/// The file at `path`, refused when longer than `most` bytes.
fn read_at_most(path: &Path, most: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(most as u64 + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() > most {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("over {most} bytes, more than a state of this core"),
        ));
    }
    Ok(bytes)
}

/// `name` with what a file name cannot hold replaced.
fn file_safe(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c == '\0' {
                '_'
            } else {
                c
            }
        })
        .collect();
    match safe.as_str() {
        "" | "." | ".." => "_".to_owned(),
        _ => safe,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved() -> SavedState {
        SavedState {
            frame: 1234,
            core: "Duel 0.1.0".to_owned(),
            memory: Checksum(0xfeed),
            state: (0..4096u32).map(|i| (i % 7) as u8).collect(),
        }
    }

    #[test]
    fn a_slot_file_reads_back_as_written() {
        assert_eq!(decode(&encode(&saved()), 4096).unwrap(), saved());
    }

    #[test]
    fn a_cut_or_foreign_slot_file_is_refused_without_a_panic() {
        let bytes = encode(&saved());
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut], 4096).is_err(), "cut at {cut}");
        }
        assert!(decode(b"PNG not a state at all", 4096).is_err());
        // A state bigger than the core's is not read.
        assert!(decode(&bytes, 4095)
            .unwrap_err()
            .contains("over the 4095-byte limit"));
    }

    #[test]
    fn slots_keep_apart_per_game_and_name_the_core_that_saved_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut boxing = StateSlots::for_game(
            dir.path(),
            "stella_libretro",
            Some(Path::new("/r/boxing.bin")),
        );
        let tennis = StateSlots::for_game(
            dir.path(),
            "stella_libretro",
            Some(Path::new("/r/tennis.bin")),
        );
        assert!(matches!(
            boxing.read("Duel 0.1.0", 4096),
            Err(SlotError::Empty(0))
        ));
        boxing.write(&saved()).unwrap();
        assert_eq!(boxing.read("Duel 0.1.0", 4096).unwrap(), saved());
        assert!(matches!(
            tennis.read("Duel 0.1.0", 4096),
            Err(SlotError::Empty(0))
        ));
        let other = boxing.read("Stella 7.0", 4096).unwrap_err().to_string();
        assert_eq!(other, "slot 0 was saved by Duel 0.1.0, not Stella 7.0");
        assert_eq!(boxing.choose_next(false), 9);
        assert!(matches!(
            boxing.read("Duel 0.1.0", 4096),
            Err(SlotError::Empty(9))
        ));
        assert_eq!(boxing.choose_next(true), 0);
    }
}
