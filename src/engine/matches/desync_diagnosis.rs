//! A live match's desync, diagnosed: the member holds its own state of the
//! checkpoint whose checksums differed (the driver keeps the latest
//! checkpoints' states) and receives the host's; loading each into the game
//! in turn shows both game memories, and [`ByteDiff`] names the bytes that
//! diverged (the sync-test's region report). Both versions and a `report.txt` go to the dump directory.

use crate::engine::matches::machine::NetplayMachine;
use crate::engine::sinks::FrameSink;
use crate::engine::{write_dump_dir, AppError};
use netcode::diff::{ByteDiff, DEFAULT_RANGE_CAP};
use netcode::emulator::Emulator;
use netcode::netplay::NetplayEvent;
use netcode::rollback::Frame;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where our game and the host's differ at a desynced checkpoint.
#[derive(Clone, Debug)]
pub struct CheckpointDiagnosis {
    /// The checkpoint frame (both states as saved at its start).
    pub frame: Frame,
    /// Game memory bytes that differ (ours before, the host's after).
    pub memory_diff: ByteDiff,
    /// Serialized state bytes that differ.
    pub state_diff: ByteDiff,
    /// Our state of the frame.
    pub our_state: Vec<u8>,
    /// Our game memory at the frame.
    pub our_memory: Vec<u8>,
    /// The host's state of the frame.
    pub host_state: Vec<u8>,
    /// The host's game memory at the frame.
    pub host_memory: Vec<u8>,
}

impl CheckpointDiagnosis {
    /// Loads `our_state` then `host_state` into `game` to read both game
    /// memories, then puts `game` back as it was.
    pub fn diagnose<G: Emulator + ?Sized>(
        game: &mut G,
        frame: Frame,
        our_state: &[u8],
        host_state: Vec<u8>,
    ) -> Result<CheckpointDiagnosis, AppError> {
        let at = AppError::at_frame(frame.number());
        let mut present = Vec::new();
        game.save_state_to_load(&mut present).map_err(at)?;
        let at = AppError::at_frame(frame.number());
        game.load_state(our_state).map_err(at)?;
        let our_memory = game.game_memory().to_vec();
        let at = AppError::at_frame(frame.number());
        game.load_state(&host_state).map_err(at)?;
        let host_memory = game.game_memory().to_vec();
        let at = AppError::at_frame(frame.number());
        game.load_state(&present).map_err(at)?;
        Ok(CheckpointDiagnosis {
            frame,
            memory_diff: ByteDiff::between(&our_memory, &host_memory, DEFAULT_RANGE_CAP),
            state_diff: ByteDiff::between(our_state, &host_state, DEFAULT_RANGE_CAP),
            our_state: our_state.to_vec(),
            our_memory,
            host_state,
            host_memory,
        })
    }

    /// One line: where game memory and the serialized state differ.
    pub fn summary(&self) -> String {
        format!(
            "game memory differs from the host's at {}; serialized state at {}",
            self.memory_diff, self.state_diff
        )
    }

    /// The report lines.
    pub fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "desync: checkpoint frame {} differs between this machine and the host",
            self.frame
        )?;
        writeln!(out, "  game memory bytes: {}", self.memory_diff)?;
        writeln!(out, "  serialized state bytes: {}", self.state_diff)
    }

    /// Writes both versions and `report.txt` into a new subdirectory of
    /// `parent` and returns it.
    pub fn write_dumps(&self, parent: &Path) -> Result<PathBuf, AppError> {
        let base = format!("netplay-{}-frame{}", std::process::id(), self.frame);
        let mut report = Vec::new();
        self.describe(&mut report).map_err(AppError::Output)?;
        write_dump_dir(
            parent,
            &base,
            &[
                ("ours.state", &self.our_state),
                ("ours.memory", &self.our_memory),
                ("host.state", &self.host_state),
                ("host.memory", &self.host_memory),
                ("report.txt", &report),
            ],
        )
    }
}

/// What a machine did about a desync event.
#[derive(Debug)]
pub enum DesyncAnswer {
    /// Not a desync event, or nothing to do (the host no longer holds the
    /// frame's state, or a blob is still on its way).
    Nothing,
    /// The host sent its state of the frame to the member.
    StateSent,
    /// The host's state arrived after ours of the frame was dropped.
    TooLate,
    /// The host's state equals ours: a checkpoint reported before an
    /// earlier repair.
    AlreadyRepaired,
    /// The member compared the host's state with its own, and repaired its
    /// game with it unless the frame was too far back.
    Diagnosed {
        /// Where the two differ.
        diagnosis: Box<CheckpointDiagnosis>,
        /// Whether the game now continues from the host's state.
        repaired: bool,
    },
}

impl<A, G, S> NetplayMachine<A, G, S>
where
    A: Ord + Copy + std::hash::Hash,
    G: std::ops::DerefMut,
    G::Target: Emulator,
    S: FrameSink,
{
    /// Answers a desync: on [`NetplayEvent::Desync`] the host sends the
    /// member its state of the frame; on [`NetplayEvent::HostCheckpointState`]
    /// the member diffs it against its own and repairs its game from it.
    /// Every frontend calls this for each event it drains.
    pub fn answer_desync(&mut self, event: &NetplayEvent) -> Result<DesyncAnswer, AppError> {
        match event {
            NetplayEvent::Desync { frame, player, .. } => {
                let Some(state) = self.driver.checkpoint_state(*frame) else {
                    return Ok(DesyncAnswer::Nothing);
                };
                let state = state.to_vec();
                Ok(
                    if self.netplay.send_checkpoint_state(*player, *frame, &state) {
                        DesyncAnswer::StateSent
                    } else {
                        DesyncAnswer::Nothing
                    },
                )
            }
            NetplayEvent::HostCheckpointState { frame, state } => {
                let Some(ours) = self.driver.checkpoint_state(*frame).map(<[u8]>::to_vec) else {
                    return Ok(DesyncAnswer::TooLate);
                };
                if let Some(reason) = refusal_of(&mut *self.game, state, *frame)? {
                    self.netplay.host_state_refused(reason);
                    return Ok(DesyncAnswer::Nothing);
                }
                let diagnosis =
                    CheckpointDiagnosis::diagnose(&mut *self.game, *frame, &ours, state.clone())?;
                if diagnosis.memory_diff.is_identical() && diagnosis.state_diff.is_identical() {
                    return Ok(DesyncAnswer::AlreadyRepaired);
                }
                let repaired = self.driver.repair(
                    &mut self.netplay,
                    &mut *self.game,
                    *frame,
                    &diagnosis.host_state,
                    &mut self.sink,
                )?;
                Ok(DesyncAnswer::Diagnosed {
                    diagnosis: Box::new(diagnosis),
                    repaired,
                })
            }
            _ => Ok(DesyncAnswer::Nothing),
        }
    }
}

/// What `game`'s core says when it refuses to load `state`, if it does;
/// the game is left as it was either way.
fn refusal_of<G: Emulator + ?Sized>(
    game: &mut G,
    state: &[u8],
    frame: Frame,
) -> Result<Option<String>, AppError> {
    let mut present = Vec::new();
    game.save_state_to_load(&mut present)
        .map_err(AppError::at_frame(frame.number()))?;
    let refusal = game.load_state(state).err().map(|error| error.to_string());
    game.load_state(&present)
        .map_err(AppError::at_frame(frame.number()))?;
    Ok(refusal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use netcode::testing::StubGame;

    #[test]
    fn a_diagnosis_names_the_memory_bytes_that_differ_and_leaves_the_game_as_it_was() {
        let mut game = StubGame::deterministic();
        let mut ours = Vec::new();
        game.save_state(&mut ours).unwrap();
        let mut host_game = StubGame::deterministic();
        host_game.run_frame(&[netcode::input::Buttons::RIGHT], false);
        let mut host = Vec::new();
        host_game.save_state(&mut host).unwrap();
        game.run_frame(&[netcode::input::Buttons::default()], false);
        game.run_frame(&[netcode::input::Buttons::default()], false);
        let mut before = Vec::new();
        game.save_state(&mut before).unwrap();
        let diagnosis =
            CheckpointDiagnosis::diagnose(&mut game, Frame::new(3), &ours, host).unwrap();
        assert_eq!(
            diagnosis.memory_diff.ranges.first(),
            Some(&(0..1)),
            "player 1's x, which only the host moved"
        );
        let mut after = Vec::new();
        game.save_state(&mut after).unwrap();
        assert_eq!(before, after, "the game is back where it was");
        let parent = tempfile::tempdir().unwrap();
        let dir = diagnosis.write_dumps(parent.path()).unwrap();
        let report = std::fs::read_to_string(dir.join("report.txt")).unwrap();
        assert!(report.contains("game memory bytes: 0x"), "{report}");
        assert!(dir.join("host.memory").exists());
    }
}
