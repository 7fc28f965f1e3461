use super::client::{device, ClientConfig, ClientEnd, ClientEvent, ClientSession};
use super::state::{
    pack_state, password_hash, state_crc, unpack_state, wrap_in_container, StateError,
};
use super::wire::*;

const LIMIT: usize = 1 << 20;

fn host_reader() -> CommandReader {
    let mut reader = CommandReader::new(Sender::Host, LIMIT);
    reader.push(&Header::client().encode()).unwrap();
    reader.header().unwrap().unwrap();
    reader
}

fn encoded(commands: &[Command]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for command in commands {
        command.encode(&mut bytes);
    }
    bytes
}

fn read_all(reader: &mut CommandReader) -> Result<Vec<Command>, WireError> {
    let mut commands = Vec::new();
    while let Some(command) = reader.command()? {
        commands.push(command);
    }
    Ok(commands)
}

fn sample_sync() -> Sync {
    let mut devices = [device::NONE; MAX_INPUT_DEVICES];
    devices[0] = device::JOYPAD;
    devices[1] = device::JOYPAD;
    let mut device_clients = [0; MAX_INPUT_DEVICES];
    device_clients[0] = 1;
    Sync {
        frame: 10,
        client: 1,
        paused: false,
        devices,
        share_modes: [0; MAX_INPUT_DEVICES],
        device_clients,
        nick: Name::new("netcade"),
        sram: vec![7; 3],
    }
}

fn host_commands() -> Vec<Command> {
    vec![
        Command::Nick(Name::new("host")),
        Command::Info(Some(Info {
            content_crc: 0xdead_beef,
            core_name: Name::new("Stella"),
            core_version: Name::new("6.7"),
        })),
        Command::Info(None),
        Command::Sync(sample_sync()),
        Command::Input {
            frame: 3,
            client: 0,
            input: InputWords::new(&[0x101]).unwrap(),
        },
        Command::NoInput { frame: 4 },
        our_mode(11),
        Command::ModeRefused(2),
        Command::Crc { frame: 30, crc: 9 },
        Command::RequestSavestate,
        Command::LoadSavestate {
            frame: 10,
            size: 4,
            data: vec![1, 2, 3, 4],
        },
        Command::Pause(Name::new("host")),
        Command::Resume,
        Command::Stall(5),
        Command::Reset(12),
        Command::Chat {
            author: Some(Name::new("host")),
            text: "hello".into(),
        },
        Command::PingRequest,
        Command::PingResponse,
        Command::AllowPausing(true),
        Command::InputLatencyFrames { min: 0, max: 2 },
        Command::Disconnect,
        Command::Nak,
    ]
}

#[test]
fn a_header_reads_back_as_it_was_written() {
    let header = Header::client();
    assert_eq!(Header::decode(&header.encode()), Ok(header));
    assert_eq!(header.salt_or_highest, HIGHEST_PROTOCOL);
    assert_eq!(header.protocol, LOWEST_PROTOCOL);
    let full = Header {
        magic: FULL_MAGIC,
        ..header
    };
    assert_eq!(Header::decode(&full.encode()), Err(WireError::HostFull));
    let http = *b"GET / HTTP/1.1\r\nHost: xxx";
    assert!(matches!(
        Header::decode(&http[..HEADER_LEN].try_into().unwrap()),
        Err(WireError::NotRetroArch(_))
    ));
}

#[test]
fn the_implementation_magic_xors_the_shifted_version_bytes_and_the_protocol() {
    // '1' << 0, then protocol 6 << len 1.
    assert_eq!(implementation_magic("1", 6), 0x31 ^ (6 << 1));
    // "12": '1' ^ ('2' << 1) ^ (5 << 2).
    assert_eq!(implementation_magic("12", 5), 0x31 ^ (0x32 << 1) ^ (5 << 2));
}

#[test]
fn every_host_command_reads_back_as_it_was_written() {
    let commands = host_commands();
    let mut reader = host_reader();
    reader.push(&encoded(&commands)).unwrap();
    assert_eq!(read_all(&mut reader).unwrap(), commands);
}

#[test]
fn client_commands_read_back_as_they_were_written() {
    let commands = vec![
        Command::Nick(Name::new("player")),
        Command::Password(password_hash(1, "x")),
        Command::Play {
            devices: 2,
            share_mode: 0x24,
            slave: true,
        },
        Command::Spectate,
        Command::Input {
            frame: 11,
            client: 1,
            input: InputWords::new(&[0x100, 0, 0]).unwrap(),
        },
        Command::Chat {
            author: None,
            text: "gg".into(),
        },
    ];
    let mut reader = CommandReader::new(Sender::Client, LIMIT);
    reader.push(&Header::client().encode()).unwrap();
    reader.push(&encoded(&commands)).unwrap();
    assert!(reader.header().unwrap().is_some());
    assert_eq!(read_all(&mut reader).unwrap(), commands);
}

#[test]
fn commands_arriving_a_byte_at_a_time_read_the_same() {
    let commands = host_commands();
    let mut reader = host_reader();
    let mut read = Vec::new();
    for byte in encoded(&commands) {
        reader.push(&[byte]).unwrap();
        read.extend(read_all(&mut reader).unwrap());
    }
    assert_eq!(read, commands);
}

#[test]
fn a_command_of_the_wrong_length_is_refused_before_its_payload_comes() {
    let mut reader = host_reader();
    // A NICK of 31 bytes.
    reader.push(&[0, 0, 0, 0x20, 0, 0, 0, 31]).unwrap();
    assert!(matches!(
        reader.command(),
        Err(WireError::BadLength {
            command: 0x20,
            length: 31,
            ..
        })
    ));
    // A savestate claiming 4 GiB: refused with only its 8 header bytes in.
    let mut reader = host_reader();
    reader
        .push(&[0, 0, 0, 0x42, 0xff, 0xff, 0xff, 0xff])
        .unwrap();
    assert!(matches!(reader.command(), Err(WireError::BadLength { .. })));
    // A chat line from the host without its author.
    let mut reader = host_reader();
    reader
        .push(&[0, 0, 0x10, 0, 0, 0, 0, 3, b'h', b'e', b'y'])
        .unwrap();
    assert!(matches!(reader.command(), Err(WireError::BadLength { .. })));
}

#[test]
fn an_unknown_command_is_skipped_and_the_next_one_read() {
    let mut reader = host_reader();
    let mut bytes = vec![0, 0, 0x77, 0x77, 0, 0, 0, 3, 1, 2, 3];
    Command::Resume.encode(&mut bytes);
    reader.push(&bytes).unwrap();
    assert_eq!(
        read_all(&mut reader).unwrap(),
        vec![Command::Unknown { command: 0x7777 }, Command::Resume]
    );
}

#[test]
fn a_peer_flooding_more_than_the_largest_command_is_cut_off() {
    let mut reader = CommandReader::new(Sender::Host, 1000);
    let flood = vec![0u8; 4096];
    assert!(matches!(
        reader.push(&flood),
        Err(WireError::Flooded { .. })
    ));
}

/// A seeded xorshift, so the fuzz cases are the same on every run.
fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn random_and_cut_short_bytes_give_errors_or_commands_never_a_panic() {
    let valid = encoded(&host_commands());
    let mut seed = 0x5eed_u64;
    for case in 0..2000 {
        let mut bytes = if case % 2 == 0 {
            let cut = (xorshift(&mut seed) as usize) % valid.len();
            valid[..cut].to_vec()
        } else {
            valid.clone()
        };
        // Flip a few bytes: lengths, command words, payloads.
        for _ in 0..(xorshift(&mut seed) % 4) {
            let at = (xorshift(&mut seed) as usize) % bytes.len().max(1);
            if let Some(byte) = bytes.get_mut(at) {
                *byte = xorshift(&mut seed) as u8;
            }
        }
        if case % 5 == 0 {
            bytes = (0..(xorshift(&mut seed) % 300))
                .map(|_| xorshift(&mut seed) as u8)
                .collect();
        }
        let mut reader = host_reader();
        if reader.push(&bytes).is_ok() {
            let _ = read_all(&mut reader);
        }
        // The same bytes to a fresh client session: it ends or waits.
        let mut session = ClientSession::new(config());
        let mut header = Header::client();
        header.protocol = HIGHEST_PROTOCOL;
        header.salt_or_highest = 0;
        session.receive(&header.encode(), 0);
        session.receive(&bytes, 0);
        while session.next_event().is_some() {}
    }
}

#[test]
fn a_savestate_inflates_to_exactly_its_claimed_size() {
    let state: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
    let packed = pack_state(&state, true);
    assert!(packed.len() < state.len());
    assert_eq!(
        unpack_state(&packed, state.len(), true, LIMIT),
        Ok(state.clone())
    );
    assert_eq!(unpack_state(&state, state.len(), false, LIMIT), Ok(state));
}

#[test]
fn a_zlib_bomb_is_stopped_at_its_claimed_size() {
    let bomb = pack_state(&vec![0u8; 10_000_000], true);
    assert_eq!(
        unpack_state(&bomb, 100, true, LIMIT),
        Err(StateError::Damaged { claimed: 100 })
    );
    assert_eq!(
        unpack_state(&bomb, 10_000_000, true, LIMIT),
        Err(StateError::TooLarge {
            claimed: 10_000_000,
            limit: LIMIT
        })
    );
    assert!(unpack_state(&[1, 2, 3], 3, true, LIMIT).is_err());
}

#[test]
fn the_password_hash_is_sha256_of_the_hex_salt_and_password_in_lowercase_hex() {
    assert_eq!(
        &password_hash(0x1234_ABCD, "secret"),
        b"63cdaa9aaf4506840c5dab53b18b93413a0af4e6de3822532988f30cb036f505"
    );
}

#[test]
fn the_state_crc_is_zlibs_crc32() {
    assert_eq!(state_crc(b"123456789"), 0xCBF4_3926);
}

// The client session, against a host played by these tests.

fn config() -> ClientConfig {
    ClientConfig {
        nick: "netcade".into(),
        password: None,
        core_name: "Stella".into(),
        core_version: "6.7".into(),
        content_crc: 0xdead_beef,
        state_size: 4,
        max_state_bytes: LIMIT,
        spectate: false,
        input_lead: 0,
    }
}

/// What the client sent since the last look.
fn sent(session: &mut ClientSession, reader: &mut CommandReader) -> Vec<Command> {
    let mut bytes = Vec::new();
    session.take_outgoing(&mut bytes);
    reader.push(&bytes).unwrap();
    let _ = reader.header().unwrap();
    read_all(reader).unwrap()
}

fn host_header(salt: u32) -> Header {
    Header {
        salt_or_highest: salt,
        protocol: HIGHEST_PROTOCOL,
        ..Header::client()
    }
}

fn events(session: &mut ClientSession) -> Vec<ClientEvent> {
    std::iter::from_fn(|| session.next_event()).collect()
}

/// A session through the handshake to SYNC at frame 10, host on port 0.
fn connected() -> (ClientSession, CommandReader) {
    connected_with(config())
}

fn connected_with(config: ClientConfig) -> (ClientSession, CommandReader) {
    let mut session = ClientSession::new(config);
    let mut from_client = CommandReader::new(Sender::Client, LIMIT);
    assert!(sent(&mut session, &mut from_client).is_empty());
    session.receive(&host_header(0).encode(), 0);
    assert_eq!(
        sent(&mut session, &mut from_client),
        vec![Command::Nick(Name::new("netcade"))]
    );
    let commands = host_commands();
    session.receive(&encoded(&commands[..2]), 0);
    assert!(matches!(
        sent(&mut session, &mut from_client)[..],
        [Command::Info(Some(_))]
    ));
    session.receive(&encoded(&[Command::Sync(sample_sync())]), 0);
    assert_eq!(
        sent(&mut session, &mut from_client),
        vec![Command::Play {
            devices: 0,
            share_mode: 0,
            slave: false
        }]
    );
    assert_eq!(
        events(&mut session),
        vec![ClientEvent::Connected {
            host: "host".into(),
            protocol: HIGHEST_PROTOCOL,
            frame: 10
        }]
    );
    (session, from_client)
}

fn host_input(frame: u32, buttons: u32) -> Command {
    Command::Input {
        frame,
        client: 0,
        input: InputWords::new(&[buttons]).unwrap(),
    }
}

fn our_mode(frame: u32) -> Command {
    Command::Mode(Mode {
        frame,
        you: true,
        playing: true,
        slave: false,
        client: 1,
        devices: 2,
        share_modes: [0; MAX_INPUT_DEVICES],
        nick: Name::new("netcade"),
    })
}

fn savestate(frame: u32) -> Command {
    let state = [1u8, 2, 3, 4];
    Command::LoadSavestate {
        frame,
        size: 4,
        data: pack_state(&state, true),
    }
}

#[test]
fn the_client_shakes_hands_as_retroarch_does_and_asks_to_play() {
    connected();
}

#[test]
fn a_host_with_another_core_ends_the_session_naming_both() {
    let mut session = ClientSession::new(config());
    session.receive(&host_header(0).encode(), 0);
    let info = Command::Info(Some(Info {
        content_crc: 1,
        core_name: Name::new("Genesis Plus GX"),
        core_version: Name::new("1.7.4"),
    }));
    session.receive(&encoded(&[Command::Nick(Name::new("host")), info]), 0);
    let ended = events(&mut session).pop();
    let Some(ClientEvent::Ended(end)) = ended else {
        panic!("not ended: {ended:?}");
    };
    assert_eq!(
        end.to_string(),
        "the host runs Genesis Plus GX 1.7.4; you chose Stella 6.7"
    );
}

#[test]
fn a_salted_host_gets_the_hashed_password_or_a_clear_ending_without_one() {
    let mut session = ClientSession::new(ClientConfig {
        password: Some("secret".into()),
        ..config()
    });
    let mut from_client = CommandReader::new(Sender::Client, LIMIT);
    session.receive(&host_header(0x1234_ABCD).encode(), 0);
    session.receive(&encoded(&[Command::Nick(Name::new("host"))]), 0);
    assert_eq!(
        sent(&mut session, &mut from_client)[1],
        Command::Password(password_hash(0x1234_ABCD, "secret"))
    );
    session.closed();
    assert_eq!(
        events(&mut session),
        vec![ClientEvent::Ended(ClientEnd::WrongPassword)]
    );

    let mut session = ClientSession::new(config());
    session.receive(&host_header(7).encode(), 0);
    session.receive(&encoded(&[Command::Nick(Name::new("host"))]), 0);
    assert_eq!(
        events(&mut session),
        vec![ClientEvent::Ended(ClientEnd::PasswordNeeded)]
    );
}

#[test]
fn frames_run_in_lockstep_with_the_hosts_clock_from_its_savestate() {
    let (mut session, mut from_client) = connected();
    // No state yet: nothing runs, even with the host's input in.
    session.receive(&encoded(&[savestate(10)]), 0);
    assert_eq!(session.take_state(), Some((10, vec![1, 2, 3, 4])));
    assert_eq!(session.ready_frame(), None, "frame 10 waits for the host");
    session.receive(&encoded(&[host_input(10, 0x10)]), 0);
    session.receive(&encoded(&[our_mode(11)]), 0);
    assert_eq!(session.ready_frame(), Some(10));
    // Frame 10 is before ours: the host's buttons only, nothing sent.
    let ports = session.play_frame(0x100, None);
    assert_eq!((ports[0], ports[1]), (0x10, 0));
    assert!(sent(&mut session, &mut from_client).is_empty());
    assert_eq!(session.ready_frame(), None, "frame 11 waits for the host");
    session.receive(&encoded(&[host_input(11, 0x20)]), 0);
    let ports = session.play_frame(0x100, None);
    assert_eq!((ports[0], ports[1]), (0x20, 0x100));
    assert_eq!(
        sent(&mut session, &mut from_client),
        vec![Command::Input {
            frame: 11,
            client: 1,
            input: InputWords::new(&[0x100]).unwrap()
        }]
    );
}

#[test]
fn our_input_goes_out_for_every_frame_from_our_first_even_before_the_state() {
    let (mut session, mut from_client) = connected();
    session.receive(
        &encoded(&[our_mode(10), host_input(10, 0), host_input(11, 0)]),
        0,
    );
    session.receive(&encoded(&[savestate(12), host_input(12, 0)]), 0);
    session.take_state();
    assert_eq!(session.ready_frame(), Some(12));
    session.play_frame(0x8, None);
    let frames: Vec<(u32, u32)> = sent(&mut session, &mut from_client)
        .into_iter()
        .map(|command| match command {
            Command::Input { frame, input, .. } => (frame, input.words()[0]),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(frames, vec![(10, 0), (11, 0), (12, 0x8)]);
}

#[test]
fn a_host_crc_unlike_ours_asks_for_the_hosts_state() {
    let (mut session, mut from_client) = connected();
    session.receive(
        &encoded(&[savestate(10), host_input(10, 0), host_input(11, 0)]),
        0,
    );
    session.take_state();
    session.play_frame(0, Some(111));
    session.play_frame(0, Some(222));
    session.receive(
        &encoded(&[Command::Crc {
            frame: 10,
            crc: 111,
        }]),
        0,
    );
    assert_eq!(session.stats().crc_mismatches, 0);
    session.receive(
        &encoded(&[Command::Crc {
            frame: 11,
            crc: 999,
        }]),
        0,
    );
    assert_eq!(session.stats().crc_checks, 2);
    assert_eq!(session.stats().crc_mismatches, 1);
    assert_eq!(
        sent(&mut session, &mut from_client),
        vec![Command::RequestSavestate]
    );
    assert!(events(&mut session).contains(&ClientEvent::Desynced { frame: 11 }));
}

#[test]
fn a_crc_that_comes_before_its_frame_runs_is_checked_when_it_does() {
    let (mut session, _) = connected();
    session.receive(
        &encoded(&[savestate(10), Command::Crc { frame: 10, crc: 5 }]),
        0,
    );
    session.receive(&encoded(&[host_input(10, 0)]), 0);
    session.take_state();
    assert!(session.wants_crc(10));
    session.play_frame(0, Some(5));
    assert_eq!(session.stats().crc_checks, 1);
    assert_eq!(session.stats().crc_mismatches, 0);
}

#[test]
fn input_out_of_order_ends_the_session() {
    let (mut session, _) = connected();
    session.receive(&encoded(&[host_input(12, 0)]), 0);
    assert!(matches!(
        events(&mut session).pop(),
        Some(ClientEvent::Ended(ClientEnd::Protocol(_)))
    ));
}

#[test]
fn a_savestate_of_another_size_than_our_cores_ends_the_session() {
    let (mut session, _) = connected();
    let state = vec![0u8; 8];
    session.receive(
        &encoded(&[Command::LoadSavestate {
            frame: 10,
            size: 8,
            data: pack_state(&state, true),
        }]),
        0,
    );
    assert_eq!(
        events(&mut session).pop(),
        Some(ClientEvent::Ended(ClientEnd::StateSize {
            host: 8,
            ours: 4
        }))
    );
}

#[test]
fn the_host_is_answered_pings_and_ours_measure_the_round_trip() {
    let (mut session, mut from_client) = connected();
    session.receive(&encoded(&[Command::PingRequest]), 0);
    session.poll(5000);
    assert_eq!(
        sent(&mut session, &mut from_client),
        vec![Command::PingResponse, Command::PingRequest]
    );
    session.receive(&encoded(&[Command::PingResponse]), 5042);
    assert_eq!(session.stats().ping_ms, Some(42));
}

#[test]
fn an_analog_pad_port_carries_three_words_of_which_the_first_is_buttons() {
    let (mut session, mut from_client) = connected();
    // Host plays an analog pad on port 0; we get port 1, a mouse.
    let mut sync = sample_sync();
    sync.devices[0] = device::ANALOG;
    sync.devices[1] = device::MOUSE;
    let mut session2 = ClientSession::new(config());
    session2.receive(&host_header(0).encode(), 0);
    let commands = host_commands();
    session2.receive(&encoded(&commands[..2]), 0);
    session2.receive(&encoded(&[Command::Sync(sync), savestate(10)]), 0);
    session2.take_state();
    session2.receive(&encoded(&[our_mode(10)]), 0);
    session2.receive(
        &encoded(&[Command::Input {
            frame: 10,
            client: 0,
            input: InputWords::new(&[0x30, 0x7fff_8000, 0]).unwrap(),
        }]),
        0,
    );
    let ports = session2.play_frame(0x100, None);
    assert_eq!((ports[0], ports[1]), (0x30, 0), "a mouse gets no buttons");
    let mut reader = CommandReader::new(Sender::Client, LIMIT);
    let ours = sent(&mut session2, &mut reader);
    assert!(matches!(
        ours.last(),
        Some(Command::Input { input, .. }) if input.words() == [0, 0]
    ));
    // A joypad host sending three words is refused.
    session.receive(&encoded(&[savestate(10)]), 0);
    session.receive(
        &encoded(&[Command::Input {
            frame: 10,
            client: 0,
            input: InputWords::new(&[1, 2, 3]).unwrap(),
        }]),
        0,
    );
    let _ = sent(&mut session, &mut from_client);
    assert!(matches!(
        events(&mut session).pop(),
        Some(ClientEvent::Ended(ClientEnd::Protocol(_)))
    ));
}

#[test]
fn with_a_lead_our_input_goes_out_that_many_frames_ahead_the_first_at_once() {
    let (mut session, mut from_client) = connected_with(ClientConfig {
        input_lead: 2,
        ..config()
    });
    let inputs = |session: &mut ClientSession, from_client: &mut CommandReader| {
        sent(session, from_client)
            .into_iter()
            .map(|command| match command {
                Command::Input { frame, input, .. } => (frame, input.words()[0]),
                other => panic!("{other:?}"),
            })
            .collect::<Vec<_>>()
    };
    session.receive(&encoded(&[our_mode(10)]), 0);
    // A host waiting for our frame 10 gets it before it sends its own.
    assert_eq!(
        inputs(&mut session, &mut from_client),
        vec![(10, 0), (11, 0)]
    );
    session.receive(
        &encoded(&[savestate(10), host_input(10, 0), host_input(11, 0)]),
        0,
    );
    session.take_state();
    let ports = session.play_frame(0x8, None);
    assert_eq!(ports[1], 0, "frame 10 plays what went out for it");
    assert_eq!(inputs(&mut session, &mut from_client), vec![(12, 0x8)]);
    let ports = session.play_frame(0x4, None);
    assert_eq!(ports[1], 0);
    session.receive(&encoded(&[host_input(12, 0)]), 0);
    let ports = session.play_frame(0x2, None);
    assert_eq!(
        ports[1], 0x8,
        "frame 12 plays the buttons read two frames before"
    );
    assert_eq!(
        inputs(&mut session, &mut from_client),
        vec![(13, 0x4), (14, 0x2)]
    );
}

/// A protocol 7 host's LOAD_SAVESTATE as its text lays it out: the frame,
/// the container's size, then the container zlib-packed: `NETPLAY` 1, a
/// `MEM ` block (little-endian size, padded to 8), an `ACHV` block of 8
/// flag bytes and more, `END `.
fn container_savestate(frame: u32, core: &[u8]) -> Command {
    let mut container = b"NETPLAY\x01".to_vec();
    for (tag, body) in [
        (b"ACHV", &[1u8, 0, 0, 0, 0, 0, 0, 0, 0xAA, 0xBB][..]),
        (b"MEM ", core),
        (b"END ", &[][..]),
    ] {
        container.extend_from_slice(tag);
        container.extend_from_slice(&(body.len() as u32).to_le_bytes());
        container.extend_from_slice(body);
        container.resize(container.len().next_multiple_of(8), 0);
    }
    Command::LoadSavestate {
        frame,
        size: container.len() as u32,
        data: pack_state(&container, true),
    }
}

#[test]
fn a_protocol_7_hosts_state_in_its_container_loads_the_core_state_inside() {
    let (mut session, _) = connected();
    session.receive(&encoded(&[container_savestate(10, &[1, 2, 3, 4])]), 0);
    assert_eq!(session.take_state(), Some((10, vec![1, 2, 3, 4])));
    assert!(!session.is_ended());
}

#[test]
fn a_container_whose_core_state_is_not_our_cores_size_ends_naming_both_sizes() {
    let (mut session, _) = connected();
    session.receive(&encoded(&[container_savestate(10, &[1, 2, 3])]), 0);
    let ended = events(&mut session).pop();
    assert_eq!(
        ended,
        Some(ClientEvent::Ended(ClientEnd::StateSize {
            host: 3,
            ours: 4
        }))
    );
}

#[test]
fn a_damaged_container_ends_the_session_instead_of_loading() {
    let (mut session, _) = connected();
    let container = b"NETPLAY\x01MEM \xff\xff\xff\x7f".to_vec();
    let command = Command::LoadSavestate {
        frame: 10,
        size: container.len() as u32,
        data: pack_state(&container, true),
    };
    session.receive(&encoded(&[command]), 0);
    assert!(matches!(
        events(&mut session).pop(),
        Some(ClientEvent::Ended(ClientEnd::State(StateError::Container(
            _
        ))))
    ));
    assert_eq!(session.take_state(), None);
}

#[test]
fn at_protocol_6_a_state_that_begins_like_a_container_is_the_cores_own() {
    let mut session = ClientSession::new(ClientConfig {
        state_size: 16,
        ..config()
    });
    let mut header = host_header(0);
    header.protocol = 6;
    session.receive(&header.encode(), 0);
    let commands = host_commands();
    session.receive(&encoded(&commands[..2]), 0);
    session.receive(&encoded(&[Command::Sync(sample_sync())]), 0);
    let state = *b"NETPLAY\x01 not one";
    let command = Command::LoadSavestate {
        frame: 10,
        size: 16,
        data: pack_state(&state, true),
    };
    session.receive(&encoded(&[command]), 0);
    assert_eq!(session.take_state(), Some((10, state.to_vec())));
}

#[test]
fn a_container_we_wrap_is_read_back_by_our_own_client() {
    let container = wrap_in_container(&[1, 2, 3, 4]);
    let (mut session, _) = connected();
    let command = Command::LoadSavestate {
        frame: 10,
        size: container.len() as u32,
        data: pack_state(&container, true),
    };
    session.receive(&encoded(&[command]), 0);
    assert_eq!(session.take_state(), Some((10, vec![1, 2, 3, 4])));
}
