//! netcade's rollback session and sync-test engine against GGRS 0.13 on the
//! same workloads, with a stub game so that only the netcode is measured.
//!
//! Run: `cargo bench --bench netcode`. Each benchmark's time is for one frame
//! (on every peer, for the two-peer workloads); the README divides by the
//! number of peers and quotes the medians and the ratio to GGRS.

#[path = "support/ggrs_harness.rs"]
mod ggrs_harness;
#[path = "support/stub_game.rs"]
mod stub_game;

use criterion::{criterion_group, criterion_main, Criterion};
use netcode::checksum::Checksum;
use netcode::emulator::{Emulator, EmulatorError, VideoFrame};
use netcode::input::Buttons;
use netcode::netplay::{NetplayConfig, NetplaySession};
use netcode::protocol::codec::input_payload_len;
use netcode::protocol::{Millis, PlayerSlots, SessionSettings, SessionToken};
use netcode::rollback::synctest::{Compare, SyncTest, SyncTestSettings};
use netcode::rollback::{FrameOutcome, PlayerId, Request, SessionState};
use std::collections::VecDeque;
use stub_game::{RandomPlay, StubState};

const CHECK_DISTANCE: u32 = 7;

/// The stub game as an [`Emulator`], for netcade's sync-test engine (the
/// one `netcade synctest` runs). Its memory is its serialized state.
struct StubEmulator {
    state: StubState,
    memory: [u8; 36],
}

impl Emulator for StubEmulator {
    fn run_frame(&mut self, inputs: &[Buttons], _render: bool) {
        self.state.advance(&[inputs[0].bits(), inputs[1].bits()]);
        self.memory = self.state.to_bytes();
    }
    fn save_state(&mut self, into: &mut Vec<u8>) -> Result<(), EmulatorError> {
        into.clear();
        into.extend_from_slice(&self.memory);
        Ok(())
    }
    fn load_state(&mut self, from: &[u8]) -> Result<(), EmulatorError> {
        self.state = StubState::from_bytes(from);
        self.memory = self.state.to_bytes();
        Ok(())
    }
    fn game_memory(&self) -> &[u8] {
        &self.memory
    }
    fn video_frame(&self) -> Option<VideoFrame<'_>> {
        None
    }
    fn audio_samples(&self) -> &[i16] {
        &[]
    }
    fn frames_per_second(&self) -> f64 {
        60.0
    }
    fn sample_rate(&self) -> f64 {
        48_000.0
    }
}

/// netcade's sync-test engine on the stub game, one frame per call,
/// comparing game memory as GGRS compares its checksums.
struct NetcadeSyncTest {
    test: SyncTest,
    game: StubEmulator,
    play: RandomPlay,
}

impl NetcadeSyncTest {
    fn new(check_distance: u32) -> Self {
        let settings = SyncTestSettings {
            compare: Compare {
                memory: true,
                ..Compare::NONE
            },
            ..SyncTestSettings::new(u32::MAX, check_distance)
        };
        NetcadeSyncTest {
            test: SyncTest::new(settings).unwrap(),
            game: StubEmulator {
                state: StubState::default(),
                memory: StubState::default().to_bytes(),
            },
            play: RandomPlay::new(7),
        }
    }

    fn frame(&mut self) {
        let mut inputs = [Buttons::NONE; 4];
        for (player, held) in inputs.iter_mut().enumerate().take(2) {
            *held = Buttons::from_bits(self.play.buttons(player));
        }
        self.test.run_frame(&mut self.game, inputs).unwrap();
        assert!(self.test.report().desync.is_none(), "deterministic stub");
    }
}

/// Carries out a session's requests on the stub game.
fn fulfil(netplay: &mut NetplaySession<usize>, requests: &[Request], game: &mut StubState) {
    for request in requests {
        match *request {
            Request::Save { frame } => {
                let slot = netplay.state_slot_mut(frame).expect("slot");
                let buffer = slot.buffer_mut();
                buffer.clear();
                buffer.extend_from_slice(&game.to_bytes());
                slot.set_checksum(Checksum(game.checksum()));
            }
            Request::Checksum { frame } => {
                let slot = netplay.state_slot_mut(frame).expect("slot");
                slot.set_checksum(Checksum(game.checksum()));
            }
            Request::Load { frame } => {
                let slot = netplay.saved_state(frame).expect("saved");
                *game = StubState::from_bytes(slot.data());
            }
            Request::Advance { inputs, .. } => {
                game.advance(&[inputs[0].bits(), inputs[1].bits()]);
            }
        }
    }
}

/// A datagram on the in-memory wire: due frame, destination, bytes.
struct InFlight {
    due: u64,
    to: usize,
    bytes: Vec<u8>,
}

/// Two netcade machines, one player each, exchanging datagrams in memory:
/// what is sent during frame f is delivered at frame f + delay (the same
/// wire as `ggrs_harness::GgrsPair`). Buffers are recycled so that the wire
/// itself does not allocate in steady state.
struct NetcadePair {
    peers: [NetplaySession<usize>; 2],
    games: [StubState; 2],
    requests: Vec<Request>,
    wire: VecDeque<InFlight>,
    spare: Vec<Vec<u8>>,
    frame: u64,
    delay_frames: u64,
    play: RandomPlay,
    idle: bool,
    stalls: u64,
    /// Input payload sizes seen on the wire (only while recording).
    input_sizes: Option<Vec<usize>>,
}

impl NetcadePair {
    fn new(delay_frames: u64) -> Self {
        let settings = SessionSettings::default();
        let config = |me: usize| {
            let mut config = NetplayConfig::new(
                SessionToken(0xBE7C_0001 + me as u32),
                "stub",
                "1",
                1,
                settings,
                PlayerSlots::single(me as u8),
            );
            // GGRS adds no input delay: measure the same rollback work.
            config.dynamic_input_delay = false;
            if me == 0 {
                config.accept(Some(1), PlayerSlots::single(1))
            } else {
                config.dial(0, PlayerSlots::single(0))
            }
        };
        let mut pair = NetcadePair {
            peers: [
                NetplaySession::new(config(0), 0).unwrap(),
                NetplaySession::new(config(1), 0).unwrap(),
            ],
            games: [StubState::default(); 2],
            requests: Vec::new(),
            wire: VecDeque::new(),
            spare: Vec::new(),
            frame: 0,
            delay_frames,
            play: RandomPlay::new(11),
            idle: false,
            stalls: 0,
            input_sizes: None,
        };
        for _ in 0..10_000 {
            if pair
                .peers
                .iter()
                .all(|peer| peer.state() == SessionState::Running)
            {
                return pair;
            }
            pair.frame();
        }
        panic!("netcade peers did not synchronise");
    }

    fn now(&self) -> Millis {
        self.frame * 50 / 3
    }

    /// One frame on both peers.
    fn frame(&mut self) {
        self.frame += 1;
        let now = self.now();
        for me in 0..2 {
            // Deliver what is due for this peer (the wire is in sending order).
            let mut index = 0;
            while index < self.wire.len() {
                if self.wire[index].to == me && self.wire[index].due <= self.frame {
                    let datagram = self.wire.remove(index).expect("in range");
                    self.peers[me].handle_datagram(now, 1 - me, &datagram.bytes);
                    self.spare.push(datagram.bytes);
                } else {
                    index += 1;
                }
            }
            let buttons = if self.idle { 0 } else { self.play.buttons(me) };
            let peer = &mut self.peers[me];
            if peer.state() == SessionState::Running {
                peer.add_local_input(PlayerId::new(me as u8), Buttons::from_bits(buttons))
                    .unwrap();
            }
            match peer.advance_frame(now, &mut self.requests) {
                Ok(FrameOutcome::Waiting { .. }) => self.stalls += 1,
                Ok(_) => {}
                Err(error) => panic!("netcade: {error}"),
            }
            fulfil(peer, &self.requests, &mut self.games[me]);
            let due = self.frame + self.delay_frames;
            let (wire, spare, sizes) = (&mut self.wire, &mut self.spare, &mut self.input_sizes);
            peer.poll(now, |to, bytes| {
                if let Some(sizes) = sizes.as_mut() {
                    if bytes.get(3) == Some(&4) {
                        sizes.push(input_payload_len(bytes.len()));
                    }
                }
                let mut buffer = spare.pop().unwrap_or_default();
                buffer.clear();
                buffer.extend_from_slice(bytes);
                wire.push_back(InFlight {
                    due,
                    to,
                    bytes: buffer,
                });
            });
            for _ in peer.events() {}
        }
    }
}

/// Prints, once, the input payload sizes for idle and busy play.
fn input_datagram_sizes() {
    for delay in [0u64, 6] {
        for idle in [true, false] {
            let mut pair = NetcadePair::new(delay);
            pair.idle = idle;
            for _ in 0..120 {
                pair.frame();
            }
            pair.input_sizes = Some(Vec::new());
            for _ in 0..600 {
                pair.frame();
            }
            let sizes = pair.input_sizes.take().unwrap();
            let mean = sizes.iter().sum::<usize>() as f64 / sizes.len().max(1) as f64;
            println!(
                "input datagram payload, {} input, {delay} frames each way: mean {mean:.1} bytes, max {} bytes ({} datagrams)",
                if idle { "idle" } else { "busy" },
                sizes.iter().max().copied().unwrap_or(0),
                sizes.len()
            );
        }
    }
}

fn two_peers(c: &mut Criterion) {
    input_datagram_sizes();
    for delay in [0u64, 3, 6] {
        let mut group = c.benchmark_group(format!("two_peers_delay_{delay}"));
        let mut ours = NetcadePair::new(delay);
        group.bench_function("netcade", |b| b.iter(|| ours.frame()));
        let mut theirs = ggrs_harness::GgrsPair::new(delay);
        group.bench_function("ggrs", |b| b.iter(|| theirs.frame()));
        group.finish();
        println!(
            "delay {delay}: frames waiting for input: netcade {}, ggrs {}",
            ours.stalls, theirs.stalls
        );
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

criterion_group!(benches, sync_test, two_peers);
criterion_main!(benches);
