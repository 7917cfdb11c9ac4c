//! The two tool methods as pure functions: the `tools/list` payload filtered by the handshake and
//! by the narrowing flags (`spec/mcp.md` §3.4, `docs/mcp-eras.md`), and the mapping of a
//! `ToolResult` to a `tools/call` result, with the size guard (§3.5).

use std::fmt;

use serde_json::{Map, Value, json};
use termsprawl_protocol::{McpRevision, Operation, ToolResult, operation, operations};

use crate::jsonrpc::{RequestId, Response};

/// The longest response line the bridge writes, in bytes (8 MiB), LF excluded. A TypeScript-SDK
/// host closes the whole connection on a line over 10 MiB.
pub const MAX_RESPONSE_BYTES: usize = 8 * 1024 * 1024;

/// Which operations the bridge lists and serves at all: `termsprawlctl mcp --read-only` keeps
/// those whose `readOnlyHint` is true, `--tools NAME,…` keeps the named ones; both together keep
/// what both keep. The default keeps every operation of the table.
///
/// It composes with the live filter of the handshake (`session_info.operations`): a tool is listed
/// only when both keep it. A `tools/call` of a tool it does not keep is `Unknown tool: NAME`,
/// exactly as a name the table does not have.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    read_only: bool,
    names: Option<Vec<&'static str>>,
}

/// A `--tools` name that is not an operation of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownToolName(pub String);

impl fmt::Display for UnknownToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown tool {:?}", self.0)
    }
}

impl std::error::Error for UnknownToolName {}

impl ToolFilter {
    /// Keeps every operation.
    pub fn all() -> ToolFilter {
        ToolFilter::default()
    }

    /// Keeps the read-only operations when `read_only`, and only the operations `names` lists
    /// when it is given; a name the table does not have is an error.
    pub fn new<S: AsRef<str>>(
        read_only: bool,
        names: Option<&[S]>,
    ) -> Result<ToolFilter, UnknownToolName> {
        let names = match names {
            None => None,
            Some(names) => Some(
                names
                    .iter()
                    .map(|name| {
                        operation(name.as_ref())
                            .map(Operation::name)
                            .ok_or_else(|| UnknownToolName(name.as_ref().to_owned()))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        Ok(ToolFilter { read_only, names })
    }

    /// Whether the filter keeps `operation`.
    pub fn keeps(&self, operation: &Operation) -> bool {
        (!self.read_only || operation.annotations().read_only)
            && self.names.as_ref().is_none_or(|names| names.contains(&operation.name()))
    }

    /// The names `--tools` gave that `--read-only` removes (they are never listed or served), in
    /// the order given.
    pub fn removed_by_read_only(&self) -> Vec<&'static str> {
        let Some(names) = &self.names else { return Vec::new() };
        names
            .iter()
            .filter(|name| {
                self.read_only && operation(name).is_some_and(|op| !op.annotations().read_only)
            })
            .copied()
            .collect()
    }

    /// The names `--tools` gave (and `--read-only` keeps) that `listed` (a `session_info`'s
    /// `operations`) does not have: the server does not serve them, so they are not listed.
    pub fn unlisted(&self, listed: &[String]) -> Vec<&'static str> {
        let Some(names) = &self.names else { return Vec::new() };
        names
            .iter()
            .filter(|name| operation(name).is_some_and(|op| self.keeps(op)))
            .filter(|name| !listed.iter().any(|listed| listed == *name))
            .copied()
            .collect()
    }

    /// The operation called `name`, when the table has it and the filter keeps it.
    pub fn find(&self, name: &str) -> Option<&'static Operation> {
        operation(name).filter(|operation| self.keeps(operation))
    }
}

/// The entries of `tools/list` in table order, in the tool shape of `revision`: the operations
/// `filter` keeps, restricted to `allowed` when the app's `session_info` listed the operations it
/// serves.
pub(crate) fn tool_entries(
    allowed: Option<&[String]>,
    filter: &ToolFilter,
    revision: McpRevision,
) -> Vec<Value> {
    operations()
        .iter()
        .filter(|operation| filter.keeps(operation))
        .filter(|operation| {
            allowed.is_none_or(|names| names.iter().any(|name| name == operation.name()))
        })
        .map(|operation| operation.tool_json_for(revision))
        .collect()
}

/// The legacy `tools/list` result: `{"tools":[…]}` in table order, restricted to `allowed` when
/// the handshake's `session_info` listed the operations the app serves, else the whole table, in
/// the 2024-11-05 shape (the protocol's catalog).
pub fn tools_list(allowed: Option<&[String]>) -> Value {
    json!({"tools": tool_entries(allowed, &ToolFilter::all(), McpRevision::V2024_11_05)})
}

/// The `tools/call` result for `result`: `{"isError":…,"content":[…]}`.
///
/// An image block when `ok` is true and `value.image` is a non-empty string (its `mimeType` is
/// `value.mimeType` when that is a string starting with `image/`, else `image/png`); otherwise one
/// text block holding the compact JSON of the whole `ToolResult`, member order preserved.
pub fn call_result(result: ToolResult) -> Value {
    let is_error = !result.is_ok();
    let block = match result {
        ToolResult::Success { value: Some(Value::Object(mut value)) } if has_image(&value) => {
            let Some(Value::String(data)) = value.remove("image") else {
                unreachable!("has_image checked the member")
            };
            let mime_type = match value.remove("mimeType") {
                Some(Value::String(mime_type)) if mime_type.starts_with("image/") => mime_type,
                _ => "image/png".to_owned(),
            };
            json!({"type": "image", "data": data, "mimeType": mime_type})
        }
        other => text_block(&other),
    };
    json!({"isError": is_error, "content": [block]})
}

/// [`call_result`] for the modern era: `resultType` `complete` first.
pub fn modern_call_result(result: ToolResult) -> Value {
    complete(call_result(result))
}

/// `result` with `"resultType":"complete"` as its first member (every modern-era result).
pub(crate) fn complete(result: Value) -> Value {
    let mut object = Map::new();
    object.insert("resultType".to_owned(), Value::from("complete"));
    if let Value::Object(members) = result {
        object.extend(members);
    }
    Value::Object(object)
}

/// The whole response line for a finished `tools/call`, replaced by the "too large" `isError`
/// result when it would exceed [`MAX_RESPONSE_BYTES`].
pub fn call_response_line(id: RequestId, result: ToolResult) -> String {
    sized_call_line(id, result, call_result)
}

/// [`call_response_line`] for the modern era.
pub fn modern_call_response_line(id: RequestId, result: ToolResult) -> String {
    sized_call_line(id, result, modern_call_result)
}

fn sized_call_line(id: RequestId, result: ToolResult, map: fn(ToolResult) -> Value) -> String {
    let response = Response::result(id, map(result));
    let line = response.to_line();
    if line.len() <= MAX_RESPONSE_BYTES {
        return line;
    }
    let too_large = ToolResult::failure(format!(
        "Tool result too large for MCP: {} bytes (limit {MAX_RESPONSE_BYTES})",
        line.len()
    ));
    Response::result(response.id().clone(), map(too_large)).to_line()
}

fn has_image(value: &Map<String, Value>) -> bool {
    matches!(value.get("image"), Some(Value::String(image)) if !image.is_empty())
}

fn text_block(result: &ToolResult) -> Value {
    let text = serde_json::to_string(result).expect("a tool result always serialises");
    json!({"type": "text", "text": text})
}
