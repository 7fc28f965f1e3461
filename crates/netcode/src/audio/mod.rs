//! Audio that survives rollback (pure: no device, no clock, no I/O).
//!
//! - [`ring`]: audio queued per frame; a rollback revokes what its
//!   mispredicted frames queued and the re-simulated audio takes its place,
//!   crossfaded where the consumer is; stalls fade out and back in.
//! - [`output`]: rate conversion to the device's rate, following the
//!   session's time-sync speed and holding the ring's fill with ±0.5 %
//!   dynamic rate control.
//! - [`check`]: how much of what was played is the confirmed timeline.

pub mod check;
pub mod output;
pub mod ring;

pub use check::{TimelineCheck, TimelineCounts};
pub use output::{AudioConfig, AudioPipeline, RateControl};
pub use ring::{AudioPolicy, AudioRing, Pulled, RingConfig, RingStats, Stereo};
