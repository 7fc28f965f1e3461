//! Matches on the seeded simulated network and on loopback sockets: the
//! rollback sessions, their protocol endpoints and peers, spectators,
//! rejoin, lockstep, endings and hostile datagrams, deterministically.

mod audio_match;
mod ice_nat;
mod netplay_chat;
mod netplay_desync;
mod netplay_endings;
mod netplay_keys;
mod netplay_lockstep;
mod netplay_partition;
mod netplay_rejoin;
mod netplay_restart;
mod netplay_roster;
mod netplay_session;
mod netplay_slots;
mod netplay_spectator;
mod netplay_start_state;
mod netplay_startup;
mod netplay_sync;
mod netplay_timing;
mod netplay_udp;
mod protocol_budget;
mod protocol_endpoint;
mod protocol_hostile;
mod protocol_sim;
mod savestate_context;
