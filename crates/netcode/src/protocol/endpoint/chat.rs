//! Chat lines on one link: ours numbered and resent until the peer
//! acknowledges them, the peer's taken once each, in order, and limited
//! per author (a peer that floods loses its own lines, nothing else).

use super::{Event, Millis, PeerEndpoint};
use crate::protocol::chat::{
    check_chat_author, check_chat_text, ChatLine, ChatMessage, ChatRateLimit,
};
use crate::protocol::messages::Message;
use std::collections::VecDeque;

/// Our lines not yet acknowledged: at most this many wait (a link that
/// is down does not gather a backlog; the sender's own rate limit keeps
/// an honest one well below it).
pub const MAX_UNACKED_CHAT_LINES: usize = 8;

/// Authors of one link whose rate is tracked (a host relays several).
const TRACKED_AUTHORS: usize = 16;

/// All the lines of one link, whatever their authors: a host relaying
/// many spectators stays below it, a peer inventing names to escape the
/// per-author limit does not.
const LINK_BURST_LINES: u32 = 20;
const LINK_LINE_EVERY_MS: Millis = 125;

/// The chat state of one link.
#[derive(Debug, Default)]
pub(super) struct ChatLink {
    /// Our lines in flight: number, line, when last sent.
    unacked: VecDeque<(u32, ChatLine, Option<Millis>)>,
    next_number: u32,
    /// The next number of the peer's lines we take.
    next_expected: u32,
    ack_due: bool,
    /// Each author's limit, most recently heard last.
    limits: Vec<(String, ChatRateLimit)>,
    /// The limit of the whole link (from its first line).
    link_limit: Option<ChatRateLimit>,
}

impl ChatLink {
    /// Whether `author` may say one more line at `now`; counts it.
    fn allow(&mut self, author: &str, now: Millis) -> bool {
        let link = self
            .link_limit
            .get_or_insert_with(|| ChatRateLimit::with(LINK_BURST_LINES, LINK_LINE_EVERY_MS, now));
        if !link.allow(now) {
            return false;
        }
        let index = match self.limits.iter().position(|(name, _)| name == author) {
            Some(index) => index,
            None => {
                if self.limits.len() == TRACKED_AUTHORS {
                    self.limits.remove(0);
                }
                self.limits
                    .push((author.to_owned(), ChatRateLimit::new(now)));
                self.limits.len() - 1
            }
        };
        let mut entry = self.limits.remove(index);
        let allowed = entry.1.allow(now);
        self.limits.push(entry);
        allowed
    }
}

impl PeerEndpoint {
    /// Queues `line` for the peer (sent at the next poll, then again until
    /// acknowledged). False when the link is not running,
    /// [`MAX_UNACKED_CHAT_LINES`] already wait, or the line cannot be sent
    /// (an empty or overlong text, control characters).
    pub fn send_chat(&mut self, line: ChatLine) -> bool {
        let sendable =
            check_chat_author(&line.author).is_ok() && check_chat_text(&line.text).is_ok();
        if !sendable || !self.is_running() || self.chat.unacked.len() >= MAX_UNACKED_CHAT_LINES {
            return false;
        }
        let number = self.chat.next_number;
        self.chat.next_number = number.wrapping_add(1);
        self.chat.unacked.push_back((number, line, None));
        true
    }

    /// Our lines the peer has not acknowledged yet.
    pub fn unacked_chat_lines(&self) -> usize {
        self.chat.unacked.len()
    }

    pub(super) fn on_chat(&mut self, now: Millis, chat: ChatMessage) {
        // An ack of lines never sent is ignored, not trusted.
        let oldest_unacked = self
            .chat
            .next_number
            .wrapping_sub(self.chat.unacked.len() as u32);
        let acked = chat.next_expected.wrapping_sub(oldest_unacked);
        if (acked as usize) <= self.chat.unacked.len() {
            self.chat.unacked.drain(..acked as usize);
        }
        let Some((number, line)) = chat.line else {
            return;
        };
        self.chat.ack_due = true;
        if number != self.chat.next_expected {
            // A repeat (its ack was lost) or a line after a lost one,
            // which comes again in order.
            return;
        }
        self.chat.next_expected = number.wrapping_add(1);
        if self.chat.allow(&line.author, now) {
            self.stats.chat_lines_received += 1;
            self.events.push_back(Event::Chat(line));
        } else {
            self.stats.chat_lines_dropped += 1;
        }
    }

    /// Sends our lines due (new, or unacknowledged for a resend interval),
    /// each carrying our ack, or the ack alone when one is due.
    pub(super) fn send_chat_lines(&mut self, now: Millis, send: &mut dyn FnMut(&[u8])) {
        let resend_after = self.resend_after();
        for index in 0..self.chat.unacked.len() {
            let (number, line, sent_at) = &self.chat.unacked[index];
            if sent_at.is_some_and(|at| now.saturating_sub(at) < resend_after) {
                continue;
            }
            if sent_at.is_none() {
                self.stats.chat_lines_sent += 1;
            }
            let message = Message::Chat(ChatMessage {
                next_expected: self.chat.next_expected,
                line: Some((*number, line.clone())),
            });
            self.chat.unacked[index].2 = Some(now);
            self.chat.ack_due = false;
            self.emit(now, &message, send);
        }
        if std::mem::take(&mut self.chat.ack_due) {
            let ack = ChatMessage {
                next_expected: self.chat.next_expected,
                line: None,
            };
            self.emit(now, &Message::Chat(ack), send);
        }
    }
}
