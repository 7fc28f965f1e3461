//! Run-ahead (`--run-ahead N`, `--run-ahead-mode`): the picture shown for a
//! frame is the one N frames later would draw with the same buttons, which
//! hides N frames of the game's own input lag. The real frame runs first,
//! through [`run_frame`](super::run_frame) and every sink, as without
//! run-ahead; then [`RunAhead::show`] saves, runs ahead (unheard, only the
//! last drawn), tells the sinks what is shown and loads the real state
//! back. Ahead frames reach no sink but [`FrameSink::frame_shown`]: they
//! are never hashed, recorded, sent or heard.
//!
//! - `single` runs the N frames again for every frame shown.
//! - `preemptive` keeps the state its last ahead frame left: while the
//!   buttons stay the same (and nothing rolled back) the next frame shown
//!   costs one ahead frame instead of N (plus one more save and load).

use crate::engine::sinks::FrameSink;
use crate::engine::AppError;
use netcode::emulator::{Emulator, SavestateContext};
use netcode::input::{Buttons, MAX_PLAYERS};
use netcode::rollback::Frame;

/// The most frames run ahead (old games break above 1 or 2: this is for
/// games with long lag and for tests).
pub const MAX_RUN_AHEAD: u8 = 4;

/// How the frames ahead are run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RunAheadMode {
    /// Run all N frames ahead again for every frame shown.
    #[default]
    Single,
    /// Keep the last ahead state and run one frame ahead while the buttons
    /// stay the same; all N again only when they change.
    Preemptive,
}

impl std::fmt::Display for RunAheadMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RunAheadMode::Single => "single",
            RunAheadMode::Preemptive => "preemptive",
        })
    }
}

/// `--run-ahead` and `--run-ahead-mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::Args)]
pub struct RunAheadArgs {
    /// Shows each frame as the game would draw it N frames later with the
    /// same buttons, hiding N frames of the game's own input lag (0 to 4;
    /// `netcade latency` measures a game's lag). Costs up to N extra frames
    /// of emulation per frame shown.
    #[arg(long = "run-ahead", value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u8).range(0..=i64::from(MAX_RUN_AHEAD)))]
    pub ahead: u8,
    /// How the frames ahead are run: `single` (all N every frame) or
    /// `preemptive` (one while the buttons stay the same).
    #[arg(
        long = "run-ahead-mode",
        value_name = "MODE",
        value_enum,
        default_value_t
    )]
    pub ahead_mode: RunAheadMode,
}

impl RunAheadArgs {
    /// `run-ahead 2` (`, preemptive` when so), or `None` without run-ahead.
    pub fn describe(&self) -> Option<String> {
        (self.ahead > 0).then(|| match self.ahead_mode {
            RunAheadMode::Single => format!("run-ahead {}", self.ahead),
            RunAheadMode::Preemptive => format!("run-ahead {} preemptive", self.ahead),
        })
    }
}

/// What run-ahead did, for reports and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunAheadCounts {
    /// Frames shown with run-ahead.
    pub shown: u64,
    /// Frames run ahead, in all.
    pub frames_run: u64,
    /// Frames shown from a kept ahead state (preemptive).
    pub reused: u64,
}

/// Shows frames with run-ahead. See the module docs.
#[derive(Debug)]
pub struct RunAhead {
    args: RunAheadArgs,
    /// What the frame loop's own states are for, told to the game again
    /// once the ahead states are done with.
    loop_context: SavestateContext,
    /// The real state, loaded back after the frames ahead.
    real: Vec<u8>,
    /// Preemptive: the state after the last frame run ahead.
    ahead: Vec<u8>,
    /// Preemptive: the real frame `ahead` was run after, with which buttons.
    chain: Option<(Frame, [Buttons; MAX_PLAYERS])>,
    counts: RunAheadCounts,
}

impl RunAhead {
    /// Run-ahead as `args` say, in a frame loop whose states are for
    /// `loop_context`.
    pub fn new(args: RunAheadArgs, loop_context: SavestateContext) -> Self {
        RunAhead {
            args,
            loop_context,
            real: Vec::new(),
            ahead: Vec::new(),
            chain: None,
            counts: RunAheadCounts::default(),
        }
    }

    /// Whether frames are run ahead at all: the real frames need not be
    /// drawn then, since their pictures are never shown.
    pub fn is_on(&self) -> bool {
        self.args.ahead > 0
    }

    /// What it did so far.
    pub fn counts(&self) -> RunAheadCounts {
        self.counts
    }

    /// The real state changed in a way the buttons do not say (a rollback,
    /// a repair, a loaded state): a kept ahead state is no good any more.
    pub fn forget(&mut self) {
        self.chain = None;
    }

    /// Shows `frame`, which `game` just ran for real with `inputs`: its own
    /// picture without run-ahead, else the picture of N more frames with
    /// the same buttons, after which the game is back where the real frame
    /// left it.
    pub fn show<G: Emulator + ?Sized>(
        &mut self,
        game: &mut G,
        frame: Frame,
        inputs: &[Buttons],
        sink: &mut dyn FrameSink,
    ) -> Result<(), AppError> {
        let ahead = self.args.ahead;
        if ahead == 0 {
            sink.frame_shown(frame, game.video_frame());
            return Ok(());
        }
        let at = || AppError::at_frame(frame.number());
        let mut held = [Buttons::NONE; MAX_PLAYERS];
        for (slot, buttons) in held.iter_mut().zip(inputs) {
            *slot = *buttons;
        }
        game.set_savestate_context(SavestateContext::Rollback);
        game.save_state_to_load(&mut self.real).map_err(at())?;
        let preemptive = self.args.ahead_mode == RunAheadMode::Preemptive;
        // The kept chain ran this very frame with these buttons from the
        // same state: its last state is one frame short of what is wanted.
        let reuse = preemptive
            && self
                .chain
                .is_some_and(|(after, buttons)| after.next() == frame && buttons == held);
        let to_run = if reuse {
            game.load_state(&self.ahead).map_err(at())?;
            self.counts.reused += 1;
            1
        } else {
            ahead
        };
        for left in (0..to_run).rev() {
            game.run_frame_unheard(inputs, left == 0);
        }
        self.counts.frames_run += u64::from(to_run);
        self.counts.shown += 1;
        sink.frame_shown(frame, game.video_frame());
        if preemptive {
            game.save_state_to_load(&mut self.ahead).map_err(at())?;
            self.chain = Some((frame, held));
        }
        game.load_state(&self.real).map_err(at())?;
        game.set_savestate_context(self.loop_context);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sinks::{run_frame, FramePass};
    use netcode::checksum::Checksum;
    use netcode::emulator::VideoFrame;
    use netcode::testing::StubGame;

    /// The pictures shown, by frame.
    #[derive(Default)]
    struct Shown(Vec<(u32, Checksum)>);

    impl FrameSink for Shown {
        fn frame_shown(&mut self, frame: Frame, picture: Option<VideoFrame<'_>>) {
            let picture = picture.map_or(Checksum(0), |p| Checksum::of_video(&p));
            self.0.push((frame.number(), picture));
        }
    }

    /// A run of `frames` frames with buttons changing every 7th, shown with
    /// `args`; the pictures shown and the final memory.
    fn play(args: RunAheadArgs, frames: u32) -> (Vec<(u32, Checksum)>, Checksum, RunAheadCounts) {
        let mut game = StubGame::deterministic();
        let mut run_ahead = RunAhead::new(args, SavestateContext::Normal);
        let mut shown = Shown::default();
        for number in 0..frames {
            let inputs = [
                Buttons::from_bits(u16::from(number / 7 % 3 == 1) << 7),
                Buttons::NONE,
            ];
            let frame = Frame::new(number);
            run_frame(&mut game, frame, &inputs, FramePass::Shown, &mut ());
            run_ahead
                .show(&mut game, frame, &inputs, &mut shown)
                .unwrap();
        }
        (
            shown.0,
            Checksum::of(game.game_memory()),
            run_ahead.counts(),
        )
    }

    /// The pictures of a run without run-ahead where each frame's buttons
    /// were held from the frame `ahead` before.
    fn shifted(pictures: &[(u32, Checksum)], ahead: usize) -> Vec<Checksum> {
        pictures.iter().skip(ahead).map(|(_, p)| *p).collect()
    }

    #[test]
    fn run_ahead_shows_the_pictures_n_frames_later_and_leaves_the_real_game_alone() {
        let (plain, memory, _) = play(RunAheadArgs::default(), 60);
        for mode in [RunAheadMode::Single, RunAheadMode::Preemptive] {
            for frames in 1..=MAX_RUN_AHEAD {
                let args = RunAheadArgs {
                    ahead: frames,
                    ahead_mode: mode,
                };
                let (ahead, ahead_memory, counts) = play(args, 60);
                assert_eq!(ahead_memory, memory, "{args:?}: the real game is untouched");
                // Where the buttons held the same through the frames ahead,
                // the picture is the one the plain run drew N frames later.
                let n = usize::from(frames);
                for (index, (frame, picture)) in ahead.iter().enumerate().take(60 - n) {
                    let same_buttons =
                        (*frame..=*frame + u32::from(frames)).all(|f| f / 7 % 3 == *frame / 7 % 3);
                    if same_buttons {
                        assert_eq!(
                            *picture,
                            shifted(&plain, n)[index],
                            "{args:?} frame {frame}"
                        );
                    }
                }
                if mode == RunAheadMode::Preemptive {
                    // One frame ahead while the buttons stay, N when they change.
                    assert!(counts.reused > 40, "{args:?}: {counts:?}");
                    let rebuilt = counts.shown - counts.reused;
                    assert_eq!(
                        counts.frames_run,
                        counts.reused + rebuilt * u64::from(frames),
                        "{counts:?}"
                    );
                } else {
                    assert_eq!(counts.frames_run, 60 * u64::from(frames));
                }
            }
        }
    }

    #[test]
    fn preemptive_and_single_show_the_same_pictures() {
        for frames in 1..=MAX_RUN_AHEAD {
            let single = play(
                RunAheadArgs {
                    ahead: frames,
                    ahead_mode: RunAheadMode::Single,
                },
                50,
            );
            let preemptive = play(
                RunAheadArgs {
                    ahead: frames,
                    ahead_mode: RunAheadMode::Preemptive,
                },
                50,
            );
            assert_eq!(single.0, preemptive.0, "run-ahead {frames}");
        }
    }
}
