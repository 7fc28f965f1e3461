//! How often an address may make us open a connection, pure (time is a
//! parameter): every address has a small allowance of handshakes that
//! refills slowly, and the table of addresses is bounded, so a flood of
//! Hellos from many addresses costs a fixed amount of memory and answers.

use super::time::Millis;
use std::collections::BTreeMap;

/// The allowance each address gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HandshakeLimit {
    /// Handshakes an address may make in a row.
    pub burst: u32,
    /// One more is allowed after each such interval, up to `burst`.
    pub refill_ms: Millis,
    /// Addresses remembered at most; when all are still spending their
    /// allowance, handshakes from new addresses are refused.
    pub addresses: usize,
}

impl Default for HandshakeLimit {
    /// 4 handshakes in a row, then one a second, for up to 1024 addresses.
    fn default() -> Self {
        HandshakeLimit {
            burst: 4,
            refill_ms: 1000,
            addresses: 1024,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Allowance {
    left: u32,
    /// When `left` was last brought up to date.
    counted_at: Millis,
}

/// Per-address handshake allowances. See the module docs.
#[derive(Clone, Debug)]
pub struct HandshakeLimiter<A> {
    limit: HandshakeLimit,
    allowances: BTreeMap<A, Allowance>,
    refused: u64,
}

impl<A: Ord + Copy> HandshakeLimiter<A> {
    /// A limiter that remembers no address yet and has refused nothing.
    pub fn new(limit: HandshakeLimit) -> Self {
        HandshakeLimiter {
            limit,
            allowances: BTreeMap::new(),
            refused: 0,
        }
    }

    /// Whether a handshake from `address` at `now` may be taken; spends one
    /// of its allowance if so, counts a refusal if not.
    pub fn allow(&mut self, now: Millis, address: A) -> bool {
        if !self.allowances.contains_key(&address) && !self.make_room(now) {
            self.refused += 1;
            return false;
        }
        let limit = self.limit;
        let allowance = self.allowances.entry(address).or_insert(Allowance {
            left: limit.burst,
            counted_at: now,
        });
        refill(allowance, now, limit);
        if allowance.left == 0 {
            self.refused += 1;
            return false;
        }
        allowance.left -= 1;
        true
    }

    /// Handshakes refused so far.
    pub fn refused(&self) -> u64 {
        self.refused
    }

    /// Addresses currently remembered.
    pub fn len(&self) -> usize {
        self.allowances.len()
    }

    /// Whether no address is remembered.
    pub fn is_empty(&self) -> bool {
        self.allowances.is_empty()
    }

    /// Makes room for one more address if the table is full, by forgetting
    /// the addresses whose allowance is whole again (forgetting them changes
    /// nothing). Returns whether there is room.
    fn make_room(&mut self, now: Millis) -> bool {
        if self.allowances.len() < self.limit.addresses {
            return true;
        }
        let limit = self.limit;
        self.allowances.retain(|_, allowance| {
            refill(allowance, now, limit);
            allowance.left < limit.burst
        });
        self.allowances.len() < self.limit.addresses
    }
}

/// Adds the handshakes earned since the allowance was last counted.
fn refill(allowance: &mut Allowance, now: Millis, limit: HandshakeLimit) {
    let elapsed = now.saturating_sub(allowance.counted_at);
    let earned = elapsed.checked_div(limit.refill_ms).unwrap_or(u64::MAX);
    if allowance
        .left
        .saturating_add(earned.min(u64::from(u32::MAX)) as u32)
        >= limit.burst
    {
        allowance.left = limit.burst;
        allowance.counted_at = now;
    } else {
        allowance.left += earned as u32;
        allowance.counted_at += earned * limit.refill_ms;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(addresses: usize) -> HandshakeLimiter<u32> {
        HandshakeLimiter::new(HandshakeLimit {
            burst: 3,
            refill_ms: 100,
            addresses,
        })
    }

    #[test]
    fn an_address_gets_its_burst_then_one_handshake_per_interval() {
        let mut limiter = limiter(8);
        assert!((0..3).all(|_| limiter.allow(0, 7)));
        assert!(!limiter.allow(0, 7));
        assert!(!limiter.allow(99, 7));
        assert!(limiter.allow(100, 7));
        assert!(!limiter.allow(150, 7));
        assert!(limiter.allow(200, 7));
        assert_eq!(limiter.refused(), 3);
        // Another address has its own allowance.
        assert!(limiter.allow(200, 8));
    }

    #[test]
    fn a_long_silence_restores_only_the_burst() {
        let mut limiter = limiter(8);
        assert!((0..3).all(|_| limiter.allow(0, 7)));
        assert!((0..3).all(|_| limiter.allow(1_000_000, 7)));
        assert!(!limiter.allow(1_000_000, 7));
    }

    #[test]
    fn a_full_table_refuses_new_addresses_until_an_allowance_is_whole_again() {
        let mut limiter = limiter(2);
        assert!(limiter.allow(0, 1));
        assert!(limiter.allow(0, 2));
        assert!(!limiter.allow(0, 3), "no room: both others are spending");
        assert_eq!(limiter.len(), 2);
        // After an interval both are whole again and forgotten.
        assert!(limiter.allow(100, 3));
        assert_eq!(limiter.len(), 1);
    }
}
