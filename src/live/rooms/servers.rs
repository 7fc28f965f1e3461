//! The server list: the signaling server rooms meet on, and the STUN and
//! TURN servers per region, from `servers.txt` in netcade's config
//! directory, else the defaults below (docs/rooms.md documents both).

use crate::net::ice::{IceConfig, RelayServer};
use crate::net::room::SignalServer;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The list used when the config directory has none: matchbox_server's
/// own default address (run it yourself, or name yours with `--signal`)
/// and public STUN servers; no TURN relay is public.
pub const DEFAULT_SERVERS: &str = "\
# netcade's servers, one per line:
#   signal URL          the signaling server (matchbox_server) of --room and --quick
#   stun REGION URL     a STUN server (stun:HOST:PORT)
#   turn REGION URL     a TURN relay (turn:HOST:PORT; turn:USER:PASSWORD@HOST:PORT)
signal ws://127.0.0.1:3536
stun global stun:stun.l.google.com:19302
stun global stun:stun.cloudflare.com:3478
";

/// The biggest server list read.
const MAX_LIST_BYTES: u64 = 64 << 10;

/// The file's name in the config directory.
pub const SERVER_LIST_FILE: &str = "servers.txt";

/// A STUN or TURN server and the region it serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionServer {
    /// A name the user chose (`eu`, `us-west`, `global`).
    pub region: String,
    /// `stun:…`, `turn:…` or `turns:…`.
    pub url: String,
}

/// The servers netcade meets others through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerList {
    /// Rooms' signaling server.
    pub signal: SignalServer,
    /// STUN servers, in the file's order.
    pub stun: Vec<RegionServer>,
    /// TURN relays, in the file's order.
    pub turn: Vec<RegionServer>,
    /// The file read, or `None` for the defaults.
    pub source: Option<PathBuf>,
}

impl ServerList {
    /// Reads a list; the error names the line at fault.
    pub fn parse(text: &str) -> Result<ServerList, String> {
        let mut signal = None;
        let (mut stun, mut turn) = (Vec::new(), Vec::new());
        for (index, line) in text.lines().enumerate() {
            let at = |why: String| format!("line {}: {why}", index + 1);
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                [] => {}
                [first, ..] if first.starts_with('#') => {}
                ["signal", url] => signal = Some(url.parse::<SignalServer>().map_err(at)?),
                [kind @ ("stun" | "turn"), region, url] => {
                    let schemes: &[&str] = if *kind == "stun" {
                        &["stun:"]
                    } else {
                        &["turn:", "turns:"]
                    };
                    if !schemes.iter().any(|scheme| url.starts_with(scheme)) {
                        return Err(at(format!("{url}: expected a {} URL", schemes[0])));
                    }
                    let server = RegionServer {
                        region: region.to_string(),
                        url: url.to_string(),
                    };
                    if *kind == "stun" {
                        &mut stun
                    } else {
                        &mut turn
                    }
                    .push(server);
                }
                _ => {
                    return Err(at(format!(
                        "{line:?}: expected `signal URL`, `stun REGION URL` or `turn REGION URL`"
                    )))
                }
            }
        }
        let signal = signal.ok_or("no `signal URL` line")?;
        Ok(ServerList {
            signal,
            stun,
            turn,
            source: None,
        })
    }

    /// The defaults.
    pub fn defaults() -> ServerList {
        ServerList::parse(DEFAULT_SERVERS).expect("the default list reads")
    }

    /// `dir/servers.txt` when it exists, else the defaults.
    pub fn load(dir: Option<&Path>) -> Result<ServerList, String> {
        let Some(path) = dir.map(|dir| dir.join(SERVER_LIST_FILE)) else {
            return Ok(ServerList::defaults());
        };
        let file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ServerList::defaults())
            }
            Err(error) => return Err(format!("cannot read {}: {error}", path.display())),
        };
        let mut text = String::new();
        use std::io::Read;
        file.take(MAX_LIST_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        if text.len() as u64 > MAX_LIST_BYTES {
            return Err(format!("{} is over {MAX_LIST_BYTES} bytes", path.display()));
        }
        let mut list =
            ServerList::parse(&text).map_err(|why| format!("{}: {why}", path.display()))?;
        list.source = Some(path);
        Ok(list)
    }

    /// Where the signaling server came from, for messages.
    pub fn signal_origin(&self) -> String {
        match &self.source {
            Some(path) => format!("from {}", path.display()),
            None => "netcade's default; set yours with --signal".to_string(),
        }
    }
}

/// The port STUN and TURN listen on when a URL names none (RFC 8489).
const STUN_PORT: u16 = 3478;

/// `HOST[:PORT]` of a STUN or TURN URL (IPv6 in brackets).
fn host_port(url: &str, text: &str) -> Result<(String, u16), String> {
    let (host, port) = match text.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') || host.ends_with(']') => (host, Some(port)),
        _ => (text, None),
    };
    let port = match port {
        Some(port) => port
            .parse::<u16>()
            .map_err(|_| format!("{url}: the port {port:?} is not a number from 0 to 65535"))?,
        None => STUN_PORT,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let valid = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-.:".contains(c));
    if !valid {
        return Err(format!("{url}: {host:?} is not a host name or IP address"));
    }
    Ok((host.to_string(), port))
}

/// A TURN relay as a URL names it: `turn:USER:PASSWORD@HOST[:PORT]`
/// (long-term credentials; the relay is used over UDP).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnUrl {
    host: String,
    port: u16,
    username: String,
    password: String,
}

impl FromStr for TurnUrl {
    type Err = String;

    fn from_str(url: &str) -> Result<Self, String> {
        if url.starts_with("turns:") {
            return Err(format!(
                "{url}: turns: (TLS) is not built into netcade; use a turn: URL"
            ));
        }
        let Some(rest) = url.strip_prefix("turn:") else {
            return Err(format!("{url}: expected turn:USER:PASSWORD@HOST:PORT"));
        };
        let credentials = rest.rsplit_once('@').and_then(|(credentials, at)| {
            let (username, password) = credentials.split_once(':')?;
            Some((username, password, at))
        });
        let Some((username, password, at)) =
            credentials.filter(|(u, p, _)| !u.is_empty() && !p.is_empty())
        else {
            return Err(format!(
                "{url}: expected turn:USER:PASSWORD@HOST:PORT (a relay needs its credentials)"
            ));
        };
        let (host, port) = host_port(url, at)?;
        Ok(TurnUrl {
            host,
            port,
            username: username.to_string(),
            password: password.to_string(),
        })
    }
}

/// The first IPv4 address `host:port` resolves to (ICE runs on an IPv4
/// game socket).
fn resolve(host: &str, port: u16) -> Option<SocketAddr> {
    (host, port)
        .to_socket_addrs()
        .ok()?
        .find(|address| address.is_ipv4())
}

impl ServerList {
    /// The STUN servers and TURN relays ICE tries: the list's, with the
    /// relays of `--turn` instead of its `turn` lines when given. A server
    /// whose name does not resolve is left out with a warning (the public
    /// STUN servers are unreachable offline, and a match on a LAN needs
    /// none).
    pub fn ice_config(&self, turn_override: Option<&TurnUrl>) -> Result<IceConfig, String> {
        let mut config = IceConfig::default();
        for server in &self.stun {
            let url = server.url.as_str();
            let (host, port) = host_port(url, url.trim_start_matches("stun:"))?;
            match resolve(&host, port) {
                Some(address) => config.stun_servers.push(address),
                None => tracing::debug!("left out the STUN server {url}: {host} does not resolve"),
            }
        }
        let relays = match turn_override {
            Some(turn) => vec![(turn.host.clone(), turn.clone())],
            None => self
                .turn
                .iter()
                .map(|server| Ok((server.region.clone(), server.url.parse::<TurnUrl>()?)))
                .collect::<Result<Vec<_>, String>>()?,
        };
        for (name, turn) in relays {
            match resolve(&turn.host, turn.port) {
                Some(address) => config.relays.push(RelayServer {
                    name,
                    address,
                    username: turn.username,
                    password: turn.password,
                }),
                None => eprintln!(
                    "warning: left out the TURN relay {name}: {} does not resolve",
                    turn.host
                ),
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_list_names_a_signaling_server_and_public_stun() {
        let list = ServerList::defaults();
        assert_eq!(list.signal.to_string(), "ws://127.0.0.1:3536");
        assert_eq!(list.stun.len(), 2);
        assert!(list.turn.is_empty());
    }

    #[test]
    fn a_list_keeps_servers_per_region_and_names_the_line_at_fault() {
        let list = ServerList::parse(
            "# mine\nsignal ws://rooms.example.org:3536\n\nturn eu turn:u:p@relay.example.org:3478\nstun eu stun:relay.example.org:3478\n",
        )
        .unwrap();
        assert_eq!(list.signal.authority(), "rooms.example.org:3536");
        assert_eq!(list.turn[0].region, "eu");
        assert_eq!(list.stun[0].url, "stun:relay.example.org:3478");
        for (bad, line) in [
            ("signal ws://a:1\nrelay eu x", "line 2"),
            ("signal http://a:1", "line 1"),
            ("signal ws://a:1\nstun eu turn:a:1", "line 2"),
            ("stun eu stun:a:1", "no `signal"),
        ] {
            let error = ServerList::parse(bad).unwrap_err();
            assert!(error.contains(line), "{bad}: {error}");
        }
    }

    #[test]
    fn relays_and_stun_servers_become_the_ice_servers_and_turn_overrides_the_lists_relays() {
        let list = ServerList::parse(
            "signal ws://a:1\nstun global stun:127.0.0.1:3478\nstun lan stun:127.0.0.2\nturn eu turn:u:p@127.0.0.3:3479\n",
        )
        .unwrap();
        let config = list.ice_config(None).unwrap();
        let address = |text: &str| text.parse::<SocketAddr>().unwrap();
        assert_eq!(
            config.stun_servers,
            [address("127.0.0.1:3478"), address("127.0.0.2:3478")]
        );
        assert_eq!(config.relays.len(), 1);
        assert_eq!(config.relays[0].name, "eu");
        assert_eq!(config.relays[0].address, address("127.0.0.3:3479"));
        assert_eq!(
            (
                config.relays[0].username.as_str(),
                config.relays[0].password.as_str()
            ),
            ("u", "p")
        );
        let mine: TurnUrl = "turn:me:s3cr:et@127.0.0.9:5000".parse().unwrap();
        let config = list.ice_config(Some(&mine)).unwrap();
        assert_eq!(config.relays.len(), 1);
        assert_eq!(config.relays[0].address, address("127.0.0.9:5000"));
        assert_eq!(config.relays[0].password, "s3cr:et");
    }

    #[test]
    fn a_turn_url_without_credentials_or_over_tls_is_refused_with_what_to_write() {
        for (bad, says) in [
            ("turn:127.0.0.1:3478", "credentials"),
            ("turn::p@127.0.0.1", "credentials"),
            ("turns:u:p@relay.example.org:5349", "TLS"),
            ("stun:u:p@a:1", "expected turn:"),
            ("turn:u:p@a:99999", "port"),
            ("turn:u:p@a b:1", "host name"),
        ] {
            let error = bad.parse::<TurnUrl>().unwrap_err();
            assert!(error.contains(says), "{bad}: {error}");
        }
    }

    #[test]
    fn a_missing_file_means_the_defaults_and_a_bad_one_names_itself() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            ServerList::load(Some(dir.path())),
            Ok(ServerList::defaults())
        );
        let path = dir.path().join(SERVER_LIST_FILE);
        std::fs::write(&path, "signal ws://10.0.0.2:3536\n").unwrap();
        let list = ServerList::load(Some(dir.path())).unwrap();
        assert_eq!(list.signal.authority(), "10.0.0.2:3536");
        assert!(list.signal_origin().contains(SERVER_LIST_FILE));
        std::fs::write(&path, "signal nowhere\n").unwrap();
        let error = ServerList::load(Some(dir.path())).unwrap_err();
        assert!(
            error.contains(SERVER_LIST_FILE) && error.contains("line 1"),
            "{error}"
        );
    }
}
