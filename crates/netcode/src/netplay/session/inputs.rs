//! Inputs both ways: ours handed to every peer as they are confirmed, our
//! frame lag for their quality reports, and theirs (with pings and lags)
//! into the rollback session.

use std::time::Duration;

use super::{LinkState, NetplaySession};
use crate::input::Buttons;
use crate::netplay::events::{NetplayError, PeerFault};
use crate::protocol::{ConnectionState, PeerEndpoint};
use crate::rollback::{Frame, PlayerId, MAX_PLAYERS};

impl<A: Ord + Copy + std::hash::Hash> NetplaySession<A> {
    /// Every local player's confirmed input at `frame`, slots ascending.
    fn local_row(
        &self,
        frame: Frame,
        row: &mut [Buttons; MAX_PLAYERS],
    ) -> Result<(), NetplayError> {
        for (slot, player) in self.local_players.iter().enumerate() {
            let player = PlayerId::new(player);
            row[slot] = self
                .session
                .player_inputs(player, frame)?
                .next()
                .map_or(Buttons::NONE, |(_, buttons)| buttons);
        }
        Ok(())
    }

    /// Queues our inputs of every frame so far on a link's new endpoint:
    /// the match may not wait for this link, but the peer needs our inputs
    /// from the first frame.
    pub(super) fn queue_inputs_so_far(
        &self,
        endpoint: &mut PeerEndpoint,
    ) -> Result<(), NetplayError> {
        let mut row = [Buttons::NONE; MAX_PLAYERS];
        let mut frame = Frame::ZERO;
        while frame < self.next_local_frame {
            self.local_row(frame, &mut row)?;
            endpoint.add_local_input(frame, &row[..self.local_count])?;
            frame = frame.next();
        }
        Ok(())
    }

    /// Hands the local inputs confirmed since last time to every peer.
    pub(super) fn send_local_inputs(&mut self) -> Result<(), NetplayError> {
        let mut end: Option<Frame> = None;
        for player in self.local_players.iter() {
            let player_end = self.session.received_inputs_end(PlayerId::new(player));
            end = Some(end.map_or(player_end, |e: Frame| e.min(player_end)));
        }
        let Some(end) = end else { return Ok(()) };
        let mut row = [Buttons::NONE; MAX_PLAYERS];
        while self.next_local_frame < end {
            let frame = self.next_local_frame;
            self.local_row(frame, &mut row)?;
            for index in 0..self.links.len() {
                let link = &self.links[index];
                let Some(address) = link.address.filter(|_| link.state == LinkState::Open) else {
                    continue;
                };
                if let Some(endpoint) = self.endpoints.get_mut(&address) {
                    if endpoint.state() != ConnectionState::Disconnected {
                        endpoint.add_local_input(frame, &row[..self.local_count])?;
                    }
                }
            }
            self.next_local_frame = frame.next();
        }
        Ok(())
    }

    /// Our frame lag towards each peer, for its quality reports. Taken just
    /// before the session advances, when the session takes its own sample:
    /// measured after the frame counter moved on, it would read one frame
    /// high and both sides would think themselves behind and speed up.
    pub(super) fn report_frame_lags(&mut self) {
        for link in &self.links {
            let Some(address) = link.address.filter(|_| link.state == LinkState::Open) else {
                continue;
            };
            let lag = self
                .session
                .frame_lag_report(link.first_player)
                .unwrap_or(0);
            let lag = lag.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16;
            let delay = self.session.input_delay().min(u32::from(u8::MAX)) as u8;
            if let Some(endpoint) = self.endpoints.get_mut(&address) {
                endpoint.set_local_frame_advantage(lag);
                endpoint.set_local_input_delay(delay);
                endpoint.set_local_run_ahead(self.run_ahead);
            }
        }
    }

    /// A remote input of link `index`'s players, unless the player is not
    /// theirs or already leaving. One the session refuses closes the link.
    pub(super) fn on_remote_input(
        &mut self,
        index: usize,
        player: u8,
        frame: Frame,
        buttons: Buttons,
    ) {
        if !self.links[index].players.contains(player) || self.departures[player as usize].is_some()
        {
            return;
        }
        // Inputs are sent only once started: the member has begun.
        self.startup.on_start_acknowledged(index);
        let player = PlayerId::new(player);
        if let Err(error) = self.session.add_remote_input(player, frame, buttons) {
            self.close_for_fault(index, PeerFault::RejectedInput { player, error });
        }
    }

    /// The frame lag link `index`'s machine reports, for time sync.
    pub(super) fn on_remote_frame_lag(&mut self, index: usize, lag: i16) {
        for player in self.links[index].players.iter() {
            let result = self
                .session
                .set_remote_frame_lag(PlayerId::new(player), i32::from(lag));
            self.record(result);
        }
    }

    /// A round trip to link `index`'s machine, for the start-up and the
    /// input delay.
    pub(super) fn on_ping(&mut self, index: usize, rtt_ms: u32, sample_ms: u32) {
        self.startup.on_round_trip(index, sample_ms);
        let rtt = Duration::from_millis(u64::from(rtt_ms));
        for player in self.links[index].players.iter() {
            let result = self.session.set_ping(PlayerId::new(player), rtt);
            self.record(result);
        }
    }
}
