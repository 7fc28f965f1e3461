//! Messages larger than the server takes (`max_payload`, 1 MB by default):
//! a header or savestate too large for one message goes as consecutive
//! pieces on its subject, each saying which it is (`Netcade-Piece: i/n`),
//! the later ones where the first is in the stream (`Netcade-First: seq`),
//! so a viewer starting from the last piece finds the others.

use crate::net::nats::async_nats::jetstream;
use crate::net::nats::async_nats::HeaderMap;

/// Which piece of how many a message is.
pub const PIECE_HEADER: &str = "Netcade-Piece";
/// The stream sequence of a message's first piece.
pub const FIRST_HEADER: &str = "Netcade-First";

/// The most bytes a message put back together may have: the largest
/// state (16 MiB) and its lz4 overhead, with room.
const MAX_WHOLE_BYTES: usize = 17 << 20;

/// Payload bytes per piece for a server taking `max_payload` bytes a
/// message (headers included): room is left for the ids and headers.
pub fn piece_bytes(max_payload: usize) -> usize {
    max_payload.saturating_sub(256).max(max_payload / 2).max(1)
}

/// `(i, n)` from a message's headers: piece i (from 1) of n.
pub fn piece_of(headers: Option<&HeaderMap>) -> Option<(u32, u32)> {
    let value = headers?.get(PIECE_HEADER)?.as_str();
    let (index, count) = value.split_once('/')?;
    let (index, count) = (index.parse().ok()?, count.parse().ok()?);
    (1..=count).contains(&index).then_some((index, count))
}

/// Puts pieces back together; a piece out of order (one was lost, or a
/// broadcaster died mid-message) drops what was gathered.
#[derive(Debug, Default)]
pub struct Pieces {
    next: u32,
    count: u32,
    bytes: Vec<u8>,
}

impl Pieces {
    /// Takes one message (`piece` from [`piece_of`]): its whole payload
    /// once the last piece arrived (at once for a message in one piece).
    pub fn take(&mut self, piece: Option<(u32, u32)>, payload: &[u8]) -> Option<Vec<u8>> {
        let Some((index, count)) = piece else {
            return Some(payload.to_vec());
        };
        if index == 1 {
            self.bytes.clear();
            (self.next, self.count) = (1, count);
        }
        if index != self.next || count != self.count {
            self.next = 0;
            return None;
        }
        if self.bytes.len() + payload.len() > MAX_WHOLE_BYTES {
            self.next = 0;
            return None;
        }
        self.bytes.extend_from_slice(payload);
        self.next += 1;
        (index == count).then(|| std::mem::take(&mut self.bytes))
    }

    /// Whether what was taken so far began a message and kept its order:
    /// once not, the pieces since cannot make it whole.
    pub fn in_order(&self) -> bool {
        self.next != 0
    }
}

/// A message put back together from the stream.
pub struct Whole {
    /// Where its first piece is in the stream.
    pub sequence: u64,
    /// The payload, whole.
    pub payload: Vec<u8>,
}

/// Whole messages looked at, newest first, before giving up: what a
/// stranger publishing junk on a subject can cost a viewer.
const MAX_CANDIDATES: usize = 16;

/// Messages fetched while looking back for the one before another.
const MAX_LOOK_BACK: usize = 64;

/// The newest whole message on `subject` after stream sequence `after`
/// whose every piece `open` takes (giving the piece's own bytes: a
/// signature checked and taken off) and which `usable` turns into a `T`:
/// a message that is not (junk a stranger published, one cut short) gives
/// way to the one before it.
pub async fn newest_whole<T>(
    stream: &jetstream::stream::Stream,
    subject: &str,
    after: u64,
    open: impl Fn(&jetstream::message::StreamMessage) -> Option<Vec<u8>>,
    mut usable: impl FnMut(Whole) -> Option<T>,
) -> Option<T> {
    let mut candidate = stream.get_last_raw_message_by_subject(subject).await.ok()?;
    for _ in 0..MAX_CANDIDATES {
        if candidate.sequence <= after {
            return None;
        }
        let mut before = candidate.sequence;
        if let Some(whole) = whole_ending_at(stream, subject, candidate, &open).await {
            before = whole.sequence;
            if let Some(usable) = usable(whole) {
                return Some(usable);
            }
        }
        candidate = previous_on_subject(stream, subject, before).await?;
    }
    None
}

/// The message ending with `last` put back together, if its pieces are
/// all there, in order, and taken by `open`.
async fn whole_ending_at(
    stream: &jetstream::stream::Stream,
    subject: &str,
    last: jetstream::message::StreamMessage,
    open: &impl Fn(&jetstream::message::StreamMessage) -> Option<Vec<u8>>,
) -> Option<Whole> {
    let Some((index, count)) = piece_of(Some(&last.headers)) else {
        return Some(Whole {
            sequence: last.sequence,
            payload: open(&last)?,
        });
    };
    if index != count {
        return None;
    }
    let first: u64 = match count {
        1 => last.sequence,
        _ => last.headers.get(FIRST_HEADER)?.as_str().parse().ok()?,
    };
    let mut pieces = Pieces::default();
    let mut sequence = first;
    for _ in 0..count {
        let message = next_on_subject(stream, subject, sequence).await?;
        sequence = message.sequence + 1;
        let body = open(&message)?;
        if let Some(whole) = pieces.take(piece_of(Some(&message.headers)), &body) {
            return Some(Whole {
                sequence: first,
                payload: whole,
            });
        }
        // A last piece naming a first that is not one (or more pieces than
        // follow it) would otherwise walk the stream a message at a time.
        if !pieces.in_order() {
            return None;
        }
    }
    None
}

/// The first message on `subject` from stream sequence `sequence` on.
async fn next_on_subject(
    stream: &jetstream::stream::Stream,
    subject: &str,
    sequence: u64,
) -> Option<jetstream::message::StreamMessage> {
    stream
        .raw_message_builder()
        .next_by_subject(subject.to_string())
        .sequence(sequence)
        .send()
        .await
        .ok()
}

/// The last message on `subject` before stream sequence `before` (or one
/// shortly before it, when many are): the server finds messages forwards
/// only, so this looks from ever further back.
async fn previous_on_subject(
    stream: &jetstream::stream::Stream,
    subject: &str,
    before: u64,
) -> Option<jetstream::message::StreamMessage> {
    let mut span = 16u64;
    let mut fetched = 0;
    loop {
        let from = before.saturating_sub(span).max(1);
        let found = next_on_subject(stream, subject, from).await?;
        fetched += 1;
        if found.sequence < before {
            let mut last = found;
            while fetched < MAX_LOOK_BACK {
                fetched += 1;
                match next_on_subject(stream, subject, last.sequence + 1).await {
                    Some(next) if next.sequence < before => last = next,
                    _ => break,
                }
            }
            return Some(last);
        }
        if from == 1 || fetched >= MAX_LOOK_BACK {
            return None;
        }
        span = span.saturating_mul(4);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_in_order_come_back_whole() {
        let mut pieces = Pieces::default();
        assert_eq!(pieces.take(Some((1, 3)), b"ab"), None);
        assert_eq!(pieces.take(Some((2, 3)), b"cd"), None);
        assert_eq!(pieces.take(Some((3, 3)), b"e"), Some(b"abcde".to_vec()));
        assert_eq!(pieces.take(None, b"whole"), Some(b"whole".to_vec()));
    }

    #[test]
    fn a_message_that_does_not_begin_with_its_first_piece_is_out_of_order_at_once() {
        let mut pieces = Pieces::default();
        assert_eq!(pieces.take(Some((u32::MAX, u32::MAX)), b"x"), None);
        assert!(!pieces.in_order());
        assert_eq!(pieces.take(Some((1, 2)), b"a"), None);
        assert!(pieces.in_order());
    }

    #[test]
    fn a_missing_piece_drops_the_message_and_the_next_one_starts_clean() {
        let mut pieces = Pieces::default();
        assert_eq!(pieces.take(Some((1, 3)), b"ab"), None);
        assert_eq!(pieces.take(Some((3, 3)), b"e"), None);
        assert_eq!(pieces.take(Some((2, 2)), b"x"), None);
        assert_eq!(pieces.take(Some((1, 2)), b"x"), None);
        assert_eq!(pieces.take(Some((2, 2)), b"y"), Some(b"xy".to_vec()));
    }

    #[test]
    fn a_piece_header_must_name_a_piece_that_can_be() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(PIECE_HEADER, value);
            piece_of(Some(&headers))
        };
        assert_eq!(with("2/3"), Some((2, 3)));
        for bad in ["0/3", "4/3", "3", "a/b", "1/-1"] {
            assert_eq!(with(bad), None, "{bad}");
        }
        assert!(piece_bytes(1 << 20) < 1 << 20);
        assert!(piece_bytes(300) >= 44);
    }
}
