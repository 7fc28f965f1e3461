//! Every import a crate's modules make, resolved to the file that defines
//! what it names: `use` trees (groups, aliases, globs, re-exports) and paths
//! written out in code, from `crate::`, `super::`, `self::`, a child
//! module's name, or the crate's own name (in its binary).

use crate::source::{line_of, starts_item, starts_word, ModulePath, Modules, Tree};
use std::collections::{BTreeMap, BTreeSet};

/// One import: the file that makes it, the line, the path as written, the
/// module it is written in and the file it resolves to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Import {
    /// The importing file, relative to `src/`.
    pub from: String,
    /// The module it is written in.
    pub module: ModulePath,
    /// Its line (1-based).
    pub line: usize,
    /// The path as written.
    pub path: String,
    /// The file defining what it names.
    pub to: String,
    /// The module path it names, from the crate's root.
    pub target: ModulePath,
}

/// A path written in one module, before it is resolved.
struct Written {
    line: usize,
    public: bool,
    glob: bool,
    path: String,
}

/// A crate read for its imports.
pub struct Crate {
    modules: Modules,
    /// The crate's own name, as its binary writes it (`netcade`).
    lib_name: String,
}

impl Crate {
    /// `tree` read as the crate `lib_name`.
    pub fn read(tree: &Tree, lib_name: &str) -> Crate {
        Crate {
            modules: Modules::read(tree),
            lib_name: lib_name.to_string(),
        }
    }

    /// The modules of the crate.
    pub fn modules(&self) -> &Modules {
        &self.modules
    }

    /// Every import in the crate.
    pub fn imports(&self) -> Vec<Import> {
        let mut all = Vec::new();
        for (module, source) in &self.modules.by_path {
            for written in self.written_in(module) {
                let Some(target) = self.absolute(module, &written.path) else {
                    continue;
                };
                let Some((to, target)) = self.resolve(&target, 0) else {
                    continue;
                };
                let own_file = source.file.as_str();
                // A facade re-exporting its own children is not an import.
                let into_own_children = written.public && target.starts_with(module);
                let root = self.modules.file_of(&[]) == Some(to.as_str());
                if to == own_file || root || into_own_children {
                    continue;
                }
                all.push(Import {
                    from: own_file.to_string(),
                    module: module.clone(),
                    line: written.line,
                    path: written.path,
                    to,
                    target,
                });
            }
        }
        all
    }

    /// The paths written in `module`'s own code: its `use` trees and the
    /// paths in its code.
    fn written_in(&self, module: &[String]) -> Vec<Written> {
        let Some((code, range)) = self.modules.own_code(module) else {
            return Vec::new();
        };
        let mut written = Vec::new();
        let mut rest = code.clone().into_bytes();
        for statement in use_statements(&code, range.clone()) {
            for (path, glob) in expand_use_tree(&code[statement.tree.clone()]) {
                written.push(Written {
                    line: line_of(&code, statement.tree.start),
                    public: statement.public,
                    glob,
                    path,
                });
            }
            for byte in &mut rest[statement.whole.clone()] {
                if *byte != b'\n' {
                    *byte = b' ';
                }
            }
        }
        let rest = String::from_utf8(rest).expect("blanking keeps text valid");
        let children = self.children(module);
        for (at, path) in inline_paths(&rest, range, &children, &self.lib_name) {
            written.push(Written {
                line: line_of(&code, at),
                public: false,
                glob: false,
                path,
            });
        }
        written
    }

    /// The names of `module`'s child modules.
    fn children(&self, module: &[String]) -> BTreeSet<String> {
        self.modules
            .by_path
            .keys()
            .filter(|path| path.len() == module.len() + 1 && path.starts_with(module))
            .map(|path| path[module.len()].clone())
            .collect()
    }

    /// The module path `path` names from `module`, if it names something
    /// in this crate.
    fn absolute(&self, module: &[String], path: &str) -> Option<ModulePath> {
        let mut segments: Vec<String> = path.split("::").map(str::to_string).collect();
        let in_binary = module.first().is_some_and(|first| first == "main");
        let first = segments.first()?.clone();
        let mut base: ModulePath = module.to_vec();
        match first.as_str() {
            "crate" => {
                segments.remove(0);
                base = if in_binary {
                    vec!["main".to_string()]
                } else {
                    Vec::new()
                };
            }
            name if name == self.lib_name => {
                segments.remove(0);
                base.clear();
            }
            "super" => {
                while segments.first().is_some_and(|s| s == "super") {
                    segments.remove(0);
                    base.pop()?;
                }
            }
            "self" => {
                segments.remove(0);
            }
            name if self.children(module).contains(name) => {}
            _ => return None,
        }
        base.extend(segments);
        Some(base)
    }

    /// The file that defines what `path` names, and the module path of that
    /// definition: the deepest module along it, followed through the
    /// re-exports of the item that comes after.
    fn resolve(&self, path: &[String], depth: usize) -> Option<(String, ModulePath)> {
        let mut consumed = 0;
        for end in 0..=path.len() {
            if self.modules.by_path.contains_key(&path[..end]) {
                consumed = end;
            } else {
                break;
            }
        }
        let module = &path[..consumed];
        let file = self.modules.file_of(module)?.to_string();
        if consumed == path.len() || depth >= 8 {
            return Some((file, module.to_vec()));
        }
        let item = &path[consumed];
        let exports = self.re_exports(module);
        if let Some(target) = exports.named.get(item) {
            let mut followed = target.clone();
            followed.extend(path[consumed + 1..].iter().cloned());
            if followed != path {
                return self
                    .resolve(&followed, depth + 1)
                    .or(Some((file, module.to_vec())));
            }
        }
        if !self.defines(module, item) {
            for glob in &exports.globs {
                let mut followed = glob.clone();
                followed.extend(path[consumed..].iter().cloned());
                if let Some(found) = self.resolve(&followed, depth + 1) {
                    if self.defines(&found.1, item) || found.1 != *glob {
                        return Some(found);
                    }
                }
            }
        }
        Some((file, module.to_vec()))
    }

    /// Whether `module`'s own code defines an item called `name`.
    fn defines(&self, module: &[String], name: &str) -> bool {
        let Some((code, range)) = self.modules.own_code(module) else {
            return false;
        };
        const KINDS: [&str; 9] = [
            "struct", "enum", "fn", "const", "static", "type", "trait", "union", "mod",
        ];
        let body = &code[range];
        KINDS.iter().any(|kind| {
            let needle = format!("{kind} {name}");
            body.match_indices(&needle).any(|(at, _)| {
                let end = at + needle.len();
                starts_word(body, at)
                    && !body[end..]
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        }) || body.contains(&format!("macro_rules! {name}"))
    }

    /// `pub use` re-exports of `module`: item name → the path it
    /// re-exports, and the modules it re-exports whole (`pub use x::*`).
    fn re_exports(&self, module: &[String]) -> ReExports {
        let mut exports = ReExports::default();
        for written in self.written_in(module).into_iter().filter(|w| w.public) {
            let Some(target) = self.absolute(module, &written.path) else {
                continue;
            };
            if written.glob {
                exports.globs.push(target);
            } else if let Some(name) = written.path.rsplit("::").next() {
                let name = name.to_string();
                exports.named.insert(name, target);
            }
        }
        exports
    }
}

#[derive(Default)]
struct ReExports {
    named: BTreeMap<String, ModulePath>,
    globs: Vec<ModulePath>,
}

/// One `use` statement: its whole extent, its tree, whether it is `pub`.
struct UseStatement {
    whole: std::ops::Range<usize>,
    tree: std::ops::Range<usize>,
    public: bool,
}

fn use_statements(code: &str, range: std::ops::Range<usize>) -> Vec<UseStatement> {
    let mut found = Vec::new();
    let mut at = range.start;
    while let Some(offset) = code[at..range.end].find("use ") {
        let index = at + offset;
        at = index + 4;
        if !starts_word(code, index) || !starts_item(code, index) {
            continue;
        }
        let before = code[..index].trim_end();
        let visibility = ["pub(crate)", "pub(super)", "pub(self)", "pub"]
            .into_iter()
            .find(|v| before.ends_with(v) && starts_word(before, before.len() - v.len()));
        let public = visibility == Some("pub");
        let start = visibility.map_or(index, |v| before.len() - v.len());
        let Some(end) = code[index..range.end].find(';').map(|end| index + end) else {
            break;
        };
        found.push(UseStatement {
            whole: start..end + 1,
            tree: index + 4..end,
            public,
        });
        at = end + 1;
    }
    found
}

/// Every path a `use` tree names, expanded (`a::{b, c::d}` → `a::b`,
/// `a::c::d`; `a::{self}` → `a`), each with whether it is a glob.
pub fn expand_use_tree(tree: &str) -> Vec<(String, bool)> {
    fn expand(prefix: &str, text: &str, out: &mut Vec<(String, bool)>) {
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
            let glob = path.ends_with('*');
            let path = path.trim_end_matches('*').trim_end_matches("::");
            if path == "self" {
                out.push((prefix.to_string(), glob));
            } else if !path.is_empty() {
                out.push((join_path(prefix, path), glob));
            } else if glob {
                out.push((prefix.to_string(), true));
            }
        }
    }
    let compact: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let compact = compact.replace(":: ", "::").replace(" ::", "::");
    let mut out = Vec::new();
    expand("", &compact, &mut out);
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

/// Paths written out in code: starting at a word that is `crate`, `super`,
/// `self`, the crate's own name or a child module's name, followed by `::`
/// (and not itself after `::`). Byte offset and path.
fn inline_paths(
    code: &str,
    range: std::ops::Range<usize>,
    children: &BTreeSet<String>,
    lib_name: &str,
) -> Vec<(usize, String)> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut at = range.start;
    while at < range.end {
        let c = bytes[at];
        if !(c.is_ascii_alphabetic() || c == b'_') || !starts_word(code, at) {
            at += 1;
            continue;
        }
        let end = code[at..range.end]
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .map_or(range.end, |len| at + len);
        let path = code[at..end].trim_end_matches(':');
        let first = path.split("::").next().unwrap_or("");
        let after_colons = code[..at].ends_with("::");
        let rooted = matches!(first, "crate" | "super" | "self")
            || first == lib_name
            || children.contains(first);
        if rooted && path.contains("::") && !after_colons {
            found.push((at, path.to_string()));
        }
        at = end.max(at + 1);
    }
    found
}
