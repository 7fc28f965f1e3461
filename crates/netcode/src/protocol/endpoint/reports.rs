//! Quality reports (clock and frame advantage), their echoes (ping) and
//! checksum reports: each rides on an input datagram when one goes soon.

use super::{Event, Millis, PeerEndpoint};
use crate::checksum::Checksum;
use crate::protocol::messages::*;
use crate::rollback::Frame;

/// Times each new checksum report goes out (the first, then at quality ticks).
const CHECKSUM_REPEATS: u8 = 3;

impl PeerEndpoint {
    /// Our local input delay, sent with the next quality reports.
    pub fn set_local_input_delay(&mut self, frames: u8) {
        self.local_input_delay = frames;
    }

    /// Our run-ahead in frames, sent with the next quality reports.
    pub fn set_local_run_ahead(&mut self, frames: u8) {
        self.local_run_ahead = frames;
    }

    /// Our frame advantage, sent with the next quality reports.
    pub fn set_local_frame_advantage(&mut self, frames: i16) {
        self.local_frame_advantage = frames;
    }

    /// Sends the checksum of a confirmed frame (repeated a few times against
    /// loss), with the next input datagram if one goes out soon.
    pub fn send_checksum(&mut self, frame: Frame, checksum: Checksum) {
        if self.recent_checksums.len() == MAX_CHECKSUMS_PER_REPORT {
            self.recent_checksums.pop_front();
        }
        self.recent_checksums
            .push_back(ChecksumEntry { frame, checksum });
        self.checksum_sends_left = CHECKSUM_REPEATS;
        self.checksum_due_since.get_or_insert(self.latest_now);
    }

    /// How often quality reports (and so ping measurements) go out; the
    /// start-up measures round trips faster than play needs to.
    pub fn set_quality_report_interval(&mut self, interval_ms: Millis) {
        self.config.quality_report_interval_ms = interval_ms;
    }

    pub(super) fn on_piggyback(&mut self, now: Millis, sequence: Sequence, piggyback: &Piggyback) {
        if let Some(report) = piggyback.quality_report {
            self.on_quality_report(now, sequence, report);
        }
        if let Some(reply) = piggyback.quality_reply {
            self.on_quality_reply(now, reply);
        }
        self.on_checksums(&piggyback.checksums);
    }

    pub(super) fn on_quality_report(
        &mut self,
        now: Millis,
        sequence: Sequence,
        report: QualityReport,
    ) {
        self.reply_due = Some((report.timestamp_ms, now));
        let newest = self
            .newest_quality
            .is_none_or(|seen| sequence.is_newer_than(seen));
        if newest {
            self.newest_quality = Some(sequence);
            self.stats.remote_frame_advantage = report.frame_advantage;
            self.stats.remote_input_delay = Some(report.input_delay);
            self.stats.remote_run_ahead = Some(report.run_ahead);
            self.events
                .push_back(Event::RemoteFrameAdvantage(report.frame_advantage));
        }
    }

    pub(super) fn on_quality_reply(&mut self, now: Millis, reply: QualityReply) {
        let Some(sample) = (now as u32)
            .wrapping_sub(reply.echoed_timestamp_ms)
            .checked_sub(u32::from(reply.held_ms))
        else {
            return; // held longer than the whole round trip: not our echo
        };
        if sample > 60_000 {
            return; // not an echo of anything we sent recently
        }
        let smoothed = match self.smoothed_rtt_ms {
            None => sample as f64,
            Some(previous) => previous * 0.875 + sample as f64 * 0.125,
        };
        self.smoothed_rtt_ms = Some(smoothed);
        self.events.push_back(Event::Ping {
            rtt_ms: smoothed.round() as u32,
            sample_ms: sample,
        });
    }

    pub(super) fn on_checksums(&mut self, entries: &[ChecksumEntry]) {
        for entry in entries {
            if self
                .last_remote_checksum
                .is_none_or(|last| entry.frame > last)
            {
                self.last_remote_checksum = Some(entry.frame);
                self.events.push_back(Event::RemoteChecksum {
                    frame: entry.frame,
                    checksum: entry.checksum,
                });
            }
        }
    }

    /// Our quality report, now; the next is due an interval later (and
    /// brings a repeat of recent checksums while repeats are left).
    pub(super) fn take_quality_report(&mut self, now: Millis) -> QualityReport {
        self.next_quality_at = now + self.config.quality_report_interval_ms;
        if self.checksum_sends_left > 0 {
            self.checksum_due_since.get_or_insert(now);
        }
        QualityReport {
            timestamp_ms: now as u32,
            frame_advantage: self.local_frame_advantage,
            input_delay: self.local_input_delay,
            run_ahead: self.local_run_ahead,
        }
    }

    /// The echo of the peer's latest quality report, if one is owed.
    pub(super) fn take_quality_reply(&mut self, now: Millis) -> Option<QualityReply> {
        let (echoed_timestamp_ms, arrived) = self.reply_due.take()?;
        Some(QualityReply {
            echoed_timestamp_ms,
            held_ms: now.saturating_sub(arrived).min(u64::from(u16::MAX)) as u16,
        })
    }

    /// Our recent checksums into `entries` (cleared first).
    pub(super) fn take_checksums(&mut self, entries: &mut Vec<ChecksumEntry>) {
        self.checksum_due_since = None;
        self.checksum_sends_left = self.checksum_sends_left.saturating_sub(1);
        entries.clear();
        entries.extend(self.recent_checksums.iter().copied());
    }
}
