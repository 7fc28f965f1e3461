//! The wire format: every message survives a round trip, inputs are small, and
//! no sequence of bytes makes the decoder panic.

use netcode::checksum::Checksum;
use netcode::input::Buttons;
use netcode::protocol::codec::{
    self, input_payload_len, InputPrefix, HANDSHAKE_HEADER_SIZE, HEADER_SIZE,
};
use netcode::protocol::*;
use netcode::rollback::Frame;
use proptest::prelude::*;

fn header() -> Header {
    Header {
        version: PROTOCOL_VERSION,
        session: SessionToken(0xDEAD_BEEF),
        sequence: Sequence(65_534),
    }
}

/// [`header`] as a datagram of `message` carries it: only handshakes
/// carry the session token.
fn header_on_the_wire(message: &Message) -> Header {
    match message {
        Message::Hello(_) | Message::Welcome(_) | Message::Reject { .. } => header(),
        _ => Header {
            session: SessionToken::UNKNOWN,
            ..header()
        },
    }
}

fn handshake() -> Handshake {
    Handshake {
        core_name: "Duel".into(),
        core_version: "0.1.0 (é)".into(),
        content_hash: 0x0123_4567_89AB_CDEF,
        local_slots: PlayerSlots(0b10),
        settings: SessionSettings {
            player_count: 3,
            frame_rate_millihertz: 59_727,
            max_prediction: 8,
            checksum_interval: 60,
            input_delay_min: 1,
            input_delay_max: 4,
            rejoin_window_s: 30,
        },
        core_options: vec![
            CoreOption {
                key: "duel_arena".into(),
                value: "dojo".into(),
            },
            CoreOption {
                key: "duel_inject_nondeterminism".into(),
                value: "disabled".into(),
            },
        ],
        start_state: true,
        match_frames: Some(3600),
        public_key: Some(PublicKey([0x5A; 32])),
        room: None,
    }
}

/// Bytes of a handshake's version-3 fields after the header (before the flags).
fn version_3_handshake_len(hs: &Handshake) -> usize {
    2 + hs.core_name.len() + hs.core_version.len() + 8 + 1 + 1 + 4 + 1 + 2 + 1 + 1
}

/// Bytes of `value` as a LEB128 varint.
fn varint_len(value: u32) -> usize {
    (32 - value.leading_zeros() as usize).div_ceil(7).max(1)
}

fn input_message(start: u32, inputs: Vec<Buttons>, slots: PlayerSlots) -> InputMessage {
    let mut status = ConnectionStatus::default();
    status.disconnected_at[2] = Some(Frame::new(start.saturating_sub(30)));
    InputMessage {
        start_frame: Frame::new(start),
        next_expected: Frame::new(start.saturating_sub(2)),
        slots,
        frame_count: (inputs.len() / slots.count().max(1)) as u32,
        inputs,
        status,
        piggyback: Piggyback::default(),
    }
}

/// Every report an input datagram can carry.
fn full_piggyback() -> Piggyback {
    Piggyback {
        quality_report: Some(QualityReport {
            timestamp_ms: 4_000_000_000,
            frame_advantage: -3,
            input_delay: 2,
            run_ahead: 1,
        }),
        quality_reply: Some(QualityReply {
            echoed_timestamp_ms: 17,
            held_ms: 12,
        }),
        checksums: vec![ChecksumEntry {
            frame: Frame::new(120),
            checksum: Checksum(u64::MAX),
        }],
    }
}

fn every_message() -> Vec<Message> {
    let mut held_after = [0u64; 4];
    held_after[0] = 0b1011;
    held_after[3] = 1 << 63;
    vec![
        Message::Hello(handshake()),
        Message::Welcome(handshake()),
        Message::Reject {
            reason: RejectReason::Content,
            host: handshake(),
        },
        Message::Input(input_message(
            123_456,
            vec![
                Buttons::NONE,
                Buttons::A,
                Buttons::A | Buttons::LEFT,
                Buttons::R3,
            ],
            PlayerSlots(0b101),
        )),
        Message::Input(input_message(0, Vec::new(), PlayerSlots::NONE)),
        Message::Input(InputMessage {
            piggyback: full_piggyback(),
            ..input_message(70_000, vec![Buttons::B], PlayerSlots(0b10))
        }),
        Message::InputAck {
            next_expected: Frame::new(99),
        },
        Message::QualityReport(QualityReport {
            timestamp_ms: 4_000_000_000,
            frame_advantage: -3,
            input_delay: 2,
            run_ahead: 1,
        }),
        Message::QualityReply(QualityReply {
            echoed_timestamp_ms: 17,
            held_ms: 65_535,
        }),
        Message::ChecksumReport {
            entries: vec![
                ChecksumEntry {
                    frame: Frame::new(60),
                    checksum: Checksum(1),
                },
                ChecksumEntry {
                    frame: Frame::new(120),
                    checksum: Checksum(u64::MAX),
                },
            ],
        },
        Message::KeepAlive,
        Message::Disconnect {
            reason: DisconnectReason::Desync,
        },
        Message::Disconnect {
            reason: DisconnectReason::Other(200),
        },
        Message::BlobChunk(BlobChunk {
            id: BlobId(7),
            total_size: 2500,
            hash: 0xFEED_FACE_CAFE_BEEF,
            chunk_count: 3,
            index: 2,
            bytes: vec![0xAB; 300],
        }),
        Message::BlobChunk(BlobChunk {
            id: BlobId(8),
            total_size: 0,
            hash: 0,
            chunk_count: 1,
            index: 0,
            bytes: Vec::new(),
        }),
        Message::BlobAck(BlobAck {
            id: BlobId(7),
            next_missing: 12,
            held_after,
        }),
        Message::Ready,
        Message::Start { delay_ms: 0 },
        Message::Start { delay_ms: 65_535 },
        Message::StartAck,
        Message::DisconnectAck,
        Message::Roster(vec![
            RosterEntry {
                slot: 2,
                address: vec![127, 0, 0, 1, 0x1F, 0x40],
            },
            RosterEntry {
                slot: 3,
                address: vec![0xAB; MAX_ROSTER_ADDRESS_BYTES],
            },
        ]),
        Message::Roster(Vec::new()),
        Message::RejoinChallenge { nonce: 0 },
        Message::RejoinProof { nonce: u64::MAX },
        Message::RejoinRestarted { nonce: 7 },
        Message::Chat(ChatMessage {
            next_expected: 3,
            line: None,
        }),
        Message::Chat(ChatMessage {
            next_expected: 70_000,
            line: Some((
                12,
                ChatLine {
                    author: "Zoë".into(),
                    text: "gg, well played ✓".into(),
                },
            )),
        }),
        Message::Chat(ChatMessage {
            next_expected: 0,
            line: Some((
                u32::MAX,
                ChatLine {
                    author: "a".repeat(MAX_CHAT_AUTHOR_BYTES),
                    text: "é".repeat(MAX_CHAT_TEXT_BYTES / 2),
                },
            )),
        }),
    ]
}

#[test]
fn every_message_decodes_to_what_was_encoded() {
    let mut out = Vec::new();
    for message in every_message() {
        codec::encode(&header(), &message, &mut out).unwrap();
        assert!(out.len() <= MAX_DATAGRAM_SIZE);
        let (decoded_header, decoded) = codec::decode(&out).unwrap();
        assert_eq!(decoded_header, header_on_the_wire(&message));
        assert_eq!(decoded, message);
    }
}

#[test]
fn every_message_cut_short_is_an_error_not_a_panic() {
    let mut out = Vec::new();
    for message in every_message() {
        codec::encode(&header(), &message, &mut out).unwrap();
        // A handshake cut where version 3's ended reads as a version-3
        // one (no options, no start state), one cut where version 4's
        // ended as a version-4 one (no match length, no key), one cut
        // before the key as one without a key, one cut after the key as a
        // version-6 one (no rejoin window); any other cut is an error.
        let version_3_end = match &message {
            Message::Hello(hs) | Message::Welcome(hs) => {
                Some(HANDSHAKE_HEADER_SIZE + version_3_handshake_len(hs))
            }
            Message::Reject { host, .. } => {
                Some(HANDSHAKE_HEADER_SIZE + 1 + version_3_handshake_len(host))
            }
            _ => None,
        };
        let version_6_end = match &message {
            Message::Hello(hs) | Message::Welcome(hs) | Message::Reject { host: hs, .. } => {
                Some(out.len() - varint_len(hs.settings.rejoin_window_s))
            }
            _ => None,
        };
        let version_4_end = match &message {
            Message::Hello(hs) | Message::Welcome(hs) | Message::Reject { host: hs, .. } => Some(
                out.len()
                    - varint_len(hs.settings.rejoin_window_s)
                    - 32
                    - varint_len(hs.match_frames.unwrap_or(0)),
            ),
            _ => None,
        };
        let keyless_end = version_6_end.map(|end| end - 32);
        for len in 0..out.len() {
            let result = codec::decode(&out[..len]);
            if Some(len) == version_6_end {
                let hs = handshake_in(result, "version-6", &message);
                assert!(hs.public_key.is_some() && hs.settings.rejoin_window_s == 0);
                continue;
            }
            if Some(len) == keyless_end {
                let hs = handshake_in(result, "keyless", &message);
                assert!(hs.public_key.is_none() && hs.match_frames.is_some());
                continue;
            }
            if Some(len) == version_4_end {
                let hs = handshake_in(result, "version-4", &message);
                assert_eq!((hs.match_frames, hs.public_key), (None, None));
                continue;
            }
            if Some(len) == version_3_end {
                let hs = handshake_in(result, "version-3", &message);
                assert!(hs.core_options.is_empty() && !hs.start_state);
                continue;
            }
            assert!(result.is_err(), "{message:?} cut to {len} bytes decoded");
        }
    }
}

/// The handshake `result` decoded to, `message` cut to its `version`'s
/// fields.
fn handshake_in(
    result: Result<(Header, Message), DecodeError>,
    version: &str,
    message: &Message,
) -> Handshake {
    let Ok((_, Message::Hello(hs) | Message::Welcome(hs) | Message::Reject { host: hs, .. })) =
        result
    else {
        panic!("{message:?} cut to its {version} fields did not decode: {result:?}");
    };
    hs
}

#[test]
fn a_handshake_claiming_more_core_options_than_it_holds_is_refused() {
    let mut out = Vec::new();
    let hello = Message::Hello(Handshake {
        core_options: Vec::new(),
        match_frames: None,
        public_key: None,
        ..handshake()
    });
    codec::encode(&header(), &hello, &mut out).unwrap();
    // The option count is the last byte but the match length's (no key):
    // claim a million options.
    out.truncate(out.len() - 2);
    out.extend_from_slice(&[0xC0, 0x84, 0x3D]);
    assert!(matches!(
        codec::decode(&out),
        Err(DecodeError::CountBeyondDatagram {
            claimed: 1_000_000,
            ..
        })
    ));
}

#[test]
fn a_handshake_with_too_many_core_options_is_not_encoded() {
    let options = (0..=MAX_CORE_OPTIONS)
        .map(|i| CoreOption {
            key: format!("k{i}"),
            value: "v".into(),
        })
        .collect();
    let hello = Message::Hello(Handshake {
        core_options: options,
        ..handshake()
    });
    assert_eq!(
        codec::encode(&header(), &hello, &mut Vec::new()),
        Err(codec::EncodeError::TooManyCoreOptions(MAX_CORE_OPTIONS + 1))
    );
}

#[test]
fn foreign_datagrams_are_refused_with_a_reason() {
    let mut out = Vec::new();
    codec::encode(&header(), &Message::KeepAlive, &mut out).unwrap();
    let mut bad_magic = out.clone();
    bad_magic[0] = b'X';
    assert!(matches!(
        codec::decode(&bad_magic),
        Err(DecodeError::BadMagic(_))
    ));
    let mut unknown_kind = out.clone();
    unknown_kind[3] = 99;
    assert_eq!(
        codec::decode(&unknown_kind),
        Err(DecodeError::UnknownKind(99))
    );
    let mut trailing = out.clone();
    trailing.push(0);
    assert_eq!(codec::decode(&trailing), Err(DecodeError::TrailingBytes(1)));
    assert_eq!(
        codec::decode(&vec![0u8; MAX_DATAGRAM_SIZE + 1]),
        Err(DecodeError::TooLarge(MAX_DATAGRAM_SIZE + 1))
    );
}

#[test]
fn a_blob_announcing_more_than_the_cap_is_refused() {
    let mut out = Vec::new();
    let chunk = Message::BlobChunk(BlobChunk {
        id: BlobId(1),
        total_size: 5000,
        hash: 1,
        chunk_count: 5,
        index: 4,
        bytes: vec![1; 600],
    });
    codec::encode(&header(), &chunk, &mut out).unwrap();
    let oversized = (MAX_BLOB_SIZE as u32 + 1).to_le_bytes();
    out[HEADER_SIZE + 4..HEADER_SIZE + 8].copy_from_slice(&oversized);
    assert_eq!(
        codec::decode(&out),
        Err(DecodeError::BlobTooLarge(MAX_BLOB_SIZE as u32 + 1))
    );
}

#[test]
fn an_input_count_larger_than_the_datagram_is_refused_before_allocating() {
    // start 0, one slot, ack +0, nobody disconnected, no piggyback, then a
    // count of 4 billion.
    let mut datagram = Vec::new();
    codec::encode(&header(), &Message::KeepAlive, &mut datagram).unwrap();
    datagram[3] = 4; // kind: input
    datagram.extend_from_slice(&[0, 0b1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0]);
    assert!(matches!(
        codec::decode(&datagram),
        Err(DecodeError::CountBeyondDatagram { .. })
    ));
}

#[test]
fn a_malformed_handshake_setting_is_refused_by_name() {
    let mut hs = handshake();
    hs.settings.input_delay_min = 5;
    let mut out = Vec::new();
    codec::encode(&header(), &Message::Hello(hs), &mut out).unwrap();
    assert_eq!(
        codec::decode(&out),
        Err(DecodeError::BadSettings(
            "input delay minimum above maximum"
        ))
    );
}

/// An input datagram as the endpoint builds it: `frames` frames starting at `start`.
fn input_datagram(start: u32, inputs: &[Buttons], slots: PlayerSlots) -> (Vec<u8>, u32) {
    let status = ConnectionStatus::default();
    let prefix = InputPrefix {
        start_frame: Frame::new(start),
        next_expected: Frame::new(start + 1),
        slots,
        status: &status,
        piggyback: &Piggyback::default(),
    };
    let mut out = Vec::new();
    let written = codec::encode_input_fitting(&header(), prefix, inputs, &mut out);
    (out, written)
}

#[test]
fn unchanged_input_at_six_frames_in_flight_costs_at_most_16_bytes_of_payload() {
    // An hour into a match (frame numbers need 3 bytes), buttons held throughout.
    let start = 60 * 60 * 60;
    for held in [Buttons::NONE, Buttons::RIGHT | Buttons::B] {
        for in_flight in [0usize, 3, 6] {
            let inputs = vec![held; in_flight];
            let (datagram, written) = input_datagram(start, &inputs, PlayerSlots::single(0));
            assert_eq!(written as usize, in_flight);
            // As sent: with its tag.
            let payload = input_payload_len(datagram.len() + auth::TAG_BYTES);
            assert!(
                payload <= 16,
                "{in_flight} frames of {held}: {payload} bytes"
            );
        }
    }
}

/// A small deterministic generator for "busy" input (a new random pad every frame).
fn random_pads(seed: u64, count: usize) -> Vec<Buttons> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            Buttons::from_bits((state >> 48) as u16)
        })
        .collect()
}

#[test]
fn busy_random_input_stays_under_the_datagram_limit_and_splits_when_too_long() {
    for in_flight in [6usize, 20, 60] {
        let inputs = random_pads(in_flight as u64, in_flight * 2);
        let (datagram, written) = input_datagram(1000, &inputs, PlayerSlots(0b11));
        assert_eq!(written as usize, in_flight);
        assert!(datagram.len() < MAX_DATAGRAM_SIZE);
        let (_, Message::Input(decoded)) = codec::decode(&datagram).unwrap() else {
            panic!("not an input datagram");
        };
        assert_eq!(decoded.inputs, inputs);
    }
    // Far more than fits: the oldest frames go first, within the limit.
    let inputs = random_pads(9, 2000);
    let (datagram, written) = input_datagram(1000, &inputs, PlayerSlots::single(3));
    assert!(written > 100 && written < 2000, "{written} frames");
    assert!(datagram.len() <= MAX_DATAGRAM_SIZE);
    let (_, Message::Input(decoded)) = codec::decode(&datagram).unwrap() else {
        panic!("not an input datagram");
    };
    assert_eq!(decoded.inputs, inputs[..written as usize]);
}

#[test]
fn an_input_message_too_long_for_one_datagram_is_an_encode_error() {
    let inputs = random_pads(3, 1000);
    let message = Message::Input(input_message(5, inputs, PlayerSlots::single(0)));
    let mut out = Vec::new();
    assert!(matches!(
        codec::encode(&header(), &message, &mut out),
        Err(EncodeError::TooLarge(_))
    ));
}

fn valid_datagrams() -> Vec<Vec<u8>> {
    every_message()
        .iter()
        .map(|message| {
            let mut out = Vec::new();
            codec::encode(&header(), message, &mut out).unwrap();
            out
        })
        .collect()
}

/// The proptests run from a fixed seed so a failure reproduces on every
/// machine; `PROPTEST_RNG_SEED=N` explores other cases.
fn seeded_config() -> ProptestConfig {
    let config = ProptestConfig::default();
    let rng_seed = match config.rng_seed {
        proptest::test_runner::RngSeed::Random => {
            proptest::test_runner::RngSeed::Fixed(0x6e65_7463)
        }
        chosen => chosen,
    };
    ProptestConfig { rng_seed, ..config }
}

#[test]
fn the_proptests_start_from_a_fixed_seed_unless_one_is_chosen() {
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        assert!(matches!(
            seeded_config().rng_seed,
            proptest::test_runner::RngSeed::Fixed(_)
        ));
    }
}

proptest! {
    #![proptest_config(seeded_config())]

    #[test]
    fn random_bytes_never_panic_the_decoder(bytes in proptest::collection::vec(any::<u8>(), 0..1300)) {
        let _ = codec::decode(&bytes);
    }

    #[test]
    fn mutated_datagrams_never_panic_the_decoder(
        which in 0usize..19,
        edits in proptest::collection::vec((any::<u16>(), any::<u8>(), 0u8..4), 1..8),
    ) {
        let datagrams = valid_datagrams();
        let mut datagram = datagrams[which % datagrams.len()].clone();
        for (position, value, operation) in edits {
            let at = position as usize % (datagram.len() + 1);
            match operation {
                0 if at < datagram.len() => datagram[at] = value,
                1 if at < datagram.len() => datagram[at] ^= 1 << (value % 8),
                2 => datagram.truncate(at),
                _ => datagram.insert(at, value),
            }
        }
        let _ = codec::decode(&datagram);
    }

    #[test]
    fn any_input_run_round_trips(
        start in 0u32..u32::MAX / 2,
        slots in 1u8..=255,
        seed in any::<u64>(),
        frames in 0usize..40,
    ) {
        let slots = PlayerSlots(slots);
        let inputs = random_pads(seed, frames * slots.count());
        let (datagram, written) = input_datagram(start, &inputs, slots);
        let (_, Message::Input(decoded)) = codec::decode(&datagram).unwrap() else {
            panic!("not an input datagram");
        };
        prop_assert_eq!(decoded.frame_count, written);
        prop_assert_eq!(&decoded.inputs[..], &inputs[..written as usize * slots.count()]);
        prop_assert_eq!(decoded.start_frame, Frame::new(start));
        prop_assert_eq!(decoded.next_expected, Frame::new(start + 1));
    }
}

#[test]
fn a_full_input_datagram_uses_the_whole_datagram_whatever_the_count_width() {
    // Few frames, many toggles each (count fits one varint byte) and many frames,
    // few toggles (count needs two bytes): both fill the datagram to the brim.
    // Slack left: less than one more frame (8 pads × at most 81 bits, or 1 bit).
    let cases = [
        (random_pads(1, 800), PlayerSlots(0xFF), 81),
        (vec![Buttons::NONE; 20_000], PlayerSlots(1), 1),
    ];
    for (pads, slots, slack) in cases {
        let (datagram, written) = input_datagram(5, &pads, slots);
        assert!(written > 0);
        assert!(datagram.len() <= MAX_DATAGRAM_SIZE);
        assert!(
            datagram.len() >= MAX_DATAGRAM_SIZE - slack,
            "{} bytes",
            datagram.len()
        );
        assert!(codec::decode(&datagram).is_ok());
    }
}

#[test]
fn a_handshake_for_eight_players_decodes() {
    // Found by the fuzzer: checking slot bits against a count of 8 overflowed.
    let mut hs = handshake();
    hs.settings.player_count = 8;
    hs.local_slots = PlayerSlots::single(7);
    let mut out = Vec::new();
    codec::encode(&header(), &Message::Welcome(hs.clone()), &mut out).unwrap();
    assert_eq!(codec::decode(&out).unwrap().1, Message::Welcome(hs));
}

#[test]
fn an_ack_far_outside_the_frame_range_is_refused() {
    // Found by the fuzzer: a 64-bit ack offset overflowed when added to the start.
    let mut datagram = Vec::new();
    codec::encode(&header(), &Message::KeepAlive, &mut datagram).unwrap();
    datagram[3] = 4; // kind: input
    datagram.extend_from_slice(&[0x05, 0]); // start 5, no slots
    datagram.extend_from_slice(&[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]);
    datagram.extend_from_slice(&[0, 0]); // nobody disconnected, no frames
    assert_eq!(codec::decode(&datagram), Err(DecodeError::FrameRange));
}

#[test]
fn the_start_up_messages_are_kinds_13_to_15_and_a_start_carries_its_delay_in_two_bytes() {
    let mut out = Vec::new();
    codec::encode(&header(), &Message::Start { delay_ms: 0x0102 }, &mut out).unwrap();
    assert_eq!(out.len(), HEADER_SIZE + 2);
    assert_eq!(out[3], 14);
    assert_eq!(
        &out[HEADER_SIZE..],
        &[0x02, 0x01],
        "little-endian milliseconds"
    );
    for (message, kind) in [(Message::Ready, 13), (Message::StartAck, 15)] {
        codec::encode(&header(), &message, &mut out).unwrap();
        assert_eq!((out.len(), out[3]), (HEADER_SIZE, kind), "{message:?}");
    }
}

#[test]
fn a_malformed_start_up_message_is_refused_with_a_reason() {
    let mut out = Vec::new();
    codec::encode(&header(), &Message::Start { delay_ms: 300 }, &mut out).unwrap();
    assert_eq!(
        codec::decode(&out[..HEADER_SIZE + 1]),
        Err(DecodeError::Truncated)
    );
    let mut longer = out.clone();
    longer.push(7);
    assert_eq!(codec::decode(&longer), Err(DecodeError::TrailingBytes(1)));
    for message in [Message::Ready, Message::StartAck] {
        codec::encode(&header(), &message, &mut out).unwrap();
        out.extend_from_slice(&[1, 2]);
        assert_eq!(codec::decode(&out), Err(DecodeError::TrailingBytes(2)));
    }
}

#[test]
fn reports_riding_on_an_input_datagram_cost_a_flags_byte_when_absent() {
    let bare = input_message(500, vec![Buttons::A], PlayerSlots(0b1));
    let loaded = InputMessage {
        piggyback: full_piggyback(),
        ..bare.clone()
    };
    let mut bare_bytes = Vec::new();
    let mut loaded_bytes = Vec::new();
    codec::encode(&header(), &Message::Input(bare), &mut bare_bytes).unwrap();
    codec::encode(
        &header(),
        &Message::Input(loaded.clone()),
        &mut loaded_bytes,
    )
    .unwrap();
    // Report 7 bytes (with the input delay), reply 6, one checksum: count,
    // 1-byte frame, 8-byte sum.
    assert_eq!(loaded_bytes.len(), bare_bytes.len() + 7 + 6 + 1 + 1 + 8);
    assert_eq!(
        codec::decode(&loaded_bytes).unwrap().1,
        Message::Input(loaded)
    );
}

#[test]
fn unknown_or_empty_piggyback_flags_are_refused_with_a_reason() {
    let message = Message::Input(input_message(5, vec![Buttons::A], PlayerSlots(0b1)));
    let mut bytes = Vec::new();
    codec::encode(&header(), &message, &mut bytes).unwrap();
    // Header, start (1 byte), slots, next expected (1 byte), status mask (player 2 at frame 0: 1 byte).
    let flags_at = HEADER_SIZE + 1 + 1 + 1 + 1 + 1;
    assert_eq!(bytes[flags_at], 0);
    let mut unknown = bytes.clone();
    unknown[flags_at] = 0x08;
    assert_eq!(
        codec::decode(&unknown),
        Err(DecodeError::UnknownPiggyback(0x08))
    );
    let mut empty = bytes.clone();
    empty[flags_at] = 0x04;
    empty.insert(flags_at + 1, 0);
    assert_eq!(
        codec::decode(&empty),
        Err(DecodeError::EmptyPiggybackChecksums)
    );
}

#[test]
fn a_handshake_carries_the_match_length_and_one_ending_before_it_has_none() {
    let mut handshake = Handshake {
        core_name: "duel".into(),
        core_version: "1.0".into(),
        match_frames: Some(120),
        ..Handshake::default()
    };
    let mut out = Vec::new();
    codec::encode(&header(), &Message::Welcome(handshake.clone()), &mut out).unwrap();
    assert_eq!(
        codec::decode(&out).unwrap().1,
        Message::Welcome(handshake.clone())
    );
    // Version 4 ended after the core options: its last byte is the length.
    out.pop();
    handshake.match_frames = None;
    assert_eq!(codec::decode(&out).unwrap().1, Message::Welcome(handshake));
}

#[test]
fn a_room_handshake_carries_its_element_and_a_welcome_its_confirmation_after_the_rejoin_window() {
    let by_address = handshake();
    let mut plain = Vec::new();
    codec::encode(&header(), &Message::Hello(by_address.clone()), &mut plain).unwrap();
    let hello = Handshake {
        room: Some(RoomProof {
            element: RoomElement([0x3C; 32]),
            confirmation: None,
        }),
        ..by_address.clone()
    };
    let welcome = Handshake {
        room: Some(RoomProof {
            element: RoomElement([0x3C; 32]),
            confirmation: Some([0xC3; 8]),
        }),
        ..by_address
    };
    for (message, extra) in [(Message::Hello(hello), 32), (Message::Welcome(welcome), 40)] {
        let mut out = Vec::new();
        codec::encode(&header(), &message, &mut out).unwrap();
        assert_eq!(out.len(), plain.len() + extra);
        assert_eq!(codec::decode(&out).unwrap().1, message);
    }
}

#[test]
fn a_roster_with_too_many_entries_or_a_long_address_is_refused_before_allocating() {
    let mut out = Vec::new();
    codec::encode(&header(), &Message::Roster(Vec::new()), &mut out).unwrap();
    let count_at = out.len() - 1;
    // Too many entries claimed.
    let mut many = out.clone();
    many[count_at] = 200;
    assert!(codec::decode(&many).is_err());
    // One entry whose address is longer than any address.
    let mut long = out.clone();
    long[count_at] = 1;
    long.extend_from_slice(&[2, (MAX_ROSTER_ADDRESS_BYTES + 1) as u8]);
    long.extend_from_slice(&[0; MAX_ROSTER_ADDRESS_BYTES + 1]);
    assert!(matches!(
        codec::decode(&long),
        Err(DecodeError::BadRosterEntry { slot: 2, .. })
    ));
    let too_long = Message::Roster(vec![RosterEntry {
        slot: 1,
        address: vec![0; MAX_ROSTER_ADDRESS_BYTES + 1],
    }]);
    assert_eq!(
        codec::encode(&header(), &too_long, &mut out),
        Err(codec::EncodeError::BadRoster)
    );
}

/// A chat datagram carrying one line whose author is empty and whose text
/// is `text` as raw bytes (length byte first), whatever they hold.
fn chat_datagram_with_text(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let ack_only = Message::Chat(ChatMessage::default());
    codec::encode(&header(), &ack_only, &mut out).unwrap();
    *out.last_mut().unwrap() = 1; // flags: a line follows
    out.extend_from_slice(&[0, 0]); // line number 0, empty author
    out.push(text.len() as u8);
    out.extend_from_slice(text);
    out
}

#[test]
fn a_chat_line_decodes_only_when_it_is_short_clean_utf8() {
    assert!(codec::decode(&chat_datagram_with_text(b"hello")).is_ok());
    assert_eq!(
        codec::decode(&chat_datagram_with_text(&[b'x'; MAX_CHAT_TEXT_BYTES + 1])),
        Err(DecodeError::BadChatLine(ChatTextError::TooLong(
            MAX_CHAT_TEXT_BYTES + 1,
            MAX_CHAT_TEXT_BYTES
        )))
    );
    assert_eq!(
        codec::decode(&chat_datagram_with_text(&[b'o', 0xC3, 0x28])),
        Err(DecodeError::BadText)
    );
    assert_eq!(
        codec::decode(&chat_datagram_with_text(b"\x1b[2Jgotcha")),
        Err(DecodeError::BadChatLine(ChatTextError::ControlCharacter))
    );
    assert_eq!(
        codec::decode(&chat_datagram_with_text(b"")),
        Err(DecodeError::BadChatLine(ChatTextError::Empty))
    );
    // A right-to-left override turns what follows around on screen.
    assert_eq!(
        codec::decode(&chat_datagram_with_text("gg \u{202E}ti dah I".as_bytes())),
        Err(DecodeError::BadChatLine(ChatTextError::ControlCharacter))
    );
    let mut cut = chat_datagram_with_text(b"hello");
    cut.truncate(cut.len() - 2);
    assert_eq!(codec::decode(&cut), Err(DecodeError::Truncated));
    let mut unknown_flags = chat_datagram_with_text(b"hello");
    unknown_flags[HEADER_SIZE + 1] = 2;
    assert_eq!(
        codec::decode(&unknown_flags),
        Err(DecodeError::UnknownChatFlags(2))
    );
}

#[test]
fn a_chat_line_too_long_to_send_is_an_encode_error() {
    let message = Message::Chat(ChatMessage {
        next_expected: 0,
        line: Some((
            0,
            ChatLine {
                author: String::new(),
                text: "x".repeat(MAX_CHAT_TEXT_BYTES + 1),
            },
        )),
    });
    let mut out = Vec::new();
    assert!(matches!(
        codec::encode(&header(), &message, &mut out),
        Err(EncodeError::BadChatLine(ChatTextError::TooLong(..)))
    ));
}

#[test]
fn a_chat_line_costs_nineteen_bytes_besides_its_author_and_text_and_an_ack_sixteen() {
    let line = |author: &str, text: &str| {
        Message::Chat(ChatMessage {
            next_expected: 5,
            line: Some((
                7,
                ChatLine {
                    author: author.into(),
                    text: text.into(),
                },
            )),
        })
    };
    let mut out = Vec::new();
    // The tag (8 bytes) is added when the datagram is sealed.
    let on_the_wire = |message: &Message, out: &mut Vec<u8>| {
        codec::encode(&header(), message, out).unwrap();
        out.len() + codec::TAG_BYTES
    };
    let longest = line(
        &"a".repeat(MAX_CHAT_AUTHOR_BYTES),
        &"x".repeat(MAX_CHAT_TEXT_BYTES),
    );
    assert_eq!(on_the_wire(&longest, &mut out), 19 + 24 + 120);
    assert_eq!(on_the_wire(&line("", "gg"), &mut out), 19 + 2);
    let ack = Message::Chat(ChatMessage {
        next_expected: 5,
        line: None,
    });
    assert_eq!(on_the_wire(&ack, &mut out), 16);
}

#[test]
fn a_handshake_whose_names_or_options_hold_control_characters_is_refused_as_bad_text() {
    // Both sides print the peer's core name when a handshake is refused:
    // a stranger's Hello must not steer the host's terminal.
    let mut core_name = handshake();
    core_name.core_name = "\x1b[2JDuel".into();
    let mut option = handshake();
    option.core_options[0].value = "dojo\r\n".into();
    let mut reversed = handshake();
    reversed.core_version = "1.0\u{202E}".into();
    let mut bom = handshake();
    bom.core_options[0].key = "\u{FEFF}duel_speed".into();
    for hostile in [core_name, option, reversed, bom] {
        let mut out = Vec::new();
        codec::encode(&header(), &Message::Hello(hostile), &mut out).unwrap();
        assert_eq!(codec::decode(&out), Err(DecodeError::BadText));
    }
    let mut out = Vec::new();
    codec::encode(&header(), &Message::Hello(handshake()), &mut out).unwrap();
    assert!(codec::decode(&out).is_ok());
}

#[test]
fn a_quality_reports_delay_and_run_ahead_share_its_last_byte() {
    let report = |input_delay, run_ahead| {
        Message::QualityReport(QualityReport {
            timestamp_ms: 7,
            frame_advantage: -1,
            input_delay,
            run_ahead,
        })
    };
    let mut out = Vec::new();
    codec::encode(&header(), &report(3, 2), &mut out).unwrap();
    assert_eq!(out.len(), HEADER_SIZE + 7, "timestamp, advantage, one byte");
    assert_eq!(out[HEADER_SIZE + 6], 0x23, "delay low, run-ahead high");
    assert_eq!(codec::decode(&out).unwrap().1, report(3, 2));
    // Neither can say more than four bits hold.
    codec::encode(&header(), &report(40, 200), &mut out).unwrap();
    assert_eq!(codec::decode(&out).unwrap().1, report(15, 15));
}
