//! What a command says when it is done: [`Report`] gives the same facts as
//! lines for people and as one JSON object for scripts, from one struct, so
//! the two never drift apart.

use std::io::Write;

/// A finished command's result.
pub trait Report {
    /// The lines for people.
    fn describe(&self, out: &mut dyn Write) -> std::io::Result<()>;

    /// The same facts as one JSON object, for scripts (`--json`).
    fn json(&self) -> serde_json::Value;
}

/// How long ago something happened, `seconds` before now, as a list says
/// it: `just now`, `45 s ago`, `3 min ago`, `2 h ago`, `4 days ago`.
pub fn time_ago(seconds: u64) -> String {
    match seconds {
        0..=9 => "just now".to_string(),
        10..=59 => format!("{seconds} s ago"),
        60..=3599 => format!("{} min ago", seconds / 60),
        3600..=86_399 => format!("{} h ago", seconds / 3600),
        86_400..=172_799 => "1 day ago".to_string(),
        _ => format!("{} days ago", seconds / 86_400),
    }
}

thread_local! {
    /// The JSON of the last report written on this thread: the launcher's
    /// result screen reads the facts of the session it ran there.
    static LAST_REPORT: std::cell::RefCell<Option<serde_json::Value>> =
        const { std::cell::RefCell::new(None) };
}

/// Writes `report` for people, then, when `json` is asked for, its JSON as
/// the last line; its JSON is kept for [`take_last_report`].
pub fn write_report(report: &dyn Report, json: bool, out: &mut dyn Write) -> std::io::Result<()> {
    report.describe(out)?;
    let facts = report.json();
    if json {
        writeln!(out, "{facts}")?;
    }
    LAST_REPORT.with(|last| *last.borrow_mut() = Some(facts));
    Ok(())
}

/// The JSON of the last report [`write_report`] wrote on this thread, once.
pub fn take_last_report() -> Option<serde_json::Value> {
    LAST_REPORT.with(|last| last.borrow_mut().take())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_said_in_words_in_the_largest_whole_unit() {
        let said: Vec<String> = [0, 9, 45, 60, 200, 3599, 7200, 86_400, 400_000]
            .into_iter()
            .map(time_ago)
            .collect();
        assert_eq!(
            said,
            [
                "just now",
                "just now",
                "45 s ago",
                "1 min ago",
                "3 min ago",
                "59 min ago",
                "2 h ago",
                "1 day ago",
                "4 days ago"
            ]
        );
    }
}
