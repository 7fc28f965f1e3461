//! What a netplay session tells the frontend: one event enum for the match
//! and the network, stats per player, and its error type.

use crate::checksum::Checksum;
use crate::encoding::StateBlobError;
use crate::protocol::{EndpointError, Millis, Rejection};
use crate::rollback::{DisconnectReason, Frame, PlayerId, PlayerSet, SessionError, TimeSyncAdvice};

/// Something to show or log, oldest first (`NetplaySession::next_event`).
#[derive(Clone, Debug, PartialEq)]
pub enum NetplayEvent {
    /// Connecting to the peers and shaking hands.
    Synchronizing,
    /// The handshake with the peer controlling `players` is done (its
    /// keys: `NetplaySession::link_fingerprints`).
    PeerSynchronized {
        /// The players that peer's machine controls.
        players: PlayerSet,
    },
    /// The start moment is known: frame 0 begins in `in_ms` (a countdown).
    Starting {
        /// Milliseconds from now until frame 0.
        in_ms: Millis,
    },
    /// Frame 0 began (every machine begins it at about the same moment).
    Running,
    /// A line of chat from another machine (a player, or a spectator the
    /// host relays).
    Chat(crate::netplay::chat::ChatShown),
    /// A handshake was refused, by us or by the peer; says what differs.
    /// Refused by us as the host before the match began, the joiner's slot
    /// stays open for another (told once per joiner and reason).
    Rejected(Rejection),
    /// The prediction window is used up waiting for `players`' inputs, for
    /// `waited_ms` so far (raised when it starts and every second or so).
    WaitingForPeer {
        /// The remote players whose inputs are missing.
        players: PlayerSet,
        /// Milliseconds since the wait began.
        waited_ms: Millis,
    },
    /// Inputs arrived: frames run again after `waited_ms`.
    StoppedWaiting {
        /// How long the wait lasted in all, in ms.
        waited_ms: Millis,
    },
    /// Time sync's advice changed (apply `frames_per_second_factor`).
    TimeSync {
        /// The new advice: a speed factor, or frames to stall.
        advice: TimeSyncAdvice,
        /// How far we run ahead of the furthest-behind remote player (frames,
        /// averaged; negative: behind), the figure the advice answers.
        frames_ahead: f32,
    },
    /// The local input delay changed (frames).
    InputDelayChanged {
        /// The delay before the change, in frames.
        from: u32,
        /// The delay now, in frames.
        to: u32,
    },
    /// A confirmed frame's checksum differs here and at `player`'s machine.
    Desync {
        /// The confirmed frame whose checksums differ.
        frame: Frame,
        /// A player of the machine that reported the other checksum.
        player: PlayerId,
        /// Our checksum of `frame`.
        local: Checksum,
        /// That machine's checksum of `frame`.
        remote: Checksum,
    },
    /// Nothing heard from the machine of `players` for `silent_for_ms`.
    NetworkInterrupted {
        /// The players of the silent machine.
        players: PlayerSet,
        /// How long it has been silent, in ms.
        silent_for_ms: Millis,
    },
    /// The machine of `players` came back from a new address and proved
    /// it is the same (its link moved there).
    PeerRejoined {
        /// The players of the machine that came back.
        players: PlayerSet,
    },
    /// The host sent the restarted machine of `players` the state of
    /// `frame` to resume from (its inputs follow from there).
    ResumeStateSent {
        /// The players of the restarted machine.
        players: PlayerSet,
        /// The frame the state was saved at the start of.
        frame: Frame,
    },
    /// This restarted machine got the host's state of `frame` (`bytes`
    /// long): the frontend loads it (`NetplaySession::take_start_state`)
    /// and the match resumes from that frame.
    ResumeStateArrived {
        /// The frame the match resumes at.
        frame: Frame,
        /// The state's size, uncompressed.
        bytes: usize,
    },
    /// That machine is heard again.
    NetworkResumed {
        /// The players of the machine heard again.
        players: PlayerSet,
    },
    /// `player` left the match: their input is none from `at_frame` on.
    Disconnected {
        /// The player who left.
        player: PlayerId,
        /// The first frame their input counts as none.
        at_frame: Frame,
        /// Why they left: timed out, quit, broke the rules or desynchronized.
        reason: DisconnectReason,
    },
    /// The machines agreed that `player` left at `at_frame`, older than any
    /// state kept here (`oldest`): this machine cannot follow, so it leaves
    /// the match (`MatchEnded` follows) and the others play on without it.
    DepartureTooFarBack {
        /// The player who left.
        player: PlayerId,
        /// The frame the machines agreed they left at.
        at_frame: Frame,
        /// The oldest frame this machine can still return to.
        oldest: Frame,
    },
    /// Frames were asked for, but none became final for `stalled_for_ms`
    /// although the peers were heard: we left the match (`MatchEnded`
    /// follows), telling the others why.
    Stalled {
        /// The last final frame.
        at_frame: Option<Frame>,
        /// How long nothing became final, in ms.
        stalled_for_ms: Millis,
    },
    /// Too few players are left (or we left): the match is over.
    MatchEnded {
        /// The frame at which the match ended.
        at_frame: Frame,
    },
    /// The start-up host's start state arrived (`bytes` once expanded): the
    /// frontend loads it (`NetplaySession::take_start_state`) before frame 0.
    StartStateArrived {
        /// Its size once expanded.
        bytes: usize,
    },
    /// The joiner of `players` left, vanished or was dropped before the
    /// match began: its slot waits for another joiner.
    JoinerLeftBeforeStart {
        /// The players whose slot is open again.
        players: PlayerSet,
    },
    /// The host's state of checkpoint `frame`, sent because our checksums
    /// of it differed: the frontend compares it with its own state of that
    /// frame to name the bytes that diverged.
    HostCheckpointState {
        /// The checkpoint frame (the state as saved at its start).
        frame: Frame,
        /// The host's state, expanded.
        state: Vec<u8>,
    },
    /// A spectator's checksum of checkpoint `frame` differs from ours: its
    /// game diverged, and it is sent our state of the frame to repair it
    /// (`NetplaySession::repair_spectators`).
    SpectatorDesync {
        /// The checkpoint frame.
        frame: Frame,
        /// Our checksum of it.
        local: Checksum,
        /// The spectator's.
        remote: Checksum,
    },
    /// We met by room code and so many exchanges failed (each one guess of
    /// the code, see `protocol::room_guesses`) that no Hello is answered
    /// for `retry_in_ms`: someone may be guessing the code. Said once
    /// each time the budget runs out.
    RoomGuessesSpent {
        /// When the next Hello may be answered.
        retry_in_ms: Millis,
    },
    /// A spectator connected (it is fed every confirmed input).
    SpectatorJoined {
        /// Its link's fingerprint and its key's (players: none), to compare
        /// with what the spectator shows.
        keys: Option<LinkFingerprints>,
    },
    /// A spectator's Hello was refused (another core or content…): it was
    /// told why, and nothing of it is kept.
    SpectatorRefused(Rejection),
    /// A spectator left, or its connection timed out.
    SpectatorLeft,
    /// We stopped feeding a spectator, and said goodbye to it.
    SpectatorDropped {
        /// Why it was dropped.
        reason: SpectatorDrop,
    },
    /// We closed the link to the machine of `players` because of what it
    /// sent. Its players leave as on any disconnect
    /// (`Disconnected` with `ProtocolViolation` follows); nobody else does.
    /// Before the match began, a joiner's slot reopens instead
    /// (`JoinerLeftBeforeStart` follows).
    PeerFault {
        /// The players of the machine whose link was closed.
        players: PlayerSet,
        /// What it did.
        fault: PeerFault,
    },
}

/// What a peer did that made us close its link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PeerFault {
    /// Its handshake named other players or other settings than the lobby's.
    WrongPlayersOrSettings,
    /// It sent an input the match cannot take: outside the input window, or
    /// contradicting one it sent before.
    RejectedInput {
        /// The player the input was for.
        player: PlayerId,
        /// Why the rollback session refused it.
        error: SessionError,
    },
    /// It announced that `player` left at `at_frame`, older than any state
    /// kept here (`oldest`): no machine still playing can have held that
    /// view, and following it would force this machine out.
    ImpossibleDeparture {
        /// The player it said left.
        player: PlayerId,
        /// The frame it said they left at.
        at_frame: Frame,
        /// The oldest frame this machine can still return to.
        oldest: Frame,
    },
    /// It left `frames` of our inputs unacknowledged.
    StoppedAcknowledging {
        /// Our input frames waiting for its ack when we gave up.
        frames: u32,
    },
    /// It is the start-up host and its start state cannot be used (too
    /// large, truncated or corrupt): we cannot begin as it did.
    BadStartState(StateBlobError),
    /// It is the host and the state it sent of a desynced checkpoint cannot
    /// be used.
    BadCheckpointState(StateBlobError),
    /// It is the host and our core refused to load a state it sent (its
    /// start state or a checkpoint's): what the core said.
    StateRefused(String),
    /// Its process restarted and what it needs to resume (a final state
    /// of the frame it lacks inputs from, our inputs since) is no longer
    /// held here, or does not fit in a blob.
    CannotResume,
}

impl std::fmt::Display for PeerFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerFault::WrongPlayersOrSettings => {
                f.write_str("it connected with other players or settings than agreed")
            }
            PeerFault::RejectedInput { error, .. } => write!(f, "it sent a bad input: {error}"),
            PeerFault::ImpossibleDeparture {
                player,
                at_frame,
                oldest,
            } => write!(
                f,
                "it claimed {player} left at frame {at_frame}, before the oldest frame any machine can return to ({oldest})"
            ),
            PeerFault::StoppedAcknowledging { frames } => {
                write!(f, "it left {frames} frames of our inputs unacknowledged")
            }
            PeerFault::BadStartState(error) => write!(f, "its start state is unusable: {error}"),
            PeerFault::BadCheckpointState(error) => {
                write!(f, "its state of a desynced checkpoint is unusable: {error}")
            }
            PeerFault::StateRefused(reason) => {
                write!(f, "our core refused to load a state it sent: {reason}")
            }
            PeerFault::CannotResume => f.write_str(
                "its process restarted, and the state and inputs it needs to resume are no longer held here",
            ),
        }
    }
}

/// Figures for the on-screen stats of one remote player.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NetplayStats {
    /// Smoothed round trip to that player's machine.
    pub ping_ms: Option<u32>,
    /// How many frames we run ahead of it (negative: behind), time-sync's
    /// average over the last window.
    pub frames_ahead: Option<f32>,
    /// Frames we simulate past its newest input, less our delay, and the
    /// same figure as it reports it.
    pub local_frame_lag: i32,
    /// The lag that player's machine last reported (`None` before its first report).
    pub remote_frame_lag: Option<i32>,
    /// Depth of the last and the deepest rollback its inputs caused.
    pub last_rollback: u32,
    /// Depth of the deepest rollback its inputs caused, in frames.
    pub max_rollback: u32,
    /// Rollbacks its inputs caused in all.
    pub rollbacks: u64,
    /// Our local input delay (frames).
    pub local_input_delay: u32,
    /// That player's input delay (frames), as its machine last reported it.
    pub remote_input_delay: Option<u32>,
    /// That player's run-ahead (frames), as its machine last reported it.
    pub remote_run_ahead: Option<u32>,
    /// Traffic on the link to its machine.
    pub bytes_sent: u64,
    /// Bytes received on that link.
    pub bytes_received: u64,
    /// Datagrams sent on that link.
    pub datagrams_sent: u64,
    /// Datagrams received on that link, dropped ones included.
    pub datagrams_received: u64,
}

/// What went wrong in a call to the netplay session.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NetplayError {
    /// The session cannot be built from this configuration; the text says why.
    #[error("invalid netplay settings: {0}")]
    InvalidConfig(String),
    /// The rollback session refused the call.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// A peer endpoint refused the call (bad configuration, closed link).
    #[error("peer connection: {0}")]
    Endpoint(#[from] EndpointError),
}

/// Why the host stopped feeding a spectator. The players never wait for
/// spectators: one that cannot keep up is dropped instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpectatorDrop {
    /// It acknowledged so little that the frames it still needs fell out of
    /// the backlog the host keeps (`frames` final frames).
    FellBehind {
        /// The frames the backlog holds.
        frames: u32,
    },
    /// Lockstep keeps no state: a spectator starts from frame 0, whose
    /// inputs left the backlog (`frames` final frames).
    LockstepStartGone {
        /// The frames the backlog holds.
        frames: u32,
    },
    /// The savestate it needs compresses to more than a blob may carry.
    StateTooLarge {
        /// The compressed size.
        bytes: usize,
    },
}

impl std::fmt::Display for SpectatorDrop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpectatorDrop::FellBehind { frames } => {
                write!(f, "it fell more than {frames} frames behind the match")
            }
            SpectatorDrop::LockstepStartGone { frames } => write!(
                f,
                "the match plays in lockstep, so a spectator starts from frame 0, more than {frames} frames back"
            ),
            SpectatorDrop::StateTooLarge { bytes } => write!(
                f,
                "the savestate it needs compresses to {bytes} bytes, over the blob limit"
            ),
        }
    }
}

/// One link's keys as players compare them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkFingerprints {
    /// The players the peer's machine controls (all, from a spectator's host).
    pub players: crate::protocol::PlayerSlots,
    /// The link's: the same on both sides unless a machine sits in between.
    pub link: crate::protocol::Fingerprint,
    /// The peer's public key's, which `--peer-key` pins.
    pub peer_key: crate::protocol::Fingerprint,
}
