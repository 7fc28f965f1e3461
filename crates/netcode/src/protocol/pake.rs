//! The room code as the password of the link's key exchange (protocol 10):
//! SPAKE2 (RustCrypto's `spake2`, Ed25519 group) beside the x25519
//! exchange of [`super::auth`]. The joiner's Hello carries its SPAKE2
//! element, the host's Welcome its own and a confirmation of the keys it
//! agreed; both sides mix the SPAKE2 key into the link's keys. Without the
//! code, a machine that rewrites the handshakes agrees keys with neither
//! side (its Welcome's confirmation fails at the joiner, its key proof
//! opens at no host), and each try costs it one guess of the code: the
//! elements give nothing to test other guesses offline.
//!
//! Pure and deterministic: each side's SPAKE2 scalar is derived from its
//! link secret (the caller's randomness) and, on the host, the joiner's
//! element, so the Welcome a repeated Hello earns is the same, and a
//! restarted joiner agrees the same keys again from what it kept.

use super::auth::LinkSecret;
pub use super::auth::RoomKey;
pub use super::messages::RoomElement;
use spake2::{Ed25519Group, Identity, Password, Spake2};

/// The side byte SPAKE2 puts before the joiner's element (`'A'`) and the
/// host's (`'B'`): implied by the message the element rides in, so not sent.
const JOINER_SIDE: u8 = b'A';
const HOST_SIDE: u8 = b'B';

/// The room's password: the room code's characters, as both sides read it.
#[derive(Clone, PartialEq, Eq)]
pub struct RoomPassword(Vec<u8>);

impl RoomPassword {
    /// The password of the code `code` (its compact form, `7KQM2X`).
    pub fn new(code: &str) -> Self {
        RoomPassword(code.as_bytes().to_vec())
    }
}

impl std::fmt::Debug for RoomPassword {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RoomPassword(…)")
    }
}

/// The joiner's element, the same for every Hello of this secret.
pub fn joiner_element(secret: &LinkSecret, password: &RoomPassword) -> RoomElement {
    element_of(&joiner_start(secret, password).1)
}

/// The joiner's key from the host's element; `None` when that element is
/// no point of the group.
pub fn joiner_key(
    secret: &LinkSecret,
    password: &RoomPassword,
    host: RoomElement,
) -> Option<RoomKey> {
    let (state, _) = joiner_start(secret, password);
    finish(state, HOST_SIDE, host)
}

/// The host's answer to the joiner's element `joiner`: its own element and
/// the key; `None` when `joiner` is no point of the group.
pub fn host_answer(
    secret: &LinkSecret,
    password: &RoomPassword,
    joiner: RoomElement,
) -> Option<(RoomElement, RoomKey)> {
    let seed = derive_seed(secret, "netcade 2026 room exchange, host", &joiner.0);
    let (state, message) = Spake2::<Ed25519Group>::start_b_with_rng(
        &Password::new(&password.0),
        &joiner_identity(),
        &host_identity(),
        SeededBytes(blake3::Hasher::new_keyed(&seed).finalize_xof()),
    );
    let key = finish(state, JOINER_SIDE, joiner)?;
    Some((element_of(&message), key))
}

fn joiner_start(secret: &LinkSecret, password: &RoomPassword) -> (Spake2<Ed25519Group>, Vec<u8>) {
    let seed = derive_seed(secret, "netcade 2026 room exchange, joiner", &[]);
    Spake2::<Ed25519Group>::start_a_with_rng(
        &Password::new(&password.0),
        &joiner_identity(),
        &host_identity(),
        SeededBytes(blake3::Hasher::new_keyed(&seed).finalize_xof()),
    )
}

fn joiner_identity() -> Identity {
    Identity::new(b"netcade joiner")
}

fn host_identity() -> Identity {
    Identity::new(b"netcade host")
}

fn finish(state: Spake2<Ed25519Group>, side: u8, theirs: RoomElement) -> Option<RoomKey> {
    let mut message = [0; 33];
    message[0] = side;
    message[1..].copy_from_slice(&theirs.0);
    let key = state.finish(&message).ok()?;
    Some(RoomKey(blake3::derive_key("netcade 2026 room key", &key)))
}

fn element_of(message: &[u8]) -> RoomElement {
    let mut element = [0; 32];
    // SPAKE2's message is its side byte, then the element.
    element.copy_from_slice(&message[1..33]);
    RoomElement(element)
}

fn derive_seed(secret: &LinkSecret, context: &str, more: &[u8]) -> [u8; 32] {
    let mut material = secret.to_bytes().to_vec();
    material.extend_from_slice(more);
    blake3::derive_key(context, &material)
}

/// Bytes of a BLAKE3 stream handed to SPAKE2 as its "random" scalar: the
/// randomness is the link secret's, drawn by the caller.
struct SeededBytes(blake3::OutputReader);

impl rand_core::TryRng for SeededBytes {
    type Error = core::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        let mut bytes = [0; 4];
        self.0.fill(&mut bytes);
        Ok(u32::from_le_bytes(bytes))
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        let mut bytes = [0; 8];
        self.0.fill(&mut bytes);
        Ok(u64::from_le_bytes(bytes))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        self.0.fill(dst);
        Ok(())
    }
}

impl rand_core::TryCryptoRng for SeededBytes {}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets() -> (LinkSecret, LinkSecret) {
        (
            LinkSecret::from_bytes([1; 32]),
            LinkSecret::from_bytes([2; 32]),
        )
    }

    #[test]
    fn the_same_code_agrees_the_same_key_and_another_code_does_not() {
        let (host, joiner) = secrets();
        let code = RoomPassword::new("7KQM2X");
        let element = joiner_element(&joiner, &code);
        let (answer, host_key) = host_answer(&host, &code, element).unwrap();
        assert_eq!(joiner_key(&joiner, &code, answer), Some(host_key));
        let wrong = RoomPassword::new("7KQM2Y");
        assert_ne!(joiner_key(&joiner, &wrong, answer), Some(host_key));
        let (other_answer, other_key) = host_answer(&host, &wrong, element).unwrap();
        assert_ne!(other_key, host_key);
        assert_ne!(joiner_key(&joiner, &code, other_answer), Some(other_key));
    }

    #[test]
    fn elements_repeat_for_the_same_secret_and_differ_between_secrets() {
        let (host, joiner) = secrets();
        let code = RoomPassword::new("7KQM2X");
        assert_eq!(
            joiner_element(&joiner, &code),
            joiner_element(&joiner, &code)
        );
        assert_ne!(joiner_element(&joiner, &code), joiner_element(&host, &code));
        let element = joiner_element(&joiner, &code);
        assert_eq!(
            host_answer(&host, &code, element).unwrap().0,
            host_answer(&host, &code, element).unwrap().0,
            "a repeated Hello earns the same Welcome"
        );
    }

    #[test]
    fn elements_off_the_curve_agree_nothing_on_either_side_and_never_panic() {
        let (host, joiner) = secrets();
        let code = RoomPassword::new("7KQM2X");
        let mut refused = 0;
        for byte in 0..=255u8 {
            // About half of all y coordinates are no point's.
            let element = RoomElement([byte; 32]);
            let at_host = host_answer(&host, &code, element).is_none();
            assert_eq!(at_host, joiner_key(&joiner, &code, element).is_none());
            refused += usize::from(at_host);
        }
        assert!(refused > 0);
    }
}
