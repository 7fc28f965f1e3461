//! A lobby identity: an Ed25519 key pair kept in netcade's data directory
//! (`lobby-key`, made on first use, readable by the user only), which
//! signs this player's presence and every message it sends. A record
//! ends with the signer's public key and the signature of a context (the
//! presence's name, or the subject a message is sent on, so a record
//! signed for one place is refused in any other) and all before the
//! signature: a record under a name whose presence another key signed, or
//! one nobody signed, is dropped.

use crate::engine::AppError;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use netcode::lobby::{Envelope, Presence};
use netcode::protocol::{Fingerprint, PublicKey};

/// The key file in netcade's data directory.
const KEY_FILE: &str = "lobby-key";

const KEY_BYTES: usize = 32;
const SIGNATURE_BYTES: usize = 64;

/// What signing adds to a record.
pub const TRAILER_BYTES: usize = KEY_BYTES + SIGNATURE_BYTES;

/// A signer's public key, as records carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LobbyKey(pub [u8; KEY_BYTES]);

impl LobbyKey {
    /// The key's short fingerprint, shown with the name (`bo K7QD2-MXA4P`).
    pub fn fingerprint(&self) -> Fingerprint {
        Fingerprint::of_key(&PublicKey(self.0))
    }
}

/// This player's key pair.
pub struct LobbyIdentity {
    key: SigningKey,
}

/// What is signed: the context, ended, then the record up to the signature.
fn signed_bytes(context: &str, sealed: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(sealed.len() + context.len() + 16);
    bytes.extend_from_slice(b"netcade lobby 1\0");
    bytes.extend_from_slice(context.as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(sealed);
    bytes
}

impl LobbyIdentity {
    /// The identity of `seed`.
    pub fn from_seed(seed: [u8; 32]) -> LobbyIdentity {
        LobbyIdentity {
            key: SigningKey::from_bytes(&seed),
        }
    }

    /// This machine's identity (made and kept the first time).
    pub fn of_this_machine() -> Result<LobbyIdentity, AppError> {
        let path = crate::paths::data_subdir(KEY_FILE);
        let seed = crate::live::broadcast::signing::kept_seed(&path, "the lobby identity")?;
        Ok(LobbyIdentity::from_seed(seed))
    }

    /// Its public key.
    pub fn key(&self) -> LobbyKey {
        LobbyKey(self.key.verifying_key().to_bytes())
    }

    /// `presence`'s record, signed for its name.
    pub fn seal_presence(&self, presence: &Presence) -> Vec<u8> {
        self.seal(&presence_context(&presence.name), &presence.encode())
    }

    /// `envelope`'s bytes, signed for `to`'s subject.
    pub fn seal_message(&self, to: &str, envelope: &Envelope) -> Vec<u8> {
        self.seal(&super::inbox_subject(to), &envelope.encode())
    }

    /// `body`, signed for `context`.
    pub fn seal(&self, context: &str, body: &[u8]) -> Vec<u8> {
        let mut sealed = Vec::with_capacity(body.len() + TRAILER_BYTES);
        sealed.extend_from_slice(body);
        sealed.extend_from_slice(self.key.verifying_key().as_bytes());
        let signature = self.key.sign(&signed_bytes(context, &sealed));
        sealed.extend_from_slice(&signature.to_bytes());
        sealed
    }
}

/// Why a record was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forgery {
    /// Too short to be signed, or its key is not a key.
    Unsigned,
    /// Its signature is not its key's for this context.
    BadSignature,
}

/// The body of `payload` and who signed it for `context`.
pub fn open<'a>(context: &str, payload: &'a [u8]) -> Result<(LobbyKey, &'a [u8]), Forgery> {
    let body_end = payload
        .len()
        .checked_sub(TRAILER_BYTES)
        .ok_or(Forgery::Unsigned)?;
    let (signed, signature) = payload.split_at(payload.len() - SIGNATURE_BYTES);
    let key: [u8; KEY_BYTES] = signed[body_end..]
        .try_into()
        .map_err(|_| Forgery::Unsigned)?;
    let signature: [u8; SIGNATURE_BYTES] = signature.try_into().map_err(|_| Forgery::Unsigned)?;
    let verifying = VerifyingKey::from_bytes(&key).map_err(|_| Forgery::Unsigned)?;
    verifying
        .verify_strict(
            &signed_bytes(context, signed),
            &Signature::from_bytes(&signature),
        )
        .map_err(|_| Forgery::BadSignature)?;
    Ok((LobbyKey(key), &payload[..body_end]))
}

/// What a presence under `name` is signed for.
pub fn presence_context(name: &str) -> String {
    format!("presence {name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_opens_only_where_it_was_signed_and_only_unchanged() {
        let al = LobbyIdentity::from_seed([1; 32]);
        let sealed = al.seal("to bo", b"hello");
        assert_eq!(open("to bo", &sealed), Ok((al.key(), b"hello".as_slice())));
        assert_eq!(
            open("to cy", &sealed),
            Err(Forgery::BadSignature),
            "replayed to another recipient"
        );
        let mut changed = sealed.clone();
        changed[0] ^= 1;
        assert_eq!(open("to bo", &changed), Err(Forgery::BadSignature));
        let mallory = LobbyIdentity::from_seed([2; 32]);
        let mut posing = mallory.seal("to bo", b"hello");
        let at = posing.len() - TRAILER_BYTES;
        posing[at..at + KEY_BYTES].copy_from_slice(&al.key().0);
        assert_eq!(
            open("to bo", &posing),
            Err(Forgery::BadSignature),
            "al's key on mallory's signature"
        );
    }

    #[test]
    fn short_or_garbage_records_are_refused_never_a_panic() {
        for length in [0, 1, TRAILER_BYTES - 1, TRAILER_BYTES, TRAILER_BYTES + 7] {
            let garbage = vec![0xff; length];
            assert!(open("x", &garbage).is_err(), "{length} bytes");
        }
        assert_ne!(
            LobbyIdentity::from_seed([1; 32]).key().fingerprint(),
            LobbyIdentity::from_seed([2; 32]).key().fingerprint()
        );
    }
}
