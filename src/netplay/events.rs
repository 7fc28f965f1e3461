//! What a netplay session tells the frontend: one event enum for the match
//! and the network, stats per player, and its error type.

use super::start_state::StartStateError;
use crate::checksum::Checksum;
use crate::protocol::{EndpointError, Millis, Rejection};
use crate::rollback::{DisconnectReason, Frame, PlayerId, PlayerSet, SessionError, TimeSyncAdvice};

/// Something to show or log, oldest first (`NetplaySession::next_event`).
#[derive(Clone, Debug, PartialEq)]
pub enum NetplayEvent {
    /// Connecting to the peers and shaking hands.
    Synchronizing,
    /// The handshake with the peer controlling `players` is done.
    PeerSynchronized { players: PlayerSet },
    /// The start moment is known: frame 0 begins in `in_ms` (a countdown).
    Starting { in_ms: Millis },
    /// Frame 0 began (every machine begins it at about the same moment).
    Running,
    /// A handshake was refused, by us or by the peer; says what differs.
    Rejected(Rejection),
    /// The prediction window is used up waiting for `players`' inputs, for
    /// `waited_ms` so far (raised when it starts and every second or so).
    WaitingForPeer {
        players: PlayerSet,
        waited_ms: Millis,
    },
    /// Inputs arrived: frames run again after `waited_ms`.
    StoppedWaiting { waited_ms: Millis },
    /// Time sync's advice changed (apply `frames_per_second_factor`).
    TimeSync {
        advice: TimeSyncAdvice,
        frames_ahead: f32,
    },
    /// The local input delay changed (frames).
    InputDelayChanged { from: u32, to: u32 },
    /// A confirmed frame's checksum differs here and at `player`'s machine.
    Desync {
        frame: Frame,
        player: PlayerId,
        local: Checksum,
        remote: Checksum,
    },
    /// Nothing heard from the machine of `players` for `silent_for_ms`.
    NetworkInterrupted {
        players: PlayerSet,
        silent_for_ms: Millis,
    },
    /// That machine is heard again.
    NetworkResumed { players: PlayerSet },
    /// `player` left the match: their input is none from `at_frame` on.
    Disconnected {
        player: PlayerId,
        at_frame: Frame,
        reason: DisconnectReason,
    },
    /// The machines agreed that `player` left at `at_frame`, older than any
    /// state kept here (`oldest`): this machine cannot follow, so it leaves
    /// the match (`MatchEnded` follows) and the others play on without it.
    DepartureTooFarBack {
        player: PlayerId,
        at_frame: Frame,
        oldest: Frame,
    },
    /// Too few players are left (or we left): the match is over.
    MatchEnded { at_frame: Frame },
    /// The start-up host's start state arrived (`bytes` once expanded): the
    /// frontend loads it (`NetplaySession::take_start_state`) before frame 0.
    StartStateArrived {
        /// Its size once expanded.
        bytes: usize,
    },
    /// A spectator connected (it is fed every confirmed input).
    SpectatorJoined,
    /// A spectator left or fell too far behind.
    SpectatorLeft,
    /// We closed the link to the machine of `players` because of what it
    /// sent. Its players leave as on any disconnect
    /// (`Disconnected` with `ProtocolViolation` follows); nobody else does.
    PeerFault {
        players: PlayerSet,
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
        player: PlayerId,
        error: SessionError,
    },
    /// It announced that `player` left at `at_frame`, older than any state
    /// kept here (`oldest`): no machine still playing can have held that
    /// view, and following it would force this machine out.
    ImpossibleDeparture {
        player: PlayerId,
        at_frame: Frame,
        oldest: Frame,
    },
    /// It left `frames` of our inputs unacknowledged.
    StoppedAcknowledging { frames: u32 },
    /// It is the start-up host and its start state cannot be used (too
    /// large, truncated or corrupt): we cannot begin as it did.
    BadStartState(StartStateError),
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
    pub remote_frame_lag: Option<i32>,
    /// Depth of the last and the deepest rollback its inputs caused.
    pub last_rollback: u32,
    pub max_rollback: u32,
    pub rollbacks: u64,
    /// Our local input delay (frames).
    pub local_input_delay: u32,
    /// Traffic on the link to its machine.
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
}

/// What went wrong in a call to the netplay session.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NetplayError {
    #[error("invalid netplay settings: {0}")]
    InvalidConfig(String),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("peer connection: {0}")]
    Endpoint(#[from] EndpointError),
}
