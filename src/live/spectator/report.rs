//! What watching came to: how it ended, and the summary `spectate` ends
//! with, for people and as JSON.

use crate::engine::checksums_json;
use crate::engine::report::Report;
use crate::engine::sinks::SinksSummary;
use crate::engine::Outcome;
use crate::live::chat::ChatCounts;
use crate::live::wire::WireTraffic;
use netcode::checksum::Checksums;
use netcode::netplay::LinkFingerprints;
use netcode::protocol::Fingerprint;
use netcode::replay::EndReason;
use std::io::Write;

/// How watching ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchEnd {
    /// Every frame asked for, or the match's last final frame, was played.
    Finished,
    /// Ctrl-C, SIGTERM or SIGHUP.
    Interrupted,
    /// The host went silent (or its link broke) before the match's end.
    HostLost,
    /// The spectator closed the window.
    WindowClosed,
    /// The host was heard, but nothing new came from it for too long.
    Stalled,
    /// What passed the match on (a broadcast) failed: its server went away.
    RelayFailed,
}

impl WatchEnd {
    /// How the summary's first line begins: `spectating finished`,
    /// `spectating ended (the host was lost)`.
    fn summary(self) -> &'static str {
        match self {
            WatchEnd::Finished => "spectating finished",
            WatchEnd::Interrupted => "spectating interrupted",
            WatchEnd::HostLost => "spectating ended (the host was lost)",
            WatchEnd::WindowClosed => "spectating ended (you left)",
            WatchEnd::Stalled => "spectating ended (the match stalled)",
            WatchEnd::RelayFailed => "spectating ended (the broadcast failed)",
        }
    }

    fn json_name(self) -> &'static str {
        match self {
            WatchEnd::Finished => "finished",
            WatchEnd::Interrupted => "interrupted",
            WatchEnd::HostLost => "host_lost",
            WatchEnd::WindowClosed => "window_closed",
            WatchEnd::Stalled => "stalled",
            WatchEnd::RelayFailed => "relay_failed",
        }
    }

    /// The exit the command ends with, when no checkpoint differed.
    pub(crate) fn outcome(self) -> Outcome {
        match self {
            WatchEnd::Finished | WatchEnd::WindowClosed => Outcome::Success,
            WatchEnd::Interrupted => Outcome::Interrupted,
            WatchEnd::HostLost | WatchEnd::Stalled => Outcome::PeerLost,
            WatchEnd::RelayFailed => Outcome::NetplayFailed,
        }
    }

    /// The replay's end record says this.
    pub(crate) fn end_reason(self) -> EndReason {
        match self {
            WatchEnd::Finished => EndReason::Finished,
            WatchEnd::Interrupted | WatchEnd::WindowClosed | WatchEnd::RelayFailed => {
                EndReason::Interrupted
            }
            WatchEnd::HostLost | WatchEnd::Stalled => EndReason::Disconnect,
        }
    }
}

/// How far behind the players the picture was.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WatchDelay {
    /// Behind the newest final frame (median).
    pub(crate) frames: Option<u32>,
    /// Behind the players (median, estimated).
    pub(crate) live_frames: Option<u32>,
    /// What the jitter buffer aimed at.
    pub(crate) aimed_frames: u32,
    pub(crate) catch_up_frames: u64,
    pub(crate) rebuffers: u64,
}

/// A spectator's summary.
pub(crate) struct WatchReport {
    pub(crate) game: String,
    pub(crate) end: WatchEnd,
    pub(crate) frames: u32,
    pub(crate) joined_at_frame: Option<u32>,
    pub(crate) checksums: Option<Checksums>,
    pub(crate) delay: WatchDelay,
    pub(crate) ping_ms: Option<u32>,
    /// The path ICE chose to the host (a watch through a room).
    pub(crate) path: Option<crate::net::ice::IcePath>,
    /// The link's traffic, over the seconds watched.
    pub(crate) wire: WireTraffic,
    pub(crate) dropped_datagrams: u64,
    /// Checkpoints whose checksums differed from the host's, and repairs
    /// from the host's state.
    pub(crate) desyncs: (u64, u64),
    /// A broadcast's messages refused (not its broadcaster's) and skipped
    /// (its broadcaster's, unreadable).
    pub(crate) refused_messages: (u64, u64),
    /// Chat lines sent and received.
    pub(crate) chat: ChatCounts,
    /// What the watch's outputs left.
    pub(crate) outputs: SinksSummary,
    /// Our key's fingerprint and the link's keys, watching a netcade host.
    pub(crate) keys: Option<WatchKeys>,
}

/// The keys of a spectator's link to its host, as players compare them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WatchKeys {
    /// Our public key's fingerprint.
    pub(crate) ours: Fingerprint,
    /// The link's fingerprint and the host's key's.
    pub(crate) host: LinkFingerprints,
}

impl WatchKeys {
    /// The line told once the host welcomed us: what to compare with the
    /// host's `a spectator joined` line.
    pub(crate) fn describe(&self) -> String {
        format!(
            "link to P1: fingerprint {} (P1's key {}); the same on both screens means nobody sits in between",
            self.host.link, self.host.peer_key
        )
    }
}

impl Report for WatchReport {
    fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let watched = self.joined_at_frame.map_or_else(
            || "never got the host's state".to_string(),
            |joined| format!("frames {joined}..{} watched", self.frames),
        );
        writeln!(
            out,
            "{}: {watched}, {:.1} s, {}",
            self.end.summary(),
            self.wire.seconds,
            self.game
        )?;
        let frames = |delay: Option<u32>| delay.map_or_else(|| "?".to_string(), |d| d.to_string());
        writeln!(
            out,
            "delay: {} frames behind the players (median, estimated), {} behind the newest final frame (aiming at {}); {} catch-up frames run, {} rebuffers",
            frames(self.delay.live_frames),
            frames(self.delay.frames),
            self.delay.aimed_frames,
            self.delay.catch_up_frames,
            self.delay.rebuffers
        )?;
        if let Some(path) = &self.path {
            writeln!(out, "path: {}", path.describe())?;
        }
        writeln!(
            out,
            "wire (with IP/UDP headers): sent {:.0} B/s{}, received {:.0} B/s; dropped {} stray datagrams",
            self.wire.sent_bytes_per_s(),
            self.wire.relay_framing_text(),
            self.wire.received_bytes_per_s(),
            self.dropped_datagrams
        )?;
        let (detected, repaired) = self.desyncs;
        if detected > 0 {
            writeln!(
                out,
                "desyncs: {detected} checkpoints differed from the host's, {repaired} repairs from its state"
            )?;
        }
        let (refused, unreadable) = self.refused_messages;
        if refused + unreadable > 0 {
            writeln!(
                out,
                "broadcast: refused {refused} messages its broadcaster did not sign, skipped {unreadable} that could not be read"
            )?;
        }
        if let Some(keys) = &self.keys {
            writeln!(
                out,
                "keys: link fingerprint {}, peer key {} (ours {})",
                keys.host.link, keys.host.peer_key, keys.ours
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
            "command": "spectate",
            "game": self.game,
            "end": self.end.json_name(),
            "frames": self.frames,
            "seconds": self.wire.seconds,
            "checksums": self.checksums.as_ref().map(checksums_json),
            "spectator": {
                "joined_at_frame": self.joined_at_frame,
                "delay_frames": self.delay.frames,
                "behind_live_frames": self.delay.live_frames,
                "aimed_delay_frames": self.delay.aimed_frames,
                "catch_up_frames": self.delay.catch_up_frames,
                "rebuffers": self.delay.rebuffers,
                "desyncs": self.desyncs.0,
                "repairs": self.desyncs.1,
                "refused_messages": self.refused_messages.0,
                "unreadable_messages": self.refused_messages.1,
            },
            "netplay": {
                "ping_ms": self.ping_ms,
                "path": self.path.as_ref().map(crate::net::ice::IcePath::json),
                "wire": self.wire.json(),
                "dropped_datagrams": self.dropped_datagrams,
                "chat": self.chat.json(),
                "key": self.keys.map(|keys| keys.ours.to_string()),
                // One link, to the host: P1's machine feeds spectators.
                "links": self.keys.iter().map(|keys| serde_json::json!({
                    "players": [1],
                    "fingerprint": keys.host.link.to_string(),
                    "peer_key": keys.host.peer_key.to_string(),
                })).collect::<Vec<_>>(),
            },
        });
        self.outputs.add_to_json(&mut json);
        json
    }
}
