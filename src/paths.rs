//! Where netcade keeps its files for the user: its data directory
//! (`~/.local/share/netcade` on Linux: saves, replays, dumps, screenshots)
//! and its config directory (`~/.config/netcade`: the input mapping, the
//! server list).

use std::path::{Path, PathBuf};

fn project() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "netcade")
}

/// netcade's data directory, where the system has a home for it.
pub fn data_dir() -> Option<PathBuf> {
    project().map(|dirs| dirs.data_dir().to_path_buf())
}

/// The environment variable that replaces netcade's config directory.
pub const CONFIG_DIR_ENV: &str = "NETCADE_CONFIG_DIR";

/// netcade's config directory: `$NETCADE_CONFIG_DIR`, else the system's
/// home for it.
pub fn config_dir() -> Option<PathBuf> {
    std::env::var_os(CONFIG_DIR_ENV)
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .or_else(|| project().map(|dirs| dirs.config_dir().to_path_buf()))
}

/// Where desync dumps go: `chosen` (`--dump-dir`), else `dumps/` in the
/// data directory (never the current directory, which may be a checkout).
pub fn dump_dir(chosen: Option<&Path>) -> PathBuf {
    chosen.map_or_else(|| data_subdir("dumps"), Path::to_path_buf)
}

/// `name` in the data directory, or in the system's temporary directory
/// where there is no home: outputs never land in the current directory.
pub fn data_subdir(name: &str) -> PathBuf {
    data_dir()
        .unwrap_or_else(|| std::env::temp_dir().join("netcade"))
        .join(name)
}

/// The libretro host's usual set-up: BIOS files in `system/` and saves in
/// `saves/` of the data directory (`netcade-data/` in the current folder
/// where the system has no home for it).
pub fn core_config() -> libretro_host::CoreConfig {
    let data_dir = data_dir().unwrap_or_else(|| PathBuf::from("netcade-data"));
    libretro_host::CoreConfig::in_data_dir(&data_dir)
}
