//! The wire types of `spec/protocol.md` §1, with exact member names and member order.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The bearer token of a session: 32 random bytes as 64 lowercase hex digits.
///
/// Its `Debug` and `Display` never show the secret, so that no log line or error message can leak
/// it by accident; [`SessionToken::expose`] is the one way to read it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionToken(String);

impl SessionToken {
    /// Wraps a token string as it was read or minted.
    pub fn new(token: impl Into<String>) -> SessionToken {
        SessionToken(token.into())
    }

    /// The secret itself, for the one place that puts it into an `authorization` header or a
    /// session file.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the token has the format the server mints: `^[a-f0-9]{64}$`.
    pub fn is_well_formed(&self) -> bool {
        self.0.len() == 64
            && self.0.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    }
}

impl fmt::Debug for SessionToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionToken(<redacted>)")
    }
}

impl fmt::Display for SessionToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Who is calling: the canvas node of the agent's terminal and its project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolIdentity {
    /// The canvas node id, which also keys the tmux session `ts-<nodeId>`.
    pub node_id: String,
    /// The workspace project id.
    pub project_id: String,
}

/// The integration state of an agent session (`spec/protocol.md` §1, §6.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IntegrationState {
    /// An MCP-capable agent has called `session_info`.
    Connected,
    /// Instructions were delivered but only the command line is available.
    CliFallback,
    /// Anything else.
    NeedsSetup,
}

/// The integration status stored in a session file and reported by `session_info`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntegrationStatus {
    /// The state.
    pub state: IntegrationState,
    /// The launch adapter, or the bare agent id when the executable was not found.
    pub adapter: String,
    /// The agent's `--version` output, trimmed and cut to 160 characters, or `unknown`.
    pub version: String,
    /// Text for people.
    pub reason: String,
}

/// The content of a session file, `D/sessions/<nodeId>.json`.
///
/// Serialises compact in the member order of `spec/protocol.md` §2.2. Unknown members are
/// tolerated when reading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSession {
    /// The node id.
    pub node_id: String,
    /// The project id.
    pub project_id: String,
    /// The bearer token.
    pub token: SessionToken,
    /// The integration status the session was provisioned with.
    pub status: IntegrationStatus,
}

/// The content of `D/endpoint.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolEndpoint {
    /// `http://127.0.0.1:<port>/call`.
    pub url: String,
    /// The running server's instance id, a UUID v4.
    pub instance_id: String,
}

/// The body of one tool call: `{"operation":…,"args":…}`.
///
/// `args` is kept as JSON text so that what a caller wrote can travel byte for byte
/// (`spec/shell-conventions.md` §5); [`ToolRequest::new`] encodes a [`Value`] compactly. The
/// operation is optional only because the compatibility `call` without an operation sends a body
/// without that member (`spec/protocol.md` §8).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolRequest {
    /// The operation name; `None` omits the member.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// The arguments as JSON text; normally an object, but sent as given.
    pub args: Box<RawValue>,
}

impl ToolRequest {
    /// A request for `operation` with `args` encoded compactly, member order kept.
    pub fn new(operation: impl Into<String>, args: &Value) -> ToolRequest {
        ToolRequest { operation: Some(operation.into()), args: raw(args) }
    }

    /// A request whose `args` is JSON text sent unchanged (it must be valid JSON).
    pub fn with_raw_args(
        operation: Option<String>,
        args: String,
    ) -> Result<ToolRequest, serde_json::Error> {
        Ok(ToolRequest { operation, args: RawValue::from_string(args)? })
    }

    /// A request without an `operation` member, as the compatibility `call` sends when no
    /// operation was given.
    pub fn without_operation(args: &Value) -> ToolRequest {
        ToolRequest { operation: None, args: raw(args) }
    }

    /// The operation name, if any.
    pub fn operation(&self) -> Option<&str> {
        self.operation.as_deref()
    }

    /// The arguments parsed as a [`Value`].
    pub fn args_value(&self) -> Value {
        serde_json::from_str(self.args.get()).unwrap_or(Value::Null)
    }

    /// The arguments parsed into an operation's typed argument struct (see [`crate::args`]).
    pub fn parse_args<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.args.get())
    }

    /// The compact JSON body as it goes on the wire.
    pub fn to_body(&self) -> String {
        let mut body = String::with_capacity(self.args.get().len() + 48);
        body.push('{');
        if let Some(operation) = &self.operation {
            body.push_str("\"operation\":");
            body.push_str(&Value::String(operation.clone()).to_string());
            body.push(',');
        }
        body.push_str("\"args\":");
        body.push_str(self.args.get());
        body.push('}');
        body
    }
}

fn raw(value: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).expect("a serde_json::Value always serialises")
}

/// The answer to one tool call: `{"ok":true[,"value":…]}` or `{"ok":false,"error":"…"}`.
///
/// `Success { value: None }` is written `{"ok":true}`; `Success { value: Some(Value::Null) }` is
/// `{"ok":true,"value":null}`, a different result (`spec/protocol.md` §1).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolResult {
    /// `ok: true`.
    Success {
        /// The value; `None` when the member is absent.
        value: Option<Value>,
    },
    /// `ok: false`.
    Failure {
        /// The error message, shown to models and people verbatim.
        error: String,
    },
}

impl ToolResult {
    /// A success carrying `value`.
    pub fn ok(value: Value) -> ToolResult {
        ToolResult::Success { value: Some(value) }
    }

    /// A success without a value.
    pub fn ok_empty() -> ToolResult {
        ToolResult::Success { value: None }
    }

    /// A failure with `error`.
    pub fn failure(error: impl Into<String>) -> ToolResult {
        ToolResult::Failure { error: error.into() }
    }

    /// Whether `ok` is true.
    pub fn is_ok(&self) -> bool {
        matches!(self, ToolResult::Success { .. })
    }

    /// Reads a tool result from JSON: an object with `ok: true` (any `value`, or none) or
    /// `ok: false` with a string `error`. Other members are dropped; any other shape is `None`.
    pub fn from_value(value: Value) -> Option<ToolResult> {
        let Value::Object(mut object) = value else { return None };
        match object.get("ok") {
            Some(Value::Bool(true)) => Some(ToolResult::Success { value: object.remove("value") }),
            Some(Value::Bool(false)) => match object.remove("error") {
                Some(Value::String(error)) => Some(ToolResult::Failure { error }),
                _ => None,
            },
            _ => None,
        }
    }

    /// The result as a JSON object with the contract's member order.
    pub fn to_value(&self) -> Value {
        let mut object = Map::new();
        match self {
            ToolResult::Success { value } => {
                object.insert("ok".to_owned(), Value::Bool(true));
                if let Some(value) = value {
                    object.insert("value".to_owned(), value.clone());
                }
            }
            ToolResult::Failure { error } => {
                object.insert("ok".to_owned(), Value::Bool(false));
                object.insert("error".to_owned(), Value::String(error.clone()));
            }
        }
        Value::Object(object)
    }
}

impl Serialize for ToolResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            ToolResult::Success { value } => {
                let mut map = serializer.serialize_map(Some(1 + usize::from(value.is_some())))?;
                map.serialize_entry("ok", &true)?;
                if let Some(value) = value {
                    map.serialize_entry("value", value)?;
                }
                map.end()
            }
            ToolResult::Failure { error } => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("ok", &false)?;
                map.serialize_entry("error", error)?;
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for ToolResult {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        ToolResult::from_value(value)
            .ok_or_else(|| serde::de::Error::custom("not a tool result: expected {\"ok\":…}"))
    }
}

#[cfg(test)]
mod tests;
