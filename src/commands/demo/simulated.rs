//! `netcade demo`: a netplay match of the bundled Duel core between two
//! machines in one process, over netcade's seeded simulated network, each
//! machine its own Duel loaded through the libretro host; then a summary per
//! machine, whether both agreed on every final frame, and the last frame
//! (machine 1's view) saved as a PNG. (The netplay check replaces the old
//! local sync-test: it compares every final frame after real rollbacks.)

use super::args::{DemoArgs, JITTER_MS};
use crate::engine::core_copies::CoreCopies;
use crate::engine::game::{default_arena, locate_duel_core};
use crate::engine::inputs::{FrameInputs, RandomPlayer};
use crate::engine::matches::simulated::{
    MatchEnd, MatchMachine, MatchSetup, MatchUpdate, SimulatedMatch,
};
use crate::engine::sinks::{compare_checksum_logs, ChecksumComparison};
use crate::engine::{checksums_json, open_game, png, AppError, Game, GameArgs, Outcome};
use crate::live::connect::content_hash;
use crate::net::sim::LinkConditions;
use netcode::checksum::Checksums;
use netcode::input::Buttons;
use netcode::netplay::NetplayEvent;
use netcode::protocol::Millis;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Each machine's player plays its column of the same seeded random
/// two-player script, so the match is the one `netcade run --inputs
/// random:SEED` plays; frames are generated once and kept.
struct ScriptedPlayers {
    random: RandomPlayer,
    frames: Vec<FrameInputs>,
}

impl ScriptedPlayers {
    fn buttons(&mut self, player: u8, frame: u32) -> Buttons {
        while self.frames.len() <= frame as usize {
            self.frames.push(self.random.next_frame());
        }
        self.frames[frame as usize][player as usize]
    }
}

/// What the demo prints for a session event, if anything.
fn describe_event(event: &NetplayEvent) -> Option<String> {
    Some(match event {
        NetplayEvent::Synchronizing => "connecting and shaking hands".to_string(),
        NetplayEvent::PeerSynchronized { .. } => "synchronised with the other machine".into(),
        NetplayEvent::Starting { in_ms } => format!("frame 0 begins in {in_ms} ms"),
        NetplayEvent::Running => "running".into(),
        NetplayEvent::InputDelayChanged { from, to } => {
            format!("input delay {from} -> {to} frames")
        }
        NetplayEvent::WaitingForPeer { waited_ms, .. } => {
            format!("waiting for the other machine's inputs ({waited_ms} ms)")
        }
        NetplayEvent::StoppedWaiting { waited_ms } => {
            format!("inputs arrived after {waited_ms} ms")
        }
        NetplayEvent::Desync {
            frame,
            local,
            remote,
            ..
        } => format!("DESYNC at frame {frame}: {local} here, {remote} there"),
        NetplayEvent::NetworkInterrupted { silent_for_ms, .. } => {
            format!("nothing heard for {silent_for_ms} ms")
        }
        NetplayEvent::NetworkResumed { .. } => "the other machine is heard again".into(),
        NetplayEvent::PeerRejoined { .. } => "the other machine is back, at a new address".into(),
        NetplayEvent::ResumeStateSent { frame, .. } => {
            format!("sent the restarted machine the state of frame {frame}")
        }
        NetplayEvent::ResumeStateArrived { frame, .. } => {
            format!("resuming the match at frame {frame}")
        }
        NetplayEvent::Disconnected { reason, .. } => format!("the other player left: {reason}"),
        NetplayEvent::PeerFault { fault, .. } => format!("dropped the other machine: {fault}"),
        NetplayEvent::Stalled { stalled_for_ms, .. } => {
            format!("no frame became final for {stalled_for_ms} ms: left the match")
        }
        NetplayEvent::MatchEnded { at_frame } => format!("match ended at frame {at_frame}"),
        NetplayEvent::Rejected(rejection) => {
            format!("handshake refused: {}", rejection.explanation())
        }
        NetplayEvent::StartStateArrived { bytes } => {
            format!("loaded the host's start state ({bytes} bytes)")
        }
        NetplayEvent::JoinerLeftBeforeStart { .. } => {
            "the joiner left before the match began: its slot is open again".into()
        }
        NetplayEvent::HostCheckpointState { frame, .. } => {
            format!("the host's state of frame {frame} arrived")
        }
        NetplayEvent::Chat(line) => format!("chat {}: {}", line.author, line.text),
        NetplayEvent::DepartureTooFarBack { .. }
        | NetplayEvent::SpectatorDesync { .. }
        | NetplayEvent::TimeSync { .. }
        | NetplayEvent::SpectatorJoined { .. }
        | NetplayEvent::SpectatorRefused(_)
        | NetplayEvent::RoomGuessesSpent { .. }
        | NetplayEvent::SpectatorLeft
        | NetplayEvent::SpectatorDropped { .. } => return None,
    })
}

/// Where the demo's picture goes unless `--png` says: a temporary
/// directory, so a demo run leaves nothing in the current one.
pub fn default_png_path() -> PathBuf {
    std::env::temp_dir()
        .join("netcade")
        .join("netcade-demo.png")
}

/// A moment of the match: simulated time, not the wall clock (the whole
/// match is simulated in far less time than it would take to play).
fn seconds(at: Millis) -> String {
    format!("[simulated {:>6.2} s]", at as f64 / 1000.0)
}

/// `netcade demo --simulated`.
pub fn simulated_demo(args: &DemoArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let core = locate_duel_core()?;
    let rom = args.rom.clone().unwrap_or_else(default_arena);
    let png_path = args.png.clone().unwrap_or_else(default_png_path);
    let copies = CoreCopies::new(&core, 2)?;
    let open = |machine: usize, options: &[(String, String)]| {
        open_game(&GameArgs {
            core: copies.paths[machine].clone(),
            rom: Some(rom.clone()),
            options: options.to_vec(),
            ..GameArgs::default()
        })
    };
    let games = [open(0, &[])?, open(1, &args.machine2_options)?];
    // Loaded libraries stay mapped: the copies can go now, so even a killed
    // demo leaves none behind (where the system allows removing them).
    copies.remove_files();
    let title = games[0].title();
    let content_hash = content_hash(&GameArgs {
        rom: Some(rom.clone()),
        ..GameArgs::default()
    })?;
    let link = DemoLink::new(args);
    let (rtt_ms, conditions) = (link.rtt_ms, link.conditions);
    writeln!(
        out,
        "{title} netplay: two machines, each its own copy of {}, playing {}",
        core.display(),
        rom.display()
    )?;
    writeln!(
        out,
        "simulated link: {} ms round trip, ±{} ms jitter, {}% loss; seed {}; {} frames in simulated time",
        rtt_ms, conditions.jitter_ms, args.loss, args.seed, args.frames
    )?;
    for (key, value) in &args.machine2_options {
        writeln!(out, "machine 2 only: {key}={value}")?;
    }
    let setup = MatchSetup {
        seed: args.seed,
        conditions,
        frames: args.frames,
        content_hash,
    };
    let mut game_match = SimulatedMatch::new(setup, games)?;
    for (index, machine) in game_match.machines.iter_mut().enumerate() {
        let rate = machine.machine.game.sample_rate();
        machine.machine.sink.1 = args
            .audio
            .for_machine(index)
            .open_sink(rate, Some(args.frames))?;
    }
    let (end, desync_reports) = play_match(&mut game_match, &setup, out)?;
    let summary = summarize(&mut game_match, end, desync_reports, args.frames, out)?;
    let (width, height) = save_last_frame(&game_match, &png_path)?;
    writeln!(
        out,
        "last frame of machine 1 ({width}x{height}) written to {}",
        png_path.display()
    )?;
    if args.json {
        let json = summary.json(&mut game_match, args, &link, &png_path)?;
        writeln!(out, "{json}")?;
    }
    // The games before the library copies they run from.
    drop(game_match);
    drop(copies);
    Ok(outcome(end, summary.agreed))
}

/// The simulated link between the machines.
struct DemoLink {
    rtt_ms: u64,
    /// Each way.
    conditions: LinkConditions,
}

impl DemoLink {
    fn new(args: &DemoArgs) -> Self {
        let rtt_ms = args.rtt_ms.unwrap_or(100);
        let one_way = rtt_ms / 2;
        DemoLink {
            rtt_ms,
            conditions: LinkConditions::latency(one_way)
                .with_jitter(JITTER_MS.min(one_way))
                .with_loss(args.loss / 100.0),
        }
    }
}

/// Plays the match, printing its story as it goes; returns how it ended and
/// how many desyncs the machines reported.
fn play_match(
    game_match: &mut SimulatedMatch<Box<dyn Game>>,
    setup: &MatchSetup,
    out: &mut dyn Write,
) -> Result<(MatchEnd, u64), AppError> {
    let mut players = ScriptedPlayers {
        random: RandomPlayer::new(setup.seed),
        frames: Vec::new(),
    };
    let mut desync_reports = 0u64;
    let mut write_error = None;
    // Re-simulations of the real cores are timed on the real clock: a core
    // too slow to re-simulate a rollback within a frame raises the delay.
    let started = Instant::now();
    let end = game_match.play(
        setup,
        |player, frame| players.buttons(player, frame),
        || started.elapsed(),
        |update| {
            if let Some(line) = status_line(update, &mut desync_reports) {
                if let Err(error) = writeln!(out, "{line}") {
                    write_error.get_or_insert(error);
                }
            }
        },
    )?;
    match write_error {
        Some(error) => Err(error.into()),
        None => Ok((end, desync_reports)),
    }
}

/// What the match came to, for the verdict and the JSON.
struct Summary {
    end: MatchEnd,
    comparison: ChecksumComparison,
    desync_reports: u64,
    agreed: bool,
    verdict: String,
    /// Each machine's `--audio-out` summary.
    audio: Vec<serde_json::Value>,
}

/// Prints each machine's line, the verdict and the audio files written.
fn summarize(
    game_match: &mut SimulatedMatch<Box<dyn Game>>,
    end: MatchEnd,
    desync_reports: u64,
    target: u32,
    out: &mut dyn Write,
) -> Result<Summary, AppError> {
    let [first, second] = &game_match.machines[..] else {
        unreachable!("a simulated match has two machines")
    };
    let comparison = compare_checksum_logs(&first.machine.sink.0, &second.machine.sink.0);
    let agreed = comparison.first_difference.is_none() && desync_reports == 0;
    for (index, machine) in game_match.machines.iter().enumerate() {
        writeln!(out, "machine {}: {}", index + 1, describe_machine(machine))?;
    }
    let frames = [first.current_frame(), second.current_frame()];
    let verdict = verdict(
        end,
        &comparison,
        desync_reports,
        frames,
        target,
        game_match.now,
    );
    writeln!(out, "{verdict}")?;
    let mut audio = Vec::new();
    for machine in &mut game_match.machines {
        if let Some(sink) = machine.machine.sink.1.take() {
            let summary = sink.finish()?;
            writeln!(out, "{}", summary.describe())?;
            audio.push(summary.json());
        }
    }
    Ok(Summary {
        end,
        comparison,
        desync_reports,
        agreed,
        verdict,
        audio,
    })
}

impl Summary {
    /// The demo's JSON line.
    fn json(
        &self,
        game_match: &mut SimulatedMatch<Box<dyn Game>>,
        args: &DemoArgs,
        link: &DemoLink,
        png_path: &Path,
    ) -> Result<serde_json::Value, AppError> {
        let played = game_match.machines[0].current_frame();
        let shown = &mut game_match.machines[0].machine.game;
        let mut state = Vec::new();
        shown
            .save_state(&mut state)
            .map_err(AppError::at_frame(played))?;
        let checksums = Checksums::of_game(&**shown, &state);
        let machines: Vec<serde_json::Value> =
            game_match.machines.iter().map(machine_json).collect();
        let finished = self.end == MatchEnd::Finished;
        let conditions = link.conditions;
        Ok(serde_json::json!({
            "command": "demo",
            "game": game_match.machines[0].machine.game.title(),
            "frames": played,
            "checksums": checksums_json(&checksums),
            "png": png_path.display().to_string(),
            "audio": self.audio,
            "netplay": {
                "rtt_ms": link.rtt_ms,
                "jitter_ms": conditions.jitter_ms,
                "loss": conditions.loss,
                "seed": args.seed,
                "simulated_ms": game_match.now,
                "finished": finished,
                "in_sync": finished && self.agreed,
                "compared_frames": self.comparison.compared,
                "first_difference": self.comparison.first_difference,
                "desync_reports": self.desync_reports,
                "machines": machines,
                "verdict": self.verdict,
            },
        }))
    }
}

/// Writes machine 1's last frame as a PNG to `path`; returns its size.
fn save_last_frame(
    game_match: &SimulatedMatch<Box<dyn Game>>,
    path: &Path,
) -> Result<(u32, u32), AppError> {
    let shown = &game_match.machines[0].machine.game;
    let frame = shown.video_frame().ok_or(AppError::NoVideoFrame)?;
    let encoded = png::encode_rgb(frame.width, frame.height, &png::frame_to_rgb(&frame));
    let write = || {
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, &encoded)
    };
    write().map_err(|source| AppError::WriteFile {
        what: "the picture",
        path: path.to_path_buf(),
        source,
    })?;
    Ok((frame.width, frame.height))
}

/// The demo's exit: a disagreement is a desync (1) even if the match also
/// stopped early; agreeing machines that did not finish get their own code.
fn outcome(end: MatchEnd, agreed: bool) -> Outcome {
    match (agreed, end) {
        (false, _) => Outcome::NetplayFailed,
        (true, MatchEnd::Finished) => Outcome::Success,
        (true, MatchEnd::Ended | MatchEnd::OutOfTime) => Outcome::NetplayUnfinished,
    }
}

/// The line the demo prints as the match goes, if any; counts desync reports
/// (only the first two are shown, one per machine in practice: after a
/// desync every later check differs too).
fn status_line(update: &MatchUpdate, desync_reports: &mut u64) -> Option<String> {
    match update {
        MatchUpdate::Event { at, machine, event } => {
            if matches!(event, NetplayEvent::Desync { .. }) {
                *desync_reports += 1;
                if *desync_reports > 2 {
                    return None;
                }
            }
            // Both machines tell the same start-up story: show machine 1's.
            let start_up = matches!(
                event,
                NetplayEvent::Synchronizing
                    | NetplayEvent::PeerSynchronized { .. }
                    | NetplayEvent::Starting { .. }
                    | NetplayEvent::Running
            );
            if start_up && *machine != 0 {
                return None;
            }
            let text = describe_event(event)?;
            Some(format!("{} machine {}: {text}", seconds(*at), machine + 1))
        }
        MatchUpdate::AllRunning { at } => {
            Some(format!("{} both machines are running", seconds(*at)))
        }
        MatchUpdate::Progress {
            at,
            frames,
            rollbacks,
        } => Some(format!(
            "{} frames {} / {}, rollbacks so far {} / {}",
            seconds(*at),
            frames[0],
            frames[1],
            rollbacks[0],
            rollbacks[1]
        )),
    }
}

/// The demo's last line: whether the machines stayed in sync.
fn verdict(
    end: MatchEnd,
    comparison: &ChecksumComparison,
    desync_reports: u64,
    frames: [u32; 2],
    target: u32,
    simulated_ms: Millis,
) -> String {
    let compared = comparison.compared;
    let stopped = |why: &str| {
        format!(
            "netplay did not finish: {why} at frames {} / {} of {target} ({compared} final frames agreed)",
            frames[0], frames[1]
        )
    };
    match comparison.first_difference {
        Some(frame) => format!(
            "netplay DESYNC: the machines' final frames first differ at frame {frame} ({compared} frames compared, {desync_reports} desync reports)"
        ),
        None if desync_reports > 0 => format!(
            "netplay DESYNC: {desync_reports} desync reports between the machines ({compared} frames compared here)"
        ),
        None => match end {
            MatchEnd::Ended => stopped("a machine left the match"),
            MatchEnd::OutOfTime => stopped(&format!(
                "the simulated time limit ({:.0} s) passed",
                simulated_ms as f64 / 1000.0
            )),
            MatchEnd::Finished => format!(
                "netplay in sync: both machines agreed on all {compared} final frames compared"
            ),
        },
    }
}

fn describe_machine<G>(machine: &MatchMachine<G>) -> String {
    let stats = machine.peer_stats().unwrap_or_default();
    let ticks = machine.machine.stats;
    format!(
        "{} frames, {} rollbacks (deepest {} frames), ping {}, input delay {} frames, {} bytes sent / {} received",
        machine.current_frame(),
        ticks.rollbacks,
        ticks.deepest_rollback,
        stats
            .ping_ms
            .map_or("unknown".to_string(), |ping| format!("{ping} ms")),
        machine.machine.netplay.input_delay(),
        stats.bytes_sent,
        stats.bytes_received
    )
}

fn machine_json<G>(machine: &MatchMachine<G>) -> serde_json::Value {
    let stats = machine.peer_stats().unwrap_or_default();
    let ticks = machine.machine.stats;
    serde_json::json!({
        "frames": machine.current_frame(),
        "rollbacks": ticks.rollbacks,
        "deepest_rollback": ticks.deepest_rollback,
        "ping_ms": stats.ping_ms,
        "input_delay": machine.machine.netplay.input_delay(),
        "bytes_sent": stats.bytes_sent,
        "bytes_received": stats.bytes_received,
        "waiting_ticks": ticks.waiting_ticks,
        "stalled_ticks": ticks.stalled_ticks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use netcode::checksum::Checksum;

    #[test]
    fn a_match_that_did_not_finish_exits_with_its_own_code_unless_it_desynced() {
        assert_eq!(outcome(MatchEnd::Finished, true).exit_code(), 0);
        assert_eq!(outcome(MatchEnd::OutOfTime, true).exit_code(), 5);
        assert_eq!(outcome(MatchEnd::Ended, true).exit_code(), 5);
        assert_eq!(outcome(MatchEnd::Ended, false).exit_code(), 1);
        assert_eq!(outcome(MatchEnd::Finished, false).exit_code(), 1);
    }

    #[test]
    fn the_verdict_names_the_first_differing_frame_or_the_frames_that_agreed() {
        let agreed = ChecksumComparison {
            compared: 1199,
            first_difference: None,
        };
        let finished = MatchEnd::Finished;
        assert_eq!(
            verdict(finished, &agreed, 0, [1200, 1200], 1200, 21_000),
            "netplay in sync: both machines agreed on all 1199 final frames compared"
        );
        assert!(verdict(finished, &agreed, 3, [1200, 1200], 1200, 0).starts_with("netplay DESYNC"));
        let out_of_time = verdict(MatchEnd::OutOfTime, &agreed, 0, [700, 698], 1200, 90_000);
        assert!(
            out_of_time.contains(
                "did not finish: the simulated time limit (90 s) passed at frames 700 / 698"
            ),
            "{out_of_time}"
        );
        assert!(verdict(MatchEnd::Ended, &agreed, 0, [700, 698], 1200, 0).contains("left"));
        let differed = ChecksumComparison {
            compared: 1199,
            first_difference: Some(42),
        };
        assert!(verdict(finished, &differed, 1, [1200, 1200], 1200, 0).contains("at frame 42"));
    }

    #[test]
    fn only_the_first_desync_reports_are_printed_but_all_are_counted() {
        let report = |machine| MatchUpdate::Event {
            at: 1500,
            machine,
            event: NetplayEvent::Desync {
                frame: netcode::rollback::Frame::new(60),
                player: netcode::rollback::PlayerId::new(1 - machine as u8),
                local: Checksum(1),
                remote: Checksum(2),
            },
        };
        let mut count = 0;
        let shown: Vec<_> = [0, 1, 0, 1]
            .into_iter()
            .filter_map(|machine| status_line(&report(machine), &mut count))
            .collect();
        assert_eq!(count, 4);
        assert_eq!(shown.len(), 2);
        assert!(
            shown[0].contains("machine 1: DESYNC at frame 60"),
            "{shown:?}"
        );
    }

    #[test]
    fn the_start_up_is_told_once_not_by_both_machines() {
        let running = |machine| MatchUpdate::Event {
            at: 420,
            machine,
            event: NetplayEvent::Running,
        };
        let mut count = 0;
        assert!(status_line(&running(0), &mut count).is_some());
        assert_eq!(status_line(&running(1), &mut count), None);
    }
}
