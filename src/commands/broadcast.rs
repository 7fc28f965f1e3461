//! `netcade broadcast HOST:PORT|--room CODE --nats URL`: watches a match as a
//! headless spectator and republishes it into NATS JetStream, for any
//! number of viewers at the cost of one spectator to the host
//! (docs/broadcast.md).

use crate::commands::outputs::OutputArgs;
use crate::engine::report::{write_report, Report};
use crate::engine::{AppError, Outcome};
use crate::live::broadcast::{
    broadcast_sink, check_match_name, connect, ensure_stream, BroadcastStatus, REPLAYS_BUCKET,
};
use crate::live::options::LiveOptions;
use crate::live::spectator::{spectate_match_relaying, RelayStart, SpectateSettings};
use crate::net::nats::NatsError;
use std::io::Write;
use std::sync::{Arc, Mutex};

/// Arguments of `netcade broadcast`.
#[derive(Clone, Debug, clap::Args)]
pub struct BroadcastArgs {
    /// The match to broadcast (as `spectate` watches it).
    #[command(flatten)]
    pub settings: SpectateSettings,
    /// The NATS server with JetStream: nats://[USER:PASSWORD@]HOST[:PORT].
    #[arg(long, value_name = "URL")]
    pub nats: String,
    /// The name viewers watch the match by (nats://SERVER/NAME): letters,
    /// digits, '-' and '_' [default: the host's address and the time].
    #[arg(long = "match", value_name = "NAME")]
    pub match_name: Option<String>,
    /// What the broadcaster shows and keeps (usually --headless).
    #[command(flatten)]
    pub outputs: OutputArgs,
}

/// The match `settings` name: its host's address, or its room.
fn watched(settings: &SpectateSettings) -> String {
    match (&settings.address, &settings.room) {
        (Some(address), _) => address.clone(),
        (None, Some(code)) => format!("room {code}"),
        (None, None) => "the match".to_string(),
    }
}

/// `netcade broadcast`.
pub fn broadcast_command(args: &BroadcastArgs, out: &mut dyn Write) -> Result<Outcome, AppError> {
    let name = args.match_name.clone().unwrap_or_else(|| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        let address: String = watched(&args.settings)
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        format!("{address}-{now}")
    });
    check_match_name(&name)?;
    if !args.nats.starts_with("nats://") {
        return Err(AppError::BadArgument {
            message: format!("--nats {} is not a nats://HOST[:PORT] address", args.nats),
        });
    }
    let link = Arc::new(connect(&args.nats)?);
    ensure_stream(&link)?;
    writeln!(out, "broadcasting {} as {name}", watched(&args.settings))?;
    let status = Arc::new(Mutex::new(BroadcastStatus::default()));
    let make = |start: RelayStart<'_>| broadcast_sink(link.clone(), &name, start, status.clone());
    let played = spectate_match_relaying(
        &args.settings,
        &args.outputs.live(),
        &LiveOptions::for_stdout(),
        out,
        Some(&make),
    )?;
    let status = status
        .lock()
        .map(|status| status.clone())
        .unwrap_or_default();
    let failure = status.failure.clone();
    if let Some(watch) = played.report {
        let report = BroadcastReport { watch, status };
        write_report(&report, args.outputs.json, out)?;
    }
    match failure {
        Some(reason) => Err(NatsError::Request {
            what: "the broadcast".into(),
            reason,
        }
        .into()),
        None => Ok(played.outcome),
    }
}

/// The watch's summary and what the broadcast did.
struct BroadcastReport {
    watch: Box<dyn Report + Send>,
    status: BroadcastStatus,
}

impl Report for BroadcastReport {
    fn describe(&self, out: &mut dyn Write) -> std::io::Result<()> {
        self.watch.describe(out)?;
        let status = &self.status;
        writeln!(
            out,
            "broadcast: {} messages ({} bytes) acknowledged, {} savestates; {} sent in pieces (larger than the server takes at once)",
            status.messages, status.bytes, status.states, status.in_pieces
        )?;
        if let Some(object) = &status.replay_object {
            writeln!(
                out,
                "replay kept in the object store {REPLAYS_BUCKET} as {object}"
            )?;
        }
        if let Some(failure) = &status.failure {
            writeln!(out, "the broadcast failed: {failure}")?;
        }
        Ok(())
    }

    fn json(&self) -> serde_json::Value {
        let mut json = self.watch.json();
        json["command"] = "broadcast".into();
        let status = &self.status;
        json["broadcast"] = serde_json::json!({
            "messages": status.messages,
            "bytes": status.bytes,
            "savestates": status.states,
            "in_pieces": status.in_pieces,
            "replay_object": status.replay_object,
            "failure": status.failure,
        });
        json
    }
}
