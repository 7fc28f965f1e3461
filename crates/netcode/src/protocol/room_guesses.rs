//! How many room-code guesses a host answers, pure (time is a parameter).
//! Each Welcome a host met by room code gives a Hello is one guess of the
//! code for whoever sent it: the SPAKE2 answer and its confirmation let
//! the sender test the one code it tried (see [`super::pake`]). A guess
//! is spent when the Welcome is given and refunded when its peer proves
//! it holds the link's key (only the code's holder can), so only failed
//! or unfinished exchanges count. The budget is one for the whole room,
//! whatever the addresses: `burst` at once, then one more per
//! `refill_ms`. Past it the host answers no Hello of the room until the
//! budget grows again.

use super::time::Millis;

/// The room's budget of failed exchanges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoomGuessLimit {
    /// Failed (or unfinished) exchanges the room takes in a row.
    pub burst: u32,
    /// One more is allowed after each such interval, up to `burst`.
    pub refill_ms: Millis,
}

impl Default for RoomGuessLimit {
    /// 10 in a row, then one every 5 minutes: a guesser tries at most
    /// 10 + 12 codes an hour of the 31³ = 29 791 (0.074 %).
    fn default() -> Self {
        RoomGuessLimit {
            burst: 10,
            refill_ms: 5 * 60_000,
        }
    }
}

/// What [`RoomGuesses::spend`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuessAnswer {
    /// Answer the Hello: a guess was spent.
    Answer,
    /// Do not answer: the budget is spent.
    Refuse {
        /// The first Hello refused since the budget last had room (tell
        /// the user once).
        first: bool,
        /// When the next guess is allowed.
        retry_in_ms: Millis,
    },
}

/// A room's guesses left. See the module docs.
#[derive(Clone, Debug)]
pub struct RoomGuesses {
    limit: RoomGuessLimit,
    left: u32,
    /// When `left` was last brought up to date.
    counted_at: Millis,
    /// Whether a refusal was told since the budget last had room.
    told: bool,
    refused: u64,
}

impl RoomGuesses {
    /// A whole budget at `now`.
    pub fn new(limit: RoomGuessLimit, now: Millis) -> Self {
        RoomGuesses {
            limit,
            left: limit.burst,
            counted_at: now,
            told: false,
            refused: 0,
        }
    }

    /// Spends a guess for a Hello about to be welcomed at `now`, if one is left.
    pub fn spend(&mut self, now: Millis) -> GuessAnswer {
        self.refill(now);
        if self.left > 0 {
            self.left -= 1;
            self.told = false;
            return GuessAnswer::Answer;
        }
        self.refused += 1;
        let first = !self.told;
        self.told = true;
        let next = self.counted_at.saturating_add(self.limit.refill_ms);
        GuessAnswer::Refuse {
            first,
            retry_in_ms: next.saturating_sub(now),
        }
    }

    /// A welcomed peer proved it holds the code: its guess is given back.
    pub fn refund(&mut self, now: Millis) {
        self.refill(now);
        if self.left < self.limit.burst {
            self.left += 1;
        }
        if self.left == self.limit.burst {
            self.counted_at = now;
        }
    }

    /// Guesses that may be answered now.
    pub fn left(&mut self, now: Millis) -> u32 {
        self.refill(now);
        self.left
    }

    /// Hellos left unanswered because the budget was spent.
    pub fn refused(&self) -> u64 {
        self.refused
    }

    /// Adds the guesses earned since the budget was last counted.
    fn refill(&mut self, now: Millis) {
        let elapsed = now.saturating_sub(self.counted_at);
        let earned = elapsed
            .checked_div(self.limit.refill_ms)
            .unwrap_or(u64::MAX);
        let room = u64::from(self.limit.burst - self.left.min(self.limit.burst));
        if earned >= room {
            self.left = self.limit.burst;
            self.counted_at = now;
        } else {
            self.left += earned as u32;
            self.counted_at += earned * self.limit.refill_ms;
        }
    }
}

/// The chance that a guesser finds a code of `codes` possible ones within
/// `ms` of a room's life, against `limit`: at most `burst + ms / refill_ms`
/// distinct guesses, each right with probability 1 / `codes`.
pub fn guesser_success(limit: RoomGuessLimit, codes: u32, ms: Millis) -> f64 {
    let guesses = u64::from(limit.burst) + ms.checked_div(limit.refill_ms).unwrap_or(u64::MAX);
    (guesses as f64 / f64::from(codes)).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guesses() -> RoomGuesses {
        RoomGuesses::new(
            RoomGuessLimit {
                burst: 3,
                refill_ms: 100,
            },
            0,
        )
    }

    #[test]
    fn a_room_answers_its_burst_then_one_guess_per_interval_and_tells_of_the_first_refusal() {
        let mut room = guesses();
        assert!((0..3).all(|_| room.spend(0) == GuessAnswer::Answer));
        assert_eq!(
            room.spend(40),
            GuessAnswer::Refuse {
                first: true,
                retry_in_ms: 60
            }
        );
        assert_eq!(
            room.spend(50),
            GuessAnswer::Refuse {
                first: false,
                retry_in_ms: 50
            }
        );
        assert_eq!(room.spend(100), GuessAnswer::Answer);
        assert_eq!(
            room.spend(150),
            GuessAnswer::Refuse {
                first: true,
                retry_in_ms: 50
            },
            "told again: answers were given in between"
        );
        assert_eq!(room.refused(), 3);
    }

    #[test]
    fn a_proven_exchange_costs_nothing_and_a_long_wait_restores_only_the_burst() {
        let mut room = guesses();
        for now in 0..50 {
            assert_eq!(room.spend(now), GuessAnswer::Answer);
            room.refund(now);
        }
        assert_eq!(room.left(50), 3);
        assert!((0..3).all(|_| room.spend(10_000) == GuessAnswer::Answer));
        assert_eq!(room.left(10_000), 0);
    }

    #[test]
    fn the_default_leaves_a_guesser_under_a_tenth_of_a_percent_an_hour_and_about_one_a_day() {
        let limit = RoomGuessLimit::default();
        let codes = 31 * 31 * 31;
        let hour = guesser_success(limit, codes, 3_600_000);
        assert_eq!(hour, 22.0 / 29_791.0);
        assert!(hour < 0.001);
        let day = guesser_success(limit, codes, 24 * 3_600_000);
        assert_eq!(day, 298.0 / 29_791.0, "about 1 % a day");
    }
}
