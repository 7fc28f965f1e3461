//! Netplay on real games: the driver that carries out a session's requests
//! on an emulator, the one tick every netplay loop runs, desync diagnosis.

pub mod desync_diagnosis;
pub mod driver;
pub mod machine;
