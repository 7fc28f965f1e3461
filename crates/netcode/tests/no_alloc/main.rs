//! The hot paths allocate nothing once warm: a rollback session's frames
//! and the audio ring's pulls, counted by a counting allocator.

mod audio_no_alloc;
mod rollback_no_alloc;
