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
use termsprawl_protocol::{McpRevision, ToolRequest, ToolResult, instructions};

use crate::jsonrpc::{ErrorCode, RequestId, Response};
use crate::resources::{resource_contents, resource_entries, topic_of};
use crate::tools::{ToolFilter, complete, tool_entries};

/// The handshake-era protocol revisions the bridge speaks, oldest first; a requested one is
/// echoed by `initialize`.
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The revision `initialize` answers when the client asks for one not in [`PROTOCOL_VERSIONS`].
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// The stateless (modern) revisions the bridge speaks.
pub const MODERN_PROTOCOL_VERSIONS: [&str; 1] = ["2026-07-28"];

/// Every revision the bridge speaks, newest first: `server/discover`'s `supportedVersions` and
/// the `supported` list of an unsupported-version error.
pub const SUPPORTED_VERSIONS: [&str; 5] =
    ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The `_meta` key of a modern request's protocol version.
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// The `_meta` key of a modern request's client capabilities.
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";

/// The `_meta` key of a modern result's server identity.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// `ttlMs` of a modern `tools/list`: the app's browser setting can change the list, so hosts
/// should ask again after a minute.
pub const TOOLS_LIST_TTL_MS: u64 = 60_000;

/// `ttlMs` of `server/discover`, `resources/list` and `resources/read`: fixed in the binary.
pub const STATIC_TTL_MS: u64 = 3_600_000;

/// How many bytes of an input line a log line may echo.
pub const LOG_EXCERPT_BYTES: usize = 200;

/// What the bridge knows about the connection: the narrowing flags, the era, and the last
/// completed handshake.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct State {
    operations: Option<Vec<String>>,
    protocol_version: Option<&'static str>,
    modern: bool,
    filter: ToolFilter,
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
    /// A legacy `tools/list`: answer with [`State::tools_list`] once no `initialize` that came
    /// before it is still waiting for its `session_info`.
    ToolsList {
        /// The request's id.
        id: RequestId,
    },
    /// Call `session_info`, then answer with [`State::complete_discover`].
    Discover {
        /// The request's id.
        id: RequestId,
    },
    /// A modern `tools/list`: call `session_info`, then answer with
    /// [`State::complete_modern_tools_list`].
    ModernToolsList {
        /// The request's id.
        id: RequestId,
    },
    /// Call the tool server, then answer with [`crate::tools::call_response_line`] (or its
    /// modern form).
    Call {
        /// The request's id.
        id: RequestId,
        /// The body for the tool server.
        request: ToolRequest,
        /// Whether the request is of the modern era (its result carries `resultType`).
        modern: bool,
        /// Where a chained wait's progress goes, when `params._meta.progressToken` asked for it.
        progress: Option<ProgressTarget>,
    },
    /// Drop the answer of the most recent in-flight request with this id, if any (not an
    /// `initialize`).
    Cancel {
        /// The `params.requestId` of the notification.
        request_id: RequestId,
    },
}

/// A `tools/call`'s `_meta.progressToken` (a string or an integer) and whether its revision's
/// `notifications/progress` has `message` (since 2025-03-26; the modern era has it).
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressTarget {
    /// The token, echoed in every notification.
    pub token: Value,
    /// Whether notifications carry `message`.
    pub message: bool,
}

impl Action {
    /// The id of the request this action answers, when it answers one.
    pub fn request_id(&self) -> Option<&RequestId> {
        match self {
            Action::Ignore | Action::Log(_) | Action::Cancel { .. } => None,
            Action::Respond(response) => Some(response.id()),
            Action::Initialize { id, .. }
            | Action::ToolsList { id }
            | Action::Discover { id }
            | Action::ModernToolsList { id }
            | Action::Call { id, .. } => Some(id),
        }
    }
}

impl State {
    /// A fresh connection that lists and serves what `filter` keeps.
    pub fn new(filter: ToolFilter) -> State {
        State { filter, ..State::default() }
    }

    /// The operation names of the last handshake's `session_info`, when it listed them.
    pub fn operations(&self) -> Option<&[String]> {
        self.operations.as_deref()
    }

    /// The revision negotiated by the last completed `initialize`; before any, the newest is
    /// assumed.
    pub fn protocol_version(&self) -> &'static str {
        self.protocol_version.unwrap_or(LATEST_PROTOCOL_VERSION)
    }

    /// Whether the connection is in the modern (2026-07-28) era: it has seen `server/discover`
    /// or a request with the modern `_meta`, and no `initialize` since.
    pub fn is_modern(&self) -> bool {
        self.modern
    }

    /// The narrowing flags.
    pub fn filter(&self) -> &ToolFilter {
        &self.filter
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
        self.operations = listed_operations(value);
        self.protocol_version = Some(protocol_version);
        // 2024-11-05 keeps the reference's shape exactly: tools only, no title.
        let capabilities = if protocol_version == "2024-11-05" {
            json!({"tools": {}})
        } else {
            json!({"tools": {}, "resources": {}})
        };
        let titled = McpRevision::of(protocol_version) >= McpRevision::V2025_06_18;
        Response::result(
            id,
            json!({
                "protocolVersion": protocol_version,
                "capabilities": capabilities,
                "serverInfo": server_info(value, titled),
                "instructions": instructions(),
            }),
        )
    }

    /// The answer to a legacy `tools/list`: the table in the negotiated revision's shape,
    /// filtered by the narrowing flags and by the last handshake.
    pub fn tools_list(&self, id: RequestId) -> Response {
        let revision = McpRevision::of(self.protocol_version());
        Response::result(
            id,
            json!({"tools": tool_entries(self.operations(), &self.filter, revision)}),
        )
    }

    /// The answer to `server/discover` whose `session_info` call returned `session_info`.
    pub fn complete_discover(&self, id: RequestId, session_info: &ToolResult) -> Response {
        let value = match session_info {
            ToolResult::Failure { error } => {
                return Response::error(id, ErrorCode::INTERNAL_ERROR, error.clone());
            }
            ToolResult::Success { value } => value.as_ref().and_then(Value::as_object),
        };
        Response::result(
            id,
            json!({
                "resultType": "complete",
                "supportedVersions": SUPPORTED_VERSIONS,
                "capabilities": {"tools": {}, "resources": {}},
                "_meta": {SERVER_INFO_KEY: server_info(value, true)},
                "instructions": instructions(),
                "ttlMs": STATIC_TTL_MS,
                "cacheScope": "public",
            }),
        )
    }

    /// The answer to a modern `tools/list` whose own `session_info` call returned
    /// `session_info`: the table filtered by the narrowing flags and by that answer's
    /// `operations`, private to this session.
    pub fn complete_modern_tools_list(&self, id: RequestId, session_info: &ToolResult) -> Response {
        let value = match session_info {
            ToolResult::Failure { error } => {
                return Response::error(id, ErrorCode::INTERNAL_ERROR, error.clone());
            }
            ToolResult::Success { value } => value.as_ref().and_then(Value::as_object),
        };
        let listed = listed_operations(value);
        let tools = tool_entries(listed.as_deref(), &self.filter, McpRevision::V2025_06_18);
        Response::result(
            id,
            json!({
                "resultType": "complete",
                "tools": tools,
                "ttlMs": TOOLS_LIST_TTL_MS,
                "cacheScope": "private",
                "_meta": {SERVER_INFO_KEY: server_info(value, true)},
            }),
        )
    }
}

/// The operation names a `session_info` result lists, when it succeeded and has `operations`.
pub fn listed_by(session_info: &ToolResult) -> Option<Vec<String>> {
    match session_info {
        ToolResult::Success { value } => {
            listed_operations(value.as_ref().and_then(Value::as_object))
        }
        ToolResult::Failure { .. } => None,
    }
}

/// `session_info`'s `operations`, when it is an array (its string members).
fn listed_operations(value: Option<&Map<String, Value>>) -> Option<Vec<String>> {
    match value.and_then(|value| value.get("operations")) {
        Some(Value::Array(names)) => {
            Some(names.iter().filter_map(|name| name.as_str().map(str::to_owned)).collect())
        }
        _ => None,
    }
}

/// `serverInfo`: `termsprawl`, the app's version (or `unknown`), and the title when `titled`.
fn server_info(value: Option<&Map<String, Value>>, titled: bool) -> Value {
    let version = match value.and_then(|value| value.get("appVersion")) {
        Some(Value::String(version)) if !version.is_empty() => version.clone(),
        _ => "unknown".to_owned(),
    };
    if titled {
        json!({"name": "termsprawl", "title": "termsprawl", "version": version})
    } else {
        json!({"name": "termsprawl", "version": version})
    }
}

/// Classifies one line (terminator and BOM already removed) by the table of `spec/mcp.md` §3.2,
/// decides the action and records an era change; immediate answers (`ping`, resources, errors)
/// are computed here.
pub fn classify(line: &[u8], state: &mut State) -> Action {
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
    state: &mut State,
) -> Action {
    let member = |name: &str| params.and_then(|params| params.get(name));
    if method == "initialize" {
        // An `initialize` always switches the connection to the legacy era (`docs/mcp-eras.md`).
        state.modern = false;
        let requested = member("protocolVersion").and_then(Value::as_str);
        let protocol_version = PROTOCOL_VERSIONS
            .into_iter()
            .find(|version| Some(*version) == requested)
            .unwrap_or(LATEST_PROTOCOL_VERSION);
        return Action::Initialize { id, protocol_version };
    }
    let meta = member("_meta");
    let enveloped =
        meta.and_then(Value::as_object).is_some_and(|meta| meta.contains_key(PROTOCOL_VERSION_KEY));
    if method == "server/discover" || enveloped {
        state.modern = true;
        return modern_request(id, method, params, meta, state);
    }
    if state.modern {
        return Action::Respond(Response::invalid_params(
            id,
            "this connection speaks MCP 2026-07-28: every request needs _meta with io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities (send initialize to switch to the handshake era)",
        ));
    }
    match method {
        "ping" => Action::Respond(Response::result(id, Value::Object(Map::new()))),
        "tools/list" => match no_cursor(id, member("cursor"), "tool") {
            Ok(id) => Action::ToolsList { id },
            Err(response) => Action::Respond(*response),
        },
        "tools/call" => {
            let message = McpRevision::of(state.protocol_version()) >= McpRevision::V2025_03_26;
            let progress = progress_target(member("_meta"), message);
            tools_call(id, member("name"), member("arguments"), &state.filter, false, progress)
        }
        "resources/list" => Action::Respond(match no_cursor(id, member("cursor"), "resource") {
            Ok(id) => {
                let titled = McpRevision::of(state.protocol_version()) >= McpRevision::V2025_06_18;
                Response::result(id, json!({"resources": resource_entries(titled)}))
            }
            Err(response) => *response,
        }),
        "resources/read" => Action::Respond(resources_read(id, member("uri"), false)),
        // No templates, but the list exists because `resources` is declared (issue 24).
        "resources/templates/list" => {
            Action::Respond(match no_cursor(id, member("cursor"), "resource template") {
                Ok(id) => Response::result(id, json!({"resourceTemplates": []})),
                Err(response) => *response,
            })
        }
        // Everything else; `server/discover` is handled above.
        _ => Action::Respond(Response::method_not_found(id)),
    }
}

/// A request of the modern era: the `_meta` envelope is checked first, then the method.
fn modern_request(
    id: RequestId,
    method: &str,
    params: Option<&Map<String, Value>>,
    meta: Option<&Value>,
    state: &State,
) -> Action {
    let id = match check_envelope(id, meta) {
        Ok(id) => id,
        Err(response) => return Action::Respond(*response),
    };
    let member = |name: &str| params.and_then(|params| params.get(name));
    match method {
        "server/discover" => Action::Discover { id },
        "tools/list" => match no_cursor(id, member("cursor"), "tool") {
            Ok(id) => Action::ModernToolsList { id },
            Err(response) => Action::Respond(*response),
        },
        "tools/call" => {
            let progress = progress_target(meta, true);
            tools_call(id, member("name"), member("arguments"), &state.filter, true, progress)
        }
        "resources/list" => Action::Respond(match no_cursor(id, member("cursor"), "resource") {
            Ok(id) => Response::result(
                id,
                json!({
                    "resultType": "complete",
                    "resources": resource_entries(true),
                    "ttlMs": STATIC_TTL_MS,
                    "cacheScope": "public",
                }),
            ),
            Err(response) => *response,
        }),
        "resources/read" => Action::Respond(resources_read(id, member("uri"), true)),
        "resources/templates/list" => {
            Action::Respond(match no_cursor(id, member("cursor"), "resource template") {
                Ok(id) => Response::result(
                    id,
                    json!({
                        "resultType": "complete",
                        "resourceTemplates": [],
                        "ttlMs": STATIC_TTL_MS,
                        "cacheScope": "public",
                    }),
                ),
                Err(response) => *response,
            })
        }
        // `ping`, `initialize`-era methods and everything unknown.
        _ => Action::Respond(Response::method_not_found(id)),
    }
}

/// The `_meta` rules of 2026-07-28: both required keys present (`-32602`), then a version the
/// bridge speaks (`-32022` with `data.supported` and `data.requested`).
fn check_envelope(id: RequestId, meta: Option<&Value>) -> Result<RequestId, Box<Response>> {
    let meta = meta.and_then(Value::as_object);
    let version = meta.and_then(|meta| meta.get(PROTOCOL_VERSION_KEY));
    let capabilities = meta.and_then(|meta| meta.get(CLIENT_CAPABILITIES_KEY));
    let (Some(Value::String(version)), Some(Value::Object(_))) = (version, capabilities) else {
        return Err(Box::new(Response::invalid_params(
            id,
            "_meta needs io.modelcontextprotocol/protocolVersion (a string) and io.modelcontextprotocol/clientCapabilities (an object)",
        )));
    };
    if !MODERN_PROTOCOL_VERSIONS.contains(&version.as_str()) {
        return Err(Box::new(Response::error_with_data(
            id,
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            json!({"supported": SUPPORTED_VERSIONS, "requested": version}),
        )));
    }
    Ok(id)
}

/// A list request must not carry a cursor: every list has one page.
fn no_cursor(
    id: RequestId,
    cursor: Option<&Value>,
    list: &str,
) -> Result<RequestId, Box<Response>> {
    match cursor {
        None => Ok(id),
        Some(_) => Err(Box::new(Response::invalid_params(
            id,
            &format!("cursor is not supported: the {list} list has one page"),
        ))),
    }
}

/// `resources/read` of a guide; an unknown URI is `-32002` in the legacy era and `-32602` in the
/// modern one, both `Resource not found` with `data.uri`.
fn resources_read(id: RequestId, uri: Option<&Value>, modern: bool) -> Response {
    let Some(Value::String(uri)) = uri else {
        return Response::invalid_params(id, "resources/read needs a string uri");
    };
    let Some(topic) = topic_of(uri) else {
        let code = if modern { ErrorCode::INVALID_PARAMS } else { ErrorCode::RESOURCE_NOT_FOUND };
        return Response::error_with_data(id, code, "Resource not found", json!({"uri": uri}));
    };
    let result = json!({"contents": resource_contents(topic)});
    if modern {
        let mut result = complete(result);
        result["ttlMs"] = json!(STATIC_TTL_MS);
        result["cacheScope"] = json!("public");
        Response::result(id, result)
    } else {
        Response::result(id, result)
    }
}

/// The progress target of `_meta.progressToken`, when it is a string or an integer (MCP).
fn progress_target(meta: Option<&Value>, message: bool) -> Option<ProgressTarget> {
    let token = meta?.get("progressToken")?;
    let usable = token.is_string() || token.is_i64() || token.is_u64();
    usable.then(|| ProgressTarget { token: token.clone(), message })
}

fn tools_call(
    id: RequestId,
    name: Option<&Value>,
    arguments: Option<&Value>,
    filter: &ToolFilter,
    modern: bool,
    progress: Option<ProgressTarget>,
) -> Action {
    let Some(Value::String(name)) = name else {
        return Action::Respond(Response::invalid_params(id, "tools/call needs a string name"));
    };
    if filter.find(name).is_none() {
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
    Action::Call { id, request: ToolRequest::new(name.clone(), arguments), modern, progress }
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
