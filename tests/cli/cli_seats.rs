//! Seats go only to peers that proved their address and key (protocol 9):
//! a real joiner's first datagram, captured and replayed at the host from
//! ten sockets that then go quiet, keeps nobody out, and a Hello in
//! someone else's name earns them no more bytes than it cost.

use std::net::UdpSocket;
use std::time::{Duration, Instant};
use support::cli::{last_json, spawn_host, spawn_netcade, Background};

const TIMEOUT: Duration = Duration::from_secs(60);

fn game() -> Vec<String> {
    ["--core", "duel", "--rom", &support::dojo_arena()]
        .map(str::to_string)
        .to_vec()
}

/// A real joiner's first datagram (its Hello), caught by a socket it took
/// for the host.
fn captured_hello() -> Vec<u8> {
    let catcher = UdpSocket::bind("127.0.0.1:0").unwrap();
    catcher
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let address = catcher.local_addr().unwrap().to_string();
    let mut args = vec!["join", &address];
    let game = game();
    args.extend(game.iter().map(String::as_str));
    let mut joiner = spawn_netcade(&args);
    let mut buffer = [0u8; 2048];
    let (length, _) = catcher
        .recv_from(&mut buffer)
        .expect("the joiner says Hello");
    joiner.kill();
    buffer[..length].to_vec()
}

/// A host for a 120-frame match and the port it listens on.
fn host(dir: &std::path::Path) -> (Background, u16) {
    let mut args: Vec<&str> = vec!["--frames", "120", "--inputs", "random:1", "--json"];
    let game = game();
    args.extend(game.iter().map(String::as_str));
    spawn_host(dir, &args, TIMEOUT)
}

fn join(port: u16) -> Background {
    let address = format!("127.0.0.1:{port}");
    let mut args: Vec<&str> = vec![
        "join", &address, "--frames", "120", "--inputs", "random:2", "--json",
    ];
    let game = game();
    args.extend(game.iter().map(String::as_str));
    spawn_netcade(&args)
}

#[test]
fn a_captured_hello_replayed_from_ten_sockets_keeps_no_joiner_out() {
    let hello = captured_hello();
    let dir = tempfile::tempdir().unwrap();
    let (host, port) = host(dir.path());
    // Ten sockets replay it once each and go quiet, as a scanner would.
    let squatters: Vec<UdpSocket> = (0..10)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    for squatter in &squatters {
        squatter.send_to(&hello, ("127.0.0.1", port)).unwrap();
    }
    std::thread::sleep(Duration::from_millis(200));
    let began = Instant::now();
    let mut joiner = join(port);
    joiner.wait_for_stdout("the match began", Duration::from_secs(15));
    eprintln!("the joiner began after {:?}", began.elapsed());
    let (host, joiner) = (host.finish(TIMEOUT), joiner.finish(TIMEOUT));
    for (side, output) in [("host", &host), ("joiner", &joiner)] {
        assert!(output.status.success(), "{side}: {output:?}");
        assert_eq!(last_json(output)["end"], "finished", "{side}");
    }
    assert_eq!(
        last_json(&host)["checksums"],
        last_json(&joiner)["checksums"]
    );
}

#[test]
fn a_hello_in_someone_elses_name_earns_them_no_more_bytes_than_it_cost() {
    let hello = captured_hello();
    let dir = tempfile::tempdir().unwrap();
    let (mut host, port) = host(dir.path());
    // The victim: a socket that never answers what the host sends it.
    let victim = UdpSocket::bind("127.0.0.1:0").unwrap();
    victim
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    victim.send_to(&hello, ("127.0.0.1", port)).unwrap();
    let (mut datagrams, mut bytes) = (0, 0);
    let mut buffer = [0u8; 2048];
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        if let Ok((length, _)) = victim.recv_from(&mut buffer) {
            datagrams += 1;
            bytes += length;
        }
    }
    host.kill();
    assert_eq!(datagrams, 1, "one answer: a cookie ({bytes} bytes)");
    assert!(
        bytes <= hello.len(),
        "{bytes} bytes for a Hello of {}",
        hello.len()
    );
}
