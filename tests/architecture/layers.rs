//! Inside each crate the modules stay in the layers `docs/design.md` draws:
//! a module imports only the layers below it (the compiler keeps the crates
//! themselves in order), and no files import each other in a ring, except
//! in the libretro host, whose callbacks call back into the core that
//! registered them.

use crate::imports::{Crate, Import};
use crate::source::{read_tree, Modules, Tree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// What each top-level module may import (besides itself), for one crate.
/// Everything not listed for a module is forbidden to it.
type Layers = &'static [(&'static str, &'static [&'static str])];

/// The netcade crate, top to bottom: commands → gui → launcher → live →
/// engine → net → paths. The frame engine knows nothing of live sessions
/// or the launcher.
const NETCADE_LAYERS: Layers = &[
    (
        "main",
        &[
            "commands", "gui", "launcher", "live", "engine", "net", "paths",
        ],
    ),
    (
        "commands",
        &["gui", "launcher", "live", "engine", "net", "paths"],
    ),
    ("gui", &["launcher", "live", "engine", "net", "paths"]),
    ("launcher", &["live", "engine", "net", "paths"]),
    ("live", &["engine", "net", "paths"]),
    ("engine", &["net", "paths"]),
    ("net", &["paths"]),
    ("paths", &[]),
];

/// The netcode crate: the base types, then encoding, rollback, the wire
/// protocol, the replay format and the audio ring, and the netplay
/// sessions on top.
const NETCODE_LAYERS: Layers = &[
    ("random", &[]),
    ("input", &["random"]),
    ("diff", &[]),
    ("emulator", &["input"]),
    ("checksum", &["emulator", "input"]),
    ("encoding", &["input", "checksum"]),
    (
        "rollback",
        &["encoding", "input", "emulator", "checksum", "diff"],
    ),
    ("protocol", &["encoding", "rollback", "input", "checksum"]),
    ("replay", &["encoding", "rollback", "input", "checksum"]),
    ("audio", &["rollback"]),
    (
        "netplay",
        &["protocol", "encoding", "rollback", "input", "checksum"],
    ),
    ("retroarch", &["input"]),
    ("lobby", &["checksum", "protocol"]),
    ("testing", &["emulator", "input"]),
];

/// One crate of the workspace as the layer check reads it.
struct CrateRule {
    /// Its `src/`, from the workspace's root.
    src: &'static str,
    /// Its library's name.
    lib_name: &'static str,
    /// Its modules' layers (none: one layer).
    layers: Option<Layers>,
    /// Whether its files may import each other in a ring.
    rings_allowed: bool,
}

const CRATES: &[CrateRule] = &[
    CrateRule {
        src: "src",
        lib_name: "netcade",
        layers: Some(NETCADE_LAYERS),
        rings_allowed: false,
    },
    CrateRule {
        src: "crates/netcode/src",
        lib_name: "netcode",
        layers: Some(NETCODE_LAYERS),
        rings_allowed: false,
    },
    CrateRule {
        src: "crates/libretro/src",
        lib_name: "libretro_host",
        layers: None,
        rings_allowed: true,
    },
];

fn top_module(import_module: &[String]) -> String {
    import_module
        .first()
        .cloned()
        .unwrap_or_else(|| "lib".into())
}

/// Imports that reach a layer their module may not import, as
/// `src/FILE:LINE: `PATH` (FROM may not import TO)`.
fn layer_violations(src: &str, layers: Layers, imports: &[Import]) -> Vec<String> {
    let allowed: BTreeMap<&str, &[&str]> = layers.iter().copied().collect();
    imports
        .iter()
        .filter_map(|import| {
            let (from, to) = (top_module(&import.module), top_module(&import.target));
            if from == to {
                return None;
            }
            let ok = allowed
                .get(from.as_str())
                .is_some_and(|may| may.contains(&to.as_str()));
            (!ok).then(|| {
                format!(
                    "{src}/{}:{}: `{}` ({from} may not import {to})",
                    import.from, import.line, import.path
                )
            })
        })
        .collect()
}

/// Top-level modules the table does not place.
fn unplaced_modules(layers: Layers, krate: &Crate) -> BTreeSet<String> {
    let known: BTreeSet<&str> = layers.iter().map(|(name, _)| *name).collect();
    krate
        .modules()
        .by_path
        .keys()
        .filter_map(|path| path.first())
        .filter(|module| !known.contains(module.as_str()))
        .cloned()
        .collect()
}

/// Rings of sibling modules importing each other (strongly connected
/// groups of two or more), each module counted with everything below it.
///
/// A folder module and the files inside it are one unit: its children may
/// use what it defines (they split its `impl` by concern) and it may use
/// theirs. Between siblings, at every level, imports go one way only.
fn import_rings(imports: &[Import]) -> Vec<Vec<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for import in imports {
        let (from, to) = (&import.module, &import.target);
        let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
        if common == from.len() || common == to.len() {
            // Into its own ancestor or descendant: within one unit.
            continue;
        }
        let from = from[..=common].join("::");
        let to = to[..=common].join("::");
        edges.entry(to.clone()).or_default();
        edges.entry(from).or_default().insert(to);
    }
    strongly_connected(&edges)
}

/// Tarjan's strongly connected components of two or more nodes.
fn strongly_connected(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let edges: BTreeMap<&str, BTreeSet<&str>> = edges
        .iter()
        .map(|(from, to)| (from.as_str(), to.iter().map(String::as_str).collect()))
        .collect();
    struct Search<'a> {
        edges: &'a BTreeMap<&'a str, BTreeSet<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        rings: Vec<Vec<String>>,
    }
    impl<'a> Search<'a> {
        fn visit(&mut self, file: &'a str) {
            let number = self.index.len();
            self.index.insert(file, number);
            self.low.insert(file, number);
            self.stack.push(file);
            self.on_stack.insert(file);
            for &next in &self.edges[file] {
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[file].min(self.low[next]);
                    self.low.insert(file, low);
                } else if self.on_stack.contains(next) {
                    let low = self.low[file].min(self.index[next]);
                    self.low.insert(file, low);
                }
            }
            if self.low[file] == self.index[file] {
                let mut ring = Vec::new();
                while let Some(member) = self.stack.pop() {
                    self.on_stack.remove(member);
                    ring.push(member.to_string());
                    if member == file {
                        break;
                    }
                }
                if ring.len() > 1 {
                    ring.sort();
                    self.rings.push(ring);
                }
            }
        }
    }
    let mut search = Search {
        edges: &edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        rings: Vec::new(),
    };
    for &file in edges.keys() {
        if !search.index.contains_key(file) {
            search.visit(file);
        }
    }
    search.rings
}

fn workspace_tree(src: &str) -> Tree {
    read_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join(src))
}

fn read_crate(rule: &CrateRule) -> Crate {
    Crate::read(&workspace_tree(rule.src), rule.lib_name)
}

#[test]
fn no_layer_imports_a_layer_above_it() {
    let mut violations = Vec::new();
    for rule in CRATES {
        if let Some(layers) = rule.layers {
            violations.extend(layer_violations(
                rule.src,
                layers,
                &read_crate(rule).imports(),
            ));
        }
    }
    assert!(
        violations.is_empty(),
        "imports that reach up a layer (see the tables in tests/architecture/layers.rs and docs/design.md):\n{}",
        violations.join("\n")
    );
}

#[test]
fn no_files_import_each_other_in_a_ring() {
    let mut rings = Vec::new();
    for rule in CRATES.iter().filter(|rule| !rule.rings_allowed) {
        for ring in import_rings(&read_crate(rule).imports()) {
            rings.push(format!("{}: {}", rule.src, ring.join(" ↔ ")));
        }
    }
    assert!(
        rings.is_empty(),
        "modules that import each other (move what they share into a leaf module below both):\n{}",
        rings.join("\n")
    );
}

#[test]
fn every_top_level_module_has_a_place_in_the_layers() {
    for rule in CRATES {
        if let Some(layers) = rule.layers {
            let unplaced = unplaced_modules(layers, &read_crate(rule));
            assert!(
                unplaced.is_empty(),
                "modules of {} missing from its table: {unplaced:?}",
                rule.src
            );
        }
    }
}

#[test]
fn every_source_file_is_a_module_the_compiler_builds() {
    for rule in CRATES {
        let stray = Modules::read_with_tests(&workspace_tree(rule.src)).unreached;
        assert!(
            stray.is_empty(),
            "files under {} that no `mod` reaches (the layer check could not see them): {stray:?}",
            rule.src
        );
    }
}

// Synthetic trees: each rule is shown catching the breach it exists for.

fn tree_of(files: &[(&str, &str)]) -> Tree {
    files
        .iter()
        .map(|(path, text)| (path.to_string(), text.to_string()))
        .collect()
}

fn netcade_violations(files: &[(&str, &str)]) -> Vec<String> {
    let krate = Crate::read(&tree_of(files), "netcade");
    layer_violations("src", NETCADE_LAYERS, &krate.imports())
}

fn rings_of(files: &[(&str, &str)]) -> Vec<Vec<String>> {
    import_rings(&Crate::read(&tree_of(files), "netcode").imports())
}

#[test]
fn an_engine_file_importing_the_window_is_caught_with_its_line() {
    let violations = netcade_violations(&[
        ("lib.rs", "pub mod engine;\npub mod gui;\n"),
        ("engine/mod.rs", "pub mod live;\n"),
        (
            "engine/live.rs",
            "use std::io;\nuse crate::gui::window::Window;\n",
        ),
        ("gui/mod.rs", "pub mod window;\n"),
        ("gui/window.rs", "pub struct Window;\n"),
    ]);
    assert_eq!(
        violations,
        ["src/engine/live.rs:2: `crate::gui::window::Window` (engine may not import gui)"]
    );
}

#[test]
fn the_frame_engine_importing_live_sessions_or_the_launcher_is_caught() {
    let violations = netcade_violations(&[
        (
            "lib.rs",
            "pub mod engine;\npub mod launcher;\npub mod live;\n",
        ),
        ("engine/mod.rs", "pub mod run;\n"),
        (
            "engine/run.rs",
            "fn f() { crate::live::connect(); }\nuse crate::launcher::Recent;\n",
        ),
        ("live/mod.rs", "pub fn connect() {}\n"),
        ("launcher/mod.rs", "pub struct Recent;\n"),
    ]);
    assert_eq!(
        violations,
        [
            "src/engine/run.rs:2: `crate::launcher::Recent` (engine may not import launcher)",
            "src/engine/run.rs:1: `crate::live::connect` (engine may not import live)",
        ]
    );
}

#[test]
fn a_pure_layer_naming_a_socket_inline_or_in_a_group_is_caught() {
    let violations = netcade_violations(&[
        ("lib.rs", "pub mod net;\npub mod paths;\npub mod live;\n"),
        ("net/mod.rs", "pub struct UdpTransport;\n"),
        ("live/mod.rs", "pub struct Core;\n"),
        (
            "paths.rs",
            "use crate::{live::Core, net};\nfn f() { let _ = crate::net::UdpTransport; }\n",
        ),
    ]);
    assert_eq!(violations.len(), 3, "{violations:#?}");
    assert!(violations[0].contains("paths may not import live"));
    assert!(violations[1].contains("src/paths.rs:1") && violations[1].contains("net"));
    assert!(violations[2].contains("src/paths.rs:2") && violations[2].contains("net"));
}

#[test]
fn super_self_and_child_paths_are_imports_too() {
    let violations = netcade_violations(&[
        ("lib.rs", "pub mod engine;\npub mod live;\n"),
        (
            "engine/mod.rs",
            "pub mod sinks;\nuse self::sinks::Sink;\nfn f() { sinks::run(); }\n",
        ),
        (
            "engine/sinks.rs",
            "use super::super::live::Role;\nfn g() { super::super::live::go(); }\npub struct Sink;\npub fn run() {}\n",
        ),
        ("live/mod.rs", "pub struct Role;\npub fn go() {}\n"),
    ]);
    assert_eq!(
        violations,
        [
            "src/engine/sinks.rs:1: `super::super::live::Role` (engine may not import live)",
            "src/engine/sinks.rs:2: `super::super::live::go` (engine may not import live)",
        ]
    );
    let krate = Crate::read(
        &tree_of(&[
            ("lib.rs", "pub mod engine;\n"),
            (
                "engine/mod.rs",
                "pub mod sinks;\nuse self::sinks::Sink;\nfn f() { sinks::run(); }\n",
            ),
            ("engine/sinks.rs", "pub struct Sink;\npub fn run() {}\n"),
        ]),
        "netcade",
    );
    let seen: Vec<(String, usize)> = krate
        .imports()
        .into_iter()
        .map(|import| (import.path, import.line))
        .collect();
    assert_eq!(
        seen,
        [("self::sinks::Sink".into(), 2), ("sinks::run".into(), 3)]
    );
}

#[test]
fn a_module_without_a_body_and_one_with_a_body_are_both_read() {
    let violations = netcade_violations(&[
        ("lib.rs", "pub mod engine;\npub mod gui;\n"),
        (
            "engine/mod.rs",
            "#[cfg(test)]\nmod tests;\nmod inline {\n    use crate::gui::Window;\n}\npub mod file;\n",
        ),
        // Test-only: its imports are not the engine's.
        ("engine/tests.rs", "use crate::gui::Window;\n"),
        ("engine/file.rs", "fn f(_: crate::gui::Window) {}\n"),
        ("gui/mod.rs", "pub struct Window;\n"),
    ]);
    assert_eq!(
        violations,
        [
            "src/engine/file.rs:1: `crate::gui::Window` (engine may not import gui)",
            "src/engine/mod.rs:4: `crate::gui::Window` (engine may not import gui)",
        ]
    );
}

#[test]
fn a_test_module_declared_without_a_body_hides_nothing_after_it() {
    // The old check took `mod tests;` for the start of a body and blanked
    // everything up to the next `{`.
    let violations = netcade_violations(&[
        ("lib.rs", "pub mod engine;\npub mod gui;\n"),
        (
            "engine/mod.rs",
            "#[cfg(test)]\nmod tests;\nuse crate::gui::Window;\npub fn f() {}\n",
        ),
        ("gui/mod.rs", "pub struct Window;\n"),
    ]);
    assert_eq!(
        violations,
        ["src/engine/mod.rs:3: `crate::gui::Window` (engine may not import gui)"]
    );
}

#[test]
fn a_module_at_another_path_is_followed_to_its_file() {
    let violations = netcade_violations(&[
        ("lib.rs", "pub mod engine;\npub mod gui;\n"),
        (
            "engine/mod.rs",
            "#[path = \"elsewhere/speaker.rs\"]\nmod speaker;\n",
        ),
        ("engine/elsewhere/speaker.rs", "use crate::gui::Window;\n"),
        // Not a module: the same import here is never compiled.
        ("engine/speaker.rs", "use crate::gui::Window;\n"),
        ("gui/mod.rs", "pub struct Window;\n"),
    ]);
    assert_eq!(
        violations,
        ["src/engine/elsewhere/speaker.rs:1: `crate::gui::Window` (engine may not import gui)"]
    );
    let krate = Crate::read(
        &tree_of(&[
            ("lib.rs", "pub mod engine;\n"),
            ("engine/mod.rs", "#[path = \"other.rs\"]\nmod speaker;\n"),
            ("engine/other.rs", ""),
            ("engine/speaker.rs", ""),
        ]),
        "netcade",
    );
    assert_eq!(krate.modules().unreached, ["engine/speaker.rs"]);
}

#[test]
fn a_re_export_of_another_layer_is_an_import_and_is_seen_through() {
    let violations = netcade_violations(&[
        ("lib.rs", "pub mod engine;\npub mod live;\npub mod net;\n"),
        // Re-exporting the layer above is reaching up.
        ("engine/mod.rs", "pub use crate::live::Role;\n"),
        ("live/mod.rs", "mod role;\npub use role::Role;\n"),
        ("live/role.rs", "pub struct Role;\n"),
        // Through the engine's facade, `net` reaches the live layer's file.
        ("net/mod.rs", "use crate::engine::Role;\n"),
    ]);
    assert_eq!(
        violations,
        [
            "src/engine/mod.rs:1: `crate::live::Role` (engine may not import live)",
            "src/net/mod.rs:1: `crate::engine::Role` (net may not import live)",
        ]
    );
}

#[test]
fn two_files_importing_each_other_are_a_ring_even_through_a_third() {
    let rings = rings_of(&[
        ("lib.rs", "pub mod protocol;\n"),
        ("protocol/mod.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        ("protocol/a.rs", "use super::b::B;\npub struct A;\n"),
        (
            "protocol/b.rs",
            "use crate::protocol::c::C;\npub struct B;\n",
        ),
        ("protocol/c.rs", "pub struct C;\nfn f(_: super::a::A) {}\n"),
    ]);
    assert_eq!(rings, [vec!["protocol::a", "protocol::b", "protocol::c"]]);
}

#[test]
fn a_ring_closed_by_a_re_export_and_a_glob_is_a_ring() {
    // The shape of the protocol's old ring: chat used the endpoint's time
    // type, the endpoint used the messages' glob, and the messages
    // re-exported chat's type.
    let rings = rings_of(&[
        ("lib.rs", "pub mod protocol;\n"),
        (
            "protocol/mod.rs",
            "pub mod chat;\npub mod endpoint;\npub mod messages;\n",
        ),
        (
            "protocol/chat.rs",
            "use super::endpoint::Millis;\npub struct ChatMessage;\n",
        ),
        (
            "protocol/endpoint/mod.rs",
            "use super::messages::*;\npub type Millis = u64;\nfn f(_: ChatMessage) {}\n",
        ),
        (
            "protocol/messages.rs",
            "pub use super::chat::ChatMessage;\npub struct Header;\n",
        ),
    ]);
    assert_eq!(
        rings,
        [vec![
            "protocol::chat",
            "protocol::endpoint",
            "protocol::messages"
        ]]
    );
}

#[test]
fn a_facade_re_export_comments_strings_and_test_modules_are_not_imports() {
    let krate = Crate::read(
        &tree_of(&[
            ("lib.rs", "pub mod engine;\npub mod gui;\n"),
            (
                "engine/mod.rs",
                "mod game;\npub mod run;\npub use game::{open_game, Game};\npub fn helper() {}\n",
            ),
            (
                "engine/game.rs",
                "use crate::engine::helper;\n// crate::gui::Window\nconst S: &str = \"crate::gui::x\";\n\
                 pub fn open_game() {}\n#[cfg(test)]\nmod tests {\n    use crate::gui::Window;\n}\n",
            ),
            ("engine/run.rs", "use crate::engine::open_game;\n"),
            ("gui/mod.rs", "pub struct Window;\n"),
        ]),
        "netcade",
    );
    let found = krate.imports();
    assert!(
        layer_violations("src", NETCADE_LAYERS, &found).is_empty(),
        "{found:#?}"
    );
    assert!(import_rings(&found).is_empty(), "{found:#?}");
    // The facade is seen through: `run` imports the file that defines it.
    assert!(found
        .iter()
        .any(|import| import.from == "engine/run.rs" && import.to == "engine/game.rs"));
}

#[test]
fn a_module_missing_from_the_table_is_named() {
    let krate = Crate::read(
        &tree_of(&[
            ("lib.rs", "pub mod engine;\npub mod lobby;\n"),
            ("engine.rs", ""),
            ("lobby.rs", ""),
        ]),
        "netcade",
    );
    assert_eq!(
        unplaced_modules(NETCADE_LAYERS, &krate),
        BTreeSet::from(["lobby".to_string()])
    );
}

#[test]
fn a_folder_and_the_files_that_split_its_impl_are_one_unit_but_its_files_are_siblings() {
    let rings = rings_of(&[
        ("lib.rs", "pub mod netplay;\n"),
        ("netplay/mod.rs", "pub mod session;\n"),
        (
            "netplay/session/mod.rs",
            "mod blobs;\nmod departures;\nuse blobs::Wait;\npub struct Session { wait: Wait }\n",
        ),
        (
            "netplay/session/blobs.rs",
            "use super::Session;\npub struct Wait;\nimpl Session { fn f(&self) { super::departures::leave(); } }\n",
        ),
        (
            "netplay/session/departures.rs",
            "use super::Session;\npub fn leave() {}\nfn g(_: super::blobs::Wait) {}\n",
        ),
    ]);
    assert_eq!(
        rings,
        [vec![
            "netplay::session::blobs",
            "netplay::session::departures"
        ]]
    );
}
