//! The two tool methods as pure functions: the `tools/list` payload filtered by the handshake
//! (`spec/mcp.md` §3.4) and the mapping of a `ToolResult` to a `tools/call` result, with the size
//! guard (§3.5).

use serde_json::{Map, Value, json};
use termsprawl_protocol::{ToolResult, operations};

use crate::jsonrpc::{RequestId, Response};

/// The longest response line the bridge writes, in bytes (8 MiB), LF excluded. A TypeScript-SDK
/// host closes the whole connection on a line over 10 MiB.
pub const MAX_RESPONSE_BYTES: usize = 8 * 1024 * 1024;

/// The `tools/list` result: `{"tools":[…]}` in table order, restricted to `allowed` when the
/// handshake's `session_info` listed the operations the app serves, else the whole table.
pub fn tools_list(allowed: Option<&[String]>) -> Value {
    let tools = operations()
        .iter()
        .filter(|operation| {
            allowed.is_none_or(|names| names.iter().any(|name| name == operation.name()))
        })
        .map(termsprawl_protocol::Operation::tool_json)
        .collect();
    let mut result = Map::new();
    result.insert("tools".to_owned(), Value::Array(tools));
    Value::Object(result)
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

/// The whole response line for a finished `tools/call`, replaced by the "too large" `isError`
/// result when it would exceed [`MAX_RESPONSE_BYTES`].
pub fn call_response_line(id: RequestId, result: ToolResult) -> String {
    let response = Response::result(id, call_result(result));
    let line = response.to_line();
    if line.len() <= MAX_RESPONSE_BYTES {
        return line;
    }
    let too_large = ToolResult::failure(format!(
        "Tool result too large for MCP: {} bytes (limit {MAX_RESPONSE_BYTES})",
        line.len()
    ));
    Response::result(response.id().clone(), call_result(too_large)).to_line()
}

fn has_image(value: &Map<String, Value>) -> bool {
    matches!(value.get("image"), Some(Value::String(image)) if !image.is_empty())
}

fn text_block(result: &ToolResult) -> Value {
    let text = serde_json::to_string(result).expect("a tool result always serialises");
    json!({"type": "text", "text": text})
}
