//! Hello cookies (protocol 9), pure: a host answers a Hello from an
//! address it has not heard prove itself with a [`Message::HelloCookie`]
//! no bigger than the Hello, and keeps nothing of it. The cookie is a
//! keyed hash of the address and the current two-second epoch, so only a
//! machine that receives at the address can say Hello again carrying it:
//! a Hello sent in someone else's name earns them one small datagram, not
//! a Welcome, a start state or a stream of inputs.
//!
//! [`Message::HelloCookie`]: super::Message::HelloCookie

use super::auth::LinkSecret;
use super::messages::SessionToken;
use super::time::Millis;
use std::hash::{Hash, Hasher};

/// How long one epoch lasts: a cookie is good in its epoch and the next,
/// so for 2 to 4 s, enough for any round trip.
pub const COOKIE_EPOCH_MS: Millis = 2_000;

/// Makes and checks the cookies of one host (its key derives from the
/// host's link secret, which nobody else knows).
#[derive(Clone)]
pub struct CookieJar {
    key: [u8; 32],
}

impl std::fmt::Debug for CookieJar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CookieJar(…)")
    }
}

/// Feeds what `Hash` writes of an address into BLAKE3.
struct KeyedHasher(blake3::Hasher);

impl Hasher for KeyedHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn finish(&self) -> u64 {
        let hash = self.0.finalize();
        let mut first = [0; 8];
        first.copy_from_slice(&hash.as_bytes()[..8]);
        u64::from_le_bytes(first)
    }
}

impl CookieJar {
    /// The jar of the machine whose link secret is `secret`.
    pub fn new(secret: &LinkSecret) -> Self {
        CookieJar {
            key: blake3::derive_key("netcade 2026 hello cookie", &secret.to_bytes()),
        }
    }

    fn cookie<A: Hash>(&self, epoch: u64, address: &A) -> SessionToken {
        let mut hasher = KeyedHasher(blake3::Hasher::new_keyed(&self.key));
        hasher.write(&epoch.to_le_bytes());
        address.hash(&mut hasher);
        // Never UNKNOWN (0): that is a Hello without a cookie.
        SessionToken((hasher.finish() as u32).max(1))
    }

    /// The cookie to send `address` at `now`.
    pub fn issue<A: Hash>(&self, now: Millis, address: &A) -> SessionToken {
        self.cookie(now / COOKIE_EPOCH_MS, address)
    }

    /// Whether `cookie` is one we sent `address` in this epoch or the last.
    pub fn check<A: Hash>(&self, now: Millis, address: &A, cookie: SessionToken) -> bool {
        let epoch = now / COOKIE_EPOCH_MS;
        cookie != SessionToken::UNKNOWN
            && (self.cookie(epoch, address) == cookie
                || epoch
                    .checked_sub(1)
                    .is_some_and(|last| self.cookie(last, address) == cookie))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_is_good_for_its_address_for_two_to_four_seconds_only() {
        let jar = CookieJar::new(&LinkSecret::from_bytes([7; 32]));
        let cookie = jar.issue(1_500, &10u32);
        assert!(jar.check(1_500, &10u32, cookie));
        assert!(jar.check(3_999, &10u32, cookie));
        assert!(!jar.check(4_000, &10u32, cookie), "two epochs later");
        assert!(!jar.check(1_500, &11u32, cookie), "another address");
        assert!(!jar.check(1_500, &10u32, SessionToken::UNKNOWN));
        let other_host = CookieJar::new(&LinkSecret::from_bytes([8; 32]));
        assert!(!other_host.check(1_500, &10u32, cookie), "another host's");
    }
}
