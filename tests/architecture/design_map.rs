//! docs/design.md's module map matches the tree: every crate of the
//! workspace has its section there, and every folder of a crate's `src/`
//! is named in its crate's section (as `folder/sub/`, in backticks).

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The module map: `## Module map` up to the next `## ` heading.
fn module_map() -> String {
    let design = std::fs::read_to_string(root().join("docs/design.md")).expect("docs/design.md");
    let start = design
        .find("\n## Module map")
        .expect("docs/design.md has a `## Module map` section");
    let rest = &design[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |at| at + 3);
    rest[..end].to_string()
}

/// The `### ` section of the map whose heading names `crate_dir` in
/// backticks (`` `crates/netcode/` ``).
fn section<'a>(map: &'a str, crate_dir: &str) -> Option<&'a str> {
    let heading = format!("`{crate_dir}/`");
    map.split("\n### ")
        .skip(1)
        .find(|section| section.lines().next().is_some_and(|h| h.contains(&heading)))
}

/// The folders under `src` holding Rust files, relative to it.
fn folders(src: &Path) -> Vec<String> {
    fn walk(dir: &Path, src: &Path, out: &mut Vec<String>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("a readable folder")
            .map(|entry| entry.expect("a directory entry").path())
            .collect();
        entries.sort();
        for path in entries.into_iter().filter(|path| path.is_dir()) {
            let relative = path
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.push(relative);
            walk(&path, src, out);
        }
    }
    let mut out = Vec::new();
    walk(src, src, &mut out);
    out
}

/// Every crate of the workspace: the netcade crate at the root, each
/// folder of `crates/`, the Duel core and the tests' support crate.
fn crate_dirs() -> Vec<String> {
    let mut dirs = vec![String::from("src")];
    let mut crates: Vec<String> = std::fs::read_dir(root().join("crates"))
        .expect("crates/")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.join("Cargo.toml").is_file())
        .map(|path| format!("crates/{}", path.file_name().unwrap().to_string_lossy()))
        .collect();
    crates.sort();
    dirs.extend(crates);
    dirs.extend(["cores/duel".to_string(), "tests/support".to_string()]);
    dirs
}

/// A crate's `src/` folder, if it has one.
fn crate_src(crate_dir: &str) -> Option<PathBuf> {
    let src = if crate_dir == "src" {
        root().join("src")
    } else {
        root().join(crate_dir).join("src")
    };
    src.is_dir().then_some(src)
}

#[test]
fn every_crate_has_its_section_in_the_module_map() {
    let map = module_map();
    let missing: Vec<String> = crate_dirs()
        .into_iter()
        .filter(|dir| section(&map, dir).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "crates with no `### `…/`` section in docs/design.md's module map: {missing:?}"
    );
}

#[test]
fn every_folder_of_every_crate_is_named_in_its_section() {
    let map = module_map();
    let mut missing = Vec::new();
    for dir in crate_dirs() {
        let Some(section) = section(&map, &dir) else {
            continue;
        };
        let Some(src) = crate_src(&dir) else {
            continue;
        };
        for folder in folders(&src) {
            if !section.contains(&format!("`{folder}/`")) {
                missing.push(format!("{dir}: {folder}/"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "folders docs/design.md's module map does not name in their crate's section:\n{}",
        missing.join("\n")
    );
}

#[test]
fn a_folder_the_map_leaves_out_is_found() {
    let map = "## Module map\n\n### `src/` netcade\n\n`engine/` the engine\n";
    let netcade = section(map, "src").expect("the section");
    assert!(netcade.contains("`engine/`"));
    assert!(!netcade.contains("`engine/sinks/`"));
    assert!(section(map, "crates/netcode").is_none());
}

#[test]
fn no_two_folders_share_a_name_outside_the_commands() {
    let mut seen: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for dir in crate_dirs() {
        let Some(src) = crate_src(&dir) else {
            continue;
        };
        for folder in folders(&src) {
            // `commands/replay/` is the `replay` subcommand.
            if folder.starts_with("commands/") {
                continue;
            }
            let name = folder.rsplit('/').next().unwrap_or(&folder).to_string();
            seen.entry(name)
                .or_default()
                .push(format!("{dir}/{folder}"));
        }
    }
    let shared: Vec<String> = seen
        .into_iter()
        .filter(|(_, places)| places.len() > 1)
        .map(|(name, places)| format!("{name}: {}", places.join(", ")))
        .collect();
    assert!(
        shared.is_empty(),
        "folders sharing a name:\n{}",
        shared.join("\n")
    );
}
