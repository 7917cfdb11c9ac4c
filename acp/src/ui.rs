//! The one place that writes to the terminal: the chat transcript on stdout, diagnostics on stderr.
//!
//! Write errors (a closed pipe) are ignored: the front end keeps serving the agent regardless.

use std::io::{IsTerminal, Write};

/// The terminal the person sees.
#[derive(Debug)]
pub(crate) struct Ui {
    color: bool,
    at_line_start: bool,
    writes: u64,
}

impl Ui {
    /// A UI on the process's stdout and stderr; dims thoughts only on a terminal without `NO_COLOR`.
    pub(crate) fn new() -> Ui {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
        Ui { color: std::io::stdout().is_terminal() && !no_color, at_line_start: true, writes: 0 }
    }

    /// Whether colour is allowed: stdout is a terminal and `NO_COLOR` is unset or empty.
    pub(crate) fn color(&self) -> bool {
        self.color
    }

    /// Writes transcript text as is.
    pub(crate) fn out(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
        self.at_line_start = text.ends_with('\n');
        self.writes += 1;
    }

    /// How many writes the UI has made so far (to tell whether anything was written since).
    pub(crate) fn writes(&self) -> u64 {
        self.writes
    }

    /// Writes text dimmed when colour is allowed (thoughts).
    pub(crate) fn out_dim(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if self.color {
            let mut stdout = std::io::stdout().lock();
            let _ = write!(stdout, "\x1b[2m{text}\x1b[0m");
            let _ = stdout.flush();
            self.at_line_start = text.ends_with('\n');
            self.writes += 1;
        } else {
            self.out(text);
        }
    }

    /// Writes one transcript line, starting a new line first if streamed text left one open.
    pub(crate) fn line(&mut self, line: &str) {
        self.finish_line();
        self.out(line);
        if !line.ends_with('\n') {
            self.out("\n");
        }
    }

    /// Ends a line that streamed text left open.
    pub(crate) fn finish_line(&mut self) {
        if !self.at_line_start {
            self.out("\n");
        }
    }

    /// The terminal echoed a typed line, so the cursor is at the start of a line.
    pub(crate) fn input_echoed(&mut self) {
        self.at_line_start = true;
    }

    /// A diagnostic on stderr: `termsprawlctl: acp: <message>`.
    pub(crate) fn error(&mut self, message: &str) {
        self.finish_line();
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(stderr, "termsprawlctl: acp: {message}");
        self.writes += 1;
    }

    /// A usage error on stderr, with the pointer to the help.
    pub(crate) fn usage_error(&mut self, message: &str) {
        self.error(message);
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(stderr, "Run `termsprawlctl acp --help` for usage.");
    }
}
