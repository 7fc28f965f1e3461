//! The README and the manual in docs/ work as written: every command line in
//! their ```sh blocks is taken from README.md and docs/*.md themselves and run
//! through the built `netcade`, with nothing telling netcade where the Duel
//! core is. The commands of one block run in order in one scratch directory
//! that sees the repository's files, so outputs written to the current
//! directory do not land in the repository and a block can write a file and
//! then read it. An edit that breaks a command, adds one this test does not
//! know how to run, or links to a file or heading that is not there fails
//! here.

use std::path::{Component, Path, PathBuf};
use support::cli::{netcade_as_user, stderr};

/// Where the documents say the fetched cores and ROMs are.
const README_CONTENT_DIR: &str = "~/.cache/netcade/test-content/";

/// The subcommands the README itself shows on Duel, so a reader sees each
/// of them work without opening the manual.
const README_SUBCOMMANDS: [&str; 4] = ["run", "synctest", "debug", "demo"];

/// A document whose commands and links this test checks.
struct Document {
    /// The path from the repository's root, e.g. `docs/commands.md`.
    path: String,
    text: String,
}

/// One command line of a document, continuation lines joined.
#[derive(Debug)]
struct DocCommand {
    document: String,
    /// Which ```sh block of the document it is in, counted from 0.
    block: usize,
    /// 1-based line of the document where the command starts.
    line: usize,
    words: Vec<String>,
}

impl DocCommand {
    /// `document:line`, as a message names the command.
    fn at(&self) -> String {
        format!("{}:{}", self.document, self.line)
    }
}

/// What this test does with a command of the documents.
#[derive(Debug, PartialEq)]
enum Plan {
    /// Run netcade with these arguments.
    Netcade(Vec<String>),
    /// Not run by this test, for the reason given.
    NotRunHere(&'static str),
}

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, then docs/*.md in name order.
fn documents() -> Vec<Document> {
    let mut paths: Vec<String> = std::fs::read_dir(repository().join("docs"))
        .expect("docs/ is readable")
        .map(|entry| entry.expect("a directory entry").file_name())
        .filter_map(|name| name.to_str().map(str::to_string))
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    paths.sort();
    paths.insert(0, "README.md".to_string());
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(repository().join(&path))
                .unwrap_or_else(|error| panic!("{path} is readable: {error}"));
            Document { path, text }
        })
        .collect()
}

fn readme() -> Document {
    documents().remove(0)
}

/// The command lines of every ```sh block: `\` joins a line with the next,
/// `#` after a space starts a comment.
fn sh_commands(document: &str, text: &str) -> Vec<DocCommand> {
    let mut commands = Vec::new();
    let mut in_sh_block = false;
    let mut blocks = 0;
    let mut pending: Option<DocCommand> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_sh_block = !in_sh_block && trimmed == "```sh";
            blocks += usize::from(in_sh_block);
            continue;
        }
        if !in_sh_block {
            continue;
        }
        let code = match trimmed.find(" #") {
            Some(at) => &trimmed[..at],
            None if trimmed.starts_with('#') => "",
            None => trimmed,
        };
        let (code, continues) = match code.trim_end().strip_suffix('\\') {
            Some(head) => (head, true),
            None => (code, false),
        };
        let command = pending.get_or_insert_with(|| DocCommand {
            document: document.to_string(),
            block: blocks - 1,
            line: index + 1,
            words: Vec::new(),
        });
        command
            .words
            .extend(code.split_whitespace().map(str::to_string));
        if !continues {
            let command = pending.take().expect("a command is being read");
            if !command.words.is_empty() {
                commands.push(command);
            }
        }
    }
    commands
}

fn all_sh_commands() -> Vec<DocCommand> {
    documents()
        .iter()
        .flat_map(|document| sh_commands(&document.path, &document.text))
        .collect()
}

/// How to carry out `command`, or why this test cannot.
fn plan(command: &DocCommand) -> Result<Plan, String> {
    let words: Vec<&str> = command.words.iter().map(String::as_str).collect();
    if let Some(word) = words
        .iter()
        .find(|word| word.contains(['|', '>', '<', '$', '"', '\'', ';', '&', '`']))
    {
        return Err(format!(
            "{}: `{word}` is shell syntax; examples are plain command lines",
            command.at()
        ));
    }
    let netcade_args = match words.as_slice() {
        ["netcade", args @ ..] => args,
        ["cargo", "run", "--release", "--", args @ ..] => args,
        ["cargo", "test", ..] => return Ok(Plan::NotRunHere("it is this test run")),
        ["cargo", "bench", ..]
        | ["scripts/bench-host-overhead", ..]
        | ["scripts/bench-netplay", ..]
        | ["scripts/bench-party", ..]
        | ["scripts/bench-replay", ..]
        | ["scripts/bench-state-trial", ..]
        | ["scripts/bench-audio", ..]
        | ["scripts/bench-run-ahead", ..]
        | ["scripts/bench-match-profile", ..] => {
            return Ok(Plan::NotRunHere("benchmarks run on their own"))
        }
        ["cargo", "+nightly", "fuzz", ..] => {
            return Ok(Plan::NotRunHere(
                "fuzzing needs nightly and runs on its own",
            ))
        }
        ["cargo", "build", ..] => return Ok(Plan::NotRunHere("cargo built this test")),
        ["scripts/fetch-test-content", ..] => {
            return Ok(Plan::NotRunHere(
                "it downloads; the tests read what it fetched",
            ))
        }
        _ => {
            return Err(format!(
                "{}: this test does not know how to run `{}`",
                command.at(),
                words.join(" ")
            ))
        }
    };
    // What is in target/ depends on which cargo commands the reader ran
    // (and this clone has built everything), so the run below proves
    // nothing about such a path after the quick start.
    if let Some(arg) = netcade_args.iter().find(|arg| arg.starts_with("target/")) {
        return Err(format!(
            "{}: `{arg}` exists only after some builds; name Duel as `--core duel`",
            command.at()
        ));
    }
    Ok(Plan::Netcade(
        netcade_args.iter().map(|arg| arg.to_string()).collect(),
    ))
}

fn needs_test_content(args: &[String]) -> bool {
    args.iter().any(|arg| arg.starts_with(README_CONTENT_DIR))
}

/// `arg` as netcade gets it when the document's command is typed in a shell
/// at the repository root, run from `scratch`: the test content directory
/// as the tests find it, `~` expanded, and the repository entry a relative
/// path starts with linked into `scratch`. `None` when the content is
/// missing (the lookup has said so, or failed under NETCADE_REQUIRE_CONTENT).
fn resolve(arg: &str, scratch: &Path) -> Option<String> {
    if let Some(inside) = arg.strip_prefix(README_CONTENT_DIR) {
        let path = support::content::content_file(Path::new(inside))?;
        return Some(path.display().to_string());
    }
    if let Some(inside) = arg.strip_prefix("~/") {
        let home = std::env::var_os("HOME").expect("HOME is set");
        return Some(Path::new(&home).join(inside).display().to_string());
    }
    if let Some(Component::Normal(first)) = Path::new(arg).components().next() {
        let entry = repository().join(first);
        let link = scratch.join(first);
        if !arg.starts_with('-') && entry.exists() && !link.exists() {
            std::os::unix::fs::symlink(&entry, &link).expect("a link in the scratch directory");
        }
    }
    Some(arg.to_string())
}

/// Runs every netcade command of the documents that does (`true`) or does
/// not (`false`) need the fetched test content, a scratch directory per
/// block; returns the subcommands the README ran.
fn run_doc_commands(with_test_content: bool) -> Vec<String> {
    let mut readme_ran = Vec::new();
    let mut failures = Vec::new();
    let mut scratch: Option<((String, usize), tempfile::TempDir)> = None;
    for command in all_sh_commands() {
        let Ok(Plan::Netcade(args)) = plan(&command) else {
            continue;
        };
        if needs_test_content(&args) != with_test_content {
            continue;
        }
        let block = (command.document.clone(), command.block);
        if scratch.as_ref().map(|(current, _)| current) != Some(&block) {
            scratch = Some((block, tempfile::tempdir().expect("a scratch directory")));
        }
        let dir = scratch.as_ref().expect("a scratch directory").1.path();
        let Some(args) = args
            .iter()
            .map(|arg| resolve(arg, dir))
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = netcade_as_user(dir, &args, "");
        if !output.status.success() {
            failures.push(format!(
                "{}: `netcade {}` exited with {:?}: {}",
                command.at(),
                args.join(" "),
                output.status.code(),
                stderr(&output)
            ));
        }
        if command.document == "README.md" {
            readme_ran.push(args.first().copied().unwrap_or_default().to_string());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    readme_ran
}

/// GitHub's anchors for the headings of `text`: a heading's words, lower
/// case, joined by '-'.
fn anchors(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix('#'))
        .map(|heading| {
            heading
                .trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
                .map(|c| if c == ' ' { '-' } else { c })
                .collect()
        })
        .collect()
}

/// The targets of the `[text](target)` links of `text` that are not web
/// addresses.
fn relative_links(text: &str) -> Vec<&str> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .filter(|link| !link.starts_with("http"))
        .collect()
}

/// `relative` joined to the folder `from` (both from the repository's
/// root), `..` taken away; `None` when it climbs out of the repository.
fn inside_repository(from: &Path, relative: &str) -> Option<PathBuf> {
    let mut path = PathBuf::new();
    for component in from.join(relative).components() {
        match component {
            Component::Normal(part) => path.push(part),
            Component::ParentDir => {
                if !path.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(path)
}

/// What is wrong with `link` in `document` (`text`): a file outside the
/// repository or missing, or a heading the target does not have.
fn link_problem(document: &str, text: &str, link: &str) -> Option<String> {
    let (file, anchor) = match link.split_once('#') {
        Some((file, anchor)) => (file, Some(anchor)),
        None => (link, None),
    };
    let folder = Path::new(document).parent().unwrap_or(Path::new(""));
    let target_text = if file.is_empty() {
        text.to_string()
    } else {
        let Some(target) = inside_repository(folder, file) else {
            return Some(format!(
                "{document} links to {link}, outside the repository"
            ));
        };
        let path = repository().join(&target);
        if !path.exists() {
            return Some(format!(
                "{document} links to {link}, which is not in the repository"
            ));
        }
        match anchor {
            Some(_) => std::fs::read_to_string(&path).unwrap_or_default(),
            None => return None,
        }
    };
    let anchor = anchor?;
    if anchors(&target_text).iter().any(|known| known == anchor) {
        return None;
    }
    Some(format!(
        "{document} links to {link}, a heading {} does not have",
        if file.is_empty() { document } else { file }
    ))
}

#[test]
fn every_command_line_in_the_documents_is_one_this_test_runs_or_knowingly_skips() {
    let commands = all_sh_commands();
    let problems: Vec<String> = commands
        .iter()
        .filter_map(|command| plan(command).err())
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let readme = readme();
    let subcommands: Vec<String> = sh_commands(&readme.path, &readme.text)
        .iter()
        .filter_map(|command| match plan(command) {
            Ok(Plan::Netcade(args)) => args.first().cloned(),
            _ => None,
        })
        .collect();
    for subcommand in README_SUBCOMMANDS {
        assert!(
            subcommands.iter().any(|shown| shown == subcommand),
            "the README shows no `netcade {subcommand}` example (found {subcommands:?})"
        );
    }
}

#[test]
fn the_readme_points_at_nothing_outside_the_repository() {
    let readme = readme();
    let outside: Vec<&str> = readme
        .text
        .lines()
        .filter(|line| line.contains("../"))
        .collect();
    assert!(outside.is_empty(), "{outside:?}");
}

#[test]
fn every_relative_link_in_the_documents_points_at_a_file_and_heading_that_exist() {
    let problems: Vec<String> = documents()
        .iter()
        .flat_map(|document| {
            relative_links(&document.text)
                .into_iter()
                .filter_map(|link| link_problem(&document.path, &document.text, link))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_duel_command_in_the_documents_works_as_written() {
    let ran = run_doc_commands(false);
    for subcommand in README_SUBCOMMANDS {
        assert!(
            ran.iter().any(|done| done == subcommand),
            "no Duel example of `netcade {subcommand}` in the README ran (ran {ran:?})"
        );
    }
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn every_real_core_command_in_the_documents_works_as_written() {
    run_doc_commands(true);
}

#[test]
fn command_lines_are_read_with_continuations_and_without_comments() {
    let text = "intro\n```sh\nnetcade run --core duel \\\n    --frames 5   # five\n# a comment\ncargo test\n```\n```text\nnetcade not-a-command\n```\n";
    let commands = sh_commands("README.md", text);
    assert_eq!(commands.len(), 2, "{commands:?}");
    assert_eq!(commands[0].line, 3);
    assert_eq!(
        plan(&commands[0]),
        Ok(Plan::Netcade(
            ["run", "--core", "duel", "--frames", "5"]
                .map(String::from)
                .to_vec()
        ))
    );
    assert!(matches!(plan(&commands[1]), Ok(Plan::NotRunHere(_))));
}

#[test]
fn each_sh_block_is_numbered_so_its_commands_share_a_scratch_directory() {
    let text = "```sh\nnetcade run\nnetcade debug\n```\n```text\nnetcade x\n```\n```sh\nnetcade synctest\n```\n";
    let blocks: Vec<usize> = sh_commands("docs/commands.md", text)
        .iter()
        .map(|command| command.block)
        .collect();
    assert_eq!(blocks, [0, 0, 1]);
}

#[test]
fn a_command_this_test_cannot_run_is_a_failure_naming_its_document_and_line() {
    let commands = sh_commands(
        "docs/commands.md",
        "```sh\nmake install\nnetcade run > out.txt\nnetcade debug --core target/release/libduel.so\n```\n",
    );
    assert!(plan(&commands[0])
        .unwrap_err()
        .starts_with("docs/commands.md:2:"));
    assert!(plan(&commands[1]).unwrap_err().contains("shell syntax"));
    assert!(plan(&commands[2]).unwrap_err().contains("--core duel"));
}

#[test]
fn links_are_checked_from_the_linking_document_s_folder_down_to_the_heading() {
    let text = "# Wire safety\n[a](#wire-safety) [b](#nowhere) [c](../README.md) [d](../../x) [e](protocol.md#no-such-heading) [f](gone.md) [g](https://example.com)";
    let problems: Vec<Option<String>> = relative_links(text)
        .into_iter()
        .map(|link| link_problem("docs/commands.md", text, link))
        .collect();
    assert_eq!(relative_links(text).len(), 6, "web addresses are skipped");
    assert_eq!(problems[0], None);
    assert!(problems[1].as_deref().unwrap().contains("a heading"));
    assert_eq!(problems[2], None);
    assert!(problems[3].as_deref().unwrap().contains("outside"));
    assert!(problems[4]
        .as_deref()
        .unwrap()
        .contains("protocol.md does not have"));
    assert!(problems[5]
        .as_deref()
        .unwrap()
        .contains("not in the repository"));
}
