//! Blobs: large payloads (savestates) sent reliably in chunks, selectively
//! acknowledged and resent, one at a time each way.

use super::{ConnectionState, EndpointError, Event, Millis, PeerEndpoint};
use crate::checksum::Checksum;
use crate::protocol::codec;
use crate::protocol::messages::*;

/// A blob on its way to the peer.
pub(super) struct OutgoingBlob {
    id: BlobId,
    hash: u64,
    data: Vec<u8>,
    chunk_count: u32,
    acked: Vec<bool>,
    sent_at: Vec<Option<Millis>>,
    next_missing: u32,
}

/// A blob arriving from the peer.
pub(super) struct IncomingBlob {
    id: BlobId,
    total_size: u32,
    /// What its bytes must hash to, as its first chunk said.
    hash: u64,
    chunk_count: u32,
    data: Vec<u8>,
    held: Vec<bool>,
    held_count: u32,
    next_missing: u32,
}

impl PeerEndpoint {
    /// Starts sending `bytes` reliably (chunked, selectively acked, resent);
    /// [`Event::BlobDelivered`] follows when the peer has all of it. One
    /// blob at a time: the peer holds one incoming blob only.
    pub fn send_blob(&mut self, bytes: Vec<u8>) -> Result<BlobId, EndpointError> {
        if self.state == ConnectionState::Disconnected {
            return Err(EndpointError::Disconnected);
        }
        if let Some(sending) = self.outgoing_blobs.front() {
            return Err(EndpointError::BlobInProgress { id: sending.id });
        }
        if bytes.len() > MAX_BLOB_SIZE {
            return Err(EndpointError::BlobTooLarge {
                size: bytes.len(),
                max: MAX_BLOB_SIZE,
            });
        }
        let id = BlobId(self.next_blob_id);
        self.next_blob_id = self.next_blob_id.wrapping_add(1).max(1);
        let chunk_count = blob_chunk_count(bytes.len());
        self.outgoing_blobs.push_back(OutgoingBlob {
            id,
            hash: Checksum::of(&bytes).0,
            data: bytes,
            chunk_count,
            acked: vec![false; chunk_count as usize],
            sent_at: vec![None; chunk_count as usize],
            next_missing: 0,
        });
        Ok(id)
    }

    pub(super) fn on_blob_chunk(&mut self, chunk: BlobChunk) {
        if let Some((id, _)) = self.finished_blob.filter(|(id, _)| *id == chunk.id) {
            self.blob_ack_due = Some(id); // our ack was lost: say again we have it all
            return;
        }
        if chunk.total_size as usize > self.config.max_blob_size {
            self.stats.blobs_refused += 1;
            if self.refused_blob != Some(chunk.id) {
                self.refused_blob = Some(chunk.id);
                self.events.push_back(Event::BlobRefused {
                    id: chunk.id,
                    size: chunk.total_size,
                });
            }
            return;
        }
        // One blob at a time, each newer than the last: a peer cannot make
        // us start (and allocate for) a transfer per datagram.
        let starts_new = match &self.incoming_blob {
            None => self.finished_blob.is_none_or(|(last, _)| chunk.id > last),
            Some(_) => false,
        };
        if starts_new {
            self.incoming_blob = Some(IncomingBlob {
                id: chunk.id,
                total_size: chunk.total_size,
                hash: chunk.hash,
                chunk_count: chunk.chunk_count,
                // Grows as chunks arrive: memory follows the bytes received,
                // not the size announced.
                data: Vec::new(),
                // One flag per chunk: at most MAX_BLOB_SIZE / BLOB_CHUNK_SIZE.
                held: vec![false; chunk.chunk_count as usize],
                held_count: 0,
                next_missing: 0,
            });
        }
        let Some(blob) = self.incoming_blob.as_mut() else {
            self.stats.dropped_unexpected += 1; // an older transfer
            return;
        };
        if blob.id != chunk.id {
            self.stats.dropped_unexpected += 1; // a second transfer at once
            return;
        }
        if blob.total_size != chunk.total_size || blob.hash != chunk.hash {
            self.stats.dropped_malformed += 1;
            return;
        }
        if chunk.index > blob.next_missing.saturating_add(BLOB_ACK_WINDOW) {
            // Beyond what an ack can report: the sender never runs this far ahead.
            self.stats.dropped_unexpected += 1;
            return;
        }
        let index = chunk.index as usize;
        if !blob.held[index] {
            let start = index * BLOB_CHUNK_SIZE;
            let end = start + chunk.bytes.len();
            if blob.data.len() < end {
                blob.data.resize(end, 0);
            }
            blob.data[start..end].copy_from_slice(&chunk.bytes);
            blob.held[index] = true;
            blob.held_count += 1;
            while blob.next_missing < blob.chunk_count && blob.held[blob.next_missing as usize] {
                blob.next_missing += 1;
            }
        }
        self.blob_ack_due = Some(blob.id);
        if blob.held_count == blob.chunk_count {
            let blob = self.incoming_blob.take().expect("checked above");
            self.finished_blob = Some((blob.id, blob.chunk_count));
            // Whole: its bytes are what the sender hashed, or nobody uses them.
            let event = if Checksum::of(&blob.data).0 == blob.hash {
                Event::BlobReceived {
                    id: blob.id,
                    bytes: blob.data,
                }
            } else {
                self.stats.blobs_refused += 1;
                Event::BlobDamaged { id: blob.id }
            };
            self.events.push_back(event);
        }
    }

    pub(super) fn on_blob_ack(&mut self, ack: BlobAck) {
        let Some(position) = self.outgoing_blobs.iter().position(|b| b.id == ack.id) else {
            return;
        };
        let blob = &mut self.outgoing_blobs[position];
        let window_end = ack
            .next_missing
            .saturating_add(1 + BLOB_ACK_WINDOW)
            .min(blob.chunk_count);
        for index in blob.next_missing..window_end {
            if ack.holds(index) {
                blob.acked[index as usize] = true;
            }
        }
        while blob.next_missing < blob.chunk_count && blob.acked[blob.next_missing as usize] {
            blob.next_missing += 1;
        }
        if blob.next_missing == blob.chunk_count {
            let id = blob.id;
            self.outgoing_blobs.remove(position);
            self.events.push_back(Event::BlobDelivered { id });
        }
    }

    pub(super) fn blob_ack(&self, id: BlobId) -> BlobAck {
        let mut ack = BlobAck {
            id,
            next_missing: 0,
            held_after: [0; (BLOB_ACK_WINDOW / 64) as usize],
        };
        if let Some((_, chunk_count)) = self.finished_blob.filter(|(done, _)| *done == id) {
            ack.next_missing = chunk_count;
            return ack;
        }
        if let Some(blob) = self.incoming_blob.as_ref().filter(|b| b.id == id) {
            ack.next_missing = blob.next_missing;
            for offset in 0..BLOB_ACK_WINDOW {
                let index = (blob.next_missing + 1 + offset) as usize;
                if blob.held.get(index).copied().unwrap_or(false) {
                    ack.held_after[(offset / 64) as usize] |= 1 << (offset % 64);
                }
            }
        }
        ack
    }

    /// How long an unacknowledged chunk or chat line waits before it is
    /// sent again: max(`blob_resend_min_ms`, 2 × RTT + 50 ms).
    pub(super) fn resend_after(&self) -> Millis {
        self.config.blob_resend_min_ms.max(
            self.smoothed_rtt_ms
                .map_or(0, |rtt| (2.0 * rtt) as Millis + 50),
        )
    }

    pub(super) fn send_blob_chunks(&mut self, now: Millis, send: &mut dyn FnMut(&[u8])) {
        let resend_after = self.resend_after();
        let mut left = self.config.blob_chunks_per_poll;
        let mut blob_index = 0;
        while left > 0 && blob_index < self.outgoing_blobs.len() {
            let blob = &self.outgoing_blobs[blob_index];
            let window_end = blob
                .next_missing
                .saturating_add(1 + BLOB_ACK_WINDOW)
                .min(blob.chunk_count);
            let mut index = blob.next_missing;
            while left > 0 && index < window_end {
                let blob = &self.outgoing_blobs[blob_index];
                let i = index as usize;
                let due = !blob.acked[i]
                    && blob.sent_at[i].is_none_or(|at| now.saturating_sub(at) >= resend_after);
                if due {
                    let start = i * BLOB_CHUNK_SIZE;
                    let len = codec::chunk_len(blob.data.len(), index);
                    let chunk = Message::BlobChunk(BlobChunk {
                        id: blob.id,
                        total_size: blob.data.len() as u32,
                        hash: blob.hash,
                        chunk_count: blob.chunk_count,
                        index,
                        bytes: blob.data[start..start + len].to_vec(),
                    });
                    self.outgoing_blobs[blob_index].sent_at[i] = Some(now);
                    self.emit(now, &chunk, send);
                    left -= 1;
                }
                index += 1;
            }
            blob_index += 1;
        }
    }
}
