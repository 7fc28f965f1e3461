//! A visit to the lobby for a window (the launcher's Lobby screen): a
//! thread of its own connects, keeps the player's presence, lists the
//! lobby every second and hears challenges, and the window reads what it
//! learnt through a channel, so nothing it waits on ever waits in the
//! window's thread. Accepting or making a challenge is a session's
//! (`lobby --accept NAME`, `--challenge NAME`), which enters the lobby
//! again under the same name once the visit has left.

use super::{
    channel_of, hear_inbox, list_lobby, presence_of, tell, LobbyIdentity, Present, Signed,
    HEARTBEAT,
};
use crate::engine::{AppError, GameArgs};
use netcode::lobby::{
    Channel, Listing, LobbyMessage, PendingChallenge, PendingChallenges, Presence, Status,
};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Challenges shown at most.
const MAX_PENDING: usize = 16;

/// How long a challenge not said again stays shown (its challenger says
/// it every 2 s).
const PENDING_KEPT: Duration = Duration::from_secs(5);

/// How often the thread looks at the window's requests and the subjects.
const POLL: Duration = Duration::from_millis(50);

/// What the lobby looks like now, as the visit last saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LobbyView {
    /// Our channel.
    pub channel: Channel,
    /// Everyone listed.
    pub listing: Listing,
    /// The challenges to us waiting for an answer.
    pub challenges: Vec<PendingChallenge>,
}

/// What the visit's thread says to the window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VisitEvent {
    /// In the lobby, and this is what it looks like.
    Now(LobbyView),
    /// The visit ended on this problem (a refused name, a lost server).
    Failed(String),
    /// Left: the name is free for a session to enter with.
    Left,
}

/// What the window asks of the visit's thread.
enum Request {
    Decline {
        to: String,
        id: String,
        reason: String,
    },
    Leave,
}

/// A visit under way; dropping it leaves the lobby too.
pub struct LobbyVisit {
    events: mpsc::Receiver<VisitEvent>,
    requests: mpsc::Sender<Request>,
}

impl LobbyVisit {
    /// Enters the lobby at `server` as `name`, in the channel of `game`
    /// (its core is loaded on the visit's thread to name the channel, and
    /// unloaded before the visit says anything).
    pub fn start(server: String, name: String, game: GameArgs) -> LobbyVisit {
        let (events, heard) = mpsc::channel();
        let (requests, asked) = mpsc::channel();
        std::thread::spawn(move || {
            let ended = visit(&server, &name, &game, &asked, &events);
            let last = match ended {
                Ok(()) => VisitEvent::Left,
                Err(error) => VisitEvent::Failed(crate::engine::error::error_chain(&error)),
            };
            let _ = events.send(last);
        });
        LobbyVisit {
            events: heard,
            requests,
        }
    }

    /// What the thread said since last asked, oldest first.
    pub fn events(&self) -> Vec<VisitEvent> {
        self.events.try_iter().collect()
    }

    /// Declines `from`'s challenge `id`, saying `reason`.
    pub fn decline(&self, from: &str, id: &str, reason: &str) {
        let _ = self.requests.send(Request::Decline {
            to: from.to_string(),
            id: id.to_string(),
            reason: reason.to_string(),
        });
    }

    /// Asks the thread to leave; [`VisitEvent::Left`] says it did.
    pub fn leave(&self) {
        let _ = self.requests.send(Request::Leave);
    }
}

impl Drop for LobbyVisit {
    fn drop(&mut self) {
        self.leave();
    }
}

/// The visit's thread: in the lobby until the window asks it to leave or
/// goes away.
fn visit(
    server: &str,
    name: &str,
    game: &GameArgs,
    asked: &mpsc::Receiver<Request>,
    events: &mpsc::Sender<VisitEvent>,
) -> Result<(), AppError> {
    netcode::lobby::check_name(name).map_err(|message| AppError::BadArgument { message })?;
    // Serialized: a core library is loaded once per process at a time.
    static OPENING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let channel = {
        let _one_at_a_time = OPENING.lock();
        channel_of(game)?
    };
    let link = crate::live::broadcast::connect(server)?;
    let identity = std::sync::Arc::new(LobbyIdentity::of_this_machine()?);
    let inbox = hear_inbox(&link, name)?;
    let present = Present::enter(
        &link,
        &identity,
        Presence {
            name: name.to_string(),
            channel: channel.clone(),
            status: Status::Idle,
            playing: None,
            library: false,
        },
    )?;
    let started = Instant::now();
    let now_us = || u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    let keep_us = u64::try_from(PENDING_KEPT.as_micros()).unwrap_or(u64::MAX);
    let mut challenges = PendingChallenges::new(MAX_PENDING, keep_us);
    let mut listed: Option<(Instant, Listing)> = None;
    let ended = loop {
        let mut changed = false;
        match asked.recv_timeout(POLL) {
            Ok(Request::Leave) | Err(mpsc::RecvTimeoutError::Disconnected) => break Ok(()),
            Ok(Request::Decline { to, id, reason }) => {
                challenges.remove(&to, &id);
                changed = true;
                let decline = LobbyMessage::Decline { id, reason };
                if let Err(error) = tell(&link, &identity, name, &to, decline, None) {
                    break Err(error);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let us = Us {
            link: &link,
            identity: &identity,
            me: name,
            channel: &channel,
        };
        match heard_challenges(&us, &inbox, &mut challenges, now_us()) {
            Ok(news) => changed |= news,
            Err(error) => break Err(error),
        }
        changed |= challenges.expire(now_us());
        if listed
            .as_ref()
            .is_none_or(|(at, _)| at.elapsed() >= HEARTBEAT)
        {
            match list_lobby(&link) {
                Ok(listing) => {
                    changed |= listed.as_ref().is_none_or(|(_, seen)| *seen != listing);
                    listed = Some((Instant::now(), listing));
                }
                Err(error) => break Err(error),
            }
        }
        if let (true, Some((_, listing))) = (changed, &listed) {
            let view = LobbyView {
                channel: channel.clone(),
                listing: listing.clone(),
                challenges: challenges.waiting().to_vec(),
            };
            if events.send(VisitEvent::Now(view)).is_err() {
                break Ok(());
            }
        }
    };
    present.leave(&link);
    ended
}

/// Who the visit is, to answer with.
#[derive(Clone, Copy)]
struct Us<'a> {
    link: &'a crate::net::nats::NatsLink,
    identity: &'a LobbyIdentity,
    me: &'a str,
    channel: &'a Channel,
}

/// Takes in what was said to us: a challenge of a player listed in our
/// channel waits for the window's answer, one of another game is declined
/// at once, a withdrawn one goes; whether what waits changed.
fn heard_challenges(
    us: &Us<'_>,
    inbox: &crate::net::nats::Heard<Signed>,
    challenges: &mut PendingChallenges,
    now_us: u64,
) -> Result<bool, AppError> {
    let Us {
        link,
        identity,
        me,
        channel,
    } = *us;
    let mut changed = false;
    while let Some(Signed {
        envelope: heard,
        key,
    }) = inbox.try_next()?
    {
        let from = heard.from;
        match heard.message {
            LobbyMessage::Challenge {
                id,
                channel: theirs,
            } if theirs != channel.key() => {
                let reason = format!("{me} plays {}", channel.describe());
                tell(
                    link,
                    identity,
                    me,
                    &from,
                    LobbyMessage::Decline { id, reason },
                    None,
                )?;
            }
            LobbyMessage::Challenge { id, .. } => {
                // Its presence in our channel, signed by the challenge's
                // key, vouches for it, looked up once per challenge, not
                // at each repeat.
                if !challenges.is_pending(&from, &id) {
                    let vouched = presence_of(link, &from)?;
                    if vouched.is_none_or(|(theirs, signer)| {
                        theirs.channel.key() != channel.key() || signer != key
                    }) {
                        continue;
                    }
                }
                changed |= challenges.heard(&from, &id, now_us);
            }
            LobbyMessage::Cancel { id } if challenges.is_pending(&from, &id) => {
                // Only the challenger's own key withdraws its challenge.
                if presence_of(link, &from)?.is_some_and(|(_, signer)| signer == key) {
                    changed |= challenges.remove(&from, &id);
                }
            }
            LobbyMessage::Cancel { .. } => {}
            LobbyMessage::Accept { .. } | LobbyMessage::Decline { .. } => {}
        }
    }
    Ok(changed)
}
