//! A session's result screen in words: how it ended in one plain sentence,
//! how long it lasted, each player's ping, delay and rollbacks, its
//! desyncs and repairs, its replay, and what Rematch runs. Read from the
//! facts of the session's summary (its `--json` object), never from the
//! lines it printed, which stay in the log folded away below.

use crate::launcher::SessionEnd;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// What a result screen says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResultSummary {
    /// How it ended, one sentence: the screen's first line.
    pub headline: String,
    /// The facts below it: the duration, each player's figures, desyncs.
    pub facts: Vec<String>,
    /// The replay it recorded.
    pub replay: Option<PathBuf>,
    /// The command line Rematch (or Play again) runs, with its label.
    pub again: Option<(&'static str, Vec<String>)>,
}

impl ResultSummary {
    /// The result screen of `end`.
    pub fn of(end: &SessionEnd) -> ResultSummary {
        let report = end.report.as_ref();
        // A match met in the lobby ends as its host's or its joiner's, and
        // its Rematch asks the same opponent again (or waits for its
        // challenge again).
        let command = match end.command_line.first().map_or("", String::as_str) {
            "lobby" => report
                .and_then(|report| report["command"].as_str())
                .unwrap_or("lobby"),
            command => command,
        };
        let seconds = report
            .and_then(|report| report["seconds"].as_f64())
            .unwrap_or(end.took.as_secs_f64());
        let mut facts = vec![format!(
            "Duration: {}",
            duration_words(Duration::from_secs_f64(seconds.max(0.0)))
        )];
        if let Some(netplay) = report.map(|report| &report["netplay"]) {
            facts.extend(player_facts(netplay));
        }
        ResultSummary {
            headline: headline(end, command, seconds),
            facts,
            replay: end.replay_path().map(PathBuf::from),
            again: again(command, &end.command_line),
        }
    }
}

/// The sentence a result screen opens with.
fn headline(end: &SessionEnd, command: &str, seconds: f64) -> String {
    if end.join_cancelled() {
        return "You cancelled joining before the match began.".to_string();
    }
    if let Some(error) = &end.error {
        let reason = error.strip_prefix("error: ").unwrap_or(error);
        return format!("It did not work: {reason}.");
    }
    let ended = end
        .report
        .as_ref()
        .and_then(|report| report["end"].as_str());
    let desyncs = end
        .report
        .as_ref()
        .and_then(|report| report["netplay"]["desyncs"].as_u64())
        .unwrap_or(0);
    let sentence = match (command, ended) {
        ("host" | "join", Some("finished")) if desyncs > 0 => {
            "The match finished, but the two machines saw the game differently"
        }
        ("host" | "join", Some("finished")) => "The match finished",
        ("host" | "join", Some("window_closed")) => "You left the match",
        ("host" | "join", Some("cancelled")) => "You stopped hosting before anyone joined",
        ("host" | "join", Some("peer_left")) => "Your opponent left the match",
        ("host" | "join", Some("peer_lost")) => "The connection to your opponent was lost",
        ("host" | "join", Some("stalled")) => {
            "The match stopped: no frame got through for too long"
        }
        ("spectate", Some("finished")) => "The match you watched finished",
        ("spectate", Some("window_closed")) => "You stopped watching",
        ("spectate", Some("host_lost")) => "The connection to the match was lost",
        ("spectate", Some("stalled")) => "The match you watched stopped moving",
        ("spectate", Some("relay_failed")) => "The match could not be passed on to you",
        (_, Some("interrupted")) => "It was interrupted",
        ("play", _) => {
            return format!(
                "You played {} for {}.",
                game_name(&end.command_line),
                duration_words(Duration::from_secs_f64(seconds.max(0.0)))
            )
        }
        _ => return format!("It {}.", end.ending()),
    };
    format!("{sentence}.")
}

/// Each player's line and the desyncs, from a match summary's `netplay`.
fn player_facts(netplay: &Value) -> Vec<String> {
    let mut facts = Vec::new();
    let Some(peers) = netplay["peers"].as_array() else {
        return facts;
    };
    let known = |value: &Value, unit: &str| {
        value
            .as_u64()
            .map_or_else(|| "?".to_string(), |value| format!("{value}{unit}"))
    };
    if let Some(me) = netplay["player"].as_u64() {
        let rollbacks = &peers
            .first()
            .map_or(&Value::Null, |peer| &peer["rollbacks"]);
        let rolled_back = match rollbacks["count"].as_u64() {
            Some(0) => "no rollbacks".to_string(),
            _ => format!(
                "{} rollbacks (the deepest {} frames)",
                known(&rollbacks["count"], ""),
                known(&rollbacks["max_depth"], "")
            ),
        };
        facts.push(format!(
            "You (player {}): input delay {}, {rolled_back}",
            me + 1,
            known(&netplay["input_delay"], ""),
        ));
    }
    for peer in peers {
        facts.push(format!(
            "Player {}: ping {}, input delay {}, rollbacks their inputs caused {}",
            peer["player"].as_u64().map_or(0, |slot| slot + 1),
            known(&peer["ping_ms"], " ms"),
            known(&peer["player_input_delay"], ""),
            known(&peer["rollbacks_caused"], ""),
        ));
    }
    let desyncs = netplay["desyncs"].as_u64().unwrap_or(0);
    facts.push(match desyncs {
        0 => "Desyncs: none".to_string(),
        _ => format!(
            "Desyncs: {desyncs}, {} repaired",
            netplay["repairs"].as_u64().unwrap_or(0)
        ),
    });
    facts
}

/// What Rematch (a match) or Play again (local play) runs: the same
/// command line, to the same address or room (a rejoin's ticket was used:
/// the rematch is a new join).
fn again(command: &str, line: &[String]) -> Option<(&'static str, Vec<String>)> {
    let label = match command {
        "host" | "join" => "Rematch",
        "play" => "Play again",
        _ => return None,
    };
    let line = line.iter().filter(|word| *word != "--rejoin").cloned();
    Some((label, line.collect()))
}

/// The game of a command line: its content's file name, else its core's.
fn game_name(line: &[String]) -> String {
    let after = |flag: &str| {
        line.iter()
            .position(|word| word == flag)
            .and_then(|at| line.get(at + 1))
    };
    after("--rom")
        .or_else(|| after("--core"))
        .map(|path| {
            std::path::Path::new(path)
                .file_name()
                .map_or_else(|| path.clone(), |name| name.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "the game".to_string())
}

/// `45 s`, `3 min 5 s`, `1 h 2 min`.
pub fn duration_words(duration: Duration) -> String {
    let seconds = duration.as_secs();
    match seconds {
        0..=59 => format!("{seconds} s"),
        60..=3599 => format!("{} min {} s", seconds / 60, seconds % 60),
        _ => format!("{} h {} min", seconds / 3600, seconds % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    fn joined(end: &str, desyncs: u64) -> SessionEnd {
        SessionEnd {
            command_line: words("join 10.0.0.2:7000 --rejoin --core duel --rom dojo.arena"),
            output: "checksums after 240 frames: …\nreplay: /r/a.ncr\n".to_string(),
            report: Some(serde_json::json!({
                "end": end,
                "seconds": 75.2,
                "netplay": {
                    "player": 1,
                    "input_delay": 2,
                    "desyncs": desyncs,
                    "repairs": desyncs,
                    "peers": [{
                        "player": 0,
                        "ping_ms": 12,
                        "player_input_delay": 3,
                        "rollbacks_caused": 7,
                        "rollbacks": { "count": 7, "max_depth": 2 },
                    }],
                },
            })),
            ..SessionEnd::default()
        }
    }

    #[test]
    fn a_match_met_in_the_lobby_ends_as_its_hosts_and_rematch_challenges_the_same_opponent() {
        let line = words("lobby nats://127.0.0.1:4222 --challenge bo --core duel --name al");
        let end = SessionEnd {
            command_line: line.clone(),
            report: Some(serde_json::json!({"command": "host", "end": "finished"})),
            ..SessionEnd::default()
        };
        let summary = ResultSummary::of(&end);
        assert_eq!(summary.headline, "The match finished.");
        assert_eq!(summary.again, Some(("Rematch", line)));
    }

    #[test]
    fn a_match_result_opens_with_how_it_ended_in_plain_words_then_each_players_figures() {
        let summary = ResultSummary::of(&joined("peer_left", 0));
        assert_eq!(summary.headline, "Your opponent left the match.");
        assert_eq!(
            summary.facts,
            [
                "Duration: 1 min 15 s",
                "You (player 2): input delay 2, 7 rollbacks (the deepest 2 frames)",
                "Player 1: ping 12 ms, input delay 3, rollbacks their inputs caused 7",
                "Desyncs: none",
            ]
        );
        assert_eq!(summary.replay, Some(PathBuf::from("/r/a.ncr")));
        // Rematch joins the same host again, as a new join.
        assert_eq!(
            summary.again,
            Some((
                "Rematch",
                words("join 10.0.0.2:7000 --core duel --rom dojo.arena")
            ))
        );
        let repaired = ResultSummary::of(&joined("finished", 2));
        assert_eq!(
            repaired.headline,
            "The match finished, but the two machines saw the game differently."
        );
        assert_eq!(repaired.facts.last().unwrap(), "Desyncs: 2, 2 repaired");
        assert_eq!(
            ResultSummary::of(&joined("window_closed", 0)).headline,
            "You left the match."
        );
    }

    #[test]
    fn local_play_ends_on_its_game_and_time_without_checksums_and_a_failure_on_its_reason() {
        let played = SessionEnd {
            command_line: words("play --players 2 --core duel --rom cores/duel/arenas/dojo.arena"),
            output: "frame 300, checksums video 1 audio 2 memory 3\n".to_string(),
            took: Duration::from_secs(65),
            ..SessionEnd::default()
        };
        let summary = ResultSummary::of(&played);
        assert_eq!(summary.headline, "You played dojo.arena for 1 min 5 s.");
        assert_eq!(summary.facts, ["Duration: 1 min 5 s"]);
        assert!(!summary.facts.concat().contains("checksum"));
        assert_eq!(summary.again.unwrap().0, "Play again");
        let failed = SessionEnd {
            command_line: words("join 127.0.0.1:9 --core duel"),
            exit_code: 2,
            error: Some("error: no answer from 127.0.0.1:9 within 10 s".to_string()),
            ..SessionEnd::default()
        };
        assert_eq!(
            ResultSummary::of(&failed).headline,
            "It did not work: no answer from 127.0.0.1:9 within 10 s."
        );
    }
}
