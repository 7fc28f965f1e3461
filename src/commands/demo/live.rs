//! `netcade demo` on real sockets: a host and a joiner play Duel over
//! loopback UDP in this process (one thread each, each its own copy of the
//! core), through the link conditioner, with bot inputs; a spectator joins
//! at about frame 600. Each machine runs the same code as `netcade host`,
//! `join` and `spectate`; their lines are shown as they come, prefixed with
//! the machine's name, then the demo checks that all three agree on every
//! final frame they share.

use super::args::{DemoArgs, JITTER_MS};
use crate::engine::core_copies::CoreCopies;
use crate::engine::game::default_arena;
use crate::engine::game::locate_duel_core;
use crate::engine::inputs::InputSpec;
use crate::engine::live::players::{
    host_match, join_match, DelayArg, HostArgs, JoinArgs, LiveMatch, LiveOptions, MatchArgs,
};
use crate::engine::live::spectator::{spectate_match, SpectateArgs};
use crate::engine::sinks::audio_file::{machine_audio_path, AudioArgs};
use crate::engine::sinks::recorder::RecordArgs;
use crate::engine::sinks::{compare_checksum_logs, ChecksumComparison};
use crate::engine::{open_game, AppError, GameArgs, Outcome};
use crate::net::link::LinkArgs;
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The frame the spectator joins a long enough match at, roughly (a
/// shorter one three quarters through).
const SPECTATOR_JOINS_AT_FRAME: u32 = 600;

/// Plain status lines this often from each machine.
const STATUS_EVERY: Duration = Duration::from_secs(2);

/// How long the whole demo may take beyond its frames' real time.
const SLACK: Duration = Duration::from_secs(60);

/// A line a machine printed, or its end.
enum Said {
    Line(&'static str, String),
    Ended(&'static str, Result<LiveMatch, AppError>),
}

/// Sends what a machine writes, a whole line at a time, to the demo's
/// thread, which prints it under the machine's name.
struct LineSender {
    name: &'static str,
    partial: Vec<u8>,
    to: Sender<Said>,
}

impl Write for LineSender {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.partial.extend_from_slice(bytes);
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let text = String::from_utf8_lossy(&line[..end]).into_owned();
            // The demo's thread may be gone (an error ended it): nothing to do.
            let _ = self.to.send(Said::Line(self.name, text));
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs one machine on a thread of its own; its lines and its end come
/// back through `to`.
fn spawn_machine(
    name: &'static str,
    to: &Sender<Said>,
    play: impl FnOnce(&mut LineSender) -> Result<LiveMatch, AppError> + Send + 'static,
) -> Result<JoinHandle<()>, AppError> {
    let to = to.clone();
    std::thread::Builder::new()
        .name(format!("demo {name}"))
        .spawn(move || {
            let mut out = LineSender {
                name,
                partial: Vec::new(),
                to: to.clone(),
            };
            let result = play(&mut out);
            let _ = to.send(Said::Ended(name, result));
        })
        .map_err(AppError::Output)
}

/// `netcade demo` (without `--simulated`).
pub fn live_demo(args: &DemoArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    if !args.machine2_options.is_empty() {
        return Err(AppError::BadArgument {
            message: "--machine2-option needs --simulated: over sockets the host's core options win, as in any match".into(),
        });
    }
    let core = locate_duel_core()?;
    let rom = args.rom.clone().unwrap_or_else(default_arena);
    let copies = CoreCopies::new(&core, 3)?;
    // Content the core refuses is the demo's one error line, before any
    // machine starts (each loads its game itself, on its own thread).
    drop(open_game(&GameArgs {
        core: copies.paths[0].clone(),
        rom: Some(rom.clone()),
        ..GameArgs::default()
    })?);
    let rtt_ms = args.rtt_ms.unwrap_or(80);
    let one_way = rtt_ms / 2;
    let jitter = JITTER_MS.min(one_way);
    let port_dir = copies.dir.join("port");
    std::fs::create_dir_all(&port_dir).map_err(|source| AppError::PrepareFile {
        what: "a directory for the host's port file",
        path: port_dir.clone(),
        source,
    })?;
    let port_file = port_dir.join("port");
    // A short demo still gives the spectator the last quarter to watch.
    let spectator_joins_at = SPECTATOR_JOINS_AT_FRAME.min(args.frames - args.frames / 4);
    writeln!(
        out,
        "Duel netplay over loopback UDP: a host and a joiner in this process, each its own copy of {}, playing {}; a spectator joins at about frame {spectator_joins_at}",
        core.display(),
        rom.display()
    )?;
    writeln!(
        out,
        "link conditioner on every socket: {one_way} ms ±{jitter} ms each way ({rtt_ms} ms round trip), {}% loss; bot inputs (seed {}); {} frames in real time (about {} s)",
        args.loss,
        args.seed,
        args.frames,
        args.frames.div_ceil(60)
    )?;

    let game = |machine: usize| GameArgs {
        core: copies.paths[machine].clone(),
        rom: Some(rom.clone()),
        ..GameArgs::default()
    };
    let link = |machine: u64| LinkArgs {
        sim_latency: one_way,
        sim_jitter: jitter,
        sim_loss: args.loss,
        sim_seed: args.seed.wrapping_add(machine),
        ..LinkArgs::default()
    };
    let common = |machine: usize, inputs: InputSpec| MatchArgs {
        game: game(machine),
        headless: true,
        inputs,
        frames: Some(args.frames),
        json: false,
        strict: false,
        delay: DelayArg::Auto,
        link: link(machine as u64),
        dump_dir: PathBuf::from("netcade-dumps"),
        // The demo is a show, not a match worth keeping.
        record: RecordArgs {
            record: None,
            no_record: true,
        },
        audio: AudioArgs {
            audio_out: args
                .audio
                .audio_out
                .as_deref()
                .map(|path| machine_audio_path(path, machine)),
            ..args.audio.clone()
        },
        // The demo's machines are threads of one process: no speakers.
        #[cfg(feature = "audio")]
        speaker: Default::default(),
        #[cfg(feature = "gui")]
        display: Default::default(),
    };
    let options = LiveOptions {
        status_in_place: false,
        plain_status_every: STATUS_EVERY,
        handle_ctrl_c: false,
    };
    let host_args = HostArgs {
        common: common(0, InputSpec::Random { seed: args.seed }),
        port: 0,
        players: 2,
        port_file: Some(port_file.clone()),
        max_spectators: 1,
    };
    let (to_demo, said) = channel();
    let mut threads = vec![spawn_machine("host", &to_demo, move |out| {
        host_match(&host_args, options, out)
    })?];
    let started = Instant::now();
    let limit = SLACK + Duration::from_secs(u64::from(args.frames) / 60);
    let mut results: Vec<(&'static str, Result<LiveMatch, AppError>)> = Vec::new();
    let port = loop {
        if let Some(port) = std::fs::read_to_string(&port_file)
            .ok()
            .and_then(|text| text.trim().parse::<u16>().ok())
        {
            break Some(port);
        }
        match said.recv_timeout(Duration::from_millis(10)) {
            // The host could not start (content the core refuses, say):
            // the demo's own error, one line.
            Ok(Said::Ended(_, Err(error))) => return Err(error),
            Ok(message) => show(&message, out)?,
            Err(_) => {}
        }
        if started.elapsed() > limit {
            break None;
        }
    };
    let Some(port) = port else {
        writeln!(out, "the demo's host never bound its port")?;
        return Ok(Outcome::NetplayUnfinished);
    };
    let address = format!("127.0.0.1:{port}");
    let join_args = JoinArgs {
        address: address.clone(),
        common: common(
            1,
            InputSpec::Random {
                seed: args.seed.wrapping_add(1),
            },
        ),
        connect_timeout_s: 10.0,
    };
    threads.push(spawn_machine("join", &to_demo, move |out| {
        join_match(&join_args, options, out)
    })?);
    let spectate_args = SpectateArgs {
        address,
        game: game(2),
        headless: true,
        #[cfg(feature = "gui")]
        display: Default::default(),
        frames: Some(args.frames),
        json: false,
        connect_timeout_s: 10.0,
        link: link(2),
        record: RecordArgs {
            record: None,
            no_record: true,
        },
        audio: AudioArgs {
            audio_out: args
                .audio
                .audio_out
                .as_deref()
                .map(|path| machine_audio_path(path, 2)),
            ..args.audio.clone()
        },
        #[cfg(feature = "audio")]
        speaker: Default::default(),
    };
    let mut spectate_args = Some(spectate_args);
    let mut began: Option<Instant> = None;
    let spectator_delay = Duration::from_secs_f64(f64::from(spectator_joins_at) / 60.0);
    while results.len() < threads.len() || spectate_args.is_some() && results.len() < 2 {
        if began.is_some_and(|at| at.elapsed() >= spectator_delay) {
            if let Some(spectate_args) = spectate_args.take() {
                threads.push(spawn_machine("spectator", &to_demo, move |out| {
                    spectate_match(&spectate_args, options, out)
                })?);
            }
        }
        if started.elapsed() > limit {
            writeln!(out, "the demo ran out of time")?;
            break;
        }
        let Ok(message) = said.recv_timeout(Duration::from_millis(20)) else {
            continue;
        };
        if let Said::Line("host", line) = &message {
            if line == "the match began" {
                began.get_or_insert_with(Instant::now);
            }
        }
        show(&message, out)?;
        if let Said::Ended(name, result) = message {
            results.push((name, result));
        }
    }
    drop(to_demo);
    for thread in threads {
        let _ = thread.join();
    }
    // The games are unloaded: their library copies can go.
    drop(copies);
    // A machine that failed (content the core refuses, a busy port, …) makes
    // the demo fail with its error: one line, its exit code.
    if let Some(failed) = results.iter().position(|(_, result)| result.is_err()) {
        if let (_, Err(error)) = results.swap_remove(failed) {
            return Err(error);
        }
    }
    verdict(&results, args.json, out)
}

/// Prints one machine's line (an error that ended one is the demo's own,
/// reported once all have stopped).
fn show(said: &Said, out: &mut dyn Write) -> std::io::Result<()> {
    match said {
        Said::Line(name, line) => writeln!(out, "[{name}] {line}"),
        Said::Ended(..) => Ok(()),
    }
}

/// Whether the host, the joiner and the spectator agree on every final
/// frame they share: the demo's exit (1 on any difference; 5 when a
/// machine did not finish).
fn verdict(
    results: &[(&'static str, Result<LiveMatch, AppError>)],
    json: bool,
    out: &mut dyn Write,
) -> Result<Outcome, AppError> {
    let find = |name: &str| {
        results
            .iter()
            .find(|(machine, _)| *machine == name)
            .and_then(|(_, result)| result.as_ref().ok())
    };
    let (Some(host), Some(join), Some(spectator)) = (find("host"), find("join"), find("spectator"))
    else {
        writeln!(
            out,
            "verdict: not every machine finished; nothing to compare"
        )?;
        if json {
            let json = serde_json::json!({"command": "demo", "network": "sockets", "finished": false, "in_sync": null});
            writeln!(out, "{json}")?;
        }
        return Ok(Outcome::NetplayUnfinished);
    };
    let pairs: [(&str, ChecksumComparison); 3] = [
        (
            "host and joiner",
            compare_checksum_logs(&host.log, &join.log),
        ),
        (
            "host and spectator",
            compare_checksum_logs(&host.log, &spectator.log),
        ),
        (
            "joiner and spectator",
            compare_checksum_logs(&join.log, &spectator.log),
        ),
    ];
    let mut agreed = true;
    for (who, comparison) in &pairs {
        match comparison.first_difference {
            None if comparison.compared > 0 => writeln!(
                out,
                "{who} agree on all {} final frames they share",
                comparison.compared
            )?,
            None => {
                agreed = false;
                writeln!(out, "{who} share no final frame to compare")?;
            }
            Some(frame) => {
                agreed = false;
                writeln!(out, "{who} DISAGREE from frame {frame}")?;
            }
        }
    }
    let finished = [host, join, spectator]
        .iter()
        .all(|played| played.outcome == Outcome::Success);
    let outcome = match (agreed, finished) {
        (false, _) => {
            writeln!(out, "verdict: the machines disagree")?;
            Outcome::NetplayFailed
        }
        (true, false) => {
            writeln!(out, "verdict: in sync, but not every machine finished")?;
            Outcome::NetplayUnfinished
        }
        (true, true) => {
            writeln!(
                out,
                "verdict: in sync over real sockets: both players and the spectator agree on every frame they share"
            )?;
            Outcome::Success
        }
    };
    if json {
        let compared: serde_json::Map<String, serde_json::Value> = pairs
            .iter()
            .map(|(who, comparison)| {
                (
                    who.replace(' ', "_"),
                    serde_json::json!({
                        "frames": comparison.compared,
                        "first_difference": comparison.first_difference,
                    }),
                )
            })
            .collect();
        let json = serde_json::json!({
            "command": "demo",
            "network": "sockets",
            "final_frames": host.log.end_frame(),
            "spectator_joined_at_frame": spectator.log.first_frame(),
            "finished": finished,
            "in_sync": agreed,
            "compared": compared,
        });
        writeln!(out, "{json}")?;
    }
    Ok(outcome)
}
