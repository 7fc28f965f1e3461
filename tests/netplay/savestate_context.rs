//! Cores are told what each state is for (GET_SAVESTATE_CONTEXT): Duel asks
//! in `retro_serialize` and `retro_unserialize` and keeps the answer behind
//! its `duel_last_savestate_context` test hook.

use netcade::engine::debugger::Debugger;
use netcade::engine::inputs::NO_INPUTS;
use netcade::engine::matches::simulated::{MatchSetup, SimulatedMatch};
use netcade::net::sim::LinkConditions;
use netcode::emulator::{Emulator, SavestateContext};
use netcode::input::Buttons;
use netcode::rollback::synctest::{run_sync_test, SyncTestSettings};
use std::ffi::c_int;
use std::path::Path;
use std::time::Duration;
use support::{load_duel_dojo, LoadedCore};

// libretro.h's enum retro_savestate_context.
const NORMAL: c_int = 0;
const RUNAHEAD_SAME_INSTANCE: c_int = 1;
const ROLLBACK_NETPLAY: c_int = 3;

/// What the Duel core loaded from `core_file` (its own copy of the library)
/// was last told; the core must still be loaded.
fn last_context(core_file: &Path) -> c_int {
    // SAFETY: opening the file the live core was loaded from returns the
    // same library (no initialisers run again); the hook takes no arguments
    // and returns an int.
    unsafe {
        let library = libloading::Library::new(core_file).unwrap();
        let hook = library
            .get::<unsafe extern "C" fn() -> c_int>(b"duel_last_savestate_context\0")
            .unwrap();
        hook()
    }
}

#[test]
fn a_core_that_asks_is_told_what_each_state_is_for() {
    let LoadedCore { mut core, copy, .. } = load_duel_dojo();
    let file = copy.path;
    let mut state = Vec::new();
    assert_eq!(
        last_context(&file),
        -1,
        "Duel asks only when saving or loading"
    );

    core.save_state(&mut state).unwrap();
    assert_eq!(last_context(&file), NORMAL);

    core.set_savestate_context(SavestateContext::Netplay);
    core.save_state(&mut state).unwrap();
    assert_eq!(last_context(&file), ROLLBACK_NETPLAY);

    core.set_savestate_context(SavestateContext::Rollback);
    core.load_state(&state).unwrap();
    assert_eq!(last_context(&file), RUNAHEAD_SAME_INSTANCE);
}

#[test]
fn sync_test_and_debugger_states_are_rollbacks_in_the_same_instance() {
    let LoadedCore { mut core, copy, .. } = load_duel_dojo();
    run_sync_test(
        &mut core,
        SyncTestSettings::new(20, 3),
        &mut || NO_INPUTS,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(last_context(&copy.path), RUNAHEAD_SAME_INSTANCE);

    let LoadedCore { mut core, copy, .. } = load_duel_dojo();
    let mut debugger = Debugger::new(&mut core, 10, 1 << 20).unwrap();
    debugger.step(3).unwrap();
    assert_eq!(last_context(&copy.path), RUNAHEAD_SAME_INSTANCE);
}

#[test]
fn netplay_states_are_netplay_rollbacks() {
    let one = load_duel_dojo();
    let two = load_duel_dojo();
    let setup = MatchSetup {
        seed: 3,
        conditions: LinkConditions::PERFECT,
        frames: 30,
        content_hash: 1,
    };
    let mut game_match =
        SimulatedMatch::new(setup, [Box::new(one.core), Box::new(two.core)]).unwrap();
    game_match
        .play(&setup, |_, _| Buttons::NONE, || Duration::ZERO, |_| {})
        .unwrap();
    assert_eq!(last_context(&one.copy.path), ROLLBACK_NETPLAY);
    assert_eq!(last_context(&two.copy.path), ROLLBACK_NETPLAY);
}
