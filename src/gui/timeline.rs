//! A replay's timeline in the window: where playback stands and how long
//! the replay is, in minutes and seconds, a bar to click or drag to seek,
//! pause and the speeds, and who played. Seeking itself is the debugger's
//! (`Debugger::seek_toward`): this only says where to go.

use crate::gui::menu::script::Targets;
use crate::gui::window::TimelineKey;

/// The speeds the timeline offers, as multiples of the core's frame rate.
pub const SPEEDS: [f64; 4] = [0.5, 1.0, 2.0, 4.0];
/// How far the arrow keys seek.
pub const SEEK_STEP_SECONDS: f64 = 5.0;

/// What the player asked of the timeline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TimelineChoice {
    /// Go to this frame.
    Seek(u32),
    /// Pause or resume.
    Pause,
    /// Play at this speed.
    Speed(f64),
}

/// A replay's frames `first..end`, at `fps`, and its players.
#[derive(Clone, Debug)]
pub struct Timeline {
    first: u32,
    end: u32,
    fps: f64,
    players: String,
}

impl Timeline {
    /// The timeline of frames `first..end` played at `fps`, by players
    /// named `names` (P1 first; a name may be empty).
    pub fn new(first: u32, end: u32, fps: f64, players: usize, names: &[String]) -> Timeline {
        let seats: Vec<String> = (0..players.max(1))
            .map(
                |seat| match names.get(seat).filter(|name| !name.is_empty()) {
                    Some(name) => format!("P{} {name}", seat + 1),
                    None => format!("P{}", seat + 1),
                },
            )
            .collect();
        Timeline {
            first,
            end: end.max(first),
            fps: if fps > 0.0 { fps } else { 60.0 },
            players: seats.join(" vs "),
        }
    }

    /// The first frame and the end (one past the last frame played).
    pub fn range(&self) -> (u32, u32) {
        (self.first, self.end)
    }

    /// `1:05`: the time from the replay's start to `frame`.
    pub fn clock(&self, frame: u32) -> String {
        let seconds = (f64::from(frame.saturating_sub(self.first)) / self.fps) as u64;
        format!("{}:{:02}", seconds / 60, seconds % 60)
    }

    /// `1:05 / 5:00`: where `frame` is of the whole.
    pub fn position(&self, frame: u32) -> String {
        format!("{} / {}", self.clock(frame), self.clock(self.end))
    }

    /// The players (`P1 ann vs P2`).
    pub fn players(&self) -> &str {
        &self.players
    }

    /// What a timeline key asks for, from `frame` at `speed`.
    pub fn key(&self, key: TimelineKey, frame: u32, speed: f64) -> TimelineChoice {
        let step = (SEEK_STEP_SECONDS * self.fps) as u32;
        match key {
            TimelineKey::Back => TimelineChoice::Seek(frame.saturating_sub(step).max(self.first)),
            TimelineKey::Forward => TimelineChoice::Seek(frame.saturating_add(step).min(self.end)),
            TimelineKey::Start => TimelineChoice::Seek(self.first),
            TimelineKey::End => TimelineChoice::Seek(self.end),
            TimelineKey::Slower => TimelineChoice::Speed(
                SPEEDS
                    .iter()
                    .rev()
                    .copied()
                    .find(|&s| s < speed - 1e-9)
                    .unwrap_or(SPEEDS[0]),
            ),
            TimelineKey::Faster => TimelineChoice::Speed(
                SPEEDS
                    .iter()
                    .copied()
                    .find(|&s| s > speed + 1e-9)
                    .unwrap_or(SPEEDS[SPEEDS.len() - 1]),
            ),
        }
    }

    /// Draws the timeline along the window's bottom: standing at `frame`
    /// (going to `seeking`, if a seek is under way), paused or not, at
    /// `speed`. The bar is `Timeline` for scripts, the buttons by their
    /// labels.
    pub fn draw(
        &self,
        context: &egui::Context,
        targets: &mut Targets,
        frame: u32,
        seeking: Option<u32>,
        paused: bool,
        speed: f64,
    ) -> Option<TimelineChoice> {
        let mut choice = None;
        let fill = egui::Color32::from_black_alpha(170);
        egui::TopBottomPanel::bottom("timeline")
            .frame(egui::Frame::new().fill(fill).inner_margin(6.0))
            .show_separator_line(false)
            .show(context, |ui| {
                ui.horizontal(|ui| {
                    let pause = if paused { "Play" } else { "Pause" };
                    if targets.button(ui, pause).clicked() {
                        choice = Some(TimelineChoice::Pause);
                    }
                    let shown = seeking.unwrap_or(frame);
                    let status = match seeking {
                        Some(_) => format!("{}  seeking…", self.position(shown)),
                        None if paused => format!("{}  paused", self.position(shown)),
                        None => self.position(shown),
                    };
                    targets.line(ui, &status);
                    ui.separator();
                    for offered in SPEEDS {
                        let label = speed_label(offered);
                        let chosen = (offered - speed).abs() < 1e-9;
                        if targets.selectable(ui, chosen, &label).clicked() {
                            choice = Some(TimelineChoice::Speed(offered));
                        }
                    }
                    ui.separator();
                    targets.line(ui, &self.players);
                });
                let mut at = seeking.unwrap_or(frame).clamp(self.first, self.end);
                ui.spacing_mut().slider_width = ui.available_width();
                let bar = ui.add(
                    egui::Slider::new(&mut at, self.first..=self.end)
                        .show_value(false)
                        .trailing_fill(true),
                );
                targets.mark("Timeline", bar.rect);
                if bar.changed() {
                    choice = Some(TimelineChoice::Seek(at));
                }
            });
        choice
    }
}

/// `0.5×`, `1×`, `2×`.
pub fn speed_label(speed: f64) -> String {
    format!("{speed}×")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_says_minutes_and_seconds_from_the_replays_first_frame() {
        let timeline = Timeline::new(600, 600 + 60 * 125, 60.0, 2, &[]);
        assert_eq!(timeline.clock(600), "0:00");
        assert_eq!(timeline.clock(600 + 60 * 65), "1:05");
        assert_eq!(timeline.position(600 + 60 * 5), "0:05 / 2:05");
    }

    #[test]
    fn players_are_named_by_seat_and_name_where_they_gave_one() {
        let names = ["ann".to_string(), String::new()];
        assert_eq!(
            Timeline::new(0, 1, 60.0, 2, &names).players(),
            "P1 ann vs P2"
        );
    }

    #[test]
    fn the_keys_seek_five_seconds_within_the_replay_and_step_through_the_speeds() {
        let timeline = Timeline::new(100, 1000, 60.0, 2, &[]);
        let seek = |key, frame| timeline.key(key, frame, 1.0);
        assert_eq!(seek(TimelineKey::Forward, 200), TimelineChoice::Seek(500));
        assert_eq!(seek(TimelineKey::Forward, 900), TimelineChoice::Seek(1000));
        assert_eq!(seek(TimelineKey::Back, 200), TimelineChoice::Seek(100));
        assert_eq!(seek(TimelineKey::End, 200), TimelineChoice::Seek(1000));
        let speed = |key, at| timeline.key(key, 0, at);
        assert_eq!(speed(TimelineKey::Faster, 1.0), TimelineChoice::Speed(2.0));
        assert_eq!(speed(TimelineKey::Faster, 4.0), TimelineChoice::Speed(4.0));
        assert_eq!(speed(TimelineKey::Slower, 1.0), TimelineChoice::Speed(0.5));
        // A --speed between the offered ones goes to the nearest below.
        assert_eq!(speed(TimelineKey::Slower, 3.0), TimelineChoice::Speed(2.0));
    }
}
