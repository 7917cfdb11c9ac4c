//! The compatibility surface: `doctor`, `call OPERATION [JSON_ARGS]` and `mcp`, exactly as
//! `spec/protocol.md` §8 defines them.
//!
//! Nothing here reads the operation table: a compatibility call does no work the call itself does
//! not need, because agents run it once per tool call.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use termsprawl_mcp::ToolFilter;
use termsprawl_protocol::{ExitStatus, ToolRequest, ToolResult};

use crate::session::MISSING_SESSION;
use crate::streams::Streams;

/// The usage line of a misused compatibility mode (printed after `Error: `).
pub(crate) const USAGE_LINE: &str =
    "Usage: termsprawlctl doctor | call OPERATION [JSON_ARGS] | mcp";

/// The three compatibility modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `doctor`: `session_info` with `{}`.
    Doctor,
    /// `call OPERATION [JSON_ARGS]`.
    Call,
    /// `mcp`: the MCP stdio bridge.
    Mcp,
}

impl Mode {
    /// The mode named by a command word.
    pub(crate) fn from_word(word: &OsString) -> Option<Mode> {
        match word.to_str()? {
            "doctor" => Some(Mode::Doctor),
            "call" => Some(Mode::Call),
            "mcp" => Some(Mode::Mcp),
            _ => None,
        }
    }
}

/// What a compatibility command line asks for, once checked.
enum Plan {
    Send(ToolRequest),
    Bridge(ToolFilter),
}

/// How a compatibility command line ended, or what it leaves to the caller.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The run is over with this status; everything was printed.
    Done(ExitStatus),
    /// The `mcp` mode was chosen with this session file: the caller runs the bridge on the
    /// process's own stdio, serving what the filter keeps.
    Bridge(PathBuf, ToolFilter),
}

/// Runs a compatibility command line; `rest` starts with the mode word and no longer holds
/// `--session`.
pub(crate) fn run(
    mode: Mode,
    rest: &[OsString],
    session: Option<PathBuf>,
    streams: &mut Streams<'_>,
) -> Outcome {
    let Some(session) = session else {
        streams.error_line(MISSING_SESSION);
        return Outcome::Done(ExitStatus::USAGE);
    };
    let plan = match plan(mode, &rest[1..]) {
        Ok(plan) => plan,
        Err(line) => {
            streams.error_line(&line);
            return Outcome::Done(ExitStatus::USAGE);
        }
    };
    match plan {
        Plan::Bridge(tools) => Outcome::Bridge(session, tools),
        Plan::Send(request) => Outcome::Done(send(&session, &request, streams)),
    }
}

fn plan(mode: Mode, arguments: &[OsString]) -> Result<Plan, String> {
    match mode {
        Mode::Mcp => mcp_filter(arguments).map(Plan::Bridge),
        Mode::Doctor => {
            if !arguments.is_empty() {
                return Err(format!("Error: {USAGE_LINE}"));
            }
            Ok(Plan::Send(ToolRequest::new("session_info", &Value::Object(Map::new()))))
        }
        Mode::Call => {
            let operation = arguments.first().map(|word| word.to_string_lossy().into_owned());
            let args = match arguments.get(1) {
                Some(text) if !text.is_empty() => parse_json_args(&text.to_string_lossy())?,
                _ => Value::Object(Map::new()),
            };
            Ok(Plan::Send(match operation {
                Some(operation) => ToolRequest::new(operation, &args),
                None => ToolRequest::without_operation(&args),
            }))
        }
    }
}

/// The narrowing flags of `mcp` (issue 21): `--read-only`, and `--tools NAME,NAME…` (also
/// `--tools=…`, repeatable, names accumulate). Any other argument is ignored, as it always was.
/// `--tools` without a value, with no name, or with a name the table does not have is a usage
/// error, checked before the bridge writes anything.
fn mcp_filter(arguments: &[OsString]) -> Result<ToolFilter, String> {
    let mut read_only = false;
    let mut names: Option<Vec<String>> = None;
    let mut words = arguments.iter();
    while let Some(word) = words.next() {
        let list = match word.to_str() {
            Some("--read-only") => {
                read_only = true;
                continue;
            }
            Some("--tools") => match words.next() {
                Some(list) => list.to_string_lossy().into_owned(),
                None => return Err("Error: mcp --tools needs a value: NAME,NAME…".to_owned()),
            },
            Some(word) if word.starts_with("--tools=") => word["--tools=".len()..].to_owned(),
            _ => continue,
        };
        let listed: Vec<String> = list
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
            .collect();
        if listed.is_empty() {
            return Err("Error: mcp --tools needs at least one tool name".to_owned());
        }
        names.get_or_insert_with(Vec::new).extend(listed);
    }
    ToolFilter::new(read_only, names.as_deref())
        .map_err(|unknown| format!("Error: mcp --tools: {unknown}"))
}

/// `JSON_ARGS` parsed as any JSON value; the error line starts with `SyntaxError: `.
fn parse_json_args(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|error| format!("SyntaxError: {error}"))
}

/// One call, printed as the indented `ToolResult`.
fn send(session: &Path, request: &ToolRequest, streams: &mut Streams<'_>) -> ExitStatus {
    let result = termsprawl_transport::call_blocking(session, request);
    let mut text = envelope_json(&result);
    text.push('\n');
    // Output that cannot be written changes nothing: the status reports the call.
    let _ = streams.write_stdout(text.as_bytes());
    ExitStatus::from_ok(result.is_ok())
}

/// The `ToolResult` indented with two spaces, members in the order received.
pub(crate) fn envelope_json(result: &ToolResult) -> String {
    serde_json::to_string_pretty(result).expect("a tool result always serialises")
}

#[cfg(test)]
mod tests;
