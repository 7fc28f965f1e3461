//! Cores are told what each state is for (GET_SAVESTATE_CONTEXT): Duel asks
//! in `retro_serialize` and `retro_unserialize` and keeps the answer behind
//! its `duel_last_savestate_context` test hook.

mod support;

use netcade::app::debugger::Debugger;
use netcade::app::inputs::NO_INPUTS;
use netcade::app::netplay_match::{MatchSetup, SimulatedMatch};
use netcade::emulator::{Emulator, SavestateContext};
use netcade::input::Buttons;
use netcade::libretro::{Core, CoreConfig};
use netcade::net::sim::LinkConditions;
use netcade::rollback::synctest::{run_sync_test, SyncTestSettings};
use std::ffi::c_int;
use std::time::Duration;
use support::{duel_arena, duel_core_copy, CoreCopy};

// libretro.h's enum retro_savestate_context.
const NORMAL: c_int = 0;
const RUNAHEAD_SAME_INSTANCE: c_int = 1;
const ROLLBACK_NETPLAY: c_int = 3;

/// The file a Duel core was loaded from (a copy of its own, so its hook
/// answers for that core alone).
struct DuelFile {
    copy: CoreCopy,
    _dirs: tempfile::TempDir,
}

impl DuelFile {
    /// What the Duel core loaded from this file was last told; the core
    /// must still be loaded.
    fn last_context(&self) -> c_int {
        // SAFETY: opening the file the live core was loaded from returns the
        // same library (no initialisers run again); the hook takes no
        // arguments and returns an int.
        unsafe {
            let library = libloading::Library::new(&self.copy.path).unwrap();
            let hook = library
                .get::<unsafe extern "C" fn() -> c_int>(b"duel_last_savestate_context\0")
                .unwrap();
            hook()
        }
    }
}

/// A Duel core with the dojo loaded, and its file.
fn load_duel() -> (Core, DuelFile) {
    let copy = duel_core_copy();
    let dirs = tempfile::tempdir().unwrap();
    let config = CoreConfig {
        system_dir: dirs.path().join("system"),
        save_dir: dirs.path().join("saves"),
        persist_save_ram: false,
        ..CoreConfig::default()
    };
    let mut core = Core::load(&copy.path, config).unwrap();
    core.load_content(Some(&duel_arena("dojo"))).unwrap();
    (core, DuelFile { copy, _dirs: dirs })
}

#[test]
fn a_core_that_asks_is_told_what_each_state_is_for() {
    let (mut core, file) = load_duel();
    let mut state = Vec::new();
    assert_eq!(
        file.last_context(),
        -1,
        "Duel asks only when saving or loading"
    );

    core.save_state(&mut state).unwrap();
    assert_eq!(file.last_context(), NORMAL);

    core.set_savestate_context(SavestateContext::Netplay);
    core.save_state(&mut state).unwrap();
    assert_eq!(file.last_context(), ROLLBACK_NETPLAY);

    core.set_savestate_context(SavestateContext::Rollback);
    core.load_state(&state).unwrap();
    assert_eq!(file.last_context(), RUNAHEAD_SAME_INSTANCE);
}

#[test]
fn sync_test_and_debugger_states_are_rollbacks_in_the_same_instance() {
    let (mut core, file) = load_duel();
    run_sync_test(
        &mut core,
        SyncTestSettings::new(20, 3),
        &mut || NO_INPUTS,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(file.last_context(), RUNAHEAD_SAME_INSTANCE);

    let (mut core, file) = load_duel();
    let mut debugger = Debugger::new(&mut core, 10, 1 << 20).unwrap();
    debugger.step(3).unwrap();
    assert_eq!(file.last_context(), RUNAHEAD_SAME_INSTANCE);
}

#[test]
fn netplay_states_are_netplay_rollbacks() {
    let ((core_one, file_one), (core_two, file_two)) = (load_duel(), load_duel());
    let setup = MatchSetup {
        seed: 3,
        conditions: LinkConditions::PERFECT,
        frames: 30,
        content_hash: 1,
    };
    let mut game_match =
        SimulatedMatch::new(setup, [Box::new(core_one), Box::new(core_two)]).unwrap();
    game_match
        .play(|_, _| Buttons::NONE, || Duration::ZERO, |_| {})
        .unwrap();
    assert_eq!(file_one.last_context(), ROLLBACK_NETPLAY);
    assert_eq!(file_two.last_context(), ROLLBACK_NETPLAY);
}
