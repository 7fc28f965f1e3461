//! How a match ends, on the seeded simulated network: a goodbye is
//! repeated until acknowledged (within a bounded linger), after the
//! leaver's last inputs, so a spectator behind a delaying, lossy link hears
//! that the match ended and ends on the players' last frame.

use netcade::engine::sinks::compare_checksum_logs;
use netcade::net::sim::{LinkConditions, SimNet};
use netcode::netplay::{NetplayEvent, SpectatorEvent, SpectatorPhase};
use netcode::protocol::*;
use netcode::rollback::Frame;
use support::netplay::{party_game, Cluster, MatchSetup};

const WATCHER: u8 = 7;
/// The match's length: frames 0..FRAMES-1.
const FRAMES: u32 = 900;
/// The kind byte of a Disconnect on the wire.
const DISCONNECT_KIND: u8 = 10;

/// 30 ms each way, ±10 ms, 2 % loss: issue 15's conditioner.
fn delaying_lossy() -> LinkConditions {
    LinkConditions::latency(30).with_jitter(10).with_loss(0.02)
}

#[test]
fn a_spectator_hears_the_match_end_through_lost_goodbyes_and_ends_on_its_last_frame() {
    let setup = MatchSetup::new(2, 15, delaying_lossy());
    let mut cluster = Cluster::with_configs(
        setup,
        |_| party_game(),
        |me, config| {
            config.accept_spectators = me == 0;
            config.match_frames = Some(FRAMES);
        },
    );
    for machine in cluster.machines.iter_mut() {
        machine.machine.stop_at_frame = Some(FRAMES);
    }
    cluster.run_until(7_000);
    cluster.add_watcher(&setup, WATCHER, party_game());
    cluster.run_until(18_000);
    for machine in &cluster.machines {
        assert_eq!(machine.sink.end_frame(), FRAMES, "every frame is final");
    }
    // The host leaves; its first goodbyes are lost on the way.
    let left_at = cluster.now;
    cluster.lose_kind.push((0, DISCONNECT_KIND, left_at + 300));
    cluster.machines[0].machine.netplay.leave();
    cluster.run_until(left_at + 2_000);

    let watcher = &cluster.watchers[0];
    assert_eq!(watcher.node.spectator.phase(), SpectatorPhase::Ended);
    assert!(
        watcher.events.iter().any(|(_, event)| *event
            == SpectatorEvent::HostGone(DisconnectCause::PeerLeft(DisconnectReason::Quit))),
        "{:?}",
        watcher.events
    );
    assert_eq!(
        watcher.node.current_frame(),
        FRAMES,
        "no frame past the last"
    );
    for machine in &cluster.machines {
        let comparison = compare_checksum_logs(&watcher.node.sink, &machine.sink);
        assert_eq!(comparison.first_difference, None, "{comparison:?}");
    }
    assert!(
        cluster.machines[0].machine.netplay.all_links_closed(),
        "the host's goodbyes were acknowledged"
    );
}

const HOST: u8 = 1;
const JOINER: u8 = 2;

fn handshake(slots: PlayerSlots) -> Handshake {
    Handshake {
        core_name: "duel".into(),
        core_version: "1.0".into(),
        content_hash: 0xC0FFEE,
        local_slots: slots,
        settings: SessionSettings::default(),
        ..Handshake::default()
    }
}

/// A host and a joiner over `net`, polled every millisecond.
struct Link {
    net: SimNet<u8>,
    host: PeerEndpoint,
    joiner: PeerEndpoint,
    host_events: Vec<Event>,
    now: u64,
}

impl Link {
    fn new(seed: u64) -> Link {
        let mut net = SimNet::new(seed);
        net.set_default_conditions(LinkConditions::latency(30));
        let host = EndpointConfig::host(SessionToken(0x5EED), handshake(PlayerSlots::single(0)));
        let joiner = EndpointConfig::joiner(handshake(PlayerSlots::single(1)));
        let mut link = Link {
            net,
            host: PeerEndpoint::new(host, 0).unwrap(),
            joiner: PeerEndpoint::new(joiner, 0).unwrap(),
            host_events: Vec::new(),
            now: 0,
        };
        link.run_for(500);
        assert!(link.host.is_running() && link.joiner.is_running());
        link
    }

    fn run_for(&mut self, ms: u64) {
        for _ in 0..ms {
            self.now += 1;
            let now = self.now;
            for delivery in self.net.deliver_due(now) {
                let endpoint = if delivery.to == HOST {
                    &mut self.host
                } else {
                    &mut self.joiner
                };
                endpoint.handle_datagram(now, &delivery.bytes);
            }
            for datagram in self.host.poll_datagrams(now) {
                self.net.send(now, HOST, JOINER, &datagram);
            }
            for datagram in self.joiner.poll_datagrams(now) {
                self.net.send(now, JOINER, HOST, &datagram);
            }
            self.host_events.extend(self.host.drain_events());
        }
    }
}

/// A link whose joiner leaves while the two are cut off from each other.
fn left_behind_a_partition(seed: u64) -> Link {
    let mut link = Link::new(seed);
    link.net.partition(HOST, JOINER);
    link.joiner.disconnect(DisconnectReason::Quit);
    link
}

#[test]
fn a_goodbye_is_repeated_through_a_partition_until_the_peer_acknowledges_it() {
    let mut link = left_behind_a_partition(21);
    link.run_for(400);
    assert!(!link.joiner.is_closed(), "still waiting for an answer");
    link.net.heal(HOST, JOINER);
    link.run_for(300);
    assert!(link.host_events.contains(&Event::Disconnected {
        cause: DisconnectCause::PeerLeft(DisconnectReason::Quit)
    }));
    assert!(link.joiner.is_closed(), "acknowledged within the linger");
    assert!(link.host.is_closed(), "its answer is sent");
}

#[test]
fn a_goodbye_nobody_answers_is_given_up_after_the_linger() {
    let mut link = left_behind_a_partition(22);
    link.run_for(990);
    assert!(!link.joiner.is_closed());
    link.run_for(20);
    assert!(link.joiner.is_closed(), "a second at most");
}

#[test]
fn the_leavers_last_inputs_arrive_before_its_goodbye() {
    let mut link = Link::new(23);
    // The host hears nothing of the joiner's last inputs, then it leaves.
    link.net.partition_one_way(JOINER, HOST);
    for frame in 0..20 {
        let buttons = netcode::input::Buttons::from_bits(frame as u16);
        link.joiner
            .add_local_input(Frame::new(frame), &[buttons])
            .unwrap();
        link.run_for(16);
    }
    link.joiner.disconnect(DisconnectReason::Quit);
    link.run_for(100);
    link.net.heal(HOST, JOINER);
    link.run_for(900);
    let gone = link
        .host_events
        .iter()
        .position(|event| matches!(event, Event::Disconnected { .. }))
        .expect("the goodbye arrived");
    let inputs_before_goodbye = link.host_events[..gone]
        .iter()
        .filter(|event| matches!(event, Event::RemoteInput { .. }))
        .count();
    assert_eq!(inputs_before_goodbye, 20);
}

/// The host's last inputs reach the joiner only with its goodbye, after the
/// joiner ran the match's last frame on predictions of them: the joiner
/// still rolls back, so its last frames become final on the host's inputs.
#[test]
fn the_last_frames_become_final_when_the_leavers_last_inputs_come_with_its_goodbye() {
    const LAST_FRAMES: u32 = 600;
    let setup = MatchSetup::new(2, 31, LinkConditions::latency(20));
    let mut cluster = Cluster::new(setup, |_| party_game());
    for machine in cluster.machines.iter_mut() {
        machine.machine.stop_at_frame = Some(LAST_FRAMES);
    }
    // The pads change every 4 frames: the host's last 4 are mispredicted.
    while cluster.machines[0].machine.current_frame() < LAST_FRAMES - 4 {
        cluster.step();
    }
    cluster.net().partition_one_way(0, 1);
    let cut_at = cluster.now;
    cluster.run_until(cut_at + 500);
    let joiner = &cluster.machines[1];
    assert_eq!(
        joiner.machine.current_frame(),
        LAST_FRAMES,
        "ran its last frame"
    );
    assert!(joiner.sink.end_frame() < LAST_FRAMES);
    assert_eq!(cluster.machines[0].sink.end_frame(), LAST_FRAMES);
    let rollbacks_before = joiner.machine.stats.rollbacks;

    let left_at = cluster.now;
    cluster.machines[0].machine.netplay.leave();
    cluster.net().heal(0, 1);
    cluster.run_until(left_at + 2_000);

    let joiner = &cluster.machines[1];
    assert!(
        joiner
            .notes
            .events
            .iter()
            .any(|(_, event)| matches!(event, NetplayEvent::Disconnected { .. })),
        "the host's goodbye arrived"
    );
    assert_eq!(joiner.sink.end_frame(), LAST_FRAMES, "every frame is final");
    assert!(
        joiner.machine.stats.rollbacks > rollbacks_before,
        "the joiner's last frames were run on wrong predictions"
    );
    let comparison = compare_checksum_logs(&cluster.machines[0].sink, &joiner.sink);
    assert_eq!(comparison.first_difference, None, "{comparison:?}");
}
