//! The replay format as recorders and players rely on it: what is written
//! reads back, a file cut anywhere or damaged after its header reads up to
//! its last whole record, and hostile bytes are refused with the offset at
//! fault.

use netcode::checksum::Checksum;
use netcode::input::Buttons;
use netcode::replay::{
    read_replay, read_replay_header, EndReason, ReplayError, ReplayEvent, ReplayHeader,
    ReplayWriter, MAX_REPLAY_FRAMES, MAX_STATE_BYTES,
};
use netcode::rollback::Frame;
use proptest::prelude::*;

fn header(players: u8) -> ReplayHeader {
    ReplayHeader {
        netcade_version: "0.1.0".into(),
        core_name: "Duel".into(),
        core_version: "0.1.0".into(),
        core_path: "/cores/libduel.so".into(),
        content_name: "dojo.duel".into(),
        content_path: "/roms/dojo.duel".into(),
        content_hash: Checksum(0x1234),
        core_options: vec![("duel_speed".into(), "fast".into())],
        players,
        frames_per_second: 60.0,
        sample_rate: 48_000.0,
        recorded_at_unix: 1_795_000_000,
        player_names: vec!["host".into(), "127.0.0.1:7000".into()],
        start_frame: Frame::new(0),
        start_state: (0..4000u32).map(|i| (i % 13) as u8).collect(),
        start_memory_checksum: Checksum(99),
    }
}

/// Player `p`'s buttons in frame `f`: changing every few frames, as in play.
fn buttons(player: usize, frame: u32) -> Buttons {
    Buttons::from_bits(((frame / (5 + player as u32)) as u16).wrapping_mul(0x9e37) & 0x0ff3)
}

/// A replay of `frames` frames with a checkpoint every 60, a repair and a
/// departure.
fn recorded(frames: u32) -> Vec<u8> {
    recorded_from(0, frames)
}

/// [`recorded`], as a spectator who joined at frame `start` records it: the
/// frames `start..start + frames`, numbered as in the match.
fn recorded_from(start: u32, frames: u32) -> Vec<u8> {
    let header = ReplayHeader {
        start_frame: Frame::new(start),
        ..header(2)
    };
    let mut writer = ReplayWriter::new(Vec::new(), &header).unwrap();
    for frame in start..start + frames {
        let inputs = [buttons(0, frame), buttons(1, frame)];
        writer
            .frame(
                Frame::new(frame),
                &inputs,
                Some(Checksum(u64::from(frame) * 7)),
                Some(Checksum(u64::from(frame))),
            )
            .unwrap();
        if frame == start + 130 {
            writer
                .repair(Frame::new(start + 120), &[5; 300], Checksum(55))
                .unwrap();
        }
    }
    writer.player_left(Frame::new(start + frames), 1).unwrap();
    writer.finish(EndReason::Disconnect).unwrap().0
}

#[test]
fn the_last_frame_recorded_is_a_checkpoint_so_no_frame_goes_unchecked() {
    let mut writer = ReplayWriter::new(Vec::new(), &header(2)).unwrap();
    for frame in 0..100 {
        let memory = Some(Checksum(u64::from(frame) + 1));
        writer
            .frame(Frame::new(frame), &[Buttons::NONE; 2], memory, None)
            .unwrap();
    }
    let replay = read_replay(&writer.finish(EndReason::Finished).unwrap().0[..]).unwrap();
    let last = replay.checkpoints.last().map(|c| (c.frame, c.memory));
    assert_eq!(last, Some((Frame::new(99), Checksum(100))));
    // Without checksums (a recorder that was given none) there is none.
    let mut writer = ReplayWriter::new(Vec::new(), &header(2)).unwrap();
    writer
        .frame(Frame::new(0), &[Buttons::NONE; 2], None, None)
        .unwrap();
    let replay = read_replay(&writer.finish(EndReason::Finished).unwrap().0[..]).unwrap();
    assert!(replay.checkpoints.is_empty());
}

#[test]
fn a_written_replay_reads_back_with_every_input_checkpoint_and_event() {
    let bytes = recorded(300);
    let replay = read_replay(&bytes[..]).unwrap();
    assert_eq!(replay.header, header(2));
    assert_eq!(replay.frames(), 300);
    for frame in 0..300 {
        let inputs = replay.inputs(Frame::new(frame));
        assert_eq!(inputs[..2], [buttons(0, frame), buttons(1, frame)]);
        assert_eq!(inputs[2], Buttons::NONE);
    }
    let frames: Vec<u32> = replay
        .checkpoints
        .iter()
        .map(|c| c.frame.number())
        .collect();
    // The repair of frame 120 supersedes the checkpoint of 120 recorded
    // before it; the last frame's ends the replay.
    assert_eq!(frames, [0, 60, 180, 240, 299]);
    assert_eq!(
        replay
            .checkpoint(Frame::new(60))
            .map(|c| (c.memory, c.video)),
        Some((Checksum(420), Some(Checksum(60))))
    );
    assert_eq!(
        replay.events,
        [
            ReplayEvent::Repair {
                frame: Frame::new(120),
                memory: Some(Checksum(55)),
                state: vec![5; 300]
            },
            ReplayEvent::PlayerLeft {
                frame: Frame::new(300),
                player: 1
            }
        ]
    );
    assert_eq!(replay.end, Some((300, EndReason::Disconnect)));
    assert_eq!(replay.cut_at, None);
    assert_eq!(replay.bytes, bytes.len() as u64);
}

#[test]
fn the_writer_flushes_every_second_of_game_time() {
    let mut writer = ReplayWriter::new(Vec::new(), &header(2)).unwrap();
    let after_header = writer.bytes_written();
    for frame in 0..59 {
        writer.frame(Frame::new(frame), &[], None, None).unwrap();
    }
    assert_eq!(writer.bytes_written(), after_header, "still gathering");
    writer.frame(Frame::new(59), &[], None, None).unwrap();
    assert!(
        writer.bytes_written() > after_header,
        "one second is written"
    );
}

#[test]
fn idle_frames_cost_about_a_bit_per_player() {
    let mut writer = ReplayWriter::new(Vec::new(), &header(2)).unwrap();
    let after_header = writer.bytes_written();
    for frame in 0..6000 {
        writer.frame(Frame::new(frame), &[], None, None).unwrap();
    }
    // One bit per player and frame, plus each second's record framing.
    let per_player_frame = (writer.bytes_written() - after_header) as f64 * 8.0 / 12_000.0;
    assert!(
        per_player_frame < 2.0,
        "{per_player_frame} bits a player and frame"
    );
}

#[test]
fn a_file_cut_anywhere_reads_up_to_its_last_whole_record() {
    let bytes = recorded(200);
    let whole = read_replay(&bytes[..]).unwrap();
    let mut previous_frames = 0;
    for cut in 0..bytes.len() {
        match read_replay(&bytes[..cut]) {
            Ok(replay) => {
                assert!(replay.frames() <= whole.frames());
                assert!(replay.frames() >= previous_frames, "cut at {cut}");
                previous_frames = replay.frames();
                assert_eq!(replay.end, None, "cut at {cut}");
                assert!(replay.bytes <= cut as u64);
                if replay.bytes < cut as u64 {
                    assert_eq!(replay.cut_at, Some(replay.bytes), "cut at {cut}");
                }
                for frame in 0..replay.frames() {
                    assert_eq!(
                        replay.inputs(Frame::new(frame)),
                        whole.inputs(Frame::new(frame))
                    );
                }
            }
            Err(ReplayError::HeaderCut { .. }) | Err(ReplayError::NotAReplay) => {}
            Err(other) => panic!("cut at {cut}: {other}"),
        }
    }
}

#[test]
fn a_flipped_byte_reads_up_to_the_record_it_damages_and_names_its_offset() {
    let bytes = recorded(200);
    let whole = read_replay(&bytes[..]).unwrap();
    let mut corrupted = bytes.clone();
    let position = bytes.len() - 40;
    corrupted[position] ^= 0x10;
    let replay = read_replay(&corrupted[..]).expect("a damaged file reads up to the damage");
    let offset = replay.cut_at.expect("the damaged record's offset is kept");
    assert!(offset <= position as u64 && offset + 64 > position as u64);
    assert_eq!(
        replay.bytes, offset,
        "nothing from the damaged record on is read"
    );
    let damage = replay
        .damage
        .clone()
        .expect("the damage is named")
        .to_string();
    assert!(damage.contains(&format!("byte {offset}")), "{damage}");
    assert_eq!(
        replay.stops_short(),
        Some(format!("damaged: {damage}")),
        "it is told apart from a cut"
    );
    assert_eq!(replay.end, None);
    assert!(replay.frames() <= whole.frames());
    for frame in 0..replay.frames() {
        assert_eq!(
            replay.inputs(Frame::new(frame)),
            whole.inputs(Frame::new(frame))
        );
    }
}

#[test]
fn a_damaged_header_is_refused_naming_its_offset() {
    let mut bytes = recorded(200);
    bytes[netcode::replay::PREAMBLE_SIZE + 20] ^= 0x10;
    let error = read_replay(&bytes[..]).unwrap_err();
    assert_eq!(
        error,
        ReplayError::BadRecordCheck {
            offset: netcode::replay::PREAMBLE_SIZE as u64
        }
    );
}

/// A reader that counts the bytes taken from it.
struct Counting<'a> {
    bytes: &'a [u8],
    taken: usize,
}

impl std::io::Read for Counting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (&self.bytes[self.taken..]).read(buf)?;
        self.taken += n;
        Ok(n)
    }
}

#[test]
fn the_header_alone_is_read_without_the_inputs_after_it_and_a_bad_one_is_an_error() {
    let bytes = recorded(3000);
    let mut counting = Counting {
        bytes: &bytes,
        taken: 0,
    };
    let header = read_replay_header(&mut counting).unwrap();
    assert_eq!(header, read_replay(&bytes[..]).unwrap().header);
    // It stopped at the header's end: the header is in those bytes alone.
    assert!(
        counting.taken < bytes.len(),
        "read all {} bytes",
        bytes.len()
    );
    assert_eq!(
        read_replay_header(&bytes[..counting.taken]).unwrap(),
        header
    );
    for cut in [
        0,
        5,
        netcode::replay::PREAMBLE_SIZE + 10,
        counting.taken - 1,
    ] {
        assert!(read_replay_header(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    let mut damaged = bytes.clone();
    damaged[netcode::replay::PREAMBLE_SIZE + 20] ^= 0x10;
    assert!(matches!(
        read_replay_header(&damaged[..]),
        Err(ReplayError::BadRecordCheck { .. })
    ));
    assert_eq!(
        read_replay_header(&b"PNG\x89 not a replay"[..]).unwrap_err(),
        ReplayError::NotAReplay
    );
}

#[test]
fn a_header_whose_text_holds_a_bidi_override_or_a_byte_order_mark_is_refused_not_printed() {
    for (core_name, player) in [("Duel\u{202E}", "ann"), ("Duel", "\u{FEFF}ann\u{2028}")] {
        let header = ReplayHeader {
            core_name: core_name.into(),
            player_names: vec![player.into(), "bo".into()],
            ..header(2)
        };
        let error = read_back(&header).unwrap_err();
        assert!(error.to_string().contains("a format character"), "{error}");
    }
}

#[test]
fn a_header_whose_text_holds_a_control_character_is_refused_not_printed() {
    let header = ReplayHeader {
        core_name: "Duel\u{1b}[2J".into(),
        ..header(2)
    };
    let mut bytes = Vec::new();
    ReplayWriter::new(&mut bytes, &header)
        .unwrap()
        .finish(EndReason::Finished)
        .unwrap();
    for error in [
        read_replay(&bytes[..]).unwrap_err(),
        read_replay_header(&bytes[..]).unwrap_err(),
    ] {
        assert!(
            error
                .to_string()
                .contains("the core name holds a control character"),
            "{error}"
        );
    }
}

#[test]
fn another_file_or_version_is_refused() {
    assert_eq!(
        read_replay(&b"PNG\x89 not a replay"[..]).unwrap_err(),
        ReplayError::NotAReplay
    );
    let mut bytes = recorded(10);
    bytes[8] = 9;
    assert_eq!(
        read_replay(&bytes[..]).unwrap_err(),
        ReplayError::UnsupportedVersion { found: 9 }
    );
}

#[test]
fn a_replay_recorded_from_a_later_frame_reads_back_numbered_as_the_match() {
    let replay = read_replay(&recorded_from(1000, 150)[..]).unwrap();
    assert_eq!(
        (replay.start_frame(), replay.end_frame(), replay.frames()),
        (Frame::new(1000), Frame::new(1150), 150)
    );
    assert_eq!(replay.inputs(Frame::new(1077))[1], buttons(1, 1077));
    assert_eq!(replay.inputs(Frame::new(999))[1], Buttons::NONE);
    let checkpoints: Vec<u32> = replay
        .checkpoints
        .iter()
        .map(|c| c.frame.number())
        .collect();
    // Checkpoints stay on the match's every-60 frames, so they line up with
    // the players' replays; 1120's, written before the repair at 1120
    // replaced that timeline, is gone; the last frame's ends the replay.
    assert_eq!(checkpoints, vec![1020, 1080, 1140, 1149]);
    assert_eq!(replay.events[0].frame(), Frame::new(1120));
    assert_eq!(replay.end, Some((150, EndReason::Disconnect)));
}

#[test]
fn a_record_of_a_frame_before_the_start_frame_is_refused() {
    let mut bytes = recorded_from(600, 0);
    let end_record_len = 1 + 1 + 2 + 4;
    let departure_len = 1 + 1 + 3 + 4;
    bytes.truncate(bytes.len() - end_record_len - departure_len);
    let mut payload = Vec::new();
    netcode::encoding::put_varint(&mut payload, 120);
    payload.extend_from_slice(&7u64.to_le_bytes());
    payload.push(0);
    forged_record(3, &payload, &mut bytes);
    let error = read_replay(&bytes[..]).unwrap_err().to_string();
    assert!(
        error.contains("before the recording's start frame 600"),
        "{error}"
    );
}

#[test]
fn a_version_2_repair_reads_without_the_memory_checksum_version_3_adds() {
    let mut bytes = recorded_from(600, 0);
    let end_record_len = 1 + 1 + 2 + 4;
    let departure_len = 1 + 1 + 3 + 4;
    bytes.truncate(bytes.len() - end_record_len - departure_len);
    bytes[8..10].copy_from_slice(&2u16.to_le_bytes());
    let mut payload = Vec::new();
    netcode::encoding::put_varint(&mut payload, 620);
    payload.extend_from_slice(&netcode::encoding::state_blob::compress(&[6; 64]));
    forged_record(4, &payload, &mut bytes);
    let replay = read_replay(&bytes[..]).unwrap();
    assert_eq!(
        replay.events.last(),
        Some(&ReplayEvent::Repair {
            frame: Frame::new(620),
            memory: None,
            state: vec![6; 64]
        })
    );
}

/// The bytes of a replay from frame 127 whose header's start frame varint
/// is replaced by `start` (any number, as a hostile file may hold).
fn with_start_frame(start: u64, version: Option<u16>) -> Vec<u8> {
    let good = recorded_from(127, 0);
    let preamble = netcode::replay::PREAMBLE_SIZE;
    let (length, used) = netcode::encoding::read_varint(&good[preamble + 1..]).unwrap();
    let payload_at = preamble + 1 + used;
    let payload = &good[payload_at..payload_at + length as usize];
    // 127 is one varint byte, followed by the start state's checksum (99).
    let mut marker = vec![127u8];
    marker.extend_from_slice(&99u64.to_le_bytes());
    let at = payload
        .windows(marker.len())
        .position(|window| window == marker)
        .unwrap();
    let mut forged = payload[..at].to_vec();
    if version.is_none() {
        netcode::encoding::put_varint(&mut forged, start);
    }
    forged.extend_from_slice(&payload[at + 1..]);
    let mut bytes = good[..preamble].to_vec();
    if let Some(version) = version {
        bytes[8..10].copy_from_slice(&version.to_le_bytes());
    }
    forged_record(1, &forged, &mut bytes);
    bytes
}

#[test]
fn a_version_1_replay_without_a_start_frame_reads_as_starting_at_frame_0() {
    let replay = read_replay(&with_start_frame(0, Some(1))[..]).unwrap();
    assert_eq!(replay.start_frame(), Frame::new(0));
    assert_eq!(replay.header.start_memory_checksum, Checksum(99));
}

/// Appends a record with a valid check, whatever its payload says.
fn forged_record(kind: u8, payload: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.push(kind);
    netcode::encoding::put_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
    let check = xxhash_rust::xxh3::xxh3_64(&out[start..]) as u32;
    out.extend_from_slice(&check.to_le_bytes());
}

#[test]
fn a_start_state_claiming_to_expand_past_the_limit_is_refused_before_expanding() {
    let mut bytes = recorded(0);
    // Cut back to the preamble and forge a header whose start state claims
    // 4 GiB: lz4's size prefix says u32::MAX.
    let mut header_bytes = Vec::new();
    let good = netcode::replay::ReplayHeader {
        start_state: vec![0; 16],
        ..header(2)
    };
    netcode::replay::encode_record(
        &netcode::replay::Record::Header(Box::new(good)),
        &mut header_bytes,
    );
    let blob = lz4_flex::block::compress_prepend_size(&[0u8; 16]);
    let position = header_bytes
        .windows(blob.len())
        .position(|window| window == blob)
        .unwrap();
    bytes.truncate(netcode::replay::PREAMBLE_SIZE);
    let length_len = {
        let (_, used) = netcode::encoding::read_varint(&header_bytes[1..]).unwrap();
        used
    };
    let mut payload = header_bytes[1 + length_len..header_bytes.len() - 4].to_vec();
    let payload_position = position - 1 - length_len;
    payload[payload_position..payload_position + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    forged_record(1, &payload, &mut bytes);
    let error = read_replay(&bytes[..]).unwrap_err().to_string();
    assert!(
        error.contains("start state") && error.contains(&MAX_STATE_BYTES.to_string()),
        "{error}"
    );
}

#[test]
fn an_inputs_record_claiming_more_inputs_than_its_bytes_hold_is_refused() {
    let mut bytes = recorded(0);
    // Drop the end record, then forge inputs claiming 8000 with 3 bytes.
    let end_record_len = 1 + 1 + 2 + 4;
    bytes.truncate(bytes.len() - end_record_len);
    let departure_len = 1 + 1 + 2 + 4;
    bytes.truncate(bytes.len() - departure_len);
    let mut payload = Vec::new();
    netcode::encoding::put_varint(&mut payload, 0);
    netcode::encoding::put_varint(&mut payload, 8000);
    payload.extend_from_slice(&[0, 0, 0]);
    forged_record(2, &payload, &mut bytes);
    let error = read_replay(&bytes[..]).unwrap_err().to_string();
    assert!(error.contains("cannot fit"), "{error}");
}

#[test]
fn a_record_claiming_an_absurd_length_is_damage_found_without_reading_it() {
    let mut bytes = recorded(0);
    let whole = bytes.len() as u64;
    bytes.push(3);
    netcode::encoding::put_varint(&mut bytes, 1 << 40);
    let replay = read_replay(&bytes[..]).unwrap();
    assert!(
        matches!(replay.damage, Some(ReplayError::RecordTooLong { length, offset, .. }) if length == 1 << 40 && offset == whole),
        "{:?}",
        replay.damage
    );
    assert_eq!(replay.cut_at, Some(whole));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = read_replay(&bytes[..]);
        let mut with_preamble = netcode::replay::preamble().to_vec();
        with_preamble.extend_from_slice(&bytes);
        let _ = read_replay(&with_preamble[..]);
    }

    #[test]
    fn mutated_replays_never_panic_and_keep_their_whole_prefix(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = recorded(150);
        for (index, value) in flips {
            let at = index.index(bytes.len());
            bytes[at] = value;
        }
        let keep = cut.index(bytes.len() + 1);
        if let Ok(replay) = read_replay(&bytes[..keep]) {
            prop_assert!(replay.frames() <= 150 + 4096);
            prop_assert!(replay.bytes <= keep as u64);
        }
    }

    #[test]
    fn mutated_spectator_replays_never_panic_and_stay_within_the_frame_limit(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        start in 0..MAX_REPLAY_FRAMES - 200,
    ) {
        let mut bytes = recorded_from(start, 150);
        for (index, value) in flips {
            let at = index.index(bytes.len());
            bytes[at] = value;
        }
        if let Ok(replay) = read_replay(&bytes[..]) {
            prop_assert!(replay.end_frame().number() <= MAX_REPLAY_FRAMES);
            prop_assert!(replay.start_frame() <= replay.end_frame());
        }
    }

    #[test]
    fn a_header_start_frame_is_read_within_the_frame_limit_and_refused_past_it(
        start in prop_oneof![0..=u64::from(MAX_REPLAY_FRAMES), any::<u64>()],
    ) {
        let bytes = with_start_frame(start, None);
        match read_replay(&bytes[..]) {
            Ok(replay) => {
                prop_assert!(start <= u64::from(MAX_REPLAY_FRAMES));
                prop_assert_eq!(u64::from(replay.start_frame().number()), start);
            }
            Err(error) => {
                prop_assert!(start > u64::from(MAX_REPLAY_FRAMES));
                let text = error.to_string();
                prop_assert!(text.contains("the start frame") && text.contains("limit"), "{}", text);
            }
        }
    }

    #[test]
    fn any_inputs_round_trip(
        rows in proptest::collection::vec(proptest::collection::vec(any::<u16>(), 3), 0..400)
    ) {
        let mut writer = ReplayWriter::new(Vec::new(), &header(3)).unwrap();
        for (frame, row) in rows.iter().enumerate() {
            let inputs: Vec<Buttons> = row.iter().map(|&bits| Buttons::from_bits(bits)).collect();
            writer.frame(Frame::new(frame as u32), &inputs, None, None).unwrap();
        }
        let bytes = writer.finish(EndReason::Finished).unwrap().0;
        let replay = read_replay(&bytes[..]).unwrap();
        prop_assert_eq!(replay.frames() as usize, rows.len());
        for (frame, row) in rows.iter().enumerate() {
            let inputs = replay.inputs(Frame::new(frame as u32));
            for (player, &bits) in row.iter().enumerate() {
                prop_assert_eq!(inputs[player].bits(), bits);
            }
        }
    }
}

/// How reading a replay with `header` and no frames goes.
fn read_back(header: &ReplayHeader) -> Result<netcode::replay::Replay, ReplayError> {
    let writer = ReplayWriter::new(Vec::new(), header).unwrap();
    let bytes = writer.finish(EndReason::Finished).unwrap().0;
    read_replay(&bytes[..])
}

#[test]
fn a_header_whose_sample_rate_is_not_a_rate_is_refused() {
    for sample_rate in [f64::NAN, -1.0, f64::INFINITY, 0.0, 1e-300, 1e300] {
        let header = ReplayHeader {
            sample_rate,
            ..header(2)
        };
        let error = read_back(&header).unwrap_err().to_string();
        assert!(error.contains("sample rate"), "{error}");
    }
    let unusual = ReplayHeader {
        sample_rate: 32_040.5,
        ..header(2)
    };
    assert!(read_back(&unusual).is_ok(), "the Genesis's rate");
}

#[test]
fn a_header_whose_frame_rate_makes_its_length_zero_or_endless_is_refused() {
    for (frames_per_second, refused) in [
        (1e300, true),
        (1e-300, true),
        (0.0, true),
        (f64::NAN, true),
        (5000.0, true),
        (50.0, false),
        (59.922_743_404, false),
        (60.0, false),
    ] {
        let header = ReplayHeader {
            frames_per_second,
            ..header(2)
        };
        match read_back(&header) {
            Err(error) => assert!(
                refused && error.to_string().contains("frame rate"),
                "{frames_per_second}: {error}"
            ),
            Ok(_) => assert!(!refused, "{frames_per_second}"),
        }
    }
}

#[test]
fn the_writer_stops_at_the_readers_event_limit_so_every_file_it_writes_reads() {
    let mut writer = ReplayWriter::new(Vec::new(), &header(2)).unwrap();
    for frame in 0..300 {
        writer
            .frame(Frame::new(frame), &[Buttons::NONE; 2], None, None)
            .unwrap();
    }
    let mut written = 0;
    while writer.player_left(Frame::new(300), 1).is_ok() {
        written += 1;
        assert!(written <= 10_000, "the writer never stopped");
    }
    let bytes = writer.finish(EndReason::Disconnect).unwrap().0;
    let replay = read_replay(&bytes[..]).unwrap();
    assert_eq!(replay.events.len(), written);
}
