//! `--frame-log PATH`: one line per frame shown, `FRAME VIDEO AUDIO MEMORY`
//! (the frame number, then hex checksums of the picture shown, of the
//! audio its first run made and of the game's memory after that run), so
//! two runs can be compared frame by frame: with and without run-ahead,
//! two builds, two machines of a match.

use crate::engine::sinks::{FinishedFrame, FrameSink};
use crate::engine::AppError;
use netcode::checksum::Checksum;
use netcode::emulator::VideoFrame;
use netcode::rollback::Frame;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes the frame log. Built with [`FrameLog::create`], ended with
/// [`FrameLog::finish`].
pub struct FrameLog {
    path: PathBuf,
    out: BufWriter<File>,
    /// The latest first run's frame, audio and memory checksums, waiting
    /// for its picture.
    ran: Option<(Frame, Checksum, Checksum)>,
    lines: u64,
    /// The first write that failed: reported by `finish`, since a sink
    /// cannot fail a frame.
    error: Option<std::io::Error>,
}

/// What a frame log left.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameLogSummary {
    /// The file written.
    pub path: PathBuf,
    /// Its lines: the frames shown.
    pub lines: u64,
}

impl FrameLogSummary {
    /// `frame log: PATH (N frames)`.
    pub fn describe(&self) -> String {
        format!("frame log: {} ({} frames)", self.path.display(), self.lines)
    }

    /// `{"path": …, "frames": N}`.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "path": self.path.display().to_string(),
            "frames": self.lines,
        })
    }
}

impl FrameLog {
    /// Creates (or truncates) the log at `path`.
    pub fn create(path: &Path) -> Result<FrameLog, AppError> {
        let file = File::create(path).map_err(|source| AppError::WriteFile {
            what: "the frame log",
            path: path.to_path_buf(),
            source,
        })?;
        Ok(FrameLog {
            path: path.to_path_buf(),
            out: BufWriter::new(file),
            ran: None,
            lines: 0,
            error: None,
        })
    }

    /// Opens the log `path` names, if any.
    pub fn open(path: Option<&Path>) -> Result<Option<FrameLog>, AppError> {
        path.map(FrameLog::create).transpose()
    }

    /// Flushes the log and says what it holds.
    pub fn finish(mut self) -> Result<FrameLogSummary, AppError> {
        let flushed = match self.error.take() {
            Some(error) => Err(error),
            None => self.out.flush(),
        };
        flushed.map_err(|source| AppError::WriteFile {
            what: "the frame log",
            path: self.path.clone(),
            source,
        })?;
        Ok(FrameLogSummary {
            path: self.path,
            lines: self.lines,
        })
    }
}

/// The checksum of interleaved samples, as little-endian bytes.
fn audio_checksum(samples: &[i16]) -> Checksum {
    let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
    Checksum::of(&bytes)
}

impl FrameSink for FrameLog {
    fn frame_run(&mut self, frame: &FinishedFrame<'_>) {
        // A re-simulation corrects a frame shown already: not shown again.
        if !frame.resimulated {
            self.ran = Some((
                frame.frame,
                audio_checksum(frame.audio),
                Checksum::of(frame.memory),
            ));
        }
    }

    fn frame_shown(&mut self, frame: Frame, picture: Option<VideoFrame<'_>>) {
        let Some((ran, audio, memory)) = self.ran.take() else {
            return;
        };
        if ran != frame || self.error.is_some() {
            return;
        }
        let video = picture.map_or(Checksum(0), |picture| Checksum::of_video(&picture));
        let line = writeln!(self.out, "{} {video} {audio} {memory}", frame.number());
        match line {
            Ok(()) => self.lines += 1,
            Err(error) => self.error = Some(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sinks::{run_frame, FramePass};
    use netcode::emulator::Emulator;
    use netcode::input::Buttons;
    use netcode::testing::StubGame;

    fn lines(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn each_frame_shown_is_one_line_of_its_number_and_checksums() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("frames.log");
        let mut log = FrameLog::create(&path).unwrap();
        let mut game = StubGame::deterministic();
        let mut expected = Vec::new();
        for number in 0..3 {
            let frame = Frame::new(number);
            run_frame(
                &mut game,
                frame,
                &[Buttons::NONE],
                FramePass::Shown,
                &mut log,
            );
            log.frame_shown(frame, game.video_frame());
            expected.push(format!(
                "{number} {} {} {}",
                Checksum::of_video(&game.video_frame().unwrap()),
                audio_checksum(game.audio_samples()),
                Checksum::of(game.game_memory())
            ));
        }
        // Run but never shown (a replay seeking): no line.
        run_frame(&mut game, Frame::new(3), &[], FramePass::Unshown, &mut log);
        let summary = log.finish().unwrap();
        assert_eq!(summary.lines, 3);
        assert_eq!(lines(&path), expected);
    }

    #[test]
    fn a_re_simulated_frame_is_not_logged_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("frames.log");
        let mut log = FrameLog::create(&path).unwrap();
        let mut game = StubGame::deterministic();
        run_frame(&mut game, Frame::new(0), &[], FramePass::Shown, &mut log);
        run_frame(
            &mut game,
            Frame::new(0),
            &[],
            FramePass::Resimulated,
            &mut log,
        );
        log.frame_shown(Frame::new(0), game.video_frame());
        log.frame_shown(Frame::new(0), game.video_frame());
        assert_eq!(log.finish().unwrap().lines, 1);
    }
}
