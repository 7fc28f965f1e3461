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

/// Plays `path` back headless, with and without `--verify`, and checks it
/// was refused with one error that names the replay's states, without a
/// crash: exit 2 (not 4, not a signal), and no crash report on stderr.
fn assert_refused_without_a_crash(path: &Path) {
    for verify in [false, true] {
        let mut args = vec!["replay", "play", path.to_str().unwrap(), "--headless"];
        if verify {
            args.push("--verify");
        }
        let played = netcade(&args);
        let err = stderr(&played);
        assert_eq!(played.status.code(), Some(2), "{args:?}: {played:?}");
        let errors: Vec<&str> = err
            .lines()
            .filter(|line| line.starts_with("error:"))
            .collect();
        assert_eq!(errors.len(), 1, "{args:?}: {err}");
        assert!(errors[0].contains("the replay's"), "{args:?}: {err}");
        assert!(
            !err.contains("crashed with") && !err.lines().any(|line| line.starts_with("hint:")),
            "{args:?}: {err}"
        );
    }
}

/// Where a crafted replay carries its noise.
#[derive(Clone, Copy, Debug)]
enum Noisy {
    /// As its start state.
    Start,
    /// As a repair loaded at the start of frame 90.
    Repair,
}

/// A copy of `honest` at `to` carrying `state` where `noisy` says, said
/// to leave the game memory's checksum `claimed`.
fn with_state(honest: &Path, to: &Path, noisy: Noisy, state: &[u8], claimed: Checksum) -> PathBuf {
    let start = |header: &mut netcode::replay::ReplayHeader| {
        header.start_state = state.to_vec();
        header.start_memory_checksum = claimed;
    };
    let rewrite = match noisy {
        Noisy::Start => Rewrite {
            header: Some(&start),
            ..Default::default()
        },
        Noisy::Repair => Rewrite {
            added_repair: Some((Frame::new(90), state.to_vec(), claimed)),
            ..Default::default()
        },
    };
    rewrite_replay(honest, to, rewrite)
}

/// The game memory's checksum Stella gives once it loaded `state`, as a
/// forger learns it: from playback's refusal of a claim that is not it.
/// None if Stella refuses the state itself.
fn checksum_the_state_gives(
    honest: &Path,
    dir: &Path,
    noisy: Noisy,
    state: &[u8],
) -> Option<Checksum> {
    let probe = with_state(honest, &dir.join("probe.ncr"), noisy, state, Checksum(0));
    let played = netcade(&["replay", "play", probe.to_str().unwrap(), "--headless"]);
    let err = stderr(&played);
    assert_eq!(played.status.code(), Some(2), "{played:?}");
    let named = err
        .split("it gives the game memory checksum ")
        .nth(1)
        .and_then(|rest| rest.get(..16))
        .and_then(|hex| u64::from_str_radix(hex, 16).ok());
    named.map(Checksum)
}

/// A state as a forger makes one Stella loads: the recorded start state
/// with every byte noise but the names Stella checks (each a 32-bit
/// length, then that many letters), with the checksum it gives.
fn noise_stella_loads(honest: &Path, dir: &Path, noisy: Noisy, seed: u64) -> (Vec<u8>, Checksum) {
    let recorded = netcode::replay::read_replay(std::fs::File::open(honest).unwrap())
        .unwrap()
        .header
        .start_state;
    let mut state = noise(recorded.len(), seed);
    for at in 0..recorded.len().saturating_sub(4) {
        let len = u32::from_le_bytes(recorded[at..at + 4].try_into().unwrap()) as usize;
        let name = recorded.get(at + 4..at + 4 + len);
        if (3..=32).contains(&len)
            && name.is_some_and(|name| name.iter().all(u8::is_ascii_alphanumeric))
        {
            state[at..at + 4 + len].copy_from_slice(&recorded[at..at + 4 + len]);
        }
    }
    let checksum = checksum_the_state_gives(honest, dir, noisy, &state)
        .unwrap_or_else(|| panic!("Stella loads the noise of seed {seed}"));
    (state, checksum)
}

/// Crafts replays whose `noisy` state is noise of the right size, with
/// checksums a forger rewrote to match it, and checks each is refused.
fn assert_noise_with_matching_checksums_is_refused(noisy: Noisy) {
    let dir = tempfile::tempdir().unwrap();
    let Some((honest, _)) = boxing_replay(dir.path()) else {
        return;
    };
    // Noise of these seeds makes Stella crash in the frame after it.
    for seed in [1, 2, 14] {
        let (state, claimed) = noise_stella_loads(&honest, dir.path(), noisy, seed);
        let forged = with_state(
            &honest,
            &dir.path().join(format!("forged-{noisy:?}-{seed}.ncr")),
            noisy,
            &state,
            claimed,
        );
        assert_refused_without_a_crash(&forged);
    }
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn a_replay_whose_start_state_is_noise_with_forged_checksums_costs_only_itself() {
    assert_noise_with_matching_checksums_is_refused(Noisy::Start);
}

#[test]
#[cfg_attr(
    not(netcade_test_content),
    ignore = "needs real cores: run scripts/fetch-test-content"
)]
fn a_replay_whose_repair_state_is_noise_with_forged_checksums_costs_only_itself() {
    assert_noise_with_matching_checksums_is_refused(Noisy::Repair);
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
        let noisy = with_state(
            &honest,
            &dir.path().join(format!("noisy-start-{seed}.ncr")),
            Noisy::Start,
            &noise(state_len, seed),
            Checksum(seed),
        );
        assert_refused_without_a_crash(&noisy);
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
        let noisy = with_state(
            &honest,
            &dir.path().join(format!("noisy-repair-{seed}.ncr")),
            Noisy::Repair,
            &noise(state_len, seed),
            Checksum(seed),
        );
        assert_refused_without_a_crash(&noisy);
    }
}
