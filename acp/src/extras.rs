//! The `session/update` variants ACP added after the first version, and those this client does
//! not know (`spec/acp.md` §2.18): the context and cost of `usage_update` (kept for `/status` and
//! shown compactly after a turn), `notice` and `compaction_update` as one line each, and an
//! unknown variant as one dim line, once per variant and turn: never dropped silently, never
//! fatal.
//!
//! Pure: the chat prints the pieces.

#[cfg(test)]
mod tests;

use std::collections::HashSet;

use crate::messages::{Extra, Usage};
use crate::render::Piece;
use crate::style::{Span, Style};

/// What the session's extra updates left: the latest usage and the unknown variants seen.
#[derive(Debug, Default)]
pub(crate) struct Extras {
    usage: Option<Usage>,
    /// The usage changed since it was last shown after a turn.
    usage_changed: bool,
    /// The unknown variants shown in this turn (each is shown once per turn).
    unknown_shown: HashSet<String>,
}

impl Extras {
    /// The pieces an extra update shows.
    pub(crate) fn update(&mut self, extra: &Extra) -> Vec<Piece> {
        match extra {
            Extra::Usage(usage) => {
                if self.usage.as_ref() != Some(usage) {
                    self.usage = Some(usage.clone());
                    self.usage_changed = true;
                }
                Vec::new()
            }
            Extra::Notice { severity, title, description } => {
                let label = match severity.as_str() {
                    "info" => "[notice]".to_owned(),
                    other => format!("[notice {other}]"),
                };
                let detail = description
                    .as_deref()
                    .filter(|text| !text.trim().is_empty())
                    .map(|text| format!(": {}", one_line(text)))
                    .unwrap_or_default();
                vec![Piece::Line(format!("{label} {}{detail}", one_line(title)))]
            }
            Extra::Compaction { id, status, error } => {
                let what = match (status.as_str(), error.as_deref()) {
                    ("in_progress", _) => "compacting the context…".to_owned(),
                    ("completed", _) => "the context was compacted".to_owned(),
                    ("failed", Some(error)) => format!("compacting the context failed: {error}"),
                    ("failed", None) => "compacting the context failed".to_owned(),
                    ("cancelled", _) => "compacting the context was cancelled".to_owned(),
                    (other, _) => format!("context compaction: {other}"),
                };
                // One line per compaction: on a terminal each status replaces the last.
                let row = vec![Span::new(Style::Detail, format!("[compaction] {what}"))];
                vec![Piece::Tool(format!("compaction {id}"), row)]
            }
            Extra::CompactionSummary(_) => Vec::new(),
            Extra::Unknown(name) => {
                if !self.unknown_shown.insert(name.clone()) {
                    return Vec::new();
                }
                vec![Piece::DimLine(format!(
                    "[update] {name}: a session/update this client does not know (not shown)"
                ))]
            }
        }
    }

    /// A new turn: unknown variants are shown again once.
    pub(crate) fn start_turn(&mut self) {
        self.unknown_shown.clear();
    }

    /// After a turn: the compact usage line, when the usage changed during it.
    pub(crate) fn after_turn(&mut self) -> Option<String> {
        if !std::mem::take(&mut self.usage_changed) {
            return None;
        }
        self.usage.as_ref().map(|usage| format!("[usage] {}", compact(usage)))
    }

    /// The line of `/status`.
    pub(crate) fn status_line(&self) -> String {
        match &self.usage {
            Some(usage) => {
                let cost = usage
                    .cost
                    .as_ref()
                    .map(|(amount, currency)| format!(", cost {amount:.2} {currency}"))
                    .unwrap_or_default();
                format!(
                    "[status] context {} of {} tokens ({}){cost}",
                    usage.used,
                    usage.size,
                    percent(usage)
                )
            }
            None => "[status] context: the agent has not reported its usage".to_owned(),
        }
    }
}

/// `12.3k/200k tokens (6%) · 0.52 USD`.
fn compact(usage: &Usage) -> String {
    let cost = usage
        .cost
        .as_ref()
        .map(|(amount, currency)| format!(" · {amount:.2} {currency}"))
        .unwrap_or_default();
    format!("{}/{} tokens ({}){cost}", short(usage.used), short(usage.size), percent(usage))
}

/// The share of the context used, in whole percent.
fn percent(usage: &Usage) -> String {
    if usage.size == 0 {
        return "-%".to_owned();
    }
    let share = u128::from(usage.used) * 100 / u128::from(usage.size);
    format!("{share}%")
}

/// `950`, `12.3k`, `200k`, `1.5M`.
fn short(count: u64) -> String {
    let (value, unit) = match count {
        0..1000 => return count.to_string(),
        1000..1_000_000 => (count * 10 / 1000, "k"),
        _ => (count / 100_000, "M"),
    };
    if value % 10 == 0 || value >= 1000 {
        format!("{}{unit}", value / 10)
    } else {
        format!("{}.{}{unit}", value / 10, value % 10)
    }
}

/// The text on one line: line breaks become spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
