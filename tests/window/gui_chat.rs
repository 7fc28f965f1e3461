//! Chat in two windows (built with `gui`, under a display): a line typed
//! into one window's chat box (T, the text, Enter, fed through the
//! window's event path by `--chat-script`) appears on the other window's
//! overlay, read back from its screenshot.
#![cfg(feature = "gui")]

use std::path::Path;
use std::time::Duration;
use support::cli::{last_json, spawn_host_with_env, spawn_netcade_with_env, stderr, stdout};
use support::screenshot::read_png;

const MATCH_TIMEOUT: Duration = Duration::from_secs(60);

/// The overlay's chat colour (`gui::overlay::CHAT`): nothing else in the
/// overlay, and nothing in Duel's picture, is drawn in it.
const CHAT_COLOUR: [u8; 3] = [255, 214, 90];

/// Pixels of the chat colour in the PNG at `path`.
fn chat_pixels(path: &Path) -> usize {
    let picture = read_png(path);
    picture.count_colour(0..picture.height, CHAT_COLOUR)
}

#[test]
fn chat_typed_on_one_side_appears_on_the_others_overlay() {
    let dir = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    let script = dir.path().join("host.chat");
    std::fs::write(&script, "120 hello from the host\n").unwrap();
    let (script, before, after) = (
        script.display().to_string(),
        dir.path().join("host-before.png").display().to_string(),
        dir.path().join("join-after.png").display().to_string(),
    );
    let game = [
        "--core", "duel", "--rom", &arena, "--frames", "600", "--json",
    ];
    let in_window = [("NETCADE_CONFIG_DIR", dir.path().as_os_str())];
    let host_args = [
        &game[..],
        &[
            "--inputs",
            "random:1",
            "--chat-script",
            &script,
            "--screenshot-at",
            "60",
            &before,
        ],
    ]
    .concat();
    let (host, port) = spawn_host_with_env(dir.path(), &host_args, &in_window, MATCH_TIMEOUT);
    let address = format!("127.0.0.1:{port}");
    let join_args = [
        &["join", &address][..],
        &game,
        &["--inputs", "random:2", "--screenshot-at", "400", &after],
    ]
    .concat();
    let join = spawn_netcade_with_env(&join_args, &in_window);
    let host = host.finish(MATCH_TIMEOUT + Duration::from_secs(10));
    let join = join.finish(MATCH_TIMEOUT + Duration::from_secs(10));
    for (side, output) in [("host", &host), ("join", &join)] {
        assert!(output.status.success(), "{side}: {}", stderr(output));
        assert_eq!(last_json(output)["end"], "finished", "{side}");
    }
    // The host's line went out through its chat box, and arrived.
    assert_eq!(last_json(&host)["netplay"]["chat"]["sent"], 1);
    assert_eq!(last_json(&join)["netplay"]["chat"]["received"], 1);
    assert!(
        stdout(&join).contains("chat P1: hello from the host"),
        "{}",
        stdout(&join)
    );
    // Before the line, no chat on screen; after it, the joiner's overlay
    // holds a line of chat text.
    assert_eq!(chat_pixels(Path::new(&before)), 0);
    let shown = chat_pixels(Path::new(&after));
    assert!(shown > 300, "chat pixels on the joiner's window: {shown}");
}
