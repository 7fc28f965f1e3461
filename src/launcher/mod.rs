//! What the launcher (`netcade menu`, feature `gui`) decides, without a
//! window: the game chosen, the forms of Play, Host, Join and Spectate
//! turned into the very command line the CLI parses ([`forms`]), and the
//! recent games kept in the data directory ([`recent`]). Tests run it in
//! every build.

pub mod core_info;
pub mod cores;
pub mod forms;
pub mod lag;
pub mod library;
pub mod recent;
pub mod rejoins;
pub mod replays;
pub mod results;
pub mod settings;

/// How a session the launcher started ended, for its result screen.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionEnd {
    /// The command line it ran (after the program's name).
    pub command_line: Vec<String>,
    /// Its exit code, as the command would have exited with.
    pub exit_code: u8,
    /// What it wrote: its summary.
    pub output: String,
    /// The `error:` line the command line would print, if it failed.
    pub error: Option<String>,
    /// The facts of its summary (its `--json` object), when it wrote one.
    pub report: Option<serde_json::Value>,
    /// How long it ran, start to end.
    pub took: std::time::Duration,
}

impl SessionEnd {
    /// How it ended, in a few words (the meanings of netcade's exit codes).
    pub fn ending(&self) -> &'static str {
        match self.exit_code {
            0 => "finished",
            1 => "the machines disagreed (a desync)",
            2 => "it could not start",
            3 => "it failed while running",
            4 => "the core crashed",
            6 => "the other machine was lost or left",
            130 => "interrupted",
            _ => "it ended early",
        }
    }

    /// Whether the player cancelled a join on its connecting screen
    /// (nothing was played: the form it came from shows again).
    pub fn join_cancelled(&self) -> bool {
        self.output
            .lines()
            .any(|line| line == crate::live::players::JOIN_CANCELLED)
    }

    /// Whether the game was played (it started, whatever the ending): a
    /// session that could not start, failed or crashed is no game played.
    pub fn played(&self) -> bool {
        matches!(self.exit_code, 0 | 1 | 6 | 130)
    }

    /// The replay it recorded, from its summary's `replay:` line.
    pub fn replay_path(&self) -> Option<&str> {
        self.output
            .lines()
            .find_map(|line| line.strip_prefix("replay: "))
    }
}

/// The most of a session's output its result screen keeps (its tail).
pub const MAX_SESSION_OUTPUT: usize = 64 * 1024;

/// A writer passing everything to the terminal's writer and keeping the
/// last [`MAX_SESSION_OUTPUT`] bytes for the result screen.
pub struct KeepOutput<'a> {
    /// Where the output goes too.
    pub out: &'a mut dyn std::io::Write,
    /// The output kept.
    pub kept: Vec<u8>,
}

impl std::io::Write for KeepOutput<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let written = self.out.write(bytes)?;
        self.kept.extend_from_slice(&bytes[..written]);
        if self.kept.len() > MAX_SESSION_OUTPUT {
            let extra = self.kept.len() - MAX_SESSION_OUTPUT;
            self.kept.drain(..extra);
        }
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_result_screen_finds_the_replay_in_the_summary() {
        let end = SessionEnd {
            output: "frames: 600\nreplay: /data/replays/a b.ncr\nspeaker: none\n".to_string(),
            ..SessionEnd::default()
        };
        assert_eq!(end.replay_path(), Some("/data/replays/a b.ncr"));
        assert_eq!(end.ending(), "finished");
        assert_eq!(SessionEnd::default().replay_path(), None);
        assert!(end.played());
        for (exit_code, played) in [(1, true), (2, false), (3, false), (4, false), (6, true)] {
            let end = SessionEnd {
                exit_code,
                ..SessionEnd::default()
            };
            assert_eq!(end.played(), played, "{}", end.ending());
        }
    }

    #[test]
    fn a_session_output_reaches_the_terminal_and_its_tail_is_kept() {
        let mut terminal = Vec::new();
        let mut keep = KeepOutput {
            out: &mut terminal,
            kept: Vec::new(),
        };
        let line = [b'x'; 1000];
        for _ in 0..100 {
            keep.write_all(&line).unwrap();
        }
        keep.write_all(b"the end\n").unwrap();
        let kept = keep.kept;
        assert_eq!(kept.len(), MAX_SESSION_OUTPUT);
        assert!(kept.ends_with(b"the end\n"));
        assert_eq!(terminal.len(), 100_000 + 8);
    }
}
