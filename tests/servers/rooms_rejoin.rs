//! A joiner that met its host through a room comes back through the room
//! after its process was killed (`join --room CODE --rejoin`): the host
//! keeps its room open through the match, and a real, unmodified
//! `matchbox_server` on loopback tells the new process where the host is.

use std::time::Duration;
use support::cli::room_code;
use support::cli::{last_json, netcade, spawn_netcade_with_env, stderr, stdout};
use support::restart::{kill_and_restart, tickets_in};
use support::servers::signaling_server;

/// Long enough for the match on a busy machine.
const TIMEOUT: Duration = Duration::from_secs(120);

#[test]
#[cfg_attr(
    not(netcade_server_matchbox_server),
    ignore = "needs matchbox_server on PATH"
)]
fn a_joiner_killed_mid_match_comes_back_through_the_room_and_ends_on_the_hosts_checksum() {
    let Some((_server, signal)) = signaling_server() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let arena = support::dojo_arena();
    let game = ["--core", "duel", "--rom", &arena, "--headless"];
    let common = ["--signal", &signal, "--frames", "900", "--json"];
    let host_args = [
        &["host", "--port", "0", "--room", "--inputs", "random:1"][..],
        &game,
        &common,
    ]
    .concat();
    let mut host = spawn_netcade_with_env(&host_args, &[]);
    let code = room_code(&mut host);
    let join_args = [
        &["join", "--room", &code, "--inputs", "random:2"][..],
        &game,
        &common,
    ]
    .concat();
    let (again, _) = kill_and_restart(&mut host, &join_args, data.path(), TIMEOUT);
    let (host, again) = (host.finish(TIMEOUT), again.finish(TIMEOUT));
    for output in [&host, &again] {
        assert!(output.status.success(), "{output:?}");
    }
    let said = stdout(&again);
    assert!(
        said.contains(&format!("rejoining the match in room {code}")),
        "{said}"
    );
    assert!(said.contains("resuming the match at frame"), "{said}");
    let errors = stderr(&host);
    assert!(
        errors.contains("note: P2 restarted: sent it the state of frame"),
        "{errors}"
    );
    let (host_json, again_json) = (last_json(&host), last_json(&again));
    for json in [&host_json, &again_json] {
        assert_eq!(json["end"], "finished", "{json}");
        assert_eq!(json["frames"], 900, "{json}");
        assert_eq!(json["netplay"]["desyncs"], 0, "{json}");
    }
    for kind in ["memory", "video"] {
        assert_eq!(host_json["checksums"][kind], again_json["checksums"][kind]);
    }
    // The way back was found with ICE through the room, as the way in was.
    let path = &again_json["netplay"]["path"];
    assert_eq!(path["kind"], "direct", "{path}");
    assert!(
        tickets_in(data.path()).is_empty(),
        "a match that ended leaves no ticket"
    );
    let replay = host_json["replay"]["path"].as_str().unwrap();
    let verified = netcade(
        &[
            &["replay", "play", replay, "--headless", "--verify", "--json"][..],
            &game[..4],
        ]
        .concat(),
    );
    assert!(verified.status.success(), "{verified:?}");
    assert_eq!(last_json(&verified)["frames"], 900);
}
