//! netcade's rollback session against GGRS 0.13 on the same workloads, with a
//! stub game so that only the netcode is measured.
//!
//! Run: `cargo bench --bench netcode`. Each benchmark's time is for one frame
//! (on every peer, for the two-peer workloads); the README divides by the
//! number of peers and quotes the medians and the ratio to GGRS.

#[path = "support/ggrs_harness.rs"]
mod ggrs_harness;
#[path = "support/stub_game.rs"]
mod stub_game;

use criterion::{criterion_group, criterion_main, Criterion};
use netcade::checksum::Checksum;
use netcade::input::Buttons;
use netcade::rollback::{PlayerId, Request, SyncTestSession};
use stub_game::{RandomPlay, StubState};

const CHECK_DISTANCE: u32 = 7;

/// netcade's sync test, fulfilling its requests on the stub game.
struct NetcadeSyncTest {
    session: SyncTestSession,
    game: StubState,
    play: RandomPlay,
    requests: Vec<Request>,
}

impl NetcadeSyncTest {
    fn new(check_distance: u32) -> Self {
        NetcadeSyncTest {
            session: SyncTestSession::new(2, check_distance).unwrap(),
            game: StubState::default(),
            play: RandomPlay::new(7),
            requests: Vec::new(),
        }
    }

    fn frame(&mut self) {
        for player in 0..2 {
            let buttons = Buttons::from_bits(self.play.buttons(player));
            self.session
                .add_local_input(PlayerId::new(player as u8), buttons)
                .unwrap();
        }
        self.session
            .advance_frame(&mut self.requests)
            .expect("deterministic stub");
        for request in &self.requests {
            match *request {
                Request::Save { frame } => {
                    let slot = self.session.state_slot_mut(frame).expect("slot");
                    let buffer = slot.buffer_mut();
                    buffer.clear();
                    buffer.extend_from_slice(&self.game.to_bytes());
                    slot.set_checksum(Checksum(self.game.checksum()));
                }
                Request::Load { frame } => {
                    let slot = self.session.saved_state(frame).expect("saved");
                    self.game = StubState::from_bytes(slot.data());
                }
                Request::Advance { inputs, .. } => {
                    self.game.advance(&[inputs[0].bits(), inputs[1].bits()]);
                }
            }
        }
    }
}

fn sync_test(c: &mut Criterion) {
    let mut group = c.benchmark_group("synctest_distance_7");
    let mut ours = NetcadeSyncTest::new(CHECK_DISTANCE);
    group.bench_function("netcade", |b| b.iter(|| ours.frame()));
    let mut theirs = ggrs_harness::GgrsSyncTest::new(CHECK_DISTANCE as usize);
    group.bench_function("ggrs", |b| b.iter(|| theirs.frame()));
    group.finish();
}

criterion_group!(benches, sync_test);
criterion_main!(benches);
