//! A NATS connection for code that never awaits (the frame loop): the
//! async-nats client lives on its own thread, in a current-thread tokio
//! runtime, and callers hand it jobs, waiting for an answer ([`NatsLink::run`])
//! or not ([`NatsLink::spawn`]). Credentials ride in the URL
//! (`nats://user:password@host:4222`, or `nats://token@host:4222`).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use async_nats;

/// A job for the connection's thread.
type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

/// How long the client tries to reconnect to a server that went away
/// before the link counts as lost: every wait on it ends then.
pub const RECONNECT_BUDGET: Duration = Duration::from_secs(10);

/// How often the client pings the server: one that stops answering (frozen,
/// or its network gone) is noticed within a few of these.
const PING_INTERVAL: Duration = Duration::from_secs(2);

/// How often a wait looks whether to give up.
const WAIT_STEP: Duration = Duration::from_millis(50);

/// How long closing the link may spend sending what is buffered.
const CLOSING_FLUSH: Duration = Duration::from_secs(1);

/// How often a subscription nobody reads any more is noticed and ended.
pub const LISTEN_CHECK: Duration = Duration::from_millis(500);

/// When the connection went down, while it is down.
type Outage = Arc<Mutex<Option<Instant>>>;

/// What went wrong talking to a NATS server, said once and clearly.
#[derive(Debug, thiserror::Error)]
pub enum NatsError {
    /// The URL is not a NATS server's.
    #[error("{url} is not a NATS server address (nats://[USER:PASSWORD@]HOST[:PORT]): {reason}")]
    BadUrl {
        /// What was given.
        url: String,
        /// Why it does not parse.
        reason: String,
    },
    /// Nothing answers there.
    #[error(
        "cannot reach the NATS server at {url}: {reason} (is nats-server running there, with -js?)"
    )]
    Unreachable {
        /// The server.
        url: String,
        /// What the client said.
        reason: String,
    },
    /// The server refused the user, password or token.
    #[error("the NATS server at {url} refused our credentials ({reason}): check USER:PASSWORD in the URL")]
    Refused {
        /// The server.
        url: String,
        /// What the server said.
        reason: String,
    },
    /// A request the server answered with an error (or did not answer).
    #[error("NATS: {what}: {reason}")]
    Request {
        /// What was asked.
        what: String,
        /// The answer.
        reason: String,
    },
    /// The connection's thread stopped.
    #[error("the NATS connection's thread stopped")]
    Gone,
    /// The server went away and did not come back within the budget.
    #[error("the NATS server at {url} went away: no connection for {} s", RECONNECT_BUDGET.as_secs())]
    Lost {
        /// The server.
        url: String,
    },
    /// A wait was given up (an interrupt): nothing is wrong with the server.
    #[error("stopped waiting for the NATS server")]
    Abandoned,
}

impl NatsError {
    /// A failed request, for `map_err`.
    pub fn request<E: std::fmt::Display>(what: impl Into<String>) -> impl FnOnce(E) -> NatsError {
        let what = what.into();
        move |error| NatsError::Request {
            what,
            reason: error.to_string(),
        }
    }

    /// Whether the user must change something (the URL or credentials).
    pub fn is_user_mistake(&self) -> bool {
        matches!(self, NatsError::BadUrl { .. } | NatsError::Refused { .. })
    }
}

/// A connected client and the thread running it. Dropping it stops jobs
/// still running (finish them with [`NatsLink::run`] first).
pub struct NatsLink {
    client: async_nats::Client,
    /// The server, as the user named it (credentials and all: it is theirs).
    url: String,
    outage: Outage,
    /// Says when a wait is to be given up (an interrupt, from the layers
    /// above, which own the signals).
    give_up: Mutex<Option<Box<dyn Fn() -> bool + Send>>>,
    jetstream: async_nats::jetstream::Context,
    jobs: Option<tokio::sync::mpsc::UnboundedSender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl NatsLink {
    /// Connects to `url` within `timeout`: one attempt, so a server that is
    /// down or refuses us is an error at once rather than a silent retry.
    pub fn connect(url: &str, timeout: Duration) -> Result<NatsLink, NatsError> {
        let address: async_nats::ServerAddr = url.parse().map_err(|error| NatsError::BadUrl {
            url: url.to_string(),
            reason: format!("{error}"),
        })?;
        let (jobs, mut queue) = tokio::sync::mpsc::unbounded_channel::<Job>();
        let (answer, connected) = mpsc::channel();
        let shown = url.to_string();
        let outage = Outage::default();
        let seen = outage.clone();
        let thread = std::thread::Builder::new()
            .name("nats".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(error) => {
                        let _ = answer.send(Err(NatsError::Unreachable {
                            url: shown,
                            reason: error.to_string(),
                        }));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let mut options = async_nats::ConnectOptions::new()
                        .connection_timeout(timeout)
                        .ping_interval(PING_INTERVAL)
                        .name("netcade")
                        .event_callback(move |event| {
                            note_event(&seen, &event);
                            async {}
                        });
                    // The client leaves the URL's credentials unsent.
                    if let Some(user) = address.username() {
                        options = match address.password() {
                            Some(password) => {
                                options.user_and_password(user.into(), password.into())
                            }
                            None => options.token(user.into()),
                        };
                    }
                    let client = match options.connect(address).await {
                        Ok(client) => client,
                        Err(error) => {
                            let _ = answer.send(Err(connect_error(&shown, &error)));
                            return;
                        }
                    };
                    // A context spawns a task: it is made on this thread.
                    let jetstream = async_nats::jetstream::new(client.clone());
                    let _ = answer.send(Ok((client.clone(), jetstream)));
                    while let Some(job) = queue.recv().await {
                        tokio::spawn(job);
                    }
                    // A server that went away takes nothing more.
                    let _ = tokio::time::timeout(CLOSING_FLUSH, client.flush()).await;
                });
            })
            .map_err(|error| NatsError::Unreachable {
                url: url.to_string(),
                reason: error.to_string(),
            })?;
        let (client, jetstream) = connected.recv().map_err(|_| NatsError::Gone)??;
        Ok(NatsLink {
            client,
            url: url.to_string(),
            outage,
            give_up: Mutex::new(None),
            jetstream,
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    /// The client, to clone into jobs.
    pub fn client(&self) -> async_nats::Client {
        self.client.clone()
    }

    /// The JetStream context, to clone into jobs.
    pub fn jetstream(&self) -> async_nats::jetstream::Context {
        self.jetstream.clone()
    }

    /// Makes every wait on the link end ([`NatsError::Abandoned`]) once
    /// `give_up` says so: an interrupt must end a command whose server went
    /// quiet.
    pub fn give_up_when(&self, give_up: impl Fn() -> bool + Send + 'static) {
        if let Ok(mut slot) = self.give_up.lock() {
            *slot = Some(Box::new(give_up));
        }
    }

    /// Whether the server went away longer than [`RECONNECT_BUDGET`] ago
    /// (the client tried to reconnect all along).
    pub fn lost(&self) -> bool {
        self.outage
            .lock()
            .is_ok_and(|since| since.is_some_and(|since| since.elapsed() >= RECONNECT_BUDGET))
    }

    /// Why a wait ends early: the server is lost, or the wait was given up.
    pub fn why_stop(&self) -> Option<NatsError> {
        if self.lost() {
            return Some(NatsError::Lost {
                url: self.url.clone(),
            });
        }
        let given_up = self
            .give_up
            .lock()
            .is_ok_and(|give_up| give_up.as_ref().is_some_and(|give_up| give_up()));
        given_up.then_some(NatsError::Abandoned)
    }

    /// Waits for what `answered` brings, until the link is lost or the wait
    /// given up.
    pub fn wait<T>(&self, answered: &mpsc::Receiver<T>) -> Result<T, NatsError> {
        self.wait_until(answered, None)
    }

    /// [`NatsLink::wait`], but at most `limit` (after which it is given
    /// up), whatever [`NatsLink::give_up_when`] says: for the last words of
    /// a command that was interrupted.
    pub fn wait_within<T>(
        &self,
        answered: &mpsc::Receiver<T>,
        limit: Duration,
    ) -> Result<T, NatsError> {
        self.wait_until(answered, Some(Instant::now() + limit))
    }

    fn wait_until<T>(
        &self,
        answered: &mpsc::Receiver<T>,
        deadline: Option<Instant>,
    ) -> Result<T, NatsError> {
        loop {
            match answered.recv_timeout(WAIT_STEP) {
                Ok(answer) => return Ok(answer),
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(NatsError::Gone),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let why = match deadline {
                        None => self.why_stop(),
                        Some(deadline) if Instant::now() >= deadline => Some(NatsError::Abandoned),
                        Some(_) => self.lost().then(|| NatsError::Lost {
                            url: self.url.clone(),
                        }),
                    };
                    if let Some(why) = why {
                        return Err(why);
                    }
                }
            }
        }
    }

    /// [`NatsLink::run`] waiting at most `limit` (see
    /// [`NatsLink::wait_within`]).
    pub fn run_within<T: Send + 'static>(
        &self,
        job: impl Future<Output = T> + Send + 'static,
        limit: Duration,
    ) -> Result<T, NatsError> {
        let (answer, answered) = mpsc::sync_channel(1);
        self.spawn(async move {
            let _ = answer.send(job.await);
        })?;
        self.wait_within(&answered, limit)
    }

    /// Runs `job` on the connection's thread and waits for its answer (see
    /// [`NatsLink::wait`]).
    pub fn run<T: Send + 'static>(
        &self,
        job: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, NatsError> {
        let (answer, answered) = mpsc::sync_channel(1);
        self.spawn(async move {
            let _ = answer.send(job.await);
        })?;
        self.wait(&answered)
    }

    /// Subscribes to `subject` and hands what `admit` makes of each message
    /// (`None`: dropped) to the [`Heard`] returned, at most `capacity`
    /// waiting (more are dropped: a flood costs its messages, never
    /// memory). The subscription is made before this returns, and ends
    /// once the `Heard` is dropped (noticed within [`LISTEN_CHECK`]).
    pub fn listen<T: Send + 'static>(
        &self,
        subject: String,
        capacity: usize,
        mut admit: impl FnMut(&[u8]) -> Option<T> + Send + 'static,
    ) -> Result<Heard<T>, NatsError> {
        use futures_util::StreamExt;
        let client = self.client();
        let what = format!("the subject {subject}");
        let mut subscriber = self
            .run(async move { client.subscribe(subject).await })?
            .map_err(NatsError::request(what))?;
        let (heard, receiver) = mpsc::sync_channel(capacity);
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        self.spawn(async move {
            while !stopped.load(Ordering::Relaxed) {
                let message = match tokio::time::timeout(LISTEN_CHECK, subscriber.next()).await {
                    Ok(Some(message)) => message,
                    Ok(None) => break,
                    Err(_) => continue,
                };
                let Some(admitted) = admit(&message.payload) else {
                    continue;
                };
                if let Err(mpsc::TrySendError::Disconnected(_)) = heard.try_send(admitted) {
                    break;
                }
            }
            let _ = subscriber.unsubscribe().await;
        })?;
        Ok(Heard { receiver, stop })
    }

    /// Starts `job` on the connection's thread without waiting for it.
    pub fn spawn(&self, job: impl Future<Output = ()> + Send + 'static) -> Result<(), NatsError> {
        self.jobs
            .as_ref()
            .ok_or(NatsError::Gone)?
            .send(Box::pin(job))
            .map_err(|_| NatsError::Gone)
    }
}

impl Drop for NatsLink {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What a subscription ([`NatsLink::listen`]) heard, as it waits to be read.
pub struct Heard<T> {
    receiver: mpsc::Receiver<T>,
    stop: Arc<AtomicBool>,
}

impl<T> Heard<T> {
    /// The next message admitted, if one waits (never blocks); an error
    /// once the connection's thread stopped.
    pub fn try_next(&self) -> Result<Option<T>, NatsError> {
        match self.receiver.try_recv() {
            Ok(message) => Ok(Some(message)),
            Err(mpsc::TryRecvError::Empty) => Ok(None),
            Err(mpsc::TryRecvError::Disconnected) => Err(NatsError::Gone),
        }
    }
}

impl<T> Drop for Heard<T> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The key-value bucket `bucket` whose entries expire after `ttl` without
/// a refresh, made if missing; made with `max_value_bytes`, the server
/// refuses bigger values (so a reader never fetches one).
pub async fn key_value_bucket(
    js: &async_nats::jetstream::Context,
    bucket: &str,
    ttl: Duration,
    max_value_bytes: Option<usize>,
) -> Result<async_nats::jetstream::kv::Store, NatsError> {
    use async_nats::jetstream::stream;
    if let Ok(store) = js.get_key_value(bucket).await {
        return Ok(store);
    }
    // The bucket's stream as `create_key_value` makes it, which first asks
    // for account details in a shape nats-server 2.9 does not answer.
    js.get_or_create_stream(stream::Config {
        name: format!("KV_{bucket}"),
        subjects: vec![format!("$KV.{bucket}.>")],
        max_messages_per_subject: 1,
        max_age: ttl,
        allow_rollup: true,
        deny_delete: true,
        allow_direct: true,
        discard: stream::DiscardPolicy::New,
        max_message_size: max_value_bytes
            .map_or(-1, |bytes| i32::try_from(bytes).unwrap_or(i32::MAX)),
        ..Default::default()
    })
    .await
    .map_err(NatsError::request(format!("the bucket {bucket}")))?;
    js.get_key_value(bucket)
        .await
        .map_err(NatsError::request(format!("the bucket {bucket}")))
}

/// Up to `limit` entries of `bucket` (key and value), none when it does
/// not exist: a listing is bounded, whatever the bucket holds.
pub async fn bucket_entries(
    js: &async_nats::jetstream::Context,
    bucket: &str,
    limit: usize,
) -> Result<Vec<(String, Vec<u8>)>, NatsError> {
    use futures_util::StreamExt;
    let Ok(store) = js.get_key_value(bucket).await else {
        return Ok(Vec::new());
    };
    let mut keys = store
        .keys()
        .await
        .map_err(NatsError::request(format!("the bucket {bucket}")))?
        .take(limit);
    let mut entries = Vec::new();
    while let Some(key) = keys.next().await {
        let Ok(key) = key else { continue };
        if let Ok(Some(value)) = store.get(key.clone()).await {
            entries.push((key, value.to_vec()));
        }
    }
    Ok(entries)
}

/// Keeps `outage` up to date with what the client says of its connection.
fn note_event(outage: &Outage, event: &async_nats::Event) {
    let Ok(mut since) = outage.lock() else {
        return;
    };
    match event {
        async_nats::Event::Connected => *since = None,
        async_nats::Event::Disconnected => {
            since.get_or_insert_with(Instant::now);
        }
        // Closed for good: as lost as can be.
        async_nats::Event::Closed => {
            *since = Some(
                Instant::now()
                    .checked_sub(RECONNECT_BUDGET)
                    .unwrap_or_else(Instant::now),
            );
        }
        _ => {}
    }
}

fn connect_error(url: &str, error: &async_nats::ConnectError) -> NatsError {
    use async_nats::ConnectErrorKind as Kind;
    let reason = error.to_string();
    match error.kind() {
        Kind::AuthorizationViolation | Kind::Authentication => NatsError::Refused {
            url: url.to_string(),
            reason,
        },
        Kind::ServerParse => NatsError::BadUrl {
            url: url.to_string(),
            reason,
        },
        _ => NatsError::Unreachable {
            url: url.to_string(),
            reason,
        },
    }
}
