//! Whether a machine in the path can sit in a match's key exchange: by
//! room code it cannot (the joiner is told the code did not match and the
//! host seats nobody); by address it can, and the two sides' fingerprints
//! then differ. A room answers a bounded number of wrong codes.

use netcode::netplay::{NetplayConfig, NetplayEvent, NetplaySession};
use netcode::protocol::{
    Fingerprint, LinkSecret, PlayerSlots, RejectReason, RoomGuessLimit, RoomPassword,
    SessionSettings, SessionToken,
};

const HOST: usize = 0;
const JOINER: usize = 1;

fn config(me: u8, secret: u8, room: Option<&str>) -> NetplayConfig<usize> {
    let mut config = NetplayConfig::new(
        SessionToken(0x4B45_0000 + u32::from(secret)),
        "stub",
        "1",
        1,
        SessionSettings::default(),
        PlayerSlots::single(me),
    );
    config.secret = LinkSecret::from_bytes([secret; 32]);
    config.room_password = room.map(RoomPassword::new);
    match me {
        0 => config.accept(Some(JOINER), PlayerSlots::single(1)),
        _ => config.dial(HOST, PlayerSlots::single(0)),
    }
}

/// The machine in between: to the joiner it is the host, to the host the
/// joiner, each with a secret of its own and its guess of the code.
struct InBetween {
    as_host: NetplaySession<usize>,
    as_joiner: NetplaySession<usize>,
}

/// The host and the joiner of a match, every datagram between them
/// through `in_between` when there is one.
struct Match {
    host: NetplaySession<usize>,
    joiner: NetplaySession<usize>,
    in_between: Option<InBetween>,
}

impl Match {
    fn new(room: Option<&str>, in_between: Option<Option<&str>>) -> Match {
        Match {
            host: NetplaySession::new(config(0, 0x11, room), 0).unwrap(),
            joiner: NetplaySession::new(config(1, 0x22, room), 0).unwrap(),
            in_between: in_between.map(|guess| InBetween {
                as_host: NetplaySession::new(config(0, 0x33, guess), 0).unwrap(),
                as_joiner: NetplaySession::new(config(1, 0x44, guess), 0).unwrap(),
            }),
        }
    }

    /// Runs `ms` milliseconds of polls; each datagram arrives the next one.
    fn run(&mut self, ms: u64) {
        // Which machine a datagram arrives at: the sessions name each
        // other HOST and JOINER, and so do the two of the one in between.
        #[derive(Clone, Copy)]
        enum To {
            Host,
            Joiner,
            InBetweenAsHost,
            InBetweenAsJoiner,
        }
        let path = self.in_between.is_some();
        let (to_joiner_side, to_host_side) = match path {
            true => (To::InBetweenAsJoiner, To::InBetweenAsHost),
            false => (To::Joiner, To::Host),
        };
        let mut wire: Vec<(To, Vec<u8>)> = Vec::new();
        for now in 1..=ms {
            for (to, bytes) in wire.drain(..) {
                match (to, &mut self.in_between) {
                    (To::Host, _) => self.host.handle_datagram(now, JOINER, &bytes),
                    (To::Joiner, _) => self.joiner.handle_datagram(now, HOST, &bytes),
                    (To::InBetweenAsHost, Some(between)) => {
                        between.as_host.handle_datagram(now, JOINER, &bytes)
                    }
                    (To::InBetweenAsJoiner, Some(between)) => {
                        between.as_joiner.handle_datagram(now, HOST, &bytes)
                    }
                    _ => unreachable!("nothing is sent to a machine that is not there"),
                }
            }
            self.host
                .poll(now, |_, bytes| wire.push((to_joiner_side, bytes.to_vec())));
            self.joiner
                .poll(now, |_, bytes| wire.push((to_host_side, bytes.to_vec())));
            if let Some(between) = &mut self.in_between {
                between
                    .as_host
                    .poll(now, |_, bytes| wire.push((To::Joiner, bytes.to_vec())));
                between
                    .as_joiner
                    .poll(now, |_, bytes| wire.push((To::Host, bytes.to_vec())));
            }
        }
    }

    fn fingerprints(session: &NetplaySession<usize>) -> Vec<Fingerprint> {
        session
            .link_fingerprints()
            .iter()
            .map(|keys| keys.link)
            .collect()
    }
}

fn refusal_of(session: &NetplaySession<usize>) -> Option<RejectReason> {
    session.host_refusal().map(|(reason, _)| reason)
}

#[test]
fn players_who_met_by_room_code_agree_keys_and_share_a_fingerprint() {
    let mut direct = Match::new(Some("DWSBFV"), None);
    direct.run(300);
    assert!(direct.joiner.host_handshake().is_some(), "seated");
    let joiner = Match::fingerprints(&direct.joiner);
    assert_eq!(joiner.len(), 1);
    assert_eq!(Match::fingerprints(&direct.host), joiner);
}

#[test]
fn a_machine_in_the_path_without_the_code_is_refused_and_the_joiner_told_the_code_did_not_match() {
    for guess in [Some("DWSAAA"), None] {
        let mut attacked = Match::new(Some("DWSBFV"), Some(guess));
        attacked.run(3000);
        assert_eq!(
            refusal_of(&attacked.joiner),
            Some(RejectReason::RoomCodeMismatch),
            "guess {guess:?}"
        );
        let between = attacked.in_between.as_ref().unwrap();
        assert!(
            Match::fingerprints(&attacked.host).is_empty(),
            "the host seated the machine in between (guess {guess:?})"
        );
        assert!(between.as_joiner.host_handshake().is_none());
        let refused = attacked.joiner.host_refusal().unwrap().0.to_string();
        assert!(
            refused.starts_with("the room code did not match"),
            "{refused}"
        );
    }
}

#[test]
fn a_machine_in_the_path_of_an_address_match_makes_the_two_fingerprints_differ() {
    let mut attacked = Match::new(None, Some(None));
    attacked.run(300);
    // It sits in: both sides play, each with it.
    assert!(attacked.joiner.host_handshake().is_some());
    let joiner = Match::fingerprints(&attacked.joiner);
    let host = Match::fingerprints(&attacked.host);
    assert_eq!((joiner.len(), host.len()), (1, 1));
    assert_ne!(joiner, host, "the players can tell by comparing");
    let between = attacked.in_between.as_ref().unwrap();
    assert_eq!(Match::fingerprints(&between.as_host), joiner);
    assert_eq!(Match::fingerprints(&between.as_joiner), host);
    // The peer key each side sees is the machine in between's.
    let host_key = attacked.joiner.link_fingerprints()[0].peer_key;
    let real_host_key = Fingerprint::of_key(&LinkSecret::from_bytes([0x11; 32]).public_key());
    assert_ne!(host_key, real_host_key);
}

/// A room's host (address 0, taking player 1 from any address) and peers
/// dialling it from addresses 1, 2, …, each from its own moment on.
struct Room {
    host: NetplaySession<usize>,
    peers: Vec<(u64, NetplaySession<usize>)>,
    host_events: Vec<NetplayEvent>,
}

impl Room {
    fn new(limit: RoomGuessLimit) -> Room {
        let mut config = NetplayConfig::new(
            SessionToken(0x4B45_0011),
            "stub",
            "1",
            1,
            SessionSettings::default(),
            PlayerSlots::single(0),
        )
        .accept(None, PlayerSlots::single(1));
        config.secret = LinkSecret::from_bytes([0x11; 32]);
        config.room_password = Some(RoomPassword::new("DWSBFV"));
        config.room_guess_limit = limit;
        Room {
            host: NetplaySession::new(config, 0).unwrap(),
            peers: Vec::new(),
            host_events: Vec::new(),
        }
    }

    /// A joiner with `code` (and a secret of its own) that starts at `from`.
    fn dial_at(&mut self, from: u64, code: &str) {
        let secret = 0x40 + self.peers.len() as u8;
        let config = config(1, secret, Some(code));
        self.peers
            .push((from, NetplaySession::new(config, from).unwrap()));
    }

    /// Runs until `until` ms; each datagram arrives the next millisecond.
    fn run(&mut self, from: u64, until: u64) {
        let mut wire: Vec<(usize, usize, Vec<u8>)> = Vec::new();
        for now in from..until {
            for (from_address, to, bytes) in wire.drain(..) {
                match to {
                    HOST => self.host.handle_datagram(now, from_address, &bytes),
                    peer => self.peers[peer - 1].1.handle_datagram(now, HOST, &bytes),
                }
            }
            self.host
                .poll(now, |to, bytes| wire.push((HOST, to, bytes.to_vec())));
            for (index, (start, peer)) in self.peers.iter_mut().enumerate() {
                if now >= *start {
                    peer.poll(now, |_, bytes| wire.push((index + 1, HOST, bytes.to_vec())));
                }
            }
            self.host_events.extend(self.host.events());
        }
    }

    /// Peers the host answered that found the code did not match.
    fn told_the_code_did_not_match(&self) -> usize {
        self.peers
            .iter()
            .filter(|(_, peer)| refusal_of(peer) == Some(RejectReason::RoomCodeMismatch))
            .count()
    }
}

#[test]
fn a_room_answers_a_bounded_number_of_wrong_codes_then_none_for_a_while_and_says_so() {
    let limit = RoomGuessLimit {
        burst: 3,
        refill_ms: 20_000,
    };
    let mut room = Room::new(limit);
    // Twenty guessers, one code each, from twenty addresses at once.
    for guess in 0..20 {
        room.dial_at(1, &format!("DWS{:03}", guess));
    }
    room.run(1, 5_000);
    assert_eq!(
        room.told_the_code_did_not_match(),
        3,
        "each Welcome is one guess: only the budget's are given"
    );
    let told: Vec<_> = room
        .host_events
        .iter()
        .filter(|event| matches!(event, NetplayEvent::RoomGuessesSpent { .. }))
        .collect();
    assert_eq!(told.len(), 1, "said once: {told:?}");
    assert!(room.host.refused_room_guesses() > 0);
    assert!(Match::fingerprints(&room.host).is_empty());

    // The right code is not answered either until the budget grows again,
    // then it plays, and its proven exchange costs the room nothing.
    room.dial_at(5_000, "DWSBFV");
    room.run(5_000, 19_000);
    let player = &room.peers[20].1;
    assert!(player.host_handshake().is_none(), "answered too early");
    room.run(19_000, 22_000);
    let player = &room.peers[20].1;
    assert!(
        player.host_handshake().is_some(),
        "seated once a guess is allowed"
    );
    assert_eq!(Match::fingerprints(&room.host).len(), 1);
    assert_eq!(room.told_the_code_did_not_match(), 3);
}

#[test]
fn players_with_the_code_never_spend_the_rooms_guesses() {
    let limit = RoomGuessLimit {
        burst: 1,
        refill_ms: 1_000_000,
    };
    let mut room = Room::new(limit);
    room.dial_at(1, "DWSBFV");
    room.run(1, 1_000);
    assert!(room.peers[0].1.host_handshake().is_some());
    assert_eq!(
        room.host.room_guesses_left(1_000),
        1,
        "its guess was given back"
    );
    assert_eq!(room.host.refused_room_guesses(), 0);
}
