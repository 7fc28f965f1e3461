//! The default gateway, asked through crab_nat: PCP (RFC 6887) first, NAT-PMP
//! (RFC 6886) where the router answers that it speaks only that. One
//! request to one address, answered in milliseconds on a home network or
//! refused at once by an ICMP error where nothing listens; a router that
//! drops it silently costs [`PCP_TIMEOUT`] at most.

use super::LEASE_SECONDS;
use crab_nat::{natpmp, InternetProtocol, PortMappingOptions, PortMappingType, TimeoutConfig};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::num::NonZeroU16;
use std::time::Duration;

/// The kernel's IPv4 routing table, where the default route names the gateway.
const ROUTES: &str = "/proc/net/route";

/// One request and one retry: 250 ms, then 500 ms.
const TIMEOUTS: TimeoutConfig = TimeoutConfig {
    initial_timeout: Duration::from_millis(250),
    max_retries: 1,
    max_retry_timeout: Some(Duration::from_millis(500)),
};

/// The longest asking the gateway for a mapping takes when it never answers.
pub const PCP_TIMEOUT: Duration = Duration::from_millis(750);

/// A port the default gateway forwards, until dropped (then deleted).
pub struct PcpMapping {
    /// Taken by the drop, which deletes it.
    mapping: Option<crab_nat::PortMapping>,
    /// crab_nat is async: its requests run on this, the drop's too.
    runtime: tokio::runtime::Runtime,
    external: SocketAddr,
}

impl PcpMapping {
    /// The public address the router forwards.
    pub fn external(&self) -> SocketAddr {
        self.external
    }

    /// `PCP` or `NAT-PMP`, as the router answered.
    pub fn protocol(&self) -> &'static str {
        match self
            .mapping
            .as_ref()
            .map(crab_nat::PortMapping::mapping_type)
        {
            Some(PortMappingType::NatPmp) => "NAT-PMP",
            _ => "PCP",
        }
    }
}

impl Drop for PcpMapping {
    fn drop(&mut self) {
        if let Some(mapping) = self.mapping.take() {
            // Best effort: a gateway that forgot it already is as good.
            let _ = self.runtime.block_on(mapping.try_drop());
        }
    }
}

/// Asks the default gateway to forward UDP `local`'s port (the same port
/// outside where it is free): the mapping, or what went wrong.
pub fn map_port(local: SocketAddr) -> Result<PcpMapping, String> {
    let routes = std::fs::read_to_string(ROUTES).map_err(|error| format!("{ROUTES}: {error}"))?;
    let gateway = default_gateway(&routes).ok_or("no default gateway")?;
    let name = format!("gateway {gateway}");
    let port = NonZeroU16::new(local.port()).ok_or("the socket has no port yet")?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|error| format!("{name}: {error}"))?;
    let options = PortMappingOptions {
        external_port: Some(port),
        lifetime_seconds: Some(LEASE_SECONDS),
        timeout_config: Some(TIMEOUTS),
    };
    let asked = runtime.block_on(async {
        let mapping = crab_nat::PortMapping::new(
            gateway.into(),
            local.ip(),
            InternetProtocol::Udp,
            port,
            options,
        )
        .await
        .map_err(|failure| failure.to_string())?;
        let external_ip = match mapping.mapping_type() {
            PortMappingType::Pcp { external_ip, .. } => external_ip,
            // NAT-PMP's answer has no address: it is asked apart.
            PortMappingType::NatPmp => natpmp::external_address(gateway.into(), Some(TIMEOUTS))
                .await
                .map(IpAddr::V4)
                .map_err(|failure| format!("NAT-PMP({failure})"))?,
        };
        Ok::<_, String>((mapping, external_ip))
    });
    let (mapping, external_ip) = asked.map_err(|why| format!("{name}: {why}"))?;
    let external = SocketAddr::new(external_ip, mapping.external_port().get());
    Ok(PcpMapping {
        mapping: Some(mapping),
        runtime,
        external,
    })
}

/// The gateway of the default route in `routes` (the text of
/// `/proc/net/route`) with the lowest metric; `None` when there is none or
/// the text is not a routing table.
pub fn default_gateway(routes: &str) -> Option<Ipv4Addr> {
    /// RTF_UP | RTF_GATEWAY: a route in use, through a gateway.
    const UP_THROUGH_GATEWAY: u32 = 0x1 | 0x2;
    routes
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let hex = |index: usize| u32::from_str_radix(fields.get(index)?, 16).ok();
            let (destination, gateway, flags, mask) = (hex(1)?, hex(2)?, hex(3)?, hex(7)?);
            let metric: u32 = fields.get(6)?.parse().ok()?;
            let default = destination == 0 && mask == 0 && gateway != 0;
            // The kernel prints each address as its in-memory (network
            // order) bytes read as a native integer.
            (default && flags & UP_THROUGH_GATEWAY == UP_THROUGH_GATEWAY)
                .then(|| (metric, Ipv4Addr::from(gateway.to_ne_bytes())))
        })
        .min_by_key(|&(metric, _)| metric)
        .map(|(_, gateway)| gateway)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n";

    /// A route line as the kernel prints it (addresses in native order).
    fn route(
        iface: &str,
        destination: [u8; 4],
        gateway: [u8; 4],
        flags: u32,
        metric: u32,
    ) -> String {
        let hex = |bytes: [u8; 4]| format!("{:08X}", u32::from_ne_bytes(bytes));
        let mask = if destination == [0; 4] {
            [0; 4]
        } else {
            [255, 255, 255, 0]
        };
        format!(
            "{iface}\t{}\t{}\t{flags:04X}\t0\t0\t{metric}\t{}\t0\t0\t0\n",
            hex(destination),
            hex(gateway),
            hex(mask)
        )
    }

    #[test]
    fn the_gateway_is_the_default_routes_with_the_lowest_metric() {
        let routes = [
            HEADER.to_owned(),
            route("eth0", [192, 168, 1, 0], [0; 4], 0x1, 0),
            route("wlan0", [0; 4], [10, 0, 0, 1], 0x3, 600),
            route("eth0", [0; 4], [192, 168, 1, 1], 0x3, 100),
        ]
        .concat();
        assert_eq!(
            default_gateway(&routes),
            Some(Ipv4Addr::new(192, 168, 1, 1))
        );
    }

    #[test]
    fn a_network_without_a_default_route_has_no_gateway() {
        let routes = [
            HEADER.to_owned(),
            route("eth0", [192, 168, 1, 0], [0; 4], 0x1, 0),
        ]
        .concat();
        assert_eq!(default_gateway(&routes), None);
        let down = [
            HEADER.to_owned(),
            route("eth0", [0; 4], [192, 168, 1, 1], 0x2, 0),
        ]
        .concat();
        assert_eq!(default_gateway(&down), None, "a route not up");
    }

    #[test]
    fn text_that_is_not_a_routing_table_names_no_gateway() {
        for text in [
            "",
            "garbage",
            "Iface\n eth0 zz 01 0003 0 0 0 00",
            "\n\t\t\t\t\t\t\t\t\n",
        ] {
            assert_eq!(default_gateway(text), None, "{text:?}");
        }
    }
}
