//! Replays rewritten the way a stranger would share them: one part
//! changed, everything else as recorded.

use netcode::checksum::Checksum;
use netcode::input::Buttons;
use netcode::replay::{read_replay, Replay, ReplayEvent, ReplayHeader, ReplayWriter};
use netcode::rollback::Frame;
use std::path::{Path, PathBuf};

/// Changes the buttons of a frame, given the replay's start and end frames.
pub type InputsEdit<'a> = &'a dyn Fn(Frame, (u32, u32), &mut [Buttons]);

/// What a rewrite changes in a recorded replay.
#[derive(Default)]
pub struct Rewrite<'a> {
    /// Changes the header (its start state, its settings).
    pub header: Option<&'a dyn Fn(&mut ReplayHeader)>,
    /// Changes the inputs of each frame.
    pub inputs: Option<InputsEdit<'a>>,
    /// A desync repair to add: at the start of the frame the game loads
    /// the state, which is said to leave the game memory's checksum.
    pub added_repair: Option<(Frame, Vec<u8>, Checksum)>,
}

/// Writes a copy of the replay at `path` changed by `rewrite` to `to`:
/// checkpoints, repairs, departures and the end as recorded.
pub fn rewrite_replay(path: &Path, to: &Path, rewrite: Rewrite<'_>) -> PathBuf {
    let replay: Replay = read_replay(std::fs::File::open(path).unwrap()).unwrap();
    let mut header = replay.header.clone();
    if let Some(edit) = rewrite.header {
        edit(&mut header);
    }
    let players = usize::from(replay.header.players);
    let (start, end) = (replay.start_frame().number(), replay.end_frame().number());
    let mut writer = ReplayWriter::new(Vec::new(), &header).unwrap();
    for number in start..end {
        let frame = Frame::new(number);
        let mut inputs = replay.inputs(frame)[..players].to_vec();
        if let Some(edit) = rewrite.inputs {
            edit(frame, (start, end), &mut inputs);
        }
        let checkpoint = replay.checkpoint(frame);
        let (memory, video) = (
            checkpoint.map(|c| c.memory),
            checkpoint.and_then(|c| c.video),
        );
        writer.frame(frame, &inputs, memory, video).unwrap();
        // Events follow the frame they happen at, as a recorder writes them
        // once that frame is final.
        for event in replay.events.iter().filter(|event| event.frame() == frame) {
            match event {
                ReplayEvent::Repair { state, memory, .. } => {
                    let memory = memory.expect("a repair this build recorded");
                    writer.repair(frame, state, memory).unwrap()
                }
                ReplayEvent::PlayerLeft { player, .. } => {
                    writer.player_left(frame, *player).unwrap()
                }
            }
        }
        if let Some((_, state, memory)) = rewrite
            .added_repair
            .as_ref()
            .filter(|(at, ..)| *at == frame)
        {
            writer.repair(frame, state, *memory).unwrap();
        }
    }
    let (bytes, _) = writer.finish(replay.end.unwrap().1).unwrap();
    std::fs::write(to, bytes).unwrap();
    to.to_path_buf()
}
