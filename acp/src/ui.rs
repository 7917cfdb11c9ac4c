//! The one place that writes to the terminal: the chat transcript on stdout, diagnostics on stderr.
//! Rows of styled spans are painted here (`crate::style`) when colour is allowed and written plain
//! otherwise; on a terminal, lines are word-wrapped for the pane's width as it is when they are
//! written (`crate::wrap`), and the activity line of a running turn is drawn below the transcript
//! and rewritten in place (never in a pipe).
//!
//! Write errors (a closed pipe) are ignored: the front end keeps serving the agent regardless.
//!
//! While the line editor shows its prompt, everything (the diagnostics too) is held and handed to
//! the editor's printer, which writes it above the prompt and the line being typed.

use std::fmt::{self, Write as _};
use std::io::{IsTerminal, Write};

use crate::change::{DiffLine, DiffStyle};
use crate::input::Printer;
use crate::markdown::Streams;
use crate::render::Voice;
use crate::style::{self, Row, Span, Style, paint, paint_row, row_width};
use crate::wrap::{wrap, wrap_line};

/// The width laid out for when stdout is not a terminal but styled output was asked for.
const PIPE_COLUMNS: usize = 100;

/// The terminal the person sees.
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent facts of the terminal: colour, a terminal, the activity line drawn, the cursor at a line start, the editor shown"
)]
pub(crate) struct Ui {
    color: bool,
    /// stdout is a terminal: lines are wrapped and the activity line is drawn.
    terminal: bool,
    /// The activity line is on screen (the cursor at its end).
    activity: bool,
    at_line_start: bool,
    writes: u64,
    /// The line editor's printer, when the prompt is edited.
    printer: Option<Printer>,
    /// The editor shows its prompt: output is held for the printer.
    editing: bool,
    held: String,
    /// The tool line written last (call id, text) and the write count just after it.
    last_tool: Option<(String, String, u64)>,
    /// Streamed text rendered from Markdown, when it is laid out (on a terminal, or with colour forced into a pipe): a line is
    /// held until it ends, and written before anything else is.
    streams: Option<Streams>,
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
    /// A UI on the process's stdout and stderr; colour as [`style::color_allowed`] says.
    pub(crate) fn new() -> Ui {
        let terminal = std::io::stdout().is_terminal();
        let color = style::color_allowed(terminal);
        Ui {
            color,
            streams: (terminal || color).then(Streams::default),
            terminal,
            activity: false,
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
        self.clear_activity();
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
    }

    /// The width to lay out for: the pane's, read now (so a resize applies to what is written
    /// next), else [`PIPE_COLUMNS`].
    pub(crate) fn columns(&self) -> usize {
        self.terminal.then(terminal_columns).flatten().unwrap_or(PIPE_COLUMNS)
    }

    /// The pane's width when lines are wrapped: on a terminal only.
    fn wrap_columns(&self) -> Option<usize> {
        self.terminal.then(terminal_columns).flatten()
    }

    /// Writes transcript text as is (after the streamed text held).
    pub(crate) fn out(&mut self, text: &str) {
        self.flush_text();
        self.write_text(text);
    }

    fn write_text(&mut self, text: &str) {
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

    /// Writes streamed text as it came, in `style` when colour is allowed (text that is not laid
    /// out: a pipe).
    pub(crate) fn out_styled(&mut self, style: Style, text: &str) {
        self.flush_text();
        if text.is_empty() {
            return;
        }
        self.write_stdout(&paint(self.color, style, text));
        self.at_line_start = text.ends_with('\n');
        self.writes += 1;
    }

    /// Writes one transcript line, starting a new line first if streamed text left one open;
    /// wrapped on a terminal, with its hanging indent ([`crate::wrap::hanging_indent`]).
    pub(crate) fn line(&mut self, line: &str) {
        self.styled_line(Style::Plain, line);
    }

    /// [`Ui::line`] in one style.
    pub(crate) fn styled_line(&mut self, style: Style, line: &str) {
        let line = line.strip_suffix('\n').unwrap_or(line);
        match self.wrap_columns() {
            Some(columns) => {
                let rows: Vec<Row> =
                    line.split('\n').flat_map(|line| wrap_line(style, line, columns)).collect();
                self.rows(&rows);
            }
            None => self.rows(&[vec![Span::new(style, line)]]),
        }
    }

    /// Writes one line of spans, wrapped on a terminal with its hanging indent.
    pub(crate) fn row(&mut self, row: &[Span]) {
        match self.wrap_columns() {
            Some(columns) => {
                let text: String = row.iter().map(|span| span.text.as_str()).collect();
                let indent = crate::wrap::hanging_indent(&text, columns);
                let rows = wrap(row, columns, &[], &[Span::plain(" ".repeat(indent))]);
                self.rows(&rows);
            }
            None => self.rows(&[row.to_vec()]),
        }
    }

    /// Writes rows laid out already, each on a line of its own.
    pub(crate) fn rows(&mut self, rows: &[Row]) {
        self.flush_text();
        self.emit_rows(rows);
    }

    fn emit_rows(&mut self, rows: &[Row]) {
        if rows.is_empty() {
            return;
        }
        if !self.at_line_start {
            self.write_text("\n");
        }
        let mut text = String::new();
        for row in rows {
            text.push_str(paint_row(self.color, row).trim_end_matches(' '));
            text.push('\n');
        }
        self.write_text(&text);
    }

    /// Streamed text of `voice`: laid out line by line, or written as it came (a pipe without
    /// colour).
    pub(crate) fn say(&mut self, voice: Voice, text: &str) {
        let columns = self.columns();
        match self.streams.as_mut() {
            Some(streams) => {
                let rows = streams.feed(voice, text, columns);
                self.emit_rows(&rows);
            }
            None => self.out_styled(voice.style(), text),
        }
    }

    /// Writes the line streamed text left open (at the end of a message).
    pub(crate) fn flush_text(&mut self) {
        let columns = self.columns();
        if let Some(rows) = self.streams.as_mut().map(|streams| streams.flush(columns)) {
            self.emit_rows(&rows);
        }
    }

    /// At the end of a turn: what every voice left open, and an open code block closed.
    pub(crate) fn finish_text(&mut self) {
        let columns = self.columns();
        if let Some(rows) = self.streams.as_mut().map(|streams| streams.finish(columns)) {
            self.emit_rows(&rows);
        }
    }

    /// Writes a file change line by line, in the diff's styles.
    pub(crate) fn diff(&mut self, lines: &[DiffLine]) {
        let rows: Vec<Row> = lines
            .iter()
            .map(|line| {
                let style = match line.style {
                    DiffStyle::Title => Style::DiffTitle,
                    DiffStyle::Hunk => Style::DiffHunk,
                    DiffStyle::Removed => Style::DiffRemoved,
                    DiffStyle::Added => Style::DiffAdded,
                    DiffStyle::Context | DiffStyle::Gap | DiffStyle::Note => Style::DiffContext,
                };
                vec![Span::new(style, line.text.clone())]
            })
            .collect();
        self.rows(&rows);
    }

    /// Draws the activity line of a running turn (on a terminal, when nothing is left open on
    /// the last line and the editor does not show its prompt), replacing the one drawn before.
    pub(crate) fn show_activity(&mut self, text: &str) {
        if !self.terminal || self.editing || !self.at_line_start {
            return;
        }
        let columns = terminal_columns().unwrap_or(PIPE_COLUMNS);
        let text: String = text.chars().take(columns.saturating_sub(1)).collect();
        let mut stdout = std::io::stdout().lock();
        let _ = write!(stdout, "\r\x1b[2K{}", paint(self.color, Style::Activity, &text));
        let _ = stdout.flush();
        self.activity = true;
    }

    /// Removes the activity line, if drawn (before anything else is written).
    pub(crate) fn clear_activity(&mut self) {
        if !self.activity {
            return;
        }
        self.activity = false;
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(b"\r\x1b[2K");
        let _ = stdout.flush();
    }

    /// Shows how a wait goes on the line of `id` (a tool call, or a terminal no call shows),
    /// rewritten in place every time (issue 38 item 4; `spec/acp.md` §2.23): only when stdout is
    /// a terminal and the prompt is not being edited; cut to the terminal's width, so that it
    /// stays one row.
    pub(crate) fn progress_line(&mut self, id: &str, mut row: Row) {
        // A terminal that says its width (not a pipe).
        let Some(columns) = terminal_columns().filter(|_| self.terminal && !self.editing) else {
            return;
        };
        let room = columns.saturating_sub(2);
        if row_width(&row) > room {
            // The last span (how the wait goes) gives way, cut with an ellipsis.
            let before: usize =
                row[..row.len() - 1].iter().map(|span| style::width(&span.text)).sum();
            if let Some(last) = row.last_mut() {
                let mut kept = String::new();
                for ch in last.text.chars() {
                    if before + style::width(&kept) + style::width(&ch.to_string()) >= room {
                        break;
                    }
                    kept.push(ch);
                }
                kept.push('…');
                last.text = kept;
            }
        }
        self.tool_line(id, &row);
    }

    /// Writes the line of the tool call `id`. On a terminal, when the call's previous line is the
    /// last thing written and both fit on one row, the new line replaces it (cursor up, line
    /// cleared), so that a call shows one line with its latest status; otherwise (a pipe,
    /// something written since) it is a line of its own.
    pub(crate) fn tool_line(&mut self, id: &str, row: &[Span]) {
        self.flush_text();
        let columns = self.wrap_columns();
        let line: String = row.iter().map(|span| span.text.as_str()).collect();
        let fits = |width: usize| columns.is_some_and(|columns| width < columns);
        let in_place = self.terminal
            && !self.editing
            && self.last_tool.as_ref().is_some_and(|(last_id, last_line, writes)| {
                last_id == id && *writes == self.writes && fits(style::width(last_line))
            })
            && fits(row_width(row));
        if in_place {
            self.write_stdout(&format!("\x1b[1A\r\x1b[2K{}\n", paint_row(self.color, row)));
            self.at_line_start = true;
            self.writes += 1;
        } else {
            self.row(row);
        }
        self.last_tool = Some((id.to_owned(), line, self.writes));
    }

    /// Ends a line that streamed text left open (the text held written first).
    pub(crate) fn finish_line(&mut self) {
        self.flush_text();
        if !self.at_line_start {
            self.write_text("\n");
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
        self.clear_activity();
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
        self.clear_activity();
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(stderr, "{hint}");
    }
}

/// The terminal's width in columns, if stdout is a terminal that says.
fn terminal_columns() -> Option<usize> {
    let size = rustix::termios::tcgetwinsize(std::io::stdout()).ok()?;
    (size.ws_col > 0).then_some(usize::from(size.ws_col))
}
