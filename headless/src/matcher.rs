//! What `terminal_search` and `terminal_wait` look for (protocol 1.5.0): one text, several
//! (`anyOf`), or patterns (`regex: true`, in the dialect of `spec/protocol.md` §5.1, checked by
//! `termsprawl_protocol::pattern` and run by the `regex` crate, whose matching time is linear in
//! the text).
//!
//! Every text or pattern becomes one regular expression (a text escaped), and the alternatives
//! one more, so one pass over the output finds the earliest match of any of them; the index of
//! the one that matched is asked only then. `^` and `$` match at line starts and ends.

use regex::{Regex, RegexBuilder};
use termsprawl_protocol::pattern;

use crate::error::{ToolError, messages};

/// How far before the end of the text searched so far a pattern's match may start and still be
/// found by the next search (see [`Matcher::overlap`]), in characters: a waiter searches again
/// from the start of the line still being printed, but no further back than this, so that a
/// line printed in many pieces (a progress bar, whose carriage returns the stream drops) costs
/// what was printed, not the square of it; a pattern's match that starts further back in such a
/// line when the line goes on is not found (`spec/protocol.md` §4.6).
pub(crate) const PATTERN_REACH: u64 = 16 * 1024;

/// Compiled texts or patterns.
#[derive(Debug, Clone)]
pub(crate) struct Matcher {
    /// Any of them.
    any: Regex,
    /// Each of them, when there are several.
    each: Vec<Regex>,
    /// The longest text's length in characters; `None` for patterns.
    longest: Option<u64>,
}

impl Matcher {
    /// `texts` (at least one), literal or, with `regex`, patterns; a pattern outside the dialect
    /// or that does not compile is [`messages::invalid_pattern`].
    pub(crate) fn new(texts: &[String], regex: bool) -> Result<Matcher, ToolError> {
        let sources = texts
            .iter()
            .map(|text| {
                if !regex {
                    return Ok(regex::escape(text));
                }
                pattern::check(text)
                    .map_err(|reason| ToolError::new(messages::invalid_pattern(&reason)))?;
                Ok(pattern::to_rust(text))
            })
            .collect::<Result<Vec<String>, ToolError>>()?;
        let each = if sources.len() > 1 {
            sources.iter().map(|source| compile(source)).collect::<Result<Vec<_>, _>>()?
        } else {
            Vec::new()
        };
        let alternatives: Vec<String> = sources.iter().map(|s| format!("(?:{s})")).collect();
        let any = compile(&alternatives.join("|"))?;
        let longest = (!regex).then(|| texts.iter().map(|t| t.chars().count() as u64).max());
        Ok(Matcher { any, each, longest: longest.flatten() })
    }

    /// One literal text (the waits of `terminal_run`'s tests and of `until: text`).
    #[cfg(test)]
    pub(crate) fn literal(text: &str) -> Matcher {
        Matcher::new(&[text.to_owned()], false).expect("a literal always compiles")
    }

    /// The earliest match in `text` starting at byte `start` or later (what comes before counts
    /// for `^` and word boundaries): the index of the text or pattern that matched (the first
    /// of those that match there) and the byte its match starts at. A text may span lines; a
    /// pattern's match lies within one line (`spec/protocol.md` §5.1), the line still being
    /// printed being a line as far as it has come.
    pub(crate) fn find_at(&self, text: &str, start: usize) -> Option<(u32, usize)> {
        if self.longest.is_some() {
            let found = self.any.find_at(text, start)?.start();
            return Some((self.index_at(text, found), found));
        }
        let mut at = start;
        loop {
            // The leftmost match in the whole text starts at or before any match within a line
            // (`^`, `$` and `\b` mean the same at a line's ends), so the line it starts in is
            // searched from there; a match that ran over the line's end is not one.
            let candidate = self.any.find_at(text, at)?.start();
            let line_start = text[..candidate].rfind('\n').map_or(0, |i| i + 1);
            let line_end = text[candidate..].find('\n').map_or(text.len(), |i| candidate + i);
            let line = &text[line_start..line_end];
            if let Some(found) = self.any.find_at(line, candidate - line_start) {
                let found = found.start();
                return Some((self.index_at(line, found), line_start + found));
            }
            if line_end >= text.len() {
                return None;
            }
            at = line_end + 1;
        }
    }

    /// The index of the first text or pattern that matches in `text` at byte `at`, where one of
    /// them does: a search from there finds its match there if it has one.
    fn index_at(&self, text: &str, at: usize) -> u32 {
        let index = self
            .each
            .iter()
            .position(|each| each.find_at(text, at).is_some_and(|m| m.start() == at))
            .unwrap_or(0);
        u32::try_from(index).unwrap_or(0)
    }

    /// Whether this is a pattern (its matches lie within one line) rather than texts.
    pub(crate) fn is_pattern(&self) -> bool {
        self.longest.is_none()
    }

    /// Where the earliest match in `text` at byte `start` or later starts.
    pub(crate) fn find_start(&self, text: &str, start: usize) -> Option<usize> {
        self.any.find_at(text, start).map(|found| found.start())
    }

    /// Whether `line` (one line, without its line feed) holds a match.
    pub(crate) fn is_match(&self, line: &str) -> bool {
        self.any.is_match(line)
    }

    /// How many characters before the end of the text searched so far a match found by the next
    /// search may start: a text's length minus one; for a pattern, [`PATTERN_REACH`] (the
    /// caller starts no earlier than the line still being printed either).
    pub(crate) fn overlap(&self) -> u64 {
        self.longest.map_or(PATTERN_REACH, |longest| longest.saturating_sub(1))
    }
}

/// `source` compiled, `^` and `$` at line boundaries.
fn compile(source: &str) -> Result<Regex, ToolError> {
    RegexBuilder::new(source)
        .multi_line(true)
        .build()
        .map_err(|error| ToolError::new(messages::invalid_pattern(&engine_reason(&error))))
}

/// The reason of a `regex` error on one line: a syntax error's last line (`error: …`), without
/// the pattern and the caret the crate draws above it.
fn engine_reason(error: &regex::Error) -> String {
    let text = error.to_string();
    let last = text.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or_default();
    let reason = last.trim().strip_prefix("error: ").unwrap_or(last.trim());
    reason.trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests;
