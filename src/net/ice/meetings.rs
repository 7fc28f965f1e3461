//! The decisions of a host meeting several peers at once on its one game
//! socket, with no I/O and no clock (time is a parameter): which meetings
//! run (at most [`MeetingLimits::max_meetings`], the rest wait in a bounded
//! queue), when each must end (its own deadline: ICE's, then a short one
//! for the handshake's first datagram once its path is found), and which
//! meeting each datagram arriving on the shared socket belongs to:
//!
//! - a STUN request carries `USERNAME` `ours:theirs`, and `ours` (the
//!   local username fragment) names the meeting it checks;
//! - a STUN answer belongs to the meeting that sent its transaction;
//! - anything else that is not netcade's (a relay's ChannelData or Data
//!   indication) to the meeting that last sent to its sender;
//! - a netcade datagram to the meeting whose path leads to its sender
//!   (or, before any path is found, that last sent to it).
//!
//! A peer that never completes costs its own slot until its deadline,
//! never another's.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::time::Duration;

use super::stun_peek::{stun, Stun, StunClass};

/// Transactions remembered per meeting: checks are paced in tens of
/// milliseconds and retransmitted under the same id, so an answer older
/// than these is one nobody waits for.
const TRANSACTIONS_KEPT: usize = 256;
/// Addresses remembered per meeting as sent to.
const ADDRESSES_KEPT: usize = 32;

/// How many meetings run at once, how many wait, and how long each has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeetingLimits {
    /// Meetings running at once.
    pub max_meetings: usize,
    /// Peers queued while every slot is taken (more are refused).
    pub max_waiting: usize,
    /// From a meeting's start to its path.
    pub connect_within: Duration,
    /// From its path to the first netcade datagram over it (the opponent's
    /// handshake begins as soon as its side has the path).
    pub handshake_within: Duration,
}

/// What [`Meetings::offer`] did with a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// A slot was free: its meeting starts now.
    Start,
    /// Every slot is taken: it starts when one frees.
    Waiting,
    /// It is already meeting or waiting, or the queue is full.
    Refused,
}

/// Why a meeting ended without a match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// ICE found no path in time.
    NoPath,
    /// The path was found but no handshake came over it in time.
    NoHandshake,
}

#[derive(Debug)]
struct Meeting {
    deadline_us: u64,
    /// The local username fragment its checks are addressed to.
    ufrag: Option<String>,
    /// Where its path leads, once found.
    remote: Option<SocketAddr>,
    transactions: VecDeque<[u8; 12]>,
    /// Most recent last.
    sent_to: VecDeque<SocketAddr>,
}

/// The meetings of one socket (see the module's comment).
#[derive(Debug)]
pub struct Meetings<K> {
    limits: MeetingLimits,
    running: BTreeMap<K, Meeting>,
    waiting: VecDeque<K>,
}

impl<K: Ord + Clone> Meetings<K> {
    /// No meetings yet.
    pub fn new(limits: MeetingLimits) -> Self {
        Meetings {
            limits,
            running: BTreeMap::new(),
            waiting: VecDeque::new(),
        }
    }

    /// Offers a peer that asked to meet at `now_us`.
    pub fn offer(&mut self, peer: K, now_us: u64) -> Admission {
        if self.running.contains_key(&peer) || self.waiting.contains(&peer) {
            return Admission::Refused;
        }
        if self.running.len() < self.limits.max_meetings {
            self.begin(peer, now_us);
            return Admission::Start;
        }
        if self.waiting.len() < self.limits.max_waiting {
            self.waiting.push_back(peer);
            return Admission::Waiting;
        }
        Admission::Refused
    }

    /// The next waiting peer whose meeting starts now, when a slot is free.
    pub fn promote(&mut self, now_us: u64) -> Option<K> {
        if self.running.len() >= self.limits.max_meetings {
            return None;
        }
        let peer = self.waiting.pop_front()?;
        self.begin(peer.clone(), now_us);
        Some(peer)
    }

    fn begin(&mut self, peer: K, now_us: u64) {
        let meeting = Meeting {
            deadline_us: now_us.saturating_add(micros(self.limits.connect_within)),
            ufrag: None,
            remote: None,
            transactions: VecDeque::new(),
            sent_to: VecDeque::new(),
        };
        self.running.insert(peer, meeting);
    }

    /// The local username fragment `peer`'s checks will name.
    pub fn set_ufrag(&mut self, peer: &K, ufrag: &str) {
        if let Some(meeting) = self.running.get_mut(peer) {
            meeting.ufrag = Some(ufrag.to_owned());
        }
    }

    /// `peer`'s path leads to `remote`, found at `now_us`: its handshake
    /// has [`MeetingLimits::handshake_within`] from now.
    pub fn connected(&mut self, peer: &K, remote: SocketAddr, now_us: u64) {
        let within = micros(self.limits.handshake_within);
        if let Some(meeting) = self.running.get_mut(peer) {
            if meeting.remote.is_none() {
                meeting.remote = Some(remote);
                meeting.deadline_us = now_us.saturating_add(within);
            }
        }
    }

    /// Ends `peer`'s meeting or takes it off the queue (it failed or left).
    pub fn end(&mut self, peer: &K) {
        self.running.remove(peer);
        self.waiting.retain(|waiting| waiting != peer);
    }

    /// Ends the meetings whose deadline passed at `now_us`, and says why.
    pub fn expire(&mut self, now_us: u64) -> Vec<(K, Expiry)> {
        let expired: Vec<(K, Expiry)> = self
            .running
            .iter()
            .filter(|(_, meeting)| now_us >= meeting.deadline_us)
            .map(|(peer, meeting)| {
                let why = match meeting.remote {
                    None => Expiry::NoPath,
                    Some(_) => Expiry::NoHandshake,
                };
                (peer.clone(), why)
            })
            .collect();
        for (peer, _) in &expired {
            self.running.remove(peer);
        }
        expired
    }

    /// The peers meeting now.
    pub fn running(&self) -> impl Iterator<Item = &K> {
        self.running.keys()
    }

    /// Where `peer`'s path leads, once found (its meeting still running).
    pub fn path_of(&self, peer: &K) -> Option<SocketAddr> {
        self.running.get(peer).and_then(|meeting| meeting.remote)
    }

    /// True when `peer` waits for a slot.
    pub fn is_waiting(&self, peer: &K) -> bool {
        self.waiting.contains(peer)
    }

    /// True when `peer` is meeting now.
    pub fn is_running(&self, peer: &K) -> bool {
        self.running.contains_key(peer)
    }

    /// Notes that `peer`'s meeting sent `datagram` to `to`, so answers
    /// find their way back.
    pub fn sent(&mut self, peer: &K, to: SocketAddr, datagram: &[u8]) {
        let Some(meeting) = self.running.get_mut(peer) else {
            return;
        };
        if let Some(Stun {
            class: StunClass::Request,
            transaction,
            ..
        }) = stun(datagram)
        {
            if !meeting.transactions.contains(&transaction) {
                if meeting.transactions.len() >= TRANSACTIONS_KEPT {
                    meeting.transactions.pop_front();
                }
                meeting.transactions.push_back(transaction);
            }
        }
        if meeting.sent_to.back() != Some(&to) {
            meeting.sent_to.retain(|address| *address != to);
            if meeting.sent_to.len() >= ADDRESSES_KEPT {
                meeting.sent_to.pop_front();
            }
            meeting.sent_to.push_back(to);
        }
    }

    /// The meeting a datagram from `from` belongs to, if any.
    pub fn route(&self, from: SocketAddr, datagram: &[u8]) -> Option<&K> {
        if super::is_netcade_datagram(datagram) {
            // Over a found path; or early, from an address being checked.
            return self
                .find(|meeting| meeting.remote == Some(from))
                .or_else(|| self.last_sent_to(from));
        }
        match stun(datagram) {
            Some(Stun {
                class: StunClass::Request | StunClass::Indication,
                username: Some(_),
                ..
            })
            | Some(Stun {
                class: StunClass::Success | StunClass::Error,
                ..
            }) => self.route_check(datagram),
            _ => self.last_sent_to(from),
        }
    }

    /// The meeting a STUN datagram belongs to by what it names alone: a
    /// check by its username fragment, an answer by its transaction.
    /// Meetings that offer no relay are found by these only, so a socket
    /// whose match runs beside them keeps its relay's traffic (its
    /// ChannelData and Data indications) to itself.
    pub fn route_check(&self, datagram: &[u8]) -> Option<&K> {
        match stun(datagram)? {
            Stun {
                class: StunClass::Request | StunClass::Indication,
                username: Some(ours),
                ..
            } => self.find(|meeting| meeting.ufrag.as_deref() == Some(ours)),
            Stun {
                class: StunClass::Success | StunClass::Error,
                transaction,
                ..
            } => self.find(|meeting| meeting.transactions.contains(&transaction)),
            _ => None,
        }
    }

    /// The meeting that sent to `from` most recently of its sends.
    fn last_sent_to(&self, from: SocketAddr) -> Option<&K> {
        self.running
            .iter()
            .filter_map(|(peer, meeting)| {
                let at = meeting.sent_to.iter().position(|to| *to == from)?;
                Some((peer, meeting.sent_to.len() - at))
            })
            .min_by_key(|(_, age)| *age)
            .map(|(peer, _)| peer)
    }

    fn find(&self, matches: impl Fn(&Meeting) -> bool) -> Option<&K> {
        self.running
            .iter()
            .find(|(_, meeting)| matches(meeting))
            .map(|(peer, _)| peer)
    }
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: MeetingLimits = MeetingLimits {
        max_meetings: 2,
        max_waiting: 1,
        connect_within: Duration::from_secs(15),
        handshake_within: Duration::from_secs(3),
    };
    const SECOND: u64 = 1_000_000;

    fn address(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    fn stun_message(class: StunClass, id: u8, username: Option<&str>) -> Vec<u8> {
        super::super::stun_peek::tests::binding(class, id, username, false)
    }

    #[test]
    fn meetings_beyond_the_slots_wait_and_start_as_slots_free() {
        let mut meetings = Meetings::new(LIMITS);
        assert_eq!(meetings.offer("a", 0), Admission::Start);
        assert_eq!(meetings.offer("b", 0), Admission::Start);
        assert_eq!(meetings.offer("a", 0), Admission::Refused);
        assert_eq!(meetings.offer("c", 0), Admission::Waiting);
        assert_eq!(
            meetings.offer("d", 0),
            Admission::Refused,
            "the queue is full"
        );
        assert_eq!(meetings.promote(SECOND), None, "no slot is free");
        meetings.end(&"a");
        assert_eq!(meetings.promote(SECOND), Some("c"));
        assert_eq!(meetings.running().collect::<Vec<_>>(), [&"b", &"c"]);
        assert_eq!(meetings.promote(SECOND), None);
    }

    #[test]
    fn each_meeting_has_its_own_deadline_and_a_short_one_once_its_path_is_found() {
        let mut meetings = Meetings::new(LIMITS);
        meetings.offer("rogue", 0);
        meetings.offer("player", 5 * SECOND);
        meetings.connected(&"player", address("10.0.0.2:7000"), 6 * SECOND);
        assert_eq!(meetings.expire(9 * SECOND - 1), []);
        assert_eq!(
            meetings.expire(9 * SECOND),
            [("player", Expiry::NoHandshake)]
        );
        assert_eq!(meetings.expire(15 * SECOND - 1), []);
        assert_eq!(meetings.expire(15 * SECOND), [("rogue", Expiry::NoPath)]);
        assert_eq!(meetings.running().count(), 0);
    }

    #[test]
    fn a_waiting_peer_starts_its_deadline_when_its_meeting_starts() {
        let mut meetings = Meetings::new(MeetingLimits {
            max_meetings: 1,
            ..LIMITS
        });
        meetings.offer("first", 0);
        meetings.offer("second", 0);
        assert_eq!(meetings.expire(15 * SECOND), [("first", Expiry::NoPath)]);
        assert_eq!(meetings.promote(15 * SECOND), Some("second"));
        assert_eq!(meetings.expire(29 * SECOND), []);
        assert!(meetings.is_running(&"second"));
    }

    #[test]
    fn checks_go_to_the_meeting_whose_fragment_they_name_and_answers_to_the_sender() {
        let mut meetings = Meetings::new(LIMITS);
        meetings.offer("a", 0);
        meetings.offer("b", 0);
        meetings.set_ufrag(&"a", "aaaa");
        meetings.set_ufrag(&"b", "bbbb");
        let peer = address("10.0.0.9:5000");
        let check = stun_message(StunClass::Request, 1, Some("bbbb:remote"));
        assert_eq!(meetings.route(peer, &check), Some(&"b"));
        let stranger = stun_message(StunClass::Request, 1, Some("zzzz:remote"));
        assert_eq!(meetings.route(peer, &stranger), None);
        // a's own check to the peer: the answer is a's, wherever it comes from.
        meetings.sent(
            &"a",
            peer,
            &stun_message(StunClass::Request, 7, Some("x:aaaa")),
        );
        let answer = stun_message(StunClass::Success, 7, None);
        assert_eq!(meetings.route(address("10.0.0.10:1"), &answer), Some(&"a"));
        let unasked = stun_message(StunClass::Error, 8, None);
        assert_eq!(meetings.route(peer, &unasked), None);
    }

    #[test]
    fn relay_traffic_goes_to_the_meeting_that_last_sent_to_the_relay() {
        let mut meetings = Meetings::new(LIMITS);
        meetings.offer("a", 0);
        meetings.offer("b", 0);
        let relay = address("10.0.0.1:3478");
        let channel_data = [0x40, 0x00, 0x00, 0x02, b'n', b'c'];
        assert_eq!(meetings.route(relay, &channel_data), None);
        meetings.sent(&"a", relay, b"\x40\x00\x00\x00");
        meetings.sent(&"b", address("10.0.0.2:1"), b"x");
        assert_eq!(meetings.route(relay, &channel_data), Some(&"a"));
        meetings.sent(&"b", relay, b"\x40\x00\x00\x00");
        meetings.sent(&"a", address("10.0.0.3:1"), b"x");
        assert_eq!(meetings.route(relay, &channel_data), Some(&"b"));
    }

    #[test]
    fn by_what_they_name_alone_only_checks_and_their_answers_find_a_meeting() {
        let mut meetings = Meetings::new(LIMITS);
        meetings.offer("spectator", 0);
        meetings.set_ufrag(&"spectator", "ssss");
        let server = address("10.0.0.1:3478");
        // The meeting asked the server for its address: the answer is its,
        // the match's relay traffic from that server is not.
        meetings.sent(
            &"spectator",
            server,
            &stun_message(StunClass::Request, 3, None),
        );
        let answer = stun_message(StunClass::Success, 3, None);
        assert_eq!(meetings.route_check(&answer), Some(&"spectator"));
        let check = stun_message(StunClass::Request, 4, Some("ssss:remote"));
        assert_eq!(meetings.route_check(&check), Some(&"spectator"));
        let channel_data = [0x40, 0x00, 0x00, 0x02, b'n', b'c'];
        assert_eq!(meetings.route(server, &channel_data), Some(&"spectator"));
        assert_eq!(meetings.route_check(&channel_data), None);
        let players_check = stun_message(StunClass::Request, 5, Some("pppp:remote"));
        assert_eq!(meetings.route_check(&players_check), None);
        let players_answer = stun_message(StunClass::Success, 6, None);
        assert_eq!(meetings.route_check(&players_answer), None);
    }

    #[test]
    fn netcade_datagrams_go_to_the_meeting_whose_path_leads_to_their_sender() {
        let mut meetings = Meetings::new(LIMITS);
        meetings.offer("a", 0);
        meetings.offer("b", 0);
        let path = address("10.0.0.2:7000");
        assert_eq!(meetings.route(path, b"nc hello"), None, "from a stranger");
        meetings.sent(&"b", path, b"\x00\x01");
        assert_eq!(meetings.route(path, b"nc hello"), Some(&"b"), "early");
        meetings.connected(&"a", path, SECOND);
        assert_eq!(meetings.route(path, b"nc hello"), Some(&"a"));
        assert_eq!(meetings.route(address("10.0.0.2:7001"), b"nc hello"), None);
    }
}
