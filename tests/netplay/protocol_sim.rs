//! The simulated network is faithful to its knobs and perfectly repeatable.

use netcade::net::sim::{Delivery, LinkConditions, SimNet};

const A: u8 = 1;
const B: u8 = 2;

/// Sends one numbered datagram A→B every millisecond for `count` ms and
/// collects everything delivered.
fn run(seed: u64, conditions: LinkConditions, count: u64) -> Vec<Delivery<u8>> {
    let mut net = SimNet::new(seed);
    net.set_link(A, B, conditions);
    let mut delivered = Vec::new();
    for now in 0..count + 2000 {
        if now < count {
            net.send(now, A, B, &(now as u32).to_le_bytes());
        }
        delivered.extend(net.deliver_due(now));
    }
    assert_eq!(net.in_flight(), 0);
    delivered
}

fn sequence_numbers(deliveries: &[Delivery<u8>]) -> Vec<u32> {
    deliveries
        .iter()
        .map(|d| u32::from_le_bytes(d.bytes[..4].try_into().unwrap()))
        .collect()
}

fn bad_network() -> LinkConditions {
    LinkConditions::latency(50)
        .with_jitter(20)
        .with_loss(0.05)
        .with_duplication(0.01)
        .with_reordering(0.02)
}

#[test]
fn the_same_seed_gives_the_same_run_and_another_seed_another() {
    let first = run(42, bad_network(), 2000);
    let again = run(42, bad_network(), 2000);
    let other = run(43, bad_network(), 2000);
    assert_eq!(first, again);
    assert_ne!(first, other);
}

#[test]
fn latency_delays_every_datagram_by_exactly_that_much_on_a_clean_link() {
    let deliveries = run(1, LinkConditions::latency(37), 100);
    assert_eq!(deliveries.len(), 100);
    for delivery in &deliveries {
        assert_eq!(delivery.delivered_at_us, (delivery.sent_at + 37) * 1000);
    }
    assert_eq!(sequence_numbers(&deliveries), (0..100).collect::<Vec<_>>());
}

#[test]
fn jitter_varies_delay_within_its_bounds_without_reordering() {
    // Spaced further apart than the jitter range, so no datagram waits for another.
    let mut net = SimNet::new(7);
    net.set_link(A, B, LinkConditions::latency(50).with_jitter(20));
    for i in 0..1000u64 {
        net.send(i * 50, A, B, &[]);
    }
    let delays: Vec<u64> = net
        .deliver_due(60_000)
        .iter()
        .map(|d| d.delivered_at_us - d.sent_at * 1000)
        .collect();
    assert_eq!(delays.len(), 1000);
    assert!(delays.iter().all(|&d| (30_000..=70_000).contains(&d)));
    assert!(delays.iter().any(|&d| d < 35_000));
    assert!(delays.iter().any(|&d| d > 65_000));
    // Sent densely, they queue behind each other rather than overtake.
    let deliveries = run(7, LinkConditions::latency(50).with_jitter(20), 3000);
    let order = sequence_numbers(&deliveries);
    assert_eq!(order, (0..3000).collect::<Vec<_>>());
}

#[test]
fn loss_duplication_and_reordering_happen_at_about_their_rates() {
    let count = 20_000;
    let mut net = SimNet::new(5);
    net.set_link(A, B, bad_network());
    for now in 0..count {
        net.send(now, A, B, &(now as u32).to_le_bytes());
    }
    let stats = net.stats();
    let rate = |n: u64| n as f64 / count as f64;
    assert!((rate(stats.lost) - 0.05).abs() < 0.01, "{stats:?}");
    assert!((rate(stats.duplicated) - 0.01).abs() < 0.005, "{stats:?}");
    assert!((rate(stats.reordered) - 0.02).abs() < 0.01, "{stats:?}");
    let deliveries = net.deliver_due(count + 1000);
    let order = sequence_numbers(&deliveries);
    assert!(
        order.windows(2).any(|pair| pair[0] > pair[1]),
        "nothing reordered"
    );
    let mut unique = order.clone();
    unique.sort();
    unique.dedup();
    assert!(unique.len() < order.len(), "nothing duplicated");
}

#[test]
fn a_bandwidth_cap_queues_datagrams_behind_each_other() {
    let mut net = SimNet::new(0);
    // 10 kB/s: a 1000-byte datagram takes 100 ms to send.
    net.set_link(A, B, LinkConditions::latency(10).with_bandwidth(10_000));
    for _ in 0..3 {
        net.send(0, A, B, &[0; 1000]);
    }
    let arrivals: Vec<u64> = net
        .deliver_due(1000)
        .iter()
        .map(|d| d.delivered_at_us / 1000)
        .collect();
    assert_eq!(arrivals, vec![110, 210, 310]);
}

#[test]
fn a_full_bandwidth_queue_drops_what_would_wait_too_long() {
    let mut net = SimNet::new(0);
    let mut conditions = LinkConditions::latency(0).with_bandwidth(1000);
    conditions.max_queue_ms = 500;
    net.set_link(A, B, conditions);
    for _ in 0..10 {
        net.send(0, A, B, &[0; 100]); // 100 ms each
    }
    assert_eq!(net.stats().dropped_by_queue, 4);
    assert_eq!(net.deliver_due(10_000).len(), 6);
}

#[test]
fn a_partition_drops_datagrams_both_ways_until_healed() {
    let mut net = SimNet::new(0);
    net.set_default_conditions(LinkConditions::latency(5));
    net.partition(A, B);
    net.send(0, A, B, b"lost");
    net.send(0, B, A, b"lost too");
    assert!(net.deliver_due(100).is_empty());
    assert_eq!(net.stats().dropped_by_partition, 2);
    net.heal(A, B);
    net.send(100, B, A, b"through");
    let delivered = net.deliver_due(105);
    assert_eq!(delivered.len(), 1);
    assert_eq!(delivered[0].bytes, b"through");
    assert_eq!((delivered[0].from, delivered[0].to), (B, A));
}

#[test]
fn conditions_are_per_direction() {
    let mut net = SimNet::new(0);
    net.set_link(A, B, LinkConditions::latency(10));
    net.set_link(B, A, LinkConditions::latency(90));
    net.send(0, A, B, b"ab");
    net.send(0, B, A, b"ba");
    assert_eq!(net.next_delivery_at(), Some(10));
    assert_eq!(net.deliver_due(10)[0].bytes, b"ab");
    assert!(net.deliver_due(89).is_empty());
    assert_eq!(net.deliver_due(90)[0].bytes, b"ba");
}
