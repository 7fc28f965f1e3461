//! Who plays: player ids, sets of players without allocation, local or remote.

use std::fmt;

/// The most players a session holds (fixed arrays everywhere, no maps).
pub use crate::input::MAX_PLAYERS;

/// A player slot, `0..players` (shown to people as P1…P4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PlayerId(u8);

impl PlayerId {
    /// Player slot `index` (0-based). Checked against the session's player
    /// count wherever it is used.
    pub const fn new(index: u8) -> Self {
        PlayerId(index)
    }

    /// The 0-based slot, for indexing per-player arrays.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for PlayerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "P{}", self.0 as u32 + 1)
    }
}

/// Where a player's buttons come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayerKind {
    /// Pressed on this machine; confirmed as soon as it is added.
    Local,
    /// Pressed on another machine; predicted until it arrives.
    Remote,
}

/// A set of players as a bitmask: copyable, allocation-free, ordered.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PlayerSet(u8);

impl PlayerSet {
    /// No players.
    pub const EMPTY: PlayerSet = PlayerSet(0);

    /// The set whose bit `n` stands for player slot `n`.
    pub const fn from_bits(bits: u8) -> Self {
        PlayerSet(bits)
    }

    /// The bitmask: bit `n` for player slot `n`.
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// The bit for `player`; ids past the eighth have none (never in a set).
    const fn bit(player: PlayerId) -> u8 {
        match 1u8.checked_shl(player.0 as u32) {
            Some(bit) => bit,
            None => 0,
        }
    }

    /// This set and `player`.
    pub fn with(self, player: PlayerId) -> PlayerSet {
        PlayerSet(self.0 | Self::bit(player))
    }

    /// Adds `player`.
    pub fn insert(&mut self, player: PlayerId) {
        self.0 |= Self::bit(player);
    }

    /// Removes `player`.
    pub fn remove(&mut self, player: PlayerId) {
        self.0 &= !Self::bit(player);
    }

    /// Whether `player` is in the set.
    pub const fn contains(self, player: PlayerId) -> bool {
        self.0 & Self::bit(player) != 0
    }

    /// Whether the set has no players.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// How many players the set has.
    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// The players in the set, lowest id first.
    pub fn iter(self) -> impl Iterator<Item = PlayerId> {
        (0..8u8)
            .filter(move |i| self.0 & (1 << i) != 0)
            .map(PlayerId)
    }
}

impl FromIterator<PlayerId> for PlayerSet {
    fn from_iter<I: IntoIterator<Item = PlayerId>>(iter: I) -> Self {
        let mut set = PlayerSet::EMPTY;
        for player in iter {
            set.insert(player);
        }
        set
    }
}

/// `{P1, P3}`
impl fmt::Debug for PlayerSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(self.iter().map(|p| p.to_string()))
            .finish()
    }
}

/// `P1, P3`
impl fmt::Display for PlayerSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, player) in self.iter().enumerate() {
            if n > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{player}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_player_set_holds_each_player_once_in_order() {
        let mut set = PlayerSet::EMPTY;
        set.insert(PlayerId::new(2));
        set.insert(PlayerId::new(0));
        set.insert(PlayerId::new(2));
        assert_eq!(set.len(), 2);
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            vec![PlayerId::new(0), PlayerId::new(2)]
        );
        assert_eq!(set.to_string(), "P1, P3");
        set.insert(PlayerId::new(200));
        assert_eq!(set.len(), 2, "ids past the eighth are never members");
        set.remove(PlayerId::new(0));
        assert!(!set.contains(PlayerId::new(0)));
        assert!(set.contains(PlayerId::new(2)));
    }
}
