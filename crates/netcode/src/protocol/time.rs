//! The protocol's clock: time is a number the caller passes in, never read
//! here. A leaf: every part of the protocol that keeps time uses it.

/// Milliseconds since an origin the caller chooses (monotonic).
pub type Millis = u64;
