//! The other players of a room's match of 3 or 4: each joiner, once the
//! host seated it, tells the room its slot (a [`seat`] message), and every
//! two joiners find their path with ICE through the room, on each one's
//! game socket beside its path to the host, the lower slot controlling (as
//! the host controls its joiners). The path found places that player in
//! the match (`NetplaySession::place_roster_peer`), where the host's
//! roster would have, with the address the host sees it at, which behind
//! a NAT is not the one the other joiner reaches.

use crate::net::ice::meetings::MeetingLimits;
use crate::net::ice::{
    BesideTheMatch, GuestNews, IceConfig, IceRole, MeetingOutcome, MeetingSocket,
};
use crate::net::room::PeerId;
use crate::net::signal::SignalError;
use crate::net::Transport;
use netcode::netplay::RosterCodec;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError, TrySendError};

/// Room events taken per step, as for spectators' meetings.
const EVENTS_PER_STEP: usize = 64;

/// Messages either way that may wait (past them a flood is dropped).
const QUEUED_MESSAGES: usize = 256;

/// The most peers claiming a seat that are remembered.
const MAX_SEATED: usize = 64;

/// The longest seat message read; ours are about 30 bytes.
const MAX_SEAT_BYTES: usize = 64;

/// How a room's joiner reads the host's roster: it places nobody, as the
/// paths between joiners are ICE's ([`Mesh`]).
pub(crate) const PATHS_BY_ICE: RosterCodec<SocketAddr> = RosterCodec {
    encode: crate::live::connect::SOCKET_ADDRESSES.encode,
    decode: |_| None,
};

/// The message a seated joiner sends the room's peers.
pub(crate) fn seat(slot: u8) -> String {
    json!({"netcade": "seat", "slot": slot}).to_string()
}

/// The slot a seat message claims; `None` for any other text.
pub(crate) fn seat_of(text: &str) -> Option<u8> {
    if text.len() > MAX_SEAT_BYTES {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    if value.get("netcade")?.as_str()? != "seat" {
        return None;
    }
    let slot = u8::try_from(value.get("slot")?.as_u64()?).ok()?;
    (1..netcode::rollback::MAX_PLAYERS as u8)
        .contains(&slot)
        .then_some(slot)
}

/// What the room heard of another joiner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MeshEvent {
    /// It says it holds this slot.
    Seat(PeerId, u8),
    /// One of ICE's messages.
    Signal(PeerId, String),
    /// It left the room.
    Left(PeerId),
}

/// The room's end of a [`Mesh`]: events in, news out.
pub(crate) struct MeshLine {
    pub(crate) events: SyncSender<MeshEvent>,
    pub(crate) news: Receiver<GuestNews>,
}

/// The meetings with the other joiners, beside the path to the host.
pub(crate) struct Mesh {
    our_slot: u8,
    /// With the joiners of higher slots: we control.
    leading: MeetingSocket<PeerId>,
    /// With the joiners of lower slots: they control.
    following: MeetingSocket<PeerId>,
    seats: BTreeMap<PeerId, u8>,
    /// The peers whose path the match was told of (within `seats`).
    placed: BTreeSet<PeerId>,
    events: Receiver<MeshEvent>,
    news: SyncSender<GuestNews>,
    /// Each path found: the slot and where it leads, for the match.
    paths: SyncSender<(u8, SocketAddr)>,
}

impl Mesh {
    /// The meetings of the joiner of `our_slot` on the socket reachable at
    /// `local`, with `config`'s STUN servers (no relay: the path to the
    /// host may hold the socket's allocation); the receiver hears each path.
    pub(crate) fn new(
        our_slot: u8,
        local: SocketAddr,
        config: IceConfig,
        limits: MeetingLimits,
    ) -> (Mesh, MeshLine, Receiver<(u8, SocketAddr)>) {
        let config = IceConfig {
            relays: Vec::new(),
            ..config
        };
        let side = |role| MeetingSocket::new(local, config.clone(), role, limits);
        let (events, events_in) = sync_channel(QUEUED_MESSAGES);
        let (news_out, news) = sync_channel(QUEUED_MESSAGES);
        let (paths, found) = sync_channel(QUEUED_MESSAGES);
        let mesh = Mesh {
            our_slot,
            leading: side(IceRole::Controlling),
            following: side(IceRole::Controlled),
            seats: BTreeMap::new(),
            placed: BTreeSet::new(),
            events: events_in,
            news: news_out,
            paths,
        };
        (mesh, MeshLine { events, news }, found)
    }

    fn side(&mut self, slot: u8) -> &mut MeetingSocket<PeerId> {
        match slot > self.our_slot {
            true => &mut self.leading,
            false => &mut self.following,
        }
    }

    fn take_events(&mut self, now_us: u64) {
        for _ in 0..EVENTS_PER_STEP {
            match self.events.try_recv() {
                Ok(MeshEvent::Seat(peer, slot)) => {
                    let known = self.seats.contains_key(&peer);
                    if slot == self.our_slot || known || self.seats.len() >= MAX_SEATED {
                        continue;
                    }
                    self.seats.insert(peer.clone(), slot);
                    self.side(slot).offer(peer, now_us);
                }
                Ok(MeshEvent::Signal(peer, text)) => {
                    if let Some(&slot) = self.seats.get(&peer) {
                        self.side(slot).deliver_signal(&peer, text);
                    }
                }
                Ok(MeshEvent::Left(peer)) => {
                    self.placed.remove(&peer);
                    if let Some(slot) = self.seats.remove(&peer) {
                        self.side(slot).end(&peer);
                    }
                }
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
            }
        }
    }

    /// Tells the match where the paths found lead (once each).
    fn place_found(&mut self) {
        let found: Vec<(PeerId, u8, SocketAddr)> = self
            .seats
            .iter()
            .filter_map(|(peer, &slot)| {
                let side = match slot > self.our_slot {
                    true => &self.leading,
                    false => &self.following,
                };
                side.path_of(peer).map(|path| (peer.clone(), slot, path))
            })
            .collect();
        for (peer, slot, path) in found {
            if self.placed.insert(peer) {
                let _ = self.paths.try_send((slot, path));
            }
        }
    }
}

impl BesideTheMatch for Mesh {
    fn hear(&mut self, from: SocketAddr, datagram: &[u8]) -> bool {
        let leading = self.leading.hear_beside_match(from, datagram);
        leading || self.following.hear_beside_match(from, datagram)
    }

    fn step(&mut self, now_us: u64, socket: &mut dyn Transport<Address = SocketAddr>) {
        self.take_events(now_us);
        let news = &self.news;
        let mut send = |peer: &PeerId, text: &str| match news
            .try_send(GuestNews::Signal(peer.clone(), text.to_owned()))
        {
            Ok(()) | Err(TrySendError::Full(_)) => Ok(()),
            Err(TrySendError::Disconnected(_)) => {
                Err(SignalError::Server("the room was left".into()))
            }
        };
        let mut outcomes = self.leading.advance(now_us, socket, &mut send);
        outcomes.extend(self.following.advance(now_us, socket, &mut send));
        self.place_found();
        for outcome in outcomes {
            let told = match outcome {
                MeetingOutcome::Ready(peer) => {
                    if let Some(&slot) = self.seats.get(&peer) {
                        drop(self.side(slot).finish(&peer));
                    }
                    GuestNews::Met(peer)
                }
                MeetingOutcome::Ended(peer, why) => GuestNews::Failed(peer, why),
            };
            let _ = self.news.try_send(told);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seat_message_names_a_joiners_slot_and_nothing_else_reads_as_one() {
        assert_eq!(seat_of(&seat(2)), Some(2));
        assert_eq!(seat_of(&seat(3)), Some(3));
        for other in [
            seat(0),
            seat(4),
            r#"{"netcade":"hello","slot":1}"#.to_string(),
            r#"{"netcade":"seat","slot":-1}"#.to_string(),
            format!(
                r#"{{"netcade":"seat","slot":1,"pad":"{}"}}"#,
                "x".repeat(80)
            ),
            "ice-credentials".to_string(),
        ] {
            assert_eq!(seat_of(&other), None, "{other}");
        }
    }
}
