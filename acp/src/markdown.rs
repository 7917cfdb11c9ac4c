//! Agent messages and thoughts rendered from Markdown for a terminal (`spec/acp.md` §2.17):
//! streamed text is held until its line is complete, then laid out for the pane's width as rows
//! of styled spans (`crate::style`), which the UI paints or writes plain. Headings, emphasis,
//! inline code and links are styled; paragraphs, list items and block quotes are word-wrapped with
//! their markers as hanging indents (`•` for bullets, `│` for quotes); a pipe table is held until
//! its last row and drawn with box lines, its columns narrowed (cells wrapped) to fit; a fenced
//! code block is framed, never re-flowed (a long line is broken where the row ends) and
//! highlighted for the languages `crate::highlight` knows. Inline Markdown is parsed by
//! `pulldown-cmark`; blocks are told apart line by line, because the text arrives in chunks and a
//! line must be shown as soon as it ends (a table as soon as it ends).

#[cfg(test)]
mod tests;

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

use crate::highlight::{self, Language, Open};
use crate::render::Voice;
use crate::style::{Row, Span, Style, row_width, width};
use crate::wrap::{wrap, wrap_chars};

/// The streamed text of the three voices, each rendered on its own; when the voice changes, what
/// the last one left open is written first.
#[derive(Debug)]
pub(crate) struct Streams {
    agent: Markdown,
    thought: Markdown,
    user: Markdown,
    current: Voice,
}

impl Default for Streams {
    fn default() -> Streams {
        Streams {
            agent: Markdown::new(Style::Plain),
            thought: Markdown::new(Style::Thought),
            user: Markdown::new(Style::User),
            current: Voice::Agent,
        }
    }
}

impl Streams {
    /// Text of `voice`; the rows of every line completed (the other voice's open line first).
    pub(crate) fn feed(&mut self, voice: Voice, text: &str, columns: usize) -> Vec<Row> {
        let mut rows = Vec::new();
        if voice != self.current {
            rows = self.flush(columns);
            self.current = voice;
        }
        rows.extend(self.stream(voice).feed(text, columns));
        rows
    }

    /// The rows of what the current voice holds ([`Markdown::flush`]).
    pub(crate) fn flush(&mut self, columns: usize) -> Vec<Row> {
        self.stream(self.current).flush(columns)
    }

    /// At the end of a turn: every voice flushed, open code blocks closed.
    pub(crate) fn finish(&mut self, columns: usize) -> Vec<Row> {
        let mut rows = self.agent.finish(columns);
        rows.extend(self.thought.finish(columns));
        rows.extend(self.user.finish(columns));
        rows
    }

    fn stream(&mut self, voice: Voice) -> &mut Markdown {
        match voice {
            Voice::Agent => &mut self.agent,
            Voice::Thought => &mut self.thought,
            Voice::User => &mut self.user,
        }
    }
}

/// The state of a message being streamed.
#[derive(Debug, Default)]
pub(crate) struct Markdown {
    /// The style of text that Markdown does not style (plain for messages, dim for thoughts).
    base: Style,
    pending: String,
    fence: Option<Fence>,
    table: Vec<String>,
}

/// An open fenced code block.
#[derive(Debug)]
struct Fence {
    /// The fence's character and length (a closing fence is at least as long).
    marker: char,
    length: usize,
    indent: String,
    language: Option<&'static Language>,
    open: Open,
}

impl Markdown {
    /// A renderer whose unstyled text is in `base`.
    pub(crate) fn new(base: Style) -> Markdown {
        Markdown { base, ..Markdown::default() }
    }

    /// Takes streamed text; returns the rows of every line it completed, laid out for `columns`.
    pub(crate) fn feed(&mut self, text: &str, columns: usize) -> Vec<Row> {
        self.pending.push_str(text);
        let mut rows = Vec::new();
        while let Some(end) = self.pending.find('\n') {
            let line: String = self.pending.drain(..=end).collect();
            let line = line.trim_end_matches('\n').trim_end_matches('\r');
            rows.extend(self.line(line, columns));
        }
        rows
    }

    /// The rows of what is held (a line left open, a table), at the end of a message; an open
    /// code block stays open (the message may go on after a tool call).
    pub(crate) fn flush(&mut self, columns: usize) -> Vec<Row> {
        let line = std::mem::take(&mut self.pending);
        let mut rows = if line.is_empty() { Vec::new() } else { self.line(&line, columns) };
        rows.extend(self.end_table(columns));
        rows
    }

    /// [`Markdown::flush`], and an open code block closed (at the end of a turn).
    pub(crate) fn finish(&mut self, columns: usize) -> Vec<Row> {
        let mut rows = self.flush(columns);
        if let Some(fence) = self.fence.take() {
            rows.push(fence_end(&fence));
        }
        rows
    }

    fn line(&mut self, line: &str, columns: usize) -> Vec<Row> {
        let indent = &line[..line.len() - line.trim_start().len()];
        let rest = line.trim_start();
        if let Some(fence) = &mut self.fence {
            let closing = rest.chars().take_while(|c| *c == fence.marker).count();
            if closing >= fence.length && rest[closing..].trim().is_empty() {
                let rows = vec![fence_end(fence)];
                self.fence = None;
                return rows;
            }
            let code = line.strip_prefix(fence.indent.as_str()).unwrap_or(line);
            let spans = match fence.language {
                Some(language) => highlight::line(language, code, &mut fence.open),
                None => vec![Span::plain(code)],
            };
            let gutter = [Span::plain(fence.indent.clone()), Span::new(Style::Frame, "│ ")];
            return wrap_chars(&spans, columns, &gutter, &gutter);
        }
        let mut rows = Vec::new();
        if rest.starts_with('|') {
            self.table.push(rest.to_owned());
            return rows;
        }
        rows.extend(self.end_table(columns));
        for marker in ['`', '~'] {
            let length = rest.chars().take_while(|c| *c == marker).count();
            if length >= 3 {
                let info = rest[length..].trim();
                let fence = Fence {
                    marker,
                    length,
                    indent: indent.to_owned(),
                    language: highlight::language(info),
                    open: Open::Nothing,
                };
                let mut top = vec![Span::plain(indent), Span::new(Style::Frame, "┌─")];
                if !info.is_empty() {
                    top.push(Span::plain(" "));
                    top.push(Span::new(Style::CodeLanguage, info));
                }
                rows.push(top);
                self.fence = Some(fence);
                return rows;
            }
        }
        rows.extend(self.block(indent, rest, columns));
        rows
    }

    /// A line outside code blocks and tables.
    fn block(&self, indent: &str, rest: &str, columns: usize) -> Vec<Row> {
        let base = self.base;
        let lead = Span::plain(indent);
        if rest.is_empty() {
            return vec![Vec::new()];
        }
        let hashes = rest.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&hashes) && rest[hashes..].starts_with(' ') {
            let title = inline(rest[hashes..].trim(), Style::Heading);
            return wrap(&title, columns, std::slice::from_ref(&lead), std::slice::from_ref(&lead));
        }
        if is_rule(rest) {
            let length = columns.saturating_sub(width(indent)).max(3);
            return vec![vec![lead, Span::new(Style::Frame, "─".repeat(length))]];
        }
        if rest.starts_with('>') {
            let mut depth = 0;
            let mut quote = rest;
            while let Some(inner) = quote.strip_prefix('>') {
                depth += 1;
                quote = inner.trim_start();
            }
            let mut prefix = vec![lead];
            prefix.extend((0..depth).map(|_| Span::new(Style::Quote, "│ ")));
            return wrap(&inline(quote, Style::Quote), columns, &prefix, &prefix);
        }
        if let Some((marker, item)) = list_marker(rest) {
            let (marker, item) = match (item.strip_prefix("[ ] "), item.strip_prefix("[x] ")) {
                (Some(item), _) => (format!("{marker}☐ "), item),
                (_, Some(item)) => (format!("{marker}☑ "), item),
                _ => (marker, item),
            };
            let hang = Span::plain(" ".repeat(width(indent) + width(&marker)));
            let first = [lead, Span::new(Style::Bullet, marker)];
            return wrap(&inline(item, base), columns, &first, &[hang]);
        }
        wrap(&inline(rest, base), columns, std::slice::from_ref(&lead), std::slice::from_ref(&lead))
    }

    /// The rows of the table held, if any.
    fn end_table(&mut self, columns: usize) -> Vec<Row> {
        if self.table.is_empty() {
            return Vec::new();
        }
        table(&std::mem::take(&mut self.table), columns)
    }
}

/// `- `, `* `, `+ ` (shown as `• `) or `1. `, `1) ` (kept), and the item after it.
fn list_marker(rest: &str) -> Option<(String, &str)> {
    for bullet in ["- ", "* ", "+ "] {
        if let Some(item) = rest.strip_prefix(bullet) {
            return Some(("• ".to_owned(), item));
        }
    }
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if (1..=9).contains(&digits)
        && (rest[digits..].starts_with(". ") || rest[digits..].starts_with(") "))
    {
        return Some((rest[..digits + 2].to_owned(), &rest[digits + 2..]));
    }
    None
}

/// `---`, `***`, `___` (three or more, spaces allowed).
fn is_rule(rest: &str) -> bool {
    let marks: String = rest.chars().filter(|c| *c != ' ').collect();
    marks.len() >= 3 && ['-', '*', '_'].iter().any(|mark| marks.chars().all(|c| c == *mark))
}

fn fence_end(fence: &Fence) -> Row {
    vec![Span::plain(fence.indent.clone()), Span::new(Style::Frame, "└─")]
}

/// One line's inline Markdown as spans; text the parser does not style is in `base`.
fn inline(text: &str, base: Style) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::new();
    let mut styles = vec![base];
    let mut links = Vec::new();
    let add = |spans: &mut Vec<Span>, style: Style, text: &str| match spans.last_mut() {
        Some(last) if last.style == style => last.text.push_str(text),
        _ => spans.push(Span::new(style, text)),
    };
    for event in Parser::new(text) {
        let style = *styles.last().unwrap_or(&base);
        match event {
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => {
                add(&mut spans, style, &text);
            }
            Event::Code(code) => add(&mut spans, Style::InlineCode, &format!("`{code}`")),
            Event::Start(Tag::Strong) => styles.push(Style::Strong),
            Event::Start(Tag::Emphasis) => styles.push(Style::Emphasis),
            Event::End(TagEnd::Strong | TagEnd::Emphasis) => {
                styles.pop();
            }
            Event::SoftBreak | Event::HardBreak => add(&mut spans, style, " "),
            Event::Start(Tag::Link { dest_url, .. }) => links.push((dest_url, spans.len())),
            Event::End(TagEnd::Link) => {
                if let Some((url, start)) = links.pop() {
                    let label: String =
                        spans[start..].iter().map(|span| span.text.as_str()).collect();
                    if label != *url {
                        add(&mut spans, style, " (");
                        add(&mut spans, Style::Link, &url);
                        add(&mut spans, style, ")");
                    }
                }
            }
            _ => {}
        }
    }
    // A line the parser read as something else keeps its text.
    if spans.is_empty() { vec![Span::new(base, text)] } else { spans }
}

/// A pipe table's cells.
fn cells(line: &str) -> Vec<String> {
    let line = line.trim();
    let line = line.strip_prefix('|').unwrap_or(line);
    let line = line.strip_suffix('|').filter(|rest| !rest.ends_with('\\')).unwrap_or(line);
    let mut cells = vec![String::new()];
    let mut escaped = false;
    for c in line.chars() {
        match c {
            '|' if !escaped => cells.push(String::new()),
            _ => {
                if let Some(cell) = cells.last_mut() {
                    if escaped && c != '|' {
                        cell.push('\\');
                    }
                    if c != '\\' || escaped {
                        cell.push(c);
                    }
                }
            }
        }
        escaped = c == '\\' && !escaped;
    }
    cells.into_iter().map(|cell| cell.trim().to_owned()).collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Center,
    Right,
}

/// The alignments of a delimiter row (`|---|:--:|--:|`), or `None` when the row is not one.
fn alignments(cells: &[String]) -> Option<Vec<Align>> {
    cells
        .iter()
        .map(|cell| {
            let dashes = cell.trim_matches(':');
            if dashes.is_empty() || !dashes.chars().all(|c| c == '-') {
                return None;
            }
            Some(match (cell.starts_with(':'), cell.ends_with(':')) {
                (true, true) => Align::Center,
                (false, true) => Align::Right,
                _ => Align::Left,
            })
        })
        .collect()
}

/// A pipe table drawn with box lines; columns wider than the pane allows are narrowed, widest
/// first, and their cells wrapped; a pane too narrow for even that gets the rows as lines.
fn table(lines: &[String], columns: usize) -> Vec<Row> {
    let mut rows: Vec<Vec<String>> = lines.iter().map(|line| cells(line)).collect();
    let aligns = rows.get(1).and_then(|row| alignments(row));
    let header = aligns.is_some();
    if header {
        rows.remove(1);
    }
    let count = rows.iter().map(Vec::len).max().unwrap_or(0);
    let aligns = aligns.unwrap_or_default();
    let align = |column: usize| aligns.get(column).copied().unwrap_or(Align::Left);
    let styled: Vec<Vec<Vec<Span>>> = rows
        .iter()
        .enumerate()
        .map(|(index, row)| {
            let base = if header && index == 0 { Style::TableHeader } else { Style::Plain };
            (0..count)
                .map(|column| row.get(column).map_or_else(Vec::new, |cell| inline(cell, base)))
                .collect()
        })
        .collect();
    let mut widths: Vec<usize> = (0..count)
        .map(|column| styled.iter().map(|row| row_width(&row[column])).max().unwrap_or(0).max(1))
        .collect();
    let borders = 3 * count + 1;
    if columns < borders + 3 * count {
        // Too narrow for boxes: each row as a line of cells.
        return styled
            .iter()
            .flat_map(|row| {
                let mut spans = Vec::new();
                for (column, cell) in row.iter().enumerate() {
                    if column > 0 {
                        spans.push(Span::new(Style::Frame, " │ "));
                    }
                    spans.extend(cell.iter().cloned());
                }
                wrap(&spans, columns, &[], &[Span::plain("  ")])
            })
            .collect();
    }
    while widths.iter().sum::<usize>() + borders > columns {
        let widest = (0..count).max_by_key(|&column| widths[column]).unwrap_or(0);
        widths[widest] -= 1;
    }
    let frame = |left: &str, middle: &str, right: &str| {
        let parts: Vec<String> = widths.iter().map(|width| "─".repeat(width + 2)).collect();
        vec![Span::new(Style::Frame, format!("{left}{}{right}", parts.join(middle)))]
    };
    let mut out = vec![frame("┌", "┬", "┐")];
    for (index, row) in styled.iter().enumerate() {
        let wrapped: Vec<Vec<Row>> = row
            .iter()
            .enumerate()
            .map(|(column, cell)| wrap(cell, widths[column], &[], &[]))
            .collect();
        let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
        for line in 0..height {
            let mut spans = vec![Span::new(Style::Frame, "│")];
            for (column, cell) in wrapped.iter().enumerate() {
                let content = cell.get(line).cloned().unwrap_or_default();
                let room = widths[column].saturating_sub(row_width(&content));
                let (before, after) = match align(column) {
                    Align::Left => (0, room),
                    Align::Right => (room, 0),
                    Align::Center => (room / 2, room - room / 2),
                };
                spans.push(Span::plain(" ".repeat(before + 1)));
                spans.extend(content);
                spans.push(Span::plain(" ".repeat(after + 1)));
                spans.push(Span::new(Style::Frame, "│"));
            }
            out.push(spans);
        }
        if header && index == 0 {
            out.push(frame("├", "┼", "┤"));
        }
    }
    out.push(frame("└", "┴", "┘"));
    out
}
