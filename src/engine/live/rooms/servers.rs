//! The server list: the signaling server rooms meet on, and the STUN and
//! TURN servers per region, from `servers.txt` in netcade's config
//! directory, else the defaults below (docs/rooms.md documents both).

use crate::net::room::SignalServer;
use std::path::{Path, PathBuf};

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
