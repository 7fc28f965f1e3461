//! A live match's sinks as one bundle: the checksum log of its final
//! frames, its replay, `--audio-out` and the speaker, opened as its command
//! chose and finished together into the lines and JSON its summary ends with.

use crate::engine::sinks::audio_file::{AudioArgs, AudioSink, AudioSummary};
use crate::engine::sinks::frame_log::{FrameLog, FrameLogSummary};
use crate::engine::sinks::recorder::{
    finish_match_recording, RecordArgs, RecordingSummary, ReplayRecorder,
};
use crate::engine::sinks::speaker::{open_speaker_for, Speaker, SpeakerArgs};
use crate::engine::sinks::{ChecksumLog, FinalFrame, FinishedFrame, FrameSink};
use crate::engine::{AppError, Game};
use netcode::checksum::Checksum;
use netcode::emulator::VideoFrame;
use netcode::replay::EndReason;
use netcode::rollback::Frame;
use std::io::Write;

/// Final frames whose checksums a match keeps, for comparing machines (the
/// demo compares its players' and spectator's): 34 s at 60 fps, 32 KiB,
/// resident within the first minute so a long match's memory stays flat.
const LOGGED_FRAMES: usize = 1 << 11;

/// What a match's frames go to besides the game, as its command chose.
#[derive(Clone, Debug, Default)]
pub struct SinkChoices {
    /// The replay (`--record PATH`, `--no-record`).
    pub record: RecordArgs,
    /// `--audio-out` and the audio ring's settings.
    pub audio: AudioArgs,
    /// The speaker.
    pub speaker: SpeakerArgs,
    /// No window: the speaker plays only on a device asked for by name.
    pub headless: bool,
    /// `--frame-log`.
    pub frame_log: Option<std::path::PathBuf>,
}

/// Where a live match's frames go. Built with [`MatchSinks::open`], ended
/// with [`MatchSinks::finish`].
pub struct MatchSinks {
    /// The checksums of the latest final frames.
    pub log: ChecksumLog,
    /// The replay being written (none with `--no-record`).
    pub recorder: Option<ReplayRecorder>,
    /// `--audio-out`.
    pub audio: Option<AudioSink>,
    /// The speaker, when one plays.
    pub speaker: Option<Speaker>,
    /// `--frame-log`.
    pub frame_log: Option<FrameLog>,
    /// Frames run again after rollbacks.
    pub resimulated_frames: u64,
    /// A sink that passes the match on (a broadcast), told its end in
    /// [`MatchSinks::finish`].
    pub relay: Option<Box<dyn RelaySink + Send>>,
}

/// A sink passing the match on elsewhere, which must hear how it ended.
pub trait RelaySink: FrameSink {
    /// The match ended for `end`: pass on what is left.
    fn match_ended(&mut self, end: EndReason);

    /// Why nothing more can be passed on, once so: the watch feeding it
    /// then ends.
    fn failure(&self) -> Option<String> {
        None
    }
}

impl MatchSinks {
    /// The sinks `choices` ask for besides `recorder` (made before the
    /// front end opens: it names the file), for `game`, whose match ends
    /// after `frames` frames if known.
    pub fn open(
        choices: &SinkChoices,
        recorder: Option<ReplayRecorder>,
        game: &dyn Game,
        frames: Option<u32>,
    ) -> Result<MatchSinks, AppError> {
        Ok(MatchSinks {
            log: ChecksumLog::new(LOGGED_FRAMES),
            recorder,
            audio: choices.audio.open_sink(game.sample_rate(), frames)?,
            speaker: open_speaker_for(
                &choices.audio,
                &choices.speaker,
                choices.headless,
                game.sample_rate(),
            )?,
            frame_log: FrameLog::open(choices.frame_log.as_deref())?,
            resimulated_frames: 0,
            relay: None,
        })
    }

    /// Ends the replay with `end` (a recording that failed is a warning)
    /// and the audio file; returns the checksum log and what the outputs
    /// left. The sinks keep nothing afterwards.
    pub fn finish(&mut self, end: EndReason) -> Result<(ChecksumLog, SinksSummary), AppError> {
        let recording = finish_match_recording(self.recorder.take(), end);
        if let Some(relay) = &mut self.relay {
            relay.match_ended(end);
        }
        let audio = self.audio.take().map(AudioSink::finish).transpose()?;
        let frame_log = self.frame_log.take().map(FrameLog::finish).transpose()?;
        let summary = SinksSummary {
            recording,
            audio,
            speaker: self.speaker.as_ref().map(Speaker::describe),
            frame_log,
        };
        Ok((
            std::mem::replace(&mut self.log, ChecksumLog::new(1)),
            summary,
        ))
    }
}

impl FrameSink for MatchSinks {
    fn frame_run(&mut self, frame: &FinishedFrame<'_>) {
        if frame.resimulated {
            self.resimulated_frames += 1;
        }
        self.audio.frame_run(frame);
        self.speaker.frame_run(frame);
        self.frame_log.frame_run(frame);
        if let Some(relay) = &mut self.relay {
            relay.frame_run(frame);
        }
    }

    fn frame_finalized(&mut self, frame: &FinalFrame<'_>) {
        self.log.frame_finalized(frame);
        self.recorder.frame_finalized(frame);
        self.audio.frame_finalized(frame);
        if let Some(relay) = &mut self.relay {
            relay.frame_finalized(frame);
        }
    }

    fn frame_shown(&mut self, frame: Frame, picture: Option<VideoFrame<'_>>) {
        self.frame_log.frame_shown(frame, picture);
    }

    fn clock_tick(&mut self, now_us: u64, speed: f64) {
        self.audio.clock_tick(now_us, speed);
        self.speaker.clock_tick(now_us, speed);
    }

    fn set_volume(&mut self, volume: f32) {
        self.audio.set_volume(volume);
        self.speaker.set_volume(volume);
    }

    fn wants_checksums(&self) -> bool {
        true
    }

    fn match_started(&mut self, frame: Frame, start_state: &[u8], memory: Checksum) {
        self.recorder.match_started(frame, start_state, memory);
        if let Some(relay) = &mut self.relay {
            relay.match_started(frame, start_state, memory);
        }
    }

    fn state_repaired(&mut self, frame: Frame, state: &[u8], memory: Checksum) {
        self.recorder.state_repaired(frame, state, memory);
        if let Some(relay) = &mut self.relay {
            relay.state_repaired(frame, state, memory);
        }
    }

    fn player_left(&mut self, frame: Frame, player: u8) {
        self.recorder.player_left(frame, player);
        if let Some(relay) = &mut self.relay {
            relay.player_left(frame, player);
        }
    }

    fn wants_state(&self, frame: Frame) -> bool {
        self.relay
            .as_ref()
            .is_some_and(|relay| relay.wants_state(frame))
    }

    fn state_before(&mut self, frame: Frame, state: &[u8]) {
        if let Some(relay) = &mut self.relay {
            relay.state_before(frame, state);
        }
    }
}

/// What a finished match's outputs left behind, said after its summary
/// and added to its JSON.
#[derive(Clone, Debug, Default)]
pub struct SinksSummary {
    /// The replay written, if recording.
    pub recording: Option<RecordingSummary>,
    /// The `--audio-out` file written.
    pub audio: Option<AudioSummary>,
    /// The speaker's line, if one played.
    pub speaker: Option<String>,
    /// The `--frame-log` written.
    pub frame_log: Option<FrameLogSummary>,
}

impl SinksSummary {
    /// One line per output: the replay, the audio file, the speaker.
    pub fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if let Some(recording) = &self.recording {
            writeln!(out, "replay: {}", recording.path.display())?;
        }
        if let Some(audio) = &self.audio {
            writeln!(out, "{}", audio.describe())?;
        }
        if let Some(speaker) = &self.speaker {
            writeln!(out, "{speaker}")?;
        }
        if let Some(frame_log) = &self.frame_log {
            writeln!(out, "{}", frame_log.describe())?;
        }
        Ok(())
    }

    /// Adds `replay` (null when not recording) and, when written, `audio`
    /// to a command's JSON.
    pub fn add_to_json(&self, json: &mut serde_json::Value) {
        json["replay"] = self
            .recording
            .as_ref()
            .map_or(serde_json::Value::Null, RecordingSummary::json);
        if let Some(audio) = &self.audio {
            json["audio"] = audio.json();
        }
        if let Some(frame_log) = &self.frame_log {
            json["frame_log"] = frame_log.json();
        }
    }
}
