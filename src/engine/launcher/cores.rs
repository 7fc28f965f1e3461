//! The cores a player can pick without typing a path: the bundled Duel
//! core, and the libretro cores in netcade's `cores/` folder, the system's
//! libretro folders and RetroArch's cores folder.

use std::path::{Path, PathBuf};

/// Where cores are looked for, in order.
pub fn core_folders() -> Vec<PathBuf> {
    let mut folders = vec![crate::paths::data_subdir("cores")];
    folders.extend(
        [
            "/usr/lib/libretro",
            "/usr/lib/x86_64-linux-gnu/libretro",
            "/usr/lib/aarch64-linux-gnu/libretro",
            "/usr/local/lib/libretro",
        ]
        .map(PathBuf::from),
    );
    if let Some(home) = std::env::var_os("HOME") {
        let home = PathBuf::from(home);
        folders.push(home.join(".config/retroarch/cores"));
        folders.push(home.join(".var/app/org.libretro.RetroArch/config/retroarch/cores"));
    }
    folders
}

/// `duel`, then every core found in [`core_folders`], as `--core` takes
/// them.
pub fn find_cores() -> Vec<String> {
    let mut cores = vec!["duel".to_string()];
    for folder in core_folders() {
        cores.extend(
            cores_in(&folder)
                .into_iter()
                .map(|path| path.display().to_string()),
        );
    }
    cores
}

/// The shared libraries named `*_libretro.*` in `folder`, sorted.
pub fn cores_in(folder: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut cores: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            let name = path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned());
            name.is_some_and(|name| {
                [".so", ".dll", ".dylib"]
                    .iter()
                    .any(|ext| name.ends_with(&format!("_libretro{ext}")))
            })
        })
        .collect();
    cores.sort();
    cores
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_libretro_cores_are_listed_from_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "stella_libretro.so",
            "notes.txt",
            "libfoo.so",
            "a_libretro.dll",
        ] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        let names: Vec<String> = cores_in(dir.path())
            .iter()
            .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a_libretro.dll", "stella_libretro.so"]);
        assert!(cores_in(&dir.path().join("missing")).is_empty());
    }

    #[test]
    fn the_bundled_duel_core_is_always_offered_first() {
        assert_eq!(find_cores()[0], "duel");
    }
}
