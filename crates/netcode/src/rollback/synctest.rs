//! GGPO's sync test, the one engine behind `netcade synctest`, its
//! benchmark and any check that a game is fit for rollback: pretend every
//! frame was mispredicted.
//!
//! After each frame is run, the game goes back `distance` frames (loads the
//! state saved there), re-simulates the same inputs and compares each
//! re-simulated frame's checksums with the first pass. A game (or a save/load
//! path) that is not deterministic shows up at the first frame that differs.
//! With a settle window, a difference must last that many frames to fail the
//! test; one the game overwrites sooner is reported as transient, with the
//! byte ranges involved.
//!
//! Frame numbers: "frame N" is the game after N frames have run (frame 0 is
//! the game as loaded), the same numbering `debug` shows.
//!
//! Pure: it drives an [`Emulator`] it is handed, reads no clock and does no
//! I/O; inputs come from the caller.

use crate::checksum::{Checksum, Checksums};
use crate::diff::{format_range, ByteDiff, DEFAULT_RANGE_CAP};
use crate::emulator::{Emulator, EmulatorError, SavestateContext};
pub use crate::input::FrameInputs;
use crate::input::{Buttons, MAX_PLAYERS};
use std::fmt;
use std::ops::Range;

/// The longest check distance allowed: the ring holds `distance + 1` full
/// states, and real cores' states reach a megabyte.
pub const MAX_CHECK_DISTANCE: u32 = 120;

/// The longest settle window allowed (the ring grows by one state per frame).
pub const MAX_SETTLE_FRAMES: u32 = 60;

/// Which checksums a sync-test compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compare {
    /// The game's memory (system RAM or its memory map).
    pub memory: bool,
    /// The raw serialized state.
    pub state: bool,
    /// The picture drawn.
    pub video: bool,
}

impl Compare {
    /// Game memory and the video frame: raw states of some real cores hold
    /// incidental bytes that differ although the game is the same.
    pub const DEFAULT: Compare = Compare {
        memory: true,
        state: false,
        video: true,
    };
    /// Nothing: the start for building a comparison of some kinds.
    pub const NONE: Compare = Compare {
        memory: false,
        state: false,
        video: false,
    };
    /// Every kind: memory, full state and picture.
    pub const ALL: Compare = Compare {
        memory: true,
        state: true,
        video: true,
    };

    /// The kinds among `kinds` this comparison looks at.
    fn filter(self, kinds: ChecksumKinds) -> ChecksumKinds {
        ChecksumKinds {
            memory: self.memory && kinds.memory,
            state: self.state && kinds.state,
            video: self.video && kinds.video,
        }
    }
}

/// `memory+video`.
impl fmt::Display for Compare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        ChecksumKinds {
            memory: self.memory,
            state: self.state,
            video: self.video,
        }
        .fmt(f)
    }
}

/// A set of checksum kinds (which differ, which are compared).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChecksumKinds {
    /// Game memory.
    pub memory: bool,
    /// The serialized state.
    pub state: bool,
    /// The picture.
    pub video: bool,
}

impl ChecksumKinds {
    /// The kinds whose checksums differ between `a` and `b`.
    pub fn differing(a: &Checksums, b: &Checksums) -> ChecksumKinds {
        ChecksumKinds {
            memory: a.memory != b.memory,
            state: a.state != b.state,
            video: a.video != b.video,
        }
    }

    /// Whether the set holds any kind.
    pub fn any(self) -> bool {
        self.memory || self.state || self.video
    }

    /// `["memory", "video"]`.
    pub fn names(self) -> Vec<&'static str> {
        [
            (self.memory, "memory"),
            (self.state, "state"),
            (self.video, "video"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
    }
}

impl fmt::Display for ChecksumKinds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = self.names();
        if names.is_empty() {
            f.write_str("nothing")
        } else {
            f.write_str(&names.join("+"))
        }
    }
}

/// The first frame that did not re-simulate the same, with both versions.
#[derive(Clone, Debug)]
pub struct Desync {
    /// The frame whose re-simulation differs (the game after this many frames).
    pub frame: u32,
    /// The frame the re-simulation started from (the state loaded).
    pub loaded_frame: u32,
    /// The frame the game had reached when it went back.
    pub rolled_back_from: u32,
    /// With a settle window: the later frame at which the re-simulation
    /// still differed, which confirmed the desync as lasting.
    pub still_differing_at: Option<u32>,
    /// Compared kinds that differ.
    pub compared_differing: ChecksumKinds,
    /// The first pass's checksums (video: the re-simulated picture's when
    /// video is not compared, as the first pass's is not kept).
    pub first_pass: Checksums,
    /// The re-simulated frame's checksums.
    pub resimulated: Checksums,
    /// Game memory bytes that differ.
    pub memory_diff: ByteDiff,
    /// Serialized state bytes that differ.
    pub state_diff: ByteDiff,
    /// Both versions, for dumps.
    pub first_pass_state: Vec<u8>,
    /// The first pass's game memory.
    pub first_pass_memory: Vec<u8>,
    /// The re-simulated state.
    pub resimulated_state: Vec<u8>,
    /// The re-simulated game memory.
    pub resimulated_memory: Vec<u8>,
}

impl Desync {
    /// `memory differs at 0x0010..0x0012; video differs`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if self.compared_differing.memory {
            parts.push(format!("memory differs at {}", self.memory_diff));
        }
        if self.compared_differing.state {
            parts.push(format!("state differs at {}", self.state_diff));
        }
        if self.compared_differing.video {
            parts.push("video differs".to_string());
        }
        let mut summary = parts.join("; ");
        if let Some(later) = self.still_differing_at {
            summary.push_str(&format!(
                " (still differing {} frames later)",
                later - self.frame
            ));
        }
        summary
    }
}

/// A re-simulated frame that differed from the first pass but whose
/// re-simulation came back to the first pass within the settle window: the
/// differing bytes were overwritten before they changed anything lasting.
#[derive(Clone, Debug)]
pub struct Transient {
    /// The first frame that differed.
    pub frame: u32,
    /// The frame the re-simulation started from (the state loaded).
    pub loaded_frame: u32,
    /// The first frame from which the re-simulation matched the first pass
    /// again (up to the end of the settle window).
    pub healed_at: u32,
    /// Compared kinds that differed at `frame`.
    pub differing: ChecksumKinds,
    /// Game memory bytes that differed at `frame`.
    pub memory_diff: ByteDiff,
}

impl Transient {
    /// `frame 364 (loaded 357): memory differed at 0xffa2..0xffa3, healed at frame 365`.
    pub fn summary(&self) -> String {
        let what = if self.differing.memory {
            format!("memory differed at {}", self.memory_diff)
        } else {
            format!("{} differed", self.differing)
        };
        format!(
            "frame {} (loaded {}): {what}, healed at frame {}",
            self.frame, self.loaded_frame, self.healed_at
        )
    }
}

/// Differences that healed within the settle window, summed up.
#[derive(Clone, Debug, Default)]
pub struct Transients {
    /// How many rollbacks produced a difference that healed.
    pub count: u64,
    /// The first one, in full.
    pub first: Option<Transient>,
    /// Game memory ranges that differed in any of them, merged, at most
    /// [`DEFAULT_RANGE_CAP`].
    pub memory_ranges: Vec<Range<usize>>,
    /// Compared kinds that differed in any of them.
    pub kinds: ChecksumKinds,
}

impl Transients {
    fn record(&mut self, transient: Transient) {
        self.count += 1;
        self.kinds = ChecksumKinds {
            memory: self.kinds.memory || transient.differing.memory,
            state: self.kinds.state || transient.differing.state,
            video: self.kinds.video || transient.differing.video,
        };
        for range in &transient.memory_diff.ranges {
            merge_range(&mut self.memory_ranges, range.clone());
        }
        if self.first.is_none() {
            self.first = Some(transient);
        }
    }

    /// The memory ranges as `0x0010..0x0012` strings.
    pub fn memory_range_strings(&self) -> Vec<String> {
        self.memory_ranges.iter().map(format_range).collect()
    }
}

/// Adds `range` to sorted, disjoint `ranges`, joining what overlaps or
/// touches; a new separate range is dropped once the cap is reached.
fn merge_range(ranges: &mut Vec<Range<usize>>, range: Range<usize>) {
    let mut merged = range;
    let mut kept = Vec::with_capacity(ranges.len() + 1);
    let mut joined_any = false;
    for existing in ranges.drain(..) {
        if existing.end < merged.start || merged.end < existing.start {
            kept.push(existing);
        } else {
            merged = merged.start.min(existing.start)..merged.end.max(existing.end);
            joined_any = true;
        }
    }
    if joined_any || kept.len() < DEFAULT_RANGE_CAP {
        kept.push(merged);
    }
    kept.sort_by_key(|range| range.start);
    *ranges = kept;
}

/// What a sync-test found.
#[derive(Clone, Debug)]
pub struct SyncTestReport {
    /// Frames run in the first pass.
    pub frames: u32,
    /// The check distance.
    pub distance: u32,
    /// What was compared.
    pub compare: Compare,
    /// Frames a difference may take to heal before it counts (0: none may).
    pub settle_frames: u32,
    /// Differences that healed within the settle window.
    pub transients: Transients,
    /// Frames re-simulated and compared.
    pub resimulated_frames: u64,
    /// Checksums of the last frame reached (taken when the test ends).
    pub checksums: Checksums,
    /// Bytes the kept frames' states and memories took at the most.
    pub history_bytes: usize,
    /// The first difference that did not heal within the settle window;
    /// `None` when the test passed.
    pub desync: Option<Box<Desync>>,
}

impl SyncTestReport {
    /// The one-line verdict.
    pub fn verdict(&self) -> String {
        match &self.desync {
            None if self.transients.count == 0 => format!(
                "sync-test passed: {} frames, distance {}, compared {}",
                self.frames, self.distance, self.compare
            ),
            None => format!(
                "sync-test passed: {} frames, distance {}, compared {}; {} differences healed within {} frames (first: {})",
                self.frames,
                self.distance,
                self.compare,
                self.transients.count,
                self.settle_frames,
                self.transients
                    .first
                    .as_ref()
                    .map(Transient::summary)
                    .unwrap_or_default()
            ),
            Some(desync) => format!(
                "sync-test FAILED at frame {}: {}",
                desync.frame,
                desync.summary()
            ),
        }
    }
}

/// The most bytes the kept frames may take by default (256 MiB).
pub const DEFAULT_HISTORY_BYTES: usize = 256 << 20;

/// Why a sync-test could not run to a verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyncTestError {
    /// The check distance is 0 or above `MAX_CHECK_DISTANCE`.
    #[error("the check distance must be between 1 and {MAX_CHECK_DISTANCE} (got {distance})")]
    CheckDistanceOutOfRange {
        /// The distance given, in frames.
        distance: u32,
    },
    /// The settle window is above `MAX_SETTLE_FRAMES`.
    #[error("the settle window must be at most {MAX_SETTLE_FRAMES} frames (got {settle_frames})")]
    SettleWindowTooLong {
        /// The window given, in frames.
        settle_frames: u32,
    },
    /// The run is too short for any frame to be rolled back `distance`
    /// frames and re-simulated.
    #[error("a check distance of {distance} needs more than {distance} frames (got {frames}): no frame could be re-simulated from that far back")]
    RunShorterThanDistance {
        /// Frames the run was to last.
        frames: u32,
        /// The check distance, in frames.
        distance: u32,
    },
    /// The frames the test must keep (states and memories) would take more
    /// bytes than the memory limit; checked as each state is saved.
    #[error("the {kept} frames the test keeps take {needed} bytes ({per_frame} each), more than the {budget} allowed: raise the memory limit or shorten the check distance and settle window")]
    HistoryOverBudget {
        /// Frames kept at once: the check distance plus the settle window, plus one.
        kept: usize,
        /// Bytes one kept frame takes: its state plus its memory.
        per_frame: usize,
        /// `kept * per_frame`, in bytes.
        needed: usize,
        /// The memory limit, in bytes.
        budget: usize,
    },
    /// The game could not save or load a state.
    #[error("the game failed at frame {frame}")]
    Game {
        /// The frame the test was at.
        frame: u32,
        /// What the game reported.
        #[source]
        source: EmulatorError,
    },
}

impl SyncTestError {
    fn at_frame(frame: u32) -> impl FnOnce(EmulatorError) -> SyncTestError {
        move |source| SyncTestError::Game { frame, source }
    }

    /// Whether the settings were at fault (rather than the game).
    pub fn is_bad_settings(&self) -> bool {
        !matches!(self, SyncTestError::Game { .. })
    }
}

/// What a sync-test runs and compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncTestSettings {
    /// Frames to run in the first pass.
    pub frames: u32,
    /// Frames to go back and re-simulate after every frame.
    pub distance: u32,
    /// What to compare.
    pub compare: Compare,
    /// Frames a difference may take to heal before it counts (0: none may).
    pub settle_frames: u32,
    /// The most bytes the kept frames (state and memory) may take.
    pub history_bytes: usize,
}

impl SyncTestSettings {
    /// GGPO's strict test over `frames` frames at `distance`, comparing the
    /// default kinds.
    pub fn new(frames: u32, distance: u32) -> SyncTestSettings {
        SyncTestSettings {
            frames,
            distance,
            compare: Compare::DEFAULT,
            settle_frames: 0,
            history_bytes: DEFAULT_HISTORY_BYTES,
        }
    }

    /// Refuses settings under which the test could not do what it says: a
    /// check distance no frame reaches back to would "pass" without ever
    /// going back that far.
    pub fn check(&self) -> Result<(), SyncTestError> {
        let (frames, distance, settle_frames) = (self.frames, self.distance, self.settle_frames);
        if !(1..=MAX_CHECK_DISTANCE).contains(&distance) {
            return Err(SyncTestError::CheckDistanceOutOfRange { distance });
        }
        if settle_frames > MAX_SETTLE_FRAMES {
            return Err(SyncTestError::SettleWindowTooLong { settle_frames });
        }
        // Frame 0 is never loaded (see `SyncTest::run_frame`), so the first
        // rollback over the whole distance starts at frame 1.
        if frames <= distance {
            return Err(SyncTestError::RunShorterThanDistance { frames, distance });
        }
        Ok(())
    }

    /// Frame boundaries kept: `reached - distance - settle_frames ..= reached`.
    fn kept_frames(&self) -> usize {
        (self.distance + self.settle_frames) as usize + 1
    }
}

/// Runs a whole sync-test of `game` as `settings` say, taking each frame's
/// inputs from `inputs`; `progress` is told each frame reached.
pub fn run_sync_test<G: Emulator + ?Sized>(
    game: &mut G,
    settings: SyncTestSettings,
    inputs: &mut dyn FnMut() -> FrameInputs,
    progress: &mut dyn FnMut(u32),
) -> Result<SyncTestReport, SyncTestError> {
    let mut test = SyncTest::new(settings)?;
    while test.report().frames < settings.frames && test.report().desync.is_none() {
        test.run_frame(game, inputs())?;
        progress(test.report().frames);
    }
    test.finish(game)
}

/// A sync-test in progress, one frame at a time (see [`run_sync_test`]).
pub struct SyncTest {
    settings: SyncTestSettings,
    checker: Checker,
    report: SyncTestReport,
    started: bool,
}

impl SyncTest {
    /// A test about to start from the game as it will be at the first
    /// [`SyncTest::run_frame`]; refuses settings [`SyncTestSettings::check`] refuses.
    pub fn new(settings: SyncTestSettings) -> Result<SyncTest, SyncTestError> {
        settings.check()?;
        Ok(SyncTest {
            settings,
            checker: Checker {
                ring: (0..settings.kept_frames())
                    .map(|_| Saved::default())
                    .collect(),
                scratch_state: Vec::new(),
                distance: settings.distance,
                compare: settings.compare,
                settle_frames: settings.settle_frames,
                history_budget: settings.history_bytes,
            },
            report: SyncTestReport {
                frames: 0,
                distance: settings.distance,
                compare: settings.compare,
                settle_frames: settings.settle_frames,
                transients: Transients::default(),
                resimulated_frames: 0,
                checksums: Checksums::default(),
                history_bytes: 0,
                desync: None,
            },
            started: false,
        })
    }

    /// What the test found so far.
    pub fn report(&self) -> &SyncTestReport {
        &self.report
    }

    /// Runs the next frame with `inputs`, then goes back and checks. Does
    /// nothing once a desync was found or all frames ran.
    pub fn run_frame<G: Emulator + ?Sized>(
        &mut self,
        game: &mut G,
        inputs: FrameInputs,
    ) -> Result<(), SyncTestError> {
        if self.report.desync.is_some() || self.report.frames >= self.settings.frames {
            return Ok(());
        }
        if !self.started {
            // Its states are rollback states in the same instance.
            game.set_savestate_context(SavestateContext::Rollback);
            self.checker.save_boundary(game, 0)?;
            self.started = true;
        }
        let frame = self.report.frames;
        self.checker.slot_mut(frame).inputs = inputs;
        game.run_frame(&inputs, true);
        let reached = frame + 1;
        self.checker.save_boundary(game, reached)?;
        self.report.frames = reached;
        self.report.history_bytes = self.report.history_bytes.max(self.checker.bytes_kept());

        // The frame checked now lags the one reached by the settle window,
        // so its re-simulation can run on past it; at the end, the frames
        // still unchecked are checked with what window is left.
        let newest = reached.saturating_sub(self.settings.settle_frames);
        let checked = if reached == self.settings.frames {
            newest..=reached
        } else {
            newest..=newest
        };
        for present in checked {
            // Never back to frame 0: the state saved before a core's first
            // `retro_run` is a boot state real cores do not replay
            // faithfully (stella's combat.bin draws a different first
            // picture), and no game frame lives there.
            if present < 2 {
                continue;
            }
            if let Some(desync) =
                self.checker
                    .roll_back(game, present, reached, &mut self.report)?
            {
                self.report.desync = Some(desync);
                return Ok(());
            }
        }
        Ok(())
    }

    /// Ends the test: the report, with the checksums of the frame the game
    /// is at.
    pub fn finish<G: Emulator + ?Sized>(
        mut self,
        game: &mut G,
    ) -> Result<SyncTestReport, SyncTestError> {
        let reached = self.report.frames;
        let mut state = std::mem::take(&mut self.checker.slot_mut(reached).state);
        if !self.started {
            game.save_state(&mut state)
                .map_err(SyncTestError::at_frame(reached))?;
        }
        self.report.checksums = Checksums::of_game(game, &state);
        Ok(self.report)
    }
}

/// One frame boundary kept in the ring: the game after `frame` frames.
#[derive(Default)]
struct Saved {
    state: Vec<u8>,
    memory: Vec<u8>,
    /// The compared checksums (the others are left at zero).
    checksums: Checksums,
    /// The inputs of the frame that starts here.
    inputs: FrameInputs,
}

/// The sync-test's ring of saved frames and what it compares.
struct Checker {
    ring: Vec<Saved>,
    scratch_state: Vec<u8>,
    distance: u32,
    compare: Compare,
    settle_frames: u32,
    /// The most bytes the kept frames may take.
    history_budget: usize,
}

/// The first difference found in one rollback, before it is known to last.
struct Found {
    frame: u32,
    compared_differing: ChecksumKinds,
    memory_diff: ByteDiff,
    /// Everything needed to report it as a desync.
    desync: Box<Desync>,
}

impl Checker {
    fn slot(&self, frame: u32) -> &Saved {
        &self.ring[frame as usize % self.ring.len()]
    }

    fn slot_mut(&mut self, frame: u32) -> &mut Saved {
        let slots = self.ring.len();
        &mut self.ring[frame as usize % slots]
    }

    /// Goes back `distance` frames from `present`, re-simulates up to
    /// `reached` (the settle window past `present`) and compares each
    /// frame. Returns the desync if a difference found up to `present`
    /// is still there at `reached` (or at once without a settle window);
    /// a difference gone by then is recorded as transient.
    fn roll_back<G: Emulator + ?Sized>(
        &mut self,
        game: &mut G,
        present: u32,
        reached: u32,
        report: &mut SyncTestReport,
    ) -> Result<Option<Box<Desync>>, SyncTestError> {
        let start = present.saturating_sub(self.distance).max(1);
        game.load_state(&self.slot(start).state)
            .map_err(SyncTestError::at_frame(start))?;
        let mut found: Option<Found> = None;
        let mut last_differing = None;
        for resimulated in start..reached {
            let saved_inputs = self.slot(resimulated).inputs;
            game.run_frame(&saved_inputs, self.compare.video);
            report.resimulated_frames += 1;
            let after = resimulated + 1;
            let differing = self.differing(game, after)?;
            if !differing.any() {
                continue;
            }
            last_differing = Some(after);
            if found.is_none() && after <= present {
                let desync = self.describe(game, after, start, reached, differing)?;
                if self.settle_frames == 0 {
                    return Ok(Some(desync));
                }
                found = Some(Found {
                    frame: after,
                    compared_differing: differing,
                    memory_diff: desync.memory_diff.clone(),
                    desync,
                });
            }
        }
        let Some(found) = found else {
            return Ok(None);
        };
        if last_differing == Some(reached) {
            let mut desync = found.desync;
            desync.still_differing_at = Some(reached);
            return Ok(Some(desync));
        }
        report.transients.record(Transient {
            frame: found.frame,
            loaded_frame: start,
            healed_at: last_differing.map_or(found.frame + 1, |last| last + 1),
            differing: found.compared_differing,
            memory_diff: found.memory_diff,
        });
        Ok(None)
    }

    /// Which compared checksums of the game now differ from the first
    /// pass's at frame `after`.
    fn differing<G: Emulator + ?Sized>(
        &mut self,
        game: &mut G,
        after: u32,
    ) -> Result<ChecksumKinds, SyncTestError> {
        // Only what is compared is hashed: re-simulated frames are most of
        // a sync-test's work.
        let first = self.slot(after).checksums;
        let mut now = first;
        if self.compare.memory {
            now.memory = Checksum::of(game.game_memory());
        }
        if self.compare.video {
            now.video = game
                .video_frame()
                .map(|video| Checksum::of_video(&video))
                .unwrap_or_default();
        }
        if self.compare.state {
            game.save_state(&mut self.scratch_state)
                .map_err(SyncTestError::at_frame(after))?;
            now.state = Checksum::of(&self.scratch_state);
        }
        Ok(self.compare.filter(ChecksumKinds::differing(&first, &now)))
    }

    /// Both versions of frame `after`, which differs in `differing`.
    fn describe<G: Emulator + ?Sized>(
        &mut self,
        game: &mut G,
        after: u32,
        start: u32,
        reached: u32,
        differing: ChecksumKinds,
    ) -> Result<Box<Desync>, SyncTestError> {
        let mut resimulated_state = Vec::new();
        game.save_state(&mut resimulated_state)
            .map_err(SyncTestError::at_frame(after))?;
        let resimulated_checksums = Checksums::of_game(game, &resimulated_state);
        let first = self.slot(after);
        // The first pass hashed only what is compared; the rest is hashed
        // now, from the bytes it kept.
        let first_pass = Checksums {
            memory: Checksum::of(&first.memory),
            state: Checksum::of(&first.state),
            video: if self.compare.video {
                first.checksums.video
            } else {
                resimulated_checksums.video
            },
        };
        Ok(Box::new(Desync {
            frame: after,
            loaded_frame: start,
            rolled_back_from: reached,
            still_differing_at: None,
            compared_differing: differing,
            first_pass,
            resimulated: resimulated_checksums,
            memory_diff: ByteDiff::between(&first.memory, game.game_memory(), DEFAULT_RANGE_CAP),
            state_diff: ByteDiff::between(&first.state, &resimulated_state, DEFAULT_RANGE_CAP),
            first_pass_state: first.state.clone(),
            first_pass_memory: first.memory.clone(),
            resimulated_state,
            resimulated_memory: game.game_memory().to_vec(),
        }))
    }
}

impl Checker {
    /// Saves the game as it is now (after `frame` frames) into its slot,
    /// reusing the slot's buffers, and hashes what is compared.
    fn save_boundary<G: Emulator + ?Sized>(
        &mut self,
        game: &mut G,
        frame: u32,
    ) -> Result<(), SyncTestError> {
        let compare = self.compare;
        let slot = self.slot_mut(frame);
        game.save_state(&mut slot.state)
            .map_err(SyncTestError::at_frame(frame))?;
        slot.memory.clear();
        slot.memory.extend_from_slice(game.game_memory());
        let mut checksums = Checksums::default();
        if compare.memory {
            checksums.memory = Checksum::of(&slot.memory);
        }
        if compare.state {
            checksums.state = Checksum::of(&slot.state);
        }
        if compare.video {
            checksums.video = game
                .video_frame()
                .map(|video| Checksum::of_video(&video))
                .unwrap_or_default();
        }
        slot.checksums = checksums;
        slot.inputs = [Buttons::NONE; MAX_PLAYERS];
        let per_frame = slot.state.len() + slot.memory.len();
        let kept = self.ring.len();
        let needed = per_frame.saturating_mul(kept);
        if needed > self.history_budget {
            return Err(SyncTestError::HistoryOverBudget {
                kept,
                per_frame,
                needed,
                budget: self.history_budget,
            });
        }
        Ok(())
    }

    /// Bytes the kept frames' states and memories hold now.
    fn bytes_kept(&self) -> usize {
        self.ring
            .iter()
            .map(|saved| saved.state.len() + saved.memory.len())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::RandomPlayer;
    use crate::testing::{StubGame, GLITCH_OFFSET, HIDDEN_STATE_OFFSET};

    fn random_inputs() -> RandomPlayer {
        RandomPlayer::new(3)
    }

    /// A strict sync-test (no settle window).
    fn sync_test<G: Emulator + ?Sized>(
        game: &mut G,
        frames: u32,
        distance: u32,
        compare: Compare,
        inputs: &mut RandomPlayer,
        progress: &mut dyn FnMut(u32),
    ) -> Result<SyncTestReport, SyncTestError> {
        sync_test_settling(game, frames, distance, compare, 0, inputs, progress)
    }

    fn sync_test_settling<G: Emulator + ?Sized>(
        game: &mut G,
        frames: u32,
        distance: u32,
        compare: Compare,
        settle_frames: u32,
        inputs: &mut RandomPlayer,
        progress: &mut dyn FnMut(u32),
    ) -> Result<SyncTestReport, SyncTestError> {
        let settings = SyncTestSettings {
            compare,
            settle_frames,
            ..SyncTestSettings::new(frames, distance)
        };
        run_sync_test(game, settings, &mut || inputs.next_frame(), progress)
    }

    #[test]
    fn a_deterministic_game_passes_and_reports_its_final_checksums() {
        let mut game = StubGame::deterministic();
        let mut reached = Vec::new();
        let report = sync_test(
            &mut game,
            300,
            7,
            Compare::ALL,
            &mut random_inputs(),
            &mut |frame| reached.push(frame),
        )
        .unwrap();
        assert!(report.desync.is_none(), "{}", report.verdict());
        assert_eq!(report.frames, 300);
        assert_eq!(
            report.verdict(),
            "sync-test passed: 300 frames, distance 7, compared memory+state+video"
        );
        assert_eq!(reached.last(), Some(&300));
        // From frame 2 on, each frame goes back up to 7 frames (never to 0).
        assert_eq!(report.resimulated_frames, (1..=6).sum::<u64>() + 293 * 7);

        // The final checksums are those of a plain run with the same inputs.
        let mut plain = StubGame::deterministic();
        let mut inputs = RandomPlayer::new(3);
        for _ in 0..300 {
            plain.run_frame(&inputs.next_frame(), true);
        }
        let mut state = Vec::new();
        plain.save_state(&mut state).unwrap();
        assert_eq!(report.checksums, Checksums::of_game(&plain, &state));
    }

    #[test]
    fn hidden_state_is_caught_at_the_first_frame_and_its_bytes_are_named() {
        let mut game = StubGame::with_hidden_state();
        let report = sync_test(
            &mut game,
            100,
            4,
            Compare::DEFAULT,
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap();
        let desync = report.desync.as_ref().expect("the hidden state is caught");
        assert_eq!(desync.frame, 2);
        assert_eq!(desync.loaded_frame, 1);
        assert!(desync.compared_differing.memory);
        assert!(!desync.compared_differing.state, "state is not compared");
        assert_eq!(
            desync.memory_diff.ranges,
            vec![HIDDEN_STATE_OFFSET..HIDDEN_STATE_OFFSET + 1]
        );
        assert_ne!(desync.first_pass_memory, desync.resimulated_memory);
        assert!(!desync.state_diff.is_identical(), "memory is in the state");
        assert!(
            report
                .verdict()
                .starts_with("sync-test FAILED at frame 2: memory differs at 0x0010..0x0011"),
            "{}",
            report.verdict()
        );
    }

    #[test]
    fn comparing_only_the_state_still_catches_hidden_state() {
        let mut game = StubGame::with_hidden_state();
        let report = sync_test(
            &mut game,
            50,
            2,
            Compare {
                state: true,
                ..Compare::NONE
            },
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap();
        let desync = report.desync.unwrap();
        assert!(desync.compared_differing.state);
        assert!(!desync.compared_differing.memory, "memory is not compared");
        assert!(desync.summary().starts_with("state differs at"));
    }

    #[test]
    fn comparing_only_video_misses_what_is_not_drawn() {
        // The hidden counter is never drawn, so a video-only comparison
        // cannot see it: the comparison choice really matters.
        let mut game = StubGame::with_hidden_state();
        let report = sync_test(
            &mut game,
            50,
            2,
            Compare {
                video: true,
                ..Compare::NONE
            },
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap();
        assert!(report.desync.is_none(), "{}", report.verdict());
    }

    #[test]
    fn without_a_settle_window_a_difference_that_heals_still_fails() {
        let mut game = StubGame::deterministic().glitching_after_loads();
        let report = sync_test(
            &mut game,
            100,
            4,
            Compare::DEFAULT,
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap();
        let desync = report.desync.expect("strict mode fails on the glitch");
        assert_eq!(desync.frame, 2);
        assert_eq!(desync.still_differing_at, None);
        assert_eq!(
            desync.memory_diff.ranges,
            vec![GLITCH_OFFSET..GLITCH_OFFSET + 1]
        );
    }

    #[test]
    fn a_difference_the_game_overwrites_within_the_settle_window_is_counted_not_failed() {
        let mut game = StubGame::deterministic().glitching_after_loads();
        let report = sync_test_settling(
            &mut game,
            100,
            4,
            Compare::DEFAULT,
            3,
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap();
        assert!(report.desync.is_none(), "{}", report.verdict());
        assert_eq!(report.frames, 100);
        // Every rollback loads once, and each load glitches one frame.
        assert_eq!(report.transients.count, 99);
        assert_eq!(
            report.transients.memory_ranges,
            vec![GLITCH_OFFSET..GLITCH_OFFSET + 1]
        );
        let first = report.transients.first.as_ref().unwrap();
        assert_eq!(
            (first.frame, first.loaded_frame, first.healed_at),
            (2, 1, 3)
        );
        assert!(
            report.verdict().starts_with(
                "sync-test passed: 100 frames, distance 4, compared memory+video; 99 differences healed within 3 frames"
            ),
            "{}",
            report.verdict()
        );
    }

    #[test]
    fn a_settle_window_still_fails_on_state_the_savestate_misses() {
        // The hidden counter never heals: the difference lasts through the
        // window and is reported at the frame it first appeared.
        let mut game = StubGame::with_hidden_state();
        let report = sync_test_settling(
            &mut game,
            100,
            4,
            Compare::DEFAULT,
            5,
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap();
        let desync = report.desync.as_ref().expect("the hidden state is caught");
        assert_eq!(desync.frame, 2);
        assert_eq!(desync.still_differing_at, Some(7));
        assert_eq!(
            desync.memory_diff.ranges,
            vec![HIDDEN_STATE_OFFSET..HIDDEN_STATE_OFFSET + 1]
        );
        assert!(
            report
                .verdict()
                .ends_with("(still differing 5 frames later)"),
            "{}",
            report.verdict()
        );
    }

    #[test]
    fn a_settle_window_checks_every_frame_even_near_the_end() {
        // Fewer frames than the window: the last frames are still checked,
        // with what window is left, and a difference there fails.
        let mut game = StubGame::with_hidden_state();
        let report = sync_test_settling(
            &mut game,
            4,
            2,
            Compare::DEFAULT,
            10,
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap();
        assert!(report.desync.is_some(), "{}", report.verdict());
    }

    #[test]
    fn a_settle_window_beyond_the_limit_is_refused() {
        let err = sync_test_settling(
            &mut StubGame::deterministic(),
            10,
            2,
            Compare::DEFAULT,
            MAX_SETTLE_FRAMES + 1,
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap_err();
        assert!(err.to_string().contains("settle window"), "{err}");
    }

    #[test]
    fn a_check_distance_no_frame_reaches_is_refused_rather_than_passed() {
        let err = sync_test(
            &mut StubGame::deterministic(),
            10,
            50,
            Compare::DEFAULT,
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("needs more than 50 frames"),
            "{err}"
        );
        assert!(
            SyncTestSettings::new(8, 7).check().is_ok(),
            "frame 8 goes back to frame 1"
        );
        assert!(SyncTestSettings::new(7, 7).check().is_err());
    }

    #[test]
    fn frames_whose_states_exceed_the_memory_limit_are_refused_not_kept() {
        let mut settings = SyncTestSettings::new(20, 7);
        // Eight kept frames of the stub (a 64-byte memory in each state and
        // a copy of it) need more than 100 bytes.
        settings.history_bytes = 100;
        let err = run_sync_test(
            &mut StubGame::deterministic(),
            settings,
            &mut || [Buttons::NONE; MAX_PLAYERS],
            &mut |_| {},
        )
        .unwrap_err();
        assert!(err.is_bad_settings(), "a user's limit, not a game failure");
        match err {
            SyncTestError::HistoryOverBudget { kept, budget, .. } => {
                assert_eq!((kept, budget), (8, 100));
            }
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn the_report_says_how_many_bytes_the_kept_frames_took() {
        let mut game = StubGame::deterministic();
        let report = sync_test(
            &mut game,
            30,
            3,
            Compare::DEFAULT,
            &mut random_inputs(),
            &mut |_| {},
        )
        .unwrap();
        let mut state = Vec::new();
        game.save_state(&mut state).unwrap();
        let per_frame = state.len() + game.game_memory().len();
        assert_eq!(report.history_bytes, 4 * per_frame);
    }

    #[test]
    fn merged_ranges_join_what_touches_and_stay_sorted() {
        let mut ranges = Vec::new();
        merge_range(&mut ranges, 10..12);
        merge_range(&mut ranges, 2..4);
        merge_range(&mut ranges, 12..14);
        merge_range(&mut ranges, 3..5);
        assert_eq!(ranges, vec![2..5, 10..14]);
    }

    #[test]
    fn a_check_distance_of_zero_or_too_far_is_refused() {
        for distance in [0, MAX_CHECK_DISTANCE + 1] {
            let err = sync_test(
                &mut StubGame::deterministic(),
                10,
                distance,
                Compare::DEFAULT,
                &mut random_inputs(),
                &mut |_| {},
            )
            .unwrap_err();
            assert!(err.to_string().contains("check distance"), "{err}");
        }
    }
}
