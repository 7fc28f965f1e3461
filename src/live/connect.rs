//! Reaching the other machines before a live session: binding the host's
//! port, resolving and dialling `HOST:PORT`, the content hash handshakes
//! compare, and taking on the host's core options.

use crate::engine::{open_game, AppError, Game, GameArgs};
use crate::net::link::{LinkArgs, LinkTransport};
use crate::net::NetError;
use netcode::netplay::RosterCodec;
use netcode::protocol::{CoreOption, LinkSecret};
use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

/// Socket addresses in a roster: the IP's bytes (4, or 16 for IPv6; an
/// IPv4 peer a dual-stack host saw as `::ffff:a.b.c.d` goes as IPv4, so an
/// IPv4 member can reach it), then the port, big-endian.
pub(crate) const SOCKET_ADDRESSES: RosterCodec<SocketAddr> = RosterCodec {
    encode: encode_socket_address,
    decode: decode_socket_address,
};

fn encode_socket_address(address: &SocketAddr, out: &mut Vec<u8>) {
    match address.ip().to_canonical() {
        IpAddr::V4(ip) => out.extend_from_slice(&ip.octets()),
        IpAddr::V6(ip) => out.extend_from_slice(&ip.octets()),
    }
    out.extend_from_slice(&address.port().to_be_bytes());
}

fn decode_socket_address(bytes: &[u8]) -> Option<SocketAddr> {
    let (ip, port) = bytes.split_at_checked(bytes.len().checked_sub(2)?)?;
    let port = u16::from_be_bytes([port[0], port[1]]);
    let ip = match ip.len() {
        4 => IpAddr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(ip).ok()?)),
        16 => IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(ip).ok()?)),
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// Binds the host's port: IPv6 and IPv4 both where the system allows (a
/// dual-stack socket), else IPv4 only.
pub(crate) fn bind_listening(link: &LinkArgs, port: u16) -> Result<LinkTransport, AppError> {
    match link.open(SocketAddr::from(([0u16; 8], port))) {
        Ok(transport) => Ok(transport),
        Err(NetError::Bind { source, .. }) if source.kind() != std::io::ErrorKind::AddrInUse => {
            link.open(SocketAddr::from(([0u8; 4], port)))
                .map_err(bind_error)
        }
        Err(error) => Err(bind_error(error)),
    }
}

/// A socket that could not be bound (a busy port, most often).
fn bind_error(NetError::Bind { address, source }: NetError) -> AppError {
    AppError::Bind {
        address: format!("UDP port {}", address.port()),
        source,
    }
}

/// The start of `join` and `spectate`: checks `--connect-timeout-s`,
/// resolves the host's `HOST:PORT` and binds a socket of its address family
/// on any free port.
pub(crate) fn connect_to_host(
    address: &str,
    connect_timeout_s: f64,
    link: &LinkArgs,
) -> Result<(SocketAddr, LinkTransport), AppError> {
    connect_timeout(connect_timeout_s)?;
    let host = resolve_host(address)?;
    Ok((host, bind_toward(host, link)?))
}

/// A socket on every IPv4 interface at `port` (0: any free one): rooms'
/// players find their path with ICE, whose candidates are IPv4.
pub(crate) fn bind_ipv4(link: &LinkArgs, port: u16) -> Result<LinkTransport, AppError> {
    link.open(SocketAddr::from(([0u8; 4], port)))
        .map_err(bind_error)
}

/// A socket on any free port, of `host`'s address family.
pub(crate) fn bind_toward(host: SocketAddr, link: &LinkArgs) -> Result<LinkTransport, AppError> {
    let local: SocketAddr = if host.is_ipv4() {
        SocketAddr::from(([0u8; 4], 0))
    } else {
        SocketAddr::from(([0u16; 8], 0))
    };
    link.open(local).map_err(bind_error)
}

/// `--connect-timeout-s`, checked.
pub(crate) fn connect_timeout(seconds: f64) -> Result<std::time::Duration, AppError> {
    // An hour is far beyond any real wait, and keeps the Duration made of
    // it in range.
    if !(seconds > 0.0 && seconds <= 3600.0) {
        return Err(AppError::BadArgument {
            message: format!(
                "--connect-timeout-s {seconds}: expected a number of seconds above 0, at most 3600"
            ),
        });
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

/// This machine's secret for its links' keys, from the operating system
/// (the pure layers take it as a parameter).
pub fn link_secret() -> Result<LinkSecret, AppError> {
    Ok(LinkSecret::from_bytes(random_bytes()?))
}

/// `N` bytes from the operating system's randomness.
pub fn random_bytes<const N: usize>() -> Result<[u8; N], AppError> {
    let mut bytes = [0u8; N];
    getrandom::getrandom(&mut bytes).map_err(|error| AppError::NoRandomness {
        reason: error.to_string(),
    })?;
    Ok(bytes)
}

/// The first address `HOST:PORT` names.
pub fn resolve_host(address: &str) -> Result<SocketAddr, AppError> {
    let unresolvable = |reason: String| AppError::UnresolvableHost {
        address: address.to_string(),
        reason,
    };
    if !address.contains(':') {
        return Err(unresolvable("expected HOST:PORT".into()));
    }
    address
        .to_socket_addrs()
        .map_err(|error| unresolvable(error.to_string()))?
        .next()
        .ok_or_else(|| unresolvable("the name has no address".into()))
}

/// xxh3 of the content file, as handshakes carry it (0 with no content).
pub(crate) fn content_hash(game: &GameArgs) -> Result<u64, AppError> {
    Ok(crate::engine::sinks::recorder::content_checksum(game.rom.as_deref())?.0)
}

/// The host's core options as `--option` overrides.
pub(crate) fn host_option_overrides(options: &[CoreOption]) -> Vec<(String, String)> {
    options
        .iter()
        .map(|option| (option.key.clone(), option.value.clone()))
        .collect()
}

/// The host's options win: when the joiner's `--option`s differ from the
/// host's, its core is loaded again with the host's (before the host's
/// start state is loaded into it) and one `note:` line says what changed.
pub(crate) fn adopt_host_options(
    game: Box<dyn Game>,
    args: &GameArgs,
    host_options: Vec<(String, String)>,
) -> Result<Box<dyn Game>, AppError> {
    let Some(changes) = option_changes(&args.options, &host_options) else {
        return Ok(game);
    };
    eprintln!("note: the host's core options win, loading the core again with them: {changes}");
    // A core library is loaded once per process: the old one goes first.
    drop(game);
    open_game(&GameArgs {
        options: host_options,
        ..args.clone()
    })
}

/// What differs between our `--option`s and the host's, as
/// `key: ours → the host's` (`default` for an option not given), or `None`
/// when they agree.
fn option_changes(ours: &[(String, String)], host: &[(String, String)]) -> Option<String> {
    // A later `--option` of the same key wins, as when the core is loaded.
    let ours: BTreeMap<&str, &str> = ours.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let host: BTreeMap<&str, &str> = host.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let keys: BTreeSet<&str> = ours.keys().chain(host.keys()).copied().collect();
    let changes: Vec<String> = keys
        .into_iter()
        .filter(|key| ours.get(key) != host.get(key))
        .map(|key| {
            let value = |options: &BTreeMap<&str, &str>| -> String {
                options.get(key).copied().unwrap_or("default").to_string()
            };
            format!("{key}: {} → {}", value(&ours), value(&host))
        })
        .collect();
    (!changes.is_empty()).then(|| changes.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_changes_name_each_differing_key_with_ours_then_the_hosts() {
        let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
        let ours = [
            pair("a", "1"),
            pair("b", "2"),
            pair("b", "3"),
            pair("c", "4"),
        ];
        let host = [pair("b", "3"), pair("c", "5"), pair("d", "6")];
        assert_eq!(
            option_changes(&ours, &host).as_deref(),
            Some("a: 1 → default, c: 4 → 5, d: default → 6")
        );
        assert_eq!(option_changes(&ours[1..3], &host[..1]), None);
    }

    #[test]
    fn roster_addresses_travel_as_ip_and_port_and_mapped_ipv4_as_ipv4() {
        let round_trip = |text: &str| {
            let mut bytes = Vec::new();
            (SOCKET_ADDRESSES.encode)(&text.parse().unwrap(), &mut bytes);
            (SOCKET_ADDRESSES.decode)(&bytes)
        };
        let v4: SocketAddr = "127.0.0.1:7001".parse().unwrap();
        assert_eq!(round_trip("127.0.0.1:7001"), Some(v4));
        assert_eq!(round_trip("[::ffff:127.0.0.1]:7001"), Some(v4));
        assert_eq!(round_trip("[2001:db8::1]:9").map(|a| a.port()), Some(9));
        assert_eq!((SOCKET_ADDRESSES.decode)(&[1, 2, 3]), None);
        assert_eq!((SOCKET_ADDRESSES.decode)(&[]), None);
    }

    #[test]
    fn host_addresses_resolve_with_ipv6_in_brackets_and_bad_ones_are_named() {
        assert_eq!(
            resolve_host("[::1]:7000").unwrap(),
            "[::1]:7000".parse::<SocketAddr>().unwrap()
        );
        assert_eq!(resolve_host("127.0.0.1:9").unwrap().port(), 9);
        let error = resolve_host("no-such-host.invalid:7000").unwrap_err();
        assert!(
            error.to_string().contains("no-such-host.invalid:7000"),
            "{error}"
        );
        assert!(resolve_host("localhost").is_err(), "a port is required");
    }
}
