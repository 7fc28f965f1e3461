//! What a netplay session is made from: who we are, who the peers are and
//! how they connect, the settings everyone agreed on in the lobby.

use crate::protocol::{
    CoreOption, Handshake, HandshakeLimit, LinkSecret, Millis, PlayerSlots, PublicKey, RoomElement,
    RoomGuessLimit, RoomPassword, SessionSettings, SessionToken, MAX_BLOB_SIZE,
};
use crate::rollback::TimeSyncConfig;

/// How the connection to a peer is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Connect {
    /// We send Hello to the peer's address (we are the joiner of this link).
    Dial,
    /// The peer sends us Hello (we are the host of this link). Its endpoint
    /// is made when the first Hello arrives, so no handshake timer runs before.
    Accept,
    /// The start-up host's roster tells where the peer is (a 3–4 player
    /// mesh); then the machine of the higher slot dials, the other accepts.
    Roster,
}

/// How a session's addresses travel in a roster: the transport's own
/// encoding, opaque to the protocol (at most
/// [`crate::protocol::MAX_ROSTER_ADDRESS_BYTES`] bytes).
#[derive(Clone, Copy, Debug)]
pub struct RosterCodec<A> {
    /// Appends the address's bytes.
    pub encode: fn(&A, &mut Vec<u8>),
    /// The address these bytes name; `None` when they name none.
    pub decode: fn(&[u8]) -> Option<A>,
}

/// One other machine in the match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerConfig<A> {
    /// Where it is. Required to dial; for an accepted peer `None` means
    /// "whoever first says Hello claiming exactly these players".
    pub address: Option<A>,
    /// The players it controls (at least one).
    pub players: PlayerSlots,
    /// Whether we dial it or it dials us.
    pub connect: Connect,
}

/// Everything a [`super::NetplaySession`] is built from.
#[derive(Clone, Debug)]
pub struct NetplayConfig<A> {
    /// Random, chosen by the caller: guards every link we accept.
    pub token: SessionToken,
    /// Our x25519 secret for every link's keys (see `protocol::auth`):
    /// drawn by the caller for real play; [`LinkSecret::well_known`] by
    /// default, for simulations that must repeat.
    pub secret: LinkSecret,
    /// The room code the machines met by, if they did: it authenticates
    /// every link's keys, and a host refuses whoever does not show it.
    pub room_password: Option<RoomPassword>,
    /// How many room-code exchanges may fail before a host met by room
    /// code answers no more Hellos for a while (each is one guess).
    pub room_guess_limit: RoomGuessLimit,
    /// Our libretro core, sent in the handshake: peers with another are refused.
    pub core_name: String,
    /// Our core's version: peers with another are refused.
    pub core_version: String,
    /// xxh3 of the loaded content: peers with other content are refused.
    pub content_hash: u64,
    /// Players (2–4), frame rate, max prediction, checksum interval, input
    /// delay bounds: every peer must have the same.
    pub settings: SessionSettings,
    /// The players on this machine.
    pub local_players: PlayerSlots,
    /// The other machines of the match (spectators are not listed).
    pub peers: Vec<PeerConfig<A>>,
    /// Whether Hellos without players (spectators) are accepted and fed
    /// every player's confirmed inputs.
    pub accept_spectators: bool,
    /// Spectators fed at most at once; Hellos beyond are refused with a reason.
    pub max_spectators: usize,
    /// How often one address may make us open a connection (players and
    /// spectators alike); Hellos beyond are dropped unanswered.
    pub handshake_limit: HandshakeLimit,
    /// Local input delay to start with (frames, within the bounds).
    pub initial_input_delay: u32,
    /// Whether the delay follows the network (seed 000's hysteresis).
    pub dynamic_input_delay: bool,
    /// Silence after which a peer is shown as interrupted.
    pub interrupt_after_ms: Millis,
    /// Silence after which a peer is dropped from the match.
    pub disconnect_after_ms: Millis,
    /// Silence a player's link waits out once the match runs, if longer
    /// than `disconnect_after_ms`: the others stall ("waiting for…") and
    /// the player may come back within it, from the same or a new address.
    /// 0: no window (dropped after `disconnect_after_ms`).
    pub rejoin_window_ms: Millis,
    /// Random bytes the caller draws: the nonces a player coming back
    /// from a new address must echo are made from them.
    pub rejoin_seed: u64,
    /// Frames asked for without one becoming final for this long end the
    /// match (`NetplayEvent::Stalled`): the peers hear each other, yet
    /// nothing moves.
    pub stall_after_ms: Millis,
    /// Tuning of the speed corrections that keep the machines' frames in step.
    pub time_sync: TimeSyncConfig,
    /// Whether the start-up host delays each machine's start by its distance
    /// so that all begin frame 0 together (seed 000's start-up advantage).
    /// Without it every machine begins as soon as the host's Start arrives:
    /// only for comparison and debugging, every machine must agree.
    pub compensate_start_latency: bool,
    /// Time added to every start delay, so each machine learns its start
    /// moment at least a frame before it (frontends tick once a frame).
    pub start_lead_ms: Millis,
    /// The core options this machine's core was loaded with; the host's are
    /// sent in its handshake, and win.
    pub core_options: Vec<CoreOption>,
    /// The start-up host's savestate at frame 0: sent lz4-compressed to every
    /// member, which loads it before saying Ready, so save RAM, clocks and
    /// whatever a core seeded at load are the same everywhere. Only the
    /// machine of player 0 sends one.
    pub start_state: Option<Vec<u8>>,
    /// The largest start state accepted from the host, uncompressed (its
    /// compressed blob is capped accordingly): a larger one, or one that
    /// expands past this, closes the host's link.
    pub max_start_state_bytes: usize,
    /// The match's length in frames (frames 0..N-1), if it has one: sent
    /// in the handshake (the host's wins), and no frame from N on is fed
    /// to spectators. Its last frame is a checkpoint too, so the frames
    /// after the last regular checkpoint are compared as well.
    pub match_frames: Option<u32>,
    /// How addresses travel in the roster: with it, the start-up host tells
    /// every member where the others are once all joined, and members learn
    /// their [`Connect::Roster`] peers from it.
    pub roster: Option<RosterCodec<A>>,
    /// The host's public key, when this machine's process restarted and
    /// comes back to the match it left (the same token, secret, settings
    /// and host address as before): its link runs at once under the keys
    /// they agree, and the host sends the state to resume from.
    pub resume: Option<PublicKey>,
    /// With `resume` in a room, the host's room element (from its Welcome):
    /// the restarted machine agrees the room's key again from it.
    pub resume_room: Option<RoomElement>,
}

impl<A> NetplayConfig<A> {
    /// A configuration with no peers yet and the protocol's default timings
    /// (interrupted after 750 ms of silence, dropped after 5 s).
    pub fn new(
        token: SessionToken,
        core_name: impl Into<String>,
        core_version: impl Into<String>,
        content_hash: u64,
        settings: SessionSettings,
        local_players: PlayerSlots,
    ) -> Self {
        NetplayConfig {
            token,
            secret: LinkSecret::well_known(),
            room_password: None,
            room_guess_limit: RoomGuessLimit::default(),
            core_name: core_name.into(),
            core_version: core_version.into(),
            content_hash,
            settings,
            local_players,
            peers: Vec::new(),
            accept_spectators: false,
            max_spectators: 32,
            handshake_limit: HandshakeLimit::default(),
            initial_input_delay: 0,
            dynamic_input_delay: true,
            interrupt_after_ms: 750,
            disconnect_after_ms: 5000,
            rejoin_window_ms: 0,
            rejoin_seed: 0,
            stall_after_ms: 10_000,
            time_sync: TimeSyncConfig::default(),
            compensate_start_latency: true,
            start_lead_ms: 50,
            core_options: Vec::new(),
            start_state: None,
            max_start_state_bytes: MAX_BLOB_SIZE,
            match_frames: None,
            roster: None,
            resume: None,
            resume_room: None,
        }
    }

    /// Adds a peer we send Hello to.
    pub fn dial(mut self, address: A, players: PlayerSlots) -> Self {
        self.peers.push(PeerConfig {
            address: Some(address),
            players,
            connect: Connect::Dial,
        });
        self
    }

    /// Adds a peer whose address the start-up host's roster will tell.
    pub fn from_roster(mut self, players: PlayerSlots) -> Self {
        self.peers.push(PeerConfig {
            address: None,
            players,
            connect: Connect::Roster,
        });
        self
    }

    /// Adds a peer that sends us Hello (from `address`, or from anywhere).
    pub fn accept(mut self, address: Option<A>, players: PlayerSlots) -> Self {
        self.peers.push(PeerConfig {
            address,
            players,
            connect: Connect::Accept,
        });
        self
    }

    /// The handshake we send, announcing `slots` as ours.
    pub(crate) fn handshake(&self, slots: PlayerSlots) -> Handshake {
        Handshake {
            core_name: self.core_name.clone(),
            core_version: self.core_version.clone(),
            content_hash: self.content_hash,
            local_slots: slots,
            settings: self.settings,
            core_options: self.core_options.clone(),
            start_state: self.sends_start_state(),
            match_frames: self.match_frames,
            public_key: Some(self.secret.public_key()),
            room: None,
        }
    }

    /// Whether this machine sends a start state: it has one and hosts the
    /// start-up (controls player 0).
    pub(crate) fn sends_start_state(&self) -> bool {
        self.start_state.is_some() && self.local_players.contains(0)
    }
}
