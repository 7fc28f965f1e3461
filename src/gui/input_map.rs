//! Keyboard and game controller mapping to the RetroPad, read from a TOML
//! file in netcade's config directory. The file is written with the
//! defaults and comments on first run; the defaults are parsed from that
//! same text, so the file and the built-in mapping never disagree.
//!
//! Keys are SDL key names (`W`, `Left`, `Return`, `Keypad 1`), controller
//! inputs SDL's game controller names (`a`, `dpup`, `leftshoulder`) or a
//! stick direction (`leftx-`, `lefty+`); several inputs for one button
//! are joined with `|`.

use crate::gui::GuiError;
use netcode::input::{Buttons, MAX_PLAYERS};
use sdl2::controller::{Axis, Button};
use sdl2::keyboard::Keycode;
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use toml::Spanned;

/// SDL's name for `key` (`"Q"`, `"Left Shift"`). SDL writes a printable
/// key's name into one static buffer and returns it, so two threads asking
/// at once can each read the other's key: they ask one at a time.
pub fn key_name(key: Keycode) -> String {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    key.name()
}

/// The config file's name in netcade's config directory.
pub const CONFIG_FILE_NAME: &str = "input.toml";

/// How far a stick must lean (of 32767) to press its direction.
pub const AXIS_THRESHOLD: i16 = 16_384;

/// The default mapping, written to the config file on first run.
pub const DEFAULT_CONFIG: &str = r#"# netcade's input mapping: which keys and controller inputs press which
# RetroPad buttons. Edit and restart netcade; `netcade input` prints the
# mapping in use, `netcade input --test` shows what you press.
#
# Buttons: up down left right b a y x l r l2 r2 l3 r3 select start
# (the RetroPad's B is the bottom face button, A the right one).
# Keyboard keys are SDL key names ("W", "Left", "Return", "Keypad 1",
# "Right Shift"); join alternatives with "|" ("Return|Space").
# Hotkeys (not remappable): F1 overlay (Shift+F1 moves it), F2 shader,
# F11 or Alt+Enter fullscreen, F12 screenshot, P pause, . step, , step back,
# M mark, N diff, T chat (in a match), Esc leave (in a match: Esc twice).

# Player 1 on the left of the keyboard.
[keyboard.player1]
up = "W"
down = "S"
left = "A"
right = "D"
b = "J"
a = "K"
y = "U"
x = "I"
l = "Q"
r = "E"
select = "Tab"
start = "Return"

# Player 2 on the arrows and the keypad.
[keyboard.player2]
up = "Up"
down = "Down"
left = "Left"
right = "Right"
b = "Keypad 1"
a = "Keypad 2"
y = "Keypad 4"
x = "Keypad 5"
l = "Keypad 7"
r = "Keypad 8"
select = "Right Shift"
start = "Keypad Enter"

# Every game controller (SDL's names: a b x y back guide start leftstick
# rightstick leftshoulder rightshoulder dpup dpdown dpleft dpright, and
# stick directions leftx- leftx+ lefty- lefty+ rightx- ... ; triggers:
# lefttrigger righttrigger). Controllers become players 1, 2, ... in the
# order they connect.
[controller]
up = "dpup|lefty-"
down = "dpdown|lefty+"
left = "dpleft|leftx-"
right = "dpright|leftx+"
b = "a"
a = "b"
y = "x"
x = "y"
l = "leftshoulder"
r = "rightshoulder"
l2 = "lefttrigger"
r2 = "righttrigger"
l3 = "leftstick"
r3 = "rightstick"
select = "back"
start = "start"
"#;

/// One input of a game controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControllerInput {
    /// A button.
    Button(Button),
    /// A stick leaning negative (left, up) past [`AXIS_THRESHOLD`].
    AxisNegative(Axis),
    /// A stick leaning positive (right, down) or a trigger pressed past it.
    AxisPositive(Axis),
}

impl ControllerInput {
    fn parse(name: &str) -> Option<ControllerInput> {
        if let Some(axis) = name.strip_suffix('-') {
            return Axis::from_string(axis).map(ControllerInput::AxisNegative);
        }
        if let Some(axis) = name.strip_suffix('+') {
            return Axis::from_string(axis).map(ControllerInput::AxisPositive);
        }
        if let Some(button) = Button::from_string(name) {
            return Some(ControllerInput::Button(button));
        }
        // Triggers are axes that only go positive.
        Axis::from_string(name)
            .filter(|axis| matches!(axis, Axis::TriggerLeft | Axis::TriggerRight))
            .map(ControllerInput::AxisPositive)
    }

    /// The name the config file writes it with.
    pub fn name(self) -> String {
        match self {
            ControllerInput::Button(button) => button.string(),
            ControllerInput::AxisNegative(axis) => format!("{}-", axis.string()),
            ControllerInput::AxisPositive(axis @ (Axis::TriggerLeft | Axis::TriggerRight)) => {
                axis.string()
            }
            ControllerInput::AxisPositive(axis) => format!("{}+", axis.string()),
        }
    }
}

/// Button name → inputs, each with its place in the file.
type Table = BTreeMap<Spanned<String>, Spanned<String>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    keyboard: BTreeMap<Spanned<String>, Table>,
    #[serde(default)]
    controller: Table,
}

/// The active mapping: keys per player, and the controller inputs every
/// controller uses.
#[derive(Clone, Debug, PartialEq)]
pub struct InputMap {
    /// `keyboard[p]`: the keys of player `p + 1` and the button each presses.
    pub keyboard: Vec<Vec<(Keycode, Buttons)>>,
    /// What each controller input presses.
    pub controller: Vec<(ControllerInput, Buttons)>,
}

/// The keys the window keeps for itself, and what each does there.
pub const HOTKEYS: &[(Keycode, &str)] = &[
    (Keycode::Escape, "leaving"),
    (Keycode::F1, "the overlay"),
    (Keycode::F2, "the shader"),
    (Keycode::F11, "fullscreen"),
    (Keycode::F12, "screenshots"),
    (Keycode::P, "pausing local play"),
    (Keycode::Period, "stepping"),
    (Keycode::Comma, "stepping back"),
    (Keycode::M, "marking"),
    (Keycode::N, "diffing"),
    (Keycode::T, "chat"),
    (Keycode::F3, "resetting local play"),
    (Keycode::F5, "saving states"),
    (Keycode::F6, "choosing a state slot"),
    (Keycode::F7, "choosing a state slot"),
    (Keycode::F8, "loading states"),
    (Keycode::F4, "fast-forward"),
    (Keycode::Minus, "the volume"),
    (Keycode::Equals, "the volume"),
    (Keycode::F9, "muting"),
];

/// A mapping as read from a config file, with what in it is probably not
/// what was meant.
#[derive(Clone, Debug)]
pub struct LoadedInputMap {
    /// The mapping.
    pub map: InputMap,
    /// The file did not exist and was just written with the defaults.
    pub created: bool,
    /// `line N: …` for each binding that parses but misleads (a key bound
    /// twice, a hotkey bound to a button) or for a file that binds nothing.
    pub warnings: Vec<String>,
}

/// One binding as the file wrote it: for the warnings.
struct Binding {
    /// `key "W"` or `controller input "a"`.
    input: String,
    /// `player 1's up` or `up`.
    presses: String,
    line: usize,
}

fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// What a file's bindings say that is probably not what was meant.
fn binding_warnings(map: &InputMap, bindings: &[Binding]) -> Vec<String> {
    let mut warnings = Vec::new();
    if map.keyboard.iter().all(Vec::is_empty) && map.controller.is_empty() {
        warnings.push(
            "line 1: the file binds no key and no controller input, so nothing can be pressed in a game (delete it to get the defaults back)".to_string(),
        );
    }
    for (index, binding) in bindings.iter().enumerate() {
        if let Some(first) = bindings[..index].iter().find(|b| b.input == binding.input) {
            warnings.push(format!(
                "line {}: {} is bound again (to {} on line {}, to {} here): it presses both",
                binding.line, binding.input, first.presses, first.line, binding.presses
            ));
        }
    }
    for (key, does) in HOTKEYS {
        let input = format!("key {:?}", key_name(*key));
        if let Some(binding) = bindings.iter().find(|b| b.input == input) {
            warnings.push(format!(
                "line {}: {input} is netcade's hotkey for {does}: pressing it for {} does that too",
                binding.line, binding.presses
            ));
        }
    }
    warnings
}

/// A config file's mistake: the line it is on and what is wrong.
pub(crate) fn config_error(
    text: &str,
    path: &Path,
    at: usize,
    message: impl Into<String>,
) -> GuiError {
    GuiError::Config {
        path: path.to_path_buf(),
        line: line_of(text, at),
        message: message.into(),
    }
}

impl InputMap {
    /// The built-in mapping ([`DEFAULT_CONFIG`]).
    pub fn defaults() -> InputMap {
        InputMap::parse(DEFAULT_CONFIG, Path::new("(built-in defaults)"))
            .expect("the default mapping parses")
    }

    /// Parses a config file's text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<InputMap, GuiError> {
        Self::parse_with_warnings(text, path).map(|(map, _)| map)
    }

    /// [`InputMap::parse`], with the `line N: …` warnings of
    /// [`LoadedInputMap::warnings`].
    pub fn parse_with_warnings(
        text: &str,
        path: &Path,
    ) -> Result<(InputMap, Vec<String>), GuiError> {
        let mut bindings = Vec::new();
        let file: ConfigFile = toml::from_str(text).map_err(|err| {
            let at = err.span().map_or(0, |span| span.start);
            config_error(text, path, at, err.message().trim().to_string())
        })?;
        let mut keyboard = vec![Vec::new(); MAX_PLAYERS];
        for (player_name, table) in &file.keyboard {
            let player = player_name
                .get_ref()
                .strip_prefix("player")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| (1..=MAX_PLAYERS).contains(n))
                .ok_or_else(|| {
                    config_error(
                        text,
                        path,
                        player_name.span().start,
                        format!(
                            "unknown keyboard player {:?} (player1 to player{MAX_PLAYERS})",
                            player_name.get_ref()
                        ),
                    )
                })?;
            let keys = parse_table(text, path, table, |name| {
                Keycode::from_name(name).ok_or_else(|| format!("unknown key {name:?} (SDL key names: W, Left, Return, Keypad 1, Right Shift, ...)"))
            })?;
            bindings.extend(keys.iter().map(|(key, buttons, line)| Binding {
                input: format!("key {:?}", key_name(*key)),
                presses: format!("player {player}'s {}", buttons.to_string().to_lowercase()),
                line: *line,
            }));
            keyboard[player - 1] = keys
                .into_iter()
                .map(|(key, buttons, _)| (key, buttons))
                .collect();
        }
        let controller = parse_table(text, path, &file.controller, |name| {
            ControllerInput::parse(name).ok_or_else(|| {
                format!("unknown controller input {name:?} (a, b, x, y, dpup, leftshoulder, lefttrigger, leftx-, ...)")
            })
        })?;
        bindings.extend(controller.iter().map(|(input, buttons, line)| Binding {
            input: format!("controller input {:?}", input.name()),
            presses: buttons.to_string().to_lowercase(),
            line: *line,
        }));
        let map = InputMap {
            keyboard,
            controller: controller
                .into_iter()
                .map(|(input, buttons, _)| (input, buttons))
                .collect(),
        };
        let warnings = binding_warnings(&map, &bindings);
        Ok((map, warnings))
    }

    /// Reads the config file at `path`, writing it with the defaults first
    /// when it does not exist.
    pub fn load_or_create(path: &Path) -> Result<LoadedInputMap, GuiError> {
        let io_error = |source: std::io::Error| GuiError::ConfigFile {
            path: path.to_path_buf(),
            source,
        };
        if !path.exists() {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(io_error)?;
            }
            std::fs::write(path, DEFAULT_CONFIG).map_err(io_error)?;
            return Ok(LoadedInputMap {
                map: InputMap::defaults(),
                created: true,
                warnings: Vec::new(),
            });
        }
        let bytes = std::fs::read(path).map_err(io_error)?;
        // Not text is the user's file's mistake, like any other in it.
        let text = String::from_utf8(bytes).map_err(|error| {
            let valid = error.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(&error.into_bytes()[..valid]).into_owned();
            config_error(
                &text,
                path,
                valid,
                "not UTF-8 text: is this the input mapping?",
            )
        })?;
        let (map, warnings) = InputMap::parse_with_warnings(&text, path)?;
        Ok(LoadedInputMap {
            map,
            created: false,
            warnings,
        })
    }

    /// The mapping as text: one line per player and for controllers,
    /// `button=key` pairs.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for (index, keys) in self.keyboard.iter().enumerate() {
            if keys.is_empty() {
                continue;
            }
            let pairs: Vec<String> = keys
                .iter()
                .map(|(key, buttons)| format!("{buttons}={}", key_name(*key)))
                .collect();
            out.push_str(&format!(
                "keyboard player {}: {}\n",
                index + 1,
                pairs.join(", ")
            ));
        }
        let pairs: Vec<String> = self
            .controller
            .iter()
            .map(|(input, buttons)| format!("{buttons}={}", input.name()))
            .collect();
        out.push_str(&format!("controllers: {}\n", pairs.join(", ")));
        out
    }

    /// The buttons player `player` (0-based) holds with `keys` down.
    pub fn keyboard_buttons(&self, player: usize, keys: &HashSet<Keycode>) -> Buttons {
        self.keyboard.get(player).map_or(Buttons::NONE, |mapping| {
            mapping
                .iter()
                .filter(|(key, _)| keys.contains(key))
                .fold(Buttons::NONE, |held, (_, buttons)| held | *buttons)
        })
    }

    /// The buttons a controller holds, given how to read its inputs.
    pub fn controller_buttons(
        &self,
        button: impl Fn(Button) -> bool,
        axis: impl Fn(Axis) -> i16,
    ) -> Buttons {
        self.controller
            .iter()
            .filter(|(input, _)| match *input {
                ControllerInput::Button(b) => button(b),
                ControllerInput::AxisNegative(a) => axis(a) <= -AXIS_THRESHOLD,
                ControllerInput::AxisPositive(a) => axis(a) >= AXIS_THRESHOLD,
            })
            .fold(Buttons::NONE, |held, (_, buttons)| held | *buttons)
    }
}

/// The RetroPad's buttons in the order the config file lists them.
pub const FILE_BUTTON_ORDER: [&str; 16] = [
    "up", "down", "left", "right", "b", "a", "y", "x", "l", "r", "l2", "r2", "l3", "r3", "select",
    "start",
];

/// One RetroPad button (a single bit of [`Buttons`]) by its file name.
pub fn file_button(name: &str) -> Buttons {
    name.parse().unwrap_or(Buttons::NONE)
}

/// `button = "input|input"` lines for each button something presses.
fn table_lines<T: Copy>(bindings: &[(T, Buttons)], name: impl Fn(T) -> String) -> String {
    let mut text = String::new();
    for button in FILE_BUTTON_ORDER {
        let inputs: Vec<String> = bindings
            .iter()
            .filter(|(_, presses)| *presses == file_button(button))
            .map(|(input, _)| name(*input))
            .collect();
        if !inputs.is_empty() {
            let value = toml::Value::String(inputs.join("|"));
            text.push_str(&format!("{button} = {value}\n"));
        }
    }
    text
}

/// Binds `input` alone to `button` in `bindings`, and to nothing else.
fn bind_alone<T: PartialEq>(bindings: &mut Vec<(T, Buttons)>, input: T, button: Buttons) {
    bindings.retain(|(bound, presses)| *presses != button && *bound != input);
    bindings.push((input, button));
}

impl InputMap {
    /// The config file's text for this mapping: the defaults' comments,
    /// then one table per keyboard player and one for controllers.
    pub fn to_toml(&self) -> String {
        let comments = DEFAULT_CONFIG
            .split("\n[")
            .next()
            .unwrap_or_default()
            .lines()
            .filter(|line| line.starts_with('#') || line.is_empty())
            .take_while(|line| !line.starts_with("# Player 1"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut text = format!("{}\n", comments.trim_end());
        for (index, keys) in self.keyboard.iter().enumerate() {
            if !keys.is_empty() {
                text.push_str(&format!("\n[keyboard.player{}]\n", index + 1));
                text.push_str(&table_lines(keys, key_name));
            }
        }
        text.push_str("\n[controller]\n");
        text.push_str(&table_lines(&self.controller, ControllerInput::name));
        text
    }

    /// Makes `key` press `button` for player `player` (0-based), in place
    /// of the keys that pressed it; the key presses nothing else.
    pub fn bind_key(&mut self, player: usize, button: Buttons, key: Keycode) {
        for keys in &mut self.keyboard {
            keys.retain(|(bound, _)| *bound != key);
        }
        if let Some(keys) = self.keyboard.get_mut(player) {
            bind_alone(keys, key, button);
        }
    }

    /// Makes `input` press `button` on every controller, in place of the
    /// inputs that pressed it; the input presses nothing else.
    pub fn bind_controller(&mut self, button: Buttons, input: ControllerInput) {
        bind_alone(&mut self.controller, input, button);
    }

    /// The names of what presses `button`: player `player`'s keys
    /// (`Some`), or the controllers' inputs (`None`).
    pub fn bound_to(&self, player: Option<usize>, button: Buttons) -> Vec<String> {
        match player {
            Some(player) => self.keyboard.get(player).map_or_else(Vec::new, |keys| {
                keys.iter()
                    .filter(|(_, presses)| *presses == button)
                    .map(|(key, _)| key_name(*key))
                    .collect()
            }),
            None => self
                .controller
                .iter()
                .filter(|(_, presses)| *presses == button)
                .map(|(input, _)| input.name())
                .collect(),
        }
    }
}

/// Parses one table of `button = "input|input"` lines.
fn parse_table<T>(
    text: &str,
    path: &Path,
    table: &Table,
    parse_input: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<(T, Buttons, usize)>, GuiError> {
    let mut mapping = Vec::new();
    for (button_name, inputs) in table {
        let buttons: Buttons = button_name
            .get_ref()
            .parse()
            .ok()
            .filter(|b: &Buttons| b.bits().count_ones() == 1)
            .ok_or_else(|| {
                config_error(
                    text,
                    path,
                    button_name.span().start,
                    format!(
                        "unknown RetroPad button {:?} (up down left right b a y x l r l2 r2 l3 r3 select start)",
                        button_name.get_ref()
                    ),
                )
            })?;
        for name in inputs.get_ref().split('|').map(str::trim) {
            let input = parse_input(name)
                .map_err(|message| config_error(text, path, inputs.span().start, message))?;
            mapping.push((input, buttons, line_of(text, inputs.span().start)));
        }
    }
    Ok(mapping)
}

/// Where the config file lives: `$NETCADE_CONFIG_DIR`, else netcade's
/// config directory (`~/.config/netcade` on Linux).
pub fn config_path() -> Option<PathBuf> {
    Some(crate::paths::config_dir()?.join(CONFIG_FILE_NAME))
}

pub use crate::paths::CONFIG_DIR_ENV;

/// The input mapping from the config file (created with the defaults on
/// first run). A broken file is reported as an `error:` line naming its
/// line, and play goes on with the defaults.
pub fn load_input_map() -> InputMap {
    let Some(path) = config_path() else {
        tracing::warn!("no config directory: using the default input mapping");
        return InputMap::defaults();
    };
    match InputMap::load_or_create(&path) {
        Ok(loaded) => {
            if loaded.created {
                eprintln!(
                    "note: wrote the default input mapping to {}",
                    path.display()
                );
            }
            for warning in &loaded.warnings {
                eprintln!("warning: {} {warning}", path.display());
            }
            loaded.map
        }
        Err(err) => {
            eprintln!("error: {err}; using the default input mapping");
            InputMap::defaults()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<InputMap, GuiError> {
        InputMap::parse(text, Path::new("input.toml"))
    }

    #[test]
    fn the_defaults_give_two_keyboard_players_and_every_controller_button() {
        let map = InputMap::defaults();
        let keys: HashSet<Keycode> = [Keycode::D, Keycode::J].into();
        assert_eq!(map.keyboard_buttons(0, &keys), Buttons::RIGHT | Buttons::B);
        assert_eq!(map.keyboard_buttons(1, &keys), Buttons::NONE);
        let arrows: HashSet<Keycode> = [Keycode::Left].into();
        assert_eq!(map.keyboard_buttons(1, &arrows), Buttons::LEFT);
        let pressed = map.controller_buttons(
            |b| b == Button::A,
            |a| {
                if a == Axis::LeftY {
                    -30_000
                } else {
                    0
                }
            },
        );
        assert_eq!(pressed, Buttons::B | Buttons::UP);
    }

    #[test]
    fn a_bad_key_name_is_an_error_naming_its_line() {
        let text = "[keyboard.player1]\nup = \"W\"\ndown = \"NoSuchKey\"\n";
        let err = parse(text).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("input.toml line 3"), "{message}");
        assert!(message.contains("NoSuchKey"), "{message}");
    }

    #[test]
    fn a_bad_button_a_bad_player_and_broken_toml_name_their_lines() {
        let err = parse("\n[controller]\nturbo = \"a\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 3") && err.contains("turbo"), "{err}");
        let err = parse("[keyboard.player9]\nup = \"W\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 1") && err.contains("player9"), "{err}");
        let err = parse("[controller]\n\nup = \n").unwrap_err().to_string();
        assert!(err.contains("line 3"), "{err}");
    }

    #[test]
    fn alternatives_and_stick_directions_all_press_the_button() {
        let map = parse("[controller]\nup = \"dpup|lefty-\"\nr2 = \"righttrigger\"\n").unwrap();
        assert_eq!(map.controller.len(), 3);
        let stick_up =
            map.controller_buttons(|_| false, |a| if a == Axis::LeftY { -20_000 } else { 0 });
        assert_eq!(stick_up, Buttons::UP);
        let trigger = map.controller_buttons(
            |_| false,
            |a| if a == Axis::TriggerRight { 20_000 } else { 0 },
        );
        assert_eq!(trigger, Buttons::R2);
    }

    #[test]
    fn a_missing_config_file_is_created_with_the_commented_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join(CONFIG_FILE_NAME);
        let loaded = InputMap::load_or_create(&path).unwrap();
        assert!(loaded.created);
        assert_eq!(loaded.map, InputMap::defaults());
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(written.starts_with("# netcade's input mapping"));
        let again = InputMap::load_or_create(&path).unwrap();
        assert!(!again.created);
        assert!(again.warnings.is_empty(), "{:?}", again.warnings);
    }

    #[test]
    fn the_mapping_description_names_keys_and_buttons() {
        let text = InputMap::defaults().describe();
        assert!(text.contains("keyboard player 1: "), "{text}");
        assert!(text.contains("RIGHT=D"), "{text}");
        assert!(text.contains("UP=dpup"), "{text}");
    }

    fn warnings(text: &str) -> Vec<String> {
        InputMap::parse_with_warnings(text, Path::new("input.toml"))
            .unwrap()
            .1
    }

    #[test]
    fn the_defaults_warn_of_nothing() {
        assert_eq!(warnings(DEFAULT_CONFIG), Vec::<String>::new());
    }

    #[test]
    fn a_file_that_binds_nothing_says_so_instead_of_leaving_the_player_with_no_buttons() {
        let said = warnings("# all commented out\n");
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("binds no key and no controller input"),
            "{said:?}"
        );
    }

    #[test]
    fn a_key_bound_twice_names_both_lines_even_across_players() {
        let said = warnings(
            "[keyboard.player1]\nup = \"W\"\ndown = \"S\"\n[keyboard.player2]\nb = \"W\"\n",
        );
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with("line 5: key \"W\" is bound again"),
            "{said:?}"
        );
        assert!(
            said[0].contains("player 1's up on line 2") && said[0].contains("player 2's b here"),
            "{said:?}"
        );
        let said = warnings("[controller]\na = \"a\"\nb = \"x|a\"\n");
        assert!(
            said.iter()
                .any(|w| w.starts_with("line 3: controller input \"a\" is bound again")),
            "{said:?}"
        );
    }

    #[test]
    fn a_hotkey_bound_to_a_button_is_a_warning_naming_what_it_also_does() {
        let said = warnings("[keyboard.player1]\nstart = \"F1\"\nselect = \"Escape\"\n");
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(
            said.iter()
                .any(|w| w.starts_with("line 2: key \"F1\" is netcade's hotkey for the overlay")),
            "{said:?}"
        );
        assert!(
            said.iter().any(|w| w.starts_with("line 3: key \"Escape\"")),
            "{said:?}"
        );
    }

    #[test]
    fn key_names_asked_from_many_threads_at_once_are_each_their_own_keys() {
        let keys = [Keycode::Q, Keycode::K, Keycode::J, Keycode::W];
        std::thread::scope(|scope| {
            for key in keys {
                scope.spawn(move || {
                    let own = key_name(key);
                    for _ in 0..20_000 {
                        assert_eq!(key_name(key), own);
                    }
                });
            }
        });
    }

    #[test]
    fn a_mapping_written_out_reads_back_the_same() {
        let defaults = InputMap::defaults();
        let text = defaults.to_toml();
        assert!(text.starts_with("# netcade's input mapping"), "{text}");
        assert_eq!(parse(&text).unwrap(), defaults);
        assert_eq!(warnings(&text), Vec::<String>::new());
    }

    #[test]
    fn a_captured_key_replaces_the_buttons_keys_and_leaves_its_old_button() {
        let mut map = InputMap::defaults();
        // Player 1's B was J; K was player 1's A.
        map.bind_key(0, Buttons::B, Keycode::K);
        assert_eq!(map.bound_to(Some(0), Buttons::B), ["K"]);
        assert!(map.bound_to(Some(0), Buttons::A).is_empty());
        let again = parse(&map.to_toml()).unwrap();
        assert_eq!(again.to_toml(), map.to_toml());
        let held: HashSet<Keycode> = [Keycode::J, Keycode::K].into();
        assert_eq!(again.keyboard_buttons(0, &held), Buttons::B);

        let stick = ControllerInput::AxisPositive(Axis::TriggerLeft);
        map.bind_controller(Buttons::START, stick);
        assert_eq!(map.bound_to(None, Buttons::START), ["lefttrigger"]);
        assert!(map.bound_to(None, Buttons::L2).is_empty());
        assert_eq!(parse(&map.to_toml()).unwrap().to_toml(), map.to_toml());
    }

    #[test]
    fn a_file_that_is_not_text_is_the_users_mistake_naming_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(CONFIG_FILE_NAME);
        std::fs::write(&path, b"[controller]\na = \"a\"\n\xff\xfe garbage").unwrap();
        let error = InputMap::load_or_create(&path).unwrap_err();
        assert!(error.is_user_mistake(), "{error:?}");
        assert!(
            error.to_string().contains("line 3") && error.to_string().contains("UTF-8"),
            "{error}"
        );
    }
}
