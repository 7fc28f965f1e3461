//! A replay shared by a stranger is untrusted input: a savestate in it that
//! the recording core did not write is refused before the core runs a frame
//! of it, and the core is left as it was.

use netcode::checksum::Checksum;
use netcode::random::SplitMix64;
use netcode::rollback::Frame;
use std::path::{Path, PathBuf};
use support::cli::{netcade, stderr};
use support::replays::{rewrite_replay, Rewrite};

/// `len` bytes of seeded noise: a state of the right size that no core wrote.
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut random = SplitMix64::new(seed);
    (0..len).map(|_| random.next_u64() as u8).collect()
}

/// 180 frames of Boxing on Stella, played at random, recorded in `dir`.
fn boxing_replay(dir: &Path) -> Option<(PathBuf, usize)> {
    let core = support::real_core("stella")?;
    let rom = support::real_rom("boxing.bin")?;
    let path = dir.join("boxing.ncr");
    let recorded = netcade(&[
        "run",
        "--core",
        core.to_str().unwrap(),
        "--rom",
        rom.to_str().unwrap(),
        "--frames",
        "180",
        "--inputs",
        "random:7",
        "--record",
        path.to_str().unwrap(),
    ]);
    assert!(recorded.status.success(), "{recorded:?}");
    let replay =
        netcode::replay::read_replay(std::fs::File::open(&path).unwrap()).expect("a replay");
    assert!(!replay.header.start_state.is_empty(), "Stella saves states");
    Some((path, replay.header.start_state.len()))
}

/// Plays `path` back headless, and checks it was refused with one error
/// that names `what`, without a crash of the core.
fn assert_refused_naming(path: &Path, what: &str) {
    for verify in [false, true] {
        let mut args = vec!["replay", "play", path.to_str().unwrap(), "--headless"];
        if verify {
            args.push("--verify");
        }
        let played = netcade(&args);
        let err = stderr(&played);
        assert_eq!(played.status.code(), Some(2), "{args:?}: {played:?}");
        assert!(!err.contains("crashed"), "{args:?}: {err}");
        assert!(
            err.lines()
                .any(|line| line.starts_with("error:") && line.contains(what)),
            "{args:?}: {err}"
        );
    }
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn a_replay_whose_start_state_is_noise_is_refused_and_the_core_does_not_crash() {
    let dir = tempfile::tempdir().unwrap();
    let Some((honest, state_len)) = boxing_replay(dir.path()) else {
        return;
    };
    for seed in 1..=3 {
        let noisy_start = |header: &mut netcode::replay::ReplayHeader| {
            header.start_state = noise(state_len, seed);
        };
        let noisy = rewrite_replay(
            &honest,
            &dir.path().join(format!("noisy-start-{seed}.ncr")),
            Rewrite {
                header: Some(&noisy_start),
                ..Default::default()
            },
        );
        assert_refused_naming(&noisy, "start state");
    }
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn a_replay_whose_repair_state_is_noise_is_refused_and_the_core_does_not_crash() {
    let dir = tempfile::tempdir().unwrap();
    let Some((honest, state_len)) = boxing_replay(dir.path()) else {
        return;
    };
    for seed in 1..=3 {
        let noisy = rewrite_replay(
            &honest,
            &dir.path().join(format!("noisy-repair-{seed}.ncr")),
            Rewrite {
                added_repair: Some((Frame::new(90), noise(state_len, seed), Checksum(seed))),
                ..Default::default()
            },
        );
        assert_refused_naming(&noisy, "repair");
    }
}
