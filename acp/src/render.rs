//! Turns `session/update` variants into transcript pieces (`spec/acp.md` §2.6, §2.15). Pure: the
//! caller prints.

#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::change::{self, Change, DiffLine, OnDisk};
use crate::messages::{ContentBlock, PlanEntry, SessionUpdate, ToolCallContent, ToolCallUpdate};

/// A piece of the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Streamed text, printed as is.
    Text(String),
    /// Streamed text that starts on a fresh line (a new speaker).
    Fresh(String),
    /// Streamed text, dimmed when colour is allowed (thoughts).
    Dim(String),
    /// A whole line, started on a fresh line.
    Line(String),
    /// The line of the tool call with this id (`[tool] TITLE (KIND, STATUS)`): on a terminal
    /// with colour it replaces the call's previous line when that is the last line shown.
    Tool(String, String),
    /// A file change (`crate::change`), styled line by line when colour is allowed.
    Diff(Vec<DiffLine>),
}

/// How many lines of a tool's result are shown; a longer one is cut, and `/last` shows it whole.
const RESULT_LINES: usize = 6;
/// How many characters of one result line are shown.
const RESULT_LINE_CHARS: usize = 160;

/// What the renderer remembers about tool calls within a turn.
#[derive(Debug, Default)]
pub(crate) struct Renderer {
    tools: HashMap<String, ToolState>,
    /// The whole text of the last tool result that was shortened (`/last`).
    last_result: Option<String>,
    /// The last streamed text was the person's (a replayed history): the agent's next text starts
    /// on a fresh line.
    user_open: bool,
    shown: Shown,
}

/// The file changes shown in this turn, so that each is shown once: an agent repeats a change in
/// its tool call, its updates, its permission ask and its `fs/write_text_file`, often with
/// different claims about the old text.
#[derive(Debug, Default)]
struct Shown {
    /// The agent's `diff` items seen (path, old text, new text).
    claims: HashSet<u64>,
    /// The resolved changes drawn (path, the file's text, its new text).
    changes: HashSet<u64>,
}

impl Shown {
    /// A `diff` item of a tool call or its update: drawn unless the same item or the same
    /// resolved change was seen.
    fn update(&mut self, item: (&str, Option<&str>, &str, &OnDisk)) -> Option<Vec<DiffLine>> {
        let (path, old_text, new_text, disk) = item;
        if !self.claims.insert(key(&(path, old_text, new_text))) {
            return None;
        }
        let change = change::resolve(path, old_text, new_text, disk);
        self.changes.insert(change_key(&change)).then(|| change.lines())
    }

    /// A `diff` item of a permission ask: always said, drawn unless the same resolved change was
    /// drawn (then one line says it is shown above).
    fn ask(&mut self, item: (&str, Option<&str>, &str, &OnDisk)) -> Vec<DiffLine> {
        let (path, old_text, new_text, disk) = item;
        self.claims.insert(key(&(path, old_text, new_text)));
        let change = change::resolve(path, old_text, new_text, disk);
        if self.changes.insert(change_key(&change)) {
            change.lines()
        } else {
            vec![change.shown_above()]
        }
    }

    /// A change made by `fs/write_text_file`: drawn unless it was drawn already.
    fn written(&mut self, change: &Change) -> Option<Vec<DiffLine>> {
        self.changes.insert(change_key(change)).then(|| change.lines())
    }
}

fn key(value: &impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

fn change_key(change: &Change) -> u64 {
    key(&(&change.path, &change.before, &change.after, change.new_file))
}

/// The `diff` items of a tool call's content.
fn diff_items(
    content: Option<&Vec<ToolCallContent>>,
) -> impl Iterator<Item = (&str, Option<&str>, &str, &OnDisk)> {
    content.into_iter().flatten().filter_map(|item| match item {
        ToolCallContent::Diff { path, old_text, new_text, disk } => {
            Some((path.as_str(), old_text.as_deref(), new_text.as_str(), disk))
        }
        _ => None,
    })
}

#[derive(Debug, Clone, Default)]
struct ToolState {
    title: String,
    kind: Option<String>,
    status: Option<String>,
    content: Option<Vec<ToolCallContent>>,
    /// The tool's line as last printed: a patch that changes nothing shown prints nothing.
    shown: Option<String>,
}

impl Renderer {
    /// The pieces for one update; `attach` names where a terminal runs ("tmux: COMMAND", "the
    /// canvas node ID"), if known.
    pub(crate) fn update(
        &mut self,
        update: &SessionUpdate,
        attach: &dyn Fn(&str) -> Option<String>,
    ) -> Vec<Piece> {
        let after_user = std::mem::take(&mut self.user_open);
        match update {
            SessionUpdate::UserMessage(block) => {
                self.user_open = true;
                if after_user {
                    vec![Piece::Text(block_text(block))]
                } else {
                    vec![Piece::Fresh(format!("[you] {}", block_text(block)))]
                }
            }
            SessionUpdate::AgentMessage(block) if after_user => {
                vec![Piece::Fresh(block_text(block))]
            }
            SessionUpdate::AgentMessage(block) => vec![Piece::Text(block_text(block))],
            SessionUpdate::AgentThought(block) => vec![Piece::Dim(block_text(block))],
            SessionUpdate::ToolCall(call) => {
                let state = self.tools.entry(call.tool_call_id.clone()).or_default();
                let shown = state.shown.take();
                *state = state_from(call.title.clone(), call.kind.clone(), call.status.clone());
                state.shown = shown;
                let mut pieces = changed_line(&call.tool_call_id, state);
                pieces.extend(content_pieces(
                    state,
                    call.content.as_ref(),
                    attach,
                    &mut self.last_result,
                    &mut self.shown,
                ));
                pieces
            }
            SessionUpdate::ToolCallUpdate(patch) => {
                let state = self
                    .tools
                    .entry(patch.tool_call_id.clone())
                    .or_insert_with(|| state_from(patch.tool_call_id.clone(), None, None));
                if let Some(title) = &patch.title {
                    state.title.clone_from(title);
                }
                if patch.kind.is_some() {
                    state.kind.clone_from(&patch.kind);
                }
                if patch.status.is_some() {
                    state.status.clone_from(&patch.status);
                }
                let mut pieces = changed_line(&patch.tool_call_id, state);
                pieces.extend(content_pieces(
                    state,
                    patch.content.as_ref(),
                    attach,
                    &mut self.last_result,
                    &mut self.shown,
                ));
                pieces
            }
            SessionUpdate::Plan(entries) => plan_pieces(entries),
            SessionUpdate::CurrentMode(_)
            | SessionUpdate::ConfigOptions(_)
            | SessionUpdate::Commands(_)
            | SessionUpdate::Ignored(_) => Vec::new(),
        }
    }

    /// Marks tool calls that had not finished as cancelled, after a cancelled turn.
    pub(crate) fn cancel_unfinished(&mut self) -> Vec<Piece> {
        let mut pieces = Vec::new();
        let mut ids: Vec<&String> = self.tools.keys().collect();
        ids.sort();
        for id in ids {
            let state = &self.tools[id];
            if matches!(state.status.as_deref(), None | Some("pending" | "in_progress")) {
                let cancelled = ToolState { status: Some("cancelled".to_owned()), ..state.clone() };
                pieces.push(Piece::Tool(id.clone(), tool_line(&cancelled)));
            }
        }
        pieces
    }

    /// Forgets the turn's tool calls and the changes shown.
    pub(crate) fn end_turn(&mut self) {
        self.tools.clear();
        self.shown = Shown::default();
    }

    /// The changes a permission ask is about: its own `diff` items, else those its tool call
    /// carried so far in this turn; one already drawn is one line saying so.
    pub(crate) fn ask_changes(&mut self, tool_call: &ToolCallUpdate) -> Vec<Piece> {
        let own = diff_items(tool_call.content.as_ref()).next().is_some();
        let content = if own {
            tool_call.content.as_ref()
        } else {
            self.tools.get(&tool_call.tool_call_id).and_then(|state| state.content.as_ref())
        };
        diff_items(content).map(|item| Piece::Diff(self.shown.ask(item))).collect()
    }

    /// The change an `fs/write_text_file` made (`before` `None`: the file was created), unless it
    /// was drawn already.
    pub(crate) fn written(&mut self, path: &str, before: Option<&str>, after: &str) -> Vec<Piece> {
        let change = Change::written(path, before, after);
        self.shown.written(&change).map(Piece::Diff).into_iter().collect()
    }

    /// The whole text of the last tool result that was shortened.
    pub(crate) fn last_result(&self) -> Option<&str> {
        self.last_result.as_deref()
    }
}

impl Renderer {
    /// The tool call that shows the terminal `terminal_id`, and its line as it stands: a wait's
    /// progress is shown on it (issue 38 item 4).
    pub(crate) fn terminal_card(&self, terminal_id: &str) -> Option<(String, String)> {
        let shows = |state: &&ToolState| {
            state
                .content
                .iter()
                .flatten()
                .any(|item| matches!(item, ToolCallContent::Terminal(id) if id == terminal_id))
        };
        let (id, state) = self.tools.iter().find(|(_, state)| shows(state))?;
        Some((id.clone(), tool_line(state)))
    }
}

fn state_from(title: String, kind: Option<String>, status: Option<String>) -> ToolState {
    ToolState { title, kind, status, content: None, shown: None }
}

/// The tool's line, once per change of what it shows (claude-agent-acp sent the same
/// `(other, pending)` three times in a row).
fn changed_line(id: &str, state: &mut ToolState) -> Vec<Piece> {
    let line = tool_line(state);
    if state.shown.as_ref() == Some(&line) {
        return Vec::new();
    }
    state.shown = Some(line.clone());
    vec![Piece::Tool(id.to_owned(), line)]
}

/// A tool's text result, indented, cut to [`RESULT_LINES`] lines of at most
/// [`RESULT_LINE_CHARS`] characters; when cut, `last` keeps the whole text for `/last`.
fn result_lines(text: &str, last: &mut Option<String>) -> Vec<Piece> {
    let lines: Vec<&str> = text.lines().collect();
    let mut cut = lines.len() > RESULT_LINES;
    let shown = if cut { RESULT_LINES - 1 } else { lines.len() };
    let mut pieces = Vec::new();
    for line in &lines[..shown] {
        if line.chars().count() > RESULT_LINE_CHARS {
            cut = true;
            let start: String = line.chars().take(RESULT_LINE_CHARS).collect();
            pieces.push(Piece::Line(format!("  {start}…")));
        } else {
            pieces.push(Piece::Line(format!("  {line}")));
        }
    }
    if cut {
        let more = lines.len() - shown;
        let what = if more == 0 {
            "(shortened; /last shows the whole result)".to_owned()
        } else {
            format!(
                "(… {more} more line{}; /last shows the whole result)",
                if more == 1 { "" } else { "s" }
            )
        };
        pieces.push(Piece::Line(format!("  {what}")));
        *last = Some(text.to_owned());
    }
    pieces
}

/// The line at the end of a turn.
pub(crate) fn stop_line(stop_reason: &str) -> String {
    format!("[stop reason: {stop_reason}]")
}

fn tool_line(state: &ToolState) -> String {
    format!(
        "[tool] {} ({}, {})",
        state.title,
        state.kind.as_deref().unwrap_or("other"),
        state.status.as_deref().unwrap_or("pending")
    )
}

/// Content is shown when it first appears or changes, so repeated patches do not repeat it; a file
/// change is shown once in the turn.
fn content_pieces(
    state: &mut ToolState,
    content: Option<&Vec<ToolCallContent>>,
    attach: &dyn Fn(&str) -> Option<String>,
    last: &mut Option<String>,
    shown: &mut Shown,
) -> Vec<Piece> {
    let Some(content) = content else {
        return Vec::new();
    };
    if state.content.as_ref().is_some_and(|shown| same_content(shown, content)) {
        return Vec::new();
    }
    state.content = Some(content.clone());
    let mut pieces = Vec::new();
    for item in content {
        match item {
            ToolCallContent::Content(block) => {
                pieces.extend(result_lines(&block_text(block), last));
            }
            ToolCallContent::Diff { path, old_text, new_text, disk } => {
                let item = (path.as_str(), old_text.as_deref(), new_text.as_str(), disk);
                pieces.extend(shown.update(item).map(Piece::Diff));
            }
            ToolCallContent::Terminal(terminal_id) => {
                pieces.push(Piece::Line(match attach(terminal_id) {
                    Some(place) => format!("  terminal {terminal_id} runs in {place}"),
                    None => format!("  terminal {terminal_id}"),
                }));
            }
            ToolCallContent::Other(kind) => pieces.push(Piece::Line(format!("  [{kind}]"))),
        }
    }
    pieces
}

/// Whether two contents say the same, whatever the files their `diff` items name held when each
/// arrived (a repeated patch after a write is still the same).
fn same_content(shown: &[ToolCallContent], content: &[ToolCallContent]) -> bool {
    let claim = |item: &ToolCallContent| match item {
        ToolCallContent::Diff { path, old_text, new_text, .. } => {
            Some((path.clone(), old_text.clone(), new_text.clone()))
        }
        _ => None,
    };
    shown.len() == content.len()
        && shown.iter().zip(content).all(|(before, now)| match (claim(before), claim(now)) {
            (None, None) => before == now,
            (claim_before, claim_now) => claim_before == claim_now,
        })
}

/// A plan as a checklist with its progress: `[x]` completed, `[~]` in progress, `[ ]` pending.
fn plan_pieces(entries: &[PlanEntry]) -> Vec<Piece> {
    let done = entries.iter().filter(|entry| entry.status.as_deref() == Some("completed")).count();
    let mut pieces = vec![Piece::Line(format!("[plan] {done}/{} done", entries.len()))];
    for entry in entries {
        let priority =
            entry.priority.as_deref().map(|priority| format!(" ({priority})")).unwrap_or_default();
        let mark = match entry.status.as_deref() {
            Some("completed") => "[x]",
            Some("in_progress") => "[~]",
            _ => "[ ]",
        };
        pieces.push(Piece::Line(format!("  {mark} {}{priority}", entry.content)));
    }
    pieces
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.clone(),
        ContentBlock::Other(description) => description.clone(),
    }
}
