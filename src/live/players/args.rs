//! What `host` and `join` are told: the game, the buttons, the match's
//! length and the link. Clap arguments, so the command line and the demo
//! (which builds them) share one definition.

use crate::engine::inputs::InputSpec;
use crate::engine::GameArgs;
use crate::live::rooms::{RoomCode, SignalArgs};
use crate::net::link::LinkArgs;
use netcode::protocol::{Fingerprint, SessionSettings};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// Seconds a silent player is waited for unless `--rejoin-s` says.
pub const DEFAULT_REJOIN_S: u32 = 30;

/// Settings `host` and `join` share.
#[derive(Clone, Debug, clap::Args)]
pub struct MatchSettings {
    /// The core, its content and options: the same on every machine.
    #[command(flatten)]
    pub game: GameArgs,
    /// Where this machine's buttons come from besides a window's devices:
    /// none, random:SEED (the player's column of `run --inputs
    /// random:SEED`), or an input script file [default: none in a window,
    /// where the player's own devices play; random:0 headless].
    #[arg(long, value_name = "SOURCE")]
    pub inputs: Option<InputSpec>,
    /// End the match cleanly after N frames (0..N-1) on every machine
    /// [default: play until Ctrl-C or the peer leaves]. The host's N wins: a
    /// joiner is told it in the handshake.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub frames: Option<u32>,
    /// With --mode rollback: refuse to play (exit 2) when the rollback
    /// pre-flight finds that the core does not restore its state
    /// faithfully (else: a warning).
    #[arg(long)]
    pub strict: bool,
    /// rollback; lockstep (no state saved or loaded: the input delay covers
    /// the round trip and each frame waits for every input); auto: lockstep
    /// when the rollback pre-flight finds that the core cannot restore its
    /// state. The host's mode wins: a joiner is told it in the handshake.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = ModeArg::Auto)]
    pub mode: ModeArg,
    /// Local input delay in frames: `auto` follows the network, a number
    /// (0–4) keeps it fixed.
    #[arg(long, value_name = "auto|N", default_value_t = DelayArg::Auto)]
    pub delay: DelayArg,
    /// Seconds a silent player is waited for once the match runs (the
    /// others stall, showing "waiting for player N"): back within them,
    /// from the same or a new address, it plays on; 0 drops it after 5 s.
    #[arg(long, value_name = "S", default_value_t = DEFAULT_REJOIN_S,
          value_parser = clap::value_parser!(u32).range(0..=3600))]
    pub rejoin_s: u32,
    /// The socket transport and the link conditioner over it.
    #[command(flatten)]
    pub link: LinkArgs,
    /// Where the joiner writes both versions of a desynced checkpoint and
    /// the report naming the bytes that differ [default: dumps/ in
    /// netcade's data directory].
    #[arg(long, value_name = "DIR")]
    pub dump_dir: Option<PathBuf>,
    /// Your name in the chat and lines to say.
    #[command(flatten)]
    pub chat: crate::live::chat::ChatArgs,
    /// Run-ahead on this machine's pictures (the others are told).
    #[command(flatten)]
    pub run_ahead: crate::engine::sinks::run_ahead::RunAheadArgs,
    /// Play only with the machine whose key has this fingerprint (the
    /// `key` line the other side printed: the host's for `join`, the
    /// joiner's for `host`); any other key ends the match with an error.
    #[arg(long, value_name = "FINGERPRINT")]
    pub peer_key: Option<Fingerprint>,
    /// The link's secret when drawn before the match (the lobby's: its
    /// public key rides in the signed challenge or accept); else one is
    /// drawn.
    #[arg(skip)]
    pub link_secret: Option<netcode::protocol::LinkSecret>,
}

impl MatchSettings {
    /// Where this machine's buttons come from: `--inputs`, or the default
    /// of a machine with no window ([`InputSpec::default`]) when the
    /// command chose none.
    pub fn input_spec(&self) -> InputSpec {
        self.inputs.clone().unwrap_or_default()
    }
}

/// Settings of `netcade host`.
#[derive(Clone, Debug, clap::Args)]
pub struct HostSettings {
    /// What both commands take.
    #[command(flatten)]
    pub common: MatchSettings,
    /// The UDP port to listen on (0: any free port; see --port-file).
    #[arg(long, default_value_t = 7000)]
    pub port: u16,
    /// Players in the match, one per machine (2–4): the host is player 1,
    /// joiners take the other slots, and the match begins once all joined.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=4))]
    pub players: u8,
    /// The least input delay every machine of the match uses, in frames
    /// (0–4): a floor under `--delay auto` and under a joiner's fixed delay.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=4))]
    pub min_delay: u8,
    /// Writes the port listened on to this file once bound.
    #[arg(long, value_name = "PATH")]
    pub port_file: Option<PathBuf>,
    /// Spectators fed at most at once (0: none accepted).
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub max_spectators: usize,
    /// Also meet through a room of the signaling server: prints the code
    /// the other player gives `join --room` (a CODE given opens that room).
    #[arg(long, value_name = "CODE", num_args = 0..=1)]
    pub room: Option<Option<RoomCode>>,
    /// The signaling server of `--room`.
    #[command(flatten)]
    pub signal: SignalArgs,
    /// RetroArch players instead.
    #[command(flatten)]
    pub retroarch: RetroArchHostArgs,
}

/// `host --retroarch` and its settings.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct RetroArchHostArgs {
    /// Host for RetroArch players instead (its netplay protocol over TCP
    /// `--port`; RetroArch's own port is 55435): they join with Netplay →
    /// Connect, or `retroarch --connect HOST --port PORT`.
    #[arg(id = "retroarch", long = "retroarch", conflicts_with_all = ["room", "players"])]
    pub enabled: bool,
    /// With --retroarch: the password a RetroArch player must give to play.
    #[arg(long, value_name = "PASSWORD", requires = "retroarch")]
    pub password: Option<String>,
    /// With --retroarch: the password that lets a RetroArch player watch.
    #[arg(long, value_name = "PASSWORD", requires = "retroarch")]
    pub spectate_password: Option<String>,
    /// With --retroarch: a CRC of the game's state goes to the players
    /// every N frames, for them to check theirs (RetroArch's
    /// `netplay_check_frames`).
    #[arg(long, value_name = "N", default_value_t = 30, requires = "retroarch",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub check_frames: u32,
}

/// Settings of `netcade join`.
#[derive(Clone, Debug, clap::Args)]
pub struct JoinSettings {
    /// The host's address: HOST:PORT (a name or an IP; IPv6 in brackets,
    /// `[::1]:7000`), or retroarch://HOST[:PORT] for a RetroArch host; or
    /// --room CODE, or --quick.
    #[arg(value_name = "HOST:PORT", required_unless_present_any = ["room", "quick"], conflicts_with_all = ["room", "quick"])]
    pub address: Option<String>,
    /// Join the match whose room code the host printed (`host --room`).
    #[arg(long, value_name = "CODE", conflicts_with = "quick")]
    pub room: Option<RoomCode>,
    /// Pair with the next player who queues with the same core and content
    /// on the signaling server; either may end up hosting.
    #[arg(long)]
    pub quick: bool,
    /// The signaling server of `--room` and `--quick`.
    #[command(flatten)]
    pub signal: SignalArgs,
    /// What both commands take.
    #[command(flatten)]
    pub common: MatchSettings,
    /// Seconds to wait for the host to answer before giving up.
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    pub connect_timeout_s: f64,
    /// The player to be (2–4; the host is player 1) [default: the first
    /// free one].
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u8).range(2..=4))]
    pub slot: Option<u8>,
    /// Come back to the match at HOST:PORT (or in room CODE) that this
    /// machine left when its process was killed, within the host's rejoin
    /// window (with the ticket kept while it played).
    #[arg(long, conflicts_with_all = ["quick", "slot"])]
    pub rejoin: bool,
    /// The password a RetroArch host (`retroarch://HOST[:PORT]`) asks for
    /// (its players' or its spectators').
    #[arg(long, value_name = "PASSWORD")]
    pub password: Option<String>,
}

/// `--mode`: how frames are kept in step between the machines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    /// Predict remote inputs and roll back on a misprediction.
    Rollback,
    /// Wait for every input; never save or load a state.
    Lockstep,
    /// Rollback when the core passes the pre-flight, else lockstep.
    Auto,
}

/// `--delay`: follow the network, or a fixed number of frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DelayArg {
    /// The delay follows the network (seed 000's hysteresis).
    Auto,
    /// This many frames, always.
    Fixed(u8),
}

impl fmt::Display for DelayArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DelayArg::Auto => f.write_str("auto"),
            DelayArg::Fixed(frames) => write!(f, "{frames}"),
        }
    }
}

impl FromStr for DelayArg {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if text.eq_ignore_ascii_case("auto") {
            return Ok(DelayArg::Auto);
        }
        let most = SessionSettings::default().input_delay_max;
        match text.parse::<u8>() {
            Ok(frames) if frames <= most => Ok(DelayArg::Fixed(frames)),
            _ => Err(format!(
                "expected auto or a number of frames from 0 to {most}"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_is_auto_or_a_small_number_of_frames() {
        assert_eq!("auto".parse::<DelayArg>(), Ok(DelayArg::Auto));
        assert_eq!("3".parse::<DelayArg>(), Ok(DelayArg::Fixed(3)));
        assert!("9".parse::<DelayArg>().is_err());
        assert!("soon".parse::<DelayArg>().is_err());
    }
}
