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
