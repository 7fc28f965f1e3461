//! The arguments of `netcade demo`.

use crate::engine::sinks::audio_file::AudioArgs;
use libretro_host::parse_option_override;
use std::path::PathBuf;

/// Arguments of `netcade demo`.
#[derive(Clone, Debug, clap::Args)]
pub struct DemoArgs {
    /// Play over netcade's simulated network in simulated time (instant)
    /// instead of real sockets in real time.
    #[arg(long)]
    pub simulated: bool,
    /// The arena to load [default: Duel's dojo.arena].
    #[arg(long, value_name = "ROM")]
    pub rom: Option<PathBuf>,
    /// Frames of the match (1200 = 20 s of play at 60 fps; at least 1).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1200,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub frames: u32,
    /// Seed of the random players and of the network's faults.
    #[arg(long, value_name = "SEED", default_value_t = 2024)]
    pub seed: u64,
    /// Round trip between the two machines, in milliseconds (±10 ms jitter
    /// each way) [default: 80 over sockets, 100 simulated].
    #[arg(
        long,
        value_name = "MS",
        value_parser = clap::value_parser!(u64).range(0..=2000)
    )]
    pub rtt_ms: Option<u64>,
    /// Share of datagrams lost, in percent (0 to 50).
    #[arg(long, value_name = "PERCENT", default_value_t = 2.0, value_parser = parse_loss_percent)]
    pub loss: f64,
    /// Sets a core option on machine 2 only (repeatable; with --simulated), e.g.
    /// `duel_inject_nondeterminism=enabled` to watch a desync being caught.
    #[arg(long = "machine2-option", value_name = "KEY=VALUE", value_parser = parse_option_override)]
    pub machine2_options: Vec<(String, String)>,
    /// Where to write the last frame (machine 1's view) [default:
    /// netcade/netcade-demo.png in the system's temporary directory].
    #[arg(long, value_name = "PATH")]
    pub png: Option<PathBuf>,
    /// Ends the output with one JSON object on its own line.
    #[arg(long)]
    pub json: bool,
    /// Audio output (machine 1's to `--audio-out`, machine 2's beside it).
    #[command(flatten)]
    pub audio: AudioArgs,
}

fn parse_loss_percent(text: &str) -> Result<f64, String> {
    let percent: f64 = text
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("`{text}` is not a percentage"))?;
    if (0.0..=50.0).contains(&percent) {
        Ok(percent)
    } else {
        Err(format!("{percent}% is outside 0 to 50"))
    }
}

/// Jitter of each direction of the demo's link (ms).
pub(crate) const JITTER_MS: u64 = 10;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_is_a_percentage_between_0_and_50() {
        assert_eq!(parse_loss_percent("2"), Ok(2.0));
        assert_eq!(parse_loss_percent("0.5%"), Ok(0.5));
        assert!(parse_loss_percent("75").is_err());
        assert!(parse_loss_percent("-1").is_err());
        assert!(parse_loss_percent("lots").is_err());
    }
}
