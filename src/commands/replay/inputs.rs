//! `netcade replay inputs`: a replay's inputs as an input script.

use crate::engine::playback::{frames_held, load_replay};
use crate::engine::{AppError, Outcome};
use netcode::replay::tools::{inputs_script, repairs};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `netcade replay inputs`.
#[derive(Clone, Debug, clap::Args)]
pub struct InputsArgs {
    /// The replay file.
    pub file: PathBuf,
}

/// `netcade replay inputs`.
pub fn inputs_command(args: &InputsArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let replay = load_replay(&args.file)?;
    if repairs(&replay) > 0 {
        eprintln!(
            "warning: {} has desync repairs, which an input script cannot hold: running the script may end elsewhere",
            args.file.display()
        );
    }
    let start = replay.start_frame().number();
    if start > 0 {
        // `run --inputs` plays from the game as loaded (frame 0); this
        // script's first line is frame `start`'s, after the host's game ran
        // `start` frames this replay does not hold.
        eprintln!(
            "warning: {} starts at frame {start} (a spectator's recording): `run --inputs` plays a script from frame 0 of the game as loaded, so this script does not reproduce the replay; `netcade replay play` does",
            args.file.display()
        );
        writeln!(
            out,
            "# inputs of {} ({} {}, {}): the first line is frame {start}'s; `run --inputs` would need the state at frame {start}, which only the replay holds",
            args.file.display(),
            replay.header.core_name,
            replay.header.core_version,
            frames_held(&replay),
        )?;
    } else {
        writeln!(
            out,
            "# inputs of {} ({} {}, {} frames): run with --frames {}",
            args.file.display(),
            replay.header.core_name,
            replay.header.core_version,
            replay.frames(),
            replay.frames()
        )?;
    }
    out.write_all(inputs_script(&replay).as_bytes())?;
    Ok(Outcome::Success)
}
