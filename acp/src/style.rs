//! The transcript's one colour scheme (`spec/acp.md` §2.17): every style the front end paints,
//! named by what it marks (the person's prompt, a thought, a tool's state, a removed line, a code
//! keyword…), and the SGR sequence of each. Nothing else in the crate writes an escape sequence
//! for colour: renderers produce [`Span`]s, the UI paints them with [`paint`] when colour is
//! allowed ([`color_allowed`]) and writes their text alone otherwise.

use std::fmt::Write as _;

use unicode_width::UnicodeWidthChar;

/// What a piece of text is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Style {
    /// The terminal's own colours.
    #[default]
    Plain,
    /// The person's words (`[you] …`, the prompt's `>`).
    User,
    /// The agent's thoughts.
    Thought,
    /// Markdown headings.
    Heading,
    /// `**strong**`.
    Strong,
    /// `*emphasis*`.
    Emphasis,
    /// `` `code` `` within text.
    InlineCode,
    /// A link's address.
    Link,
    /// The bar of a block quote, and its text.
    Quote,
    /// A list's bullet or number.
    Bullet,
    /// Table borders, code block frames, the rule between turns: structure, not content.
    Frame,
    /// A table's header cells.
    TableHeader,
    /// A code block's language name.
    CodeLanguage,
    /// A keyword in a code block.
    CodeKeyword,
    /// A string literal in a code block.
    CodeString,
    /// A comment in a code block.
    CodeComment,
    /// A number or a literal such as `true` in a code block.
    CodeNumber,
    /// A tool call not started yet (`pending`).
    ToolPending,
    /// A tool call running (`in_progress`).
    ToolRunning,
    /// A tool call that ended well (`completed`).
    ToolDone,
    /// A tool call that failed.
    ToolFailed,
    /// A tool call cancelled with its turn.
    ToolCancelled,
    /// A tool's result lines and other quiet detail.
    Detail,
    /// A permission ask: its `[permission]` line and its question.
    Ask,
    /// The `[plan] D/N done` line.
    PlanTitle,
    /// A completed plan entry's mark.
    PlanDone,
    /// The plan entry in progress.
    PlanActive,
    /// A pending plan entry's mark.
    PlanPending,
    /// `[diff] PATH (…)`.
    DiffTitle,
    /// `@@ -3 +3 @@`.
    DiffHunk,
    /// A removed line.
    DiffRemoved,
    /// An added line.
    DiffAdded,
    /// Unchanged lines, `⋮`, notes and end-of-file markers of a diff.
    DiffContext,
    /// The activity line while a turn runs.
    Activity,
    /// A stop reason other than `end_turn`, a failed prompt.
    Warning,
}

impl Style {
    /// The SGR parameters of the style; empty for [`Style::Plain`].
    fn sgr(self) -> &'static str {
        match self {
            Style::Plain => "",
            Style::User => "1;36",
            Style::Thought | Style::Quote | Style::CodeLanguage => "2;3",
            Style::Heading => "1;4",
            Style::Strong | Style::TableHeader | Style::DiffTitle | Style::PlanTitle => "1",
            Style::Emphasis => "3",
            Style::InlineCode
            | Style::CodeString
            | Style::ToolDone
            | Style::PlanDone
            | Style::DiffAdded => "32",
            Style::Link => "4;34",
            Style::Bullet | Style::DiffHunk => "36",
            Style::Frame
            | Style::CodeComment
            | Style::Detail
            | Style::ToolCancelled
            | Style::PlanPending
            | Style::DiffContext
            | Style::Activity => "2",
            Style::CodeKeyword => "35",
            Style::CodeNumber => "33",
            Style::ToolPending => "34",
            Style::ToolRunning | Style::PlanActive => "1;33",
            Style::ToolFailed | Style::DiffRemoved | Style::Warning => "31",
            Style::Ask => "1;35",
        }
    }
}

/// A run of text in one style.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Span {
    pub(crate) style: Style,
    pub(crate) text: String,
}

impl Span {
    pub(crate) fn new(style: Style, text: impl Into<String>) -> Span {
        Span { style, text: text.into() }
    }

    pub(crate) fn plain(text: impl Into<String>) -> Span {
        Span::new(Style::Plain, text)
    }
}

/// A row of spans.
pub(crate) type Row = Vec<Span>;

/// Whether colour is allowed: `NO_COLOR` (set and not empty) forbids it; else `CLICOLOR_FORCE`
/// (set, not empty and not `0`) forces it, into a pipe too; else colour is used on a terminal.
pub(crate) fn color_allowed(terminal: bool) -> bool {
    let set = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    if set("NO_COLOR").is_some() {
        return false;
    }
    if set("CLICOLOR_FORCE").is_some_and(|value| value != "0") {
        return true;
    }
    terminal
}

/// The text of `text` in `style`, with its SGR sequence and a reset when `color` is true.
pub(crate) fn paint(color: bool, style: Style, text: &str) -> String {
    let sgr = style.sgr();
    if !color || sgr.is_empty() || text.is_empty() {
        return text.to_owned();
    }
    format!("\x1b[{sgr}m{text}\x1b[0m")
}

/// The row as written: each span painted (when `color`), side by side.
pub(crate) fn paint_row(color: bool, row: &[Span]) -> String {
    let mut out = String::new();
    for span in row {
        let _ = write!(out, "{}", paint(color, span.style, &span.text));
    }
    out
}

/// The columns `text` takes on a terminal (wide characters count two, combining marks none).
pub(crate) fn width(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// The columns a row takes.
pub(crate) fn row_width(row: &[Span]) -> usize {
    row.iter().map(|span| width(&span.text)).sum()
}
