//! The link conditioner: a [`Transport`] wrapper that applies the simulated
//! network's fault model ([`LinkConditions`]: latency, jitter, loss,
//! duplication, reordering) to outgoing datagrams on real sockets, seeded.
//! Delayed datagrams wait here and go out on a later `send` or `receive`
//! once due, so a loop polling every millisecond releases them on time.

use super::sim::{DueQueue, LinkConditions, LinkTimeline, SimStats};
use super::{MicrosClock, Transport};
use netcode::random::SplitMix64;
use std::collections::BTreeMap;

/// Most datagrams held back at once; more are dropped (counted as
/// `dropped_by_queue`), as a full router queue would.
pub const MAX_HELD_DATAGRAMS: usize = 4096;

/// `inner` with `conditions` applied to everything it sends.
pub struct ConditionedTransport<T: Transport, C: MicrosClock> {
    inner: T,
    conditions: LinkConditions,
    clock: C,
    rng: SplitMix64,
    timelines: BTreeMap<T::Address, LinkTimeline>,
    held: DueQueue<(T::Address, Vec<u8>)>,
    stats: SimStats,
}

impl<T: Transport, C: MicrosClock> ConditionedTransport<T, C> {
    /// Wraps `inner`; `seed` picks which datagrams suffer, `clock` says when
    /// held ones are due.
    pub fn new(inner: T, conditions: LinkConditions, seed: u64, clock: C) -> Self {
        ConditionedTransport {
            inner,
            conditions,
            clock,
            rng: SplitMix64::new(seed),
            timelines: BTreeMap::new(),
            held: DueQueue::default(),
            stats: SimStats::default(),
        }
    }

    /// The transport underneath.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    /// The transport underneath, to change what it does besides carrying
    /// datagrams (meet a room's spectators beside the match).
    pub fn inner_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    /// Puts what `change` makes of the transport underneath in its place
    /// (ICE turns a bare socket into a path to the opponent), keeping the
    /// conditions, their seed's progress and anything held back. When
    /// `change` fails it hands the transport back, and so does this.
    pub fn try_replace_inner<E>(
        self,
        change: impl FnOnce(T) -> Result<T, (E, T)>,
    ) -> Result<Self, (E, Box<Self>)> {
        let ConditionedTransport { inner, .. } = self;
        match change(inner) {
            Ok(inner) => Ok(ConditionedTransport { inner, ..self }),
            Err((error, inner)) => Err((error, Box::new(ConditionedTransport { inner, ..self }))),
        }
    }

    /// The conditions applied.
    pub fn conditions(&self) -> LinkConditions {
        self.conditions
    }

    /// What the conditioner did so far (`delivered` counts datagrams handed
    /// to the transport underneath).
    pub fn stats(&self) -> SimStats {
        self.stats
    }

    /// Datagrams held back, not yet due.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Sends every held datagram, each when it falls due, sleeping until
    /// then (the clock must move by itself: the monotonic one): before the
    /// process exits, so that nothing delayed (a goodbye above all) dies
    /// with it.
    pub fn flush(&mut self) {
        while let Some(at_us) = self.held.next_at_us() {
            let until_us = at_us.saturating_sub(self.clock.now_us());
            std::thread::sleep(std::time::Duration::from_micros(until_us));
            self.release_due();
        }
    }

    /// Sends every held datagram due by now.
    pub fn release_due(&mut self) {
        let now_us = self.clock.now_us();
        while let Some((to, bytes)) = self.held.pop_due(now_us) {
            self.stats.delivered += 1;
            self.inner.send(to, &bytes);
        }
    }
}

impl<T: Transport, C: MicrosClock> Transport for ConditionedTransport<T, C> {
    type Address = T::Address;

    fn send(&mut self, to: T::Address, datagram: &[u8]) {
        self.release_due();
        self.stats.sent += 1;
        let now_us = self.clock.now_us();
        let timeline = self.timelines.entry(to).or_default();
        let fate = self
            .conditions
            .fate(&mut self.rng, timeline, now_us, datagram.len());
        let Some(arrivals) = self.stats.count(fate) else {
            return;
        };
        for arrival in arrivals {
            if arrival.at_us <= now_us && self.held.is_empty() {
                self.stats.delivered += 1;
                self.inner.send(to, datagram);
            } else if self.held.len() < MAX_HELD_DATAGRAMS {
                self.held.push(arrival.at_us, (to, datagram.to_vec()));
            } else {
                self.stats.dropped_by_queue += 1;
            }
        }
        self.release_due();
    }

    fn receive(&mut self, into: &mut Vec<u8>) -> Option<T::Address> {
        self.release_due();
        self.inner.receive(into)
    }

    fn wait(&mut self, timeout: std::time::Duration) {
        // Wake in time to send the next held datagram.
        let until_held_us = self
            .held
            .next_at_us()
            .map(|at_us| at_us.saturating_sub(self.clock.now_us()));
        let timeout = match until_held_us {
            Some(us) => timeout.min(std::time::Duration::from_micros(us)),
            None => timeout,
        };
        self.inner.wait(timeout);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::udp::UdpTransport;
    use crate::net::ManualClock;

    /// Records what reaches the wire, and when.
    #[derive(Default)]
    struct Wire {
        clock: ManualClock,
        sent: Vec<(u64, u8, Vec<u8>)>,
    }

    impl Transport for Wire {
        type Address = u8;
        fn send(&mut self, to: u8, datagram: &[u8]) {
            let now = self.clock.clone().now_us();
            self.sent.push((now, to, datagram.to_vec()));
        }
        fn receive(&mut self, _into: &mut Vec<u8>) -> Option<u8> {
            None
        }
    }

    fn conditioned(
        conditions: LinkConditions,
    ) -> (ManualClock, ConditionedTransport<Wire, ManualClock>) {
        let clock = ManualClock::new();
        let wire = Wire {
            clock: clock.clone(),
            sent: Vec::new(),
        };
        let transport = ConditionedTransport::new(wire, conditions, 42, clock.clone());
        (clock, transport)
    }

    /// One datagram a millisecond for `count` ms, then polled every
    /// millisecond for two more seconds, long enough for all to leave.
    fn send_numbered(
        clock: &ManualClock,
        transport: &mut ConditionedTransport<Wire, ManualClock>,
        count: u32,
    ) {
        for ms in 0..count + 2000 {
            clock.set(u64::from(ms) * 1000);
            if ms < count {
                transport.send(1, &ms.to_le_bytes());
            } else {
                transport.release_due();
            }
        }
        assert_eq!(transport.held(), 0);
    }

    fn number(bytes: &[u8]) -> u32 {
        u32::from_le_bytes(bytes.try_into().unwrap())
    }

    #[test]
    fn measured_loss_and_duplication_match_the_configured_rates() {
        let conditions = LinkConditions::PERFECT
            .with_loss(0.05)
            .with_duplication(0.02);
        let (clock, mut transport) = conditioned(conditions);
        send_numbered(&clock, &mut transport, 5000);
        let stats = transport.stats();
        let loss = stats.lost as f64 / 5000.0;
        let duplication = stats.duplicated as f64 / (5000 - stats.lost) as f64;
        assert!((loss - 0.05).abs() < 0.01, "loss {loss}");
        assert!(
            (duplication - 0.02).abs() < 0.006,
            "duplication {duplication}"
        );
        let wire = &transport.inner().sent;
        assert_eq!(wire.len() as u64, 5000 - stats.lost + stats.duplicated);
        let mut distinct: Vec<u32> = wire.iter().map(|(_, _, bytes)| number(bytes)).collect();
        distinct.dedup();
        assert_eq!(
            distinct.len() as u64,
            5000 - stats.lost,
            "copies go out side by side"
        );
    }

    #[test]
    fn every_datagram_waits_its_latency_give_or_take_the_jitter() {
        let conditions = LinkConditions::latency(40).with_jitter(10);
        let (clock, mut transport) = conditioned(conditions);
        send_numbered(&clock, &mut transport, 2000);
        let wire = &transport.inner().sent;
        assert_eq!(wire.len(), 2000);
        let mut previous = 0;
        for (left_at_us, _, bytes) in wire {
            let sent_at_us = u64::from(number(bytes)) * 1000;
            let delay_us = left_at_us - sent_at_us;
            assert!((30_000..=50_000).contains(&delay_us), "delay {delay_us} µs");
            assert!(number(bytes) >= previous, "jitter alone does not reorder");
            previous = number(bytes);
        }
    }

    #[test]
    fn nothing_leaves_before_its_time_even_when_the_loop_polls_late() {
        let (clock, mut transport) = conditioned(LinkConditions::latency(50));
        transport.send(1, b"a");
        clock.set(49_999);
        transport.release_due();
        assert!(transport.inner().sent.is_empty());
        clock.set(120_000);
        let mut nothing = Vec::new();
        assert_eq!(transport.receive(&mut nothing), None);
        assert_eq!(transport.inner().sent.len(), 1, "released by a receive");
    }

    #[test]
    fn reordering_lets_later_datagrams_overtake() {
        let conditions = LinkConditions::latency(20).with_reordering(0.1);
        let (clock, mut transport) = conditioned(conditions);
        send_numbered(&clock, &mut transport, 3000);
        let order: Vec<u32> = transport
            .inner()
            .sent
            .iter()
            .map(|(_, _, b)| number(b))
            .collect();
        let overtaken = order.windows(2).filter(|pair| pair[0] > pair[1]).count();
        let reordered = transport.stats().reordered as f64 / 3000.0;
        assert!((reordered - 0.1).abs() < 0.02, "reordered {reordered}");
        assert!(overtaken > 100, "only {overtaken} overtakes");
    }

    #[test]
    fn the_same_seed_picks_the_same_victims() {
        let conditions = LinkConditions::latency(30)
            .with_jitter(5)
            .with_loss(0.1)
            .with_duplication(0.05)
            .with_reordering(0.05);
        let runs: Vec<_> = (0..2)
            .map(|_| {
                let (clock, mut transport) = conditioned(conditions);
                send_numbered(&clock, &mut transport, 1000);
                transport.inner().sent.clone()
            })
            .collect();
        assert_eq!(runs[0], runs[1]);
    }

    #[test]
    fn a_stalled_loop_holds_a_bounded_number_of_datagrams() {
        let (_clock, mut transport) = conditioned(LinkConditions::latency(1000));
        for _ in 0..MAX_HELD_DATAGRAMS + 10 {
            transport.send(1, b"x");
        }
        assert_eq!(transport.held(), MAX_HELD_DATAGRAMS);
        assert_eq!(transport.stats().dropped_by_queue, 10);
    }

    #[test]
    fn a_flush_sends_every_held_datagram_when_it_falls_due_before_returning() {
        let sender = UdpTransport::bind("127.0.0.1:0").unwrap();
        let mut receiver = UdpTransport::bind("127.0.0.1:0").unwrap();
        let to = receiver.local_address().unwrap();
        let began = std::time::Instant::now();
        let clock = crate::net::MonotonicClock::new();
        let mut sender = ConditionedTransport::new(sender, LinkConditions::latency(30), 7, clock);
        for n in 0..5u8 {
            sender.send(to, &[n]);
        }
        assert_eq!(sender.held(), 5);
        sender.flush();
        assert_eq!(sender.held(), 0);
        assert!(began.elapsed() >= std::time::Duration::from_millis(30));
        let mut received = Vec::new();
        let arrived: Vec<u8> = (0..1_000_000)
            .filter_map(|_| receiver.receive(&mut received).map(|_| received[0]))
            .take(5)
            .collect();
        assert_eq!(arrived, [0, 1, 2, 3, 4]);
    }

    #[test]
    fn conditioned_loopback_udp_delivers_late_and_counts_its_losses() {
        let clock = ManualClock::new();
        let sender = UdpTransport::bind("127.0.0.1:0").unwrap();
        let mut receiver = UdpTransport::bind("127.0.0.1:0").unwrap();
        let to = receiver.local_address().unwrap();
        let conditions = LinkConditions::latency(30).with_loss(0.1);
        let mut sender = ConditionedTransport::new(sender, conditions, 7, clock.clone());
        let mut received = Vec::new();
        let mut arrived = 0u64;
        for n in 0..2000u64 {
            clock.set(n * 1000);
            sender.send(to, &n.to_le_bytes());
            // Loopback is quick but not instant: read what came, as a loop would.
            while receiver.receive(&mut received).is_some() {
                let sent_at_us = u64::from_le_bytes(received[..8].try_into().unwrap()) * 1000;
                assert!(
                    n * 1000 >= sent_at_us + 30_000,
                    "arrived before its latency"
                );
                arrived += 1;
            }
        }
        clock.set(3_000_000);
        sender.release_due();
        let expected = 2000 - sender.stats().lost;
        arrived += (0..1_000_000)
            .filter_map(|_| receiver.receive(&mut received))
            .take((expected - arrived) as usize)
            .count() as u64;
        assert_eq!(arrived, expected);
        assert_eq!(sender.stats().delivered, expected);
    }
}
