//! Meeting through a room instead of an address ([rooms.md](../../../../docs/rooms.md)):
//! machines enter a room of the signaling server (`host --room` prints its
//! code; `join --quick` queues with players of the same game), greet each
//! other with a [`Hello`] (what they are, their game, the addresses of
//! their game socket), and two players then find their path with ICE
//! through the room ([ice.md](../../../../docs/ice.md)): the host controls,
//! the joiner follows; the host meets every player that says hello at
//! once on its one socket ([`MeetingSocket`]), and the match keeps one
//! agent, its player's. A spectator finds its path the same way, and the
//! host meets it beside the match on that socket ([`Guests`]).
//!
//! Rooms are named by protocol version: a room code's room is open to any
//! game, so a joiner of another game hears the host's hello and is refused
//! before any datagram, with the handshake's message; a quick-match room is
//! named by the game too, so different games never pair.
//!
//! The host stays in its room through the match (a thread greets each
//! newcomer and passes what spectators say to their meetings); a joiner leaves after the handshake, a
//! spectator once welcomed. A host that never answers the handshake costs
//! either one try of the room's hosts ([`NextHost`]).

mod code;
mod hello;
mod mesh;
mod servers;

pub use code::RoomCode;
pub use hello::{Hello, RoomRole};
pub(crate) use mesh::PATHS_BY_ICE;
pub use servers::{RegionServer, ServerList, TurnUrl, DEFAULT_SERVERS, SERVER_LIST_FILE};

use crate::engine::{AppError, Game, GameArgs};
use crate::live::connect::{
    bind_ipv4, connect_timeout, connect_to_host, content_hash, random_bytes,
};
use crate::live::front_end::ConnectStep;
use crate::net::ice::meetings::{Admission, MeetingLimits};
use crate::net::ice::{
    GuestEvent, GuestLine, GuestNews, Guests, IceConfig, IceError, IceRole, MeetingEnd,
    MeetingOutcome, MeetingSocket, PathPolicy,
};
use crate::net::link::{
    connect_ice, on_ice_socket, IceFailure, IceSocket, LinkArgs, LinkTransport,
};
use crate::net::room::{PeerId, RoomClient, RoomEvent, SignalServer};
use crate::net::signal::SignalError;
use crate::net::{MicrosClock, Transport};
use netcode::checksum::Checksum;
use netcode::protocol::{Identity, Rejection, RoomPassword, PROTOCOL_VERSION};
use std::collections::BTreeSet;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long entering a room may take (reaching the server, its answer).
const ENTER_TIMEOUT: Duration = Duration::from_secs(10);

/// How many players a room's host meets at once, how many more wait for a
/// slot, and how long each has: a peer posing as a player (its hello costs
/// nothing) holds one slot until its deadline, never the host.
const MEETING_LIMITS: MeetingLimits = MeetingLimits {
    max_meetings: 8,
    max_waiting: 32,
    connect_within: Duration::from_secs(16),
    handshake_within: Duration::from_secs(5),
};

/// How much longer than ICE's own deadline a meeting may last (ICE's gives
/// the reason; this bound backs it).
const MEETING_MARGIN: Duration = Duration::from_secs(1);

/// How long the meeting host waits on its socket between steps: checks
/// pace themselves in tens of milliseconds.
const MEETING_POLL: Duration = Duration::from_millis(5);

/// Room events handled per meeting step.
const ROOM_EVENTS_PER_STEP: usize = 64;

/// How often a quiet room connection says it is still there (proxies in
/// front of a signaling server close idle WebSockets after a minute or so).
const KEEP_ALIVE_EVERY: Duration = Duration::from_secs(20);

/// How many spectators a room's host meets beside its match at once, how
/// many more wait for a slot, and how long each has (set from ICE's own
/// deadline as a player's is).
const GUEST_LIMITS: MeetingLimits = MeetingLimits {
    max_meetings: 4,
    max_waiting: 16,
    connect_within: Duration::from_secs(16),
    handshake_within: Duration::from_secs(5),
};

/// What the host keeps of spectators who came before its player: their
/// hellos and ICE messages, a few meetings' worth.
const EARLY_GUEST_EVENTS: usize = 256;

/// How long the host's room thread waits for an event before it passes on
/// what the spectators' meetings said: ICE's messages go out within it.
const GUEST_POLL: Duration = Duration::from_millis(5);

/// What a host whose room went away says once.
const ROOM_GONE: &str = "new players cannot find this match through its room";

/// How often a machine waiting in a room looks whether Ctrl-C was pressed.
const INTERRUPT_POLL: Duration = Duration::from_millis(200);

/// How much longer a joiner that heard only a host of another game keeps
/// looking for one of its own: the peers of a room greet a newcomer at
/// once, so the real host has answered well within it.
const OTHER_GAME_GRACE: Duration = Duration::from_secs(2);

/// How long a joiner or spectator that found a room's host waits for the
/// handshake's answer before it tries the room's next host: the host
/// answers as soon as the first datagram reaches it.
const HOST_HANDSHAKE_WITHIN: Duration = Duration::from_secs(5);

/// How long a quick-match player waits for its partner's hello, from
/// entering the queue or greeting a newcomer, before it queues again: the
/// peers the server groups greet each other at once, so a partner silent
/// this long never will speak.
const QUICK_SILENCE: Duration = Duration::from_secs(10);

/// The most hosts of its game a joiner tries before its search ends: a peer
/// posing as the host costs the real joiner one failed path, a few of them
/// a bounded wait.
const MAX_HOSTS_TRIED: u32 = 3;

/// The most peers a machine remembers having greeted.
const MAX_GREETED: usize = 1024;

/// `--signal`: the server rooms meet on.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct SignalArgs {
    /// The signaling server (an unmodified matchbox_server) of --room and
    /// --quick [default: the `signal` line of servers.txt in netcade's
    /// config directory, else ws://127.0.0.1:3536].
    #[arg(long, value_name = "ws://HOST:PORT")]
    pub signal: Option<SignalServer>,
    /// The TURN relay two players of a room fall back on when no direct
    /// or hole-punched path works [default: the `turn` lines of
    /// servers.txt].
    #[arg(long, value_name = "turn:USER:PASSWORD@HOST:PORT")]
    pub turn: Option<TurnUrl>,
    /// Reach the other player of a room only through the TURN relay
    /// (hides this machine's addresses from it).
    #[arg(long)]
    pub relay_only: bool,
    /// Ask no router to forward the game socket's port (PCP, NAT-PMP,
    /// UPnP): nothing is sent to the gateway or searched for on the LAN.
    /// `NETCADE_NO_PORT_MAPPING=1` says the same (read apart from the
    /// arguments, so it never collides with a switch that stands alone,
    /// such as `spectate --list`).
    #[arg(long)]
    pub no_port_mapping: bool,
}

impl SignalArgs {
    /// The server to meet on, and where it came from (for messages).
    fn server(&self) -> Result<(SignalServer, String), AppError> {
        if let Some(server) = &self.signal {
            return Ok((server.clone(), "--signal".to_string()));
        }
        let list = ServerList::load(crate::paths::config_dir().as_deref())
            .map_err(|message| AppError::BadArgument { message })?;
        let origin = list.signal_origin();
        Ok((list.signal, origin))
    }

    /// The STUN servers and TURN relays of the server list (and `--turn`).
    pub(crate) fn ice_config(&self) -> Result<IceConfig, AppError> {
        let config = ServerList::load(crate::paths::config_dir().as_deref())
            .and_then(|list| list.ice_config(self.turn.as_ref()))
            .map_err(|message| AppError::BadArgument { message })?;
        self.with_switches(config)
    }

    /// `config` as `--relay-only` and `--no-port-mapping` say.
    fn with_switches(&self, mut config: IceConfig) -> Result<IceConfig, AppError> {
        if self.relay_only {
            if config.relays.is_empty() {
                return Err(AppError::BadArgument {
                    message: "--relay-only needs a TURN relay: give --turn turn:USER:PASSWORD@HOST:PORT or add a `turn` line to servers.txt".into(),
                });
            }
            config.policy = PathPolicy::RelayOnly;
        }
        let told_by_env = std::env::var("NETCADE_NO_PORT_MAPPING")
            .is_ok_and(|value| matches!(value.trim(), "1" | "true" | "yes" | "on"));
        config.port_mapping = !(self.no_port_mapping || told_by_env);
        Ok(config)
    }
}

/// A room code for `host --room`: the one given, else a new one.
pub fn room_code(chosen: Option<RoomCode>) -> Result<RoomCode, AppError> {
    match chosen {
        Some(code) => Ok(code),
        None => Ok(RoomCode::from_random(random_bytes()?)),
    }
}

/// The room a code names: by its first half only (see [`RoomCode::password`]).
fn code_room(code: RoomCode) -> String {
    format!("netcade{PROTOCOL_VERSION}-room-{}", code.room_part())
}

/// The quick-match queue of one game: its protocol, core and content.
pub fn quick_room(identity: &Identity) -> String {
    let mut scope = Vec::new();
    for part in [&identity.core_name, &identity.core_version] {
        scope.extend_from_slice(part.as_bytes());
        scope.push(0);
    }
    scope.extend_from_slice(&identity.content_hash.to_le_bytes());
    format!(
        "netcade{}-quick-{:016x}",
        identity.protocol_version,
        Checksum::of(&scope).0
    )
}

/// What this machine's handshake will say it is.
pub(crate) fn identity_of(game: &dyn Game, args: &GameArgs) -> Result<Identity, AppError> {
    Ok(Identity {
        protocol_version: PROTOCOL_VERSION,
        core_name: game.core_name(),
        core_version: game.core_version(),
        content_hash: content_hash(args)?,
    })
}

/// Enters `room` on the server `args` names.
fn enter(args: &SignalArgs, room: &str, group: Option<u8>) -> Result<RoomClient, AppError> {
    let (server, origin) = args.server()?;
    RoomClient::enter(&server, room, group, ENTER_TIMEOUT).map_err(|error| AppError::Room {
        message: format!(
            "cannot enter a room on the signaling server {server} ({origin}): {error}"
        ),
    })
}

/// The addresses this machine's game socket is reached at: its port on
/// the interface that reaches the signaling server, then on the one of
/// the default route (a host whose server runs beside it reaches it over
/// loopback, and its joiners over the network).
fn candidates(room: &RoomClient, transport: &LinkTransport) -> Vec<SocketAddr> {
    let port = transport.inner().local_address().port();
    let to_server = room
        .local_ip()
        .filter(|ip| !ip.is_unspecified())
        .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    let mut ips = vec![to_server];
    ips.extend(default_route_ip().filter(|ip| *ip != to_server));
    ips.into_iter()
        .map(|ip| SocketAddr::new(ip, port))
        .collect()
}

/// The address of the interface the default route leaves from: a UDP
/// socket "connected" to a documentation address (RFC 5737) sends nothing
/// but is given it.
fn default_route_ip() -> Option<IpAddr> {
    let probe = std::net::UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).ok()?;
    probe.connect((Ipv4Addr::new(192, 0, 2, 1), 9)).ok()?;
    let ip = probe.local_addr().ok()?.ip();
    (!ip.is_unspecified()).then_some(ip)
}

/// Finds the path to the player `peer` of the room with ICE over this
/// machine's game socket `transport` (the candidates go through the room):
/// the one place the path between two players that met in a room is
/// chosen. Returns the address the handshake uses and the socket carrying
/// the path; on failure, the socket as it was.
fn path_to(
    config: IceConfig,
    room: &mut RoomClient,
    peer: PeerId,
    transport: LinkTransport,
    role: IceRole,
) -> Result<(SocketAddr, LinkTransport), IceFailure> {
    let (transport, path) = connect_ice(transport, &mut room.channel_to(peer), config, role)?;
    Ok((path.remote, transport))
}

/// The server gone, as one clear line.
fn server_gone(error: SignalError, waiting_for: &str) -> AppError {
    AppError::Room {
        message: format!("{error} while waiting for {waiting_for}; nobody was paired"),
    }
}

/// Greets peers as they show themselves: arriving after us, or
/// signalling first because they were in the room before us.
struct Greeter {
    ours: String,
    greeted: BTreeSet<PeerId>,
    /// Peers whose path failed: whatever they say next is ignored.
    forgotten: BTreeSet<PeerId>,
    last_sent: Instant,
    /// When we last greeted a peer: its hello is due soon after.
    last_greeted: Option<Instant>,
    /// A greeted peer leaving is [`SignalError::PeerGone`] (a quick
    /// match's partner: the server grouped us, and will not again).
    partner_only: bool,
    /// A seated joiner's slot, said after its hello to every peer it greets
    /// (the other joiners of a match of 3 or 4 meet it by it).
    seat: Option<String>,
}

impl Greeter {
    fn new(ours: &Hello) -> Greeter {
        Greeter {
            ours: ours.encode(),
            greeted: BTreeSet::new(),
            forgotten: BTreeSet::new(),
            last_sent: Instant::now(),
            last_greeted: None,
            partner_only: ours.role == RoomRole::Quick,
            seat: None,
        }
    }

    /// Says this joiner's `slot` to every peer greeted, and to each one
    /// greeted from now on.
    fn take_seat(&mut self, room: &mut RoomClient, slot: u8) -> Result<(), SignalError> {
        let seat = mesh::seat(slot);
        for peer in &self.greeted {
            room.send(peer, &seat)?;
        }
        self.seat = Some(seat);
        Ok(())
    }

    /// Says this joiner's slot to `peer` (which said its own).
    fn tell_seat(&mut self, room: &mut RoomClient, peer: &PeerId) -> Result<(), SignalError> {
        if let Some(seat) = &self.seat {
            room.send(peer, seat)?;
        }
        Ok(())
    }

    /// Handles the room's events for up to `timeout`; returns the first
    /// hello `wanted` accepts.
    fn step(
        &mut self,
        room: &mut RoomClient,
        wanted: &dyn Fn(&Hello) -> bool,
        timeout: Duration,
    ) -> Result<Option<(PeerId, Hello)>, SignalError> {
        match self.listen(room, wanted, timeout)? {
            Heard::Hello(peer, hello) => Ok(Some((peer, hello))),
            // ICE's last messages may come after its path was found.
            Heard::Ice(..) | Heard::Seat(..) | Heard::Left(_) | Heard::Nothing => Ok(None),
        }
    }

    /// Handles the room's next event, waiting up to `timeout` for one.
    fn listen(
        &mut self,
        room: &mut RoomClient,
        wanted: &dyn Fn(&Hello) -> bool,
        timeout: Duration,
    ) -> Result<Heard, SignalError> {
        let Some(event) = room.wait(timeout)? else {
            self.keep_alive_when_due(room)?;
            return Ok(Heard::Nothing);
        };
        self.handle(room, event, wanted)
    }

    /// Handles the room's next event, if one is waiting (never waits).
    fn hear(
        &mut self,
        room: &mut RoomClient,
        wanted: &dyn Fn(&Hello) -> bool,
    ) -> Result<Option<Heard>, SignalError> {
        let Some(event) = room.poll()? else {
            self.keep_alive_when_due(room)?;
            return Ok(None);
        };
        self.handle(room, event, wanted).map(Some)
    }

    fn keep_alive_when_due(&mut self, room: &mut RoomClient) -> Result<(), SignalError> {
        if self.last_sent.elapsed() >= KEEP_ALIVE_EVERY {
            room.keep_alive()?;
            self.last_sent = Instant::now();
        }
        Ok(())
    }

    fn handle(
        &mut self,
        room: &mut RoomClient,
        event: RoomEvent,
        wanted: &dyn Fn(&Hello) -> bool,
    ) -> Result<Heard, SignalError> {
        match event {
            RoomEvent::Arrived(peer) => self.greet(room, peer)?,
            RoomEvent::Left(peer) => {
                if self.greeted.remove(&peer) && self.partner_only {
                    return Err(SignalError::PeerGone);
                }
                return Ok(Heard::Left(peer));
            }
            RoomEvent::Signal { from, .. } if self.forgotten.contains(&from) => {}
            RoomEvent::Signal { from, text } => {
                if !self.greeted.contains(&from) {
                    self.greet(room, from.clone())?;
                }
                if text.starts_with("ice-") {
                    return Ok(Heard::Ice(from, text));
                }
                if let Some(slot) = mesh::seat_of(&text) {
                    return Ok(Heard::Seat(from, slot));
                }
                match Hello::decode(&text) {
                    Ok(hello) if wanted(&hello) => return Ok(Heard::Hello(from, hello)),
                    Ok(_) => {}
                    Err(why) => tracing::warn!("ignored a message in the room from {from}: {why}"),
                }
            }
        }
        Ok(Heard::Nothing)
    }

    /// Ignores `peer` from now on (its path failed: it costs its link only).
    fn forget(&mut self, peer: PeerId) {
        if self.forgotten.len() >= MAX_GREETED {
            self.forgotten.clear();
        }
        self.forgotten.insert(peer);
    }

    fn greet(&mut self, room: &mut RoomClient, peer: PeerId) -> Result<(), SignalError> {
        room.send(&peer, &self.ours)?;
        if let Some(seat) = &self.seat {
            room.send(&peer, seat)?;
        }
        self.last_sent = Instant::now();
        self.last_greeted = Some(self.last_sent);
        // A server naming endless peers costs a few hellos sent twice,
        // never memory.
        if self.greeted.len() >= MAX_GREETED {
            self.greeted.clear();
        }
        self.greeted.insert(peer);
        Ok(())
    }
}

/// What one event of the room came to, for the one greeting it.
enum Heard {
    /// A hello the greeter wanted.
    Hello(PeerId, Hello),
    /// An ICE message of a peer not forgotten.
    Ice(PeerId, String),
    /// A joiner of a match of 3 or 4 says its slot.
    Seat(PeerId, u8),
    /// A peer left.
    Left(PeerId),
    /// Nothing to act on (a greeting sent, an unwanted hello).
    Nothing,
}

/// Greets the room until a hello `wanted` accepts comes, or `deadline`
/// passes (`None`).
fn await_hello(
    room: &mut RoomClient,
    greeter: &mut Greeter,
    wanted: impl Fn(&Hello) -> bool,
    deadline: Option<Instant>,
) -> Result<Option<(PeerId, Hello)>, SignalError> {
    loop {
        let step = match deadline {
            Some(deadline) => deadline.saturating_duration_since(Instant::now()),
            None => KEEP_ALIVE_EVERY,
        };
        if step.is_zero() || crate::live::options::interrupted() {
            return Ok(None);
        }
        let found = greeter.step(room, &wanted, step.min(INTERRUPT_POLL))?;
        if found.is_some() {
            return Ok(found);
        }
    }
}

/// Refuses a host whose game differs, with the message the handshake gives.
fn check_host(host: &Hello, ours: &Hello) -> Result<(), AppError> {
    match host.identity.mismatch(&ours.identity) {
        None => Ok(()),
        Some(reason) => Err(AppError::HandshakeRefused {
            reason: Rejection {
                reason,
                by_us: false,
                local: ours.identity.clone(),
                remote: host.identity.clone(),
                spectator: ours.role == RoomRole::Spectator,
            }
            .explanation(),
        }),
    }
}

/// The host's side of a room: a thread that greets every newcomer until
/// dropped.
pub struct HostedRoom {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for HostedRoom {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A room the host entered, its player still to come.
pub struct OpenedRoom {
    room: RoomClient,
    greeter: Greeter,
    identity: Identity,
    code: RoomCode,
    /// The match's players, the host included.
    players: u8,
}

/// Opens the room `code` for the match whose game socket is `transport`.
pub(crate) fn host_room(
    args: &SignalArgs,
    code: RoomCode,
    identity: Identity,
    players: u8,
    transport: &LinkTransport,
) -> Result<OpenedRoom, AppError> {
    let room = enter(args, &code_room(code), None)?;
    let hello = Hello {
        role: RoomRole::Host,
        identity: identity.clone(),
        candidates: candidates(&room, transport),
    };
    Ok(OpenedRoom {
        room,
        greeter: Greeter::new(&hello),
        identity,
        code,
        players,
    })
}

impl OpenedRoom {
    /// The password of the links to the players met in this room.
    pub fn password(&self) -> RoomPassword {
        self.code.password()
    }

    /// Greets the room and meets every player of the same game that says
    /// hello (players of another game are refused on their side), several
    /// at once on the game socket `transport`, until one's path is found
    /// and its handshake began over it; then greets later comers
    /// (spectators) from a thread for as long as the returned room lives.
    /// A player that fails or stalls costs its own meeting only. When the
    /// server goes away first, one warning says so and the socket waits
    /// for players who know its address; Ctrl-C, or `still_waiting`
    /// saying no (asked every poll: the host's window draws its waiting
    /// panel), leaves it to the match's loop, which reports it.
    pub(crate) fn meet_player(
        mut self,
        args: &SignalArgs,
        transport: LinkTransport,
        still_waiting: &mut dyn FnMut() -> bool,
    ) -> Result<(Option<HostedRoom>, LinkTransport), AppError> {
        let config = args.ice_config()?;
        let limits = MeetingLimits {
            connect_within: config.give_up_after + MEETING_MARGIN,
            ..MEETING_LIMITS
        };
        let ours = self.identity.clone();
        let is_ours = |peer: &Hello| peer.identity.mismatch(&ours).is_none();
        let is_guest = |peer: &Hello| peer.role == RoomRole::Spectator && is_ours(peer);
        let is_player = |peer: &Hello| peer.role == RoomRole::Player && is_ours(peer);
        let is_either = |peer: &Hello| is_player(peer) || is_guest(peer);
        let mut room_gone = None;
        let mut guests_at = None;
        // A match of 3 or 4: the other players' meetings go on beside it.
        let more_players = self.players > 2;
        let mut continuing = None;
        // Spectators who came before the player, met once the match runs.
        let mut early_guests = EarlyGuests::default();
        let met = on_ice_socket(transport, config, |socket| {
            let IceSocket {
                udp,
                local,
                config,
                clock,
            } = socket;
            guests_at = Some((local, config.clone()));
            let mut meetings = MeetingSocket::new(local, config, IceRole::Controlling, limits);
            loop {
                if crate::live::options::interrupted() || !still_waiting() {
                    return Ok(None);
                }
                for _ in 0..ROOM_EVENTS_PER_STEP {
                    let heard = match self.greeter.hear(&mut self.room, &is_either) {
                        Ok(Some(heard)) => heard,
                        Ok(None) => break,
                        Err(error) => {
                            room_gone = Some(error);
                            return Ok(None);
                        }
                    };
                    let heard = match early_guests.keep(heard) {
                        Some(heard) => heard,
                        None => continue,
                    };
                    match heard {
                        Heard::Hello(peer, _) => {
                            if meetings.offer(peer.clone(), clock.now_us()) == Admission::Waiting {
                                tracing::info!("every meeting slot is taken: {peer} waits");
                            }
                        }
                        Heard::Ice(peer, text) => meetings.deliver_signal(&peer, text),
                        Heard::Left(peer) => meetings.end(&peer),
                        Heard::Seat(..) | Heard::Nothing => {}
                    }
                }
                let room = &mut self.room;
                let mut send = |peer: &PeerId, text: &str| room.send(peer, text);
                for outcome in meetings.step(clock.now_us(), &mut *udp, &mut send) {
                    match outcome {
                        MeetingOutcome::Ready(peer) if more_players => {
                            let connector = meetings.finish(&peer);
                            continuing = Some(meetings);
                            return Ok(connector);
                        }
                        MeetingOutcome::Ready(peer) => return Ok(meetings.take(&peer)),
                        MeetingOutcome::Ended(
                            _,
                            MeetingEnd::Failed(error @ IceError::NeedsUdp),
                        ) => return Err(error),
                        MeetingOutcome::Ended(
                            _,
                            MeetingEnd::Failed(IceError::Signal(SignalError::Server(why))),
                        ) => {
                            room_gone = Some(SignalError::Server(why));
                            return Ok(None);
                        }
                        // One player's failure costs that player only.
                        MeetingOutcome::Ended(player, why) => {
                            eprintln!("warning: a player of the room found no path ({why}); waiting for the next");
                            self.greeter.forget(player);
                        }
                    }
                }
                udp.wait(MEETING_POLL);
            }
        });
        let transport = match met {
            Ok((mut transport, Some(_))) => {
                let (local, config) = guests_at.expect("the socket was met on");
                let (guests, line) = match continuing {
                    Some(meetings) => Guests::continuing(meetings),
                    None => Guests::new(local, config, GUEST_LIMITS),
                };
                transport.inner_mut().welcome_guests(guests);
                for event in early_guests.events {
                    let _ = line.events.try_send(event);
                }
                let is_guest = met_beside_the_match(ours, more_players);
                let serving = serve_in_background(self.room, self.greeter, move |room, greeter| {
                    serve_guests(room, greeter, &line, &is_guest)
                });
                return Ok((Some(serving), transport));
            }
            Ok((transport, None)) => transport,
            Err(IceFailure { error, .. }) => return Err(AppError::NoRoute(*error)),
        };
        if let Some(error) = room_gone {
            eprintln!("warning: {error}: {ROOM_GONE}");
        }
        Ok((None, transport))
    }
}

/// Whether a hello is of a peer of `ours`'s game that the host meets beside
/// its match: a spectator, or (in a match of 3 or 4, `more_players`) a
/// player.
fn met_beside_the_match(
    ours: Identity,
    more_players: bool,
) -> impl Fn(&Hello) -> bool + Send + 'static {
    move |peer: &Hello| {
        let beside = match peer.role {
            RoomRole::Spectator => true,
            RoomRole::Player => more_players,
            RoomRole::Host | RoomRole::Quick => false,
        };
        beside && peer.identity.mismatch(&ours).is_none()
    }
}

/// The spectators (a restarted player comes back as one) who greeted the
/// host before its player's path was found, and what they said since, for
/// the meetings beside the match: at most [`EARLY_GUEST_EVENTS`].
#[derive(Default)]
struct EarlyGuests {
    peers: BTreeSet<PeerId>,
    events: Vec<GuestEvent>,
}

impl EarlyGuests {
    /// Keeps what a spectator said; hands back what is not a spectator's.
    fn keep(&mut self, heard: Heard) -> Option<Heard> {
        let event = match heard {
            Heard::Hello(peer, hello) if hello.role == RoomRole::Spectator => {
                if self.peers.len() < MAX_GREETED {
                    self.peers.insert(peer.clone());
                }
                GuestEvent::Arrived(peer)
            }
            Heard::Ice(peer, text) if self.peers.contains(&peer) => GuestEvent::Signal(peer, text),
            Heard::Left(peer) if self.peers.remove(&peer) => GuestEvent::Left(peer),
            other => return Some(other),
        };
        if self.events.len() < EARLY_GUEST_EVENTS {
            self.events.push(event);
        }
        None
    }
}

/// Keeps a room through the match, taking `turn`s until dropped: a host's
/// greets every newcomer and passes what spectators of its game say to
/// their meetings beside the match, and what those say back; a joiner's
/// of a match of 3 or 4 does the same for the other joiners.
fn serve_in_background(
    mut room: RoomClient,
    mut greeter: Greeter,
    mut turn: impl FnMut(&mut RoomClient, &mut Greeter) -> Result<(), SignalError> + Send + 'static,
) -> HostedRoom {
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let thread = std::thread::spawn(move || {
        while !stopped.load(Ordering::Relaxed) {
            if let Err(error) = turn(&mut room, &mut greeter) {
                eprintln!("warning: {error}: {ROOM_GONE}");
                return;
            }
        }
    });
    HostedRoom {
        stop,
        thread: Some(thread),
    }
}

/// One turn of the host's room during the match: its next event, then the
/// meetings' news.
fn serve_guests(
    room: &mut RoomClient,
    greeter: &mut Greeter,
    line: &GuestLine,
    is_guest: &dyn Fn(&Hello) -> bool,
) -> Result<(), SignalError> {
    let event = match greeter.listen(room, is_guest, GUEST_POLL)? {
        Heard::Hello(peer, _) => Some(GuestEvent::Arrived(peer)),
        Heard::Ice(peer, text) => Some(GuestEvent::Signal(peer, text)),
        Heard::Left(peer) => Some(GuestEvent::Left(peer)),
        Heard::Seat(..) | Heard::Nothing => None,
    };
    // The match's socket may be gone already (it ended): nobody to meet.
    if let Some(event) = event {
        let _ = line.events.try_send(event);
    }
    while let Ok(news) = line.news.try_recv() {
        match news {
            GuestNews::Signal(peer, text) => room.send(&peer, &text)?,
            GuestNews::Met(peer) => tracing::info!("met {peer} of the room beside the match"),
            GuestNews::Failed(peer, why) => {
                eprintln!("warning: a spectator of the room found no path ({why})");
                greeter.forget(peer);
            }
        }
    }
    Ok(())
}

/// One turn of a joiner's room in a match of 3 or 4: its next event, then
/// the meetings' news. A joiner that says its seat first (`heard` keeps who
/// did) is told ours back: it may have missed it, seated after we were.
fn serve_players(
    room: &mut RoomClient,
    greeter: &mut Greeter,
    line: &mesh::MeshLine,
    heard: &mut BTreeSet<PeerId>,
) -> Result<(), SignalError> {
    let event = match greeter.listen(room, &|_| false, GUEST_POLL)? {
        Heard::Seat(peer, slot) => {
            if heard.len() < MAX_GREETED && heard.insert(peer.clone()) {
                greeter.tell_seat(room, &peer)?;
            }
            Some(mesh::MeshEvent::Seat(peer, slot))
        }
        Heard::Ice(peer, text) => Some(mesh::MeshEvent::Signal(peer, text)),
        Heard::Left(peer) => Some(mesh::MeshEvent::Left(peer)),
        Heard::Hello(..) | Heard::Nothing => None,
    };
    if let Some(event) = event {
        let _ = line.events.try_send(event);
    }
    while let Ok(news) = line.news.try_recv() {
        match news {
            GuestNews::Signal(peer, text) => room.send(&peer, &text)?,
            GuestNews::Met(peer) => tracing::info!("met the player {peer} of the room"),
            GuestNews::Failed(peer, why) => {
                eprintln!("warning: a player of the room found no path to this one ({why})");
                greeter.forget(peer);
            }
        }
    }
    Ok(())
}

/// Where each other player's path leads (its slot, its address), as ICE
/// finds it.
pub(crate) type PlayerPaths = Receiver<(u8, SocketAddr)>;

/// How a joiner or spectator found its host: its address, the game socket
/// to dial it from, and a name for messages (`room 7KQ-M2X`).
pub struct FoundHost {
    /// The address to dial.
    pub address: SocketAddr,
    /// This machine's game socket.
    pub transport: LinkTransport,
    /// The room, for messages.
    pub label: String,
    /// The quick-match room a player met its host in, kept until the
    /// handshake: the host's side of ICE may still be reading its last
    /// messages.
    pub room: Option<RoomClient>,
    /// The room a host was found in by its code, and the way to the next
    /// host when this one never answers.
    pub next: Option<Box<NextHost>>,
}

/// What looking for a room's host found.
enum HostSearch {
    /// A host of our game.
    Found(PeerId),
    /// Only hosts of another game: the refusal the handshake would give.
    OtherGame(AppError),
    /// Nobody answered as a host.
    Nobody,
}

/// Greets the room `ours` until a host of our game answers, or `deadline`
/// passes. A host of another game is skipped (said once per peer: it may
/// be a misbehaving peer posing as the host), and the search goes on a
/// little longer ([`OTHER_GAME_GRACE`]) so the real host can answer; when
/// none does, its refusal is the answer.
fn await_host(
    room: &mut RoomClient,
    greeter: &mut Greeter,
    ours: &Hello,
    deadline: Instant,
) -> Result<HostSearch, SignalError> {
    let is_host = |peer: &Hello| peer.role == RoomRole::Host;
    let mut deadline = deadline;
    let mut refusal = None;
    let mut skipped = BTreeSet::new();
    loop {
        let Some((peer, host)) = await_hello(room, greeter, is_host, Some(deadline))? else {
            return Ok(refusal.map_or(HostSearch::Nobody, HostSearch::OtherGame));
        };
        match check_host(&host, ours) {
            Ok(()) => return Ok(HostSearch::Found(peer)),
            Err(refused) => {
                if skipped.len() < MAX_GREETED && skipped.insert(peer.clone()) {
                    tracing::info!(
                        "skipped a host of another game in the room ({peer}): {refused}"
                    );
                }
                deadline = deadline.min(Instant::now() + OTHER_GAME_GRACE);
                refusal = Some(refused);
            }
        }
    }
}

/// Finds the host of room `code` as a player or spectator, waiting at most
/// `timeout` for it to greet us. A player whose path to a host fails
/// (anyone in the room can pose as its host) forgets that peer and tries
/// the next host of its game, at most [`MAX_HOSTS_TRIED`] of them; so does
/// one whose host never answers the handshake ([`NextHost`]).
pub(crate) fn find_host(
    args: &SignalArgs,
    code: RoomCode,
    ours: (RoomRole, Identity),
    link: &LinkArgs,
    timeout: Duration,
) -> Result<FoundHost, AppError> {
    find_host_telling(args, code, ours, link, timeout, None)
}

/// [`find_host`], telling `steps` where the search is (entering the room
/// and looking for its host, then punching through to the one found).
fn find_host_telling(
    args: &SignalArgs,
    code: RoomCode,
    ours: (RoomRole, Identity),
    link: &LinkArgs,
    timeout: Duration,
    steps: Option<Sender<ConnectStep>>,
) -> Result<FoundHost, AppError> {
    let role = ours.0;
    let transport = bind_for(link)?;
    tell(&steps, ConnectStep::EnteringRoom);
    let room = enter(args, &code_room(code), None)?;
    tell(&steps, ConnectStep::FindingHost);
    let hello = Hello {
        role,
        identity: ours.1,
        candidates: candidates(&room, &transport),
    };
    let search = RoomSearch {
        config: args.ice_config()?,
        code,
        greeter: Greeter::new(&hello),
        hello,
        link: link.clone(),
        timeout,
        tried: 0,
        steps,
    };
    let deadline = Instant::now() + timeout;
    let found = search.run(room, transport, deadline, None)?;
    Ok(found.expect("a search with no failure behind it finds a host or fails"))
}

/// A game socket to find the host from: it carries ICE, whose candidates
/// are IPv4.
fn bind_for(link: &LinkArgs) -> Result<LinkTransport, AppError> {
    bind_ipv4(link, 0)
}

/// A joiner's or spectator's search of a room for its host, resumable
/// after the host it found proved false.
struct RoomSearch {
    /// The path finding's servers.
    config: IceConfig,
    code: RoomCode,
    hello: Hello,
    greeter: Greeter,
    link: LinkArgs,
    timeout: Duration,
    tried: u32,
    /// Where a connecting screen learns the search's steps.
    steps: Option<Sender<ConnectStep>>,
}

/// Tells a connecting screen, if one listens, that the search is at `step`
/// (a screen gone, the join cancelled, leaves the search to its deadline).
fn tell(steps: &Option<Sender<ConnectStep>>, step: ConnectStep) {
    if let Some(steps) = steps {
        let _ = steps.send(step);
    }
}

/// Work with a room (a search for its host, a quick match's queue) on a
/// thread of its own, so that the window waiting on it keeps drawing and
/// answers Cancel: its steps and its lines for the terminal as they come,
/// then what it found.
pub(crate) struct RoomThread<T> {
    /// The steps, in order.
    pub steps: Receiver<ConnectStep>,
    /// What it wrote for the terminal, in pieces, in order.
    pub lines: Receiver<Vec<u8>>,
    found: JoinHandle<Result<T, AppError>>,
    /// Set when the waiting side stops waiting: work with no deadline (a
    /// quick match's queue) stops at its next turn instead of pairing.
    _withdrawn: Withdrawn,
}

/// Sets its flag when dropped.
struct Withdrawn(Arc<AtomicBool>);

impl Drop for Withdrawn {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl<T: Send + 'static> RoomThread<T> {
    /// Starts `work` on its own thread, given where to tell its steps and
    /// write its lines.
    fn start(
        work: impl FnOnce(Sender<ConnectStep>, &mut dyn Write, &AtomicBool) -> Result<T, AppError>
            + Send
            + 'static,
    ) -> RoomThread<T> {
        let (tell, steps) = std::sync::mpsc::channel();
        let (write, lines) = std::sync::mpsc::channel();
        let withdrawn = Arc::new(AtomicBool::new(false));
        let flag = withdrawn.clone();
        let found = std::thread::spawn(move || work(tell, &mut LinesTo(write), &flag));
        RoomThread {
            steps,
            lines,
            found,
            _withdrawn: Withdrawn(withdrawn),
        }
    }

    /// Whether the work has ended, done or failed.
    pub(crate) fn is_finished(&self) -> bool {
        self.found.is_finished()
    }

    /// What the work found, waiting for it to end.
    pub(crate) fn found(self) -> Result<T, AppError> {
        self.found.join().unwrap_or_else(|_| {
            Err(AppError::Room {
                message: "the room's thread stopped unexpectedly".into(),
            })
        })
    }
}

/// [`find_host`]'s search on its own thread.
pub(crate) fn find_host_thread(
    args: &SignalArgs,
    code: RoomCode,
    ours: (RoomRole, Identity),
    link: &LinkArgs,
    timeout: Duration,
) -> RoomThread<FoundHost> {
    let (args, link) = (args.clone(), link.clone());
    RoomThread::start(move |steps, _out, _withdrawn| {
        find_host_telling(&args, code, ours, &link, timeout, Some(steps))
    })
}

/// Where a quick match's queue tells its steps, and the flag that
/// withdraws it.
type QuickScreen<'a> = Option<(Sender<ConnectStep>, &'a AtomicBool)>;

/// [`quick_pair`]'s queue on its own thread.
pub(crate) fn quick_pair_thread(
    args: &SignalArgs,
    identity: Identity,
    link: &LinkArgs,
) -> RoomThread<QuickPairing> {
    let (args, link) = (args.clone(), link.clone());
    RoomThread::start(move |steps, out, withdrawn| {
        quick_pair(&args, identity, &link, out, Some((steps, withdrawn)))
    })
}

/// A thread's terminal: what it writes goes to the thread that waits on it.
struct LinesTo(Sender<Vec<u8>>);

impl Write for LinesTo {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        // The waiting thread gone (cancelled), the lines have no reader.
        let _ = self.0.send(bytes.to_vec());
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Why the last host tried was given up.
enum HostFailure {
    /// ICE found no path to it.
    NoPath(Box<IceError>),
    /// It never answered the handshake.
    Silent,
}

impl RoomSearch {
    /// Searches `room` until a host of our game is found and reached, or
    /// `deadline`. After `failed`, no other host is `Ok(None)` when the
    /// failed host was silent (the caller says so its way).
    fn run(
        mut self,
        mut room: RoomClient,
        mut transport: LinkTransport,
        mut deadline: Instant,
        mut failed: Option<HostFailure>,
    ) -> Result<Option<FoundHost>, AppError> {
        let code = self.code;
        let waiting_for = format!("the host of room {code}");
        let (host_peer, address, transport) = loop {
            let answer = await_host(&mut room, &mut self.greeter, &self.hello, deadline);
            let found = answer.map_err(|error| server_gone(error, &waiting_for))?;
            let host_peer = match (found, failed.take()) {
                (HostSearch::Found(peer), failed) => {
                    match failed {
                        Some(HostFailure::NoPath(error)) => eprintln!(
                            "warning: a host of the room found no path ({error}); trying the next"
                        ),
                        Some(HostFailure::Silent) => eprintln!(
                            "warning: a host of the room never answered the handshake; trying the next"
                        ),
                        None => {}
                    }
                    peer
                }
                // No other host answered: the failed one's is the answer.
                (_, Some(HostFailure::NoPath(error))) => return Err(AppError::NoRoute(*error)),
                (_, Some(HostFailure::Silent)) => return Ok(None),
                (HostSearch::OtherGame(refusal), None) => return Err(refusal),
                (HostSearch::Nobody, None) => {
                    return Err(AppError::Room {
                        message: format!(
                            "no host in room {code} within {} s: check the code, and that the host runs `netcade host --room` on the same signaling server",
                            self.timeout.as_secs_f64()
                        ),
                    })
                }
            };
            let (peer, config) = (host_peer.clone(), self.config.clone());
            tell(&self.steps, ConnectStep::PunchingThrough);
            let failure = match path_to(config, &mut room, peer, transport, IceRole::Controlled) {
                Ok((address, transport)) => {
                    let path = transport.inner().ice_path().map(|path| &path.kind);
                    if matches!(path, Some(crate::net::ice::PathKind::Relay { .. })) {
                        tell(&self.steps, ConnectStep::Relaying);
                    }
                    break (host_peer, address, transport);
                }
                Err(failure) => failure,
            };
            self.tried += 1;
            let costs_the_host_only = !matches!(
                *failure.error,
                IceError::NeedsUdp | IceError::Signal(SignalError::Server(_))
            );
            if !costs_the_host_only || self.tried >= MAX_HOSTS_TRIED {
                return Err(failure.into());
            }
            self.greeter.forget(host_peer);
            transport = *failure.link;
            failed = Some(HostFailure::NoPath(failure.error));
            deadline = deadline.max(Instant::now() + OTHER_GAME_GRACE);
        };
        Ok(Some(FoundHost {
            address,
            transport,
            label: format!("room {code}"),
            room: None,
            next: Some(Box::new(NextHost {
                room,
                search: self,
                host: host_peer,
            })),
        }))
    }
}

/// The room a host was found in, kept through the handshake (the host's
/// side of ICE may still be reading its last messages), and the search
/// that found it: a host that never answers the handshake (anyone in the
/// room can pose as its host, and find a path) costs one attempt.
pub struct NextHost {
    room: RoomClient,
    search: RoomSearch,
    host: PeerId,
}

impl NextHost {
    /// The joiner of `slot` in a match of 3 or 4, seated by the host found,
    /// stays in the room through the match and meets the other joiners
    /// there ([`mesh`]), beside the host's path on `transport`. Returns the
    /// room's keeper and where each joiner's path leads, as it is found;
    /// `None` on a socket ICE chose no path for.
    pub(crate) fn meet_other_players(
        self: Box<Self>,
        slot: u8,
        transport: &mut LinkTransport,
    ) -> Result<Option<(HostedRoom, PlayerPaths)>, AppError> {
        let NextHost {
            mut room,
            mut search,
            ..
        } = *self;
        let config = search.config.clone();
        let limits = MeetingLimits {
            connect_within: config.give_up_after + MEETING_MARGIN,
            ..GUEST_LIMITS
        };
        let local = crate::net::ice::reachable_address(transport.inner().local_address());
        let (mesh, line, paths) = mesh::Mesh::new(slot, local, config, limits);
        if !transport.inner_mut().welcome_guests(mesh) {
            return Ok(None);
        }
        search
            .greeter
            .take_seat(&mut room, slot)
            .map_err(|error| server_gone(error, "the other players"))?;
        let mut heard = BTreeSet::new();
        let serving = serve_in_background(room, search.greeter, move |room, greeter| {
            serve_players(room, greeter, &line, &mut heard)
        });
        Ok(Some((serving, paths)))
    }

    /// How long the handshake with the host found may stay unanswered
    /// before the next host is tried: a real host answers at once.
    pub fn handshake_within(&self) -> Duration {
        HOST_HANDSHAKE_WITHIN.min(self.search.timeout)
    }

    /// The host found never answered the handshake: forgets it and tries
    /// the room's next host of our game, on a new game socket, for as long
    /// as a failed path leaves (`Ok(None)`: no other host, or the last
    /// try was spent).
    pub fn try_next(self: Box<Self>) -> Result<Option<FoundHost>, AppError> {
        let NextHost {
            room,
            mut search,
            host,
        } = *self;
        search.tried += 1;
        if search.tried >= MAX_HOSTS_TRIED {
            return Ok(None);
        }
        search.greeter.forget(host);
        let transport = bind_for(&search.link)?;
        // The real host greeted us when we arrived: its hello waits in
        // the room.
        let deadline = Instant::now() + OTHER_GAME_GRACE;
        search.run(room, transport, deadline, Some(HostFailure::Silent))
    }
}

/// Where `join` and `spectate` find the host: its address, or a room.
pub(crate) struct HostWay<'a> {
    /// `HOST:PORT`, the direct path.
    pub address: Option<&'a str>,
    /// `--room CODE`.
    pub room: Option<RoomCode>,
    /// `--signal`.
    pub signal: &'a SignalArgs,
}

impl HostWay<'_> {
    /// The host in words: its address, or its room's code.
    pub(crate) fn describe(&self) -> String {
        match (self.address, self.room) {
            (Some(address), _) => address.trim().to_string(),
            (None, Some(code)) => format!("room {code}"),
            (None, None) => "the host".to_string(),
        }
    }
}

/// Finds the host `way` names and opens this machine's game with `open`:
/// after resolving a direct address (a typo fails before the core loads),
/// before entering a room (the room compares games).
pub(crate) fn reach_host(
    way: HostWay<'_>,
    role: RoomRole,
    link: &LinkArgs,
    connect_timeout_s: f64,
    open: impl FnOnce() -> Result<(Box<dyn Game>, GameArgs), AppError>,
) -> Result<(FoundHost, Box<dyn Game>), AppError> {
    let timeout = connect_timeout(connect_timeout_s)?;
    match (way.address, way.room) {
        (Some(address), _) => {
            let (host, transport) = connect_to_host(address, connect_timeout_s, link)?;
            let found = FoundHost {
                address: host,
                transport,
                label: address.to_string(),
                room: None,
                next: None,
            };
            Ok((found, open()?.0))
        }
        (None, Some(code)) => {
            let (game, args) = open()?;
            let identity = identity_of(game.as_ref(), &args)?;
            let found = find_host(way.signal, code, (role, identity), link, timeout)?;
            Ok((found, game))
        }
        (None, None) => Err(AppError::BadArgument {
            message: "expected the host's HOST:PORT or --room CODE".into(),
        }),
    }
}

/// A quick match's outcome: this machine hosts on its socket, or joins.
pub enum QuickPairing {
    /// Host the match on this game socket; the room stays entered for as
    /// long as the match lasts (the joiner's side of ICE may still be
    /// reading its last messages when ours found the path).
    Host(LinkTransport, RoomClient),
    /// Join the host found.
    Join(FoundHost),
}

/// Queues for a quick match with a player of the same game and protocol,
/// for as long as it takes. Of the two paired, the one with the smaller
/// peer id hosts. A partner that leaves, is of another game, stays silent
/// for [`QUICK_SILENCE`] or finds no path costs one turn in the queue: the
/// player queues again. A `screen` is told the steps (entering the room,
/// waiting there for a partner, punching through to it), and its flag
/// withdraws the player at its next turn.
fn quick_pair(
    args: &SignalArgs,
    identity: Identity,
    link: &LinkArgs,
    out: &mut dyn Write,
    screen: QuickScreen<'_>,
) -> Result<QuickPairing, AppError> {
    let (steps, withdrawn) = match screen {
        Some((steps, withdrawn)) => (Some(steps), Some(withdrawn)),
        None => (None, None),
    };
    let withdrawn = || withdrawn.is_some_and(|flag| flag.load(Ordering::Relaxed));
    let mut transport = bind_ipv4(link, 0)?;
    let config = args.ice_config()?;
    let mut announce = true;
    loop {
        if withdrawn() {
            return Err(AppError::Room {
                message: "withdrawn from the quick match".into(),
            });
        }
        tell(&steps, ConnectStep::EnteringRoom);
        let mut room = enter(args, &quick_room(&identity), Some(2))?;
        tell(&steps, ConnectStep::FindingHost);
        if announce {
            writeln!(
                out,
                "waiting for another player of {} {} in the quick match",
                identity.core_name, identity.core_version
            )?;
        }
        announce = true;
        let hello = Hello {
            role: RoomRole::Quick,
            identity: identity.clone(),
            candidates: candidates(&room, &transport),
        };
        let mut greeter = Greeter::new(&hello);
        let peer = match await_partner(&mut room, &mut greeter, &hello) {
            Ok(Partner::Spoke(peer)) => peer,
            Ok(Partner::OtherGame) => continue,
            Ok(Partner::Interrupted) => {
                return Err(AppError::Room {
                    message: "interrupted while waiting for another player".into(),
                })
            }
            // Alone in the queue, or grouped with a peer that arrived
            // before us and never speaks (we cannot tell which): enter
            // again, quietly.
            Ok(Partner::Silent) if greeter.greeted.is_empty() => {
                announce = false;
                continue;
            }
            Ok(Partner::Silent) => {
                writeln!(out, "the other player never spoke; queueing again")?;
                continue;
            }
            // The server grouped us with a player who left before its
            // hello: queue again.
            Err(SignalError::PeerGone) => {
                writeln!(out, "the other player left before the match")?;
                continue;
            }
            Err(error) => return Err(server_gone(error, "another player")),
        };
        let hosting = room.me() < &peer;
        let role = match hosting {
            true => IceRole::Controlling,
            false => IceRole::Controlled,
        };
        if withdrawn() {
            // Our partner finds us silent, and queues again.
            continue;
        }
        tell(&steps, ConnectStep::PunchingThrough);
        match path_to(config.clone(), &mut room, peer, transport, role) {
            Ok((_, transport)) if hosting => return Ok(QuickPairing::Host(transport, room)),
            Ok((address, transport)) => {
                return Ok(QuickPairing::Join(FoundHost {
                    address,
                    transport,
                    label: "the quick match".into(),
                    room: Some(room),
                    next: None,
                }))
            }
            Err(IceFailure { error, link }) => match *error {
                IceError::NeedsUdp | IceError::Signal(SignalError::Server(_)) => {
                    return Err(AppError::NoRoute(*error))
                }
                _ => {
                    writeln!(
                        out,
                        "the other player found no path ({error}); queueing again"
                    )?;
                    transport = *link;
                }
            },
        }
    }
}

/// What a quick-match player heard from the partner the server grouped
/// it with.
enum Partner {
    /// Its hello, of our game.
    Spoke(PeerId),
    /// A hello of another game (the queue's name rules it out, so the
    /// peer misbehaves).
    OtherGame,
    /// Nothing within [`QUICK_SILENCE`] of entering the queue or of
    /// greeting it.
    Silent,
    /// Ctrl-C was pressed.
    Interrupted,
}

/// Greets the quick-match room until the partner's hello comes or it has
/// been silent for [`QUICK_SILENCE`].
fn await_partner(
    room: &mut RoomClient,
    greeter: &mut Greeter,
    ours: &Hello,
) -> Result<Partner, SignalError> {
    let is_quick = |peer: &Hello| peer.role == RoomRole::Quick;
    let entered = Instant::now();
    loop {
        let quiet_since = greeter.last_greeted.map_or(entered, |at| at.max(entered));
        let deadline = quiet_since + QUICK_SILENCE;
        let Some((peer, other)) = await_hello(room, greeter, is_quick, Some(deadline))? else {
            if crate::live::options::interrupted() {
                return Ok(Partner::Interrupted);
            }
            // A partner greeted just before the deadline gets its time too.
            if greeter
                .last_greeted
                .is_some_and(|at| at + QUICK_SILENCE > Instant::now())
            {
                continue;
            }
            return Ok(Partner::Silent);
        };
        return Ok(match check_host(&other, ours) {
            Ok(()) => Partner::Spoke(peer),
            Err(refused) => {
                tracing::info!("skipped a quick-match player of another game ({peer}): {refused}");
                Partner::OtherGame
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_room_asks_the_router_for_a_port_unless_told_not_to() {
        let asks = |args: SignalArgs| args.with_switches(IceConfig::default()).unwrap();
        assert!(asks(SignalArgs::default()).port_mapping);
        let told = SignalArgs {
            no_port_mapping: true,
            ..SignalArgs::default()
        };
        assert!(!asks(told).port_mapping);
    }

    #[test]
    fn the_rooms_manual_names_the_rooms_this_build_enters() {
        let manual = include_str!("../../../docs/rooms.md");
        let code = RoomCode::from_random([7; code::CODE_CHARS]);
        let room = code_room(code);
        let version = format!("netcade{PROTOCOL_VERSION}-");
        assert!(room.starts_with(&version));
        assert!(
            manual.contains(&format!("`/{version}room-")),
            "docs/rooms.md does not name rooms as {version}room-…"
        );
        assert!(
            manual.contains(&format!("`/{version}quick-")),
            "docs/rooms.md does not name quick-match queues as {version}quick-…"
        );
    }

    fn identity(content_hash: u64) -> Identity {
        Identity {
            protocol_version: PROTOCOL_VERSION,
            core_name: "Duel".into(),
            core_version: "0.1.0".into(),
            content_hash,
        }
    }

    #[test]
    fn quick_match_queues_are_per_game_and_room_codes_per_protocol() {
        assert_eq!(quick_room(&identity(1)), quick_room(&identity(1)));
        assert_ne!(quick_room(&identity(1)), quick_room(&identity(2)));
        let other_version = Identity {
            core_version: "0.2.0".into(),
            ..identity(1)
        };
        assert_ne!(quick_room(&identity(1)), quick_room(&other_version));
        let code: RoomCode = "7KQ-M2X".parse().unwrap();
        assert_eq!(
            code_room(code),
            format!("netcade{PROTOCOL_VERSION}-room-7KQ")
        );
    }

    #[test]
    fn a_host_of_other_content_is_refused_with_the_handshakes_message() {
        let hello = |role, content| Hello {
            role,
            identity: identity(content),
            candidates: vec![],
        };
        let host = hello(RoomRole::Host, 0xaa);
        assert!(check_host(&host, &hello(RoomRole::Player, 0xaa)).is_ok());
        let refused = check_host(&host, &hello(RoomRole::Player, 0xbb)).unwrap_err();
        let message = refused.to_string();
        assert!(
            message.starts_with("this match is for Duel 0.1.0 with content"),
            "{message}"
        );
        assert_eq!(refused.exit_code(), crate::engine::error::EXIT_USER_MISTAKE);
    }

    use crate::net::room::fake_server::{self, signal_from};

    fn hello_of(role: RoomRole, content_hash: u64) -> Hello {
        Hello {
            role,
            identity: identity(content_hash),
            candidates: vec!["10.0.0.2:7000".parse().unwrap()],
        }
    }

    fn server_args(server: SignalServer) -> SignalArgs {
        SignalArgs {
            signal: Some(server),
            ..SignalArgs::default()
        }
    }

    #[test]
    fn a_joiner_skips_a_host_of_another_game_and_finds_the_real_one() {
        let rogue = hello_of(RoomRole::Host, 0xbb).encode();
        let host = hello_of(RoomRole::Host, 0xaa);
        let events = vec![
            signal_from("rogue", &rogue),
            signal_from("host", &host.encode()),
        ];
        let (server, script) = fake_server::scripted(vec![events]);
        let mut room = enter(&server_args(server), "room", None).unwrap();
        let ours = hello_of(RoomRole::Player, 0xaa);
        let deadline = Instant::now() + Duration::from_secs(60);
        match await_host(&mut room, &mut Greeter::new(&ours), &ours, deadline).unwrap() {
            HostSearch::Found(peer) => assert_eq!(peer.as_str(), "host"),
            _ => panic!("the real host was not found"),
        }
        drop(room);
        script.join().unwrap();
    }

    #[test]
    fn a_joiner_that_hears_only_a_host_of_another_game_is_refused_soon_with_its_message() {
        let other = hello_of(RoomRole::Host, 0xbb).encode();
        let (server, script) = fake_server::scripted(vec![vec![signal_from("other", &other)]]);
        let mut room = enter(&server_args(server), "room", None).unwrap();
        let ours = hello_of(RoomRole::Player, 0xaa);
        let started = Instant::now();
        let deadline = started + Duration::from_secs(60);
        let mut greeter = Greeter::new(&ours);
        let HostSearch::OtherGame(refusal) =
            await_host(&mut room, &mut greeter, &ours, deadline).unwrap()
        else {
            panic!("no refusal");
        };
        assert!(started.elapsed() < Duration::from_secs(30));
        let message = refusal.to_string();
        assert!(
            message.starts_with("this match is for Duel 0.1.0 with content"),
            "{message}"
        );
        drop(room);
        script.join().unwrap();
    }

    #[test]
    fn a_quick_match_partner_of_another_game_is_skipped_and_the_player_queues_again() {
        let other = hello_of(RoomRole::Quick, 0xbb).encode();
        let first = vec![signal_from("other", &other)];
        let (server, script) = fake_server::scripted(vec![first, vec![fake_server::CLOSE.into()]]);
        let mut out = Vec::new();
        let result = quick_pair(
            &server_args(server),
            identity(0xaa),
            &LinkArgs::default(),
            &mut out,
            None,
        );
        let Err(error) = result else {
            panic!("paired with a player of another game");
        };
        let message = error.to_string();
        assert!(
            message.contains("while waiting for another player; nobody was paired"),
            "queued again, until the server left: {message}"
        );
        let printed = String::from_utf8(out).unwrap();
        assert_eq!(
            printed.matches("waiting for another player").count(),
            2,
            "{printed}"
        );
        assert_eq!(script.join().unwrap().len(), 2);
    }
}
