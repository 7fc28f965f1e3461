//! RetroArch's netplay wire format over TCP: the connection header (six
//! big-endian words), then commands, each a big-endian command word and
//! payload length followed by the payload. [`CommandReader`] takes the
//! stream in whatever pieces TCP delivers and hands back whole commands;
//! every length is checked against the command's own size (or a cap)
//! before a byte of its payload is kept, so a hostile peer can neither
//! panic it nor make it allocate more than the caps.

use std::fmt;

/// `RANP`: a RetroArch netplay peer's header.
pub const MAGIC: u32 = 0x5241_4E50;
/// `FULL`: the host has no room for another connection.
pub const FULL_MAGIC: u32 = 0x4655_4C4C;
/// `DENY`: the host banned this address.
pub const BANNED_MAGIC: u32 = 0x4445_4E59;
/// `POKE`: a peer asking only for the host's header.
pub const POKE_MAGIC: u32 = 0x504F_4B45;

/// RetroArch's netplay port.
pub const DEFAULT_PORT: u16 = 55435;
/// The oldest protocol RetroArch 1.10 and later speak.
pub const LOWEST_PROTOCOL: u32 = 5;
/// The newest protocol spoken here: RetroArch 1.21's, whose savestates
/// come in a container (RetroArch 1.14 speaks up to 6).
pub const HIGHEST_PROTOCOL: u32 = 7;
/// The RetroArch release whose implementation magic we present.
pub const RETROARCH_VERSION: &str = "1.14.0";

/// Bytes of a nickname, a core name or a core version (NUL-padded).
pub const NAME_LEN: usize = 32;
/// Hex digits of a password's SHA-256.
pub const PASSWORD_HASH_LEN: usize = 64;
/// Controller ports a match has.
pub const MAX_INPUT_DEVICES: usize = 16;
/// Connections (the host is client 0) a match has.
pub const MAX_CLIENTS: usize = 32;
/// Bytes of the connection header.
pub const HEADER_LEN: usize = 24;
/// The most bytes of a chat line.
pub const CHAT_MAX_LEN: usize = 95;
/// The header's compression bit for zlib.
pub const COMPRESSION_ZLIB: u32 = 1;
/// The most input words one INPUT carries (RetroArch sends at most 11).
pub const MAX_INPUT_WORDS: usize = 16;
/// The most bytes of an unknown command's payload skipped before giving up
/// on the peer.
const MAX_UNKNOWN_PAYLOAD: u32 = 64 * 1024;

/// A SYNC's fixed part: frame, client, devices, share modes, device
/// clients, nick (the SRAM follows).
const SYNC_FIXED_LEN: usize =
    8 + 4 * MAX_INPUT_DEVICES + MAX_INPUT_DEVICES + 4 * MAX_INPUT_DEVICES + NAME_LEN;
/// A MODE: frame, mode, devices, share modes, nick.
const MODE_LEN: usize = 12 + MAX_INPUT_DEVICES + NAME_LEN;
/// An INFO: content CRC, core name, core version.
const INFO_LEN: usize = 4 + 2 * NAME_LEN;

/// Command words.
pub mod id {
    /// Acknowledgement (unused).
    pub const ACK: u32 = 0x0000;
    /// The peer is giving up on us.
    pub const NAK: u32 = 0x0001;
    /// A graceful goodbye.
    pub const DISCONNECT: u32 = 0x0002;
    /// One client's input of one frame.
    pub const INPUT: u32 = 0x0003;
    /// The host's frame passed without input of its own (it spectates).
    pub const NOINPUT: u32 = 0x0004;
    /// A nickname.
    pub const NICK: u32 = 0x0020;
    /// A salted password hash.
    pub const PASSWORD: u32 = 0x0021;
    /// Core and content.
    pub const INFO: u32 = 0x0022;
    /// The host's state of the match for a new connection.
    pub const SYNC: u32 = 0x0023;
    /// A request to stop playing.
    pub const SPECTATE: u32 = 0x0024;
    /// A request to play.
    pub const PLAY: u32 = 0x0025;
    /// Someone's mode changed.
    pub const MODE: u32 = 0x0026;
    /// A request to play was refused.
    pub const MODE_REFUSED: u32 = 0x0027;
    /// The checksum of a frame's state.
    pub const CRC: u32 = 0x0040;
    /// A request for the host's state.
    pub const REQUEST_SAVESTATE: u32 = 0x0041;
    /// The host's state to load.
    pub const LOAD_SAVESTATE: u32 = 0x0042;
    /// Someone paused.
    pub const PAUSE: u32 = 0x0043;
    /// The match resumed.
    pub const RESUME: u32 = 0x0044;
    /// Wait some frames: you are running ahead.
    pub const STALL: u32 = 0x0045;
    /// The core was reset at a frame.
    pub const RESET: u32 = 0x0046;
    /// A chat line (protocol 6).
    pub const PLAYER_CHAT: u32 = 0x1000;
    /// Asks for a ping answer (protocol 6).
    pub const PING_REQUEST: u32 = 0x1100;
    /// Answers a ping (protocol 6).
    pub const PING_RESPONSE: u32 = 0x1101;
    /// Whether the host lets clients pause (protocol 6).
    pub const SETTING_ALLOW_PAUSING: u32 = 0x2000;
    /// The host's input latency frames (protocol 6).
    pub const SETTING_INPUT_LATENCY_FRAMES: u32 = 0x2001;
}

/// SYNC's client word: the match is paused.
const SYNC_BIT_PAUSED: u32 = 1 << 31;
/// PLAY's word: play as a slave (the host plays our input as it comes).
const PLAY_BIT_SLAVE: u32 = 1 << 31;
/// MODE's word: the change is the receiver's own.
const MODE_BIT_YOU: u32 = 1 << 31;
/// MODE's word: the client now plays.
const MODE_BIT_PLAYING: u32 = 1 << 30;
/// MODE's word: the client plays as a slave.
const MODE_BIT_SLAVE: u32 = 1 << 29;

/// What a peer sent that this codec refuses: its link ends.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The header's first word is no RetroArch magic.
    #[error("the peer is not a RetroArch netplay peer (its header starts with {0:#010x})")]
    NotRetroArch(u32),
    /// The host is full.
    #[error("the host has no room for another player")]
    HostFull,
    /// The host banned us.
    #[error("the host banned this address")]
    Banned,
    /// A command's length is not the one its kind has.
    #[error("command {command:#06x} came with {length} bytes, it has {expected}")]
    BadLength {
        /// The command word.
        command: u32,
        /// The length it claimed.
        length: u32,
        /// What it must be (or at least be, or at most be).
        expected: String,
    },
    /// A value inside a command makes no sense.
    #[error("command {command:#06x}: {what}")]
    BadValue {
        /// The command word.
        command: u32,
        /// What is wrong.
        what: String,
    },
    /// More bytes than allowed are waiting to be read (a peer flooding us).
    #[error("the peer sent more than {limit} bytes that do not make up a command")]
    Flooded {
        /// The cap.
        limit: usize,
    },
}

/// The connection header both sides send first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// [`MAGIC`], or [`FULL_MAGIC`] / [`BANNED_MAGIC`] from a host that
    /// turns us away.
    pub magic: u32,
    /// Endianness and type sizes of the sender's machine.
    pub platform: u32,
    /// The compressions it supports ([`COMPRESSION_ZLIB`]).
    pub compression: u32,
    /// From a host: the password salt (0: no password). From a client:
    /// its highest protocol.
    pub salt_or_highest: u32,
    /// From a host: the protocol the connection speaks. From a client: its
    /// lowest protocol.
    pub protocol: u32,
    /// A hash of the sender's RetroArch version ([`implementation_magic`]).
    pub implementation: u32,
}

impl Header {
    /// The header a client sends: protocols [`LOWEST_PROTOCOL`] to
    /// [`HIGHEST_PROTOCOL`], zlib.
    pub fn client() -> Header {
        Header {
            magic: MAGIC,
            platform: platform_magic(),
            compression: COMPRESSION_ZLIB,
            salt_or_highest: HIGHEST_PROTOCOL,
            protocol: LOWEST_PROTOCOL,
            implementation: implementation_magic(RETROARCH_VERSION, HIGHEST_PROTOCOL),
        }
    }

    /// The 24 bytes on the wire.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut bytes = [0; HEADER_LEN];
        let words = [
            self.magic,
            self.platform,
            self.compression,
            self.salt_or_highest,
            self.protocol,
            self.implementation,
        ];
        for (chunk, word) in bytes.chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&word.to_be_bytes());
        }
        bytes
    }

    /// Reads 24 bytes; a host's FULL or DENY header is its error.
    pub fn decode(bytes: &[u8; HEADER_LEN]) -> Result<Header, WireError> {
        let word = |index: usize| be_u32(&bytes[index * 4..]);
        let header = Header {
            magic: word(0),
            platform: word(1),
            compression: word(2),
            salt_or_highest: word(3),
            protocol: word(4),
            implementation: word(5),
        };
        match header.magic {
            MAGIC => Ok(header),
            FULL_MAGIC => Err(WireError::HostFull),
            BANNED_MAGIC => Err(WireError::Banned),
            other => Err(WireError::NotRetroArch(other)),
        }
    }
}

/// RetroArch's platform word for this machine: bit 30 big-endian, bits
/// 29–15 `sizeof(size_t)`, bits 14–0 `sizeof(long)` (as a 64-bit Linux
/// build of RetroArch says; only cores with platform quirks compare it).
pub fn platform_magic() -> u32 {
    let big_endian = u32::from(cfg!(target_endian = "big"));
    let pointer = std::mem::size_of::<usize>() as u32;
    // `long` is pointer-sized on the LP64 systems RetroArch runs on but Windows.
    let long = if cfg!(windows) { 4 } else { pointer };
    (big_endian << 30) | (pointer << 15) | long
}

/// RetroArch's version hash: each byte of the version shifted by its
/// index (mod 16) and XORed, then the protocol shifted by the length. A
/// mismatch only makes RetroArch warn.
pub fn implementation_magic(version: &str, protocol: u32) -> u32 {
    let mut magic = 0u32;
    let bytes = version.as_bytes();
    for (index, byte) in bytes.iter().enumerate() {
        magic ^= u32::from(*byte) << (index & 0xf);
    }
    magic ^ (protocol << (bytes.len() & 0xf))
}

/// A NUL-padded 32-byte name (nick, core name, core version).
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Name([u8; NAME_LEN]);

impl Name {
    /// `text` cut to 31 bytes at a character boundary, NUL-padded.
    pub fn new(text: &str) -> Name {
        let mut end = text.len().min(NAME_LEN - 1);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0; NAME_LEN];
        bytes[..end].copy_from_slice(&text.as_bytes()[..end]);
        Name(bytes)
    }

    /// The name up to its first NUL (all 32 bytes if none), lossily UTF-8.
    pub fn text(&self) -> String {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(NAME_LEN);
        String::from_utf8_lossy(&self.0[..end]).into_owned()
    }

    /// The bytes on the wire.
    pub fn bytes(&self) -> &[u8; NAME_LEN] {
        &self.0
    }

    fn read(bytes: &[u8]) -> Name {
        let mut name = [0; NAME_LEN];
        name.copy_from_slice(&bytes[..NAME_LEN]);
        Name(name)
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.text())
    }
}

/// INFO: the core and content a side runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Info {
    /// CRC-32 of the content file (0: none, or not computed).
    pub content_crc: u32,
    /// The core's `library_name` (compared case-insensitively).
    pub core_name: Name,
    /// Its `library_version` (a difference only warns).
    pub core_version: Name,
}

/// SYNC: the host's match as a new connection finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sync {
    /// The host's current frame.
    pub frame: u32,
    /// The client number the host gave this connection.
    pub client: u32,
    /// Whether the match is paused.
    pub paused: bool,
    /// The device type plugged into each port (libretro's `RETRO_DEVICE_*`).
    pub devices: [u32; MAX_INPUT_DEVICES],
    /// Each port's share mode.
    pub share_modes: [u8; MAX_INPUT_DEVICES],
    /// For each port, the clients playing on it (a bitmap).
    pub device_clients: [u32; MAX_INPUT_DEVICES],
    /// Our nick as the host made it unique.
    pub nick: Name,
    /// The host's SRAM.
    pub sram: Vec<u8>,
}

/// MODE: a client starts or stops playing at a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode {
    /// The first frame it plays (or no longer plays).
    pub frame: u32,
    /// The change is ours.
    pub you: bool,
    /// It now plays.
    pub playing: bool,
    /// It plays as a slave.
    pub slave: bool,
    /// Its client number.
    pub client: u16,
    /// The ports it plays on (a bitmap).
    pub devices: u32,
    /// Every port's share mode now.
    pub share_modes: [u8; MAX_INPUT_DEVICES],
    /// Its nick.
    pub nick: Name,
}

/// A client's input of one frame: a word per port's need (a joypad one, an
/// analog pad three), ports in order.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct InputWords {
    len: u8,
    words: [u32; MAX_INPUT_WORDS],
}

impl InputWords {
    /// `words` (at most [`MAX_INPUT_WORDS`]; more are an error).
    pub fn new(words: &[u32]) -> Option<InputWords> {
        if words.len() > MAX_INPUT_WORDS {
            return None;
        }
        let mut input = InputWords {
            len: words.len() as u8,
            ..InputWords::default()
        };
        input.words[..words.len()].copy_from_slice(words);
        Some(input)
    }

    /// The words.
    pub fn words(&self) -> &[u32] {
        &self.words[..usize::from(self.len)]
    }
}

impl fmt::Debug for InputWords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:x?}", self.words())
    }
}

/// Who sent the bytes a [`CommandReader`] reads: a few commands differ by
/// direction (a host's chat line names its author).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sender {
    /// The host.
    Host,
    /// A client.
    Client,
}

/// A command, either way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// ACK (unused).
    Ack,
    /// NAK: the peer gives up on us.
    Nak,
    /// DISCONNECT: a goodbye.
    Disconnect,
    /// INPUT: `client`'s input of `frame`.
    Input {
        /// The frame.
        frame: u32,
        /// The client (a client's own claim is ignored by the host).
        client: u32,
        /// Its ports' words.
        input: InputWords,
    },
    /// NOINPUT: the host's `frame` passed.
    NoInput {
        /// The frame.
        frame: u32,
    },
    /// NICK.
    Nick(Name),
    /// PASSWORD: the salted hash, 64 hex digits.
    Password([u8; PASSWORD_HASH_LEN]),
    /// INFO; `None` from a host with no content loaded yet.
    Info(Option<Info>),
    /// SYNC.
    Sync(Sync),
    /// SPECTATE.
    Spectate,
    /// PLAY: ports asked for (a bitmap, 0: any free one), the share mode
    /// wanted and whether as a slave.
    Play {
        /// Ports asked for.
        devices: u16,
        /// Share mode wanted (0: none).
        share_mode: u8,
        /// Play as a slave.
        slave: bool,
    },
    /// MODE.
    Mode(Mode),
    /// MODE_REFUSED: why (1 not allowed, 2 no free port, 3 too fast, 4 the
    /// port is taken).
    ModeRefused(u32),
    /// CRC: the host's CRC-32 of its state at the start of `frame`.
    Crc {
        /// The frame.
        frame: u32,
        /// The CRC-32.
        crc: u32,
    },
    /// REQUEST_SAVESTATE.
    RequestSavestate,
    /// LOAD_SAVESTATE: the state at the start of `frame`, `size` bytes once
    /// inflated (`data` is zlib when both sides said so).
    LoadSavestate {
        /// The frame.
        frame: u32,
        /// Bytes of the state.
        size: u32,
        /// The state as sent.
        data: Vec<u8>,
    },
    /// PAUSE by `nick`.
    Pause(Name),
    /// RESUME.
    Resume,
    /// STALL for some frames.
    Stall(u32),
    /// RESET at a frame.
    Reset(u32),
    /// PLAYER_CHAT: from a host with its author, from a client without.
    Chat {
        /// Who said it (from a host).
        author: Option<Name>,
        /// What (1 to [`CHAT_MAX_LEN`] bytes, lossily UTF-8).
        text: String,
    },
    /// PING_REQUEST.
    PingRequest,
    /// PING_RESPONSE.
    PingResponse,
    /// SETTING_ALLOW_PAUSING.
    AllowPausing(bool),
    /// SETTING_INPUT_LATENCY_FRAMES.
    InputLatencyFrames {
        /// Fewest frames.
        min: i32,
        /// Most frames.
        max: i32,
    },
    /// A command this codec does not know (its payload skipped, as
    /// RetroArch skips one).
    Unknown {
        /// Its command word.
        command: u32,
    },
}

impl Command {
    /// Appends the command (word, length, payload) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0; 8]);
        let command = match self {
            Command::Ack => id::ACK,
            Command::Nak => id::NAK,
            Command::Disconnect => id::DISCONNECT,
            Command::Input {
                frame,
                client,
                input,
            } => {
                put(out, &[*frame, *client]);
                put(out, input.words());
                id::INPUT
            }
            Command::NoInput { frame } => {
                put(out, &[*frame]);
                id::NOINPUT
            }
            Command::Nick(nick) => {
                out.extend_from_slice(nick.bytes());
                id::NICK
            }
            Command::Password(hash) => {
                out.extend_from_slice(hash);
                id::PASSWORD
            }
            Command::Info(info) => {
                if let Some(info) = info {
                    put(out, &[info.content_crc]);
                    out.extend_from_slice(info.core_name.bytes());
                    out.extend_from_slice(info.core_version.bytes());
                }
                id::INFO
            }
            Command::Sync(sync) => {
                let paused = if sync.paused { SYNC_BIT_PAUSED } else { 0 };
                put(out, &[sync.frame, sync.client | paused]);
                put(out, &sync.devices);
                out.extend_from_slice(&sync.share_modes);
                put(out, &sync.device_clients);
                out.extend_from_slice(sync.nick.bytes());
                out.extend_from_slice(&sync.sram);
                id::SYNC
            }
            Command::Spectate => id::SPECTATE,
            Command::Play {
                devices,
                share_mode,
                slave,
            } => {
                let slave = if *slave { PLAY_BIT_SLAVE } else { 0 };
                put(
                    out,
                    &[slave | (u32::from(*share_mode) << 16) | u32::from(*devices)],
                );
                id::PLAY
            }
            Command::Mode(mode) => {
                let bits = [
                    (mode.you, MODE_BIT_YOU),
                    (mode.playing, MODE_BIT_PLAYING),
                    (mode.slave, MODE_BIT_SLAVE),
                ]
                .iter()
                .filter(|(set, _)| *set)
                .fold(u32::from(mode.client), |word, (_, bit)| word | bit);
                put(out, &[mode.frame, bits, mode.devices]);
                out.extend_from_slice(&mode.share_modes);
                out.extend_from_slice(mode.nick.bytes());
                id::MODE
            }
            Command::ModeRefused(reason) => {
                put(out, &[*reason]);
                id::MODE_REFUSED
            }
            Command::Crc { frame, crc } => {
                put(out, &[*frame, *crc]);
                id::CRC
            }
            Command::RequestSavestate => id::REQUEST_SAVESTATE,
            Command::LoadSavestate { frame, size, data } => {
                put(out, &[*frame, *size]);
                out.extend_from_slice(data);
                id::LOAD_SAVESTATE
            }
            Command::Pause(nick) => {
                out.extend_from_slice(nick.bytes());
                id::PAUSE
            }
            Command::Resume => id::RESUME,
            Command::Stall(frames) => {
                put(out, &[*frames]);
                id::STALL
            }
            Command::Reset(frame) => {
                put(out, &[*frame]);
                id::RESET
            }
            Command::Chat { author, text } => {
                if let Some(author) = author {
                    out.extend_from_slice(author.bytes());
                }
                out.extend_from_slice(text.as_bytes());
                id::PLAYER_CHAT
            }
            Command::PingRequest => id::PING_REQUEST,
            Command::PingResponse => id::PING_RESPONSE,
            Command::AllowPausing(allow) => {
                put(out, &[u32::from(*allow)]);
                id::SETTING_ALLOW_PAUSING
            }
            Command::InputLatencyFrames { min, max } => {
                put(out, &[*min as u32, *max as u32]);
                id::SETTING_INPUT_LATENCY_FRAMES
            }
            Command::Unknown { command } => *command,
        };
        let length = (out.len() - start - 8) as u32;
        out[start..start + 4].copy_from_slice(&command.to_be_bytes());
        out[start + 4..start + 8].copy_from_slice(&length.to_be_bytes());
    }
}

fn put(out: &mut Vec<u8>, words: &[u32]) {
    for word in words {
        out.extend_from_slice(&word.to_be_bytes());
    }
}

fn be_u32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// The payload lengths a command may have: exactly, or a range.
fn allowed_length(command: u32, sender: Sender, max_state_bytes: usize) -> Option<(usize, usize)> {
    let exactly = |n: usize| Some((n, n));
    let cap = max_state_bytes.saturating_add(8);
    match command {
        id::ACK
        | id::NAK
        | id::DISCONNECT
        | id::SPECTATE
        | id::REQUEST_SAVESTATE
        | id::RESUME
        | id::PING_REQUEST
        | id::PING_RESPONSE => exactly(0),
        id::INPUT => Some((8, 8 + 4 * MAX_INPUT_WORDS)),
        id::NOINPUT
        | id::PLAY
        | id::MODE_REFUSED
        | id::STALL
        | id::RESET
        | id::SETTING_ALLOW_PAUSING => exactly(4),
        id::CRC | id::SETTING_INPUT_LATENCY_FRAMES => exactly(8),
        id::NICK | id::PAUSE => exactly(NAME_LEN),
        id::PASSWORD => exactly(PASSWORD_HASH_LEN),
        id::INFO => Some((0, INFO_LEN)),
        id::SYNC => Some((
            SYNC_FIXED_LEN,
            SYNC_FIXED_LEN.saturating_add(max_state_bytes),
        )),
        id::MODE => exactly(MODE_LEN),
        id::LOAD_SAVESTATE => Some((8, cap)),
        id::PLAYER_CHAT => match sender {
            Sender::Host => Some((NAME_LEN + 1, NAME_LEN + CHAT_MAX_LEN)),
            Sender::Client => Some((1, CHAT_MAX_LEN)),
        },
        _ => Some((0, MAX_UNKNOWN_PAYLOAD as usize)),
    }
}

/// Turns the bytes a peer sends into its header, then its commands.
#[derive(Debug)]
pub struct CommandReader {
    sender: Sender,
    max_state_bytes: usize,
    buffer: Vec<u8>,
    read: usize,
    header_read: bool,
}

impl CommandReader {
    /// Reads what `sender` sends; savestates and SRAM of at most
    /// `max_state_bytes` bytes.
    pub fn new(sender: Sender, max_state_bytes: usize) -> CommandReader {
        CommandReader {
            sender,
            max_state_bytes,
            buffer: Vec::new(),
            read: 0,
            header_read: false,
        }
    }

    /// The most bytes that may wait unread: the largest command, whole.
    fn limit(&self) -> usize {
        self.max_state_bytes
            .saturating_add(SYNC_FIXED_LEN + 8 + HEADER_LEN)
    }

    /// Takes bytes as they came. More unread bytes than the largest
    /// command are an error (nothing a well-behaved peer sends).
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), WireError> {
        if self.read > 0 && self.read == self.buffer.len() {
            self.buffer.clear();
            self.read = 0;
        }
        let unread = self.buffer.len() - self.read;
        if unread.saturating_add(bytes.len()) > self.limit() {
            return Err(WireError::Flooded {
                limit: self.limit(),
            });
        }
        if self.read > self.buffer.len() / 2 {
            self.buffer.drain(..self.read);
            self.read = 0;
        }
        self.buffer.extend_from_slice(bytes);
        Ok(())
    }

    fn unread(&self) -> &[u8] {
        &self.buffer[self.read..]
    }

    /// The peer's header, once its 24 bytes came (only the first call
    /// that finds them returns it).
    pub fn header(&mut self) -> Result<Option<Header>, WireError> {
        if self.header_read || self.unread().len() < HEADER_LEN {
            return Ok(None);
        }
        let mut bytes = [0; HEADER_LEN];
        bytes.copy_from_slice(&self.unread()[..HEADER_LEN]);
        self.read += HEADER_LEN;
        self.header_read = true;
        Header::decode(&bytes).map(Some)
    }

    /// The next whole command, if it came (after the header).
    pub fn command(&mut self) -> Result<Option<Command>, WireError> {
        if !self.header_read {
            return Ok(None);
        }
        let unread = self.unread();
        if unread.len() < 8 {
            return Ok(None);
        }
        let command = be_u32(unread);
        let length = be_u32(&unread[4..]);
        let (least, most) =
            allowed_length(command, self.sender, self.max_state_bytes).unwrap_or((0, 0));
        if (length as usize) < least || length as usize > most {
            return Err(WireError::BadLength {
                command,
                length,
                expected: if least == most {
                    least.to_string()
                } else {
                    format!("{least} to {most}")
                },
            });
        }
        let length = length as usize;
        if unread.len() < 8 + length {
            return Ok(None);
        }
        let payload = &unread[8..8 + length];
        let parsed = parse(command, payload, self.sender)?;
        self.read += 8 + length;
        Ok(Some(parsed))
    }
}

/// A command's payload, its length already checked against its kind.
fn parse(command: u32, payload: &[u8], sender: Sender) -> Result<Command, WireError> {
    let word = |index: usize| be_u32(&payload[index * 4..]);
    let bad = |what: &str| WireError::BadValue {
        command,
        what: what.to_string(),
    };
    Ok(match command {
        id::ACK => Command::Ack,
        id::NAK => Command::Nak,
        id::DISCONNECT => Command::Disconnect,
        id::INPUT => {
            if payload.len() % 4 != 0 {
                return Err(bad("an input is whole words"));
            }
            let words: Vec<u32> = (2..payload.len() / 4).map(word).collect();
            Command::Input {
                frame: word(0),
                client: word(1),
                input: InputWords::new(&words).ok_or_else(|| bad("too many input words"))?,
            }
        }
        id::NOINPUT => Command::NoInput { frame: word(0) },
        id::NICK => Command::Nick(Name::read(payload)),
        id::PASSWORD => {
            let mut hash = [0; PASSWORD_HASH_LEN];
            hash.copy_from_slice(payload);
            Command::Password(hash)
        }
        id::INFO => match payload.len() {
            0 => Command::Info(None),
            INFO_LEN => Command::Info(Some(Info {
                content_crc: word(0),
                core_name: Name::read(&payload[4..]),
                core_version: Name::read(&payload[4 + NAME_LEN..]),
            })),
            _ => return Err(bad("an INFO is empty or whole")),
        },
        id::SYNC => {
            let client_word = word(1);
            let mut devices = [0; MAX_INPUT_DEVICES];
            let mut share_modes = [0; MAX_INPUT_DEVICES];
            let mut device_clients = [0; MAX_INPUT_DEVICES];
            for (port, device) in devices.iter_mut().enumerate() {
                *device = word(2 + port);
            }
            let shares = 8 + 4 * MAX_INPUT_DEVICES;
            share_modes.copy_from_slice(&payload[shares..shares + MAX_INPUT_DEVICES]);
            let clients = shares + MAX_INPUT_DEVICES;
            for (port, mapped) in device_clients.iter_mut().enumerate() {
                *mapped = be_u32(&payload[clients + 4 * port..]);
            }
            let nick = clients + 4 * MAX_INPUT_DEVICES;
            let client = client_word & !SYNC_BIT_PAUSED;
            if client as usize >= MAX_CLIENTS {
                return Err(bad("a client number past 31"));
            }
            Command::Sync(Sync {
                frame: word(0),
                client,
                paused: client_word & SYNC_BIT_PAUSED != 0,
                devices,
                share_modes,
                device_clients,
                nick: Name::read(&payload[nick..]),
                sram: payload[SYNC_FIXED_LEN..].to_vec(),
            })
        }
        id::SPECTATE => Command::Spectate,
        id::PLAY => {
            let mode = word(0);
            Command::Play {
                devices: (mode & 0xFFFF) as u16,
                share_mode: ((mode >> 16) & 0xFF) as u8,
                slave: mode & PLAY_BIT_SLAVE != 0,
            }
        }
        id::MODE => {
            let bits = word(1);
            let client = bits & 0xFFFF;
            if client as usize >= MAX_CLIENTS {
                return Err(bad("a client number past 31"));
            }
            let mut share_modes = [0; MAX_INPUT_DEVICES];
            share_modes.copy_from_slice(&payload[12..12 + MAX_INPUT_DEVICES]);
            Command::Mode(Mode {
                frame: word(0),
                you: bits & MODE_BIT_YOU != 0,
                playing: bits & MODE_BIT_PLAYING != 0,
                slave: bits & MODE_BIT_SLAVE != 0,
                client: client as u16,
                devices: word(2),
                share_modes,
                nick: Name::read(&payload[12 + MAX_INPUT_DEVICES..]),
            })
        }
        id::MODE_REFUSED => Command::ModeRefused(word(0)),
        id::CRC => Command::Crc {
            frame: word(0),
            crc: word(1),
        },
        id::REQUEST_SAVESTATE => Command::RequestSavestate,
        id::LOAD_SAVESTATE => Command::LoadSavestate {
            frame: word(0),
            size: word(1),
            data: payload[8..].to_vec(),
        },
        id::PAUSE => Command::Pause(Name::read(payload)),
        id::RESUME => Command::Resume,
        id::STALL => Command::Stall(word(0)),
        id::RESET => Command::Reset(word(0)),
        id::PLAYER_CHAT => {
            let (author, text) = match sender {
                Sender::Host => (Some(Name::read(payload)), &payload[NAME_LEN..]),
                Sender::Client => (None, payload),
            };
            Command::Chat {
                author,
                text: String::from_utf8_lossy(text).into_owned(),
            }
        }
        id::PING_REQUEST => Command::PingRequest,
        id::PING_RESPONSE => Command::PingResponse,
        id::SETTING_ALLOW_PAUSING => match word(0) {
            0 => Command::AllowPausing(false),
            1 => Command::AllowPausing(true),
            _ => return Err(bad("allow-pausing is 0 or 1")),
        },
        id::SETTING_INPUT_LATENCY_FRAMES => Command::InputLatencyFrames {
            min: word(0) as i32,
            max: word(1) as i32,
        },
        other => Command::Unknown { command: other },
    })
}
