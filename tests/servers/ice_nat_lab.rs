//! The NAT lab: real NATs in network namespaces. Two "home" namespaces sit
//! behind "router" namespaces doing nftables `masquerade` (a cone-like
//! mapping) or `masquerade fully-random` (symmetric); coturn runs in a
//! "WAN" namespace between them. Each player is this test binary run again
//! inside its home (`ip netns exec`), connecting with `connect_ice` while
//! the lab relays the two players' messages as a room would; it measures
//! its NAT's mapping itself (two STUN servers' views of one socket), then
//! plays Duel over the path it chose and prints its checksums.
//!
//! Root only, and opt-in (it changes the machine's network namespaces):
//!
//! ```text
//! NETCADE_NAT_LAB=1 cargo test --test servers -- --ignored --test-threads 1 behind_
//! ```
//!
//! The `behind_*_by_room_code` tests run two `netcade` processes instead,
//! which know nothing but a room code: an unmodified matchbox_server runs
//! on the WAN beside coturn, the servers' list (`servers.txt`) names both,
//! `netcade host --room` runs in one home and `netcade join --room CODE` in
//! the other.
//!
//! The `*_miniupnpd_*` tests (features `natpmp` and `upnp`) run Debian's
//! miniupnpd on the host's router, speaking PCP/NAT-PMP or UPnP IGD to the
//! home only; the host asks it for a port mapping, the joiner reaches the
//! host on the mapped port, and the mapping is gone when the match ends.
//!
//! Only addresses inside 198.18.0.0/15 are used, but for that router's WAN
//! link in the miniupnpd tests (198.20.1.0/24: miniupnpd forwards nothing
//! from a reserved address); no namespace has a route out, and every
//! namespace (with its processes) is removed at the end.

use netcade::engine::matches::machine::NetplayMachine;
use netcade::net::ice::{IceConfig, IceRole, PathPolicy, RelayServer};
use netcade::net::link::{connect_ice, LinkArgs};
use netcade::net::signal::{SignalChannel, SignalError};
use netcade::net::{MicrosClock, MonotonicClock, Transport};
use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use support::cli::{last_json, spawn_netcade_in_netns, stderr, stdout};
use support::ice::duel_player;
use support::netplay::MachineNotes;

/// Opts in to the lab.
const LAB_ENV: &str = "NETCADE_NAT_LAB";
/// Set in a player's environment: `host` or `joiner`.
const PLAYER_ENV: &str = "NETCADE_NAT_LAB_PLAYER";
/// The two STUN addresses coturn answers on (the WAN's).
const SERVER_A: &str = "198.18.0.1:3478";
const SERVER_B: &str = "198.18.0.2:3478";
const TURN_USER: &str = "lab";
const TURN_PASSWORD: &str = "lab-only-secret";
/// Where the lab's signaling server (matchbox_server) listens, on the WAN.
const SIGNAL_ADDRESS: &str = "198.18.0.1:3536";
/// The players' game port inside their homes.
const GAME_PORT: u16 = 7000;
const FRAMES: u32 = 300;
/// Frames both players must agree on (the last few may not be final).
const COMPARED_FRAMES: usize = 240;

/// How a router translates.
#[derive(Clone, Copy)]
enum Masquerade {
    /// nftables `masquerade`: keeps one port per socket where it can.
    Plain,
    /// `masquerade fully-random`: a random port per destination.
    FullyRandom,
}

/// The WAN link of the host's router in the miniupnpd tests: outside the
/// reserved ranges, where miniupnpd refuses to forward ports.
#[cfg(all(feature = "natpmp", feature = "upnp"))]
const MINIUPNPD_WAN: &str = "198.20.1";

/// What the host's router's miniupnpd answers.
#[cfg(all(feature = "natpmp", feature = "upnp"))]
#[derive(Clone, Copy)]
enum Speaks {
    /// PCP and NAT-PMP (port 5351), no UPnP.
    Pcp,
    /// UPnP IGD (SSDP and HTTP), no PCP/NAT-PMP.
    Upnp,
}

/// The namespaces of one lab, removed (with what runs in them) on drop.
struct Lab {
    prefix: String,
    _dir: tempfile::TempDir,
    coturn: Option<Child>,
    signaling: Option<Child>,
    miniupnpd: Option<Child>,
}

/// Applies nftables `rules` inside namespace `ns`.
fn nft(ns: &str, rules: &str) {
    let mut nft = Command::new("ip")
        .args(["netns", "exec", ns, "nft", "-f", "-"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("nft (apt-get install nftables)");
    nft.stdin
        .take()
        .unwrap()
        .write_all(rules.as_bytes())
        .unwrap();
    assert!(
        nft.wait().unwrap().success(),
        "nft refused the rules:\n{rules}"
    );
}

fn run(args: &[&str]) {
    let status = Command::new(args[0])
        .args(&args[1..])
        .status()
        .unwrap_or_else(|error| panic!("{}: {error}", args.join(" ")));
    assert!(status.success(), "{} failed: {status}", args.join(" "));
}

/// `ip -n NS <command>` (words split at spaces).
fn ip(ns: &str, command: &str) {
    let mut args = vec!["ip", "-n", ns];
    args.extend(command.split(' '));
    run(&args);
}

impl Lab {
    fn ns(&self, name: &str) -> String {
        format!("{}-{name}", self.prefix)
    }

    fn new(masquerade: Masquerade) -> Lab {
        Lab::with_host_router_wan(masquerade, "198.18.1")
    }

    /// The host's router's WAN link is `host_wan`.0/24, the joiner's
    /// 198.18.2.0/24.
    fn with_host_router_wan(masquerade: Masquerade, host_wan: &str) -> Lab {
        assert_eq!(
            std::env::var(LAB_ENV).as_deref(),
            Ok("1"),
            "the NAT lab is opt-in: {LAB_ENV}=1, as root"
        );
        // Each lab its own names: a namespace deleted by the lab before may
        // not be gone yet when the next one is made.
        static LABS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let lab = LABS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let prefix = format!("nclab{}x{lab}", std::process::id() % 100_000);
        let mut lab = Lab {
            prefix,
            _dir: tempfile::tempdir().unwrap(),
            coturn: None,
            signaling: None,
            miniupnpd: None,
        };
        for name in ["wan", "ra", "rb", "ha", "hb"] {
            run(&["ip", "netns", "add", &lab.ns(name)]);
            ip(&lab.ns(name), "link set lo up");
        }
        let wan = lab.ns("wan");
        // The servers' addresses, on the WAN's loopback (reached by routing).
        ip(&wan, "addr add 198.18.0.1/32 dev lo");
        ip(&wan, "addr add 198.18.0.2/32 dev lo");
        lab.forwarding(&wan);
        for (router, home, side, wan) in [("ra", "ha", 1, host_wan), ("rb", "hb", 2, "198.18.2")] {
            lab.home_behind(router, home, side, masquerade, wan);
        }
        lab.start_coturn();
        lab
    }

    /// A third home, for a spectator: `hc` behind router `rc`.
    fn add_third_home(&self, masquerade: Masquerade) {
        for name in ["rc", "hc"] {
            run(&["ip", "netns", "add", &self.ns(name)]);
            ip(&self.ns(name), "link set lo up");
        }
        self.home_behind("rc", "hc", 3, masquerade, "198.18.3");
    }

    fn forwarding(&self, ns: &str) {
        run(&[
            "ip",
            "netns",
            "exec",
            ns,
            "sysctl",
            "-qw",
            "net.ipv4.ip_forward=1",
        ]);
    }

    /// Router `router` between the WAN (`wan_net`.0/24) and the home
    /// `home` (198.19.<side>.0/24), masquerading what leaves for the WAN.
    fn home_behind(
        &self,
        router: &str,
        home: &str,
        side: u8,
        masquerade: Masquerade,
        wan_net: &str,
    ) {
        let (wan, router, home) = (self.ns("wan"), self.ns(router), self.ns(home));
        ip(
            &wan,
            &format!("link add to{side} type veth peer name wan netns {router}"),
        );
        ip(&wan, &format!("addr add {wan_net}.1/24 dev to{side}"));
        ip(&wan, &format!("link set to{side} up"));
        ip(&router, &format!("addr add {wan_net}.2/24 dev wan"));
        ip(&router, "link set wan up");
        ip(&router, &format!("route add default via {wan_net}.1"));
        ip(
            &router,
            &format!("link add lan type veth peer name eth0 netns {home}"),
        );
        ip(&router, &format!("addr add 198.19.{side}.1/24 dev lan"));
        ip(&router, "link set lan up");
        ip(&home, &format!("addr add 198.19.{side}.2/24 dev eth0"));
        ip(&home, "link set eth0 up");
        ip(&home, &format!("route add default via 198.19.{side}.1"));
        self.forwarding(&router);
        let how = match masquerade {
            Masquerade::Plain => "masquerade",
            Masquerade::FullyRandom => "masquerade fully-random",
        };
        // Like a home router: masquerade what leaves, and drop what comes
        // in unasked (else the opponent's first check, reaching the router
        // itself, takes the port the home's own mapping should keep).
        let rules = format!(
            "add table ip nat\n\
             add chain ip nat post {{ type nat hook postrouting priority 100 ; }}\n\
             add rule ip nat post oifname \"wan\" {how}\n\
             add table ip filter\n\
             add chain ip filter input {{ type filter hook input priority 0 ; }}\n\
             add rule ip filter input iifname \"wan\" ct state new drop\n"
        );
        nft(&router, &rules);
    }

    fn start_coturn(&mut self) {
        let program = support::servers::server_program("turnserver").expect("turnserver on PATH");
        let dir = self._dir.path();
        let log = std::fs::File::create(dir.join("turnserver.log")).unwrap();
        // Fixed ports are safe here: the WAN namespace is this lab's alone.
        let child = Command::new("ip")
            .args(["netns", "exec", &self.ns("wan")])
            .arg(program)
            .args([
                "-n",
                "--listening-ip",
                "198.18.0.1",
                "--listening-ip",
                "198.18.0.2",
            ])
            .args(["--relay-ip", "198.18.0.1", "--listening-port", "3478"])
            .args(["--lt-cred-mech", "--realm", "lab"])
            .args(["--user", &format!("{TURN_USER}:{TURN_PASSWORD}")])
            .arg("--userdb")
            .arg(dir.join("turndb.sqlite"))
            .arg("--pidfile")
            .arg(dir.join("turnserver.pid"))
            .args(["--no-cli", "--no-tls", "--no-dtls", "--log-file", "stdout"])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("turnserver starts");
        self.coturn = Some(child);
    }

    /// matchbox_server on the WAN, listening once this returns.
    fn start_signaling(&mut self) {
        let program =
            support::servers::server_program("matchbox_server").expect("matchbox_server on PATH");
        let child = Command::new("ip")
            .args(["netns", "exec", &self.ns("wan")])
            .arg(program)
            .arg(SIGNAL_ADDRESS)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("matchbox_server starts");
        let pid = child.id();
        self.signaling = Some(child);
        // Its namespace's sockets, as /proc shows them to its own process.
        let port = SIGNAL_ADDRESS.parse::<SocketAddr>().unwrap().port();
        let listening = format!(":{port:04X} 00000000:0000 0A");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !std::fs::read_to_string(format!("/proc/{pid}/net/tcp"))
            .unwrap_or_default()
            .contains(&listening)
        {
            assert!(Instant::now() < deadline, "matchbox_server never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A config directory whose `servers.txt` names the lab's servers.
    fn server_list(&self) -> std::path::PathBuf {
        let config = self._dir.path().join("config");
        std::fs::create_dir_all(&config).unwrap();
        let list = format!(
            "signal ws://{SIGNAL_ADDRESS}\n\
             stun lab stun:{SERVER_A}\n\
             turn lab turn:{TURN_USER}:{TURN_PASSWORD}@{SERVER_A}\n"
        );
        std::fs::write(config.join("servers.txt"), list).unwrap();
        config
    }

    /// What the NAT in front of `home` does with one socket's mapping,
    /// measured from inside it.
    fn measured_mapping(&self, home: &str) -> String {
        let mut measuring = self.player(home, "measure");
        drop(measuring.stdin.take());
        let mut printed = String::new();
        std::io::Read::read_to_string(&mut measuring.stdout.take().unwrap(), &mut printed).unwrap();
        assert!(measuring.wait().unwrap().success(), "{printed}");
        let report = Report {
            lines: printed
                .lines()
                .filter_map(|line| Some(line.split_once("lab: ")?.1.to_owned()))
                .collect(),
        };
        report.value("mapping").to_owned()
    }

    /// This binary again, as the player `role`, inside `home`.
    fn player(&self, home: &str, role: &str) -> Child {
        // The test's name as the harness knows it: its module path in this
        // binary (`ice_nat_lab::nat_lab_player`), without the binary's name.
        let module = module_path!().split_once("::").map_or("", |(_, rest)| rest);
        Command::new("ip")
            .args(["netns", "exec", &self.ns(home)])
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", &format!("{module}::nat_lab_player")])
            .args(["--ignored", "--nocapture", "--test-threads", "1"])
            .env(PLAYER_ENV, role)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the player starts")
    }
}

/// The miniupnpd tests' part of the lab.
#[cfg(all(feature = "natpmp", feature = "upnp"))]
impl Lab {
    /// A lab whose host's router runs miniupnpd, speaking `speaks`.
    fn with_miniupnpd(masquerade: Masquerade, speaks: Speaks) -> Lab {
        let mut lab = Lab::with_host_router_wan(masquerade, MINIUPNPD_WAN);
        lab.start_miniupnpd(speaks);
        lab
    }

    /// miniupnpd on the host's router, answering the home only, once it
    /// listens: in the chains its nftables backend fills (the ones
    /// Debian's `/etc/miniupnpd/nft_init.sh` makes), with its lease file
    /// in the lab's folder.
    fn start_miniupnpd(&mut self, speaks: Speaks) {
        let router = self.ns("ra");
        nft(
            &router,
            "add table inet filter\n\
             add chain inet filter miniupnpd\n\
             add chain inet filter prerouting_miniupnpd\n\
             add chain inet filter postrouting_miniupnpd\n\
             add chain inet filter forward { type filter hook forward priority 0 ; }\n\
             add rule inet filter forward jump miniupnpd\n\
             add chain inet filter prerouting { type nat hook prerouting priority -100 ; }\n\
             add rule inet filter prerouting jump prerouting_miniupnpd\n\
             add chain inet filter postrouting { type nat hook postrouting priority 100 ; }\n\
             add rule inet filter postrouting jump postrouting_miniupnpd\n",
        );
        let dir = self._dir.path();
        let (natpmp, upnp, listens) = match speaks {
            // Where each listens: PCP/NAT-PMP on 5351, SSDP on 1900.
            Speaks::Pcp => ("yes", "no", 5351),
            Speaks::Upnp => ("no", "yes", 1900),
        };
        let config = format!(
            "ext_ifname=wan\nlistening_ip=lan\nhttp_port=0\n\
             enable_natpmp={natpmp}\nenable_upnp={upnp}\nsecure_mode=yes\n\
             system_uptime=yes\nlease_file={}\n\
             uuid=3a4e5f6a-1b2c-4d3e-8f9a-0b1c2d3e4f5a\n\
             allow 1024-65535 198.19.1.0/24 1024-65535\n\
             deny 0-65535 0.0.0.0/0 0-65535\n",
            dir.join("miniupnpd.leases").display()
        );
        std::fs::write(dir.join("miniupnpd.conf"), config).unwrap();
        let log = std::fs::File::create(dir.join("miniupnpd.log")).unwrap();
        let program = support::servers::server_program("miniupnpd")
            .expect("miniupnpd (apt-get install miniupnpd)");
        // -d: in the foreground, so it is this child (and killed with it).
        let child = Command::new("ip")
            .args(["netns", "exec", &router])
            .arg(program)
            .arg("-d")
            .arg("-f")
            .arg(dir.join("miniupnpd.conf"))
            .arg("-P")
            .arg(dir.join("miniupnpd.pid"))
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("miniupnpd starts");
        let pid = child.id();
        self.miniupnpd = Some(child);
        let listening = format!(":{listens:04X} 00000000:0000 07");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !std::fs::read_to_string(format!("/proc/{pid}/net/udp"))
            .unwrap_or_default()
            .contains(&listening)
        {
            assert!(
                Instant::now() < deadline,
                "miniupnpd never listened: {}",
                self.miniupnpd_log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn miniupnpd_log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("miniupnpd.log")).unwrap_or_default()
    }

    /// The ports miniupnpd forwards now: its DNAT rules on the host's router.
    fn forwarded_ports(&self) -> Vec<String> {
        let listed = Command::new("ip")
            .args(["netns", "exec", &self.ns("ra")])
            .args([
                "nft",
                "list",
                "chain",
                "inet",
                "filter",
                "prerouting_miniupnpd",
            ])
            .output()
            .expect("nft lists the chain");
        String::from_utf8_lossy(&listed.stdout)
            .lines()
            .filter(|line| line.contains("dnat"))
            .map(|line| line.trim().to_owned())
            .collect()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let servers = [
            self.coturn.take(),
            self.signaling.take(),
            self.miniupnpd.take(),
        ];
        for mut server in servers.into_iter().flatten() {
            let _ = server.kill();
            let _ = server.wait();
        }
        for name in ["ha", "hb", "hc", "ra", "rb", "rc", "wan"] {
            // Deleting a namespace removes its links and routes with it.
            let _ = Command::new("ip")
                .args(["netns", "del", &self.ns(name)])
                .status();
        }
    }
}

/// What a player reported: its lines beginning `lab: `.
struct Report {
    lines: Vec<String>,
}

impl Report {
    fn value(&self, key: &str) -> &str {
        let prefix = format!("{key} ");
        self.lines
            .iter()
            .find_map(|line| line.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no `{key}` in {:?}", self.lines))
    }
}

/// Runs both players, passing each one's `signal` lines to the other
/// (what the room would carry), and returns their reports.
fn play(lab: &Lab) -> [Report; 2] {
    let mut players = [lab.player("ha", "host"), lab.player("hb", "joiner")];
    let (done_tx, done_rx) = mpsc::channel();
    let inputs = [
        players[1].stdin.take().unwrap(),
        players[0].stdin.take().unwrap(),
    ];
    for (index, (player, mut to_other)) in players.iter_mut().zip(inputs).enumerate() {
        let stdout = BufReader::new(player.stdout.take().unwrap());
        let done = done_tx.clone();
        std::thread::spawn(move || {
            let mut report = Vec::new();
            for line in stdout.lines().map_while(Result::ok) {
                // The test harness may start a line before the player's own.
                if let Some((_, message)) = line.split_once("signal ") {
                    let _ = writeln!(to_other, "{message}");
                } else if let Some((_, said)) = line.split_once("lab: ") {
                    report.push(said.to_owned());
                }
            }
            let _ = done.send((index, report));
        });
    }
    drop(done_tx);
    let mut reports = [Vec::new(), Vec::new()];
    let deadline = Instant::now() + Duration::from_secs(120);
    for _ in 0..2 {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok((index, report)) = done_rx.recv_timeout(left) else {
            break;
        };
        reports[index] = report;
    }
    for player in &mut players {
        let _ = player.kill();
        let _ = player.wait();
    }
    reports.map(|lines| Report { lines })
}

fn lab_match(masquerade: Masquerade) -> [Report; 2] {
    let lab = Lab::new(masquerade);
    let reports = play(&lab);
    for report in &reports {
        let said: Vec<&String> = report
            .lines
            .iter()
            .filter(|line| !line.starts_with("checksums"))
            .collect();
        println!("{said:?}");
    }
    assert_eq!(
        reports[0].value("checksums"),
        reports[1].value("checksums"),
        "both players agree on the first {COMPARED_FRAMES} frames"
    );
    reports
}

#[test]
#[ignore = "root only: NETCADE_NAT_LAB=1 cargo test --test servers -- --ignored --test-threads 1 behind_"]
fn behind_masquerading_routers_the_players_punch_a_hole_and_play_in_sync() {
    let reports = lab_match(Masquerade::Plain);
    for report in &reports {
        assert_eq!(report.value("mapping"), "endpoint-independent");
        assert!(report.value("path").starts_with("via NAT (hole punched)"));
    }
}

#[test]
#[ignore = "root only: NETCADE_NAT_LAB=1 cargo test --test servers -- --ignored --test-threads 1 behind_"]
fn behind_fully_random_routers_the_players_meet_through_the_relay_and_play_in_sync() {
    let reports = lab_match(Masquerade::FullyRandom);
    for report in &reports {
        assert_eq!(report.value("mapping"), "symmetric");
        assert!(
            report.value("path").starts_with("relay lab +"),
            "{}",
            report.value("path")
        );
    }
}

/// Two `netcade` processes behind the lab's NATs that know only the room
/// code the host printed (the host with `host_extra` too): each one's
/// `--json` summary.
fn room_match(
    masquerade: Masquerade,
    mapping: &str,
    host_extra: &[&str],
) -> [serde_json::Value; 2] {
    let (players, _) = room_match_watched(masquerade, mapping, host_extra, false);
    players
}

/// [`room_match`], and with `spectator` a third `netcade` behind its own
/// NAT that watches by the room code: its summary too, once it watched to
/// the end on the host's checksums.
fn room_match_watched(
    masquerade: Masquerade,
    mapping: &str,
    host_extra: &[&str],
    spectator: bool,
) -> ([serde_json::Value; 2], Option<serde_json::Value>) {
    let mut lab = Lab::new(masquerade);
    if spectator {
        lab.add_third_home(masquerade);
    }
    let (players, watched) = room_match_in(&mut lab, mapping, host_extra, &[], spectator);
    for (who, summary) in ["host", "joiner"].iter().zip(&players) {
        print_time_to_connect(who, summary);
    }
    if let Some(summary) = &watched {
        print_time_to_connect("spectator", summary);
    }
    (players, watched)
}

/// [`room_match_watched`] in `lab`, the host with `host_env` too.
fn room_match_in(
    lab: &mut Lab,
    mapping: &str,
    host_extra: &[&str],
    host_env: &[(&str, &std::ffi::OsStr)],
    spectator: bool,
) -> ([serde_json::Value; 2], Option<serde_json::Value>) {
    let homes: &[&str] = if spectator {
        &["ha", "hb", "hc"]
    } else {
        &["ha", "hb"]
    };
    for &home in homes {
        assert_eq!(
            lab.measured_mapping(home),
            mapping,
            "the NAT in front of {home}"
        );
    }
    lab.start_signaling();
    let config = lab.server_list();
    let env = [("NETCADE_CONFIG_DIR", config.as_os_str())];
    let rom = support::dojo_arena();
    let game = ["--core", "duel", "--rom", &rom, "--headless", "--no-record"];
    // A spectator met after the player needs a longer match to watch.
    let frames = if spectator { "600" } else { "300" };
    let common = [&game[..], &["--frames", frames, "--json"]].concat();
    let timeout = Duration::from_secs(120);
    let host_args = [
        &["host", "--port", "0", "--room", "--inputs", "random:1"][..],
        host_extra,
        &common,
    ]
    .concat();
    let mut host =
        spawn_netcade_in_netns(&lab.ns("ha"), &host_args, &[&env[..], host_env].concat());
    let code = support::cli::room_code(&mut host);
    let join_args = [
        &["join", "--room", &code, "--inputs", "random:2"][..],
        &common,
    ]
    .concat();
    let join = spawn_netcade_in_netns(&lab.ns("hb"), &join_args, &env);
    let watch = spectator.then(|| {
        let watch_args = [&["spectate", "--room", &code][..], &common].concat();
        spawn_netcade_in_netns(&lab.ns("hc"), &watch_args, &env)
    });
    // The joiner first: when the host waits on, what the joiner said is
    // the story.
    let joined = join.finish_within(timeout);
    let hosted = host.finish_within(timeout);
    let players = match (hosted, joined) {
        (Ok(host), Ok(join)) if host.status.success() && join.status.success() => [host, join],
        (host, join) => {
            let told = |ran: Result<Output, String>| match ran {
                Ok(out) => format!("{}\n{}\n{}", out.status, stdout(&out), stderr(&out)),
                Err(still_ran) => format!("still ran after {timeout:?}; {still_ran}"),
            };
            panic!(
                "the room match failed\nhost: {}\njoiner: {}",
                told(host),
                told(join)
            )
        }
    };
    let summaries = players.each_ref().map(last_json);
    for kind in ["memory", "video"] {
        assert!(summaries[0]["checksums"][kind].is_string());
        assert_eq!(
            summaries[0]["checksums"][kind],
            summaries[1]["checksums"][kind]
        );
    }
    for summary in &summaries {
        assert_eq!(summary["netplay"]["desyncs"], 0, "{summary}");
    }
    let watched = watch.map(|watch| {
        let watched = watch.finish_within(timeout).expect("the spectator ends");
        assert!(
            watched.status.success(),
            "the spectator failed: {}\n{}\n{}\nthe host said: {}",
            watched.status,
            stdout(&watched),
            stderr(&watched),
            stderr(&players[0])
        );
        let summary = last_json(&watched);
        assert_eq!(summary["end"], "finished", "{summary}");
        assert_eq!(summary["checksums"], summaries[0]["checksums"], "{summary}");
        summary
    });
    (summaries, watched)
}

/// For scripts/room-connect-time: `who`'s path and time to connect.
fn print_time_to_connect(who: &str, summary: &serde_json::Value) {
    let path = &summary["netplay"]["path"];
    println!(
        "lab room: {who} {} time_to_connect_ms {}",
        path["kind"].as_str().unwrap_or("none"),
        path["time_to_connect_ms"]
    );
}

#[test]
#[ignore = "root only: NETCADE_NAT_LAB=1 cargo test --test servers -- --ignored --test-threads 1 behind_"]
fn behind_masquerading_routers_two_netcade_processes_meet_by_room_code_and_punch_a_hole() {
    for summary in room_match(Masquerade::Plain, "endpoint-independent", &[]) {
        let path = &summary["netplay"]["path"];
        assert_eq!(path["kind"], "hole_punched", "{path}");
    }
}

#[test]
#[ignore = "root only: NETCADE_NAT_LAB=1 cargo test --test servers -- --ignored --test-threads 1 behind_"]
fn behind_fully_random_routers_two_netcade_processes_meet_by_room_code_through_the_relay() {
    for summary in room_match(Masquerade::FullyRandom, "symmetric", &[]) {
        let path = &summary["netplay"]["path"];
        assert_eq!(path["kind"], "relay", "{path}");
        assert_eq!(path["relay"], "lab", "{path}");
    }
}

#[test]
#[ignore = "root only: NETCADE_NAT_LAB=1 cargo test --test servers -- --ignored --test-threads 1 behind_"]
fn behind_masquerading_routers_a_spectator_in_a_third_home_watches_a_room_match_through_a_hole() {
    let (players, watched) =
        room_match_watched(Masquerade::Plain, "endpoint-independent", &[], true);
    for summary in players.iter().chain(&watched) {
        let path = &summary["netplay"]["path"];
        assert_eq!(path["kind"], "hole_punched", "{path}");
    }
}

#[test]
#[ignore = "root only: NETCADE_NAT_LAB=1 cargo test --test servers -- --ignored --test-threads 1 behind_"]
fn behind_fully_random_routers_a_spectator_in_a_third_home_watches_a_room_match_through_its_relay()
{
    let (players, watched) = room_match_watched(Masquerade::FullyRandom, "symmetric", &[], true);
    for summary in players.iter().chain(&watched) {
        let path = &summary["netplay"]["path"];
        assert_eq!(path["kind"], "relay", "{path}");
    }
}

#[test]
#[ignore = "root only: NETCADE_NAT_LAB=1 cargo test --test servers -- --ignored --test-threads 1 behind_"]
fn behind_masquerading_routers_a_joiner_the_host_refuses_once_asks_again_over_the_same_hole() {
    // The joiner proposes no delay floor; the host's refusal carries its
    // own, and the joiner asks again with it, over the path ICE found.
    for summary in room_match(
        Masquerade::Plain,
        "endpoint-independent",
        &["--min-delay", "2"],
    ) {
        let path = &summary["netplay"]["path"];
        assert_eq!(path["kind"], "hole_punched", "{path}");
    }
}

#[test]
#[ignore = "root only: NETCADE_NAT_LAB=1 cargo test --test servers -- --ignored --test-threads 1 behind_"]
fn behind_fully_random_routers_a_joiner_the_host_refuses_once_asks_again_through_the_same_relay() {
    let host_extra = ["--min-delay", "2"];
    for summary in room_match(Masquerade::FullyRandom, "symmetric", &host_extra) {
        let path = &summary["netplay"]["path"];
        assert_eq!(path["kind"], "relay", "{path}");
    }
}

/// A room match whose host's router runs miniupnpd speaking `speaks`,
/// both routers `masquerade fully-random` (which alone sends them through
/// the relay), the host asking for a port mapping: the joiner reaches the
/// host on the mapped port, and the mapping is gone after the match.
#[cfg(all(feature = "natpmp", feature = "upnp"))]
fn mapped_room_match(speaks: Speaks, protocol: &str) {
    let mut lab = Lab::with_miniupnpd(Masquerade::FullyRandom, speaks);
    let ask = [("NETCADE_NO_PORT_MAPPING", std::ffi::OsStr::new("0"))];
    let ([host, joiner], _) = room_match_in(&mut lab, "symmetric", &[], &ask, false);
    let mapped = &host["netplay"]["path"]["port_mapping"];
    assert_eq!(
        mapped["protocol"],
        protocol,
        "{mapped}\n{}",
        lab.miniupnpd_log()
    );
    let external = mapped["external"].as_str().unwrap_or_default();
    assert!(
        external.starts_with(&format!("{MINIUPNPD_WAN}.2:")),
        "{mapped}"
    );
    println!(
        "lab mapping: {protocol} time_to_map_ms {}",
        mapped["time_to_map_ms"]
    );
    let path = &joiner["netplay"]["path"];
    assert_eq!(path["kind"], "port_mapped", "{path}");
    // The host's side sees the joiner's NAT's address: not a kind to count.
    print_time_to_connect("joiner", &joiner);
    assert_ne!(host["netplay"]["path"]["kind"], "relay", "{host}");
    assert_eq!(
        lab.forwarded_ports(),
        Vec::<String>::new(),
        "the mapping outlived the match"
    );
}

#[test]
#[cfg(all(feature = "natpmp", feature = "upnp"))]
#[ignore = "root only: NETCADE_NAT_LAB=1 cargo test --features upnp,natpmp --test servers -- --ignored --test-threads 1 miniupnpd"]
fn behind_fully_random_routers_a_host_mapped_by_miniupnpd_over_pcp_is_reached_by_room_code_without_the_relay(
) {
    mapped_room_match(Speaks::Pcp, "PCP");
}

#[test]
#[cfg(all(feature = "natpmp", feature = "upnp"))]
#[ignore = "root only: NETCADE_NAT_LAB=1 cargo test --features upnp,natpmp --test servers -- --ignored --test-threads 1 miniupnpd"]
fn behind_fully_random_routers_a_host_mapped_by_miniupnpd_over_upnp_is_reached_by_room_code_without_the_relay(
) {
    mapped_room_match(Speaks::Upnp, "UPnP");
}

/// The room's messages over this process's stdin and stdout.
struct PipeSignal {
    incoming: mpsc::Receiver<String>,
}

impl SignalChannel for PipeSignal {
    fn send(&mut self, message: &str) -> Result<(), SignalError> {
        println!("signal {message}");
        Ok(())
    }

    fn try_receive(&mut self) -> Result<Option<String>, SignalError> {
        match self.incoming.try_recv() {
            Ok(message) => Ok(Some(message)),
            Err(mpsc::TryRecvError::Empty) => Ok(None),
            Err(mpsc::TryRecvError::Disconnected) => Err(SignalError::PeerGone),
        }
    }
}

/// The player's side (run by the lab inside a home namespace).
#[test]
#[ignore = "the NAT lab's player, started by the lab's tests"]
fn nat_lab_player() {
    let Ok(role) = std::env::var(PLAYER_ENV) else {
        panic!("started by the NAT lab's tests, with {PLAYER_ENV}");
    };
    let me = u8::from(role == "joiner");
    println!("lab: mapping {}", measure_mapping());
    if role == "measure" {
        return;
    }
    let (to_me, incoming) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines().map_while(Result::ok) {
            let _ = to_me.send(line);
        }
    });
    let config = IceConfig {
        stun_servers: vec![SERVER_A.parse().unwrap()],
        relays: vec![RelayServer {
            name: "lab".to_owned(),
            address: SERVER_A.parse().unwrap(),
            username: TURN_USER.to_owned(),
            password: TURN_PASSWORD.to_owned(),
        }],
        policy: PathPolicy::Any,
        ..IceConfig::default()
    };
    let role = if me == 0 {
        IceRole::Controlling
    } else {
        IceRole::Controlled
    };
    let link = LinkArgs::default()
        .open(SocketAddr::from(([0, 0, 0, 0], GAME_PORT)))
        .unwrap();
    let (mut link, path) = connect_ice(link, &mut PipeSignal { incoming }, config, role).unwrap();
    println!("lab: path {}", path.describe());
    let mut machine = duel_player(me, path.remote, FRAMES);
    let mut hooks = MachineNotes::default();
    let mut clock = MonotonicClock::new();
    let mut finished_at = None;
    // Real time: a second beyond the last frame lets its inputs be confirmed.
    while finished_at.is_none_or(|at: Instant| at.elapsed() < Duration::from_secs(1)) {
        assert!(clock.now_us() < 60_000_000, "the match stalled");
        NetplayMachine::tick(&mut machine, clock.now_us(), 1.0, &mut link, &mut hooks).unwrap();
        if machine.current_frame() >= FRAMES && finished_at.is_none() {
            finished_at = Some(Instant::now());
        }
        link.wait(Duration::from_millis(1));
    }
    let checksums: Vec<String> = machine
        .sink
        .checksums()
        .take(COMPARED_FRAMES)
        .map(|checksum| checksum.map_or("-".to_owned(), |c| format!("{:016x}", c.0)))
        .collect();
    println!("lab: checksums {}", checksums.join(","));
}

/// Whether this home's NAT shows two servers the same public port for one
/// socket (asked until coturn answers, at most about 10 s).
fn measure_mapping() -> &'static str {
    let socket = UdpSocket::bind(("0.0.0.0", GAME_PORT)).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let seen: Vec<SocketAddr> = [SERVER_A, SERVER_B]
        .iter()
        .map(|server| {
            (0..50)
                .find_map(|_| stun_binding(&socket, server.parse().unwrap()))
                .unwrap_or_else(|| panic!("{server} never answered"))
        })
        .collect();
    if seen[0] == seen[1] {
        "endpoint-independent"
    } else {
        "symmetric"
    }
}

/// One STUN binding request: the XOR-MAPPED-ADDRESS (IPv4) answered.
fn stun_binding(socket: &UdpSocket, server: SocketAddr) -> Option<SocketAddr> {
    let mut request = vec![0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xA4, 0x42];
    request.extend_from_slice(b"nat-lab-test");
    socket.send_to(&request, server).ok()?;
    let mut answer = [0u8; 512];
    let (length, from) = socket.recv_from(&mut answer).ok()?;
    // A late answer from the other server (to a request sent again while
    // coturn was slow) would make a symmetric NAT look cone: not this one's.
    if from != server {
        return None;
    }
    let mut attributes = answer.get(20..length)?;
    while attributes.len() >= 4 {
        let kind = u16::from_be_bytes([attributes[0], attributes[1]]);
        let size = usize::from(u16::from_be_bytes([attributes[2], attributes[3]]));
        let value = attributes.get(4..4 + size)?;
        if kind == 0x0020 && size == 8 {
            let port = u16::from_be_bytes([value[2], value[3]]) ^ 0x2112;
            let ip = [
                value[4] ^ 0x21,
                value[5] ^ 0x12,
                value[6] ^ 0xA4,
                value[7] ^ 0x42,
            ];
            return Some(SocketAddr::new(IpAddr::from(ip), port));
        }
        attributes = attributes.get(4 + size.next_multiple_of(4)..)?;
    }
    None
}
