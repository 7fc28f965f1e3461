//! `netcade broadcast` and `spectate nats://…` (feature `broadcast`)
//! against a real nats-server with JetStream on loopback: real matches of
//! the Duel core, a broadcaster, viewers and plain subscribers.
#![cfg(feature = "broadcast")]

use futures_util::StreamExt;
use netcade::net::nats::NatsLink;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::cli::room_code;
use support::cli::{assert_refusals, refusal, Background};
use support::cli::{
    last_json, netcade, netcade_as_user, spawn_host, spawn_netcade, stderr, stdout,
};
use support::servers::{signaling_server, start_nats, NatsServer};

/// 25 s at 60 fps: long enough for viewers joining at 2, 8 and 15 s.
const FRAMES: u32 = 1500;
const TIMEOUT: Duration = Duration::from_secs(90);

fn game() -> Vec<String> {
    [
        "--core",
        "duel",
        "--rom",
        &support::dojo_arena(),
        "--headless",
    ]
    .map(String::from)
    .to_vec()
}

fn with<'a>(args: &[&'a str], game: &'a [String]) -> Vec<&'a str> {
    let mut all = args.to_vec();
    all.extend(game.iter().map(String::as_str));
    all
}

/// A host and a joiner playing `FRAMES` frames of Duel with the same
/// seeded inputs every time; returns them and the host's port.
fn start_match(dir: &std::path::Path, game: &[String]) -> (Background, Background, u16) {
    let frames = FRAMES.to_string();
    let host_args = with(
        &["--frames", &frames, "--inputs", "random:1", "--json"],
        game,
    );
    let (host, port) = spawn_host(dir, &host_args, TIMEOUT);
    let address = format!("127.0.0.1:{port}");
    let join_args = ["join", address.as_str(), "--frames", &frames];
    let join = spawn_netcade(&with(
        &[&join_args[..], &["--inputs", "random:2", "--json"]].concat(),
        game,
    ));
    (host, join, port)
}

fn start_broadcaster(port: u16, nats: &NatsServer, name: &str, game: &[String]) -> Background {
    let address = format!("127.0.0.1:{port}");
    let url = nats.url(None);
    let args = [
        "broadcast",
        &address,
        "--nats",
        &url,
        "--match",
        name,
        "--json",
    ];
    spawn_netcade(&with(&args, game))
}

fn start_viewer(nats: &NatsServer, name: &str, game: &[String]) -> Background {
    let address = format!("{}/{name}", nats.url(None));
    spawn_netcade(&with(&["spectate", &address, "--json"], game))
}

/// A plain NATS subscriber of every part of match `name`, counting the
/// payload bytes the server sent it.
struct Subscriber {
    _link: NatsLink,
    received: Arc<AtomicU64>,
}

fn subscribe(nats: &NatsServer, name: &str) -> Subscriber {
    let link = NatsLink::connect(&nats.url(None), Duration::from_secs(5)).unwrap();
    let client = link.client();
    let subject = format!("netcade.match.{name}.*");
    let mut messages = link
        .run(async move { client.subscribe(subject).await })
        .unwrap()
        .unwrap();
    let received = Arc::new(AtomicU64::new(0));
    let counter = received.clone();
    link.spawn(async move {
        while let Some(message) = messages.next().await {
            counter.fetch_add(message.payload.len() as u64, Ordering::Relaxed);
        }
    })
    .unwrap();
    Subscriber {
        _link: link,
        received,
    }
}

/// `spectate --list`'s output once a line of it is `wanted` (the viewers
/// just started announce themselves within a few seconds).
fn listing_once(nats: &NatsServer, wanted: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let listed = netcade(&["spectate", "--list", &nats.url(None)]);
        assert!(listed.status.success(), "{listed:?}");
        let text = stdout(&listed);
        if text.lines().any(&wanted) || Instant::now() > deadline {
            assert!(text.lines().any(&wanted), "{text}");
            return text;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn sleep_until(moment: Instant) {
    std::thread::sleep(moment.saturating_duration_since(Instant::now()));
}

fn sent_bytes_per_s(json: &serde_json::Value) -> f64 {
    json["netplay"]["wire"]["sent_bytes_per_s"]
        .as_f64()
        .unwrap()
}

/// Ends `process` and returns its last JSON, asserting it succeeded.
fn finished(process: Background, who: &str) -> serde_json::Value {
    let output = process.finish(TIMEOUT);
    assert!(output.status.success(), "{who}: {output:?}");
    last_json(&output)
}

/// The replay the broadcaster of `name` left in the object store, saved
/// into `dir`, plays back true.
fn assert_the_stored_replay_verifies(
    dir: &std::path::Path,
    nats: &NatsServer,
    name: &str,
    game: &[String],
) {
    let address = format!("{}/{name}", nats.url(None));
    let saved = netcade_as_user(dir, &["spectate", "--save-replay", &address], "");
    assert!(saved.status.success(), "{saved:?}");
    let replay = dir.join(format!("{name}.ncr")).display().to_string();
    let verified = netcade(&with(&["replay", "play", &replay, "--verify"], &game[..4]));
    assert!(verified.status.success(), "{verified:?}");
    assert!(
        stdout(&verified).contains("checkpoints agree"),
        "{verified:?}"
    );
}

#[test]
#[cfg_attr(not(netcade_server_nats_server), ignore = "needs nats-server on PATH")]
fn three_viewers_and_fifty_subscribers_end_in_sync_at_no_cost_to_the_host_and_the_stored_replay_verifies(
) {
    let dir = tempfile::tempdir().unwrap();
    let Some(nats) = start_nats(dir.path(), "") else {
        return;
    };
    let game = game();
    // The same match twice at once: one broadcast to an audience, one
    // broadcast to nobody.
    let (watched_dir, alone_dir) = (dir.path().join("watched"), dir.path().join("alone"));
    std::fs::create_dir_all(&watched_dir).unwrap();
    std::fs::create_dir_all(&alone_dir).unwrap();
    let (host, join, port) = start_match(&watched_dir, &game);
    let (lone_host, lone_join, lone_port) = start_match(&alone_dir, &game);
    let subscribers: Vec<Subscriber> = (0..50).map(|_| subscribe(&nats, "watched")).collect();
    let broadcaster = start_broadcaster(port, &nats, "watched", &game);
    let lone_broadcaster = start_broadcaster(lone_port, &nats, "alone", &game);
    let started = Instant::now();
    let viewers: Vec<Background> = [2, 8, 15]
        .into_iter()
        .map(|at| {
            sleep_until(started + Duration::from_secs(at));
            start_viewer(&nats, "watched", &game)
        })
        .collect();
    // Both matches are listed while they are on, with their viewers (the
    // plain subscribers are not viewers).
    let listed = listing_once(&nats, |line| {
        line.starts_with("watched  Duel") && line.contains(", 3 viewers,")
    });
    let alone = listed.lines().find(|line| line.starts_with("alone  Duel"));
    assert!(
        alone.is_some_and(|line| line.contains(", 0 viewers,")),
        "{listed}"
    );

    let host = finished(host, "host");
    let join = finished(join, "join");
    assert_eq!(host["checksums"], join["checksums"]);
    for (index, viewer) in viewers.into_iter().enumerate() {
        let watched = finished(viewer, "viewer");
        assert_eq!(watched["end"], "finished", "viewer {index}: {watched}");
        assert_eq!(watched["frames"], FRAMES, "viewer {index}: {watched}");
        assert_eq!(watched["checksums"], host["checksums"], "viewer {index}");
    }
    let broadcast = finished(broadcaster, "broadcaster");
    assert_eq!(broadcast["checksums"], host["checksums"]);
    let lone_host = finished(lone_host, "the other host");
    finished(lone_join, "the other joiner");
    finished(lone_broadcaster, "the other broadcaster");

    let (watched, alone) = (sent_bytes_per_s(&host), sent_bytes_per_s(&lone_host));
    assert!(
        (watched - alone).abs() <= 0.05 * alone,
        "the host sent {watched:.0} B/s watched by 53, {alone:.0} B/s by nobody"
    );
    for subscriber in &subscribers {
        assert!(subscriber.received.load(Ordering::Relaxed) > 1000);
    }
    let per_viewer = subscribers[0].received.load(Ordering::Relaxed);
    eprintln!(
        "server payload bytes per subscriber: {per_viewer} over {FRAMES} frames ({:.0} B/s)",
        per_viewer as f64 / (f64::from(FRAMES) / 60.0)
    );

    // The replay the broadcaster left in the object store plays back true.
    assert_the_stored_replay_verifies(dir.path(), &nats, "watched", &game);
}

#[test]
#[cfg_attr(not(netcade_server_nats_server), ignore = "needs nats-server on PATH")]
fn a_viewer_resumes_from_the_next_savestate_when_the_broadcaster_is_killed_and_restarted() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nats) = start_nats(dir.path(), "") else {
        return;
    };
    let game = game();
    let (host, join, port) = start_match(dir.path(), &game);
    let mut first = start_broadcaster(port, &nats, "restarted", &game);
    let started = Instant::now();
    sleep_until(started + Duration::from_secs(2));
    let viewer = start_viewer(&nats, "restarted", &game);
    sleep_until(started + Duration::from_secs(7));
    first.kill();
    sleep_until(started + Duration::from_secs(9));
    let second = start_broadcaster(port, &nats, "restarted", &game);

    let host = finished(host, "host");
    finished(join, "join");
    finished(second, "the second broadcaster");
    let output = viewer.finish(TIMEOUT);
    assert!(output.status.success(), "{output:?}");
    assert!(
        stderr(&output).contains("resumed at its savestate of frame"),
        "{output:?}"
    );
    let watched = last_json(&output);
    assert_eq!(watched["end"], "finished", "{watched}");
    assert_eq!(watched["checksums"], host["checksums"]);
}

/// Someone who may publish on the match's subjects (as anyone with the
/// server's publish rights may), as a forger would.
struct Stranger {
    link: NatsLink,
}

impl Stranger {
    fn new(nats: &NatsServer) -> Stranger {
        let link = NatsLink::connect(&nats.url(None), Duration::from_secs(5)).unwrap();
        Stranger { link }
    }

    /// Puts `payload` into the stream on `netcade.match.NAME.PART`.
    fn publish(&self, name: &str, part: &str, payload: Vec<u8>) {
        let js = self.link.jetstream();
        let subject = format!("netcade.match.{name}.{part}");
        self.link
            .run(async move { js.publish(subject, payload.into()).await?.await })
            .unwrap()
            .unwrap();
    }
}

/// The broadcast id the newest header of match `name` names (the 16 bytes
/// before its signature).
fn broadcast_id(stranger: &Stranger, name: &str) -> [u8; 16] {
    let js = stranger.link.jetstream();
    let subject = format!("netcade.match.{name}.header");
    let header = stranger
        .link
        .run(async move {
            let stream = js.get_stream("NETCADE").await.unwrap();
            stream
                .get_last_raw_message_by_subject(&subject)
                .await
                .unwrap()
        })
        .unwrap();
    let end = header.payload.len() - 64;
    header.payload[end - 16..end].try_into().unwrap()
}

/// Replay records of frames `first..first + frames` of a two-player match,
/// every button held: well-formed, and not the match's.
fn forged_inputs(first: u32, frames: u32) -> Vec<u8> {
    use netcode::checksum::Checksum;
    use netcode::input::Buttons;
    use netcode::replay::{ReplayHeader, ReplayWriter};
    use netcode::rollback::Frame;
    let header = ReplayHeader {
        netcade_version: "0.1.0".into(),
        core_name: "Duel".into(),
        core_version: "0.1.0".into(),
        core_path: String::new(),
        content_name: String::new(),
        content_path: String::new(),
        content_hash: Checksum(0),
        core_options: Vec::new(),
        players: 2,
        frames_per_second: 60.0,
        sample_rate: 48_000.0,
        recorded_at_unix: 0,
        player_names: Vec::new(),
        start_frame: Frame::new(first),
        start_state: Vec::new(),
        start_memory_checksum: Checksum(0),
    };
    let mut writer = ReplayWriter::new(Vec::new(), &header).unwrap();
    writer.output().clear();
    for frame in first..first + frames {
        let held = [Buttons::from_bits(0x0fff); 2];
        writer.frame(Frame::new(frame), &held, None, None).unwrap();
    }
    writer.flush().unwrap();
    std::mem::take(writer.output())
}

#[test]
#[cfg_attr(not(netcade_server_nats_server), ignore = "needs nats-server on PATH")]
fn what_a_stranger_publishes_on_the_match_is_refused_and_counted_and_shuts_no_viewer_out() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nats) = start_nats(dir.path(), "") else {
        return;
    };
    let game = game();
    let (host, join, port) = start_match(dir.path(), &game);
    let broadcaster = start_broadcaster(port, &nats, "forged", &game);
    let started = Instant::now();
    sleep_until(started + Duration::from_secs(3));
    let watching = start_viewer(&nats, "forged", &game);
    sleep_until(started + Duration::from_secs(6));
    let stranger = Stranger::new(&nats);
    // Every frame of the match, every button held (a viewer takes those
    // it has not had yet); then junk on every part, so the newest header
    // and savestate are the stranger's.
    stranger.publish("forged", "records", forged_inputs(0, FRAMES));
    for part in ["records", "state", "header"] {
        stranger.publish("forged", part, b"\x01\x02 not a netcade message".to_vec());
    }
    let later = start_viewer(&nats, "forged", &game);
    let from_start = spawn_netcade(&with(
        &[
            "spectate",
            &format!("{}/forged", nats.url(None)),
            "--from-start",
            "--json",
        ],
        &game,
    ));

    let host = finished(host, "host");
    finished(join, "join");
    finished(broadcaster, "broadcaster");
    for (viewer, who, refused) in [
        (watching, "the viewer watching", 2),
        (later, "a later viewer", 0),
        (from_start, "a viewer from the start", 2),
    ] {
        let watched = finished(viewer, who);
        assert_eq!(watched["end"], "finished", "{who}: {watched}");
        assert_eq!(watched["checksums"], host["checksums"], "{who}: {watched}");
        let counted = watched["spectator"]["refused_messages"].as_u64().unwrap();
        assert!(counted >= refused, "{who}: {watched}");
    }
}

#[test]
#[cfg_attr(not(netcade_server_nats_server), ignore = "needs nats-server on PATH")]
fn a_record_signed_with_the_broadcasters_own_key_but_not_the_match_is_caught_at_a_checkpoint_and_repaired(
) {
    let dir = tempfile::tempdir().unwrap();
    let Some(nats) = start_nats(dir.path(), "") else {
        return;
    };
    let game = game();
    let (host, join, port) = start_match(dir.path(), &game);
    let broadcaster = start_broadcaster(port, &nats, "inside-job", &game);
    let started = Instant::now();
    sleep_until(started + Duration::from_secs(3));
    let watching = start_viewer(&nats, "inside-job", &game);
    sleep_until(started + Duration::from_secs(6));
    // Whoever holds the broadcaster's key (its machine's data directory,
    // shared by every test here) signs frames the players never played.
    let stranger = Stranger::new(&nats);
    let key_file = support::target_tmp_dir().join("data/netcade/broadcast-key");
    let seed: [u8; 32] = std::fs::read(&key_file).unwrap().try_into().unwrap();
    let signer =
        netcade::live::broadcast::BroadcastSigner::new(seed, broadcast_id(&stranger, "inside-job"));
    let subject = "netcade.match.inside-job.records";
    let forged = signer.seal(subject, None, &forged_inputs(0, FRAMES), false);
    stranger.publish("inside-job", "records", forged);

    let host = finished(host, "host");
    finished(join, "join");
    finished(broadcaster, "broadcaster");
    let output = watching.finish(TIMEOUT);
    // As a spectator's: a checkpoint that differed fails the watch, which
    // still ends on the players' game, repaired from the next savestate.
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(stderr(&output).contains("desync at frame"), "{output:?}");
    let watched = last_json(&output);
    assert_eq!(watched["end"], "finished", "{watched}");
    assert!(
        watched["spectator"]["desyncs"].as_u64() >= Some(1),
        "{watched}"
    );
    assert!(
        watched["spectator"]["repairs"].as_u64() >= Some(1),
        "{watched}"
    );
    assert_eq!(watched["checksums"], host["checksums"], "{watched}");
}

/// The `error:` line a process ended with, asserting it ended with exit 3
/// and said only that.
fn the_one_error(output: &std::process::Output, who: &str) -> String {
    assert_eq!(output.status.code(), Some(3), "{who}: {output:?}");
    let said = stderr(output);
    let errors: Vec<&str> = said
        .lines()
        .filter(|line| line.starts_with("error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{who}: {said}");
    errors[0].to_string()
}

#[test]
#[cfg_attr(not(netcade_server_nats_server), ignore = "needs nats-server on PATH")]
fn a_server_that_goes_away_ends_the_broadcaster_and_its_viewer_with_one_error_and_ctrl_c_always_ends_them(
) {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut nats) = start_nats(dir.path(), "") else {
        return;
    };
    let game = game();
    let (host, join, port) = start_match(dir.path(), &game);
    let left = start_broadcaster(port, &nats, "outage", &game);
    let mut stopped = start_broadcaster(port, &nats, "outage-stopped", &game);
    let started = Instant::now();
    sleep_until(started + Duration::from_secs(3));
    let watching = start_viewer(&nats, "outage", &game);
    let mut stopped_watching = start_viewer(&nats, "outage-stopped", &game);
    sleep_until(started + Duration::from_secs(8));
    nats.process.child.kill().unwrap();
    nats.process.child.wait().unwrap();
    let gone = Instant::now();
    // Ctrl-C ends a broadcaster and a viewer whose server went quiet at once.
    std::thread::sleep(Duration::from_millis(500));
    stopped.interrupt();
    stopped_watching.interrupt();
    for (process, who) in [
        (stopped, "the interrupted broadcaster"),
        (stopped_watching, "the interrupted viewer"),
    ] {
        let output = process.finish(Duration::from_secs(60));
        assert!(
            gone.elapsed() < Duration::from_secs(8),
            "{who} took {:?}: {output:?}",
            gone.elapsed()
        );
        assert!(
            matches!(output.status.code(), Some(130 | 3)),
            "{who}: {output:?}"
        );
    }
    // The others end on their own once the client gave up reconnecting.
    let budget = netcade::net::nats::RECONNECT_BUDGET;
    for (process, who) in [(left, "the broadcaster"), (watching, "the viewer")] {
        let output = process.finish(TIMEOUT);
        assert!(
            gone.elapsed() < budget + Duration::from_secs(10),
            "{who} took {:?}: {output:?}",
            gone.elapsed()
        );
        let error = the_one_error(&output, who);
        assert!(error.contains("NATS"), "{who}: {error}");
    }
    // The match itself never noticed.
    finished(host, "host");
    finished(join, "join");
}

#[test]
#[cfg_attr(not(netcade_server_nats_server), ignore = "needs nats-server on PATH")]
fn a_server_that_is_down_or_refuses_the_credentials_gives_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let users = "authorization { users = [ {user: viewer, password: seen} ] }";
    let Some(nats) = start_nats(dir.path(), users) else {
        return;
    };
    let down = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("nats://127.0.0.1:{}", listener.local_addr().unwrap().port())
    };
    let wrong = nats.url(Some("viewer:guessed"));
    let right = nats.url(Some("viewer:seen"));
    let unknown = format!("{right}/nothing-here");
    assert_refusals(&[
        refusal(
            &[
                "broadcast",
                "127.0.0.1:9",
                "--nats",
                &down,
                "--core",
                "duel",
            ],
            "cannot reach the NATS server",
            3,
        )
        .in_the_error_line(),
        refusal(
            &["spectate", "--list", &down],
            "cannot reach the NATS server",
            3,
        ),
        refusal(
            &["spectate", "--list", &wrong],
            "refused our credentials",
            2,
        )
        .in_the_error_line(),
        refusal(
            &["spectate", &unknown, "--core", "duel"],
            "no match named nothing-here",
            2,
        ),
        refusal(
            &[
                "broadcast",
                "127.0.0.1:9",
                "--nats",
                &right,
                "--match",
                "a.b",
                "--core",
                "duel",
            ],
            "must be 1 to 64 letters",
            2,
        ),
    ]);
    let listed = netcade(&["spectate", "--list", &right]);
    assert!(listed.status.success(), "{listed:?}");
    assert!(stdout(&listed).contains("no live matches"), "{listed:?}");
}

#[test]
#[cfg_attr(not(netcade_server_nats_server), ignore = "needs nats-server on PATH")]
fn a_header_and_savestates_larger_than_the_server_takes_go_in_pieces_and_viewers_put_them_together()
{
    let dir = tempfile::tempdir().unwrap();
    // The match's header (paths, names, the start state) takes more.
    let Some(nats) = start_nats(dir.path(), "max_payload: 400") else {
        return;
    };
    let game = game();
    let (host, join, port) = start_match(dir.path(), &game);
    let broadcaster = start_broadcaster(port, &nats, "pieces", &game);
    std::thread::sleep(Duration::from_secs(2));
    let address = format!("{}/pieces", nats.url(None));
    let from_start = spawn_netcade(&with(
        &["spectate", &address, "--from-start", "--json"],
        &game,
    ));
    let live = start_viewer(&nats, "pieces", &game);

    let host = finished(host, "host");
    finished(join, "join");
    let broadcast = finished(broadcaster, "broadcaster");
    assert!(
        broadcast["broadcast"]["replay_object"].is_string(),
        "{broadcast}"
    );
    assert!(
        broadcast["broadcast"]["in_pieces"].as_u64() >= Some(1),
        "{broadcast}"
    );
    for viewer in [from_start, live] {
        let watched = finished(viewer, "viewer");
        assert_eq!(watched["end"], "finished", "{watched}");
        assert_eq!(watched["checksums"], host["checksums"]);
    }
    assert_the_stored_replay_verifies(dir.path(), &nats, "pieces", &game);
}

#[test]
#[cfg_attr(not(netcade_server_nats_server), ignore = "needs nats-server on PATH")]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn a_broadcaster_finds_the_host_by_room_code_its_viewer_ends_on_the_players_checksums_and_one_who_left_is_no_longer_counted(
) {
    let dir = tempfile::tempdir().unwrap();
    let Some(nats) = start_nats(dir.path(), "") else {
        return;
    };
    let Some((_signaling, signal)) = signaling_server() else {
        return;
    };
    let game = game();
    // Ten seconds of Duel: room pairing, then the broadcaster, then a viewer.
    let frames = "600";
    let room = |args: &[&str], seed: &str| {
        let mut all = args.to_vec();
        all.extend(["--signal", &signal, "--frames", frames, "--json"]);
        all.extend(["--inputs", seed]);
        spawn_netcade(&with(&all, &game))
    };
    let mut host = room(&["host", "--port", "0", "--room"], "random:1");
    let code = room_code(&mut host);
    let join = room(&["join", "--room", &code], "random:2");
    host.wait_for_stdout("the match began", TIMEOUT);
    let url = nats.url(None);
    let broadcaster = spawn_netcade(&with(
        &[
            "broadcast",
            "--room",
            &code,
            "--signal",
            &signal,
            "--nats",
            &url,
            "--match",
            "roomed",
            "--json",
        ],
        &game,
    ));
    listing_once(&nats, |line| line.starts_with("roomed  "));
    let viewer = start_viewer(&nats, "roomed", &game);
    // A viewer leaving early stops being counted at once, the other still
    // is (the match has seconds left, keys last 15 s).
    listing_once(&nats, |line| {
        line.starts_with("roomed  ") && line.contains(", 1 viewer,")
    });
    let address = format!("{}/roomed", nats.url(None));
    let early = netcade(&with(&["spectate", &address, "--frames", "60"], &game));
    assert!(early.status.success(), "{early:?}");
    let listed = netcade(&["spectate", "--list", &nats.url(None)]);
    assert!(stdout(&listed).contains(", 1 viewer,"), "{listed:?}");

    let host = finished(host, "host");
    let join = finished(join, "join");
    assert_eq!(host["checksums"], join["checksums"]);
    let broadcast = finished(broadcaster, "broadcaster");
    assert_eq!(broadcast["checksums"], host["checksums"]);
    let watched = finished(viewer, "viewer");
    assert_eq!(watched["end"], "finished", "{watched}");
    assert_eq!(watched["checksums"], host["checksums"]);
}

#[test]
#[cfg(feature = "gui")]
#[cfg_attr(not(netcade_server_nats_server), ignore = "needs nats-server on PATH")]
fn a_viewer_in_a_window_draws_the_match_and_ends_on_the_players_checksums() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nats) = start_nats(dir.path(), "") else {
        return;
    };
    let game = game();
    let (host, join, port) = start_match(dir.path(), &game);
    let broadcaster = start_broadcaster(port, &nats, "windowed", &game);
    sleep_until(Instant::now() + Duration::from_secs(2));
    let shot = dir.path().join("viewer.png");
    let (address, shot_arg) = (
        format!("{}/windowed", nats.url(None)),
        shot.display().to_string(),
    );
    let arena = support::dojo_arena();
    let viewer = spawn_netcade(&[
        "spectate",
        &address,
        "--core",
        "duel",
        "--rom",
        &arena,
        "--window-size",
        "640x480",
        "--screenshot-at",
        "1200",
        &shot_arg,
        "--json",
    ]);
    let host = finished(host, "host");
    finished(join, "join");
    finished(broadcaster, "the broadcaster");
    let output = viewer.finish(TIMEOUT);
    assert!(output.status.success(), "{output:?}");
    let watched = last_json(&output);
    assert_eq!(watched["end"], "finished", "{watched}");
    assert_eq!(watched["checksums"], host["checksums"]);
    // The window's picture at frame 1200: the game, many colours over its
    // lower half (the arena's floor and the fighters), as the window drew it.
    let picture = support::screenshot::read_png(&shot);
    assert_eq!(picture.size(), (640, 480));
    picture.assert_the_lower_half_shows_the_game();
}
