//! A NATS connection for code that never awaits (the frame loop): the
//! async-nats client lives on its own thread, in a current-thread tokio
//! runtime, and callers hand it jobs, waiting for an answer ([`NatsLink::run`])
//! or not ([`NatsLink::spawn`]). Credentials ride in the URL
//! (`nats://user:password@host:4222`, or `nats://token@host:4222`).

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

pub use async_nats;

/// A job for the connection's thread.
type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

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
                        .name("netcade");
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
                    let _ = client.flush().await;
                });
            })
            .map_err(|error| NatsError::Unreachable {
                url: url.to_string(),
                reason: error.to_string(),
            })?;
        let (client, jetstream) = connected.recv().map_err(|_| NatsError::Gone)??;
        Ok(NatsLink {
            client,
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

    /// Runs `job` on the connection's thread and waits for its answer.
    pub fn run<T: Send + 'static>(
        &self,
        job: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, NatsError> {
        let (answer, answered) = mpsc::sync_channel(1);
        self.spawn(async move {
            let _ = answer.send(job.await);
        })?;
        answered.recv().map_err(|_| NatsError::Gone)
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
