//! The JSON-RPC 2.0 pieces the bridge needs: request ids, error codes and the exact response
//! envelope (`spec/mcp.md` §3.2, §3.8, §3.9).

#[cfg(test)]
mod tests;

use std::fmt;

use serde::{Serialize, Serializer};
use serde_json::Value;

/// A usable request id (`spec/mcp.md` §3.2): a JSON string, or a JSON number written without
/// fraction or exponent that fits in a signed 64-bit integer. It is echoed with the same JSON type
/// and value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// An integer id, such as `0` or `-7`.
    Number(i64),
    /// A string id.
    String(String),
}

impl RequestId {
    /// The usable id that `value` holds, or `None` (`null`, `1.5`, `1e3`, `true`, objects, arrays,
    /// integers outside the `i64` range).
    ///
    /// `serde_json` is built with `arbitrary_precision` in this workspace, so a number keeps the
    /// literal text it was written with; that text is what decides (`1.0` is not usable).
    pub fn from_value(value: &Value) -> Option<RequestId> {
        match value {
            Value::String(text) => Some(RequestId::String(text.clone())),
            Value::Number(number) => integer_literal(&number.to_string()).map(RequestId::Number),
            _ => None,
        }
    }
}

impl fmt::Display for RequestId {
    /// The id as JSON, so that `1` and `"1"` read differently in log lines.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(number) => write!(f, "{number}"),
            RequestId::String(text) => write!(f, "{}", Value::String(text.clone())),
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(number) => serializer.serialize_i64(*number),
            RequestId::String(text) => serializer.serialize_str(text),
        }
    }
}

/// `-?[0-9]+` that fits in an `i64`.
fn integer_literal(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// A JSON-RPC error code (`spec/mcp.md` §3.9, `docs/mcp-eras.md`): the bridge sends
/// `METHOD_NOT_FOUND` (unknown request method), `INVALID_PARAMS` (`Unknown tool: <name>` or
/// `Invalid params: <detail>`), `INTERNAL_ERROR` (a failed `session_info` during `initialize`,
/// `server/discover` or a modern `tools/list`, every request to a bridge with a startup mistake
/// ([`crate::serve_refusing`]), or a bug in the bridge), `RESOURCE_NOT_FOUND`
/// (`resources/read` of an unknown URI in the legacy era) and `UNSUPPORTED_PROTOCOL_VERSION`
/// (a modern request whose version the bridge does not speak).
pub use termsprawl_protocol::jsonrpc::ErrorCode;

/// One response: `{"jsonrpc":"2.0","id":…,"result":…}` or
/// `{"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…}}`, nothing else and no `null` member.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    id: RequestId,
    outcome: Outcome,
}

#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Result(Value),
    Error { code: ErrorCode, message: String, data: Option<Value> },
}

impl Response {
    /// A success carrying `result`.
    pub fn result(id: RequestId, result: Value) -> Response {
        Response { id, outcome: Outcome::Result(result) }
    }

    /// An error with `code` and `message`.
    pub fn error(id: RequestId, code: ErrorCode, message: impl Into<String>) -> Response {
        Response { id, outcome: Outcome::Error { code, message: message.into(), data: None } }
    }

    /// An error with `code`, `message` and `data`.
    pub fn error_with_data(
        id: RequestId,
        code: ErrorCode,
        message: impl Into<String>,
        data: Value,
    ) -> Response {
        Response { id, outcome: Outcome::Error { code, message: message.into(), data: Some(data) } }
    }

    /// `-32601` `Method not found`.
    pub fn method_not_found(id: RequestId) -> Response {
        Response::error(id, ErrorCode::METHOD_NOT_FOUND, "Method not found")
    }

    /// `-32602` `Invalid params: <detail>`.
    pub fn invalid_params(id: RequestId, detail: &str) -> Response {
        Response::error(id, ErrorCode::INVALID_PARAMS, format!("Invalid params: {detail}"))
    }

    /// `-32603` `Internal error: <detail>`, for bugs in the bridge only.
    pub fn internal_error(id: RequestId, detail: &str) -> Response {
        Response::error(id, ErrorCode::INTERNAL_ERROR, format!("Internal error: {detail}"))
    }

    /// This response with `data` set, when it is an error; a success is returned unchanged.
    #[must_use]
    pub fn with_data(mut self, value: Value) -> Response {
        if let Outcome::Error { data, .. } = &mut self.outcome {
            *data = Some(value);
        }
        self
    }

    /// Whether this is an error response.
    pub fn is_error(&self) -> bool {
        matches!(self.outcome, Outcome::Error { .. })
    }

    /// The id the response answers.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The result, when this is a success.
    pub fn result_value(&self) -> Option<&Value> {
        match &self.outcome {
            Outcome::Result(result) => Some(result),
            Outcome::Error { .. } => None,
        }
    }

    /// The compact JSON line, without the terminating LF.
    pub fn to_line(&self) -> String {
        let envelope = match &self.outcome {
            Outcome::Result(result) => {
                Envelope { jsonrpc: "2.0", id: &self.id, result: Some(result), error: None }
            }
            Outcome::Error { code, message, data } => Envelope {
                jsonrpc: "2.0",
                id: &self.id,
                result: None,
                error: Some(ErrorObject { code: code.0, message, data: data.as_ref() }),
            },
        };
        serde_json::to_string(&envelope).expect("a response envelope always serialises")
    }
}

#[derive(Serialize)]
struct Envelope<'a> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorObject<'a>>,
}

#[derive(Serialize)]
struct ErrorObject<'a> {
    code: i64,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a Value>,
}
