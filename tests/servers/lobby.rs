//! `netcade lobby` (feature `broadcast`) against a real nats-server with
//! JetStream on loopback: players of the built binary meet in the Duel
//! arena's channel, challenge, accept and play over real UDP on loopback,
//! with ICE signaling over NATS subjects (no matchbox_server). Their
//! config directory lists no STUN server, so nothing leaves loopback.
//! Verdicts never depend on timing, except the TTL's bound, which is the
//! promise under test; timeouts only guard against a hang.
#![cfg(feature = "broadcast")]

use netcade::live::lobby::identity::{self, LobbyIdentity};
use netcade::live::lobby::{inbox_subject, PRESENCE_BUCKET, PRESENCE_TTL};
use netcade::net::nats::NatsLink;
use netcode::lobby::{Envelope, LobbyMessage, Presence};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::cli::{last_json, netcade, spawn_netcade_with_env, stderr, stdout, Background};
use support::servers::{start_nats, NatsServer};

const TIMEOUT: Duration = Duration::from_secs(120);

/// A config directory whose server list names no STUN server or relay.
fn loopback_config(dir: &Path) -> PathBuf {
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("servers.txt"), "signal ws://127.0.0.1:9\n").unwrap();
    config
}

/// `netcade lobby URL --name NAME ARGS` of the Duel dojo for `frames`
/// frames, pressing `random:SEED`'s buttons, in the background.
fn player(
    nats: &NatsServer,
    config: &Path,
    name: &str,
    args: &[&str],
    frames: u32,
    seed: u32,
) -> Background {
    let (url, rom) = (nats.url(None), support::dojo_arena());
    let (frames, inputs) = (frames.to_string(), format!("random:{seed}"));
    let mut all = vec![
        "lobby",
        &url,
        "--name",
        name,
        "--core",
        "duel",
        "--rom",
        &rom,
        "--headless",
        "--no-record",
        "--frames",
        &frames,
        "--inputs",
        &inputs,
        "--json",
    ];
    all.extend(args);
    spawn_netcade_with_env(&all, &[("NETCADE_CONFIG_DIR", config.as_os_str())])
}

/// `lobby URL --list --json`.
fn listing(nats: &NatsServer) -> serde_json::Value {
    let listed = netcade(&["lobby", &nats.url(None), "--list", "--json"]);
    assert!(listed.status.success(), "{listed:?}");
    serde_json::from_str(stdout(&listed).trim()).unwrap()
}

/// The names listed in any channel.
fn names(listing: &serde_json::Value) -> Vec<String> {
    listing["channels"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|channel| channel["players"].as_array().cloned().unwrap_or_default())
        .filter_map(|player| player["name"].as_str().map(str::to_string))
        .collect()
}

/// The listing once `wanted` holds of it (within `within`).
fn listing_once(
    nats: &NatsServer,
    within: Duration,
    wanted: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = Instant::now() + within;
    loop {
        let listed = listing(nats);
        if wanted(&listed) {
            return listed;
        }
        assert!(
            Instant::now() < deadline,
            "never listed as wanted: {listed}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The challenger hosted and the accepter joined, both to the last frame,
/// on the same checksums.
fn assert_played_in_sync(challenger: &Output, accepter: &Output, frames: u32) {
    for output in [challenger, accepter] {
        assert!(output.status.success(), "{output:?}");
    }
    let (a, b) = (last_json(challenger), last_json(accepter));
    assert_eq!(
        (&a["command"], &b["command"]),
        (&"host".into(), &"join".into())
    );
    for json in [&a, &b] {
        assert_eq!(json["end"], "finished", "{json}");
        assert_eq!(json["frames"], frames, "{json}");
        assert_eq!(json["netplay"]["desyncs"], 0, "{json}");
    }
    for kind in ["memory", "video"] {
        assert!(a["checksums"][kind].is_string(), "{a}");
        assert_eq!(a["checksums"][kind], b["checksums"][kind], "{kind}");
    }
}

#[test]
#[cfg_attr(not(netcade_server_nats_server), ignore = "needs nats-server on PATH")]
fn two_players_meet_in_their_games_channel_play_in_sync_and_are_listed_in_a_match_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nats) = start_nats(dir.path(), "") else {
        return;
    };
    let config = loopback_config(dir.path());
    // Ten seconds of play: the listing is read while it runs.
    let frames = 600;
    let bo = player(&nats, &config, "bo", &["--accept-any"], frames, 2);
    let al = player(&nats, &config, "al", &["--challenge", "bo"], frames, 1);
    let during = listing_once(&nats, TIMEOUT, |listed| {
        listed["matches"].as_array().is_some_and(|m| !m.is_empty())
    });
    let game = &during["matches"][0];
    assert_eq!(game["players"], serde_json::json!(["al", "bo"]), "{during}");
    let channel = &during["channels"][0];
    assert_eq!(channel["count"], 2, "{during}");
    assert!(
        channel["name"].as_str().unwrap().contains("Duel"),
        "{during}"
    );
    let (al, bo) = (al.finish(TIMEOUT), bo.finish(TIMEOUT));
    assert_played_in_sync(&al, &bo, frames);
    let after = listing_once(&nats, TIMEOUT, |listed| names(listed).is_empty());
    assert_eq!(
        after["matches"],
        serde_json::json!([]),
        "players who left are unlisted at once"
    );
}

#[test]
#[cfg_attr(not(netcade_server_nats_server), ignore = "needs nats-server on PATH")]
fn a_killed_lobby_player_leaves_the_list_within_its_ttl() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nats) = start_nats(dir.path(), "") else {
        return;
    };
    let config = loopback_config(dir.path());
    let mut bo = player(&nats, &config, "bo", &["--accept-any"], 60, 2);
    listing_once(&nats, TIMEOUT, |listed| names(listed) == ["bo"]);
    bo.kill();
    let killed = Instant::now();
    listing_once(&nats, TIMEOUT, |listed| names(listed).is_empty());
    let gone_after = killed.elapsed();
    // The key expires TTL after its last heartbeat; a listing takes a
    // moment on a busy machine.
    assert!(
        gone_after <= PRESENCE_TTL + Duration::from_secs(3),
        "still listed {gone_after:?} after the kill"
    );
}

#[test]
#[cfg_attr(not(netcade_server_nats_server), ignore = "needs nats-server on PATH")]
fn garbage_in_the_bucket_and_a_flood_of_challenges_cost_only_their_senders() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nats) = start_nats(dir.path(), "") else {
        return;
    };
    let config = loopback_config(dir.path());
    let frames = 120;
    let bo = player(&nats, &config, "bo", &["--accept-any"], frames, 2);
    let listed = listing_once(&nats, TIMEOUT, |listed| names(listed) == ["bo"]);
    let channel = listed["channels"][0]["key"].as_str().unwrap().to_string();
    let link = NatsLink::connect(&nats.url(None), Duration::from_secs(5)).unwrap();
    let js = link.jetstream();
    link.run(async move {
        let bucket = js.get_key_value(PRESENCE_BUCKET).await.unwrap();
        // bo's record under another key, garbage, and an oversized value,
        // which the server refuses: the bucket was made for small records.
        let bo_record = bucket.get("bo").await.unwrap().unwrap();
        bucket
            .put("junk", b"\xff\x00{[".to_vec().into())
            .await
            .unwrap();
        let big = bucket.put("big", vec![b'{'; 200_000].into()).await;
        assert!(big.is_err(), "a 200 kB record was taken");
        bucket.put("mallory", bo_record).await.unwrap();
    })
    .unwrap();
    // One sender, not in the lobby, floods bo with challenges of its game
    // (each would cost a look-up of the sender's presence) and garbage,
    // 5,000 of each a second, for as long as the match takes: more than bo
    // could look up, far less than it reads.
    let flooding = Arc::new(AtomicBool::new(true));
    let still = flooding.clone();
    let flooder = std::thread::spawn(move || {
        while still.load(Ordering::Relaxed) {
            let client = link.client();
            let challenge =
                format!(r#"{{"kind":"challenge","from":"flood","id":"1","channel":"{channel}"}}"#);
            link.run(async move {
                let inbox = inbox_subject("bo");
                for _ in 0..50 {
                    let _ = client
                        .publish(inbox.clone(), challenge.clone().into())
                        .await;
                    let _ = client
                        .publish(inbox.clone(), b"\xfe garbage".to_vec().into())
                        .await;
                }
                let _ = client.flush().await;
            })
            .unwrap();
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    let dropped = listing(&nats)["dropped"].as_u64().unwrap();
    assert_eq!(dropped, 2, "the two bad records are counted, not listed");
    let al_args = ["--challenge", "bo", "--wait-s", "30"];
    let al = player(&nats, &config, "al", &al_args, frames, 1);
    let (al, bo) = (al.finish(TIMEOUT), bo.finish(TIMEOUT));
    flooding.store(false, Ordering::Relaxed);
    flooder.join().unwrap();
    assert_played_in_sync(&al, &bo, frames);
}

#[test]
#[cfg_attr(not(netcade_server_nats_server), ignore = "needs nats-server on PATH")]
fn a_player_accepting_one_challenger_declines_another_and_plays_the_one_it_named() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nats) = start_nats(dir.path(), "") else {
        return;
    };
    let config = loopback_config(dir.path());
    let frames = 60;
    let bo = player(&nats, &config, "bo", &["--accept", "al"], frames, 2);
    listing_once(&nats, TIMEOUT, |listed| names(listed) == ["bo"]);
    let cy_args = ["--challenge", "bo", "--wait-s", "30"];
    let cy = player(&nats, &config, "cy", &cy_args, frames, 3).finish(TIMEOUT);
    assert!(!cy.status.success(), "{cy:?}");
    let said = stderr(&cy);
    assert!(
        said.contains("bo declined the challenge: bo is about to play al"),
        "{said}"
    );
    let al = player(&nats, &config, "al", &["--challenge", "bo"], frames, 1);
    let (al, bo) = (al.finish(TIMEOUT), bo.finish(TIMEOUT));
    assert_played_in_sync(&al, &bo, frames);
}

#[test]
#[cfg_attr(not(netcade_server_nats_server), ignore = "needs nats-server on PATH")]
fn a_player_given_only_a_library_finds_the_challengers_game_there_and_plays_it_in_sync() {
    let (Some(stella), Some(boxing)) = (
        support::content::real_core("stella"),
        support::content::real_rom("boxing.bin"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some(nats) = start_nats(dir.path(), "") else {
        return;
    };
    let config = loopback_config(dir.path());
    // The accepter's library holds Boxing among other games; its core is
    // installed where netcade looks for cores, with the system's info file.
    let library = dir.path().join("roms");
    std::fs::create_dir_all(library.join("atari")).unwrap();
    for rom in ["combat.bin", "tennis.bin", "boxing.bin"] {
        let Some(file) = support::content::real_rom(rom) else {
            return;
        };
        std::fs::copy(file, library.join("atari").join(rom)).unwrap();
    }
    let data = dir.path().join("data");
    std::fs::create_dir_all(data.join("netcade/cores")).unwrap();
    std::fs::copy(&stella, data.join("netcade/cores/stella_libretro.so")).unwrap();
    let url = nats.url(None);
    let frames = "120";
    let library_arg = library.to_str().unwrap();
    let common = ["--headless", "--no-record", "--frames", frames, "--json"];
    let bo_args = [
        &[
            "lobby",
            &url,
            "--name",
            "bo",
            "--library",
            library_arg,
            "--accept-any",
        ][..],
        &common,
    ]
    .concat();
    let bo_env = [
        ("NETCADE_CONFIG_DIR", config.as_os_str()),
        ("XDG_DATA_HOME", data.as_os_str()),
    ];
    let bo = spawn_netcade_with_env(&bo_args, &bo_env);
    listing_once(&nats, TIMEOUT, |listed| names(listed) == ["bo"]);
    let (core, rom) = (stella.to_str().unwrap(), boxing.to_str().unwrap());
    let al_args = [
        &["lobby", &url, "--name", "al", "--challenge", "bo"][..],
        &["--core", core, "--rom", rom],
        &common,
    ]
    .concat();
    let al = spawn_netcade_with_env(&al_args, &[("NETCADE_CONFIG_DIR", config.as_os_str())]);
    let (al, bo) = (al.finish(TIMEOUT), bo.finish(TIMEOUT));
    assert!(
        stdout(&bo).contains("boxing.bin with"),
        "bo played its own copy: {}",
        stdout(&bo)
    );
    assert_played_in_sync(&al, &bo, 120);
}

/// Waits for the next challenge `heard` brings, and returns its id.
fn next_challenge_id(heard: &netcade::net::nats::Heard<Envelope>) -> String {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Some(Envelope {
            message: LobbyMessage::Challenge { id, .. },
            ..
        }) = heard.try_next().unwrap()
        {
            return id;
        }
        assert!(Instant::now() < deadline, "no challenge came");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
#[cfg_attr(not(netcade_server_nats_server), ignore = "needs nats-server on PATH")]
fn a_forged_acceptance_and_a_forged_presence_under_the_same_name_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nats) = start_nats(dir.path(), "") else {
        return;
    };
    let config = loopback_config(dir.path());
    let al_args = ["--challenge", "bo", "--wait-s", "60"];
    let al = player(&nats, &config, "al", &al_args, 60, 1);
    listing_once(&nats, TIMEOUT, |listed| names(listed) == ["al"]);
    let link = NatsLink::connect(&nats.url(None), Duration::from_secs(5)).unwrap();
    let (bo, mallory) = (
        LobbyIdentity::from_seed([0xb0; 32]),
        LobbyIdentity::from_seed([0x66; 32]),
    );
    // What al says to bo, as bo hears it (signed for bo's subject).
    let to_bo = link
        .listen(inbox_subject("bo"), 64, |payload| {
            let (_, body) = identity::open(&inbox_subject("bo"), payload).ok()?;
            Envelope::decode(body).ok()
        })
        .unwrap();
    // bo's presence in al's channel, signed by bo's key.
    let js = link.jetstream();
    let al_record = link
        .run(async move {
            let bucket = js.get_key_value(PRESENCE_BUCKET).await.unwrap();
            bucket.get("al").await.unwrap().unwrap()
        })
        .unwrap();
    let (_, body) = identity::open("presence al", &al_record).unwrap();
    let presence = Presence {
        name: "bo".into(),
        ..Presence::decode(body).unwrap()
    };
    let (real, records) = (
        bo.seal_presence(&presence),
        mallory.seal_presence(&presence),
    );
    let js = link.jetstream();
    link.run(async move {
        let bucket = js.get_key_value(PRESENCE_BUCKET).await.unwrap();
        bucket.put("bo", real.into()).await.unwrap();
    })
    .unwrap();
    let id = next_challenge_id(&to_bo);
    // An acceptance in bo's name signed by another key, and one unsigned.
    let accept = Envelope {
        from: "bo".into(),
        message: LobbyMessage::Accept { id: id.clone() },
        link_key: Some(netcode::protocol::PublicKey([0x66; 32])),
    };
    let (forged, unsigned) = (mallory.seal_message("al", &accept), accept.encode());
    let (client, js) = (link.client(), link.jetstream());
    link.run(async move {
        for payload in [forged, unsigned] {
            client
                .publish(inbox_subject("al"), payload.into())
                .await
                .unwrap();
        }
        client.flush().await.unwrap();
    })
    .unwrap();
    // al says its challenge again (every 2 s): it did not take either.
    assert_eq!(next_challenge_id(&to_bo), id);
    // Another key's presence under bo's name, in its place.
    link.run(async move {
        let bucket = js.get_key_value(PRESENCE_BUCKET).await.unwrap();
        bucket.put("bo", records.into()).await.unwrap();
    })
    .unwrap();
    let al = al.finish(TIMEOUT);
    assert!(!al.status.success(), "{al:?}");
    let (said, printed) = (stderr(&al), stdout(&al));
    assert!(said.contains("someone else poses under the name"), "{said}");
    assert!(!printed.contains("bo accepted"), "{printed}");
}
