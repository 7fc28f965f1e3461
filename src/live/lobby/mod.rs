//! The lobby on NATS (feature `broadcast`, [lobby.md](../../../../docs/lobby.md)):
//! players of one game meet in its channel. Each keeps its presence (name,
//! channel, status) under its name in a JetStream key-value bucket whose
//! entries expire after [`PRESENCE_TTL`] without a heartbeat, so a killed
//! netcade leaves the list within seconds. A challenge, its answer and
//! its withdrawal go on the other player's subject; an accepted challenge
//! finds the path with ICE, signaling over two subjects of the match
//! ([`NatsSignal`]), and the match is played as `host`/`join` play it: the
//! challenger hosts. The records are pure ([`netcode::lobby`]); what this
//! module reads from the server is bounded and a malformed record or a
//! flood of messages costs its sender only.

use crate::engine::{AppError, GameArgs};
use crate::live::connect::{bind_ipv4, random_bytes};
use crate::live::front_end::{ConnectStep, ConnectingScreen, LiveOutputs};
use crate::live::options::LiveOptions;
use crate::live::players::{cancelled_before_the_match, play_paired, JoinSettings, Paired};
use crate::live::rooms::{identity_of, FoundHost};
use crate::live::session_loop::LiveMatch;
use crate::net::ice::IceRole;
use crate::net::link::{connect_ice, LinkArgs};
use crate::net::nats::{bucket_entries, key_value_bucket, Heard, NatsError, NatsLink};
use crate::net::nats_signal::NatsSignal;
use netcode::lobby::{
    check_name, Channel, ChannelListing, Envelope, Listing, LobbyMessage, MatchInProgress,
    Presence, SenderBudget, Status,
};
use netcode::protocol::Identity;
use netcode::protocol::{Fingerprint, LinkSecret, PublicKey, PROTOCOL_VERSION};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub mod identity;
mod visit;
use identity::presence_context;
pub use identity::{LobbyIdentity, LobbyKey};
pub use visit::{LobbyView, LobbyVisit, VisitEvent};

/// The bucket of presences: one key per player, its name.
pub const PRESENCE_BUCKET: &str = "netcade-lobby";

/// How long a presence stays listed without a heartbeat.
pub const PRESENCE_TTL: Duration = Duration::from_secs(5);

/// How often a player says it is still there (several per TTL, so one
/// late heartbeat never drops it).
const HEARTBEAT: Duration = Duration::from_secs(1);

/// Presences listed at most: a listing is bounded, whatever the bucket holds.
const MAX_LISTED: usize = 10_000;

/// How often a challenge is said again until it is answered (a message
/// sent before the other player subscribed is lost).
const CHALLENGE_AGAIN: Duration = Duration::from_secs(2);

/// How often the waiting loop looks at the subjects.
const POLL: Duration = Duration::from_millis(20);

/// Messages waiting to be read at most.
const INBOX_CAPACITY: usize = 256;

/// Each sender's budget: a burst of 8 messages, one more per second;
/// budgets of at most 1024 senders are remembered.
const SENDER_BURST: u32 = 8;
const SENDER_REFILL_US: u64 = 1_000_000;
const MAX_SENDERS: usize = 1024;

/// The subject a player hears challenges and answers on.
pub fn inbox_subject(name: &str) -> String {
    format!("netcade.lobby.{PROTOCOL_VERSION}.to.{name}")
}

/// The subject `name` hears the path finding of challenge `id` on.
fn signal_subject(id: &str, name: &str) -> String {
    format!("netcade.lobby.{PROTOCOL_VERSION}.ice.{id}.{name}")
}

/// Seconds since 1970 (for the listing's "started").
pub fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// Every presence in the lobby of the server `link` is connected to.
pub fn list_lobby(link: &NatsLink) -> Result<Listing, AppError> {
    let js = link.jetstream();
    // No bucket: nobody ever entered.
    let records =
        link.run(async move { bucket_entries(&js, PRESENCE_BUCKET, MAX_LISTED).await })??;
    // A presence not signed for its own name counts as dropped.
    let opened: Vec<(&str, Option<&[u8]>)> = records
        .iter()
        .map(|(key, value)| {
            let body = identity::open(&presence_context(key), value).ok();
            (key.as_str(), body.map(|(_, body)| body))
        })
        .collect();
    let unsigned = opened.iter().filter(|(_, body)| body.is_none()).count();
    let mut listing = Listing::of(
        opened
            .iter()
            .filter_map(|(key, body)| body.map(|body| (*key, body))),
    );
    listing.dropped += unsigned;
    Ok(listing)
}

/// The listing in words: channels with counts, their players, matches.
pub fn describe_listing(listing: &Listing, now_unix_s: u64) -> Vec<String> {
    let mut lines = Vec::new();
    if listing.channels.is_empty() {
        lines.push("nobody is in the lobby".to_string());
    }
    for channel in &listing.channels {
        lines.push(describe_channel(channel));
        for player in &channel.players {
            lines.push(describe_player(player));
        }
    }
    lines.extend(
        listing
            .matches()
            .filter_map(|host| describe_match(host, now_unix_s)),
    );
    if listing.dropped > 0 {
        lines.push(format!("({} malformed records ignored)", listing.dropped));
    }
    lines
}

/// `dojo (Duel 0.1.0): 2 players`.
pub fn describe_channel(channel: &ChannelListing) -> String {
    let count = channel.players.len();
    format!(
        "{}: {count} player{}",
        channel.channel.describe(),
        if count == 1 { "" } else { "s" }
    )
}

/// `  bo (idle)`.
pub fn describe_player(player: &Presence) -> String {
    format!("  {} ({})", player.name, player.status.name())
}

/// `match in progress: al vs bo in …, started 2 minutes ago`, of the
/// match `host` hosts.
pub fn describe_match(host: &Presence, now_unix_s: u64) -> Option<String> {
    let playing = host.playing.as_ref()?;
    Some(format!(
        "match in progress: {} vs {} in {}, started {}",
        host.name,
        playing.opponent,
        host.channel.describe(),
        crate::engine::report::time_ago(now_unix_s.saturating_sub(playing.started_unix))
    ))
}

/// This player's presence in the bucket, kept fresh by a heartbeat on the
/// connection's thread until [`Present::leave`] (or the process dies, and
/// the key expires).
struct Present {
    name: String,
    record: Arc<Mutex<Presence>>,
    stop: Arc<AtomicBool>,
    changed: Arc<tokio::sync::Notify>,
}

impl Present {
    /// Enters the lobby as `presence`, signed by `identity`: refused when
    /// its name is taken.
    fn enter(
        link: &NatsLink,
        identity: &Arc<LobbyIdentity>,
        presence: Presence,
    ) -> Result<Present, AppError> {
        let js = link.jetstream();
        let name = presence.name.clone();
        let first = identity.seal_presence(&presence);
        let key = name.clone();
        let taken = link.run(async move {
            let bucket = key_value_bucket(
                &js,
                PRESENCE_BUCKET,
                PRESENCE_TTL,
                Some(netcode::lobby::MAX_RECORD_BYTES),
            )
            .await?;
            // Only if absent: two players cannot share a name.
            let created = bucket.create(&key, first.into()).await;
            Ok::<_, NatsError>(created.is_err())
        })??;
        if taken {
            return Err(AppError::BadArgument {
                message: format!(
                    "the name {name} is already in the lobby: choose another --name (a netcade of that name that was killed leaves within {} s)",
                    PRESENCE_TTL.as_secs()
                ),
            });
        }
        let present = Present {
            name,
            record: Arc::new(Mutex::new(presence)),
            stop: Arc::new(AtomicBool::new(false)),
            changed: Arc::new(tokio::sync::Notify::new()),
        };
        let (js, key) = (link.jetstream(), present.name.clone());
        let (record, stop, changed, identity) = (
            present.record.clone(),
            present.stop.clone(),
            present.changed.clone(),
            identity.clone(),
        );
        link.spawn(async move {
            let Ok(bucket) = key_value_bucket(
                &js,
                PRESENCE_BUCKET,
                PRESENCE_TTL,
                Some(netcode::lobby::MAX_RECORD_BYTES),
            )
            .await
            else {
                return;
            };
            while !stop.load(Ordering::Relaxed) {
                let _ = tokio::time::timeout(HEARTBEAT, changed.notified()).await;
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let bytes = match record.lock() {
                    Ok(record) => identity.seal_presence(&record),
                    Err(_) => return,
                };
                if bucket.put(&key, bytes.into()).await.is_err() {
                    tracing::warn!("the lobby refused our heartbeat");
                }
            }
        })?;
        Ok(present)
    }

    /// Says what we do now (at once, not at the next heartbeat).
    fn set(&self, status: Status, playing: Option<MatchInProgress>) {
        if let Ok(mut record) = self.record.lock() {
            record.status = status;
            record.playing = playing;
        }
        self.changed.notify_one();
    }

    /// Leaves the lobby: the key goes at once rather than when it expires.
    fn leave(self, link: &NatsLink) {
        self.stop.store(true, Ordering::Relaxed);
        self.changed.notify_one();
        let (js, key) = (link.jetstream(), self.name.clone());
        let _ = link.run_within(
            async move {
                if let Ok(bucket) = js.get_key_value(PRESENCE_BUCKET).await {
                    let _ = bucket.purge(&key).await;
                }
            },
            Duration::from_secs(2),
        );
    }
}

/// What a lobby player does once in its channel.
#[derive(Clone, Debug)]
pub enum Intent {
    /// Challenge this player, and play if it accepts.
    Challenge(String),
    /// Accept the first challenge of our channel.
    AcceptAny,
    /// Accept this player's challenge only (the launcher's Accept: the
    /// challenger says it again every 2 s, so the one the Lobby screen
    /// heard is heard again here).
    AcceptFrom(String),
}

impl Intent {
    /// Who the wait is for, as the connecting screen names it.
    fn awaited(&self) -> String {
        match self {
            Intent::Challenge(name) => format!("{name}, challenged in the lobby"),
            Intent::AcceptFrom(name) => format!("{name}'s challenge in the lobby"),
            Intent::AcceptAny => "a challenger in the lobby".to_string(),
        }
    }

    /// The other player named, if one is.
    fn opponent(&self) -> Option<&str> {
        match self {
            Intent::Challenge(name) | Intent::AcceptFrom(name) => Some(name),
            Intent::AcceptAny => None,
        }
    }
}

/// A lobby player's settings.
pub struct LobbySettings<'a> {
    /// Its name.
    pub name: &'a str,
    /// What it does there.
    pub intent: Intent,
    /// How long it waits for the other player.
    pub wait: Duration,
    /// The match it plays, as `join` takes it (without a game when it
    /// plays from its library).
    pub join: JoinSettings,
    /// Where it finds the challenger's game, when it was given none.
    pub library: Option<&'a LibraryLookup<'a>>,
}

/// The content file and core of a channel's game, or why there are none.
pub type LibraryLookup<'a> = dyn Fn(&Channel) -> Result<(PathBuf, PathBuf), String> + 'a;

/// The channel a player of a library waits in: no game's.
fn library_channel() -> Channel {
    Channel {
        identity: Identity {
            protocol_version: PROTOCOL_VERSION,
            core_name: "any core".into(),
            core_version: String::new(),
            content_hash: 0,
        },
        game: "any game of a library".into(),
    }
}

/// Enters the lobby of `link` in the channel of the game `settings` play,
/// challenges or accepts as told, plays the match and leaves. The wait
/// shows on the connecting screen, whose Cancel withdraws a challenge.
pub fn lobby_match(
    link: &NatsLink,
    settings: &LobbySettings<'_>,
    outputs: &LiveOutputs<'_>,
    options: &LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    check_name(settings.name).map_err(|message| AppError::BadArgument { message })?;
    if let Some(opponent) = settings.intent.opponent() {
        check_name(opponent).map_err(|message| AppError::BadArgument { message })?;
        if opponent == settings.name {
            return Err(AppError::BadArgument {
                message: "--challenge and --accept name another player, not yourself".into(),
            });
        }
    }
    if settings.library.is_some() && matches!(settings.intent, Intent::Challenge(_)) {
        return Err(AppError::BadArgument {
            message: "--library waits for a challenge: give --accept-any or --accept NAME, or --core and --rom to challenge".into(),
        });
    }
    let channel = match settings.library {
        Some(_) => library_channel(),
        None => channel_of(&settings.join.common.game)?,
    };
    let me = settings.name.to_string();
    let identity = Arc::new(LobbyIdentity::of_this_machine()?);
    let link_secret = crate::live::connect::link_secret()?;
    let inbox = hear_inbox(link, &me)?;
    let present = Present::enter(
        link,
        &identity,
        Presence {
            name: me.clone(),
            channel: channel.clone(),
            status: Status::Idle,
            playing: None,
            library: settings.library.is_some(),
        },
    )?;
    writeln!(
        out,
        "in the lobby as {me} (key {}), in the channel of {}",
        identity.key().fingerprint(),
        channel.describe()
    )?;
    let mut screen = outputs.front_end.connecting(&settings.intent.awaited())?;
    let mut lobby = Lobby {
        link,
        link_args: &settings.join.common.link,
        identity: &identity,
        link_secret: &link_secret,
        opponent_key: None,
        me,
        channel,
        inbox,
        library: settings.library,
        started: Instant::now(),
        wait: settings.wait,
        screen: screen.as_mut(),
    };
    let met = lobby.meet(&settings.intent, out);
    drop(lobby);
    let played = met.and_then(|met| {
        let Some(met) = met else {
            return cancelled_before_the_match(out);
        };
        present.set(Status::InMatch, Some(met.playing.clone()));
        let Met {
            paired,
            _signal,
            game,
            peer_link_key,
            ..
        } = met;
        let mut join = settings.join.clone();
        if let Some((core, rom)) = game {
            writeln!(out, "playing {} with {}", rom.display(), core.display())?;
            join.common.game.core = core;
            join.common.game.rom = Some(rom);
        }
        // The match's exchange is bound to both identities: each side
        // plays only with the key the other signed in the lobby.
        join.common.peer_key = Some(Fingerprint::of_key(&peer_link_key));
        join.common.link_secret = Some(link_secret.clone());
        play_paired(&join, paired, outputs, screen.as_mut(), options, out)
    });
    present.leave(link);
    played
}

/// A message heard, and the key that signed it for our subject.
struct Signed {
    envelope: Envelope,
    key: LobbyKey,
}

/// What is said to `me`, signed for its subject, each signing key within
/// its budget (nobody can spend another's); the unsigned and forged are
/// dropped.
fn hear_inbox(link: &NatsLink, me: &str) -> Result<Heard<Signed>, NatsError> {
    let budget = Mutex::new(SenderBudget::new(
        SENDER_BURST,
        SENDER_REFILL_US,
        MAX_SENDERS,
    ));
    let started = Instant::now();
    let subject = inbox_subject(me);
    link.listen(subject.clone(), INBOX_CAPACITY, move |payload| {
        // Bounded before the signature is checked: a big payload costs
        // no hashing.
        if payload.len() > netcode::lobby::MAX_MESSAGE_BYTES + identity::TRAILER_BYTES {
            return None;
        }
        let (key, body) = identity::open(&subject, payload).ok()?;
        let envelope = Envelope::decode(body).ok()?;
        let now_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        let sender: String = key.0.iter().map(|byte| format!("{byte:02x}")).collect();
        let admitted = budget.lock().ok()?.admit(&sender, now_us);
        admitted.then_some(Signed { envelope, key })
    })
}

/// Sends `message` from `from` to `to`'s subject, signed by `identity`
/// for that subject.
fn tell(
    link: &NatsLink,
    identity: &LobbyIdentity,
    from: &str,
    to: &str,
    message: LobbyMessage,
    link_key: Option<PublicKey>,
) -> Result<(), AppError> {
    let envelope = Envelope {
        from: from.to_string(),
        message,
        link_key,
    };
    let client = link.client();
    let subject = inbox_subject(to);
    let sealed = identity.seal_message(to, &envelope);
    link.run(async move {
        client
            .publish(subject, sealed.into())
            .await
            .map_err(NatsError::request("a lobby message"))
    })??;
    Ok(())
}

/// `name`'s presence, if listed and signed for its name, and its key.
fn presence_of(link: &NatsLink, name: &str) -> Result<Option<(Presence, LobbyKey)>, AppError> {
    let js = link.jetstream();
    let key = name.to_string();
    let value = link.run(async move {
        let bucket = js.get_key_value(PRESENCE_BUCKET).await.ok()?;
        bucket.get(key).await.ok().flatten()
    })?;
    Ok(value.and_then(|bytes| {
        let (key, body) = identity::open(&presence_context(name), &bytes).ok()?;
        let presence = Presence::decode(body).ok().filter(|p| p.name == name)?;
        Some((presence, key))
    }))
}

/// The channel of the game `game` names: its core and content.
pub fn channel_of(game: &GameArgs) -> Result<Channel, AppError> {
    let opened = crate::engine::open_game(game)?;
    Ok(Channel {
        identity: identity_of(opened.as_ref(), game)?,
        game: opened.title(),
    })
}

/// A player in the lobby, waiting for its opponent.
struct Lobby<'a> {
    link: &'a NatsLink,
    /// The game socket's transport and conditioner.
    link_args: &'a LinkArgs,
    identity: &'a LobbyIdentity,
    /// This side's secret of the match's key exchange: its public key
    /// rides in our signed challenge or accept.
    link_secret: &'a LinkSecret,
    /// The key of the opponent's presence when first seen: a presence or
    /// answer under its name signed by another key is refused.
    opponent_key: Option<LobbyKey>,
    me: String,
    channel: Channel,
    inbox: Heard<Signed>,
    library: Option<&'a LibraryLookup<'a>>,
    started: Instant,
    wait: Duration,
    /// Shows the wait; its Cancel ends it.
    screen: &'a mut dyn ConnectingScreen,
}

/// Two players who agreed to play, on the path between them.
struct Met {
    paired: Paired,
    playing: MatchInProgress,
    /// The core and content found in the library, if it was looked in.
    game: Option<(PathBuf, PathBuf)>,
    /// The key the opponent signed for its side of the match's exchange.
    peer_link_key: PublicKey,
    /// The path finding's subjects, kept through the match's handshake
    /// (the other side may still be reading its last messages).
    _signal: NatsSignal,
}

/// How a wait in the lobby ended, when not with a match.
enum Waited {
    /// The player cancelled on the connecting screen.
    Cancelled,
    /// Ctrl-C, or `--wait-s` passed.
    Failed(AppError),
}

impl Lobby<'_> {
    /// The pairing `intent` asks for; none when the player cancelled.
    fn meet(&mut self, intent: &Intent, out: &mut dyn Write) -> Result<Option<Met>, AppError> {
        let met = match intent {
            Intent::Challenge(opponent) => self.challenge(opponent, out),
            Intent::AcceptAny => self.accept(None, out),
            Intent::AcceptFrom(challenger) => self.accept(Some(challenger), out),
        };
        match met {
            Ok(met) => Ok(Some(met)),
            Err(Waited::Cancelled) => Ok(None),
            Err(Waited::Failed(error)) => Err(error),
        }
    }

    /// Sends `message` to `to`'s subject.
    fn tell(&self, to: &str, message: LobbyMessage) -> Result<(), AppError> {
        let link_key = matches!(
            message,
            LobbyMessage::Challenge { .. } | LobbyMessage::Accept { .. }
        )
        .then(|| self.link_secret.public_key());
        tell(self.link, self.identity, &self.me, to, message, link_key)
    }

    /// `name`'s presence, if listed, and its key.
    fn presence_of(&self, name: &str) -> Result<Option<(Presence, LobbyKey)>, AppError> {
        presence_of(self.link, name)
    }

    /// `opponent`'s key as first seen: another is refused.
    fn pin_opponent(&mut self, opponent: &str, key: LobbyKey) -> Result<(), AppError> {
        match self.opponent_key {
            Some(pinned) if pinned != key => Err(AppError::Room {
                message: format!(
                    "a presence of {opponent} is signed by key {}, not by {opponent}'s {}: refused (someone else poses under the name)",
                    key.fingerprint(),
                    pinned.fingerprint()
                ),
            }),
            _ => {
                self.opponent_key = Some(key);
                Ok(())
            }
        }
    }

    /// Whether the wait for `what` ends now: cancelled, interrupted, or
    /// too long.
    fn waited_too_long(&mut self, what: &str) -> Option<Waited> {
        let waited = self.started.elapsed();
        if self
            .screen
            .show(ConnectStep::FindingHost, waited, self.wait)
        {
            return Some(Waited::Cancelled);
        }
        if crate::live::options::interrupted() {
            return Some(Waited::Failed(AppError::Room {
                message: format!("interrupted while waiting for {what}"),
            }));
        }
        (waited >= self.wait).then(|| {
            Waited::Failed(AppError::Room {
                message: format!("{what} did not come in time (see --wait-s)"),
            })
        })
    }

    /// Challenges `opponent` until it accepts (then hosts), declines, or
    /// the wait ends (then withdraws the challenge).
    fn challenge(&mut self, opponent: &str, out: &mut dyn Write) -> Result<Met, Waited> {
        let id = format!("{:016x}", u64::from_le_bytes(random_bytes()?));
        let signal = NatsSignal::open(
            self.link,
            signal_subject(&id, &self.me),
            signal_subject(&id, opponent),
        )?;
        let challenge = LobbyMessage::Challenge {
            id: id.clone(),
            channel: self.channel.key(),
        };
        let mut said_waiting = false;
        let mut last_sent: Option<Instant> = None;
        loop {
            if let Some(ended) = self.waited_too_long(&format!("{opponent}'s answer")) {
                let _ = self.tell(opponent, LobbyMessage::Cancel { id });
                return Err(ended);
            }
            if last_sent.is_none_or(|at| at.elapsed() >= CHALLENGE_AGAIN) {
                last_sent = Some(Instant::now());
                match self.presence_of(opponent)? {
                    None => {
                        if !said_waiting {
                            writeln!(out, "waiting for {opponent} to enter the lobby")?;
                            said_waiting = true;
                        }
                    }
                    Some((theirs, key)) => {
                        self.pin_opponent(opponent, key)?;
                        if !theirs.library && theirs.channel.key() != self.channel.key() {
                            return Err(Waited::Failed(AppError::Room {
                                message: format!(
                                    "{opponent} is in the channel of {}, not of {}: you cannot play each other",
                                    theirs.channel.describe(),
                                    self.channel.describe()
                                ),
                            }));
                        }
                        self.tell(opponent, challenge.clone())?
                    }
                }
            }
            while let Some(Signed {
                envelope: heard,
                key,
            }) = self.inbox.try_next()?
            {
                // An answer counts only signed by the key of the
                // opponent's presence.
                let from_opponent = heard.from == opponent && self.opponent_key == Some(key);
                match heard.message {
                    LobbyMessage::Accept { id: answered } if from_opponent && answered == id => {
                        // An accept without its side's key binds nothing.
                        let Some(peer_link_key) = heard.link_key else {
                            continue;
                        };
                        writeln!(out, "{opponent} accepted: finding the path")
                            .map_err(AppError::from)?;
                        let role = IceRole::Controlling;
                        return Ok(self.connect(opponent, signal, role, peer_link_key)?);
                    }
                    LobbyMessage::Decline {
                        id: answered,
                        reason,
                    } if from_opponent && answered == id => {
                        return Err(Waited::Failed(AppError::Room {
                            message: format!("{opponent} declined the challenge: {reason}"),
                        }))
                    }
                    LobbyMessage::Challenge { id: theirs, .. } => self.tell(
                        &heard.from,
                        LobbyMessage::Decline {
                            id: theirs,
                            reason: format!("{} is challenging someone else", self.me),
                        },
                    )?,
                    _ => {}
                }
            }
            std::thread::sleep(POLL);
        }
    }

    /// Accepts the first challenge of a player listed in our channel, or
    /// only `challenger`'s if named (then joins it); one of another game,
    /// or of another player than the one named, is declined, saying why.
    fn accept(&mut self, challenger: Option<&str>, out: &mut dyn Write) -> Result<Met, Waited> {
        let awaited = challenger.map_or_else(
            || "a challenge".to_string(),
            |name| format!("{name}'s challenge"),
        );
        writeln!(out, "waiting for {awaited}").map_err(AppError::from)?;
        loop {
            if let Some(ended) = self.waited_too_long(&awaited) {
                return Err(ended);
            }
            while let Some(Signed {
                envelope: heard,
                key,
            }) = self.inbox.try_next()?
            {
                let LobbyMessage::Challenge { id, channel } = heard.message else {
                    continue;
                };
                let from = heard.from;
                if let Some(named) = challenger.filter(|name| *name != from) {
                    let reason = format!("{} is about to play {named}", self.me);
                    self.tell(&from, LobbyMessage::Decline { id, reason })?;
                    continue;
                }
                if self.library.is_none() && channel != self.channel.key() {
                    let reason = format!("{} plays {}", self.me, self.channel.describe());
                    self.tell(&from, LobbyMessage::Decline { id, reason })?;
                    continue;
                }
                // Its presence in the challenge's channel, signed by the
                // challenge's key, vouches for it: a made-up name costs one
                // look-up.
                let Some((theirs, _)) = self
                    .presence_of(&from)?
                    .filter(|(theirs, signer)| theirs.channel.key() == channel && *signer == key)
                else {
                    continue;
                };
                let Some(peer_link_key) = heard.link_key else {
                    continue;
                };
                let game = match self.library.map(|lookup| lookup(&theirs.channel)) {
                    None => None,
                    Some(Ok(found)) => Some(found),
                    Some(Err(reason)) => {
                        writeln!(out, "declined {from}'s challenge: {reason}")
                            .map_err(AppError::from)?;
                        self.tell(&from, LobbyMessage::Decline { id, reason })?;
                        continue;
                    }
                };
                let signal = NatsSignal::open(
                    self.link,
                    signal_subject(&id, &self.me),
                    signal_subject(&id, &from),
                )?;
                self.tell(&from, LobbyMessage::Accept { id })?;
                writeln!(out, "accepted {from}'s challenge: finding the path")
                    .map_err(AppError::from)?;
                let met = self.connect(&from, signal, IceRole::Controlled, peer_link_key)?;
                return Ok(Met { game, ..met });
            }
            std::thread::sleep(POLL);
        }
    }

    /// Finds the path to `opponent` with ICE over the match's subjects.
    fn connect(
        &self,
        opponent: &str,
        mut signal: NatsSignal,
        role: IceRole,
        peer_link_key: PublicKey,
    ) -> Result<Met, AppError> {
        let config = crate::live::rooms::SignalArgs::default().ice_config()?;
        let transport = bind_ipv4(self.link_args, 0)?;
        let (transport, path) = connect_ice(transport, &mut signal, config, role)?;
        let hosting = role == IceRole::Controlling;
        let paired = match hosting {
            true => Paired::Host(Box::new(transport)),
            false => Paired::Join(Box::new(FoundHost {
                address: path.remote,
                transport,
                label: format!("{opponent}'s match from the lobby"),
                room: None,
                next: None,
            })),
        };
        Ok(Met {
            paired,
            playing: MatchInProgress {
                opponent: opponent.to_string(),
                hosting,
                started_unix: now_unix(),
            },
            game: None,
            peer_link_key,
            _signal: signal,
        })
    }
}

impl<T: Into<AppError>> From<T> for Waited {
    fn from(error: T) -> Waited {
        Waited::Failed(error.into())
    }
}
