//! Inputs both ways: ours queued until acknowledged, the peer's taken in
//! order and acknowledged, and each side's view of who dropped.

use super::{ConnectionState, DisconnectCause, EndpointError, Event, Millis, PeerEndpoint};
use crate::input::Buttons;
use crate::protocol::codec::{self, InputPrefix};
use crate::protocol::messages::*;
use crate::rollback::Frame;

/// Our inputs kept for a peer that has not acknowledged them: a peer that
/// stays connected but never acks would otherwise make the queue grow
/// without end (a minute at 60 fps; a live peer acks within its round trip).
pub const MAX_UNACKED_FRAMES: u32 = 4096;

/// Input datagrams sent after our view of who dropped changed, even with no
/// input to carry: peers stalled waiting for a leaver send no new inputs,
/// yet must learn each other's view to agree on the frame the leaver stops at.
const STATUS_REPEATS: u8 = 5;

impl PeerEndpoint {
    /// Queues our players' inputs for `frame` (one per local slot, ascending
    /// slot order). Frames must come one after another from the first frame.
    /// When the peer already leaves [`MAX_UNACKED_FRAMES`] unacknowledged,
    /// the connection closes instead ([`DisconnectCause::Unacknowledged`]).
    pub fn add_local_input(
        &mut self,
        frame: Frame,
        inputs: &[Buttons],
    ) -> Result<(), EndpointError> {
        if self.state == ConnectionState::Disconnected {
            return Err(EndpointError::Disconnected);
        }
        if inputs.len() != self.local_slot_count {
            return Err(EndpointError::WrongSlotCount {
                expected: self.local_slot_count,
                got: inputs.len(),
            });
        }
        if frame != self.next_local_frame {
            return Err(EndpointError::NotNextFrame {
                expected: self.next_local_frame,
                got: frame,
            });
        }
        let unacked_frames = self.next_local_frame - self.unacked_start;
        if unacked_frames >= MAX_UNACKED_FRAMES {
            self.disconnect(DisconnectReason::ProtocolError);
            self.events.push_back(Event::Disconnected {
                cause: DisconnectCause::Unacknowledged {
                    frames: unacked_frames,
                },
            });
            return Ok(());
        }
        self.unacked.extend(inputs.iter().copied());
        self.next_local_frame = frame.next();
        self.new_local_input = true;
        Ok(())
    }

    /// Records our view of `player`'s connection, sent with every input datagram:
    /// `Some(frame)` once they dropped (their input is NONE from `frame` on).
    /// A change goes out at once and a few more times, input or not.
    pub fn set_local_connection_status(&mut self, player: u8, disconnected_at: Option<Frame>) {
        if let Some(slot) = self.local_status.disconnected_at.get_mut(player as usize) {
            if *slot != disconnected_at {
                *slot = disconnected_at;
                self.status_sends_left = STATUS_REPEATS;
            }
        }
    }

    /// Starts accepting the peer's inputs at `frame` instead of the configured
    /// first frame — for a spectator that learns the frame from the savestate
    /// it was sent. Only possible before any of the peer's inputs arrived.
    pub fn expect_remote_inputs_from(&mut self, frame: Frame) -> bool {
        if self.next_remote_frame != self.config.first_frame {
            return false;
        }
        self.next_remote_frame = frame;
        self.config.first_frame = frame;
        true
    }

    /// Starts our inputs at `frame` instead of the configured first frame —
    /// for the host of a spectator, which feeds it from the frame of the
    /// savestate it sends. Only possible before any input was queued.
    pub fn send_inputs_from(&mut self, frame: Frame) -> bool {
        if self.next_local_frame != self.config.first_frame || !self.unacked.is_empty() {
            return false;
        }
        self.next_local_frame = frame;
        self.unacked_start = frame;
        true
    }

    pub(super) fn on_ack(&mut self, next_expected: Frame) {
        // Acks only move forward; a peer cannot ack what we never sent.
        let next_expected = next_expected.min(self.next_local_frame);
        if next_expected > self.unacked_start {
            let frames = (next_expected - self.unacked_start) as usize;
            self.unacked.drain(..frames * self.local_slot_count);
            self.unacked_start = next_expected;
        }
    }

    pub(super) fn on_input(&mut self, now: Millis, input: &InputMessage) {
        self.on_ack(input.next_expected);
        for (player, at) in input.status.disconnected_at.iter().enumerate() {
            let Some(at) = *at else { continue };
            let known = &mut self.remote_status.disconnected_at[player];
            if known.is_none_or(|earlier| at < earlier) {
                *known = Some(at);
                self.events.push_back(Event::RemoteSeesDisconnect {
                    player: player as u8,
                    at,
                });
            }
        }
        if input.frame_count == 0 {
            return;
        }
        if input.slots != self.remote_slots || input.start_frame > self.next_remote_frame {
            // Not the players agreed on, or a gap that acks make impossible.
            self.stats.dropped_unexpected += 1;
            return;
        }
        let end = input.start_frame + input.frame_count;
        if end <= self.next_remote_frame {
            // Everything in it arrived before. Not acked again: answering
            // repeats with repeats would echo datagrams back and forth; our
            // next ack covers these frames too.
            return;
        }
        let slot_count = input.slots.count();
        let skip = (self.next_remote_frame - input.start_frame) as usize;
        for (offset, row) in input.inputs.chunks_exact(slot_count).enumerate().skip(skip) {
            let frame = input.start_frame + offset as u32;
            for (player, &buttons) in input.slots.iter().zip(row) {
                self.events.push_back(Event::RemoteInput {
                    player,
                    frame,
                    buttons,
                });
            }
        }
        self.next_remote_frame = end;
        self.ack_due_since.get_or_insert(now);
    }

    pub(super) fn send_inputs(&mut self, now: Millis, send: &mut dyn FnMut(&[u8])) {
        self.new_local_input = false;
        self.ack_due_since = None;
        self.status_sends_left = self.status_sends_left.saturating_sub(1);
        self.last_input_sent_at = Some(now);
        if self.local_slot_count == 0 {
            let ack = Message::InputAck {
                next_expected: self.next_remote_frame,
            };
            self.emit(now, &ack, send);
            return;
        }
        // Whatever report is due rides along rather than costing a datagram.
        let mut piggyback = std::mem::take(&mut self.piggyback_scratch);
        piggyback.quality_report =
            (now >= self.next_quality_at).then(|| self.take_quality_report(now));
        piggyback.quality_reply = self.take_quality_reply(now);
        piggyback.checksums.clear();
        if self.checksum_due_since.is_some() {
            self.take_checksums(&mut piggyback.checksums);
        }
        let header = self.next_header();
        let prefix = InputPrefix {
            start_frame: self.unacked_start,
            next_expected: self.next_remote_frame,
            slots: self.config.local.local_slots,
            status: &self.local_status,
            piggyback: &piggyback,
        };
        let inputs = self.unacked.make_contiguous();
        codec::encode_input_fitting(&header, prefix, inputs, &mut self.scratch);
        self.piggyback_scratch = piggyback;
        self.stats.input_datagrams_sent += 1;
        self.seal_and_send(now, send);
    }
}
