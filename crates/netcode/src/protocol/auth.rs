//! Which datagrams a link takes (protocol 5): each side's x25519 public key
//! rides in its handshake, both derive one key per direction from the
//! exchange, and every datagram ends with an 8-byte tag, the start of a
//! BLAKE3 keyed hash of all before it. A datagram whose tag does not verify
//! is dropped before it is decoded, so bytes changed on the path, replies
//! reflected back to their sender and datagrams of another session cost
//! nothing but themselves.
//!
//! Handshakes (Hello, Welcome, Reject) are tagged too, with a key everyone
//! knows: that catches bytes damaged on the way, not a forger. Between
//! machines that met by room code the code authenticates the keys (the
//! SPAKE2 key of [`super::pake`] is mixed in); by address nobody vouches
//! for a public key, so a machine that sits on the path from the first
//! Hello on could pose as each side to the other, and each side shows the
//! link's [`Fingerprint`] to compare (a machine in between makes them
//! differ) and may pin the peer's key's. One that arrives later, or only
//! watches, cannot do anything.
//!
//! Pure: the secret comes in as bytes (the live layer draws them from the
//! operating system).

use super::codec;
pub use super::codec::TAG_BYTES;
pub use super::messages::CONFIRMATION_BYTES;
use super::messages::{Header, Message, PublicKey, SessionToken, PROTOCOL_VERSION};
use x25519_dalek::{PublicKey as DalekPublic, StaticSecret};

/// What handshakes are tagged with: not secret, it only catches damage.
const HANDSHAKE_KEY: [u8; 32] = *b"netcade v5 handshake: not secret";

/// What a room's SPAKE2 exchange agreed (`super::pake`), mixed into the
/// link's keys.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RoomKey(pub [u8; 32]);

impl std::fmt::Debug for RoomKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RoomKey(…)")
    }
}

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
    /// Both sides derive it alike: the host's Welcome carries its start
    /// in a room, where it proves the host knew the code.
    confirmation: [u8; 32],
    fingerprint: Fingerprint,
}

impl std::fmt::Debug for LinkKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LinkKeys(…)")
    }
}

impl LinkKeys {
    /// Both directions' keys of the link between `ours` (the host of the
    /// link when `we_host`) and the peer whose handshake carried
    /// `theirs`, in session `session`, with the key the room code agreed
    /// when they met by one. `None` when `theirs` is a point of small
    /// order, which makes the exchange give away nothing secret.
    pub fn agree(
        ours: &LinkSecret,
        theirs: PublicKey,
        session: SessionToken,
        we_host: bool,
        room: Option<RoomKey>,
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
        let mut material = Vec::with_capacity(32 + 4 + 64 + 32);
        material.extend_from_slice(shared.as_bytes());
        material.extend_from_slice(&session.0.to_le_bytes());
        material.extend_from_slice(&host.0);
        material.extend_from_slice(&joiner.0);
        // Without a room, the link's keys are those of protocol 9.
        if let Some(room) = room {
            material.extend_from_slice(&room.0);
        }
        let from_host = blake3::derive_key("netcade 2026 link key, host to joiner", &material);
        let from_joiner = blake3::derive_key("netcade 2026 link key, joiner to host", &material);
        let confirmation = blake3::derive_key("netcade 2026 link key confirmation", &material);
        let fingerprint = Fingerprint::of(&blake3::derive_key(
            "netcade 2026 link fingerprint",
            &material,
        ));
        let (send, receive) = match we_host {
            true => (from_host, from_joiner),
            false => (from_joiner, from_host),
        };
        Some(LinkKeys {
            send,
            receive,
            confirmation,
            fingerprint,
        })
    }

    /// What the host's Welcome carries in a room to show it agreed the
    /// same keys (and so knew the code).
    pub fn confirmation(&self) -> [u8; CONFIRMATION_BYTES] {
        let mut start = [0; CONFIRMATION_BYTES];
        start.copy_from_slice(&self.confirmation[..CONFIRMATION_BYTES]);
        start
    }

    /// Whether the host's `confirmation` is that of these keys (every byte
    /// compared, whichever differs first).
    pub fn confirms(&self, confirmation: &[u8; CONFIRMATION_BYTES]) -> bool {
        constant_time_equal(&self.confirmation(), confirmation)
    }

    /// The link's fingerprint, the same on both sides when nobody sits in
    /// between: for the players to compare.
    pub fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
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
    constant_time_equal(&tag(key, body), carried).then_some(body)
}

/// Every byte compared, whichever differs first.
fn constant_time_equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

/// Characters of a fingerprint (50 bits), in two groups of five.
const FINGERPRINT_CHARS: usize = 10;

/// Characters of a fingerprint: Crockford's base 32 (no I, L, O, U).
const FINGERPRINT_ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A short fingerprint players read to each other (`K7QD2-MXA4P`): of a
/// link's keys (the same on both sides unless a machine sits in between)
/// or of a machine's public key (which `--peer-key` pins). 50 bits: a
/// machine in between would have to find keys matching both sides' within
/// the handshake, about 2^50 tries.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint(u64);

impl Fingerprint {
    fn of(hash: &[u8; 32]) -> Fingerprint {
        let mut bits = [0; 8];
        bits.copy_from_slice(&hash[..8]);
        Fingerprint(u64::from_le_bytes(bits) & ((1 << (5 * FINGERPRINT_CHARS)) - 1))
    }

    /// The fingerprint of a machine's public key.
    pub fn of_key(key: &PublicKey) -> Fingerprint {
        Fingerprint::of(&blake3::derive_key("netcade 2026 key fingerprint", &key.0))
    }
}

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for index in 0..FINGERPRINT_CHARS {
            if index == FINGERPRINT_CHARS / 2 {
                f.write_str("-")?;
            }
            let shift = 5 * (FINGERPRINT_CHARS - 1 - index);
            let digit = (self.0 >> shift) & 31;
            write!(f, "{}", char::from(FINGERPRINT_ALPHABET[digit as usize]))?;
        }
        Ok(())
    }
}

impl std::fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Fingerprint({self})")
    }
}

impl std::str::FromStr for Fingerprint {
    type Err = String;

    /// Reads a fingerprint as people type it: any case, with or without
    /// the dash.
    fn from_str(text: &str) -> Result<Self, String> {
        let wrong = || {
            format!("{text:?}: expected a key fingerprint like K7QD2-MXA4P (ten letters and digits, as the other side printed it)")
        };
        let mut value = 0u64;
        let mut count = 0;
        for c in text.chars().filter(|c| *c != '-' && !c.is_whitespace()) {
            let upper = c.to_ascii_uppercase();
            let digit = FINGERPRINT_ALPHABET
                .iter()
                .position(|&letter| c.is_ascii() && letter == upper as u8)
                .ok_or_else(wrong)?;
            if count == FINGERPRINT_CHARS {
                return Err(wrong());
            }
            value = value << 5 | digit as u64;
            count += 1;
        }
        if count != FINGERPRINT_CHARS {
            return Err(wrong());
        }
        Ok(Fingerprint(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (LinkKeys, LinkKeys) {
        let host = LinkSecret::from_bytes([1; 32]);
        let joiner = LinkSecret::from_bytes([2; 32]);
        let session = SessionToken(7);
        (
            LinkKeys::agree(&host, joiner.public_key(), session, true, None).unwrap(),
            LinkKeys::agree(&joiner, host.public_key(), session, false, None).unwrap(),
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
        let other_session =
            LinkKeys::agree(&joiner, host_public, SessionToken(8), false, None).unwrap();
        let stranger = LinkSecret::from_bytes([3; 32]);
        let other_peer =
            LinkKeys::agree(&stranger, host_public, SessionToken(7), false, None).unwrap();
        let mut datagram = b"nc\x05\x09\x01\x00".to_vec();
        host.seal(&mut datagram);
        assert_eq!(other_session.open(&datagram), None);
        assert_eq!(other_peer.open(&datagram), None);
    }

    #[test]
    fn both_sides_share_a_fingerprint_and_confirmation_that_a_room_key_changes() {
        let (host, joiner) = pair();
        assert_eq!(host.fingerprint(), joiner.fingerprint());
        assert!(joiner.confirms(&host.confirmation()));
        let host_secret = LinkSecret::from_bytes([1; 32]);
        let joiner_public = LinkSecret::from_bytes([2; 32]).public_key();
        let room = Some(RoomKey([5; 32]));
        let in_room =
            LinkKeys::agree(&host_secret, joiner_public, SessionToken(7), true, room).unwrap();
        assert_ne!(in_room.fingerprint(), joiner.fingerprint());
        assert!(!joiner.confirms(&in_room.confirmation()));
    }

    #[test]
    fn a_fingerprint_prints_in_two_groups_and_reads_back_however_it_is_typed() {
        let key = LinkSecret::from_bytes([3; 32]).public_key();
        let fingerprint = Fingerprint::of_key(&key);
        let printed = fingerprint.to_string();
        assert_eq!(printed.len(), 11);
        assert_eq!(&printed[5..6], "-");
        for typed in [
            printed.clone(),
            printed.to_lowercase(),
            printed.replace('-', ""),
        ] {
            assert_eq!(typed.parse::<Fingerprint>(), Ok(fingerprint), "{typed}");
        }
        let other = Fingerprint::of_key(&LinkSecret::from_bytes([4; 32]).public_key());
        assert_ne!(other, fingerprint);
        for bad in [
            "",
            "K7QD2-MXA4",
            "K7QD2-MXA4PP",
            "K7QD2-MXA4U",
            "K7QD2-MXÄ4P",
        ] {
            let error = bad.parse::<Fingerprint>().unwrap_err();
            assert!(error.contains("fingerprint like"), "{error}");
        }
    }

    #[test]
    fn a_public_key_of_small_order_agrees_no_keys() {
        let ours = LinkSecret::from_bytes([1; 32]);
        assert!(LinkKeys::agree(&ours, PublicKey([0; 32]), SessionToken(7), true, None).is_none());
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
