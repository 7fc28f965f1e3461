//! `--audio-out` and its options on the real `netcade` binary.

use support::cli::{assert_refusals, last_json, netcade, refusal, stderr};
use support::{duel_arena, duel_core};

fn run_args<'a>(core: &'a str, arena: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run", "--core", core, "--rom", arena, "--frames", "300", "--inputs", "random:5",
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn run_writes_the_runs_audio_to_a_wav_as_long_as_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("run.wav");
    let (core, arena) = (duel_core(), duel_arena("dojo"));
    let output = netcade(&run_args(
        core.to_str().unwrap(),
        arena.to_str().unwrap(),
        &["--audio-out", wav.to_str().unwrap(), "--json"],
    ));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let json = last_json(&output);
    let audio = &json["audio"];
    assert_eq!(audio["policy"], "revoke", "{json}");
    // A local run never rolls back: everything played is the timeline,
    // but for the 5 ms (240-sample) fades where the output starts and ends.
    assert_eq!(audio["compared_samples"], 300 * 800, "{json}");
    let identical = audio["identical_samples"].as_u64().unwrap();
    assert!(identical >= 300 * 800 - 2 * 240, "{json}");
    assert_eq!(audio["splices"], 0, "{json}");
    let reader = hound::WavReader::open(&wav).unwrap();
    assert_eq!(reader.spec().sample_rate, 48_000);
    let seconds = f64::from(reader.duration()) / 48_000.0;
    // 5 s of frames, after the 64 ms the device buffers first.
    assert!((5.0..5.1).contains(&seconds), "{seconds} s");
}

#[test]
fn an_audio_file_that_cannot_be_created_or_options_out_of_range_are_refused() {
    let (core, arena) = (duel_core(), duel_arena("dojo"));
    let (core, arena) = (core.to_str().unwrap(), arena.to_str().unwrap());
    let run = |extra: &[&'static str]| run_args(core, arena, extra);
    let unwritable = "/nonexistent/dir/out.wav";
    let mut refusals =
        vec![refusal(&run(&["--audio-out", unwritable]), unwritable, 3).starting("error: ")];
    for extra in [
        ["--audio-latency", "2"],
        ["--audio-crossfade", "0"],
        ["--audio-policy", "mute"],
    ] {
        refusals.push(refusal(&run(&extra), extra[0], 2));
    }
    assert_refusals(&refusals);
}
