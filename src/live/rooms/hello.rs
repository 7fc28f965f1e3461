//! The first message two machines in a room send each other: what each is
//! (host, player, spectator, or a quick-match player whose role the pairing
//! decides), the game it runs, and where its game socket can be reached.
//! It is JSON, read as untrusted: bounded, and refused whole when wrong.

use netcode::encoding::is_printable;
use netcode::protocol::Identity;
use serde_json::{json, Value};
use std::net::SocketAddr;

/// The longest hello read; ours are a few hundred bytes.
const MAX_HELLO_BYTES: usize = 4096;

/// The most addresses a hello lists.
pub const MAX_CANDIDATES: usize = 8;

/// The longest core name or version read.
const MAX_NAME_CHARS: usize = 128;

/// What a machine in a room is there for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoomRole {
    /// It hosts the match (`host --room`).
    Host,
    /// It joins the host (`join --room`).
    Player,
    /// It watches the host's match (`spectate --room`).
    Spectator,
    /// `join --quick`: host or joiner, as the pairing decides.
    Quick,
}

impl RoomRole {
    fn name(self) -> &'static str {
        match self {
            RoomRole::Host => "host",
            RoomRole::Player => "player",
            RoomRole::Spectator => "spectator",
            RoomRole::Quick => "quick",
        }
    }

    fn named(name: &str) -> Option<RoomRole> {
        [
            RoomRole::Host,
            RoomRole::Player,
            RoomRole::Spectator,
            RoomRole::Quick,
        ]
        .into_iter()
        .find(|role| role.name() == name)
    }
}

/// A machine's hello.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    /// What it is there for.
    pub role: RoomRole,
    /// Its protocol version, core and content, as its handshake will say.
    pub identity: Identity,
    /// Addresses of its game socket, the likeliest first.
    pub candidates: Vec<SocketAddr>,
}

impl Hello {
    /// The hello as sent.
    pub fn encode(&self) -> String {
        json!({
            "netcade": "hello",
            "role": self.role.name(),
            "protocol": self.identity.protocol_version,
            "core": self.identity.core_name,
            "core_version": self.identity.core_version,
            "content": format!("{:016x}", self.identity.content_hash),
            "candidates": self.candidates.iter().map(|address| address.to_string()).collect::<Vec<_>>(),
        })
        .to_string()
    }

    /// A hello as received, or why it is not one.
    pub fn decode(text: &str) -> Result<Hello, String> {
        if text.len() > MAX_HELLO_BYTES {
            return Err(format!("a hello of {} bytes", text.len()));
        }
        let value: Value = serde_json::from_str(text).map_err(|error| error.to_string())?;
        if value["netcade"] != "hello" {
            return Err("not a netcade hello".into());
        }
        let field = |name: &str| {
            value[name]
                .as_str()
                // Printed when a host of another game is skipped: nothing
                // to steer the terminal.
                .filter(|text| text.chars().count() <= MAX_NAME_CHARS && is_printable(text))
                .ok_or_else(|| format!("no {name}"))
        };
        let role = RoomRole::named(field("role")?).ok_or("an unknown role")?;
        let protocol_version = value["protocol"]
            .as_u64()
            .and_then(|version| u8::try_from(version).ok())
            .ok_or("no protocol version")?;
        let content_hash = u64::from_str_radix(field("content")?, 16)
            .map_err(|_| "a content hash that is not hexadecimal")?;
        let listed = value["candidates"].as_array().ok_or("no candidates")?;
        if listed.len() > MAX_CANDIDATES {
            return Err(format!("{} candidates", listed.len()));
        }
        let candidates = listed
            .iter()
            .map(|candidate| candidate.as_str().and_then(|text| text.parse().ok()))
            .collect::<Option<Vec<SocketAddr>>>()
            .ok_or("a candidate that is not an address")?;
        Ok(Hello {
            role,
            identity: Identity {
                protocol_version,
                core_name: field("core")?.to_string(),
                core_version: field("core_version")?.to_string(),
                content_hash,
            },
            candidates,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn duel_host() -> Hello {
        Hello {
            role: RoomRole::Host,
            identity: Identity {
                protocol_version: 5,
                core_name: "Duel".into(),
                core_version: "0.1.0".into(),
                content_hash: 0x0123_4567_89ab_cdef,
            },
            candidates: vec![
                "192.168.1.20:7000".parse().unwrap(),
                "[::1]:7000".parse().unwrap(),
            ],
        }
    }

    #[test]
    fn a_hello_reads_back_as_it_was_sent() {
        for role in [
            RoomRole::Host,
            RoomRole::Player,
            RoomRole::Spectator,
            RoomRole::Quick,
        ] {
            let hello = Hello {
                role,
                ..duel_host()
            };
            assert_eq!(Hello::decode(&hello.encode()), Ok(hello));
        }
    }

    #[test]
    fn wrong_or_oversized_hellos_are_refused_not_trusted() {
        let good: Value = serde_json::from_str(&duel_host().encode()).unwrap();
        let with = |name: &str, value: Value| {
            let mut hello = good.clone();
            hello[name] = value;
            hello.to_string()
        };
        let too_many = vec![json!("10.0.0.1:1"); MAX_CANDIDATES + 1];
        for bad in [
            String::new(),
            "{}".into(),
            "\"hello\"".into(),
            with("netcade", json!("bye")),
            with("role", json!("referee")),
            with("protocol", json!(300)),
            with("content", json!("not hex")),
            with("core", json!("x".repeat(MAX_NAME_CHARS + 1))),
            with("core", json!("\u{1b}[2JDuel")),
            with("core", json!("Duel\u{202E}")),
            with("core_version", json!("\u{FEFF}1.0")),
            with("core_version", json!(7)),
            with("candidates", json!(["nowhere"])),
            with("candidates", json!(too_many)),
            with("core", json!("x".repeat(MAX_HELLO_BYTES))),
        ] {
            assert!(Hello::decode(&bad).is_err(), "{bad}");
        }
    }
}
