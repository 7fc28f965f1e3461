//! The replay reader on arbitrary bytes: it must return an error or a replay,
//! never panic, and never allocate more than the bytes justify.
//!
//! Run with `cargo +nightly fuzz run --fuzz-dir tests/fuzz replay`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(replay) = netcode::replay::read_replay(bytes) {
        // Whatever was read is usable: every frame's inputs can be asked for.
        // Every frame the replay holds, numbered from its start frame.
        let start = replay.start_frame().number();
        for frame in start..start + replay.frames().min(10_000) {
            let _ = replay.inputs(netcode::rollback::Frame::new(frame));
        }
        assert!(replay.end_frame().number() <= netcode::replay::MAX_REPLAY_FRAMES);
        assert!(replay.bytes <= bytes.len() as u64);
    }
});
