//! `netcade input`: the input mapping and its config file; `--test` shows
//! what the player presses (feature `gui`).

use crate::engine::{AppError, Outcome};
use crate::gui::input_map::{config_path, InputMap};
use crate::gui::overlay::Overlay;
use crate::gui::window::{Action, DisplayArgs, Window};
use std::io::Write;
use std::time::{Duration, Instant};

/// Arguments of `netcade input`.
#[derive(Clone, Debug, clap::Args)]
pub struct InputArgs {
    /// Open a window and print which RetroPad buttons are held as you
    /// press keys and controller buttons (close the window to stop).
    #[arg(long)]
    pub test: bool,
    /// Players to show in --test.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=4))]
    pub players: u8,
}

/// `netcade input`: prints the config file's path and the mapping in use;
/// with `--test`, what is held as keys are pressed.
pub fn input_command(args: &InputArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let path = config_path().ok_or_else(|| AppError::BadArgument {
        message: "no config directory: set NETCADE_CONFIG_DIR".to_string(),
    })?;
    let loaded = InputMap::load_or_create(&path)?;
    for warning in &loaded.warnings {
        eprintln!("warning: {} {warning}", path.display());
    }
    let (map, created) = (loaded.map, loaded.created);
    writeln!(
        out,
        "config: {}{}",
        path.display(),
        if created {
            " (just written with the defaults)"
        } else {
            ""
        }
    )?;
    write!(out, "{}", map.describe())?;
    if !args.test {
        return Ok(Outcome::Success);
    }
    let display = DisplayArgs {
        window_size: Some((640, 200)),
        ..DisplayArgs::default()
    };
    let mut window = Window::open("netcade input --test", (320, 100), 0.0, &display, || map)?;
    writeln!(
        out,
        "press keys or controller buttons in the window; close it to stop"
    )?;
    let players = usize::from(args.players);
    let mut overlay = Overlay::new(false);
    let mut last = None;
    let started = Instant::now();
    loop {
        let now_ms = started.elapsed().as_millis() as u64;
        for action in window.poll() {
            match action {
                Action::Quit | Action::Leave => return Ok(Outcome::Success),
                Action::Notice(text) => {
                    writeln!(out, "{text}")?;
                    overlay.notice(now_ms, text);
                }
                _ => {}
            }
        }
        let held = window.held(players);
        let lines: Vec<String> = (0..players)
            .map(|p| format!("player {}: {}", p + 1, held[p]))
            .chain([format!("keys: {}", window.keys_held().join(" "))])
            .collect();
        if last.as_ref() != Some(&lines) {
            writeln!(out, "{}", lines.join(" | "))?;
            last = Some(lines.clone());
        }
        overlay.set_lines(lines);
        let picture = overlay.render(now_ms);
        window.present(None, 0.0, picture.as_ref(), false);
        std::thread::sleep(Duration::from_millis(16));
    }
}
