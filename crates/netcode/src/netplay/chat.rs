//! What players and spectators say: the checks a line of ours passes
//! before it goes out (text, our own rate limit), shared by the players'
//! session and the spectator's.

use crate::protocol::{
    check_chat_author, check_chat_text, truncate_chat_text, ChatLine, ChatRateLimit, ChatTextError,
    Millis, MAX_CHAT_AUTHOR_BYTES,
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

/// How a spectator's seat begins ("spectator 2"); a player's is `P1`…`P4`.
pub(crate) const SPECTATOR_SEAT: &str = "spectator";

/// `line` from the machine in `seat` ("P2", "spectator 1"): shown under
/// that seat, then the name its sender gave. The seat comes from the link
/// the line came on, never from the line, so a name cannot pass for a seat.
pub(crate) fn from_seat(seat: String, line: ChatLine) -> ChatShown {
    let author = if line.author.is_empty() {
        seat
    } else {
        format!("{seat} {}", line.author)
    };
    ChatShown {
        author,
        text: line.text,
    }
}

/// `line` as it came on player `seat`'s link (0 for P1): under `P<seat+1>`,
/// unless it is a spectator's line the host (P1, the only machine that
/// feeds spectators) relays, which keeps the label the host gave it. The
/// host can pass its line off as a spectator's; no one can pass for a
/// player it is not.
pub(crate) fn from_player(seat: usize, line: ChatLine) -> ChatShown {
    if seat == 0 && line.author.starts_with(SPECTATOR_SEAT) {
        return ChatShown {
            author: line.author,
            text: line.text,
        };
    }
    from_seat(format!("P{}", seat + 1), line)
}

/// A line passed on under the label it is shown with here, cut to what a
/// line's author may hold (the seat comes first, so only the name is cut).
pub(crate) fn relayed(line: &ChatShown) -> ChatLine {
    ChatLine {
        author: truncate_chat_text(&line.author, MAX_CHAT_AUTHOR_BYTES).to_owned(),
        text: line.text.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(author: &str) -> ChatLine {
        ChatLine {
            author: author.to_owned(),
            text: "gg".to_owned(),
        }
    }

    #[test]
    fn a_line_is_shown_under_the_seat_of_its_link_before_the_name_it_claims() {
        assert_eq!(from_player(1, line("")).author, "P2");
        assert_eq!(from_player(1, line("Zoë")).author, "P2 Zoë");
        assert_eq!(from_player(1, line("P1")).author, "P2 P1");
        assert_eq!(
            from_seat("spectator 3".into(), line("P1")).author,
            "spectator 3 P1"
        );
    }

    #[test]
    fn a_relayed_spectators_line_keeps_its_label_but_cannot_become_a_players() {
        assert_eq!(
            from_player(0, line("spectator 2 bo")).author,
            "spectator 2 bo"
        );
        let relayed = relayed(&from_seat("spectator 12".into(), line(&"z".repeat(24))));
        assert_eq!(relayed.author.len(), MAX_CHAT_AUTHOR_BYTES);
        assert!(relayed.author.starts_with("spectator 12 zz"));
    }
}
