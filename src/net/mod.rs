//! Networking around the pure protocol: the [`Transport`] every netplay loop
//! talks through, the seeded simulated network for tests and the demo
//! (`sim`), the two socket transports (`udp`, `laminar`), the link
//! conditioner that applies the simulated network's faults to real sockets
//! (`conditioner`), the command-line switches choosing them (`link`), the
//! channel machines meeting in a room talk through first (`signal`), the
//! signaling server's rooms that carry it (`room`), a TCP link for
//! RetroArch hosts (`tcp`), ICE over the game's
//! socket for machines behind NATs (`ice`), a router's port mapping
//! (`port_mapping`, features `natpmp` and `upnp`) and, with feature `broadcast`, a NATS
//! client on its own thread (`nats`).

pub mod conditioner;
pub mod ice;
pub mod laminar;
pub mod link;
pub mod nat_sim;
#[cfg(feature = "broadcast")]
pub mod nats;
#[cfg(feature = "broadcast")]
pub mod nats_signal;
pub mod port_mapping;
pub mod room;
pub mod signal;
pub mod sim;
pub mod tcp;
pub mod udp;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;

/// Where datagrams go out and come in. Never blocks: a loop polls it every
/// tick. Delivery is not promised (datagrams may be lost, duplicated or
/// reordered): the protocol above copes.
pub trait Transport {
    /// How peers are named (a socket address, a small id on a simulated network).
    type Address: Ord + Copy + std::hash::Hash;

    /// Sends `datagram` to `to`. A datagram that cannot be sent is lost, as
    /// on the wire.
    fn send(&mut self, to: Self::Address, datagram: &[u8]);

    /// The next datagram that arrived, written into `into` (replacing its
    /// contents), with its sender; `None` when nothing is waiting.
    fn receive(&mut self, into: &mut Vec<u8>) -> Option<Self::Address>;

    /// Waits until a datagram may be waiting or `timeout` has passed,
    /// whichever comes first, so a real-time loop idles between frames
    /// without waking to look. The default only sleeps; sockets wake early
    /// when a datagram arrives.
    fn wait(&mut self, timeout: std::time::Duration) {
        std::thread::sleep(timeout);
    }
}

impl<T: Transport + ?Sized> Transport for Box<T> {
    type Address = T::Address;

    fn send(&mut self, to: Self::Address, datagram: &[u8]) {
        (**self).send(to, datagram);
    }

    fn receive(&mut self, into: &mut Vec<u8>) -> Option<Self::Address> {
        (**self).receive(into)
    }

    fn wait(&mut self, timeout: std::time::Duration) {
        (**self).wait(timeout);
    }
}

/// Where a transport reads the time (microseconds since an origin of its
/// own): the real monotonic clock in a real loop, a hand-moved one in tests.
pub trait MicrosClock {
    /// Microseconds since this clock's origin; never goes backwards.
    fn now_us(&mut self) -> u64;
}

/// The machine's monotonic clock, counted from when this value was made.
#[derive(Clone, Copy, Debug)]
pub struct MonotonicClock {
    origin: Instant,
}

impl MonotonicClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        MonotonicClock {
            origin: Instant::now(),
        }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        MonotonicClock::new()
    }
}

impl MicrosClock for MonotonicClock {
    fn now_us(&mut self) -> u64 {
        u64::try_from(self.origin.elapsed().as_micros()).unwrap_or(u64::MAX)
    }
}

/// A clock that moves only when told to; clones share the same time, so a
/// test holds one clone and hands the others to transports.
#[derive(Clone, Debug, Default)]
pub struct ManualClock {
    now_us: Rc<Cell<u64>>,
}

impl ManualClock {
    /// A clock at 0.
    pub fn new() -> Self {
        ManualClock::default()
    }

    /// Moves every clone of this clock to `now_us` (never backwards).
    pub fn set(&self, now_us: u64) {
        self.now_us.set(self.now_us.get().max(now_us));
    }
}

impl MicrosClock for ManualClock {
    fn now_us(&mut self) -> u64 {
        self.now_us.get()
    }
}

/// Bytes and datagrams a socket transport put on and took off the wire
/// (transport headers such as laminar's included; IP/UDP headers not: see
/// [`WireStats::bytes_with_ip_headers`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WireStats {
    /// Datagrams handed to the operating system.
    pub sent_datagrams: u64,
    /// Their UDP payload bytes.
    pub sent_bytes: u64,
    /// Datagrams read from the operating system.
    pub received_datagrams: u64,
    /// Their UDP payload bytes.
    pub received_bytes: u64,
}

/// IP and UDP header bytes of one IPv4 datagram.
pub const IPV4_UDP_HEADER_BYTES: u64 = 28;
/// IP and UDP header bytes of one IPv6 datagram.
pub const IPV6_UDP_HEADER_BYTES: u64 = 48;

/// IP and UDP header bytes of one datagram to or from `address`. A
/// dual-stack socket sees IPv4 peers as IPv4-mapped IPv6 addresses, which
/// travel as IPv4.
pub fn ip_udp_header_bytes(address: std::net::SocketAddr) -> u64 {
    match address {
        std::net::SocketAddr::V6(v6) if v6.ip().to_ipv4_mapped().is_none() => IPV6_UDP_HEADER_BYTES,
        _ => IPV4_UDP_HEADER_BYTES,
    }
}

impl WireStats {
    /// Sent and received bytes counting `ip_header` bytes per datagram
    /// ([`IPV4_UDP_HEADER_BYTES`] or [`IPV6_UDP_HEADER_BYTES`]), as a link carries them.
    pub fn bytes_with_ip_headers(&self, ip_header: u64) -> (u64, u64) {
        (
            self.sent_bytes + self.sent_datagrams * ip_header,
            self.received_bytes + self.received_datagrams * ip_header,
        )
    }
}

/// What went wrong opening a network transport.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The local address could not be bound (port busy, address not on this machine).
    #[error("cannot bind UDP port {address}: {source}")]
    Bind {
        /// The address asked for.
        address: std::net::SocketAddr,
        /// Why the system refused.
        source: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_datagrams_count_48_header_bytes_and_ipv4_ones_28_even_on_a_dual_stack_socket() {
        let at = |text: &str| text.parse::<std::net::SocketAddr>().unwrap();
        assert_eq!(ip_udp_header_bytes(at("127.0.0.1:7000")), 28);
        assert_eq!(ip_udp_header_bytes(at("[::1]:7000")), 48);
        assert_eq!(ip_udp_header_bytes(at("[::ffff:127.0.0.1]:7000")), 28);
    }

    #[test]
    fn wire_bytes_count_each_datagrams_ip_and_udp_headers() {
        let wire = WireStats {
            sent_datagrams: 10,
            sent_bytes: 500,
            received_datagrams: 2,
            received_bytes: 100,
        };
        let v4 = ip_udp_header_bytes("127.0.0.1:7000".parse().unwrap());
        let v6 = ip_udp_header_bytes("[::1]:7000".parse().unwrap());
        assert_eq!(
            wire.bytes_with_ip_headers(v4),
            (500 + 10 * 28, 100 + 2 * 28)
        );
        assert_eq!(
            wire.bytes_with_ip_headers(v6),
            (500 + 10 * 48, 100 + 2 * 48)
        );
    }
}
