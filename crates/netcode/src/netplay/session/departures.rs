//! Players leaving: a closed link's players leave at the earliest frame any
//! machine still playing announces, so all simulate the same inputs.

use super::{player_set, LinkState, NetplaySession};
use crate::netplay::config::Connect;
use crate::netplay::events::{NetplayEvent, PeerFault};
use crate::netplay::startup::StartPhase;
use crate::protocol::{self, DisconnectCause};
use crate::rollback::{DisconnectReason, Frame, PlayerId, SessionError};

/// A remote player leaving the match, until every peer agrees on the frame.
#[derive(Clone, Copy, Debug)]
pub(super) struct Departure {
    /// One past the last input of the player we hold: what we tell peers.
    view: Frame,
    reason: DisconnectReason,
    decided: bool,
}

impl<A: Ord + Copy + std::hash::Hash> NetplaySession<A> {
    /// The last frame whose every input is final: confirmed here, and beyond
    /// the reach of any departure still to be decided (a departure fixes the
    /// leaver's input to `NONE` from the earliest frame any machine holds,
    /// which can rewrite inputs confirmed here). Spectators, replays and
    /// checksum logs take only final frames: they leave the session for good.
    ///
    /// With two players connected a departure ends the match, so nothing is
    /// re-simulated and confirmed is final. With more, every other machine
    /// `M` holds each player's inputs at least up to where `M`'s own inputs
    /// prove it had simulated (its input delay and prediction window behind
    /// them) or through the last frame it sent a checksum of, and no further
    /// than any departure frame it announced.
    pub fn finalized_frame(&self) -> Option<Frame> {
        let confirmed = self.session.confirmed_frame()?;
        let connected = self.session.connected_players();
        if connected.len() < 3 {
            return Some(confirmed);
        }
        let settings = &self.config.settings;
        // One more than the window, for a machine stalled on the frame after
        // the last one it simulated.
        let behind = u32::from(settings.max_prediction) + u32::from(settings.input_delay_max) + 1;
        let mut end = confirmed.next();
        for link in &self.links {
            if link.state != LinkState::Open {
                continue;
            }
            let Some(endpoint) = link.address.and_then(|a| self.endpoints.get(&a)) else {
                continue;
            };
            if !endpoint.is_running() {
                continue;
            }
            let machine_inputs_end = link
                .players
                .iter()
                .map(|player| self.session.received_inputs_end(PlayerId::new(player)))
                .min()
                .unwrap_or(Frame::ZERO);
            // A checksum it sent proves more: at the end of a match of
            // fixed length, nothing else does.
            let checksummed_end = link.checksummed.map_or(Frame::ZERO, Frame::next);
            let held_there = machine_inputs_end
                .saturating_back(behind)
                .max(checksummed_end);
            let announced = endpoint.remote_connection_status().disconnected_at;
            for player in connected.iter() {
                if link.players.contains(player.index() as u8) {
                    continue;
                }
                end = end.min(held_there);
                if let Some(at) = announced[player.index()] {
                    end = end.min(at);
                }
            }
        }
        end.previous()
    }

    /// The peer of link `index` did something no honest peer does: only its
    /// link pays (its players leave as on a disconnect), never this machine
    /// or the other links.
    pub(super) fn close_for_fault(&mut self, index: usize, fault: PeerFault) {
        if self.links[index].state == LinkState::Closed {
            return;
        }
        self.events.push_back(NetplayEvent::PeerFault {
            players: player_set(self.links[index].players),
            fault,
        });
        self.close_link(index, DisconnectReason::ProtocolViolation);
    }

    /// The link is over: its players leave once every machine still
    /// playing has said how far it holds their inputs.
    pub(super) fn close_link(&mut self, index: usize, reason: DisconnectReason) {
        if self.links[index].state == LinkState::Closed {
            return;
        }
        if self.reopens(index) {
            // Nothing was played with this joiner: another may take its slot.
            if let Some(endpoint) = self.open_endpoint(index) {
                endpoint.disconnect(protocol::DisconnectReason::ProtocolError);
            }
            self.events.push_back(NetplayEvent::JoinerLeftBeforeStart {
                players: player_set(self.links[index].players),
            });
            self.reopen_slot(index);
            return;
        }
        let link = &mut self.links[index];
        link.state = LinkState::Closed;
        let players = link.players;
        self.startup.on_link_closed(index);
        if let Some(endpoint) = link.address.and_then(|a| self.endpoints.get_mut(&a)) {
            endpoint.disconnect(match reason {
                DisconnectReason::ProtocolViolation => protocol::DisconnectReason::ProtocolError,
                _ => protocol::DisconnectReason::Quit,
            });
        }
        for player in players.iter() {
            let view = self.session.received_inputs_end(PlayerId::new(player));
            self.departures[player as usize] = Some(Departure {
                view,
                reason,
                decided: false,
            });
            for other in &self.links {
                if let Some(endpoint) = other
                    .address
                    .filter(|_| other.state == LinkState::Open)
                    .and_then(|a| self.endpoints.get_mut(&a))
                {
                    endpoint.set_local_connection_status(player, Some(view));
                }
            }
        }
    }

    /// Whether link `index` goes back to waiting for a joiner when it fails:
    /// a link we accept, before the start moment was decided.
    pub(super) fn reopens(&self, index: usize) -> bool {
        self.links[index].connect == Connect::Accept
            && self.startup.phase() == StartPhase::Waiting
            && !self.left
    }

    /// Link `index` waits for a Hello again, as when the session began: its
    /// endpoint is dropped (a refusal already queued still goes out) and the
    /// start-up forgets what it measured of that joiner.
    pub(super) fn reopen_slot(&mut self, index: usize) {
        let link = &mut self.links[index];
        if let Some(address) = link.address.take() {
            self.endpoints.remove(&address);
        }
        link.address = link.configured_address;
        link.state = LinkState::AwaitingHello;
        self.startup.on_link_reopened(index);
    }

    /// Drops each leaving player whose frame every machine still playing
    /// has announced, at the earliest announced frame.
    pub(super) fn decide_departures(&mut self) {
        for player in 0..self.session.players() {
            let Some(departure) = self.departures[player] else {
                continue;
            };
            if departure.decided {
                continue;
            }
            let mut at = departure.view;
            // The link whose announcement set `at`, if not our own view.
            let mut earliest_claimer = None;
            let mut everyone_said = true;
            for (index, link) in self.links.iter().enumerate() {
                if link.state != LinkState::Open || link.players.contains(player as u8) {
                    continue;
                }
                let Some(endpoint) = link.address.and_then(|a| self.endpoints.get(&a)) else {
                    continue;
                };
                if !endpoint.is_running() {
                    continue;
                }
                match endpoint.remote_connection_status().disconnected_at[player] {
                    Some(frame) if frame < at => {
                        at = frame;
                        earliest_claimer = Some(index);
                    }
                    Some(_) => {}
                    None => everyone_said = false,
                }
            }
            if !everyone_said {
                continue;
            }
            if let Some(departure) = &mut self.departures[player] {
                departure.decided = true;
            }
            let result =
                self.session
                    .disconnect_player(PlayerId::new(player as u8), at, departure.reason);
            if let Err(SessionError::DisconnectTooFarBack {
                player,
                frame,
                oldest,
            }) = result
            {
                if let Some(claimer) = earliest_claimer {
                    // The state ring is sized so that no machine still
                    // playing can announce a frame this old (see
                    // `rollback::session`): the claimer lies or is broken.
                    // Its link closes and the others decide without it.
                    if let Some(departure) = &mut self.departures[player.index()] {
                        departure.decided = false;
                    }
                    let fault = PeerFault::ImpossibleDeparture {
                        player,
                        at_frame: frame,
                        oldest,
                    };
                    self.close_for_fault(claimer, fault);
                    self.decide_departures();
                    return;
                }
                // Our own view is too old (not seen in the cases analysed):
                // following the others is impossible, so leave rather than
                // fail every tick.
                self.events.push_back(NetplayEvent::DepartureTooFarBack {
                    player,
                    at_frame: frame,
                    oldest,
                });
                self.leave();
                return;
            }
            self.record(result);
        }
    }

    /// Link `index`'s machine dropped `player` at `at`: drop it too, so that
    /// every machine announces its view and all agree. Claims about our own
    /// players are its view, not ours: we are here, and play on.
    pub(super) fn on_remote_sees_disconnect(&mut self, index: usize, player: u8, at: Frame) {
        if player as usize >= self.session.players() || self.local_players.contains(player) {
            return;
        }
        let claim = self
            .session
            .check_disconnect_frame(PlayerId::new(player), at);
        if let Err(SessionError::DisconnectTooFarBack {
            player,
            frame,
            oldest,
        }) = claim
        {
            let fault = PeerFault::ImpossibleDeparture {
                player,
                at_frame: frame,
                oldest,
            };
            self.close_for_fault(index, fault);
            return;
        }
        if let Some(leaver) = self.links.iter().position(|l| l.players.contains(player)) {
            if self.links[leaver].state != LinkState::Closed {
                self.close_link(leaver, DisconnectReason::TimedOut);
            }
        }
    }

    /// Link `index`'s endpoint closed: its players leave, for the reason it
    /// gives (a peer that stopped acknowledging is at fault).
    pub(super) fn on_link_disconnected(&mut self, index: usize, cause: DisconnectCause) {
        let reason = match cause {
            DisconnectCause::Unacknowledged { frames } => {
                self.close_for_fault(index, PeerFault::StoppedAcknowledging { frames });
                return;
            }
            DisconnectCause::Timeout { .. } => DisconnectReason::TimedOut,
            DisconnectCause::PeerLeft(protocol::DisconnectReason::Quit) => DisconnectReason::Quit,
            DisconnectCause::PeerLeft(protocol::DisconnectReason::Timeout) => {
                DisconnectReason::TimedOut
            }
            DisconnectCause::PeerLeft(protocol::DisconnectReason::Desync) => {
                DisconnectReason::Desynchronized
            }
            DisconnectCause::PeerLeft(protocol::DisconnectReason::Stalled) => {
                DisconnectReason::Stalled
            }
            DisconnectCause::PeerLeft(_) | DisconnectCause::Rejected(_) => {
                DisconnectReason::ProtocolViolation
            }
        };
        self.close_link(index, reason);
    }
}
