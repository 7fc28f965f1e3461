//! The rejoin ticket: what a joiner keeps on disk while its match runs, so
//! that `join HOST:PORT --rejoin` (or `join --room CODE --rejoin`) can
//! bring back a process that was killed. One small file per host address
//! (or room code) in the data directory's `rejoin/` folder, readable by its
//! owner only: the host's address, our slot, the
//! link's session token and our link secret (which agree the link's keys
//! again with the host's public key), and the host's handshake as it came
//! (the core, content, core options, settings and key of the match), and
//! the paths of the core and content it was played with (the launcher
//! offers the match again with them).
//! Written once the host answered; removed when the process ends the match
//! in any way but being killed. Read back as untrusted bytes.

use crate::engine::AppError;
use crate::live::rooms::RoomCode;
use netcode::encoding::hex::{from_hex, to_hex};
use netcode::netplay::RejoinTicket;
use netcode::protocol::{
    codec, Handshake, Header, LinkSecret, Message, PlayerSlots, Sequence, SessionToken,
    PROTOCOL_VERSION,
};
use std::net::SocketAddr;
use std::path::PathBuf;

/// The first line of every ticket.
const FIRST_LINE: &str = "netcade rejoin ticket 1";
/// No ticket is longer (a handshake with every core option fits many times).
const MAX_TICKET_BYTES: u64 = 64 * 1024;

/// A joiner's rejoin ticket (see the module docs). Its `Debug` shows
/// nothing of the secret.
#[derive(Clone, Debug)]
pub(super) struct Ticket {
    pub host: SocketAddr,
    pub slot: u8,
    pub token: SessionToken,
    pub secret: LinkSecret,
    /// The host's handshake: its public key, settings, core and content.
    pub welcome: Handshake,
    /// The `--core` and `--rom` this machine played the match with (none
    /// in a ticket written without them, or when a path is not one line
    /// of text).
    pub game: Option<TicketGame>,
}

/// The `--core` and `--rom` of a ticket's match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TicketGame {
    /// `duel` or a core's path.
    pub core: PathBuf,
    /// The content, if the core takes one.
    pub rom: Option<PathBuf>,
}

impl TicketGame {
    /// The game of `args`.
    pub fn of(args: &crate::engine::GameArgs) -> TicketGame {
        TicketGame {
            core: args.core.clone(),
            rom: args.rom.clone(),
        }
    }

    /// The lines a ticket keeps it in, or none when a path would not read
    /// back as written.
    fn to_text(&self) -> Option<String> {
        let line = |name: &str, path: &std::path::Path| {
            path.to_str()
                .filter(|text| !text.is_empty() && !text.contains(['\n', '\r']))
                .map(|text| format!("{name} {text}\n"))
        };
        let mut text = line("core", &self.core)?;
        if let Some(rom) = &self.rom {
            text.push_str(&line("rom", rom)?);
        }
        Some(text)
    }

    /// The game of a ticket's last lines, if they name one.
    fn parse<'a>(mut lines: impl Iterator<Item = &'a str>) -> Option<TicketGame> {
        let core = lines.next()?.strip_prefix("core ")?;
        let rom = lines.next().and_then(|line| line.strip_prefix("rom "));
        Some(TicketGame {
            core: PathBuf::from(core),
            rom: rom.map(PathBuf::from),
        })
    }
}

impl Ticket {
    /// What the session needs to come back.
    pub fn rejoin(&self) -> Result<RejoinTicket, String> {
        let host_key = self
            .welcome
            .public_key
            .ok_or("the host's handshake in it has no public key")?;
        Ok(RejoinTicket {
            token: self.token,
            secret: self.secret.clone(),
            host_key,
            host_room: self.welcome.room.map(|room| room.element),
            settings: self.welcome.settings,
            local_players: PlayerSlots::single(self.slot),
            match_frames: self.welcome.match_frames,
        })
    }

    fn to_text(&self) -> Result<String, AppError> {
        let header = Header {
            version: PROTOCOL_VERSION,
            session: self.token,
            sequence: Sequence(0),
        };
        let mut welcome = Vec::new();
        codec::encode(
            &header,
            &Message::Welcome(self.welcome.clone()),
            &mut welcome,
        )
        .map_err(|error| AppError::BadArgument {
            message: format!("the host's handshake cannot be kept for a rejoin: {error}"),
        })?;
        Ok(format!(
            "{FIRST_LINE}\nhost {}\nslot {}\ntoken {:08x}\nsecret {}\nhandshake {}\n{}",
            self.host,
            self.slot,
            self.token.0,
            to_hex(&self.secret.to_bytes()),
            to_hex(&welcome),
            self.game
                .as_ref()
                .and_then(TicketGame::to_text)
                .unwrap_or_default()
        ))
    }

    /// A ticket from its text, or why it is unusable.
    fn parse(text: &str) -> Result<Ticket, String> {
        let mut lines = text.lines();
        if lines.next() != Some(FIRST_LINE) {
            return Err("it does not begin as a rejoin ticket of this netcade".into());
        }
        let mut field = |name: &str| -> Result<&str, String> {
            lines
                .next()
                .and_then(|line| line.strip_prefix(name))
                .and_then(|rest| rest.strip_prefix(' '))
                .ok_or_else(|| format!("its `{name}` line is missing"))
        };
        let host = field("host")?
            .parse()
            .map_err(|_| "its host address is not HOST:PORT".to_string())?;
        let slot: u8 = field("slot")?
            .parse()
            .ok()
            .filter(|slot| (1..netcode::rollback::MAX_PLAYERS as u8).contains(slot))
            .ok_or("its slot is not a joiner's")?;
        let token = u32::from_str_radix(field("token")?, 16)
            .map_err(|_| "its session token is not 8 hex digits".to_string())?;
        let secret: [u8; 32] = from_hex(field("secret")?)
            .and_then(|bytes| bytes.try_into().ok())
            .ok_or("its secret is not 64 hex digits")?;
        let welcome = from_hex(field("handshake")?).ok_or("its handshake is not hex")?;
        let welcome = match codec::decode(&welcome) {
            Ok((header, Message::Welcome(welcome))) if header.version == PROTOCOL_VERSION => {
                welcome
            }
            Ok(_) => return Err("it was written by another protocol version".into()),
            Err(error) => return Err(format!("its handshake does not decode: {error}")),
        };
        Ok(Ticket {
            host,
            slot,
            token: SessionToken(token),
            secret: LinkSecret::from_bytes(secret),
            welcome,
            game: TicketGame::parse(lines),
        })
    }
}

/// How the joiner reached the match: the ticket is found the same way.
#[derive(Clone, Copy, Debug)]
pub(super) enum TicketKey {
    /// `join HOST:PORT`: the host's address.
    Address(SocketAddr),
    /// `join --room CODE`.
    Room(RoomCode),
}

impl std::fmt::Display for TicketKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TicketKey::Address(host) => write!(f, "at {host}"),
            TicketKey::Room(code) => write!(f, "in room {code}"),
        }
    }
}

/// Where the ticket of the match `key` names is kept.
pub(super) fn ticket_path(key: TicketKey) -> PathBuf {
    ticket_path_in(&rejoin_folder(), key)
}

/// Where the ticket of the match `key` names is kept in `folder`.
fn ticket_path_in(folder: &std::path::Path, key: TicketKey) -> PathBuf {
    let name: String = match key {
        TicketKey::Address(host) => host.to_string(),
        TicketKey::Room(code) => format!("room-{}", code.compact()),
    }
    .chars()
    .map(|c| {
        if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        }
    })
    .collect();
    folder.join(format!("{name}.ticket"))
}

/// The data directory's folder of rejoin tickets.
pub fn rejoin_folder() -> PathBuf {
    crate::paths::data_subdir("rejoin")
}

/// A ticket's text, read from `file` as untrusted bytes.
fn read_bounded(file: std::fs::File) -> Result<String, String> {
    use std::io::Read;
    let mut text = String::new();
    file.take(MAX_TICKET_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|error| error.to_string())?;
    if text.len() as u64 > MAX_TICKET_BYTES {
        return Err(format!("it is over {MAX_TICKET_BYTES} bytes"));
    }
    Ok(text)
}

/// A match this machine can come back to at its host's address, as the
/// launcher offers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RejoinableMatch {
    /// The host's address (`join HOST:PORT --rejoin`).
    pub host: SocketAddr,
    /// The match's core, by its library name.
    pub core_name: String,
    /// The xxh3 of the match's content.
    pub content_hash: u64,
    /// The `--core` and `--rom` it was played with, if the ticket says.
    pub game: Option<TicketGame>,
}

/// Tickets looked at most in the folder (a killed joiner leaves one per
/// host address it joined).
const MAX_LISTED_TICKETS: usize = 16;

/// The matches the tickets in `folder` let this machine rejoin at a host's
/// address, by address; a ticket that cannot be read or used is left out
/// (`join --rejoin` says why), and so are rooms' (the launcher joins
/// addresses).
pub fn rejoinable_matches(folder: &std::path::Path) -> Vec<RejoinableMatch> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut found: Vec<RejoinableMatch> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path.file_name().and_then(|name| name.to_str());
            name.is_some_and(|name| name.ends_with(".ticket") && !name.starts_with("room-"))
        })
        .take(MAX_LISTED_TICKETS)
        .filter_map(|path| {
            let file = std::fs::File::open(&path).ok()?;
            let ticket = Ticket::parse(&read_bounded(file).ok()?).ok()?;
            // A ticket is for the host its file is named after.
            (ticket_path_in(folder, TicketKey::Address(ticket.host)) == path).then_some(ticket)
        })
        .map(|ticket| RejoinableMatch {
            host: ticket.host,
            core_name: ticket.welcome.core_name,
            content_hash: ticket.welcome.content_hash,
            game: ticket.game,
        })
        .collect();
    found.sort_by_key(|found| found.host);
    found
}

/// The ticket of the match `key` names: one clear error when there is
/// none, or it cannot be used.
pub(super) fn read_ticket(key: TicketKey) -> Result<Ticket, AppError> {
    let path = ticket_path(key);
    let unusable = |why: String| AppError::BadArgument {
        message: format!("the rejoin ticket {} cannot be used: {why}", path.display()),
    };
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(AppError::BadArgument {
                message: format!(
                    "no match to rejoin {key}: this machine holds no ticket for it ({} is missing)",
                    path.display()
                ),
            })
        }
        Err(error) => return Err(unusable(error.to_string())),
    };
    let ticket = read_bounded(file)
        .and_then(|text| Ticket::parse(&text))
        .map_err(unusable)?;
    match key {
        TicketKey::Address(host) if ticket.host != host => {
            Err(unusable(format!("it names the host {}", ticket.host)))
        }
        _ => Ok(ticket),
    }
}

/// A ticket on disk while the match runs: removed when dropped (a killed
/// process never drops it), unless kept for another try.
pub(super) struct KeptTicket {
    path: PathBuf,
    remove: bool,
}

impl KeptTicket {
    /// Leaves the ticket on disk: the match may still be there to rejoin.
    pub fn keep_on_disk(mut self) {
        self.remove = false;
    }
}

impl Drop for KeptTicket {
    fn drop(&mut self) {
        if self.remove {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Writes `ticket` for the match `key` names, readable by its owner only.
/// A ticket that cannot be written costs only the rejoin: the match goes
/// on, and the reason is logged.
pub(super) fn keep_ticket(key: TicketKey, ticket: &Ticket) -> Option<KeptTicket> {
    let path = ticket_path(key);
    let written = ticket
        .to_text()
        .map_err(|e| e.to_string())
        .and_then(|text| write_private(&path, text.as_bytes()).map_err(|e| e.to_string()));
    match written {
        Ok(()) => Some(KeptTicket { path, remove: true }),
        Err(error) => {
            tracing::warn!("no rejoin ticket kept at {}: {error}", path.display());
            None
        }
    }
}

fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket() -> Ticket {
        Ticket {
            host: "127.0.0.1:7000".parse().unwrap(),
            slot: 1,
            token: SessionToken(0xDEAD_BEEF),
            secret: LinkSecret::from_bytes([7; 32]),
            welcome: Handshake {
                core_name: "duel".into(),
                public_key: Some(LinkSecret::from_bytes([9; 32]).public_key()),
                match_frames: Some(900),
                content_hash: 0xC0FFEE,
                ..Handshake::default()
            },
            game: Some(TicketGame {
                core: PathBuf::from("duel"),
                rom: Some(PathBuf::from("/games/my arenas/dojo.arena")),
            }),
        }
    }

    #[test]
    fn a_ticket_reads_back_as_written() {
        let written = ticket();
        let read = Ticket::parse(&written.to_text().unwrap()).unwrap();
        assert_eq!(
            (read.host, read.slot, read.token),
            (written.host, 1, written.token)
        );
        assert_eq!(read.secret.to_bytes(), [7; 32]);
        assert_eq!(read.welcome, written.welcome);
        assert_eq!(read.game, written.game);
        assert_eq!(read.rejoin().unwrap().match_frames, Some(900));
    }

    #[test]
    fn a_damaged_or_truncated_ticket_says_what_is_wrong_and_never_panics() {
        let text = ticket().to_text().unwrap();
        for end in 0..text.len() {
            let _ = Ticket::parse(&text[..end]);
        }
        let damaged = text.replace("slot 1", "slot 0");
        assert_eq!(
            Ticket::parse(&damaged).unwrap_err(),
            "its slot is not a joiner's"
        );
        let damaged = text.replace("secret ", "secret zz");
        assert_eq!(
            Ticket::parse(&damaged).unwrap_err(),
            "its secret is not 64 hex digits"
        );
        assert!(Ticket::parse("hello").is_err());
    }

    #[test]
    fn the_secret_never_shows_in_a_tickets_debug() {
        let shown = format!("{:?}", ticket());
        assert!(!shown.contains(&to_hex(&[7; 32])), "{shown}");
        assert!(!shown.contains("[7, 7"), "{shown}");
    }

    #[test]
    fn a_ticket_kept_without_its_games_paths_still_reads() {
        let text = ticket().to_text().unwrap();
        let without: String = text
            .lines()
            .filter(|line| !line.starts_with("core ") && !line.starts_with("rom "))
            .map(|line| format!("{line}\n"))
            .collect();
        let read = Ticket::parse(&without).unwrap();
        assert_eq!(read.game, None);
        assert_eq!(read.welcome, ticket().welcome);
    }

    #[test]
    fn the_launcher_is_offered_each_usable_ticket_at_a_hosts_address() {
        let folder = tempfile::tempdir().unwrap();
        let at = |host: &str| {
            let host: SocketAddr = host.parse().unwrap();
            ticket_path_in(folder.path(), TicketKey::Address(host))
        };
        let mut other = ticket();
        other.host = "[::1]:7001".parse().unwrap();
        other.game = None;
        write_private(
            &at("127.0.0.1:7000"),
            ticket().to_text().unwrap().as_bytes(),
        )
        .unwrap();
        write_private(&at("[::1]:7001"), other.to_text().unwrap().as_bytes()).unwrap();
        // A damaged ticket, one under another host's name and a room's are
        // not offered.
        write_private(&at("10.0.0.1:7000"), b"netcade rejoin ticket 1\nhost").unwrap();
        write_private(&at("10.0.0.2:7000"), ticket().to_text().unwrap().as_bytes()).unwrap();
        let room = folder.path().join("room-ABCD-2345.ticket");
        write_private(&room, ticket().to_text().unwrap().as_bytes()).unwrap();

        let offered = rejoinable_matches(folder.path());
        let described: Vec<_> = offered
            .iter()
            .map(|found| {
                (
                    found.host.to_string(),
                    found.core_name.as_str(),
                    found.content_hash,
                )
            })
            .collect();
        assert_eq!(
            described,
            [
                ("127.0.0.1:7000".to_string(), "duel", 0xC0FFEE),
                ("[::1]:7001".to_string(), "duel", 0xC0FFEE)
            ]
        );
        assert_eq!(offered[0].game, ticket().game);
        assert_eq!(offered[1].game, None);
        assert!(rejoinable_matches(&folder.path().join("none")).is_empty());
    }
}
