//! Chat in a live match: `--name` and `--chat-script` (lines a test or a
//! script makes one side say at given frames), the lines the window's chat
//! box hands over, and the lines received, printed as `chat P2: text` and
//! shown in the front end.

use crate::live::narrator::Narrator;
use netcode::netplay::{ChatRefused, ChatShown};
use netcode::protocol::{check_chat_author, check_chat_text, ChatTextError, Millis};
use std::collections::VecDeque;

/// `--name` and `--chat-script`, for `host`, `join` and `spectate`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ChatArgs {
    /// The name your chat lines go by (at most 24 bytes), shown after
    /// your seat: `P2 NAME`, `spectator 1 NAME` [default: the seat alone].
    #[arg(long, value_name = "NAME", value_parser = parse_name)]
    pub name: Option<String>,
    /// Chat lines to send without a window: each line of FILE is `FRAME
    /// TEXT`, said once this machine reaches FRAME (blank lines and lines
    /// starting with # are skipped).
    #[arg(long, value_name = "FILE", value_parser = read_chat_script)]
    pub chat_script: Option<ChatScript>,
}

fn parse_name(name: &str) -> Result<String, String> {
    check_name(name)?;
    Ok(name.to_owned())
}

/// Whether `name` may be a chat name (`--name`, the Settings screen's):
/// at most [`netcode::protocol::MAX_CHAT_AUTHOR_BYTES`] bytes, no control
/// characters; else why not, in words about a name.
pub fn check_name(name: &str) -> Result<(), String> {
    check_chat_author(name).map_err(|error| match error {
        ChatTextError::TooLong(bytes, most) => {
            format!("not a name for the chat: it is {bytes} bytes long, at most {most} fit")
        }
        error => format!("not a name for the chat: {error}"),
    })
}

/// Lines to say, each at a frame, in the order of their frames.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChatScript {
    lines: VecDeque<(u32, String)>,
}

impl ChatScript {
    /// Reads `FRAME TEXT` lines; the first bad one is named by its number.
    pub fn parse(text: &str) -> Result<ChatScript, String> {
        let mut lines = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |why: String| format!("line {}: {why}", index + 1);
            let (frame, said) = line
                .split_once(char::is_whitespace)
                .ok_or_else(|| bad("expected `FRAME TEXT`".to_string()))?;
            let frame: u32 = frame
                .parse()
                .map_err(|_| bad(format!("`{frame}` is not a frame number")))?;
            let said = said.trim();
            check_chat_text(said).map_err(|error| bad(error.to_string()))?;
            lines.push((frame, said.to_owned()));
        }
        lines.sort_by_key(|(frame, _)| *frame);
        Ok(ChatScript {
            lines: lines.into(),
        })
    }

    /// The next line due once `frame` is reached.
    fn next_due(&mut self, frame: u32) -> Option<String> {
        let (at, _) = self.lines.front()?;
        (*at <= frame).then(|| self.lines.pop_front().map(|(_, text)| text))?
    }
}

fn read_chat_script(path: &str) -> Result<ChatScript, String> {
    let text =
        std::fs::read_to_string(path).map_err(|error| format!("cannot read {path}: {error}"))?;
    ChatScript::parse(&text).map_err(|error| format!("{path}: {error}"))
}

/// What a live machine says and hears, and how many lines.
#[derive(Debug, Default)]
pub(crate) struct LiveChat {
    name: String,
    script: ChatScript,
    pub(crate) counts: ChatCounts,
}

/// Lines sent, received and refused (our own, over the rate limit or
/// before anyone was linked), for the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ChatCounts {
    pub(crate) sent: u64,
    pub(crate) received: u64,
    pub(crate) refused: u64,
}

impl ChatCounts {
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "sent": self.sent,
            "received": self.received,
            "refused": self.refused,
        })
    }

    /// `chat: 2 lines sent, 1 received`, when there was any.
    pub(crate) fn describe(&self) -> Option<String> {
        (*self != ChatCounts::default()).then(|| {
            format!(
                "chat lines: {} sent, {} received, {} refused",
                self.sent, self.received, self.refused
            )
        })
    }
}

impl LiveChat {
    pub(crate) fn new(args: &ChatArgs) -> Self {
        LiveChat {
            name: args.name.clone().unwrap_or_default(),
            script: args.chat_script.clone().unwrap_or_default(),
            counts: ChatCounts::default(),
        }
    }

    /// Sends what the window's chat box and the script have due at
    /// `frame` through `send` (the session's), telling each line sent.
    pub(crate) fn send_due(
        &mut self,
        frame: u32,
        now: Millis,
        narrator: &mut Narrator<'_>,
        send: &mut dyn FnMut(Millis, &str, &str) -> Result<ChatShown, ChatRefused>,
    ) -> std::io::Result<()> {
        loop {
            let (text, scripted) = match narrator.front.take_chat_line() {
                Some(text) => (text, false),
                None => match self.script.next_due(frame) {
                    // A window types it into its chat box, the player's way.
                    Some(text) if narrator.front.type_chat(&text) => continue,
                    Some(text) => (text, true),
                    None => return Ok(()),
                },
            };
            match send(now, &self.name, &text) {
                Ok(line) => {
                    self.counts.sent += 1;
                    narrator.chat(&line)?;
                }
                // A script's line waits until the link is up.
                Err(ChatRefused::NoOneToTell) if scripted => {
                    self.script.lines.push_front((frame, text));
                    return Ok(());
                }
                Err(refused) => {
                    self.counts.refused += 1;
                    narrator.warn_and_show(&format!("chat line not sent: {refused}"))?;
                }
            }
        }
    }

    /// Tells a line received.
    pub(crate) fn received(
        &mut self,
        line: &ChatShown,
        narrator: &mut Narrator<'_>,
    ) -> std::io::Result<()> {
        self.counts.received += 1;
        narrator.chat(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_script_says_each_line_once_its_frame_is_reached() {
        let mut script = ChatScript::parse("# greetings\n120 good luck\n\n60 hi there\n").unwrap();
        assert_eq!(script.next_due(59), None);
        assert_eq!(script.next_due(61).as_deref(), Some("hi there"));
        assert_eq!(script.next_due(61), None);
        assert_eq!(script.next_due(500).as_deref(), Some("good luck"));
        assert_eq!(script.next_due(500), None);
    }

    #[test]
    fn a_bad_chat_script_line_is_named_by_its_number() {
        assert_eq!(
            ChatScript::parse("10 ok\nsoon hello\n"),
            Err("line 2: `soon` is not a frame number".to_string())
        );
        assert!(ChatScript::parse("10\n")
            .unwrap_err()
            .starts_with("line 1:"));
        assert!(ChatScript::parse(&format!("10 {}", "x".repeat(121)))
            .unwrap_err()
            .contains("at most 120"));
    }

    #[test]
    fn a_name_too_long_for_the_chat_says_so_as_a_name() {
        assert_eq!(parse_name("Zoë"), Ok("Zoë".to_string()));
        assert_eq!(
            parse_name(&"a".repeat(30)),
            Err("not a name for the chat: it is 30 bytes long, at most 24 fit".to_string())
        );
        assert!(parse_name("a\tb")
            .unwrap_err()
            .contains("control character"));
    }
}
