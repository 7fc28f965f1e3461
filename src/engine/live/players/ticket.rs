//! The rejoin ticket: what a joiner keeps on disk while its match runs, so
//! that `join HOST:PORT --rejoin` (or `join --room CODE --rejoin`) can
//! bring back a process that was killed. One small file per host address
//! (or room code) in the data directory's `rejoin/` folder, readable by its
//! owner only: the host's address, our slot, the
//! link's session token and our link secret (which agree the link's keys
//! again with the host's public key), and the host's handshake as it came
//! (the core, content, core options, settings and key of the match).
//! Written once the host answered; removed when the process ends the match
//! in any way but being killed. Read back as untrusted bytes.

use crate::engine::live::rooms::RoomCode;
use crate::engine::AppError;
use crate::netplay::RejoinTicket;
use crate::protocol::{
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
            "{FIRST_LINE}\nhost {}\nslot {}\ntoken {:08x}\nsecret {}\nhandshake {}\n",
            self.host,
            self.slot,
            self.token.0,
            to_hex(&self.secret.to_bytes()),
            to_hex(&welcome)
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
            .filter(|slot| (1..crate::rollback::MAX_PLAYERS as u8).contains(slot))
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
    crate::paths::data_subdir("rejoin").join(format!("{name}.ticket"))
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
    let mut text = String::new();
    use std::io::Read;
    file.take(MAX_TICKET_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|error| unusable(error.to_string()))?;
    if text.len() as u64 > MAX_TICKET_BYTES {
        return Err(unusable(format!("it is over {MAX_TICKET_BYTES} bytes")));
    }
    let ticket = Ticket::parse(&text).map_err(unusable)?;
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

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&text[at..at + 2], 16).ok())
        .collect()
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
                ..Handshake::default()
            },
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
}
