//! `netcade spectate HOST:PORT`: watch a match live, from any moment. The
//! host sends its savestate of a recent final frame, then every player's
//! final inputs; this machine plays them on its own copy of the game
//! through the jitter buffer, with the same real-time pacing as `host` and
//! `join` (frames fall due from a start moment; the loop waits in the kernel
//! for the next frame or a datagram), and ends after the match's last final
//! frame with a summary. The frames watched are recorded into a replay that
//! starts at the host's savestate's frame (`--record`, `--no-record`).

use crate::checksum::Checksums;
use crate::engine::frame_clock::FrameClock;
use crate::engine::live::front_end::{
    open_window_unless_headless, DisplayOptions, FrontEnd, MatchView, SpectatorView,
};
use crate::engine::live::players::{
    adopt_host_options, connect_to_host, content_hash, host_option_overrides,
    install_interrupt_handler, wait_for_next_frame, LiveMatch, LiveOptions, LiveTransport,
    MatchOutputs, StatusPrinter, WireTraffic, INTERRUPTED,
};
use crate::engine::netplay::machine::SpectatorMachine;
use crate::engine::sinks::audio_file::{AudioArgs, AudioSink};
use crate::engine::sinks::recorder::{
    finish_match_recording, match_recorder, RecordArgs, ReplayRecorder,
};
use crate::engine::sinks::ChecksumLog;
use crate::engine::{checksums_json, open_game, AppError, Game, GameArgs, Outcome};
use crate::net::link::LinkArgs;
use crate::net::Transport;
use crate::netplay::{SpectatorConfig, SpectatorEvent, SpectatorPhase, SpectatorSession};
use crate::protocol::{DisconnectCause, DisconnectReason, SessionSettings};
use crate::replay::EndReason;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Arguments of `netcade spectate`.
#[derive(Clone, Debug, clap::Args)]
pub struct SpectateArgs {
    /// The host's address: HOST:PORT (a name or an IP; IPv6 in brackets).
    #[arg(value_name = "HOST:PORT")]
    pub address: String,
    /// The core and content: the same as the players'.
    #[command(flatten)]
    pub game: GameArgs,
    /// No window: the terminal only (always so in a build without the
    /// `gui` feature).
    #[arg(long)]
    pub headless: bool,
    /// How the window shows the game (builds with the `gui` feature).
    #[cfg(feature = "gui")]
    #[command(flatten)]
    pub display: crate::gui::window::DisplayArgs,
    /// Stop after frame N of the match (the players' `--frames N`) [default:
    /// watch until the match ends].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub frames: Option<u32>,
    /// End the output with one JSON object on its own line.
    #[arg(long)]
    pub json: bool,
    /// Seconds to wait for the host to answer before giving up.
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    pub connect_timeout_s: f64,
    /// The socket transport and the link conditioner over it.
    #[command(flatten)]
    pub link: LinkArgs,
    /// Where the replay of the frames watched goes (`--record PATH`,
    /// `--no-record`).
    #[command(flatten)]
    pub record: RecordArgs,
    /// Audio output.
    #[command(flatten)]
    pub audio: AudioArgs,
    /// The speaker.
    #[cfg(feature = "audio")]
    #[command(flatten)]
    pub speaker: crate::engine::sinks::speaker::SpeakerArgs,
}

/// The speaker, in builds that have one.
#[cfg(feature = "audio")]
type SpeakerSink = Option<crate::engine::sinks::speaker::Speaker>;
#[cfg(not(feature = "audio"))]
type SpeakerSink = ();

/// A spectator's frames go to the checksum log of the frames watched, the
/// replay recorder (unless `--no-record`), `--audio-out` and the speaker.
type WatchSink = (
    (ChecksumLog, Option<ReplayRecorder>),
    (Option<AudioSink>, SpeakerSink),
);

type WatchMachine = SpectatorMachine<SocketAddr, Box<dyn Game>, WatchSink>;

/// How watching ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WatchEnd {
    /// Every frame asked for, or the match's last final frame, was played.
    Finished,
    /// Ctrl-C.
    Interrupted,
    /// The host went silent (or its link broke) before the match's end.
    HostLost,
    /// The spectator closed the window.
    WindowClosed,
}

impl WatchEnd {
    fn describe(self) -> &'static str {
        match self {
            WatchEnd::Finished => "finished",
            WatchEnd::Interrupted => "interrupted (Ctrl-C)",
            WatchEnd::HostLost => "the host was lost",
            WatchEnd::WindowClosed => "the window was closed",
        }
    }

    fn json_name(self) -> &'static str {
        match self {
            WatchEnd::Finished => "finished",
            WatchEnd::Interrupted => "interrupted",
            WatchEnd::HostLost => "host_lost",
            WatchEnd::WindowClosed => "window_closed",
        }
    }

    /// The replay's end record says this.
    fn end_reason(self) -> EndReason {
        match self {
            WatchEnd::Finished => EndReason::Finished,
            WatchEnd::Interrupted | WatchEnd::WindowClosed => EndReason::Interrupted,
            WatchEnd::HostLost => EndReason::Disconnect,
        }
    }
}

/// Watches a match (see [`spectate_command`]) and returns how it went, with
/// the checksums of the frames watched.
pub fn spectate_match(
    args: &SpectateArgs,
    options: LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    let (host, link) = connect_to_host(&args.address, args.connect_timeout_s, &args.link)?;
    let mut transport = LiveTransport::new(link);
    let game = open_game(&args.game)?;
    writeln!(
        out,
        "spectating {} ({host}) with {}",
        args.address,
        game.title()
    )?;
    let settings = SessionSettings {
        frame_rate_millihertz: (game.frames_per_second() * 1000.0).round() as u32,
        ..SessionSettings::default()
    };
    let config = SpectatorConfig::new(
        host,
        game.core_name(),
        game.core_version(),
        content_hash(&args.game)?,
        settings,
    );
    if options.handle_ctrl_c {
        install_interrupt_handler();
    }
    let started = Instant::now();
    let mut spectator = SpectatorSession::new(config, 0)?;
    let timeout = Duration::from_secs_f64(args.connect_timeout_s);
    let welcomed = await_welcome(&mut spectator, &mut transport, started, timeout);
    let ended = |outcome| LiveMatch {
        outcome,
        log: ChecksumLog::new(1),
    };
    if let Some(SpectatorEvent::Rejected(rejection)) = welcomed {
        return Err(AppError::HandshakeRefused {
            reason: rejection.explanation(),
        });
    }
    if spectator.host_handshake().is_none() {
        if INTERRUPTED.load(Ordering::Relaxed) {
            return Ok(ended(Outcome::Success));
        }
        return Err(AppError::NoAnswer {
            address: args.address.clone(),
            seconds: args.connect_timeout_s,
        });
    }
    let host_options = spectator
        .host_handshake()
        .map(|handshake| host_option_overrides(&handshake.core_options))
        .unwrap_or_default();
    let game_args = GameArgs {
        options: host_options.clone(),
        ..args.game.clone()
    };
    let game = adopt_host_options(game, &args.game, host_options)?;
    let players = spectator.players().clamp(1, crate::input::MAX_PLAYERS) as u8;
    let names = vec![args.address.clone()];
    let recorder = match_recorder(&args.record, game.as_ref(), &game_args, players, names)?;
    let mut front =
        open_window_unless_headless(args.headless, display_options(args), game.as_ref())?;
    let clock = FrameClock::new(game.frames_per_second(), 0).with_catch_up(2, 10);
    let audio = args.audio.open_sink(game.sample_rate(), args.frames)?;
    #[cfg(feature = "audio")]
    let speaker = crate::engine::sinks::speaker::open_speaker_for(
        &args.audio,
        &args.speaker,
        args.headless,
        game.sample_rate(),
    )?;
    #[cfg(not(feature = "audio"))]
    let speaker = ();
    let sink = ((ChecksumLog::new(1 << 16), recorder), (audio, speaker));
    let mut machine: WatchMachine = SpectatorMachine::new(spectator, game, sink, clock);
    machine.stop_at_frame = args.frames;
    let mut status = Status::new(options);
    let mut host_gone: Option<DisconnectCause> = None;
    let end = loop {
        let now_us = started.elapsed().as_micros() as u64;
        front.handle_events();
        let frame_before = machine.current_frame();
        machine.tick(now_us, &mut transport)?;
        while let Some(event) = machine.spectator.next_event() {
            match event {
                SpectatorEvent::StateArrived { frame, bytes } => {
                    status.interrupt(out)?;
                    writeln!(
                        out,
                        "watching from frame {frame} (the host's savestate, {bytes} bytes)"
                    )?;
                }
                SpectatorEvent::BadState(error) => {
                    status.interrupt(out)?;
                    eprintln!("warning: the host's savestate could not be read: {error}");
                }
                SpectatorEvent::Flooded => {
                    status.interrupt(out)?;
                    eprintln!("warning: the host sent more frames than any match runs: left");
                }
                SpectatorEvent::NetworkInterrupted { silent_for_ms } => {
                    status.interrupt(out)?;
                    eprintln!("warning: nothing heard from the host for {silent_for_ms} ms");
                }
                SpectatorEvent::NetworkResumed => {
                    status.interrupt(out)?;
                    eprintln!("note: the host is heard again");
                }
                SpectatorEvent::HostGone(cause) => {
                    host_gone.get_or_insert(cause);
                }
                SpectatorEvent::Welcomed { .. } | SpectatorEvent::Rejected(_) => {}
            }
        }
        if machine.finished() {
            let quit = matches!(
                host_gone,
                None | Some(DisconnectCause::PeerLeft(DisconnectReason::Quit))
            );
            let reached = args
                .frames
                .is_some_and(|frames| machine.current_frame() >= frames);
            break if quit || reached {
                WatchEnd::Finished
            } else {
                WatchEnd::HostLost
            };
        }
        if INTERRUPTED.load(Ordering::Relaxed) {
            break WatchEnd::Interrupted;
        }
        status.update(&machine, out)?;
        present(front.as_mut(), &machine, frame_before);
        if front.quit_requested() {
            break WatchEnd::WindowClosed;
        }
        wait_for_next_frame(&mut transport, &machine.clock, started);
    };
    let ended_ms = started.elapsed().as_millis() as u64;
    machine.spectator.leave();
    let now_us = started.elapsed().as_micros() as u64;
    machine.tick(now_us, &mut transport)?;
    status.interrupt(out)?;
    let recording = finish_match_recording(machine.sink.0 .1.take(), end.end_reason());
    let audio = machine
        .sink
        .1
         .0
        .take()
        .map(AudioSink::finish)
        .transpose()?;
    let report = WatchReport::gather(&mut machine, end, ended_ms, &transport);
    report.describe(out)?;
    #[cfg(feature = "audio")]
    let speaker = machine.sink.1 .1.as_ref().map(|speaker| speaker.describe());
    #[cfg(not(feature = "audio"))]
    let speaker = None;
    let outputs = MatchOutputs {
        recording: recording.as_ref(),
        audio: audio.as_ref(),
        speaker,
    };
    outputs.describe(args.json.then(|| report.json()), out)?;
    let outcome = match end {
        WatchEnd::Finished | WatchEnd::Interrupted | WatchEnd::WindowClosed => Outcome::Success,
        WatchEnd::HostLost => Outcome::PeerLost,
    };
    Ok(LiveMatch {
        outcome,
        log: machine.sink.0 .0,
    })
}

/// The window's options (none to choose in a build without `gui`).
fn display_options(args: &SpectateArgs) -> &DisplayOptions {
    #[cfg(feature = "gui")]
    return &args.display;
    #[cfg(not(feature = "gui"))]
    {
        let _ = args;
        &DisplayOptions
    }
}

/// Shows the game after a tick: the picture is new when frames ran (only
/// the last of a tick's frames is drawn; catch-up frames run with video
/// off), with the spectator's figures for the overlay.
fn present(front: &mut dyn FrontEnd, machine: &WatchMachine, frame_before: u32) {
    let view = MatchView {
        frame: machine.current_frame(),
        new_picture: machine.current_frame() != frame_before,
        spectating: Some(SpectatorView {
            ping_ms: machine.spectator.link_stats().ping_ms,
            behind_live: machine.spectator.behind_live(),
            buffered: machine.spectator.buffered(),
        }),
        ..MatchView::default()
    };
    front.present(machine.game.as_ref(), &view);
}

/// Says Hello until the host welcomes or refuses us, the timeout passes or
/// Ctrl-C is pressed. Returns the event that ended the wait, if any.
fn await_welcome(
    spectator: &mut SpectatorSession<SocketAddr>,
    transport: &mut LiveTransport,
    started: Instant,
    timeout: Duration,
) -> Option<SpectatorEvent> {
    let mut datagram = Vec::new();
    loop {
        let now = started.elapsed().as_millis() as u64;
        while let Some(from) = transport.receive(&mut datagram) {
            spectator.handle_datagram(now, from, &datagram);
        }
        spectator.poll(now, |to, bytes| transport.send(to, bytes));
        // Events stay queued for the loop, except the one that ends the wait.
        if spectator.host_handshake().is_some() {
            return None;
        }
        if let Some(event) = spectator.next_event() {
            if matches!(event, SpectatorEvent::Rejected(_)) {
                return Some(event);
            }
        }
        if spectator.phase() == SpectatorPhase::Ended
            || started.elapsed() >= timeout
            || INTERRUPTED.load(Ordering::Relaxed)
        {
            return None;
        }
        transport.wait(Duration::from_millis(1));
    }
}

/// The spectator's status line: frame, ping, delays, catch-up.
struct Status {
    printer: StatusPrinter,
    last: Option<Instant>,
}

impl Status {
    fn new(options: LiveOptions) -> Self {
        Status {
            printer: StatusPrinter::new(options),
            last: None,
        }
    }

    fn update(&mut self, machine: &WatchMachine, out: &mut dyn Write) -> std::io::Result<()> {
        if machine.stats.joined_at_frame.is_none() {
            return Ok(());
        }
        let every = self.printer.every();
        let now = Instant::now();
        if self
            .last
            .is_some_and(|last| now.duration_since(last) < every)
        {
            return Ok(());
        }
        self.last = Some(now);
        let ping = machine
            .spectator
            .link_stats()
            .ping_ms
            .map_or_else(|| "?".to_string(), |ping| ping.to_string());
        let line = format!(
            "frame {} | ping {ping} ms | behind live {} | buffered {} (aiming at {}) | caught up {} frames",
            machine.current_frame(),
            machine.spectator.behind_live(),
            machine.spectator.buffered(),
            machine.spectator.jitter().delay_frames(),
            machine.stats.catch_up_frames
        );
        self.printer.print(&line, out)
    }

    fn interrupt(&mut self, out: &mut dyn Write) -> std::io::Result<()> {
        self.printer.interrupt(out)
    }
}

/// What the summary and the JSON say.
struct WatchReport {
    game: String,
    end: WatchEnd,
    frames: u32,
    joined_at_frame: Option<u32>,
    checksums: Option<Checksums>,
    delay_frames: Option<u32>,
    live_delay_frames: Option<u32>,
    aimed_delay_frames: u32,
    catch_up_frames: u64,
    rebuffers: u64,
    ping_ms: Option<u32>,
    /// The link's traffic, over the seconds watched.
    wire: WireTraffic,
    dropped_datagrams: u64,
}

impl WatchReport {
    fn gather(
        machine: &mut WatchMachine,
        end: WatchEnd,
        ended_ms: u64,
        transport: &LiveTransport,
    ) -> WatchReport {
        let link = machine.spectator.link_stats();
        let header = transport.header_bytes;
        let joined = machine.stats.joined_at_frame;
        // The game as it is after the last frame watched (shown: the last
        // frame always is), as `run --frames` prints it.
        let checksums = joined.and_then(|_| {
            let mut state = Vec::new();
            machine.game.save_state(&mut state).ok()?;
            Some(Checksums::of_game(machine.game.as_ref(), &state))
        });
        WatchReport {
            game: machine.game.title(),
            end,
            frames: machine.current_frame(),
            joined_at_frame: joined,
            checksums,
            delay_frames: machine.stats.median_delay(),
            live_delay_frames: machine.stats.median_live_delay(),
            aimed_delay_frames: machine.spectator.jitter().delay_frames(),
            catch_up_frames: machine.stats.catch_up_frames,
            rebuffers: machine.spectator.jitter().starvations(),
            ping_ms: link.ping_ms,
            wire: WireTraffic {
                seconds: ended_ms as f64 / 1000.0,
                sent_bytes: link.bytes_sent + header * link.datagrams_sent,
                received_bytes: link.bytes_received + header * link.datagrams_received,
                datagrams_sent: link.datagrams_sent,
            },
            dropped_datagrams: machine.spectator.dropped_datagrams(),
        }
    }

    fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let joined = self.joined_at_frame.map_or_else(
            || "never got the host's state".to_string(),
            |f| format!("joined at frame {f}"),
        );
        writeln!(
            out,
            "spectating {}: up to frame {}, {joined}, {:.1} s, {}",
            self.end.describe(),
            self.frames,
            self.wire.seconds,
            self.game
        )?;
        let frames = |delay: Option<u32>| delay.map_or_else(|| "?".to_string(), |d| d.to_string());
        writeln!(
            out,
            "delay: {} frames behind the players (median, estimated), {} behind the newest final frame (aiming at {}); {} catch-up frames run, {} rebuffers",
            frames(self.live_delay_frames),
            frames(self.delay_frames),
            self.aimed_delay_frames,
            self.catch_up_frames,
            self.rebuffers
        )?;
        writeln!(
            out,
            "wire (with IP/UDP headers): sent {:.0} B/s, received {:.0} B/s; dropped {} stray datagrams",
            self.wire.sent_bytes_per_s(),
            self.wire.received_bytes_per_s(),
            self.dropped_datagrams
        )?;
        if let Some(checksums) = &self.checksums {
            writeln!(
                out,
                "checksums after frame {}: memory {} state {} video {}",
                self.frames, checksums.memory, checksums.state, checksums.video
            )?;
        }
        Ok(())
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "command": "spectate",
            "game": self.game,
            "end": self.end.json_name(),
            "frames": self.frames,
            "seconds": self.wire.seconds,
            "checksums": self.checksums.as_ref().map(checksums_json),
            "spectator": {
                "joined_at_frame": self.joined_at_frame,
                "delay_frames": self.delay_frames,
                "behind_live_frames": self.live_delay_frames,
                "aimed_delay_frames": self.aimed_delay_frames,
                "catch_up_frames": self.catch_up_frames,
                "rebuffers": self.rebuffers,
            },
            "netplay": {
                "ping_ms": self.ping_ms,
                "wire": self.wire.json(),
                "dropped_datagrams": self.dropped_datagrams,
            },
        })
    }
}
