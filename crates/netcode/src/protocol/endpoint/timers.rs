//! What goes out when: silence clocks, throttling a quiet peer, and the
//! poll that sends every datagram due.

use super::{ConnectionState, Event, Millis, PeerEndpoint};
use crate::protocol::messages::*;

impl PeerEndpoint {
    /// Runs timers and hands every datagram due now to `send`, one call each.
    pub fn poll(&mut self, now: Millis, send: &mut dyn FnMut(&[u8])) {
        self.latest_now = self.latest_now.max(now);
        if self.state == ConnectionState::Disconnected {
            self.poll_leaving(now, send);
            return;
        }
        let silent_for = now.saturating_sub(self.last_received_at);
        if self.time_out_after(silent_for) {
            return;
        }
        if self.state == ConnectionState::Running
            && silent_for >= self.config.interrupt_after_ms
            && !self.interrupted
        {
            self.interrupted = true;
            self.events.push_back(Event::NetworkInterrupted {
                silent_for_ms: silent_for,
            });
        }
        let Some(mut budget) = self.send_budget(now, silent_for) else {
            return;
        };
        let sent_before = self.stats.datagrams_sent;
        match self.state {
            ConnectionState::Handshaking => self.poll_handshake(now, send),
            ConnectionState::Running => self.poll_running(now, &mut budget, send),
            ConnectionState::Disconnected => {}
        }
        let idle = self.stats.datagrams_sent == sent_before
            && self
                .last_sent_at
                .is_none_or(|at| now.saturating_sub(at) >= self.config.keep_alive_interval_ms);
        if idle && self.state == ConnectionState::Running {
            self.emit(now, &Message::KeepAlive, send);
        }
    }

    /// Datagrams this poll may send (`usize::MAX`: no limit), or `None` for
    /// none. Seed 000: when the peer has gone quiet, send only a few a second.
    fn send_budget(&self, now: Millis, silent_for: Millis) -> Option<usize> {
        if silent_for < self.config.throttle_after_ms {
            return Some(usize::MAX);
        }
        let recently = self
            .last_sent_at
            .is_some_and(|at| now.saturating_sub(at) < self.config.throttled_interval_ms);
        (!recently).then_some(1)
    }

    /// [`PeerEndpoint::poll`] collecting the datagrams into vectors.
    pub fn poll_datagrams(&mut self, now: Millis) -> Vec<Vec<u8>> {
        let mut datagrams = Vec::new();
        self.poll(now, &mut |datagram| datagrams.push(datagram.to_vec()));
        datagrams
    }

    fn poll_running(&mut self, now: Millis, budget: &mut usize, send: &mut dyn FnMut(&[u8])) {
        let wait = self.config.piggyback_wait_ms;
        let waited = |since: Option<Millis>| since.is_some_and(|at| now.saturating_sub(at) >= wait);
        // Most valuable first, as a throttled poll sends only one.
        if self.key_proof_due && take(budget) {
            self.key_proof_due = false;
            self.emit(now, &Message::KeepAlive, send);
        }
        if self.proof_due.is_some() && take(budget) {
            self.send_rejoin_proof(now, send);
        }
        let resend_due = self
            .last_input_sent_at
            .is_none_or(|at| now.saturating_sub(at) >= self.config.input_resend_ms);
        let input_due = self.new_local_input
            || waited(self.ack_due_since)
            || (resend_due && (!self.unacked.is_empty() || self.status_sends_left > 0));
        if input_due && take(budget) {
            self.send_inputs(now, send);
        }
        // The start-up's messages: each due one goes out once.
        if self.start_ack_due && take(budget) {
            self.start_ack_due = false;
            self.emit(now, &Message::StartAck, send);
        }
        if let Some(delay_ms) = self.start_due {
            if take(budget) {
                self.start_due = None;
                self.emit(now, &Message::Start { delay_ms }, send);
            }
        }
        if self.ready_due && take(budget) {
            self.ready_due = false;
            self.emit(now, &Message::Ready, send);
        }
        if self.roster_due.is_some() && take(budget) {
            if let Some(entries) = self.roster_due.take() {
                self.emit(now, &Message::Roster(entries), send);
            }
        }
        if let Some(reply) = self.handshake_reply.take() {
            if take(budget) {
                self.emit(now, &reply, send);
            }
        }
        // Reports no input datagram took within the wait go alone.
        if waited(self.reply_due.map(|(_, arrived)| arrived)) && take(budget) {
            if let Some(reply) = self.take_quality_reply(now) {
                self.emit(now, &Message::QualityReply(reply), send);
            }
        }
        if waited(Some(self.next_quality_at)) && take(budget) {
            let report = self.take_quality_report(now);
            self.emit(now, &Message::QualityReport(report), send);
        }
        if waited(self.checksum_due_since) && take(budget) {
            let mut entries = std::mem::take(&mut self.message_scratch);
            self.take_checksums(&mut entries);
            let report = Message::ChecksumReport { entries };
            self.emit(now, &report, send);
            if let Message::ChecksumReport { entries } = report {
                self.message_scratch = entries;
            }
        }
        if let Some(id) = self.blob_ack_due {
            if take(budget) {
                self.blob_ack_due = None;
                let ack = self.blob_ack(id);
                self.emit(now, &Message::BlobAck(ack), send);
            }
        }
        if *budget == usize::MAX {
            // Chat waits while the peer is quiet, as blobs do; it goes
            // after everything the match needs, so it never delays an input.
            self.send_chat_lines(now, send);
            // Blobs are bulk: they wait while the peer is quiet.
            self.send_blob_chunks(now, send);
        }
    }
}

/// Spends one datagram of a poll's budget, if any is left.
fn take(budget: &mut usize) -> bool {
    if *budget == 0 {
        return false;
    }
    if *budget != usize::MAX {
        *budget -= 1;
    }
    true
}
