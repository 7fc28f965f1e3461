//! The addresses a host gives its opponent: this machine's address on the
//! network it reaches the internet by, and loopback for a second window on
//! the same machine.

use std::net::{IpAddr, Ipv4Addr, UdpSocket};

/// `ADDRESS:PORT` for each address a joiner may use, for the port typed
/// (none while it is not a port).
pub fn addresses_to_give(port: &str) -> Vec<String> {
    let Ok(port) = port.trim().parse::<u16>() else {
        return Vec::new();
    };
    if port == 0 {
        // Any free port: the host prints the one it got.
        return Vec::new();
    }
    let mut addresses = Vec::new();
    if let Some(ip) = outward_ip() {
        addresses.push(format!("{ip}:{port}"));
    }
    addresses.push(format!("{}:{port}", Ipv4Addr::LOCALHOST));
    addresses
}

/// The local address the system would send to a public address from (a
/// UDP "connect" sends nothing); none without a route.
fn outward_ip() -> Option<IpAddr> {
    let socket = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).ok()?;
    socket.connect((Ipv4Addr::new(192, 0, 2, 1), 9)).ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_unspecified() && !ip.is_loopback()).then_some(ip)
}
