//! The launcher's game library in a real window: a core added by clicks
//! (Add core…, its picker given the core's path) is installed in the data
//! folder, and the library then lists the games of the ROM folder chosen
//! in the settings under it.
#![cfg(feature = "gui")]

use std::time::Duration;
use support::cli::{spawn_netcade_with_env, stderr, stdout};

const TIMEOUT: Duration = Duration::from_secs(90);

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: scripts/fetch-test-content"
)]
fn add_core_installs_stella_and_the_library_then_plays_boxing_with_it() {
    let (Some(stella), Some(boxing)) = (
        support::content::real_core("stella"),
        support::content::real_rom("boxing.bin"),
    ) else {
        return;
    };
    let _window = crate::gui_launcher::one_window();
    let dir = tempfile::tempdir().unwrap();
    let roms = boxing.parent().unwrap().to_path_buf();
    std::fs::write(
        dir.path().join("settings.toml"),
        format!("[library]\nfolders = [{:?}]\n", roms.display().to_string()),
    )
    .unwrap();
    // The picker's path field opens with "/", takes the core's whole path
    // and picks it with Enter; then the library's row of boxing.bin is
    // clicked and played for a few frames.
    let shot = std::env::var_os("NETCADE_LIBRARY_SHOT")
        .map_or_else(|| dir.path().join("library.png"), std::path::PathBuf::from);
    let script = format!(
        "wait 5\nclick Add core…\nwait 5\nkey /\nwait 2\nkey Ctrl+A\ntype {}\nkey Return\n\
         wait 30\nclick Search games\ntype box\nwait 5\nscreenshot {}\nclick boxing\nclick Play\n\
         session wait 30\nsession key Escape\nsession wait 2\nsession key Escape\nwait 5\nquit\n",
        stella.display(),
        shot.display()
    );
    let script_path = dir.path().join("script.txt");
    std::fs::write(&script_path, script).unwrap();
    let script_arg = script_path.display().to_string();
    let output = spawn_netcade_with_env(
        &["menu", "--script", &script_arg],
        &[
            ("NETCADE_CONFIG_DIR", dir.path().as_os_str()),
            ("XDG_DATA_HOME", dir.path().as_os_str()),
            ("NETCADE_REPLAY_DIR", dir.path().join("replays").as_os_str()),
        ],
    )
    .finish(TIMEOUT);
    assert!(output.status.success(), "{}", stderr(&output));
    let installed = dir.path().join("netcade/cores/stella_libretro.so");
    assert_eq!(
        std::fs::read(&installed).ok().map(|core| core.len()),
        std::fs::read(&stella).ok().map(|core| core.len()),
        "Add core… copied stella into the data folder"
    );
    let line = format!(
        "$ netcade play --players 1 --core {} --rom {}",
        installed.display(),
        boxing.display()
    );
    assert!(stdout(&output).contains(&line), "{}", stdout(&output));
    let settings = std::fs::read_to_string(dir.path().join("settings.toml")).unwrap();
    assert!(
        settings.contains(&format!("core = \"{}\"", installed.display())),
        "the game's core is remembered: {settings}"
    );
    let index = std::fs::read_to_string(dir.path().join("netcade/library.json")).unwrap();
    assert!(index.contains("boxing.bin"), "{index}");
}
