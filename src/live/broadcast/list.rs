//! `spectate --list nats://SERVER`: the live matches, as their
//! broadcasters keep them listed in the key-value bucket (an entry their
//! broadcaster stopped refreshing expires), with how many watch each: every
//! viewer keeps one key of its own in the viewers' bucket while it watches.

use super::{viewers_bucket, MATCHES_BUCKET, VIEWERS_BUCKET, VIEWER_REFRESH};
use crate::engine::report::time_ago;
use crate::engine::AppError;
use crate::net::nats::async_nats::jetstream;
use crate::net::nats::{bucket_entries, NatsError, NatsLink};
use futures_util::StreamExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Matches listed at most: a listing is a screenful, not a dump.
const MAX_LISTED: usize = 1000;

/// Viewers counted at most, over all matches.
const MAX_COUNTED: usize = 100_000;

/// One live match.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveMatchEntry {
    /// Its name (`nats://SERVER/<name>` watches it).
    pub name: String,
    /// What its broadcaster says of it: game, core, content, players,
    /// start time, the frame of its newest savestate.
    pub details: serde_json::Value,
    /// Viewers watching it through the server.
    pub viewers: usize,
}

impl LiveMatchEntry {
    /// `name  game (core), N players, V viewers, started 3 min ago, at
    /// frame F`, at `now_unix` (seconds since 1970).
    pub fn describe(&self, now_unix: u64) -> String {
        let field = |key: &str| self.details[key].to_string().trim_matches('"').to_string();
        let started = match self.details["started_unix"].as_u64() {
            Some(started) => format!("started {}", time_ago(now_unix.saturating_sub(started))),
            None => "start unknown".to_string(),
        };
        format!(
            "{}  {} ({}), {} players, {} viewer{}, {started}, at frame {}",
            self.name,
            field("game"),
            field("core"),
            field("players"),
            self.viewers,
            if self.viewers == 1 { "" } else { "s" },
            field("frame")
        )
    }
}

/// The live matches on the server `link` is connected to, by name.
pub fn list_matches(link: &NatsLink) -> Result<Vec<LiveMatchEntry>, AppError> {
    let js = link.jetstream();
    let (mut entries, viewers) = link.run(async move {
        // No bucket: nothing was ever broadcast there (a viewer may not
        // make it).
        let entries = bucket_entries(&js, MATCHES_BUCKET, MAX_LISTED)
            .await?
            .into_iter()
            .map(|(name, value)| LiveMatchEntry {
                name,
                details: serde_json::from_slice(&value).unwrap_or_default(),
                viewers: 0,
            })
            .collect::<Vec<_>>();
        let viewers = viewer_keys(&js).await?;
        Ok::<_, NatsError>((entries, viewers))
    })??;
    for entry in &mut entries {
        entry.viewers = viewers
            .iter()
            .filter(|key| watched_match(key) == Some(entry.name.as_str()))
            .count();
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

/// The keys of every viewer watching now (none without a bucket).
async fn viewer_keys(js: &jetstream::Context) -> Result<Vec<String>, NatsError> {
    let Ok(bucket) = js.get_key_value(VIEWERS_BUCKET).await else {
        return Ok(Vec::new());
    };
    let keys = bucket
        .keys()
        .await
        .map_err(NatsError::request("the viewers"))?
        .take(MAX_COUNTED)
        .filter_map(|key| async move { key.ok() })
        .collect()
        .await;
    Ok(keys)
}

/// The match a viewer's key `<MATCH>.<VIEWER>` names.
fn watched_match(key: &str) -> Option<&str> {
    key.split_once('.').map(|(name, _)| name)
}

/// A viewer counted among a match's: its key, refreshed until
/// [`ViewerAnnouncement::withdraw`].
pub struct ViewerAnnouncement {
    key: String,
    stopped: Arc<AtomicBool>,
}

impl ViewerAnnouncement {
    /// Stops the refresh and deletes the key, so the count drops at once
    /// rather than when the key expires. The delete follows any put
    /// already sent on the same connection, so it is the last word.
    pub fn withdraw(self, link: &NatsLink) {
        self.stopped.store(true, Ordering::Relaxed);
        let js = link.jetstream();
        // Best effort, and brief: the key expires anyway.
        let _ = link.run_within(
            async move {
                if let Ok(bucket) = js.get_key_value(VIEWERS_BUCKET).await {
                    let _ = bucket.delete(&self.key).await;
                }
            },
            super::LAST_WORDS,
        );
    }
}

/// Keeps the viewer counted among match `name`'s while `link` lives: a key
/// of its own, refreshed every few seconds, which expires once it stops.
/// Best effort: a server that refuses it (subscribe-only credentials)
/// leaves the watch as it was, uncounted.
pub fn announce_viewer(link: &NatsLink, name: &str) -> Result<ViewerAnnouncement, AppError> {
    let js = link.jetstream();
    // The inbox's unique token names this viewer.
    let inbox = link.client().new_inbox();
    let viewer = inbox.rsplit('.').next().unwrap_or(&inbox).to_string();
    let announcement = ViewerAnnouncement {
        key: format!("{name}.{viewer}"),
        stopped: Arc::new(AtomicBool::new(false)),
    };
    let (key, stopped) = (announcement.key.clone(), announcement.stopped.clone());
    link.spawn(async move {
        let Ok(bucket) = viewers_bucket(&js).await else {
            return;
        };
        while !stopped.load(Ordering::Relaxed) {
            if bucket.put(&key, Vec::new().into()).await.is_err() {
                return;
            }
            tokio::time::sleep(VIEWER_REFRESH).await;
        }
    })?;
    Ok(announcement)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_match_says_how_many_watch_it() {
        let entry = |viewers| LiveMatchEntry {
            name: "final".into(),
            details: serde_json::json!({"game": "Duel", "core": "duel", "players": 2,
                "started_unix": 7, "frame": 600}),
            viewers,
        };
        assert_eq!(
            entry(1).describe(7 + 200),
            "final  Duel (duel), 2 players, 1 viewer, started 3 min ago, at frame 600"
        );
        assert!(entry(3)
            .describe(7)
            .contains(", 3 viewers, started just now,"));
    }

    #[test]
    fn a_viewers_key_names_the_match_it_watches() {
        assert_eq!(watched_match("final-1.AbC123"), Some("final-1"));
        assert_eq!(watched_match("nodot"), None);
    }
}
