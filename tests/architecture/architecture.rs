//! The crate's layers stay as `docs/design.md` draws them: this test reads
//! every `use` and every path written out in `src/` and fails when a lower
//! layer reaches up (the engine into the window, a pure layer into sockets
//! or the libretro host, …) or when files import each other in a ring.
//!
//! Production code only: a `#[cfg(test)]` module may use whatever helps it
//! test. A `pub use` of a module's own children (a facade) is followed to
//! the file that defines the item rather than counted as an import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// What each top-level module may import (besides itself). Everything not
/// listed for a module is forbidden to it.
const LAYERS: &[(&str, &[&str])] = &[
    ("input", &[]),
    ("paths", &[]),
    ("diff", &[]),
    ("emulator", &["input"]),
    ("checksum", &["emulator", "input"]),
    ("libretro", &["emulator", "input", "paths"]),
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
    ("net", &["protocol"]),
    (
        "engine",
        &[
            "netplay", "net", "protocol", "replay", "audio", "rollback", "encoding", "libretro",
            "input", "emulator", "checksum", "diff", "paths",
        ],
    ),
    (
        "gui",
        &[
            "engine", "netplay", "net", "protocol", "replay", "audio", "rollback", "encoding",
            "libretro", "input", "emulator", "checksum", "diff", "paths",
        ],
    ),
    (
        "commands",
        &[
            "gui", "engine", "netplay", "net", "protocol", "replay", "audio", "rollback",
            "encoding", "libretro", "input", "emulator", "checksum", "diff", "paths",
        ],
    ),
    ("main", &["commands", "engine"]),
];

/// Folders whose files may import each other in a ring (the FFI layer's
/// callbacks and the core they call back into).
const RINGS_ALLOWED_UNDER: &[&str] = &["libretro/"];

/// A source tree: paths relative to `src/` and their text.
type Tree = BTreeMap<String, String>;

/// One import: the file that makes it, the line, the path as written, the
/// file it resolves to.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Import {
    from: String,
    line: usize,
    path: String,
    to: String,
}

fn read_tree(root: &Path) -> Tree {
    fn walk(dir: &Path, root: &Path, tree: &mut Tree) {
        for entry in std::fs::read_dir(dir).expect("src/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(&path, root, tree);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let relative = path.strip_prefix(root).unwrap();
                let text = std::fs::read_to_string(&path).expect("a source file is text");
                tree.insert(relative.to_string_lossy().replace('\\', "/"), text);
            }
        }
    }
    let mut tree = Tree::new();
    walk(root, root, &mut tree);
    tree
}

/// The text with comments, string and character literals blanked out
/// (newlines kept, so lines still count), and `#[cfg(test)]` modules removed.
fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            i += end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |at| at + 2);
            out.extend(rest[..end].chars().filter(|&c| c == '\n'));
            i += end;
        } else if let Some(len) = raw_string_len(rest) {
            out.extend(rest[..len].chars().filter(|&c| c == '\n'));
            out.push_str("\"\"");
            i += len;
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < rest.len() && rest.as_bytes()[j] != b'"' {
                j += if rest.as_bytes()[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(rest.len());
            out.extend(rest[..end].chars().filter(|&c| c == '\n'));
            out.push_str("\"\"");
            i += end;
        } else if let Some(len) = char_literal_len(rest) {
            out.push_str("' '");
            i += len;
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    remove_test_modules(&out)
}

/// `r"…"`, `r#"…"#`, `br"…"`: their length, if `text` starts with one.
fn raw_string_len(text: &str) -> Option<usize> {
    let body = text.strip_prefix("br").or_else(|| text.strip_prefix('r'))?;
    let hashes = body.len() - body.trim_start_matches('#').len();
    let after = body[hashes..].strip_prefix('"')?;
    let close = format!("\"{}", "#".repeat(hashes));
    let end = after.find(&close)?;
    Some(text.len() - after.len() + end + close.len())
}

/// `'x'`, `'\n'`, `'\u{1F600}'`: their length, if `text` starts with one
/// (a lifetime such as `'a` is not a literal).
fn char_literal_len(text: &str) -> Option<usize> {
    let rest = text.strip_prefix('\'')?;
    let body_len = if rest.starts_with('\\') {
        rest.find('\'')?
    } else {
        rest.chars().next()?.len_utf8()
    };
    (rest[body_len..].starts_with('\'')).then_some(body_len + 2)
}

fn remove_test_modules(code: &str) -> String {
    let mut out = code.to_string();
    while let Some(at) = out.find("#[cfg(test)]") {
        let after = &out[at..];
        let Some(open) = after.find('{') else { break };
        // Only a module: `#[cfg(test)] mod tests {` (other attributes may stand between).
        if !after[..open].contains("mod ") {
            out.replace_range(at..at + "#[cfg(test)]".len(), "");
            continue;
        }
        let mut depth = 0;
        let mut end = after.len();
        for (index, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + index + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        let newlines: String = after[..end].chars().filter(|&c| c == '\n').collect();
        out.replace_range(at..at + end, &newlines);
    }
    out
}

/// The module path of a file (`engine/sinks/mod.rs` → `engine::sinks`);
/// `main.rs` is the binary's root, named `main`.
fn module_of(file: &str) -> Vec<String> {
    let stem = file.trim_end_matches(".rs");
    let mut parts: Vec<String> = stem.split('/').map(str::to_string).collect();
    if parts
        .last()
        .is_some_and(|last| last == "mod" || last == "lib")
    {
        parts.pop();
    }
    parts
}

/// The file defining module `segments`, if any.
fn module_file(tree: &Tree, segments: &[String]) -> Option<String> {
    if segments.is_empty() {
        return Some("lib.rs".into());
    }
    let joined = segments.join("/");
    [format!("{joined}.rs"), format!("{joined}/mod.rs")]
        .into_iter()
        .find(|candidate| tree.contains_key(candidate))
}

/// Every path a `use` tree names, expanded (`a::{b, c::d}` → `a::b`,
/// `a::c::d`); aliases and globs keep their path.
fn expand_use_tree(tree: &str) -> Vec<String> {
    fn expand(prefix: &str, text: &str, out: &mut Vec<String>) {
        let text = text.trim();
        if let Some(open) = text.find('{') {
            let head = text[..open].trim().trim_end_matches("::");
            let inner = &text[open + 1..text.rfind('}').unwrap_or(text.len())];
            let prefix = join_path(prefix, head);
            for part in split_top_level(inner) {
                expand(&prefix, part, out);
            }
        } else {
            let path = text.split(" as ").next().unwrap_or(text).trim();
            let path = path.trim_end_matches("::*");
            if path == "self" {
                out.push(prefix.to_string());
            } else if !path.is_empty() {
                out.push(join_path(prefix, path));
            }
        }
    }
    let mut out = Vec::new();
    expand("", tree, &mut out);
    out
}

fn join_path(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.is_empty()) {
        (true, _) => path.to_string(),
        (_, true) => prefix.to_string(),
        _ => format!("{prefix}::{path}"),
    }
}

fn split_top_level(text: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (index, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
        .into_iter()
        .filter(|part| !part.trim().is_empty())
        .collect()
}

/// The `use` statements of `code`: (line, whether it is `pub`, its tree),
/// and the code with them blanked out.
fn use_statements(code: &str) -> (Vec<(usize, bool, String)>, String) {
    let mut statements = Vec::new();
    let mut rest = code.to_string();
    let mut search = 0;
    while let Some(found) = find_use(&rest, search) {
        let (start, tree_start, public) = found;
        let Some(end) = rest[tree_start..].find(';').map(|at| tree_start + at) else {
            break;
        };
        let line = rest[..start].matches('\n').count() + 1;
        statements.push((line, public, rest[tree_start..end].to_string()));
        let newlines: String = rest[start..=end].chars().filter(|&c| c == '\n').collect();
        rest.replace_range(start..=end, &newlines);
        search = start + newlines.len();
    }
    (statements, rest)
}

/// The next `use` keyword at a statement's start from `from`: (start of the
/// statement, start of its tree, whether it is `pub`).
fn find_use(code: &str, from: usize) -> Option<(usize, usize, bool)> {
    let mut at = from;
    while let Some(found) = code[at..].find("use ") {
        let index = at + found;
        at = index + 4;
        let before = code[..index].trim_end();
        let word_start = index == 0
            || !code[..index]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
        if !word_start {
            continue;
        }
        // `pub use`, `pub(crate) use`, or a plain `use` after a statement.
        let (start, public) = match before.rfind("pub") {
            Some(pub_at)
                if before[pub_at..].starts_with("pub") && is_visibility(&before[pub_at..]) =>
            {
                (
                    pub_at,
                    !before[pub_at..].starts_with("pub(crate)")
                        && !before[pub_at..].starts_with("pub(super)"),
                )
            }
            _ => (index, false),
        };
        let statement_start = code[..start].trim_end();
        if statement_start.is_empty() || statement_start.ends_with([';', '{', '}', ']']) {
            return Some((start, index + 4, public));
        }
    }
    None
}

fn is_visibility(text: &str) -> bool {
    let text = text.trim();
    text == "pub" || (text.starts_with("pub(") && text.ends_with(')'))
}

/// Paths written out in code (`crate::a::b`, `super::c`, `netcade::d`).
fn inline_paths(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (index, line) in code.lines().enumerate() {
        let mut at = 0;
        while at < line.len() {
            let rest = &line[at..];
            let start = ["crate::", "super::", "netcade::"]
                .iter()
                .filter_map(|root| rest.find(root))
                .min();
            let Some(start) = start else { break };
            let absolute = at + start;
            let preceded = line[..absolute]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
            let path: String = line[absolute..]
                .chars()
                .take_while(|&c| c.is_alphanumeric() || c == '_' || c == ':')
                .collect();
            if !preceded {
                found.push((index + 1, path.trim_end_matches(':').to_string()));
            }
            at = absolute + path.len().max(1);
        }
    }
    found
}

/// The segments of `path` from the library's root, for code in `file`.
fn absolute_segments(file: &str, path: &str) -> Option<Vec<String>> {
    let mut segments: Vec<String> = path.split("::").map(str::to_string).collect();
    let mut base = module_of(file);
    if file == "main.rs" {
        base.clear();
    }
    match segments.first().map(String::as_str) {
        Some("crate") if file == "main.rs" => None,
        Some("crate") | Some("netcade") => {
            segments.remove(0);
            Some(segments)
        }
        Some("super") => {
            while segments.first().is_some_and(|s| s == "super") {
                segments.remove(0);
                base.pop()?;
            }
            base.extend(segments);
            Some(base)
        }
        Some("self") => {
            segments.remove(0);
            base.extend(segments);
            Some(base)
        }
        _ => None,
    }
}

/// `pub use` re-exports of the module in `file`: item name → the path it
/// re-exports (absolute).
fn re_exports(tree: &Tree, file: &str) -> BTreeMap<String, Vec<String>> {
    let code = code_only(&tree[file]);
    let (statements, _) = use_statements(&code);
    let mut names = BTreeMap::new();
    let module = module_of(file);
    for (_, public, use_tree) in statements.into_iter().filter(|s| s.1) {
        let _ = public;
        for path in expand_use_tree(&use_tree) {
            let segments = match absolute_segments(file, &path) {
                Some(segments) => segments,
                // `pub use child::Item` is relative to the module itself.
                None => module
                    .iter()
                    .cloned()
                    .chain(path.split("::").map(str::to_string))
                    .collect(),
            };
            if let Some(name) = segments.last() {
                names.insert(name.clone(), segments);
            }
        }
    }
    names
}

/// The file that defines what `segments` names: the deepest module file
/// along it, followed through re-exports of the item that comes after.
fn resolve(tree: &Tree, segments: &[String], depth: usize) -> Option<String> {
    let mut file = module_file(tree, &[])?;
    let mut consumed = 0;
    for end in 1..=segments.len() {
        match module_file(tree, &segments[..end]) {
            Some(found) => {
                file = found;
                consumed = end;
            }
            None => break,
        }
    }
    if consumed < segments.len() && depth < 8 {
        if let Some(target) = re_exports(tree, &file).get(&segments[consumed]) {
            let mut followed = target.clone();
            followed.extend(segments[consumed + 1..].iter().cloned());
            if followed != segments {
                return resolve(tree, &followed, depth + 1).or(Some(file));
            }
        }
    }
    Some(file)
}

/// Every import in the tree, resolved to the file it reaches.
fn imports(tree: &Tree) -> Vec<Import> {
    let mut all = Vec::new();
    for (file, text) in tree {
        let code = code_only(text);
        let (statements, rest) = use_statements(&code);
        let own_dir = module_of(file).join("/");
        let mut paths: Vec<(usize, bool, String)> = statements
            .iter()
            .flat_map(|(line, public, use_tree)| {
                expand_use_tree(use_tree)
                    .into_iter()
                    .map(move |path| (*line, *public, path))
            })
            .collect();
        paths.extend(
            inline_paths(&rest)
                .into_iter()
                .map(|(line, path)| (line, false, path)),
        );
        for (line, public, path) in paths {
            let Some(segments) = absolute_segments(file, &path) else {
                continue;
            };
            let Some(to) = resolve(tree, &segments, 0) else {
                continue;
            };
            // A facade re-exporting its own children is not an import.
            let into_own_children = !own_dir.is_empty() && to.starts_with(&format!("{own_dir}/"));
            if to == *file || to == "lib.rs" || (public && into_own_children) {
                continue;
            }
            all.push(Import {
                from: file.clone(),
                line,
                path,
                to,
            });
        }
    }
    all
}

fn top_module(file: &str) -> String {
    module_of(file)
        .first()
        .cloned()
        .unwrap_or_else(|| "main".into())
}

/// Imports that reach a layer their module may not import.
fn layer_violations(imports: &[Import]) -> Vec<String> {
    let allowed: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    imports
        .iter()
        .filter_map(|import| {
            let (from, to) = (top_module(&import.from), top_module(&import.to));
            if from == to {
                return None;
            }
            let ok = allowed
                .get(from.as_str())
                .is_some_and(|may| may.contains(&to.as_str()));
            (!ok).then(|| {
                format!(
                    "src/{}:{}: `{}` ({from} may not import {to})",
                    import.from, import.line, import.path
                )
            })
        })
        .collect()
}

/// Rings of files importing each other (strongly connected groups of two
/// or more files), outside the folders where rings are allowed.
fn import_rings(imports: &[Import]) -> Vec<Vec<String>> {
    let ringed = |file: &str| !RINGS_ALLOWED_UNDER.iter().any(|dir| file.starts_with(dir));
    let mut edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for import in imports.iter().filter(|i| ringed(&i.from) && ringed(&i.to)) {
        edges.entry(&import.from).or_default().insert(&import.to);
        edges.entry(&import.to).or_default();
    }
    // Tarjan's strongly connected components.
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

fn source_tree() -> Tree {
    read_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn no_layer_imports_a_layer_above_it() {
    let violations = layer_violations(&imports(&source_tree()));
    assert!(
        violations.is_empty(),
        "imports that reach up a layer (see LAYERS in this test and docs/design.md):\n{}",
        violations.join("\n")
    );
}

#[test]
fn no_files_import_each_other_in_a_ring() {
    let rings = import_rings(&imports(&source_tree()));
    assert!(
        rings.is_empty(),
        "files that import each other (move what they share into one of them, or below both):\n{}",
        rings
            .iter()
            .map(|ring| ring.join(" ↔ "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn every_top_level_module_has_a_place_in_the_layers() {
    let known: BTreeSet<&str> = LAYERS.iter().map(|(name, _)| *name).collect();
    let unplaced: BTreeSet<String> = source_tree()
        .keys()
        .filter(|file| file.as_str() != "lib.rs")
        .map(|file| top_module(file))
        .filter(|module| !known.contains(module.as_str()))
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules missing from LAYERS: {unplaced:?}"
    );
}

fn tree_of(files: &[(&str, &str)]) -> Tree {
    files
        .iter()
        .map(|(path, text)| (path.to_string(), text.to_string()))
        .collect()
}

#[test]
fn an_engine_file_importing_the_window_is_caught_with_its_line() {
    let tree = tree_of(&[
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
        layer_violations(&imports(&tree)),
        ["src/engine/live.rs:2: `crate::gui::window::Window` (engine may not import gui)"]
    );
}

#[test]
fn a_pure_layer_naming_a_socket_inline_or_in_a_group_is_caught() {
    let tree = tree_of(&[
        ("lib.rs", ""),
        ("net/mod.rs", "pub struct UdpTransport;\n"),
        ("libretro/mod.rs", "pub struct Core;\n"),
        (
            "rollback/session.rs",
            "use crate::{libretro::Core, input};\nfn f() { let _ = crate::net::UdpTransport; }\n",
        ),
    ]);
    let violations = layer_violations(&imports(&tree));
    assert_eq!(violations.len(), 2, "{violations:#?}");
    assert!(violations[0].contains("rollback may not import libretro"));
    assert!(violations[1].contains("src/rollback/session.rs:2") && violations[1].contains("net"));
}

#[test]
fn two_files_importing_each_other_are_a_ring_even_through_a_third() {
    let tree = tree_of(&[
        ("lib.rs", ""),
        ("engine/mod.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        ("engine/a.rs", "use super::b::B;\npub struct A;\n"),
        ("engine/b.rs", "use crate::engine::c::C;\npub struct B;\n"),
        (
            "engine/c.rs",
            "pub struct C;\nfn f(_: crate::engine::a::A) {}\n",
        ),
    ]);
    assert_eq!(
        import_rings(&imports(&tree)),
        [vec!["engine/a.rs", "engine/b.rs", "engine/c.rs"]]
    );
}

#[test]
fn a_facade_re_export_comments_strings_and_test_modules_are_not_imports() {
    let tree = tree_of(&[
        ("lib.rs", ""),
        ("engine/mod.rs", "mod game;\npub use game::{open_game, Game};\npub fn helper() {}\n"),
        (
            "engine/game.rs",
            "use crate::engine::helper;\n// crate::gui::Window\nconst S: &str = \"crate::gui::x\";\n\
             pub fn open_game() {}\n#[cfg(test)]\nmod tests {\n    use crate::gui::Window;\n}\n",
        ),
        ("engine/run.rs", "use crate::engine::open_game;\n"),
    ]);
    let found = imports(&tree);
    assert!(layer_violations(&found).is_empty(), "{found:#?}");
    assert!(import_rings(&found).is_empty(), "{found:#?}");
    // The facade is seen through: `run` imports the file that defines it.
    assert!(found
        .iter()
        .any(|import| import.from == "engine/run.rs" && import.to == "engine/game.rs"));
}
