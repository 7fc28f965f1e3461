//! A simulated network, pure and seeded: datagrams sent at a time are delivered
//! later according to per-link conditions — latency, jitter, loss, duplication,
//! reordering, a bandwidth cap — and partitions that can be held and released
//! (the knobs of Unreal's PktLag / PktLagVariance / PktLoss / PktDup / PktOrder).
//!
//! Time is passed in (milliseconds since any origin); randomness comes from a
//! small PRNG seeded by the caller, so the same seed and the same calls give the
//! same deliveries, byte for byte.

use netcode::random::SplitMix64;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, VecDeque};

/// Milliseconds since an origin the caller chooses.
pub type Millis = u64;

/// How one direction of a link treats datagrams.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkConditions {
    /// One-way delay (PktLag).
    pub latency_ms: u64,
    /// Each datagram's delay varies uniformly by up to ± this (PktLagVariance).
    /// Alone it does not reorder: a datagram never overtakes an earlier one unless `reorder` says so.
    pub jitter_ms: u64,
    /// Probability that a datagram is lost (PktLoss), 0.0 to 1.0.
    pub loss: f64,
    /// Probability that a datagram arrives twice (PktDup).
    pub duplicate: f64,
    /// Probability that a datagram is held back so later ones overtake it (PktOrder).
    pub reorder: f64,
    /// Bytes per second the link carries; datagrams queue behind each other.
    pub bandwidth_bytes_per_s: Option<u64>,
    /// Datagrams that would wait longer than this in the bandwidth queue are dropped.
    pub max_queue_ms: u64,
}

impl LinkConditions {
    /// Instant, lossless delivery.
    pub const PERFECT: LinkConditions = LinkConditions {
        latency_ms: 0,
        jitter_ms: 0,
        loss: 0.0,
        duplicate: 0.0,
        reorder: 0.0,
        bandwidth_bytes_per_s: None,
        max_queue_ms: 1000,
    };

    /// A lossless link with a fixed one-way delay.
    pub const fn latency(ms: u64) -> LinkConditions {
        LinkConditions {
            latency_ms: ms,
            ..LinkConditions::PERFECT
        }
    }

    /// Varies each datagram's delay by up to ± `ms` (uniform).
    pub const fn with_jitter(self, ms: u64) -> LinkConditions {
        LinkConditions {
            jitter_ms: ms,
            ..self
        }
    }

    /// Loses each datagram with this probability (0 to 1).
    pub const fn with_loss(self, probability: f64) -> LinkConditions {
        LinkConditions {
            loss: probability,
            ..self
        }
    }

    /// Delivers each datagram twice with this probability.
    pub const fn with_duplication(self, probability: f64) -> LinkConditions {
        LinkConditions {
            duplicate: probability,
            ..self
        }
    }

    /// Delays a datagram behind later ones with this probability.
    pub const fn with_reordering(self, probability: f64) -> LinkConditions {
        LinkConditions {
            reorder: probability,
            ..self
        }
    }

    /// Caps the link at `bytes_per_s`; datagrams queue behind each other.
    pub const fn with_bandwidth(self, bytes_per_s: u64) -> LinkConditions {
        LinkConditions {
            bandwidth_bytes_per_s: Some(bytes_per_s),
            ..self
        }
    }
}

impl Default for LinkConditions {
    fn default() -> Self {
        LinkConditions::PERFECT
    }
}

/// A datagram handed to its receiver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery<A> {
    /// The sender.
    pub from: A,
    /// The receiver.
    pub to: A,
    /// The datagram.
    pub bytes: Vec<u8>,
    /// When it was sent.
    pub sent_at: Millis,
    /// When it arrived (microsecond precision, as time inside the simulation).
    pub delivered_at_us: u64,
}

/// What happened to the datagrams sent so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Datagrams handed to the network.
    pub sent: u64,
    /// Datagrams that reached their receiver (duplicates count twice).
    pub delivered: u64,
    /// Datagrams lost to the link's loss rate.
    pub lost: u64,
    /// Extra copies delivered.
    pub duplicated: u64,
    /// Datagrams held back behind later ones.
    pub reordered: u64,
    /// Datagrams sent across a partition.
    pub dropped_by_partition: u64,
    /// Datagrams dropped by a full link queue or a full receiver's inbox.
    pub dropped_by_queue: u64,
}

impl SimStats {
    /// Counts what `fate` did to one datagram sent: the copies that get
    /// through, or `None` when it was lost.
    pub(crate) fn count(&mut self, fate: Fate) -> Option<impl Iterator<Item = Arrival>> {
        if fate.lost {
            self.lost += 1;
            return None;
        }
        self.duplicated += u64::from(fate.duplicated);
        self.dropped_by_queue += u64::from(fate.dropped_by_queue);
        let arrivals = fate.arrivals.into_iter().flatten();
        self.reordered += arrivals.clone().filter(|arrival| arrival.reordered).count() as u64;
        Some(arrivals)
    }
}

/// Items waiting for a moment in microseconds, handed out earliest first
/// (items due at the same moment in the order they were pushed): the
/// datagrams on a simulated wire, or held back by the link conditioner.
#[derive(Clone, Debug)]
pub(crate) struct DueQueue<T> {
    heap: BinaryHeap<Due<T>>,
    next_serial: u64,
}

#[derive(Clone, Debug)]
struct Due<T> {
    at_us: u64,
    serial: u64,
    item: T,
}

impl<T> PartialEq for Due<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.at_us, self.serial) == (other.at_us, other.serial)
    }
}
impl<T> Eq for Due<T> {}
impl<T> PartialOrd for Due<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
/// Reversed so the max-heap pops the earliest (ties: first pushed first).
impl<T> Ord for Due<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at_us, other.serial).cmp(&(self.at_us, self.serial))
    }
}

impl<T> Default for DueQueue<T> {
    fn default() -> Self {
        DueQueue {
            heap: BinaryHeap::new(),
            next_serial: 0,
        }
    }
}

impl<T> DueQueue<T> {
    /// Queues `item` for the moment `at_us`.
    pub(crate) fn push(&mut self, at_us: u64, item: T) {
        self.heap.push(Due {
            at_us,
            serial: self.next_serial,
            item,
        });
        self.next_serial += 1;
    }

    /// The earliest item due by `now_us`, taken out of the queue.
    pub(crate) fn pop_due(&mut self, now_us: u64) -> Option<T> {
        if self.heap.peek()?.at_us > now_us {
            return None;
        }
        self.heap.pop().map(|due| due.item)
    }

    /// When the earliest item is due.
    pub(crate) fn next_at_us(&self) -> Option<u64> {
        self.heap.peek().map(|due| due.at_us)
    }

    /// Items waiting.
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing waits.
    pub(crate) fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// The timing one direction of a link remembers between datagrams.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LinkTimeline {
    /// When the bandwidth-limited link finishes sending what is queued.
    busy_until_us: u64,
    /// Latest arrival of a datagram not chosen for reordering.
    last_in_order_us: u64,
}

/// When one copy of a datagram arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Arrival {
    /// Microseconds, on the clock the datagram was sent by.
    pub(crate) at_us: u64,
    /// Held back so later datagrams overtake it.
    pub(crate) reordered: bool,
}

/// What a link does to one datagram: the fault model the simulated network
/// and the link conditioner over real sockets share.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fate {
    /// Lost to the link's loss rate.
    pub(crate) lost: bool,
    /// A second copy was made.
    pub(crate) duplicated: bool,
    /// Copies dropped by a full bandwidth queue.
    pub(crate) dropped_by_queue: u8,
    /// Each copy that gets through.
    pub(crate) arrivals: [Option<Arrival>; 2],
}

impl LinkConditions {
    /// Decides the fate of a `length`-byte datagram sent at `now_us`.
    pub(crate) fn fate(
        &self,
        rng: &mut SplitMix64,
        timeline: &mut LinkTimeline,
        now_us: u64,
        length: usize,
    ) -> Fate {
        let mut fate = Fate::default();
        if rng.chance_of(self.loss) {
            fate.lost = true;
            return fate;
        }
        fate.duplicated = rng.chance_of(self.duplicate);
        let copies = if fate.duplicated { 2 } else { 1 };
        for copy in 0..copies {
            let mut departure_us = now_us;
            if let Some(bandwidth) = self.bandwidth_bytes_per_s.filter(|&b| b > 0) {
                let start_us = timeline.busy_until_us.max(now_us);
                if start_us - now_us > self.max_queue_ms * 1000 {
                    fate.dropped_by_queue += 1;
                    continue;
                }
                let transmit_us = (length as u64 * 1_000_000).div_ceil(bandwidth);
                timeline.busy_until_us = start_us + transmit_us;
                departure_us = timeline.busy_until_us;
            }
            let jitter_us = self.jitter_ms * 1000;
            let delay_us =
                (self.latency_ms * 1000 + rng.up_to(2 * jitter_us)).saturating_sub(jitter_us);
            let mut arrival_us = departure_us + delay_us;
            let reordered = rng.chance_of(self.reorder);
            if reordered {
                // Held back long enough for a few later datagrams to overtake it.
                arrival_us += 1000 + rng.up_to(self.latency_ms * 1000 + 2 * jitter_us + 20_000);
            } else {
                arrival_us = arrival_us.max(timeline.last_in_order_us);
                timeline.last_in_order_us = arrival_us;
            }
            fate.arrivals[copy] = Some(Arrival {
                at_us: arrival_us,
                reordered,
            });
        }
        fate
    }
}

#[derive(Clone, Debug, Default)]
struct LinkState {
    conditions: Option<LinkConditions>,
    timeline: LinkTimeline,
}

/// The simulated network between nodes addressed by `A` (a `SocketAddr`, a small id…).
pub struct SimNet<A> {
    rng: SplitMix64,
    default_conditions: LinkConditions,
    links: BTreeMap<(A, A), LinkState>,
    partitions: BTreeSet<(A, A)>,
    in_flight: DueQueue<Delivery<A>>,
    stats: SimStats,
}

impl<A: Copy + Ord> SimNet<A> {
    /// A network where every link is perfect until told otherwise.
    pub fn new(seed: u64) -> Self {
        SimNet {
            rng: SplitMix64::new(seed),
            default_conditions: LinkConditions::PERFECT,
            links: BTreeMap::new(),
            partitions: BTreeSet::new(),
            in_flight: DueQueue::default(),
            stats: SimStats::default(),
        }
    }

    /// Conditions for every link not set one by one.
    pub fn set_default_conditions(&mut self, conditions: LinkConditions) {
        self.default_conditions = conditions;
    }

    /// Conditions from `from` to `to` (one direction).
    pub fn set_link(&mut self, from: A, to: A, conditions: LinkConditions) {
        self.links.entry((from, to)).or_default().conditions = Some(conditions);
    }

    /// The same conditions both ways between `a` and `b`.
    pub fn set_link_both_ways(&mut self, a: A, b: A, conditions: LinkConditions) {
        self.set_link(a, b, conditions);
        self.set_link(b, a, conditions);
    }

    /// Cuts `a` and `b` apart (both directions) until [`SimNet::heal`]; datagrams
    /// sent meanwhile are lost, those already on the way still arrive.
    pub fn partition(&mut self, a: A, b: A) {
        self.partitions.insert((a, b));
        self.partitions.insert((b, a));
    }

    /// Cuts only the direction `from` → `to`.
    pub fn partition_one_way(&mut self, from: A, to: A) {
        self.partitions.insert((from, to));
    }

    /// Releases a partition between `a` and `b` (both directions).
    pub fn heal(&mut self, a: A, b: A) {
        self.partitions.remove(&(a, b));
        self.partitions.remove(&(b, a));
    }

    /// Whether datagrams from `from` to `to` are being lost to a partition.
    pub fn is_partitioned(&self, from: A, to: A) -> bool {
        self.partitions.contains(&(from, to))
    }

    /// What happened to the datagrams sent so far.
    pub fn stats(&self) -> SimStats {
        self.stats
    }

    /// Datagrams on their way.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// When the next datagram arrives (rounded up to a millisecond), if any is on its way.
    pub fn next_delivery_at(&self) -> Option<Millis> {
        self.in_flight
            .next_at_us()
            .map(|at_us| at_us.div_ceil(1000))
    }

    /// Puts a datagram on the wire at `now`.
    pub fn send(&mut self, now: Millis, from: A, to: A, bytes: &[u8]) {
        self.stats.sent += 1;
        if self.partitions.contains(&(from, to)) {
            self.stats.dropped_by_partition += 1;
            return;
        }
        let default_conditions = self.default_conditions;
        let link = self.links.entry((from, to)).or_default();
        let conditions = link.conditions.unwrap_or(default_conditions);
        let fate = conditions.fate(&mut self.rng, &mut link.timeline, now * 1000, bytes.len());
        let Some(arrivals) = self.stats.count(fate) else {
            return;
        };
        for arrival in arrivals {
            self.in_flight.push(
                arrival.at_us,
                Delivery {
                    from,
                    to,
                    bytes: bytes.to_vec(),
                    sent_at: now,
                    delivered_at_us: arrival.at_us,
                },
            );
        }
    }

    /// Every datagram that has arrived by `now`, in arrival order.
    pub fn deliver_due(&mut self, now: Millis) -> Vec<Delivery<A>> {
        let mut due = Vec::new();
        let now_us = now * 1000;
        while let Some(delivery) = self.in_flight.pop_due(now_us) {
            self.stats.delivered += 1;
            due.push(delivery);
        }
        due
    }
}

/// Most datagrams waiting for one machine on a [`SimSockets`]; more are
/// dropped (counted as `dropped_by_queue`), as a full socket buffer would.
const INBOX_LIMIT: usize = 4096;

/// A [`SimNet`] with one inbox per machine, so each machine talks to it as
/// a [`Transport`](super::Transport) ([`SimSockets::port`]). Each simulated
/// moment: [`SimSockets::deliver`], then each machine's tick on its port.
pub struct SimSockets<A> {
    /// The network the datagrams travel on (conditions, partitions, stats).
    pub net: SimNet<A>,
    inboxes: BTreeMap<A, VecDeque<(A, Vec<u8>)>>,
    /// Machines seen at another address than their own (see [`SimSockets::rebind`]).
    appears_as: BTreeMap<A, A>,
    now: Millis,
}

impl<A: Copy + Ord> SimSockets<A> {
    /// Sockets over `net`.
    pub fn new(net: SimNet<A>) -> Self {
        SimSockets {
            net,
            inboxes: BTreeMap::new(),
            appears_as: BTreeMap::new(),
            now: 0,
        }
    }

    /// Moves to `now`: every datagram due by then waits in its receiver's inbox.
    pub fn deliver(&mut self, now: Millis) {
        self.now = now;
        for delivery in self.net.deliver_due(now) {
            let Some(machine) = self.machine_at(delivery.to) else {
                continue;
            };
            let inbox = self.inboxes.entry(machine).or_default();
            if inbox.len() < INBOX_LIMIT {
                inbox.push_back((delivery.from, delivery.bytes));
            } else {
                self.net.stats.dropped_by_queue += 1;
            }
        }
    }

    /// From now on `machine` sends from `address` and receives what is
    /// sent there, and nothing sent to its old address reaches it: a NAT
    /// that rebound its port, or a move to another network.
    pub fn rebind(&mut self, machine: A, address: A) {
        self.appears_as.insert(machine, address);
    }

    /// The machine datagrams to `address` reach, if any.
    fn machine_at(&self, address: A) -> Option<A> {
        if let Some((&machine, _)) = self.appears_as.iter().find(|(_, &a)| a == address) {
            return Some(machine);
        }
        (!self.appears_as.contains_key(&address)).then_some(address)
    }

    /// Throws away what waits for `machine` (a machine switched off).
    pub fn discard(&mut self, machine: A) {
        self.inboxes.remove(&machine);
    }

    /// `machine`'s socket at the current moment.
    pub fn port(&mut self, machine: A) -> SimPort<'_, A> {
        SimPort {
            net: &mut self.net,
            inbox: self.inboxes.entry(machine).or_default(),
            me: self.appears_as.get(&machine).copied().unwrap_or(machine),
            now: self.now,
        }
    }
}

/// One machine's socket on [`SimSockets`], at one simulated moment.
pub struct SimPort<'a, A> {
    net: &'a mut SimNet<A>,
    inbox: &'a mut VecDeque<(A, Vec<u8>)>,
    me: A,
    now: Millis,
}

impl<A: Copy + Ord + std::hash::Hash> super::Transport for SimPort<'_, A> {
    type Address = A;

    fn send(&mut self, to: A, datagram: &[u8]) {
        self.net.send(self.now, self.me, to, datagram);
    }

    fn receive(&mut self, into: &mut Vec<u8>) -> Option<A> {
        let (from, bytes) = self.inbox.pop_front()?;
        *into = bytes;
        Some(from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Transport;

    #[test]
    fn each_machine_reads_only_its_own_datagrams_from_its_port() {
        let mut sockets = SimSockets::new(SimNet::new(1));
        sockets.port(0).send(1, b"to one");
        sockets.port(0).send(2, b"to two");
        sockets.deliver(0);
        let mut datagram = Vec::new();
        assert_eq!(sockets.port(1).receive(&mut datagram), Some(0));
        assert_eq!(datagram, b"to one");
        assert_eq!(sockets.port(1).receive(&mut datagram), None);
        assert_eq!(sockets.port(2).receive(&mut datagram), Some(0));
        assert_eq!(datagram, b"to two");
    }

    #[test]
    fn a_rebound_machine_sends_from_its_new_address_and_only_hears_what_is_sent_there() {
        let mut sockets = SimSockets::new(SimNet::new(1));
        sockets.rebind(1, 11);
        sockets.port(1).send(0, b"from eleven");
        sockets.port(0).send(11, b"to eleven");
        sockets.port(0).send(1, b"to the old address");
        sockets.deliver(0);
        let mut datagram = Vec::new();
        assert_eq!(sockets.port(0).receive(&mut datagram), Some(11));
        assert_eq!(datagram, b"from eleven");
        assert_eq!(sockets.port(1).receive(&mut datagram), Some(0));
        assert_eq!(datagram, b"to eleven");
        assert_eq!(sockets.port(1).receive(&mut datagram), None);
    }

    #[test]
    fn a_machine_that_never_reads_loses_datagrams_beyond_its_inbox() {
        let mut sockets = SimSockets::new(SimNet::new(1));
        for _ in 0..INBOX_LIMIT + 10 {
            sockets.port(0).send(1, b"x");
        }
        sockets.deliver(0);
        assert_eq!(sockets.net.stats().dropped_by_queue, 10);
        let mut datagram = Vec::new();
        let mut port = sockets.port(1);
        let read = std::iter::from_fn(|| port.receive(&mut datagram)).count();
        assert_eq!(read, INBOX_LIMIT);
    }
}
