//! What a match came to: how it ended, its desyncs, and the summary `host`
//! and `join` end with, for people and as JSON.

use crate::engine::checksums_json;
use crate::engine::report::Report;
use crate::engine::sinks::SinksSummary;
use crate::live::chat::ChatCounts;
use crate::live::front_end::{delays_text, lags_text};
use crate::live::wire::WireTraffic;
use netcode::checksum::Checksums;
use netcode::diff::ByteDiff;
use netcode::netplay::{LinkFingerprints, NetplayStats};
use netcode::protocol::Fingerprint;
use netcode::replay::EndReason;
use std::io::Write;

/// How a match ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchEnd {
    /// Every frame asked for is final.
    Finished,
    /// Ctrl-C, SIGTERM or SIGHUP: we left, the peer was told.
    Interrupted,
    /// The window was closed, or the player chose Leave in it: we left,
    /// the peer was told.
    WindowClosed,
    /// The host cancelled (its window's Cancel, or closed) before anyone
    /// joined: no match was played.
    Cancelled,
    /// The peer said it was leaving.
    PeerLeft,
    /// Nothing heard from the peer for the disconnect timeout (or it broke
    /// the protocol and its link was closed).
    PeerLost,
    /// The peer was heard, but no frame became final for too long (here
    /// or at the peer, which said so).
    Stalled,
}

impl MatchEnd {
    /// What happened, as the notice on screen says it.
    pub fn describe(self) -> &'static str {
        match self {
            MatchEnd::Finished => "finished",
            MatchEnd::Interrupted => "interrupted",
            MatchEnd::WindowClosed => "you left",
            MatchEnd::Cancelled => "hosting cancelled before anyone joined",
            MatchEnd::PeerLeft => "the peer left",
            MatchEnd::PeerLost => "the peer was lost",
            MatchEnd::Stalled => "the match stalled",
        }
    }

    /// How the summary's first line begins: `match finished`, `match ended
    /// (the peer was lost)`.
    fn summary(self) -> String {
        match self {
            MatchEnd::Finished | MatchEnd::Interrupted => format!("match {}", self.describe()),
            _ => format!("match ended ({})", self.describe()),
        }
    }

    fn json_name(self) -> &'static str {
        match self {
            MatchEnd::Finished => "finished",
            MatchEnd::Interrupted => "interrupted",
            MatchEnd::WindowClosed => "window_closed",
            MatchEnd::Cancelled => "cancelled",
            MatchEnd::PeerLeft => "peer_left",
            MatchEnd::PeerLost => "peer_lost",
            MatchEnd::Stalled => "stalled",
        }
    }

    /// The replay's end record says this.
    pub(crate) fn end_reason(self) -> EndReason {
        match self {
            MatchEnd::Finished => EndReason::Finished,
            MatchEnd::Interrupted | MatchEnd::WindowClosed | MatchEnd::Cancelled => {
                EndReason::Interrupted
            }
            MatchEnd::PeerLeft | MatchEnd::PeerLost | MatchEnd::Stalled => EndReason::Disconnect,
        }
    }
}

/// What became of the match's desyncs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Desyncs {
    /// Checkpoints whose checksums differed here and at the peer.
    pub(crate) detected: u64,
    /// Of those, compared with the host's state of the frame (the joiner).
    pub(crate) diagnosed: u64,
    /// Of those, replaced by the host's state and re-simulated.
    pub(crate) repaired: u64,
    /// The game memory bytes that differed at the last diagnosed one.
    pub(crate) last_memory_diff: Option<ByteDiff>,
}

/// The rollbacks a machine carried out.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Rollbacks {
    pub(crate) count: u64,
    pub(crate) mean_depth: f64,
    pub(crate) max_depth: u32,
}

/// A match's summary (`host`, `join`).
pub(crate) struct MatchReport {
    pub(crate) command: &'static str,
    /// Whether the match ran in lockstep (else with rollback).
    pub(crate) lockstep: bool,
    pub(crate) game: String,
    pub(crate) end: MatchEnd,
    /// Frames final on this machine (all of them agreed with the peer).
    pub(crate) frames: u32,
    pub(crate) checksums: Option<Checksums>,
    /// This machine's player slot.
    pub(crate) me: u8,
    /// Our input delay at the end.
    pub(crate) input_delay: u32,
    /// Every player's input delay by slot, ours included (`None`: never reported).
    pub(crate) delays: Vec<(u8, Option<u32>)>,
    /// Every player's run-ahead, by slot, ours included.
    pub(crate) run_aheads: Vec<(u8, Option<u32>)>,
    /// Where this machine's frame ticks spent their time.
    pub(crate) profile: crate::engine::matches::profile::LoopProfile,
    /// Every other player's figures by slot.
    pub(crate) peers: Vec<(u8, NetplayStats)>,
    pub(crate) rollbacks: Rollbacks,
    pub(crate) stall_frames: u64,
    pub(crate) desyncs: Desyncs,
    /// The link's traffic, over the match's seconds.
    pub(crate) wire: WireTraffic,
    pub(crate) dropped_datagrams: u64,
    /// Hellos of the room left unanswered: too many of its exchanges failed.
    pub(crate) refused_room_guesses: u64,
    /// The path ICE chose (a match through a room), how it goes and how
    /// long connecting took.
    pub(crate) path: Option<crate::net::ice::IcePath>,
    /// Bytes the saved states took at the end: the rollback window's and
    /// the checkpoints kept for desync repair (both bounded).
    pub(crate) state_bytes: usize,
    pub(crate) inputs: String,
    /// Chat lines sent and received.
    pub(crate) chat: ChatCounts,
    /// What the match's outputs left.
    pub(crate) outputs: SinksSummary,
    /// This machine's key's fingerprint, and each link's keys.
    pub(crate) key: Fingerprint,
    pub(crate) links: Vec<LinkFingerprints>,
}

impl MatchReport {
    /// One other player's entry: its link's figures; `input_delay` and
    /// `rollbacks` are this machine's (as with two players).
    fn peer_json(&self, slot: u8, stats: &NetplayStats) -> serde_json::Value {
        serde_json::json!({
            "player": slot,
            "ping_ms": stats.ping_ms,
            "input_delay": self.input_delay,
            "player_input_delay": stats.remote_input_delay,
            "frames_ahead": stats.frames_ahead,
            "rollbacks_caused": stats.rollbacks,
            "rollbacks": {
                "count": self.rollbacks.count,
                "mean_depth": self.rollbacks.mean_depth,
                "max_depth": self.rollbacks.max_depth,
            },
        })
    }

    fn mode(&self) -> &'static str {
        if self.lockstep {
            "lockstep"
        } else {
            "rollback"
        }
    }
}

impl Report for MatchReport {
    fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "{}: {} frames final, {:.1} s, {}, {}",
            self.end.summary(),
            self.frames,
            self.wire.seconds,
            self.game,
            self.mode()
        )?;
        for (slot, stats) in &self.peers {
            let ping = stats
                .ping_ms
                .map_or_else(|| "?".to_string(), |ping| format!("{ping} ms"));
            let theirs = stats
                .remote_input_delay
                .map_or_else(|| "?".to_string(), |delay| delay.to_string());
            writeln!(
                out,
                "player {}: ping {ping}, its input delay {theirs}, rollbacks its inputs caused {} (max {})",
                slot + 1,
                stats.rollbacks,
                stats.max_rollback,
            )?;
        }
        writeln!(
            out,
            "this machine (player {}): input delay {}, rollbacks {} (mean depth {:.1}, max {}), stall frames {}; input delays {}",
            self.me + 1,
            self.input_delay,
            self.rollbacks.count,
            self.rollbacks.mean_depth,
            self.rollbacks.max_depth,
            self.stall_frames,
            delays_text(&self.delays),
        )?;
        writeln!(
            out,
            "players: {}",
            lags_text(&self.delays, &self.run_aheads)
        )?;
        writeln!(out, "time per frame: {}", self.profile.describe())?;
        writeln!(
            out,
            "wire (with IP/UDP headers): sent {:.0} B/s ({:.1} datagrams/s){}, received {:.0} B/s; dropped {} stray datagrams",
            self.wire.sent_bytes_per_s(),
            self.wire.sent_datagrams_per_s(),
            self.wire.relay_framing_text(),
            self.wire.received_bytes_per_s(),
            self.dropped_datagrams
        )?;
        if let Some(path) = &self.path {
            writeln!(out, "path: {}", path.describe())?;
        }
        writeln!(
            out,
            "saved states: {:.1} MiB (rollback window and desync-repair checkpoints)",
            self.state_bytes as f64 / f64::from(1 << 20)
        )?;
        writeln!(
            out,
            "desyncs: {} ({} diagnosed, {} repaired)",
            self.desyncs.detected, self.desyncs.diagnosed, self.desyncs.repaired
        )?;
        for keys in &self.links {
            writeln!(
                out,
                "keys: link fingerprint {}, peer key {} (ours {})",
                keys.link, keys.peer_key, self.key
            )?;
        }
        if let Some(chat) = self.chat.describe() {
            writeln!(out, "{chat}")?;
        }
        if let Some(checksums) = &self.checksums {
            writeln!(out, "checksums after {} frames: {checksums}", self.frames)?;
        }
        self.outputs.describe(out)
    }

    fn json(&self) -> serde_json::Value {
        let mut json = serde_json::json!({
            "command": self.command,
            "game": self.game,
            "inputs": self.inputs,
            "end": self.end.json_name(),
            "frames": self.frames,
            "seconds": self.wire.seconds,
            "checksums": self.checksums.as_ref().map(checksums_json),
            "netplay": {
                "peers": self.peers.iter().map(|(slot, stats)| self.peer_json(*slot, stats)).collect::<Vec<_>>(),
                "player": self.me,
                "input_delay": self.input_delay,
                "input_delays": self.delays.iter().map(|(slot, delay)| serde_json::json!({
                    "player": slot,
                    "input_delay": delay,
                    "run_ahead": self.run_aheads.iter().find(|(other, _)| other == slot).and_then(|(_, frames)| *frames),
                })).collect::<Vec<_>>(),
                "players": lags_text(&self.delays, &self.run_aheads),
                "profile": self.profile.json(),
                "mode": self.mode(),
                                "stall_frames": self.stall_frames,
                "desyncs": self.desyncs.detected,
                "desyncs_diagnosed": self.desyncs.diagnosed,
                "repairs": self.desyncs.repaired,
                "last_desync_memory_diff": self.desyncs.last_memory_diff.as_ref().map(ByteDiff::to_json),
                "wire": self.wire.json(),
                "dropped_datagrams": self.dropped_datagrams,
                "refused_room_guesses": self.refused_room_guesses,
                "path": self.path.as_ref().map(crate::net::ice::IcePath::json),
                "state_bytes": self.state_bytes,
                "chat": self.chat.json(),
                "key": self.key.to_string(),
                "links": self.links.iter().map(|keys| serde_json::json!({
                    "players": keys.players.iter().map(|slot| slot + 1).collect::<Vec<_>>(),
                    "fingerprint": keys.link.to_string(),
                    "peer_key": keys.peer_key.to_string(),
                })).collect::<Vec<_>>(),
            },
        });
        self.outputs.add_to_json(&mut json);
        json
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_player_who_leaves_from_the_window_reads_that_they_left() {
        // Leave in the match menu ends the session as closing the window
        // does; neither reads as if the window went away on its own.
        assert_eq!(MatchEnd::WindowClosed.describe(), "you left");
    }
}
