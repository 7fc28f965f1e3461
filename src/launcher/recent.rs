//! The games played lately, newest first: `recent.json` in netcade's data
//! directory, written by the launcher each time it starts a session; and
//! the addresses joined or watched lately (`addresses.json`).

use crate::launcher::forms::GameChoice;
use std::path::{Path, PathBuf};

/// How many games the list keeps.
pub const MAX_RECENT: usize = 10;

/// Where the list lives.
pub fn recent_games_path() -> PathBuf {
    crate::paths::data_subdir("recent.json")
}

/// `game` played now: first in `list`, once, and the list bounded.
pub fn note_played(list: &mut Vec<GameChoice>, game: &GameChoice) {
    list.retain(|known| known != game);
    list.insert(0, game.clone());
    list.truncate(MAX_RECENT);
}

/// The list as the file holds it.
pub fn to_json(list: &[GameChoice]) -> String {
    let games: Vec<serde_json::Value> = list
        .iter()
        .map(|game| {
            serde_json::json!({
                "core": game.core,
                "rom": game.rom.as_ref().map(|rom| rom.display().to_string()),
            })
        })
        .collect();
    serde_json::to_string_pretty(&games).unwrap_or_else(|_| "[]".to_string())
}

/// Reads the file's text: the games it names (at most [`MAX_RECENT`]), or
/// what is wrong with it.
pub fn from_json(text: &str) -> Result<Vec<GameChoice>, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|err| format!("not JSON: {err}"))?;
    let entries = value
        .as_array()
        .ok_or_else(|| "expected a list of games".to_string())?;
    let mut games = Vec::new();
    for (index, entry) in entries.iter().take(MAX_RECENT).enumerate() {
        let core = entry.get("core").and_then(|core| core.as_str());
        let rom = entry.get("rom").filter(|rom| !rom.is_null());
        let rom = match rom.map(|rom| rom.as_str()) {
            None => None,
            Some(Some(rom)) => Some(PathBuf::from(rom)),
            Some(None) => return Err(format!("game {}: \"rom\" is not text", index + 1)),
        };
        let Some(core) = core else {
            return Err(format!("game {}: no \"core\"", index + 1));
        };
        games.push(GameChoice {
            core: core.to_string(),
            rom,
        });
    }
    Ok(games)
}

/// The list in `path`: empty when there is none yet; a damaged file is
/// reported (as a warning) and read as empty, to be rewritten.
pub fn load(path: &Path) -> Vec<GameChoice> {
    match std::fs::read_to_string(path) {
        Ok(text) => from_json(&text).unwrap_or_else(|problem| {
            tracing::warn!("{}: {problem}; starting a new list", path.display());
            Vec::new()
        }),
        Err(_) => Vec::new(),
    }
}

/// Writes the list to `path` (making its folder).
pub fn save(path: &Path, list: &[GameChoice]) -> std::io::Result<()> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    std::fs::write(path, to_json(list))
}

/// Where the addresses joined or watched lately are kept.
pub fn recent_addresses_path() -> PathBuf {
    crate::paths::data_subdir("addresses.json")
}

/// `address` used now: first in `list`, once, and the list bounded.
pub fn note_address(list: &mut Vec<String>, address: &str) {
    let address = address.trim();
    if address.is_empty() {
        return;
    }
    list.retain(|known| known != address);
    list.insert(0, address.to_string());
    list.truncate(MAX_RECENT);
}

/// The addresses in `path` (none when it is missing or damaged).
pub fn load_addresses(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let addresses: Vec<String> = serde_json::from_str(&text).unwrap_or_default();
    addresses.into_iter().take(MAX_RECENT).collect()
}

/// Writes the addresses to `path` (making its folder).
pub fn save_addresses(path: &Path, list: &[String]) -> std::io::Result<()> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    std::fs::write(path, serde_json::Value::from(list.to_vec()).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(core: &str, rom: Option<&str>) -> GameChoice {
        GameChoice {
            core: core.to_string(),
            rom: rom.map(PathBuf::from),
        }
    }

    #[test]
    fn the_game_played_last_comes_first_and_only_once() {
        let mut list = vec![game("duel", None), game("stella", Some("a.a26"))];
        note_played(&mut list, &game("stella", Some("a.a26")));
        assert_eq!(
            list,
            vec![game("stella", Some("a.a26")), game("duel", None)]
        );
    }

    #[test]
    fn the_list_keeps_the_newest_games_only() {
        let mut list = Vec::new();
        for index in 0..MAX_RECENT + 3 {
            note_played(&mut list, &game("stella", Some(&format!("{index}.a26"))));
        }
        assert_eq!(list.len(), MAX_RECENT);
        let newest = format!("{}.a26", MAX_RECENT + 2);
        assert_eq!(list[0], game("stella", Some(&newest)));
    }

    #[test]
    fn the_list_survives_a_round_trip_through_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("recent.json");
        assert_eq!(load(&path), Vec::new(), "no file yet: an empty list");
        let list = vec![
            game("stella", Some("/roms/my game.a26")),
            game("duel", None),
        ];
        save(&path, &list).unwrap();
        assert_eq!(load(&path), list);
    }

    #[test]
    fn addresses_used_are_remembered_newest_first_once_each() {
        let mut list = Vec::new();
        for address in ["10.0.0.2:7000", " ", "[::1]:7000", " 10.0.0.2:7000 "] {
            note_address(&mut list, address);
        }
        assert_eq!(list, ["10.0.0.2:7000", "[::1]:7000"]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("addresses.json");
        save_addresses(&path, &list).unwrap();
        assert_eq!(load_addresses(&path), list);
        std::fs::write(&path, "{").unwrap();
        assert!(load_addresses(&path).is_empty());
    }

    #[test]
    fn a_damaged_list_says_what_is_wrong_and_reads_as_empty() {
        assert!(from_json("{").unwrap_err().starts_with("not JSON"));
        assert_eq!(
            from_json("[{\"rom\": \"a\"}]").unwrap_err(),
            "game 1: no \"core\""
        );
        assert_eq!(
            from_json("[{\"core\": \"duel\", \"rom\": 3}]").unwrap_err(),
            "game 1: \"rom\" is not text"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("recent.json");
        std::fs::write(&path, "not json").unwrap();
        assert_eq!(load(&path), Vec::new());
    }
}
