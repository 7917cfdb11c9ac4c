//! The compatibility surface: `doctor`, `call OPERATION [JSON_ARGS]` and `mcp`, as
//! `spec/protocol.md` §8 defines them, with issue 24's and 39's additions: `mcp`'s options and
//! session file are checked before it serves, and a mistake there is still answered to its host
//! (`refusal`); a session file that is gone gets a hint on stderr beside `doctor`'s and `call`'s
//! contract output.
//!
//! Nothing here reads the operation table: a compatibility call does no work the call itself does
//! not need, because agents run it once per tool call.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use termsprawl_mcp::{ToolFilter, UnknownToolName};
use termsprawl_protocol::results::MAX_CLIENT_WAIT_MS;
use termsprawl_protocol::{ExitStatus, ToolRequest, ToolResult};
use termsprawl_transport::discovery::session_file_problem;
use termsprawl_transport::long_wait::{WaitOptions, call_waiting_blocking};

use crate::convert::convert;
use crate::describe::Scalar;
use crate::flags::{Scanner, Step, closest};
use crate::quote::go_quote;
use crate::refusal::Refusal;
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

/// How a compatibility command line ended, or what it leaves to the caller.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The run is over with this status; everything was printed.
    Done(ExitStatus),
    /// The `mcp` mode was chosen with this session file: the caller runs the bridge on the
    /// process's own stdio, serving what the filter keeps, waiting at most this many ms.
    Bridge(PathBuf, ToolFilter, u64),
    /// The `mcp` mode was chosen with a mistake found before it can serve (issue 39): the caller
    /// prints the refusal's message on stderr, answers every request on the process's own stdio
    /// with it, serving nothing, and exits 2 at end of input (a host shows the error, not
    /// "connection closed").
    Refuse(Refusal),
}

/// Runs a compatibility command line; `rest` starts with the mode word and no longer holds
/// `--session`.
///
/// `mcp`'s own options are checked first, then the session: an unknown option is refused with or
/// without a session, because once a session is given it would serve more than was asked for.
pub(crate) fn run(
    mode: Mode,
    rest: &[OsString],
    session: Option<PathBuf>,
    streams: &mut Streams<'_>,
) -> Outcome {
    let bridge = match mode {
        Mode::Mcp => match mcp_options(&rest[1..]) {
            Ok(options) => Some(options),
            Err(refusal) => return Outcome::Refuse(refusal),
        },
        Mode::Doctor | Mode::Call => None,
    };
    let Some(session) = session else {
        streams.error_line(MISSING_SESSION);
        if mode == Mode::Mcp {
            return Outcome::Refuse(Refusal::no_session());
        }
        return Outcome::Done(ExitStatus::USAGE);
    };
    if let Some((filter, max_wait_ms)) = bridge {
        if let Some(problem) = session_file_problem(&session) {
            return Outcome::Refuse(Refusal::session_file(&session, &problem));
        }
        return Outcome::Bridge(session, filter, max_wait_ms);
    }
    match plan(mode, &rest[1..]) {
        Ok(request) => Outcome::Done(send(&session, &request, streams)),
        Err(line) => {
            streams.error_line(&line);
            Outcome::Done(ExitStatus::USAGE)
        }
    }
}

/// The request of `doctor` or `call`.
fn plan(mode: Mode, arguments: &[OsString]) -> Result<ToolRequest, String> {
    match mode {
        Mode::Mcp => unreachable!("mcp sends nothing itself"),
        Mode::Doctor => {
            if !arguments.is_empty() {
                return Err(format!("Error: {USAGE_LINE}"));
            }
            Ok(ToolRequest::new("session_info", &Value::Object(Map::new())))
        }
        Mode::Call => {
            let operation = arguments.first().map(|word| word.to_string_lossy().into_owned());
            let args = match arguments.get(1) {
                Some(text) if !text.is_empty() => parse_json_args(&text.to_string_lossy())?,
                _ => Value::Object(Map::new()),
            };
            Ok(match operation {
                Some(operation) => ToolRequest::new(operation, &args),
                None => ToolRequest::without_operation(&args),
            })
        }
    }
}

/// The options of `mcp`, read with the one scanner of the workspace (`flags`, Go rules):
/// `--read-only` (a boolean: `--read-only=false` is allowed), `--tools NAME,NAME…` (also
/// `--tools=…`, repeatable, names accumulate) and `--max-wait-ms MS` (the longest wait, 0 to
/// 600000; [`termsprawl_mcp::DEFAULT_MAX_WAIT_MS`] without it). `--tools` without a value, with no
/// name, or with a name the table does not have (the closest one suggested), a `--max-wait-ms`
/// that is not such a number, any other option (`--readonly`, `--tool`: issue 24, a typo must
/// never widen access) and any word after the options are refused, checked before the bridge
/// serves anything.
fn mcp_options(arguments: &[OsString]) -> Result<(ToolFilter, u64), Refusal> {
    let mut read_only = false;
    let mut names: Option<Vec<String>> = None;
    let mut max_wait_ms = termsprawl_mcp::DEFAULT_MAX_WAIT_MS;
    let mut scanner = Scanner::new(arguments);
    loop {
        let step = scanner.step().map_err(|error| Refusal::command_line("option", &error))?;
        let (name, inline) = match step {
            Step::Done => break,
            Step::Flag { name, inline } => (name, inline),
        };
        match name {
            b"read-only" => {
                let raw = inline.unwrap_or(b"true");
                let value = convert(Scalar::Boolean, raw).map_err(|reason| {
                    let problem = format!(
                        "invalid boolean value {} for --read-only: {reason}",
                        go_quote(raw)
                    );
                    Refusal::command_line("option-value", &problem)
                })?;
                read_only = value == "true";
                continue;
            }
            b"max-wait-ms" => {
                let Some(raw) = inline.or_else(|| scanner.value()) else {
                    let problem = "--max-wait-ms needs a value (MILLISECONDS)";
                    return Err(Refusal::command_line("option-value", problem));
                };
                max_wait_ms = std::str::from_utf8(raw)
                    .ok()
                    .and_then(|text| text.parse::<u64>().ok())
                    .filter(|ms| *ms <= MAX_CLIENT_WAIT_MS)
                    .ok_or_else(|| {
                        let problem = format!(
                            "--max-wait-ms: {} is not a whole number of milliseconds from 0 to \
                             {MAX_CLIENT_WAIT_MS}",
                            go_quote(raw)
                        );
                        Refusal::command_line("option-value", &problem)
                    })?;
                continue;
            }
            b"tools" => {}
            _ => {
                let problem = scanner.unknown_option(&MCP_OPTIONS);
                return Err(Refusal::command_line("unknown-option", &problem));
            }
        }
        let Some(list) = inline.or_else(|| scanner.value()) else {
            return Err(Refusal::command_line(
                "option-value",
                "--tools needs a value (NAME,NAME…)",
            ));
        };
        let listed: Vec<String> = String::from_utf8_lossy(list)
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
            .collect();
        if listed.is_empty() {
            let problem = "--tools needs at least one tool name";
            return Err(Refusal::command_line("option-value", problem));
        }
        names.get_or_insert_with(Vec::new).extend(listed);
    }
    if let Some(word) = scanner.rest().first() {
        let problem = format!(
            "unexpected argument {}: mcp takes only --read-only, --tools NAME,... and --max-wait-ms MS",
            go_quote(word.as_bytes())
        );
        return Err(Refusal::command_line("unexpected-argument", &problem));
    }
    let filter =
        ToolFilter::new(read_only, names.as_deref()).map_err(|UnknownToolName(name)| {
            // Only this mistake reads the table: a bridge that serves reads it anyway.
            let known: Vec<&str> = termsprawl_protocol::operations()
                .iter()
                .map(termsprawl_protocol::Operation::name)
                .collect();
            let problem = match closest(&name, &known) {
                Some(known) => {
                    format!(
                        "--tools: {} is no termsprawl operation: did you mean {known}?",
                        go_quote(name.as_bytes())
                    )
                }
                None => {
                    format!("--tools: {} is no termsprawl operation", go_quote(name.as_bytes()))
                }
            };
            Refusal::command_line("unknown-tool", &problem)
        })?;
    Ok((filter, max_wait_ms))
}

/// The options of `mcp`, without dashes.
const MCP_OPTIONS: [&str; 3] = ["read-only", "tools", "max-wait-ms"];

/// `JSON_ARGS` parsed as any JSON value; the error line starts with `SyntaxError: `.
fn parse_json_args(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|error| format!("SyntaxError: {error}"))
}

/// One call, printed as the indented `ToolResult`; a `terminal_wait` or `terminal_run` longer than
/// a server's turn is chained (`spec/protocol.md` §7.3), without progress lines.
fn send(session: &Path, request: &ToolRequest, streams: &mut Streams<'_>) -> ExitStatus {
    let result = call_waiting_blocking(session, request, &WaitOptions::default(), None);
    let mut text = envelope_json(&result);
    text.push('\n');
    // Output that cannot be written changes nothing: the status reports the call.
    let _ = streams.write_stdout(text.as_bytes());
    // The printed result is the contract's; the guidance about a gone session goes beside it.
    if let Some(hint) = crate::session::gone_hint(session, &result) {
        streams.error_line(&hint);
    }
    ExitStatus::from_ok(result.is_ok())
}

/// The `ToolResult` indented with two spaces, members in the order received.
pub(crate) fn envelope_json(result: &ToolResult) -> String {
    serde_json::to_string_pretty(result).expect("a tool result always serialises")
}

#[cfg(test)]
mod tests;
