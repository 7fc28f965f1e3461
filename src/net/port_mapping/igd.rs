//! The routers on this network, found and asked through igd-next (sync).

use super::{AddPortFailure, Gateway};
use igd_next::{AddPortError, PortMappingProtocol, SearchOptions};
use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

/// SSDP's multicast group, where gateways listen for searches.
const SSDP: &str = "239.255.255.250:1900";
/// Gateways asked at most: a home network has one or two.
const MAX_GATEWAYS: usize = 8;
/// What mapping is for, as the router lists it.
const DESCRIPTION: &str = "netcade";

/// An internet gateway device igd-next found.
pub struct IgdGateway(igd_next::Gateway);

impl Gateway for IgdGateway {
    fn name(&self) -> String {
        format!("gateway {}", self.0.addr)
    }

    fn external_ip(&self) -> Result<IpAddr, String> {
        self.0.get_external_ip().map_err(|error| error.to_string())
    }

    fn add_udp_port(
        &self,
        external_port: u16,
        local: SocketAddr,
        lease_seconds: u32,
    ) -> Result<(), AddPortFailure> {
        self.0
            .add_port(
                PortMappingProtocol::UDP,
                external_port,
                local,
                lease_seconds,
                DESCRIPTION,
            )
            .map_err(|error| match error {
                AddPortError::OnlyPermanentLeasesSupported => AddPortFailure::OnlyPermanentLeases,
                other => AddPortFailure::Other(other.to_string()),
            })
    }

    fn remove_udp_port(&self, external_port: u16) -> Result<(), String> {
        self.0
            .remove_port(PortMappingProtocol::UDP, external_port)
            .map_err(|error| error.to_string())
    }
}

/// Every gateway that answers a search within `timeout`: the devices that
/// answer the multicast search, each then asked directly (igd-next's own
/// search keeps only the first to answer).
pub fn discover_gateways(timeout: Duration) -> Vec<IgdGateway> {
    let mut gateways: Vec<IgdGateway> = answering_devices(timeout)
        .into_iter()
        .filter_map(|device| {
            let options = SearchOptions {
                broadcast_address: SocketAddr::new(device, 1900),
                timeout: Some(timeout),
                single_search_timeout: Some(timeout),
                ..SearchOptions::default()
            };
            igd_next::search_gateway(options).ok().map(IgdGateway)
        })
        .collect();
    if gateways.is_empty() {
        let options = SearchOptions {
            timeout: Some(timeout),
            single_search_timeout: Some(timeout),
            ..SearchOptions::default()
        };
        gateways.extend(igd_next::search_gateway(options).ok().map(IgdGateway));
    }
    gateways
}

/// The addresses of the devices answering an SSDP search for gateways.
fn answering_devices(timeout: Duration) -> BTreeSet<IpAddr> {
    let mut devices = BTreeSet::new();
    let Ok(socket) = UdpSocket::bind("0.0.0.0:0") else {
        return devices;
    };
    let search = "M-SEARCH * HTTP/1.1\r\nHost:239.255.255.250:1900\r\n\
                  ST:urn:schemas-upnp-org:device:InternetGatewayDevice:1\r\n\
                  Man:\"ssdp:discover\"\r\nMX:2\r\n\r\n";
    if socket.send_to(search.as_bytes(), SSDP).is_err() {
        return devices;
    }
    let started = Instant::now();
    let mut answer = [0u8; 1500];
    while devices.len() < MAX_GATEWAYS {
        let left = timeout.saturating_sub(started.elapsed());
        if left.is_zero() || socket.set_read_timeout(Some(left)).is_err() {
            break;
        }
        match socket.recv_from(&mut answer) {
            Ok((length, from)) if answer[..length].starts_with(b"HTTP/1.1 200") => {
                devices.insert(from.ip());
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    devices
}
