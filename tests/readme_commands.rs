//! The README works as written: every command line in its ```sh blocks is
//! taken from README.md itself and run through the built `netcade`, from a
//! scratch directory that sees the repository's files (so outputs written to
//! the current directory do not land in the repository), with nothing
//! telling netcade where the Duel core is. A README edit that breaks a
//! command, or adds one this test does not know how to run, fails here.

mod support;

use std::path::{Component, Path};
use support::cli::{netcade_as_user, stderr};

/// Where the README says the fetched cores and ROMs are.
const README_CONTENT_DIR: &str = "~/.cache/netcade/test-content/";

/// One command line of the README, continuation lines joined.
#[derive(Debug)]
struct ReadmeCommand {
    /// 1-based line of README.md where the command starts.
    line: usize,
    words: Vec<String>,
}

/// What this test does with a README command.
#[derive(Debug, PartialEq)]
enum Plan {
    /// Run netcade with these arguments.
    Netcade(Vec<String>),
    /// Not run by this test, for the reason given.
    NotRunHere(&'static str),
}

fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    std::fs::read_to_string(&path).expect("README.md is readable")
}

/// The command lines of every ```sh block: `\` joins a line with the next,
/// `#` after a space starts a comment.
fn sh_commands(readme: &str) -> Vec<ReadmeCommand> {
    let mut commands = Vec::new();
    let mut in_sh_block = false;
    let mut pending: Option<ReadmeCommand> = None;
    for (index, line) in readme.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_sh_block = !in_sh_block && trimmed == "```sh";
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
        let command = pending.get_or_insert_with(|| ReadmeCommand {
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

/// How to carry out `command`, or why this test cannot.
fn plan(command: &ReadmeCommand) -> Result<Plan, String> {
    let words: Vec<&str> = command.words.iter().map(String::as_str).collect();
    if let Some(word) = words
        .iter()
        .find(|word| word.contains(['|', '>', '<', '$', '"', '\'', ';', '&', '`']))
    {
        return Err(format!(
            "README.md:{}: `{word}` is shell syntax; README examples are plain command lines",
            command.line
        ));
    }
    let netcade_args = match words.as_slice() {
        ["netcade", args @ ..] => args,
        ["cargo", "run", "--release", "--", args @ ..] => args,
        ["cargo", "test", ..] => return Ok(Plan::NotRunHere("it is this test run")),
        ["cargo", "bench", ..]
        | ["scripts/bench-host-overhead", ..]
        | ["scripts/bench-netplay", ..]
        | ["scripts/bench-replay", ..]
        | ["scripts/bench-audio", ..] => {
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
                "README.md:{}: this test does not know how to run `{}`",
                command.line,
                words.join(" ")
            ))
        }
    };
    // What is in target/ depends on which cargo commands the reader ran
    // (and this clone has built everything), so the run below proves
    // nothing about such a path after the quick start.
    if let Some(arg) = netcade_args.iter().find(|arg| arg.starts_with("target/")) {
        return Err(format!(
            "README.md:{}: `{arg}` exists only after some builds; name Duel as `--core duel`",
            command.line
        ));
    }
    Ok(Plan::Netcade(
        netcade_args.iter().map(|arg| arg.to_string()).collect(),
    ))
}

fn needs_test_content(args: &[String]) -> bool {
    args.iter().any(|arg| arg.starts_with(README_CONTENT_DIR))
}

/// `arg` as netcade gets it when the README's command is typed in a shell
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
    let repository = Path::new(env!("CARGO_MANIFEST_DIR"));
    if let Some(Component::Normal(first)) = Path::new(arg).components().next() {
        let entry = repository.join(first);
        let link = scratch.join(first);
        if !arg.starts_with('-') && entry.exists() && !link.exists() {
            std::os::unix::fs::symlink(&entry, &link).expect("a link in the scratch directory");
        }
    }
    Some(arg.to_string())
}

/// Runs every netcade command of the README that does (`true`) or does
/// not (`false`) need the fetched test content; returns the subcommands run.
fn run_readme_commands(with_test_content: bool) -> Vec<String> {
    let mut ran = Vec::new();
    let mut failures = Vec::new();
    for command in sh_commands(&readme()) {
        let Ok(Plan::Netcade(args)) = plan(&command) else {
            continue;
        };
        if needs_test_content(&args) != with_test_content {
            continue;
        }
        let scratch = tempfile::tempdir().expect("a scratch directory");
        let Some(args) = args
            .iter()
            .map(|arg| resolve(arg, scratch.path()))
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = netcade_as_user(scratch.path(), &args, "");
        if !output.status.success() {
            failures.push(format!(
                "README.md:{}: `netcade {}` exited with {:?}: {}",
                command.line,
                args.join(" "),
                output.status.code(),
                stderr(&output)
            ));
        }
        ran.push(args.first().copied().unwrap_or_default().to_string());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    ran
}

#[test]
fn every_command_line_in_the_readme_is_one_this_test_runs_or_knowingly_skips() {
    let commands = sh_commands(&readme());
    let problems: Vec<String> = commands
        .iter()
        .filter_map(|command| plan(command).err())
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let subcommands: Vec<String> = commands
        .iter()
        .filter_map(|command| match plan(command) {
            Ok(Plan::Netcade(args)) => args.first().cloned(),
            _ => None,
        })
        .collect();
    for subcommand in ["run", "synctest", "debug", "demo"] {
        assert!(
            subcommands.iter().any(|shown| shown == subcommand),
            "the README shows no `netcade {subcommand}` example (found {subcommands:?})"
        );
    }
}

#[test]
fn the_readme_points_at_nothing_outside_the_repository() {
    let readme = readme();
    let outside: Vec<&str> = readme.lines().filter(|line| line.contains("../")).collect();
    assert!(outside.is_empty(), "{outside:?}");
    let links = readme
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next());
    // GitHub's anchors: a heading's words, lower case, joined by '-'.
    let anchors: Vec<String> = readme
        .lines()
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
        .collect();
    for link in links.filter(|link| !link.starts_with("http")) {
        if let Some(anchor) = link.strip_prefix('#') {
            assert!(
                anchors.iter().any(|known| known == anchor),
                "README links to #{anchor}, a heading it does not have"
            );
            continue;
        }
        let target = Path::new(env!("CARGO_MANIFEST_DIR")).join(link);
        assert!(
            target.exists(),
            "README links to {link}, which is not in the repository"
        );
    }
}

#[test]
fn every_duel_command_in_the_readme_works_as_written() {
    let ran = run_readme_commands(false);
    for subcommand in ["run", "synctest", "debug", "demo"] {
        assert!(
            ran.iter().any(|done| done == subcommand),
            "no Duel example of `netcade {subcommand}` ran (ran {ran:?})"
        );
    }
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn every_real_core_command_in_the_readme_works_as_written() {
    run_readme_commands(true);
}

#[test]
fn readme_command_lines_are_read_with_continuations_and_without_comments() {
    let text = "intro\n```sh\nnetcade run --core duel \\\n    --frames 5   # five\n# a comment\ncargo test\n```\n```text\nnetcade not-a-command\n```\n";
    let commands = sh_commands(text);
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
fn a_readme_command_this_test_cannot_run_is_a_failure_naming_its_line() {
    let commands = sh_commands(
        "```sh\nmake install\nnetcade run > out.txt\nnetcade debug --core target/release/libduel.so\n```\n",
    );
    assert!(plan(&commands[0]).unwrap_err().starts_with("README.md:2:"));
    assert!(plan(&commands[1]).unwrap_err().contains("shell syntax"));
    assert!(plan(&commands[2]).unwrap_err().contains("--core duel"));
}
