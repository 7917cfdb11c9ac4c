//! Lenient serde types for the ACP v1 subset this client reads (`spec/acp.md` §1).
//!
//! Unknown members are ignored, optional members may be absent or `null`, and discriminated unions
//! are decoded by hand from their discriminator, so that an unknown variant becomes `Unknown`
//! instead of an error. (serde's internally tagged enums would also buffer numbers, which breaks
//! with `serde_json`'s `arbitrary_precision`.) An `Option` member needs no `#[serde(default)]`:
//! serde reads an absent one as `None`; other members that may be absent carry it. What we send is
//! built with `json!` in the modules that send it.

#[cfg(test)]
mod tests;

use serde::Deserialize;
use serde_json::Value;

use crate::change::OnDisk;

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
    pub(crate) auth_methods: Option<Vec<AuthMethod>>,
    pub(crate) agent_info: Option<Implementation>,
    /// Read leniently by [`Capabilities::of`]: a member of an unexpected type means "not offered".
    pub(crate) agent_capabilities: Option<Value>,
}

/// The session methods an agent offers beyond `session/new` (`agentCapabilities`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[expect(clippy::struct_excessive_bools, reason = "one flag per optional ACP method")]
pub(crate) struct Capabilities {
    /// `loadSession: true`: `session/load`.
    pub(crate) load: bool,
    /// `sessionCapabilities.list`: `session/list`.
    pub(crate) list: bool,
    /// `sessionCapabilities.resume`: `session/resume`.
    pub(crate) resume: bool,
    /// `sessionCapabilities.close`: `session/close`.
    pub(crate) close: bool,
    /// `promptCapabilities.embeddedContext`: a prompt may embed a file's text (`resource`
    /// blocks); otherwise a mentioned file is sent as a `resource_link`.
    pub(crate) embedded_context: bool,
}

impl Capabilities {
    /// What `agentCapabilities` offers; an object (even `{}`) under `sessionCapabilities` means
    /// offered, `null` or absent means not.
    pub(crate) fn of(capabilities: Option<&Value>) -> Capabilities {
        let Some(capabilities) = capabilities else {
            return Capabilities::default();
        };
        let session = capabilities.get("sessionCapabilities");
        let offered = |name: &str| {
            session.and_then(|session| session.get(name)).is_some_and(Value::is_object)
        };
        Capabilities {
            load: capabilities.get("loadSession").and_then(Value::as_bool) == Some(true),
            list: offered("list"),
            resume: offered("resume"),
            close: offered("close"),
            embedded_context: capabilities
                .get("promptCapabilities")
                .and_then(|prompt| prompt.get("embeddedContext"))
                .and_then(Value::as_bool)
                == Some(true),
        }
    }
}

/// An entry of `authMethods`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AuthMethod {
    pub(crate) id: String,
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    #[serde(rename = "type")]
    pub(crate) kind: Option<String>,
    /// `env_var`: the variables the agent reads.
    pub(crate) vars: Option<Vec<AuthVariable>>,
    /// `terminal`: arguments added to the agent's argv for the login run.
    pub(crate) args: Option<Vec<String>>,
    /// `terminal`: variables set for the login run (string values only are used).
    pub(crate) env: Option<serde_json::Map<String, Value>>,
}

/// A variable of an `env_var` authentication method.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AuthVariable {
    pub(crate) name: String,
    /// An optional variable need not be set.
    pub(crate) optional: Option<bool>,
}

/// `agentInfo`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Implementation {
    pub(crate) name: Option<String>,
    pub(crate) title: Option<String>,
    pub(crate) version: Option<String>,
}

/// The result of `session/new`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NewSessionResult {
    pub(crate) session_id: String,
}

/// What `session/new`, `session/load` and `session/resume` answer about the session's modes and
/// configuration options; each is decoded by [`mode_state`] and [`config_options`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionSetup {
    pub(crate) modes: Option<Value>,
    pub(crate) config_options: Option<Value>,
    /// The unstable `models` (`availableModels`, `currentModelId`) that agents such as Claude
    /// Code 0.16 send instead of a `configOptions` entry of category `model`.
    pub(crate) models: Option<Value>,
}

/// `modes`: the current mode and the available ones.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ModeState {
    pub(crate) current_mode_id: String,
    #[serde(default)]
    pub(crate) available_modes: Vec<Mode>,
}

/// A mode the agent can run in.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Mode {
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) name: String,
    pub(crate) description: Option<String>,
}

/// A session configuration option (`configOptions`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConfigOption {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    /// `model`, `mode`, `thought_level`, … (UX only; `model` is the target of `/model`).
    pub(crate) category: Option<String>,
    pub(crate) value: ConfigValue,
}

/// The kind and current value of a configuration option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ConfigValue {
    /// `select`: the current value id and every choice (groups flattened, in order).
    Select { current: String, choices: Vec<Choice> },
    /// `boolean`.
    Boolean(bool),
    /// A type this client does not know: shown, never set.
    Unknown(String),
}

/// One value of a `select` option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Choice {
    pub(crate) value: String,
    pub(crate) name: String,
    pub(crate) description: Option<String>,
}

/// A slash command the agent announced (`available_commands_update`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AvailableCommand {
    pub(crate) name: String,
    pub(crate) description: String,
    /// `input.hint`: what to type after the name.
    pub(crate) hint: Option<String>,
}

/// One page of `session/list`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionList {
    #[serde(default)]
    pub(crate) sessions: Vec<SessionInfo>,
    pub(crate) next_cursor: Option<String>,
}

/// A session of `session/list`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionInfo {
    pub(crate) session_id: String,
    pub(crate) cwd: Option<String>,
    pub(crate) title: Option<String>,
    pub(crate) updated_at: Option<String>,
}

/// Decodes `modes`; `null` or absent is `None`.
pub(crate) fn mode_state(modes: Option<&Value>) -> Result<Option<ModeState>, String> {
    match modes {
        None | Some(Value::Null) => Ok(None),
        Some(modes) => {
            ModeState::deserialize(modes).map(Some).map_err(|error| format!("modes: {error}"))
        }
    }
}

/// Decodes the unstable `models` as a select of category `model` (id `model`), set with
/// `session/set_model`; `null` or absent is `None`.
pub(crate) fn unstable_models(models: Option<&Value>) -> Result<Option<ConfigOption>, String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Models {
        current_model_id: String,
        #[serde(default)]
        available_models: Vec<Entry>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Entry {
        model_id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        description: Option<String>,
    }
    let models = match models {
        None | Some(Value::Null) => return Ok(None),
        Some(models) => Models::deserialize(models).map_err(|error| format!("models: {error}"))?,
    };
    let choices = models
        .available_models
        .into_iter()
        .map(|model| Choice {
            name: if model.name.is_empty() { model.model_id.clone() } else { model.name },
            value: model.model_id,
            description: model.description,
        })
        .collect();
    Ok(Some(ConfigOption {
        id: "model".to_owned(),
        name: "Model".to_owned(),
        description: None,
        category: Some("model".to_owned()),
        value: ConfigValue::Select { current: models.current_model_id, choices },
    }))
}

/// Decodes `configOptions`; `null` or absent is `None`.
pub(crate) fn config_options(options: Option<&Value>) -> Result<Option<Vec<ConfigOption>>, String> {
    match options {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => {
            items.iter().map(config_option).collect::<Result<_, _>>().map(Some)
        }
        Some(_) => Err("configOptions is not an array".to_owned()),
    }
}

fn config_option(item: &Value) -> Result<ConfigOption, String> {
    let text =
        |value: &Value, name: &str| value.get(name).and_then(Value::as_str).map(str::to_owned);
    let Some(id) = text(item, "id") else {
        return Err("a config option has no id".to_owned());
    };
    let value = match item.get("type").and_then(Value::as_str) {
        Some("select") => {
            let Some(current) = text(item, "currentValue") else {
                return Err(format!("config option {id}: a select has no currentValue string"));
            };
            let mut choices = Vec::new();
            for entry in item.get("options").and_then(Value::as_array).into_iter().flatten() {
                // A group holds `options`; an ungrouped entry is a choice itself.
                let members = match entry.get("options").and_then(Value::as_array) {
                    Some(members) => members.iter().collect(),
                    None => vec![entry],
                };
                for member in members {
                    let Some(value) = text(member, "value") else {
                        return Err(format!("config option {id}: a choice has no value"));
                    };
                    choices.push(Choice {
                        name: text(member, "name").unwrap_or_else(|| value.clone()),
                        description: text(member, "description"),
                        value,
                    });
                }
            }
            ConfigValue::Select { current, choices }
        }
        Some("boolean") => match item.get("currentValue").and_then(Value::as_bool) {
            Some(current) => ConfigValue::Boolean(current),
            None => return Err(format!("config option {id}: a boolean has no currentValue")),
        },
        Some(other) => ConfigValue::Unknown(other.to_owned()),
        None => return Err(format!("config option {id} has no type")),
    };
    Ok(ConfigOption {
        name: text(item, "name").unwrap_or_else(|| id.clone()),
        description: text(item, "description"),
        category: text(item, "category"),
        id,
        value,
    })
}

fn available_commands(commands: Option<&Value>) -> Result<Vec<AvailableCommand>, String> {
    let Some(commands) = commands.and_then(Value::as_array) else {
        return Err("available_commands_update: availableCommands is not an array".to_owned());
    };
    commands
        .iter()
        .map(|command| {
            let text = |name: &str| command.get(name).and_then(Value::as_str).map(str::to_owned);
            let Some(name) = text("name") else {
                return Err("available_commands_update: a command has no name".to_owned());
            };
            Ok(AvailableCommand {
                name,
                description: text("description").unwrap_or_default(),
                hint: command
                    .get("input")
                    .and_then(|input| input.get("hint"))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            })
        })
        .collect()
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
    /// `current_mode_update`: the new mode id.
    CurrentMode(String),
    /// `config_option_update`: every option with its current value.
    ConfigOptions(Vec<ConfigOption>),
    /// `available_commands_update`: the agent's slash commands.
    Commands(Vec<AvailableCommand>),
    /// The variants ACP added after the first version (`crate::extras` shows them), and those
    /// this client does not know.
    Extra(Extra),
    /// Bookkeeping variants we do not show (`session_info_update`).
    Ignored(String),
}

/// A `session/update` variant beyond the turn's transcript: usage, notices, compactions, and the
/// variants this client does not know (shown as one line each, never dropped silently).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Extra {
    /// `usage_update`: tokens in the context, the context's size, and the cost so far.
    Usage(Usage),
    /// `notice`: fire-and-forget information for the person.
    Notice { severity: String, title: String, description: Option<String> },
    /// `compaction_update`: a context compaction started, finished or failed.
    Compaction { id: String, status: String, error: Option<String> },
    /// `compaction_summary_chunk`: part of a compaction's summary (not shown).
    CompactionSummary(String),
    /// A variant this client does not know: its name.
    Unknown(String),
}

/// The context and cost of a `usage_update`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Usage {
    pub(crate) used: u64,
    pub(crate) size: u64,
    /// The amount and its currency (ISO 4217, such as `USD`).
    pub(crate) cost: Option<(f64, String)>,
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
    pub(crate) kind: Option<String>,
    pub(crate) status: Option<String>,
    #[serde(default, deserialize_with = "tool_call_content")]
    pub(crate) content: Option<Vec<ToolCallContent>>,
    pub(crate) raw_input: Option<Value>,
}

/// A `tool_call_update`, also the `toolCall` of a permission ask: every member but the id is a
/// patch.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolCallUpdate {
    pub(crate) tool_call_id: String,
    pub(crate) title: Option<String>,
    pub(crate) kind: Option<String>,
    pub(crate) status: Option<String>,
    #[serde(default, deserialize_with = "tool_call_content")]
    pub(crate) content: Option<Vec<ToolCallContent>>,
    pub(crate) raw_input: Option<Value>,
}

/// An item of a tool call's `content`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ToolCallContent {
    /// `{"type":"content","content":<block>}`.
    Content(ContentBlock),
    /// `{"type":"diff","path","oldText"?,"newText"}`, and the file it names as it was when the
    /// item arrived (read by the client, [`Unread`](OnDisk::Unread) until then).
    Diff { path: String, old_text: Option<String>, new_text: String, disk: OnDisk },
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
    pub(crate) priority: Option<String>,
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
    pub(crate) line: Option<u64>,
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
    pub(crate) args: Option<Vec<String>>,
    pub(crate) env: Option<Vec<EnvVariable>>,
    pub(crate) cwd: Option<String>,
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

/// Decodes the `update` of a `session/update`. Bookkeeping variants decode to
/// [`SessionUpdate::Ignored`], unknown ones to [`Extra::Unknown`]; a known variant with a broken
/// shape is an error.
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
        "current_mode_update" => match field("currentModeId").and_then(Value::as_str) {
            Some(id) => Ok(SessionUpdate::CurrentMode(id.to_owned())),
            None => Err("current_mode_update has no currentModeId string".to_owned()),
        },
        "config_option_update" => match config_options(field("configOptions"))? {
            Some(options) => Ok(SessionUpdate::ConfigOptions(options)),
            None => Err("config_option_update has no configOptions".to_owned()),
        },
        "available_commands_update" => {
            available_commands(field("availableCommands")).map(SessionUpdate::Commands)
        }
        "session_info_update" => Ok(SessionUpdate::Ignored(variant.to_owned())),
        "usage_update" => {
            let number = |name: &str| field(name).and_then(Value::as_u64);
            let (Some(used), Some(size)) = (number("used"), number("size")) else {
                return Err("usage_update needs used and size numbers".to_owned());
            };
            let cost = field("cost").and_then(|cost| {
                Some((cost.get("amount")?.as_f64()?, cost.get("currency")?.as_str()?.to_owned()))
            });
            Ok(SessionUpdate::Extra(Extra::Usage(Usage { used, size, cost })))
        }
        "notice" => {
            let text = |name: &str| field(name).and_then(Value::as_str).map(str::to_owned);
            let Some(title) = text("title") else {
                return Err("notice has no title string".to_owned());
            };
            Ok(SessionUpdate::Extra(Extra::Notice {
                severity: text("severity").unwrap_or_else(|| "info".to_owned()),
                title,
                description: text("description"),
            }))
        }
        "compaction_update" | "compaction_summary_chunk" => {
            let text = |name: &str| field(name).and_then(Value::as_str).map(str::to_owned);
            let Some(id) = text("compactionId") else {
                return Err(format!("{variant} has no compactionId string"));
            };
            if variant == "compaction_summary_chunk" {
                return Ok(SessionUpdate::Extra(Extra::CompactionSummary(id)));
            }
            let Some(status) = text("status") else {
                return Err("compaction_update has no status string".to_owned());
            };
            Ok(SessionUpdate::Extra(Extra::Compaction { id, status, error: text("error") }))
        }
        other => Ok(SessionUpdate::Extra(Extra::Unknown(other.to_owned()))),
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
                (Some(path), Some(new_text)) => ToolCallContent::Diff {
                    path,
                    old_text: text(item, "oldText"),
                    new_text,
                    disk: OnDisk::Unread,
                },
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
