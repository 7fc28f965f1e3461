//! `netcade replay play` in a window (built with `gui`, without
//! `--headless`): paced playback that ends where playing flat out does,
//! and the clear error of a build without a window.

use std::path::Path;
use support::cli::{netcade, record_duel, stderr};

/// `netcade replay play FILE ARGS` with Duel's core and content.
fn replay_play(file: &Path, args: &[&str]) -> std::process::Output {
    let arena = support::dojo_arena();
    let file = file.display().to_string();
    let mut all = vec!["replay", "play", &file, "--core", "duel", "--rom", &arena];
    all.extend_from_slice(args);
    netcade(&all)
}

#[test]
fn a_speed_outside_a_quarter_to_eight_times_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let replay = record_duel(dir.path(), "speed.ncr", "dojo", 30, "random:1");
    for speed in ["9", "0.1", "fast"] {
        let refused = replay_play(&replay, &["--speed", speed]);
        assert_eq!(refused.status.code(), Some(2), "{refused:?}");
        let errors = stderr(&refused);
        assert!(errors.starts_with("error: "), "{errors}");
        assert!(errors.contains("--speed"), "{errors}");
    }
}

#[cfg(not(feature = "gui"))]
#[test]
fn without_the_gui_feature_replay_play_asks_for_headless_or_a_gui_build() {
    let dir = tempfile::tempdir().unwrap();
    let replay = record_duel(dir.path(), "nowindow.ncr", "dojo", 30, "random:1");
    let refused = replay_play(&replay, &[]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let errors = stderr(&refused);
    assert!(
        errors.starts_with("error: ") && errors.contains("--headless") && errors.contains("gui"),
        "{errors}"
    );
    assert_eq!(errors.lines().count(), 1, "{errors}");
}

#[cfg(feature = "gui")]
mod in_a_window {
    use super::*;
    use support::cli::last_json;

    /// The final checksums `replay play --headless` prints, as JSON.
    fn headless_checksums(replay: &Path, extra: &[&str]) -> serde_json::Value {
        let mut args = vec!["--headless", "--json"];
        args.extend_from_slice(extra);
        let output = replay_play(replay, &args);
        assert!(output.status.success(), "{output:?}");
        last_json(&output)["checksums"].clone()
    }

    /// `replay_play` with a config directory of its own.
    fn in_window(dir: &Path, replay: &Path, args: &[&str]) -> std::process::Output {
        let arena = support::dojo_arena();
        let file = replay.display().to_string();
        let mut all = vec!["replay", "play", &file, "--core", "duel", "--rom", &arena];
        all.extend_from_slice(args);
        support::cli::spawn_netcade_with_env(&all, &[("NETCADE_CONFIG_DIR", dir.as_os_str())])
            .finish(std::time::Duration::from_secs(120))
    }

    #[test]
    fn a_replay_played_in_a_window_at_eight_times_ends_on_its_final_checksums_with_a_screenshot() {
        let dir = tempfile::tempdir().unwrap();
        let replay = record_duel(dir.path(), "window.ncr", "dojo", 600, "random:3");
        let shot = dir.path().join("replay.png");
        let shot_arg = shot.display().to_string();
        let played = in_window(
            dir.path(),
            &replay,
            &[
                "--speed",
                "8",
                "--window-size",
                "640x480",
                "--screenshot-at",
                "300",
                &shot_arg,
                "--json",
            ],
        );
        assert!(played.status.success(), "{}", stderr(&played));
        let json = last_json(&played);
        assert_eq!(json["frames"], 600, "{json}");
        assert_eq!(
            json["checksums"],
            headless_checksums(&replay, &[]),
            "{json}"
        );
        let picture = support::screenshot::read_png(&shot);
        assert_eq!(picture.size(), (640, 480));
        picture.assert_the_lower_half_shows_the_game();
        // 600 frames at 8x is 1.25 s of pacing; at 1x it would be 10 s.
        assert!(json["seconds"].as_f64().unwrap() < 9.0, "{json}");
    }

    #[test]
    fn a_seek_in_a_window_lands_and_plays_on_exactly_as_headless_playback() {
        let dir = tempfile::tempdir().unwrap();
        let replay = record_duel(dir.path(), "seek.ncr", "dojo", 1200, "random:4");
        let range = ["--seek", "950", "--frames", "60"];
        let mut args = vec!["--speed", "8", "--json"];
        args.extend_from_slice(&range);
        let played = in_window(dir.path(), &replay, &args);
        assert!(played.status.success(), "{}", stderr(&played));
        let json = last_json(&played);
        assert_eq!(json["first_frame"], 950, "{json}");
        assert_eq!(
            json["checksums"],
            headless_checksums(&replay, &range),
            "{json}"
        );
    }
}
