//! Whether a machine in the path can sit in a match's key exchange: by
//! room code it cannot (the joiner is told the code did not match and the
//! host seats nobody); by address it can, and the two sides' fingerprints
//! then differ.

use netcode::netplay::{NetplayConfig, NetplaySession};
use netcode::protocol::{
    Fingerprint, LinkSecret, PlayerSlots, RejectReason, RoomPassword, SessionSettings, SessionToken,
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
