//! laminar 0.5's socket as a [`Transport`] (`--transport laminar`): unreliable,
//! unordered packets only, polled by hand on every send and receive. The
//! protocol above does its own acks, resends and blob transfer, so laminar
//! adds only its 5-byte header, and its connection tracking, which this
//! transport reports ([`LaminarTransport::connection_timeouts`]) but never
//! needs: a datagram is sent whether laminar thinks a peer is connected or not.

use super::{MicrosClock, MonotonicClock, NetError, Transport, WireStats};
use laminar::{Config, Packet, Socket, SocketEvent};
use netcode::protocol::MAX_DATAGRAM_SIZE;
use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Bytes laminar puts before every unreliable, unordered payload.
pub const LAMINAR_HEADER_BYTES: usize = 5;

/// A laminar socket that never blocks.
pub struct LaminarTransport<C: MicrosClock = MonotonicClock> {
    socket: Socket,
    local_address: SocketAddr,
    /// laminar's `manual_poll` takes an `Instant`: the clock's microseconds
    /// after this origin.
    origin: Instant,
    clock: C,
    wire: WireStats,
    connection_timeouts: u64,
}

impl LaminarTransport {
    /// Binds `address` (port 0 picks a free port: see [`LaminarTransport::local_address`]).
    pub fn bind(address: SocketAddr) -> Result<Self, NetError> {
        LaminarTransport::bind_with_clock(address, MonotonicClock::new())
    }
}

impl<C: MicrosClock> LaminarTransport<C> {
    /// Binds `address`, reading time from `clock` (tests move it by hand to
    /// pass laminar's 5-second idle timeout without waiting for it).
    pub fn bind_with_clock(address: SocketAddr, clock: C) -> Result<Self, NetError> {
        let config = Config {
            // One more byte than the protocol allows, so an oversized datagram
            // arrives cut but still too long, and the decoder refuses it.
            receive_buffer_max_size: MAX_DATAGRAM_SIZE + LAMINAR_HEADER_BYTES + 1,
            ..Config::default()
        };
        let bind_error = |source| NetError::Bind { address, source };
        let socket = Socket::bind_with_config(address, config).map_err(|error| {
            bind_error(match error {
                laminar::ErrorKind::IOError(source) => source,
                other => io::Error::other(other.to_string()),
            })
        })?;
        let local_address = socket.local_addr().map_err(|error| {
            bind_error(match error {
                laminar::ErrorKind::IOError(source) => source,
                other => io::Error::other(other.to_string()),
            })
        })?;
        Ok(LaminarTransport {
            socket,
            local_address,
            origin: Instant::now(),
            clock,
            wire: WireStats::default(),
            connection_timeouts: 0,
        })
    }

    /// The address peers reach this socket at.
    pub fn local_address(&self) -> SocketAddr {
        self.local_address
    }

    /// What this socket sent and received so far, laminar's headers included.
    pub fn wire_stats(&self) -> WireStats {
        self.wire
    }

    /// How often laminar dropped a peer it had not heard from for 5 s (it
    /// makes a new connection on the next datagram either way).
    pub fn connection_timeouts(&self) -> u64 {
        self.connection_timeouts
    }

    fn poll(&mut self) {
        let now = self.origin + Duration::from_micros(self.clock.now_us());
        self.socket.manual_poll(now);
    }
}

impl<C: MicrosClock> Transport for LaminarTransport<C> {
    type Address = SocketAddr;

    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        // laminar only queues the packet; the poll puts it on the wire now
        // rather than at the next receive.
        if self
            .socket
            .send(Packet::unreliable(to, datagram.to_vec()))
            .is_ok()
        {
            self.wire.sent_datagrams += 1;
            self.wire.sent_bytes += (datagram.len() + LAMINAR_HEADER_BYTES) as u64;
        }
        self.poll();
    }

    fn receive(&mut self, into: &mut Vec<u8>) -> Option<SocketAddr> {
        self.poll();
        while let Some(event) = self.socket.recv() {
            match event {
                SocketEvent::Packet(packet) => {
                    self.wire.received_datagrams += 1;
                    self.wire.received_bytes +=
                        (packet.payload().len() + LAMINAR_HEADER_BYTES) as u64;
                    into.clear();
                    into.extend_from_slice(packet.payload());
                    return Some(packet.addr());
                }
                SocketEvent::Timeout(_) => self.connection_timeouts += 1,
                SocketEvent::Connect(_) | SocketEvent::Disconnect(_) => {}
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::ManualClock;
    use std::net::UdpSocket;

    fn loopback() -> SocketAddr {
        "127.0.0.1:0".parse().unwrap()
    }

    fn receive_soon<T: Transport>(transport: &mut T, into: &mut Vec<u8>) -> Option<T::Address> {
        (0..1_000_000).find_map(|_| transport.receive(into))
    }

    #[test]
    fn two_laminar_sockets_exchange_datagrams_without_blocking() {
        let mut a = LaminarTransport::bind(loopback()).unwrap();
        let mut b = LaminarTransport::bind(loopback()).unwrap();
        let mut received = Vec::new();
        assert_eq!(b.receive(&mut received), None, "nothing sent yet, no wait");
        a.send(b.local_address(), b"hello");
        let from = receive_soon(&mut b, &mut received).expect("the datagram arrives");
        assert_eq!(from, a.local_address());
        assert_eq!(received, b"hello");
    }

    #[test]
    fn laminar_puts_five_bytes_before_each_payload_on_the_wire() {
        let mut sender = LaminarTransport::bind(loopback()).unwrap();
        let listener = UdpSocket::bind(loopback()).unwrap();
        sender.send(listener.local_addr().unwrap(), &[7; 100]);
        let mut buffer = [0; 2048];
        let (length, _) = listener.recv_from(&mut buffer).unwrap();
        assert_eq!(length, 100 + LAMINAR_HEADER_BYTES);
        assert_eq!(&buffer[LAMINAR_HEADER_BYTES..length], &[7; 100]);
        assert_eq!(sender.wire_stats().sent_bytes, length as u64);
    }

    #[test]
    fn a_full_size_protocol_datagram_crosses_laminar_whole() {
        let mut a = LaminarTransport::bind(loopback()).unwrap();
        let mut b = LaminarTransport::bind(loopback()).unwrap();
        let datagram: Vec<u8> = (0..MAX_DATAGRAM_SIZE).map(|i| i as u8).collect();
        a.send(b.local_address(), &datagram);
        let mut received = Vec::new();
        receive_soon(&mut b, &mut received).expect("the datagram arrives");
        assert_eq!(received, datagram);
    }

    #[test]
    fn junk_sent_to_a_laminar_port_never_reaches_the_protocol() {
        let mut transport = LaminarTransport::bind(loopback()).unwrap();
        let junk_sender = UdpSocket::bind(loopback()).unwrap();
        let mut peer = LaminarTransport::bind(loopback()).unwrap();
        junk_sender
            .send_to(b"not a laminar packet", transport.local_address())
            .unwrap();
        peer.send(transport.local_address(), b"real");
        let mut received = Vec::new();
        // laminar checks its header's protocol id and drops what fails, so
        // the session above never sees (nor counts) such datagrams: the
        // first thing through is the peer's, sent after the junk.
        let from = receive_soon(&mut transport, &mut received);
        assert_eq!(from, Some(peer.local_address()));
        assert_eq!(received, b"real");
        assert_eq!(transport.receive(&mut received), None);
        assert_eq!(transport.wire_stats().received_datagrams, 1);
    }

    /// A spectator mostly receives: laminar's 5-second idle timeout drops
    /// the sender's connection to it again and again (upstream issues #184,
    /// #277), yet every datagram still arrives and the late reply too.
    #[test]
    fn one_way_traffic_times_out_laminars_connection_but_loses_no_datagram() {
        let clock = ManualClock::new();
        let mut host = LaminarTransport::bind_with_clock(loopback(), clock.clone()).unwrap();
        let mut spectator = LaminarTransport::bind_with_clock(loopback(), clock.clone()).unwrap();
        let mut received = Vec::new();
        let mut arrived = 0;
        // 20 simulated seconds of one datagram per frame, host to spectator only.
        for frame in 0..1200u64 {
            clock.set(frame * 16_667);
            host.send(spectator.local_address(), &frame.to_le_bytes());
            arrived += usize::from(receive_soon(&mut spectator, &mut received).is_some());
            assert_eq!(host.receive(&mut received), None);
        }
        assert_eq!(arrived, 1200, "one-way datagrams all arrive");
        assert!(
            host.connection_timeouts() >= 3,
            "laminar timed the silent peer out every 5 s: {}",
            host.connection_timeouts()
        );
        spectator.send(host.local_address(), b"ack");
        assert_eq!(
            receive_soon(&mut host, &mut received),
            Some(spectator.local_address())
        );
        assert_eq!(spectator.connection_timeouts(), 0);
    }
}
