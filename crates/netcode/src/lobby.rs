//! The lobby's records, pure: a player's presence (what the key-value
//! bucket holds under its name), the messages players send each other
//! (challenge, accept, decline, cancel), the list a channel of presences
//! makes, and the per-sender budget that keeps a flood of messages the
//! flooder's cost. Every record comes from the network: each parse is
//! bounded and returns an error, never panics.

use crate::checksum::Checksum;
use crate::protocol::Identity;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The largest presence record read: a name, a game and a status.
pub const MAX_RECORD_BYTES: usize = 1024;

/// The largest message read.
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// The longest player name: one NATS subject token and key.
pub const MAX_NAME_CHARS: usize = 32;

/// The longest game title or core name carried.
const MAX_TEXT_CHARS: usize = 96;

/// Why a lobby record was dropped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LobbyError {
    /// Longer than any record of its kind.
    #[error("a record of {0} bytes is over the limit")]
    TooLong(usize),
    /// Not JSON, or not the record's shape.
    #[error("a malformed record: {0}")]
    Malformed(String),
}

/// Whether `name` can be a player's name: 1 to [`MAX_NAME_CHARS`] letters,
/// digits, `-` or `_` (it names the player's key and subjects).
pub fn check_name(name: &str) -> Result<(), String> {
    let fine = !name.is_empty()
        && name.len() <= MAX_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    match fine {
        true => Ok(()),
        false => Err(format!(
            "the lobby name {name:?} must be 1 to {MAX_NAME_CHARS} letters, digits, '-' or '_'"
        )),
    }
}

/// A game's channel: the core and content every player in it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Channel {
    /// The core, its version and the content's hash (what the handshake
    /// checks).
    pub identity: Identity,
    /// The game's title, as shown.
    pub game: String,
}

impl Channel {
    /// The channel's key: the same for every machine with the same core,
    /// version and content (16 hex digits).
    pub fn key(&self) -> String {
        let identity = &self.identity;
        let mut scope = vec![identity.protocol_version];
        for part in [&identity.core_name, &identity.core_version] {
            scope.extend_from_slice(part.as_bytes());
            scope.push(0);
        }
        scope.extend_from_slice(&identity.content_hash.to_le_bytes());
        format!("{:016x}", Checksum::of(&scope).0)
    }

    /// `Boxing (Stella 3.9.3)`.
    pub fn describe(&self) -> String {
        let Identity {
            core_name,
            core_version,
            ..
        } = &self.identity;
        match core_version.is_empty() {
            true => format!("{} ({core_name})", self.game),
            false => format!("{} ({core_name} {core_version})", self.game),
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "game": self.game,
            "core": self.identity.core_name,
            "core_version": self.identity.core_version,
            "content": format!("{:016x}", self.identity.content_hash),
            "protocol": self.identity.protocol_version,
        })
    }

    fn from_json(value: &Value) -> Result<Channel, LobbyError> {
        let content = text(value, "content", 16)?;
        let content_hash = u64::from_str_radix(&content, 16)
            .map_err(|_| LobbyError::Malformed("content is not a hex hash".into()))?;
        let protocol = value["protocol"]
            .as_u64()
            .and_then(|version| u8::try_from(version).ok())
            .ok_or_else(|| LobbyError::Malformed("no protocol version".into()))?;
        Ok(Channel {
            identity: Identity {
                protocol_version: protocol,
                core_name: text(value, "core", MAX_TEXT_CHARS)?,
                core_version: text(value, "core_version", MAX_TEXT_CHARS)?,
                content_hash,
            },
            game: text(value, "game", MAX_TEXT_CHARS)?,
        })
    }
}

/// What a player is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// In the channel, open to challenges.
    Idle,
    /// Playing a match.
    InMatch,
    /// There, but not answering challenges.
    Away,
}

impl Status {
    /// As records and listings name it.
    pub fn name(self) -> &'static str {
        match self {
            Status::Idle => "idle",
            Status::InMatch => "in a match",
            Status::Away => "away",
        }
    }

    fn parse(name: &str) -> Option<Status> {
        [Status::Idle, Status::InMatch, Status::Away]
            .into_iter()
            .find(|status| status.name() == name)
    }
}

/// The match a player in one is playing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchInProgress {
    /// The other player's name.
    pub opponent: String,
    /// Whether this player hosts it (its record is the match's listing).
    pub hosting: bool,
    /// When it began, in seconds since 1970.
    pub started_unix: u64,
}

/// A player's presence in the lobby: its key's value in the bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Presence {
    /// Its name (also its key).
    pub name: String,
    /// The channel it is in.
    pub channel: Channel,
    /// What it does.
    pub status: Status,
    /// Its match, while [`Status::InMatch`].
    pub playing: Option<MatchInProgress>,
    /// Whether it takes a challenge of any game its library holds (then
    /// its channel is only where it waits).
    pub library: bool,
}

impl Presence {
    /// The record's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut record = json!({
            "name": self.name,
            "channel": self.channel.to_json(),
            "status": self.status.name(),
        });
        if let Some(playing) = &self.playing {
            record["match"] = json!({
                "opponent": playing.opponent,
                "hosting": playing.hosting,
                "started_unix": playing.started_unix,
            });
        }
        if self.library {
            record["library"] = json!(true);
        }
        record.to_string().into_bytes()
    }

    /// A record read from the bucket.
    pub fn decode(bytes: &[u8]) -> Result<Presence, LobbyError> {
        let value = bounded_json(bytes, MAX_RECORD_BYTES)?;
        let name = text(&value, "name", MAX_NAME_CHARS)?;
        check_name(&name).map_err(LobbyError::Malformed)?;
        let status = Status::parse(&text(&value, "status", 16)?)
            .ok_or_else(|| LobbyError::Malformed("an unknown status".into()))?;
        let playing = match value.get("match") {
            None | Some(Value::Null) => None,
            Some(playing) => Some(MatchInProgress {
                opponent: text(playing, "opponent", MAX_NAME_CHARS)?,
                hosting: playing["hosting"].as_bool().unwrap_or(false),
                started_unix: playing["started_unix"].as_u64().unwrap_or(0),
            }),
        };
        Ok(Presence {
            name,
            channel: Channel::from_json(&value["channel"])?,
            status,
            playing,
            library: value["library"].as_bool().unwrap_or(false),
        })
    }
}

/// What one player tells another, on the other's subject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LobbyMessage {
    /// "Play me": the match's id names its signaling subjects.
    Challenge {
        /// The challenge's id (16 hex digits).
        id: String,
        /// The challenger's channel key: a challenge of another game is
        /// refused.
        channel: String,
    },
    /// The challenge `id` is accepted: the path finding begins.
    Accept {
        /// The challenge's id.
        id: String,
    },
    /// The challenge `id` is declined, and why.
    Decline {
        /// The challenge's id.
        id: String,
        /// In words.
        reason: String,
    },
    /// The challenger withdrew challenge `id`.
    Cancel {
        /// The challenge's id.
        id: String,
    },
}

/// A message and who says it sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Envelope {
    /// The sender's name (its presence vouches for it).
    pub from: String,
    /// The message.
    pub message: LobbyMessage,
    /// The public key of the sender's side of the match's key exchange
    /// (a challenge's and an accept's): the other side pins it, so the
    /// match's link is bound to the identity that signed this.
    pub link_key: Option<crate::protocol::PublicKey>,
}

impl Envelope {
    /// The message's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let (kind, id, extra) = match &self.message {
            LobbyMessage::Challenge { id, channel } => {
                ("challenge", id, Some(("channel", channel)))
            }
            LobbyMessage::Accept { id } => ("accept", id, None),
            LobbyMessage::Decline { id, reason } => ("decline", id, Some(("reason", reason))),
            LobbyMessage::Cancel { id } => ("cancel", id, None),
        };
        let mut record = json!({"kind": kind, "from": self.from, "id": id});
        if let Some((key, value)) = extra {
            record[key] = json!(value);
        }
        if let Some(link_key) = &self.link_key {
            let hex: String = link_key
                .0
                .iter()
                .map(|byte| format!("{byte:02x}"))
                .collect();
            record["link_key"] = json!(hex);
        }
        record.to_string().into_bytes()
    }

    /// A message read from a subject.
    pub fn decode(bytes: &[u8]) -> Result<Envelope, LobbyError> {
        let value = bounded_json(bytes, MAX_MESSAGE_BYTES)?;
        let from = text(&value, "from", MAX_NAME_CHARS)?;
        check_name(&from).map_err(LobbyError::Malformed)?;
        // The id names subjects: hex digits only, never a wildcard or a dot.
        let id = hex_text(&value, "id")?;
        let message = match text(&value, "kind", 16)?.as_str() {
            "challenge" => LobbyMessage::Challenge {
                id,
                channel: hex_text(&value, "channel")?,
            },
            "accept" => LobbyMessage::Accept { id },
            "decline" => LobbyMessage::Decline {
                id,
                reason: text(&value, "reason", 200)?,
            },
            "cancel" => LobbyMessage::Cancel { id },
            other => return Err(LobbyError::Malformed(format!("an unknown kind {other:?}"))),
        };
        let link_key = match value.get("link_key") {
            None | Some(Value::Null) => None,
            Some(_) => Some(crate::protocol::PublicKey(key_bytes(&text(
                &value, "link_key", 64,
            )?)?)),
        };
        Ok(Envelope {
            from,
            message,
            link_key,
        })
    }
}

/// 32 bytes written as 64 hex digits.
fn key_bytes(hex: &str) -> Result<[u8; 32], LobbyError> {
    let wrong = || LobbyError::Malformed("link_key is not 64 hex digits".into());
    if hex.len() != 64 || !hex.is_ascii() {
        return Err(wrong());
    }
    let mut key = [0; 32];
    for (index, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * index..2 * index + 2], 16).map_err(|_| wrong())?;
    }
    Ok(key)
}

/// JSON of at most `limit` bytes.
fn bounded_json(bytes: &[u8], limit: usize) -> Result<Value, LobbyError> {
    if bytes.len() > limit {
        return Err(LobbyError::TooLong(bytes.len()));
    }
    serde_json::from_slice(bytes).map_err(|error| LobbyError::Malformed(error.to_string()))
}

/// The field `key` of `value`: 1 to 16 hex digits.
fn hex_text(value: &Value, key: &str) -> Result<String, LobbyError> {
    let text = text(value, key, 16)?;
    match !text.is_empty() && text.chars().all(|c| c.is_ascii_hexdigit()) {
        true => Ok(text),
        false => Err(LobbyError::Malformed(format!("{key} is not hex digits"))),
    }
}

/// The string field `key` of `value`, at most `limit` characters.
fn text(value: &Value, key: &str, limit: usize) -> Result<String, LobbyError> {
    match value.get(key).and_then(Value::as_str) {
        Some(text) if text.chars().count() <= limit => Ok(text.to_string()),
        Some(_) => Err(LobbyError::Malformed(format!("{key} is too long"))),
        None => Err(LobbyError::Malformed(format!("no {key}"))),
    }
}

/// One channel of the listing, with who is in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelListing {
    /// The channel.
    pub channel: Channel,
    /// Its players, by name.
    pub players: Vec<Presence>,
}

/// What the bucket's records make: the channels with their players, and
/// how many records were dropped as malformed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    /// The channels, by game.
    pub channels: Vec<ChannelListing>,
    /// Records that did not parse (or named another key than their own).
    pub dropped: usize,
}

impl Listing {
    /// The listing of `records` (key, bytes); a record whose name is not
    /// its key is dropped too (it would pose as another player).
    pub fn of<'a>(records: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Listing {
        let mut channels: BTreeMap<String, ChannelListing> = BTreeMap::new();
        let mut dropped = 0;
        for (key, bytes) in records {
            let presence = match Presence::decode(bytes) {
                Ok(presence) if presence.name == key => presence,
                _ => {
                    dropped += 1;
                    continue;
                }
            };
            channels
                .entry(presence.channel.key())
                .or_insert_with(|| ChannelListing {
                    channel: presence.channel.clone(),
                    players: Vec::new(),
                })
                .players
                .push(presence);
        }
        let mut channels: Vec<ChannelListing> = channels.into_values().collect();
        for channel in &mut channels {
            channel.players.sort_by(|a, b| a.name.cmp(&b.name));
        }
        channels.sort_by_key(|listing| listing.channel.describe());
        Listing { channels, dropped }
    }

    /// Every player listed under `name`, if there.
    pub fn player(&self, name: &str) -> Option<&Presence> {
        self.channels
            .iter()
            .flat_map(|channel| &channel.players)
            .find(|presence| presence.name == name)
    }

    /// The matches in progress: their hosts' presences (each match once).
    pub fn matches(&self) -> impl Iterator<Item = &Presence> {
        self.channels
            .iter()
            .flat_map(|channel| &channel.players)
            .filter(|presence| presence.playing.as_ref().is_some_and(|m| m.hosting))
    }

    /// The listing as JSON: channels with counts and players, matches.
    pub fn to_json(&self) -> Value {
        let channels: Vec<Value> = self
            .channels
            .iter()
            .map(|listing| {
                let mut channel = listing.channel.to_json();
                channel["key"] = json!(listing.channel.key());
                channel["name"] = json!(listing.channel.describe());
                channel["count"] = json!(listing.players.len());
                channel["players"] = listing
                    .players
                    .iter()
                    .map(|p| json!({"name": p.name, "status": p.status.name()}))
                    .collect();
                channel
            })
            .collect();
        let matches: Vec<Value> = self
            .matches()
            .map(|host| {
                let playing = host.playing.as_ref();
                json!({
                    "channel": host.channel.key(),
                    "game": host.channel.describe(),
                    "players": [host.name, playing.map(|m| m.opponent.clone())],
                    "started_unix": playing.map(|m| m.started_unix),
                })
            })
            .collect();
        json!({"channels": channels, "matches": matches, "dropped": self.dropped})
    }
}

/// A budget of messages per sender: each sender may send `burst` at once
/// and one more every `refill_us`; the senders remembered are bounded (a
/// flood of made-up names forgets the oldest budgets, never grows memory).
#[derive(Clone, Debug)]
pub struct SenderBudget {
    burst: u32,
    refill_us: u64,
    max_senders: usize,
    /// Per sender: tokens left and when they were last counted.
    senders: BTreeMap<String, (u32, u64)>,
}

impl SenderBudget {
    /// A budget of `burst` messages, one more each `refill_us`, for at
    /// most `max_senders` senders at once.
    pub fn new(burst: u32, refill_us: u64, max_senders: usize) -> SenderBudget {
        SenderBudget {
            burst,
            refill_us: refill_us.max(1),
            max_senders: max_senders.max(1),
            senders: BTreeMap::new(),
        }
    }

    /// Whether `sender` may send one more message at `now_us`.
    pub fn admit(&mut self, sender: &str, now_us: u64) -> bool {
        if !self.senders.contains_key(sender) && self.senders.len() >= self.max_senders {
            // The stalest budget goes: a sender that keeps sending keeps
            // being counted.
            let stalest = self
                .senders
                .iter()
                .min_by_key(|(_, (_, at))| *at)
                .map(|(name, _)| name.clone());
            if let Some(stalest) = stalest {
                self.senders.remove(&stalest);
            }
        }
        let (tokens, at) = self
            .senders
            .entry(sender.to_string())
            .or_insert((self.burst, now_us));
        let earned = now_us.saturating_sub(*at) / self.refill_us;
        if earned > 0 {
            *tokens = u32::try_from(earned)
                .unwrap_or(u32::MAX)
                .saturating_add(*tokens)
                .min(self.burst);
            *at += earned * self.refill_us;
        }
        if *tokens == 0 {
            return false;
        }
        *tokens -= 1;
        true
    }
}

/// A challenge heard and not answered yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingChallenge {
    /// Who challenges.
    pub from: String,
    /// The challenge's id.
    pub id: String,
    /// When it was last said, in microseconds of the caller's clock.
    heard_us: u64,
}

/// The challenges a player has heard and not answered: one per
/// challenger (its newest), at most `max` (the longest unheard goes
/// first); a challenge not said again within `keep_us` is gone (a
/// challenger says its challenge every 2 s until answered, so a killed
/// one's leaves).
#[derive(Clone, Debug)]
pub struct PendingChallenges {
    max: usize,
    keep_us: u64,
    pending: Vec<PendingChallenge>,
}

impl PendingChallenges {
    /// At most `max` challenges, each kept `keep_us` after it was said.
    pub fn new(max: usize, keep_us: u64) -> PendingChallenges {
        PendingChallenges {
            max: max.max(1),
            keep_us,
            pending: Vec::new(),
        }
    }

    /// `from` said challenge `id` at `now_us`; whether it is news.
    pub fn heard(&mut self, from: &str, id: &str, now_us: u64) -> bool {
        if let Some(known) = self.pending.iter_mut().find(|p| p.from == from) {
            let news = known.id != id;
            known.id = id.to_string();
            known.heard_us = now_us;
            return news;
        }
        if self.pending.len() >= self.max {
            if let Some(stalest) = (0..self.pending.len()).min_by_key(|&i| self.pending[i].heard_us)
            {
                self.pending.remove(stalest);
            }
        }
        self.pending.push(PendingChallenge {
            from: from.to_string(),
            id: id.to_string(),
            heard_us: now_us,
        });
        true
    }

    /// Whether `from`'s challenge `id` is waiting.
    pub fn is_pending(&self, from: &str, id: &str) -> bool {
        self.pending.iter().any(|p| p.from == from && p.id == id)
    }

    /// `from` withdrew challenge `id`, or it was answered; whether it was
    /// waiting.
    pub fn remove(&mut self, from: &str, id: &str) -> bool {
        let before = self.pending.len();
        self.pending.retain(|p| !(p.from == from && p.id == id));
        self.pending.len() != before
    }

    /// Forgets the challenges not said again by `now_us`; whether any went.
    pub fn expire(&mut self, now_us: u64) -> bool {
        let before = self.pending.len();
        let keep_us = self.keep_us;
        self.pending
            .retain(|p| now_us.saturating_sub(p.heard_us) <= keep_us);
        self.pending.len() != before
    }

    /// The challenges waiting, oldest first.
    pub fn waiting(&self) -> &[PendingChallenge] {
        &self.pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(content_hash: u64) -> Channel {
        Channel {
            identity: Identity {
                protocol_version: 9,
                core_name: "Stella".into(),
                core_version: "3.9.3".into(),
                content_hash,
            },
            game: "boxing".into(),
        }
    }

    fn presence(name: &str, status: Status, playing: Option<MatchInProgress>) -> Presence {
        Presence {
            name: name.into(),
            channel: channel(0xb0),
            status,
            playing,
            library: false,
        }
    }

    #[test]
    fn a_channel_is_described_by_its_game_and_core_and_a_core_without_version_by_its_name() {
        assert_eq!(channel(1).describe(), "boxing (Stella 3.9.3)");
        let unversioned = Channel {
            identity: Identity {
                core_version: String::new(),
                ..channel(1).identity
            },
            ..channel(1)
        };
        assert_eq!(unversioned.describe(), "boxing (Stella)");
    }

    #[test]
    fn a_presence_and_a_message_read_back_as_written() {
        let playing = MatchInProgress {
            opponent: "bo".into(),
            hosting: true,
            started_unix: 1_700_000_000,
        };
        let record = presence("al", Status::InMatch, Some(playing));
        assert_eq!(Presence::decode(&record.encode()), Ok(record));
        let of_a_library = Presence {
            library: true,
            ..presence("bo", Status::Idle, None)
        };
        assert_eq!(Presence::decode(&of_a_library.encode()), Ok(of_a_library));
        for message in [
            LobbyMessage::Challenge {
                id: "00ff".into(),
                channel: channel(1).key(),
            },
            LobbyMessage::Accept { id: "00ff".into() },
            LobbyMessage::Decline {
                id: "00ff".into(),
                reason: "busy".into(),
            },
            LobbyMessage::Cancel { id: "00ff".into() },
        ] {
            let envelope = Envelope {
                from: "al".into(),
                message,
                link_key: Some(crate::protocol::PublicKey([0xa7; 32])),
            };
            assert_eq!(Envelope::decode(&envelope.encode()), Ok(envelope));
        }
        for bad in [
            "",
            "zz",
            "00",
            &"g".repeat(64),
            &"é".repeat(32),
            &"0".repeat(66),
        ] {
            let record = format!(r#"{{"kind":"accept","from":"al","id":"1","link_key":"{bad}"}}"#);
            assert!(Envelope::decode(record.as_bytes()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn garbage_oversized_and_misnamed_records_are_dropped_and_counted() {
        assert!(Presence::decode(b"\xff\x00garbage").is_err());
        assert_eq!(
            Presence::decode(&vec![b' '; MAX_RECORD_BYTES + 1]),
            Err(LobbyError::TooLong(MAX_RECORD_BYTES + 1))
        );
        assert!(Envelope::decode(br#"{"kind":"challenge","from":"a b","id":"1"}"#).is_err());
        assert!(
            Envelope::decode(br#"{"kind":"accept","from":"al","id":">"}"#).is_err(),
            "an id is never a subject wildcard"
        );
        let al = presence("al", Status::Idle, None).encode();
        let listing = Listing::of([
            ("al", al.as_slice()),
            ("mallory", al.as_slice()),
            ("junk", b"[[[[".as_slice()),
        ]);
        assert_eq!(listing.dropped, 2);
        assert_eq!(listing.channels.len(), 1);
        assert_eq!(listing.channels[0].players.len(), 1);
    }

    #[test]
    fn a_listing_groups_players_by_channel_and_lists_each_match_once() {
        let host = MatchInProgress {
            opponent: "bo".into(),
            hosting: true,
            started_unix: 5,
        };
        let joiner = MatchInProgress {
            opponent: "al".into(),
            hosting: false,
            started_unix: 5,
        };
        let records = [
            presence("al", Status::InMatch, Some(host)).encode(),
            presence("bo", Status::InMatch, Some(joiner)).encode(),
            presence("cy", Status::Idle, None).encode(),
            Presence {
                channel: channel(0xc0),
                ..presence("di", Status::Away, None)
            }
            .encode(),
        ];
        let names = ["al", "bo", "cy", "di"];
        let listing = Listing::of(names.iter().zip(&records).map(|(n, r)| (*n, r.as_slice())));
        assert_eq!(listing.channels.len(), 2);
        let counts: Vec<usize> = listing.channels.iter().map(|c| c.players.len()).collect();
        assert_eq!(counts.iter().sum::<usize>(), 4);
        let matches: Vec<&str> = listing.matches().map(|p| p.name.as_str()).collect();
        assert_eq!(matches, ["al"]);
        let json = listing.to_json();
        assert_eq!(json["matches"][0]["players"], json!(["al", "bo"]));
    }

    #[test]
    fn channels_are_per_core_version_and_content() {
        assert_eq!(channel(1).key(), channel(1).key());
        assert_ne!(channel(1).key(), channel(2).key());
        let mut other = channel(1);
        other.identity.core_version = "4.0".into();
        assert_ne!(channel(1).key(), other.key());
        assert_eq!(channel(1).describe(), "boxing (Stella 3.9.3)");
    }

    #[test]
    fn a_flooding_sender_spends_only_its_own_budget() {
        let mut budget = SenderBudget::new(4, 1_000_000, 8);
        let flooded = (0..1000).filter(|_| budget.admit("flood", 0)).count();
        assert_eq!(flooded, 4);
        assert!(budget.admit("al", 0), "another sender is still heard");
        assert!(!budget.admit("flood", 999_999));
        assert!(budget.admit("flood", 1_000_000), "one more each second");
        for made_up in 0..100 {
            budget.admit(&format!("n{made_up}"), 2_000_000);
        }
        assert!(budget.senders.len() <= 8);
    }

    #[test]
    fn a_challenge_said_again_is_one_waiting_challenge_that_leaves_once_no_longer_said() {
        let mut challenges = PendingChallenges::new(2, 5_000_000);
        assert!(challenges.heard("al", "1", 0));
        assert!(!challenges.heard("al", "1", 2_000_000), "said again");
        assert!(challenges.heard("bo", "2", 2_000_000));
        assert!(challenges.heard("cy", "3", 3_000_000), "the stalest goes");
        let from: Vec<&str> = challenges
            .waiting()
            .iter()
            .map(|c| c.from.as_str())
            .collect();
        assert_eq!(from, ["bo", "cy"]);
        assert!(challenges.remove("bo", "2"));
        assert!(
            !challenges.remove("cy", "9"),
            "another id is another challenge"
        );
        assert!(!challenges.expire(8_000_000));
        assert!(challenges.expire(8_000_001));
        assert!(challenges.waiting().is_empty());
    }

    #[test]
    fn names_are_one_subject_token() {
        assert!(check_name("al_9-x").is_ok());
        let long = "x".repeat(33);
        for bad in ["", "a.b", "a b", "*", ">", long.as_str()] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }
}
