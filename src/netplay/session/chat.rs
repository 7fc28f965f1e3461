//! Chat in a match: our lines go to every machine we link to; the peers'
//! come to the frontend. Spectators link only to the machine that feeds
//! them, so that machine relays: a player's line to every spectator, a
//! spectator's to every player and the other spectators. Relaying on every
//! link would send the players of a 3–4 player match (a full mesh) each
//! other's lines twice.

use super::{LinkState, NetplaySession};
use crate::netplay::chat::{shown, ChatRefused, ChatShown};
use crate::netplay::NetplayEvent;
use crate::protocol::{ChatLine, Millis, PeerEndpoint};

impl<A: Ord + Copy> NetplaySession<A> {
    /// Sends `text` to everyone in the match, as `author` (empty: our
    /// seat, "P1"…). Returns the line as shown here.
    pub fn send_chat(
        &mut self,
        now: Millis,
        author: &str,
        text: &str,
    ) -> Result<ChatShown, ChatRefused> {
        let line = self.chat.line(now, author, text)?;
        let mut taken = false;
        for index in 0..self.links.len() {
            if self.links[index].state == LinkState::Open {
                taken |= self.send_chat_to(self.links[index].address, &line);
            }
        }
        for index in 0..self.spectators.len() {
            if self.spectators[index].open {
                taken |= self.send_chat_to(Some(self.spectators[index].address), &line);
            }
        }
        if !taken {
            return Err(ChatRefused::NoOneToTell);
        }
        let seat = self.local_players.iter().next().unwrap_or(0);
        Ok(shown(line, || format!("P{}", seat + 1)))
    }

    fn send_chat_to(&mut self, address: Option<A>, line: &ChatLine) -> bool {
        address
            .and_then(|address| self.endpoints.get_mut(&address))
            .is_some_and(|endpoint: &mut PeerEndpoint| endpoint.send_chat(line.clone()))
    }

    /// A line from link `index`'s machine: shown, and relayed to the
    /// spectators.
    pub(super) fn on_link_chat(&mut self, index: usize, line: ChatLine) {
        let seat = self.links[index].first_player.index();
        let line = shown(line, || format!("P{}", seat + 1));
        self.relay_chat(&line, None);
        self.events.push_back(NetplayEvent::Chat(line));
    }

    /// A line from the spectator at `address`: shown, and relayed to the
    /// players and the other spectators.
    pub(super) fn on_spectator_chat(&mut self, address: A, line: ChatLine) {
        let Some(number) = self
            .spectators
            .iter()
            .find(|s| s.address == address)
            .map(|s| s.number)
        else {
            return;
        };
        let line = shown(line, || format!("spectator {number}"));
        for index in 0..self.links.len() {
            if self.links[index].state == LinkState::Open {
                let relayed = relayed(&line);
                self.send_chat_to(self.links[index].address, &relayed);
            }
        }
        self.relay_chat(&line, Some(address));
        self.events.push_back(NetplayEvent::Chat(line));
    }

    /// Sends `line` to every open spectator but `except`.
    fn relay_chat(&mut self, line: &ChatShown, except: Option<A>) {
        let relayed = relayed(line);
        for index in 0..self.spectators.len() {
            let spectator = &self.spectators[index];
            if spectator.open && Some(spectator.address) != except {
                self.send_chat_to(Some(spectator.address), &relayed);
            }
        }
    }
}

/// A line passed on under the name it is shown with here.
fn relayed(line: &ChatShown) -> ChatLine {
    ChatLine {
        author: line.author.clone(),
        text: line.text.clone(),
    }
}
