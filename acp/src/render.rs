//! Turns `session/update` variants into transcript pieces (`spec/acp.md` §2.6, §2.15, §2.17), in
//! the styles of `crate::style`, and follows what the agent is doing for the activity line. Pure:
//! the caller prints.

#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::change::{self, Change, DiffLine, OnDisk};
use crate::messages::{ContentBlock, PlanEntry, SessionUpdate, ToolCallContent, ToolCallUpdate};
use crate::style::{Row, Span, Style};

/// Who streamed text is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Voice {
    /// The agent's message.
    Agent,
    /// The agent's thoughts.
    Thought,
    /// The person's words, in a replayed history.
    User,
}

impl Voice {
    /// The style of the voice's plain text.
    pub(crate) fn style(self) -> Style {
        match self {
            Voice::Agent => Style::Plain,
            Voice::Thought => Style::Thought,
            Voice::User => Style::User,
        }
    }
}

/// A piece of the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Streamed text.
    Text(Voice, String),
    /// Streamed text that starts on a fresh line (a new speaker).
    Fresh(Voice, String),
    /// A whole line, started on a fresh line.
    Line(String),
    /// A whole line in styles.
    Styled(Row),
    /// The line of the tool call with this id (`[tool] TITLE (KIND, STATUS)`): on a terminal
    /// with colour it replaces the call's previous line when that is the last line shown.
    Tool(String, Row),
    /// A file change (`crate::change`), styled line by line when colour is allowed.
    Diff(Vec<DiffLine>),
    /// A whole line of lesser weight (an update this client does not know), dimmed when colour
    /// is allowed.
    DimLine(String),
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
    /// What the agent is doing, for the activity line.
    doing: Option<String>,
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
        self.follow(update);
        match update {
            SessionUpdate::UserMessage(block) => {
                self.user_open = true;
                if after_user {
                    // A file the person attached (an `@` mention) is set apart from their words.
                    let gap = if matches!(block, ContentBlock::Other(_)) { " " } else { "" };
                    vec![Piece::Text(Voice::User, format!("{gap}{}", block_text(block)))]
                } else {
                    vec![Piece::Fresh(Voice::User, format!("[you] {}", block_text(block)))]
                }
            }
            SessionUpdate::AgentMessage(block) if after_user => {
                vec![Piece::Fresh(Voice::Agent, block_text(block))]
            }
            SessionUpdate::AgentMessage(block) => {
                vec![Piece::Text(Voice::Agent, block_text(block))]
            }
            SessionUpdate::AgentThought(block) => {
                vec![Piece::Text(Voice::Thought, block_text(block))]
            }
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
            | SessionUpdate::Extra(_)
            | SessionUpdate::Ignored(_) => Vec::new(),
        }
    }

    /// Follows what the agent is doing (the activity line): writing, thinking, running a tool.
    fn follow(&mut self, update: &SessionUpdate) {
        let running = |state: &ToolState| match state.status.as_deref() {
            Some("completed" | "failed") => None,
            _ => Some(format!("running {}", state.title)),
        };
        self.doing = match update {
            SessionUpdate::AgentMessage(_) => Some("writing".to_owned()),
            SessionUpdate::AgentThought(_) => Some("thinking".to_owned()),
            SessionUpdate::ToolCall(call) => {
                running(&state_from(call.title.clone(), call.kind.clone(), call.status.clone()))
            }
            SessionUpdate::ToolCallUpdate(patch) => {
                let mut state = self
                    .tools
                    .get(&patch.tool_call_id)
                    .cloned()
                    .unwrap_or_else(|| state_from(patch.tool_call_id.clone(), None, None));
                if let Some(title) = &patch.title {
                    state.title.clone_from(title);
                }
                if patch.status.is_some() {
                    state.status.clone_from(&patch.status);
                }
                running(&state)
            }
            SessionUpdate::Plan(_) => Some("planning".to_owned()),
            // The person's words (a replay) and bookkeeping say nothing of what the agent does.
            _ => return,
        };
    }

    /// What the agent is doing, as far as its updates tell (`None`: nothing said yet this turn).
    pub(crate) fn doing(&self) -> Option<&str> {
        self.doing.as_deref()
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
                pieces.push(Piece::Tool(id.clone(), tool_row(&cancelled)));
            }
        }
        pieces
    }

    /// Forgets the turn's tool calls and the changes shown.
    pub(crate) fn end_turn(&mut self) {
        self.tools.clear();
        self.shown = Shown::default();
        self.doing = None;
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
    pub(crate) fn terminal_card(&self, terminal_id: &str) -> Option<(String, Row)> {
        let shows = |state: &&ToolState| {
            state
                .content
                .iter()
                .flatten()
                .any(|item| matches!(item, ToolCallContent::Terminal(id) if id == terminal_id))
        };
        let (id, state) = self.tools.iter().find(|(_, state)| shows(state))?;
        Some((id.clone(), tool_row(state)))
    }
}

fn state_from(title: String, kind: Option<String>, status: Option<String>) -> ToolState {
    ToolState { title, kind, status, content: None, shown: None }
}

/// The tool's line, once per change of what it shows (claude-agent-acp sent the same
/// `(other, pending)` three times in a row).
fn changed_line(id: &str, state: &mut ToolState) -> Vec<Piece> {
    let row = tool_row(state);
    let line: String = row.iter().map(|span| span.text.as_str()).collect();
    if state.shown.as_ref() == Some(&line) {
        return Vec::new();
    }
    state.shown = Some(line);
    vec![Piece::Tool(id.to_owned(), row)]
}

/// A result or content line under a tool's line.
fn detail(text: String) -> Piece {
    Piece::Styled(vec![Span::new(Style::Detail, text)])
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
            pieces.push(detail(format!("  {start}…")));
        } else {
            pieces.push(detail(format!("  {line}")));
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
        pieces.push(detail(format!("  {what}")));
        *last = Some(text.to_owned());
    }
    pieces
}

/// The line at the end of a turn that did not end normally (`end_turn` shows none).
pub(crate) fn stop_line(stop_reason: &str) -> Option<String> {
    (stop_reason != "end_turn").then(|| format!("[stop reason: {stop_reason}]"))
}

/// The rule that closes a turn: `─── 2.4 s ───…` to `columns`.
pub(crate) fn turn_rule(elapsed: std::time::Duration, columns: usize) -> Row {
    let label = format!("─── {} ", elapsed_text(elapsed));
    let fill = columns.saturating_sub(crate::style::width(&label)).max(3);
    vec![Span::new(Style::Frame, format!("{label}{}", "─".repeat(fill)))]
}

/// `0.4 s`, `12.0 s`, `2 min 05 s`.
pub(crate) fn elapsed_text(elapsed: std::time::Duration) -> String {
    let seconds = elapsed.as_secs();
    if seconds < 60 {
        format!("{:.1} s", elapsed.as_secs_f64())
    } else {
        format!("{} min {:02} s", seconds / 60, seconds % 60)
    }
}

/// `[tool] TITLE (KIND, STATUS)`, the marker and the status in the state's colour.
fn tool_row(state: &ToolState) -> Row {
    let status = state.status.as_deref().unwrap_or("pending");
    let style = match status {
        "in_progress" => Style::ToolRunning,
        "completed" => Style::ToolDone,
        "failed" => Style::ToolFailed,
        "cancelled" => Style::ToolCancelled,
        _ => Style::ToolPending,
    };
    vec![
        Span::new(style, "[tool]"),
        Span::new(Style::Strong, format!(" {}", state.title)),
        Span::new(Style::Detail, format!(" ({}, ", state.kind.as_deref().unwrap_or("other"))),
        Span::new(style, status),
        Span::new(Style::Detail, ")"),
    ]
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
                pieces.push(detail(match attach(terminal_id) {
                    Some(place) => format!("  terminal {terminal_id} runs in {place}"),
                    None => format!("  terminal {terminal_id}"),
                }));
            }
            ToolCallContent::Other(kind) => pieces.push(detail(format!("  [{kind}]"))),
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
    let title = format!("[plan] {done}/{} done", entries.len());
    let mut pieces = vec![Piece::Styled(vec![Span::new(Style::PlanTitle, title)])];
    for entry in entries {
        let priority =
            entry.priority.as_deref().map(|priority| format!(" ({priority})")).unwrap_or_default();
        let (mark, mark_style, text_style) = match entry.status.as_deref() {
            Some("completed") => ("[x]", Style::PlanDone, Style::Detail),
            Some("in_progress") => ("[~]", Style::PlanActive, Style::Strong),
            _ => ("[ ]", Style::PlanPending, Style::Plain),
        };
        pieces.push(Piece::Styled(vec![
            Span::plain("  "),
            Span::new(mark_style, mark),
            Span::new(text_style, format!(" {}", entry.content)),
            Span::new(Style::Detail, priority),
        ]));
    }
    pieces
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.clone(),
        ContentBlock::Other(description) => description.clone(),
    }
}
