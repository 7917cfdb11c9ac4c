//! The pure core of the bridge: one input line in, one [`Action`] out (`spec/mcp.md` §3.2 – §3.5).
//!
//! Nothing here does I/O or waits. [`classify`] decides what a line is and what to do about it;
//! the async plumbing in `serve` carries out the action, and calls [`State::complete_initialize`]
//! when the `session_info` call of an `initialize` has finished. A fuzzer can drive [`classify`]
//! with arbitrary bytes: it never panics and never answers a line it must not answer.

#[cfg(test)]
mod tests;

use std::fmt;

use serde_json::{Map, Value, json};
use termsprawl_protocol::{ToolRequest, ToolResult, Topic, guide, operation};

use crate::jsonrpc::{ErrorCode, RequestId, Response};
use crate::tools::tools_list;

/// The protocol revisions the bridge speaks, oldest first; a requested one is echoed.
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The revision answered when the client asks for one not in [`PROTOCOL_VERSIONS`].
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// How many bytes of an input line a log line may echo.
pub const LOG_EXCERPT_BYTES: usize = 200;

/// What the bridge knows from the last completed handshake.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct State {
    operations: Option<Vec<String>>,
    protocol_version: Option<&'static str>,
}

/// What to do with one input line.
#[derive(Debug)]
pub enum Action {
    /// Nothing, and nothing to log: a blank line, a notification, a stray response.
    Ignore,
    /// Not answered; the text is logged (without the `termsprawlctl mcp: ` prefix).
    Log(String),
    /// Answer at once.
    Respond(Response),
    /// Call `session_info`, then answer with [`State::complete_initialize`].
    Initialize {
        /// The request's id.
        id: RequestId,
        /// The negotiated protocol revision, one of [`PROTOCOL_VERSIONS`].
        protocol_version: &'static str,
    },
    /// Call the tool server, then answer with [`crate::tools::call_response_line`].
    Call {
        /// The request's id.
        id: RequestId,
        /// The body for the tool server.
        request: ToolRequest,
    },
    /// Drop the answer of the most recent in-flight `tools/call` with this id, if any.
    Cancel {
        /// The `params.requestId` of the notification.
        request_id: RequestId,
    },
}

impl State {
    /// The operation names of the last handshake's `session_info`, when it listed them.
    pub fn operations(&self) -> Option<&[String]> {
        self.operations.as_deref()
    }

    /// The revision negotiated by the last completed `initialize`; before any, the newest is
    /// assumed.
    pub fn protocol_version(&self) -> &'static str {
        self.protocol_version.unwrap_or(LATEST_PROTOCOL_VERSION)
    }

    /// The answer to an `initialize` whose `session_info` call returned `session_info`; a success
    /// also records the handshake (operations, revision) for later `tools/list` calls.
    pub fn complete_initialize(
        &mut self,
        id: RequestId,
        protocol_version: &'static str,
        session_info: &ToolResult,
    ) -> Response {
        let value = match session_info {
            ToolResult::Failure { error } => {
                return Response::error(id, ErrorCode::INTERNAL_ERROR, error.clone());
            }
            ToolResult::Success { value } => value.as_ref().and_then(Value::as_object),
        };
        let app_version = match value.and_then(|value| value.get("appVersion")) {
            Some(Value::String(version)) if !version.is_empty() => version.clone(),
            _ => "unknown".to_owned(),
        };
        self.operations = match value.and_then(|value| value.get("operations")) {
            Some(Value::Array(names)) => {
                Some(names.iter().filter_map(|name| name.as_str().map(str::to_owned)).collect())
            }
            _ => None,
        };
        self.protocol_version = Some(protocol_version);
        Response::result(
            id,
            json!({
                "protocolVersion": protocol_version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "termsprawl", "version": app_version},
                "instructions": guide(Topic::Overview),
            }),
        )
    }
}

/// Classifies one line (terminator and BOM already removed) by the table of `spec/mcp.md` §3.2 and
/// decides the action; immediate answers (`ping`, `tools/list`, errors) are computed here.
pub fn classify(line: &[u8], state: &State) -> Action {
    if line.iter().all(|byte| matches!(byte, b' ' | b'\t' | b'\r' | b'\n')) {
        return Action::Ignore;
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return Action::Log(format!("ignored a line that is not UTF-8: {}", excerpt(line)));
    };
    let message = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(message)) => message,
        Ok(Value::Array(_)) => {
            return Action::Log(format!(
                "ignored a batch (batches are not supported): {}",
                excerpt(line)
            ));
        }
        Ok(_) => {
            return Action::Log(format!("ignored JSON that is not an object: {}", excerpt(line)));
        }
        Err(error) => {
            return Action::Log(format!(
                "ignored a line that is not JSON ({error}): {}",
                excerpt(line)
            ));
        }
    };
    let method = message.get("method").and_then(Value::as_str);
    let Some(raw_id) = message.get("id") else {
        return match method {
            Some(method) => notification(method, &message),
            None => {
                Action::Log(format!("ignored an object without id and method: {}", excerpt(line)))
            }
        };
    };
    let about = Described { method, id: raw_id };
    let Some(id) = RequestId::from_value(raw_id) else {
        return Action::Log(format!("ignored a message with an unusable id{about}"));
    };
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Action::Log(format!("ignored a message whose jsonrpc is not \"2.0\"{about}"));
    }
    let Some(method) = method else {
        if !message.contains_key("method")
            && (message.contains_key("result") || message.contains_key("error"))
        {
            return Action::Ignore;
        }
        return Action::Log(format!("ignored a message without a string method{about}"));
    };
    let params = match message.get("params") {
        None => None,
        Some(Value::Object(params)) => Some(params),
        Some(_) => {
            return Action::Respond(Response::invalid_params(id, "params must be an object"));
        }
    };
    request(id, method, params, state)
}

fn notification(method: &str, message: &Map<String, Value>) -> Action {
    if method != "notifications/cancelled" {
        return Action::Ignore;
    }
    let request_id = message
        .get("params")
        .and_then(|params| params.get("requestId"))
        .and_then(RequestId::from_value);
    match request_id {
        Some(request_id) => Action::Cancel { request_id },
        None => Action::Ignore,
    }
}

fn request(
    id: RequestId,
    method: &str,
    params: Option<&Map<String, Value>>,
    state: &State,
) -> Action {
    let member = |name: &str| params.and_then(|params| params.get(name));
    match method {
        "initialize" => {
            let requested = member("protocolVersion").and_then(Value::as_str);
            let protocol_version = PROTOCOL_VERSIONS
                .into_iter()
                .find(|version| Some(*version) == requested)
                .unwrap_or(LATEST_PROTOCOL_VERSION);
            Action::Initialize { id, protocol_version }
        }
        "ping" => Action::Respond(Response::result(id, Value::Object(Map::new()))),
        "tools/list" => {
            if member("cursor").is_some() {
                return Action::Respond(Response::invalid_params(
                    id,
                    "cursor is not supported: the tool list has one page",
                ));
            }
            Action::Respond(Response::result(id, tools_list(state.operations())))
        }
        "tools/call" => tools_call(id, member("name"), member("arguments")),
        // Everything else, including the stateless revision's `server/discover`, which is answered
        // at once so that a host falls back to `initialize` (§3.4).
        _ => Action::Respond(Response::method_not_found(id)),
    }
}

fn tools_call(id: RequestId, name: Option<&Value>, arguments: Option<&Value>) -> Action {
    let Some(Value::String(name)) = name else {
        return Action::Respond(Response::invalid_params(id, "tools/call needs a string name"));
    };
    if operation(name).is_none() {
        return Action::Respond(Response::error(
            id,
            ErrorCode::INVALID_PARAMS,
            format!("Unknown tool: {name}"),
        ));
    }
    let arguments = match arguments {
        None | Some(Value::Null) => &Value::Object(Map::new()),
        Some(arguments @ Value::Object(_)) => arguments,
        Some(_) => {
            return Action::Respond(Response::invalid_params(id, "arguments must be an object"));
        }
    };
    Action::Call { id, request: ToolRequest::new(name.clone(), arguments) }
}

/// ` (method "…") (id …)` for log lines, naming what is known; together they echo at most
/// [`LOG_EXCERPT_BYTES`] bytes of input.
struct Described<'a> {
    method: Option<&'a str>,
    id: &'a Value,
}

impl fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let half = LOG_EXCERPT_BYTES / 2;
        if let Some(method) = self.method {
            let shown = clip(method.as_bytes(), half);
            let cut = if shown.len() < method.len() { "…" } else { "" };
            write!(f, " (method {:?}{cut})", String::from_utf8_lossy(shown))?;
        }
        let id = self.id.to_string();
        let shown = clip(id.as_bytes(), half);
        let cut = if shown.len() < id.len() { "…" } else { "" };
        write!(f, " (id {}{cut})", String::from_utf8_lossy(shown))
    }
}

/// At most [`LOG_EXCERPT_BYTES`] bytes of `input`, quoted and escaped so that a log line stays one
/// line, followed by the total length when it was cut.
pub fn excerpt(input: &[u8]) -> String {
    let shown = clip(input, LOG_EXCERPT_BYTES);
    let text = String::from_utf8_lossy(shown);
    if shown.len() < input.len() {
        format!("{text:?}… ({} bytes)", input.len())
    } else {
        format!("{text:?}")
    }
}

/// The first `limit` bytes of `input`, not splitting a UTF-8 character.
fn clip(input: &[u8], limit: usize) -> &[u8] {
    if input.len() <= limit {
        return input;
    }
    let mut end = limit;
    // Step back over continuation bytes (at most three) so that a character is not split.
    while limit.saturating_sub(3) < end && end > 0 && input[end] & 0xC0 == 0x80 {
        end -= 1;
    }
    &input[..end]
}
