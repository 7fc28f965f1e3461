//! The cores a player can pick without typing a path: the bundled Duel
//! core, and the libretro cores in netcade's `cores/` folder, the system's
//! libretro folders and RetroArch's cores folder.

use crate::engine::child::run_in_child;
use crate::launcher::core_info::{find_info, CoreInfo};
use crate::launcher::library::{choose_core, CoreCandidate};
use libretro_host::{CoreOption, OptionCategory};
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

/// The extensions of libretro cores' shared libraries.
pub const CORE_EXTENSIONS: [&str; 3] = ["so", "dll", "dylib"];

/// Whether `path` is named as a libretro core is: `*_libretro.so` (or
/// `.dll`, `.dylib`).
pub fn is_core_file(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned());
    name.is_some_and(|name| {
        CORE_EXTENSIONS
            .iter()
            .any(|ext| name.ends_with(&format!("_libretro.{ext}")))
    })
}

/// The shared libraries named `*_libretro.*` in `folder`, sorted.
pub fn cores_in(folder: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut cores: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| is_core_file(path))
        .collect();
    cores.sort();
    cores
}

/// Copies the core at `picked` into netcade's `cores/` folder (through a
/// temporary file: a core being loaded is never half written) and gives
/// its new path.
pub fn install_core(picked: &Path) -> Result<PathBuf, String> {
    install_core_into(picked, &crate::paths::data_subdir("cores"))
}

/// [`install_core`] into `folder`.
pub fn install_core_into(picked: &Path, folder: &Path) -> Result<PathBuf, String> {
    if !is_core_file(picked) {
        return Err(format!(
            "error: {} is not a libretro core (their files are named NAME_libretro.so)",
            picked.display()
        ));
    }
    let name = picked.file_name().unwrap_or_default();
    let installed = folder.join(name);
    if picked.canonicalize().ok() == installed.canonicalize().ok() && installed.exists() {
        return Ok(installed);
    }
    let partial = folder.join(format!(".{}.partial", name.to_string_lossy()));
    std::fs::create_dir_all(folder)
        .and_then(|()| std::fs::copy(picked, &partial))
        .and_then(|_| std::fs::rename(&partial, &installed))
        .map_err(|error| {
            let _ = std::fs::remove_file(&partial);
            format!(
                "error: cannot install {} into {}: {error}",
                picked.display(),
                folder.display()
            )
        })?;
    Ok(installed)
}

/// What probing a core found: what it declares, or the child's `error:`
/// line.
pub type Probe = Result<CoreSummary, String>;

/// How long one core may take to load and answer.
pub const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// One core found: its info file, if it has one, and its probe once back.
struct FoundCore {
    core: String,
    info: Option<Result<CoreInfo, String>>,
    probe: Option<Probe>,
}

impl FoundCore {
    fn new(core: String, probe: Option<Probe>) -> FoundCore {
        let info = (core != crate::engine::game::BUNDLED_DUEL)
            .then(|| find_info(Path::new(&core)))
            .flatten();
        FoundCore { core, info, probe }
    }

    fn info(&self) -> Option<&CoreInfo> {
        self.info.as_ref().and_then(|info| info.as_ref().ok())
    }

    /// The extensions it takes: its probe's, else its info file's.
    fn extensions(&self) -> Option<&[String]> {
        match (&self.probe, self.info()) {
            (Some(Ok(summary)), _) => Some(&summary.extensions),
            (Some(Err(_)), _) => None,
            (None, info) => info.map(|info| info.extensions.as_slice()),
        }
    }

    /// How the launcher names it: `Stella 3.9.3` from its info file and
    /// its probe, else its file's name.
    fn label(&self) -> String {
        if self.core == crate::engine::game::BUNDLED_DUEL {
            return "Duel (bundled)".to_string();
        }
        // The name from the info file, the version from the core itself
        // (an info file may be newer than the core installed).
        match (&self.probe, self.info()) {
            (Some(Ok(summary)), Some(info)) if !info.core_name.is_empty() => {
                format!("{} {}", info.core_name, summary.version)
            }
            (_, Some(info)) => info.label(),
            (Some(Ok(summary)), None) => format!("{} {}", summary.name, summary.version),
            _ => Path::new(&self.core).file_name().map_or_else(
                || self.core.clone(),
                |name| name.to_string_lossy().into_owned(),
            ),
        }
    }
}

/// The cores found and, as their probes come back from a worker thread,
/// what each declares.
pub struct Catalogue {
    cores: Vec<FoundCore>,
    answers: std::sync::mpsc::Receiver<(usize, Probe)>,
}

impl Catalogue {
    /// Probes `cores` one after another on a worker thread, each in a
    /// child `program probe-core CORE` ([`probe_in_child`]).
    pub fn probe(program: PathBuf, cores: Vec<String>) -> Catalogue {
        let (sender, answers) = std::sync::mpsc::channel();
        let to_probe = cores.clone();
        std::thread::spawn(move || {
            for (index, core) in to_probe.iter().enumerate() {
                let probe = probe_in_child(&program, core, PROBE_TIMEOUT);
                if sender.send((index, probe)).is_err() {
                    return;
                }
            }
        });
        Catalogue {
            cores: cores
                .into_iter()
                .map(|core| FoundCore::new(core, None))
                .collect(),
            answers,
        }
    }

    /// A catalogue of probes already made.
    pub fn from_probes(cores: Vec<(String, Option<Probe>)>) -> Catalogue {
        Catalogue {
            cores: cores
                .into_iter()
                .map(|(core, probe)| FoundCore::new(core, probe))
                .collect(),
            answers: std::sync::mpsc::channel().1,
        }
    }

    /// Takes in the probes that came back.
    pub fn update(&mut self) {
        while let Ok((index, probe)) = self.answers.try_recv() {
            if let Some(entry) = self.cores.get_mut(index) {
                entry.probe = Some(probe);
            }
        }
    }

    /// Whether probes are still under way.
    pub fn probing(&self) -> bool {
        self.cores.iter().any(|found| found.probe.is_none())
    }

    /// How the launcher names `core`: `Stella 6.6`, not its path.
    pub fn label(&self, core: &str) -> String {
        self.cores
            .iter()
            .find(|found| found.core == core)
            .map_or_else(
                || FoundCore::new(core.to_string(), None).label(),
                FoundCore::label,
            )
    }

    /// What `core`'s info file says, if it has one.
    pub fn info(&self, core: &str) -> Option<&CoreInfo> {
        self.cores
            .iter()
            .find(|found| found.core == core)
            .and_then(FoundCore::info)
    }

    /// The core that plays the content at `path` of `size` bytes (see
    /// [`choose_core`]): none when no core found takes it.
    pub fn core_for(&self, path: &Path, size: u64) -> Option<&str> {
        let cores: Vec<(&str, CoreCandidate<'_>)> = self
            .cores
            .iter()
            .filter(|found| found.core != crate::engine::game::BUNDLED_DUEL)
            .filter_map(|found| {
                let databases = found.info().map_or(&[][..], |info| &info.databases);
                let extensions = found.extensions()?;
                Some((
                    found.core.as_str(),
                    CoreCandidate {
                        extensions,
                        databases,
                    },
                ))
            })
            .collect();
        let candidates: Vec<CoreCandidate<'_>> = cores.iter().map(|(_, core)| *core).collect();
        choose_core(path, size, &candidates).map(|index| cores[index].0)
    }

    /// The cores offered for `content` as (`--core`, label): Duel always,
    /// and each core that loaded and declares the content's extension
    /// (every core that loaded while no content is chosen).
    pub fn offered(&self, content: Option<&Path>) -> Vec<(String, String)> {
        self.cores
            .iter()
            .filter(|found| {
                found.core == crate::engine::game::BUNDLED_DUEL
                    || match (&found.probe, content) {
                        (Some(Ok(summary)), Some(content)) => summary.takes(content),
                        (Some(Ok(_)), None) => true,
                        _ => false,
                    }
            })
            .map(|found| (found.core.clone(), found.label()))
            .collect()
    }

    /// What `core` declares, once its probe came back.
    pub fn summary(&self, core: &str) -> Option<&CoreSummary> {
        self.cores.iter().find_map(|found| match &found.probe {
            Some(Ok(summary)) if found.core == core => Some(summary),
            _ => None,
        })
    }

    /// Each core that could not be loaded, with the error it gave.
    pub fn failures(&self) -> Vec<String> {
        self.cores
            .iter()
            .filter_map(|found| match &found.probe {
                Some(Err(error)) => Some(format!("{}: {error}", found.core)),
                _ => None,
            })
            .collect()
    }
}

/// One option of [`CoreSummary::to_json`]'s, at its default.
fn option_from_json(option: &serde_json::Value) -> Option<CoreOption> {
    let text = |key: &str| Some(option.get(key)?.as_str()?.to_string());
    let values = option
        .get("values")?
        .as_array()?
        .iter()
        .map(|value| value.as_str().map(str::to_string))
        .collect::<Option<Vec<String>>>()?;
    let default = text("default")?;
    Some(CoreOption {
        key: text("key")?,
        description: text("description")?,
        info: text("info")?,
        category: text("category"),
        values,
        current: default.clone(),
        default,
    })
}

/// What a core declares about itself, as the launcher lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreSummary {
    /// Its name (`Stella`).
    pub name: String,
    /// Its version.
    pub version: String,
    /// The content extensions it takes, lower case, without dots.
    pub extensions: Vec<String>,
    /// The options it declares, with their defaults.
    pub options: Vec<CoreOption>,
    /// The categories it groups them in.
    pub categories: Vec<OptionCategory>,
}

impl CoreSummary {
    /// Whether it declares `content`'s extension (any content when it
    /// declares none).
    pub fn takes(&self, content: &Path) -> bool {
        let extension = content
            .extension()
            .map(|ext| ext.to_string_lossy().to_lowercase());
        self.extensions.is_empty() || extension.is_some_and(|ext| self.extensions.contains(&ext))
    }

    /// The JSON line `netcade probe-core` prints.
    pub fn to_json(&self) -> serde_json::Value {
        let options: Vec<serde_json::Value> = self
            .options
            .iter()
            .map(|option| {
                serde_json::json!({
                    "key": option.key,
                    "description": option.description,
                    "info": option.info,
                    "category": option.category,
                    "values": option.values,
                    "default": option.default,
                })
            })
            .collect();
        let categories: Vec<serde_json::Value> = self
            .categories
            .iter()
            .map(|category| {
                serde_json::json!({
                    "key": category.key,
                    "description": category.description,
                    "info": category.info,
                })
            })
            .collect();
        serde_json::json!({
            "name": self.name,
            "version": self.version,
            "extensions": self.extensions,
            "options": options,
            "categories": categories,
        })
    }

    /// Reads [`CoreSummary::to_json`]'s line back.
    pub fn from_json(text: &str) -> Option<CoreSummary> {
        let value: serde_json::Value = serde_json::from_str(text.trim()).ok()?;
        let text_of = |key: &str| value.get(key)?.as_str().map(str::to_string);
        let extensions = value
            .get("extensions")?
            .as_array()?
            .iter()
            .map(|ext| ext.as_str().map(str::to_string))
            .collect::<Option<Vec<String>>>()?;
        let listed = |key: &str| {
            value
                .get(key)
                .and_then(serde_json::Value::as_array)
                .map_or(&[][..], Vec::as_slice)
        };
        Some(CoreSummary {
            name: text_of("name")?,
            version: text_of("version")?,
            extensions,
            options: listed("options")
                .iter()
                .map(option_from_json)
                .collect::<Option<_>>()?,
            categories: listed("categories")
                .iter()
                .map(|category| {
                    let text = |key: &str| Some(category.get(key)?.as_str()?.to_string());
                    Some(OptionCategory {
                        key: text("key")?,
                        description: text("description")?,
                        info: text("info")?,
                    })
                })
                .collect::<Option<_>>()?,
        })
    }
}

/// Loads `core` (`duel` or a path) in this process and asks what it
/// declares (`retro_get_system_info`): `netcade probe-core`, run in a
/// child process by [`probe_in_child`].
pub fn probe_core(core: &str) -> Result<CoreSummary, crate::engine::AppError> {
    let path = crate::engine::game::resolve_core(Path::new(core))?;
    let loaded = libretro_host::Core::load(&path, crate::paths::core_config())?;
    let info = loaded.info();
    Ok(CoreSummary {
        name: info.name.clone(),
        version: info.version.clone(),
        extensions: info
            .valid_extensions
            .iter()
            .map(|ext| ext.to_lowercase())
            .collect(),
        options: loaded.options().to_vec(),
        categories: loaded.option_categories().to_vec(),
    })
}

/// The most of a probe's output read (a name, a version, extensions, and
/// the options with their help text: a big core's run to tens of KiB).
const MAX_PROBE_OUTPUT: u64 = 1024 * 1024;

/// Runs `program probe-core CORE` (netcade itself) and reads what the core
/// declares: a core that crashes, hangs past `timeout` or is no core costs
/// that child only. The error is the child's own `error:` line.
pub fn probe_in_child(
    program: &Path,
    core: &str,
    timeout: std::time::Duration,
) -> Result<CoreSummary, String> {
    let args = ["probe-core".to_string(), core.to_string()];
    let stdout = run_in_child(program, &args, timeout, MAX_PROBE_OUTPUT)?;
    CoreSummary::from_json(&stdout).ok_or_else(|| "error: the core's probe said nothing".into())
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
    fn a_core_takes_the_content_whose_extension_it_declares() {
        let palette = CoreOption {
            key: "stella_palette".to_string(),
            description: "Palette colors".to_string(),
            values: vec!["standard".to_string(), "z26".to_string()],
            default: "standard".to_string(),
            current: "standard".to_string(),
            info: "The colours of the TIA".to_string(),
            category: Some("video".to_string()),
        };
        let stella = CoreSummary {
            name: "Stella".to_string(),
            version: "6.7".to_string(),
            extensions: vec!["a26".to_string(), "bin".to_string()],
            options: vec![palette],
            categories: vec![OptionCategory {
                key: "video".to_string(),
                description: "Video".to_string(),
                info: "How the picture looks".to_string(),
            }],
        };
        assert!(stella.takes(Path::new("/roms/Pitfall.A26")));
        assert!(!stella.takes(Path::new("/roms/sonic.md")));
        assert!(!stella.takes(Path::new("/roms/README")));
        assert_eq!(
            CoreSummary::from_json(&stella.to_json().to_string()),
            Some(stella)
        );
        assert_eq!(CoreSummary::from_json("{\"name\": 3}"), None);
    }

    #[test]
    fn a_failed_probe_is_told_by_its_error_line() {
        let report = "warning: something\nerror: the core crashed (SIGSEGV)\n  in x\n";
        assert_eq!(
            crate::engine::child::first_error_line(report).as_deref(),
            Some("error: the core crashed (SIGSEGV)")
        );
        assert_eq!(
            crate::engine::child::first_error_line("\n  boom \n").as_deref(),
            Some("boom")
        );
        assert_eq!(crate::engine::child::first_error_line(""), None);
    }

    #[test]
    fn the_cores_offered_are_duel_and_those_that_loaded_and_take_the_content() {
        let summary = |name: &str, extensions: &[&str]| CoreSummary {
            name: name.to_string(),
            version: "1".to_string(),
            extensions: extensions.iter().map(|ext| ext.to_string()).collect(),
            options: Vec::new(),
            categories: Vec::new(),
        };
        let catalogue = Catalogue::from_probes(vec![
            ("duel".to_string(), None),
            (
                "/c/st_libretro.so".to_string(),
                Some(Ok(summary("Stella", &["a26"]))),
            ),
            (
                "/c/gpgx_libretro.so".to_string(),
                Some(Ok(summary("Genesis", &["md"]))),
            ),
            (
                "/c/broken_libretro.so".to_string(),
                Some(Err("error: the core crashed".to_string())),
            ),
            ("/c/slow_libretro.so".to_string(), None),
        ]);
        let cores = |content: Option<&str>| -> Vec<String> {
            catalogue
                .offered(content.map(Path::new))
                .into_iter()
                .map(|(core, _)| core)
                .collect()
        };
        assert_eq!(cores(Some("pitfall.a26")), ["duel", "/c/st_libretro.so"]);
        assert_eq!(
            cores(None),
            ["duel", "/c/st_libretro.so", "/c/gpgx_libretro.so"]
        );
        assert_eq!(catalogue.offered(Some(Path::new("x.a26")))[1].1, "Stella 1");
        assert_eq!(
            catalogue.failures(),
            ["/c/broken_libretro.so: error: the core crashed"]
        );
        assert!(catalogue.probing(), "the slow core has not answered yet");
    }

    #[test]
    fn the_bundled_duel_core_is_always_offered_first() {
        assert_eq!(find_cores()[0], "duel");
    }

    #[test]
    fn a_core_picked_is_installed_in_the_cores_folder_and_anything_else_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let picked = dir.path().join("stella_libretro.so");
        std::fs::write(&picked, b"a core").unwrap();
        let folder = dir.path().join("data/cores");
        let installed = install_core_into(&picked, &folder).unwrap();
        assert_eq!(installed, folder.join("stella_libretro.so"));
        assert_eq!(std::fs::read(&installed).unwrap(), b"a core");
        assert_eq!(
            cores_in(&folder),
            std::slice::from_ref(&installed),
            "no partial file left"
        );
        // Installing it again from where it lies changes nothing.
        assert_eq!(install_core_into(&installed, &folder), Ok(installed));
        let rom = dir.path().join("boxing.bin");
        std::fs::write(&rom, b"rom").unwrap();
        let error = install_core_into(&rom, &folder).unwrap_err();
        assert!(error.contains("is not a libretro core"), "{error}");
        let missing = install_core_into(&dir.path().join("gone_libretro.so"), &folder);
        assert!(missing.unwrap_err().starts_with("error: cannot install"));
    }

    #[test]
    fn a_core_is_named_by_its_info_file_and_plays_the_games_of_its_system() {
        let dir = tempfile::tempdir().unwrap();
        let (a26, md) = (
            dir.path().join("zz_a26_libretro.so"),
            dir.path().join("zz_md_libretro.so"),
        );
        std::fs::write(
            dir.path().join("zz_a26_libretro.info"),
            "corename = \"Stella\"\ndisplay_version = \"3.9.3\"\n\
             supported_extensions = \"a26|bin\"\ndatabase = \"Atari - 2600\"\n",
        )
        .unwrap();
        let md_probe = CoreSummary {
            name: "Genesis Plus GX".to_string(),
            version: "1.7".to_string(),
            extensions: vec!["md".to_string(), "smd".to_string(), "bin".to_string()],
            options: Vec::new(),
            categories: Vec::new(),
        };
        let path = |core: &Path| core.display().to_string();
        // Genesis Plus GX found first, Stella's probe not back yet.
        let catalogue = Catalogue::from_probes(vec![
            ("duel".to_string(), None),
            (path(&md), Some(Ok(md_probe))),
            (path(&a26), None),
        ]);
        assert_eq!(catalogue.label(&path(&a26)), "Stella 3.9.3");
        assert_eq!(catalogue.label(&path(&md)), "Genesis Plus GX 1.7");
        assert_eq!(catalogue.label("duel"), "Duel (bundled)");
        let boxing = catalogue.core_for(Path::new("/roms/boxing.bin"), 2048);
        assert_eq!(boxing, Some(path(&a26).as_str()));
        let sonic = catalogue.core_for(Path::new("/roms/sonic.bin"), 512 * 1024);
        assert_eq!(sonic, Some(path(&md).as_str()));
        assert_eq!(catalogue.core_for(Path::new("/roms/x.nes"), 1), None);
    }
}
