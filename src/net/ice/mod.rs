//! ICE over the game's own UDP socket: gather host, server-reflexive (STUN)
//! and relayed (TURN) candidates, trickle them to the opponent through a
//! [`SignalChannel`](super::signal::SignalChannel), check pairs, and hand the
//! chosen path to the protocol as an ordinary [`Transport`](super::Transport)
//! whose peer is a socket address. rice-proto does the ICE, STUN and TURN
//! (sans-IO); this module moves its datagrams and decides when a relay may
//! be used.
//!
//! netcade datagrams begin with `n` (0x6E), outside the first-byte ranges of
//! STUN (0–3) and TURN ChannelData (64–79), so all three share the socket:
//! [`is_netcade_datagram`] sorts them.

mod channel;
mod connector;
mod guests;
mod meeting_socket;
pub mod meetings;
mod signals;
mod stun_peek;
mod transport;

pub use connector::IceConnector;
pub use guests::{GuestEvent, GuestLine, GuestNews, Guests};
pub use meeting_socket::{MeetingEnd, MeetingOutcome, MeetingSocket};
pub use signals::{IceSignal, SignalParseError};
pub use transport::{BesideTheMatch, IceTransport, PathStats};

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

/// The first byte of every netcade datagram (the `n` of `nc`).
pub const NETCADE_FIRST_BYTE: u8 = b'n';

/// True when `datagram` is netcade's own (not STUN or TURN framing).
pub fn is_netcade_datagram(datagram: &[u8]) -> bool {
    datagram.first() == Some(&NETCADE_FIRST_BYTE)
}

/// A TURN server offering relayed candidates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelayServer {
    /// What players see in the path report (`relay <name> +18 ms`).
    pub name: String,
    /// Where it listens (UDP).
    pub address: SocketAddr,
    /// Its long-term credentials.
    pub username: String,
    /// Its long-term credentials.
    pub password: String,
}

/// Which paths a player accepts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PathPolicy {
    /// Direct and hole-punched paths first; a relay as the last resort.
    #[default]
    Any,
    /// Offer only relayed candidates (hides this machine's addresses, and
    /// tests the relay).
    RelayOnly,
}

/// The servers and rules one connection attempt uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IceConfig {
    /// STUN servers asked for this machine's address outside its NAT.
    pub stun_servers: Vec<SocketAddr>,
    /// TURN servers, each tried for a relayed candidate.
    pub relays: Vec<RelayServer>,
    /// A public address the router forwards to this socket (a port
    /// mapping), offered as one more candidate.
    pub mapped_address: Option<SocketAddr>,
    /// Whether the router is asked to forward the socket's port first
    /// (`--no-port-mapping` says no; a build without feature `natpmp` or
    /// `upnp` asks none). Off unless asked: a library user, a test, searches no network.
    pub port_mapping: bool,
    /// Which paths are acceptable.
    pub policy: PathPolicy,
    /// How long direct and hole-punched pairs have before a relayed
    /// candidate is offered (eager relays route everyone through them).
    pub relay_grace: Duration,
    /// How long connecting may take before it is declared a failure.
    pub give_up_after: Duration,
}

impl Default for IceConfig {
    fn default() -> Self {
        IceConfig {
            stun_servers: Vec::new(),
            relays: Vec::new(),
            mapped_address: None,
            port_mapping: false,
            policy: PathPolicy::Any,
            relay_grace: Duration::from_millis(1500),
            give_up_after: Duration::from_secs(15),
        }
    }
}

/// Which side of the check this machine plays: exactly one of the two
/// controls (nominates the pair); the host does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IceRole {
    /// Nominates the pair (the host).
    Controlling,
    /// Follows the opponent's nomination (the joiner).
    Controlled,
}

/// How the chosen path reaches the opponent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathKind {
    /// Host address to host address: the same network, or no NAT between.
    Direct,
    /// Through one or both NATs, opened by the checks (server-reflexive or
    /// peer-reflexive addresses).
    HolePunched,
    /// To a port the opponent's router forwards (its port mapping).
    PortMapped,
    /// Through a TURN relay.
    Relay {
        /// The relay's name.
        name: String,
        /// The round trip to the relay (the shortest wait for its answers
        /// while allocating): about what the detour adds.
        round_trip_ms: u64,
    },
}

impl IcePath {
    /// The summary's line: `relay eu +18 ms, connected in 2.10 s`.
    pub fn describe(&self) -> String {
        format!(
            "{}, connected in {:.2} s",
            self.kind,
            self.time_to_connect.as_secs_f64()
        )
    }

    /// The JSON's `path`.
    pub fn json(&self) -> serde_json::Value {
        let (relay, relay_round_trip_ms) = match &self.kind {
            PathKind::Relay {
                name,
                round_trip_ms,
            } => (Some(name.as_str()), Some(*round_trip_ms)),
            _ => (None, None),
        };
        let kind = match self.kind {
            PathKind::Direct => "direct",
            PathKind::HolePunched => "hole_punched",
            PathKind::PortMapped => "port_mapped",
            PathKind::Relay { .. } => "relay",
        };
        serde_json::json!({
            "path": self.kind.to_string(),
            "kind": kind,
            "relay": relay,
            "relay_round_trip_ms": relay_round_trip_ms,
            "time_to_connect_ms": self.time_to_connect.as_secs_f64() * 1000.0,
            "port_mapping": self.port_mapping.as_ref().map(|mapped| serde_json::json!({
                "protocol": mapped.protocol,
                "external": mapped.external.to_string(),
                "time_to_map_ms": mapped.time_to_map.as_secs_f64() * 1000.0,
            })),
        })
    }
}

impl fmt::Display for PathKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathKind::Direct => write!(f, "direct"),
            PathKind::HolePunched => write!(f, "via NAT (hole punched)"),
            PathKind::PortMapped => write!(f, "to the opponent's port mapping"),
            PathKind::Relay {
                name,
                round_trip_ms,
            } => write!(f, "relay {name} +{round_trip_ms} ms"),
        }
    }
}

/// The path ICE chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IcePath {
    /// How it goes.
    pub kind: PathKind,
    /// The opponent's address as this socket sends to and hears from it
    /// (what the protocol's handshake is given).
    pub remote: SocketAddr,
    /// From the start of connecting to the chosen pair.
    pub time_to_connect: Duration,
    /// The port this side's router forwarded for the match, if one did.
    pub port_mapping: Option<MappedPort>,
}

/// A port this side's router forwards to the game socket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappedPort {
    /// `PCP`, `NAT-PMP` or `UPnP`.
    pub protocol: &'static str,
    /// The public address forwarded.
    pub external: SocketAddr,
    /// How long asking the router took.
    pub time_to_map: Duration,
}

/// Why no path was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IceError {
    /// Every pair failed, or none succeeded in time.
    #[error(
        "no route to the opponent: direct and relayed paths failed after {waited_s} s; check that UDP is allowed (and that a relay is configured)"
    )]
    NoRoute {
        /// Seconds spent trying.
        waited_s: u64,
    },
    /// The opponent's messages could not be read.
    #[error("the opponent sent a connection message netcade cannot read: {0}")]
    BadSignal(#[from] SignalParseError),
    /// The signaling channel failed.
    #[error("{0}")]
    Signal(#[from] super::signal::SignalError),
    /// ICE shares the game's socket, so it must be a plain UDP one.
    #[error("connecting through a room needs the plain UDP socket (--transport udp)")]
    NeedsUdp,
}

/// The address the opponent can reach a socket bound at `bound` on: a
/// wildcard bind (`0.0.0.0`, `[::]`) is reached at the address of the
/// interface the default route leaves from (found without sending
/// anything), or loopback on a machine with no route.
pub fn reachable_address(bound: SocketAddr) -> SocketAddr {
    if !bound.ip().is_unspecified() {
        return bound;
    }
    let outward = std::net::UdpSocket::bind("0.0.0.0:0")
        .and_then(|probe| {
            // TEST-NET-1: never answered, and connecting a UDP socket sends nothing.
            probe.connect("192.0.2.1:9")?;
            probe.local_addr()
        })
        .map(|address| address.ip())
        .unwrap_or(std::net::Ipv4Addr::LOCALHOST.into());
    SocketAddr::new(outward, bound.port())
}

/// A connection's ICE credentials (RFC 8445 §5.3: a 4+ character username
/// fragment, a 22+ character password), drawn from the OS.
pub fn random_credentials() -> rice_proto::stream::Credentials {
    rice_proto::stream::Credentials::new(
        rice_proto::random_string(8),
        rice_proto::random_string(24),
    )
}

/// The round trip in whole milliseconds, at least 1 so a report never says
/// a detour is free.
fn whole_ms(duration: Duration) -> u64 {
    (duration.as_millis() as u64).max(1)
}

/// rice-proto's clock from microseconds on ours.
fn instant(now_us: u64) -> stun_proto::Instant {
    stun_proto::Instant::from_nanos(i64::try_from(now_us.saturating_mul(1000)).unwrap_or(i64::MAX))
}
