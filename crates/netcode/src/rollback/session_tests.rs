//! Sessions driving a tiny pure game, connected by an in-test delivery queue
//! with delays, jitter and duplication: no protocol, no sockets, no clock.

use std::time::Duration;

use super::*;
use crate::checksum::Checksum;
use crate::input::Buttons;

/// The stub game: a running hash of every player's buttons, and the frame.
/// `corrupt_at` adds a stray bit when that frame is simulated (a desync).
#[derive(Clone)]
struct StubGame {
    sums: [u32; MAX_PLAYERS],
    frame: u32,
    corrupt_at: Option<u32>,
    /// Per frame, the state after simulating it and the inputs used, as last simulated.
    history: Vec<Option<(Checksum, [Buttons; MAX_PLAYERS])>>,
    rendered: u32,
    resimulated: u32,
    /// Lockstep's checksum requests carried out.
    checksums: u32,
}

impl StubGame {
    fn new() -> Self {
        StubGame {
            sums: [0; MAX_PLAYERS],
            frame: 0,
            corrupt_at: None,
            history: Vec::new(),
            rendered: 0,
            resimulated: 0,
            checksums: 0,
        }
    }

    fn bytes(&self) -> [u8; 20] {
        let mut out = [0; 20];
        for (i, sum) in self.sums.iter().enumerate() {
            out[i * 4..i * 4 + 4].copy_from_slice(&sum.to_le_bytes());
        }
        out[16..].copy_from_slice(&self.frame.to_le_bytes());
        out
    }

    fn handle<P: Predictor>(&mut self, session: &mut Session<P>, requests: &[Request]) {
        for request in requests {
            match *request {
                Request::Save { frame } => {
                    assert_eq!(frame.number(), self.frame, "save of the wrong frame");
                    let bytes = self.bytes();
                    let slot = session
                        .state_slot_mut(frame)
                        .expect("slot claimed for the save");
                    slot.buffer_mut().clear();
                    slot.buffer_mut().extend_from_slice(&bytes);
                    slot.set_checksum(Checksum::of(&bytes));
                }
                Request::Checksum { frame } => {
                    assert_eq!(frame.number(), self.frame, "checksum of the wrong frame");
                    let checksum = Checksum::of(&self.bytes());
                    let slot = session.state_slot_mut(frame).expect("slot claimed");
                    slot.set_checksum(checksum);
                    self.checksums += 1;
                }
                Request::Load { frame } => {
                    let data = session
                        .saved_state(frame)
                        .expect("state to load is kept")
                        .data();
                    for i in 0..MAX_PLAYERS {
                        self.sums[i] =
                            u32::from_le_bytes(data[i * 4..i * 4 + 4].try_into().unwrap());
                    }
                    self.frame = u32::from_le_bytes(data[16..20].try_into().unwrap());
                    assert_eq!(self.frame, frame.number());
                }
                Request::Advance {
                    frame,
                    inputs,
                    resimulation,
                    ..
                } => {
                    assert_eq!(frame.number(), self.frame, "advance of the wrong frame");
                    for (sum, buttons) in self.sums.iter_mut().zip(inputs) {
                        *sum = sum
                            .wrapping_mul(31)
                            .wrapping_add(u32::from(buttons.bits()) + 1);
                    }
                    if self.corrupt_at == Some(frame.number()) {
                        self.sums[0] ^= 1 << 7;
                    }
                    self.frame += 1;
                    let index = frame.number() as usize;
                    if self.history.len() <= index {
                        self.history.resize(index + 1, None);
                    }
                    self.history[index] = Some((Checksum::of(&self.bytes()), inputs));
                    if resimulation {
                        self.resimulated += 1;
                    } else {
                        self.rendered += 1;
                    }
                }
            }
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Message {
    Input {
        player: PlayerId,
        frame: Frame,
        buttons: Buttons,
    },
    Lag {
        player: PlayerId,
        lag: i32,
    },
    Checksum {
        player: PlayerId,
        frame: Frame,
        checksum: Checksum,
    },
}

/// A small deterministic generator (test-only randomness from a seed).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
}

struct Peer {
    session: Session,
    game: StubGame,
    requests: Vec<Request>,
    me: PlayerId,
    sent_through: Option<Frame>,
    /// Local clock: frames accrue at `rate × advised speed` per tick.
    rate: f64,
    clock: f64,
    follow_advice: bool,
    events: Vec<Event>,
    quiet: bool,
}

struct Net {
    peers: Vec<Peer>,
    wire: Vec<(u64, usize, Message)>,
    now: u64,
    /// Delivery delay in ticks: `base + random(0..=jitter)`.
    base_delay: u64,
    jitter: u64,
    duplicate: bool,
    rng: Lcg,
    inputs: Lcg,
    /// Frames per tick at nominal speed (1.0: one frame every tick).
    frames_per_tick: f64,
}

fn f(n: u32) -> Frame {
    Frame::new(n)
}

fn config_for(players: usize, me: usize) -> SessionConfig {
    let mut config = SessionConfig::new();
    for index in 0..players {
        config = config.player(if index == me {
            PlayerKind::Local
        } else {
            PlayerKind::Remote
        });
    }
    config
}

impl Net {
    fn new(
        players: usize,
        base_delay: u64,
        configure: impl Fn(SessionConfig) -> SessionConfig,
    ) -> Net {
        let peers = (0..players)
            .map(|me| {
                let mut session = configure(config_for(players, me)).build().unwrap();
                for other in 0..players {
                    if other != me {
                        session
                            .peer_synchronized(PlayerId::new(other as u8))
                            .unwrap();
                    }
                }
                Peer {
                    session,
                    game: StubGame::new(),
                    requests: Vec::new(),
                    me: PlayerId::new(me as u8),
                    sent_through: None,
                    rate: 1.0,
                    clock: 0.0,
                    follow_advice: true,
                    events: Vec::new(),
                    quiet: false,
                }
            })
            .collect();
        Net {
            peers,
            wire: Vec::new(),
            now: 0,
            base_delay,
            jitter: 0,
            duplicate: false,
            rng: Lcg(7),
            inputs: Lcg(11),
            frames_per_tick: 1.0,
        }
    }

    fn send(&mut self, from: usize, message: Message) {
        for to in 0..self.peers.len() {
            if to == from {
                continue;
            }
            let copies = if self.duplicate { 2 } else { 1 };
            for _ in 0..copies {
                let jitter = if self.jitter > 0 {
                    u64::from(self.rng.next()) % (self.jitter + 1)
                } else {
                    0
                };
                self.wire
                    .push((self.now + self.base_delay + jitter, to, message));
            }
        }
    }

    fn deliver(&mut self, to: usize) {
        let now = self.now;
        let mut index = 0;
        while index < self.wire.len() {
            if self.wire[index].0 <= now && self.wire[index].1 == to {
                let (_, _, message) = self.wire.remove(index);
                let session = &mut self.peers[to].session;
                match message {
                    Message::Input {
                        player,
                        frame,
                        buttons,
                    } => session.add_remote_input(player, frame, buttons).unwrap(),
                    Message::Lag { player, lag } => {
                        session.set_remote_frame_lag(player, lag).unwrap()
                    }
                    Message::Checksum {
                        player,
                        frame,
                        checksum,
                    } => session
                        .add_remote_checksum(player, frame, checksum)
                        .unwrap(),
                }
            } else {
                index += 1;
            }
        }
    }

    /// One tick of wall time: every peer receives, maybe runs a frame, sends.
    fn tick(&mut self) {
        for i in 0..self.peers.len() {
            self.deliver(i);
            let peer = &mut self.peers[i];
            let speed = if peer.follow_advice {
                f64::from(peer.session.time_sync_advice().speed())
            } else {
                1.0
            };
            peer.clock += self.frames_per_tick * peer.rate * speed;
            if peer.clock >= 1.0
                && peer.session.state() == SessionState::Running
                && peer.session.connected_players().contains(peer.me)
            {
                peer.clock -= 1.0;
                let buttons = Buttons::from_bits((self.inputs.next() % 4) as u16);
                peer.session.add_local_input(peer.me, buttons).unwrap();
                peer.session.advance_frame(&mut peer.requests).unwrap();
                peer.game.handle(&mut peer.session, &peer.requests);
            }
            while let Some(event) = self.peers[i].session.next_event() {
                self.peers[i].events.push(event);
            }
            if self.peers[i].quiet {
                continue;
            }
            let me = self.peers[i].me;
            let from = self.peers[i].sent_through.map_or(Frame::ZERO, Frame::next);
            let mut outgoing = Vec::new();
            for (frame, buttons) in self.peers[i].session.player_inputs(me, from).unwrap() {
                outgoing.push(Message::Input {
                    player: me,
                    frame,
                    buttons,
                });
            }
            if let Some(Message::Input { frame, .. }) = outgoing.last() {
                self.peers[i].sent_through = Some(*frame);
            }
            for other in 0..self.peers.len() {
                if other != i
                    && self.peers[i]
                        .session
                        .connected_players()
                        .contains(PlayerId::new(other as u8))
                {
                    // One lag report per tick to everybody; each peer reads the one about it.
                    let lag = self.peers[i]
                        .session
                        .frame_lag_report(PlayerId::new(other as u8))
                        .unwrap();
                    if other == (i + 1) % self.peers.len() || self.peers.len() == 2 {
                        outgoing.push(Message::Lag { player: me, lag });
                    }
                }
            }
            while let Some((frame, checksum)) = self.peers[i].session.next_checksum_report() {
                outgoing.push(Message::Checksum {
                    player: me,
                    frame,
                    checksum,
                });
            }
            for message in outgoing {
                self.send(i, message);
            }
        }
        self.now += 1;
    }

    fn run(&mut self, ticks: u64) {
        for _ in 0..ticks {
            self.tick();
        }
    }

    /// Lets every message arrive, then gives each peer one more frame so
    /// pending corrections are simulated.
    fn settle(&mut self) {
        let (base, jitter) = (self.base_delay, self.jitter);
        self.run(base + jitter + 2);
    }

    /// Frames every peer has confirmed and simulated with final inputs.
    fn agreed_frames(&self) -> u32 {
        self.peers
            .iter()
            .filter(|p| p.session.connected_players().contains(p.me))
            .map(|p| {
                p.session
                    .confirmed_frame()
                    .map_or(0, |c| c.number())
                    .min(p.session.current_frame().number().saturating_sub(1))
            })
            .min()
            .unwrap()
    }

    fn assert_identical(&self, peers: &[usize]) -> u32 {
        let agreed = self.agreed_frames();
        assert!(agreed > 0, "nothing confirmed");
        let reference = &self.peers[peers[0]].game.history;
        for &other in &peers[1..] {
            let history = &self.peers[other].game.history;
            for frame in 0..agreed as usize {
                assert_eq!(
                    reference[frame], history[frame],
                    "peers {} and {other} differ at frame {frame}",
                    peers[0]
                );
            }
        }
        agreed
    }
}

fn two_peers(delay: u64) -> Net {
    Net::new(2, delay, |c| c)
}

#[test]
fn mispredicted_inputs_are_rolled_back_and_both_peers_end_identical() {
    let mut net = two_peers(3);
    net.run(600);
    net.settle();
    let agreed = net.assert_identical(&[0, 1]);
    assert!(agreed > 550, "only {agreed} frames agreed");
    for peer in &net.peers {
        assert!(
            peer.game.resimulated > 0,
            "random inputs at 3 frames of delay must cause rollbacks"
        );
        let stats = peer
            .session
            .peer_stats(PlayerId::new(1 - peer.me.index() as u8))
            .unwrap();
        assert!(
            stats.max_rollback >= 3 && stats.max_rollback <= 8,
            "{stats:?}"
        );
        assert!(!peer
            .events
            .iter()
            .any(|e| matches!(e, Event::Desync { .. })));
    }
}

#[test]
fn inputs_that_arrive_before_their_frame_are_never_mispredicted() {
    // One frame of input delay covers an instant wire.
    let mut net = Net::new(2, 0, |c| c.initial_input_delay(1));
    net.run(300);
    for peer in &net.peers {
        assert_eq!(peer.game.resimulated, 0);
        assert_eq!(peer.game.rendered, 300);
    }
}

#[test]
fn three_and_four_peers_with_jitter_and_duplicates_stay_identical() {
    for players in [3, 4] {
        let mut net = Net::new(players, 2, |c| c.checksum_interval(10));
        net.jitter = 4;
        net.duplicate = true;
        net.run(500);
        net.settle();
        let all: Vec<usize> = (0..players).collect();
        assert!(net.assert_identical(&all) > 400);
        for peer in &net.peers {
            assert!(
                !peer
                    .events
                    .iter()
                    .any(|e| matches!(e, Event::Desync { .. })),
                "{players} players: {:?}",
                peer.events
            );
        }
    }
}

#[test]
fn duplicate_and_out_of_order_remote_inputs_are_harmless() {
    let mut session = config_for(2, 0).build().unwrap();
    session.peer_synchronized(PlayerId::new(1)).unwrap();
    let remote = PlayerId::new(1);
    let mut requests = Vec::new();
    let mut game = StubGame::new();
    for _ in 0..5 {
        session
            .add_local_input(PlayerId::new(0), Buttons::NONE)
            .unwrap();
        session.advance_frame(&mut requests).unwrap();
        game.handle(&mut session, &requests);
    }
    // Frames 0–4 arrive backwards, each twice.
    for n in (0..5).rev() {
        session.add_remote_input(remote, f(n), Buttons::UP).unwrap();
        session.add_remote_input(remote, f(n), Buttons::UP).unwrap();
    }
    assert_eq!(session.confirmed_frame(), Some(f(4)));
    session
        .add_local_input(PlayerId::new(0), Buttons::NONE)
        .unwrap();
    assert_eq!(
        session.advance_frame(&mut requests).unwrap(),
        FrameOutcome::Advanced { rolled_back: 5 }
    );
    assert_eq!(requests[0], Request::Load { frame: f(0) });
    game.handle(&mut session, &requests);
    // Resending the same inputs again changes nothing.
    session
        .add_remote_inputs(remote, f(0), &[Buttons::UP; 5])
        .unwrap();
    session
        .add_local_input(PlayerId::new(0), Buttons::NONE)
        .unwrap();
    assert_eq!(
        session.advance_frame(&mut requests).unwrap(),
        FrameOutcome::Advanced { rolled_back: 0 }
    );
    // A contradicting resend is refused, naming the player and frame.
    let err = session
        .add_remote_input(remote, f(2), Buttons::DOWN)
        .unwrap_err();
    assert!(
        err.to_string().contains("P2") && err.to_string().contains("frame 2"),
        "{err}"
    );
}

#[test]
fn starvation_waits_at_the_prediction_window_then_resumes() {
    let mut session = config_for(2, 0).max_prediction(8).build().unwrap();
    session.peer_synchronized(PlayerId::new(1)).unwrap();
    let mut requests = Vec::new();
    let mut game = StubGame::new();
    let mut outcomes = Vec::new();
    for _ in 0..12 {
        session
            .add_local_input(PlayerId::new(0), Buttons::A)
            .unwrap();
        outcomes.push(session.advance_frame(&mut requests).unwrap());
        game.handle(&mut session, &requests);
    }
    assert_eq!(
        session.current_frame(),
        f(8),
        "8 frames of prediction, then wait"
    );
    let waiting = FrameOutcome::Waiting {
        players: PlayerSet::EMPTY.with(PlayerId::new(1)),
        ticks: 4,
    };
    assert_eq!(outcomes[11], waiting);
    let mut events = Vec::new();
    while let Some(event) = session.next_event() {
        events.push(event);
    }
    assert!(events.contains(&Event::WaitingForPeer {
        players: PlayerSet::EMPTY.with(PlayerId::new(1)),
        ticks: 1
    }));

    session
        .add_remote_inputs(PlayerId::new(1), f(0), &[Buttons::B; 3])
        .unwrap();
    session
        .add_local_input(PlayerId::new(0), Buttons::A)
        .unwrap();
    assert_eq!(
        session.advance_frame(&mut requests).unwrap(),
        FrameOutcome::Advanced { rolled_back: 8 }
    );
    game.handle(&mut session, &requests);
    assert_eq!(
        session.next_event(),
        Some(Event::StoppedWaiting { ticks: 4 })
    );
    assert_eq!(session.current_frame(), f(9));
}

#[test]
fn a_silent_peer_makes_the_other_wait_and_both_recover_when_it_speaks_again() {
    let mut net = two_peers(2);
    net.run(100);
    net.peers[1].quiet = true;
    net.run(200);
    let stuck_at = net.peers[0].session.current_frame();
    net.run(10);
    assert_eq!(
        net.peers[0].session.current_frame(),
        stuck_at,
        "peer 0 must wait, not run ahead"
    );
    assert!(net.peers[0]
        .events
        .iter()
        .any(|e| matches!(e, Event::WaitingForPeer { .. })));
    net.peers[1].quiet = false;
    net.run(200);
    net.settle();
    assert!(net.peers[0].session.current_frame() > stuck_at + 100);
    assert!(net.peers[0]
        .events
        .iter()
        .any(|e| matches!(e, Event::StoppedWaiting { .. })));
    net.assert_identical(&[0, 1]);
}

#[test]
fn input_delay_changing_mid_match_keeps_both_peers_identical() {
    let dynamic = |c: SessionConfig| {
        c.time_sync(TimeSyncConfig {
            window_frames: 20,
            ..TimeSyncConfig::default()
        })
    };
    let mut net = Net::new(2, 3, dynamic);
    let pings = [0u64, 150, 300, 20, 300, 0];
    for ping in pings {
        for peer in &mut net.peers {
            let other = PlayerId::new(1 - peer.me.index() as u8);
            peer.session
                .set_ping(other, Duration::from_millis(ping))
                .unwrap();
        }
        net.run(150);
    }
    net.settle();
    net.assert_identical(&[0, 1]);
    for peer in &net.peers {
        let changes: Vec<(u32, u32)> = peer
            .events
            .iter()
            .filter_map(|e| match e {
                Event::InputDelayChanged { from, to } => Some((*from, *to)),
                _ => None,
            })
            .collect();
        assert!(
            changes.iter().any(|(from, to)| to > from),
            "delay rose: {changes:?}"
        );
        assert!(
            changes.iter().any(|(from, to)| to < from),
            "delay fell: {changes:?}"
        );
        assert!(
            changes.iter().any(|&(_, to)| to == 4),
            "300 ms round trip reaches 4 frames: {changes:?}"
        );
    }
}

#[test]
fn a_growing_delay_repeats_the_last_input_and_a_shrinking_one_drops_overlaps() {
    let mut session = config_for(2, 0).initial_input_delay(1).build().unwrap();
    let me = PlayerId::new(0);
    assert_eq!(session.add_local_input(me, Buttons::A).unwrap(), Some(f(1)));
    let inputs: Vec<_> = session.player_inputs(me, f(0)).unwrap().collect();
    assert_eq!(inputs, vec![(f(0), Buttons::NONE), (f(1), Buttons::A)]);
    session.set_input_delay(3);
    assert_eq!(session.add_local_input(me, Buttons::B).unwrap(), Some(f(3)));
    let inputs: Vec<_> = session
        .player_inputs(me, f(2))
        .unwrap()
        .map(|(_, b)| b)
        .collect();
    assert_eq!(
        inputs,
        vec![Buttons::A, Buttons::B],
        "the gap repeats the last input"
    );
    session.set_input_delay(0);
    assert_eq!(
        session.add_local_input(me, Buttons::START).unwrap(),
        None,
        "frame 0+0 already has an input"
    );
}

#[test]
fn an_injected_desync_is_detected_at_the_next_checksum_interval() {
    let mut net = Net::new(2, 2, |c| c.checksum_interval(60));
    net.peers[1].game.corrupt_at = Some(50);
    net.run(200);
    for peer in &net.peers {
        let desyncs: Vec<_> = peer
            .events
            .iter()
            .filter(|e| matches!(e, Event::Desync { .. }))
            .collect();
        let Some(Event::Desync {
            frame,
            player,
            local,
            remote,
        }) = desyncs.first()
        else {
            panic!("peer {} saw no desync: {:?}", peer.me, peer.events);
        };
        assert_eq!(*frame, f(60));
        assert_ne!(local, remote);
        assert_ne!(*player, peer.me);
    }
}

#[test]
fn predictions_never_raise_a_false_desync_even_checking_every_frame() {
    let mut net = Net::new(2, 5, |c| c.checksum_interval(1));
    net.jitter = 3;
    net.run(400);
    for peer in &net.peers {
        assert!(peer.game.resimulated > 0);
        assert!(
            !peer
                .events
                .iter()
                .any(|e| matches!(e, Event::Desync { .. })),
            "{:?}",
            peer.events
        );
    }
}

#[test]
fn one_of_three_players_leaving_lets_the_other_two_go_on() {
    let mut net = Net::new(3, 2, |c| c);
    net.run(200);
    // Peer 2 goes silent; the glue agrees on the frame after its last input
    // that everyone received, and tells both sessions.
    net.peers[2].quiet = true;
    net.run(10);
    let leaver = PlayerId::new(2);
    let at = (0..2)
        .map(|i| net.peers[i].session.received_inputs_end(leaver))
        .min()
        .unwrap();
    for i in 0..2 {
        net.peers[i]
            .session
            .disconnect_player(leaver, at, DisconnectReason::TimedOut)
            .unwrap();
    }
    net.peers.truncate(2);
    net.wire.retain(|(_, to, _)| *to < 2);
    let before = net.peers[0].session.current_frame();
    net.run(300);
    net.settle();
    assert!(
        net.peers[0].session.current_frame() > before + 250,
        "the two others go on"
    );
    net.assert_identical(&[0, 1]);
    for peer in &net.peers {
        assert!(peer.events.contains(&Event::Disconnected {
            player: leaver,
            at_frame: at,
            reason: DisconnectReason::TimedOut
        }));
        assert_eq!(peer.session.state(), SessionState::Running);
        let after = peer.game.history[at.number() as usize + 5].unwrap().1;
        assert_eq!(
            after[2],
            Buttons::NONE,
            "the leaver's input is fixed to none"
        );
    }
}

#[test]
fn the_other_player_leaving_a_two_player_match_ends_it_cleanly() {
    let mut net = two_peers(1);
    net.run(50);
    let session = &mut net.peers[0].session;
    let at = session.received_inputs_end(PlayerId::new(1));
    session
        .disconnect_player(PlayerId::new(1), at, DisconnectReason::Quit)
        .unwrap();
    let mut events = Vec::new();
    while let Some(event) = session.next_event() {
        events.push(event);
    }
    assert!(events.contains(&Event::Disconnected {
        player: PlayerId::new(1),
        at_frame: at,
        reason: DisconnectReason::Quit
    }));
    assert!(events.iter().any(|e| matches!(e, Event::MatchEnded { .. })));
    assert_eq!(
        session.advance_frame(&mut Vec::new()),
        Ok(FrameOutcome::Ended)
    );
    assert_eq!(session.state(), SessionState::Ended);
}

/// Two clocks, one 1% fast: with the advised speed applied the frames stay
/// within one of each other; without it only the coarse stall fallback acts
/// and the fast one runs several frames ahead.
fn frame_gap_with_fast_clock(follow_advice: bool) -> (i64, f64) {
    // Ticks are milliseconds; 60 frames per second; 30 ms each way.
    let mut net = Net::new(2, 30, |c| c.max_prediction(12));
    net.frames_per_tick = 60.0 / 1000.0;
    net.peers[0].rate = 1.01;
    for peer in &mut net.peers {
        peer.follow_advice = follow_advice;
        let other = PlayerId::new(1 - peer.me.index() as u8);
        peer.session
            .set_ping(other, Duration::from_millis(60))
            .unwrap();
    }
    let mut worst = 0i64;
    let mut total = 0i64;
    let mut samples = 0i64;
    for second in 0..240 {
        for _ in 0..1000 {
            net.tick();
            if second >= 120 {
                let gap = net.peers[0]
                    .session
                    .current_frame()
                    .frames_since(net.peers[1].session.current_frame());
                worst = worst.max(gap.abs());
                total += gap;
                samples += 1;
            }
        }
    }
    (worst, total as f64 / samples as f64)
}

#[test]
fn time_sync_pulls_a_peer_running_one_percent_fast_back_within_one_frame() {
    let (worst, average) = frame_gap_with_fast_clock(true);
    assert!(
        worst <= 1,
        "gap up to {worst} frames (average {average:.2})"
    );
    let (worst_unsynced, _) = frame_gap_with_fast_clock(false);
    assert!(
        worst_unsynced > 3,
        "without the speed advice the fast peer should run ahead (gap {worst_unsynced})"
    );
}

#[test]
fn spectators_get_every_players_confirmed_inputs() {
    let mut net = two_peers(2);
    net.run(100);
    let session = &net.peers[0].session;
    let confirmed = session.confirmed_frame().unwrap();
    let from = confirmed.saturating_back(20);
    let frames: Vec<_> = session.confirmed_inputs(from).unwrap().collect();
    assert_eq!(frames.len() as u32, confirmed - from + 1);
    for (frame, inputs) in frames {
        let used = net.peers[1].game.history[frame.number() as usize]
            .unwrap()
            .1;
        assert_eq!(inputs, used, "frame {frame}");
    }
    assert!(matches!(
        session.confirmed_inputs(f(0)),
        Err(SessionError::HistoryLost { .. })
    ));
}

#[test]
fn misuse_is_reported_as_errors_that_say_what_to_do() {
    let mut session = config_for(2, 0).build().unwrap();
    assert_eq!(
        session.advance_frame(&mut Vec::new()),
        Ok(FrameOutcome::Synchronizing)
    );
    session.peer_synchronized(PlayerId::new(1)).unwrap();
    assert_eq!(session.next_event(), Some(Event::Synchronizing));
    assert_eq!(session.next_event(), Some(Event::Running));
    let err = session.advance_frame(&mut Vec::new()).unwrap_err();
    assert!(err.to_string().contains("add_local_input"), "{err}");
    assert_eq!(
        session.add_local_input(PlayerId::new(1), Buttons::A),
        Err(SessionError::NotLocal(PlayerId::new(1)))
    );
    assert!(matches!(
        session.add_remote_input(PlayerId::new(3), f(0), Buttons::A),
        Err(SessionError::UnknownPlayer { .. })
    ));
    assert!(matches!(
        session.add_remote_input(PlayerId::new(1), f(5000), Buttons::A),
        Err(SessionError::RemoteInput { .. })
    ));
    assert!(SessionConfig::new()
        .player(PlayerKind::Local)
        .build()
        .is_err());
    assert!(SessionConfig::new()
        .player(PlayerKind::Remote)
        .player(PlayerKind::Remote)
        .build()
        .is_err());
}

#[test]
fn a_custom_predictor_is_used_for_missing_inputs() {
    struct AlwaysStart;
    impl Predictor for AlwaysStart {
        fn predict(&self, _: PlayerId, _: Frame, _: Option<(Frame, Buttons)>) -> Buttons {
            Buttons::START
        }
    }
    let mut session = config_for(2, 0).build_with_predictor(AlwaysStart).unwrap();
    session.peer_synchronized(PlayerId::new(1)).unwrap();
    let mut requests = Vec::new();
    session
        .add_local_input(PlayerId::new(0), Buttons::A)
        .unwrap();
    session.advance_frame(&mut requests).unwrap();
    let Request::Advance {
        inputs, predicted, ..
    } = requests[1]
    else {
        panic!("{requests:?}")
    };
    assert_eq!(inputs[1], Buttons::START);
    assert!(predicted.contains(PlayerId::new(1)) && !predicted.contains(PlayerId::new(0)));
}

#[test]
fn steady_state_frames_reuse_their_buffers() {
    let mut net = two_peers(3);
    net.run(300);
    let capacity = net.peers[0].requests.capacity();
    net.run(300);
    assert_eq!(net.peers[0].requests.capacity(), capacity);
}

#[test]
fn states_larger_than_the_byte_budget_stop_the_session_with_what_they_take() {
    // The stub's states are 20 bytes; ten of them cannot fit in 100.
    let mut session = config_for(2, 0).state_bytes(100).build().unwrap();
    session.peer_synchronized(PlayerId::new(1)).unwrap();
    let mut game = StubGame::new();
    let mut requests = Vec::new();
    let mut failure = None;
    for _ in 0..20 {
        session
            .add_local_input(PlayerId::new(0), Buttons::A)
            .unwrap();
        match session.advance_frame(&mut requests) {
            Ok(_) => game.handle(&mut session, &requests),
            Err(err) => {
                failure = Some(err);
                break;
            }
        }
    }
    match failure {
        Some(SessionError::StatesOverBudget(over)) => {
            assert_eq!(over.budget, 100);
            assert!(
                over.held > 100 && over.held <= session.state_bytes(),
                "{over}"
            );
        }
        other => panic!("expected the budget to be exceeded, got {other:?}"),
    }
}

#[test]
fn within_its_byte_budget_a_session_reports_the_bytes_its_states_take() {
    let mut net = two_peers(3);
    net.run(100);
    let held = net.peers[0].session.state_bytes();
    assert!(held >= 20, "{held}");
    assert!(held <= 64 * 20, "a ring of small buffers: {held}");
}

#[test]
fn a_session_that_runs_no_more_frames_still_rolls_back_to_late_corrections() {
    let mut session = config_for(2, 0).build().unwrap();
    session.peer_synchronized(PlayerId::new(1)).unwrap();
    let mut requests = Vec::new();
    let mut game = StubGame::new();
    for _ in 0..4 {
        session
            .add_local_input(PlayerId::new(0), Buttons::A)
            .unwrap();
        session.advance_frame(&mut requests).unwrap();
        game.handle(&mut session, &requests);
    }
    // The peer's real inputs for frames 0..=3, then its departure after
    // them: frames 0..=3 ran on predictions of NONE.
    session
        .add_remote_inputs(PlayerId::new(1), f(0), &[Buttons::B; 4])
        .unwrap();
    session
        .disconnect_player(PlayerId::new(1), f(4), DisconnectReason::Quit)
        .unwrap();
    assert_eq!(session.state(), SessionState::Ended);
    assert_eq!(session.pending_rollback(), Some(f(0)));

    assert_eq!(session.settle(&mut requests), Ok(4));
    game.handle(&mut session, &requests);
    assert_eq!(session.pending_rollback(), None);
    assert_eq!(session.current_frame(), f(4), "no new frame ran");
    let last_run = game.history[3].expect("frame 3 ran").1;
    assert_eq!(last_run[1], Buttons::B, "on the peer's real input");
    assert_eq!(session.settle(&mut requests), Ok(0));
    assert!(requests.is_empty());
}

#[test]
fn lockstep_never_saves_loads_or_rolls_back_and_waits_for_late_inputs() {
    // Three ticks each way and no input delay: every frame waits.
    let mut net = Net::new(2, 3, |c| c.max_prediction(0));
    net.run(600);
    net.settle();
    let agreed = net.assert_identical(&[0, 1]);
    assert!(agreed > 100, "only {agreed} frames agreed");
    for peer in &net.peers {
        assert_eq!(peer.game.resimulated, 0, "lockstep re-simulated a frame");
        assert!(peer.game.checksums >= peer.game.rendered);
        assert_eq!(peer.session.state_bytes(), 0, "lockstep saved a state");
        let other = PlayerId::new(1 - peer.me.index() as u8);
        assert_eq!(peer.session.peer_stats(other).unwrap().rollbacks, 0);
        assert!(peer
            .events
            .iter()
            .any(|e| matches!(e, Event::WaitingForPeer { .. })));
        assert!(!peer
            .events
            .iter()
            .any(|e| matches!(e, Event::Desync { .. })));
    }
}

#[test]
fn a_session_resumed_mid_match_runs_from_that_frame_with_nothing_held_before_it() {
    let mut session = config_for(2, 1).initial_input_delay(2).build().unwrap();
    session.resume_at(f(300)).unwrap();
    let (host, me) = (PlayerId::new(0), PlayerId::new(1));
    session.peer_synchronized(host).unwrap();
    // The delay's frames from the resume on hold nothing yet: neutral.
    assert_eq!(
        session.add_local_input(me, Buttons::A).unwrap(),
        Some(f(302))
    );
    let inputs: Vec<_> = session.player_inputs(me, f(300)).unwrap().collect();
    assert_eq!(
        inputs,
        vec![
            (f(300), Buttons::NONE),
            (f(301), Buttons::NONE),
            (f(302), Buttons::A)
        ]
    );
    session.add_remote_input(host, f(300), Buttons::B).unwrap();
    let mut requests = Vec::new();
    session.advance_frame(&mut requests).unwrap();
    assert!(matches!(requests[0], Request::Save { frame } if frame == f(300)));
    assert!(matches!(
        requests[1],
        Request::Advance { frame, inputs, .. } if frame == f(300) && inputs[0] == Buttons::B
    ));
    assert_eq!(session.current_frame(), f(301));
    assert_eq!(session.confirmed_frame(), Some(f(300)));
    // Only before it runs.
    assert!(session.resume_at(f(400)).is_err());
}
