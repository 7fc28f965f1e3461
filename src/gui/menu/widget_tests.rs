//! The launcher's screens driven as a player would, without a display:
//! egui_kittest finds widgets through AccessKit, clicks and types into
//! them, and the launcher hands back the command line it would run.

use super::screens::Launcher;
use crate::launcher::forms::GameChoice;
use crate::launcher::replays::write_test_replay;
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use std::path::Path;

/// One folder for the config, data and replays of every test here (the
/// launcher finds them through the environment, which tests share).
fn isolated() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        std::env::set_var("NETCADE_CONFIG_DIR", dir.path());
        std::env::set_var("XDG_DATA_HOME", dir.path());
        std::env::set_var("NETCADE_REPLAY_DIR", dir.path().join("replays"));
        dir
    })
    .path()
}

/// The launcher with Duel's dojo chosen and no other core to probe.
fn harness() -> Harness<'static, Launcher> {
    isolated();
    let game = GameChoice {
        core: "duel".to_string(),
        rom: Some("cores/duel/arenas/dojo.arena".into()),
    };
    let launcher = Launcher::with_cores(Some(game), Vec::new());
    let mut harness = Harness::builder()
        .with_size(egui::vec2(960.0, 720.0))
        .build_state(
            |context, launcher: &mut Launcher| launcher.draw(context),
            launcher,
        );
    harness.run();
    harness
}

#[test]
fn join_then_an_address_typed_and_enter_issues_the_join_command_with_that_address() {
    let mut harness = harness();
    harness.get_by_label("Join").click();
    harness.run();
    let address = harness.get_by_role(Role::TextInput);
    address.focus();
    address.type_text("192.168.1.5:7000");
    harness.run();
    assert_eq!(harness.state_mut().take_session(), None, "not before Enter");
    harness.key_press(egui::Key::Enter);
    harness.run();
    let line = harness.state_mut().take_session().expect("Enter joins");
    assert_eq!(
        line[..6],
        [
            "join",
            "192.168.1.5:7000",
            "--core",
            "duel",
            "--rom",
            "cores/duel/arenas/dojo.arena"
        ]
    );
}

#[test]
fn the_replays_screen_lists_newest_first_fills_in_each_header_and_filters_by_name() {
    let replays = isolated().join("replays");
    std::fs::create_dir_all(&replays).unwrap();
    let (older, newer) = (replays.join("older.ncr"), replays.join("newer.ncr"));
    write_test_replay(&older, "dojo.arena");
    write_test_replay(&newer, "temple.arena");
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&older)
        .unwrap()
        .set_modified(an_hour_ago)
        .unwrap();
    let mut harness = harness();
    harness.get_by_label("Replays").click();
    harness.run();
    // The headers are read on a worker: the list shows first, then fills in.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while harness
        .query_by_label_contains("Duel 0.1.0, temple.arena, 2 players")
        .is_none()
    {
        assert!(std::time::Instant::now() < deadline, "no header shown");
        std::thread::yield_now();
        harness.step();
    }
    let top = |name: &str| harness.get_by_label(name).rect().top();
    assert!(top("newer.ncr") < top("older.ncr"), "newest first");
    let filter = harness.get_by_role(Role::TextInput);
    filter.focus();
    filter.type_text("old");
    harness.run();
    assert!(harness.query_by_label("newer.ncr").is_none());
    harness.get_by_label("older.ncr").click();
    harness.run();
    harness.get_by_label("Info").click();
    harness.run();
    let line = harness.state_mut().take_session().expect("Info runs");
    assert_eq!(line, ["replay", "info", &older.display().to_string()]);
}

#[test]
fn the_result_screen_says_how_it_ended_first_folds_its_log_and_rematch_joins_again() {
    let mut harness = harness();
    let line: Vec<String> = "join 10.0.0.2:7000 --core duel --rom cores/duel/arenas/dojo.arena"
        .split(' ')
        .map(str::to_string)
        .collect();
    harness
        .state_mut()
        .session_ended(crate::launcher::SessionEnd {
            command_line: line.clone(),
            output: "checksums after 240 frames: video 1\nreplay: /r/a.ncr\n".to_string(),
            report: Some(serde_json::json!({
                "end": "peer_lost",
                "seconds": 4.0,
                "netplay": { "player": 1, "input_delay": 2, "desyncs": 0, "peers": [] },
            })),
            ..crate::launcher::SessionEnd::default()
        });
    harness.run();
    let top =
        |harness: &Harness<'_, Launcher>, label: &str| harness.get_by_label(label).rect().top();
    let headline = "The connection to your opponent was lost.";
    assert!(top(&harness, headline) < top(&harness, "Duration: 4 s"));
    assert!(
        harness.query_by_label_contains("checksums").is_none(),
        "folded away"
    );
    harness.get_by_label("Everything it printed").click();
    harness.run();
    assert!(harness
        .query_by_label_contains("checksums after 240")
        .is_some());
    harness.get_by_label("Rematch").click();
    harness.run();
    assert_eq!(harness.state_mut().take_session(), Some(line));
}

#[test]
fn the_host_forms_retroarch_choice_hosts_for_retroarch_players_and_leaves_no_room() {
    let mut harness = harness();
    harness.get_by_label("Host").click();
    harness.run();
    harness
        .get_by_label("Open a room: the other player types its code instead of an address")
        .click();
    harness.run();
    harness
        .get_by_label(super::screens::RETROARCH_PLAYERS)
        .click();
    harness.run();
    // The address a netcade player joins it at, to copy.
    harness.get_by_label("Copy retroarch://127.0.0.1:7000");
    harness.get_by_label("Host the match").click();
    harness.run();
    let line = harness.state_mut().take_session().expect("it hosts");
    assert_eq!(line[..4], ["host", "--retroarch", "--port", "7000"]);
    assert!(!line.contains(&"--room".to_string()), "{line:?}");
}

#[test]
fn a_retroarch_address_in_the_join_and_spectate_forms_joins_and_watches_that_host() {
    for (form, command) in [("Join", "join"), ("Spectate", "spectate")] {
        let mut harness = harness();
        harness.get_by_label(form).click();
        harness.run();
        let address = harness.get_by_role(Role::TextInput);
        address.focus();
        address.type_text("retroarch://192.168.1.20");
        harness.run();
        harness.key_press(egui::Key::Enter);
        harness.run();
        let line = harness.state_mut().take_session().expect("Enter starts it");
        assert_eq!(line[..2], [command, "retroarch://192.168.1.20"], "{form}");
    }
}

#[cfg(feature = "broadcast")]
#[path = "../../../tests/support/servers.rs"]
#[allow(dead_code)]
mod servers;

/// A launcher on its Lobby screen.
#[cfg(feature = "broadcast")]
fn lobby_screen() -> Harness<'static, Launcher> {
    let mut harness = harness();
    harness.get_by_label("Lobby").click();
    harness.run();
    harness
}

/// Enters the lobby at `server` as `name` (the fields empty: entering
/// keeps both in the settings, which launchers made later start with).
#[cfg(feature = "broadcast")]
fn enter(harness: &mut Harness<'static, Launcher>, server: &str, name: &str) {
    let fields: Vec<_> = harness.get_all_by_role(Role::TextInput).collect();
    assert_eq!(fields.len(), 2, "the server and the name");
    for (field, text) in fields.iter().zip([server, name]) {
        field.focus();
        field.type_text(text);
    }
    harness.run();
    harness.get_by_label("Enter the lobby").click();
    harness.run();
}

/// Steps `harnesses` (their visits answer on other threads) until
/// `wanted` holds.
#[cfg(feature = "broadcast")]
fn step_until(
    harnesses: &mut [&mut Harness<'static, Launcher>],
    what: &str,
    mut wanted: impl FnMut(&mut [&mut Harness<'static, Launcher>]) -> bool,
) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !wanted(harnesses) {
        assert!(std::time::Instant::now() < deadline, "never: {what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
        for harness in harnesses.iter_mut() {
            harness.step();
        }
    }
}

#[cfg(feature = "broadcast")]
#[test]
#[cfg_attr(not(netcade_server_nats_server), ignore = "needs nats-server on PATH")]
fn in_the_lobby_players_see_each_other_and_challenge_accept_and_decline_are_one_click_each() {
    use crate::live::lobby::{identity, inbox_subject, list_lobby};
    use netcode::lobby::{Envelope, LobbyMessage};
    let dir = tempfile::tempdir().unwrap();
    let Some(nats) = servers::start_nats(dir.path(), "") else {
        return;
    };
    let url = nats.url(None);
    let (mut al, mut bo, mut cy) = (lobby_screen(), lobby_screen(), lobby_screen());
    enter(&mut al, &url, "al");
    enter(&mut bo, &url, "bo");
    enter(&mut cy, &url, "cy");
    step_until(&mut [&mut al, &mut bo, &mut cy], "all three listed", |h| {
        h[0].query_by_label("Challenge bo").is_some()
            && h[0].query_by_label("Challenge cy").is_some()
            && h[1].query_by_label("Challenge al").is_some()
    });
    assert!(al.query_by_label("Challenge al").is_none(), "not yourself");
    assert!(al
        .query_by_label_contains("Duel 0.1.0): 3 players")
        .is_some());
    // al's challenges to bo, as al's session would say them.
    let link =
        crate::net::nats::NatsLink::connect(&url, std::time::Duration::from_secs(5)).unwrap();
    let channel = list_lobby(&link).unwrap().channels[0].channel.key();
    let to_al = link
        .listen(inbox_subject("al"), 16, |payload| {
            let (_, body) = identity::open(&inbox_subject("al"), payload).ok()?;
            Envelope::decode(body).ok()
        })
        .unwrap();
    // Every launcher of this process signs with this machine's key.
    let al_key = identity::LobbyIdentity::of_this_machine().unwrap();
    let challenge = |id: &str| {
        let envelope = Envelope {
            from: "al".into(),
            message: LobbyMessage::Challenge {
                id: id.into(),
                channel: channel.clone(),
            },
            link_key: None,
        };
        let sealed = al_key.seal_message("bo", &envelope);
        let client = link.client();
        link.run(async move {
            let subject = inbox_subject("bo");
            client.publish(subject, sealed.into()).await.unwrap();
            client.flush().await.unwrap();
        })
        .unwrap();
    };
    challenge("1");
    step_until(&mut [&mut al, &mut bo, &mut cy], "bo hears al", |h| {
        h[1].query_by_label("Decline al").is_some()
    });
    bo.get_by_label("Decline al").click();
    bo.run();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let declined = loop {
        if let Some(heard) = to_al.try_next().unwrap() {
            break heard;
        }
        assert!(std::time::Instant::now() < deadline, "no decline");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(declined.from, "bo");
    assert!(
        matches!(&declined.message, LobbyMessage::Decline { id, .. } if id == "1"),
        "{declined:?}"
    );
    step_until(&mut [&mut bo], "the declined challenge gone", |h| {
        h[0].query_by_label("Accept al").is_none()
    });
    challenge("2");
    step_until(&mut [&mut al, &mut bo, &mut cy], "bo hears al again", |h| {
        h[1].query_by_label("Accept al").is_some()
    });
    bo.get_by_label("Accept al").click();
    let mut accepted = None;
    step_until(&mut [&mut bo], "bo's session", |h| {
        accepted = h[0].state_mut().take_session();
        accepted.is_some()
    });
    let accepted = accepted.unwrap();
    assert_eq!(accepted[..4], ["lobby", url.as_str(), "--accept", "al"]);
    assert!(
        accepted.windows(2).any(|w| w == ["--name", "bo"]),
        "{accepted:?}"
    );
    // bo left the lobby for its match: al challenges cy.
    step_until(&mut [&mut al, &mut cy], "bo gone", |h| {
        h[0].query_by_label("Challenge bo").is_none()
    });
    al.get_by_label("Challenge cy").click();
    let mut challenged = None;
    step_until(&mut [&mut al], "al's session", |h| {
        challenged = h[0].state_mut().take_session();
        challenged.is_some()
    });
    assert_eq!(
        challenged.unwrap()[..4],
        ["lobby", url.as_str(), "--challenge", "cy"]
    );
}
