//! What the replay tools compute from a replay: its inputs as a script,
//! where two replays part, how many repairs it holds.

use crate::input::Buttons;
use crate::replay::{Replay, ReplayEvent};
use crate::rollback::Frame;

/// The replay's inputs as an input script: one line per run of identical
/// frames (from the replay's start frame), every player's buttons on it.
pub fn inputs_script(replay: &Replay) -> String {
    let players = usize::from(replay.header.players);
    let mut script = String::new();
    let mut run: Option<(u32, [Buttons; crate::input::MAX_PLAYERS])> = None;
    let flush = |script: &mut String, count: u32, inputs: &[Buttons]| {
        let buttons: Vec<String> = inputs.iter().map(Buttons::to_string).collect();
        if count == 1 {
            script.push_str(&format!("{}\n", buttons.join(" ")));
        } else {
            script.push_str(&format!("{count}x {}\n", buttons.join(" ")));
        }
    };
    for frame in replay.start_frame().number()..replay.end_frame().number() {
        let inputs = replay.inputs(Frame::new(frame));
        run = match run {
            Some((count, held)) if held == inputs => Some((count + 1, held)),
            Some((count, held)) => {
                flush(&mut script, count, &held[..players]);
                Some((1, inputs))
            }
            None => Some((1, inputs)),
        };
    }
    if let Some((count, held)) = run {
        flush(&mut script, count, &held[..players]);
    }
    script
}

/// Where two replays first differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplayDifference {
    /// They are recordings of different games: another core, core version
    /// or content, so no frame of theirs compares.
    Game {
        /// What differs (`core`, `core version`, `content`).
        what: &'static str,
        /// The first's (the content's name and hash for content).
        a: String,
        /// The second's.
        b: String,
    },
    /// They begin from different start states.
    StartState,
    /// Frame `frame`'s buttons differ for these players (1-based).
    Inputs {
        /// The frame.
        frame: u32,
        /// The players whose buttons differ.
        players: Vec<usize>,
    },
    /// The checkpoint of `frame` differs in `kind` (`memory` or `video`).
    Checksum {
        /// The frame.
        frame: u32,
        /// Which checksum.
        kind: &'static str,
    },
    /// Everything both hold agrees, but one ends earlier.
    Length {
        /// The end frame of the first (the frame after its last).
        a: u32,
        /// The end frame of the second.
        b: u32,
    },
    /// The two hold no frame in common (frames `a.0..a.1` and `b.0..b.1`).
    NoCommonFrames {
        /// The first's start and end frames.
        a: (u32, u32),
        /// The second's.
        b: (u32, u32),
    },
}

impl ReplayDifference {
    /// The frame where the replays part.
    pub fn frame(&self) -> u32 {
        match self {
            ReplayDifference::StartState | ReplayDifference::Game { .. } => 0,
            ReplayDifference::Inputs { frame, .. } | ReplayDifference::Checksum { frame, .. } => {
                *frame
            }
            ReplayDifference::Length { a, b } => (*a).min(*b),
            ReplayDifference::NoCommonFrames { a, b } => a.0.max(b.0),
        }
    }
}

/// The frames both replays hold, numbered as in the match (a spectator's
/// replay starts where they joined), or `None` when they share none.
pub fn common_frames(a: &Replay, b: &Replay) -> Option<std::ops::Range<u32>> {
    let start = a.start_frame().max(b.start_frame()).number();
    let end = a.end_frame().min(b.end_frame()).number();
    (start < end).then_some(start..end)
}

/// The first difference between `a` and `b` over the frames both hold, if
/// any, compared frame by frame in the match's numbering: a spectator's
/// replay, which starts later, is compared with a player's over the frames
/// after the spectator joined. A checksum differing at the same frame as the
/// inputs is reported as the inputs (the cause).
pub fn first_difference(a: &Replay, b: &Replay) -> Option<ReplayDifference> {
    if let Some(game) = other_game(a, b) {
        return Some(game);
    }
    let Some(common) = common_frames(a, b) else {
        return Some(ReplayDifference::NoCommonFrames {
            a: (a.start_frame().number(), a.end_frame().number()),
            b: (b.start_frame().number(), b.end_frame().number()),
        });
    };
    // Start states compare only when both begin at the same frame; a later
    // start is checked by the other's checkpoints instead.
    if a.start_frame() == b.start_frame()
        && a.header.start_memory_checksum != b.header.start_memory_checksum
    {
        return Some(ReplayDifference::StartState);
    }
    let inputs = common.clone().find_map(|frame| {
        let (here, there) = (a.inputs(Frame::new(frame)), b.inputs(Frame::new(frame)));
        let players: Vec<usize> = (0..crate::input::MAX_PLAYERS)
            .filter(|&player| here[player] != there[player])
            .map(|player| player + 1)
            .collect();
        (!players.is_empty()).then_some(ReplayDifference::Inputs { frame, players })
    });
    let checksum = a.checkpoints.iter().find_map(|here| {
        if !common.contains(&here.frame.number()) {
            return None;
        }
        let there = b.checkpoint(here.frame)?;
        if here.memory != there.memory {
            Some(ReplayDifference::Checksum {
                frame: here.frame.number(),
                kind: "memory",
            })
        } else if here.video.is_some() && there.video.is_some() && here.video != there.video {
            Some(ReplayDifference::Checksum {
                frame: here.frame.number(),
                kind: "video",
            })
        } else {
            None
        }
    });
    let first = match (inputs, checksum) {
        (Some(inputs), Some(checksum)) if checksum.frame() <= inputs.frame() => {
            // A checkpoint of frame f is taken before f runs: inputs of f
            // cannot have caused it.
            Some(checksum)
        }
        (Some(inputs), _) => Some(inputs),
        (None, checksum) => checksum,
    };
    first.or_else(|| {
        (a.end_frame() != b.end_frame()).then_some(ReplayDifference::Length {
            a: a.end_frame().number(),
            b: b.end_frame().number(),
        })
    })
}

/// Whether `a` and `b` record different games: another core, version or
/// content (by its hash: a renamed file is the same game).
fn other_game(a: &Replay, b: &Replay) -> Option<ReplayDifference> {
    let (ha, hb) = (&a.header, &b.header);
    let content =
        |h: &crate::replay::ReplayHeader| format!("{} (hash {})", h.content_name, h.content_hash);
    let differs = |what, x: String, y: String| {
        (x != y).then_some(ReplayDifference::Game { what, a: x, b: y })
    };
    differs("core", ha.core_name.clone(), hb.core_name.clone())
        .or_else(|| {
            differs(
                "core version",
                ha.core_version.clone(),
                hb.core_version.clone(),
            )
        })
        .or_else(|| {
            (ha.content_hash != hb.content_hash).then(|| ReplayDifference::Game {
                what: "content",
                a: content(ha),
                b: content(hb),
            })
        })
}

/// How many desync repairs the replay holds (states playback must load).
pub fn repairs(replay: &Replay) -> usize {
    replay
        .events
        .iter()
        .filter(|event| matches!(event, ReplayEvent::Repair { .. }))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::Checksum;
    use crate::replay::{read_replay, EndReason, ReplayHeader, ReplayWriter};

    /// A 2-player replay of frames `start..end`, player 1 holding A from
    /// `pressed_at` on (when given), with the memory checksum of frame `f`
    /// being `f`.
    fn replay(start: u32, end: u32, pressed_at: Option<u32>) -> Replay {
        let header = ReplayHeader {
            netcade_version: "0.1.0".into(),
            core_name: "Duel".into(),
            core_version: "0.1.0".into(),
            core_path: String::new(),
            content_name: String::new(),
            content_path: String::new(),
            content_hash: Checksum(0),
            core_options: vec![],
            players: 2,
            frames_per_second: 60.0,
            sample_rate: 48_000.0,
            recorded_at_unix: 0,
            player_names: vec![],
            start_frame: Frame::new(start),
            start_state: vec![1, 2, 3],
            start_memory_checksum: Checksum(u64::from(start)),
        };
        let mut writer = ReplayWriter::new(Vec::new(), &header).unwrap();
        for frame in start..end {
            let held = pressed_at.is_some_and(|at| frame >= at);
            let inputs = [if held { Buttons::A } else { Buttons::NONE }, Buttons::NONE];
            let memory = Checksum(u64::from(frame));
            writer
                .frame(Frame::new(frame), &inputs, Some(memory), None)
                .unwrap();
        }
        let bytes = writer.finish(EndReason::Finished).unwrap().0;
        read_replay(&bytes[..]).unwrap()
    }

    #[test]
    fn a_replay_starting_later_is_compared_over_the_frames_both_hold() {
        let player = replay(0, 600, Some(100));
        let spectator = replay(250, 600, Some(100));
        assert_eq!(common_frames(&player, &spectator), Some(250..600));
        assert_eq!(first_difference(&player, &spectator), None);
        assert_eq!(first_difference(&spectator, &player), None);
    }

    #[test]
    fn a_difference_after_the_later_start_is_named_by_the_matchs_frame() {
        let player = replay(0, 600, Some(400));
        let spectator = replay(250, 600, Some(401));
        assert_eq!(
            first_difference(&player, &spectator),
            Some(ReplayDifference::Inputs {
                frame: 400,
                players: vec![1]
            })
        );
    }

    #[test]
    fn replays_holding_no_frame_in_common_are_said_to() {
        let early = replay(0, 200, None);
        let late = replay(300, 600, None);
        assert_eq!(
            first_difference(&early, &late),
            Some(ReplayDifference::NoCommonFrames {
                a: (0, 200),
                b: (300, 600)
            })
        );
    }

    #[test]
    fn a_spectators_inputs_script_starts_at_the_frame_it_joined_at() {
        let spectator = replay(250, 600, Some(400));
        assert_eq!(inputs_script(&spectator), "150x NONE NONE\n200x A NONE\n");
    }
}
