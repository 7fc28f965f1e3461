//! What a player reads about the connection, in words rather than
//! figures: "connecting…", "waiting for opponent", "opponent's connection
//! is unstable", "waiting for P2…", "the opponent left", and a desync as one
//! calm line for a corner ("desync at frame 1234, repaired"). Fed the
//! session's events and its figures; time is a parameter.

use crate::netplay::events::{NetplayEvent, NetplayStats};
use crate::rollback::{Frame, PlayerId};
use std::collections::VecDeque;

/// Which side of the match this machine is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seat {
    /// The host waits for the others to join.
    Host,
    /// A joiner connects to the host.
    Joiner,
}

/// How long a desync stays in the corner after its last change.
pub const DESYNC_SHOWN_MS: u64 = 10_000;

/// Waits for the opponent's input (each run of ticks with a frame due and
/// its input missing counts once) within [`UNSTABLE_WINDOW_MS`] that make
/// a connection "unstable".
pub const UNSTABLE_WAITS: usize = 8;

/// The window the waits are counted in.
pub const UNSTABLE_WINDOW_MS: u64 = 3_000;

/// A rollback this deep (frames) is an unstable connection's too.
pub const UNSTABLE_ROLLBACK: u32 = 7;

/// How long "unstable" stays up after the last sign of it, so the line
/// does not flicker.
pub const UNSTABLE_SHOWN_MS: u64 = 3_000;

/// Where the match stands, as the player reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Before the handshake with the peer.
    Meeting,
    /// Handshake done, frame 0 not begun.
    Starting,
    /// The match runs.
    Playing,
    /// The only opponent left.
    OpponentLeft,
}

/// A desync and whether it was repaired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DesyncNote {
    frame: Frame,
    repaired: bool,
    since_ms: u64,
}

/// The connection's words, kept from the session's events and figures.
#[derive(Clone, Debug)]
pub struct ConnectionWords {
    seat: Seat,
    me: PlayerId,
    phase: Phase,
    /// Other players in the match (1 in a duel).
    opponents: usize,
    /// The players not heard from, as the event names them (`P2`).
    silent: Option<String>,
    desync: Option<DesyncNote>,
    /// When recent waits began (bounded by [`UNSTABLE_WAITS`]).
    waits_ms: VecDeque<u64>,
    /// Whether the last tick waited.
    waiting: bool,
    unstable_until_ms: Option<u64>,
}

impl ConnectionWords {
    /// Nothing heard yet, on `seat` as player `me`, with `opponents` other
    /// players.
    pub fn new(seat: Seat, me: PlayerId, opponents: usize) -> ConnectionWords {
        ConnectionWords {
            seat,
            me,
            phase: Phase::Meeting,
            opponents: opponents.max(1),
            silent: None,
            desync: None,
            waits_ms: VecDeque::with_capacity(UNSTABLE_WAITS),
            waiting: false,
            unstable_until_ms: None,
        }
    }

    /// Takes one of the session's events at `now_ms`.
    pub fn event(&mut self, event: &NetplayEvent, now_ms: u64) {
        match event {
            NetplayEvent::PeerSynchronized { .. } if self.phase == Phase::Meeting => {
                self.phase = Phase::Starting;
            }
            NetplayEvent::JoinerLeftBeforeStart { .. } => self.phase = Phase::Meeting,
            NetplayEvent::Running => self.phase = Phase::Playing,
            NetplayEvent::NetworkInterrupted { players, .. } => {
                self.silent = Some(players.to_string());
            }
            NetplayEvent::NetworkResumed { .. } | NetplayEvent::PeerRejoined { .. } => {
                self.silent = None;
            }
            NetplayEvent::Disconnected { player, .. } if *player != self.me => {
                self.silent = None;
                self.opponents = self.opponents.saturating_sub(1);
                if self.opponents == 0 {
                    self.phase = Phase::OpponentLeft;
                }
            }
            NetplayEvent::Desync { frame, .. } => {
                self.desync = Some(DesyncNote {
                    frame: *frame,
                    repaired: false,
                    since_ms: now_ms,
                });
            }
            _ => {}
        }
    }

    /// The desync at `frame` was repaired (the host's state loaded).
    pub fn desync_repaired(&mut self, frame: Frame, now_ms: u64) {
        self.desync = Some(DesyncNote {
            frame,
            repaired: true,
            since_ms: now_ms,
        });
    }

    /// Takes a tick's figures: whether it waited for the opponent's input,
    /// and the link's figures.
    pub fn figures(&mut self, waited: bool, stats: Option<&NetplayStats>, now_ms: u64) {
        if self.phase != Phase::Playing {
            return;
        }
        let began = waited && !self.waiting;
        self.waiting = waited;
        if began {
            if self.waits_ms.len() == UNSTABLE_WAITS {
                self.waits_ms.pop_front();
            }
            self.waits_ms.push_back(now_ms);
        }
        let many_waits = began
            && self.waits_ms.len() == UNSTABLE_WAITS
            && self
                .waits_ms
                .front()
                .is_some_and(|first| now_ms.saturating_sub(*first) <= UNSTABLE_WINDOW_MS);
        let deep_rollback = stats.is_some_and(|stats| stats.last_rollback >= UNSTABLE_ROLLBACK);
        if many_waits || deep_rollback {
            self.unstable_until_ms = Some(now_ms + UNSTABLE_SHOWN_MS);
        }
    }

    /// The status line at `now_ms`, when there is something to say.
    pub fn line(&self, now_ms: u64) -> Option<String> {
        let words = match self.phase {
            Phase::OpponentLeft => "the opponent left",
            _ if self.silent.is_some() => {
                return self
                    .silent
                    .as_ref()
                    .map(|players| format!("waiting for {players}…"))
            }
            Phase::Meeting if self.seat == Seat::Host => "waiting for opponent",
            Phase::Meeting | Phase::Starting => "connecting…",
            Phase::Playing if self.unstable_until_ms.is_some_and(|until| now_ms < until) => {
                "opponent's connection is unstable"
            }
            Phase::Playing => return None,
        };
        Some(words.to_string())
    }

    /// The desync for a corner at `now_ms`, for [`DESYNC_SHOWN_MS`] after
    /// its last change.
    pub fn corner(&self, now_ms: u64) -> Option<String> {
        let desync = self
            .desync
            .filter(|desync| now_ms.saturating_sub(desync.since_ms) < DESYNC_SHOWN_MS)?;
        Some(if desync.repaired {
            format!("desync at frame {}, repaired", desync.frame)
        } else {
            format!("desync at frame {}", desync.frame)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::Checksum;
    use crate::rollback::{DisconnectReason, PlayerId, PlayerSet};

    fn p2() -> PlayerSet {
        let mut set = PlayerSet::default();
        set.insert(PlayerId::new(1));
        set
    }

    fn running(seat: Seat) -> ConnectionWords {
        let mut words = ConnectionWords::new(seat, PlayerId::new(0), 1);
        words.event(&NetplayEvent::PeerSynchronized { players: p2() }, 0);
        words.event(&NetplayEvent::Running, 0);
        words
    }

    #[test]
    fn a_host_waits_for_its_opponent_and_a_joiner_connects_until_the_match_runs() {
        let mut host = ConnectionWords::new(Seat::Host, PlayerId::new(0), 1);
        assert_eq!(host.line(0).as_deref(), Some("waiting for opponent"));
        host.event(&NetplayEvent::PeerSynchronized { players: p2() }, 10);
        assert_eq!(host.line(10).as_deref(), Some("connecting…"));
        host.event(&NetplayEvent::JoinerLeftBeforeStart { players: p2() }, 20);
        assert_eq!(host.line(20).as_deref(), Some("waiting for opponent"));
        let joiner = ConnectionWords::new(Seat::Joiner, PlayerId::new(1), 1);
        assert_eq!(joiner.line(0).as_deref(), Some("connecting…"));
        assert_eq!(
            running(Seat::Joiner).line(30),
            None,
            "a calm match says nothing"
        );
    }

    #[test]
    fn a_silent_opponent_is_waited_for_by_name_until_heard_and_then_has_left() {
        let mut words = running(Seat::Host);
        let silent = NetplayEvent::NetworkInterrupted {
            players: p2(),
            silent_for_ms: 800,
        };
        words.event(&silent, 100);
        assert_eq!(words.line(100).as_deref(), Some("waiting for P2…"));
        words.event(&NetplayEvent::NetworkResumed { players: p2() }, 200);
        assert_eq!(words.line(200), None);
        let left = NetplayEvent::Disconnected {
            player: PlayerId::new(1),
            at_frame: Frame::new(50),
            reason: DisconnectReason::Quit,
        };
        words.event(&left, 300);
        assert_eq!(words.line(300).as_deref(), Some("the opponent left"));
    }

    #[test]
    fn with_three_players_one_leaving_leaves_an_opponent_and_leaving_oneself_is_not_the_opponent() {
        let mut words = ConnectionWords::new(Seat::Host, PlayerId::new(0), 2);
        words.event(&NetplayEvent::Running, 0);
        let left = |player| NetplayEvent::Disconnected {
            player: PlayerId::new(player),
            at_frame: Frame::new(5),
            reason: DisconnectReason::Quit,
        };
        words.event(&left(0), 5);
        assert_eq!(words.line(5), None);
        words.event(&left(1), 10);
        assert_eq!(words.line(10), None);
        words.event(&left(2), 20);
        assert_eq!(words.line(20).as_deref(), Some("the opponent left"));
    }

    #[test]
    fn many_waits_or_a_deep_rollback_make_the_connection_unstable_for_a_while() {
        let mut words = running(Seat::Joiner);
        let wait_at = |words: &mut ConnectionWords, ms: u64| {
            words.figures(true, None, ms);
            words.figures(false, None, ms + 10);
        };
        // Waits spread out are a normal connection's.
        for tick in 0..UNSTABLE_WAITS as u64 {
            wait_at(&mut words, tick * 1_000);
        }
        assert_eq!(words.line(8_000), None);
        // One long wait is one wait, however many ticks it lasts.
        for tick in 0..100 {
            words.figures(true, None, 9_000 + tick);
        }
        words.figures(false, None, 9_100);
        assert_eq!(words.line(9_100), None);
        // As many waits close together are not.
        for tick in 0..UNSTABLE_WAITS as u64 {
            wait_at(&mut words, 10_000 + tick * 100);
        }
        let unstable = Some("opponent's connection is unstable");
        assert_eq!(words.line(10_800).as_deref(), unstable);
        assert_eq!(words.line(10_700 + UNSTABLE_SHOWN_MS + 1), None);
        let deep = NetplayStats {
            last_rollback: UNSTABLE_ROLLBACK,
            ..NetplayStats::default()
        };
        words.figures(false, Some(&deep), 20_000);
        assert_eq!(words.line(20_000).as_deref(), unstable);
    }

    #[test]
    fn a_desync_is_one_corner_line_that_says_when_it_was_repaired_then_goes() {
        let mut words = running(Seat::Joiner);
        assert_eq!(words.corner(0), None);
        let desync = NetplayEvent::Desync {
            frame: Frame::new(1234),
            player: PlayerId::new(0),
            local: Checksum::default(),
            remote: Checksum::default(),
        };
        words.event(&desync, 1_000);
        assert_eq!(words.corner(1_000).as_deref(), Some("desync at frame 1234"));
        assert_eq!(words.line(1_000), None, "the status line stays calm");
        words.desync_repaired(Frame::new(1234), 2_000);
        let repaired = Some("desync at frame 1234, repaired");
        assert_eq!(
            words.corner(2_000 + DESYNC_SHOWN_MS - 1).as_deref(),
            repaired
        );
        assert_eq!(words.corner(2_000 + DESYNC_SHOWN_MS), None);
    }
}
