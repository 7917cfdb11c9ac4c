//! Agent messages rendered from Markdown for a terminal (`docs/acp.md`, "The transcript"): streamed
//! text is held until its line is complete, then each line is styled with SGR sequences: headings
//! bold, `**strong**` bold, `*emphasis*` italic, `` `code` `` in cyan, list bullets as `•`, and
//! fenced code blocks kept verbatim (their fence lines, with the language, dimmed). Inline Markdown
//! is parsed by `pulldown-cmark`; blocks are told apart line by line, because the text arrives in
//! chunks and a line must be shown as soon as it ends. Used only when colour is allowed; otherwise
//! the text is shown exactly as the agent sent it.

#[cfg(test)]
mod tests;

use std::fmt::Write as _;

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

const BOLD: &str = "\x1b[1m";
const ITALIC: &str = "\x1b[3m";
const DIM: &str = "\x1b[2m";
const CYAN: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

/// The line being streamed and whether it is inside a fenced code block.
#[derive(Debug, Default)]
pub(crate) struct Markdown {
    pending: String,
    in_fence: bool,
}

impl Markdown {
    /// Takes streamed text; returns the styled text of every line it completed.
    pub(crate) fn feed(&mut self, text: &str) -> String {
        self.pending.push_str(text);
        let mut out = String::new();
        while let Some(end) = self.pending.find('\n') {
            let line: String = self.pending.drain(..=end).collect();
            out.push_str(&self.line(line.trim_end_matches('\n')));
            out.push('\n');
        }
        out
    }

    /// The styled text of a line left open (at the end of a message).
    pub(crate) fn flush(&mut self) -> String {
        let line = std::mem::take(&mut self.pending);
        if line.is_empty() { String::new() } else { self.line(&line) }
    }

    fn line(&mut self, line: &str) -> String {
        if line.trim_start().starts_with("```") {
            self.in_fence = !self.in_fence;
            return format!("{DIM}{line}{RESET}");
        }
        if self.in_fence {
            return line.to_owned();
        }
        let indent = &line[..line.len() - line.trim_start().len()];
        let rest = line.trim_start();
        if rest.starts_with('#') {
            let title = rest.trim_start_matches('#');
            if title.is_empty() || title.starts_with(' ') {
                return format!("{indent}{BOLD}{rest}{RESET}");
            }
        }
        for bullet in ["- ", "* ", "+ "] {
            if let Some(item) = rest.strip_prefix(bullet) {
                return format!("{indent}• {}", inline(item));
            }
        }
        // `1. item` and `> quote` keep their marker; only the rest is inline Markdown.
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && rest[digits..].starts_with(". ") {
            let (marker, item) = rest.split_at(digits + 2);
            return format!("{indent}{marker}{}", inline(item));
        }
        if let Some(quote) = rest.strip_prefix("> ") {
            return format!("{indent}> {}", inline(quote));
        }
        format!("{indent}{}", inline(rest))
    }
}

/// One line's inline Markdown, styled; what the parser does not style is kept as text.
fn inline(text: &str) -> String {
    let mut out = String::new();
    let mut links = Vec::new();
    for event in Parser::new(text) {
        match event {
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => out.push_str(&text),
            Event::Code(code) => {
                let _ = write!(out, "{CYAN}`{code}`{RESET}");
            }
            Event::Start(Tag::Strong) => out.push_str(BOLD),
            Event::Start(Tag::Emphasis) => out.push_str(ITALIC),
            Event::End(TagEnd::Strong | TagEnd::Emphasis) => out.push_str(RESET),
            Event::SoftBreak | Event::HardBreak => out.push(' '),
            Event::Start(Tag::Link { dest_url, .. }) => links.push(dest_url),
            Event::End(TagEnd::Link) => {
                if let Some(url) = links.pop() {
                    let _ = write!(out, " ({url})");
                }
            }
            _ => {}
        }
    }
    // A line the parser read as something else (a numbered list, a quote) keeps its text.
    if out.is_empty() { text.to_owned() } else { out }
}
