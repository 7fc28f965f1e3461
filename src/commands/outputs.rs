//! What a command shows and keeps besides the terminal, declared once:
//! [`OutputArgs`] (the window or none, the speaker, the replay, the audio
//! file) for the live commands, and its [`ShowArgs`] part for the ones
//! that play without recording. The `gui` feature is decided here: the
//! window's options and opening it.

use crate::engine::inputs::InputSpec;
use crate::engine::sinks::audio_file::AudioArgs;
use crate::engine::sinks::recorder::RecordArgs;
use crate::engine::sinks::speaker::SpeakerArgs;
use crate::engine::sinks::SinkChoices;
use crate::engine::{AppError, Game, Outcome};
use crate::live::front_end::{ConnectingScreen, FrontEnd, Headless, LiveOutputs, OpenFrontEnd};
use crate::live::options::LiveOptions;
use crate::live::players::MatchSettings;
use crate::live::session_loop::LiveMatch;
use std::io::Write;

/// How a command shows and plays a game as it runs: the window (or none)
/// and the speaker.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ShowArgs {
    /// No window: the terminal only (always so in a build without the
    /// `gui` feature).
    #[arg(long)]
    pub headless: bool,
    /// How the window shows the game (builds with the `gui` feature).
    #[cfg(feature = "gui")]
    #[command(flatten)]
    pub display: crate::gui::window::DisplayArgs,
    /// The speaker.
    #[command(flatten)]
    pub speaker: SpeakerArgs,
}

impl ShowArgs {
    /// Whether the game is shown in a window (whose keyboard and
    /// controllers play).
    pub fn in_window(&self) -> bool {
        cfg!(feature = "gui") && !self.headless
    }

    /// Where a player's buttons come from when `--inputs` is not given: in
    /// a window the player's own devices only, headless the random player
    /// (most games do nothing interesting without input).
    pub fn default_inputs(&self) -> InputSpec {
        if self.in_window() {
            InputSpec::Idle
        } else {
            InputSpec::default()
        }
    }
}

impl OpenFrontEnd for ShowArgs {
    /// The window, unless `--headless` or built without the `gui` feature.
    fn open_front_end(&self, game: &dyn Game) -> Result<Box<dyn FrontEnd>, AppError> {
        #[cfg(feature = "gui")]
        if self.in_window() {
            let window = crate::gui::front_end::WindowFrontEnd::open(game, &self.display)?;
            return Ok(Box::new(window));
        }
        Headless.open_front_end(game)
    }

    /// The window's connecting screen, unless `--headless` or built
    /// without the `gui` feature.
    fn connecting(&self, host: &str) -> Result<Box<dyn ConnectingScreen>, AppError> {
        #[cfg(feature = "gui")]
        if self.in_window() {
            let screen = crate::gui::connecting::ConnectingWindow::open(host, &self.display)?;
            return Ok(Box::new(screen));
        }
        Headless.connecting(host)
    }
}

/// Everything a live match (`host`, `join`, `spectate`) shows and keeps.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct OutputArgs {
    /// The window and the speaker.
    #[command(flatten)]
    pub show: ShowArgs,
    /// Where the match's replay goes (`--record PATH`, `--no-record`).
    #[command(flatten)]
    pub record: RecordArgs,
    /// Audio output.
    #[command(flatten)]
    pub audio: AudioArgs,
    /// Writes one line per frame shown to PATH: `FRAME VIDEO AUDIO MEMORY`
    /// (the frame number, hex checksums of the picture shown, the audio
    /// of the frame's first run and the memory after it).
    #[arg(long, value_name = "PATH")]
    pub frame_log: Option<std::path::PathBuf>,
    /// End the output with one JSON object on its own line.
    #[arg(long)]
    pub json: bool,
}

impl OutputArgs {
    /// `settings` with `--inputs` decided: the window's default
    /// ([`ShowArgs::default_inputs`]) when it was not given.
    pub fn with_default_inputs(&self, settings: &MatchSettings) -> MatchSettings {
        let mut settings = settings.clone();
        settings
            .inputs
            .get_or_insert_with(|| self.show.default_inputs());
        settings
    }

    /// Plays a live match as a command does (Ctrl-C and the status line its
    /// own), with these outputs, then writes its summary.
    pub fn play_live(
        &self,
        out: &mut dyn Write,
        play: impl FnOnce(&LiveOutputs<'_>, &LiveOptions, &mut dyn Write) -> Result<LiveMatch, AppError>,
    ) -> Result<Outcome, AppError> {
        let played = play(&self.live(), &LiveOptions::for_stdout(), out)?;
        played.write_report(self.json, out)?;
        Ok(played.outcome)
    }

    /// The outputs as the engine takes them.
    pub fn live(&self) -> LiveOutputs<'_> {
        LiveOutputs {
            front_end: &self.show,
            sinks: SinkChoices {
                record: self.record.clone(),
                audio: self.audio.clone(),
                speaker: self.show.speaker.clone(),
                headless: self.show.headless,
                frame_log: self.frame_log.clone(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::players::JoinSettings;
    use clap::Parser;

    #[derive(Debug, clap::Parser)]
    struct Join {
        #[command(flatten)]
        settings: JoinSettings,
        #[command(flatten)]
        outputs: OutputArgs,
    }

    fn inputs_of(args: &[&str]) -> InputSpec {
        let mut all = vec!["join", "127.0.0.1:7000", "--core", "duel"];
        all.extend_from_slice(args);
        let join = Join::try_parse_from(all).unwrap();
        join.outputs
            .with_default_inputs(&join.settings.common)
            .input_spec()
    }

    #[test]
    fn a_player_in_a_window_plays_with_their_own_devices_only_and_headless_with_the_random_player()
    {
        let in_window = if cfg!(feature = "gui") {
            InputSpec::Idle
        } else {
            InputSpec::Random { seed: 0 }
        };
        assert_eq!(inputs_of(&[]), in_window);
        assert_eq!(inputs_of(&["--headless"]), InputSpec::Random { seed: 0 });
        for given in [
            &["--inputs", "random:7"][..],
            &["--inputs", "random:7", "--headless"],
        ] {
            assert_eq!(inputs_of(given), InputSpec::Random { seed: 7 }, "{given:?}");
        }
    }
}
