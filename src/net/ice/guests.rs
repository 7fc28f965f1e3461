//! Peers met beside a match, on its socket: a room's host meets each
//! spectator (and a player coming back after a restart, who watches its way
//! in) with an ICE agent of its own while the match runs over the path its
//! player's agent chose. The room lives on another thread: what its peers
//! say comes in as [`GuestEvent`]s and what the meetings tell them goes out
//! as [`GuestNews`], through channels, so the match's loop never waits on
//! the room.
//!
//! The meetings offer no relay of the host's: the match's path may hold
//! the socket's one TURN allocation (a server keys it by the socket), and a
//! guest's own relay reaches the host wherever it is. Once a guest's path is
//! found and its handshake began over it, the agent's work is done (rice-proto
//! asks for no consent checks afterwards): the match's protocol takes the
//! guest from there, as it takes one that dialled the host's address.

use super::meetings::MeetingLimits;
use super::transport::BesideTheMatch;
use super::{IceConfig, IceRole, MeetingEnd, MeetingOutcome, MeetingSocket};
use crate::net::room::PeerId;
use crate::net::signal::SignalError;
use crate::net::Transport;
use std::net::SocketAddr;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError, TrySendError};

/// Room events taken per step: a room flooding the channel delays its own
/// guests, never the match.
const EVENTS_PER_STEP: usize = 64;

/// Messages either way that may wait: past them a flood of the room's (or
/// of the meetings') is dropped, so neither side's memory grows with it.
const QUEUED_MESSAGES: usize = 256;

/// What the room heard of a guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuestEvent {
    /// It said hello and wants to be met.
    Arrived(PeerId),
    /// It sent one of ICE's messages.
    Signal(PeerId, String),
    /// It left the room.
    Left(PeerId),
}

/// What the meetings tell the room about a guest.
#[derive(Debug)]
pub enum GuestNews {
    /// An ICE message for it.
    Signal(PeerId, String),
    /// Its path is found and its handshake began over it.
    Met(PeerId),
    /// Its meeting ended without a path (or without a handshake over it).
    Failed(PeerId, MeetingEnd),
}

/// The room's end of [`Guests`]: events in, news out.
pub struct GuestLine {
    /// What the room heard (dropped while [`QUEUED_MESSAGES`] wait).
    pub events: SyncSender<GuestEvent>,
    /// What the meetings say.
    pub news: Receiver<GuestNews>,
}

/// The meetings beside a match (see the module's comment).
pub struct Guests {
    meetings: MeetingSocket<PeerId>,
    events: Receiver<GuestEvent>,
    news: SyncSender<GuestNews>,
}

impl Guests {
    /// Meetings on the socket reachable at `local` with `config`'s STUN
    /// servers (its relays are left out), controlled by the host.
    pub fn new(local: SocketAddr, config: IceConfig, limits: MeetingLimits) -> (Guests, GuestLine) {
        let config = IceConfig {
            relays: Vec::new(),
            ..config
        };
        Guests::continuing(MeetingSocket::new(
            local,
            config,
            IceRole::Controlling,
            limits,
        ))
    }

    /// The meetings a room's host began before its match, going on beside
    /// it (the other players of a match of 3 or 4), and later comers.
    pub fn continuing(meetings: MeetingSocket<PeerId>) -> (Guests, GuestLine) {
        let (events, events_in) = sync_channel(QUEUED_MESSAGES);
        let (news_out, news) = sync_channel(QUEUED_MESSAGES);
        let guests = Guests {
            meetings,
            events: events_in,
            news: news_out,
        };
        (guests, GuestLine { events, news })
    }
}

impl BesideTheMatch for Guests {
    /// Takes a datagram of the match's socket when it is a guest's check or
    /// an answer to one (see [`MeetingSocket::hear_beside_match`]).
    fn hear(&mut self, from: SocketAddr, datagram: &[u8]) -> bool {
        self.meetings.hear_beside_match(from, datagram)
    }

    /// Takes the room's events and steps every guest's meeting at `now_us`,
    /// sending what they ask for on `socket`.
    fn step(&mut self, now_us: u64, socket: &mut dyn Transport<Address = SocketAddr>) {
        for _ in 0..EVENTS_PER_STEP {
            match self.events.try_recv() {
                Ok(GuestEvent::Arrived(peer)) => {
                    self.meetings.offer(peer, now_us);
                }
                Ok(GuestEvent::Signal(peer, text)) => self.meetings.deliver_signal(&peer, text),
                Ok(GuestEvent::Left(peer)) => self.meetings.end(&peer),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
            }
        }
        let news = &self.news;
        let mut send = |peer: &PeerId, text: &str| {
            match news.try_send(GuestNews::Signal(peer.clone(), text.to_owned())) {
                // A room that does not keep up loses messages, as a lossy
                // server would: the match never waits on it.
                Ok(()) | Err(TrySendError::Full(_)) => Ok(()),
                Err(TrySendError::Disconnected(_)) => {
                    Err(SignalError::Server("the room was left".into()))
                }
            }
        };
        for outcome in self.meetings.advance(now_us, socket, &mut send) {
            let told = match outcome {
                MeetingOutcome::Ready(peer) => {
                    // No relay of ours: nothing to release.
                    drop(self.meetings.finish(&peer));
                    GuestNews::Met(peer)
                }
                MeetingOutcome::Ended(peer, why) => GuestNews::Failed(peer, why),
            };
            // A room that was left hears nothing more.
            let _ = self.news.try_send(told);
        }
    }
}
