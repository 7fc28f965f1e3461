//! Rejoining: a player whose datagrams start coming from a new address (a
//! NAT that rebound its port, another network) keeps its link. What came
//! from there is read with each running link's key; the link's peer (or
//! someone replaying it) is then challenged at that address, and the link
//! moves there only when the proof, tagged with the peer's key and echoing
//! a fresh nonce, comes back from it. Only a link whose peer went quiet
//! (interrupted) at its address is looked for elsewhere. A silent link meanwhile waits out the
//! rejoin window (`NetplayConfig::rejoin_window_ms`) before it is dropped.

use super::{player_set, LinkState, NetplaySession};
use crate::netplay::events::NetplayEvent;
use crate::protocol::{Message, Millis};

/// A challenge is sent again at most this often, and only after another
/// datagram came from its address: each challenge answers a datagram, so
/// one datagram replayed from a spoofed address earns that address one…
const CHALLENGE_INTERVAL_MS: Millis = 250;
/// …and no longer once none came from its address for this long.
const CHALLENGE_EXPIRY_MS: Millis = 2_000;
/// Challenges out at once (per match): a replayer at many addresses
/// replaces the oldest, never grows the list.
const MAX_CHALLENGES: usize = 8;

/// One new address challenged for link `link`.
#[derive(Clone, Copy, Debug)]
struct Challenge<A> {
    link: usize,
    address: A,
    nonce: u64,
    sent_at: Option<Millis>,
    last_heard_at: Millis,
    /// A datagram came from the address since the challenge was last sent.
    heard_since_sent: bool,
}

/// The challenges out, and where their nonces come from.
#[derive(Clone, Debug)]
pub(super) struct Rejoins<A> {
    challenges: Vec<Challenge<A>>,
    /// Random bytes from the caller (the pure session draws none itself).
    seed: u64,
    issued: u64,
    /// Links whose peer restarted and awaits the state to resume from.
    pub(super) resume_due: Vec<usize>,
}

impl<A: Copy + PartialEq> Rejoins<A> {
    pub(super) fn new(seed: u64) -> Self {
        Rejoins {
            challenges: Vec::new(),
            seed,
            issued: 0,
            resume_due: Vec::new(),
        }
    }

    /// A fresh nonce: the seed and a counter, hashed.
    fn next_nonce(&mut self) -> u64 {
        self.issued += 1;
        let mut input = [0u8; 16];
        input[..8].copy_from_slice(&self.seed.to_le_bytes());
        input[8..].copy_from_slice(&self.issued.to_le_bytes());
        let hash = blake3::hash(&input);
        let mut nonce = [0u8; 8];
        nonce.copy_from_slice(&hash.as_bytes()[..8]);
        u64::from_le_bytes(nonce)
    }

    /// Link `link`'s peer was read at `address`: challenge it there (once
    /// per address; its datagrams keep the challenge going).
    fn note(&mut self, now: Millis, link: usize, address: A) {
        if let Some(challenge) = self
            .challenges
            .iter_mut()
            .find(|c| c.link == link && c.address == address)
        {
            challenge.last_heard_at = now;
            challenge.heard_since_sent = true;
            return;
        }
        if self.challenges.len() >= MAX_CHALLENGES {
            self.challenges.remove(0);
        }
        let nonce = self.next_nonce();
        self.challenges.push(Challenge {
            link,
            address,
            nonce,
            sent_at: None,
            last_heard_at: now,
            heard_since_sent: true,
        });
    }

    /// Whether `nonce` from `address` answers a challenge of link `link`.
    fn proves(&self, link: usize, address: A, nonce: u64) -> bool {
        self.challenges
            .iter()
            .any(|c| c.link == link && c.address == address && c.nonce == nonce)
    }

    fn forget_link(&mut self, link: usize) {
        self.challenges.retain(|c| c.link != link);
        self.resume_due.retain(|&due| due != link);
    }
}

impl<A: Ord + Copy + std::hash::Hash> NetplaySession<A> {
    /// A datagram from an address with no link: if the key of a running
    /// link whose peer went quiet opens it, it is that link's peer (or a
    /// replay of it). A proof answering our challenge moves the link;
    /// anything else earns the address a challenge. Returns whether it
    /// was the peer's. A link heard at its address never moves, and none
    /// does without a rejoin window.
    pub(super) fn rejoin_from(&mut self, now: Millis, from: A, datagram: &[u8]) -> bool {
        if self.config.rejoin_window_ms == 0 {
            return false;
        }
        let quiet_after = self.config.interrupt_after_ms;
        // Keys differ per link unless machines share a secret (tests
        // with the well-known one): then the link silent longest is it.
        let read = self
            .links
            .iter()
            .enumerate()
            .filter_map(|(index, link)| {
                if link.state != LinkState::Open {
                    return None;
                }
                let endpoint = self.endpoints.get(&link.address?)?;
                let silent_for = endpoint.silent_for(now);
                if silent_for < quiet_after {
                    return None;
                }
                let message = endpoint.read_from_new_address(datagram)?;
                Some((silent_for, index, message))
            })
            .max_by_key(|(silent_for, index, _)| (*silent_for, usize::MAX - index));
        let Some((_, index, message)) = read else {
            return false;
        };
        match message {
            Message::RejoinProof { nonce } if self.rejoins.proves(index, from, nonce) => {
                self.move_link(now, index, from, datagram, false);
            }
            Message::RejoinRestarted { nonce } if self.rejoins.proves(index, from, nonce) => {
                self.move_link(now, index, from, datagram, true);
            }
            _ => self.rejoins.note(now, index, from),
        }
        true
    }

    /// Link `index` continues at `to`, where its peer proved itself (from
    /// a process that started afresh, if `restarted`: it is sent the state
    /// to resume from).
    fn move_link(&mut self, now: Millis, index: usize, to: A, proof: &[u8], restarted: bool) {
        let Some(mut endpoint) = self.links[index]
            .address
            .and_then(|old| self.endpoints.remove(&old))
        else {
            return;
        };
        if restarted {
            endpoint.peer_restarted();
        }
        self.endpoints.insert(to, endpoint);
        self.links[index].address = Some(to);
        self.rejoins.forget_link(index);
        if restarted {
            self.rejoins.resume_due.push(index);
        }
        self.events.push_back(NetplayEvent::PeerRejoined {
            players: player_set(self.links[index].players),
        });
        // Taken as the peer's now: the silence ends, its sequence counts.
        self.endpoints.handle_datagram(now, to, proof);
    }

    /// Sends each challenge due to its address; drops those whose address
    /// fell quiet, or whose link closed.
    pub(super) fn send_rejoin_challenges(&mut self, now: Millis, send: &mut impl FnMut(A, &[u8])) {
        let links = &self.links;
        self.rejoins.challenges.retain(|c| {
            links[c.link].state == LinkState::Open
                && now.saturating_sub(c.last_heard_at) < CHALLENGE_EXPIRY_MS
        });
        for challenge in self.rejoins.challenges.iter_mut() {
            let due = challenge.heard_since_sent
                && challenge
                    .sent_at
                    .is_none_or(|at| now.saturating_sub(at) >= CHALLENGE_INTERVAL_MS);
            let Some(endpoint) = self.links[challenge.link]
                .address
                .and_then(|a| self.endpoints.get_mut(&a))
            else {
                continue;
            };
            if due {
                challenge.sent_at = Some(now);
                challenge.heard_since_sent = false;
                let address = challenge.address;
                endpoint.send_rejoin_challenge(now, challenge.nonce, &mut |datagram| {
                    send(address, datagram)
                });
            }
        }
    }
}
