//! The wire's and the replay file's bytes: every message and record
//! encodes and decodes to itself, and damaged bytes are refused, never a panic.

mod protocol_codec;
mod replay_format;
