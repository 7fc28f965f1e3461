//! A running endpoint fed arbitrary datagrams (split from the input at 0xFF 0xFE
//! markers) keeps working: no panic, and it still polls.
//!
//! Run with `cargo fuzz run endpoint` from `tests/fuzz` (nightly toolchain).
#![no_main]

use libfuzzer_sys::fuzz_target;
use netcade::protocol::*;

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
    let mut hello = Vec::new();
    let header = Header {
        version: PROTOCOL_VERSION,
        session: SessionToken::UNKNOWN,
        sequence: Sequence(0),
    };
    codec::encode(&header, &Message::Hello(identity(1)), &mut hello).unwrap();
    host.handle_datagram(0, &hello);
    let mut now = 0;
    for piece in data.split(|&b| b == 0xFF) {
        now += 3;
        // Give the fuzzer a head start past the header: magic, version, kind, token.
        let mut datagram = b"nc".to_vec();
        datagram.push(PROTOCOL_VERSION);
        datagram.extend_from_slice(piece.get(..1).unwrap_or(&[4]));
        datagram.extend_from_slice(&token.0.to_le_bytes());
        datagram.extend_from_slice(piece.get(1..).unwrap_or(&[]));
        host.handle_datagram(now, &datagram);
        host.poll(now, &mut |bytes| assert!(bytes.len() <= MAX_DATAGRAM_SIZE));
        while host.next_event().is_some() {}
    }
});
