//! Best-effort port mapping: asking the home router (PCP or NAT-PMP, then
//! UPnP IGD) to forward the game socket's port, so the opponent can reach it even through a
//! NAT hole punching cannot open. The mapped address becomes one more ICE
//! candidate ([`IceConfig::mapped_address`](super::ice::IceConfig)); no
//! match depends on it. The lessons of RetroArch's UPnP (PRs #12628,
//! #13324): try every gateway that answers, retry with a permanent lease
//! when a router only takes those (error 725), and delete the mapping when
//! the match ends ([`PortMapping`]'s drop).
//!
//! The router talk is crab_nat's (feature `natpmp`) and igd-next's
//! (feature `upnp`); without either [`map_game_port`] maps nothing.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// How long a mapping is asked for: longer than any match, short enough
/// that a crashed netcade's mapping goes away by itself.
pub const LEASE_SECONDS: u32 = 4 * 3600;

/// How long looking for gateways may take before connecting goes on without.
pub const SEARCH_TIMEOUT: Duration = Duration::from_secs(2);

/// Why a gateway did not add the mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AddPortFailure {
    /// UPnP error 725: this router only takes mappings without a lease.
    OnlyPermanentLeases,
    /// Anything else, as the gateway or the request said it.
    Other(String),
}

/// A router that can forward a port (a UPnP internet gateway device).
pub trait Gateway {
    /// The router's address, for messages.
    fn name(&self) -> String;
    /// The router's public IP address.
    fn external_ip(&self) -> Result<IpAddr, String>;
    /// Forwards UDP `external_port` to `local` for `lease_seconds` (0: no end).
    fn add_udp_port(
        &self,
        external_port: u16,
        local: SocketAddr,
        lease_seconds: u32,
    ) -> Result<(), AddPortFailure>;
    /// Stops forwarding UDP `external_port`.
    fn remove_udp_port(&self, external_port: u16) -> Result<(), String>;
}

/// A port the router forwards to the game socket, until dropped.
pub struct PortMapping<G: Gateway> {
    gateway: G,
    external: SocketAddr,
    /// Whether the router took only a mapping without a lease.
    pub permanent: bool,
}

impl<G: Gateway> PortMapping<G> {
    /// The public address the router forwards.
    pub fn external(&self) -> SocketAddr {
        self.external
    }
}

impl<G: Gateway> Drop for PortMapping<G> {
    fn drop(&mut self) {
        // Best effort: a router that forgot it already is as good.
        let _ = self.gateway.remove_udp_port(self.external.port());
    }
}

/// No gateway forwarded the port: what each said.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no router forwarded UDP port {port}: {}", if reasons.is_empty() { "no gateway answered".to_owned() } else { reasons.join("; ") })]
pub struct MappingError {
    /// The port asked for.
    pub port: u16,
    /// Each gateway's answer, in the order tried.
    pub reasons: Vec<String>,
}

/// Asks each gateway in turn to forward `local`'s port (the same port
/// outside), with a lease, or without one where only that is taken; the
/// first that does keeps the mapping.
pub fn map_port<G: Gateway>(
    gateways: impl IntoIterator<Item = G>,
    local: SocketAddr,
) -> Result<PortMapping<G>, MappingError> {
    let port = local.port();
    let mut reasons = Vec::new();
    for gateway in gateways {
        let external_ip = match gateway.external_ip() {
            Ok(ip) => ip,
            Err(why) => {
                reasons.push(format!("{}: {why}", gateway.name()));
                continue;
            }
        };
        let permanent = match gateway.add_udp_port(port, local, LEASE_SECONDS) {
            Ok(()) => false,
            Err(AddPortFailure::OnlyPermanentLeases) => {
                match gateway.add_udp_port(port, local, 0) {
                    Ok(()) => true,
                    Err(failure) => {
                        reasons.push(format!("{}: {}", gateway.name(), describe(&failure)));
                        continue;
                    }
                }
            }
            Err(failure) => {
                reasons.push(format!("{}: {}", gateway.name(), describe(&failure)));
                continue;
            }
        };
        return Ok(PortMapping {
            gateway,
            external: SocketAddr::new(external_ip, port),
            permanent,
        });
    }
    Err(MappingError { port, reasons })
}

fn describe(failure: &AddPortFailure) -> String {
    match failure {
        AddPortFailure::OnlyPermanentLeases => "only permanent mappings (725)".to_owned(),
        AddPortFailure::Other(why) => why.clone(),
    }
}

#[cfg(feature = "upnp")]
mod igd;
#[cfg(feature = "natpmp")]
mod pcp;

#[cfg(feature = "upnp")]
pub use igd::{discover_gateways, IgdGateway};
#[cfg(feature = "natpmp")]
pub use pcp::{default_gateway, PcpMapping, PCP_TIMEOUT};

/// The game socket's mapping, kept for the match and deleted when dropped
/// (uninhabited in a build with neither feature).
pub enum GamePortMapping {
    /// Made by a UPnP internet gateway device.
    #[cfg(feature = "upnp")]
    Upnp(PortMapping<IgdGateway>),
    /// Made by the default gateway over PCP or NAT-PMP.
    #[cfg(feature = "natpmp")]
    Pcp(PcpMapping),
}

impl GamePortMapping {
    /// The public address the router forwards.
    pub fn external(&self) -> SocketAddr {
        match *self {
            #[cfg(feature = "upnp")]
            GamePortMapping::Upnp(ref mapping) => mapping.external(),
            #[cfg(feature = "natpmp")]
            GamePortMapping::Pcp(ref mapping) => mapping.external(),
        }
    }

    /// How it was asked for: `UPnP`, `PCP` or `NAT-PMP`.
    pub fn protocol(&self) -> &'static str {
        match *self {
            #[cfg(feature = "upnp")]
            GamePortMapping::Upnp(_) => "UPnP",
            #[cfg(feature = "natpmp")]
            GamePortMapping::Pcp(ref mapping) => mapping.protocol(),
        }
    }
}

/// Asks the routers on this network to forward the game socket's port:
/// the default gateway over PCP/NAT-PMP first (feature `natpmp`: one
/// request, at most [`PCP_TIMEOUT`]), then the UPnP gateways that answer a
/// search (feature `upnp`, [`SEARCH_TIMEOUT`]). The mapping (kept until
/// dropped) or what each said.
pub fn map_game_port(local: SocketAddr) -> Result<GamePortMapping, MappingError> {
    #[allow(unused_mut)]
    let mut reasons: Vec<String> = Vec::new();
    #[cfg(feature = "natpmp")]
    match pcp::map_port(local) {
        Ok(mapping) => return Ok(GamePortMapping::Pcp(mapping)),
        Err(why) => reasons.push(why),
    }
    #[cfg(feature = "upnp")]
    match map_port(discover_gateways(SEARCH_TIMEOUT), local) {
        Ok(mapping) => return Ok(GamePortMapping::Upnp(mapping)),
        Err(error) => reasons.extend(error.reasons),
    }
    Err(MappingError {
        port: local.port(),
        reasons,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A router that answers as told and notes what it was asked.
    struct FakeGateway {
        name: &'static str,
        external_ip: Result<IpAddr, String>,
        answers: RefCell<Vec<Result<(), AddPortFailure>>>,
        log: Rc<RefCell<Vec<String>>>,
    }

    impl FakeGateway {
        fn new(
            name: &'static str,
            answers: Vec<Result<(), AddPortFailure>>,
            log: &Rc<RefCell<Vec<String>>>,
        ) -> Self {
            FakeGateway {
                name,
                external_ip: Ok("203.0.113.7".parse().unwrap()),
                answers: RefCell::new(answers),
                log: log.clone(),
            }
        }
    }

    impl Gateway for FakeGateway {
        fn name(&self) -> String {
            self.name.to_owned()
        }
        fn external_ip(&self) -> Result<IpAddr, String> {
            self.external_ip.clone()
        }
        fn add_udp_port(&self, port: u16, _: SocketAddr, lease: u32) -> Result<(), AddPortFailure> {
            self.log
                .borrow_mut()
                .push(format!("{} add {port} lease {lease}", self.name));
            self.answers.borrow_mut().remove(0)
        }
        fn remove_udp_port(&self, port: u16) -> Result<(), String> {
            self.log
                .borrow_mut()
                .push(format!("{} remove {port}", self.name));
            Ok(())
        }
    }

    fn local() -> SocketAddr {
        "192.168.1.20:7000".parse().unwrap()
    }

    #[test]
    fn every_gateway_is_tried_until_one_forwards_the_port() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let refusing = FakeGateway::new(
            "first",
            vec![Err(AddPortFailure::Other("conflict".into()))],
            &log,
        );
        let mut unreachable = FakeGateway::new("second", vec![], &log);
        unreachable.external_ip = Err("timed out".into());
        let willing = FakeGateway::new("third", vec![Ok(())], &log);
        let mapping = map_port([refusing, unreachable, willing], local()).unwrap();
        assert_eq!(mapping.external(), "203.0.113.7:7000".parse().unwrap());
        assert!(!mapping.permanent);
        assert_eq!(
            *log.borrow(),
            ["first add 7000 lease 14400", "third add 7000 lease 14400"]
        );
    }

    #[test]
    fn a_router_taking_only_permanent_mappings_is_asked_again_without_a_lease() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let gateway = FakeGateway::new(
            "router",
            vec![Err(AddPortFailure::OnlyPermanentLeases), Ok(())],
            &log,
        );
        let mapping = map_port([gateway], local()).unwrap();
        assert!(mapping.permanent);
        assert_eq!(
            *log.borrow(),
            ["router add 7000 lease 14400", "router add 7000 lease 0"]
        );
    }

    #[test]
    fn the_mapping_is_deleted_when_the_match_ends() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let mapping = map_port([FakeGateway::new("router", vec![Ok(())], &log)], local()).unwrap();
        drop(mapping);
        assert_eq!(
            log.borrow().last().map(String::as_str),
            Some("router remove 7000")
        );
    }

    #[test]
    fn no_gateway_is_an_error_saying_what_each_answered() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let refusing = FakeGateway::new(
            "router",
            vec![Err(AddPortFailure::Other("conflict".into()))],
            &log,
        );
        let error = map_port([refusing], local()).err().unwrap();
        assert_eq!(
            error.to_string(),
            "no router forwarded UDP port 7000: router: conflict"
        );
        let none = map_port(Vec::<FakeGateway>::new(), local()).err().unwrap();
        assert!(none.to_string().ends_with("no gateway answered"), "{none}");
    }
}
