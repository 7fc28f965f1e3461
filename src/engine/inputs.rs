//! Where the buttons of a headless run come from: nobody, a seeded random
//! player, or an input script file.
//!
//! # Input script format
//!
//! A text file, one line per frame, one button set per player separated by
//! spaces (player 1 first, at most 4 players; players left out hold nothing):
//!
//! ```text
//! # Walk right for two seconds while player 2 waits, then both press START.
//! 120x RIGHT NONE
//! START START      # a single frame
//! 10x NONE         # release everything for 10 frames
//! RIGHT+B LEFT+A   # buttons joined with '+'
//! ```
//!
//! - Button sets are written as `input::Buttons` parses them: names from
//!   `BUTTON_NAMES` joined with `+` (any case), `NONE` or `-` for nothing, or
//!   a number (`0x0081`).
//! - `Nx` in front repeats the line N times (1 ≤ N ≤ [`MAX_SCRIPT_FRAMES`]).
//! - `#` starts a comment; blank and comment-only lines are not frames.
//! - After the last line every player holds nothing.
//!
//! Files are limited to [`MAX_SCRIPT_BYTES`] and [`MAX_SCRIPT_FRAMES`] frames
//! in total; repeats are stored as runs, never expanded.

use netcode::input::Buttons;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub use netcode::input::{FrameInputs, RandomPlayer, MAX_PLAYERS, NO_INPUTS, RANDOM_PLAYERS};

/// The biggest input script read (bigger files are refused, not truncated).
pub const MAX_SCRIPT_BYTES: u64 = 16 * 1024 * 1024;

/// The most frames one script may describe, repeats included (about 193 days
/// at 60 fps; frame numbers are `u32`).
pub const MAX_SCRIPT_FRAMES: u64 = 1_000_000_000;

/// What a user asked for with `--inputs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputSpec {
    /// `none`: nobody presses anything.
    Idle,
    /// `random:SEED`: seeded random play.
    Random {
        /// The seed; the same seed gives the same presses on every machine.
        seed: u64,
    },
    /// Any other text: an input script file.
    File(PathBuf),
}

impl Default for InputSpec {
    /// Random play from seed 0: most games do nothing interesting without
    /// input (and some never leave their title screen).
    fn default() -> Self {
        InputSpec::Random { seed: 0 }
    }
}

impl fmt::Display for InputSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputSpec::Idle => f.write_str("none"),
            InputSpec::Random { seed } => write!(f, "random:{seed}"),
            InputSpec::File(path) => write!(f, "{}", path.display()),
        }
    }
}

impl FromStr for InputSpec {
    type Err = InputError;

    fn from_str(text: &str) -> Result<Self, InputError> {
        if text.eq_ignore_ascii_case("none") {
            return Ok(InputSpec::Idle);
        }
        if let Some(seed) = text.strip_prefix("random:") {
            return seed
                .trim()
                .parse::<u64>()
                .map(|seed| InputSpec::Random { seed })
                .map_err(|_| InputError::BadSeed {
                    text: seed.to_string(),
                });
        }
        if text.is_empty() {
            return Err(InputError::EmptySpec);
        }
        Ok(InputSpec::File(PathBuf::from(text)))
    }
}

/// Why inputs could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The text after `random:` is not a number that fits in 64 bits.
    #[error("bad random seed {text:?} (expected random:SEED with SEED a number up to 2^64-1)")]
    BadSeed {
        /// The text given as the seed.
        text: String,
    },
    /// `--inputs` was given an empty value.
    #[error("--inputs needs none, random:SEED or the path of an input script")]
    EmptySpec,
    /// The input script could not be opened or read.
    #[error("cannot read input script {}", path.display())]
    Read {
        /// The script's path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The input script is over [`MAX_SCRIPT_BYTES`]; it is refused rather
    /// than cut short.
    #[error("input script {} is larger than {} bytes", path.display(), MAX_SCRIPT_BYTES)]
    TooLarge {
        /// The script's path.
        path: PathBuf,
    },
    /// A line of the input script is not valid (or the file is not UTF-8).
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        /// The script's path.
        path: PathBuf,
        /// The 1-based line number of the fault.
        line: usize,
        /// What is wrong on that line.
        message: String,
    },
}

/// A parsed input script: runs of identical frames, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputScript {
    runs: Vec<(u64, FrameInputs)>,
    total_frames: u64,
    players: usize,
}

impl InputScript {
    /// Reads and parses the script at `path`.
    pub fn load(path: &Path) -> Result<InputScript, InputError> {
        let read_error = |source| InputError::Read {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(read_error)?;
        let mut bytes = Vec::new();
        file.take(MAX_SCRIPT_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(read_error)?;
        if bytes.len() as u64 > MAX_SCRIPT_BYTES {
            return Err(InputError::TooLarge {
                path: path.to_path_buf(),
            });
        }
        let text = String::from_utf8(bytes).map_err(|err| InputError::Parse {
            path: path.to_path_buf(),
            line: 1 + err.as_bytes()[..err.utf8_error().valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count(),
            message: "not UTF-8 text".to_string(),
        })?;
        InputScript::parse(&text).map_err(|(line, message)| InputError::Parse {
            path: path.to_path_buf(),
            line,
            message,
        })
    }

    /// Parses script text; an error is the 1-based line number and what is
    /// wrong there.
    pub fn parse(text: &str) -> Result<InputScript, (usize, String)> {
        let mut script = InputScript::default();
        for (index, line) in text.lines().enumerate() {
            let line_number = index + 1;
            let content = line.split('#').next().unwrap_or("");
            let mut tokens = content.split_whitespace().peekable();
            let Some(&first) = tokens.peek() else {
                continue;
            };
            let repeat = match parse_repeat(first) {
                Some(count) => {
                    tokens.next();
                    count.map_err(|message| (line_number, message))?
                }
                None => 1,
            };
            let mut inputs = NO_INPUTS;
            let mut players = 0;
            for token in tokens {
                if players == MAX_PLAYERS {
                    return Err((
                        line_number,
                        format!("more than {MAX_PLAYERS} players on one line"),
                    ));
                }
                inputs[players] = token
                    .parse::<Buttons>()
                    .map_err(|err| (line_number, err.to_string()))?;
                players += 1;
            }
            if players == 0 {
                return Err((
                    line_number,
                    "a repeat needs buttons after it (e.g. `60x RIGHT NONE`)".to_string(),
                ));
            }
            script.players = script.players.max(players);
            script.total_frames += repeat;
            if script.total_frames > MAX_SCRIPT_FRAMES {
                return Err((
                    line_number,
                    format!("the script describes more than {MAX_SCRIPT_FRAMES} frames"),
                ));
            }
            match script.runs.last_mut() {
                Some((count, last)) if *last == inputs => *count += repeat,
                _ => script.runs.push((repeat, inputs)),
            }
        }
        Ok(script)
    }

    /// Frames the script describes (after them everybody holds nothing).
    pub fn total_frames(&self) -> u64 {
        self.total_frames
    }

    /// The most players a line of the script names.
    pub fn players(&self) -> usize {
        self.players
    }
}

/// `Some` if `token` is a repeat prefix (`120x`), with its count or why the
/// count is wrong; `None` if it is not a repeat at all.
fn parse_repeat(token: &str) -> Option<Result<u64, String>> {
    let digits = token
        .strip_suffix('x')
        .or_else(|| token.strip_suffix('X'))?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(match digits.parse::<u64>() {
        Ok(0) => Err("a repeat count must be at least 1".to_string()),
        Ok(count) if count <= MAX_SCRIPT_FRAMES => Ok(count),
        _ => Err(format!(
            "repeat count {digits} is larger than the limit of {MAX_SCRIPT_FRAMES} frames"
        )),
    })
}

/// Plays an [`InputScript`] frame after frame.
#[derive(Clone, Debug)]
pub struct ScriptPlayer {
    script: InputScript,
    run: usize,
    used_in_run: u64,
}

impl ScriptPlayer {
    /// A player at the script's first frame.
    pub fn new(script: InputScript) -> Self {
        ScriptPlayer {
            script,
            run: 0,
            used_in_run: 0,
        }
    }

    /// The next frame's inputs; nothing held once the script has ended.
    pub fn next_frame(&mut self) -> FrameInputs {
        while let Some(&(count, inputs)) = self.script.runs.get(self.run) {
            if self.used_in_run < count {
                self.used_in_run += 1;
                return inputs;
            }
            self.run += 1;
            self.used_in_run = 0;
        }
        NO_INPUTS
    }
}

/// An input script that describes fewer frames than the run it drives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptEndsEarly {
    /// The script file.
    pub path: PathBuf,
    /// Frames the script describes.
    pub script_frames: u64,
    /// Frames the run lasts.
    pub run_frames: u32,
}

impl ScriptEndsEarly {
    /// `Some` when a script of `script_frames` frames is shorter than a run
    /// of `run_frames`.
    pub fn check(path: &Path, script_frames: u64, run_frames: u32) -> Option<ScriptEndsEarly> {
        (script_frames < u64::from(run_frames)).then(|| ScriptEndsEarly {
            path: path.to_path_buf(),
            script_frames,
            run_frames,
        })
    }
}

impl fmt::Display for ScriptEndsEarly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "input script {} describes {} frames, the run lasts {}: the last {} run with no buttons held",
            self.path.display(),
            self.script_frames,
            self.run_frames,
            u64::from(self.run_frames) - self.script_frames
        )
    }
}

/// The inputs of a headless run, frame after frame.
#[derive(Clone, Debug)]
pub enum InputSource {
    /// Nobody presses anything.
    Idle,
    /// Seeded random play.
    Random(RandomPlayer),
    /// An input script, played from its first frame.
    Script(ScriptPlayer),
}

impl InputSource {
    /// Sets up what `spec` asks for (reading the script file, if any).
    pub fn open(spec: &InputSpec) -> Result<InputSource, InputError> {
        Ok(match spec {
            InputSpec::Idle => InputSource::Idle,
            InputSpec::Random { seed } => InputSource::Random(RandomPlayer::new(*seed)),
            InputSpec::File(path) => {
                InputSource::Script(ScriptPlayer::new(InputScript::load(path)?))
            }
        })
    }

    /// Sets up what `spec` asks for a run of `frames` frames, and says once
    /// on stderr when an input script ends before the run does (the rest
    /// runs with no buttons held, which is rarely what was meant).
    pub fn open_for_run(spec: &InputSpec, frames: u32) -> Result<InputSource, InputError> {
        let source = InputSource::open(spec)?;
        if let (InputSpec::File(path), InputSource::Script(player)) = (spec, &source) {
            if let Some(short) = ScriptEndsEarly::check(path, player.script.total_frames(), frames)
            {
                eprintln!("warning: {short}");
            }
        }
        Ok(source)
    }

    /// How many players' buttons it presses (at least 1): a recording
    /// keeps that many per frame.
    pub fn players(&self) -> usize {
        match self {
            InputSource::Idle => 1,
            InputSource::Random(_) => RANDOM_PLAYERS,
            InputSource::Script(player) => player.script.players().max(1),
        }
    }

    /// The next frame's inputs, one [`Buttons`] per port.
    pub fn next_frame(&mut self) -> FrameInputs {
        match self {
            InputSource::Idle => NO_INPUTS,
            InputSource::Random(player) => player.next_frame(),
            InputSource::Script(player) => player.next_frame(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames_of(script: &InputScript, count: usize) -> Vec<FrameInputs> {
        let mut player = ScriptPlayer::new(script.clone());
        (0..count).map(|_| player.next_frame()).collect()
    }

    #[test]
    fn a_script_line_gives_each_player_their_buttons_for_one_frame() {
        let script = InputScript::parse("RIGHT+B NONE\nstart left").unwrap();
        let frames = frames_of(&script, 3);
        assert_eq!(frames[0][0], Buttons::RIGHT | Buttons::B);
        assert_eq!(frames[0][1], Buttons::NONE);
        assert_eq!(frames[1][0], Buttons::START);
        assert_eq!(frames[1][1], Buttons::LEFT);
        assert_eq!(
            frames[2], NO_INPUTS,
            "after the script nobody holds anything"
        );
        assert_eq!(script.total_frames(), 2);
    }

    #[test]
    fn a_repeat_prefix_holds_the_line_for_that_many_frames() {
        let script = InputScript::parse("3x RIGHT\n2X - A\n").unwrap();
        let frames = frames_of(&script, 6);
        assert!(frames[..3].iter().all(|f| f[0] == Buttons::RIGHT));
        assert!(frames[3..5]
            .iter()
            .all(|f| f[0] == Buttons::NONE && f[1] == Buttons::A));
        assert_eq!(frames[5], NO_INPUTS);
        assert_eq!(script.total_frames(), 5);
    }

    #[test]
    fn comments_and_blank_lines_are_not_frames() {
        let script =
            InputScript::parse("# title screen\n\n   \nSTART # press start\n# end\n").unwrap();
        assert_eq!(script.total_frames(), 1);
        assert_eq!(frames_of(&script, 1)[0][0], Buttons::START);
    }

    #[test]
    fn the_button_x_is_not_mistaken_for_a_repeat() {
        let script = InputScript::parse("X x").unwrap();
        assert_eq!(frames_of(&script, 1)[0][..2], [Buttons::X, Buttons::X]);
    }

    #[test]
    fn an_unknown_button_is_an_error_on_its_line() {
        let (line, message) = InputScript::parse("RIGHT\n\nRIGHT+TURBO NONE").unwrap_err();
        assert_eq!(line, 3);
        assert!(message.contains("TURBO"), "{message}");
    }

    #[test]
    fn a_huge_repeat_is_an_error_not_an_allocation() {
        let (line, message) = InputScript::parse("1000000000000x RIGHT").unwrap_err();
        assert_eq!(line, 1);
        assert!(message.contains("limit"), "{message}");
        let (_, message) = InputScript::parse("99999999999999999999999x RIGHT").unwrap_err();
        assert!(message.contains("limit"), "{message}");
    }

    #[test]
    fn repeats_adding_up_past_the_limit_are_an_error() {
        let text = "600000000x RIGHT\n600000000x LEFT\n";
        let (line, _) = InputScript::parse(text).unwrap_err();
        assert_eq!(line, 2);
    }

    #[test]
    fn a_zero_repeat_a_bare_repeat_and_five_players_are_errors() {
        assert_eq!(InputScript::parse("0x RIGHT").unwrap_err().0, 1);
        assert_eq!(InputScript::parse("NONE\n12x  # nothing").unwrap_err().0, 2);
        assert!(InputScript::parse("A B X Y START")
            .unwrap_err()
            .1
            .contains("players"));
    }

    #[test]
    fn a_parse_error_from_a_file_names_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("match.inputs");
        std::fs::write(&path, "RIGHT\nJUMP\n").unwrap();
        let err = InputScript::load(&path).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("match.inputs:2:"), "{text}");
        assert!(text.contains("JUMP"), "{text}");
    }

    #[test]
    fn a_missing_script_file_is_an_error_naming_it() {
        let err = InputScript::load(Path::new("/nonexistent/play.txt")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/play.txt"));
    }

    #[test]
    fn a_script_shorter_than_the_run_is_reported_with_how_many_frames_run_idle() {
        let path = Path::new("walk.inputs");
        let short = ScriptEndsEarly::check(path, 120, 600).unwrap();
        let text = short.to_string();
        assert!(text.contains("walk.inputs"), "{text}");
        assert!(text.contains("describes 120 frames"), "{text}");
        assert!(
            text.contains("the last 480 run with no buttons held"),
            "{text}"
        );
        assert_eq!(ScriptEndsEarly::check(path, 600, 600), None);
        assert_eq!(ScriptEndsEarly::check(path, 9000, 600), None);
    }

    #[test]
    fn input_specs_parse_none_random_and_paths() {
        assert_eq!("none".parse::<InputSpec>().unwrap(), InputSpec::Idle);
        assert_eq!(
            "random:42".parse::<InputSpec>().unwrap(),
            InputSpec::Random { seed: 42 }
        );
        assert!(matches!(
            "random:x".parse::<InputSpec>(),
            Err(InputError::BadSeed { .. })
        ));
        assert_eq!(
            "play.txt".parse::<InputSpec>().unwrap(),
            InputSpec::File("play.txt".into())
        );
    }

    #[test]
    fn random_play_is_the_same_for_the_same_seed_and_differs_between_seeds() {
        let run = |seed| {
            let mut player = RandomPlayer::new(seed);
            (0..600).map(|_| player.next_frame()).collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn random_play_holds_buttons_for_stretches_and_taps_start() {
        let mut player = RandomPlayer::new(1);
        let frames: Vec<_> = (0..3600).map(|_| player.next_frame()).collect();
        let changes = frames.windows(2).filter(|w| w[0][0] != w[1][0]).count();
        assert!(changes > 30, "player 1 changed only {changes} times");
        assert!(
            changes < 1800,
            "player 1 changed {changes} times: no stretches"
        );
        let start_presses = frames
            .windows(2)
            .filter(|w| !w[0][0].contains(Buttons::START) && w[1][0].contains(Buttons::START))
            .count();
        assert!(start_presses >= 2, "START pressed {start_presses} times");
        assert!(
            frames.iter().any(|f| !f[1].is_empty()),
            "player 2 plays too"
        );
        assert!(frames.iter().all(|f| f[2].is_empty() && f[3].is_empty()));
    }
}
