//! `spectate --list nats://SERVER`: the live matches, as their
//! broadcasters keep them listed in the key-value bucket (an entry their
//! broadcaster stopped refreshing expires).

use super::MATCHES_BUCKET;
use crate::engine::AppError;
use crate::net::nats::{NatsError, NatsLink};
use futures_util::StreamExt;

/// Matches listed at most: a listing is a screenful, not a dump.
const MAX_LISTED: usize = 1000;

/// One live match.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveMatchEntry {
    /// Its name (`nats://SERVER/<name>` watches it).
    pub name: String,
    /// What its broadcaster says of it: game, core, content, players,
    /// start time, the frame of its newest savestate.
    pub details: serde_json::Value,
}

impl LiveMatchEntry {
    /// `name  game (core), N players, frame F`.
    pub fn describe(&self) -> String {
        let field = |key: &str| self.details[key].to_string().trim_matches('"').to_string();
        format!(
            "{}  {} ({}), {} players, at frame {}",
            self.name,
            field("game"),
            field("core"),
            field("players"),
            field("frame")
        )
    }
}

/// The live matches on the server `link` is connected to, by name.
pub fn list_matches(link: &NatsLink) -> Result<Vec<LiveMatchEntry>, AppError> {
    let js = link.jetstream();
    let entries = link.run(async move {
        // No bucket: nothing was ever broadcast there (a viewer may not
        // make it).
        let Ok(bucket) = js.get_key_value(MATCHES_BUCKET).await else {
            return Ok(Vec::new());
        };
        let mut keys = bucket
            .keys()
            .await
            .map_err(NatsError::request("the live matches"))?
            .take(MAX_LISTED);
        let mut entries = Vec::new();
        while let Some(key) = keys.next().await {
            let Ok(key) = key else { continue };
            if let Ok(Some(value)) = bucket.get(key.clone()).await {
                let details = serde_json::from_slice(&value).unwrap_or_default();
                entries.push(LiveMatchEntry { name: key, details });
            }
        }
        Ok::<_, NatsError>(entries)
    })??;
    let mut entries = entries;
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}
