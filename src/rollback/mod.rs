//! Rollback netcode, as pure logic: no I/O, no clock, no randomness.

pub mod frame;

pub use frame::Frame;
