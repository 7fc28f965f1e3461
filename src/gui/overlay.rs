//! The overlay drawn over the game: the stats panel (F1) with a graph of
//! rollback depth and ping over the last ~5 seconds (GGPO's perfmon idea),
//! the "waiting for opponent" indicator during stalls, brief notices, the
//! chat's named lines (fading out), and the lines of in-window frame
//! stepping. Built as an RGBA picture on the
//! CPU with an embedded 8×8 bitmap font (`font8x8`), which the renderer
//! uploads and blends over the game. Time is a parameter (milliseconds
//! from any fixed start), so all of it is tested without a window.

use std::collections::VecDeque;

/// Glyph cell size in overlay pixels (8×8 glyphs, 2 pixels between lines).
const CELL_W: u32 = 8;
const LINE_H: u32 = 10;
/// The longest line the overlay draws, in characters: longer ones wrap.
pub const MAX_COLUMNS: usize = 48;
/// Overlay pixels around the text (each side).
const PADDING: u32 = 4;
/// Samples the graph keeps: one per presented frame, ~5 s at 60 fps.
pub const GRAPH_SAMPLES: usize = 300;
const GRAPH_HEIGHT: u32 = 48;
/// How long a notice stays on screen.
pub const NOTICE_MS: u64 = 4000;
/// The most notices shown at once (older ones go first).
const MAX_NOTICES: usize = 4;

const TEXT: [u8; 4] = [240, 240, 240, 255];
const DIM: [u8; 4] = [150, 150, 150, 255];
const PANEL: [u8; 4] = [0, 0, 0, 170];
const ROLLBACK: [u8; 4] = [255, 170, 40, 255];
const PING: [u8; 4] = [80, 200, 255, 255];
const WARNING: [u8; 4] = [255, 90, 90, 255];
/// Chat lines' colour (nothing else in the overlay is drawn in it).
pub const CHAT: [u8; 4] = [255, 214, 90, 255];
/// How long a chat line stays on screen…
pub const CHAT_MS: u64 = 10_000;
/// …the last part of it fading out.
const CHAT_FADE_MS: u64 = 2_000;
/// The most chat lines shown at once (older ones go first).
const MAX_CHAT_LINES: usize = 5;

/// An RGBA picture, top row first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Canvas {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height` RGBA pixels, 4 bytes each.
    pub rgba: Vec<u8>,
}

impl Canvas {
    /// A transparent canvas.
    pub fn new(width: u32, height: u32) -> Canvas {
        Canvas {
            width,
            height,
            rgba: vec![0; width as usize * height as usize * 4],
        }
    }

    /// The colour at (x, y).
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let at = (y as usize * self.width as usize + x as usize) * 4;
        [
            self.rgba[at],
            self.rgba[at + 1],
            self.rgba[at + 2],
            self.rgba[at + 3],
        ]
    }

    /// Fills a rectangle (clipped to the canvas).
    pub fn fill(&mut self, x: u32, y: u32, width: u32, height: u32, colour: [u8; 4]) {
        for row in y..(y + height).min(self.height) {
            for column in x..(x + width).min(self.width) {
                let at = (row as usize * self.width as usize + column as usize) * 4;
                self.rgba[at..at + 4].copy_from_slice(&colour);
            }
        }
    }

    /// Writes `text` from (x, y) in the 8×8 font; characters outside
    /// ASCII show as `?`.
    pub fn text(&mut self, x: u32, y: u32, text: &str, colour: [u8; 4]) {
        for (index, character) in text.chars().enumerate() {
            let code = if character.is_ascii() {
                character as usize
            } else {
                '?' as usize
            };
            let glyph = font8x8::legacy::BASIC_LEGACY[code];
            let left = x + index as u32 * CELL_W;
            for (row, bits) in glyph.iter().enumerate() {
                for column in 0..8 {
                    // font8x8: bit 0 is the leftmost pixel.
                    if bits & (1 << column) != 0 {
                        self.fill(left + column, y + row as u32, 1, 1, colour);
                    }
                }
            }
        }
    }
}

/// The netplay figures the panel shows, as the status line has them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NetStats {
    /// Round trip to the peer, once measured.
    pub ping_ms: Option<u32>,
    /// Local input delay, in frames.
    pub input_delay: u32,
    /// Frames ahead of the peer (negative: behind), once known.
    pub frames_ahead: Option<f32>,
    /// The last rollback's depth, in frames.
    pub rollback_depth: u32,
    /// Payload received, kilobits a second.
    pub kbps_in: f64,
    /// Payload sent, kilobits a second.
    pub kbps_out: f64,
    /// Spectators watching.
    pub spectators: u32,
    /// Every player's input delay, `P1 1 P2 0` (empty: not shown).
    pub delays: String,
}

/// What the overlay shows and remembers between frames.
#[derive(Clone, Debug, Default)]
pub struct Overlay {
    /// Whether the stats panel is shown (F1 toggles it).
    pub panel_visible: bool,
    stats: Option<NetStats>,
    /// (rollback depth, ping) per presented frame, newest last.
    graph: VecDeque<(u32, Option<u32>)>,
    notices: VecDeque<(String, u64)>,
    stalled: bool,
    /// The connection in words and a recent desync, shown whatever the panel.
    status: Vec<(String, [u8; 4])>,
    lines: Vec<String>,
    /// `author: text` and when it came.
    chat: VecDeque<(String, u64)>,
}

impl Overlay {
    /// An overlay with the panel shown or hidden.
    pub fn new(panel_visible: bool) -> Overlay {
        Overlay {
            panel_visible,
            ..Overlay::default()
        }
    }

    /// This frame's netplay figures: shown in the panel and added to the graph.
    pub fn record(&mut self, stats: NetStats) {
        if self.graph.len() == GRAPH_SAMPLES {
            self.graph.pop_front();
        }
        self.graph.push_back((stats.rollback_depth, stats.ping_ms));
        self.stats = Some(stats);
    }

    /// Shows `text` for [`NOTICE_MS`] from `now_ms`.
    pub fn notice(&mut self, now_ms: u64, text: impl Into<String>) {
        self.notice_for(now_ms, NOTICE_MS, text);
    }

    /// Shows `text` for `duration_ms` from `now_ms` (a question that
    /// expires sooner than a notice).
    pub fn notice_for(&mut self, now_ms: u64, duration_ms: u64, text: impl Into<String>) {
        if self.notices.len() == MAX_NOTICES {
            self.notices.pop_front();
        }
        self.notices.push_back((text.into(), now_ms + duration_ms));
    }

    /// Shows a chat line from `author` for [`CHAT_MS`] from `now_ms`.
    pub fn chat_line(&mut self, now_ms: u64, author: &str, text: &str) {
        if self.chat.len() == MAX_CHAT_LINES {
            self.chat.pop_front();
        }
        self.chat.push_back((format!("{author}: {text}"), now_ms));
    }

    /// The chat lines still showing at `now_ms`, oldest first, each with
    /// its colour (fading to the panel's in its last seconds).
    pub fn chat_lines(&mut self, now_ms: u64) -> Vec<(String, [u8; 4])> {
        self.chat
            .retain(|(_, at)| now_ms.saturating_sub(*at) < CHAT_MS);
        self.chat
            .iter()
            .flat_map(|(line, at)| {
                let left = CHAT_MS - now_ms.saturating_sub(*at);
                wrapped(
                    [line.clone()],
                    faded(CHAT, left.min(CHAT_FADE_MS), CHAT_FADE_MS),
                )
            })
            .collect()
    }

    /// Whether the match is waiting for the opponent's input.
    pub fn set_stalled(&mut self, stalled: bool) {
        self.stalled = stalled;
    }

    /// The connection in words (in the warning colour) and a recent
    /// desync (dim: it is calm news), in place of the bare stall indicator.
    pub fn set_status(&mut self, connection: Option<&str>, desync: Option<&str>) {
        // The 8×8 font is ASCII.
        let ascii = |text: &str| text.replace('…', "...");
        self.status = connection
            .map(|text| (ascii(text), WARNING))
            .into_iter()
            .chain(desync.map(|text| (ascii(text), DIM)))
            .collect();
    }

    /// Lines shown at the top whatever the panel (frame stepping's state,
    /// a diff's result); empty for none.
    pub fn set_lines(&mut self, lines: Vec<String>) {
        self.lines = lines;
    }

    /// The notices still showing at `now_ms`, oldest first.
    pub fn notices(&mut self, now_ms: u64) -> impl Iterator<Item = &str> {
        self.notices.retain(|(_, until)| *until > now_ms);
        self.notices.iter().map(|(text, _)| text.as_str())
    }

    /// The panel's text lines (empty when hidden or not in netplay).
    pub fn panel_lines(&self) -> Vec<String> {
        let Some(stats) = self.stats.as_ref().filter(|_| self.panel_visible) else {
            return Vec::new();
        };
        let ping = stats.ping_ms.map_or("?".to_string(), |p| format!("{p} ms"));
        let ahead = stats
            .frames_ahead
            .map_or("?".to_string(), |a| format!("{a:+.1}"));
        let mut lines = vec![
            format!(
                "ping {ping}   delay {}   advantage {ahead}",
                stats.input_delay
            ),
            format!(
                "rollback {}   spectators {}",
                stats.rollback_depth, stats.spectators
            ),
            format!("kbps in {:.1}   out {:.1}", stats.kbps_in, stats.kbps_out),
        ];
        if !stats.delays.is_empty() {
            lines.push(format!("delays {}", stats.delays));
        }
        lines
    }

    /// The overlay's picture at `now_ms`, or `None` when it shows nothing:
    /// as wide as its longest line (or the graph), so it covers no more of
    /// the game than it must.
    pub fn render(&mut self, now_ms: u64) -> Option<Canvas> {
        let notices: Vec<String> = self.notices(now_ms).map(str::to_string).collect();
        let panel = self.panel_lines();
        let graph = !panel.is_empty();
        let text = wrapped(self.lines.iter().cloned().chain(panel), TEXT);
        let stall = (self.stalled && self.status.is_empty())
            .then(|| ("waiting for opponent...".to_string(), WARNING));
        let chat = self.chat_lines(now_ms);
        let after: Vec<(String, [u8; 4])> = stall
            .into_iter()
            .chain(self.status.iter().cloned())
            .chain(wrapped(notices, DIM))
            .chain(chat)
            .collect();
        if text.is_empty() && after.is_empty() {
            return None;
        }
        let columns = text
            .iter()
            .chain(&after)
            .map(|(line, _)| line.chars().count() as u32)
            .max()
            .unwrap_or(0);
        let mut width = columns * CELL_W + 2 * PADDING;
        if graph {
            width = width.max(GRAPH_SAMPLES as u32 + 2 * PADDING);
        }
        let graph_top = PADDING + text.len() as u32 * LINE_H;
        let graph_height = if graph { GRAPH_HEIGHT + 14 } else { 0 };
        let height = 2 * PADDING + (text.len() + after.len()) as u32 * LINE_H + graph_height;
        let mut canvas = Canvas::new(width, height);
        canvas.fill(0, 0, width, height, PANEL);
        for (index, (line, colour)) in text.iter().enumerate() {
            canvas.text(PADDING, PADDING + index as u32 * LINE_H, line, *colour);
        }
        if graph {
            self.draw_graph(&mut canvas, graph_top + 2);
        }
        let after_top = graph_top + graph_height;
        for (index, (line, colour)) in after.iter().enumerate() {
            canvas.text(PADDING, after_top + index as u32 * LINE_H, line, *colour);
        }
        Some(canvas)
    }

    /// Rollback depth (orange, 0–8 frames full height) and ping (blue,
    /// 0–200 ms full height) as lines, oldest on the left: each sample
    /// joined to the one before by a vertical run, so a jump reads as a
    /// step and a level as a line, never as a filled block. The scale is
    /// in the labels, with dotted lines at half and full height.
    fn draw_graph(&self, canvas: &mut Canvas, top: u32) {
        let left = 4;
        canvas.text(left, top, "rollback 0-8 f", ROLLBACK);
        canvas.text(left + 16 * CELL_W, top, "ping 0-200 ms", PING);
        let base = top + 10 + GRAPH_HEIGHT;
        canvas.fill(left, base, GRAPH_SAMPLES as u32, 1, DIM);
        for grid in [GRAPH_HEIGHT / 2, GRAPH_HEIGHT] {
            for x in (0..GRAPH_SAMPLES as u32).step_by(4) {
                canvas.fill(left + x, base - grid, 1, 1, DIM);
            }
        }
        let height = |value: u32, full: u32| (value.min(full) * GRAPH_HEIGHT) / full;
        let (mut last_depth, mut last_ping) = (None, None);
        for (x, (depth, ping)) in self.graph.iter().enumerate() {
            let x = left + x as u32;
            let depth = height(*depth, 8);
            line_to(canvas, x, base, last_depth, depth, ROLLBACK);
            last_depth = Some(depth);
            let ping = ping.map(|ping| height(ping, 200).max(1));
            if let Some(ping) = ping {
                line_to(canvas, x, base, last_ping, ping, PING);
            }
            last_ping = ping;
        }
    }
}

/// The graph's line at column `x`: from the height before (`from`, none
/// at a gap) to `to`, in pixels above `base`.
fn line_to(canvas: &mut Canvas, x: u32, base: u32, from: Option<u32>, to: u32, colour: [u8; 4]) {
    let from = from.unwrap_or(to);
    let (low, high) = (from.min(to), from.max(to));
    canvas.fill(x, base - high, 1, high - low + 1, colour);
}

/// `colour` dimmed to `left` parts of `whole` (its alpha kept opaque, so
/// the text darkens into the panel).
fn faded(colour: [u8; 4], left: u64, whole: u64) -> [u8; 4] {
    let scale = |channel: u8| (u64::from(channel) * left / whole.max(1)) as u8;
    [
        scale(colour[0]),
        scale(colour[1]),
        scale(colour[2]),
        colour[3],
    ]
}

/// `lines` in `colour`, each longer than [`MAX_COLUMNS`] wrapped.
fn wrapped(lines: impl IntoIterator<Item = String>, colour: [u8; 4]) -> Vec<(String, [u8; 4])> {
    lines
        .into_iter()
        .flat_map(|line| wrap(&line, MAX_COLUMNS))
        .map(|line| (line, colour))
        .collect()
}

/// `line` broken into lines of at most `columns` characters, at the last
/// space that fits (mid-word only when a word alone is longer).
fn wrap(line: &str, columns: usize) -> Vec<String> {
    let columns = columns.max(1);
    let mut rest: Vec<char> = line.chars().collect();
    let mut lines = Vec::new();
    while rest.len() > columns {
        let cut = rest[..=columns]
            .iter()
            .rposition(|c| *c == ' ')
            .filter(|&at| at > 0)
            .unwrap_or(columns);
        let head: String = rest[..cut].iter().collect();
        lines.push(head.trim_end().to_string());
        let next = rest[cut..]
            .iter()
            .position(|c| *c != ' ')
            .map_or(rest.len(), |at| cut + at);
        rest.drain(..next);
    }
    lines.push(rest.into_iter().collect());
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_drawn_with_the_bitmap_font_glyphs() {
        let mut canvas = Canvas::new(16, 8);
        canvas.text(0, 0, "I", TEXT);
        let glyph = font8x8::legacy::BASIC_LEGACY['I' as usize];
        for (row, bits) in glyph.iter().enumerate() {
            for column in 0..8 {
                let lit = canvas.pixel(column, row as u32)[3] != 0;
                assert_eq!(lit, bits & (1 << column) != 0, "pixel {column},{row}");
            }
        }
        assert!(glyph.iter().any(|bits| *bits != 0));
    }

    #[test]
    fn nothing_to_show_gives_no_picture_and_the_panel_needs_netplay_figures() {
        let mut overlay = Overlay::new(true);
        assert!(overlay.render(0).is_none());
        overlay.record(NetStats {
            ping_ms: Some(40),
            input_delay: 1,
            frames_ahead: Some(0.5),
            rollback_depth: 2,
            kbps_in: 25.0,
            kbps_out: 24.5,
            spectators: 3,
            delays: "P1 1 P2 2".into(),
        });
        let lines = overlay.panel_lines();
        assert_eq!(lines[0], "ping 40 ms   delay 1   advantage +0.5");
        assert_eq!(lines[1], "rollback 2   spectators 3");
        assert_eq!(lines[3], "delays P1 1 P2 2");
        let picture = overlay.render(0).unwrap();
        // The graph is the widest part.
        assert_eq!(picture.width, GRAPH_SAMPLES as u32 + 2 * PADDING);
        overlay.panel_visible = false;
        assert!(overlay.render(0).is_none());
    }

    #[test]
    fn the_connection_in_words_takes_the_stall_indicators_place_and_a_desync_shows_calmly() {
        let mut overlay = Overlay::new(false);
        overlay.set_stalled(true);
        let bare = overlay.render(0).unwrap();
        overlay.set_status(
            Some("waiting for P2…"),
            Some("desync at frame 12, repaired"),
        );
        let said = overlay.render(0).unwrap();
        // One more line, and wider: the words replace "waiting for opponent...".
        assert_eq!(said.height, bare.height + LINE_H);
        assert_eq!(
            said.width,
            "desync at frame 12, repaired".len() as u32 * CELL_W + 2 * PADDING
        );
        overlay.set_status(None, None);
        assert_eq!(overlay.render(0).unwrap().height, bare.height);
        overlay.set_stalled(false);
        assert!(overlay.render(0).is_none());
    }

    #[test]
    fn notices_disappear_after_their_time_and_only_the_newest_few_stay() {
        let mut overlay = Overlay::new(false);
        overlay.notice(0, "a spectator joined");
        assert_eq!(overlay.notices(NOTICE_MS - 1).count(), 1);
        assert_eq!(overlay.notices(NOTICE_MS).count(), 0);
        for index in 0..10 {
            overlay.notice(100, format!("notice {index}"));
        }
        let shown: Vec<&str> = overlay.notices(100).collect();
        assert_eq!(shown, ["notice 6", "notice 7", "notice 8", "notice 9"]);
    }

    #[test]
    fn the_graph_draws_ping_and_rollbacks_as_lines_that_step_where_they_change() {
        let mut overlay = Overlay::new(true);
        for sample in 0..GRAPH_SAMPLES as u32 {
            let rising = sample >= 250;
            overlay.record(NetStats {
                rollback_depth: if rising { 8 } else { 4 },
                ping_ms: Some(50),
                ..NetStats::default()
            });
        }
        let mut canvas = Canvas::new(GRAPH_SAMPLES as u32 + 8, GRAPH_HEIGHT + 24);
        overlay.draw_graph(&mut canvas, 0);
        let drawn = |x: u32, colour: [u8; 4]| {
            (0..canvas.height)
                .filter(|&y| canvas.pixel(4 + x, y) == colour)
                .count()
        };
        // A level is one pixel high, not a bar from the base up.
        assert_eq!(drawn(150, ROLLBACK), 1);
        assert_eq!(drawn(150, PING), 1);
        // Where the depth doubles, the line steps up the whole way.
        assert_eq!(drawn(250, ROLLBACK), GRAPH_HEIGHT as usize / 2 + 1);
    }

    #[test]
    fn the_graph_has_its_scale_in_dotted_lines_at_half_and_full_height() {
        let overlay = Overlay::new(true);
        let mut canvas = Canvas::new(GRAPH_SAMPLES as u32 + 8, GRAPH_HEIGHT + 24);
        overlay.draw_graph(&mut canvas, 0);
        let base = 10 + GRAPH_HEIGHT;
        let dots = |y: u32| {
            (0..GRAPH_SAMPLES as u32)
                .filter(|&x| canvas.pixel(4 + x, y) == DIM)
                .count()
        };
        assert_eq!(dots(base - GRAPH_HEIGHT / 2), GRAPH_SAMPLES / 4);
        assert_eq!(dots(base - GRAPH_HEIGHT), GRAPH_SAMPLES / 4);
        assert_eq!(dots(base), GRAPH_SAMPLES, "the base line is solid");
    }

    #[test]
    fn the_graph_keeps_about_five_seconds_of_samples() {
        let mut overlay = Overlay::new(true);
        for depth in 0..1000 {
            overlay.record(NetStats {
                rollback_depth: depth % 9,
                ..NetStats::default()
            });
        }
        assert_eq!(overlay.graph.len(), GRAPH_SAMPLES);
        assert_eq!(overlay.graph.back(), Some(&(999 % 9, None)));
    }

    #[test]
    fn a_stall_shows_the_waiting_indicator_without_the_panel() {
        let mut overlay = Overlay::new(false);
        overlay.set_stalled(true);
        let picture = overlay.render(0).expect("the indicator shows");
        // Some pixel of the first text line is the warning colour.
        let found = (0..picture.width).any(|x| (4..12).any(|y| picture.pixel(x, y) == WARNING));
        assert!(found);
    }

    fn lit_columns(picture: &Canvas) -> u32 {
        (0..picture.width)
            .filter(|&x| (0..picture.height).any(|y| picture.pixel(x, y) == TEXT))
            .max()
            .map_or(0, |x| x + 1)
    }

    #[test]
    fn the_panel_is_as_wide_as_its_longest_line_and_a_short_notice_covers_little() {
        let mut overlay = Overlay::new(false);
        overlay.notice(0, "hi");
        let picture = overlay.render(0).unwrap();
        assert_eq!(picture.width, 2 * CELL_W + 2 * PADDING);

        let mut overlay = Overlay::new(false);
        let title = "Street Fighter II' - Champion Edition   frame 1234";
        overlay.set_lines(vec![title[..44].to_string()]);
        let picture = overlay.render(0).unwrap();
        assert_eq!(picture.width, 44 * CELL_W + 2 * PADDING);
        // Nothing is clipped: the last character's pixels are drawn.
        assert!(lit_columns(&picture) > 43 * CELL_W + PADDING);
    }

    #[test]
    fn a_line_longer_than_the_panel_wraps_at_a_space_and_nothing_is_lost() {
        let long =
            "the peer's checksum for frame 5400 differs from ours: repairing from the host's state";
        let lines = wrap(long, MAX_COLUMNS);
        assert!(lines.len() > 1, "{lines:?}");
        assert!(
            lines.iter().all(|l| l.chars().count() <= MAX_COLUMNS),
            "{lines:?}"
        );
        assert_eq!(lines.join(" "), long);
        assert_eq!(wrap("short", MAX_COLUMNS), ["short"]);
        assert_eq!(wrap("abcdefgh", 3), ["abc", "def", "gh"]);
        assert_eq!(wrap("ab   cd", 3), ["ab", "cd"]);

        let mut overlay = Overlay::new(false);
        overlay.notice(0, long);
        let picture = overlay.render(0).unwrap();
        assert_eq!(
            picture.width,
            lines.iter().map(|l| l.len() as u32).max().unwrap() * CELL_W + 2 * PADDING
        );
        assert_eq!(picture.height, 2 * PADDING + lines.len() as u32 * LINE_H);
    }

    #[test]
    fn chat_lines_show_named_then_fade_and_go_and_only_the_newest_few_stay() {
        let mut overlay = Overlay::new(false);
        overlay.chat_line(1_000, "P2", "gg");
        let shown = overlay.chat_lines(1_000);
        assert_eq!(shown, [("P2: gg".to_string(), CHAT)]);
        let picture = overlay.render(1_000).expect("a chat line shows");
        let lit = (0..picture.width)
            .flat_map(|x| (0..picture.height).map(move |y| (x, y)))
            .filter(|&(x, y)| picture.pixel(x, y) == CHAT)
            .count();
        assert!(lit > 10, "chat pixels: {lit}");
        let fading = overlay.chat_lines(1_000 + CHAT_MS - CHAT_FADE_MS / 2)[0].1;
        assert!(fading[0] < CHAT[0] && fading[0] > 0, "{fading:?}");
        assert!(overlay.chat_lines(1_000 + CHAT_MS).is_empty());
        assert!(overlay.render(1_000 + CHAT_MS).is_none());
        for index in 0..8 {
            overlay.chat_line(20_000, "spectator 1", &format!("line {index}"));
        }
        let texts: Vec<String> = overlay
            .chat_lines(20_000)
            .into_iter()
            .map(|(line, _)| line)
            .collect();
        assert_eq!(texts.len(), MAX_CHAT_LINES);
        assert_eq!(texts[0], "spectator 1: line 3");
    }
}
