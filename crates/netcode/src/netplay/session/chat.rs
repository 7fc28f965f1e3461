//! Chat in a match: our lines go to every machine we link to; the peers'
//! come to the frontend. Spectators link only to the machine that feeds
//! them, so that machine relays: a player's line to every spectator, a
//! spectator's to every player and the other spectators. Relaying on every
//! link would send the players of a 3–4 player match (a full mesh) each
//! other's lines twice.

use super::{LinkState, NetplaySession};
use crate::netplay::chat::{from_player, from_seat, relayed, ChatRefused, ChatShown};
use crate::netplay::NetplayEvent;
use crate::protocol::{ChatLine, ChatRateLimit, Millis, PeerEndpoint};

impl<A: Ord + Copy + std::hash::Hash> NetplaySession<A> {
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
        let seat = self.local_players.iter().next().unwrap_or(0);
        let shown = from_seat(format!("P{}", seat + 1), line);
        // Spectators take their host's labels as they come: ours goes labelled.
        let labelled = relayed(&shown);
        for index in 0..self.spectators.len() {
            if self.spectators[index].open {
                taken |= self.send_chat_to(Some(self.spectators[index].address), &labelled);
            }
        }
        if !taken {
            return Err(ChatRefused::NoOneToTell);
        }
        Ok(shown)
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
        // Only the host (P1) relays others' lines; any other link is one
        // sender, whatever names it claims, and each of its lines costs a
        // datagram to every spectator we feed.
        if seat != 0 {
            let now = self.now;
            let limit = self.links[index]
                .chat_limit
                .get_or_insert_with(|| ChatRateLimit::new(now));
            if !limit.allow(now) {
                return;
            }
        }
        let line = from_player(seat, line);
        self.relay_chat(&line, None);
        self.events.push_back(NetplayEvent::Chat(line));
    }

    /// A line from the spectator at `address`: shown, and relayed to the
    /// players and the other spectators, at most as fast as one honest
    /// sender says them.
    pub(super) fn on_spectator_chat(&mut self, address: A, line: ChatLine) {
        let now = self.now;
        let Some(spectator) = self.spectators.iter_mut().find(|s| s.address == address) else {
            return;
        };
        // Its endpoint limits each name it claims; one sender it is, and
        // each line costs a datagram on every other link.
        if !spectator.chat_limit.allow(now) {
            return;
        }
        let number = spectator.number;
        let line = from_seat(format!("spectator {number}"), line);
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

#[cfg(test)]
mod tests {
    use super::super::spectators::Spectator;
    use super::*;
    use crate::netplay::NetplayConfig;
    use crate::protocol::{PlayerSlots, SessionSettings, SessionToken};

    /// Player 1's session of a two-player match, player 2 accepted.
    fn duel_host() -> NetplaySession<u8> {
        let settings = SessionSettings {
            player_count: 2,
            ..SessionSettings::default()
        };
        let config = NetplayConfig::new(
            SessionToken(1),
            "core",
            "1",
            0,
            settings,
            PlayerSlots::single(0),
        )
        .accept(Some(2u8), PlayerSlots::single(1));
        NetplaySession::new(config, 0).unwrap()
    }

    #[test]
    fn a_spectator_inventing_names_is_relayed_no_faster_than_one_sender() {
        let mut host = duel_host();
        host.spectators.push(Spectator::arrived(1, 9, 0));
        for index in 0..20 {
            let line = ChatLine {
                author: format!("name {index}"),
                text: "spam".to_string(),
            };
            host.on_spectator_chat(9, line);
        }
        let shown = std::iter::from_fn(|| host.events.pop_front())
            .filter(|event| matches!(event, NetplayEvent::Chat(_)))
            .count();
        assert_eq!(shown, crate::protocol::chat::CHAT_BURST_LINES as usize);
    }

    #[test]
    fn a_player_inventing_names_is_relayed_no_faster_than_one_sender() {
        let mut host = duel_host();
        for index in 0..20 {
            let line = ChatLine {
                author: format!("spectator {index}"),
                text: "spam".to_string(),
            };
            host.on_link_chat(0, line);
        }
        let shown: Vec<String> = std::iter::from_fn(|| host.events.pop_front())
            .filter_map(|event| match event {
                NetplayEvent::Chat(line) => Some(line.author),
                _ => None,
            })
            .collect();
        // P2 does not relay: it cannot pass for a spectator either.
        assert_eq!(
            shown,
            [
                "P2 spectator 0",
                "P2 spectator 1",
                "P2 spectator 2",
                "P2 spectator 3",
                "P2 spectator 4"
            ]
        );
    }
}
