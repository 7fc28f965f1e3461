//! The launcher (`netcade menu`, and `netcade` alone) in a real window,
//! driven by `--script` through the same event path as a player's hands:
//! it draws, its Join form hands the address typed to `join`, and a match
//! hosted from one launcher and joined from another plays to equal
//! checksums and ends on both result screens, and a joiner killed
//! mid-match comes back through the home screen's rejoin button.
#![cfg(feature = "gui")]

use std::path::Path;
use std::time::Duration;
use support::cli::{spawn_netcade_with_env, stderr, stdout, Background};
use support::screenshot::read_png;

const TIMEOUT: Duration = Duration::from_secs(60);

/// One launcher window at a time: a window mapped on the shared display
/// takes the focus (and the pointer) from another's scripted typing.
static ONE_WINDOW: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub(crate) fn one_window() -> std::sync::MutexGuard<'static, ()> {
    ONE_WINDOW
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `netcade menu --core duel --rom ARENA --script SCRIPT` with its config
/// and data in `dir`.
fn launcher(dir: &Path, script: &str) -> Background {
    launcher_with_replays(dir, script, &support::cli::test_replay_dir())
}

/// [`launcher`] with its replays folder `replays`.
fn launcher_with_replays(dir: &Path, script: &str, replays: &Path) -> Background {
    let script_path = dir.join("script.txt");
    std::fs::write(&script_path, script).unwrap();
    let arena = support::dojo_arena();
    let script_arg = script_path.display().to_string();
    let args = [
        "menu",
        "--core",
        "duel",
        "--rom",
        &arena,
        "--script",
        &script_arg,
    ];
    spawn_netcade_with_env(
        &args,
        &[
            ("NETCADE_CONFIG_DIR", dir.as_os_str()),
            ("XDG_DATA_HOME", dir.as_os_str()),
            ("NETCADE_REPLAY_DIR", replays.as_os_str()),
        ],
    )
}

#[test]
fn the_launcher_draws_its_home_screen_and_the_host_form_shows_the_command_it_stands_for() {
    let _window = one_window();
    let dir = tempfile::tempdir().unwrap();
    let (home, host) = (dir.path().join("home.png"), dir.path().join("host.png"));
    let script = format!(
        "wait 3\nscreenshot {}\nclick Host\nscreenshot {}\nquit\n",
        home.display(),
        host.display()
    );
    let output = launcher(dir.path(), &script).finish(TIMEOUT);
    assert!(output.status.success(), "{}", stderr(&output));
    let (home, host) = (read_png(&home), read_png(&host));
    assert_eq!(home.size(), (960, 720));
    // egui's dark panel fills the window, not the game's black.
    let background = &home.rgb[home.rgb.len() / 2..home.rgb.len() / 2 + 3];
    assert!(
        background.iter().all(|c| (20..60).contains(c)),
        "{background:?}"
    );
    // The heading, then lines of buttons and labels below it.
    assert!(home.light_pixels(0..50) > 100, "the heading");
    assert!(
        home.light_pixels(50..400) > 500,
        "the home screen's widgets"
    );
    // The host form has more lines (its fields and the command line).
    assert!(host.light_pixels(50..400) > home.light_pixels(50..400));
    assert_ne!(home.rgb, host.rgb);
}

#[test]
fn enter_in_the_join_forms_address_joins_it_remembers_it_and_shows_the_command_lines_error() {
    let _window = one_window();
    let dir = tempfile::tempdir().unwrap();
    // Nobody listens on the discard port: the join gives up, as on the
    // command line, and the launcher stays open on the result.
    // Back on the Join form, the address is offered among those used lately.
    let script = "click Join\nclick Address (HOST:PORT)\ntype 127.0.0.1:9\nkey Return\n\
                  click Back\nclick Join\nclick 127.0.0.1:9\nquit\n";
    let output = launcher(dir.path(), script).finish(TIMEOUT);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("joining 127.0.0.1:9"),
        "{}",
        stdout(&output)
    );
    assert!(
        stderr(&output).contains("error: no answer from 127.0.0.1:9"),
        "{}",
        stderr(&output)
    );
    assert!(
        stdout(&output).contains("$ netcade join 127.0.0.1:9 --core duel --rom "),
        "{}",
        stdout(&output)
    );
    let remembered = std::fs::read_to_string(dir.path().join("netcade/addresses.json")).unwrap();
    assert_eq!(remembered, r#"["127.0.0.1:9"]"#);
}

/// Waits for `path` to be written, and says when it was there.
fn written(path: &Path) -> std::time::Instant {
    let deadline = std::time::Instant::now() + TIMEOUT;
    while !path.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "{} never written",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    std::time::Instant::now()
}

/// What a launcher showed while it connected, and after its Cancel.
struct Cancelled {
    /// The connecting screen's text, a line per row.
    connecting: String,
    /// The text of the form the launcher went back to.
    form: String,
    output: std::process::Output,
    drawn: support::screenshot::Picture,
}

/// Runs a launcher in `dir` that types `steps` (ending in the key that
/// starts connecting), reads the connecting screen after 20 frames and
/// clicks its Cancel, which must bring a form back within 0.5 s and end
/// the join before the match, the screen's text drawn meanwhile.
fn cancel_while_connecting(dir: &Path, steps: &str) -> Cancelled {
    let file = |name: &str| dir.join(name);
    let (picture, connecting, form) = (
        file("connecting.png"),
        file("connecting.txt"),
        file("form.txt"),
    );
    let script = format!(
        "{steps}session wait 20\nsession screenshot {}\nsession text {}\nsession click Cancel\n\
         text {}\nquit\n",
        picture.display(),
        connecting.display(),
        form.display()
    );
    let joiner = launcher(dir, &script);
    let asked = written(&connecting);
    let back = written(&form);
    let output = joiner.finish(TIMEOUT);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("joining cancelled before the match began"),
        "{}",
        stdout(&output)
    );
    // Cancel is answered within a frame: the time to the form is the
    // session's teardown and the launcher's first frame.
    let after_cancel = back.duration_since(asked);
    assert!(
        after_cancel < Duration::from_millis(500),
        "the form came back {after_cancel:?} after Cancel"
    );
    // The screen drawn: egui's panel with its lines and the Cancel button.
    let drawn = read_png(&picture);
    assert!(
        drawn.light_pixels(0..200) > 300,
        "the connecting screen's text"
    );
    Cancelled {
        connecting: std::fs::read_to_string(&connecting).unwrap(),
        form: std::fs::read_to_string(&form).unwrap(),
        output,
        drawn,
    }
}

#[test]
fn join_to_a_silent_address_shows_the_connecting_screen_and_cancel_returns_to_the_form_at_once() {
    let _window = one_window();
    let dir = tempfile::tempdir().unwrap();
    // A socket that never answers: the host is silent, not refusing.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let address = silent.local_addr().unwrap();
    let steps = format!("click Join\nclick Address (HOST:PORT)\ntype {address}\nkey Return\n");
    let seen = cancel_while_connecting(dir.path(), &steps);
    let lines: Vec<&str> = seen.connecting.lines().collect();
    assert_eq!(
        lines[0],
        format!("Connecting to {address}"),
        "{}",
        seen.connecting
    );
    assert!(
        lines.contains(&"▶ Shaking hands with the host…"),
        "{}",
        seen.connecting
    );
    assert_eq!(
        seen.form.lines().next(),
        Some("Join a match: the address the host gave you.")
    );
    assert!(
        !stderr(&seen.output).contains("no answer"),
        "{}",
        stderr(&seen.output)
    );
    assert_eq!(seen.drawn.size(), (960, 720));
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn join_to_a_room_no_host_answers_shows_its_steps_while_searching_and_cancel_returns_at_once() {
    let _window = one_window();
    let Some((_server, signal)) = support::servers::signaling_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // The signaling server on loopback and no STUN server: nothing leaves
    // the machine; nobody hosts the room.
    std::fs::write(dir.path().join("servers.txt"), format!("signal {signal}\n")).unwrap();
    let steps = "click Join\nclick By room code\nclick Room code\ntype 7KQ-M2X\nkey Return\n";
    let seen = cancel_while_connecting(dir.path(), steps);
    let lines: Vec<&str> = seen.connecting.lines().collect();
    assert_eq!(
        lines[0], "Connecting to room 7KQ-M2X",
        "{}",
        seen.connecting
    );
    // The room entered, the search for its host drawn as it goes on.
    assert!(
        lines.contains(&"✔ Entering the room"),
        "{}",
        seen.connecting
    );
    assert!(
        lines.contains(&"▶ Finding the host…"),
        "{}",
        seen.connecting
    );
    assert!(
        seen.form
            .lines()
            .next()
            .is_some_and(|line| line.starts_with("Join a match")),
        "{}",
        seen.form
    );
    assert!(
        !stderr(&seen.output).contains("no host in room"),
        "{}",
        stderr(&seen.output)
    );
}

#[test]
fn a_match_hosted_from_one_launcher_and_joined_from_another_by_its_address_ends_in_sync() {
    let _window = one_window();
    let (host_dir, join_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (host_result, join_result) = (
        host_dir.path().join("result.png"),
        join_dir.path().join("result.png"),
    );
    let script = format!(
        "click Host\nclick Port\nkey Ctrl+A\ntype 0\n\
         click Frames (blank: play until someone leaves)\ntype 240\n\
         click Host the match\nwait 2\nscreenshot {}\ntext {}\nquit\n",
        host_result.display(),
        host_result.with_extension("txt").display()
    );
    let mut host = launcher(host_dir.path(), &script);
    host.wait_for_stdout("waiting for a player to join", TIMEOUT);
    let printed = host.stdout_so_far();
    let port = printed
        .split("UDP port ")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .expect("the host names its port");
    // The second launcher's window opens over the host's, which now shows
    // the match: the player there types the address the host gave, and
    // in the match opens the match menu with Esc (the match goes on).
    let menu = join_dir.path().join("menu.png");
    let script = format!(
        "click Join\nclick Address (HOST:PORT)\ntype 127.0.0.1:{port}\nkey Return\n\
         session wait 60\nsession key Escape\nsession wait 3\nsession screenshot {}\n\
         wait 2\nscreenshot {}\ntext {}\nquit\n",
        menu.display(),
        join_result.display(),
        join_result.with_extension("txt").display()
    );
    let join = launcher(join_dir.path(), &script);
    let (host, join) = (host.finish(TIMEOUT), join.finish(TIMEOUT));
    assert!(host.status.success(), "{}", stderr(&host));
    assert!(join.status.success(), "{}", stderr(&join));
    let checksums = |text: String| {
        text.lines()
            .find(|line| line.starts_with("checksums after 240 frames"))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("no checksums line in {text}"))
    };
    assert_eq!(checksums(stdout(&host)), checksums(stdout(&join)));
    assert!(
        stdout(&join).contains(&format!("$ netcade join 127.0.0.1:{port} --core duel")),
        "{}",
        stdout(&join)
    );
    for printed in [stdout(&host), stdout(&join)] {
        assert!(printed.contains("replay: "), "{printed}");
    }
    // Both windows stayed open after the match: their result screens
    // were drawn, egui's panel with the summary's lines on it.
    for result in [&host_result, &join_result] {
        let picture = read_png(result);
        assert_eq!(picture.size(), (960, 720));
        assert!(picture.light_pixels(50..400) > 500, "{}", result.display());
        // Its first line says how the match ended, then its figures.
        let lines = std::fs::read_to_string(result.with_extension("txt")).unwrap();
        let lines: Vec<&str> = lines.lines().collect();
        assert_eq!(lines[0], "The match finished.", "{lines:?}");
        assert!(lines[1].starts_with("Duration: "), "{lines:?}");
        assert!(
            lines.iter().any(|line| line.starts_with("Player ")),
            "{lines:?}"
        );
        assert!(lines.contains(&"Desyncs: none"), "{lines:?}");
        assert!(
            lines.iter().any(|line| line.starts_with("Replay: ")),
            "{lines:?}"
        );
    }
    // The match menu over the game: its panel's text at the top left, the
    // game below it.
    let menu = read_png(&menu);
    assert!(menu.egui_grey_pixels(0..300) > 50_000, "the match menu");
    assert!(menu.light_pixels(0..300) > 500, "the match menu's text");
    menu.assert_the_lower_half_shows_the_game();
    let recent = std::fs::read_to_string(host_dir.path().join("netcade/recent.json")).unwrap();
    assert!(recent.contains("dojo.arena"), "{recent}");
}

#[test]
fn a_launcher_hosting_retroarch_players_is_joined_by_retroarch_address_from_another_in_its_window()
{
    let _window = one_window();
    let (host_dir, join_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (host_result, join_result) = (
        host_dir.path().join("result.txt"),
        join_dir.path().join("result.txt"),
    );
    let script = format!(
        "click Host\nclick RetroArch players can join (RetroArch's netplay protocol)\n\
         click Port\nkey Ctrl+A\ntype 0\n\
         click Frames (blank: play until someone leaves)\ntype 240\n\
         click Host the match\nwait 2\ntext {}\nquit\n",
        host_result.display()
    );
    let mut host = launcher(host_dir.path(), &script);
    host.wait_for_stdout("waiting for a player", TIMEOUT);
    let printed = host.stdout_so_far();
    let port = printed
        .split("TCP port ")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .expect("the host names its TCP port");
    // The joiner types the host's retroarch:// address; the match runs in
    // its window until the host's last frame.
    let shot = join_dir.path().join("match.png");
    let script = format!(
        "click Join\nclick Address (HOST:PORT)\ntype retroarch://127.0.0.1:{port}\nkey Return\n\
         session wait 60\nsession screenshot {}\nwait 2\ntext {}\nquit\n",
        shot.display(),
        join_result.display()
    );
    let join = launcher(join_dir.path(), &script);
    let (host, join) = (host.finish(TIMEOUT), join.finish(TIMEOUT));
    assert!(host.status.success(), "{}", stderr(&host));
    assert!(join.status.success(), "{}", stderr(&join));
    assert!(
        stdout(&host).contains("$ netcade host --retroarch --port 0 --frames 240 --core duel"),
        "{}",
        stdout(&host)
    );
    assert!(
        stdout(&host).contains("hosted 240 frames of Duel"),
        "{}",
        stdout(&host)
    );
    assert!(
        stdout(&join).contains(&format!(
            "$ netcade join retroarch://127.0.0.1:{port} --core duel"
        )),
        "{}",
        stdout(&join)
    );
    assert!(
        stdout(&join).contains("with RetroArch host netcade"),
        "{}",
        stdout(&join)
    );
    // The match was drawn in the joiner's window, then both launchers
    // ended on their result screens.
    read_png(&shot).assert_the_lower_half_shows_the_game();
    let first_line = |path: &Path| {
        let lines = std::fs::read_to_string(path).unwrap();
        lines.lines().next().unwrap_or_default().to_string()
    };
    assert_eq!(first_line(&host_result), "The match finished.");
    assert_eq!(first_line(&join_result), "Your opponent left the match.");
}

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn a_room_hosted_and_joined_by_its_code_in_two_launchers_plays_in_sync_from_a_window_open_at_once()
{
    let _window = one_window();
    let Some((_server, signal)) = support::servers::signaling_server() else {
        return;
    };
    let (host_dir, join_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // The signaling server on loopback and no STUN server: nothing leaves
    // the machine.
    for dir in [&host_dir, &join_dir] {
        std::fs::write(dir.path().join("servers.txt"), format!("signal {signal}\n")).unwrap();
    }
    let (waiting, host_result, join_result) = (
        host_dir.path().join("waiting.txt"),
        host_dir.path().join("result.txt"),
        join_dir.path().join("result.txt"),
    );
    let script = format!(
        "click Host\nclick Port\nkey Ctrl+A\ntype 0\n\
         click Frames (blank: play until someone leaves)\ntype 240\n\
         click Open a room: the other player types its code instead of an address\n\
         click Host the match\nsession wait 5\nsession text {}\n\
         wait 2\ntext {}\nquit\n",
        waiting.display(),
        host_result.display()
    );
    let mut host = launcher(host_dir.path(), &script);
    let code = support::cli::room_code(&mut host);
    // The host's window waits in the room before anyone joined, its code
    // large on the waiting panel.
    written(&waiting);
    let panel = std::fs::read_to_string(&waiting).unwrap();
    assert!(
        panel.contains(&format!("Room code {code}: the other player chooses Join")),
        "{panel}"
    );
    let script = format!(
        "click Join\nclick By room code\nclick Room code\ntype {code}\nkey Return\n\
         wait 2\ntext {}\nquit\n",
        join_result.display()
    );
    let join = launcher(join_dir.path(), &script);
    let (host, join) = (host.finish(TIMEOUT), join.finish(TIMEOUT));
    assert!(host.status.success(), "{}", stderr(&host));
    assert!(join.status.success(), "{}", stderr(&join));
    let checksums = |text: String| {
        text.lines()
            .find(|line| line.starts_with("checksums after 240 frames"))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("no checksums line in {text}"))
    };
    assert_eq!(checksums(stdout(&host)), checksums(stdout(&join)));
    assert!(
        stdout(&join).contains(&format!("$ netcade join --room {code} --core duel")),
        "{}",
        stdout(&join)
    );
    for result in [&host_result, &join_result] {
        let lines = std::fs::read_to_string(result).unwrap();
        assert_eq!(lines.lines().next(), Some("The match finished."), "{lines}");
    }
}

#[test]
fn a_joiner_killed_mid_match_comes_back_with_the_launchers_rejoin_button_in_sync() {
    let _window = one_window();
    let (host_dir, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let arena = support::dojo_arena();
    let game = [
        "--core",
        "duel",
        "--rom",
        &arena,
        "--headless",
        "--no-record",
    ];
    let host_args = [&game[..], &["--frames", "900", "--inputs", "random:1"]].concat();
    let (mut host, port) = support::cli::spawn_host(host_dir.path(), &host_args, TIMEOUT);
    let address = format!("127.0.0.1:{port}");
    // The first joiner keeps its ticket in the data directory the
    // launcher opens with, and is killed mid-match.
    let env = [("XDG_DATA_HOME", dir.path().as_os_str())];
    let join_args = [
        &["join", address.as_str(), "--inputs", "random:2"][..],
        &game,
    ]
    .concat();
    let mut first = spawn_netcade_with_env(&join_args, &env);
    host.wait_for_stdout("the match began", TIMEOUT);
    std::thread::sleep(Duration::from_secs(3));
    first.kill();
    assert_eq!(support::restart::tickets_in(dir.path()).len(), 1);
    let script = format!("click Rejoin the match at {address}\nwait 1\nquit\n");
    let launcher = launcher(dir.path(), &script);
    let (host, launcher) = (host.finish(TIMEOUT), launcher.finish(TIMEOUT));
    assert!(host.status.success(), "{}", stderr(&host));
    assert!(launcher.status.success(), "{}", stderr(&launcher));
    let said = stdout(&launcher);
    let line = format!("$ netcade join {address} --rejoin --core duel --rom {arena}");
    assert!(said.contains(&line), "{said}");
    assert!(said.contains("resuming the match at frame"), "{said}");
    let checksums = |text: String| {
        text.lines()
            .find(|line| line.starts_with("checksums after 900 frames"))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("no checksums line in {text}"))
    };
    assert_eq!(checksums(stdout(&host)), checksums(said));
    assert!(support::restart::tickets_in(dir.path()).is_empty());
}

#[test]
fn cancel_on_the_hosts_waiting_panel_closes_its_socket_and_returns_to_the_launcher() {
    let _window = one_window();
    let dir = tempfile::tempdir().unwrap();
    let (waiting, result) = (
        dir.path().join("waiting.png"),
        dir.path().join("result.png"),
    );
    // The launcher stays open a while after the Cancel: the port is found
    // free while the program that held it still runs.
    let script = format!(
        "click Host\nclick Port\nkey Ctrl+A\ntype 0\nclick Host the match\n\
         session wait 5\nsession screenshot {}\nsession click Cancel\n\
         wait 2\nscreenshot {}\nwait 240\nquit\n",
        waiting.display(),
        result.display()
    );
    let mut host = launcher(dir.path(), &script);
    host.wait_for_stdout("waiting for a player to join", TIMEOUT);
    let printed = host.stdout_so_far();
    let port: u16 = printed
        .split("UDP port ")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .and_then(|port| port.parse().ok())
        .expect("the host names its port");
    let free = || std::net::UdpSocket::bind(("0.0.0.0", port)).is_ok();
    assert!(!free(), "the host holds UDP port {port} while it waits");
    let deadline = std::time::Instant::now() + TIMEOUT;
    while !result.exists() {
        assert!(std::time::Instant::now() < deadline, "no result screen");
        std::thread::yield_now();
    }
    assert!(free(), "UDP port {port} is free again after Cancel");
    let output = host.finish(TIMEOUT);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("match ended (hosting cancelled before anyone joined)"),
        "{}",
        stdout(&output)
    );
    // The waiting panel was drawn over the game: egui's window with the
    // heading, the addresses and the buttons, light text on dark grey.
    let panel = read_png(&waiting);
    assert!(panel.egui_grey_pixels(0..200) > 30_000, "the waiting panel");
    assert!(panel.light_pixels(0..200) > 300, "the waiting panel's text");
    assert_eq!(read_png(&result).size(), (960, 720));
}

#[test]
fn netcade_alone_opens_the_launcher_which_needs_a_display() {
    // A first run: no input mapping written yet, which must not be written
    // (and announced) for a window that cannot open.
    let config = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_netcade"))
        .env("NETCADE_CONFIG_DIR", config.path())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("SDL_VIDEODRIVER")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with("error: no display to open the window on"),
        "{}",
        stderr(&output)
    );
    assert!(!config.path().join("input.toml").exists());
}

#[test]
fn a_replay_chosen_in_the_replays_screen_is_verified_by_the_replay_command() {
    let _window = one_window();
    let dir = tempfile::tempdir().unwrap();
    let replays = dir.path().join("replays");
    std::fs::create_dir_all(&replays).unwrap();
    support::cli::record_duel(&replays, "older.ncr", "dojo", 60, "random:1");
    support::cli::record_duel(&replays, "chosen.ncr", "dojo", 90, "random:2");
    let script = "click Replays\nclick Filter\ntype chosen\nclick chosen.ncr\nclick Verify\nquit\n";
    let output = launcher_with_replays(dir.path(), script, &replays).finish(TIMEOUT);
    assert!(output.status.success(), "{}", stderr(&output));
    let printed = stdout(&output);
    assert!(printed.contains("chosen.ncr: frames 0..90"), "{printed}");
    assert!(printed.contains("verified: "), "{printed}");
    assert!(!printed.contains("older.ncr"), "{printed}");
}

#[test]
fn the_settings_file_adds_its_window_switches_and_a_mistake_in_it_names_its_line() {
    let _window = one_window();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("script.txt"), "click Play\nquit\n").unwrap();
    // Content that is not there: `play` ends at once on the command
    // line's own error, and the line it ran was printed first.
    let missing = dir.path().join("missing.arena").display().to_string();
    let script = dir.path().join("script.txt").display().to_string();
    let args = [
        "menu", "--core", "duel", "--rom", &missing, "--script", &script,
    ];
    let env = [
        ("NETCADE_CONFIG_DIR", dir.path().as_os_str()),
        ("XDG_DATA_HOME", dir.path().as_os_str()),
    ];
    let settings = dir.path().join("settings.toml");
    std::fs::write(
        &settings,
        "[video]\nshader = \"nearest\"\ninteger_scale = true\n",
    )
    .unwrap();
    let output = spawn_netcade_with_env(&args, &env).finish(TIMEOUT);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("missing.arena --shader nearest --integer-scale\n"),
        "{}",
        stdout(&output)
    );
    assert!(
        stderr(&output).contains("error: content file "),
        "{}",
        stderr(&output)
    );
    // A game that could not start is not a game played.
    let recent = std::fs::read_to_string(dir.path().join("netcade/recent.json"));
    assert!(
        !recent.as_deref().unwrap_or("").contains("missing.arena"),
        "{recent:?}"
    );

    std::fs::write(&settings, "[video]\nshader = \"blurry\"\n").unwrap();
    let output = spawn_netcade_with_env(&args, &env).finish(TIMEOUT);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!stdout(&output).contains("--shader"), "{}", stdout(&output));
    assert!(
        stderr(&output).contains("settings.toml line 2: "),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_key_pressed_for_a_button_in_settings_is_saved_in_the_input_mapping() {
    let _window = one_window();
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("settings.png");
    // Player 1's B was J: K (player 1's A) takes its place.
    let script = format!(
        "click Settings\nclick keys b\nkey K\nclick Default port\nkey Ctrl+A\ntype 7123\n\
         wait 2\nscreenshot {}\nclick Save\nquit\n",
        shot.display()
    );
    let output = launcher(dir.path(), &script).finish(TIMEOUT);
    assert!(output.status.success(), "{}", stderr(&output));
    let input = std::fs::read_to_string(dir.path().join("input.toml")).unwrap();
    let player1 = input
        .split("[keyboard.player1]")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .unwrap_or_else(|| panic!("{input}"));
    assert!(player1.contains("\nb = \"K\"\n"), "{input}");
    assert!(!player1.contains("\na = "), "K left A: {input}");
    let settings = std::fs::read_to_string(dir.path().join("settings.toml")).unwrap();
    assert!(settings.contains("port = 7123\n"), "{settings}");
    let picture = read_png(&shot);
    assert_eq!((picture.width, picture.height), (960, 720));
}

#[test]
fn a_games_lag_measured_in_settings_suggests_the_run_ahead_kept_for_it() {
    let _window = one_window();
    let dir = tempfile::tempdir().unwrap();
    // Duel set to show a press two frames after the frame that read it.
    std::fs::write(
        dir.path().join("settings.toml"),
        "[core_options.duel]\nduel_input_lag = \"2\"\n",
    )
    .unwrap();
    let shot = dir.path().join("run-ahead.png");
    // The measurement runs in a child while the window goes on drawing.
    let script = format!(
        "click Settings\nclick Measure lag\nwait 300\nscreenshot {}\nclick Use suggested\n\
         click preemptive\nclick Save\nquit\n",
        shot.display()
    );
    let output = launcher(dir.path(), &script).finish(TIMEOUT);
    assert!(output.status.success(), "{}", stderr(&output));
    let settings = std::fs::read_to_string(dir.path().join("settings.toml")).unwrap();
    let game = settings
        .split("[games.\"dojo.arena (duel)\"]\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{settings}"));
    for line in [
        "run_ahead = 2 ",
        "run_ahead_mode = \"preemptive\" ",
        "lag_frames = 2 ",
    ] {
        assert!(game.contains(line), "{line:?} in {settings}");
    }
    assert_eq!(read_png(&shot).width, 960);
}

/// The number after `word` in `text` (`played frames 0..312`: "0..").
fn number_after(text: &str, word: &str) -> u32 {
    let start = text
        .find(word)
        .unwrap_or_else(|| panic!("{word} in {text}"))
        + word.len();
    let digits: String = text[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("{word} in {text}"))
}

#[test]
fn a_replay_opened_from_the_launcher_seeks_by_its_timeline_to_the_frame_headless_seek_lands_on() {
    let _window = one_window();
    let dir = tempfile::tempdir().unwrap();
    let replays = dir.path().join("replays");
    std::fs::create_dir_all(&replays).unwrap();
    let replay = support::cli::record_duel(&replays, "timeline.ncr", "dojo", 600, "random:2");
    let (lines, shot) = (dir.path().join("lines.txt"), dir.path().join("seek.png"));
    // Paused at once, then a press in the middle of the bar: 5 s of 10.
    let script = format!(
        "click Replays\nclick timeline.ncr\nclick Play the replay\n\
         session key P\nsession wait 2\nsession press Timeline\nsession wait 30\n\
         session text {}\nsession screenshot {}\nsession quit\nwait 3\nquit\n",
        lines.display(),
        shot.display()
    );
    let output = launcher_with_replays(dir.path(), &script, &replays).finish(TIMEOUT);
    assert!(output.status.success(), "{}", stderr(&output));
    let printed = stdout(&output);
    let landed = number_after(&printed, "played frames 0..");
    let drawn = std::fs::read_to_string(&lines).unwrap();
    assert!(
        (240..=360).contains(&landed),
        "{printed}{drawn}{}",
        stderr(&output)
    );
    assert!(drawn.contains("0:05 / 0:10  paused"), "{drawn}");
    assert!(drawn.contains("P1 vs P2"), "{drawn}");
    let picture = read_png(&shot);
    picture.assert_the_lower_half_shows_the_game();

    let file = replay.display().to_string();
    let seek = landed.to_string();
    let arena = support::dojo_arena();
    let headless = support::cli::netcade(&[
        "replay",
        "play",
        &file,
        "--core",
        "duel",
        "--rom",
        &arena,
        "--headless",
        "--seek",
        &seek,
        "--frames",
        "0",
    ]);
    assert!(headless.status.success(), "{}", stderr(&headless));
    let checksums = |text: &str| {
        text.lines()
            .rfind(|line| line.starts_with("checksums: "))
            .unwrap_or_else(|| panic!("{text}"))
            .to_string()
    };
    assert_eq!(checksums(&printed), checksums(&stdout(&headless)));
}
