//! A netcade host that RetroArch players join, sans-IO: each connection's
//! bytes in, its bytes out, time and password salts as parameters. It
//! shakes hands as RetroArch's server does (the client's header first,
//! then ours with the protocol chosen, NICK both ways, PASSWORD when a
//! password is set, INFO both ways, SYNC), hands a player the first free
//! port on PLAY and keeps the match's frame clock: a frame runs once every
//! player's INPUT of it came (lockstep: this side never predicts, the
//! RetroArch players roll back for the host's input as they do for any
//! host's). Each frame the host's INPUT (client 0) and every other
//! player's go to every connection, a CRC of the state at its start every
//! `check_frames` frames, and the host's state (LOAD_SAVESTATE) to a new
//! connection or one that asks for it.

use super::client::{command_word, device};
use super::state::{pack_state, password_hash, wrap_in_container};
use super::wire::{
    id, Command, CommandReader, Header, Info, InputWords, Mode, Name, Sender, Sync, WireError,
    COMPRESSION_ZLIB, HIGHEST_PROTOCOL, LOWEST_PROTOCOL, MAGIC, MAX_CLIENTS, MAX_INPUT_DEVICES,
    RETROARCH_VERSION,
};
use std::collections::{BTreeMap, VecDeque};

/// Frames a player's input may run ahead of the host's clock before it is
/// a misbehaving peer (RetroArch's clients stall about 60 ahead).
const MAX_FRAMES_AHEAD: u32 = 600;
/// How often each connection's round trip is measured (protocol 6), ms.
const PING_EVERY_MS: u64 = 3000;
/// How long a connection has to finish its handshake: one that stalls in
/// it holds a client number, which the real players need.
const HANDSHAKE_WITHIN_MS: u64 = 10_000;
/// The most state a client's command may carry: a host never needs one
/// (it sends SYNC and the states), so a client's reader holds no more than
/// its small commands need, whatever the host's state size.
const CLIENT_STATE_BYTES: usize = 64 * 1024;
/// How long a player may send nothing (RetroArch sends its INPUT every
/// frame) before it is dropped: the frame clock waits on every player.
const PLAYER_SILENT_MS: u64 = 10_000;
/// The longest one player's pause holds everyone: then the host resumes
/// the match, and a player still paused goes silent and is dropped.
const LONGEST_PAUSE_MS: u64 = 60_000;
/// A player this many frames ahead of the host's clock is told to wait
/// (RetroArch's server: more than 3).
const STALL_WHEN_AHEAD: u32 = 3;
/// A player is told to wait at most once in this many frames (RetroArch's
/// `NETPLAY_MAX_REQ_STALL_FREQUENCY`).
const STALL_EVERY_FRAMES: u32 = 120;
/// MODE_REFUSED reasons.
const REFUSED_UNPRIVILEGED: u32 = 1;
const REFUSED_NO_SLOTS: u32 = 2;

/// What the host brings to the match.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The host's nick.
    pub nick: String,
    /// The password to play (none: anyone plays).
    pub password: Option<String>,
    /// The password to watch only.
    pub spectate_password: Option<String>,
    /// The core's `library_name`.
    pub core_name: String,
    /// Its `library_version`.
    pub core_version: String,
    /// CRC-32 of the content file.
    pub content_crc: u32,
    /// Joypad ports of the match (the host plays the first).
    pub ports: usize,
    /// A CRC of the state goes out every this many frames (0: never).
    pub check_frames: u32,
    /// The most bytes of a command's payload a peer may send.
    pub max_state_bytes: usize,
    /// Whether a player may pause the match for everyone (RetroArch's
    /// "Allow pausing"); a pause asked without it is ignored.
    pub allow_pausing: bool,
}

/// A connection: its index (its RetroArch client number is one more).
pub type ConnectionId = usize;

/// Why a connection was turned away or cut.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// It broke the protocol.
    #[error("broke the protocol: {0}")]
    Protocol(#[from] WireError),
    /// It speaks no protocol we do.
    #[error("speaks netplay protocols {low} to {high}; netcade speaks {LOWEST_PROTOCOL} to {HIGHEST_PROTOCOL}")]
    Version {
        /// Its lowest.
        low: u32,
        /// Its highest.
        high: u32,
    },
    /// It runs another core.
    #[error("runs {theirs}; this host runs {ours}")]
    CoreMismatch {
        /// Its core and version.
        theirs: String,
        /// Ours.
        ours: String,
    },
    /// Its password is neither the players' nor the spectators' (or it
    /// gave none).
    #[error("gave no right password")]
    WrongPassword,
    /// It left on reading our INFO: a RetroArch client leaves there only
    /// when its core is another.
    #[error("left on reading this host's core, {ours}: RetroArch leaves there only when it runs another core")]
    LeftAtOurCore {
        /// Our core and version.
        ours: String,
    },
    /// Every client number is taken.
    #[error("found the match full")]
    Full,
    /// It did not finish its handshake in time.
    #[error("did not finish its handshake within {} s", HANDSHAKE_WITHIN_MS / 1000)]
    SlowHandshake,
}

/// What happened that the host may want to hear of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerEvent {
    /// A connection finished its handshake (it watches until it plays).
    Connected {
        /// Its client number.
        client: u32,
        /// Its nick (made unique).
        nick: String,
        /// The protocol it speaks.
        protocol: u32,
    },
    /// It runs another version of the core (RetroArch only warns).
    CoreVersionDiffers {
        /// Its nick.
        nick: String,
        /// Its version.
        version: String,
    },
    /// Its content has another CRC (RetroArch only warns).
    ContentDiffers {
        /// Its nick.
        nick: String,
    },
    /// It plays on `port` from `frame`.
    Playing {
        /// Its client number.
        client: u32,
        /// Its nick.
        nick: String,
        /// Its port (0-based).
        port: u32,
        /// Its first frame.
        frame: u32,
    },
    /// It asked to play and was refused (why, as MODE_REFUSED says).
    PlayRefused {
        /// Its nick.
        nick: String,
        /// The reason number.
        reason: u32,
    },
    /// It found our state unlike its own and asked for it.
    StateAsked {
        /// Its nick.
        nick: String,
    },
    /// A chat line.
    Chat {
        /// Who.
        author: String,
        /// What.
        text: String,
    },
    /// It was turned away or cut.
    Refused {
        /// Its nick (empty before NICK).
        nick: String,
        /// Why.
        why: Refusal,
    },
    /// A player (or the host, `nick` ours) paused the match: no frame
    /// runs until every pause is resumed.
    Paused {
        /// Who.
        nick: String,
    },
    /// A player's pause ended (it resumed, or left).
    Resumed {
        /// Who.
        nick: String,
    },
    /// It left (a goodbye or a closed connection).
    Left {
        /// Its nick.
        nick: String,
        /// Whether it was playing.
        was_playing: bool,
    },
}

/// What the host counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// CRCs sent.
    pub crcs_sent: u32,
    /// States sent (to a new connection, or asked for).
    pub states_sent: u32,
    /// REQUEST_SAVESTATE from players: their state was not ours.
    pub states_asked: u32,
    /// STALLs sent: a player ran too far ahead of the host's clock.
    pub stalls_sent: u32,
}

/// A connection's view of one player, for reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayerInfo {
    /// Its nick.
    pub nick: String,
    /// Its port (0-based), when playing.
    pub port: Option<u32>,
    /// Its latest round trip, ms.
    pub ping_ms: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Header,
    Nick,
    Password,
    Info,
    Connected,
    Closed,
}

#[derive(Debug)]
struct Connection {
    phase: Phase,
    reader: CommandReader,
    outgoing: Vec<u8>,
    protocol: u32,
    zlib: bool,
    salt: u32,
    nick: Name,
    can_play: bool,
    /// The ports it plays on (0: it watches).
    ports: u32,
    /// The next frame of its input expected.
    read_frame: u32,
    inputs: BTreeMap<u32, InputWords>,
    ping_sent_at: Option<u64>,
    last_ping_at: u64,
    ping_ms: Option<u64>,
    /// When the host's timers first saw it.
    opened_at: Option<u64>,
    /// When bytes last came from it.
    heard_at: Option<u64>,
    /// Whether it paused the match.
    paused: bool,
    /// When it paused the match last.
    paused_at: u64,
    /// The host's frame when it was last told to stall.
    stall_asked_at: u32,
}

impl Connection {
    fn send(&mut self, command: &Command) {
        command.encode(&mut self.outgoing);
    }

    fn connected(&self) -> bool {
        self.phase == Phase::Connected
    }
}

/// The host's session.
#[derive(Debug)]
pub struct ServerSession {
    config: ServerConfig,
    connections: Vec<Option<Connection>>,
    devices: [u32; MAX_INPUT_DEVICES],
    events: VecDeque<ServerEvent>,
    /// The next frame the host runs.
    next_frame: u32,
    /// The clock runs from the first connection's SYNC on.
    started: bool,
    state_wanted: bool,
    stats: ServerStats,
    /// Whether the host itself paused.
    host_paused: bool,
    /// The core's save RAM, as the next SYNC carries it.
    sram: Vec<u8>,
}

impl ServerSession {
    /// A host with no connection yet.
    pub fn new(config: ServerConfig) -> ServerSession {
        let mut devices = [device::NONE; MAX_INPUT_DEVICES];
        for port in devices
            .iter_mut()
            .take(config.ports.clamp(1, MAX_INPUT_DEVICES))
        {
            *port = device::JOYPAD;
        }
        ServerSession {
            config,
            connections: Vec::new(),
            devices,
            events: VecDeque::new(),
            next_frame: 0,
            started: false,
            state_wanted: false,
            stats: ServerStats::default(),
            host_paused: false,
            sram: Vec::new(),
        }
    }

    /// Whether a connection is still shaking hands: its SYNC, which carries
    /// the save RAM, is still to go (the caller then gives the save RAM).
    pub fn handshaking(&self) -> bool {
        self.connections
            .iter()
            .flatten()
            .any(|c| !c.connected() && c.phase != Phase::Closed)
    }

    /// The core's save RAM the next SYNCs carry (a RetroArch client loads
    /// it when its own is of the same size).
    pub fn set_sram(&mut self, sram: &[u8]) {
        self.sram.clear();
        self.sram.extend_from_slice(sram);
    }

    /// Whether the match is paused (by the host or a player).
    pub fn is_paused(&self) -> bool {
        self.host_paused || self.open().any(|c| c.paused)
    }

    /// The host pauses the match: every connection is told.
    pub fn pause(&mut self) {
        if self.host_paused {
            return;
        }
        self.host_paused = true;
        let pause = Command::Pause(Name::new(&self.config.nick));
        for connection in self.connections.iter_mut().flatten() {
            if connection.connected() {
                connection.send(&pause);
            }
        }
    }

    /// The host resumes: every connection is told.
    pub fn resume(&mut self) {
        if !self.host_paused {
            return;
        }
        self.host_paused = false;
        for connection in self.connections.iter_mut().flatten() {
            if connection.connected() {
                connection.send(&Command::Resume);
            }
        }
    }

    fn has_password(&self) -> bool {
        self.config.password.is_some() || self.config.spectate_password.is_some()
    }

    /// Takes a new connection; `salt` (random, from the caller) salts its
    /// password when one is set. `None`: the match is full (the caller
    /// sends [`ServerSession::full_header`] and closes it).
    pub fn accept(&mut self, salt: u32) -> Option<ConnectionId> {
        let slot = match self.connections.iter().position(Option::is_none) {
            Some(slot) => slot,
            None if self.connections.len() < MAX_CLIENTS - 1 => {
                self.connections.push(None);
                self.connections.len() - 1
            }
            None => return None,
        };
        let salt = if self.has_password() { salt.max(1) } else { 0 };
        self.connections[slot] = Some(Connection {
            phase: Phase::Header,
            reader: CommandReader::new(Sender::Client, CLIENT_STATE_BYTES),
            outgoing: Vec::new(),
            protocol: 0,
            zlib: false,
            salt,
            nick: Name::default(),
            can_play: false,
            ports: 0,
            read_frame: 0,
            inputs: BTreeMap::new(),
            ping_sent_at: None,
            last_ping_at: 0,
            ping_ms: None,
            opened_at: None,
            heard_at: None,
            paused: false,
            paused_at: 0,
            stall_asked_at: 0,
        });
        Some(slot)
    }

    /// The header that tells a connection the match is full.
    pub fn full_header() -> [u8; super::wire::HEADER_LEN] {
        Header {
            magic: super::wire::FULL_MAGIC,
            platform: 0,
            compression: 0,
            salt_or_highest: 0,
            protocol: HIGHEST_PROTOCOL,
            implementation: 0,
        }
        .encode()
    }

    /// The next event.
    pub fn next_event(&mut self) -> Option<ServerEvent> {
        self.events.pop_front()
    }

    /// What it counted.
    pub fn stats(&self) -> ServerStats {
        self.stats
    }

    /// The next frame the host runs.
    pub fn next_frame(&self) -> u32 {
        self.next_frame
    }

    /// Whether the connection is still open (a closed one's last bytes,
    /// its goodbye or NAK, are still to be taken).
    pub fn is_open(&self, id: ConnectionId) -> bool {
        self.connection(id)
            .is_some_and(|c| c.phase != Phase::Closed)
    }

    /// Forgets a closed connection once its last bytes went.
    pub fn forget(&mut self, id: ConnectionId) {
        if let Some(slot) = self.connections.get_mut(id) {
            *slot = None;
        }
    }

    /// Whether any connection plays.
    pub fn has_players(&self) -> bool {
        self.open().any(|c| c.ports != 0)
    }

    /// The connections' nicks, ports and pings.
    pub fn players(&self) -> Vec<PlayerInfo> {
        self.open()
            .filter(|c| c.connected())
            .map(|c| PlayerInfo {
                nick: c.nick.text(),
                port: (c.ports != 0).then(|| c.ports.trailing_zeros()),
                ping_ms: c.ping_ms,
            })
            .collect()
    }

    fn open(&self) -> impl Iterator<Item = &Connection> {
        self.connections
            .iter()
            .flatten()
            .filter(|c| c.phase != Phase::Closed)
    }

    fn connection(&self, id: ConnectionId) -> Option<&Connection> {
        self.connections.get(id).and_then(Option::as_ref)
    }

    fn connection_mut(&mut self, id: ConnectionId) -> Option<&mut Connection> {
        self.connections.get_mut(id).and_then(Option::as_mut)
    }

    /// Takes the bytes to send to `id` (appends them to `out`).
    pub fn take_outgoing(&mut self, id: ConnectionId, out: &mut Vec<u8>) {
        if let Some(connection) = self.connection_mut(id) {
            out.append(&mut connection.outgoing);
        }
    }

    /// Bytes from `id` at `now_ms`.
    pub fn receive(&mut self, id: ConnectionId, bytes: &[u8], now_ms: u64) {
        if !self.is_open(id) {
            return;
        }
        if let Some(connection) = self.connection_mut(id) {
            connection.heard_at = Some(now_ms);
        }
        if let Err(why) = self.read(id, bytes, now_ms) {
            self.refuse(id, why);
        }
    }

    /// `id` closed its connection.
    pub fn closed(&mut self, id: ConnectionId) {
        if !self.is_open(id) {
            return;
        }
        match self.connection(id).map(|c| c.phase) {
            // RetroArch asks its player for the password: closing instead
            // is giving none.
            Some(Phase::Password) => self.refuse(id, Refusal::WrongPassword),
            Some(Phase::Info) => {
                let ours = format!("{} {}", self.config.core_name, self.config.core_version);
                self.refuse(id, Refusal::LeftAtOurCore { ours });
            }
            _ => self.drop_connection(id),
        }
    }

    /// Sends `id` a NAK (when connected) and closes it for `why`.
    fn refuse(&mut self, id: ConnectionId, why: Refusal) {
        let nick = self
            .connection(id)
            .map(|c| c.nick.text())
            .unwrap_or_default();
        if let Some(connection) = self.connection_mut(id) {
            if connection.connected() {
                connection.send(&Command::Nak);
            }
        }
        self.close(id);
        self.events.push_back(ServerEvent::Refused { nick, why });
    }

    /// Closes `id` after a goodbye or a closed connection.
    fn drop_connection(&mut self, id: ConnectionId) {
        let Some(connection) = self.connection(id) else {
            return;
        };
        let nick = connection.nick.text();
        let was_playing = connection.ports != 0;
        let was_connected = connection.connected();
        self.close(id);
        if was_connected {
            self.events
                .push_back(ServerEvent::Left { nick, was_playing });
        }
    }

    fn close(&mut self, id: ConnectionId) {
        let next_frame = self.next_frame;
        let Some(connection) = self.connection_mut(id) else {
            return;
        };
        let was_playing = connection.ports != 0;
        // Its pause ends with it.
        self.end_pause(id);
        let Some(connection) = self.connection_mut(id) else {
            return;
        };
        connection.phase = Phase::Closed;
        connection.ports = 0;
        connection.inputs.clear();
        if was_playing {
            let mode = self.mode_of(id, next_frame, false);
            self.send_all_but(id, &Command::Mode(mode));
        }
    }

    fn read(&mut self, id: ConnectionId, bytes: &[u8], now_ms: u64) -> Result<(), Refusal> {
        let connection = self.connection_mut(id).expect("an open connection");
        connection.reader.push(bytes)?;
        if connection.phase == Phase::Header {
            let Some(header) = connection.reader.header()? else {
                return Ok(());
            };
            self.on_header(id, header)?;
        }
        while self.is_open(id) {
            let connection = self.connection_mut(id).expect("an open connection");
            let Some(command) = connection.reader.command()? else {
                break;
            };
            self.on_command(id, command, now_ms)?;
        }
        Ok(())
    }

    fn on_header(&mut self, id: ConnectionId, header: Header) -> Result<(), Refusal> {
        let (low, high) = (header.protocol, header.salt_or_highest);
        // A client's highest protocol rides in the salt word (0 from
        // clients too old to say); we speak the highest both know.
        let protocol = match high {
            0 => low,
            high => high.min(HIGHEST_PROTOCOL),
        };
        let connection = self.connection_mut(id).expect("an open connection");
        let mut ours = Header {
            magic: MAGIC,
            platform: super::wire::platform_magic(),
            compression: COMPRESSION_ZLIB,
            salt_or_highest: connection.salt,
            protocol,
            implementation: super::wire::implementation_magic(RETROARCH_VERSION, HIGHEST_PROTOCOL),
        };
        if !(LOWEST_PROTOCOL..=HIGHEST_PROTOCOL).contains(&protocol) {
            // As RetroArch does: a header with protocol 0, so the client
            // can tell its player why.
            ours.protocol = 0;
            connection.outgoing.extend_from_slice(&ours.encode());
            return Err(Refusal::Version {
                low,
                high: high.max(low),
            });
        }
        connection.outgoing.extend_from_slice(&ours.encode());
        connection.protocol = protocol;
        connection.zlib = header.compression & COMPRESSION_ZLIB != 0;
        connection.phase = Phase::Nick;
        Ok(())
    }

    fn our_info(&self) -> Command {
        Command::Info(Some(Info {
            content_crc: self.config.content_crc,
            core_name: Name::new(&self.config.core_name),
            core_version: Name::new(&self.config.core_version),
        }))
    }

    fn on_command(
        &mut self,
        id: ConnectionId,
        command: Command,
        now_ms: u64,
    ) -> Result<(), Refusal> {
        let phase = self.connection(id).expect("an open connection").phase;
        match (phase, command) {
            (_, Command::Nak | Command::Disconnect) => self.drop_connection(id),
            (Phase::Nick, Command::Nick(nick)) => {
                let ours = Command::Nick(Name::new(&self.config.nick));
                let info = self.our_info();
                let passworded = self.has_password();
                let connection = self.connection_mut(id).expect("an open connection");
                connection.nick = nick;
                connection.send(&ours);
                if passworded {
                    connection.phase = Phase::Password;
                } else {
                    connection.can_play = true;
                    connection.send(&info);
                    connection.phase = Phase::Info;
                }
            }
            (Phase::Password, Command::Password(hash)) => {
                let salt = self.connection(id).expect("an open connection").salt;
                let matches = |password: &Option<String>| {
                    password
                        .as_deref()
                        .is_some_and(|password| password_hash(salt, password) == hash)
                };
                let can_play = matches(&self.config.password);
                if !can_play && !matches(&self.config.spectate_password) {
                    return Err(Refusal::WrongPassword);
                }
                let info = self.our_info();
                let connection = self.connection_mut(id).expect("an open connection");
                connection.can_play = can_play;
                connection.send(&info);
                connection.phase = Phase::Info;
            }
            (Phase::Info, Command::Info(None)) => {
                // A client without content: ours again, for it to load.
                let info = self.our_info();
                self.connection_mut(id)
                    .expect("an open connection")
                    .send(&info);
            }
            (Phase::Info, Command::Info(Some(info))) => self.on_info(id, info)?,
            (Phase::Connected, command) => self.on_match_command(id, command, now_ms)?,
            (_, command) => {
                return Err(Refusal::Protocol(WireError::BadValue {
                    command: command_word(&command),
                    what: "not expected during the handshake".into(),
                }))
            }
        }
        Ok(())
    }

    fn on_info(&mut self, id: ConnectionId, info: Info) -> Result<(), Refusal> {
        let (core, version) = (info.core_name.text(), info.core_version.text());
        if !core.eq_ignore_ascii_case(&self.config.core_name) {
            return Err(Refusal::CoreMismatch {
                theirs: format!("{core} {version}"),
                ours: format!("{} {}", self.config.core_name, self.config.core_version),
            });
        }
        let nick = self.unique_nick(id);
        if !version.eq_ignore_ascii_case(&self.config.core_version) {
            self.events.push_back(ServerEvent::CoreVersionDiffers {
                nick: nick.text(),
                version,
            });
        }
        if info.content_crc != 0
            && self.config.content_crc != 0
            && info.content_crc != self.config.content_crc
        {
            self.events
                .push_back(ServerEvent::ContentDiffers { nick: nick.text() });
        }
        let sync = Command::Sync(Sync {
            frame: self.next_frame,
            client: id as u32 + 1,
            paused: self.is_paused(),
            devices: self.devices,
            share_modes: [0; MAX_INPUT_DEVICES],
            device_clients: self.device_clients(),
            nick,
            sram: self.sram.clone(),
        });
        let allow_pausing = self.config.allow_pausing;
        let connection = self.connection_mut(id).expect("an open connection");
        connection.nick = nick;
        connection.send(&sync);
        if connection.protocol >= 6 {
            connection.send(&Command::AllowPausing(allow_pausing));
            connection.send(&Command::InputLatencyFrames { min: 0, max: 0 });
        }
        connection.phase = Phase::Connected;
        let protocol = connection.protocol;
        self.started = true;
        self.state_wanted = true;
        self.events.push_back(ServerEvent::Connected {
            client: id as u32 + 1,
            nick: nick.text(),
            protocol,
        });
        Ok(())
    }

    /// The connection's nick, or with " (2)", " (3)" … when the host or
    /// another connection has it, as RetroArch's server does.
    fn unique_nick(&self, id: ConnectionId) -> Name {
        let wanted = self.connection(id).expect("an open connection").nick.text();
        let taken = |name: &str| {
            name == self.config.nick
                || self.connections.iter().enumerate().any(|(other, c)| {
                    other != id
                        && c.as_ref()
                            .is_some_and(|c| c.connected() && c.nick.text() == name)
                })
        };
        let mut candidate = wanted.clone();
        let mut suffix = 1;
        while taken(&candidate) {
            suffix += 1;
            let tail = format!(" ({suffix})");
            let mut end = wanted.len().min(31 - tail.len());
            while !wanted.is_char_boundary(end) {
                end -= 1;
            }
            candidate = format!("{}{tail}", &wanted[..end]);
        }
        Name::new(&candidate)
    }

    /// For each port, the clients on it (the host, client 0, on the first).
    fn device_clients(&self) -> [u32; MAX_INPUT_DEVICES] {
        let mut clients = [0; MAX_INPUT_DEVICES];
        clients[0] = 1;
        for (id, connection) in self.connections.iter().enumerate() {
            let Some(connection) = connection else {
                continue;
            };
            for (port, mapped) in clients.iter_mut().enumerate() {
                if connection.ports & (1 << port) != 0 {
                    *mapped |= 1 << (id + 1);
                }
            }
        }
        clients
    }

    fn mode_of(&self, id: ConnectionId, frame: u32, you: bool) -> Mode {
        let connection = self.connection(id).expect("a connection");
        Mode {
            frame,
            you,
            playing: connection.ports != 0,
            slave: false,
            client: id as u16 + 1,
            devices: connection.ports,
            share_modes: [0; MAX_INPUT_DEVICES],
            nick: connection.nick,
        }
    }

    /// Ends `id`'s pause, if it paused, telling the others.
    fn end_pause(&mut self, id: ConnectionId) {
        let Some(connection) = self.connection_mut(id).filter(|c| c.paused) else {
            return;
        };
        connection.paused = false;
        let nick = connection.nick;
        self.send_all_but(id, &Command::Resume);
        self.events
            .push_back(ServerEvent::Resumed { nick: nick.text() });
    }

    fn send_all_but(&mut self, except: ConnectionId, command: &Command) {
        for (id, connection) in self.connections.iter_mut().enumerate() {
            if let Some(connection) = connection.as_mut().filter(|c| c.connected()) {
                if id != except {
                    connection.send(command);
                }
            }
        }
    }

    fn on_match_command(
        &mut self,
        id: ConnectionId,
        command: Command,
        now_ms: u64,
    ) -> Result<(), Refusal> {
        let bad = |command: u32, what: &str| {
            Refusal::Protocol(WireError::BadValue {
                command,
                what: what.to_string(),
            })
        };
        let next_frame = self.next_frame;
        let allow_pausing = self.config.allow_pausing;
        let expected_words = |ports: u32| ports.count_ones() as usize;
        let connection = self.connection_mut(id).expect("an open connection");
        match command {
            Command::Input { frame, input, .. } => {
                if connection.ports == 0 {
                    return Err(bad(id::INPUT, "input from a player who does not play"));
                }
                if frame < connection.read_frame {
                    return Ok(());
                }
                if frame > connection.read_frame {
                    return Err(bad(id::INPUT, "input out of order"));
                }
                if input.words().len() != expected_words(connection.ports) {
                    return Err(bad(id::INPUT, "input of the wrong size for its ports"));
                }
                if frame > next_frame + MAX_FRAMES_AHEAD {
                    return Err(bad(id::INPUT, "input too far ahead of the host's clock"));
                }
                if frame >= next_frame {
                    connection.inputs.insert(frame, input);
                }
                connection.read_frame += 1;
            }
            Command::Play { devices, .. } => {
                if connection.ports != 0 {
                    return Err(bad(id::PLAY, "asked to play while playing"));
                }
                let nick = connection.nick.text();
                if !connection.can_play {
                    connection.send(&Command::ModeRefused(REFUSED_UNPRIVILEGED));
                    self.events.push_back(ServerEvent::PlayRefused {
                        nick,
                        reason: REFUSED_UNPRIVILEGED,
                    });
                    return Ok(());
                }
                let taken = self.device_clients();
                let free = |port: usize| self.devices[port] != device::NONE && taken[port] == 0;
                let port = (0..MAX_INPUT_DEVICES)
                    .filter(|&port| devices == 0 || devices & (1 << port) != 0)
                    .find(|&port| free(port));
                let Some(port) = port else {
                    let connection = self.connection_mut(id).expect("an open connection");
                    connection.send(&Command::ModeRefused(REFUSED_NO_SLOTS));
                    self.events.push_back(ServerEvent::PlayRefused {
                        nick,
                        reason: REFUSED_NO_SLOTS,
                    });
                    return Ok(());
                };
                // It plays from the first frame whose host input has not
                // gone out yet.
                let connection = self.connection_mut(id).expect("an open connection");
                connection.ports = 1 << port;
                connection.read_frame = next_frame;
                let mode = self.mode_of(id, next_frame, true);
                let connection = self.connection_mut(id).expect("an open connection");
                connection.send(&Command::Mode(mode));
                self.send_all_but(id, &Command::Mode(Mode { you: false, ..mode }));
                self.events.push_back(ServerEvent::Playing {
                    client: id as u32 + 1,
                    nick,
                    port: port as u32,
                    frame: next_frame,
                });
            }
            Command::Spectate => {
                if connection.ports == 0 {
                    return Err(bad(id::SPECTATE, "asked to watch while watching"));
                }
                let frame = connection.read_frame;
                let nick = connection.nick.text();
                connection.ports = 0;
                connection.inputs.clear();
                // Only a player pauses: a pause ends with its playing.
                self.end_pause(id);
                let mode = self.mode_of(id, frame, true);
                let connection = self.connection_mut(id).expect("an open connection");
                connection.send(&Command::Mode(mode));
                self.send_all_but(id, &Command::Mode(Mode { you: false, ..mode }));
                self.events.push_back(ServerEvent::Left {
                    nick,
                    was_playing: true,
                });
            }
            Command::RequestSavestate => {
                let nick = connection.nick.text();
                self.stats.states_asked += 1;
                self.state_wanted = true;
                self.events.push_back(ServerEvent::StateAsked { nick });
            }
            Command::Chat { text, .. } => {
                if connection.ports == 0 {
                    return Err(bad(id::PLAYER_CHAT, "chat from a player who does not play"));
                }
                let author = connection.nick;
                let line = Command::Chat {
                    author: Some(author),
                    text: text.clone(),
                };
                for connection in self.connections.iter_mut().flatten() {
                    if connection.connected() && connection.ports != 0 && connection.protocol >= 6 {
                        connection.send(&line);
                    }
                }
                self.events.push_back(ServerEvent::Chat {
                    author: author.text(),
                    text,
                });
            }
            Command::PingRequest => connection.send(&Command::PingResponse),
            Command::PingResponse => {
                if let Some(sent) = connection.ping_sent_at.take() {
                    connection.ping_ms = Some(now_ms.saturating_sub(sent));
                }
            }
            Command::Pause(_) => {
                // Only a player pauses, and only when allowed (the
                // setting went out with SYNC).
                if connection.ports == 0 || !allow_pausing || connection.paused {
                    return Ok(());
                }
                connection.paused = true;
                connection.paused_at = now_ms;
                let nick = connection.nick;
                self.send_all_but(id, &Command::Pause(nick));
                self.events
                    .push_back(ServerEvent::Paused { nick: nick.text() });
            }
            Command::Resume => self.end_pause(id),
            // A CRC from a client means nothing to the host.
            Command::Crc { .. } => {}
            Command::Ack | Command::Unknown { .. } => {}
            other => {
                return Err(bad(command_word(&other), "a host's command, from a client"));
            }
        }
        Ok(())
    }

    /// Whether the host's state must go out before the next frame (a new
    /// connection, or a player that found its state unlike ours): the
    /// caller saves it and calls [`ServerSession::send_state`].
    pub fn wants_state(&self) -> bool {
        self.state_wanted
    }

    /// Sends the state at the start of the next frame to every connection.
    pub fn send_state(&mut self, state: &[u8]) {
        self.state_wanted = false;
        let frame = self.next_frame;
        // Protocol 7 peers get the core's state in its container.
        let contained = wrap_in_container(state);
        let mut packed: [[Option<Vec<u8>>; 2]; 2] = Default::default();
        for connection in self.connections.iter_mut().flatten() {
            if !connection.connected() {
                continue;
            }
            let in_container = connection.protocol >= 7;
            let sent: &[u8] = if in_container { &contained } else { state };
            let data = packed[usize::from(in_container)][usize::from(connection.zlib)]
                .get_or_insert_with(|| pack_state(sent, connection.zlib))
                .clone();
            connection.send(&Command::LoadSavestate {
                frame,
                size: sent.len() as u32,
                data,
            });
        }
        self.stats.states_sent += 1;
    }

    /// The next frame, once the clock started (a connection synced) and
    /// every player's input of it came, and no state waits to go out.
    pub fn ready_frame(&self) -> Option<u32> {
        if !self.started || self.state_wanted || self.is_paused() {
            return None;
        }
        let frame = self.next_frame;
        let waiting = self
            .open()
            .any(|c| c.ports != 0 && !c.inputs.contains_key(&frame));
        (!waiting).then_some(frame)
    }

    /// Whether the state at the start of `frame` needs its CRC.
    pub fn wants_crc(&self, frame: u32) -> bool {
        self.config.check_frames != 0 && frame % self.config.check_frames == 0
    }

    /// Plays the ready frame with the host's buttons `local` (libretro
    /// joypad bits) on the first port; `crc` is the CRC-32 of the state at
    /// its start when [`ServerSession::wants_crc`] asked. Returns every
    /// port's buttons, and sends every connection the frame's input.
    pub fn play_frame(&mut self, local: u32, crc: Option<u32>) -> [u32; MAX_INPUT_DEVICES] {
        let frame = self.next_frame;
        let mut ports = [0u32; MAX_INPUT_DEVICES];
        ports[0] = local;
        let mut played = Vec::new();
        for (id, connection) in self.connections.iter_mut().enumerate() {
            let Some(connection) = connection.as_mut().filter(|c| c.ports != 0) else {
                continue;
            };
            let input = connection.inputs.remove(&frame).unwrap_or_default();
            let mut words = input.words().iter();
            for (port, buttons) in ports.iter_mut().enumerate() {
                if connection.ports & (1 << port) != 0 {
                    *buttons |= words.next().copied().unwrap_or(0);
                }
            }
            played.push((id, input));
        }
        let host = Command::Input {
            frame,
            client: 0,
            input: InputWords::new(&[local]).unwrap_or_default(),
        };
        let check = crc.filter(|_| self.wants_crc(frame));
        for (to, connection) in self.connections.iter_mut().enumerate() {
            let Some(connection) = connection.as_mut().filter(|c| c.connected()) else {
                continue;
            };
            for (from, input) in &played {
                if *from != to {
                    connection.send(&Command::Input {
                        frame,
                        client: *from as u32 + 1,
                        input: *input,
                    });
                }
            }
            connection.send(&host);
            if let Some(crc) = check {
                connection.send(&Command::Crc { frame, crc });
            }
        }
        if check.is_some() {
            self.stats.crcs_sent += 1;
        }
        self.next_frame += 1;
        self.ask_stalls();
        ports
    }

    /// Tells each player whose input runs more than [`STALL_WHEN_AHEAD`]
    /// frames ahead of the host's clock to wait until the clock catches
    /// up, at most once in [`STALL_EVERY_FRAMES`], as RetroArch's server
    /// does.
    fn ask_stalls(&mut self) {
        let now = self.next_frame;
        for connection in self.connections.iter_mut().flatten() {
            let ahead = connection.read_frame.saturating_sub(now);
            if connection.connected()
                && connection.ports != 0
                && ahead > STALL_WHEN_AHEAD
                && connection.stall_asked_at.saturating_add(STALL_EVERY_FRAMES) < now
            {
                connection.stall_asked_at = now;
                connection.send(&Command::Stall(ahead + 1));
                self.stats.stalls_sent += 1;
            }
        }
    }

    /// Timers at `now_ms`: each connection's round-trip measurement, and
    /// the end of one that stalls its handshake or, playing, goes silent.
    pub fn poll(&mut self, now_ms: u64) {
        // A paused match sends no input: silence then is no loss.
        let paused = self.is_paused();
        let mut stalled = Vec::new();
        let mut silent = Vec::new();
        let mut paused_too_long = Vec::new();
        for (slot, connection) in self.connections.iter_mut().enumerate() {
            let Some(connection) = connection else {
                continue;
            };
            if connection.phase == Phase::Closed {
                continue;
            }
            let opened_at = *connection.opened_at.get_or_insert(now_ms);
            let since = |at: u64| now_ms.saturating_sub(at);
            if connection.paused && since(connection.paused_at) >= LONGEST_PAUSE_MS {
                paused_too_long.push(slot);
            }
            if paused {
                // Silence is counted from the pause's end.
                connection.heard_at = Some(now_ms);
            }
            if !connection.connected() && since(opened_at) >= HANDSHAKE_WITHIN_MS {
                stalled.push(slot);
            } else if connection.ports != 0
                && !paused
                && since(connection.heard_at.unwrap_or(opened_at)) >= PLAYER_SILENT_MS
            {
                silent.push(slot);
            }
        }
        for slot in paused_too_long {
            self.end_pause(slot);
        }
        for slot in stalled {
            self.refuse(slot, Refusal::SlowHandshake);
        }
        for slot in silent {
            self.drop_connection(slot);
        }
        for connection in self.connections.iter_mut().flatten() {
            if connection.connected()
                && connection.protocol >= 6
                && connection.ping_sent_at.is_none()
                && now_ms.saturating_sub(connection.last_ping_at) >= PING_EVERY_MS
            {
                connection.last_ping_at = now_ms;
                connection.ping_sent_at = Some(now_ms);
                connection.send(&Command::PingRequest);
            }
        }
    }

    /// Sends the host's own chat line to every player who speaks
    /// protocol 6 (cut to the protocol's length at a character boundary).
    pub fn say(&mut self, text: &str) {
        let mut end = text.len().min(super::wire::CHAT_MAX_LEN);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        if end == 0 {
            return;
        }
        let line = Command::Chat {
            author: Some(Name::new(&self.config.nick)),
            text: text[..end].to_string(),
        };
        for connection in self.connections.iter_mut().flatten() {
            if connection.connected() && connection.ports != 0 && connection.protocol >= 6 {
                connection.send(&line);
            }
        }
    }

    /// Says goodbye to every connection (the match ends).
    pub fn leave(&mut self) {
        for connection in self.connections.iter_mut().flatten() {
            if connection.connected() {
                connection.send(&Command::Disconnect);
            }
            connection.phase = Phase::Closed;
        }
    }
}
