//! NATs on the seeded simulated network: machines behind a NAT box get a
//! private address; what they send leaves from a public address the box
//! maps, and only answers from where they sent to come back in. The two
//! mapping behaviours ICE meets (RFC 4787) and hairpinning are modelled:
//!
//! - endpoint-independent mapping (a "cone"): one public port per private
//!   socket, whatever the destination, so a STUN server's view holds for
//!   the opponent too and hole punching works;
//! - address-and-port-dependent mapping ("symmetric"): a new public port
//!   per destination, so the STUN server's view is useless to the opponent;
//! - hairpinning: whether a datagram to the box's own public address is
//!   turned back inside (many home routers do not).
//!
//! Filtering is address-dependent in both: inbound datagrams pass only from
//! an IP address the private socket has sent to. Pure and seeded, like
//! `sim`: time is passed in.

use super::sim::{Millis, SimNet};
use super::Transport;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::rc::Rc;

/// Datagrams waiting per socket before more are dropped (a full buffer).
const INBOX_LIMIT: usize = 4096;
/// The first public port a NAT box hands out.
const FIRST_MAPPED_PORT: u16 = 40_000;

/// How a NAT box maps private sockets to public ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mapping {
    /// One public port per private socket (cone).
    EndpointIndependent,
    /// One public port per private socket and destination (symmetric).
    AddressAndPortDependent,
}

/// A NAT box's behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NatBehaviour {
    /// How ports are mapped.
    pub mapping: Mapping,
    /// Whether datagrams to its own public address turn back inside.
    pub hairpinning: bool,
}

impl NatBehaviour {
    /// A cone NAT with hairpinning, the friendliest home router.
    pub const CONE: NatBehaviour = NatBehaviour {
        mapping: Mapping::EndpointIndependent,
        hairpinning: true,
    };
    /// A symmetric NAT (carrier-grade NATs, some firewalls).
    pub const SYMMETRIC: NatBehaviour = NatBehaviour {
        mapping: Mapping::AddressAndPortDependent,
        hairpinning: true,
    };

    /// The same behaviour without hairpinning.
    pub const fn without_hairpinning(self) -> NatBehaviour {
        NatBehaviour {
            hairpinning: false,
            ..self
        }
    }
}

/// Which NAT box, by the order they were added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct NatId(usize);

struct NatBox {
    public_ip: IpAddr,
    behaviour: NatBehaviour,
    /// (private socket, destination or `None` when endpoint-independent) → public port.
    mappings: BTreeMap<(SocketAddr, Option<SocketAddr>), u16>,
    /// Public port → private socket.
    owners: BTreeMap<u16, SocketAddr>,
    /// (public port, remote IP) pairs inbound datagrams may arrive on.
    permitted: BTreeSet<(u16, IpAddr)>,
    /// Port mappings asked for (UPnP): private socket → public port, open
    /// to anyone, and the port the socket's datagrams leave from.
    forwarded: BTreeMap<SocketAddr, u16>,
    next_port: u16,
}

impl NatBox {
    /// The public port `private` leaves from toward `to`, made when new.
    fn map(&mut self, private: SocketAddr, to: SocketAddr) -> Option<u16> {
        if let Some(&port) = self.forwarded.get(&private) {
            return Some(port);
        }
        let key = match self.behaviour.mapping {
            Mapping::EndpointIndependent => (private, None),
            Mapping::AddressAndPortDependent => (private, Some(to)),
        };
        let port = match self.mappings.get(&key) {
            Some(port) => *port,
            None => {
                let port = self.next_port;
                self.next_port = self.next_port.checked_add(1)?;
                self.mappings.insert(key, port);
                self.owners.insert(port, private);
                port
            }
        };
        self.permitted.insert((port, to.ip()));
        Some(port)
    }

    /// The private socket an inbound datagram from `from` to `port` reaches, if let in.
    fn admit(&self, port: u16, from: SocketAddr) -> Option<SocketAddr> {
        if let Some((&private, _)) = self.forwarded.iter().find(|(_, &public)| public == port) {
            return Some(private);
        }
        let owner = *self.owners.get(&port)?;
        self.permitted.contains(&(port, from.ip())).then_some(owner)
    }
}

/// Public servers and NATed machines on one simulated network.
pub struct NatNetwork {
    net: SimNet<SocketAddr>,
    nats: Vec<NatBox>,
    /// Private IP → the NAT box it sits behind.
    behind: BTreeMap<IpAddr, NatId>,
    inboxes: BTreeMap<SocketAddr, VecDeque<(SocketAddr, Vec<u8>)>>,
    now: Millis,
    /// Datagrams a NAT box refused (no mapping, filtered, no hairpinning).
    pub refused: u64,
}

impl NatNetwork {
    /// An empty network over `net` (its links' latency, loss... apply
    /// between the public addresses, and between machines on one LAN).
    pub fn new(net: SimNet<SocketAddr>) -> Self {
        NatNetwork {
            net,
            nats: Vec::new(),
            behind: BTreeMap::new(),
            inboxes: BTreeMap::new(),
            now: 0,
            refused: 0,
        }
    }

    /// The simulated network underneath (to set its links).
    pub fn net(&mut self) -> &mut SimNet<SocketAddr> {
        &mut self.net
    }

    /// Adds a NAT box at `public_ip`.
    pub fn add_nat(&mut self, public_ip: IpAddr, behaviour: NatBehaviour) -> NatId {
        self.nats.push(NatBox {
            public_ip,
            behaviour,
            mappings: BTreeMap::new(),
            owners: BTreeMap::new(),
            permitted: BTreeSet::new(),
            forwarded: BTreeMap::new(),
            next_port: FIRST_MAPPED_PORT,
        });
        NatId(self.nats.len() - 1)
    }

    /// Puts the machine with private address `ip` behind `nat`.
    pub fn place_behind(&mut self, nat: NatId, ip: IpAddr) {
        self.behind.insert(ip, nat);
    }

    /// Forwards `public_port` of `nat` to the private socket `private`, as a
    /// UPnP mapping does: open to every sender, and the port the socket's
    /// own datagrams leave from. Returns the public address.
    pub fn forward_port(
        &mut self,
        nat: NatId,
        public_port: u16,
        private: SocketAddr,
    ) -> SocketAddr {
        let nat = &mut self.nats[nat.0];
        nat.forwarded.insert(private, public_port);
        SocketAddr::new(nat.public_ip, public_port)
    }

    /// Sends a datagram from socket `from` (private or public) to `to`.
    pub fn send(&mut self, from: SocketAddr, to: SocketAddr, bytes: &[u8]) {
        let Some(&nat_id) = self.behind.get(&from.ip()) else {
            self.net.send(self.now, from, to, bytes);
            return;
        };
        if self.behind.get(&to.ip()) == Some(&nat_id) {
            // Same LAN: no NAT on the way.
            self.net.send(self.now, from, to, bytes);
            return;
        }
        let nat = &mut self.nats[nat_id.0];
        let Some(port) = nat.map(from, to) else {
            self.refused += 1;
            return;
        };
        let public = SocketAddr::new(nat.public_ip, port);
        if to.ip() == nat.public_ip && !nat.behaviour.hairpinning {
            self.refused += 1;
            return;
        }
        self.net.send(self.now, public, to, bytes);
    }

    /// Moves the datagrams due by `now` into their sockets, through the
    /// NAT boxes they are addressed to.
    pub fn deliver(&mut self, now: Millis) {
        self.now = now;
        for delivery in self.net.deliver_due(now) {
            let to = match self
                .nats
                .iter()
                .find(|nat| nat.public_ip == delivery.to.ip())
            {
                Some(nat) => match nat.admit(delivery.to.port(), delivery.from) {
                    Some(private) => private,
                    None => {
                        self.refused += 1;
                        continue;
                    }
                },
                None => delivery.to,
            };
            let inbox = self.inboxes.entry(to).or_default();
            if inbox.len() < INBOX_LIMIT {
                inbox.push_back((delivery.from, delivery.bytes));
            }
        }
    }

    /// The next datagram waiting at socket `at`, with its sender as seen there.
    pub fn receive(&mut self, at: SocketAddr) -> Option<(SocketAddr, Vec<u8>)> {
        self.inboxes.get_mut(&at)?.pop_front()
    }

    /// When the next datagram in flight arrives.
    pub fn next_delivery_at(&self) -> Option<Millis> {
        self.net.next_delivery_at()
    }
}

/// One socket on a shared [`NatNetwork`], as a [`Transport`].
#[derive(Clone)]
pub struct NatSocket {
    network: Rc<RefCell<NatNetwork>>,
    address: SocketAddr,
}

impl NatSocket {
    /// The socket at `address` (private behind a NAT, or public).
    pub fn new(network: Rc<RefCell<NatNetwork>>, address: SocketAddr) -> Self {
        NatSocket { network, address }
    }

    /// Its own address.
    pub fn address(&self) -> SocketAddr {
        self.address
    }
}

impl Transport for NatSocket {
    type Address = SocketAddr;

    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        self.network.borrow_mut().send(self.address, to, datagram);
    }

    fn receive(&mut self, into: &mut Vec<u8>) -> Option<SocketAddr> {
        let (from, bytes) = self.network.borrow_mut().receive(self.address)?;
        *into = bytes;
        Some(from)
    }

    /// Simulated time moves only when the test moves it.
    fn wait(&mut self, _timeout: std::time::Duration) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    /// A machine at 10.0.0.2 behind a NAT at 203.0.113.1, and two servers.
    fn network(behaviour: NatBehaviour) -> NatNetwork {
        let mut network = NatNetwork::new(SimNet::new(1));
        let nat = network.add_nat("203.0.113.1".parse().unwrap(), behaviour);
        network.place_behind(nat, "10.0.0.2".parse().unwrap());
        network
    }

    fn sender_seen_by(network: &mut NatNetwork, server: &str) -> SocketAddr {
        network.send(at("10.0.0.2:7000"), at(server), b"hi");
        network.deliver(0);
        network.receive(at(server)).expect("delivered").0
    }

    #[test]
    fn a_cone_nat_shows_every_server_the_same_public_port() {
        let mut network = network(NatBehaviour::CONE);
        let first = sender_seen_by(&mut network, "198.51.100.1:3478");
        let second = sender_seen_by(&mut network, "198.51.100.2:3478");
        assert_eq!(first.ip(), "203.0.113.1".parse::<IpAddr>().unwrap());
        assert_eq!(first, second);
    }

    #[test]
    fn a_symmetric_nat_shows_each_destination_a_new_port() {
        let mut network = network(NatBehaviour::SYMMETRIC);
        let first = sender_seen_by(&mut network, "198.51.100.1:3478");
        let second = sender_seen_by(&mut network, "198.51.100.2:3478");
        assert_ne!(first.port(), second.port());
    }

    #[test]
    fn answers_come_back_in_but_strangers_are_filtered() {
        let mut network = network(NatBehaviour::CONE);
        let public = sender_seen_by(&mut network, "198.51.100.1:3478");
        network.send(at("198.51.100.1:3478"), public, b"answer");
        network.send(at("198.51.100.9:3478"), public, b"stranger");
        network.deliver(0);
        assert_eq!(
            network.receive(at("10.0.0.2:7000")),
            Some((at("198.51.100.1:3478"), b"answer".to_vec()))
        );
        assert_eq!(network.receive(at("10.0.0.2:7000")), None);
        assert_eq!(network.refused, 1);
    }

    #[test]
    fn a_forwarded_port_lets_anyone_in_and_is_where_the_socket_leaves_from() {
        let mut network = network(NatBehaviour::SYMMETRIC);
        let public = network.forward_port(NatId(0), 6000, at("10.0.0.2:7000"));
        network.send(at("198.51.100.9:1234"), public, b"stranger");
        network.deliver(0);
        assert_eq!(
            network.receive(at("10.0.0.2:7000")),
            Some((at("198.51.100.9:1234"), b"stranger".to_vec()))
        );
        assert_eq!(sender_seen_by(&mut network, "198.51.100.1:3478"), public);
        assert_eq!(sender_seen_by(&mut network, "198.51.100.2:3478"), public);
    }

    #[test]
    fn without_hairpinning_a_datagram_to_the_own_public_address_is_lost() {
        let mut network = network(NatBehaviour::CONE.without_hairpinning());
        let public = sender_seen_by(&mut network, "198.51.100.1:3478");
        network.send(at("10.0.0.2:7001"), public, b"hairpin");
        network.deliver(0);
        assert_eq!(network.receive(at("10.0.0.2:7000")), None);
        assert_eq!(network.refused, 1);
    }
}
