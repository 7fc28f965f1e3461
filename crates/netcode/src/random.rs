//! Seeded randomness: the one generator of the pure code and of what stands
//! on it (random play, the simulated network's faults). Nothing here reads
//! the OS: the seed is the parameter, and the same seed gives the same
//! numbers on every machine.

/// splitmix64: a tiny, well-mixed generator; the same seed gives the same
/// numbers on every machine.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose numbers follow from `seed` alone.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next number, uniform over all of `u64`.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound` > 0); the tiny modulo bias does not
    /// matter for play.
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }

    /// True with probability `numerator / denominator`.
    pub fn chance(&mut self, numerator: u64, denominator: u64) -> bool {
        self.below(denominator) < numerator
    }

    /// True with probability `p` (0 never, 1 always).
    pub fn chance_of(&mut self, p: f64) -> bool {
        p > 0.0 && ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    /// Uniform in `0..=max`.
    pub fn up_to(&mut self, max: u64) -> u64 {
        if max == 0 {
            0
        } else {
            self.next_u64() % (max + 1)
        }
    }
}
