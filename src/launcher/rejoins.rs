//! The home screen's "Rejoin the match at HOST:PORT": one for each rejoin
//! ticket the data directory holds (a joiner whose process was killed comes
//! back with `join HOST:PORT --rejoin`, see docs/netplay.md), with the
//! game the ticket names.

use super::forms::{GameChoice, Session};
use crate::live::players::{rejoin_folder, rejoinable_matches, RejoinableMatch};
use std::path::Path;

/// A match the home screen offers to rejoin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RejoinOffer {
    /// Its button's label.
    pub label: String,
    /// `join HOST:PORT --rejoin`.
    pub session: Session,
    /// The game it was played with: the ticket's, else the recent game
    /// with its content; none when neither is known (the game chosen is
    /// used, and the command says if it is another).
    pub game: Option<GameChoice>,
}

/// The offers of the tickets in the data directory.
pub fn rejoin_offers_kept(recent: &[GameChoice]) -> Vec<RejoinOffer> {
    rejoin_offers(
        &rejoinable_matches(&rejoin_folder()),
        recent,
        &mut content_hash,
    )
}

/// The offers of the matches `found`; `hash_of` gives a content file's
/// xxh3 (none if it cannot be read).
pub fn rejoin_offers(
    found: &[RejoinableMatch],
    recent: &[GameChoice],
    hash_of: &mut dyn FnMut(&Path) -> Option<u64>,
) -> Vec<RejoinOffer> {
    found
        .iter()
        .map(|found| RejoinOffer {
            label: format!("Rejoin the match at {}", found.host),
            session: Session::Rejoin {
                address: found.host.to_string(),
            },
            game: match &found.game {
                Some(game) => Some(GameChoice {
                    core: game.core.display().to_string(),
                    rom: game.rom.clone(),
                }),
                None => recent
                    .iter()
                    .find(|game| {
                        game.rom.as_deref().and_then(&mut *hash_of) == Some(found.content_hash)
                    })
                    .cloned(),
            },
        })
        .collect()
}

/// Content files hashed at most to find a ticket's game among the recent
/// ones (a disc image is not read whole to draw the home screen).
const MAX_HASHED_BYTES: u64 = 64 * 1024 * 1024;

/// The xxh3 of a content file, as a match's handshake carries it.
fn content_hash(path: &Path) -> Option<u64> {
    let size = std::fs::metadata(path).ok()?.len();
    if size > MAX_HASHED_BYTES {
        return None;
    }
    let content = std::fs::read(path).ok()?;
    Some(netcode::checksum::Checksum::of(&content).0)
}
