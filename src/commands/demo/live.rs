//! `netcade demo` on real sockets: a host and a joiner play Duel over
//! loopback UDP in this process (one thread each, each its own copy of the
//! core), through the link conditioner, with bot inputs; a spectator joins
//! at about frame 600. Each machine runs the same code as `netcade host`,
//! `join` and `spectate`; their lines are shown as they come, prefixed with
//! the machine's name, and their [`LiveEvent`]s say when the next may
//! start; then the demo checks that all three agree on every final frame
//! they share.

use super::args::{DemoArgs, JITTER_MS};
use crate::engine::core_copies::CoreCopies;
use crate::engine::game::{default_arena, locate_duel_core};
use crate::engine::inputs::InputSpec;
use crate::engine::sinks::recorder::RecordArgs;
use crate::engine::sinks::{compare_checksum_logs, ChecksumComparison, SinkChoices};
use crate::engine::{open_game, AppError, GameArgs, Outcome};
use crate::live::front_end::{Headless, LiveOutputs};
use crate::live::options::{LiveEvent, LiveOptions};
use crate::live::players::{
    host_match, join_match, DelayArg, HostSettings, JoinSettings, MatchSettings, ModeArg,
    DEFAULT_REJOIN_S,
};
use crate::live::rooms::SignalArgs;
use crate::live::session_loop::LiveMatch;
use crate::live::spectator::{spectate_match, SpectateSettings};
use crate::net::link::LinkArgs;
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The frame the spectator joins a long enough match at, roughly (a
/// shorter one three quarters through).
const SPECTATOR_JOINS_AT_FRAME: u32 = 600;

/// Plain status lines this often from each machine.
const STATUS_EVERY: Duration = Duration::from_secs(2);

/// How long the whole demo may take beyond its frames' real time.
const SLACK: Duration = Duration::from_secs(60);

/// What a machine said: a line, an event, or its end.
enum Said {
    Line(&'static str, String),
    Event(&'static str, LiveEvent),
    Ended(&'static str, Result<LiveMatch, AppError>),
}

/// How each machine's match ended, by machine name.
type Results = Vec<(&'static str, Result<LiveMatch, AppError>)>;

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

/// A machine's match: its settings, run headless with the options given.
type Play = Box<dyn FnOnce(&mut LineSender, &LiveOptions) -> Result<LiveMatch, AppError> + Send>;

/// The demo's machines, each on a thread of its own, and what they said.
struct Machines {
    to_demo: Sender<Said>,
    said: Receiver<Said>,
    threads: Vec<JoinHandle<()>>,
    results: Results,
    started: Instant,
    limit: Duration,
}

impl Machines {
    fn new(frames: u32) -> Self {
        let (to_demo, said) = channel();
        Machines {
            to_demo,
            said,
            threads: Vec::new(),
            results: Vec::new(),
            started: Instant::now(),
            limit: SLACK + Duration::from_secs(u64::from(frames) / 60),
        }
    }

    /// Starts machine `name`: its lines, its events and its end (after its
    /// summary) come back to the demo's thread.
    fn spawn(&mut self, name: &'static str, play: Play) -> Result<(), AppError> {
        let to = self.to_demo.clone();
        let events = to.clone();
        let options = LiveOptions {
            status_in_place: false,
            plain_status_every: STATUS_EVERY,
            handle_ctrl_c: false,
            on_event: Some(Arc::new(move |event| {
                let _ = events.send(Said::Event(name, event));
            })),
        };
        let thread = std::thread::Builder::new()
            .name(format!("demo {name}"))
            .spawn(move || {
                let mut out = LineSender {
                    name,
                    partial: Vec::new(),
                    to: to.clone(),
                };
                let result = play(&mut out, &options).and_then(|played| {
                    played.write_report(false, &mut out)?;
                    Ok(played)
                });
                let _ = to.send(Said::Ended(name, result));
            })
            .map_err(AppError::Output)?;
        self.threads.push(thread);
        Ok(())
    }

    fn out_of_time(&self) -> bool {
        self.started.elapsed() > self.limit
    }

    /// What a machine said within `wait`, shown as it is said (an ended
    /// machine's result is kept).
    fn next(&mut self, wait: Duration, out: &mut dyn Write) -> Result<Option<Said>, AppError> {
        let Ok(said) = self.said.recv_timeout(wait) else {
            return Ok(None);
        };
        if let Said::Line(name, line) = &said {
            writeln!(out, "[{name}] {line}")?;
        }
        Ok(Some(said))
    }

    /// Waits for the host to listen: its address, or `None` when it did
    /// not in time. A host that could not start is the demo's own error.
    fn host_address(&mut self, out: &mut dyn Write) -> Result<Option<String>, AppError> {
        while !self.out_of_time() {
            match self.next(Duration::from_millis(10), out)? {
                Some(Said::Event("host", LiveEvent::Listening { address })) => {
                    return Ok(Some(format!("127.0.0.1:{}", address.port())));
                }
                Some(Said::Ended(_, Err(error))) => return Err(error),
                Some(Said::Ended(name, result)) => self.results.push((name, result)),
                _ => {}
            }
        }
        Ok(None)
    }

    /// Runs until every machine ended, starting `spectator` `delay` after
    /// the host said the match began.
    fn watch(
        &mut self,
        spectator: Play,
        delay: Duration,
        out: &mut dyn Write,
    ) -> Result<(), AppError> {
        let mut spectator = Some(spectator);
        let mut began: Option<Instant> = None;
        while self.results.len() < self.threads.len()
            || (spectator.is_some() && self.results.len() < 2)
        {
            if began.is_some_and(|at| at.elapsed() >= delay) {
                if let Some(spectator) = spectator.take() {
                    self.spawn("spectator", spectator)?;
                }
            }
            if self.out_of_time() {
                writeln!(out, "the demo ran out of time")?;
                break;
            }
            match self.next(Duration::from_millis(20), out)? {
                Some(Said::Event("host", LiveEvent::MatchBegan)) => {
                    began.get_or_insert_with(Instant::now);
                }
                Some(Said::Ended(name, result)) => self.results.push((name, result)),
                _ => {}
            }
        }
        Ok(())
    }

    /// Waits for the threads; returns each machine's result.
    fn stop(self) -> Results {
        drop(self.to_demo);
        for thread in self.threads {
            let _ = thread.join();
        }
        self.results
    }
}

/// Each machine's settings: its own core copy, link seed and audio file.
struct Setup<'a> {
    args: &'a DemoArgs,
    cores: &'a [PathBuf],
    rom: PathBuf,
    rtt_ms: u64,
    one_way: u64,
    jitter: u64,
}

impl Setup<'_> {
    fn game(&self, machine: usize) -> GameArgs {
        GameArgs {
            core: self.cores[machine].clone(),
            rom: Some(self.rom.clone()),
            ..GameArgs::default()
        }
    }

    fn link(&self, machine: usize) -> LinkArgs {
        LinkArgs {
            sim_latency: self.one_way,
            sim_jitter: self.jitter,
            sim_loss: self.args.loss,
            sim_seed: self.args.seed.wrapping_add(machine as u64),
            ..LinkArgs::default()
        }
    }

    /// A player's match, with bot buttons.
    fn player(&self, machine: usize) -> MatchSettings {
        MatchSettings {
            game: self.game(machine),
            inputs: Some(InputSpec::Random {
                seed: self.args.seed.wrapping_add(machine as u64),
            }),
            frames: Some(self.args.frames),
            strict: false,
            mode: ModeArg::Auto,
            delay: DelayArg::Auto,
            rejoin_s: DEFAULT_REJOIN_S,
            link: self.link(machine),
            dump_dir: None,
            chat: Default::default(),
            run_ahead: Default::default(),
            peer_key: None,
            link_secret: None,
        }
    }

    /// The demo is a show, not a match worth keeping, and its machines are
    /// threads of one process: no replay, no speaker.
    fn sinks(&self, machine: usize) -> SinkChoices {
        SinkChoices {
            record: RecordArgs {
                record: None,
                no_record: true,
            },
            audio: self.args.audio.for_machine(machine),
            headless: true,
            ..SinkChoices::default()
        }
    }

    fn host(&self) -> Play {
        let settings = HostSettings {
            common: self.player(0),
            port: 0,
            players: 2,
            min_delay: 0,
            port_file: None,
            max_spectators: 1,
            room: None,
            signal: SignalArgs::default(),
            retroarch: Default::default(),
        };
        let sinks = self.sinks(0);
        Box::new(move |out, options| host_match(&settings, &headless(sinks), options, out))
    }

    fn joiner(&self, address: &str) -> Play {
        let settings = JoinSettings {
            address: Some(address.to_string()),
            common: self.player(1),
            connect_timeout_s: 10.0,
            room: None,
            quick: false,
            signal: SignalArgs::default(),
            slot: None,
            rejoin: false,
            password: None,
        };
        let sinks = self.sinks(1);
        Box::new(move |out, options| join_match(&settings, &headless(sinks), options, out))
    }

    fn spectator(&self, address: &str) -> Play {
        let settings = SpectateSettings {
            address: Some(address.to_string()),
            room: None,
            signal: SignalArgs::default(),
            game: self.game(2),
            frames: Some(self.args.frames),
            connect_timeout_s: 10.0,
            link: self.link(2),
            chat: Default::default(),
            password: None,
            peer_key: None,
        };
        let sinks = self.sinks(2);
        Box::new(move |out, options| spectate_match(&settings, &headless(sinks), options, out))
    }
}

/// No window: the terminal only.
fn headless(sinks: SinkChoices) -> LiveOutputs<'static> {
    LiveOutputs {
        front_end: &Headless,
        sinks,
    }
}

/// `netcade demo` (without `--simulated`).
pub fn live_demo(args: &DemoArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    if !args.machine2_options.is_empty() {
        return Err(AppError::BadArgument {
            message: "--machine2-option needs --simulated: over sockets the host's core options win, as in any match".into(),
        });
    }
    let core = locate_duel_core()?;
    let copies = CoreCopies::new(&core, 3)?;
    let rtt_ms = args.rtt_ms.unwrap_or(80);
    let setup = Setup {
        args,
        cores: &copies.paths,
        rom: args.rom.clone().unwrap_or_else(default_arena),
        rtt_ms,
        one_way: rtt_ms / 2,
        jitter: JITTER_MS.min(rtt_ms / 2),
    };
    // Content the core refuses is the demo's one error line, before any
    // machine starts (each loads its game itself, on its own thread).
    drop(open_game(&setup.game(0))?);
    // A short demo still gives the spectator the last quarter to watch.
    let spectator_joins_at = SPECTATOR_JOINS_AT_FRAME.min(args.frames - args.frames / 4);
    introduce(&setup, &core, spectator_joins_at, out)?;
    let mut machines = Machines::new(args.frames);
    machines.spawn("host", setup.host())?;
    let Some(address) = machines.host_address(out)? else {
        writeln!(out, "the demo's host never bound its port")?;
        return Ok(Outcome::NetplayUnfinished);
    };
    machines.spawn("join", setup.joiner(&address))?;
    let delay = Duration::from_secs_f64(f64::from(spectator_joins_at) / 60.0);
    machines.watch(setup.spectator(&address), delay, out)?;
    let mut results = machines.stop();
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

/// The demo's first two lines: who plays what, over which link.
fn introduce(
    setup: &Setup<'_>,
    core: &std::path::Path,
    spectator_joins_at: u32,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let args = setup.args;
    writeln!(
        out,
        "Duel netplay over loopback UDP: a host and a joiner in this process, each its own copy of {}, playing {}; a spectator joins at about frame {spectator_joins_at}",
        core.display(),
        setup.rom.display()
    )?;
    writeln!(
        out,
        "link conditioner on every socket: {} ms ±{} ms each way ({} ms round trip), {}% loss; bot inputs (seed {}); {} frames in real time (about {} s)",
        setup.one_way,
        setup.jitter,
        setup.rtt_ms,
        args.loss,
        args.seed,
        args.frames,
        args.frames.div_ceil(60)
    )
}

/// Whether the host, the joiner and the spectator agree on every final
/// frame they share: the demo's exit (1 on any difference; 5 when a
/// machine did not finish).
fn verdict(results: &Results, json: bool, out: &mut dyn Write) -> Result<Outcome, AppError> {
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
    let agreed = describe_pairs(&pairs, out)?;
    let finished = [host, join, spectator]
        .iter()
        .all(|played| played.outcome == Outcome::Success);
    let outcome = conclude(agreed, finished, out)?;
    if json {
        let json = serde_json::json!({
            "command": "demo",
            "network": "sockets",
            "final_frames": host.log.end_frame(),
            "spectator_joined_at_frame": spectator.log.first_frame(),
            "finished": finished,
            "in_sync": agreed,
            "compared": pairs_json(&pairs),
        });
        writeln!(out, "{json}")?;
    }
    Ok(outcome)
}

/// One line per pair of machines; whether every pair agreed on frames
/// they share.
fn describe_pairs(
    pairs: &[(&str, ChecksumComparison)],
    out: &mut dyn Write,
) -> std::io::Result<bool> {
    let mut agreed = true;
    for (who, comparison) in pairs {
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
    Ok(agreed)
}

/// The verdict's line and the demo's exit.
fn conclude(agreed: bool, finished: bool, out: &mut dyn Write) -> std::io::Result<Outcome> {
    Ok(match (agreed, finished) {
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
    })
}

/// The JSON's `compared`: each pair's frames compared and first difference.
fn pairs_json(pairs: &[(&str, ChecksumComparison)]) -> serde_json::Value {
    pairs
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
        .collect::<serde_json::Map<String, serde_json::Value>>()
        .into()
}
