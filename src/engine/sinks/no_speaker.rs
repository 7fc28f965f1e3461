//! The speaker of a build without the `audio` feature: no option to choose
//! and never a speaker, so callers read the same with or without the
//! feature (it stands in for `speaker`).

use crate::engine::sinks::audio_file::AudioArgs;
use crate::engine::sinks::FrameSink;
use crate::engine::AppError;

/// The speaker options: none without the `audio` feature.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct SpeakerArgs {}

/// A speaker: none can be made without the `audio` feature.
pub enum Speaker {}

impl Speaker {
    /// One line for a match's summary.
    pub fn describe(&self) -> String {
        match *self {}
    }
}

impl FrameSink for Speaker {}

/// No speaker without the `audio` feature.
pub fn open_speaker_for(
    _args: &AudioArgs,
    _speaker: &SpeakerArgs,
    _headless: bool,
    _core_rate: f64,
) -> Result<Option<Speaker>, AppError> {
    Ok(None)
}
