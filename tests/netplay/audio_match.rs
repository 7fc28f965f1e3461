//! A two-machine Duel match over the simulated network (100 ms round trip,
//! 2 % loss) with an audio output on both machines, under each policy, and
//! a solo run of the same inputs: revocation plays the confirmed timeline
//! on more samples than dropping re-simulated audio, never steps further
//! than the game's own audio does, and the WAV lasts as long as the match.

use netcade::engine::inputs::{InputSource, InputSpec, RandomPlayer};
use netcade::engine::matches::simulated::{MatchEnd, MatchSetup, SimulatedMatch};
use netcade::engine::run::run_frames;
use netcade::engine::sinks::audio_file::{AudioArgs, AudioSummary, HEADLESS_DEVICE_RATE};
use netcade::net::sim::LinkConditions;
use netcode::audio::ring::{largest_step, Stereo};
use netcode::audio::AudioPolicy;
use netcode::emulator::Emulator;
use std::path::Path;
use std::time::Duration;
use support::load_duel_dojo;

const FRAMES: u32 = 1200;
const SEED: u64 = 2024;
/// Below the 50 ms one-way trip, so corrections often land where the
/// consumer already is (at the default 64 ms most land before it).
const LATENCY_MS: f64 = 32.0;

fn audio_args(path: &Path, policy: AudioPolicy) -> AudioArgs {
    AudioArgs {
        audio_out: Some(path.to_path_buf()),
        audio_policy: policy,
        audio_latency: LATENCY_MS,
        audio_crossfade: 5.0,
    }
}

/// Plays the match with audio to `dir/policy-machineN.wav`.
fn play_match(dir: &Path, policy: AudioPolicy) -> Vec<(AudioSummary, Vec<Stereo>)> {
    let setup = MatchSetup {
        seed: SEED,
        conditions: LinkConditions::latency(50).with_jitter(10).with_loss(0.02),
        frames: FRAMES,
        content_hash: 1,
    };
    let games = [load_duel_dojo(), load_duel_dojo()];
    let mut game_match = SimulatedMatch::new(setup, games).unwrap();
    for (index, machine) in game_match.machines.iter_mut().enumerate() {
        let path = dir.join(format!("{policy}-machine{}.wav", index + 1));
        let rate = machine.machine.game.sample_rate();
        machine.machine.sink.1 = audio_args(&path, policy)
            .open_sink(rate, Some(FRAMES))
            .unwrap();
    }
    let mut random = RandomPlayer::new(SEED);
    let mut script = Vec::new();
    let end = game_match
        .play(
            &setup,
            |player, frame| {
                while script.len() <= frame as usize {
                    script.push(random.next_frame());
                }
                script[frame as usize][player as usize]
            },
            || Duration::ZERO,
            |_| {},
        )
        .unwrap();
    assert_eq!(end, MatchEnd::Finished);
    game_match
        .machines
        .iter_mut()
        .map(|machine| {
            let summary = machine.machine.sink.1.take().unwrap().finish().unwrap();
            let samples = read_wav(&summary.path);
            (summary, samples)
        })
        .collect()
}

fn read_wav(path: &Path) -> Vec<Stereo> {
    let mut reader = hound::WavReader::open(path).unwrap();
    assert_eq!(reader.spec().sample_rate, HEADLESS_DEVICE_RATE);
    assert_eq!(reader.spec().channels, 2);
    let values: Vec<i16> = reader.samples::<i16>().map(Result::unwrap).collect();
    values.chunks_exact(2).map(|p| [p[0], p[1]]).collect()
}

#[test]
fn revoking_follows_the_confirmed_timeline_better_than_dropping_without_clicks() {
    let dir = tempfile::tempdir().unwrap();
    // The solo run of the confirmed inputs (the match's script).
    let mut solo = load_duel_dojo();
    let solo_path = dir.path().join("solo.wav");
    let mut sink = audio_args(&solo_path, AudioPolicy::Revoke)
        .open_sink(solo.core.sample_rate(), Some(FRAMES))
        .unwrap();
    let mut inputs = InputSource::open(&InputSpec::Random { seed: SEED }).unwrap();
    run_frames(&mut solo.core, FRAMES, &mut inputs, &mut sink).unwrap();
    let solo_summary = sink.unwrap().finish().unwrap();
    let solo_samples = read_wav(&solo_path);
    let own_step = largest_step(&solo_samples);
    assert_eq!(solo_summary.timeline.identical_share(), 1.0);
    assert!(own_step > 0, "the match makes sounds");

    let revoke = play_match(dir.path(), AudioPolicy::Revoke);
    let drop = play_match(dir.path(), AudioPolicy::Drop);
    let match_samples = f64::from(FRAMES) * f64::from(HEADLESS_DEVICE_RATE) / 60.0;
    for machine in 0..2 {
        let (revoked, revoked_wav) = &revoke[machine];
        let (dropped, _) = &drop[machine];
        let (r, d) = (revoked.timeline, dropped.timeline);
        assert!(
            r.compared as f64 >= 0.99 * f64::from(FRAMES) * 800.0,
            "{r:?}"
        );
        assert!(
            r.identical_share() > d.identical_share(),
            "machine {machine}: revoke {r:?} vs drop {d:?}"
        );
        assert!(revoked.ring.revoked_samples > 0 && dropped.ring.discarded_samples > 0);
        assert!(revoked.ring.splices > 10, "{:?}", revoked.ring);
        // As long as the match: its frames, give or take the latency and
        // the time-sync speed changes.
        let length = revoked_wav.len() as f64;
        assert!(
            (length - match_samples).abs() < 0.02 * match_samples + 3_072.0,
            "{length} samples for a {match_samples}-sample match"
        );
        // Splices step no further than the game's own audio does.
        assert!(
            revoked.ring.largest_splice_step <= own_step,
            "machine {machine}: a splice step of {} over the game's own {own_step}",
            revoked.ring.largest_splice_step
        );
        // Cubic interpolation of Duel's square waves overshoots their edges
        // at any phase (spliced or not) by a bounded amount: nothing else
        // in the output jumps.
        let output_step = largest_step(revoked_wav);
        assert!(
            f64::from(output_step) <= 1.3 * f64::from(own_step),
            "machine {machine}: a step of {output_step} over the game's own {own_step}"
        );
        assert_eq!(revoked.ring.stalls, 0, "{:?}", revoked.ring);
        assert_eq!(revoked.ring.overrun_samples, 0);
    }
}
