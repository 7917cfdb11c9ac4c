//! A file change as the person is asked about it (`spec/acp.md` §2.15): the agent's `diff`
//! content (`path`, `oldText`, `newText`) resolved against the file as it was on disk when the
//! agent sent it, and drawn as a diff with true hunk headers, line numbers and end-of-file markers.
//! Pure: the file is read by [`Roots::on_disk`](crate::fs::Roots::on_disk), the lines are styled by
//! the UI.
//!
//! Agents describe a change in two ways. Some send the whole file (`oldText` the whole old content
//! or absent, `newText` the whole new one: fast-agent, Gemini CLI); others a fragment (`oldText` the
//! text replaced, `newText` its replacement: claude-agent-acp's `Edit`, codex-acp's hunks). Either
//! way, what the person sees is the file on disk against what it will hold:
//!
//! - the file does not exist: a new file holding `newText`;
//! - `oldText` absent, empty or the whole file: the file replaced by `newText`, whatever the agent
//!   claims the file held;
//! - `oldText` found in the file: every occurrence replaced by `newText`;
//! - `newText` found in the file, `oldText` not: the change is already there (a replayed history, a
//!   report after the fact), shown as the step from the file with `newText` put back to `oldText`;
//! - neither found: the file replaced by `newText`, the worst case, with a note saying so;
//! - the file cannot be read (outside the session roots, not text, too large): the agent's own old
//!   and new text, with a note saying why.

#[cfg(test)]
mod tests;

use std::time::Duration;

use similar::{ChangeTag, TextDiff};

/// The file a `diff` item names, as it was when the agent sent the item.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum OnDisk {
    /// Not read: the item was not decoded by the client (a unit test).
    #[default]
    Unread,
    /// The file does not exist.
    Missing,
    /// The file's text.
    Text(String),
    /// The file cannot be compared with: why (outside the session roots, not UTF-8, …).
    Unreadable(String),
}

/// A resolved change: what the file holds and what it will hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    pub(crate) path: String,
    pub(crate) before: String,
    pub(crate) after: String,
    /// The file does not exist yet.
    pub(crate) new_file: bool,
    /// What the person should know about how the change was resolved.
    pub(crate) note: Option<String>,
}

/// How a line of a drawn diff is styled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DiffStyle {
    /// `[diff] PATH (…)`.
    Title,
    /// A note on how the change was resolved, and `\ No newline at end of file`.
    Note,
    /// `@@ -3 +3 @@`.
    Hunk,
    Removed,
    Added,
    /// An unchanged line around a change.
    Context,
    /// Unchanged lines left out between two changes.
    Gap,
}

/// One line of a drawn diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DiffLine {
    pub(crate) style: DiffStyle,
    pub(crate) text: String,
}

/// Unchanged lines shown before and after each change.
const CONTEXT: usize = 3;

/// The longest a diff is computed for; past it the diff is coarser but still correct.
const DIFF_TIMEOUT: Duration = Duration::from_secs(1);

/// Resolves the agent's `diff` item against the file as it was on disk (the module's rules).
pub(crate) fn resolve(path: &str, old_text: Option<&str>, new_text: &str, disk: &OnDisk) -> Change {
    let change = |before: String, after: String, new_file: bool, note: Option<String>| Change {
        path: path.to_owned(),
        before,
        after,
        new_file,
        note,
    };
    let claimed = |why: &str| {
        change(
            old_text.unwrap_or_default().to_owned(),
            new_text.to_owned(),
            false,
            Some(format!("{why}: shown as the agent describes it (its own old and new text)")),
        )
    };
    let current = match disk {
        OnDisk::Unread => return claimed("the file was not read"),
        OnDisk::Unreadable(why) => return claimed(why),
        OnDisk::Missing => return change(String::new(), new_text.to_owned(), true, None),
        OnDisk::Text(current) => current,
    };
    let whole = |note: Option<String>| change(current.clone(), new_text.to_owned(), false, note);
    let old = match old_text {
        None | Some("") => return whole(None),
        Some(old) if old == current => return whole(None),
        Some(old) => old,
    };
    let occurrences = current.matches(old).count();
    if occurrences > 0 {
        let note = (occurrences > 1).then(|| {
            format!("the agent's old text occurs {occurrences} times in the file: all are replaced")
        });
        return change(current.clone(), current.replace(old, new_text), false, note);
    }
    if !new_text.is_empty() && current.contains(new_text) {
        let before = current.replacen(new_text, old, 1);
        let note = Some("the file already holds this change".to_owned());
        return change(before, current.clone(), false, note);
    }
    whole(Some(
        "the agent's old text is not in the file as it is now: shown as the whole file replaced by \
         its new text"
            .to_owned(),
    ))
}

impl Change {
    /// A change whose old side is known: a file written through `fs/write_text_file` (`before`
    /// `None`: it did not exist).
    pub(crate) fn written(path: &str, before: Option<&str>, after: &str) -> Change {
        Change {
            path: path.to_owned(),
            before: before.unwrap_or_default().to_owned(),
            after: after.to_owned(),
            new_file: before.is_none(),
            note: None,
        }
    }

    /// Lines removed and added.
    pub(crate) fn counts(&self) -> (usize, usize) {
        counts(&rows(&self.diff()))
    }

    /// `new file, 3 lines`, `2 lines removed, 3 added`, `no changes`.
    pub(crate) fn summary(&self) -> String {
        self.summary_of(self.counts())
    }

    fn summary_of(&self, (removed, added): (usize, usize)) -> String {
        let lines = |count: usize| if count == 1 { "line" } else { "lines" };
        if self.new_file {
            return format!("new file, {added} {}", lines(added));
        }
        match (removed, added) {
            (0, 0) => "no changes".to_owned(),
            (0, added) => format!("{added} {} added", lines(added)),
            (removed, 0) => format!("{removed} {} removed", lines(removed)),
            (removed, added) => format!("{removed} {} removed, {added} added", lines(removed)),
        }
    }

    /// The line that stands for a change already shown: `[diff] PATH: shown above (SUMMARY)`.
    pub(crate) fn shown_above(&self) -> DiffLine {
        DiffLine {
            style: DiffStyle::Title,
            text: format!("[diff] {}: shown above ({})", self.path, self.summary()),
        }
    }

    /// The whole drawing: `[diff] PATH (SUMMARY)`, the note, then every change as a zero-context
    /// hunk header (`diff -U0`'s: it counts exactly the changed lines below it) with up to
    /// [`CONTEXT`] unchanged lines around it; each line carries its old and new line numbers.
    pub(crate) fn lines(&self) -> Vec<DiffLine> {
        let line = |style, text: String| DiffLine { style, text };
        let mut lines =
            vec![line(DiffStyle::Title, format!("[diff] {} ({})", self.path, self.summary()))];
        if let Some(note) = &self.note {
            lines.push(line(DiffStyle::Note, format!("  ({note})")));
        }
        let diff = self.diff();
        let rows: Vec<Row> = diff
            .iter_all_changes()
            .map(|change| Row {
                tag: change.tag(),
                old: change.old_index(),
                new: change.new_index(),
                text: change.value().to_owned(),
            })
            .collect();
        let width = digits(diff.old_len().max(diff.new_len()));
        let runs = runs(&rows);
        // Rows below this index were shown.
        let mut shown = 0;
        for (index, &(start, end)) in runs.iter().enumerate() {
            let from = start.saturating_sub(CONTEXT).max(shown);
            if from > shown && shown > 0 {
                lines.push(line(DiffStyle::Gap, format!("  {:>width$} {:>width$} ⋮", "", "")));
            }
            for row in &rows[from..start] {
                lines.extend(row.lines(width));
            }
            lines.push(line(DiffStyle::Hunk, format!("  {}", header(&rows, start, end))));
            for row in &rows[start..end] {
                lines.extend(row.lines(width));
            }
            let next = runs.get(index + 1).map_or(rows.len(), |&(next, _)| next);
            let until = (end + CONTEXT).min(next);
            for row in &rows[end..until] {
                lines.extend(row.lines(width));
            }
            shown = until;
        }
        lines
    }

    fn diff(&self) -> TextDiff<'_, '_, str> {
        TextDiff::configure().timeout(DIFF_TIMEOUT).diff_lines(&self.before, &self.after)
    }
}

/// A line of the diff with its 0-based numbers on each side.
#[derive(Debug)]
struct Row {
    tag: ChangeTag,
    old: Option<usize>,
    new: Option<usize>,
    text: String,
}

impl Row {
    /// The row as drawn (`  OLD NEW - text`), and the end-of-file marker when its side's last line
    /// has no newline.
    fn lines(&self, width: usize) -> Vec<DiffLine> {
        let number = |index: Option<usize>| index.map(|index| (index + 1).to_string());
        let (style, sign) = match self.tag {
            ChangeTag::Equal => (DiffStyle::Context, ' '),
            ChangeTag::Delete => (DiffStyle::Removed, '-'),
            ChangeTag::Insert => (DiffStyle::Added, '+'),
        };
        let text = self.text.strip_suffix('\n').unwrap_or(&self.text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let mut lines = vec![DiffLine {
            style,
            text: format!(
                "  {:>width$} {:>width$} {sign} {}",
                number(self.old).unwrap_or_default(),
                number(self.new).unwrap_or_default(),
                printable(text)
            ),
        }];
        if !self.text.ends_with('\n') {
            lines.push(DiffLine {
                style: DiffStyle::Note,
                text: "  \\ No newline at end of file".to_owned(),
            });
        }
        lines
    }
}

fn rows(diff: &TextDiff<'_, '_, str>) -> Vec<Row> {
    diff.iter_all_changes()
        .map(|change| Row {
            tag: change.tag(),
            old: change.old_index(),
            new: change.new_index(),
            text: change.value().to_owned(),
        })
        .collect()
}

/// Rows removed and added.
fn counts(rows: &[Row]) -> (usize, usize) {
    let count = |tag| rows.iter().filter(|row| row.tag == tag).count();
    (count(ChangeTag::Delete), count(ChangeTag::Insert))
}

/// The maximal runs of changed rows, as `(start, end)` indexes.
fn runs(rows: &[Row]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut start = None;
    for (index, row) in rows.iter().enumerate() {
        match (row.tag, start) {
            (ChangeTag::Equal, Some(from)) => {
                runs.push((from, index));
                start = None;
            }
            (ChangeTag::Equal, None) | (_, Some(_)) => {}
            (_, None) => start = Some(index),
        }
    }
    if let Some(from) = start {
        runs.push((from, rows.len()));
    }
    runs
}

/// The zero-context unified hunk header of the changed rows `start..end`, as `diff -U0` writes
/// it: `-START,COUNT +START,COUNT`, a count of 1 left out, and an empty side named by the line
/// before it (`-2,0`).
fn header(rows: &[Row], start: usize, end: usize) -> String {
    let before = &rows[..start];
    let old_before = before.iter().filter(|row| row.tag != ChangeTag::Insert).count();
    let new_before = before.iter().filter(|row| row.tag != ChangeTag::Delete).count();
    let run = &rows[start..end];
    let removed = run.iter().filter(|row| row.tag == ChangeTag::Delete).count();
    let added = run.iter().filter(|row| row.tag == ChangeTag::Insert).count();
    format!("@@ -{} +{} @@", range(old_before, removed), range(new_before, added))
}

fn range(before: usize, count: usize) -> String {
    match count {
        0 => format!("{before},0"),
        1 => (before + 1).to_string(),
        count => format!("{},{count}", before + 1),
    }
}

fn digits(mut number: usize) -> usize {
    let mut digits = 1;
    while number >= 10 {
        number /= 10;
        digits += 1;
    }
    digits
}

/// The text with control characters (a tab aside) shown as `�`, so that a file cannot move the
/// cursor or restyle the terminal.
fn printable(text: &str) -> String {
    text.chars().map(|c| if c.is_control() && c != '\t' { '\u{FFFD}' } else { c }).collect()
}
