//! CI sets `NETCADE_REQUIRE_SERVERS=1`: then the tests that start real
//! servers on loopback must have been built to run, not ignored.

#[test]
fn a_run_that_requires_the_servers_was_built_with_every_one_on_path() {
    if std::env::var("NETCADE_REQUIRE_SERVERS").as_deref() != Ok("1") {
        return;
    }
    // Set by build.rs's look at PATH, not constants of the code.
    let found = [
        ("turnserver", cfg!(netcade_server_turnserver)),
        ("nats-server", cfg!(netcade_server_nats_server)),
        ("matchbox_server", cfg!(netcade_server_matchbox_server)),
        ("retroarch", cfg!(netcade_server_retroarch)),
    ];
    let missing: Vec<&str> = found
        .iter()
        .filter(|(_, built_with)| !built_with)
        .map(|(program, _)| *program)
        .collect();
    assert!(
        missing.is_empty(),
        "NETCADE_REQUIRE_SERVERS=1, but the tests were built without {missing:?} on PATH, \
         so the tests that start them are ignored: run .ci/run's server installation first"
    );
}
