//! Which datagrams a link takes (protocol 5): each side's x25519 public key
//! rides in its handshake, both derive one key per direction from the
//! exchange, and every datagram ends with an 8-byte tag, the start of a
//! BLAKE3 keyed hash of all before it. A datagram whose tag does not verify
//! is dropped before it is decoded, so bytes changed on the path, replies
//! reflected back to their sender and datagrams of another session cost
//! nothing but themselves.
//!
//! Handshakes (Hello, Welcome, Reject) are tagged too, with a key everyone
//! knows: that catches bytes damaged on the way, not a forger. The keys are
//! not authenticated either (nobody vouches for a public key), so a machine
//! that sits on the path from the first Hello on can still pose as each
//! side to the other; one that arrives later, or only watches, cannot.
//!
//! Pure: the secret comes in as bytes (the live layer draws them from the
//! operating system).

use super::codec;
pub use super::codec::TAG_BYTES;
use super::messages::{Header, Message, PublicKey, SessionToken, PROTOCOL_VERSION};
use x25519_dalek::{PublicKey as DalekPublic, StaticSecret};

/// What handshakes are tagged with: not secret, it only catches damage.
const HANDSHAKE_KEY: [u8; 32] = *b"netcade v5 handshake: not secret";

/// A machine's x25519 secret for its links. Its `Debug` shows nothing of it.
#[derive(Clone)]
pub struct LinkSecret(StaticSecret);

impl LinkSecret {
    /// The secret from 32 random bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        LinkSecret(StaticSecret::from(bytes))
    }

    /// A fixed secret anyone can know: for tests and simulated matches,
    /// whose runs must repeat. Real play draws one from the OS.
    pub fn well_known() -> Self {
        Self::from_bytes(*b"netcade: a secret everyone knows")
    }

    /// The secret's bytes, for a player's machine to keep while its match
    /// runs (see `netplay::RejoinTicket`): never shown.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.0.to_bytes()
    }

    /// The public key sent in our handshakes.
    pub fn public_key(&self) -> PublicKey {
        PublicKey(DalekPublic::from(&self.0).to_bytes())
    }
}

impl std::fmt::Debug for LinkSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LinkSecret(…)")
    }
}

/// The keys of one link: the one our datagrams are tagged with and the one
/// the peer's are. Different per direction, so a datagram sent back to its
/// sender does not verify there.
#[derive(Clone)]
pub struct LinkKeys {
    send: [u8; 32],
    receive: [u8; 32],
}

impl std::fmt::Debug for LinkKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LinkKeys(…)")
    }
}

impl LinkKeys {
    /// Both directions' keys of the link between `ours` (the host of the
    /// link when `we_host`) and the peer whose handshake carried
    /// `theirs`, in session `session`. `None` when `theirs` is a point of
    /// small order, which makes the exchange give away nothing secret.
    pub fn agree(
        ours: &LinkSecret,
        theirs: PublicKey,
        session: SessionToken,
        we_host: bool,
    ) -> Option<LinkKeys> {
        let shared = ours.0.diffie_hellman(&DalekPublic::from(theirs.0));
        if !shared.was_contributory() {
            return None;
        }
        let own = ours.public_key();
        let (host, joiner) = if we_host {
            (own, theirs)
        } else {
            (theirs, own)
        };
        let mut material = Vec::with_capacity(32 + 4 + 64);
        material.extend_from_slice(shared.as_bytes());
        material.extend_from_slice(&session.0.to_le_bytes());
        material.extend_from_slice(&host.0);
        material.extend_from_slice(&joiner.0);
        let from_host = blake3::derive_key("netcade 2026 link key, host to joiner", &material);
        let from_joiner = blake3::derive_key("netcade 2026 link key, joiner to host", &material);
        Some(if we_host {
            LinkKeys {
                send: from_host,
                receive: from_joiner,
            }
        } else {
            LinkKeys {
                send: from_joiner,
                receive: from_host,
            }
        })
    }

    /// Appends the tag of a datagram we send.
    pub fn seal(&self, datagram: &mut Vec<u8>) {
        seal_with(&self.send, datagram);
    }

    /// The datagram without its tag, if the tag is the peer's.
    pub fn open<'a>(&self, datagram: &'a [u8]) -> Option<&'a [u8]> {
        open_with(&self.receive, datagram)
    }
}

/// Appends a handshake's tag.
pub fn seal_handshake(datagram: &mut Vec<u8>) {
    seal_with(&HANDSHAKE_KEY, datagram);
}

/// A handshake of `version` without its tag, if intact. Only our own
/// version's handshakes carry one: another version's are read as they
/// are, to say why we cannot play together.
pub fn open_handshake(datagram: &[u8], version: u8, our_version: u8) -> Option<&[u8]> {
    if version != our_version {
        return Some(datagram);
    }
    open_with(&HANDSHAKE_KEY, datagram)
}

/// A handshake datagram (Hello, Welcome, Reject) decoded, if intact: for
/// the owner of many links, reading a Hello before it has an endpoint for
/// the sender.
pub fn decode_handshake(datagram: &[u8]) -> Option<(Header, Message)> {
    let (header, kind) = codec::decode_header(datagram).ok()?;
    if !codec::is_handshake_kind(kind) {
        return None;
    }
    let untagged = open_handshake(datagram, header.version, PROTOCOL_VERSION)?;
    codec::decode(untagged).ok()
}

/// The datagram without its last [`TAG_BYTES`], checked or not: for tests
/// that read what a peer sent.
pub fn without_tag(datagram: &[u8]) -> &[u8] {
    &datagram[..datagram.len().saturating_sub(TAG_BYTES)]
}

fn tag(key: &[u8; 32], bytes: &[u8]) -> [u8; TAG_BYTES] {
    let hash = blake3::keyed_hash(key, bytes);
    let mut tag = [0; TAG_BYTES];
    tag.copy_from_slice(&hash.as_bytes()[..TAG_BYTES]);
    tag
}

fn seal_with(key: &[u8; 32], datagram: &mut Vec<u8>) {
    let tag = tag(key, datagram);
    datagram.extend_from_slice(&tag);
}

fn open_with<'a>(key: &[u8; 32], datagram: &'a [u8]) -> Option<&'a [u8]> {
    let body_len = datagram.len().checked_sub(TAG_BYTES)?;
    let (body, carried) = datagram.split_at(body_len);
    let expected = tag(key, body);
    // Every byte compared, whichever differs first.
    let difference = expected
        .iter()
        .zip(carried)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    (difference == 0).then_some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (LinkKeys, LinkKeys) {
        let host = LinkSecret::from_bytes([1; 32]);
        let joiner = LinkSecret::from_bytes([2; 32]);
        let session = SessionToken(7);
        (
            LinkKeys::agree(&host, joiner.public_key(), session, true).unwrap(),
            LinkKeys::agree(&joiner, host.public_key(), session, false).unwrap(),
        )
    }

    #[test]
    fn a_datagram_sealed_by_one_side_opens_only_at_the_other() {
        let (host, joiner) = pair();
        let mut datagram = b"nc\x05\x09\x01\x00".to_vec();
        host.seal(&mut datagram);
        assert_eq!(datagram.len(), 6 + TAG_BYTES);
        assert_eq!(joiner.open(&datagram), Some(&b"nc\x05\x09\x01\x00"[..]));
        assert_eq!(host.open(&datagram), None, "reflected to its sender");
        for bit in 0..datagram.len() * 8 {
            let mut flipped = datagram.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(joiner.open(&flipped), None, "bit {bit} flipped");
        }
        assert_eq!(joiner.open(&datagram[..datagram.len() - 1]), None);
        assert_eq!(joiner.open(&[1, 2, 3]), None);
    }

    #[test]
    fn another_session_or_another_peer_gives_other_keys() {
        let (host, _) = pair();
        let joiner = LinkSecret::from_bytes([2; 32]);
        let host_public = LinkSecret::from_bytes([1; 32]).public_key();
        let other_session = LinkKeys::agree(&joiner, host_public, SessionToken(8), false).unwrap();
        let stranger = LinkSecret::from_bytes([3; 32]);
        let other_peer = LinkKeys::agree(&stranger, host_public, SessionToken(7), false).unwrap();
        let mut datagram = b"nc\x05\x09\x01\x00".to_vec();
        host.seal(&mut datagram);
        assert_eq!(other_session.open(&datagram), None);
        assert_eq!(other_peer.open(&datagram), None);
    }

    #[test]
    fn a_public_key_of_small_order_agrees_no_keys() {
        let ours = LinkSecret::from_bytes([1; 32]);
        assert!(LinkKeys::agree(&ours, PublicKey([0; 32]), SessionToken(7), true).is_none());
    }

    #[test]
    fn handshakes_of_our_version_must_be_intact_and_others_are_read_as_they_are() {
        let mut hello = b"nc\x05\x01hello".to_vec();
        seal_handshake(&mut hello);
        assert_eq!(open_handshake(&hello, 5, 5), Some(&b"nc\x05\x01hello"[..]));
        hello[5] ^= 4;
        assert_eq!(open_handshake(&hello, 5, 5), None);
        assert_eq!(open_handshake(&hello, 4, 5), Some(&hello[..]));
    }
}
