//! A running endpoint fed arbitrary datagrams (split from the input at 0xFF 0xFE
//! markers) keeps working: no panic, and it still polls.
//!
//! Run with `cargo fuzz run endpoint` from `tests/fuzz` (nightly toolchain).
#![no_main]

use libfuzzer_sys::fuzz_target;
use netcode::protocol::*;

fn identity(slot: u8) -> Handshake {
    Handshake {
        core_name: "duel".into(),
        core_version: "1.0".into(),
        content_hash: 1,
        local_slots: PlayerSlots::single(slot),
        settings: SessionSettings::default(),
        ..Handshake::default()
    }
}

fuzz_target!(|data: &[u8]| {
    let token = SessionToken(7);
    let mut host = PeerEndpoint::new(EndpointConfig::host(token, identity(0)), 0).unwrap();
    // A real joiner shakes hands, then tags every fuzzed datagram, so they
    // get past the tag check to the decoder.
    let mut joiner = PeerEndpoint::new(EndpointConfig::joiner(identity(1)), 0).unwrap();
    for datagram in joiner.poll_datagrams(0) {
        host.handle_datagram(0, &datagram);
    }
    for datagram in host.poll_datagrams(0) {
        joiner.handle_datagram(0, &datagram);
    }
    let mut now = 0;
    for piece in data.split(|&b| b == 0xFF) {
        now += 3;
        // Give the fuzzer a head start past the header: magic, version, kind.
        let mut datagram = b"nc".to_vec();
        datagram.push(PROTOCOL_VERSION);
        datagram.extend_from_slice(piece.get(..1).unwrap_or(&[4]));
        datagram.extend_from_slice(piece.get(1..).unwrap_or(&[]));
        joiner.seal(&mut datagram);
        host.handle_datagram(now, &datagram);
        host.poll(now, &mut |bytes| assert!(bytes.len() <= MAX_DATAGRAM_SIZE));
        while host.next_event().is_some() {}
    }
});
