//! Reading a crate's source as the compiler sees its modules: comments and
//! literals blanked (same length, so every offset and line still counts),
//! test-only items removed, and the module tree followed from the crate's
//! roots through every `mod x;`, `mod x { … }` and `#[path]`.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

/// A crate's source: file paths relative to its `src/` and their text.
pub type Tree = BTreeMap<String, String>;

/// A module path from the crate's root (`["engine", "sinks"]`); a binary's
/// root `main.rs` is the module `["main"]`.
pub type ModulePath = Vec<String>;

/// Where one module's code is: its file and, for an inline `mod x { … }`,
/// the body's bytes in that file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleSource {
    /// The file, relative to `src/`.
    pub file: String,
    /// The inline body's byte range, or the whole file.
    pub body: Option<Range<usize>>,
}

/// Every module of a crate that is compiled outside tests.
#[derive(Clone, Debug, Default)]
pub struct Modules {
    /// Each module and where its code is.
    pub by_path: BTreeMap<ModulePath, ModuleSource>,
    /// Each file's code with comments, literals and test-only items blanked.
    pub code: BTreeMap<String, String>,
    /// The files the modules leave out (test-only files, or none at all).
    pub unreached: Vec<String>,
    /// Whether test-only items were kept.
    with_tests: bool,
}

impl Modules {
    /// The module tree of `tree` outside tests, from `lib.rs` and `main.rs`.
    pub fn read(tree: &Tree) -> Modules {
        Modules::read_with(tree, false)
    }

    /// The module tree with the test-only modules too.
    pub fn read_with_tests(tree: &Tree) -> Modules {
        Modules::read_with(tree, true)
    }

    fn read_with(tree: &Tree, with_tests: bool) -> Modules {
        let mut modules = Modules {
            with_tests,
            ..Modules::default()
        };
        for (root, path) in [("lib.rs", vec![]), ("main.rs", vec!["main".to_string()])] {
            if tree.contains_key(root) {
                modules.visit_file(tree, root, path);
            }
        }
        modules.unreached = tree
            .keys()
            .filter(|file| !modules.code.contains_key(file.as_str()))
            .cloned()
            .collect();
        modules
    }

    fn visit_file(&mut self, tree: &Tree, file: &str, path: ModulePath) {
        let Some(text) = tree.get(file) else { return };
        if self.code.contains_key(file) {
            return;
        }
        let code = if self.with_tests {
            code_only(text)
        } else {
            remove_test_items(&code_only(text))
        };
        self.code.insert(file.to_string(), code.clone());
        self.by_path.insert(
            path.clone(),
            ModuleSource {
                file: file.to_string(),
                body: None,
            },
        );
        self.visit_items(
            tree,
            file,
            text,
            &code,
            0..code.len(),
            path,
            children_dir(file),
        );
    }

    /// The `mod` declarations in `range` of `file`, whose children live in
    /// `dir`.
    #[allow(clippy::too_many_arguments)]
    fn visit_items(
        &mut self,
        tree: &Tree,
        file: &str,
        text: &str,
        code: &str,
        range: Range<usize>,
        path: ModulePath,
        dir: String,
    ) {
        for declaration in mod_declarations(code, range) {
            let mut child = path.clone();
            child.push(declaration.name.clone());
            match declaration.body {
                Some(body) => {
                    self.by_path.insert(
                        child.clone(),
                        ModuleSource {
                            file: file.to_string(),
                            body: Some(body.clone()),
                        },
                    );
                    let inner = join_dir(&dir, &declaration.name);
                    self.visit_items(tree, file, text, code, body, child, inner);
                }
                None => {
                    let target = match declaration.path_attribute(text) {
                        // Relative to the declaring file's folder.
                        Some(written) => normalise(&join_dir(&parent_dir(file), &written)),
                        None => {
                            let flat = join_dir(&dir, &format!("{}.rs", declaration.name));
                            let nested = join_dir(&dir, &format!("{}/mod.rs", declaration.name));
                            if tree.contains_key(&nested) && !tree.contains_key(&flat) {
                                nested
                            } else {
                                flat
                            }
                        }
                    };
                    self.visit_file(tree, &target, child);
                }
            }
        }
    }

    /// The file defining module `path`, if it is a module.
    pub fn file_of(&self, path: &[String]) -> Option<&str> {
        self.by_path.get(path).map(|source| source.file.as_str())
    }

    /// The code of module `path` itself: its body, without the bodies of
    /// the inline modules inside it.
    pub fn own_code(&self, path: &[String]) -> Option<(String, Range<usize>)> {
        let source = self.by_path.get(path)?;
        let code = &self.code[&source.file];
        let range = source.body.clone().unwrap_or(0..code.len());
        let mut own = code.clone().into_bytes();
        for (other, inner) in &self.by_path {
            if other.len() > path.len() && other.starts_with(path) && inner.file == source.file {
                if let Some(body) = &inner.body {
                    blank(&mut own, body.clone());
                }
            }
        }
        let own = String::from_utf8(own).expect("blanking keeps text valid");
        Some((own, range))
    }
}

/// One `mod` declaration: its name, its inline body (if any), and where its
/// attributes are.
struct ModDeclaration {
    name: String,
    body: Option<Range<usize>>,
    attributes: Range<usize>,
}

impl ModDeclaration {
    /// The file a `#[path = "…"]` attribute names, read from the text
    /// (the code has its literals blanked, at the same offsets).
    fn path_attribute(&self, text: &str) -> Option<String> {
        let attributes = &text[self.attributes.clone()];
        let at = attributes.find("#[path")?;
        let rest = &attributes[at..];
        let open = rest.find('"')? + 1;
        let close = open + rest[open..].find('"')?;
        Some(rest[open..close].to_string())
    }
}

fn mod_declarations(code: &str, range: Range<usize>) -> Vec<ModDeclaration> {
    let mut found = Vec::new();
    let mut at = range.start;
    while let Some(offset) = code[at..range.end].find("mod ") {
        let start = at + offset;
        at = start + 4;
        if !starts_word(code, start) || !starts_item(code, start) {
            continue;
        }
        let rest = &code[start + 4..range.end];
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        let after_name = start + 4 + (rest.len() - rest.trim_start().len()) + name.len();
        let next = code[after_name..range.end].trim_start();
        let next_at = range.end - next.len();
        let body = if next.starts_with(';') {
            None
        } else if next.starts_with('{') {
            let close = matching_close(code, next_at).unwrap_or(range.end);
            at = close;
            Some(next_at + 1..close)
        } else {
            continue;
        };
        found.push(ModDeclaration {
            name,
            body,
            attributes: attributes_before(code, start)..start,
        });
    }
    found
}

/// Whether `at` begins a word (no identifier character before it).
pub fn starts_word(code: &str, at: usize) -> bool {
    !code[..at]
        .chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Whether the keyword at `at` begins an item: after the start, a `;`, a
/// brace, an attribute or a visibility (`pub`, `pub(crate)`).
pub fn starts_item(code: &str, at: usize) -> bool {
    let before = code[..at].trim_end();
    let before = strip_visibility(before);
    before.is_empty() || before.ends_with([';', '{', '}', ']'])
}

fn strip_visibility(before: &str) -> &str {
    if let Some(stripped) = before.strip_suffix("pub") {
        if starts_word(before, before.len() - 3) {
            return stripped.trim_end();
        }
    }
    if before.ends_with(')') {
        if let Some(open) = before.rfind("pub(") {
            if starts_word(before, open) && !before[open..].contains('\n') {
                return before[..open].trim_end();
            }
        }
    }
    before
}

/// Where the attributes (`#[…]`) and visibility before the item at `at`
/// begin.
fn attributes_before(code: &str, at: usize) -> usize {
    let mut start = at - (code[..at].len() - strip_visibility(code[..at].trim_end()).len());
    loop {
        let before = code[..start].trim_end();
        if !before.ends_with(']') {
            return start;
        }
        match matching_open(code, before.len() - 1) {
            Some(open) if code[..open].ends_with('#') => start = open - 1,
            _ => return start,
        }
    }
}

/// The index of the bracket closing the one at `open` (`{`, `(`, `[`).
pub fn matching_close(code: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (index, c) in code[open..].char_indices() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(open + index);
                }
            }
            _ => {}
        }
    }
    None
}

fn matching_open(code: &str, close: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (index, c) in code[..=close].char_indices().rev() {
        match c {
            '}' | ')' | ']' => depth += 1,
            '{' | '(' | '[' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(index);
                }
            }
            _ => {}
        }
    }
    None
}

/// Where the children of `file`'s module live: beside `mod.rs`, `lib.rs`
/// and `main.rs`, else in the folder named after the file.
fn children_dir(file: &str) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    if matches!(name, "mod.rs" | "lib.rs" | "main.rs") {
        parent_dir(file)
    } else {
        file.trim_end_matches(".rs").to_string()
    }
}

fn parent_dir(file: &str) -> String {
    file.rsplit_once('/')
        .map_or(String::new(), |(dir, _)| dir.to_string())
}

fn join_dir(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// `a/./b/../c.rs` → `a/c.rs`.
fn normalise(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "." | "" => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

fn blank(bytes: &mut [u8], range: Range<usize>) {
    for byte in &mut bytes[range] {
        if *byte != b'\n' {
            *byte = b' ';
        }
    }
}

/// The text with comments and the insides of string and character
/// literals blanked, byte for byte, so offsets and lines stay as they were.
pub fn code_only(text: &str) -> String {
    let mut out = text.as_bytes().to_vec();
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let blank_len = if rest.starts_with("//") {
            rest.find('\n').unwrap_or(rest.len())
        } else if rest.starts_with("/*") {
            block_comment_len(rest)
        } else if let Some(len) = raw_string_len(rest) {
            len
        } else if rest.starts_with('"') {
            quoted_len(rest)
        } else if let Some(len) = char_literal_len(rest) {
            len
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let literal = !rest.starts_with('/');
        blank(&mut out, i..i + blank_len);
        if literal {
            // Keep the quotes, so a literal still reads as one.
            out[i] = b'"';
            out[i + blank_len - 1] = b'"';
        }
        i += blank_len;
    }
    String::from_utf8(out).expect("blanking keeps text valid")
}

/// A block comment's length; they nest.
fn block_comment_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    let (mut depth, mut i) = (0, 0);
    while i + 1 < bytes.len() {
        if bytes[i] == b'/' && bytes[i + 1] == b'*' {
            depth += 1;
            i += 2;
        } else if bytes[i] == b'*' && bytes[i + 1] == b'/' {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    text.len()
}

fn quoted_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut j = 1;
    while j < bytes.len() && bytes[j] != b'"' {
        j += if bytes[j] == b'\\' { 2 } else { 1 };
    }
    (j + 1).min(text.len())
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
    let body_len = if let Some(escaped) = rest.strip_prefix('\\') {
        escaped.find('\'')? + 1
    } else {
        rest.chars().next()?.len_utf8()
    };
    (rest[body_len..].starts_with('\'')).then_some(body_len + 2)
}

/// The code with every `#[cfg(test)]` item blanked: a module with a body
/// or without one (`mod tests;`, whose file is then never read), a `use`,
/// a function, an `impl`.
pub fn remove_test_items(code: &str) -> String {
    let mut out = code.as_bytes().to_vec();
    let mut from = 0;
    while let Some(offset) = code[from..].find("#[cfg(test)]") {
        let at = from + offset;
        let end = item_end(code, at + "#[cfg(test)]".len()).unwrap_or(code.len());
        blank(&mut out, at..end);
        from = end;
    }
    String::from_utf8(out).expect("blanking keeps text valid")
}

/// The end of the item starting at or after `from`: just past its first
/// `;` outside brackets, or its first braced block.
fn item_end(code: &str, from: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (index, c) in code[from..].char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ';' if depth == 0 => return Some(from + index + 1),
            '{' if depth == 0 => return matching_close(code, from + index).map(|close| close + 1),
            _ => {}
        }
    }
    None
}

/// Every `.rs` file under `root`, relative to it.
pub fn read_tree(root: &Path) -> Tree {
    fn walk(dir: &Path, root: &Path, tree: &mut Tree) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|error| panic!("{} is not readable: {error}", dir.display()))
            .map(|entry| entry.expect("a directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, root, tree);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let relative = path.strip_prefix(root).expect("a path under the root");
                let text = std::fs::read_to_string(&path).expect("a source file is text");
                tree.insert(relative.to_string_lossy().replace('\\', "/"), text);
            }
        }
    }
    let mut tree = Tree::new();
    walk(root, root, &mut tree);
    tree
}

/// The 1-based line of byte `at`.
pub fn line_of(code: &str, at: usize) -> usize {
    code[..at].matches('\n').count() + 1
}
