//! The host session, against clients played by these tests and against
//! netcade's own client session.

use super::client::{ClientConfig, ClientEvent, ClientSession};
use super::server::{Refusal, ServerConfig, ServerEvent, ServerSession};
use super::state::{password_hash, state_crc};
use super::wire::*;

const LIMIT: usize = 1 << 20;

fn server_config() -> ServerConfig {
    ServerConfig {
        nick: "host".into(),
        password: None,
        spectate_password: None,
        core_name: "Stella".into(),
        core_version: "6.7".into(),
        content_crc: 0xdead_beef,
        ports: 2,
        check_frames: 30,
        max_state_bytes: LIMIT,
        allow_pausing: true,
    }
}

fn client_header(low: u32, high: u32) -> Header {
    Header {
        salt_or_highest: high,
        protocol: low,
        ..Header::client()
    }
}

fn encoded(commands: &[Command]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for command in commands {
        command.encode(&mut bytes);
    }
    bytes
}

/// What the host sent `id` since the last look: its header once, then
/// its commands.
struct Seen {
    reader: CommandReader,
    header: Option<Header>,
}

impl Seen {
    fn new() -> Seen {
        Seen {
            reader: CommandReader::new(Sender::Host, LIMIT),
            header: None,
        }
    }

    fn take(&mut self, server: &mut ServerSession, id: usize) -> Vec<Command> {
        let mut bytes = Vec::new();
        server.take_outgoing(id, &mut bytes);
        self.reader.push(&bytes).unwrap();
        if let Some(header) = self.reader.header().unwrap() {
            self.header = Some(header);
        }
        std::iter::from_fn(|| self.reader.command().unwrap()).collect()
    }
}

fn events(server: &mut ServerSession) -> Vec<ServerEvent> {
    std::iter::from_fn(|| server.next_event()).collect()
}

fn info(core: &str) -> Command {
    Command::Info(Some(Info {
        content_crc: 0xdead_beef,
        core_name: Name::new(core),
        core_version: Name::new("6.7"),
    }))
}

/// A RetroArch-like client through the handshake and PLAY.
fn playing(server: &mut ServerSession) -> (usize, Seen) {
    let id = server.accept(7).unwrap();
    let mut seen = Seen::new();
    server.receive(id, &client_header(5, 6).encode(), 0);
    server.receive(id, &encoded(&[Command::Nick(Name::new("ra"))]), 0);
    server.receive(id, &encoded(&[info("stella")]), 0);
    let commands = seen.take(server, id);
    assert!(matches!(
        commands[..],
        [
            Command::Nick(_),
            Command::Info(Some(_)),
            Command::Sync(_),
            ..
        ]
    ));
    assert!(server.wants_state());
    server.send_state(&[1, 2, 3, 4]);
    server.receive(
        id,
        &encoded(&[Command::Play {
            devices: 0,
            share_mode: 0,
            slave: false,
        }]),
        0,
    );
    (id, seen)
}

fn client_input(frame: u32, buttons: u32) -> Command {
    Command::Input {
        frame,
        client: 0,
        input: InputWords::new(&[buttons]).unwrap(),
    }
}

#[test]
fn the_host_speaks_the_clients_highest_protocol_up_to_its_own() {
    for (low, high, chosen) in [(5, 6, 6), (5, 7, 7), (5, 8, 7), (5, 5, 5), (6, 0, 6)] {
        let mut server = ServerSession::new(server_config());
        let id = server.accept(1).unwrap();
        server.receive(id, &client_header(low, high).encode(), 0);
        let mut seen = Seen::new();
        seen.take(&mut server, id);
        let header = seen.header.unwrap();
        assert_eq!((header.protocol, header.salt_or_highest), (chosen, 0));
    }
}

#[test]
fn a_client_of_no_protocol_we_speak_gets_protocol_0_and_is_turned_away() {
    let mut server = ServerSession::new(server_config());
    let id = server.accept(1).unwrap();
    server.receive(id, &client_header(3, 4).encode(), 0);
    let mut seen = Seen::new();
    seen.take(&mut server, id);
    assert_eq!(seen.header.unwrap().protocol, 0);
    assert!(!server.is_open(id));
    assert!(matches!(
        events(&mut server)[..],
        [ServerEvent::Refused {
            why: Refusal::Version { low: 3, high: 4 },
            ..
        }]
    ));
}

#[test]
fn a_client_with_another_core_is_turned_away_naming_both() {
    let mut server = ServerSession::new(server_config());
    let id = server.accept(1).unwrap();
    server.receive(id, &client_header(5, 6).encode(), 0);
    server.receive(
        id,
        &encoded(&[Command::Nick(Name::new("ra")), info("Genesis Plus GX")]),
        0,
    );
    assert!(!server.is_open(id));
    let why = match &events(&mut server)[..] {
        [ServerEvent::Refused { why, .. }] => why.to_string(),
        other => panic!("{other:?}"),
    };
    assert_eq!(why, "runs Genesis Plus GX 6.7; this host runs Stella 6.7");
}

#[test]
fn the_players_password_plays_the_spectators_watches_and_a_wrong_one_is_turned_away() {
    let config = ServerConfig {
        password: Some("sesame".into()),
        spectate_password: Some("peek".into()),
        ..server_config()
    };
    let mut server = ServerSession::new(config);
    let try_password = |server: &mut ServerSession, salt: u32, password: &str| {
        let id = server.accept(salt).unwrap();
        server.receive(id, &client_header(5, 6).encode(), 0);
        let mut seen = Seen::new();
        seen.take(server, id);
        let salt = seen.header.unwrap().salt_or_highest;
        let hash = password_hash(salt, password);
        server.receive(
            id,
            &encoded(&[Command::Nick(Name::new("ra")), Command::Password(hash)]),
            0,
        );
        if server.is_open(id) {
            server.receive(id, &encoded(&[info("Stella")]), 0);
            server.receive(
                id,
                &encoded(&[Command::Play {
                    devices: 0,
                    share_mode: 0,
                    slave: false,
                }]),
                0,
            );
        }
        let commands = seen.take(server, id);
        (id, commands)
    };
    let (wrong, _) = try_password(&mut server, 9, "open");
    assert!(!server.is_open(wrong));
    assert!(events(&mut server).iter().any(|event| matches!(
        event,
        ServerEvent::Refused {
            why: Refusal::WrongPassword,
            ..
        }
    )));
    let (_, watching) = try_password(&mut server, 10, "peek");
    assert!(watching.contains(&Command::ModeRefused(1)), "{watching:?}");
    let (_, plays) = try_password(&mut server, 11, "sesame");
    assert!(
        plays.iter().any(
            |c| matches!(c, Command::Mode(mode) if mode.you && mode.playing && mode.devices == 2)
        ),
        "{plays:?}"
    );
}

#[test]
fn frames_wait_for_the_players_input_and_carry_the_hosts_and_a_crc_every_30() {
    let mut server = ServerSession::new(server_config());
    let (id, mut seen) = playing(&mut server);
    let commands = seen.take(&mut server, id);
    assert!(
        matches!(&commands[..], [Command::LoadSavestate { frame: 0, size: 4, .. }, Command::Mode(mode)] if mode.frame == 0 && mode.you)
    );
    assert_eq!(
        server.ready_frame(),
        None,
        "the player's input of frame 0 has not come"
    );
    server.receive(
        id,
        &encoded(&[client_input(0, 0x10), client_input(1, 0x20)]),
        0,
    );
    assert_eq!(server.ready_frame(), Some(0));
    let ports = server.play_frame(0x1, Some(0xabcd));
    assert_eq!((ports[0], ports[1]), (0x1, 0x10));
    assert_eq!(
        seen.take(&mut server, id),
        vec![
            client_input(0, 0x1),
            Command::Crc {
                frame: 0,
                crc: 0xabcd
            }
        ]
    );
    assert_eq!(server.ready_frame(), Some(1));
    server.play_frame(0, None);
    assert_eq!(server.ready_frame(), None);
    assert!(server.wants_crc(30) && !server.wants_crc(31));
}

#[test]
fn a_players_input_out_of_order_or_too_far_ahead_cuts_it_off_with_a_nak() {
    for inputs in [
        vec![client_input(1, 0)],
        (0..700).map(|f| client_input(f, 0)).collect(),
    ] {
        let mut server = ServerSession::new(server_config());
        let (id, mut seen) = playing(&mut server);
        seen.take(&mut server, id);
        server.receive(id, &encoded(&inputs), 0);
        assert!(!server.is_open(id));
        assert_eq!(seen.take(&mut server, id).last(), Some(&Command::Nak));
        assert!(events(&mut server).iter().any(|event| matches!(
            event,
            ServerEvent::Refused {
                why: Refusal::Protocol(_),
                ..
            }
        )));
    }
}

#[test]
fn a_player_asking_for_the_hosts_state_gets_it_before_the_next_frame() {
    let mut server = ServerSession::new(server_config());
    let (id, mut seen) = playing(&mut server);
    server.receive(
        id,
        &encoded(&[client_input(0, 0), Command::RequestSavestate]),
        0,
    );
    assert!(server.wants_state());
    assert_eq!(server.ready_frame(), None, "the state goes first");
    server.send_state(&[9, 9, 9, 9]);
    assert!(matches!(
        seen.take(&mut server, id).last(),
        Some(Command::LoadSavestate { frame: 0, .. })
    ));
    assert_eq!(server.ready_frame(), Some(0));
    assert_eq!(server.stats().states_asked, 1);
}

#[test]
fn netcades_own_client_and_host_play_200_frames_with_every_crc_matching() {
    let mut server = ServerSession::new(server_config());
    let mut client = ClientSession::new(ClientConfig {
        nick: "netcade".into(),
        password: None,
        core_name: "Stella".into(),
        core_version: "6.7".into(),
        content_crc: 0xdead_beef,
        state_size: 4,
        max_state_bytes: LIMIT,
        spectate: false,
        input_lead: 2,
    });
    let id = server.accept(1).unwrap();
    // Both run the same toy game: the state is the frame's sum of buttons.
    let (mut host_state, mut client_state) = (0u32, 0u32);
    let mut bytes = Vec::new();
    for step in 0..2000u64 {
        bytes.clear();
        client.take_outgoing(&mut bytes);
        server.receive(id, &bytes, step);
        if server.wants_state() {
            server.send_state(&host_state.to_le_bytes());
        }
        // One host frame a step: the host's clock paces the match.
        if let Some(frame) = server.ready_frame() {
            let crc = server
                .wants_crc(frame)
                .then(|| state_crc(&host_state.to_le_bytes()));
            let ports = server.play_frame(frame % 7, crc);
            host_state = host_state
                .wrapping_mul(31)
                .wrapping_add(ports[0] + 3 * ports[1]);
        }
        bytes.clear();
        server.take_outgoing(id, &mut bytes);
        client.receive(&bytes, step);
        if let Some((_, state)) = client.take_state() {
            client_state = u32::from_le_bytes(state.try_into().unwrap());
        }
        while let Some(frame) = client.ready_frame() {
            let crc = client
                .wants_crc(frame)
                .then(|| state_crc(&client_state.to_le_bytes()));
            let ports = client.play_frame(frame % 5, crc);
            client_state = client_state
                .wrapping_mul(31)
                .wrapping_add(ports[0] + 3 * ports[1]);
        }
        if client.next_frame() >= 200 {
            break;
        }
    }
    assert!(client.next_frame() >= 200);
    let stats = client.stats();
    assert!(stats.crc_checks >= 6, "{stats:?}");
    assert_eq!(stats.crc_mismatches, 0, "{stats:?}");
    assert_eq!(server.stats().states_asked, 0);
    assert!(std::iter::from_fn(|| client.next_event())
        .any(|event| matches!(event, ClientEvent::Playing { devices: 2, .. })));
}

#[test]
fn a_connection_that_stalls_its_handshake_frees_its_client_number_after_10_s() {
    let mut server = ServerSession::new(server_config());
    let mut stalled = Vec::new();
    while let Some(id) = server.accept(7) {
        server.receive(id, &client_header(5, 6).encode(), 0);
        stalled.push(id);
    }
    assert!(stalled.len() > 1, "the match was full at once");
    server.poll(0);
    server.poll(9_999);
    assert!(stalled.iter().all(|&id| server.is_open(id)));
    server.poll(10_000);
    assert!(stalled.iter().all(|&id| !server.is_open(id)));
    assert!(events(&mut server).iter().any(|event| matches!(
        event,
        ServerEvent::Refused {
            why: Refusal::SlowHandshake,
            ..
        }
    )));
    for id in stalled {
        server.forget(id);
    }
    assert!(server.accept(7).is_some(), "a real player finds a place");
}

#[test]
fn a_player_silent_for_10_s_is_dropped_and_the_clock_goes_on_without_it() {
    let mut server = ServerSession::new(server_config());
    let (id, _seen) = playing(&mut server);
    server.poll(0);
    server.receive(id, &encoded(&[client_input(0, 0)]), 1_000);
    server.poll(10_999);
    assert!(server.is_open(id), "heard 10 s ago less a millisecond");
    server.poll(11_000);
    assert!(!server.is_open(id));
    assert!(events(&mut server).iter().any(|event| matches!(
        event,
        ServerEvent::Left {
            was_playing: true,
            ..
        }
    )));
}

#[test]
fn a_client_sending_a_state_sized_command_is_cut_off_before_it_is_held() {
    let mut server = ServerSession::new(server_config());
    let id = server.accept(7).unwrap();
    server.receive(id, &client_header(5, 6).encode(), 0);
    // A LOAD_SAVESTATE header claiming 1 MiB, then its first bytes.
    let mut claim = Vec::new();
    claim.extend_from_slice(&id::LOAD_SAVESTATE.to_be_bytes());
    claim.extend_from_slice(&(1u32 << 20).to_be_bytes());
    claim.extend(std::iter::repeat_n(0u8, 70 * 1024));
    server.receive(id, &claim, 0);
    assert!(!server.is_open(id));
}

#[test]
fn the_hosts_own_chat_line_reaches_its_players_under_its_nick() {
    let mut server = ServerSession::new(server_config());
    let (id, mut seen) = playing(&mut server);
    seen.take(&mut server, id);
    server.say("good luck");
    let said = seen.take(&mut server, id);
    let [Command::Chat {
        author: Some(author),
        text,
    }] = &said[..]
    else {
        panic!("one chat line, got {said:?}");
    };
    assert_eq!(author.text(), server_config().nick);
    assert_eq!(text, "good luck");
}

#[test]
fn a_protocol_7_player_gets_the_state_in_its_container_and_a_protocol_6_one_bare() {
    for (high, expect_container) in [(7, true), (6, false)] {
        let mut server = ServerSession::new(server_config());
        let id = server.accept(7).unwrap();
        let mut seen = Seen::new();
        server.receive(id, &client_header(5, high).encode(), 0);
        server.receive(id, &encoded(&[Command::Nick(Name::new("ra"))]), 0);
        server.receive(id, &encoded(&[info("stella")]), 0);
        seen.take(&mut server, id);
        server.send_state(&[1, 2, 3, 4]);
        let sent = seen.take(&mut server, id);
        let Some(Command::LoadSavestate { size, data, .. }) = sent.last() else {
            panic!("no state sent: {sent:?}");
        };
        let zlib = seen.header.unwrap().compression != 0;
        let state = super::state::unpack_state(data, *size as usize, zlib, LIMIT).unwrap();
        if expect_container {
            assert!(state.starts_with(b"NETPLAY\x01MEM \x04\0\0\0"), "{state:?}");
            assert_eq!(
                super::state::container_core_state(&state),
                Ok(&[1u8, 2, 3, 4][..])
            );
        } else {
            assert_eq!(state, [1, 2, 3, 4], "protocol {high}");
        }
    }
}

#[test]
fn a_player_running_ahead_of_the_hosts_clock_is_told_to_stall_at_most_every_120_frames() {
    let mut server = ServerSession::new(server_config());
    let (id, mut seen) = playing(&mut server);
    let first = server.next_frame();
    // The player's input runs 10 frames ahead of the host's clock.
    for frame in first..first + 10 {
        server.receive(id, &encoded(&[client_input(frame, 0)]), 0);
    }
    let mut stalls = Vec::new();
    for frame in first..first + 200 {
        server.receive(id, &encoded(&[client_input(frame + 10, 0)]), 0);
        assert_eq!(server.ready_frame(), Some(frame));
        server.play_frame(0, None);
        for command in seen.take(&mut server, id) {
            if let Command::Stall(frames) = command {
                stalls.push((server.next_frame(), frames));
            }
        }
    }
    // RetroArch's rule: more than 3 ahead, no sooner than 120 frames after
    // the last; the player waits until the clock is past its input.
    assert_eq!(stalls, [(121, 11)]);
    assert_eq!(server.stats().stalls_sent, 1);
}

#[test]
fn a_players_pause_stops_the_clock_reaches_the_other_players_and_its_resume_restarts_it() {
    let mut server = ServerSession::new(server_config());
    let (first, mut first_seen) = playing(&mut server);
    let (second, mut second_seen) = playing(&mut server);
    first_seen.take(&mut server, first);
    second_seen.take(&mut server, second);
    events(&mut server);
    server.receive(first, &encoded(&[Command::Pause(Name::new("ra"))]), 0);
    assert!(server.is_paused());
    assert_eq!(server.ready_frame(), None, "no frame runs while paused");
    assert!(matches!(
        events(&mut server)[..],
        [ServerEvent::Paused { ref nick }] if nick == "ra"
    ));
    assert!(matches!(
        second_seen.take(&mut server, second)[..],
        [Command::Pause(nick)] if nick.text() == "ra"
    ));
    server.receive(first, &encoded(&[Command::Resume]), 0);
    assert!(!server.is_paused());
    assert_eq!(second_seen.take(&mut server, second), [Command::Resume]);
    assert!(matches!(
        events(&mut server)[..],
        [ServerEvent::Resumed { .. }]
    ));
}

#[test]
fn a_pause_is_ignored_when_pausing_is_not_allowed_and_the_host_pauses_everyone_itself() {
    let mut server = ServerSession::new(ServerConfig {
        allow_pausing: false,
        ..server_config()
    });
    let (id, mut seen) = playing(&mut server);
    seen.take(&mut server, id);
    server.receive(id, &encoded(&[Command::Pause(Name::new("ra"))]), 0);
    assert!(!server.is_paused());
    server.pause();
    assert!(server.is_paused());
    assert!(matches!(
        seen.take(&mut server, id)[..],
        [Command::Pause(nick)] if nick.text() == "host"
    ));
    server.resume();
    assert_eq!(seen.take(&mut server, id), [Command::Resume]);
    assert!(!server.is_paused());
}

#[test]
fn a_paused_player_who_leaves_ends_its_pause() {
    let mut server = ServerSession::new(server_config());
    let (id, _) = playing(&mut server);
    server.receive(id, &encoded(&[Command::Pause(Name::new("ra"))]), 0);
    assert!(server.is_paused());
    server.closed(id);
    assert!(!server.is_paused());
}

#[test]
fn a_paused_player_who_turns_spectator_ends_its_pause() {
    let mut server = ServerSession::new(server_config());
    let (id, _) = playing(&mut server);
    server.receive(id, &encoded(&[Command::Pause(Name::new("ra"))]), 0);
    assert!(server.is_paused());
    server.receive(id, &encoded(&[Command::Spectate]), 0);
    assert!(!server.is_paused(), "a spectator holds no pause");
}

#[test]
fn one_players_pause_holds_the_match_a_minute_at_most() {
    let mut server = ServerSession::new(server_config());
    let (first, _) = playing(&mut server);
    let (second, mut second_seen) = playing(&mut server);
    second_seen.take(&mut server, second);
    server.receive(first, &encoded(&[Command::Pause(Name::new("ra"))]), 1_000);
    server.poll(60_999);
    assert!(server.is_paused());
    server.poll(61_000);
    assert!(!server.is_paused(), "the host resumed the match");
    assert!(second_seen
        .take(&mut server, second)
        .contains(&Command::Resume));
}

#[test]
fn the_sync_carries_the_save_ram_given_while_a_connection_shakes_hands() {
    let mut server = ServerSession::new(server_config());
    let id = server.accept(7).unwrap();
    let mut seen = Seen::new();
    assert!(server.handshaking());
    server.set_sram(&[0xAB; 8192]);
    server.receive(id, &client_header(5, 6).encode(), 0);
    server.receive(id, &encoded(&[Command::Nick(Name::new("ra"))]), 0);
    server.receive(id, &encoded(&[info("stella")]), 0);
    let sync = seen
        .take(&mut server, id)
        .into_iter()
        .find_map(|command| match command {
            Command::Sync(sync) => Some(sync),
            _ => None,
        })
        .expect("a SYNC");
    assert_eq!(sync.sram, vec![0xAB; 8192]);
    assert!(!server.handshaking());
}
