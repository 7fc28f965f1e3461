//! Numbers the frontend shows per peer (seed 000's debug overlay).

/// Network and rollback figures for one player, as the session knows them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PeerStats {
    /// Last round trip the glue reported, in milliseconds.
    pub ping_ms: Option<u32>,
    /// Frames we simulate past this peer's newest input, minus our input
    /// delay (what we report to the peer for time sync).
    pub local_frame_lag: i32,
    /// The same figure as the peer last reported it.
    pub remote_frame_lag: Option<i32>,
    /// How many frames we are ahead of this peer (negative: behind), averaged
    /// over the last time-sync window.
    pub frames_ahead: Option<f32>,
    /// Depth of the last rollback this peer's inputs caused.
    pub last_rollback: u32,
    /// The deepest rollback this peer's inputs caused.
    pub max_rollback: u32,
    /// Rollbacks this peer's inputs caused.
    pub rollbacks: u64,
    /// Our local input delay (frames) while this was measured.
    pub local_input_delay: u32,
}
