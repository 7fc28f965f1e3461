//! The one real-time loop `host`, `join` and `spectate` run: it paces a
//! [`LiveRole`]'s ticks with the monotonic clock, waiting in the kernel
//! until the next frame's deadline or a datagram's arrival, whichever comes
//! first ([`Transport::wait`]); frames fall due from the start moment on
//! (the [`FrameClock`]), so the pace never drifts. Around the role's tick
//! it watches for Ctrl-C, redraws the status line and presents the front
//! end; the role says what a tick is, what its status line and picture
//! show, and when the session is over.

use crate::engine::frame_clock::FrameClock;
use crate::engine::report::{write_report, Report};
use crate::engine::sinks::ChecksumLog;
use crate::engine::{AppError, Game, Outcome};
use crate::live::front_end::{FrontEnd, MatchView};
use crate::live::narrator::Narrator;
use crate::live::options::interrupted;
use crate::live::wire::LiveTransport;
use crate::net::Transport;
use netcode::netplay::{NetplaySession, SpectatorSession};
use netcode::protocol::Millis;
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Longest wait between two looks at the network and the session's timers
/// when no frame is due sooner (datagrams wake the loop at once): the
/// finest of those timers (an ack's piggyback wait) is 20 ms, so a loop
/// at 60 fps wakes only for its frames and for what arrives.
const LONGEST_WAIT: Duration = Duration::from_millis(20);

/// Wait between two looks while shaking hands, before any frame is due,
/// or delivering goodbyes, after the last.
const HANDSHAKE_POLL: Duration = Duration::from_millis(1);

/// Longest wait for the goodbyes to be acknowledged after leaving: the
/// endpoints' own linger (a second), with a margin.
const GOODBYE_WAIT: Duration = Duration::from_millis(1500);

/// A match played (or watched) to its end.
pub struct LiveMatch {
    /// How it ended, as the command's exit code says.
    pub outcome: Outcome,
    /// The checksums of the latest final frames it played (the demo
    /// compares machines with them).
    pub log: ChecksumLog,
    /// The summary for people and scripts (none when it ended before it
    /// began: Ctrl-C while still waiting for the host).
    pub report: Option<Box<dyn Report + Send>>,
}

impl LiveMatch {
    /// Writes the summary, if any, and its JSON when `json` asks (see
    /// [`write_report`]).
    pub fn write_report(&self, json: bool, out: &mut dyn Write) -> std::io::Result<()> {
        match &self.report {
            Some(report) => write_report(report.as_ref(), json, out),
            None => Ok(()),
        }
    }
}

/// One side of a live session: the players' machines or a spectator's.
pub trait LiveRole {
    /// How the session ended.
    type End: Copy;
    /// The end an interrupt (Ctrl-C, SIGTERM, SIGHUP) makes.
    const INTERRUPTED: Self::End;
    /// The end closing the window makes.
    const WINDOW_CLOSED: Self::End;

    /// The game, for the front end.
    fn game(&self) -> &dyn Game;

    /// When frames are due.
    fn clock(&self) -> &FrameClock;

    /// Reads the front end before a tick: the local player's buttons, or
    /// only what was done in the window.
    fn read_front_end(&mut self, front: &mut dyn FrontEnd);

    /// What arrived, the frames due at `now_us` (µs since the session
    /// began), then what to send.
    fn tick(&mut self, now_us: u64, transport: &mut LiveTransport) -> Result<(), AppError>;

    /// Answers and tells what the tick's session events say.
    fn handle_events(&mut self, narrator: &mut Narrator<'_>) -> Result<(), AppError>;

    /// Sends the chat lines due at `now_us`: typed in the front end, or
    /// from `--chat-script` (a role without a session to chat over has none).
    fn send_chat(&mut self, now_us: u64, narrator: &mut Narrator<'_>) -> Result<(), AppError> {
        let _ = (now_us, narrator);
        Ok(())
    }

    /// The end, once the session is over (checked after each tick, before
    /// Ctrl-C).
    fn ended(&mut self, now_us: u64) -> Option<Self::End>;

    /// An error when waiting longer is pointless (the joiner's connect
    /// timeout); checked after Ctrl-C.
    fn give_up(&self) -> Result<(), AppError> {
        Ok(())
    }

    /// The status line, when one is due (`every`: how often).
    fn status_line(&mut self, every: Duration) -> Option<String>;

    /// What the front end shows after the tick.
    fn view(&self) -> MatchView;

    /// Tells the other side we are leaving, `elapsed` into the session.
    fn leave(&mut self, elapsed: Duration);

    /// The session whose goodbyes are delivered after leaving.
    fn datagram_session(&mut self) -> &mut dyn DatagramSession;
}

/// Runs `role` in real time until it ends, Ctrl-C is pressed or the window
/// closes; then it leaves, and its goodbyes are delivered (acknowledged,
/// or given up on after the linger) and the link conditioner's held
/// datagrams sent before this returns. `started` is the moment the
/// session's clock reads 0.
pub fn run_live<R: LiveRole>(
    role: &mut R,
    transport: &mut LiveTransport,
    started: Instant,
    narrator: &mut Narrator<'_>,
) -> Result<R::End, AppError> {
    let end = loop {
        let now_us = started.elapsed().as_micros() as u64;
        role.read_front_end(narrator.front.as_mut());
        role.tick(now_us, transport)?;
        role.handle_events(narrator)?;
        role.send_chat(now_us, narrator)?;
        if let Some(end) = role.ended(now_us) {
            break end;
        }
        if interrupted() {
            break R::INTERRUPTED;
        }
        role.give_up()?;
        if let Some(line) = role.status_line(narrator.status_every()) {
            narrator.status(&line)?;
        }
        narrator.front.present(role.game(), &role.view());
        if narrator.front.quit_requested() {
            break R::WINDOW_CLOSED;
        }
        wait_for_next_frame(transport, role.clock(), started);
    };
    role.leave(started.elapsed());
    deliver_goodbyes(role.datagram_session(), transport, started);
    narrator.end_status()?;
    Ok(end)
}

/// Pumps `session` after leaving until its goodbyes are delivered (or
/// [`GOODBYE_WAIT`] passes), then sends what the conditioner holds.
fn deliver_goodbyes(
    session: &mut dyn DatagramSession,
    transport: &mut LiveTransport,
    started: Instant,
) {
    let deadline = started.elapsed() + GOODBYE_WAIT;
    pump_until(session, transport, started, |session| {
        session.closed() || started.elapsed() >= deadline
    });
    transport.flush();
}

/// Sleeps in the kernel until `clock`'s next frame is due or a datagram
/// arrives, and at most [`LONGEST_WAIT`] (the session's timers run between
/// frames too).
fn wait_for_next_frame(transport: &mut LiveTransport, clock: &FrameClock, started: Instant) {
    let now_us = started.elapsed().as_micros() as u64;
    let wait = Duration::from_micros(clock.next_due_us().saturating_sub(now_us)).min(LONGEST_WAIT);
    transport.wait(wait);
}

/// A session that takes datagrams and hands out what to send: a player's
/// or a spectator's, pumped the same way while shaking hands and while
/// delivering goodbyes.
pub trait DatagramSession {
    /// Takes a datagram from `from` at `now`.
    fn handle_datagram(&mut self, now: Millis, from: SocketAddr, datagram: &[u8]);
    /// Hands what is due at `now` to `send`.
    fn poll(&mut self, now: Millis, send: &mut dyn FnMut(SocketAddr, &[u8]));
    /// Whether every link is closed with its goodbyes delivered.
    fn closed(&self) -> bool;
}

impl DatagramSession for NetplaySession<SocketAddr> {
    fn handle_datagram(&mut self, now: Millis, from: SocketAddr, datagram: &[u8]) {
        NetplaySession::handle_datagram(self, now, from, datagram);
    }

    fn poll(&mut self, now: Millis, send: &mut dyn FnMut(SocketAddr, &[u8])) {
        NetplaySession::poll(self, now, send);
    }

    fn closed(&self) -> bool {
        self.all_links_closed()
    }
}

impl DatagramSession for SpectatorSession<SocketAddr> {
    fn handle_datagram(&mut self, now: Millis, from: SocketAddr, datagram: &[u8]) {
        SpectatorSession::handle_datagram(self, now, from, datagram);
    }

    fn poll(&mut self, now: Millis, send: &mut dyn FnMut(SocketAddr, &[u8])) {
        SpectatorSession::poll(self, now, send);
    }

    fn closed(&self) -> bool {
        self.link_closed()
    }
}

/// Shakes hands before anything is run: pumps `session`'s datagrams every
/// millisecond until `settled` says so, `timeout` (from `started`) passes
/// or Ctrl-C is pressed.
pub(crate) fn shake_hands<S: DatagramSession>(
    session: &mut S,
    transport: &mut LiveTransport,
    started: Instant,
    timeout: Option<Duration>,
    mut settled: impl FnMut(&mut S) -> bool,
) {
    pump_until(session, transport, started, |session| {
        let timed_out = timeout.is_some_and(|timeout| started.elapsed() >= timeout);
        settled(session) || timed_out || interrupted()
    });
}

/// Pumps `session`'s datagrams every millisecond until `done` says so.
fn pump_until<S: DatagramSession + ?Sized>(
    session: &mut S,
    transport: &mut LiveTransport,
    started: Instant,
    mut done: impl FnMut(&mut S) -> bool,
) {
    let mut datagram = Vec::new();
    loop {
        let now = started.elapsed().as_millis() as u64;
        while let Some(from) = transport.receive(&mut datagram) {
            session.handle_datagram(now, from, &datagram);
        }
        session.poll(now, &mut |to, bytes| transport.send(to, bytes));
        if done(session) {
            return;
        }
        transport.wait(HANDSHAKE_POLL);
    }
}
