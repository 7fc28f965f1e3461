//! The launcher's core list: each core found is asked what it declares in
//! a child process (`netcade probe-core`), so a core that crashes as it
//! loads is reported in the core's own error line and the launcher goes
//! on. The crashing core is a fake compiled at test time.

use netcade::launcher::cores::{probe_in_child, Catalogue, PROBE_TIMEOUT};
use std::path::{Path, PathBuf};
use support::fake_core::FakeCore;

fn netcade_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_netcade"))
}

/// A fake core built in a folder of its own under `dir`.
fn fake_core(dir: &Path, name: &str, core: FakeCore) -> String {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    core.build(&folder).display().to_string()
}

#[test]
fn a_core_crashing_as_it_declares_itself_is_reported_and_the_launcher_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let crashing = fake_core(
        dir.path(),
        "crashing",
        FakeCore {
            in_system_info: "crash_with_sigsegv();",
            ..FakeCore::default()
        },
    );
    let working = fake_core(dir.path(), "working", FakeCore::default());
    let error = probe_in_child(&netcade_binary(), &crashing, PROBE_TIMEOUT).unwrap_err();
    assert!(error.starts_with("error: core "), "{error}");
    assert!(error.contains("crashed"), "{error}");

    let mut catalogue = Catalogue::probe(
        netcade_binary(),
        vec!["duel".to_string(), crashing.clone(), working.clone()],
    );
    let deadline = std::time::Instant::now() + PROBE_TIMEOUT * 3;
    while catalogue.probing() {
        assert!(
            std::time::Instant::now() < deadline,
            "the probes never came back"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        catalogue.update();
    }
    let offered: Vec<String> = catalogue
        .offered(Some(Path::new("game.fake")))
        .into_iter()
        .map(|(core, _)| core)
        .collect();
    assert_eq!(offered, ["duel".to_string(), working]);
    let failures = catalogue.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].starts_with(&format!("{crashing}: error: core ")),
        "{failures:?}"
    );
}

#[test]
fn probe_core_prints_what_a_core_declares_as_one_json_line() {
    let output = support::cli::netcade(&["probe-core", "duel"]);
    assert!(output.status.success(), "{}", support::cli::stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["name"], "Duel");
    assert!(json["extensions"].as_array().is_some(), "{json}");
    // Its options, for the launcher's Settings: each with its values and default.
    let option = &json["options"][0];
    assert_eq!(option["key"], "duel_inject_nondeterminism", "{json}");
    assert_eq!(option["values"], serde_json::json!(["disabled", "enabled"]));
    assert_eq!(option["default"], "disabled");
}
