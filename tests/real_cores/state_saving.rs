//! The two ways a real core's state is saved: one whose bytes can be hashed
//! and compared, and one only ever loaded again (a rollback's), which skips
//! clearing the megabyte genesis_plus_gx promises but mostly leaves unwritten.

use libretro_host::{Core, CoreConfig};
use netcode::checksum::Checksum;
use netcode::emulator::Emulator;
use netcode::input::Buttons;
use support::{real_core_copy, real_rom};

/// Runs genesis_plus_gx on Airstriker for `frames` frames, then hands it to `check`.
fn with_airstriker(frames: u32, check: impl FnOnce(&mut Core)) {
    let (Some(copy), Some(rom)) = (real_core_copy("genesis_plus_gx"), real_rom("airstriker.md"))
    else {
        return;
    };
    let config = CoreConfig {
        persist_save_ram: false,
        ..netcade::paths::core_config()
    };
    let mut core = Core::load(&copy.path, config).expect("the core loads");
    core.load_content(Some(&rom))
        .expect("the core takes its ROM");
    for frame in 0..frames {
        let held = if frame % 60 < 3 {
            Buttons::START
        } else {
            Buttons::NONE
        };
        core.run_frame(&[held], true);
    }
    check(&mut core);
}

/// Memory checksums of the next `frames` frames.
fn memory_after(core: &mut Core, frames: u32) -> Vec<Checksum> {
    (0..frames)
        .map(|_| {
            core.run_frame(&[Buttons::RIGHT], false);
            Checksum::of(core.game_memory())
        })
        .collect()
}

#[test]
fn a_state_saved_to_load_keeps_stale_bytes_out_of_the_game_it_restores() {
    with_airstriker(120, |core| {
        let mut comparable = Vec::new();
        core.save_state(&mut comparable).unwrap();
        let mut size_only = Vec::new();
        core.save_state_to_load(&mut size_only).unwrap();
        let size = size_only.len();
        // A buffer full of another game's leftovers, as a reused ring slot is.
        let mut to_load = vec![0xAA; size];
        core.save_state_to_load(&mut to_load).unwrap();

        // The leftovers stay where the core wrote nothing (nothing was
        // cleared)...
        assert_eq!(to_load.len(), size);
        assert!(to_load.ends_with(&[0xAA; 4096]), "the tail was cleared");
        assert_ne!(Checksum::of(&to_load), Checksum::of(&comparable));
        // ...yet the game loaded from it is the same game.
        core.load_state(&comparable).unwrap();
        let expected = memory_after(core, 60);
        core.load_state(&to_load).unwrap();
        assert_eq!(memory_after(core, 60), expected);

        // A comparable save of that same buffer holds no leftovers.
        core.load_state(&comparable).unwrap();
        core.save_state(&mut to_load).unwrap();
        assert_eq!(Checksum::of(&to_load), Checksum::of(&comparable));
    });
}
