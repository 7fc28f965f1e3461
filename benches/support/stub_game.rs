//! The game both netcode benchmarks drive: tiny and deterministic, so the
//! measured cost is the session's, not the game's.

/// Four players' worth of integer state; a few bytes like a real RAM checksum basis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StubState {
    pub frame: u32,
    pub position: [i32; 4],
    pub energy: [i32; 4],
}

impl StubState {
    pub fn advance(&mut self, inputs: &[u16]) {
        self.frame = self.frame.wrapping_add(1);
        for (player, &buttons) in inputs.iter().enumerate().take(4) {
            let dx = (buttons & 0x80 != 0) as i32 - (buttons & 0x40 != 0) as i32;
            self.position[player] = self.position[player].wrapping_add(dx);
            self.energy[player] = self.energy[player]
                .wrapping_mul(31)
                .wrapping_add(buttons as i32);
        }
    }

    pub fn to_bytes(self) -> [u8; 36] {
        let mut bytes = [0u8; 36];
        bytes[..4].copy_from_slice(&self.frame.to_le_bytes());
        for player in 0..4 {
            let at = 4 + player * 8;
            bytes[at..at + 4].copy_from_slice(&self.position[player].to_le_bytes());
            bytes[at + 4..at + 8].copy_from_slice(&self.energy[player].to_le_bytes());
        }
        bytes
    }

    pub fn from_bytes(bytes: &[u8]) -> StubState {
        let word = |at: usize| i32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let mut state = StubState {
            frame: word(0) as u32,
            ..StubState::default()
        };
        for player in 0..4 {
            let at = 4 + player * 8;
            state.position[player] = word(at);
            state.energy[player] = word(at + 4);
        }
        state
    }

    pub fn checksum(&self) -> u64 {
        xxhash_rust::xxh3::xxh3_64(&self.to_bytes())
    }
}

/// Plausible play: each player holds a random button set for a random stretch.
pub struct RandomPlay {
    seed: u64,
    held: [u16; 4],
    hold_left: [u32; 4],
}

impl RandomPlay {
    pub fn new(seed: u64) -> Self {
        RandomPlay {
            seed,
            held: [0; 4],
            hold_left: [0; 4],
        }
    }

    fn next_u64(&mut self) -> u64 {
        // splitmix64
        self.seed = self.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn buttons(&mut self, player: usize) -> u16 {
        if self.hold_left[player] == 0 {
            let roll = self.next_u64();
            self.held[player] = (roll & 0x0FF3) as u16;
            self.hold_left[player] = 1 + ((roll >> 32) % 12) as u32;
        }
        self.hold_left[player] -= 1;
        self.held[player]
    }
}
