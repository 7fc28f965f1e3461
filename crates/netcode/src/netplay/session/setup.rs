//! What `NetplaySession::new` checks and builds from the configuration: the
//! players each machine controls, the rollback session, the links and the
//! start-up's role.

use super::{Link, LinkState};
use crate::encoding::state_blob;
use crate::netplay::config::{Connect, NetplayConfig};
use crate::netplay::events::NetplayError;
use crate::netplay::startup::StartUp;
use crate::protocol::{Millis, PlayerSlots, MAX_BLOB_SIZE};
use crate::rollback::{
    Frame, InputDelayConfig, PlayerId, PlayerKind, Session, SessionConfig, MAX_PLAYERS,
};

fn invalid(message: String) -> NetplayError {
    NetplayError::InvalidConfig(message)
}

/// Whether every player is controlled by exactly one machine, each peer we
/// dial has an address, and the input delay bounds are in order.
pub(super) fn check_players<A>(config: &NetplayConfig<A>) -> Result<(), NetplayError> {
    let settings = config.settings;
    let players = settings.player_count as usize;
    if !(2..=MAX_PLAYERS).contains(&players) {
        return Err(invalid(format!(
            "a match has 2 to {MAX_PLAYERS} players, not {players}"
        )));
    }
    let all = PlayerSlots((1u16 << players) as u8 - 1);
    if config.local_players.is_empty() || !config.local_players.fit_in(players as u8) {
        return Err(invalid(format!(
            "the local players {:#04x} must be some of the {players} players",
            config.local_players.0
        )));
    }
    let mut covered = config.local_players;
    for peer in &config.peers {
        if peer.players.is_empty() || !peer.players.fit_in(players as u8) {
            return Err(invalid(format!(
                "a peer's players {:#04x} must be some of the {players} players",
                peer.players.0
            )));
        }
        if peer.players.overlaps(covered) {
            return Err(invalid(format!(
                "players {:#04x} are claimed twice",
                peer.players.0 & covered.0
            )));
        }
        if peer.connect == Connect::Dial && peer.address.is_none() {
            return Err(invalid("a peer we dial needs an address".to_string()));
        }
        if peer.connect == Connect::Roster && config.roster.is_none() {
            return Err(invalid(
                "a peer the roster tells of needs a roster codec".to_string(),
            ));
        }
        covered = PlayerSlots(covered.0 | peer.players.0);
    }
    if covered != all {
        return Err(invalid(format!(
            "nobody controls players {:#04x}",
            all.0 & !covered.0
        )));
    }
    if settings.input_delay_min > settings.input_delay_max {
        return Err(invalid(
            "the input delay minimum is above its maximum".to_string(),
        ));
    }
    Ok(())
}

/// The start state as the host sends it (compressed), if we send one and it
/// fits in a blob.
pub(super) fn start_state_blob<A>(
    config: &NetplayConfig<A>,
) -> Result<Option<Vec<u8>>, NetplayError> {
    let blob = config
        .sends_start_state()
        .then(|| state_blob::compress(config.start_state.as_deref().unwrap_or_default()));
    if let Some(blob) = &blob {
        if blob.len() > MAX_BLOB_SIZE {
            return Err(invalid(format!(
                "the start state compresses to {} bytes, over the {MAX_BLOB_SIZE}-byte blob limit",
                blob.len()
            )));
        }
    }
    Ok(blob)
}

/// The rollback session for the agreed settings, our players local.
pub(super) fn rollback_session<A>(config: &NetplayConfig<A>) -> Result<Session, NetplayError> {
    let settings = config.settings;
    let mut session_config = SessionConfig::new();
    for slot in 0..settings.player_count {
        session_config = session_config.player(if config.local_players.contains(slot) {
            PlayerKind::Local
        } else {
            PlayerKind::Remote
        });
    }
    let mut session = session_config
        .max_prediction(u32::from(settings.max_prediction))
        .frame_rate(f64::from(settings.frame_rate_millihertz) / 1000.0)
        .checksum_interval(u32::from(settings.checksum_interval))
        .input_delay(InputDelayConfig {
            min_frames: u32::from(settings.input_delay_min),
            max_frames: u32::from(settings.input_delay_max),
            dynamic: config.dynamic_input_delay,
            ..InputDelayConfig::default()
        })
        .initial_input_delay(config.initial_input_delay)
        .time_sync(config.time_sync)
        .build()?;
    if let Some(last) = config.match_frames.and_then(Frame::last_of) {
        session.set_last_frame(last);
    }
    Ok(session)
}

/// One link per configured peer, none open yet.
pub(super) fn links<A: Copy>(config: &NetplayConfig<A>) -> Vec<Link<A>> {
    config
        .peers
        .iter()
        .map(|peer| Link {
            address: peer.address,
            configured_address: peer.address,
            players: peer.players,
            connect: peer.connect,
            state: LinkState::AwaitingHello,
            first_player: PlayerId::new(peer.players.iter().next().unwrap_or(0)),
            placed: false,
            checksummed: None,
            chat_limit: None,
        })
        .collect()
}

/// The start-up's role: the host is the machine of player 0 (see `startup`).
pub(super) fn startup<A>(config: &NetplayConfig<A>, links: &[Link<A>], now: Millis) -> StartUp {
    if links.is_empty() {
        StartUp::alone(now)
    } else if config.local_players.contains(0) {
        StartUp::host(
            links.len(),
            config.start_lead_ms,
            config.compensate_start_latency,
        )
    } else {
        let host_link = links
            .iter()
            .position(|link| link.players.contains(0))
            .unwrap_or(0);
        StartUp::member(host_link)
    }
}
