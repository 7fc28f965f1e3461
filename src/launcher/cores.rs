//! The cores a player can pick without typing a path: the bundled Duel
//! core, and the libretro cores in netcade's `cores/` folder, the system's
//! libretro folders and RetroArch's cores folder.

use crate::launcher::child::run_in_child;
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

/// What probing a core found: what it declares, or the child's `error:`
/// line.
pub type Probe = Result<CoreSummary, String>;

/// How long one core may take to load and answer.
pub const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The cores found and, as their probes come back from a worker thread,
/// what each declares.
pub struct Catalogue {
    cores: Vec<(String, Option<Probe>)>,
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
            cores: cores.into_iter().map(|core| (core, None)).collect(),
            answers,
        }
    }

    /// A catalogue of probes already made.
    pub fn from_probes(cores: Vec<(String, Option<Probe>)>) -> Catalogue {
        Catalogue {
            cores,
            answers: std::sync::mpsc::channel().1,
        }
    }

    /// Takes in the probes that came back.
    pub fn update(&mut self) {
        while let Ok((index, probe)) = self.answers.try_recv() {
            if let Some(entry) = self.cores.get_mut(index) {
                entry.1 = Some(probe);
            }
        }
    }

    /// Whether probes are still under way.
    pub fn probing(&self) -> bool {
        self.cores.iter().any(|(_, probe)| probe.is_none())
    }

    /// The cores offered for `content` as (`--core`, label): Duel always,
    /// and each core that loaded and declares the content's extension
    /// (every core that loaded while no content is chosen).
    pub fn offered(&self, content: Option<&Path>) -> Vec<(String, String)> {
        self.cores
            .iter()
            .filter_map(|(core, probe)| match probe {
                _ if core == crate::engine::game::BUNDLED_DUEL => {
                    Some((core.clone(), "Duel (bundled)".to_string()))
                }
                Some(Ok(summary)) if content.is_none_or(|content| summary.takes(content)) => {
                    let file = Path::new(core)
                        .file_name()
                        .map_or_else(|| core.clone(), |name| name.to_string_lossy().into_owned());
                    let label = format!("{} {} ({file})", summary.name, summary.version);
                    Some((core.clone(), label))
                }
                _ => None,
            })
            .collect()
    }

    /// What `core` declares, once its probe came back.
    pub fn summary(&self, core: &str) -> Option<&CoreSummary> {
        self.cores.iter().find_map(|(known, probe)| match probe {
            Some(Ok(summary)) if known == core => Some(summary),
            _ => None,
        })
    }

    /// Each core that could not be loaded, with the error it gave.
    pub fn failures(&self) -> Vec<String> {
        self.cores
            .iter()
            .filter_map(|(core, probe)| match probe {
                Some(Err(error)) => Some(format!("{core}: {error}")),
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
            crate::launcher::child::first_error_line(report).as_deref(),
            Some("error: the core crashed (SIGSEGV)")
        );
        assert_eq!(
            crate::launcher::child::first_error_line("\n  boom \n").as_deref(),
            Some("boom")
        );
        assert_eq!(crate::launcher::child::first_error_line(""), None);
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
                "/c/stella_libretro.so".to_string(),
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
        assert_eq!(
            cores(Some("pitfall.a26")),
            ["duel", "/c/stella_libretro.so"]
        );
        assert_eq!(
            cores(None),
            ["duel", "/c/stella_libretro.so", "/c/gpgx_libretro.so"]
        );
        assert_eq!(
            catalogue.offered(Some(Path::new("x.a26")))[1].1,
            "Stella 1 (stella_libretro.so)"
        );
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
}
