//! One netplay tick, the same for the real-time loop, the demo's simulated
//! machines and the tests' clusters: read the transport → hand each datagram
//! to the session → for each frame the [`FrameClock`] says is due: add the
//! local players' buttons, let the [`NetplayDriver`] carry out the session's
//! requests → poll the session and send what it hands out.
//!
//! Start-up: while the session answers `Starting { in_ms }`, the frame clock's
//! next frame moves to that moment (as a frontend showing a countdown would),
//! so every machine begins frame 0 when the host said.

use crate::app::frame_clock::FrameClock;
use crate::app::frame_sink::FrameSink;
use crate::app::netplay_match::NetplayDriver;
use crate::app::AppError;
use crate::emulator::Emulator;
use crate::input::{Buttons, MAX_PLAYERS};
use crate::net::Transport;
use crate::netplay::NetplaySession;
use crate::protocol::Millis;
use crate::rollback::{Frame, FrameOutcome, PlayerId, PlayerKind};
use std::time::Duration;

/// What a machine's loop supplies each tick besides time and the network.
pub trait TickHooks {
    /// The buttons local `player` holds for `frame` (the frame being run now;
    /// the session applies its input delay).
    fn local_input(&mut self, player: PlayerId, frame: Frame) -> Buttons;

    /// A monotonic time, read around re-simulations to measure their cost:
    /// the real clock in a real loop, a modelled cost in simulations.
    fn stopwatch(&mut self) -> Duration;

    /// Changes the buttons a frame is run with on this machine only (tests
    /// make one machine diverge with it); by default nothing.
    fn adjust_inputs(&mut self, frame: Frame, inputs: &mut [Buttons; MAX_PLAYERS]) {
        let _ = (frame, inputs);
    }
}

/// What a machine's ticks came to, for summaries and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TickStats {
    /// Frame ticks (each frame the clock said was due).
    pub ticks: u64,
    /// Rollbacks carried out.
    pub rollbacks: u64,
    /// The deepest rollback (frames re-simulated).
    pub deepest_rollback: u32,
    /// Ticks spent waiting for a peer's inputs.
    pub waiting_ticks: u64,
    /// Ticks stalled by time sync (a machine ahead lets the others catch up).
    pub stalled_ticks: u64,
    /// The moment this machine ran frame 0.
    pub started_at: Option<Millis>,
    /// Ticks that answered `Synchronizing` or `Starting` after frame 0 ran
    /// (a restart: must stay 0).
    pub start_outcomes_after_start: u64,
}

/// One machine of a netplay match: its session, its game, the driver
/// between them, its frame clock and where its frames go.
pub struct NetplayMachine<A: Ord + Copy, G, S> {
    /// The netplay session (its state, its events).
    pub netplay: NetplaySession<A>,
    /// The game the session's requests are carried out on.
    pub game: G,
    /// Receives every frame run and every frame final.
    pub sink: S,
    /// Carries out the session's requests.
    pub driver: NetplayDriver,
    /// When frames are due.
    pub clock: FrameClock,
    /// What the ticks came to.
    pub stats: TickStats,
    /// Frames stop being run at this frame (the machine still answers its
    /// peers, which may be a few frames behind).
    pub stop_at_frame: Option<u32>,
    datagram: Vec<u8>,
}

impl<A, G, S> NetplayMachine<A, G, S>
where
    A: Ord + Copy,
    G: std::ops::DerefMut,
    G::Target: Emulator,
    S: FrameSink,
{
    /// A machine whose frames follow `clock`.
    pub fn new(netplay: NetplaySession<A>, game: G, sink: S, clock: FrameClock) -> Self {
        NetplayMachine {
            netplay,
            game,
            sink,
            driver: NetplayDriver::new(),
            clock,
            stats: TickStats::default(),
            stop_at_frame: None,
            datagram: Vec::new(),
        }
    }

    /// The next frame to run.
    pub fn current_frame(&self) -> u32 {
        self.netplay.current_frame().number()
    }

    /// One pass of the loop at `now_us` (µs since the session was created):
    /// what arrived, the frames due (at the session's time-sync speed times
    /// `clock_rate`, the machine's own clock error in simulations, else 1),
    /// then what to send. Drain `netplay.events()` after it.
    pub fn tick<T: Transport<Address = A>>(
        &mut self,
        now_us: u64,
        clock_rate: f64,
        transport: &mut T,
        hooks: &mut dyn TickHooks,
    ) -> Result<(), AppError> {
        let now = now_us / 1000;
        while let Some(from) = transport.receive(&mut self.datagram) {
            self.netplay.handle_datagram(now, from, &self.datagram);
        }
        let speed = clock_rate * f64::from(self.netplay.frames_per_second_factor());
        let due = self.clock.due(now_us, speed);
        let mut ran = 0;
        while ran < due
            && self
                .stop_at_frame
                .is_none_or(|stop| self.current_frame() < stop)
        {
            self.run_frame(now, hooks)?;
            ran += 1;
        }
        if ran == 0 {
            // Inputs that arrived may have made frames final all the same.
            self.driver.finalize(&self.netplay, &mut self.sink);
        }
        self.sink.clock_tick(now_us, speed);
        self.netplay
            .poll(now, |to, datagram| transport.send(to, datagram));
        Ok(())
    }

    /// One frame tick: the local buttons, then the session's requests.
    fn run_frame(&mut self, now: Millis, hooks: &mut dyn TickHooks) -> Result<(), AppError> {
        self.stats.ticks += 1;
        let frame = self.netplay.current_frame();
        for player in (0..self.netplay.session().players() as u8).map(PlayerId::new) {
            let session = self.netplay.session();
            if session.kind(player) == Some(PlayerKind::Local)
                && session.connected_players().contains(player)
            {
                let buttons = hooks.local_input(player, frame);
                self.netplay.add_local_input(player, buttons)?;
            }
        }
        let outcome = self.driver.advance(
            now,
            &mut self.netplay,
            &mut *self.game,
            &mut self.sink,
            hooks,
        )?;
        let stats = &mut self.stats;
        match outcome {
            FrameOutcome::Advanced { rolled_back } if rolled_back > 0 => {
                stats.rollbacks += 1;
                stats.deepest_rollback = stats.deepest_rollback.max(rolled_back);
            }
            FrameOutcome::Waiting { .. } => stats.waiting_ticks += 1,
            FrameOutcome::Stalled => stats.stalled_ticks += 1,
            _ => {}
        }
        match outcome {
            FrameOutcome::Synchronizing | FrameOutcome::Starting { .. } => {
                if stats.started_at.is_some() {
                    stats.start_outcomes_after_start += 1;
                }
                if let FrameOutcome::Starting { in_ms } = outcome {
                    // Wake up exactly at the start moment.
                    self.clock.start_at((now + in_ms) * 1000);
                }
            }
            FrameOutcome::Ended => {}
            _ => {
                stats.started_at.get_or_insert(now);
            }
        }
        Ok(())
    }
}
