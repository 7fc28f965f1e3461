//! The [`SignalChannel`] over NATS (feature `broadcast`): two machines that
//! met in the lobby find their path with ICE by publishing to each other's
//! subject, so no signaling server besides the lobby's is needed. Each side
//! hears its own subject and says to the other's.

use crate::net::nats::{Heard, NatsError, NatsLink};
use crate::net::signal::{SignalChannel, SignalError};

/// The longest signal read: ICE's credentials and candidates are far
/// shorter.
pub const MAX_SIGNAL_BYTES: usize = 2048;

/// Signals waiting to be read at most: more are dropped (ICE sends again).
const MAX_WAITING: usize = 256;

/// One side of a signaling channel over NATS.
pub struct NatsSignal {
    /// What we say, in order: one task publishes them one after another.
    outgoing: tokio::sync::mpsc::UnboundedSender<String>,
    heard: Heard<String>,
}

impl NatsSignal {
    /// Opens the channel on `link`: hears `listen` (already subscribed when
    /// this returns, so nothing the peer sends later is missed) and says
    /// to `speak`. Messages that are not short text are dropped.
    pub fn open(link: &NatsLink, listen: String, speak: String) -> Result<NatsSignal, NatsError> {
        let heard = link.listen(listen, MAX_WAITING, |payload| {
            (payload.len() <= MAX_SIGNAL_BYTES)
                .then(|| std::str::from_utf8(payload).ok().map(str::to_string))
                .flatten()
        })?;
        let (outgoing, mut queue) = tokio::sync::mpsc::unbounded_channel::<String>();
        let client = link.client();
        link.spawn(async move {
            while let Some(text) = queue.recv().await {
                if client.publish(speak.clone(), text.into()).await.is_err() {
                    return;
                }
            }
            let _ = client.flush().await;
        })?;
        Ok(NatsSignal { outgoing, heard })
    }
}

impl SignalChannel for NatsSignal {
    fn send(&mut self, message: &str) -> Result<(), SignalError> {
        self.outgoing
            .send(message.to_string())
            .map_err(|_| SignalError::Server("the NATS connection closed".into()))
    }

    fn try_receive(&mut self) -> Result<Option<String>, SignalError> {
        self.heard
            .try_next()
            .map_err(|error| SignalError::Server(error.to_string()))
    }
}
