//! A netcade player in a RetroArch host's match, sans-IO: bytes from the
//! host in, bytes to it out, time as a parameter. It shakes hands as
//! RetroArch's client does (header, NICK, PASSWORD when salted, INFO both
//! ways, SYNC), asks to PLAY and then follows the host's frame clock in
//! lockstep: a frame runs once the host's input of it (or its NOINPUT) and
//! every other player's have come, so this side never predicts and never
//! rolls back, while RetroArch rolls back on its side as it does for any
//! late client. Our INPUT goes out for every frame from the one MODE gave
//! us, the host's savestate (LOAD_SAVESTATE) sets where we play from, and
//! the host's CRCs are checked against our states: a mismatch asks for the
//! host's state, as RetroArch's own clients do.

use super::state::{container_core_state, is_container, password_hash, unpack_state, StateError};
use super::wire::{
    Command, CommandReader, Header, Info, InputWords, Mode, Name, Sender, WireError,
    COMPRESSION_ZLIB, HIGHEST_PROTOCOL, LOWEST_PROTOCOL, MAX_CLIENTS, MAX_INPUT_DEVICES,
    MAX_INPUT_WORDS,
};
use std::collections::{BTreeMap, VecDeque};

/// Frames of input the host may send ahead of the frame we play before it
/// is a misbehaving host (RetroArch itself stalls 60 frames ahead).
const MAX_FRAMES_AHEAD: usize = 600;
/// Host CRCs and our own kept for comparison.
const CRCS_KEPT: usize = 256;
/// How often we measure the round trip (protocol 6), ms.
const PING_EVERY_MS: u64 = 3000;

/// libretro's device types, as SYNC names each port's.
pub mod device {
    /// Nothing plugged in.
    pub const NONE: u32 = 0;
    /// A joypad: one word.
    pub const JOYPAD: u32 = 1;
    /// A mouse: two words.
    pub const MOUSE: u32 = 2;
    /// A keyboard: five words.
    pub const KEYBOARD: u32 = 3;
    /// A light gun: two words.
    pub const LIGHTGUN: u32 = 4;
    /// An analog pad: its buttons, then two sticks.
    pub const ANALOG: u32 = 5;
}

/// Words an INPUT carries for a port with `device` plugged in (a subclass
/// counts as its base type); 0 for devices RetroArch does not send.
pub fn device_words(device: u32) -> usize {
    match device & 0xff {
        device::JOYPAD => 1,
        device::MOUSE | device::LIGHTGUN => 2,
        device::KEYBOARD => 5,
        device::ANALOG => 3,
        _ => 0,
    }
}

/// Whether a port's first word is libretro joypad buttons (a joypad's, an
/// analog pad's); a mouse's, light gun's or keyboard's words are not.
fn has_buttons(device: u32) -> bool {
    matches!(device & 0xff, device::JOYPAD | device::ANALOG)
}

/// Share modes' digital part: XOR (else OR; vote counts as OR here).
const SHARE_DIGITAL_XOR: u8 = 0x08;
const SHARE_DIGITAL_BITS: u8 = 0x1C;

/// What the player brings to the match.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// Our nick (the host may make it unique).
    pub nick: String,
    /// The host's password, when it asks for one.
    pub password: Option<String>,
    /// The core's `library_name`.
    pub core_name: String,
    /// Its `library_version`.
    pub core_version: String,
    /// CRC-32 of the content file.
    pub content_crc: u32,
    /// Bytes of our core's state: a host savestate of another size is
    /// refused (0: take any size up to `max_state_bytes`).
    pub state_size: usize,
    /// The most bytes a savestate or the SRAM may have.
    pub max_state_bytes: usize,
    /// Stay a spectator rather than asking to play.
    pub spectate: bool,
    /// Frames our input goes out ahead of the frame we play (an input
    /// delay): a host that waits for our input of a frame before running
    /// it, as netcade's does, gets it before we wait for its own.
    pub input_lead: u32,
}

/// Why the session ended.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClientEnd {
    /// The host sent what the protocol does not allow.
    #[error("the RetroArch host broke the protocol: {0}")]
    Protocol(#[from] WireError),
    /// The host speaks a protocol outside ours.
    #[error("the RetroArch host speaks netplay protocol {host}; netcade speaks {LOWEST_PROTOCOL} to {HIGHEST_PROTOCOL}")]
    Version {
        /// The host's.
        host: u32,
    },
    /// The host runs another core.
    #[error("the host runs {host}; you chose {ours}")]
    CoreMismatch {
        /// The host's core and version.
        host: String,
        /// Ours.
        ours: String,
    },
    /// The host wants a password and none was given.
    #[error("the host asks for a password: give --password")]
    PasswordNeeded,
    /// The host hung up after our password.
    #[error("the host refused the password")]
    WrongPassword,
    /// The host's savestate cannot be loaded.
    #[error("{0}")]
    State(#[from] StateError),
    /// A savestate of another size than our core's.
    #[error(
        "the host's savestate has {host} bytes, this core's have {ours}: not the same core build"
    )]
    StateSize {
        /// The host's.
        host: usize,
        /// Ours.
        ours: usize,
    },
    /// The host sent NAK.
    #[error("the host gave up on this connection (NAK)")]
    Refused,
    /// The host said goodbye or closed the connection.
    #[error("the host left")]
    HostLeft,
    /// We left.
    #[error("left the match")]
    Left,
}

impl ClientEnd {
    /// Whether the player's choices are at fault (another core, a missing
    /// or wrong password, a RetroArch too old or new), not the network.
    pub fn is_user_mistake(&self) -> bool {
        matches!(
            self,
            ClientEnd::Version { .. }
                | ClientEnd::CoreMismatch { .. }
                | ClientEnd::PasswordNeeded
                | ClientEnd::WrongPassword
                | ClientEnd::StateSize { .. }
        )
    }
}

/// What happened that the player may want to hear of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientEvent {
    /// The handshake is done: the host's nick and the protocol spoken.
    Connected {
        /// The host's nick.
        host: String,
        /// The protocol.
        protocol: u32,
        /// The frame the host was at.
        frame: u32,
    },
    /// The host runs another version of the core (RetroArch only warns).
    CoreVersionDiffers {
        /// The host's version.
        host: String,
    },
    /// The host's content has another CRC (RetroArch only warns).
    ContentDiffers,
    /// We play from `frame` on ports `devices` (a bitmap).
    Playing {
        /// Our client number.
        client: u32,
        /// Our ports.
        devices: u32,
        /// Our first frame.
        frame: u32,
    },
    /// The host refused to let us play (its reason number).
    PlayRefused(u32),
    /// Someone else started playing.
    PlayerJoined {
        /// Their nick.
        nick: String,
        /// Their ports.
        devices: u32,
    },
    /// Someone stopped playing.
    PlayerLeft {
        /// Their nick.
        nick: String,
    },
    /// A chat line.
    Chat {
        /// Who.
        author: String,
        /// What.
        text: String,
    },
    /// Someone paused the match.
    Paused(String),
    /// The match resumed.
    Resumed,
    /// A host CRC did not match our state of its frame; the host's state
    /// was asked for.
    Desynced {
        /// The frame.
        frame: u32,
    },
    /// The session ended.
    Ended(ClientEnd),
}

/// Where the handshake is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Header,
    Nick,
    Info,
    Sync,
    Connected,
    Ended,
}

/// One frame's input as it arrives: each port's buttons so far, and who
/// sent theirs.
#[derive(Clone, Copy, Debug, Default)]
struct FrameInput {
    ports: [u32; MAX_INPUT_DEVICES],
}

/// What the session counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientStats {
    /// Host CRCs compared with our states.
    pub crc_checks: u32,
    /// Of those, mismatched.
    pub crc_mismatches: u32,
    /// Host savestates loaded (the first included).
    pub states_loaded: u32,
    /// STALL requests from the host.
    pub stalls: u32,
    /// The latest round trip measured, ms.
    pub ping_ms: Option<u64>,
}

/// The client session.
#[derive(Debug)]
pub struct ClientSession {
    config: ClientConfig,
    phase: Phase,
    reader: CommandReader,
    outgoing: Vec<u8>,
    events: VecDeque<ClientEvent>,
    protocol: u32,
    zlib: bool,
    salt: u32,
    password_sent: bool,
    host_nick: String,
    /// The device type on each port.
    devices: [u32; MAX_INPUT_DEVICES],
    share_modes: [u8; MAX_INPUT_DEVICES],
    /// Ports of each client.
    client_devices: [u32; MAX_CLIENTS],
    /// Clients playing (a bitmap; the host is client 0).
    players: u32,
    /// The next frame of each client's input to read.
    read_frames: [u32; MAX_CLIENTS],
    /// The next frame the host's clock has not passed.
    host_frame: u32,
    /// Our client number.
    client: u32,
    /// Whether we play, and the next frame of ours to send.
    playing: bool,
    playing_from: u32,
    next_send: u32,
    /// The next frame we run, once a state came.
    next_frame: u32,
    have_state: bool,
    state: Option<(u32, Vec<u8>)>,
    inputs: BTreeMap<u32, FrameInput>,
    /// Our buttons sent for frames not played yet.
    own_inputs: BTreeMap<u32, u32>,
    host_crcs: BTreeMap<u32, u32>,
    our_crcs: BTreeMap<u32, u32>,
    crc_interval: Option<u32>,
    state_requested: bool,
    ping_sent_at: Option<u64>,
    last_ping_at: u64,
    stats: ClientStats,
}

impl ClientSession {
    /// A session whose header is ready to send.
    pub fn new(config: ClientConfig) -> ClientSession {
        let mut outgoing = Vec::new();
        outgoing.extend_from_slice(&Header::client().encode());
        ClientSession {
            reader: CommandReader::new(Sender::Host, config.max_state_bytes),
            config,
            phase: Phase::Header,
            outgoing,
            events: VecDeque::new(),
            protocol: 0,
            zlib: false,
            salt: 0,
            password_sent: false,
            host_nick: String::new(),
            devices: [device::NONE; MAX_INPUT_DEVICES],
            share_modes: [0; MAX_INPUT_DEVICES],
            client_devices: [0; MAX_CLIENTS],
            players: 0,
            read_frames: [0; MAX_CLIENTS],
            host_frame: 0,
            client: 0,
            playing: false,
            playing_from: 0,
            next_send: 0,
            next_frame: 0,
            have_state: false,
            state: None,
            inputs: BTreeMap::new(),
            own_inputs: BTreeMap::new(),
            host_crcs: BTreeMap::new(),
            our_crcs: BTreeMap::new(),
            crc_interval: None,
            state_requested: false,
            ping_sent_at: None,
            last_ping_at: 0,
            stats: ClientStats::default(),
        }
    }

    /// Takes the bytes to send (appends them to `out`).
    pub fn take_outgoing(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.outgoing);
    }

    /// The next event.
    pub fn next_event(&mut self) -> Option<ClientEvent> {
        self.events.pop_front()
    }

    /// How it ended, once it has.
    pub fn is_ended(&self) -> bool {
        self.phase == Phase::Ended
    }

    /// Whether the handshake is done.
    pub fn is_connected(&self) -> bool {
        self.phase == Phase::Connected
    }

    /// Whether the host gave us ports to play.
    pub fn is_playing(&self) -> bool {
        self.playing
    }

    /// Our ports (a bitmap).
    pub fn our_devices(&self) -> u32 {
        self.client_devices[self.client as usize]
    }

    /// The host's nick.
    pub fn host_nick(&self) -> &str {
        &self.host_nick
    }

    /// The device type on each port.
    pub fn devices(&self) -> &[u32; MAX_INPUT_DEVICES] {
        &self.devices
    }

    /// What it counted.
    pub fn stats(&self) -> ClientStats {
        self.stats
    }

    /// The frame the host's clock is at (the next it has not passed).
    pub fn host_frame(&self) -> u32 {
        self.host_frame
    }

    /// The next frame to run.
    pub fn next_frame(&self) -> u32 {
        self.next_frame
    }

    /// The host's state to load before the next frame, and its frame.
    pub fn take_state(&mut self) -> Option<(u32, Vec<u8>)> {
        self.state.take()
    }

    fn end(&mut self, why: ClientEnd) {
        if self.phase != Phase::Ended {
            self.phase = Phase::Ended;
            self.events.push_back(ClientEvent::Ended(why));
        }
    }

    fn send(&mut self, command: &Command) {
        command.encode(&mut self.outgoing);
    }

    /// Leaves: a DISCONNECT goes out.
    pub fn leave(&mut self) {
        if self.phase != Phase::Ended {
            self.send(&Command::Disconnect);
            self.end(ClientEnd::Left);
        }
    }

    /// The host closed the connection.
    pub fn closed(&mut self) {
        let why = if self.phase == Phase::Info && self.password_sent {
            ClientEnd::WrongPassword
        } else {
            ClientEnd::HostLeft
        };
        self.end(why);
    }

    /// Bytes from the host at `now_ms`.
    pub fn receive(&mut self, bytes: &[u8], now_ms: u64) {
        if self.phase == Phase::Ended {
            return;
        }
        if let Err(error) = self.read(bytes, now_ms) {
            self.end(error);
        }
    }

    fn read(&mut self, bytes: &[u8], now_ms: u64) -> Result<(), ClientEnd> {
        self.reader.push(bytes)?;
        if self.phase == Phase::Header {
            let Some(header) = self.reader.header()? else {
                return Ok(());
            };
            self.on_header(header)?;
        }
        while self.phase != Phase::Ended {
            let Some(command) = self.reader.command()? else {
                break;
            };
            self.on_command(command, now_ms)?;
        }
        Ok(())
    }

    fn on_header(&mut self, header: Header) -> Result<(), ClientEnd> {
        if !(LOWEST_PROTOCOL..=HIGHEST_PROTOCOL).contains(&header.protocol) {
            return Err(ClientEnd::Version {
                host: header.protocol,
            });
        }
        self.protocol = header.protocol;
        self.zlib = header.compression & COMPRESSION_ZLIB != 0;
        self.salt = header.salt_or_highest;
        self.send(&Command::Nick(Name::new(&self.config.nick)));
        self.phase = Phase::Nick;
        Ok(())
    }

    fn our_info(&self) -> Command {
        Command::Info(Some(Info {
            content_crc: self.config.content_crc,
            core_name: Name::new(&self.config.core_name),
            core_version: Name::new(&self.config.core_version),
        }))
    }

    fn on_command(&mut self, command: Command, now_ms: u64) -> Result<(), ClientEnd> {
        match (self.phase, command) {
            (_, Command::Nak) => return Err(ClientEnd::Refused),
            (_, Command::Disconnect) => return Err(ClientEnd::HostLeft),
            (Phase::Nick, Command::Nick(nick)) => {
                self.host_nick = nick.text();
                if self.salt != 0 {
                    let Some(password) = &self.config.password else {
                        return Err(ClientEnd::PasswordNeeded);
                    };
                    let hash = password_hash(self.salt, password);
                    self.send(&Command::Password(hash));
                    self.password_sent = true;
                }
                self.phase = Phase::Info;
            }
            (Phase::Info, Command::Info(None)) => {
                // A host without content: it may load ours.
                let info = self.our_info();
                self.send(&info);
            }
            (Phase::Info, Command::Info(Some(info))) => self.on_info(info)?,
            (Phase::Sync, Command::Sync(sync)) => {
                self.host_frame = sync.frame;
                self.next_frame = sync.frame;
                self.client = sync.client;
                self.devices = sync.devices;
                self.share_modes = sync.share_modes;
                for (port, clients) in sync.device_clients.iter().enumerate() {
                    self.players |= clients;
                    for client in 0..MAX_CLIENTS {
                        if clients & (1 << client) != 0 {
                            self.client_devices[client] |= 1 << port;
                        }
                    }
                }
                self.read_frames = [sync.frame; MAX_CLIENTS];
                self.phase = Phase::Connected;
                self.events.push_back(ClientEvent::Connected {
                    host: self.host_nick.clone(),
                    protocol: self.protocol,
                    frame: sync.frame,
                });
                if !self.config.spectate {
                    self.send(&Command::Play {
                        devices: 0,
                        share_mode: 0,
                        slave: false,
                    });
                }
            }
            (Phase::Connected, command) => self.on_match_command(command, now_ms)?,
            // Settings may come with the SYNC; anything else out of turn is
            // a broken handshake.
            (_, Command::AllowPausing(_) | Command::InputLatencyFrames { .. }) => {}
            (_, command) => {
                return Err(ClientEnd::Protocol(WireError::BadValue {
                    command: command_word(&command),
                    what: "not expected during the handshake".into(),
                }))
            }
        }
        Ok(())
    }

    fn on_info(&mut self, info: Info) -> Result<(), ClientEnd> {
        let (host_core, host_version) = (info.core_name.text(), info.core_version.text());
        if !host_core.eq_ignore_ascii_case(&self.config.core_name) {
            return Err(ClientEnd::CoreMismatch {
                host: format!("{host_core} {host_version}"),
                ours: format!("{} {}", self.config.core_name, self.config.core_version),
            });
        }
        if !host_version.eq_ignore_ascii_case(&self.config.core_version) {
            self.events
                .push_back(ClientEvent::CoreVersionDiffers { host: host_version });
        }
        if info.content_crc != 0
            && self.config.content_crc != 0
            && info.content_crc != self.config.content_crc
        {
            self.events.push_back(ClientEvent::ContentDiffers);
        }
        let ours = self.our_info();
        self.send(&ours);
        self.phase = Phase::Sync;
        Ok(())
    }

    fn bad(command: u32, what: &str) -> ClientEnd {
        ClientEnd::Protocol(WireError::BadValue {
            command,
            what: what.to_string(),
        })
    }

    fn on_match_command(&mut self, command: Command, now_ms: u64) -> Result<(), ClientEnd> {
        use super::wire::id;
        match command {
            Command::Input {
                frame,
                client,
                input,
            } => self.on_input(frame, client & 0xFFFF, &input)?,
            Command::NoInput { frame } => {
                if frame < self.host_frame {
                    return Ok(());
                }
                if frame != self.host_frame {
                    return Err(Self::bad(id::NOINPUT, "a NOINPUT out of order"));
                }
                self.host_frame += 1;
            }
            Command::Mode(mode) => self.on_mode(mode)?,
            Command::ModeRefused(reason) => self.events.push_back(ClientEvent::PlayRefused(reason)),
            Command::Crc { frame, crc } => self.on_crc(frame, crc),
            Command::LoadSavestate { frame, size, data } => {
                if frame != self.host_frame {
                    return Err(Self::bad(id::LOAD_SAVESTATE, "a savestate out of order"));
                }
                let mut state =
                    unpack_state(&data, size as usize, self.zlib, self.config.max_state_bytes)?;
                // Protocol 7 wraps the core's state in a container (a host
                // may still send it bare).
                if self.protocol >= 7 && is_container(&state) {
                    state = container_core_state(&state)?.to_vec();
                }
                if self.config.state_size != 0 && state.len() != self.config.state_size {
                    return Err(ClientEnd::StateSize {
                        host: state.len(),
                        ours: self.config.state_size,
                    });
                }
                self.load_at(frame);
                self.state = Some((frame, state));
                self.stats.states_loaded += 1;
            }
            Command::Reset(frame) => {
                if frame != self.host_frame {
                    return Err(Self::bad(id::RESET, "a reset out of order"));
                }
                // A core is not reset through netcade's games: the host's
                // state after its reset is asked for instead.
                if !self.state_requested {
                    self.state_requested = true;
                    self.send(&Command::RequestSavestate);
                }
            }
            Command::Pause(nick) => self.events.push_back(ClientEvent::Paused(nick.text())),
            Command::Resume => self.events.push_back(ClientEvent::Resumed),
            Command::Stall(_) => self.stats.stalls += 1,
            Command::Chat { author, text } => self.events.push_back(ClientEvent::Chat {
                author: author.map(|name| name.text()).unwrap_or_default(),
                text,
            }),
            Command::PingRequest => self.send(&Command::PingResponse),
            Command::PingResponse => {
                if let Some(sent) = self.ping_sent_at.take() {
                    self.stats.ping_ms = Some(now_ms.saturating_sub(sent));
                }
            }
            Command::AllowPausing(_) | Command::InputLatencyFrames { .. } => {}
            Command::Ack | Command::Unknown { .. } => {}
            other => {
                return Err(Self::bad(
                    command_word(&other),
                    "a client's command, from the host",
                ))
            }
        }
        Ok(())
    }

    /// A state for `frame` came: we play from it, and no one's input of
    /// earlier frames is expected any more (ours still goes out in order).
    fn load_at(&mut self, frame: u32) {
        self.have_state = true;
        self.state_requested = false;
        self.next_frame = frame;
        self.inputs = self.inputs.split_off(&frame);
        for client in 0..MAX_CLIENTS {
            if client as u32 != self.client
                && self.players & (1 << client) != 0
                && self.read_frames[client] < frame
            {
                self.read_frames[client] = frame;
            }
        }
    }

    fn on_input(&mut self, frame: u32, client: u32, input: &InputWords) -> Result<(), ClientEnd> {
        use super::wire::id;
        let index = client as usize;
        if self.playing && client == self.client {
            // Our own input, echoed: nothing to learn from it.
            return Ok(());
        }
        if index >= MAX_CLIENTS || self.players & (1 << index) == 0 {
            return Err(Self::bad(id::INPUT, "input of a client who is not playing"));
        }
        if frame < self.read_frames[index] {
            return Ok(());
        }
        if frame > self.read_frames[index] {
            return Err(Self::bad(id::INPUT, "input out of order"));
        }
        let devices = self.client_devices[index];
        let expected: usize = (0..MAX_INPUT_DEVICES)
            .filter(|port| devices & (1 << port) != 0)
            .map(|port| device_words(self.devices[port]))
            .sum();
        if input.words().len() != expected {
            return Err(Self::bad(
                id::INPUT,
                "input of the wrong size for its ports",
            ));
        }
        if frame >= self.next_frame {
            if frame - self.next_frame > MAX_FRAMES_AHEAD as u32 {
                return Err(Self::bad(
                    id::INPUT,
                    "input too far ahead of the frame played",
                ));
            }
            let mut words = input.words().iter();
            let entry = self.inputs.entry(frame).or_default();
            for port in 0..MAX_INPUT_DEVICES {
                if devices & (1 << port) == 0 {
                    continue;
                }
                let count = device_words(self.devices[port]);
                let first = words.next().copied().unwrap_or(0);
                for _ in 1..count {
                    words.next();
                }
                if has_buttons(self.devices[port]) {
                    merge(&mut entry.ports[port], first, self.share_modes[port]);
                }
            }
        }
        self.read_frames[index] += 1;
        if client == 0 {
            self.host_frame = self.read_frames[0];
        }
        Ok(())
    }

    fn on_mode(&mut self, mode: Mode) -> Result<(), ClientEnd> {
        use super::wire::id;
        let client = usize::from(mode.client);
        self.share_modes = mode.share_modes;
        if mode.playing {
            if mode.frame != self.host_frame {
                return Err(Self::bad(id::MODE, "a mode change out of order"));
            }
            self.players |= 1 << client;
            self.client_devices[client] = mode.devices;
            self.read_frames[client] = self.host_frame;
            if mode.you {
                if self.playing {
                    return Err(Self::bad(id::MODE, "told to play while playing"));
                }
                self.client = u32::from(mode.client);
                self.playing = true;
                self.playing_from = mode.frame;
                self.next_send = mode.frame;
                // The lead's first frames go out at once, empty: a host
                // waiting for them must not wait for our first frame.
                // (A host's frame near u32::MAX saturates, never panics.)
                let lead_end = mode.frame.saturating_add(self.config.input_lead);
                self.send_own_inputs_before(lead_end, None);
                self.events.push_back(ClientEvent::Playing {
                    client: self.client,
                    devices: mode.devices,
                    frame: mode.frame,
                });
            } else {
                self.events.push_back(ClientEvent::PlayerJoined {
                    nick: mode.nick.text(),
                    devices: mode.devices,
                });
            }
        } else {
            self.players &= !(1 << client);
            self.client_devices[client] = 0;
            if mode.you {
                self.playing = false;
            } else {
                self.events.push_back(ClientEvent::PlayerLeft {
                    nick: mode.nick.text(),
                });
            }
        }
        Ok(())
    }

    fn on_crc(&mut self, frame: u32, crc: u32) {
        self.crc_interval = Some(match self.crc_interval {
            None => frame.max(1),
            Some(interval) => gcd(interval, frame).max(1),
        });
        match self.our_crcs.get(&frame) {
            Some(&ours) => self.compare_crc(frame, crc, ours),
            None if frame >= self.next_frame => {
                self.host_crcs.insert(frame, crc);
                trim(&mut self.host_crcs);
            }
            None => {}
        }
    }

    fn compare_crc(&mut self, frame: u32, host: u32, ours: u32) {
        self.stats.crc_checks += 1;
        if host != ours {
            self.stats.crc_mismatches += 1;
            self.events.push_back(ClientEvent::Desynced { frame });
            if !self.state_requested {
                self.state_requested = true;
                self.send(&Command::RequestSavestate);
            }
        }
    }

    /// The next frame, when every player's input of it has come and a state
    /// was loaded to play it from.
    pub fn ready_frame(&self) -> Option<u32> {
        if self.phase != Phase::Connected || !self.have_state || self.state.is_some() {
            return None;
        }
        let frame = self.next_frame;
        if self.host_frame <= frame {
            return None;
        }
        let waiting = (0..MAX_CLIENTS).any(|client| {
            client as u32 != self.client
                && self.players & (1 << client) != 0
                && self.read_frames[client] <= frame
        });
        (!waiting).then_some(frame)
    }

    /// Whether the state at the start of `frame` needs its CRC (the host
    /// checks frames at an interval learned from its CRCs).
    pub fn wants_crc(&self, frame: u32) -> bool {
        self.crc_interval
            .is_none_or(|interval| frame % interval == 0)
    }

    /// Plays the ready frame with our buttons `local` (libretro joypad
    /// bits) on our ports; `crc` is the CRC-32 of our state at its start
    /// when [`ClientSession::wants_crc`] asked. Returns every port's
    /// buttons for the frame, and sends our INPUT up to it.
    pub fn play_frame(&mut self, local: u32, crc: Option<u32>) -> [u32; MAX_INPUT_DEVICES] {
        let frame = self.next_frame;
        let mut ports = self.inputs.remove(&frame).unwrap_or_default().ports;
        if self.playing && frame >= self.playing_from {
            let lead_end = frame
                .saturating_add(self.config.input_lead)
                .saturating_add(1);
            self.send_own_inputs_before(lead_end, Some(local));
            let pressed = self.own_inputs.remove(&frame).unwrap_or(0);
            self.own_inputs = self.own_inputs.split_off(&frame);
            let ours = self.our_devices();
            for (port, buttons) in ports.iter_mut().enumerate() {
                if ours & (1 << port) != 0 && has_buttons(self.devices[port]) {
                    merge(buttons, pressed, self.share_modes[port]);
                }
            }
        }
        if let Some(crc) = crc {
            self.our_crcs.insert(frame, crc);
            trim(&mut self.our_crcs);
            if let Some(host) = self.host_crcs.remove(&frame) {
                self.compare_crc(frame, host, crc);
            }
        }
        self.next_frame = self.next_frame.saturating_add(1);
        ports
    }

    /// Sends our INPUT of every frame before `end` not sent yet: `local`
    /// for the last one when given, nothing pressed for the others
    /// (RetroArch wants every frame's, in order).
    fn send_own_inputs_before(&mut self, end: u32, local: Option<u32>) {
        while self.next_send < end {
            let frame = self.next_send;
            let pressed = local.filter(|_| frame + 1 == end).unwrap_or(0);
            self.own_inputs.insert(frame, pressed);
            let input = self.our_input(pressed);
            let command = Command::Input {
                frame,
                client: self.client,
                input,
            };
            self.send(&command);
            self.next_send += 1;
        }
    }

    fn our_input(&self, buttons: u32) -> InputWords {
        let mut words = [0u32; MAX_INPUT_WORDS];
        let mut len = 0;
        let ours = self.our_devices();
        for port in 0..MAX_INPUT_DEVICES {
            if ours & (1 << port) == 0 {
                continue;
            }
            let count = device_words(self.devices[port]);
            if len + count > MAX_INPUT_WORDS {
                break;
            }
            if has_buttons(self.devices[port]) {
                words[len] = buttons;
            }
            len += count;
        }
        InputWords::new(&words[..len]).unwrap_or_default()
    }

    /// Timers at `now_ms`: the round-trip measurement (protocol 6).
    pub fn poll(&mut self, now_ms: u64) {
        if self.phase == Phase::Connected
            && self.protocol >= 6
            && self.ping_sent_at.is_none()
            && now_ms.saturating_sub(self.last_ping_at) >= PING_EVERY_MS
        {
            self.last_ping_at = now_ms;
            self.ping_sent_at = Some(now_ms);
            self.send(&Command::PingRequest);
        }
    }

    /// Sends a chat line (protocol 6, while playing).
    pub fn say(&mut self, text: &str) {
        let mut end = text.len().min(super::wire::CHAT_MAX_LEN);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        if self.phase == Phase::Connected && self.protocol >= 6 && end > 0 {
            self.send(&Command::Chat {
                author: None,
                text: text[..end].to_string(),
            });
        }
    }
}

/// Merges a client's buttons into a port by its share mode.
fn merge(port: &mut u32, buttons: u32, share_mode: u8) {
    if share_mode & SHARE_DIGITAL_BITS == SHARE_DIGITAL_XOR {
        *port ^= buttons;
    } else {
        *port |= buttons;
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn trim(map: &mut BTreeMap<u32, u32>) {
    while map.len() > CRCS_KEPT {
        map.pop_first();
    }
}

/// The command word of a parsed command (for error messages).
pub(super) fn command_word(command: &Command) -> u32 {
    let mut bytes = Vec::new();
    command.encode(&mut bytes);
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}
