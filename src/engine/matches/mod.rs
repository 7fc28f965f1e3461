//! The match machine: netplay on real games. The driver that carries out a
//! rollback session's requests on an emulator, the one tick every netplay loop runs (machine), desync
//! diagnosis, and whole matches simulated in one process.

pub mod checkpoints;
pub mod desync_diagnosis;
pub mod driver;
pub mod hooks;
pub mod machine;
pub mod profile;
pub mod simulated;
