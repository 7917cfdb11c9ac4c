//! Typed answers of the operations (`spec/protocol.md` §4.3, §4.5): the terminal operations'
//! with the contract's limits and defaults beside them, and the canvas, session and agent
//! operations' (a task object is the server's own record).
//!
//! A server builds its answers from these types and a client reads them with them, so member names
//! and order are written once: serde serialises the members in declaration order, which is the
//! contract's order. Members a version added are optional here (`Option` with
//! `skip_serializing_if`) where the contract sends them only in some answers. [`schemas`] derives
//! each answer's JSON Schema from its type (`schemars`, doc comments as descriptions), from which
//! `cargo xtask codegen` writes the TypeScript bindings' `results.ts`.
//!
//! [`TerminalWaitResult::follow`] is the one rule for joining the answers of consecutive waits
//! into the answer one long wait would have given (issue 38: our clients wait up to
//! [`MAX_CLIENT_WAIT_MS`] in turns of at most [`MAX_WAIT_MS`]).

use std::time::{SystemTime, UNIX_EPOCH};

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::IntegrationStatus;
use crate::schema::result_schema;

/// The longest wait a server runs in one call (`timeoutMs` of `terminal_run` and `terminal_wait`
/// is clamped to it), so that every call answers inside a client's 45 s.
pub const MAX_WAIT_MS: u64 = 30_000;
/// `timeoutMs` of `terminal_run` and `terminal_wait` when omitted.
pub const DEFAULT_WAIT_MS: u64 = 10_000;
/// The longest wait `termsprawlctl` and its MCP bridge run for one call (protocol 1.5.0), in turns
/// of at most [`MAX_WAIT_MS`].
pub const MAX_CLIENT_WAIT_MS: u64 = 600_000;
/// The most UTF-16 units of `output` in a run or wait answer (its tail; `truncated` when cut).
pub const MAX_OUTPUT_UTF16: usize = 16_000;
/// `maxChars` of `terminal_read` when omitted.
pub const DEFAULT_READ_CHARS: usize = 16_000;
/// The largest `maxChars` of `terminal_read`.
pub const MAX_READ_CHARS: usize = 100_000;

/// How a run notice starts (`spec/protocol.md` §4.9): `[termsprawl] NODE COMMAND ENDING after
/// DURATION; read it with terminal_read {"nodeId":"NODE","since":CURSOR}`.
pub const RUN_NOTICE_START: &str = "[termsprawl] ";
/// What comes before the `terminal_read` arguments at the end of a run notice.
pub const RUN_NOTICE_READ: &str = "; read it with terminal_read ";

/// Where the run notice in `line` starts, if `line` ends with one (§4.9): text typed before it
/// (a person's unfinished line) is not part of it. The notice's node must be the one its
/// `terminal_read` names.
pub fn run_notice_at(line: &str) -> Option<usize> {
    line.match_indices(RUN_NOTICE_START).map(|(start, _)| start).find(|&start| {
        let notice = &line[start + RUN_NOTICE_START.len()..];
        let Some((node, rest)) = notice.split_once(' ') else { return false };
        let Some((_, read)) = rest.rsplit_once(RUN_NOTICE_READ) else { return false };
        read.starts_with(&format!("{{\"nodeId\":\"{node}\",\"since\":")) && read.ends_with('}')
    })
}

/// The answer of `terminal_run` (1.3.0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TerminalRunResult {
    /// The new node.
    pub node_id: String,
    /// Whether the command still runs.
    pub running: bool,
    /// Its exit code once ended normally.
    pub exit_code: Option<i64>,
    /// The name of the signal that ended it (`SIGTERM`), once ended by one.
    pub signal: Option<String>,
    /// The tail of the output, at most [`MAX_OUTPUT_UTF16`] UTF-16 units.
    pub output: String,
    /// Whether `output` was cut.
    pub truncated: bool,
    /// The cursor at the end of `output`.
    pub cursor: u64,
}

/// The names of the members the terminal answers share, spelled once beside the types that
/// serialise them (a test holds each to its field's name). A reader that must judge an answer's
/// JSON member by member, as the conformance suite's shape checks do, names them through these;
/// every other reader reads the typed answer.
pub mod member {
    /// `cursor`: the cursor at the end of the output (every terminal answer).
    pub const CURSOR: &str = "cursor";
    /// `running`: whether the program still runs.
    pub const RUNNING: &str = "running";
    /// `exitCode`: its exit code once it ended normally, else null.
    pub const EXIT_CODE: &str = "exitCode";
    /// `output`: the text answered.
    pub const OUTPUT: &str = "output";
}

/// The answer of `terminal_wait` (1.3.0; `matched`, `matchCursor` and `inputBy` 1.5.0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TerminalWaitResult {
    /// The node waited on.
    pub node_id: String,
    /// Whether the condition was reached (false: the timeout ran out).
    pub reached: bool,
    /// Whether the terminal's program still runs.
    pub running: bool,
    /// Its exit code once ended normally.
    pub exit_code: Option<i64>,
    /// The name of the signal that ended it, once ended by one.
    pub signal: Option<String>,
    /// The output after `since`, its tail of at most [`MAX_OUTPUT_UTF16`] UTF-16 units.
    pub output: String,
    /// Whether `output` was cut.
    pub truncated: bool,
    /// The cursor at the end of `output`.
    pub cursor: u64,
    /// With `until: "text"`: the index in `anyOf` (0 for `text`) of the text that matched first,
    /// null when not reached. Absent for the other conditions.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub matched: Option<Option<u32>>,
    /// With `until: "text"`: the cursor at the start of the match, null when not reached. Absent
    /// for the other conditions.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub match_cursor: Option<Option<u64>>,
    /// With `until: "input"`: the foreground program reading the terminal (`bash`, `python3`),
    /// null when not reached. Absent for the other conditions.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub input_by: Option<Option<String>>,
}

/// The answer of the operations that name one node: `terminal_open`, `sticky_open`,
/// `artifact_open`, `agent_launch` (the new node), `canvas_move` and `canvas_resize`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeResult {
    /// The node.
    pub node_id: String,
}

/// The answer of `canvas_select`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CanvasSelectResult {
    /// The nodes selected now.
    pub node_ids: Vec<String>,
}

/// The answer of `canvas_group`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CanvasGroupResult {
    /// The new group.
    pub node_id: String,
    /// The nodes in it.
    pub node_ids: Vec<String>,
}

/// The answer of `session_info` (`spec/protocol.md` §6.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfoResult {
    /// The caller's node.
    pub node_id: String,
    /// The caller's project.
    pub project_id: String,
    /// The server instance.
    pub instance_id: String,
    /// Where the server runs (`local`).
    pub host: String,
    /// The caller's integration status.
    #[schemars(schema_with = "wire_type_integration_status")]
    pub status: IntegrationStatus,
    /// The version of the app (or server).
    pub app_version: String,
    /// The preferences file.
    pub preferences_file: String,
    /// The folder of the guides for the caller's node.
    pub guides_directory: String,
    /// Whether browser operations are served.
    pub browser_enabled: bool,
    /// The operations the caller may call.
    pub operations: Vec<String>,
    /// The rules a server enforces beyond the protocol (the headless server's
    /// `docs/headless-rules.md`), last; absent from a server that states none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<String>")]
    pub rules: Option<Vec<String>>,
}

/// One valid agent session of `agent_status`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentStatusEntry {
    /// The agent's node.
    pub node_id: String,
    /// Its project.
    pub project_id: String,
    /// Its integration status.
    #[schemars(schema_with = "wire_type_integration_status")]
    pub status: IntegrationStatus,
}

/// One agent card of `agent_cards`' answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// The agent's node.
    pub node_id: String,
    /// Its project.
    pub project_id: String,
    /// Its node's title.
    pub title: String,
    /// The agent's name (`claude`), when known.
    pub agent: Option<String>,
    /// Its integration status.
    #[schemars(schema_with = "wire_type_integration_status")]
    pub status: IntegrationStatus,
    /// The agents it may read (enabled links).
    pub enabled_peer_ids: Vec<String>,
}

/// The answer of `context_read`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextReadResult {
    /// The last 100 000 characters of the linked peers' transcript.
    pub text: String,
    /// The transcript reader (`claude-jsonl`).
    pub reader: String,
    /// Why the text is empty, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub reason: Option<String>,
}

/// The answer of `terminal_read` (1.3.0; 1.2.0 had `nodeId` and `output` only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TerminalReadResult {
    /// The node read.
    pub node_id: String,
    /// The tail of the screen and scrollback, or of the text after `since`.
    pub output: String,
    /// The cursor at the end of `output` (without `since`: from before the screen was read).
    pub cursor: u64,
    /// Whether the terminal's program still runs.
    pub running: bool,
    /// Its exit code once ended normally.
    pub exit_code: Option<i64>,
    /// The name of the signal that ended it, once ended by one.
    pub signal: Option<String>,
}

/// The answer of `terminal_read` with `view: "screen"` (1.4.0; `waitingForInput` and `inputBy`
/// 1.5.0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TerminalScreenResult {
    /// The node read.
    pub node_id: String,
    /// Exactly the visible rows, one line each.
    pub output: String,
    /// The cursor of the output stream, from before the screen was read.
    pub cursor: u64,
    /// Whether the terminal's program still runs.
    pub running: bool,
    /// Its exit code once ended normally.
    pub exit_code: Option<i64>,
    /// The name of the signal that ended it, once ended by one.
    pub signal: Option<String>,
    /// Rows of the screen.
    pub rows: u32,
    /// Columns of the screen.
    pub cols: u32,
    /// The text cursor's row, from 0.
    pub cursor_row: u32,
    /// The text cursor's column, from 0.
    pub cursor_col: u32,
    /// Whether a full-screen program holds the alternate screen.
    pub alternate_screen: bool,
    /// Whether the foreground program is blocked reading the terminal.
    pub waiting_for_input: bool,
    /// That program's name while `waitingForInput`; null otherwise.
    pub input_by: Option<String>,
}

/// The answer of `terminal_kill` (1.3.0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TerminalKillResult {
    /// The run node.
    pub node_id: String,
    /// Its output cursor after the kill.
    pub cursor: u64,
    /// Whether its command still runs (it did not end within the server's wait).
    pub running: bool,
    /// Its exit code once ended normally.
    pub exit_code: Option<i64>,
    /// The name of the signal that ended it (`SIGKILL`), once ended by one.
    pub signal: Option<String>,
}

/// The answer of `terminal_submit`, `terminal_input` (with `cursor`, 1.3.0) and
/// `terminal_interrupt` (without).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveredResult {
    /// The node typed into.
    pub node_id: String,
    /// Always true: a failure is an error answer.
    pub delivered: bool,
    /// The output cursor from before the text was typed: a wait from it sees the reaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub cursor: Option<u64>,
}

/// The answer of `terminal_close`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TerminalCloseResult {
    /// The node closed.
    pub node_id: String,
    /// The ids of pending requests failed by the close (the headless server keeps none).
    pub cleanup_pending_ids: Vec<String>,
}

/// How a terminal's program is doing, as every answer about it says it (`running`, `exitCode`,
/// `signal`): from whether it ended, its exit status and its signal number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramState {
    /// Whether it still runs.
    pub running: bool,
    /// Its exit code once ended normally.
    pub exit_code: Option<i64>,
    /// The name of the signal that ended it.
    pub signal: Option<String>,
}

impl ProgramState {
    /// Running unless `ended`; the exit status and the signal number as the answers carry them.
    pub fn new(ended: bool, exit_code: Option<i32>, signal: Option<i32>) -> ProgramState {
        ProgramState {
            running: !ended,
            exit_code: exit_code.map(i64::from),
            signal: signal.map(signal_name),
        }
    }
}

impl TerminalWaitResult {
    /// The answer one wait from this answer's start to `next`'s end would have given, `next`
    /// being the answer of a wait that started at this answer's `cursor`: the outputs joined
    /// (its tail of at most [`MAX_OUTPUT_UTF16`] units, `truncated` when either was cut or the
    /// join is), and every other member `next`'s.
    #[must_use]
    pub fn follow(self, next: TerminalWaitResult) -> TerminalWaitResult {
        let mut output = self.output;
        output.push_str(&next.output);
        let (output, cut) = output_tail(output);
        TerminalWaitResult { output, truncated: self.truncated || next.truncated || cut, ..next }
    }
}

impl From<TerminalWaitResult> for TerminalRunResult {
    /// The same terminal as `terminal_run` answers it: the wait's members without `reached` and
    /// the condition's (`matched`, `matchCursor`, `inputBy`).
    fn from(wait: TerminalWaitResult) -> TerminalRunResult {
        TerminalRunResult {
            node_id: wait.node_id,
            running: wait.running,
            exit_code: wait.exit_code,
            signal: wait.signal,
            output: wait.output,
            truncated: wait.truncated,
            cursor: wait.cursor,
        }
    }
}

/// `text`'s tail of at most [`MAX_OUTPUT_UTF16`] UTF-16 units (never splitting a character), and
/// whether anything was cut.
pub fn output_tail(text: String) -> (String, bool) {
    let tail = utf16_tail(&text, MAX_OUTPUT_UTF16);
    if tail.len() == text.len() { (text, false) } else { (tail.to_owned(), true) }
}

/// The longest end of `text` of at most `limit` UTF-16 units, never splitting a character.
pub fn utf16_tail(text: &str, limit: usize) -> &str {
    let mut units = 0;
    let mut start = text.len();
    for (index, c) in text.char_indices().rev() {
        units += c.len_utf16();
        if units > limit {
            break;
        }
        start = index;
    }
    &text[start..]
}

/// The name of a Linux signal number as the `signal` member of an answer carries it (`SIGTERM`),
/// or `SIG<number>` for one without a name. The one table of signal names in the workspace: the
/// servers and `acp`'s terminals read it.
pub fn signal_name(number: i32) -> String {
    const NAMES: [&str; 31] = [
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    usize::try_from(number - 1)
        .ok()
        .and_then(|index| NAMES.get(index))
        .map_or_else(|| format!("SIG{number}"), |name| (*name).to_owned())
}

/// What kind of terminal node a `terminal_list` entry is (1.5.0): a shell, a run node of
/// `terminal_run`, or an agent's node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TerminalKind {
    /// A shell opened by `terminal_open` (or by the person).
    Shell,
    /// A node whose process is a command `terminal_run` started.
    Run,
    /// An agent's node.
    Agent,
}

/// One terminal of `terminal_list`'s answer (1.5.0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TerminalListEntry {
    /// The node.
    pub node_id: String,
    /// Its title on the canvas.
    pub title: String,
    /// Shell, run node or agent.
    pub kind: TerminalKind,
    /// A run node's command; null for the others.
    pub command: Option<String>,
    /// Whether its program still runs.
    pub running: bool,
    /// Its exit code once ended normally.
    pub exit_code: Option<i64>,
    /// The name of the signal that ended it, once ended by one.
    pub signal: Option<String>,
    /// When its program started, ISO 8601 UTC.
    pub started_at: String,
    /// When its program ended, ISO 8601 UTC; null while it runs.
    pub ended_at: Option<String>,
    /// Its output cursor now.
    pub cursor: u64,
    /// When it last printed, ISO 8601 UTC; null before any output.
    pub last_output_at: Option<String>,
    /// Whether its foreground program is blocked reading the terminal.
    pub waiting_for_input: bool,
    /// That program's name while `waitingForInput`; null otherwise.
    pub input_by: Option<String>,
    /// Whether a notice goes to its caller when its command ends (`terminal_run`'s `notify`).
    pub notify: bool,
}

/// One line `terminal_search` found (1.5.0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchMatch {
    /// The terminal it was found in.
    pub node_id: String,
    /// The cursor at the start of the matching line: `terminal_read {since: cursor}` reads on
    /// from it.
    pub cursor: u64,
    /// The matching line, without its line feed.
    pub line: String,
    /// Up to `context` lines before it, oldest first.
    pub before: Vec<String>,
    /// Up to `context` lines after it.
    pub after: Vec<String>,
}

/// The answer of `terminal_search` (1.5.0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TerminalSearchResult {
    /// Oldest first per terminal, terminals in `terminal_list` order.
    pub matches: Vec<SearchMatch>,
    /// Whether `limit` cut the list.
    pub truncated: bool,
}

/// The schemas of the answer types, each as (type name, schema), in the order of the TypeScript
/// bindings' `results.ts`: derived from the types above (members, order, nullability and their
/// doc comments as descriptions), so the types are their one owner. [`ProgramState`] is no
/// answer of its own (its members are in each answer) and has none.
pub fn schemas() -> Vec<(&'static str, Value)> {
    vec![
        ("TerminalRunResult", result_schema::<TerminalRunResult>()),
        ("TerminalWaitResult", result_schema::<TerminalWaitResult>()),
        ("TerminalReadResult", result_schema::<TerminalReadResult>()),
        ("TerminalScreenResult", result_schema::<TerminalScreenResult>()),
        ("TerminalKillResult", result_schema::<TerminalKillResult>()),
        ("DeliveredResult", result_schema::<DeliveredResult>()),
        ("TerminalCloseResult", result_schema::<TerminalCloseResult>()),
        ("TerminalKind", result_schema::<TerminalKind>()),
        ("TerminalListEntry", result_schema::<TerminalListEntry>()),
        ("SearchMatch", result_schema::<SearchMatch>()),
        ("TerminalSearchResult", result_schema::<TerminalSearchResult>()),
        ("NodeResult", result_schema::<NodeResult>()),
        ("CanvasSelectResult", result_schema::<CanvasSelectResult>()),
        ("CanvasGroupResult", result_schema::<CanvasGroupResult>()),
        ("SessionInfoResult", result_schema::<SessionInfoResult>()),
        ("AgentStatusEntry", result_schema::<AgentStatusEntry>()),
        ("AgentCard", result_schema::<AgentCard>()),
        ("ContextReadResult", result_schema::<ContextReadResult>()),
    ]
}

/// A member of the wire type `IntegrationStatus` (`spec/protocol.md` §1), whose schema is
/// `docs/reference/types/IntegrationStatus.json`: named, not repeated.
fn wire_type_integration_status(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "$ref": "IntegrationStatus.json" })
}

/// `time` in ISO 8601 (RFC 3339) UTC with milliseconds, such as `2026-12-01T00:01:59.123Z`: the
/// times of the answers (`startedAt`, `endedAt`, `lastOutputAt`). Times before 1970 are 1970.
pub fn iso_utc(time: SystemTime) -> String {
    let since_epoch = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = since_epoch.as_secs();
    let days = i64::try_from(seconds / 86_400).unwrap_or(0);
    let second_of_day = seconds % 86_400;
    let (year, month, day) = civil_from_days(days);
    // Never negative: times before 1970 are 1970.
    let year = u64::try_from(year).unwrap_or(1970);
    if year > 9999 {
        return format!(
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
            second_of_day / 3600,
            second_of_day / 60 % 60,
            second_of_day % 60,
            since_epoch.subsec_millis()
        );
    }
    // Written digit by digit: `terminal_list` writes three of these per terminal, and `format!`
    // was a tenth of its time.
    let mut text = *b"0000-00-00T00:00:00.000Z";
    let fields = [
        (0, 4, year),
        (5, 2, u64::from(month)),
        (8, 2, u64::from(day)),
        (11, 2, second_of_day / 3600),
        (14, 2, second_of_day / 60 % 60),
        (17, 2, second_of_day % 60),
        (20, 3, u64::from(since_epoch.subsec_millis())),
    ];
    for (start, width, mut value) in fields {
        for at in (start..start + width).rev() {
            text[at] = b'0' + u8::try_from(value % 10).unwrap_or(0);
            value /= 10;
        }
    }
    text.iter().map(|&byte| char::from(byte)).collect()
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = u32::try_from(day_of_year - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Reads a member that may be present with `null` as `Some(None)` (absent stays `None`).
#[expect(clippy::option_option, reason = "absent, null and a value are three answers on the wire")]
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(output: &str, cursor: u64, truncated: bool) -> TerminalWaitResult {
        TerminalWaitResult {
            node_id: "terminal-1".to_owned(),
            reached: false,
            running: true,
            exit_code: None,
            signal: None,
            output: output.to_owned(),
            truncated,
            cursor,
            matched: None,
            match_cursor: None,
            input_by: None,
        }
    }

    #[test]
    fn the_member_names_are_the_fields_the_types_serialise() {
        let value = serde_json::to_value(wait("x", 1, false)).unwrap();
        for name in [member::CURSOR, member::RUNNING, member::EXIT_CODE, member::OUTPUT] {
            assert!(value.get(name).is_some(), "{name} is not a member of {value}");
        }
        let read = TerminalReadResult {
            node_id: "terminal-1".to_owned(),
            output: "x".to_owned(),
            cursor: 1,
            running: false,
            exit_code: Some(0),
            signal: None,
        };
        assert_eq!(
            serde_json::to_string(&read).unwrap(),
            r#"{"nodeId":"terminal-1","output":"x","cursor":1,"running":false,"exitCode":0,"signal":null}"#
        );
    }

    #[test]
    fn a_wait_answer_keeps_the_contract_order_and_its_optional_members() {
        let mut answer = wait("ok\n", 3, false);
        assert_eq!(
            serde_json::to_string(&answer).unwrap(),
            r#"{"nodeId":"terminal-1","reached":false,"running":true,"exitCode":null,"signal":null,"output":"ok\n","truncated":false,"cursor":3}"#
        );
        answer.matched = Some(None);
        answer.match_cursor = Some(None);
        let text = serde_json::to_string(&answer).unwrap();
        assert!(text.ends_with(r#""cursor":3,"matched":null,"matchCursor":null}"#), "{text}");
        let back: TerminalWaitResult = serde_json::from_str(&text).unwrap();
        assert_eq!(back, answer);
    }

    /// The member names of `value`'s JSON object, in order.
    fn members(value: &impl Serialize) -> Vec<String> {
        let value = serde_json::to_value(value).unwrap();
        value.as_object().unwrap().keys().cloned().collect()
    }

    #[test]
    fn the_answers_keep_the_member_order_of_the_contract() {
        let program = ProgramState::new(true, None, Some(9));
        assert_eq!((program.running, program.signal.as_deref()), (false, Some("SIGKILL")));
        let ProgramState { running, exit_code, signal } = ProgramState::new(false, Some(3), None);
        assert_eq!((running, exit_code, signal), (true, Some(3), None));
        let read = TerminalReadResult {
            node_id: "n".to_owned(),
            output: String::new(),
            cursor: 0,
            running,
            exit_code,
            signal: None,
        };
        // spec/protocol.md §4.5, one row each.
        assert_eq!(members(&read), ["nodeId", "output", "cursor", "running", "exitCode", "signal"]);
        let screen = TerminalScreenResult {
            node_id: "n".to_owned(),
            output: String::new(),
            cursor: 0,
            running,
            exit_code,
            signal: None,
            rows: 48,
            cols: 160,
            cursor_row: 0,
            cursor_col: 0,
            alternate_screen: false,
            waiting_for_input: false,
            input_by: None,
        };
        assert_eq!(
            members(&screen),
            [
                "nodeId",
                "output",
                "cursor",
                "running",
                "exitCode",
                "signal",
                "rows",
                "cols",
                "cursorRow",
                "cursorCol",
                "alternateScreen",
                "waitingForInput",
                "inputBy"
            ]
        );
        let kill = TerminalKillResult {
            node_id: "n".to_owned(),
            cursor: 0,
            running: false,
            exit_code: None,
            signal: Some("SIGKILL".to_owned()),
        };
        assert_eq!(members(&kill), ["nodeId", "cursor", "running", "exitCode", "signal"]);
        let typed = DeliveredResult { node_id: "n".to_owned(), delivered: true, cursor: Some(4) };
        assert_eq!(members(&typed), ["nodeId", "delivered", "cursor"]);
        let interrupted = DeliveredResult { cursor: None, ..typed };
        assert_eq!(members(&interrupted), ["nodeId", "delivered"]);
        let closed =
            TerminalCloseResult { node_id: "n".to_owned(), cleanup_pending_ids: Vec::new() };
        assert_eq!(members(&closed), ["nodeId", "cleanupPendingIds"]);
        let group = CanvasGroupResult { node_id: "g".to_owned(), node_ids: Vec::new() };
        assert_eq!(members(&group), ["nodeId", "nodeIds"]);
        let context = ContextReadResult {
            text: String::new(),
            reader: "claude-jsonl".to_owned(),
            reason: None,
        };
        assert_eq!(members(&context), ["text", "reader"]);
    }

    #[test]
    fn the_answer_schemas_follow_the_types_with_one_line_descriptions() {
        let schemas = schemas();
        let names: Vec<&str> = schemas.iter().map(|(name, _)| *name).collect();
        assert_eq!(names.len(), 18);
        for (name, schema) in &schemas {
            let mut descriptions = vec![&schema["description"]];
            for property in schema["properties"].as_object().into_iter().flatten().map(|p| p.1) {
                descriptions.push(&property["description"]);
            }
            for description in descriptions {
                let text = description.as_str().unwrap_or_else(|| panic!("{name}: {schema}"));
                assert!(!text.is_empty() && !text.contains('\n') && !text.contains("[`"), "{name}");
            }
            for property in schema["properties"].as_object().into_iter().flatten().map(|p| p.1) {
                if let Some(reference) =
                    property.get("$ref").or_else(|| property["items"].get("$ref"))
                {
                    let target = reference.as_str().unwrap().strip_suffix(".json").unwrap();
                    assert!(
                        names.contains(&target) || target == "IntegrationStatus",
                        "{name}: {target}"
                    );
                }
            }
        }
        let find = |name: &str| &schemas.iter().find(|(n, _)| *n == name).unwrap().1;
        let wait = find("TerminalWaitResult");
        let members: Vec<&String> = wait["properties"].as_object().unwrap().keys().collect();
        assert_eq!(members[..3], ["nodeId", "reached", "running"]);
        assert_eq!(wait["properties"]["exitCode"]["type"], serde_json::json!(["integer", "null"]));
        // A member a version added and only some answers carry: optional, null only where the
        // type says so.
        assert!(!wait["required"].as_array().unwrap().contains(&Value::from("matched")));
        assert_eq!(wait["properties"]["matched"]["type"], serde_json::json!(["integer", "null"]));
        let delivered = find("DeliveredResult");
        assert_eq!(delivered["properties"]["cursor"]["type"], "integer");
        assert_eq!(delivered["required"], serde_json::json!(["nodeId", "delivered"]));
        let info = find("SessionInfoResult");
        assert_eq!(info["properties"]["status"]["$ref"], "IntegrationStatus.json");
        assert_eq!(info["properties"]["rules"]["items"]["type"], "string");
        assert_eq!(find("TerminalKind")["enum"], serde_json::json!(["shell", "run", "agent"]));
        assert_eq!(
            find("TerminalRunResult")["properties"]["output"]["description"],
            "The tail of the output, at most `MAX_OUTPUT_UTF16` UTF-16 units."
        );
    }

    #[test]
    fn following_waits_join_their_outputs_and_take_the_last_state() {
        let mut last = wait("b\n", 4, false);
        last.reached = true;
        last.running = false;
        last.exit_code = Some(2);
        let joined = wait("a\n", 2, false).follow(last);
        assert_eq!(joined.output, "a\nb\n");
        assert!(!joined.truncated);
        assert_eq!((joined.cursor, joined.reached, joined.exit_code), (4, true, Some(2)));
    }

    #[test]
    fn a_joined_output_keeps_its_tail_and_says_it_was_cut() {
        let first = wait(&"x".repeat(MAX_OUTPUT_UTF16), 16_000, false);
        let joined = first.follow(wait("tail", 16_004, false));
        assert_eq!(joined.output.encode_utf16().count(), MAX_OUTPUT_UTF16);
        assert!(joined.output.ends_with("xtail"));
        assert!(joined.truncated);
        assert!(wait("a", 1, true).follow(wait("b", 2, false)).truncated);
    }

    #[test]
    fn times_are_utc_with_milliseconds() {
        assert_eq!(iso_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = UNIX_EPOCH + std::time::Duration::from_millis(951_782_400_123);
        assert_eq!(iso_utc(leap), "2000-02-29T00:00:00.123Z");
        let late = UNIX_EPOCH + std::time::Duration::from_millis(1_796_465_919_987);
        assert_eq!(iso_utc(late), "2026-12-05T10:18:39.987Z");
        let last = UNIX_EPOCH + std::time::Duration::from_millis(253_402_300_799_999);
        assert_eq!(iso_utc(last), "9999-12-31T23:59:59.999Z");
        // Past year 9999 the year takes the digits it needs.
        assert_eq!(
            iso_utc(last + std::time::Duration::from_millis(1)),
            "10000-01-01T00:00:00.000Z"
        );
    }

    #[test]
    fn signals_are_named_as_linux_numbers_them() {
        assert_eq!(signal_name(15), "SIGTERM");
        assert_eq!(signal_name(9), "SIGKILL");
        assert_eq!(signal_name(2), "SIGINT");
        assert_eq!(signal_name(16), "SIGSTKFLT");
        assert_eq!(signal_name(30), "SIGPWR");
        assert_eq!(signal_name(31), "SIGSYS");
        assert_eq!(signal_name(0), "SIG0");
        assert_eq!(signal_name(200), "SIG200");
    }

    #[test]
    fn a_run_notice_is_found_at_the_end_of_a_line_and_nowhere_else() {
        let notice = r#"[termsprawl] terminal-1a2b "make test" exited 2 after 7m02s; read it with terminal_read {"nodeId":"terminal-1a2b","since":4711}"#;
        assert_eq!(run_notice_at(notice), Some(0));
        assert_eq!(run_notice_at(&format!("half typed{notice}")), Some(10));
        // A quoted command may itself hold the start of a notice.
        let tricky = r#"[termsprawl] terminal-9 "echo [termsprawl] x" exited 0 after 1s; read it with terminal_read {"nodeId":"terminal-9","since":3}"#;
        assert_eq!(run_notice_at(tricky), Some(0));
        for not in [
            "[termsprawl] hello",
            r#"[termsprawl] terminal-1 "x" exited 0 after 1s; read it with terminal_read {"nodeId":"terminal-2","since":1}"#,
            r#"[termsprawl] terminal-1 "x" exited 0 after 1s; read it with terminal_read {"nodeId":"terminal-1","since":1} and more"#,
            "make test",
        ] {
            assert_eq!(run_notice_at(not), None, "{not}");
        }
    }

    #[test]
    fn a_tail_never_splits_a_character() {
        assert_eq!(utf16_tail("hello", 3), "llo");
        assert_eq!(utf16_tail("a😀", 2), "😀");
        assert_eq!(utf16_tail("a😀", 1), "");
    }

    #[test]
    fn a_wait_answered_as_a_run_keeps_the_terminal_members_and_drops_the_condition() {
        let mut answer = wait("done\n", 12, true);
        answer.running = false;
        answer.exit_code = Some(3);
        answer.matched = Some(Some(0));
        answer.match_cursor = Some(Some(7));
        answer.input_by = Some(Some("sh".to_owned()));
        let run = TerminalRunResult::from(answer);
        assert_eq!(
            run,
            TerminalRunResult {
                node_id: "terminal-1".to_owned(),
                running: false,
                exit_code: Some(3),
                signal: None,
                output: "done\n".to_owned(),
                truncated: true,
                cursor: 12,
            }
        );
        let members: Vec<String> =
            serde_json::to_value(&run).unwrap().as_object().unwrap().keys().cloned().collect();
        assert_eq!(
            members,
            ["nodeId", "running", "exitCode", "signal", "output", "truncated", "cursor"]
        );
    }
}
