//! What players and spectators say: the checks a line of ours passes
//! before it goes out (text, our own rate limit), shared by the players'
//! session and the spectator's.

use crate::protocol::{
    check_chat_author, check_chat_text, ChatLine, ChatRateLimit, ChatTextError, Millis,
};

/// Why a line of ours was not sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChatRefused {
    /// The text (or our name) cannot be a line's.
    #[error("{0}")]
    Text(ChatTextError),
    /// More lines than the rate limit allows (5 at once, then one a second).
    #[error("too many lines: wait a second")]
    TooFast,
    /// No machine is linked yet, or every link's backlog of lines is full.
    #[error("no one to send it to yet")]
    NoOneToTell,
}

/// A line as shown: who said it, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatShown {
    /// The sender's name, or its seat ("P2", "spectator 1") when it gave none.
    pub author: String,
    /// What it said.
    pub text: String,
}

/// Our side of the chat: our own limit, so that receivers (which limit
/// every sender the same way) never drop an honest line.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChatOutbox {
    limit: ChatRateLimit,
}

impl ChatOutbox {
    pub(crate) fn new(now: Millis) -> Self {
        ChatOutbox {
            limit: ChatRateLimit::new(now),
        }
    }

    /// The line to send for `text` from `author` at `now`, if it may go.
    pub(crate) fn line(
        &mut self,
        now: Millis,
        author: &str,
        text: &str,
    ) -> Result<ChatLine, ChatRefused> {
        check_chat_author(author).map_err(ChatRefused::Text)?;
        check_chat_text(text).map_err(ChatRefused::Text)?;
        if !self.limit.allow(now) {
            return Err(ChatRefused::TooFast);
        }
        Ok(ChatLine {
            author: author.to_owned(),
            text: text.to_owned(),
        })
    }
}

/// `line` as shown, named `seat` when its author gave no name.
pub(crate) fn shown(line: ChatLine, seat: impl FnOnce() -> String) -> ChatShown {
    let author = if line.author.is_empty() {
        seat()
    } else {
        line.author
    };
    ChatShown {
        author,
        text: line.text,
    }
}
