//! The socket a live machine talks through, and what its traffic came to
//! on the wire, for players and spectators alike.

use crate::net::link::LinkTransport;
use crate::net::{ip_udp_header_bytes, Transport, IPV4_UDP_HEADER_BYTES};
use std::net::SocketAddr;
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// The socket transport, noting the IP and UDP header bytes each datagram
/// to the peer costs on the wire, for the wire figures.
pub struct LiveTransport {
    link: LinkTransport,
    header_bytes: u64,
    /// Where the other players of a room's match of 3 or 4 are, as ICE
    /// finds the paths to them beside this socket's path to the host.
    other_players: Option<Receiver<(u8, SocketAddr)>>,
}

impl LiveTransport {
    /// Talks through `link`.
    pub fn new(link: LinkTransport) -> Self {
        LiveTransport {
            link,
            header_bytes: IPV4_UDP_HEADER_BYTES,
            other_players: None,
        }
    }

    /// The link underneath, to meet peers beside the match on it.
    pub(crate) fn link_mut(&mut self) -> &mut LinkTransport {
        &mut self.link
    }

    /// Hears from `paths` where the other players are (slot, address).
    pub(crate) fn find_players_by(&mut self, paths: Receiver<(u8, SocketAddr)>) {
        self.other_players = Some(paths);
    }

    /// The paths to other players found since last asked.
    pub(crate) fn players_found(&self) -> Vec<(u8, SocketAddr)> {
        self.other_players
            .as_ref()
            .map(|paths| paths.try_iter().collect())
            .unwrap_or_default()
    }

    /// Sends what the link conditioner still holds, each datagram when
    /// due: the last thing before the process exits.
    pub fn flush(&mut self) {
        self.link.flush();
    }

    /// The link underneath, for another attempt on the same socket.
    pub(crate) fn into_link(self) -> LinkTransport {
        self.link
    }

    /// The UDP port this socket is bound to.
    pub(crate) fn local_port(&self) -> u16 {
        self.link.inner().local_address().port()
    }

    /// The path ICE chose for this socket, when it did.
    pub(crate) fn ice_path(&self) -> Option<crate::net::ice::IcePath> {
        self.link.inner().ice_path().cloned()
    }

    /// The traffic over `seconds` of `sent` and `received` (bytes, datagrams)
    /// as the link counts them, with this socket's IP/UDP header and the
    /// path's relay framing (ChannelData or Send indication, as measured
    /// over the path) added per datagram: what the socket really carried.
    pub(crate) fn traffic(
        &self,
        seconds: f64,
        sent: (u64, u64),
        received: (u64, u64),
    ) -> WireTraffic {
        let path = self.link.inner().path_stats().unwrap_or_default();
        let framing =
            |per_datagram: f64, datagrams: u64| (per_datagram * datagrams as f64).round() as u64;
        let sent_framing = path.overhead_per_datagram();
        WireTraffic {
            seconds,
            sent_bytes: sent.0 + self.header_bytes * sent.1 + framing(sent_framing, sent.1),
            received_bytes: received.0
                + self.header_bytes * received.1
                + framing(path.received_overhead_per_datagram(), received.1),
            datagrams_sent: sent.1,
            relay_framing_per_datagram: sent_framing,
        }
    }
}

impl Transport for LiveTransport {
    type Address = SocketAddr;

    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        self.header_bytes = ip_udp_header_bytes(to);
        self.link.send(to, datagram);
    }

    fn receive(&mut self, into: &mut Vec<u8>) -> Option<SocketAddr> {
        self.link.receive(into)
    }

    fn wait(&mut self, timeout: Duration) {
        self.link.wait(timeout);
    }
}

/// A link's traffic over a match, with 28 (IPv4) or 48 (IPv6) bytes of
/// IP/UDP header counted per datagram: the summaries' wire line and the
/// JSON's `wire`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WireTraffic {
    /// Seconds the traffic was counted over.
    pub(crate) seconds: f64,
    /// Bytes sent, headers included.
    pub(crate) sent_bytes: u64,
    /// Bytes received, headers included.
    pub(crate) received_bytes: u64,
    /// Datagrams sent.
    pub(crate) datagrams_sent: u64,
    /// Bytes the relay's framing added to each datagram sent (counted in
    /// `sent_bytes`; 0 on a direct path).
    pub(crate) relay_framing_per_datagram: f64,
}

impl WireTraffic {
    fn per_second(&self, count: u64) -> f64 {
        if self.seconds > 0.0 {
            count as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// Bytes sent per second.
    pub(crate) fn sent_bytes_per_s(&self) -> f64 {
        self.per_second(self.sent_bytes)
    }

    /// Bytes received per second.
    pub(crate) fn received_bytes_per_s(&self) -> f64 {
        self.per_second(self.received_bytes)
    }

    /// Datagrams sent per second.
    pub(crate) fn sent_datagrams_per_s(&self) -> f64 {
        self.per_second(self.datagrams_sent)
    }

    /// The JSON's `wire`.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "sent_bytes_per_s": self.sent_bytes_per_s(),
            "received_bytes_per_s": self.received_bytes_per_s(),
            "sent_datagrams_per_s": self.sent_datagrams_per_s(),
            "relay_framing_bytes_per_datagram": self.relay_framing_per_datagram,
        })
    }

    /// The summary's note of the relay's framing, when a relay framed.
    pub(crate) fn relay_framing_text(&self) -> String {
        if self.relay_framing_per_datagram > 0.0 {
            format!(
                " (relay framing {:.1} B a datagram included)",
                self.relay_framing_per_datagram
            )
        } else {
            String::new()
        }
    }
}
