//! The window as a live match's front end, for players and spectators:
//! each tick's newest picture with the overlay (F1 stats panel and graph, "waiting for opponent...",
//! notices), this machine's player's buttons from the keyboard and
//! controllers, the chat (T opens a one-line box; lines fade in the
//! overlay), and closing the window (or Esc twice) to leave the match
//! cleanly.
//! Frame stepping is local play's only: a match cannot pause.

use crate::engine::{AppError, Game};
use crate::gui::chat_box::{ChatBox, ChatBoxOutcome};
use crate::gui::match_menu::{carry_out, menu_details, MatchMenu, MenuChoice};
pub use crate::gui::match_menu::{LeaveConfirmation, LEAVE_CONFIRM_MS};
use crate::gui::menu::script::key_event;
use crate::gui::menu::script::{self, Targets};
use crate::gui::overlay::{NetStats, Overlay};
use crate::gui::play::load_input_map;
use crate::gui::volume::Volume;
use crate::gui::waiting::WaitingPanel;
use crate::gui::window::{save_picture, Action, DisplayArgs, Window};
use crate::live::front_end::{delays_text, player_lines, FrontEnd, MatchView, SpectatorView};
use netcode::input::Buttons;
use sdl2::event::Event;
use sdl2::keyboard::{Keycode, Mod};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Instant;

/// Pictures drawn between two steps of a scripted line's typing: the chat
/// box takes the keyboard only once it was drawn.
const DRAWS_PER_TYPING_STEP: u32 = 2;

/// Lines sent from the chat box that wait for the match to take them.
const MAX_TYPED_LINES: usize = 8;

/// How often the window is redrawn while no frame runs (a stall).
const REDRAW_WITHOUT_FRAMES: std::time::Duration = std::time::Duration::from_millis(50);

/// How long frames must wait for the opponent before the window says so.
const STALL_SHOWN_AFTER: std::time::Duration = std::time::Duration::from_millis(100);

/// What a first Esc in a match says.
pub const LEAVE_QUESTION: &str = "press Esc again to leave the match";

/// A match's window.
pub struct WindowFrontEnd {
    window: Window,
    overlay: Overlay,
    started: Instant,
    /// Whether the seat was said (once, as the match began).
    seat_said: bool,
    quit: bool,
    leave: LeaveConfirmation,
    /// (time, bytes received, bytes sent) at the last kbps figure.
    traffic: Option<(Instant, u64, u64)>,
    kbps: (f64, f64),
    screenshot_at: Option<(u32, PathBuf)>,
    last_shown: Option<Instant>,
    /// Since when frames wait for the opponent's input (cleared by a frame).
    waiting_since: Option<Instant>,
    menu: MatchMenu,
    /// The overlay's latest figures, for the menu's connection lines.
    last_stats: Option<NetStats>,
    /// The connection in words, for the menu.
    last_words: Vec<String>,
    /// Each other player's figures, for the menu.
    last_players: Vec<String>,
    chat_box: ChatBox,
    /// Lines sent from the chat box, for the match to take.
    typed: VecDeque<String>,
    /// A scripted line's keys and text, fed to the window as a player's.
    typing: VecDeque<Event>,
    /// Pictures drawn since the last of them was fed.
    draws_since_typing: u32,
    /// The host's port while it waits for its players (the waiting panel),
    /// and its room's code.
    listening: Option<u16>,
    room_code: Option<String>,
    waiting_panel: WaitingPanel,
    /// Where the panel's buttons were drawn (a launcher script clicks them).
    targets: Targets,
    /// Where a launcher script asked the next picture to be saved.
    script_capture: Option<PathBuf>,
    volume: Volume,
    /// The volume changed since the loop last asked.
    volume_changed: bool,
}

impl WindowFrontEnd {
    /// Opens the window for `game`, shown as `display` says.
    pub fn open(game: &dyn Game, display: &DisplayArgs) -> Result<WindowFrontEnd, AppError> {
        let screenshot_at = display.screenshot_request()?;
        let (width, height, aspect) = game.display_geometry();
        let window = Window::open(
            &game.title(),
            (width, height),
            aspect,
            display,
            load_input_map,
        )?;
        Ok(WindowFrontEnd {
            window,
            overlay: Overlay::new(display.overlay),
            started: Instant::now(),
            seat_said: false,
            quit: false,
            leave: LeaveConfirmation::default(),
            traffic: None,
            kbps: (0.0, 0.0),
            screenshot_at,
            last_shown: None,
            waiting_since: None,
            menu: MatchMenu::default(),
            last_stats: None,
            last_words: Vec::new(),
            last_players: Vec::new(),
            chat_box: ChatBox::default(),
            typed: VecDeque::new(),
            typing: VecDeque::new(),
            draws_since_typing: 0,
            listening: None,
            room_code: None,
            waiting_panel: WaitingPanel::default(),
            targets: Targets::default(),
            script_capture: None,
            volume: Volume::default(),
            volume_changed: false,
        })
    }

    /// The window (tests queue events through it).
    pub fn window(&self) -> &Window {
        &self.window
    }

    /// The notices the overlay shows now (tests read what the player is
    /// told).
    pub fn notices_shown(&mut self) -> Vec<String> {
        let now_ms = self.now_ms();
        self.overlay.notices(now_ms).map(str::to_string).collect()
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }
}

/// Why save states, reset and fast-forward are refused in a match.
const IN_A_MATCH_REFUSAL: &str =
    "save states, reset and fast-forward are for local play: in a match every machine runs the same frames";

impl WindowFrontEnd {
    /// Shows the picture with the overlay, and the match menu over both
    /// while it is open (acting on what the player chose in it).
    fn show(
        &mut self,
        frame: Option<&netcode::emulator::VideoFrame<'_>>,
        aspect: f32,
        overlay: Option<&crate::gui::overlay::Canvas>,
        capture: bool,
    ) -> Option<(u32, u32, Vec<u8>)> {
        self.draws_since_typing = self.draws_since_typing.saturating_add(1);
        if let Some(port) = self.listening {
            let (panel, targets) = (&mut self.waiting_panel, &mut self.targets);
            let room_code = self.room_code.as_deref();
            let mut cancel = false;
            let captured = self.window.present_with_menu(
                frame,
                aspect,
                overlay,
                Some(&mut |context| {
                    targets.clear(context.pixels_per_point());
                    cancel = panel.draw(context, port, room_code, targets);
                }),
                capture,
            );
            self.quit |= cancel;
            return captured;
        }
        if !self.menu.open && !self.chat_box.is_open() {
            return self.window.present(frame, aspect, overlay, capture);
        }
        let mut connection = self.last_words.clone();
        connection.extend(self.last_players.iter().cloned());
        connection.extend(connection_lines(
            self.last_stats.as_ref(),
            !self.last_players.is_empty(),
        ));
        let shader = self.window.shader().to_string();
        let menu = self.menu.clone();
        let (mut choice, mut chatted) = (None, None);
        let chat_box = &mut self.chat_box;
        let captured = self.window.present_with_menu(
            frame,
            aspect,
            overlay,
            Some(&mut |context| {
                if menu.open {
                    choice = menu.draw(context, &connection, &shader);
                }
                chatted = chat_box.draw(context);
            }),
            capture,
        );
        if let Some(choice) = choice {
            self.menu_choice(choice);
        }
        if let Some(outcome) = chatted {
            self.window.release_keys();
            // A window with no match to take its lines (a broadcast's
            // viewer) keeps only the last few.
            if let ChatBoxOutcome::Send(text) = outcome {
                if self.typed.len() == MAX_TYPED_LINES {
                    self.typed.pop_front();
                }
                self.typed.push_back(text);
            }
        }
        captured
    }

    /// [`Self::show`], saving the picture where `--screenshot-at` asked
    /// (`due`: its frame came) or a launcher script did.
    fn show_and_save(
        &mut self,
        frame: Option<&netcode::emulator::VideoFrame<'_>>,
        aspect: f32,
        overlay: Option<&crate::gui::overlay::Canvas>,
        due: bool,
    ) {
        let scripted = self.script_capture.take();
        let captured = self.show(frame, aspect, overlay, due || scripted.is_some());
        let path = match scripted {
            Some(path) => Some(path),
            None if due => self.screenshot_at.take().map(|(_, path)| path),
            None => None,
        };
        if let (Some(picture), Some(path)) = (captured, path) {
            if let Err(err) = save_picture(&path, &picture) {
                eprintln!("warning: {}", crate::engine::error::error_chain(&err));
            }
        }
    }

    /// Takes the link's figures: the kbps every half second, and for a
    /// new picture the overlay's figures and graph.
    fn record_figures(&mut self, view: &MatchView, now: Instant) {
        if let Some(stats) = &view.stats {
            let (since, received, sent) =
                *self
                    .traffic
                    .get_or_insert((now, stats.bytes_received, stats.bytes_sent));
            let elapsed = now.duration_since(since).as_secs_f64();
            if elapsed >= 0.5 {
                let kbps = |bytes: u64| bytes as f64 * 8.0 / 1000.0 / elapsed;
                self.kbps = (
                    kbps(stats.bytes_received.saturating_sub(received)),
                    kbps(stats.bytes_sent.saturating_sub(sent)),
                );
                self.traffic = Some((now, stats.bytes_received, stats.bytes_sent));
            }
            if view.new_picture {
                let figures = NetStats {
                    ping_ms: stats.ping_ms,
                    input_delay: stats.local_input_delay,
                    frames_ahead: stats.frames_ahead,
                    rollback_depth: stats.last_rollback,
                    kbps_in: self.kbps.0,
                    kbps_out: self.kbps.1,
                    spectators: view.spectators as u32,
                    delays: delays_text(&view.delays),
                };
                self.last_stats = Some(figures.clone());
                self.overlay.record(figures);
            }
        }
    }

    /// The launcher script's next step in this session, after a frame was
    /// laid out (its clicks aim at the widgets drawn).
    fn script_step(&mut self) {
        let (capture, leave) = script::session_step(&mut self.window, &self.targets);
        if capture.is_some() {
            self.script_capture = capture;
        }
        self.quit |= leave;
    }

    /// Feeds the next event of a scripted line's typing to the window,
    /// once enough pictures were drawn since the last.
    fn feed_typing(&mut self) {
        if self.draws_since_typing >= DRAWS_PER_TYPING_STEP {
            if let Some(event) = self.typing.pop_front() {
                self.window.inject(event);
                self.draws_since_typing = 0;
            }
        }
    }

    fn menu_choice(&mut self, choice: MenuChoice) {
        let now_ms = self.now_ms();
        let chosen = self.menu.choose(choice);
        self.quit |= carry_out(chosen, &mut self.window, &mut self.overlay, now_ms);
    }
}

/// The menu's connection lines: the overlay's figures, spelled out. When
/// each other player's line is shown (`per_player`), the pings and their
/// delays are there, and these lines say only this machine's figures.
fn connection_lines(stats: Option<&NetStats>, per_player: bool) -> Vec<String> {
    let Some(stats) = stats else {
        return vec!["no figures yet".to_string()];
    };
    let ping = stats.ping_ms.map_or_else(
        || "not measured yet".to_string(),
        |ping| format!("{ping} ms"),
    );
    let ahead = stats
        .frames_ahead
        .map_or_else(|| "?".to_string(), |ahead| format!("{ahead:+.1}"));
    let mut lines = vec![
        if per_player {
            format!("you: input delay {} frames", stats.input_delay)
        } else {
            format!("ping {ping}, input delay {} frames", stats.input_delay)
        },
        format!(
            "last rollback {} frames, frames ahead {ahead}",
            stats.rollback_depth
        ),
        format!(
            "kbps in {:.1} out {:.1}, spectators {}",
            stats.kbps_in, stats.kbps_out, stats.spectators
        ),
    ];
    if !stats.delays.is_empty() && !per_player {
        lines.push(format!("delays {}", stats.delays));
    }
    lines
}

/// A spectator's panel line: the ping, how far behind the players, and
/// the frames buffered (short enough for one line of the panel).
/// How long the notice saying the seat stays up.
const SEAT_NOTICE_MS: u64 = 6_000;

/// Who this machine is in the match: `you are P2`, `you are watching
/// (spectating)`; `None` before it is known.
fn seat_words(view: &MatchView) -> Option<String> {
    match (view.seat, &view.spectating) {
        (Some(slot), _) => Some(format!("you are P{}", u32::from(slot) + 1)),
        (None, Some(_)) => Some("you are watching (spectating)".to_string()),
        (None, None) => None,
    }
}

fn spectator_line(view: &SpectatorView) -> String {
    let ping = view
        .ping_ms
        .map_or_else(|| "?".to_string(), |ping| format!("{ping} ms"));
    format!(
        "ping {ping}  behind live {}  buffered {}",
        view.behind_live, view.buffered
    )
}

impl FrontEnd for WindowFrontEnd {
    fn volume_changed(&mut self) -> Option<f32> {
        std::mem::take(&mut self.volume_changed).then(|| self.volume.level())
    }

    fn local_buttons(&mut self) -> Option<Buttons> {
        self.handle_events();
        // One player at this machine: every device plays as it.
        let held = self.menu.filter(self.window.held(1)[0]);
        // Typing, the keys write text: the player holds nothing.
        Some(if self.chat_box.is_open() {
            Buttons::NONE
        } else {
            held
        })
    }

    fn handle_events(&mut self) {
        let now_ms = self.now_ms();
        self.feed_typing();
        for action in self.window.poll() {
            match action {
                Action::Chat => {
                    self.chat_box.open();
                    // The text of the key that opened it is not typed.
                    self.window.discard_ui_input();
                }
                Action::Quit => self.quit = true,
                // Before the match there is nothing to lose: Esc cancels.
                Action::Leave if self.listening.is_some() => self.quit = true,
                Action::Leave if self.leave.press(now_ms) => self.quit = true,
                Action::Leave => {
                    self.menu.open = true;
                    self.overlay
                        .notice_for(now_ms, LEAVE_CONFIRM_MS, LEAVE_QUESTION);
                }
                Action::ToggleOverlay => self.overlay.panel_visible = !self.overlay.panel_visible,
                Action::Notice(text) => self.overlay.notice(now_ms, text),
                Action::Pause
                | Action::StepForward
                | Action::StepBack
                | Action::Mark
                | Action::Diff
                | Action::Timeline(_) => {
                    self.overlay
                        .notice(now_ms, "frame stepping is for local play, not netplay");
                }
                Action::Local(key) => match self.volume.press(key) {
                    Some(said) => {
                        self.overlay.notice(now_ms, said);
                        self.volume_changed = true;
                    }
                    None => self.overlay.notice(now_ms, IN_A_MATCH_REFUSAL),
                },
                Action::Screenshot | Action::Pressed(_) => {}
            }
        }
    }

    fn present(&mut self, game: &dyn Game, view: &MatchView) {
        self.listening = view.listening;
        self.room_code.clone_from(&view.room_code);
        let now = Instant::now();
        if view.new_picture {
            self.waiting_since = None;
        } else if view.waiting {
            self.waiting_since.get_or_insert(now);
        }
        // Between frames only the overlay can change: redraw it now and then.
        if !view.new_picture
            && self
                .last_shown
                .is_some_and(|shown| now.duration_since(shown) < REDRAW_WITHOUT_FRAMES)
        {
            return;
        }
        self.last_shown = Some(now);
        self.record_figures(view, now);
        // A frame or two of waiting is normal; longer is a stall to show.
        self.overlay.set_stalled(
            self.waiting_since
                .is_some_and(|since| now.duration_since(since) >= STALL_SHOWN_AFTER),
        );
        self.overlay
            .set_status(view.connection.as_deref(), view.desync.as_deref());
        if self.menu.open {
            menu_details(&mut self.menu, &self.window, game);
        }
        self.last_words = view.connection.iter().cloned().collect();
        self.last_players = player_lines(&view.players);
        let seat = seat_words(view);
        if let Some(words) = seat.as_ref().filter(|_| !self.seat_said) {
            self.seat_said = true;
            let now_ms = self.now_ms();
            self.overlay
                .notice_for(now_ms, SEAT_NOTICE_MS, words.clone());
        }
        self.overlay.set_lines(if self.overlay.panel_visible {
            let mut lines = vec![format!("{}   frame {}", game.title(), view.frame)];
            lines.extend(seat);
            if let Some(watching) = &view.spectating {
                lines.push(spectator_line(watching));
            }
            lines
        } else {
            Vec::new()
        });
        let now_ms = self.now_ms();
        let picture = self.overlay.render(now_ms);
        let (_, _, aspect) = game.display_geometry();
        let frame = if view.new_picture {
            game.video_frame()
        } else {
            None
        };
        let due = self
            .screenshot_at
            .as_ref()
            .is_some_and(|(at, _)| view.frame >= *at && view.new_picture);
        self.show_and_save(frame.as_ref(), aspect, picture.as_ref(), due);
        self.script_step();
    }

    fn notice(&mut self, text: &str) {
        let now_ms = self.now_ms();
        self.overlay.notice(now_ms, text);
    }

    fn quit_requested(&mut self) -> bool {
        self.quit
    }

    fn take_chat_line(&mut self) -> Option<String> {
        self.typed.pop_front()
    }

    fn show_chat(&mut self, author: &str, text: &str) {
        let now_ms = self.now_ms();
        self.overlay.chat_line(now_ms, author, text);
    }

    /// Types the line as a player would: T, the text, Enter.
    fn type_chat(&mut self, text: &str) -> bool {
        let key = |down, key| key_event(down, key, Mod::NOMOD);
        self.typing.extend([
            key(true, Keycode::T),
            key(false, Keycode::T),
            Event::TextInput {
                timestamp: 0,
                window_id: 0,
                text: text.to_string(),
            },
            key(true, Keycode::Return),
            key(false, Keycode::Return),
        ]);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_says_which_player_this_machine_is_or_that_it_watches() {
        let player = |slot| MatchView {
            seat: Some(slot),
            ..MatchView::default()
        };
        assert_eq!(seat_words(&player(0)).as_deref(), Some("you are P1"));
        assert_eq!(seat_words(&player(1)).as_deref(), Some("you are P2"));
        let watching = MatchView {
            spectating: Some(SpectatorView {
                ping_ms: None,
                behind_live: 0,
                buffered: 0,
            }),
            ..MatchView::default()
        };
        assert_eq!(
            seat_words(&watching).as_deref(),
            Some("you are watching (spectating)")
        );
        assert_eq!(seat_words(&MatchView::default()), None);
    }

    #[test]
    fn a_first_esc_asks_and_only_a_second_within_two_seconds_leaves_the_match() {
        let mut leave = LeaveConfirmation::default();
        assert!(!leave.press(10_000), "the first press asks");
        assert!(leave.press(10_000 + LEAVE_CONFIRM_MS), "the second leaves");

        let mut leave = LeaveConfirmation::default();
        assert!(!leave.press(10_000));
        assert!(
            !leave.press(10_001 + LEAVE_CONFIRM_MS),
            "too late: it asks again"
        );
        assert!(
            leave.press(11_000 + LEAVE_CONFIRM_MS),
            "and this one leaves"
        );
    }

    #[test]
    fn with_each_players_line_shown_the_menu_does_not_repeat_their_ping_and_delays() {
        let stats = NetStats {
            ping_ms: Some(21),
            input_delay: 2,
            delays: "P1 2  P2 1".to_string(),
            ..NetStats::default()
        };
        let alone = connection_lines(Some(&stats), false).join("\n");
        assert!(
            alone.contains("ping 21 ms, input delay 2 frames"),
            "{alone}"
        );
        assert!(alone.contains("delays P1 2  P2 1"), "{alone}");
        let beside_players = connection_lines(Some(&stats), true).join("\n");
        assert!(
            beside_players.contains("you: input delay 2 frames"),
            "{beside_players}"
        );
        assert!(!beside_players.contains("ping"), "{beside_players}");
        assert!(!beside_players.contains("delays"), "{beside_players}");
    }

    #[test]
    fn a_spectators_panel_line_names_ping_delay_behind_live_and_buffered_frames() {
        let line = spectator_line(&SpectatorView {
            ping_ms: Some(12),
            behind_live: 9,
            buffered: 4,
        });
        assert_eq!(line, "ping 12 ms  behind live 9  buffered 4");
        assert!(spectator_line(&SpectatorView::default()).contains("ping ?"));
        // The largest figures a watched match has still fit on one line of
        // the panel (a spectator 3600 frames behind is dropped).
        let widest = spectator_line(&SpectatorView {
            ping_ms: Some(999),
            behind_live: 3600,
            buffered: 3600,
        });
        assert!(widest.len() <= 44, "{widest}");
        assert!(widest.len() <= crate::gui::overlay::MAX_COLUMNS);
    }
}
