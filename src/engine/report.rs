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

/// Writes `report` for people, then, when `json` is asked for, its JSON as
/// the last line.
pub fn write_report(report: &dyn Report, json: bool, out: &mut dyn Write) -> std::io::Result<()> {
    report.describe(out)?;
    if json {
        writeln!(out, "{}", report.json())?;
    }
    Ok(())
}
