//! Networking around the pure protocol: the [`Transport`] every netplay loop
//! talks through, the seeded simulated network for tests and the demo
//! (`sim`), and plain UDP sockets (`udp`).

pub mod sim;
pub mod udp;

/// Where datagrams go out and come in. Never blocks: a loop polls it every
/// tick. Delivery is not promised (datagrams may be lost, duplicated or
/// reordered): the protocol above copes.
pub trait Transport {
    /// How peers are named (a socket address, a small id on a simulated network).
    type Address: Ord + Copy;

    /// Sends `datagram` to `to`. A datagram that cannot be sent is lost, as
    /// on the wire.
    fn send(&mut self, to: Self::Address, datagram: &[u8]);

    /// The next datagram that arrived, written into `into` (replacing its
    /// contents), with its sender; `None` when nothing is waiting.
    fn receive(&mut self, into: &mut Vec<u8>) -> Option<Self::Address>;
}
