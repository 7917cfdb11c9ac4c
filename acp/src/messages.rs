//! Lenient serde types for the ACP v1 subset this client reads (`spec/acp.md` §1).
//!
//! Unknown members are ignored, optional members may be absent or `null`, and discriminated unions
//! are decoded by hand from their discriminator, so that an unknown variant becomes `Unknown`
//! instead of an error. (serde's internally tagged enums would also buffer numbers, which breaks
//! with `serde_json`'s `arbitrary_precision`.) What we send is built with `json!` in the modules
//! that send it.

#[cfg(test)]
mod tests;

use serde::Deserialize;
use serde_json::Value;

/// Decodes params of a known shape; the error text names what failed.
pub(crate) fn decode<T: for<'de> Deserialize<'de>>(params: Option<&Value>) -> Result<T, String> {
    let empty = Value::Object(serde_json::Map::new());
    T::deserialize(params.unwrap_or(&empty)).map_err(|error| error.to_string())
}

/// The result of `initialize`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeResult {
    #[serde(default)]
    pub(crate) protocol_version: Value,
    #[serde(default)]
    pub(crate) auth_methods: Option<Vec<AuthMethod>>,
    #[serde(default)]
    pub(crate) agent_info: Option<Implementation>,
}

/// An entry of `authMethods`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AuthMethod {
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) name: Option<String>,
    #[serde(default)]
    pub(crate) description: Option<String>,
    #[serde(default, rename = "type")]
    pub(crate) kind: Option<String>,
    /// `env_var`: the variables the agent reads.
    #[serde(default)]
    pub(crate) vars: Option<Vec<AuthVariable>>,
    /// `terminal`: arguments added to the agent's argv for the login run.
    #[serde(default)]
    pub(crate) args: Option<Vec<String>>,
    /// `terminal`: variables set for the login run (string values only are used).
    #[serde(default)]
    pub(crate) env: Option<serde_json::Map<String, Value>>,
}

/// A variable of an `env_var` authentication method.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AuthVariable {
    pub(crate) name: String,
    /// An optional variable need not be set.
    #[serde(default)]
    pub(crate) optional: Option<bool>,
}

/// `agentInfo`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Implementation {
    #[serde(default)]
    pub(crate) name: Option<String>,
    #[serde(default)]
    pub(crate) title: Option<String>,
    #[serde(default)]
    pub(crate) version: Option<String>,
}

/// The result of `session/new`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NewSessionResult {
    pub(crate) session_id: String,
}

/// The result of `session/prompt`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PromptResult {
    pub(crate) stop_reason: String,
}

/// The params of `session/update`; `update` is decoded by [`decode_update`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionNotification {
    pub(crate) session_id: String,
    pub(crate) update: Value,
}

/// One `session/update` variant.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SessionUpdate {
    /// `user_message_chunk`.
    UserMessage(ContentBlock),
    /// `agent_message_chunk`.
    AgentMessage(ContentBlock),
    /// `agent_thought_chunk`.
    AgentThought(ContentBlock),
    /// `tool_call`.
    ToolCall(ToolCall),
    /// `tool_call_update`.
    ToolCallUpdate(ToolCallUpdate),
    /// `plan`.
    Plan(Vec<PlanEntry>),
    /// Bookkeeping variants we do not show, and variants we do not know.
    Ignored(String),
}

/// A content block; only what we render is kept.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ContentBlock {
    /// `text`.
    Text(String),
    /// `image`, `audio`, `resource_link`, `resource` and unknown types: a one-line description.
    Other(String),
}

/// A `tool_call`.
#[expect(clippy::struct_field_names, reason = "the members are named by the wire")]
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolCall {
    pub(crate) tool_call_id: String,
    pub(crate) title: String,
    #[serde(default)]
    pub(crate) kind: Option<String>,
    #[serde(default)]
    pub(crate) status: Option<String>,
    #[serde(default, deserialize_with = "tool_call_content")]
    pub(crate) content: Option<Vec<ToolCallContent>>,
    #[serde(default)]
    pub(crate) raw_input: Option<Value>,
}

/// A `tool_call_update`, also the `toolCall` of a permission ask: every member but the id is a
/// patch.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolCallUpdate {
    pub(crate) tool_call_id: String,
    #[serde(default)]
    pub(crate) title: Option<String>,
    #[serde(default)]
    pub(crate) kind: Option<String>,
    #[serde(default)]
    pub(crate) status: Option<String>,
    #[serde(default, deserialize_with = "tool_call_content")]
    pub(crate) content: Option<Vec<ToolCallContent>>,
    #[serde(default)]
    pub(crate) raw_input: Option<Value>,
}

/// An item of a tool call's `content`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ToolCallContent {
    /// `{"type":"content","content":<block>}`.
    Content(ContentBlock),
    /// `{"type":"diff","path","oldText"?,"newText"}`.
    Diff { path: String, old_text: Option<String>, new_text: String },
    /// `{"type":"terminal","terminalId"}`.
    Terminal(String),
    /// An unknown type.
    Other(String),
}

/// An entry of a `plan`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PlanEntry {
    #[serde(default)]
    pub(crate) content: String,
    #[serde(default)]
    pub(crate) priority: Option<String>,
    #[serde(default)]
    pub(crate) status: Option<String>,
}

/// The params of `session/request_permission`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RequestPermissionParams {
    pub(crate) session_id: String,
    pub(crate) tool_call: ToolCallUpdate,
    pub(crate) options: Vec<PermissionOption>,
}

/// An offered permission option.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PermissionOption {
    pub(crate) option_id: String,
    #[serde(default)]
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) kind: String,
}

/// The params of `fs/read_text_file`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReadTextFileParams {
    pub(crate) session_id: String,
    pub(crate) path: String,
    #[serde(default)]
    pub(crate) line: Option<u64>,
    #[serde(default)]
    pub(crate) limit: Option<u64>,
}

/// The params of `fs/write_text_file`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WriteTextFileParams {
    pub(crate) session_id: String,
    pub(crate) path: String,
    pub(crate) content: String,
}

/// The params of `terminal/create`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateTerminalParams {
    pub(crate) session_id: String,
    pub(crate) command: String,
    #[serde(default)]
    pub(crate) args: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) env: Option<Vec<EnvVariable>>,
    #[serde(default)]
    pub(crate) cwd: Option<String>,
    #[serde(default)]
    pub(crate) output_byte_limit: Option<u64>,
}

/// An `env` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct EnvVariable {
    pub(crate) name: String,
    pub(crate) value: String,
}

/// The params of `terminal/output`, `wait_for_exit`, `kill` and `release`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TerminalParams {
    pub(crate) session_id: String,
    pub(crate) terminal_id: String,
}

/// The params of `$/cancel_request`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CancelRequestParams {
    pub(crate) request_id: Value,
}

/// Decodes the `update` of a `session/update`. Unknown and bookkeeping variants decode to
/// [`SessionUpdate::Ignored`]; a known variant with a broken shape is an error.
pub(crate) fn decode_update(update: &Value) -> Result<SessionUpdate, String> {
    let Some(variant) = update.get("sessionUpdate").and_then(Value::as_str) else {
        return Err("the update has no sessionUpdate string".to_owned());
    };
    let field = |name: &str| update.get(name);
    match variant {
        "user_message_chunk" => Ok(SessionUpdate::UserMessage(chunk(field("content"))?)),
        "agent_message_chunk" => Ok(SessionUpdate::AgentMessage(chunk(field("content"))?)),
        "agent_thought_chunk" => Ok(SessionUpdate::AgentThought(chunk(field("content"))?)),
        "tool_call" => ToolCall::deserialize(update)
            .map(SessionUpdate::ToolCall)
            .map_err(|error| format!("tool_call: {error}")),
        "tool_call_update" => ToolCallUpdate::deserialize(update)
            .map(SessionUpdate::ToolCallUpdate)
            .map_err(|error| format!("tool_call_update: {error}")),
        "plan" => {
            let entries = match field("entries") {
                Some(entries) => Vec::<PlanEntry>::deserialize(entries)
                    .map_err(|error| format!("plan: {error}"))?,
                None => Vec::new(),
            };
            Ok(SessionUpdate::Plan(entries))
        }
        other => Ok(SessionUpdate::Ignored(other.to_owned())),
    }
}

fn chunk(content: Option<&Value>) -> Result<ContentBlock, String> {
    match content {
        Some(content) => content_block(content),
        None => Err("a message chunk has no content".to_owned()),
    }
}

/// Decodes a content block by its `type`.
pub(crate) fn content_block(block: &Value) -> Result<ContentBlock, String> {
    let text = |name: &str| block.get(name).and_then(Value::as_str);
    match block.get("type").and_then(Value::as_str) {
        Some("text") => match text("text") {
            Some(content) => Ok(ContentBlock::Text(content.to_owned())),
            None => Err("a text block has no text".to_owned()),
        },
        Some("image") => {
            Ok(ContentBlock::Other(format!("[image {}]", text("mimeType").unwrap_or(""))))
        }
        Some("audio") => {
            Ok(ContentBlock::Other(format!("[audio {}]", text("mimeType").unwrap_or(""))))
        }
        Some("resource_link") => Ok(ContentBlock::Other(format!(
            "[link {} {}]",
            text("name").unwrap_or(""),
            text("uri").unwrap_or("")
        ))),
        Some("resource") => {
            let resource = block.get("resource");
            let uri = resource
                .and_then(|resource| resource.get("uri"))
                .and_then(Value::as_str)
                .unwrap_or("");
            Ok(ContentBlock::Other(format!("[resource {uri}]")))
        }
        Some(other) => Ok(ContentBlock::Other(format!("[{other}]"))),
        None => Err("a content block has no type".to_owned()),
    }
}

fn tool_call_content<'de, D>(deserializer: D) -> Result<Option<Vec<ToolCallContent>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let Some(items) = Option::<Vec<Value>>::deserialize(deserializer)? else {
        return Ok(None);
    };
    let text = |item: &Value, name: &str| item.get(name).and_then(Value::as_str).map(str::to_owned);
    let mut content = Vec::with_capacity(items.len());
    for item in &items {
        let decoded = match item.get("type").and_then(Value::as_str) {
            Some("content") => match item.get("content").map(content_block) {
                Some(Ok(block)) => ToolCallContent::Content(block),
                Some(Err(error)) => return Err(serde::de::Error::custom(error)),
                None => return Err(serde::de::Error::custom("a content item has no content")),
            },
            Some("diff") => match (text(item, "path"), text(item, "newText")) {
                (Some(path), Some(new_text)) => {
                    ToolCallContent::Diff { path, old_text: text(item, "oldText"), new_text }
                }
                _ => return Err(serde::de::Error::custom("a diff needs path and newText")),
            },
            Some("terminal") => match text(item, "terminalId") {
                Some(id) => ToolCallContent::Terminal(id),
                None => return Err(serde::de::Error::custom("a terminal item has no terminalId")),
            },
            Some(other) => ToolCallContent::Other(other.to_owned()),
            None => return Err(serde::de::Error::custom("a content item has no type")),
        };
        content.push(decoded);
    }
    Ok(Some(content))
}
