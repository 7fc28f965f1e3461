//! `netcade spectate nats://SERVER/MATCH`: watches a broadcast match. It
//! loads the newest savestate (or the start state, `--from-start`), reads
//! the replay's records from that frame on, and plays them in the one
//! real-time loop through the spectator's jitter buffer and catch-up. It
//! talks only to the NATS server (outbound TCP): never to the players.
//! When the broadcaster was restarted, the gap its absence left is
//! crossed at its next savestate.

use super::pieces::{newest_whole, piece_of, Pieces};
use super::signing::BroadcastCheck;
use super::{match_subjects, subject, Part, ViewerAnnouncement, STREAM};
use crate::engine::frame_clock::FrameClock;
use crate::engine::matches::machine::{load_watched_state, SpectatorStats};
use crate::engine::sinks::recorder::{content_checksum, match_recorder};
use crate::engine::sinks::{FinalFrames, FramePass, FrameSink, MatchSinks, SinksSummary};
use crate::engine::{open_game, AppError, Game, GameArgs, Outcome};
use crate::live::connect::adopt_host_options;
use crate::live::front_end::{FrontEnd, LiveOutputs, MatchView, SpectatorView};
use crate::live::narrator::{status_due, Narrator};
use crate::live::options::LiveOptions;
use crate::live::session_loop::{run_live, DatagramSession, LiveMatch, LiveRole};
use crate::live::spectator::report::{WatchDelay, WatchEnd, WatchReport};
use crate::live::spectator::SpectateSettings;
use crate::live::wire::{LiveTransport, WireTraffic};
use crate::net::nats::async_nats::jetstream;
use crate::net::nats::{NatsError, NatsLink};
use futures_util::StreamExt;
use netcode::checksum::{memory_checksum, Checksum, Checksums};
use netcode::input::{Buttons, MAX_PLAYERS};
use netcode::netplay::checkpoint_state::decompress_checkpoint;
use netcode::netplay::jitter::{JitterBuffer, JitterConfig};
use netcode::netplay::spectator::MAX_BUFFERED_FRAMES;
use netcode::protocol::Millis;
use netcode::replay::{
    read_records, read_replay, Checkpoint, Record, ReplayHeader, CHECKPOINT_INTERVAL,
};
use netcode::rollback::Frame;
use std::collections::VecDeque;
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Messages received and not yet taken by the frame loop, at most.
const QUEUED_MESSAGES: usize = 4096;

/// Nothing from the stream for this long ends the watch (a broadcaster
/// that is restarted sends a savestate sooner).
const SILENCE_MS: Millis = 30_000;

/// How far past the newest checkpoint a viewer plays: up to the next one,
/// which the broadcaster sends with that frame's inputs, so its own frames
/// are never held.
const CHECKPOINT_LEAD: u32 = CHECKPOINT_INTERVAL;

/// Checkpoints kept ahead of the frame played (one a second: minutes).
const MAX_CHECKPOINTS: usize = 1024;

/// The largest savestate taken, expanded.
const MAX_STATE_BYTES: usize = 16 << 20;

/// What to watch.
pub struct ViewerSettings<'a> {
    /// The game, `--frames`, the link's arguments (unused: no datagrams).
    pub spectate: &'a SpectateSettings,
    /// `nats://[USER:PASSWORD@]HOST[:PORT]`.
    pub server: String,
    /// The match's name.
    pub name: String,
    /// From frame 0 (the broadcast's first frame) rather than the newest
    /// savestate.
    pub from_start: bool,
}

/// What the subscription brings the frame loop.
enum Incoming {
    /// One whole message of the broadcast watched.
    Message(Part, Vec<u8>),
    /// A message that is not the broadcaster's (unsigned, signed by
    /// another key, of another broadcast): refused unread.
    Refused,
}

/// Watches the broadcast match `settings` name and returns how it went.
pub fn watch_broadcast(
    settings: &ViewerSettings<'_>,
    outputs: &LiveOutputs<'_>,
    options: &LiveOptions,
    out: &mut dyn Write,
) -> Result<LiveMatch, AppError> {
    let link = super::connect(&settings.server)?;
    let (header, start) = find_start(&link, &settings.name, settings.from_start)?;
    let game = open_game(&settings.spectate.game)?;
    check_same_game(&header, game.as_ref(), &settings.spectate.game)?;
    writeln!(
        out,
        "watching {} on {} with {}",
        settings.name,
        settings.server,
        game.title()
    )?;
    let game_args = GameArgs {
        options: header.core_options.clone(),
        ..settings.spectate.game.clone()
    };
    let game = adopt_host_options(game, &settings.spectate.game, header.core_options.clone())?;
    let recorder = match_recorder(
        &outputs.sinks.record,
        game.as_ref(),
        &game_args,
        header.players,
        header.player_names.clone(),
    )?;
    options.take_ctrl_c();
    let incoming = subscribe(&link, &settings.name, start.sequence, start.check)?;
    let announcement = super::announce_viewer(&link, &settings.name)?;
    let front = outputs.front_end.open_front_end(game.as_ref())?;
    let frames = settings.spectate.frames;
    let sinks = MatchSinks::open(&outputs.sinks, recorder, game.as_ref(), frames)?;
    let clock = FrameClock::new(game.frames_per_second(), 0).with_catch_up(2, 10);
    let jitter = JitterBuffer::new(JitterConfig::new(game.frames_per_second()));
    let mut role = ViewerRole {
        game,
        sinks,
        clock,
        final_frames: FinalFrames::new(false),
        incoming,
        players: header.players,
        jitter,
        feed: Feed::starting_at(start.state.0),
        jump: Some(start.state),
        stats: SpectatorStats::default(),
        frames,
        received_bytes: 0,
        skipped: Vec::new(),
        arrived: 0,
        heard_ms: 0,
        broken: None,
        status_last: None,
        frame_before: 0,
        left_ms: 0,
        announcement: Some(announcement),
        link,
        counts: ViewerCounts::default(),
        repair: None,
        resyncing: false,
        notes: Vec::new(),
        scratch: Vec::new(),
    };
    // No datagrams: the loop's waits between frames idle on this socket.
    let mut transport = LiveTransport::new(
        settings
            .spectate
            .link
            .open(SocketAddr::from(([127, 0, 0, 1], 0)))
            .map_err(|error| AppError::BadArgument {
                message: error.to_string(),
            })?,
    );
    let mut narrator = Narrator::new(out, front, options);
    let end = run_live(&mut role, &mut transport, Instant::now(), &mut narrator)?;
    let lost = role.server_lost();
    let watched = role.finish(end)?;
    match lost {
        // The one sentence the watch ends with.
        Some(lost) => Err(lost.into()),
        None => Ok(watched),
    }
}

/// Where watching starts: the stream sequence to read from, the state
/// to load first, and what the broadcast's messages are checked with.
struct Start {
    sequence: u64,
    state: (Frame, Vec<u8>),
    check: BroadcastCheck,
}

/// The match's header, and where to start: its newest savestate, or with
/// `from_start` its header (whose start state begins the broadcast). A
/// header or savestate that is not the broadcaster's, or cannot be read,
/// gives way to the one before it.
fn find_start(
    link: &NatsLink,
    name: &str,
    from_start: bool,
) -> Result<(ReplayHeader, Start), AppError> {
    let js = link.jetstream();
    let (header_subject, state_subject) = (subject(name, Part::Header), subject(name, Part::State));
    let found = link.run(async move {
        // No stream: nothing was ever broadcast there.
        let Ok(stream) = js.get_stream(STREAM).await else {
            return None;
        };
        // The newest header: a name broadcast again (or a broadcaster
        // restarted) starts over there. Each of its pieces names the key
        // that signed it; all must be the same.
        let pieces_check = std::sync::Mutex::new(None::<BroadcastCheck>);
        let header = newest_whole(
            &stream,
            &header_subject,
            0,
            |piece| {
                let (check, body) = BroadcastCheck::of_header(
                    piece.subject.as_str(),
                    Some(&piece.headers),
                    &piece.payload,
                )
                .ok()?;
                let mut first = pieces_check.lock().ok()?;
                if piece_of(Some(&piece.headers)).is_none_or(|(index, _)| index == 1) {
                    *first = Some(check);
                } else if first.as_ref() != Some(&check) {
                    return None;
                }
                Some(body.to_vec())
            },
            |whole| {
                let check = pieces_check.lock().ok()?.clone()?;
                let header = read_replay(whole.payload.as_slice()).ok()?.header;
                Some((whole.sequence, header, check))
            },
        )
        .await?;
        let (header_sequence, ref replay_header, ref check) = header;
        let state = match from_start {
            true => None,
            false => {
                newest_whole(
                    &stream,
                    &state_subject,
                    header_sequence,
                    |piece| {
                        check
                            .check(piece.subject.as_str(), Some(&piece.headers), &piece.payload)
                            .ok()
                            .map(<[u8]>::to_vec)
                    },
                    |whole| {
                        let state = decompress_checkpoint(&whole.payload, MAX_STATE_BYTES).ok()?;
                        (state.0 >= replay_header.start_frame).then_some((whole.sequence, state))
                    },
                )
                .await
            }
        };
        Some((header, state))
    })?;
    let Some(((header_sequence, header, check), state)) = found else {
        return Err(AppError::BadArgument {
            message: format!(
                "no match named {name} on this server (spectate --list nats://SERVER lists them)"
            ),
        });
    };
    let start = match state {
        Some((sequence, state)) => Start {
            sequence,
            state,
            check,
        },
        None => Start {
            sequence: header_sequence,
            state: (header.start_frame, header.start_state.clone()),
            check,
        },
    };
    Ok((header, start))
}

/// Refuses a match of another core, version or content, as a host's
/// handshake does.
fn check_same_game(
    header: &ReplayHeader,
    game: &dyn Game,
    args: &GameArgs,
) -> Result<(), AppError> {
    let ours = content_checksum(args.rom.as_deref())?;
    let refused = |what: String| AppError::HandshakeRefused {
        reason: format!("the broadcast match is not this game: {what}"),
    };
    if header.core_name != game.core_name() || header.core_version != game.core_version() {
        return Err(refused(format!(
            "it runs the core {} {}, this machine {} {}",
            header.core_name,
            header.core_version,
            game.core_name(),
            game.core_version()
        )));
    }
    if header.content_hash != ours {
        return Err(refused(format!(
            "its content ({}) differs from this machine's (content hash {:016x}, ours {:016x})",
            header.content_name, header.content_hash.0, ours.0
        )));
    }
    Ok(())
}

/// Reads the match from `sequence` on (an ordered consumer: the server
/// keeps the cursor), into a bounded queue the frame loop empties.
fn subscribe(
    link: &NatsLink,
    name: &str,
    sequence: u64,
    mut check: BroadcastCheck,
) -> Result<tokio::sync::mpsc::Receiver<Incoming>, AppError> {
    let js = link.jetstream();
    let filter = match_subjects(name);
    let inbox = link.client().new_inbox();
    let mut messages = link.run(async move {
        let stream = js
            .get_stream(STREAM)
            .await
            .map_err(NatsError::request(format!("the stream {STREAM}")))?;
        let consumer = stream
            .create_consumer(jetstream::consumer::push::OrderedConfig {
                deliver_subject: inbox,
                filter_subject: filter,
                deliver_policy: jetstream::consumer::DeliverPolicy::ByStartSequence {
                    start_sequence: sequence,
                },
                ..Default::default()
            })
            .await
            .map_err(NatsError::request("reading the match"))?;
        consumer
            .messages()
            .await
            .map_err(NatsError::request("reading the match"))
    })??;
    let (queue, incoming) = tokio::sync::mpsc::channel(QUEUED_MESSAGES);
    link.spawn(async move {
        let mut pieces = Pieces::default();
        while let Some(Ok(message)) = messages.next().await {
            let Some(part) = Part::of_subject(message.subject.as_str()) else {
                continue;
            };
            let (subject, headers) = (message.subject.as_str(), message.headers.as_ref());
            // A header of the same key is the broadcaster restarted.
            let checked = match part {
                Part::Header => check.follow(subject, headers, &message.payload),
                _ => check.check(subject, headers, &message.payload),
            };
            let incoming = match checked {
                Ok(body) => {
                    let Some(whole) = pieces.take(piece_of(headers), body) else {
                        continue;
                    };
                    Incoming::Message(part, whole)
                }
                Err(_) => Incoming::Refused,
            };
            if queue.send(incoming).await.is_err() {
                return;
            }
        }
    })?;
    Ok(incoming)
}

/// The frames received and not played yet, in order.
#[derive(Default)]
struct Feed {
    /// The next frame to play.
    next_frame: Frame,
    /// Frames received end here.
    received_end: Frame,
    rows: VecDeque<[Buttons; MAX_PLAYERS]>,
    /// The replay's end record arrived: no more frames come.
    ended: bool,
    /// The broadcast's checkpoints of frames not played yet, in order.
    checkpoints: VecDeque<Checkpoint>,
    /// The frame of the newest checkpoint received, once one was.
    newest_checkpoint: Option<Frame>,
}

impl Feed {
    fn starting_at(frame: Frame) -> Self {
        Feed {
            next_frame: frame,
            received_end: frame,
            ..Feed::default()
        }
    }

    /// Whether `frame` may be played: not while it is so far past the
    /// newest checkpoint that the checkpoint which would check it cannot
    /// have come yet. Frames from the future (a forgery the broadcaster's
    /// key signed) would otherwise be played before any checkpoint could
    /// catch them; the broadcaster's own frames are never held (its
    /// checkpoints come with them, one a second).
    fn may_play(&self, frame: Frame) -> bool {
        self.ended
            || self
                .newest_checkpoint
                .is_none_or(|newest| frame.number() < newest.number() + CHECKPOINT_LEAD)
    }

    /// Keeps `checkpoint` until its frame runs (one of a frame played, or
    /// out of order, is dropped; so are the oldest past a bound).
    fn take_checkpoint(&mut self, checkpoint: Checkpoint) {
        if self
            .newest_checkpoint
            .is_none_or(|newest| checkpoint.frame > newest)
        {
            self.newest_checkpoint = Some(checkpoint.frame);
        }
        let in_order = self
            .checkpoints
            .back()
            .is_none_or(|last| checkpoint.frame > last.frame);
        if checkpoint.frame < self.next_frame || !in_order {
            return;
        }
        if self.checkpoints.len() == MAX_CHECKPOINTS {
            self.checkpoints.pop_front();
        }
        self.checkpoints.push_back(checkpoint);
    }

    /// Drops the checkpoints of `frame` and later: a repair at `frame`
    /// supersedes them.
    fn supersede_checkpoints(&mut self, frame: Frame) {
        self.checkpoints
            .retain(|checkpoint| checkpoint.frame < frame);
    }

    /// The broadcast's memory checksum of `frame`, if it has one (those of
    /// frames before it are dropped).
    fn checkpoint_of(&mut self, frame: Frame) -> Option<Checksum> {
        while let Some(checkpoint) = self.checkpoints.pop_front() {
            if checkpoint.frame == frame {
                return Some(checkpoint.memory);
            }
            if checkpoint.frame > frame {
                self.checkpoints.push_front(checkpoint);
                return None;
            }
        }
        None
    }

    fn buffered(&self) -> u32 {
        self.received_end - self.next_frame.min(self.received_end)
    }

    /// Takes the frames of an inputs record from `first` that follow
    /// those received; returns how many were new.
    fn take_inputs(&mut self, first: Frame, players: usize, buttons: &[Buttons]) -> u32 {
        let mut arrived = 0;
        for (index, row) in buttons.chunks_exact(players.max(1)).enumerate() {
            if first.number() + index as u32 != self.received_end.number() {
                continue;
            }
            let mut inputs = [Buttons::NONE; MAX_PLAYERS];
            inputs[..row.len()].copy_from_slice(row);
            self.rows.push_back(inputs);
            self.received_end = self.received_end.next();
            arrived += 1;
        }
        arrived
    }
}

/// A viewer's machine in the real-time loop.
struct ViewerRole {
    game: Box<dyn Game>,
    sinks: MatchSinks,
    clock: FrameClock,
    final_frames: FinalFrames,
    incoming: tokio::sync::mpsc::Receiver<Incoming>,
    players: u8,
    jitter: JitterBuffer,
    feed: Feed,
    /// A savestate to load once the frames before it are played: the
    /// first, and after a gap (the broadcaster was restarted).
    jump: Option<(Frame, Vec<u8>)>,
    stats: SpectatorStats,
    /// The last frame to watch, if not the match's last.
    frames: Option<u32>,
    received_bytes: u64,
    /// Frames never received (or dropped after a desync: `true`), crossed
    /// at a savestate (from, to).
    skipped: Vec<(u32, u32, bool)>,
    /// Frames that arrived this tick.
    arrived: u32,
    /// When the stream was last heard (ms into the watch).
    heard_ms: Millis,
    broken: Option<(WatchEnd, String)>,
    status_last: Option<Instant>,
    frame_before: u32,
    left_ms: u64,
    /// Counts this viewer in the live list until it leaves.
    announcement: Option<ViewerAnnouncement>,
    /// The connection the subscription and the announcement use.
    link: NatsLink,
    counts: ViewerCounts,
    /// A state to load before its frame runs: a repair record's, or the
    /// savestate after a desync.
    repair: Option<(Frame, Vec<u8>)>,
    /// A checkpoint differed (or a repair came too late): the frames
    /// held were dropped, and the next savestate repairs.
    resyncing: bool,
    /// Warnings to tell, from the frame loop.
    notes: Vec<String>,
    scratch: Vec<u8>,
}

/// What a viewer refused, skipped and found, for its summary.
#[derive(Clone, Copy, Debug, Default)]
struct ViewerCounts {
    /// Messages that were not the broadcaster's.
    refused: u64,
    /// The broadcaster's messages that could not be read.
    unreadable: u64,
    /// Checkpoints whose checksums differed from ours.
    desyncs: u64,
    /// States loaded to repair the game.
    repairs: u64,
}

impl ViewerRole {
    /// The server went away for longer than the client tries to reconnect.
    fn server_lost(&self) -> Option<NatsError> {
        self.link
            .why_stop()
            .filter(|why| matches!(why, NatsError::Lost { .. }))
    }

    fn take_message(&mut self, now_ms: Millis, incoming: Incoming) {
        self.heard_ms = now_ms;
        let (part, payload) = match incoming {
            Incoming::Message(part, payload) => (part, payload),
            Incoming::Refused => {
                self.counts.refused += 1;
                return;
            }
        };
        self.received_bytes += payload.len() as u64;
        match part {
            Part::Header => {}
            Part::State => match decompress_checkpoint(&payload, MAX_STATE_BYTES) {
                Ok((frame, state)) if frame > self.feed.received_end => {
                    self.jump = Some((frame, state));
                }
                Ok(_) => {}
                Err(_) => self.counts.unreadable += 1,
            },
            Part::Records => match read_records(&payload, self.players) {
                Ok(records) => self.take_records(records),
                Err(_) => self.counts.unreadable += 1,
            },
        }
    }

    fn take_records(&mut self, records: Vec<Record>) {
        for record in records {
            match record {
                Record::Inputs { first, buttons, .. } => {
                    self.arrived +=
                        self.feed
                            .take_inputs(first, usize::from(self.players), &buttons);
                    if self.feed.rows.len() > MAX_BUFFERED_FRAMES {
                        self.broken = Some((
                            WatchEnd::HostLost,
                            "the stream sent more frames than any match runs".into(),
                        ));
                    }
                }
                Record::Checkpoint(checkpoint) => self.feed.take_checkpoint(checkpoint),
                // The broadcaster's own watch was repaired from the host's
                // state: so is ours, at that frame, or at its next
                // savestate if that frame is played already.
                Record::Repair { frame, state, .. } => {
                    self.feed.supersede_checkpoints(frame);
                    if frame >= self.feed.next_frame {
                        self.repair = Some((frame, state));
                    } else {
                        self.resync();
                    }
                }
                Record::End { .. } => self.feed.ended = true,
                _ => {}
            }
        }
    }

    /// Drops the frames held (they cannot be trusted to follow from our
    /// game any more): the next savestate is loaded as soon as it comes,
    /// and the frames from it on are taken.
    fn resync(&mut self) {
        self.feed.rows.clear();
        self.feed.received_end = self.feed.next_frame;
        self.feed.checkpoints.clear();
        self.resyncing = true;
    }

    /// Before `frame` runs: the repair due at it, then its checkpoint
    /// compared with ours. Whether it may run: after a desync it may not,
    /// and the broadcast's next savestate repairs.
    fn check_before(&mut self, frame: Frame) -> Result<bool, AppError> {
        if let Some((at, state)) = self.repair.take_if(|(at, _)| *at <= frame) {
            match load_watched_state(self.game.as_mut(), at, &state) {
                Ok(()) => self.counts.repairs += 1,
                Err(error) => self.notes.push(format!(
                    "the core refused the broadcast's state of frame {}: {error}",
                    at.number()
                )),
            }
        }
        let Some(theirs) = self.feed.checkpoint_of(frame) else {
            return Ok(true);
        };
        let ours = memory_checksum(self.game.as_mut(), &mut self.scratch)
            .map_err(AppError::at_frame(frame.number()))?;
        if ours == theirs {
            return Ok(true);
        }
        self.counts.desyncs += 1;
        self.notes.push(format!(
            "desync at frame {}: our checksum {ours}, the broadcast's {theirs}; waiting for its next savestate",
            frame.number()
        ));
        self.resync();
        Ok(false)
    }

    /// Loads the first savestate at once, and a later one (after a gap)
    /// once every frame before the gap was played.
    fn jump_if_due(&mut self, now_us: u64) -> Result<(), AppError> {
        let joined = self.stats.joined_at_frame.is_some();
        if self.jump.is_none() || (joined && self.feed.buffered() > 0) {
            return Ok(());
        }
        let Some((frame, state)) = self.jump.take() else {
            return Ok(());
        };
        if let Err(error) = load_watched_state(self.game.as_mut(), frame, &state) {
            self.broken = Some((
                WatchEnd::HostLost,
                format!("the core refused the savestate: {error}"),
            ));
            return Ok(());
        }
        if joined {
            self.sinks.log.skip_to(frame.number());
            let repaired = std::mem::take(&mut self.resyncing);
            self.counts.repairs += u64::from(repaired);
            self.skipped
                .push((self.feed.next_frame.number(), frame.number(), repaired));
            self.feed = Feed::starting_at(frame);
            return Ok(());
        }
        let mut scratch = Vec::new();
        let memory = memory_checksum(self.game.as_mut(), &mut scratch)
            .map_err(AppError::at_frame(frame.number()))?;
        self.stats.joined_at_frame = Some(frame.number());
        self.sinks.match_started(frame, &state, memory);
        self.clock.start_at(now_us);
        Ok(())
    }

    fn run_due_frames(&mut self, now_us: u64) -> Result<(), AppError> {
        let due = self
            .clock
            .due(now_us, self.jitter.speed(self.feed.buffered()));
        for _ in 0..due {
            let batch = self.jitter.due(self.feed.buffered(), self.feed.ended);
            for index in 0..batch.frames {
                if self.reached_the_end() || !self.feed.may_play(self.feed.next_frame) {
                    return Ok(());
                }
                let Some(inputs) = self.feed.rows.pop_front() else {
                    break;
                };
                let frame = self.feed.next_frame;
                if !self.check_before(frame)? {
                    return Ok(());
                }
                self.feed.next_frame = frame.next();
                let shown = index + 1 == batch.frames;
                let pass = if shown {
                    FramePass::Shown
                } else {
                    FramePass::Unshown
                };
                let players = usize::from(self.players);
                self.final_frames.run(
                    self.game.as_mut(),
                    frame,
                    &inputs[..players],
                    pass,
                    &mut self.sinks,
                )?;
                self.stats.frames_run += 1;
                if shown {
                    let buffered = self.feed.buffered();
                    self.stats.record_shown(buffered, buffered);
                } else {
                    self.stats.catch_up_frames += 1;
                }
            }
        }
        Ok(())
    }

    fn reached_the_end(&self) -> bool {
        self.frames
            .is_some_and(|frames| self.feed.next_frame.number() >= frames)
            || (self.feed.ended && self.feed.buffered() == 0)
    }

    fn finish(mut self, end: WatchEnd) -> Result<LiveMatch, AppError> {
        if let Some(announcement) = self.announcement.take() {
            announcement.withdraw(&self.link);
        }
        let (log, outputs) = self.sinks.finish(end.end_reason())?;
        let joined = self.stats.joined_at_frame;
        // The game as it is after the last frame watched, as the
        // spectator's summary gives it.
        let checksums = joined.map(|_| Checksums::of_game_now(self.game.as_mut()));
        let report = WatchReport {
            game: self.game.title(),
            end,
            frames: self.feed.next_frame.number(),
            joined_at_frame: joined,
            checksums,
            delay: WatchDelay {
                frames: self.stats.median_delay(),
                live_frames: None,
                aimed_frames: self.jitter.delay_frames(),
                catch_up_frames: self.stats.catch_up_frames,
                rebuffers: self.jitter.starvations(),
            },
            ping_ms: None,
            path: None,
            wire: WireTraffic {
                seconds: self.left_ms as f64 / 1000.0,
                received_bytes: self.received_bytes,
                ..WireTraffic::default()
            },
            dropped_datagrams: 0,
            desyncs: (self.counts.desyncs, self.counts.repairs),
            refused_messages: (self.counts.refused, self.counts.unreadable),
            chat: Default::default(),
            outputs: SinksSummary::default(),
            keys: None,
        };
        let report = WatchReport { outputs, ..report };
        Ok(LiveMatch {
            // As a spectator's: a checkpoint that differed fails the watch.
            outcome: match end {
                _ if self.counts.desyncs > 0 => Outcome::NetplayFailed,
                end => end.outcome(),
            },
            log,
            report: Some(Box::new(report)),
        })
    }
}

impl LiveRole for ViewerRole {
    type End = WatchEnd;
    const INTERRUPTED: WatchEnd = WatchEnd::Interrupted;
    const WINDOW_CLOSED: WatchEnd = WatchEnd::WindowClosed;

    fn game(&self) -> &dyn Game {
        self.game.as_ref()
    }

    fn clock(&self) -> &FrameClock {
        &self.clock
    }

    fn read_front_end(&mut self, front: &mut dyn FrontEnd) {
        front.handle_events();
        if let Some(volume) = front.volume_changed() {
            self.sinks.set_volume(volume);
        }
    }

    fn tick(&mut self, now_us: u64, _transport: &mut LiveTransport) -> Result<(), AppError> {
        let now_ms = now_us / 1000;
        self.frame_before = self.feed.next_frame.number();
        for _ in 0..QUEUED_MESSAGES {
            let Ok(message) = self.incoming.try_recv() else {
                break;
            };
            self.take_message(now_ms, message);
        }
        // What came in one tick is one arrival: a backlog delivered at
        // once is not the live stream's jitter.
        if self.arrived > 0 {
            self.jitter
                .on_arrival(now_ms, self.feed.received_end.number(), self.arrived);
            self.arrived = 0;
        }
        self.jump_if_due(now_us)?;
        if self.stats.joined_at_frame.is_some() {
            self.run_due_frames(now_us)?;
        }
        self.sinks
            .clock_tick(now_us, self.jitter.speed(self.feed.buffered()));
        if now_ms.saturating_sub(self.heard_ms) >= SILENCE_MS && !self.feed.ended {
            self.broken.get_or_insert((
                WatchEnd::Stalled,
                format!(
                    "nothing came from the broadcast for {} s",
                    SILENCE_MS / 1000
                ),
            ));
        }
        Ok(())
    }

    fn handle_events(&mut self, narrator: &mut Narrator<'_>) -> Result<(), AppError> {
        for note in self.notes.drain(..) {
            narrator.warn(&note)?;
        }
        for (from, to, repaired) in self.skipped.drain(..) {
            let why = match repaired {
                true => "they would not follow from the game as it was",
                false => "its broadcaster was restarted",
            };
            narrator.warn(&format!(
                "the broadcast has no frames {from}..{to} to play ({why}): resumed at its savestate of frame {to}"
            ))?;
        }
        if let Some((_, why)) = &self.broken {
            narrator.warn(&format!("{why}: left"))?;
        }
        Ok(())
    }

    fn ended(&mut self, _now_us: u64) -> Option<WatchEnd> {
        if let Some((end, _)) = self.broken {
            return Some(end);
        }
        if self.server_lost().is_some() {
            return Some(WatchEnd::HostLost);
        }
        self.reached_the_end().then_some(WatchEnd::Finished)
    }

    fn status_line(&mut self, every: Duration) -> Option<String> {
        self.stats.joined_at_frame?;
        if !status_due(&mut self.status_last, every) {
            return None;
        }
        Some(format!(
            "frame {} | buffered {} (aiming at {}) | caught up {} frames",
            self.feed.next_frame.number(),
            self.feed.buffered(),
            self.jitter.delay_frames(),
            self.stats.catch_up_frames
        ))
    }

    fn view(&self) -> MatchView {
        MatchView {
            frame: self.feed.next_frame.number(),
            new_picture: self.feed.next_frame.number() != self.frame_before,
            listening: None,
            spectating: Some(SpectatorView {
                ping_ms: None,
                behind_live: self.feed.buffered(),
                buffered: self.feed.buffered(),
            }),
            ..MatchView::default()
        }
    }

    fn leave(&mut self, elapsed: Duration) {
        self.left_ms = elapsed.as_millis() as u64;
    }

    fn datagram_session(&mut self) -> &mut dyn DatagramSession {
        self
    }
}

/// A viewer sends no datagrams: nothing to deliver after leaving.
impl DatagramSession for ViewerRole {
    fn handle_datagram(&mut self, _now: Millis, _from: SocketAddr, _datagram: &[u8]) {}

    fn poll(&mut self, _now: Millis, _send: &mut dyn FnMut(SocketAddr, &[u8])) {}

    fn closed(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn presses(count: usize) -> Vec<Buttons> {
        (0..count).map(|i| Buttons::from_bits(i as u16)).collect()
    }

    #[test]
    fn a_feed_takes_only_the_frames_that_follow_those_it_has() {
        let mut feed = Feed::starting_at(Frame::new(6));
        // Frames 0..6 (two players each) are before the feed began.
        assert_eq!(feed.take_inputs(Frame::new(0), 2, &presses(12)), 0);
        // Frames 3..9 overlap it: 6, 7 and 8 are new.
        assert_eq!(feed.take_inputs(Frame::new(3), 2, &presses(12)), 3);
        assert_eq!(feed.buffered(), 3);
        assert_eq!(
            feed.rows[0][..2],
            [Buttons::from_bits(6), Buttons::from_bits(7)]
        );
        // Frames 12.. leave a gap: nothing is taken.
        assert_eq!(feed.take_inputs(Frame::new(12), 2, &presses(4)), 0);
        assert_eq!(feed.received_end, Frame::new(9));
    }

    fn checkpoint(frame: u32, memory: u64) -> Checkpoint {
        Checkpoint {
            frame: Frame::new(frame),
            memory: Checksum(memory),
            video: None,
        }
    }

    #[test]
    fn frames_from_the_future_wait_for_the_checkpoint_that_checks_them() {
        let mut feed = Feed::starting_at(Frame::new(100));
        // Before any checkpoint came, nothing is held.
        assert!(feed.may_play(Frame::new(1000)));
        feed.take_checkpoint(checkpoint(120, 7));
        assert!(feed.may_play(Frame::new(179)));
        assert!(!feed.may_play(Frame::new(180)));
        feed.take_checkpoint(checkpoint(180, 8));
        assert!(feed.may_play(Frame::new(180)));
        // Each frame meets its own checkpoint; those before it are gone.
        assert_eq!(feed.checkpoint_of(Frame::new(119)), None);
        assert_eq!(feed.checkpoint_of(Frame::new(120)), Some(Checksum(7)));
        assert_eq!(feed.checkpoint_of(Frame::new(200)), None);
        assert!(feed.checkpoints.is_empty());
        // The end record lets the last frames play.
        feed.ended = true;
        assert!(feed.may_play(Frame::new(5000)));
    }

    #[test]
    fn a_repair_supersedes_the_checkpoints_of_its_frame_and_later() {
        let mut feed = Feed::starting_at(Frame::new(0));
        for frame in [60, 120, 180] {
            feed.take_checkpoint(checkpoint(frame, u64::from(frame)));
        }
        // Played frames and frames out of order are not kept.
        feed.take_checkpoint(checkpoint(150, 1));
        feed.supersede_checkpoints(Frame::new(120));
        assert_eq!(feed.checkpoints.len(), 1);
        assert_eq!(feed.checkpoint_of(Frame::new(60)), Some(Checksum(60)));
    }
}
