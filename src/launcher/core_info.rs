//! libretro's core-info files (`stella_libretro.info`, Debian's
//! `libretro-core-info` installs them in `/usr/share/libretro/info`): what a
//! core is called, the content it takes, the game databases it plays and
//! the BIOS files it needs, known without loading it. The text is
//! untrusted: [`CoreInfo::parse`] is bounded and returns an error on
//! anything it cannot read.

use std::path::{Path, PathBuf};

/// The largest info file read (the biggest Debian ships is under 16 KiB).
pub const MAX_INFO_BYTES: usize = 256 * 1024;

/// The most firmware entries one file may declare.
pub const MAX_FIRMWARE: usize = 128;

/// Where info files are looked for, besides the core's own folder.
pub fn info_folders() -> Vec<PathBuf> {
    let mut folders = vec![
        PathBuf::from("/usr/share/libretro/info"),
        PathBuf::from("/usr/local/share/libretro/info"),
    ];
    if let Some(home) = std::env::var_os("HOME") {
        folders.push(PathBuf::from(home).join(".config/retroarch/info"));
    }
    folders
}

/// One BIOS or firmware file a core reads from the system folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Firmware {
    /// Its path under the system folder (`bios_MD.bin`).
    pub path: String,
    /// What it is (`Mega Drive startup ROM`).
    pub description: String,
    /// Whether the core runs without it.
    pub optional: bool,
}

/// What a core-info file says of its core.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoreInfo {
    /// `display_name`: `Atari - 2600 (Stella)`.
    pub display_name: String,
    /// `corename`: `Stella`.
    pub core_name: String,
    /// `display_version`: `6.6`.
    pub version: String,
    /// `supported_extensions`, lower case, without dots.
    pub extensions: Vec<String>,
    /// `database`: the game databases (systems) it plays.
    pub databases: Vec<String>,
    /// `savestate_features`: `deterministic` is what rollback needs.
    pub savestate_features: String,
    /// `firmware0_path` … of `firmware_count`.
    pub firmware: Vec<Firmware>,
}

impl CoreInfo {
    /// Reads an info file's text.
    pub fn parse(text: &str) -> Result<CoreInfo, String> {
        if text.len() > MAX_INFO_BYTES {
            return Err(too_large(text.len()));
        }
        let mut values = std::collections::HashMap::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (key, value) = line.split_once('=').ok_or_else(|| bad_line(index + 1))?;
            let key = key.trim();
            let value = value.trim();
            let value = value
                .strip_prefix('"')
                .and_then(|value| value.strip_suffix('"'))
                .unwrap_or(value);
            if key.is_empty() || key.contains(char::is_whitespace) {
                return Err(bad_line(index + 1));
            }
            values.insert(key, value);
        }
        let text_of = |key: &str| values.get(key).copied().unwrap_or_default().to_string();
        let listed = |key: &str| -> Vec<String> {
            text_of(key)
                .split('|')
                .map(str::trim)
                .filter(|item| !item.is_empty())
                .map(str::to_string)
                .collect()
        };
        let count_text = text_of("firmware_count");
        let count = match count_text.as_str() {
            "" => 0,
            text => text
                .parse::<usize>()
                .ok()
                .filter(|count| *count <= MAX_FIRMWARE)
                .ok_or_else(|| {
                    format!(
                        "firmware_count is not a number from 0 to {MAX_FIRMWARE} (got {text:?})"
                    )
                })?,
        };
        let mut firmware = Vec::with_capacity(count);
        for index in 0..count {
            let path = text_of(&format!("firmware{index}_path"));
            if path.is_empty() {
                return Err(format!("firmware{index}_path is missing"));
            }
            firmware.push(Firmware {
                path,
                description: text_of(&format!("firmware{index}_desc")),
                optional: text_of(&format!("firmware{index}_opt")) == "true",
            });
        }
        let info = CoreInfo {
            display_name: text_of("display_name"),
            core_name: text_of("corename"),
            version: text_of("display_version"),
            extensions: listed("supported_extensions")
                .into_iter()
                .map(|ext| ext.to_lowercase())
                .collect(),
            databases: listed("database"),
            savestate_features: text_of("savestate_features"),
            firmware,
        };
        if info.display_name.is_empty() && info.core_name.is_empty() {
            return Err("the file names no core (no display_name or corename)".to_string());
        }
        Ok(info)
    }

    /// How the launcher names the core: `Stella 6.6`.
    pub fn label(&self) -> String {
        let name = if self.core_name.is_empty() {
            &self.display_name
        } else {
            &self.core_name
        };
        match self.version.as_str() {
            "" => name.clone(),
            version => format!("{name} {version}"),
        }
    }

    /// The BIOS files it needs (not optional) that `exists` does not find
    /// under `system`.
    pub fn missing_firmware(
        &self,
        system: &Path,
        exists: impl Fn(&Path) -> bool,
    ) -> Vec<&Firmware> {
        self.firmware
            .iter()
            .filter(|firmware| !firmware.optional && !exists(&system.join(&firmware.path)))
            .collect()
    }
}

fn too_large(bytes: usize) -> String {
    format!("the core-info file is {bytes} bytes or more, over {MAX_INFO_BYTES}")
}

fn bad_line(line: usize) -> String {
    format!("line {line}: not `key = \"value\"`")
}

/// The info file's name for a core's file: `stella_libretro.so` →
/// `stella_libretro.info`.
pub fn info_file_name(core: &Path) -> Option<String> {
    let stem = core.file_stem()?.to_str()?;
    stem.ends_with("_libretro").then(|| format!("{stem}.info"))
}

/// The info file of `core`: beside it, else in [`info_folders`]; `None`
/// when there is none, with the reason when one could not be read.
pub fn find_info(core: &Path) -> Option<Result<CoreInfo, String>> {
    let name = info_file_name(core)?;
    let beside = core.parent().map(|folder| folder.join(&name));
    let path = beside
        .into_iter()
        .chain(info_folders().into_iter().map(|folder| folder.join(&name)))
        .find(|path| path.is_file())?;
    Some(read_info(&path))
}

/// Reads the info file at `path`, bounded by [`MAX_INFO_BYTES`].
pub fn read_info(path: &Path) -> Result<CoreInfo, String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_INFO_BYTES as u64 + 1).read_to_end(&mut bytes))
        .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    if bytes.len() > MAX_INFO_BYTES {
        return Err(format!("{}: {}", path.display(), too_large(bytes.len())));
    }
    let text = String::from_utf8_lossy(&bytes);
    CoreInfo::parse(&text).map_err(|error| format!("{}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GENESIS: &str = r#"# Software Information
display_name = "Sega - MS/GG/MD/CD (Genesis Plus GX)"
supported_extensions = "mdx|md|BIN|sms"
corename = "Genesis Plus GX"
display_version = "v1.7.4"
database = "Sega - Master System - Mark III|Sega - Mega Drive - Genesis"
savestate_features = "deterministic"

# BIOS / Firmware
firmware_count = 2
firmware0_desc = "bios_MD.bin (Mega Drive startup ROM)"
firmware0_path = "bios_MD.bin"
firmware0_opt = "true"
firmware1_desc = "bios_CD_E.bin (MegaCD EU BIOS)"
firmware1_path = "sega/bios_CD_E.bin"
firmware1_opt = "false"
"#;

    #[test]
    fn an_info_file_names_its_core_its_content_its_systems_and_its_bios() {
        let info = CoreInfo::parse(GENESIS).unwrap();
        assert_eq!(info.label(), "Genesis Plus GX v1.7.4");
        assert_eq!(info.display_name, "Sega - MS/GG/MD/CD (Genesis Plus GX)");
        assert_eq!(info.extensions, ["mdx", "md", "bin", "sms"]);
        assert_eq!(
            info.databases,
            [
                "Sega - Master System - Mark III",
                "Sega - Mega Drive - Genesis"
            ]
        );
        assert_eq!(info.savestate_features, "deterministic");
        assert_eq!(info.firmware.len(), 2);
        assert!(info.firmware[0].optional);
        assert_eq!(info.firmware[1].path, "sega/bios_CD_E.bin");
        assert_eq!(
            info.firmware[1].description,
            "bios_CD_E.bin (MegaCD EU BIOS)"
        );
    }

    #[test]
    fn only_the_bios_files_a_core_needs_and_lacks_are_named_missing() {
        let info = CoreInfo::parse(GENESIS).unwrap();
        let system = Path::new("/system");
        let missing = info.missing_firmware(system, |_| false);
        let names: Vec<&str> = missing.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            names,
            ["sega/bios_CD_E.bin"],
            "the optional one is not needed"
        );
        let present = |path: &Path| path == Path::new("/system/sega/bios_CD_E.bin");
        assert!(info.missing_firmware(system, present).is_empty());
    }

    #[test]
    fn a_damaged_or_hostile_info_file_is_an_error_not_a_panic() {
        assert_eq!(
            CoreInfo::parse("corename = \"x\"\njust words\n"),
            Err(bad_line(2))
        );
        assert_eq!(
            CoreInfo::parse("corename = \"x\"\nfirmware_count = 4000000000\n"),
            Err("firmware_count is not a number from 0 to 128 (got \"4000000000\")".to_string())
        );
        assert_eq!(
            CoreInfo::parse("corename = \"x\"\nfirmware_count = -1\n"),
            Err("firmware_count is not a number from 0 to 128 (got \"-1\")".to_string())
        );
        assert_eq!(
            CoreInfo::parse("corename = \"x\"\nfirmware_count = 1\n"),
            Err("firmware0_path is missing".to_string())
        );
        assert!(CoreInfo::parse("license = \"GPL\"\n")
            .unwrap_err()
            .contains("names no core"));
        assert_eq!(CoreInfo::parse("= \"x\"\n"), Err(bad_line(1)));
        let huge = "#".repeat(MAX_INFO_BYTES + 1);
        assert_eq!(CoreInfo::parse(&huge), Err(too_large(MAX_INFO_BYTES + 1)));
        // Whatever the bytes, an answer and no panic.
        for text in ["\u{0}=\"", "a=\"", "a = \"\"\"", "corename=é|\r\n"] {
            let _ = CoreInfo::parse(text);
        }
    }

    #[test]
    fn the_info_file_of_a_core_is_found_beside_it_by_its_name() {
        assert_eq!(
            info_file_name(Path::new("/c/stella_libretro.so")).as_deref(),
            Some("stella_libretro.info")
        );
        assert_eq!(info_file_name(Path::new("/c/libfoo.so")), None);
        let dir = tempfile::tempdir().unwrap();
        let core = dir.path().join("zz_netcade_test_libretro.so");
        assert!(find_info(&core).is_none());
        std::fs::write(dir.path().join("zz_netcade_test_libretro.info"), GENESIS).unwrap();
        assert_eq!(
            find_info(&core).unwrap().unwrap().core_name,
            "Genesis Plus GX"
        );
        std::fs::write(dir.path().join("zz_netcade_test_libretro.info"), "junk\n").unwrap();
        let error = find_info(&core).unwrap().unwrap_err();
        assert!(error.ends_with("line 1: not `key = \"value\"`"), "{error}");
    }
}
