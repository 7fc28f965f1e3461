//! The broadcaster's sink: the match's replay, written as the recorder
//! writes it but flushed every few frames, each flush published as one
//! message whose id names the frame it reaches (the stream drops a message
//! it already holds, so a restarted publisher cannot duplicate frames); a
//! savestate every ~10 s; the header when the watch starts; at the end the
//! whole replay into the object store.

use super::pieces::{piece_bytes, FIRST_HEADER, PIECE_HEADER};
use super::signing::{BroadcastSigner, MAX_TRAILER_BYTES};
use super::{
    matches_bucket, replays_bucket, subject, viewers_bucket, Part, LAST_WORDS, MATCHES_BUCKET,
    REPLAYS_BUCKET,
};
use crate::engine::sinks::recorder::replay_header;
use crate::engine::sinks::{FinalFrame, FrameSink, RelaySink};
use crate::engine::AppError;
use crate::live::spectator::RelayStart;
use crate::net::nats::async_nats::jetstream;
use crate::net::nats::async_nats::HeaderMap;
use crate::net::nats::{NatsError, NatsLink};
use netcode::checksum::Checksum;
use netcode::netplay::checkpoint_state::compress_checkpoint;
use netcode::replay::{EndReason, ReplayHeader, ReplayWriter};
use netcode::rollback::Frame;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// Frames per published flush: 100 ms at 60 fps, the delay the
/// broadcaster adds (measured in docs/measurements.md).
pub const FLUSH_FRAMES: u32 = 6;

/// Frames between savestates: ~10 s at 60 fps.
pub const STATE_EVERY_FRAMES: u32 = 600;

/// Messages waiting for the server at most (a minute and a half of
/// flushes): a server that falls further behind stops the broadcast.
const QUEUED_MESSAGES: usize = 1024;

/// What the broadcast did, shared with the command for its summary.
#[derive(Clone, Debug, Default)]
pub struct BroadcastStatus {
    /// Messages the server acknowledged.
    pub messages: u64,
    /// Their payload bytes.
    pub bytes: u64,
    /// Savestates published.
    pub states: u64,
    /// Messages (headers, savestates) sent in pieces: larger than the
    /// server takes in one.
    pub in_pieces: u64,
    /// The replay's object in the store, once kept.
    pub replay_object: Option<String>,
    /// The first failure, after which nothing more is published.
    pub failure: Option<String>,
}

/// A message on its way to the stream, or a request to say when all
/// before it were acknowledged.
enum Outgoing {
    Message {
        subject: String,
        id: String,
        payload: Vec<u8>,
        /// Piece i of n, for a message too large for one.
        piece: Option<(u32, u32)>,
    },
    Drained(std::sync::mpsc::SyncSender<()>),
}

/// See the module docs.
struct BroadcastSink {
    link: Arc<NatsLink>,
    name: String,
    /// The name and the match's own id, which message ids begin with.
    match_id: String,
    queue: tokio::sync::mpsc::Sender<Outgoing>,
    /// Signs every message (see `signing`).
    signer: BroadcastSigner,
    status: Arc<Mutex<BroadcastStatus>>,
    /// The header until the watch's first frame is known.
    waiting: Option<ReplayHeader>,
    writer: Option<ReplayWriter<Vec<u8>>>,
    /// Every byte of the replay, for the object store at the end (bounded
    /// by the replay format's own limits).
    replay: Vec<u8>,
    /// The frame of the last savestate published.
    last_state: Option<Frame>,
    /// The first frame the replay holds.
    start_frame: Frame,
    /// The listing of the match (JSON), refreshed with each savestate.
    listing: serde_json::Value,
    max_payload: usize,
}

/// The sink broadcasting the match `start` describes as `name` through
/// `link`.
pub fn broadcast_sink(
    link: Arc<NatsLink>,
    name: &str,
    start: RelayStart<'_>,
    status: Arc<Mutex<BroadcastStatus>>,
) -> Result<Box<dyn RelaySink + Send>, AppError> {
    let RelayStart {
        game,
        args,
        players,
        names,
        host_key,
    } = start;
    let header = replay_header(game, args, players, names, Vec::new())?;
    // Message ids name the match (its host) and the frame: a restarted
    // broadcaster's repeats are dropped, another match of the same name's
    // are not.
    let key = match host_key {
        Some(key) => key,
        None => crate::live::connect::link_secret()?.public_key(),
    };
    let match_id = format!("{}.{:016x}", name, Checksum::of(&key.0).0);
    let signer = BroadcastSigner::of_this_machine()?;
    let (queue, outgoing) = tokio::sync::mpsc::channel(QUEUED_MESSAGES);
    link.spawn(publish_in_order(link.jetstream(), outgoing, status.clone()))?;
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let listing = serde_json::json!({
        "match": name,
        "game": game.title(),
        "core": header.core_name,
        "content": header.content_name,
        "players": players,
        "started_unix": started,
    });
    let max_payload = link.client().server_info().max_payload;
    Ok(Box::new(BroadcastSink {
        link,
        name: name.to_string(),
        match_id,
        queue,
        signer,
        status,
        waiting: Some(header),
        writer: None,
        replay: Vec::new(),
        last_state: None,
        start_frame: Frame::ZERO,
        listing,
        max_payload,
    }))
}

/// Publishes what `outgoing` brings, in order, each acknowledged before
/// the next (so viewers see frames in order).
async fn publish_in_order(
    js: jetstream::Context,
    mut outgoing: tokio::sync::mpsc::Receiver<Outgoing>,
    status: Arc<Mutex<BroadcastStatus>>,
) {
    // Where the first piece of the message in pieces went.
    let mut first_piece = 0;
    while let Some(next) = outgoing.recv().await {
        let (subject, id, payload, piece) = match next {
            Outgoing::Message {
                subject,
                id,
                payload,
                piece,
            } => (subject, id, payload, piece),
            Outgoing::Drained(answer) => {
                let _ = answer.send(());
                continue;
            }
        };
        if status.lock().is_ok_and(|status| status.failure.is_some()) {
            continue;
        }
        let bytes = payload.len() as u64;
        let mut headers = HeaderMap::new();
        if let Some((index, count)) = piece {
            headers.insert(PIECE_HEADER, format!("{index}/{count}").as_str());
            if index > 1 {
                headers.insert(FIRST_HEADER, first_piece.to_string().as_str());
            }
        }
        let publish = jetstream::message::PublishMessage::build()
            .payload(payload.into())
            .headers(headers)
            .message_id(id);
        let acked = match js.send_publish(subject.clone(), publish).await {
            Ok(ack) => ack.await.map_err(|error| error.to_string()),
            Err(error) => Err(error.to_string()),
        };
        if let (Ok(ack), Some((1, _))) = (&acked, piece) {
            first_piece = ack.sequence;
        }
        if let Ok(mut status) = status.lock() {
            match acked {
                Ok(_) => {
                    status.messages += 1;
                    status.bytes += bytes;
                }
                Err(error) => status.failure = Some(format!("publishing to {subject}: {error}")),
            }
        }
    }
}

impl BroadcastSink {
    /// Queues `payload` for `part`, in pieces when the server would
    /// refuse it whole, each signed.
    fn send(&mut self, part: Part, id: String, payload: Vec<u8>) {
        let size = piece_bytes(self.max_payload)
            .saturating_sub(MAX_TRAILER_BYTES)
            .max(1);
        let count = payload.len().div_ceil(size).max(1) as u32;
        let pieces: Vec<&[u8]> = if count == 1 {
            vec![&payload]
        } else {
            if let Ok(mut status) = self.status.lock() {
                status.in_pieces += 1;
            }
            payload.chunks(size).collect()
        };
        let subject = subject(&self.name, part);
        for (index, piece) in (1..).zip(pieces) {
            let in_pieces = (count > 1).then_some((index, count));
            let message = Outgoing::Message {
                id: match count {
                    1 => format!("{}.{id}", self.match_id),
                    _ => format!("{}.{id}.{index}", self.match_id),
                },
                payload: self
                    .signer
                    .seal(&subject, in_pieces, piece, part == Part::Header),
                subject: subject.clone(),
                piece: in_pieces,
            };
            if self.queue.try_send(message).is_err() {
                self.fail("the NATS server fell behind: broadcast stopped".into());
                return;
            }
        }
    }

    fn fail(&mut self, failure: String) {
        if let Ok(mut status) = self.status.lock() {
            status.failure.get_or_insert(failure);
        }
    }

    /// Publishes what the writer flushed since the last call, as records
    /// reaching frame `end`.
    fn publish_flushed(&mut self, result: std::io::Result<()>, end: Frame) {
        if let Err(error) = result {
            self.fail(format!("the broadcast's replay: {error}"));
        }
        let Some(writer) = &mut self.writer else {
            return;
        };
        let flushed = std::mem::take(writer.output());
        if flushed.is_empty() {
            return;
        }
        self.replay.extend_from_slice(&flushed);
        self.send(Part::Records, format!("records.{}", end.number()), flushed);
    }

    /// Publishes the savestate of `frame` and refreshes the listing.
    fn publish_state(&mut self, frame: Frame, state: &[u8]) {
        self.last_state = Some(frame);
        let blob = compress_checkpoint(frame, state);
        if let Ok(mut status) = self.status.lock() {
            status.states += 1;
        }
        self.send(Part::State, format!("state.{}", frame.number()), blob);
        self.listing["frame"] = frame.number().into();
        let listing = serde_json::to_vec(&self.listing).unwrap_or_default();
        let (js, key) = (self.link.jetstream(), self.name.clone());
        let status = self.status.clone();
        let _ = self.link.spawn(async move {
            let listed = match matches_bucket(&js).await {
                Ok(bucket) => bucket
                    .put(key, listing.into())
                    .await
                    .map(|_| ())
                    .map_err(|error| format!("the bucket {MATCHES_BUCKET}: {error}")),
                Err(error) => Err(error.to_string()),
            };
            if let (Err(error), Ok(mut status)) = (listed, status.lock()) {
                status.failure.get_or_insert(error);
            }
        });
    }

    /// Waits until the server acknowledged everything queued (at most
    /// [`LAST_WORDS`]).
    fn drain(&mut self) {
        let (answer, drained) = std::sync::mpsc::sync_channel(1);
        if self.queue.try_send(Outgoing::Drained(answer)).is_ok() {
            if let Err(error) = self.link.wait_within(&drained, LAST_WORDS) {
                self.fail(format!("the last messages: {error}"));
            }
        }
    }

    /// Keeps the whole replay in the object store and takes the match off
    /// the list.
    fn keep_replay(&mut self) -> Result<String, NatsError> {
        let js = self.link.jetstream();
        let object = format!("{}.ncr", self.name);
        let (key, replay) = (self.name.clone(), std::mem::take(&mut self.replay));
        let name = object.clone();
        let chunk_size = piece_bytes(self.max_payload);
        self.link.run_within(
            async move {
                let store = replays_bucket(&js).await?;
                let meta = jetstream::object_store::ObjectMetadata {
                    name,
                    chunk_size: Some(chunk_size),
                    ..Default::default()
                };
                store
                    .put(meta, &mut replay.as_slice())
                    .await
                    .map_err(NatsError::request(format!("the bucket {REPLAYS_BUCKET}")))?;
                if let Ok(bucket) = matches_bucket(&js).await {
                    let _ = bucket.delete(key).await;
                }
                Ok::<_, NatsError>(())
            },
            LAST_WORDS,
        )??;
        Ok(object)
    }
}

impl FrameSink for BroadcastSink {
    fn frame_finalized(&mut self, frame: &FinalFrame<'_>) {
        let Some(writer) = &mut self.writer else {
            return;
        };
        let result = writer.frame(frame.frame, frame.inputs, frame.checksum, frame.video);
        self.publish_flushed(result, frame.frame.next());
    }

    fn wants_checksums(&self) -> bool {
        true
    }

    fn match_started(&mut self, frame: Frame, start_state: &[u8], memory: Checksum) {
        let Some(header) = self.waiting.take() else {
            return;
        };
        let header = header.starting_at(frame, start_state, memory);
        self.start_frame = frame;
        match ReplayWriter::new(Vec::new(), &header) {
            Ok(mut writer) => {
                let bytes = std::mem::take(writer.output());
                self.replay.extend_from_slice(&bytes);
                self.writer = Some(writer.with_flush_every(FLUSH_FRAMES));
                self.send(Part::Header, format!("header.{}", frame.number()), bytes);
                self.publish_state(frame, start_state);
                // Viewers count themselves there and may not make it
                // (subscribe-only credentials); a failure only leaves
                // them uncounted.
                let js = self.link.jetstream();
                let _ = self.link.spawn(async move {
                    let _ = viewers_bucket(&js).await;
                });
            }
            Err(error) => self.fail(format!("the broadcast's replay: {error}")),
        }
    }

    fn state_repaired(&mut self, frame: Frame, state: &[u8], memory: Checksum) {
        if let Some(writer) = &mut self.writer {
            let result = writer.repair(frame, state, memory);
            let end = Frame::new(self.start_frame.number() + writer.frames());
            self.publish_flushed(result, end);
        }
    }

    fn player_left(&mut self, frame: Frame, player: u8) {
        if let Some(writer) = &mut self.writer {
            let result = writer.player_left(frame, player);
            self.publish_flushed(result, frame);
        }
    }

    fn wants_state(&self, frame: Frame) -> bool {
        self.last_state.is_some_and(|last| {
            frame.number() >= last.number() + STATE_EVERY_FRAMES
                && frame.number() % FLUSH_FRAMES == 0
        })
    }

    /// The records before `frame` go first, so a viewer starting from this
    /// state finds every later frame after it in the stream.
    fn state_before(&mut self, frame: Frame, state: &[u8]) {
        if let Some(writer) = &mut self.writer {
            let result = writer.flush();
            self.publish_flushed(result, frame);
        }
        self.publish_state(frame, state);
    }
}

impl RelaySink for BroadcastSink {
    fn failure(&self) -> Option<String> {
        if let Some(failure) = self
            .status
            .lock()
            .ok()
            .and_then(|status| status.failure.clone())
        {
            return Some(failure);
        }
        self.link.why_stop().and_then(|why| match why {
            NatsError::Lost { .. } => Some(why.to_string()),
            _ => None,
        })
    }

    fn match_ended(&mut self, end: EndReason) {
        if let Some(writer) = self.writer.take() {
            let frames = writer.frames();
            match writer.finish(end) {
                Ok((bytes, _)) => {
                    self.replay.extend_from_slice(&bytes);
                    let end = self.start_frame.number() + frames;
                    self.send(Part::Records, format!("end.{end}"), bytes);
                }
                Err(error) => self.fail(format!("the broadcast's replay: {error}")),
            }
        }
        self.drain();
        if let Some(failure) = RelaySink::failure(self) {
            self.fail(failure);
            return;
        }
        match self.keep_replay() {
            Ok(object) => {
                if let Ok(mut status) = self.status.lock() {
                    status.replay_object = Some(object);
                }
            }
            Err(error) => self.fail(error.to_string()),
        }
    }
}
