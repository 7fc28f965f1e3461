//! The command-line switches choosing a socket transport and the link
//! conditioner over it ([`LinkArgs`], flattened into the netplay commands),
//! and the transport they build ([`LinkTransport`]).

use super::conditioner::ConditionedTransport;
use super::ice::{IceConfig, IceConnector, IceError, IcePath, IceRole, IceTransport};
use super::laminar::LaminarTransport;
use super::signal::SignalChannel;
use super::sim::LinkConditions;
use super::udp::UdpTransport;
use super::{MicrosClock, MonotonicClock, NetError, Transport, WireStats};
use std::net::SocketAddr;

/// Which socket carries the datagrams.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum TransportKind {
    /// A plain non-blocking UDP socket: no bytes added to the protocol's own.
    #[default]
    Udp,
    /// laminar 0.5's socket, unreliable and unordered (5 header bytes a datagram).
    Laminar,
}

/// How to reach peers: the socket transport and, for testing over real
/// sockets, faults applied to every outgoing datagram.
#[derive(Clone, Debug, PartialEq, clap::Args)]
pub struct LinkArgs {
    /// Socket transport.
    #[arg(long, value_enum, default_value_t = TransportKind::Udp)]
    pub transport: TransportKind,
    /// Test aid: delays each outgoing datagram by this many milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 0, value_parser = milliseconds())]
    pub sim_latency: u64,
    /// Test aid: varies each outgoing datagram's delay by up to ± this many milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 0, value_parser = milliseconds())]
    pub sim_jitter: u64,
    /// Test aid: loses this percentage of outgoing datagrams.
    #[arg(long, value_name = "PCT", default_value_t = 0.0, value_parser = percentage)]
    pub sim_loss: f64,
    /// Test aid: sends this percentage of outgoing datagrams twice.
    #[arg(long, value_name = "PCT", default_value_t = 0.0, value_parser = percentage)]
    pub sim_dup: f64,
    /// Test aid: holds back this percentage of outgoing datagrams so later ones overtake them.
    #[arg(long, value_name = "PCT", default_value_t = 0.0, value_parser = percentage)]
    pub sim_reorder: f64,
    /// Seed choosing which datagrams the --sim-* faults hit.
    #[arg(long, value_name = "SEED", default_value_t = 1)]
    pub sim_seed: u64,
}

impl Default for LinkArgs {
    fn default() -> Self {
        LinkArgs {
            transport: TransportKind::Udp,
            sim_latency: 0,
            sim_jitter: 0,
            sim_loss: 0.0,
            sim_dup: 0.0,
            sim_reorder: 0.0,
            sim_seed: 1,
        }
    }
}

/// Longest simulated delay: a minute is far beyond any link netplay survives.
const MAX_SIMULATED_DELAY_MS: u64 = 60_000;

/// Milliseconds from 0 to [`MAX_SIMULATED_DELAY_MS`].
fn milliseconds() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(0..=MAX_SIMULATED_DELAY_MS)
}

/// A percentage from 0 to 100.
fn percentage(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if (0.0..=100.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{text} is not a percentage from 0 to 100"))
    }
}

impl LinkArgs {
    /// The faults the `--sim-*` switches ask for (perfect when none is given).
    pub fn conditions(&self) -> LinkConditions {
        LinkConditions::latency(self.sim_latency)
            .with_jitter(self.sim_jitter)
            .with_loss(self.sim_loss / 100.0)
            .with_duplication(self.sim_dup / 100.0)
            .with_reordering(self.sim_reorder / 100.0)
    }

    /// Binds the chosen transport at `address` (port 0 picks a free port)
    /// behind the conditioner.
    pub fn open(&self, address: SocketAddr) -> Result<LinkTransport, NetError> {
        Ok(ConditionedTransport::new(
            SocketTransport::bind(self.transport, address)?,
            self.conditions(),
            self.sim_seed,
            MonotonicClock::new(),
        ))
    }
}

/// What [`LinkArgs::open`] builds: the chosen socket behind the conditioner
/// (which passes datagrams straight through when no fault is asked for).
pub type LinkTransport = ConditionedTransport<SocketTransport, MonotonicClock>;

/// One of the socket transports.
pub enum SocketTransport {
    /// Plain UDP.
    Udp(UdpTransport),
    /// laminar's socket.
    Laminar(Box<LaminarTransport>),
    /// A UDP socket carrying the path ICE chose ([`connect_ice`]).
    Ice(Box<IceTransport<UdpTransport, MonotonicClock>>),
}

/// Why [`connect_ice`] found no path, with the link it was given: the
/// socket outlives a failed opponent.
pub struct IceFailure {
    /// Why.
    pub error: Box<IceError>,
    /// The link, as it was before connecting.
    pub link: Box<LinkTransport>,
}

impl std::fmt::Debug for IceFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IceFailure({:?})", self.error)
    }
}

impl std::fmt::Display for IceFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

/// Finds a path to the opponent with ICE over `link`'s UDP socket (the
/// candidates go through `signal`) and returns the same socket carrying it,
/// for the handshake to use with [`IcePath::remote`] as the opponent's
/// address; on failure, the link comes back untouched beside the error.
pub fn connect_ice(
    link: LinkTransport,
    signal: &mut dyn SignalChannel,
    config: IceConfig,
    role: IceRole,
) -> Result<(LinkTransport, IcePath), IceFailure> {
    let met = on_ice_socket(link, config, |socket| {
        let credentials = super::ice::random_credentials();
        let now_us = socket.clock.now_us();
        let mut connector =
            IceConnector::new(socket.local, socket.config, role, credentials, now_us);
        connector.connect(socket.udp, signal, socket.clock)?;
        Ok(Some(connector))
    })?;
    match met {
        (link, Some(path)) => Ok((link, path)),
        (_, None) => unreachable!("connecting returns a path or an error"),
    }
}

/// What ICE on a game socket starts from.
pub struct IceSocket<'a> {
    /// The plain UDP socket.
    pub udp: &'a mut UdpTransport,
    /// The address its host candidate is reached at.
    pub local: SocketAddr,
    /// The servers and rules, with the router's port mapping.
    pub config: IceConfig,
    /// The clock the connectors run on (their transport keeps it).
    pub clock: &'a mut MonotonicClock,
}

/// Runs `meet` on `link`'s UDP socket, which returns the connector whose
/// path the match takes (or `None`: the socket stays plain UDP), and
/// returns the link carrying that path. With feature `natpmp` or `upnp` and
/// [`IceConfig::port_mapping`] the router is asked to forward the port
/// first, and the mapping lasts as long as the path. The `--sim-*` faults apply to the match, not to the checks. On
/// failure, the link comes back untouched beside the error.
pub fn on_ice_socket(
    link: LinkTransport,
    config: IceConfig,
    meet: impl FnOnce(IceSocket<'_>) -> Result<Option<IceConnector>, IceError>,
) -> Result<(LinkTransport, Option<IcePath>), IceFailure> {
    let mut chosen = None;
    let replaced = link.try_replace_inner(|socket| {
        let SocketTransport::Udp(mut udp) = socket else {
            return Err((IceError::NeedsUdp, socket));
        };
        let Ok(bound) = udp.local_address() else {
            return Err((IceError::NeedsUdp, SocketTransport::Udp(udp)));
        };
        let mut clock = MonotonicClock::new();
        let local = super::ice::reachable_address(bound);
        // Best effort: a router's mapping is one more candidate, no more.
        let asked_at = std::time::Instant::now();
        let mapping = config
            .port_mapping
            .then(|| match super::port_mapping::map_game_port(local) {
                Ok(mapping) => Some(mapping),
                Err(error) => {
                    tracing::info!("{error}");
                    None
                }
            })
            .flatten();
        let mapped_port = mapping.as_ref().map(|mapping| {
            let mapped = super::ice::MappedPort {
                protocol: mapping.protocol(),
                external: mapping.external(),
                time_to_map: asked_at.elapsed(),
            };
            tracing::info!(
                "{} forwards {} to {local} (asked in {:?})",
                mapped.protocol,
                mapped.external,
                mapped.time_to_map
            );
            mapped
        });
        let config = IceConfig {
            mapped_address: config
                .mapped_address
                .or(mapping.as_ref().map(|mapping| mapping.external())),
            ..config
        };
        let socket = IceSocket {
            udp: &mut udp,
            local,
            config,
            clock: &mut clock,
        };
        let connector = match meet(socket) {
            Ok(Some(connector)) => connector,
            Ok(None) => return Ok(SocketTransport::Udp(udp)),
            Err(error) => return Err((error, SocketTransport::Udp(udp))),
        };
        let mut path_transport = connector.into_transport(udp, clock);
        if let Some((mapping, mapped)) = mapping.zip(mapped_port) {
            path_transport.hold_port_mapping(mapping, mapped);
        }
        chosen = Some(path_transport.path().clone());
        Ok(SocketTransport::Ice(Box::new(path_transport)))
    });
    match replaced {
        Ok(link) => Ok((link, chosen)),
        Err((error, link)) => Err(IceFailure {
            error: Box::new(error),
            link,
        }),
    }
}

impl SocketTransport {
    /// Binds a `kind` socket at `address` (port 0 picks a free port).
    pub fn bind(kind: TransportKind, address: SocketAddr) -> Result<Self, NetError> {
        Ok(match kind {
            TransportKind::Udp => SocketTransport::Udp(
                UdpTransport::bind(address).map_err(|source| NetError::Bind { address, source })?,
            ),
            TransportKind::Laminar => {
                SocketTransport::Laminar(Box::new(LaminarTransport::bind(address)?))
            }
        })
    }

    /// The address peers reach this socket at.
    pub fn local_address(&self) -> SocketAddr {
        match self {
            SocketTransport::Udp(udp) => udp
                .local_address()
                .expect("a bound UDP socket has a local address"),
            SocketTransport::Laminar(laminar) => laminar.local_address(),
            SocketTransport::Ice(ice) => ice
                .inner()
                .local_address()
                .expect("a bound UDP socket has a local address"),
        }
    }

    /// Meets `guests` beside the match on this socket's path (false, and
    /// nobody is met, on a socket ICE chose no path for).
    pub fn welcome_guests(
        &mut self,
        guests: impl crate::net::ice::BesideTheMatch + 'static,
    ) -> bool {
        match self {
            SocketTransport::Ice(ice) => {
                ice.welcome_guests(Box::new(guests));
                true
            }
            _ => false,
        }
    }

    /// The path ICE chose, when it chose this socket's.
    pub fn ice_path(&self) -> Option<&IcePath> {
        match self {
            SocketTransport::Ice(ice) => Some(ice.path()),
            _ => None,
        }
    }

    /// What the path's relay framing added to the protocol's datagrams so
    /// far (a path ICE chose; `None` on a plain socket).
    pub fn path_stats(&self) -> Option<crate::net::ice::PathStats> {
        match self {
            SocketTransport::Ice(ice) => Some(ice.path_stats()),
            _ => None,
        }
    }

    /// What the socket sent and received so far (transport headers included).
    pub fn wire_stats(&self) -> WireStats {
        match self {
            SocketTransport::Udp(udp) => udp.wire_stats(),
            SocketTransport::Laminar(laminar) => laminar.wire_stats(),
            SocketTransport::Ice(ice) => ice.inner().wire_stats(),
        }
    }
}

impl Transport for SocketTransport {
    type Address = SocketAddr;

    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        match self {
            SocketTransport::Udp(udp) => udp.send(to, datagram),
            SocketTransport::Laminar(laminar) => laminar.send(to, datagram),
            SocketTransport::Ice(ice) => ice.send(to, datagram),
        }
    }

    fn receive(&mut self, into: &mut Vec<u8>) -> Option<SocketAddr> {
        match self {
            SocketTransport::Udp(udp) => udp.receive(into),
            SocketTransport::Laminar(laminar) => laminar.receive(into),
            SocketTransport::Ice(ice) => ice.receive(into),
        }
    }

    fn wait(&mut self, timeout: std::time::Duration) {
        match self {
            SocketTransport::Udp(udp) => udp.wait(timeout),
            SocketTransport::Ice(ice) => ice.wait(timeout),
            // laminar reads its socket only when polled: look every
            // millisecond, as before there was a way to wait.
            SocketTransport::Laminar(_) => {
                std::thread::sleep(timeout.min(std::time::Duration::from_millis(1)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Command {
        #[command(flatten)]
        link: LinkArgs,
    }

    fn parse(args: &[&str]) -> Result<LinkArgs, clap::Error> {
        Command::try_parse_from(std::iter::once("netcade").chain(args.iter().copied()))
            .map(|command| command.link)
    }

    #[test]
    fn without_switches_the_link_is_plain_udp_with_no_faults() {
        let link = parse(&[]).unwrap();
        assert_eq!(link, LinkArgs::default());
        assert_eq!(link.conditions(), LinkConditions::PERFECT);
    }

    #[test]
    fn the_sim_switches_become_the_fault_model_in_fractions() {
        let link = parse(&[
            "--transport",
            "laminar",
            "--sim-latency",
            "50",
            "--sim-jitter",
            "10",
            "--sim-loss",
            "5",
            "--sim-dup",
            "1",
            "--sim-reorder",
            "2.5",
        ])
        .unwrap();
        assert_eq!(link.transport, TransportKind::Laminar);
        assert_eq!(
            link.conditions(),
            LinkConditions::latency(50)
                .with_jitter(10)
                .with_loss(0.05)
                .with_duplication(0.01)
                .with_reordering(0.025)
        );
    }

    #[test]
    fn a_percentage_over_a_hundred_is_refused_with_its_name() {
        let error = parse(&["--sim-loss", "150"]).unwrap_err().to_string();
        assert!(error.contains("--sim-loss"), "{error}");
        assert!(error.contains("not a percentage from 0 to 100"), "{error}");
        assert!(parse(&["--sim-dup", "-1"]).is_err());
        let error = parse(&["--sim-latency", "99999999999999999"])
            .unwrap_err()
            .to_string();
        assert!(error.contains("--sim-latency"), "{error}");
        assert!(parse(&["--sim-jitter", "60001"]).is_err());
        assert!(parse(&["--sim-jitter", "60000"]).is_ok());
        assert!(parse(&["--transport", "tcp"]).is_err());
    }

    #[test]
    fn each_transport_opens_on_a_free_port_and_reaches_the_other() {
        let loopback: SocketAddr = "127.0.0.1:0".parse().unwrap();
        for kind in [TransportKind::Udp, TransportKind::Laminar] {
            let link = LinkArgs {
                transport: kind,
                ..LinkArgs::default()
            };
            let mut a = link.open(loopback).unwrap();
            let mut b = link.open(loopback).unwrap();
            let to = b.inner().local_address();
            assert_ne!(to.port(), 0);
            a.send(to, b"over the link");
            let mut received = Vec::new();
            let from = (0..1_000_000).find_map(|_| b.receive(&mut received));
            assert_eq!(from, Some(a.inner().local_address()), "{kind:?}");
            assert_eq!(received, b"over the link");
        }
    }

    #[test]
    fn a_link_transport_can_move_to_the_thread_that_runs_its_loop() {
        fn movable<T: Send + 'static>(_: &T) {}
        let link = LinkArgs {
            transport: TransportKind::Laminar,
            ..LinkArgs::default()
        };
        let transport = link.open("127.0.0.1:0".parse().unwrap()).unwrap();
        movable(&transport);
        std::thread::spawn(move || transport.inner().local_address())
            .join()
            .unwrap();
    }

    #[test]
    fn a_busy_port_is_a_bind_error_naming_the_address() {
        let first = LinkArgs::default()
            .open("127.0.0.1:0".parse().unwrap())
            .unwrap();
        let taken = first.inner().local_address();
        for kind in [TransportKind::Udp, TransportKind::Laminar] {
            let link = LinkArgs {
                transport: kind,
                ..LinkArgs::default()
            };
            let Err(error) = link.open(taken) else {
                panic!("{kind:?} bound a busy port");
            };
            assert!(error.to_string().contains(&taken.to_string()), "{error}");
        }
    }

    /// Messages to the other thread's side, over channels.
    struct ThreadSignal {
        to: std::sync::mpsc::Sender<String>,
        from: std::sync::mpsc::Receiver<String>,
    }

    impl SignalChannel for ThreadSignal {
        fn send(&mut self, message: &str) -> Result<(), crate::net::signal::SignalError> {
            let _ = self.to.send(message.to_owned());
            Ok(())
        }

        fn try_receive(&mut self) -> Result<Option<String>, crate::net::signal::SignalError> {
            Ok(self.from.try_recv().ok())
        }
    }

    #[test]
    fn ice_turns_two_game_sockets_into_a_path_that_carries_the_match_and_names_itself() {
        let (to_joiner, from_host) = std::sync::mpsc::channel();
        let (to_host, from_joiner) = std::sync::mpsc::channel();
        let sides = [
            (
                IceRole::Controlling,
                ThreadSignal {
                    to: to_joiner,
                    from: from_joiner,
                },
            ),
            (
                IceRole::Controlled,
                ThreadSignal {
                    to: to_host,
                    from: from_host,
                },
            ),
        ];
        let threads = sides.map(|(role, mut signal)| {
            std::thread::spawn(move || {
                let link = LinkArgs::default()
                    .open("127.0.0.1:0".parse().unwrap())
                    .unwrap();
                let (mut link, path) =
                    connect_ice(link, &mut signal, IceConfig::default(), role).unwrap();
                link.send(path.remote, b"nc over the path");
                let mut received = Vec::new();
                let from = (0..10_000).find_map(|_| {
                    link.wait(std::time::Duration::from_millis(1));
                    link.receive(&mut received)
                });
                assert_eq!(from, Some(path.remote));
                assert_eq!(received, b"nc over the path");
                assert_eq!(link.inner().ice_path(), Some(&path));
                path
            })
        });
        for thread in threads {
            let path = thread.join().unwrap();
            assert_eq!(path.kind, crate::net::ice::PathKind::Direct);
        }
    }

    #[test]
    fn ice_over_laminar_is_refused_with_what_to_use() {
        let link = LinkArgs {
            transport: TransportKind::Laminar,
            ..LinkArgs::default()
        };
        let transport = link.open("127.0.0.1:0".parse().unwrap()).unwrap();
        let (to, from) = std::sync::mpsc::channel();
        let mut signal = ThreadSignal { to, from };
        let Err(error) = connect_ice(
            transport,
            &mut signal,
            IceConfig::default(),
            IceRole::Controlled,
        ) else {
            panic!("ICE ran over laminar");
        };
        assert!(error.to_string().contains("--transport udp"), "{error}");
    }
}
