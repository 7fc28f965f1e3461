//! What the ICE tests share: a signaling channel in memory, and a Duel
//! player whose match runs over a socket address.

use netcade::engine::frame_clock::FrameClock;
use netcade::engine::matches::machine::NetplayMachine;
use netcade::engine::sinks::ChecksumLog;
use netcade::net::signal::{SignalChannel, SignalError};
use netcode::netplay::{NetplayConfig, NetplaySession};
use netcode::protocol::{PlayerSlots, SessionSettings, SessionToken};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::rc::Rc;

use super::LoadedCore;

/// Messages between two players in one process (what a room carries).
#[derive(Clone, Default)]
pub struct MemorySignal {
    outgoing: Rc<RefCell<VecDeque<String>>>,
    incoming: Rc<RefCell<VecDeque<String>>>,
}

impl MemorySignal {
    /// Both ends of one channel.
    pub fn pair() -> (MemorySignal, MemorySignal) {
        let a = MemorySignal::default();
        let b = MemorySignal {
            outgoing: a.incoming.clone(),
            incoming: a.outgoing.clone(),
        };
        (a, b)
    }
}

impl SignalChannel for MemorySignal {
    fn send(&mut self, message: &str) -> Result<(), SignalError> {
        self.outgoing.borrow_mut().push_back(message.to_owned());
        Ok(())
    }

    fn try_receive(&mut self) -> Result<Option<String>, SignalError> {
        Ok(self.incoming.borrow_mut().pop_front())
    }
}

/// Player `me`'s session of a two-player match against `peer` over real
/// sockets: 0 hosts (accepting `peer`), 1 dials.
pub fn two_player_config(me: u8, peer: SocketAddr) -> NetplayConfig<SocketAddr> {
    let config = NetplayConfig::new(
        SessionToken(0x0DD0_0000 + u32::from(me)),
        "duel",
        "1",
        1,
        SessionSettings::default(),
        PlayerSlots::single(me),
    );
    if me == 0 {
        config.accept(Some(peer), PlayerSlots::single(1))
    } else {
        config.dial(peer, PlayerSlots::single(0))
    }
}

/// Player `me` (0 hosts, 1 joins) of a Duel match against `peer`, stopping
/// at `frames`.
pub fn duel_player(
    me: u8,
    peer: SocketAddr,
    frames: u32,
) -> NetplayMachine<SocketAddr, LoadedCore, ChecksumLog> {
    let netplay =
        NetplaySession::new(two_player_config(me, peer), 0).expect("a two-player session");
    let mut machine = NetplayMachine::new(
        netplay,
        super::load_duel_dojo(),
        ChecksumLog::new(1 << 12),
        FrameClock::new(60.0, 1_000),
    );
    machine.stop_at_frame = Some(frames);
    machine
}
