//! A match through NATS JetStream (feature `broadcast`): the broadcaster,
//! a headless spectator of the host, publishes the replay's records, a
//! savestate every ~10 s and the match's header into one stream; viewers
//! read it from the newest savestate (or from the start) and play it
//! through the spectator's jitter buffer; the finished replay goes into
//! the object store, and a key-value bucket lists the live matches.
//! Layout and server set-up: docs/broadcast.md.

mod list;
mod pieces;
pub(crate) mod signing;
mod sink;
mod viewer;

pub use list::{announce_viewer, list_matches, LiveMatchEntry, ViewerAnnouncement};
pub use signing::BroadcastSigner;
pub use sink::{broadcast_sink, BroadcastStatus};
pub use viewer::{watch_broadcast, ViewerSettings};

use crate::engine::AppError;
use crate::net::nats::async_nats::jetstream;
use crate::net::nats::{key_value_bucket, NatsError, NatsLink};
use std::time::Duration;

/// The stream every match goes into.
pub const STREAM: &str = "NETCADE";
/// Its subjects: `netcade.match.<MATCH>.<part>`.
const SUBJECT_PREFIX: &str = "netcade.match";
/// The bucket of live matches.
pub const MATCHES_BUCKET: &str = "netcade-matches";
/// The bucket of viewers watching: `<MATCH>.<VIEWER>` per viewer.
pub const VIEWERS_BUCKET: &str = "netcade-viewers";
/// The bucket of finished matches' replays (`<MATCH>.ncr`).
pub const REPLAYS_BUCKET: &str = "netcade-replays";
/// How long a match stays in the stream.
const RETENTION: Duration = Duration::from_secs(24 * 3600);
/// How long a live match stays listed without a refresh from its
/// broadcaster (which refreshes it with every savestate).
const LISTING_TTL: Duration = Duration::from_secs(30);
/// How long a viewer stays counted without a refresh (it refreshes
/// every [`VIEWER_REFRESH`], so one that is gone drops out of the count
/// within this).
const VIEWER_TTL: Duration = Duration::from_secs(15);
/// How often a viewer says it is still watching.
const VIEWER_REFRESH: Duration = Duration::from_secs(5);
/// How long the last steps of a broadcast or a watch (the replay into the
/// object store, taking a viewer off the count) may take once it ended,
/// however it ended: an interrupt is obeyed within this.
const LAST_WORDS: Duration = Duration::from_secs(5);
/// How long the first answer of a server may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The parts of a match in the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The replay's preamble and header record (core, content, options,
    /// players, start state).
    Header,
    /// Replay records as the writer flushed them.
    Records,
    /// A savestate: the frame (u32 LE) and an lz4 state blob.
    State,
}

impl Part {
    fn name(self) -> &'static str {
        match self {
            Part::Header => "header",
            Part::Records => "records",
            Part::State => "state",
        }
    }

    fn of_subject(subject: &str) -> Option<Part> {
        match subject.rsplit('.').next()? {
            "header" => Some(Part::Header),
            "records" => Some(Part::Records),
            "state" => Some(Part::State),
            _ => None,
        }
    }
}

/// `netcade.match.<MATCH>.<part>`.
pub fn subject(match_name: &str, part: Part) -> String {
    format!("{SUBJECT_PREFIX}.{match_name}.{}", part.name())
}

/// Every part of a match.
fn match_subjects(match_name: &str) -> String {
    format!("{SUBJECT_PREFIX}.{match_name}.*")
}

/// A match name must be one subject token: letters, digits, `-` and `_`.
pub fn check_match_name(name: &str) -> Result<(), AppError> {
    let fine = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if fine {
        Ok(())
    } else {
        Err(AppError::BadArgument {
            message: format!("the match name {name:?} must be 1 to 64 letters, digits, '-' or '_'"),
        })
    }
}

/// `nats://[USER:PASSWORD@]HOST[:PORT][/MATCH]` split into the server's URL
/// and the match, if named.
pub fn split_nats_address(address: &str) -> Result<(String, Option<String>), AppError> {
    let Some(rest) = address.strip_prefix("nats://") else {
        return Err(AppError::BadArgument {
            message: format!("{address} is not a nats://SERVER/MATCH address"),
        });
    };
    let (server, name) = match rest.split_once('/') {
        Some((server, name)) => (server, Some(name.trim_end_matches('/'))),
        None => (rest, None),
    };
    let name = name.filter(|name| !name.is_empty()).map(str::to_string);
    if let Some(name) = &name {
        check_match_name(name)?;
    }
    Ok((format!("nats://{server}"), name))
}

/// Connects to the server at `url` (one clear error when it is down or
/// refuses us); an interrupt ends every wait on it.
pub fn connect(url: &str) -> Result<NatsLink, AppError> {
    let link = NatsLink::connect(url, CONNECT_TIMEOUT)?;
    link.give_up_when(crate::live::options::interrupted);
    Ok(link)
}

/// The stream, made if the server has none yet (24 h retention; a
/// message id seen in the last two minutes is dropped as a duplicate).
pub fn ensure_stream(link: &NatsLink) -> Result<(), AppError> {
    let js = link.jetstream();
    link.run(async move {
        js.get_or_create_stream(jetstream::stream::Config {
            name: STREAM.to_string(),
            subjects: vec![format!("{SUBJECT_PREFIX}.>")],
            max_age: RETENTION,
            duplicate_window: Duration::from_secs(120),
            storage: jetstream::stream::StorageType::File,
            ..Default::default()
        })
        .await
        .map(|_| ())
        .map_err(NatsError::request(format!("the stream {STREAM}")))
    })??;
    Ok(())
}

/// The bucket of live matches, made if missing.
async fn matches_bucket(js: &jetstream::Context) -> Result<jetstream::kv::Store, NatsError> {
    key_value_bucket(js, MATCHES_BUCKET, LISTING_TTL, None).await
}

/// The bucket of viewers, made if missing.
async fn viewers_bucket(js: &jetstream::Context) -> Result<jetstream::kv::Store, NatsError> {
    key_value_bucket(js, VIEWERS_BUCKET, VIEWER_TTL, None).await
}

/// The bucket of replays, made if missing.
async fn replays_bucket(
    js: &jetstream::Context,
) -> Result<jetstream::object_store::ObjectStore, NatsError> {
    if let Ok(store) = js.get_object_store(REPLAYS_BUCKET).await {
        return Ok(store);
    }
    js.create_object_store(jetstream::object_store::Config {
        bucket: REPLAYS_BUCKET.to_string(),
        max_age: RETENTION,
        ..Default::default()
    })
    .await
    .map_err(NatsError::request(format!("the bucket {REPLAYS_BUCKET}")))
}

/// The largest stored replay a viewer fetches: whatever the object store
/// holds, memory stays bounded.
const MAX_STORED_REPLAY_BYTES: u64 = 256 << 20;

/// The replay of match `name` from the object store, if kept there.
pub fn fetch_replay(link: &NatsLink, name: &str) -> Result<Vec<u8>, AppError> {
    let js = link.jetstream();
    let object = format!("{name}.ncr");
    Ok(link.run(async move {
        use tokio::io::AsyncReadExt;
        let store = replays_bucket(&js).await?;
        let mut reader = store
            .get(&object)
            .await
            .map_err(NatsError::request(format!("the replay {object}")))?;
        let mut bytes = Vec::new();
        (&mut reader)
            .take(MAX_STORED_REPLAY_BYTES + 1)
            .read_to_end(&mut bytes)
            .await
            .map_err(NatsError::request(format!("the replay {object}")))?;
        if bytes.len() as u64 > MAX_STORED_REPLAY_BYTES {
            return Err(NatsError::Request {
                what: format!("the replay {object}"),
                reason: format!("larger than {} MiB", MAX_STORED_REPLAY_BYTES >> 20),
            });
        }
        Ok::<_, NatsError>(bytes)
    })??)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nats_address_names_the_server_and_the_match() {
        let (server, name) =
            split_nats_address("nats://viewer:pw@example.org:4222/final-1").unwrap();
        assert_eq!(server, "nats://viewer:pw@example.org:4222");
        assert_eq!(name.as_deref(), Some("final-1"));
        assert_eq!(split_nats_address("nats://h:1").unwrap().1, None);
        assert!(split_nats_address("h:1/x").is_err());
        assert!(split_nats_address("nats://h:1/a.b").is_err());
    }

    #[test]
    fn every_part_of_a_match_has_its_subject() {
        for part in [Part::Header, Part::Records, Part::State] {
            assert_eq!(Part::of_subject(&subject("m1", part)), Some(part));
        }
        assert_eq!(match_subjects("m1"), "netcade.match.m1.*");
    }
}
