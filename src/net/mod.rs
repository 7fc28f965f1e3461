//! Networking around the pure protocol. `sim` is a seeded, deterministic
//! network for tests: no sockets, no clock.

pub mod sim;
