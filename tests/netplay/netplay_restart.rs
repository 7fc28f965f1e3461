//! A player whose process is killed mid-match and started again with its
//! rejoin ticket comes back, on the seeded simulated network: the host
//! waits for it, challenges its new address, sends it the state of the
//! first frame it lacks that player's inputs for, and the match resumes
//! in sync from there; the host's own record of the match has no gap.

use netcade::engine::frame_clock::FrameClock;
use netcade::engine::matches::machine::NetplayMachine;
use netcade::engine::sinks::{compare_checksum_logs, ChecksumLog};
use netcade::net::sim::LinkConditions;
use netcode::netplay::{NetplayConfig, NetplayEvent, NetplaySession, RejoinTicket};
use netcode::protocol::{LinkSecret, Millis};
use netcode::rollback::{Frame, SessionState};
use support::netplay::{any_event, config_for, party_game, Cluster, MatchSetup, PartyCluster};

/// The links of every match here.
const LINK: LinkConditions = LinkConditions::latency(20).with_jitter(5);
/// The restarted process's address (a new socket, a new port).
const NEW_ADDRESS: u8 = 11;
/// How long the rejoin window is.
const WINDOW_MS: Millis = 30_000;

fn setup(seed: u64) -> MatchSetup {
    MatchSetup::new(2, seed, LINK)
}

/// Machine `me`'s configuration: each its own secret, as in real play.
fn adjust(me: u8, config: &mut NetplayConfig<u8>) {
    config.rejoin_window_ms = WINDOW_MS;
    config.rejoin_seed = 0xA5A5 + u64::from(me);
    config.secret = LinkSecret::from_bytes([me + 1; 32]);
}

fn two_players(seed: u64) -> PartyCluster {
    Cluster::with_configs(setup(seed), |_| party_game(), adjust)
}

/// Kills the joiner's process at `kill_at` (nothing it held survives but
/// its ticket), starts a new one `down_ms` later from a new port, and
/// returns the old machine's checksum log and the restart moment.
fn kill_and_restart(cluster: &mut PartyCluster, kill_at: Millis, down_ms: Millis) -> ChecksumLog {
    cluster.run_until(kill_at);
    let ticket = cluster.machines[1]
        .netplay
        .rejoin_ticket()
        .expect("a member synchronized with the host holds a ticket");
    cluster.isolate(1);
    cluster.run_until(kill_at + down_ms);
    cluster.sockets.rebind(1, NEW_ADDRESS);
    let restarted = restarted_machine(cluster, &ticket);
    let old = std::mem::replace(&mut cluster.machines[1].machine, restarted);
    cluster.machines[1].notes = Default::default();
    old.sink
}

/// The joiner's new process: its game as loaded, its session from the
/// ticket, its frame clock from now.
fn restarted_machine(
    cluster: &PartyCluster,
    ticket: &RejoinTicket,
) -> NetplayMachine<u8, Box<netcode::testing::StubGame>, ChecksumLog> {
    let mut config = config_for(&setup(0), 1);
    adjust(1, &mut config);
    ticket.apply(&mut config);
    let netplay = NetplaySession::new(config, cluster.now).expect("a valid ticket");
    let clock = FrameClock::new(60.0, cluster.now * 1000);
    NetplayMachine::new(netplay, party_game(), ChecksumLog::new(1 << 17), clock)
}

fn event_at(
    cluster: &PartyCluster,
    machine: usize,
    wanted: impl Fn(&NetplayEvent) -> Option<Frame>,
) -> Option<(Millis, Frame)> {
    cluster.machines[machine]
        .notes
        .events
        .iter()
        .find_map(|(at, event)| wanted(event).map(|frame| (*at, frame)))
}

#[test]
fn a_joiner_killed_and_restarted_with_its_ticket_resumes_in_sync_and_the_host_misses_no_frame() {
    let mut cluster = two_players(41);
    let old_log = kill_and_restart(&mut cluster, 4_000, 3_000);
    let restarted_at = cluster.now;
    cluster.run_until(20_000);

    let sent = event_at(&cluster, 0, |e| match e {
        NetplayEvent::ResumeStateSent { frame, .. } => Some(*frame),
        _ => None,
    });
    let arrived = event_at(&cluster, 1, |e| match e {
        NetplayEvent::ResumeStateArrived { frame, .. } => Some(*frame),
        _ => None,
    });
    let (_, frame) = sent.expect("the host sent the state to resume from");
    let played_at = cluster.machines[1]
        .notes
        .events
        .iter()
        .find_map(|(at, e)| matches!(e, NetplayEvent::Running).then_some(*at));
    let (arrived_at, arrived_frame) = arrived.expect("the restarted joiner got it");
    assert_eq!(frame, arrived_frame);
    // It resumes where the old process's inputs ended: about 4 s in.
    assert!((200..=260).contains(&frame.number()), "resumed at {frame}");
    // docs/measurements.md: against the same match played without the
    // restart, to the same moment.
    let mut unbroken = two_players(41);
    unbroken.run_until(20_000);
    eprintln!(
        "restart to state: {} ms, to play: {} ms; resumed at frame {frame}; frames lost: {}",
        arrived_at - restarted_at,
        played_at.expect("the restarted machine plays") - restarted_at,
        unbroken.machines[0].current_frame() - cluster.machines[0].current_frame()
    );

    for machine in &cluster.machines {
        assert!(!any_event(&machine.notes.events, |e| matches!(
            e,
            NetplayEvent::Disconnected { .. }
                | NetplayEvent::Desync { .. }
                | NetplayEvent::PeerFault { .. }
        )));
        assert_eq!(machine.netplay.state(), SessionState::Running);
        assert!(
            machine.current_frame() > 800,
            "at frame {}",
            machine.current_frame()
        );
    }
    let host = &cluster.machines[0].sink;
    let restarted = &cluster.machines[1].sink;
    // The restarted machine agrees with the host on every frame since it resumed…
    let since = compare_checksum_logs(host, restarted);
    assert_eq!(since.first_difference, None);
    assert!(since.compared >= 500, "{} frames compared", since.compared);
    assert_eq!(restarted.first_frame(), frame.number());
    // …the old process did before it was killed…
    let before = compare_checksum_logs(host, &old_log);
    assert_eq!(before.first_difference, None);
    assert!(before.compared >= 200);
    // …and the host's record runs from frame 0 with no frame missing.
    assert_eq!(host.first_frame(), 0);
    assert!((0..host.end_frame()).all(|f| host.get(f).flatten().is_some()));
}

#[test]
fn a_process_restarted_with_a_ticket_of_another_secret_is_never_taken_back_and_the_window_ends_the_match(
) {
    let mut cluster = Cluster::with_configs(
        setup(43),
        |_| party_game(),
        |me, config| {
            adjust(me, config);
            config.rejoin_window_ms = 8_000;
        },
    );
    cluster.run_until(4_000);
    let mut ticket = cluster.machines[1].netplay.rejoin_ticket().unwrap();
    ticket.secret = LinkSecret::from_bytes([9; 32]);
    cluster.isolate(1);
    cluster.run_until(5_000);
    cluster.sockets.rebind(1, NEW_ADDRESS);
    let impostor = restarted_machine(&cluster, &ticket);
    cluster.machines[1].machine = impostor;
    cluster.machines[1].notes = Default::default();
    cluster.run_until(20_000);

    let host = &cluster.machines[0].notes.events;
    assert!(!any_event(host, |e| matches!(
        e,
        NetplayEvent::PeerRejoined { .. } | NetplayEvent::ResumeStateSent { .. }
    )));
    assert!(any_event(host, |e| matches!(
        e,
        NetplayEvent::Disconnected { .. }
    )));
    assert_eq!(cluster.machines[0].netplay.state(), SessionState::Ended);
    let impostor = &cluster.machines[1];
    assert!(!any_event(&impostor.notes.events, |e| matches!(
        e,
        NetplayEvent::ResumeStateArrived { .. } | NetplayEvent::Running
    )));
    assert_eq!(impostor.current_frame(), 0, "it never ran a frame");
}
