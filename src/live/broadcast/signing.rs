//! What the broadcaster publishes is signed (Ed25519), so a viewer refuses
//! a message anyone else put on the match's subjects. Every message's
//! payload ends with a trailer: the broadcaster's public key (headers
//! only: viewers learn it with them), its broadcast (16 random bytes a
//! broadcaster draws when it starts) and the signature of the subject, the
//! piece and all before the signature. In the payload rather than in
//! headers, it costs a piece the same 112 bytes whatever the server's
//! `max_payload`. The key is kept in netcade's data directory, so a
//! broadcaster restarted on the same machine signs with the same key and
//! its viewers follow it across the restart (to its new broadcast); a
//! header under any other key, mid-watch, is refused like any other
//! forgery.

use super::pieces::PIECE_HEADER;
use crate::engine::AppError;
use crate::net::nats::async_nats::HeaderMap;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use std::path::Path;

/// The key file in netcade's data directory.
const KEY_FILE: &str = "broadcast-key";

const KEY_BYTES: usize = 32;
const BROADCAST_BYTES: usize = 16;
const SIGNATURE_BYTES: usize = 64;

/// The most bytes the trailer adds to a message (a header's).
pub const MAX_TRAILER_BYTES: usize = KEY_BYTES + BROADCAST_BYTES + SIGNATURE_BYTES;

/// What is signed: the subject and the piece, each ended so one cannot
/// run into the next, then the payload up to the signature.
fn signed_bytes(subject: &str, piece: &str, sealed: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(sealed.len() + 64);
    for field in [
        b"netcade broadcast 1".as_slice(),
        subject.as_bytes(),
        piece.as_bytes(),
    ] {
        bytes.extend_from_slice(field);
        bytes.push(0);
    }
    bytes.extend_from_slice(sealed);
    bytes
}

fn piece_text(piece: Option<(u32, u32)>) -> String {
    piece.map_or_else(String::new, |(index, count)| format!("{index}/{count}"))
}

/// Signs a broadcaster's messages.
pub struct BroadcastSigner {
    key: SigningKey,
    broadcast: [u8; BROADCAST_BYTES],
}

impl BroadcastSigner {
    /// A signer with `seed` as its key, for the broadcast `id`.
    pub fn new(seed: [u8; 32], id: [u8; 16]) -> Self {
        BroadcastSigner {
            key: SigningKey::from_bytes(&seed),
            broadcast: id,
        }
    }

    /// This machine's broadcaster key (made and kept the first time), for
    /// a new broadcast.
    pub fn of_this_machine() -> Result<Self, AppError> {
        let seed = kept_seed(
            &crate::paths::data_subdir(KEY_FILE),
            "the broadcaster's key",
        )?;
        Ok(Self::new(seed, crate::live::connect::random_bytes()?))
    }

    /// `body` (piece `piece` on `subject`) with the trailer that proves it
    /// this broadcast's; `with_key` on headers.
    pub fn seal(
        &self,
        subject: &str,
        piece: Option<(u32, u32)>,
        body: &[u8],
        with_key: bool,
    ) -> Vec<u8> {
        let mut sealed = Vec::with_capacity(body.len() + MAX_TRAILER_BYTES);
        sealed.extend_from_slice(body);
        if with_key {
            sealed.extend_from_slice(self.key.verifying_key().as_bytes());
        }
        sealed.extend_from_slice(&self.broadcast);
        let signature = self
            .key
            .sign(&signed_bytes(subject, &piece_text(piece), &sealed));
        sealed.extend_from_slice(&signature.to_bytes());
        sealed
    }
}

/// Why a message is not the broadcaster's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forgery {
    /// Too short to hold a trailer, or its key is not one.
    Unsigned,
    /// Signed, but not by the broadcaster's key (or not for what it says).
    BadSignature,
    /// Of another broadcast than the one watched.
    OtherBroadcast,
}

/// What a viewer checks messages with: the broadcaster's key, and the
/// broadcast it is watching.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BroadcastCheck {
    key: VerifyingKey,
    broadcast: [u8; BROADCAST_BYTES],
}

/// A sealed payload taken apart: body, key (headers), broadcast, and the
/// signature over all before it.
struct Opened<'a> {
    body: &'a [u8],
    key: Option<[u8; KEY_BYTES]>,
    broadcast: [u8; BROADCAST_BYTES],
    signed: &'a [u8],
    signature: Signature,
}

fn array<const N: usize>(bytes: &[u8]) -> Result<[u8; N], Forgery> {
    bytes.try_into().map_err(|_| Forgery::Unsigned)
}

fn open(payload: &[u8], with_key: bool) -> Result<Opened<'_>, Forgery> {
    let trailer = BROADCAST_BYTES + SIGNATURE_BYTES + if with_key { KEY_BYTES } else { 0 };
    let body_end = payload
        .len()
        .checked_sub(trailer)
        .ok_or(Forgery::Unsigned)?;
    let signed_end = payload.len() - SIGNATURE_BYTES;
    let (signed, signature) = payload.split_at(signed_end);
    let broadcast = &signed[signed_end - BROADCAST_BYTES..];
    let key = with_key.then(|| &signed[body_end..body_end + KEY_BYTES]);
    Ok(Opened {
        body: &payload[..body_end],
        key: key.map(array).transpose()?,
        broadcast: array(broadcast)?,
        signed,
        signature: Signature::from_bytes(&array(signature)?),
    })
}

fn verify(
    key: &VerifyingKey,
    subject: &str,
    headers: Option<&HeaderMap>,
    opened: &Opened<'_>,
) -> Result<(), Forgery> {
    let piece = headers
        .and_then(|headers| headers.get(PIECE_HEADER))
        .map_or("", |value| value.as_str());
    key.verify(
        &signed_bytes(subject, piece, opened.signed),
        &opened.signature,
    )
    .map_err(|_| Forgery::BadSignature)
}

impl BroadcastCheck {
    /// The check a header message brings (its key and broadcast, if it is
    /// signed by the key it carries) and its body.
    pub fn of_header<'a>(
        subject: &str,
        headers: Option<&HeaderMap>,
        payload: &'a [u8],
    ) -> Result<(Self, &'a [u8]), Forgery> {
        let opened = open(payload, true)?;
        let key = opened.key.ok_or(Forgery::Unsigned)?;
        let key = VerifyingKey::from_bytes(&key).map_err(|_| Forgery::Unsigned)?;
        verify(&key, subject, headers, &opened)?;
        let check = BroadcastCheck {
            key,
            broadcast: opened.broadcast,
        };
        Ok((check, opened.body))
    }

    /// The body of a message of the watched broadcast, signed by its key.
    pub fn check<'a>(
        &self,
        subject: &str,
        headers: Option<&HeaderMap>,
        payload: &'a [u8],
    ) -> Result<&'a [u8], Forgery> {
        let opened = open(payload, false)?;
        verify(&self.key, subject, headers, &opened)?;
        if opened.broadcast != self.broadcast {
            return Err(Forgery::OtherBroadcast);
        }
        Ok(opened.body)
    }

    /// Takes a header met mid-watch (returning its body): a broadcaster
    /// restarted with the same key goes on as its new broadcast. Anything
    /// else is refused.
    pub fn follow<'a>(
        &mut self,
        subject: &str,
        headers: Option<&HeaderMap>,
        payload: &'a [u8],
    ) -> Result<&'a [u8], Forgery> {
        let (theirs, body) = Self::of_header(subject, headers, payload)?;
        if theirs.key != self.key {
            return Err(Forgery::BadSignature);
        }
        *self = theirs;
        Ok(body)
    }
}

/// The 32-byte seed (`what`) kept at `path`, made (readable by the user
/// only) if there is none; a second process making it at the same moment
/// uses the one that was kept.
pub(crate) fn kept_seed(path: &Path, what: &'static str) -> Result<[u8; 32], AppError> {
    let failed = |source| AppError::WriteFile {
        what,
        path: path.to_path_buf(),
        source,
    };
    if let Ok(bytes) = std::fs::read(path) {
        return bytes.try_into().map_err(|_| {
            failed(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "it is not a key (32 bytes): remove it to make a new one",
            ))
        });
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    let seed: [u8; 32] = crate::live::connect::random_bytes()?;
    // Its own name: threads of one process may make the key at once.
    let tag: [u8; 8] = crate::live::connect::random_bytes()?;
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(
        ".{}.{:016x}.new",
        std::process::id(),
        u64::from_le_bytes(tag)
    ));
    let temporary = std::path::PathBuf::from(temporary);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&temporary).and_then(|mut file| {
        use std::io::Write;
        file.write_all(&seed)?;
        file.sync_all()
    });
    // A link never replaces a key already there: the first kept wins.
    let kept = written.and_then(|()| std::fs::hard_link(&temporary, path));
    let _ = std::fs::remove_file(&temporary);
    match kept {
        Ok(()) => Ok(seed),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            let bytes = std::fs::read(path).map_err(failed)?;
            bytes.try_into().map_err(|_| {
                failed(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "it is not a key (32 bytes): remove it to make a new one",
                ))
            })
        }
        Err(error) => Err(failed(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "netcade.match.final.header";
    const RECORDS: &str = "netcade.match.final.records";

    fn watching(signer: &BroadcastSigner) -> BroadcastCheck {
        let header = signer.seal(HEADER, None, b"h", true);
        let (check, body) = BroadcastCheck::of_header(HEADER, None, &header).unwrap();
        assert_eq!(body, b"h");
        check
    }

    #[test]
    fn a_viewer_takes_what_the_broadcaster_signed_and_refuses_anyone_elses() {
        let broadcaster = BroadcastSigner::new([1; 32], [9; 16]);
        let check = watching(&broadcaster);
        let records = broadcaster.seal(RECORDS, None, b"inputs", false);
        assert_eq!(check.check(RECORDS, None, &records), Ok(&b"inputs"[..]));
        // Another body, another subject, another piece, no trailer at all.
        let mut forged = records.clone();
        forged[0] ^= 1;
        assert_eq!(
            check.check(RECORDS, None, &forged),
            Err(Forgery::BadSignature)
        );
        let state = "netcade.match.final.state";
        assert_eq!(
            check.check(state, None, &records),
            Err(Forgery::BadSignature)
        );
        let mut piece = HeaderMap::new();
        piece.insert(PIECE_HEADER, "1/2");
        assert_eq!(
            check.check(RECORDS, Some(&piece), &records),
            Err(Forgery::BadSignature)
        );
        assert_eq!(
            check.check(RECORDS, None, b"inputs"),
            Err(Forgery::Unsigned)
        );
        // Another key, and the broadcaster's own message of another
        // broadcast (an old match of the same name).
        let forger = BroadcastSigner::new([2; 32], [9; 16]);
        let theirs = forger.seal(RECORDS, None, b"inputs", false);
        assert_eq!(
            check.check(RECORDS, None, &theirs),
            Err(Forgery::BadSignature)
        );
        let earlier = BroadcastSigner::new([1; 32], [8; 16]);
        let old = earlier.seal(RECORDS, None, b"inputs", false);
        assert_eq!(
            check.check(RECORDS, None, &old),
            Err(Forgery::OtherBroadcast)
        );
    }

    #[test]
    fn a_watch_follows_a_restart_under_the_same_key_and_no_other_header() {
        let mut check = watching(&BroadcastSigner::new([1; 32], [9; 16]));
        let forger = BroadcastSigner::new([2; 32], [7; 16]);
        let theirs = forger.seal(HEADER, None, b"h2", true);
        assert_eq!(
            check.follow(HEADER, None, &theirs),
            Err(Forgery::BadSignature)
        );
        let restarted = BroadcastSigner::new([1; 32], [3; 16]);
        let again = restarted.seal(HEADER, None, b"h3", true);
        assert_eq!(check.follow(HEADER, None, &again), Ok(&b"h3"[..]));
        let records = restarted.seal(RECORDS, None, b"r", false);
        assert_eq!(check.check(RECORDS, None, &records), Ok(&b"r"[..]));
    }

    #[test]
    fn the_key_is_made_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys").join(KEY_FILE);
        let first = kept_seed(&path, "a key").unwrap();
        assert_eq!(kept_seed(&path, "a key").unwrap(), first);
        std::fs::write(&path, b"short").unwrap();
        assert!(kept_seed(&path, "a key").is_err());
    }

    #[test]
    fn threads_of_one_process_making_the_key_at_once_all_get_the_one_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(KEY_FILE);
        let seeds: Vec<[u8; 32]> = std::thread::scope(|scope| {
            let makers: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| kept_seed(&path, "a key").unwrap()))
                .collect();
            makers
                .into_iter()
                .map(|maker| maker.join().unwrap())
                .collect()
        });
        assert!(seeds.iter().all(|seed| *seed == seeds[0]), "one key");
        assert_eq!(std::fs::read(&path).unwrap(), seeds[0]);
    }
}
