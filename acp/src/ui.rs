//! The one place that writes to the terminal: the chat transcript on stdout, diagnostics on stderr.
//!
//! Write errors (a closed pipe) are ignored: the front end keeps serving the agent regardless.
//!
//! While the line editor shows its prompt, everything (the diagnostics too) is held and handed to
//! the editor's printer, which writes it above the prompt and the line being typed.

use std::fmt::{self, Write as _};
use std::io::{IsTerminal, Write};

use crate::change::{DiffLine, DiffStyle};
use crate::input::Printer;

/// The terminal the person sees.
pub(crate) struct Ui {
    color: bool,
    at_line_start: bool,
    writes: u64,
    /// The line editor's printer, when the prompt is edited.
    printer: Option<Printer>,
    /// The editor shows its prompt: output is held for the printer.
    editing: bool,
    held: String,
    /// The tool line written last (call id, text) and the write count just after it.
    last_tool: Option<(String, String, u64)>,
}

impl fmt::Debug for Ui {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Ui")
            .field("color", &self.color)
            .field("editing", &self.editing)
            .finish_non_exhaustive()
    }
}

impl Ui {
    /// A UI on the process's stdout and stderr; dims thoughts only on a terminal without `NO_COLOR`.
    pub(crate) fn new() -> Ui {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
        Ui {
            color: std::io::stdout().is_terminal() && !no_color,
            at_line_start: true,
            writes: 0,
            printer: None,
            editing: false,
            held: String::new(),
            last_tool: None,
        }
    }

    /// From now on, output written while the editor shows its prompt goes through `printer`.
    pub(crate) fn attach_printer(&mut self, printer: Printer) {
        self.printer = Some(printer);
    }

    /// Whether the editor shows its prompt (output is then held for its printer); when it stops,
    /// what is still held is written.
    pub(crate) fn set_editing(&mut self, editing: bool) {
        let editing = editing && self.printer.is_some();
        if self.editing && !editing {
            let held = std::mem::take(&mut self.held);
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(held.as_bytes());
            let _ = stdout.flush();
        }
        self.editing = editing;
    }

    /// Hands what is held to the editor's printer, which writes it above the prompt (ending its
    /// last line).
    pub(crate) fn flush_held(&mut self) {
        if !self.editing || self.held.is_empty() {
            return;
        }
        let held = std::mem::take(&mut self.held);
        if let Some(printer) = self.printer.as_mut() {
            let _ = printer.print(held);
        }
        self.at_line_start = true;
        // The editor's prompt is below what it printed.
        self.last_tool = None;
    }

    fn write_stdout(&mut self, text: &str) {
        if self.editing {
            self.held.push_str(text);
            return;
        }
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
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
        self.write_stdout(text);
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
            self.write_stdout(&format!("\x1b[2m{text}\x1b[0m"));
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

    /// Writes a file change line by line; with colour, removed lines are red, added ones green,
    /// hunk headers cyan, the title bold, and context, gaps and notes dim.
    pub(crate) fn diff(&mut self, lines: &[DiffLine]) {
        for line in lines {
            if !self.color {
                self.line(&line.text);
                continue;
            }
            let style = match line.style {
                DiffStyle::Title => "1",
                DiffStyle::Hunk => "36",
                DiffStyle::Removed => "31",
                DiffStyle::Added => "32",
                DiffStyle::Context | DiffStyle::Gap | DiffStyle::Note => "2",
            };
            self.line(&format!("\x1b[{style}m{}\x1b[0m", line.text));
        }
    }

    /// Writes the line of the tool call `id`. On a terminal with colour, when the call's previous
    /// line is the last thing written and both fit on one row, the new line replaces it (cursor
    /// up, line cleared), so that a call shows one line with its latest status; otherwise (a
    /// pipe, `NO_COLOR`, something written since) it is a line of its own.
    pub(crate) fn tool_line(&mut self, id: &str, line: &str) {
        self.tool_line_in_place(id, line, self.color);
    }

    /// Shows how a wait goes on the line of `id` (a tool call, or a terminal no call shows),
    /// rewritten in place every time (issue 38 item 4): only when stdout is a terminal and the
    /// prompt is not being edited; cut to the terminal's width, so that it stays one row.
    pub(crate) fn progress_line(&mut self, id: &str, line: &str) {
        // A terminal that says its width (not a pipe).
        let Some(columns) = terminal_columns().filter(|_| !self.editing) else { return };
        let line = match line.char_indices().nth(columns.saturating_sub(2)) {
            Some((at, _)) => format!("{}…", &line[..at]),
            None => line.to_owned(),
        };
        self.tool_line_in_place(id, &line, true);
    }

    fn tool_line_in_place(&mut self, id: &str, line: &str, allowed: bool) {
        let columns = terminal_columns();
        let fits = |text: &str| columns.is_some_and(|columns| text.chars().count() < columns);
        let in_place = allowed
            && !self.editing
            && self.last_tool.as_ref().is_some_and(|(last_id, last_line, writes)| {
                last_id == id && *writes == self.writes && fits(last_line)
            })
            && fits(line);
        if in_place {
            self.write_stdout(&format!("\x1b[1A\r\x1b[2K{line}\n"));
            self.at_line_start = true;
            self.writes += 1;
        } else {
            self.line(line);
        }
        self.last_tool = Some((id.to_owned(), line.to_owned(), self.writes));
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
        // The typed line is below the last tool line now.
        self.last_tool = None;
    }

    /// A diagnostic on stderr: `termsprawlctl: acp: <message>`.
    pub(crate) fn error(&mut self, message: &str) {
        self.finish_line();
        self.writes += 1;
        if self.editing {
            let _ = writeln!(self.held, "termsprawlctl: acp: {message}");
            return;
        }
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(stderr, "termsprawlctl: acp: {message}");
    }

    /// A usage error on stderr, with the pointer to the help.
    pub(crate) fn usage_error(&mut self, message: &str) {
        self.error(message);
        let hint = "Run `termsprawlctl acp --help` for usage.";
        if self.editing {
            self.held.push_str(hint);
            self.held.push('\n');
            return;
        }
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(stderr, "{hint}");
    }
}

/// The terminal's width in columns, if stdout is a terminal that says.
fn terminal_columns() -> Option<usize> {
    let size = rustix::termios::tcgetwinsize(std::io::stdout()).ok()?;
    (size.ws_col > 0).then_some(usize::from(size.ws_col))
}
