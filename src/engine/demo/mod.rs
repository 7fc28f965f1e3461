//! `netcade demo`: a match of the bundled Duel core in one process, on real
//! sockets or over the simulated network.

pub mod live;
pub mod simulated;
