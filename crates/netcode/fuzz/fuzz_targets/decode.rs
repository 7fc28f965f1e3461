//! Any bytes given to the decoder give a message or an error, never a panic;
//! whatever decodes encodes again into a datagram that decodes the same.
//!
//! Run with `cargo fuzz run decode` from `tests/fuzz` (nightly toolchain).
#![no_main]

use libfuzzer_sys::fuzz_target;
use netcode::protocol::codec;

fuzz_target!(|data: &[u8]| {
    if let Ok((header, message)) = codec::decode(data) {
        let mut again = Vec::new();
        codec::encode(&header, &message, &mut again).expect("a decoded message encodes");
        let (header_again, message_again) = codec::decode(&again).expect("re-encoded decodes");
        assert_eq!(header, header_again);
        assert_eq!(message, message_again);
    }
});
