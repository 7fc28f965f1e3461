//! Spectators: each is sent the savestate of a recent final frame, then
//! every final frame's inputs, from a backlog it must keep up with. A
//! lockstep match keeps no states: its spectators start from frame 0 (the
//! host's start state, or none: the content as loaded), while frame 0 is
//! in the backlog.

use std::collections::VecDeque;

use super::unproven::Seat;
use super::NetplaySession;
use crate::input::Buttons;
use crate::netplay::checkpoint_state;
use crate::netplay::events::{NetplayEvent, SpectatorDrop};
use crate::protocol::{
    self, ChatRateLimit, Event as NetEvent, Millis, PeerEndpoint, PlayerSlots, RejectReason,
    MAX_BLOB_SIZE, MAX_UNACKED_FRAMES,
};
use crate::rollback::{Frame, MAX_PLAYERS};

/// A machine watching the match.
#[derive(Clone, Copy, Debug)]
pub(super) struct Spectator<A> {
    /// Its number, from 1 in the order spectators came ("spectator 2" in the chat).
    pub(super) number: u32,
    pub(super) address: A,
    /// The next final frame to hand to its endpoint.
    next_frame: Frame,
    pub(super) open: bool,
    snapshot: Snapshot,
    /// Its chat lines, limited as one sender's whatever names they claim:
    /// each is relayed to every other machine.
    pub(super) chat_limit: ChatRateLimit,
}

impl<A> Spectator<A> {
    /// Spectator `number`, just arrived at `address` at `now`.
    pub(super) fn arrived(number: u32, address: A, now: Millis) -> Self {
        Spectator {
            number,
            address,
            next_frame: Frame::ZERO,
            open: true,
            snapshot: Snapshot::Due,
            chat_limit: ChatRateLimit::new(now),
        }
    }
}

/// Where a spectator is with the savestate it starts watching from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Snapshot {
    /// Not sent yet: it goes once the spectator proved its address.
    Due,
    /// On its way (the spectator's inputs start at its frame).
    Sending,
    /// The spectator has it: inputs flow.
    Delivered,
}

/// Final frames kept for spectators (a minute at 60 fps, 8 bytes each):
/// a spectator is fed from here while it receives its savestate and until
/// it acknowledges, and is dropped once it needs a frame older than this.
pub const SPECTATOR_BACKLOG_FRAMES: usize = 3600;

/// Every player's final inputs of the latest final frames, for spectators.
#[derive(Clone, Debug, Default)]
pub(super) struct FinalRows {
    /// The frame of `rows[0]`.
    start: Frame,
    rows: VecDeque<[Buttons; MAX_PLAYERS]>,
}

impl FinalRows {
    /// One past the last frame held.
    fn end(&self) -> Frame {
        self.start + self.rows.len() as u32
    }

    fn push(&mut self, row: [Buttons; MAX_PLAYERS]) {
        if self.rows.len() == SPECTATOR_BACKLOG_FRAMES {
            self.rows.pop_front();
            self.start = self.start.next();
        }
        self.rows.push_back(row);
    }

    fn get(&self, frame: Frame) -> Option<&[Buttons; MAX_PLAYERS]> {
        if frame < self.start {
            return None;
        }
        self.rows.get((frame - self.start) as usize)
    }
}

impl<A> Spectator<A> {
    /// Sends the savestate of `frame` the spectator starts from, its inputs
    /// to follow from that frame; or the reason to drop it, if the state is
    /// too large to send.
    fn send_snapshot(
        &mut self,
        endpoint: &mut PeerEndpoint,
        frame: Frame,
        state: &[u8],
    ) -> Option<SpectatorDrop> {
        let blob = checkpoint_state::compress_checkpoint(frame, state);
        if blob.len() > MAX_BLOB_SIZE {
            return Some(SpectatorDrop::StateTooLarge { bytes: blob.len() });
        }
        if endpoint.send_inputs_from(frame) && endpoint.send_blob(blob).is_ok() {
            self.next_frame = frame;
            self.snapshot = Snapshot::Sending;
        }
        None
    }

    /// Hands the endpoint the final frames since the spectator's last ones.
    /// A late joiner catches up over several polls, as its acks make room,
    /// rather than overflowing the endpoint's queue.
    fn feed(&mut self, endpoint: &mut PeerEndpoint, rows: &FinalRows, players: usize) {
        let room = MAX_UNACKED_FRAMES.saturating_sub(endpoint.stats().unacked_frames + 1);
        let end = rows.end().min(self.next_frame + room);
        while self.next_frame < end {
            let frame = self.next_frame;
            let Some(row) = rows.get(frame) else {
                break;
            };
            if endpoint.add_local_input(frame, &row[..players]).is_err() {
                break;
            }
            self.next_frame = frame.next();
        }
    }
}

impl<A: Ord + Copy + std::hash::Hash> NetplaySession<A> {
    /// Spectators currently fed.
    pub fn spectator_count(&self) -> usize {
        self.spectators.iter().filter(|s| s.open).count()
    }

    /// A spectator's Hello: it joins if spectators are welcome and there
    /// is room, and is refused otherwise. Returns whether it was taken.
    pub(super) fn accept_spectator(&mut self, now: Millis, from: A, datagram: &[u8]) -> bool {
        if !self.config.accept_spectators {
            self.refuse(from, RejectReason::NoSpectators);
            return true;
        }
        // Closed ones are not counted: they are dropped within a few
        // polls, as soon as their goodbyes are out.
        if self.spectator_count() >= self.config.max_spectators {
            self.refuse(from, RejectReason::SpectatorsFull);
            return true;
        }
        // We relay every player's confirmed input to the spectator.
        let all = PlayerSlots((1u16 << self.session.players()) as u8 - 1);
        let mut handshake = self.config.handshake(all);
        // A spectator is sent no start state: it gets the savestate of
        // a recent final frame instead (see `feed_spectators`).
        handshake.start_state = false;
        let mut config = self.endpoint_config(Some(self.config.token), handshake);
        // A spectator only watches: it has nothing to send us in bulk.
        config.max_blob_size = 0;
        let Ok(mut endpoint) = PeerEndpoint::new(config, now) else {
            return false;
        };
        endpoint.handle_datagram(now, datagram);
        match Self::refusal_of(&mut endpoint) {
            // Another core or content: it is told why, and nothing of it
            // is kept.
            Some(rejection) => {
                self.refuse(from, rejection.reason);
                self.events
                    .push_back(NetplayEvent::SpectatorRefused(rejection));
            }
            // Its place is taken once it proves itself (see `unproven`).
            None => self.hold_unproven(now, from, Seat::Spectator, endpoint),
        }
        true
    }

    /// A spectator at `from` proved itself: it is fed from now on.
    pub(super) fn add_spectator(&mut self, from: A) {
        // Numbered for the chat in the order they came, from 1.
        let number = self.spectators.iter().map(|s| s.number).max().unwrap_or(0) + 1;
        self.spectators
            .push(Spectator::arrived(number, from, self.now));
        let keys = self.endpoints.get(&from).and_then(|endpoint| {
            Some(crate::netplay::LinkFingerprints {
                players: PlayerSlots::NONE,
                link: endpoint.fingerprint()?,
                peer_key: endpoint.peer_key()?,
            })
        });
        self.events
            .push_back(NetplayEvent::SpectatorJoined { keys });
    }

    /// Forgets spectators whose connection is over (goodbyes sent), so
    /// that spectators coming and going leave nothing behind.
    pub(super) fn remove_closed_spectators(&mut self) {
        let endpoints = &mut self.endpoints;
        self.spectators.retain(|spectator| {
            let closed = endpoints
                .get(&spectator.address)
                .is_none_or(PeerEndpoint::is_closed);
            if closed {
                endpoints.remove(&spectator.address);
            }
            !closed
        });
    }

    /// Keeps the inputs of every frame final since last time, for spectators.
    fn extend_final_rows(&mut self) {
        let Some(finalized) = self.finalized_frame() else {
            return;
        };
        let from = self.final_rows.end();
        // Inputs of frames past the match's last may be final too (sent
        // ahead by the input delay), but those frames are never played.
        let end = self
            .config
            .match_frames
            .map_or(Frame::new(u32::MAX), Frame::new);
        match self.session.confirmed_inputs(from) {
            Ok(inputs) => {
                for (_, row) in inputs.take_while(|&(frame, _)| frame <= finalized && frame < end) {
                    self.final_rows.push(row);
                }
            }
            Err(_) => {
                // Not polled for longer than the session keeps inputs: start
                // over from the next final frame (spectators needing the
                // frames missed are dropped).
                self.final_rows = FinalRows {
                    start: finalized.next(),
                    rows: VecDeque::new(),
                };
            }
        }
    }

    /// The frame a spectator joining now starts from: the latest whose
    /// saved state (taken at its start) follows only final inputs and is
    /// still the one every machine has, and whose inputs we keep.
    fn snapshot_frame(&self) -> Option<Frame> {
        let mut frame = self.finalized_frame().map_or(Frame::ZERO, Frame::next);
        // Only frames already run have their state saved.
        frame = frame.min(self.session.current_frame().previous()?);
        if let Some(wrong) = self.session.pending_rollback() {
            frame = frame.min(wrong);
        }
        (frame >= self.final_rows.start).then_some(frame)
    }

    /// Sends each new spectator the savestate it starts from, and hands
    /// each the frames final since its last ones. A spectator never holds
    /// the players back: one that needs frames older than the backlog kept
    /// is dropped.
    pub(super) fn feed_spectators(&mut self) {
        if self.spectators.is_empty() {
            if self.config.accept_spectators {
                self.extend_final_rows();
            }
            return;
        }
        self.extend_final_rows();
        let players = self.session.players();
        let lockstep = self.session.config().is_lockstep();
        let snapshot = if lockstep {
            (self.final_rows.start == Frame::ZERO).then(|| {
                (
                    Frame::ZERO,
                    self.config.start_state.as_deref().unwrap_or_default(),
                )
            })
        } else {
            self.snapshot_frame()
                .and_then(|frame| Some((frame, self.session.saved_state(frame)?.data())))
        };
        let lead = self.spectator_lead();
        for spectator in &mut self.spectators {
            if !spectator.open {
                continue;
            }
            let Some(endpoint) = self.endpoints.get_mut(&spectator.address) else {
                continue;
            };
            // Nothing in bulk to an address until it shows it got our
            // Welcome there: a Hello in someone else's name must not turn
            // us into a stream of inputs aimed at them.
            if !endpoint.is_running() || !endpoint.peer_knows_session() {
                continue;
            }
            endpoint.set_local_frame_advantage(lead);
            let drop = match spectator.snapshot {
                Snapshot::Due if lockstep && snapshot.is_none() => {
                    Some(SpectatorDrop::LockstepStartGone {
                        frames: SPECTATOR_BACKLOG_FRAMES as u32,
                    })
                }
                Snapshot::Due => snapshot
                    .and_then(|(frame, state)| spectator.send_snapshot(endpoint, frame, state)),
                // Still sending, or sent: either way a spectator whose first
                // frame left the backlog can never be fed, so it goes now
                // rather than holding its blob on the players' uplink.
                Snapshot::Sending | Snapshot::Delivered
                    if spectator.next_frame < self.final_rows.start =>
                {
                    Some(SpectatorDrop::FellBehind {
                        frames: SPECTATOR_BACKLOG_FRAMES as u32,
                    })
                }
                Snapshot::Sending => None,
                Snapshot::Delivered => {
                    spectator.feed(endpoint, &self.final_rows, players);
                    None
                }
            };
            if let Some(reason) = drop {
                endpoint.disconnect(protocol::DisconnectReason::Quit);
                spectator.open = false;
                self.events
                    .push_back(NetplayEvent::SpectatorDropped { reason });
            }
        }
    }

    /// How far our present is past the frames spectators are fed: sent to
    /// them in the frame-advantage field of quality reports, so that each
    /// can tell how far behind live it watches.
    fn spectator_lead(&self) -> i16 {
        let current = self.session.current_frame().number();
        let lead = current - self.final_rows.end().number().min(current);
        lead.min(i16::MAX as u32) as i16
    }

    /// The match ended: every spectator is told goodbye.
    pub(super) fn close_spectators(&mut self) {
        for spectator in &mut self.spectators {
            if let Some(endpoint) = self.endpoints.get_mut(&spectator.address) {
                endpoint.disconnect(protocol::DisconnectReason::Quit);
            }
            spectator.open = false;
        }
    }

    pub(super) fn on_spectator_event(&mut self, address: A, event: NetEvent) {
        let event = match event {
            NetEvent::Chat(line) => return self.on_spectator_chat(address, line),
            event => event,
        };
        if let NetEvent::RemoteChecksum { frame, checksum } = event {
            self.on_spectator_checksum(address, frame, checksum);
        }
        if let NetEvent::BlobDelivered { .. } = event {
            if let Some(spectator) = self
                .spectators
                .iter_mut()
                .find(|s| s.address == address && s.snapshot == Snapshot::Sending)
            {
                spectator.snapshot = Snapshot::Delivered;
            }
        }
        if let NetEvent::Disconnected { .. } = event {
            if let Some(spectator) = self
                .spectators
                .iter_mut()
                .find(|s| s.address == address && s.open)
            {
                spectator.open = false;
                self.events.push_back(NetplayEvent::SpectatorLeft);
            }
        }
    }
}
