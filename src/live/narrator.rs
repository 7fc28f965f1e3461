//! What a live machine tells as it goes, and to whom: lines on stdout
//! (with the status line redrawn in place on a terminal), warnings and
//! notes on stderr, notices in the front end, and [`LiveEvent`]s to the
//! caller.

use crate::live::front_end::FrontEnd;
use crate::live::options::{LiveEvent, LiveOptions};
use std::io::Write;
use std::time::{Duration, Instant};

/// How often the status line is redrawn on a terminal.
const STATUS_EVERY_TERMINAL: Duration = Duration::from_millis(250);

/// Prints a live status line: on a terminal one line redrawn in place;
/// otherwise a plain line now and then (no escape codes in logs and pipes).
pub(crate) struct StatusPrinter {
    terminal: bool,
    plain_every: Duration,
    shown: bool,
}

impl StatusPrinter {
    pub(crate) fn new(options: &LiveOptions) -> Self {
        StatusPrinter {
            terminal: options.status_in_place,
            plain_every: options.plain_status_every,
            shown: false,
        }
    }

    /// How often a line is printed.
    pub(crate) fn every(&self) -> Duration {
        if self.terminal {
            STATUS_EVERY_TERMINAL
        } else {
            self.plain_every
        }
    }

    /// Shows `line`, in place of the last one on a terminal.
    pub(crate) fn print(&mut self, line: &str, out: &mut dyn Write) -> std::io::Result<()> {
        if self.terminal {
            write!(out, "\r\x1b[K{line}")?;
            self.shown = true;
        } else {
            writeln!(out, "{line}")?;
        }
        out.flush()
    }

    /// Ends a line drawn in place, so what is printed next starts clean.
    pub(crate) fn interrupt(&mut self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.shown {
            self.shown = false;
            writeln!(out)?;
        }
        Ok(())
    }
}

/// Where a live machine's words go (see the module docs).
pub struct Narrator<'a> {
    out: &'a mut dyn Write,
    status: StatusPrinter,
    /// The window, or [`Headless`](crate::live::front_end::Headless).
    pub(crate) front: Box<dyn FrontEnd>,
    options: LiveOptions,
}

impl<'a> Narrator<'a> {
    /// Tells `out` and `front`, as `options` say.
    pub(crate) fn new(
        out: &'a mut dyn Write,
        front: Box<dyn FrontEnd>,
        options: &LiveOptions,
    ) -> Self {
        Narrator {
            out,
            status: StatusPrinter::new(options),
            front,
            options: options.clone(),
        }
    }

    /// A line on stdout.
    pub(crate) fn say(&mut self, line: &str) -> std::io::Result<()> {
        self.status.interrupt(self.out)?;
        writeln!(self.out, "{line}")
    }

    /// `warning: …` on stderr.
    pub(crate) fn warn(&mut self, text: &str) -> std::io::Result<()> {
        self.status.interrupt(self.out)?;
        eprintln!("warning: {text}");
        Ok(())
    }

    /// `note: …` on stderr.
    pub(crate) fn note(&mut self, text: &str) -> std::io::Result<()> {
        self.status.interrupt(self.out)?;
        eprintln!("note: {text}");
        Ok(())
    }

    /// A line of chat: `chat P2: text` on stdout, and in the front end.
    pub(crate) fn chat(&mut self, line: &netcode::netplay::ChatShown) -> std::io::Result<()> {
        self.front.show_chat(&line.author, &line.text);
        self.say(&format!("chat {}: {}", line.author, line.text))
    }

    /// A line on stdout, shown in the front end too.
    pub(crate) fn say_and_show(&mut self, line: &str) -> std::io::Result<()> {
        self.front.notice(line);
        self.say(line)
    }

    /// `warning: …` on stderr, shown in the front end too.
    pub(crate) fn warn_and_show(&mut self, text: &str) -> std::io::Result<()> {
        self.front.notice(text);
        self.warn(text)
    }

    /// `note: …` on stderr, shown in the front end too.
    pub(crate) fn note_and_show(&mut self, text: &str) -> std::io::Result<()> {
        self.front.notice(text);
        self.note(text)
    }

    /// A notice in the front end (the window's overlay).
    pub(crate) fn notice(&mut self, text: &str) {
        self.front.notice(text);
    }

    /// Tells the caller.
    pub(crate) fn signal(&self, event: LiveEvent) {
        self.options.signal(event);
    }

    /// How often the status line is shown.
    pub(crate) fn status_every(&self) -> Duration {
        self.status.every()
    }

    /// Shows the status line.
    pub(crate) fn status(&mut self, line: &str) -> std::io::Result<()> {
        self.status.print(line, self.out)
    }

    /// Ends the status line, before the summary.
    pub(crate) fn end_status(&mut self) -> std::io::Result<()> {
        self.status.interrupt(self.out)
    }
}

/// Whether a status line is due `every` after the last one (`last`, set
/// to now when it is).
pub(crate) fn status_due(last: &mut Option<Instant>, every: Duration) -> bool {
    let now = Instant::now();
    if last.is_some_and(|last| now.duration_since(last) < every) {
        return false;
    }
    *last = Some(now);
    true
}
