//! A plain non-blocking UDP socket as a [`Transport`] (what GGRS uses too:
//! the protocol above handles loss, order and resends).

use super::{Transport, WireStats};
use netcode::protocol::MAX_DATAGRAM_SIZE;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::time::Duration;

/// Bytes read per datagram: one more than the protocol's limit, so a
/// bigger datagram arrives cut but still over the limit, and is refused by
/// the decoder rather than read as a shorter valid one.
const RECEIVE_BUFFER: usize = MAX_DATAGRAM_SIZE + 1;

/// A UDP socket that never blocks.
#[derive(Debug)]
pub struct UdpTransport {
    socket: UdpSocket,
    buffer: Box<[u8; RECEIVE_BUFFER]>,
    /// Datagrams that could not be sent (the OS buffer was full, the
    /// address unreachable): lost, as on the wire.
    pub send_failures: u64,
    wire: WireStats,
    /// The last wait ended with nothing to read: the next `receive` can
    /// answer `None` without asking the kernel (a frame tick right after
    /// its deadline's wait then costs no empty read).
    empty_after_wait: bool,
}

impl UdpTransport {
    /// Binds `address` (port 0 picks a free port: see [`UdpTransport::local_address`]).
    pub fn bind(address: impl ToSocketAddrs) -> io::Result<Self> {
        let socket = UdpSocket::bind(address)?;
        socket.set_nonblocking(true)?;
        Ok(UdpTransport {
            socket,
            buffer: Box::new([0; RECEIVE_BUFFER]),
            send_failures: 0,
            wire: WireStats::default(),
            empty_after_wait: false,
        })
    }

    /// The address peers reach this socket at.
    pub fn local_address(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// What this socket sent and received so far.
    pub fn wire_stats(&self) -> WireStats {
        self.wire
    }
}

impl Transport for UdpTransport {
    type Address = SocketAddr;

    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        match self.socket.send_to(datagram, to) {
            Ok(sent) => {
                self.wire.sent_datagrams += 1;
                self.wire.sent_bytes += sent as u64;
            }
            Err(_) => self.send_failures += 1,
        }
    }

    fn receive(&mut self, into: &mut Vec<u8>) -> Option<SocketAddr> {
        if std::mem::take(&mut self.empty_after_wait) {
            return None;
        }
        loop {
            match self.socket.recv_from(&mut self.buffer[..]) {
                Ok((length, from)) => {
                    self.wire.received_datagrams += 1;
                    self.wire.received_bytes += length as u64;
                    into.clear();
                    into.extend_from_slice(&self.buffer[..length]);
                    return Some(from);
                }
                // Some systems report an earlier send's ICMP error here
                // (a peer that closed its port): skip it, keep reading.
                Err(error) if error.kind() == io::ErrorKind::ConnectionReset => continue,
                Err(_) => return None,
            }
        }
    }

    fn wait(&mut self, timeout: Duration) {
        if timeout.is_zero() {
            return;
        }
        self.empty_after_wait = !wait_readable(&self.socket, timeout);
    }
}

/// Sleeps in the kernel until `socket` has a datagram to read or `timeout`
/// passes; whether one may be waiting. One `ppoll`, to the nanosecond: the
/// socket stays non-blocking, with no system calls to switch it around
/// each wait.
#[cfg(target_os = "linux")]
fn wait_readable(socket: &UdpSocket, timeout: Duration) -> bool {
    use nix::poll::{ppoll, PollFd, PollFlags};
    use std::os::fd::AsFd;
    let mut socket = [PollFd::new(socket.as_fd(), PollFlags::POLLIN)];
    // An interrupted or failed wait may have missed a datagram: look.
    !matches!(ppoll(&mut socket, Some(timeout.into()), None), Ok(0))
}

/// Elsewhere the socket is made blocking with a read timeout for the wait
/// (peeking leaves the datagram for `receive`), then non-blocking again.
#[cfg(not(target_os = "linux"))]
fn wait_readable(socket: &UdpSocket, timeout: Duration) -> bool {
    let blocking =
        socket.set_nonblocking(false).is_ok() && socket.set_read_timeout(Some(timeout)).is_ok();
    if blocking {
        let _ = socket.peek_from(&mut [0u8; 1]);
    } else {
        std::thread::sleep(timeout);
    }
    // A socket left blocking would stall `receive`: nothing runs on
    // without it being non-blocking again.
    socket
        .set_nonblocking(true)
        .expect("a socket that was non-blocking can be made so again");
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_ends_when_a_datagram_arrives_and_leaves_the_socket_non_blocking() {
        let mut a = UdpTransport::bind("127.0.0.1:0").unwrap();
        let mut b = UdpTransport::bind("127.0.0.1:0").unwrap();
        a.send(b.local_address().unwrap(), b"wake up");
        let started = std::time::Instant::now();
        // Far longer than the test may take: only an arrival ends it early.
        b.wait(Duration::from_secs(60));
        assert!(started.elapsed() < Duration::from_secs(30));
        let mut received = Vec::new();
        assert_eq!(
            b.receive(&mut received),
            Some(a.local_address().unwrap()),
            "the wait peeked, it did not take the datagram"
        );
        assert_eq!(received, b"wake up");
        // Blocking now would hang here.
        assert_eq!(b.receive(&mut received), None);
    }

    #[test]
    fn two_loopback_sockets_exchange_datagrams_without_blocking() {
        let mut a = UdpTransport::bind("127.0.0.1:0").unwrap();
        let mut b = UdpTransport::bind("127.0.0.1:0").unwrap();
        let mut received = Vec::new();
        assert_eq!(b.receive(&mut received), None, "nothing sent yet, no wait");
        a.send(b.local_address().unwrap(), b"hello");
        // Loopback delivery is quick but not instant: poll as a loop would.
        let from = (0..1_000_000)
            .find_map(|_| b.receive(&mut received))
            .expect("the datagram arrives on loopback");
        assert_eq!(from, a.local_address().unwrap());
        assert_eq!(received, b"hello");
    }
}
