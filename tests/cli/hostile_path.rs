//! A match played through a hostile path: a relay between the joiner and the
//! host, and one between a spectator and the host, mutate a share of the real
//! datagrams in flight (bit flips, cuts, additions, duplicates, replays of old
//! datagrams, changed frames, counts, acks, quality reports and checksum
//! reports, datagrams from another session). Whatever the path does, every
//! process ends within a bounded time, never panics, and processes that say
//! the match finished agree on its checksums.
//!
//! CI runs each mutation once at one rate; `scripts/hostile-path` runs the
//! whole matrix (every mutation at 0.1 %, 1 %, 5 % and 20 %, several seeds)
//! through `NETCADE_HOSTILE_SEEDS` and `NETCADE_HOSTILE_ALL_RATES`.

use std::time::Duration;
use support::cli::{spawn_host, spawn_netcade, Background};
use support::hostile_relay::{HostileRelay, Mutation};

/// Rates in per mille: 0.1 %, 1 %, 5 %, 20 %.
const RATES: [u32; 4] = [1, 10, 50, 200];
const FRAMES: &str = "300";
/// A 300-frame match takes 5 s; silence ends a link after 5 s more. Anything
/// still running after this has hung.
const BOUND: Duration = Duration::from_secs(60);
/// Matches played at once.
const AT_ONCE: usize = 3;

#[derive(Clone, Copy, Debug)]
struct Case {
    mutation: Mutation,
    per_mille: u32,
    seed: u64,
}

/// How one process ended.
struct Ending {
    role: &'static str,
    code: Option<i32>,
    end: Option<String>,
    memory_checksum: Option<String>,
    stderr: String,
}

fn ending(role: &'static str, process: Background) -> Result<Ending, String> {
    let output = process
        .finish_within(BOUND)
        .map_err(|printed| format!("the {role} still ran after {BOUND:?}: {printed}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let json = stdout
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str::<serde_json::Value>(line).ok());
    Ok(Ending {
        role,
        code: output.status.code(),
        end: json
            .as_ref()
            .and_then(|json| json["end"].as_str().map(str::to_string)),
        memory_checksum: json
            .as_ref()
            .and_then(|json| json["checksums"]["memory"].as_str().map(str::to_string)),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

/// What one match came to: how each process ended, and the datagrams the
/// relays mutated.
struct Played {
    endings: Vec<String>,
    mutated: u64,
}

/// Plays one match through relays doing `case`; says what went wrong, if
/// anything.
fn play_through_hostile_relays(case: Case) -> Result<Played, String> {
    let dir = tempfile::tempdir().unwrap();
    let arena = support::duel_arena("dojo");
    let arena = arena.to_str().unwrap();
    let game = [
        "--core",
        "duel",
        "--rom",
        arena,
        "--frames",
        FRAMES,
        "--headless",
        "--json",
    ];
    let mut host_args = game.to_vec();
    host_args.extend(["--inputs", "random:1", "--no-record"]);
    let (host, port) = spawn_host(dir.path(), &host_args, Duration::from_secs(30));
    let upstream = format!("127.0.0.1:{port}").parse().unwrap();
    let to_joiner = HostileRelay::start(upstream, case.mutation, case.per_mille, case.seed);
    let to_spectator =
        HostileRelay::start(upstream, case.mutation, case.per_mille, case.seed ^ 0x5eed);
    let joiner_address = to_joiner.address().to_string();
    let mut join_args = vec!["join", &joiner_address];
    join_args.extend(game);
    join_args.extend(["--inputs", "random:2", "--no-record"]);
    let joiner = spawn_netcade(&join_args);
    std::thread::sleep(Duration::from_millis(1500));
    let spectator_address = to_spectator.address().to_string();
    let mut watch_args = vec!["spectate", &spectator_address];
    watch_args.extend(game);
    let spectator = spawn_netcade(&watch_args);
    let endings = [
        ending("host", host)?,
        ending("joiner", joiner)?,
        ending("spectator", spectator)?,
    ];
    let mutated = to_joiner.stop().mutated + to_spectator.stop().mutated;
    judge(&endings, case.per_mille == 0)?;
    Ok(Played {
        endings: endings
            .iter()
            .map(|ending| {
                let end = ending.end.clone().unwrap_or_else(|| "no summary".into());
                format!("{} {end} (exit {:?})", ending.role, ending.code)
            })
            .collect(),
        mutated,
    })
}

/// Exit codes a hostile path may cause, each with its reason printed: a
/// desync found and not repaired (1), a failure while running (3), a peer
/// lost (6).
const ENDINGS_WITH_A_REASON: [i32; 3] = [1, 3, 6];

/// Every process ended on its own with a reason, none panicked, and all that
/// say `finished` agree; `untouched` (a path that mutates nothing) must end
/// with everyone finished.
fn judge(endings: &[Ending], untouched: bool) -> Result<(), String> {
    for ending in endings {
        let role = ending.role;
        let last_words = ending.stderr.lines().last().unwrap_or("");
        if ending.stderr.contains("panicked") {
            return Err(format!("the {role} panicked: {}", ending.stderr));
        }
        match ending.code {
            None => return Err(format!("the {role} died of a signal: {}", ending.stderr)),
            Some(0) if ending.end.as_deref() == Some("finished") => {}
            Some(code) if untouched => {
                return Err(format!(
                    "the {role} ended {code} on an untouched path: {last_words}"
                ));
            }
            Some(code) if !ENDINGS_WITH_A_REASON.contains(&code) => {
                return Err(format!("the {role} exited {code}: {last_words}"));
            }
            Some(code) if ending.end.is_none() && !ending.stderr.contains("error:") => {
                return Err(format!(
                    "the {role} exited {code} without saying why: {last_words}"
                ));
            }
            Some(_) => {}
        }
    }
    let finished: Vec<&Ending> = endings
        .iter()
        .filter(|ending| ending.end.as_deref() == Some("finished"))
        .collect();
    if let Some(first) = finished.first() {
        for other in &finished[1..] {
            if other.memory_checksum != first.memory_checksum {
                return Err(format!(
                    "the {} and the {} both finished on different checksums ({:?} and {:?})",
                    first.role, other.role, first.memory_checksum, other.memory_checksum
                ));
            }
        }
    }
    Ok(())
}

fn cases() -> Vec<Case> {
    let seeds: u64 = std::env::var("NETCADE_HOSTILE_SEEDS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(1);
    let all_rates = std::env::var_os("NETCADE_HOSTILE_ALL_RATES").is_some();
    // The control: the same relays, changing nothing.
    let mut cases = vec![Case {
        mutation: Mutation::FlipPayloadBit,
        per_mille: 0,
        seed: 1,
    }];
    for seed in 1..=seeds {
        for (index, mutation) in Mutation::ALL.into_iter().enumerate() {
            let rates: Vec<u32> = if all_rates {
                RATES.to_vec()
            } else {
                // One rate per mutation, turning through all four.
                vec![RATES[(index + seed as usize) % RATES.len()]]
            };
            for per_mille in rates {
                cases.push(Case {
                    mutation,
                    per_mille,
                    seed,
                });
            }
        }
    }
    cases
}

#[test]
fn a_match_through_a_hostile_path_always_ends_and_never_ends_apart() {
    let cases = cases();
    let mut failures = Vec::new();
    let mut endings = std::collections::BTreeMap::<String, usize>::new();
    let mut mutated = 0;
    for batch in cases.chunks(AT_ONCE) {
        let outcomes: Vec<(Case, Result<Played, String>)> = std::thread::scope(|scope| {
            let runs: Vec<_> = batch
                .iter()
                .map(|case| scope.spawn(move || (*case, play_through_hostile_relays(*case))))
                .collect();
            runs.into_iter().map(|run| run.join().unwrap()).collect()
        });
        for (case, outcome) in outcomes {
            match outcome {
                Ok(played) => {
                    mutated += played.mutated;
                    for ending in played.endings {
                        *endings.entry(ending).or_default() += 1;
                    }
                }
                Err(why) => failures.push(format!("{case:?}: {why}")),
            }
        }
    }
    eprintln!(
        "{} matches through hostile paths, {mutated} datagrams mutated; endings: {endings:?}",
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} hostile paths went wrong:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
