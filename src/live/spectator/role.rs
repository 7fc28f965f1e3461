//! The spectator's side of the real-time loop: the host's final frames
//! played through the jitter buffer, the session's events told, the end of
//! the match, and the summary.

use crate::engine::frame_clock::FrameClock;
use crate::engine::matches::machine::SpectatorMachine;
use crate::engine::sinks::{FrameSink, MatchSinks, SinksSummary};
use crate::engine::{AppError, Game, Outcome};
use crate::live::chat::{ChatArgs, LiveChat};
use crate::live::front_end::{FrontEnd, MatchView, SpectatorView};
use crate::live::narrator::{status_due, Narrator};
use crate::live::session_loop::{DatagramSession, LiveMatch, LiveRole};
use crate::live::spectator::report::{WatchDelay, WatchEnd, WatchKeys, WatchReport};
use crate::live::wire::LiveTransport;
use netcode::checksum::Checksums;
use netcode::netplay::SpectatorEvent;
use netcode::protocol::{DisconnectCause, DisconnectReason};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// A spectator's machine: its session, game and sinks.
pub(crate) type WatchMachine = SpectatorMachine<SocketAddr, Box<dyn Game>, MatchSinks>;

/// A spectator's machine in the real-time loop.
pub(crate) struct SpectatorRole {
    machine: WatchMachine,
    /// The last frame to watch, if not the match's last.
    frames: Option<u32>,
    host_gone: Option<DisconnectCause>,
    /// The watch ended here because of what the host sent (or did not).
    broken: Option<WatchEnd>,
    /// Checkpoints whose checksums differed from the host's.
    desyncs: u64,
    /// The frame before the last tick.
    frame_before: u32,
    /// When the status line was last shown.
    status_last: Option<Instant>,
    /// When we left (ms into the session).
    left_ms: u64,
    chat: LiveChat,
    /// The keys of our link to the host.
    keys: Option<WatchKeys>,
}

impl SpectatorRole {
    /// `machine` watching up to frame `frames` (the match's end if `None`).
    pub(crate) fn new(
        mut machine: WatchMachine,
        frames: Option<u32>,
        chat: &ChatArgs,
        keys: Option<WatchKeys>,
    ) -> Self {
        machine.stop_at_frame = frames;
        SpectatorRole {
            machine,
            frames,
            host_gone: None,
            broken: None,
            desyncs: 0,
            frame_before: 0,
            status_last: None,
            left_ms: 0,
            chat: LiveChat::new(chat),
            keys,
        }
    }

    fn handle_event(
        &mut self,
        event: SpectatorEvent,
        narrator: &mut Narrator<'_>,
    ) -> std::io::Result<()> {
        match event {
            SpectatorEvent::StateArrived { frame, bytes } => narrator.say(&format!(
                "watching from frame {frame} (the host's savestate, {bytes} bytes)"
            )),
            SpectatorEvent::BadState(error) => {
                self.broken = Some(WatchEnd::HostLost);
                narrator.warn(&format!("the host's savestate could not be read: {error}"))
            }
            SpectatorEvent::Flooded => {
                self.broken = Some(WatchEnd::HostLost);
                narrator.warn("the host sent more frames than any match runs: left")
            }
            SpectatorEvent::StateRefused(reason) => {
                self.broken = Some(WatchEnd::HostLost);
                narrator.warn(&format!(
                    "the core refused the host's savestate: {reason}: left"
                ))
            }
            SpectatorEvent::Desync { frame, local, host } => {
                self.desyncs += 1;
                narrator.warn(&format!(
                    "desync at frame {frame}: our checksum {local}, the host's {host}; asked the host for its state"
                ))
            }
            SpectatorEvent::RepairArrived { frame } => narrator.note(&format!(
                "loaded the host's state of frame {frame} and ran the frames since again"
            )),
            SpectatorEvent::TooLateToRepair { frame } => narrator.warn(&format!(
                "frame {frame} is too far back to run again from: not repaired"
            )),
            SpectatorEvent::Stalled { stalled_for_ms } => {
                self.broken = Some(WatchEnd::Stalled);
                narrator.warn(&format!(
                    "nothing new came from the host for {stalled_for_ms} ms although it is heard: left"
                ))
            }
            SpectatorEvent::NetworkInterrupted { silent_for_ms } => narrator.warn(&format!(
                "nothing heard from the host for {silent_for_ms} ms"
            )),
            SpectatorEvent::NetworkResumed => narrator.note("the host is heard again"),
            SpectatorEvent::HostGone(cause) => {
                self.host_gone.get_or_insert(cause);
                Ok(())
            }
            SpectatorEvent::Chat(line) => self.chat.received(&line, narrator),
            SpectatorEvent::Welcomed { .. } | SpectatorEvent::Rejected(_) => Ok(()),
        }
    }

    /// Ends the watch's outputs and sums it up.
    pub(crate) fn finish(
        mut self,
        end: WatchEnd,
        transport: &LiveTransport,
    ) -> Result<LiveMatch, AppError> {
        let (log, outputs) = self.machine.sink.finish(end.end_reason())?;
        let report = WatchReport {
            outputs,
            ..self.report(end, transport)
        };
        let outcome = match end {
            _ if self.desyncs > 0 => Outcome::NetplayFailed,
            end => end.outcome(),
        };
        Ok(LiveMatch {
            outcome,
            log,
            report: Some(Box::new(report)),
        })
    }

    fn report(&mut self, end: WatchEnd, transport: &LiveTransport) -> WatchReport {
        let machine = &mut self.machine;
        let link = machine.spectator.link_stats();
        let joined = machine.stats.joined_at_frame;
        // The game as it is after the last frame watched (shown: the last
        // frame always is), as `run --frames` prints it.
        let checksums = joined.map(|_| Checksums::of_game_now(machine.game.as_mut()));
        WatchReport {
            game: machine.game.title(),
            end,
            frames: machine.current_frame(),
            joined_at_frame: joined,
            checksums,
            delay: WatchDelay {
                frames: machine.stats.median_delay(),
                live_frames: machine.stats.median_live_delay(),
                aimed_frames: machine.spectator.jitter().delay_frames(),
                catch_up_frames: machine.stats.catch_up_frames,
                rebuffers: machine.spectator.jitter().starvations(),
            },
            ping_ms: link.ping_ms,
            path: transport.ice_path(),
            wire: transport.traffic(
                self.left_ms as f64 / 1000.0,
                (link.bytes_sent, link.datagrams_sent),
                (link.bytes_received, link.datagrams_received),
            ),
            dropped_datagrams: machine.spectator.dropped_datagrams(),
            desyncs: (self.desyncs, machine.stats.repairs),
            refused_messages: (0, 0),
            chat: self.chat.counts,
            outputs: SinksSummary::default(),
            keys: self.keys,
        }
    }
}

impl LiveRole for SpectatorRole {
    type End = WatchEnd;
    const INTERRUPTED: WatchEnd = WatchEnd::Interrupted;
    const WINDOW_CLOSED: WatchEnd = WatchEnd::WindowClosed;

    fn game(&self) -> &dyn Game {
        self.machine.game.as_ref()
    }

    fn clock(&self) -> &FrameClock {
        &self.machine.clock
    }

    fn read_front_end(&mut self, front: &mut dyn FrontEnd) {
        front.handle_events();
        if let Some(volume) = front.volume_changed() {
            self.machine.sink.set_volume(volume);
        }
    }

    fn tick(&mut self, now_us: u64, transport: &mut LiveTransport) -> Result<(), AppError> {
        self.frame_before = self.machine.current_frame();
        self.machine.tick(now_us, transport)
    }

    fn handle_events(&mut self, narrator: &mut Narrator<'_>) -> Result<(), AppError> {
        while let Some(event) = self.machine.spectator.next_event() {
            self.handle_event(event, narrator)?;
        }
        Ok(())
    }

    fn send_chat(&mut self, now_us: u64, narrator: &mut Narrator<'_>) -> Result<(), AppError> {
        let frame = self.machine.current_frame();
        let spectator = &mut self.machine.spectator;
        let mut send = |now, author: &str, text: &str| spectator.send_chat(now, author, text);
        Ok(self
            .chat
            .send_due(frame, now_us / 1000, narrator, &mut send)?)
    }

    fn ended(&mut self, _now_us: u64) -> Option<WatchEnd> {
        let relay = self.machine.sink.relay.as_ref();
        if relay.is_some_and(|relay| relay.failure().is_some()) {
            return Some(WatchEnd::RelayFailed);
        }
        if !self.machine.finished() {
            return None;
        }
        if let Some(broken) = self.broken {
            return Some(broken);
        }
        let quit = matches!(
            self.host_gone,
            None | Some(DisconnectCause::PeerLeft(DisconnectReason::Quit))
        );
        let reached = self
            .frames
            .is_some_and(|frames| self.machine.current_frame() >= frames);
        Some(if quit || reached {
            WatchEnd::Finished
        } else {
            WatchEnd::HostLost
        })
    }

    fn status_line(&mut self, every: Duration) -> Option<String> {
        // Nothing to show before the host's state arrived.
        self.machine.stats.joined_at_frame?;
        if !status_due(&mut self.status_last, every) {
            return None;
        }
        let spectator = &self.machine.spectator;
        let ping = spectator
            .link_stats()
            .ping_ms
            .map_or_else(|| "?".to_string(), |ping| ping.to_string());
        Some(format!(
            "frame {} | ping {ping} ms | behind live {} | buffered {} (aiming at {}) | caught up {} frames",
            self.machine.current_frame(),
            spectator.behind_live(),
            spectator.buffered(),
            spectator.jitter().delay_frames(),
            self.machine.stats.catch_up_frames
        ))
    }

    /// The picture is new when frames ran (only the last of a tick's frames
    /// is drawn; catch-up frames run with video off), with the spectator's
    /// figures for the overlay.
    fn view(&self) -> MatchView {
        let spectator = &self.machine.spectator;
        MatchView {
            frame: self.machine.current_frame(),
            new_picture: self.machine.current_frame() != self.frame_before,
            listening: None,
            spectating: Some(SpectatorView {
                ping_ms: spectator.link_stats().ping_ms,
                behind_live: spectator.behind_live(),
                buffered: spectator.buffered(),
            }),
            ..MatchView::default()
        }
    }

    fn leave(&mut self, elapsed: Duration) {
        self.left_ms = elapsed.as_millis() as u64;
        self.machine.spectator.leave();
    }

    fn datagram_session(&mut self) -> &mut dyn DatagramSession {
        &mut self.machine.spectator
    }
}
