//! One typed argument struct per operation, from which the operation's `inputSchema` is generated.
//!
//! The doc comment of each field is the property description that models and the command-line help
//! read. Property order is declaration order. Rules the schema shape cannot express (lengths, ranges,
//! array sizes) are enforced by [`crate::validate`], not here.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Arguments of an operation that takes none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// A guide topic, the argument of `guide_read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GuideTopic {
    /// Start here: how to work inside a termsprawl node.
    Overview,
    /// Browser nodes.
    Browser,
    /// Shell terminals.
    Terminal,
    /// Canvas layout.
    Canvas,
    /// Reading linked peers' transcripts.
    Context,
    /// Messaging other agents.
    Agents,
    /// Showing files.
    Artifacts,
}

/// Arguments of `guide_read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GuideReadArgs {
    /// The guide to return.
    pub topic: GuideTopic,
}

/// Arguments of `canvas_select`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CanvasSelectArgs {
    /// Ids of existing nodes that become the selection; 1 to 100 ids.
    pub node_ids: Vec<String>,
}

/// Arguments of `canvas_move`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CanvasMoveArgs {
    /// The node to move.
    pub node_id: String,
    /// New left edge in canvas pixels, relative to the parent group or the canvas.
    pub x: f64,
    /// New top edge in canvas pixels, relative to the parent group or the canvas.
    pub y: f64,
}

/// Arguments of `canvas_resize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CanvasResizeArgs {
    /// The node to resize.
    pub node_id: String,
    /// New width in canvas pixels.
    pub width: f64,
    /// New height in canvas pixels.
    pub height: f64,
}

/// Arguments of `canvas_group`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CanvasGroupArgs {
    /// Ids of the top-level, non-group nodes to put into a new group.
    pub node_ids: Vec<String>,
    /// Title of the new group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// Arguments of `sticky_open`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StickyOpenArgs {
    /// The note's text.
    pub text: String,
}

/// Arguments of `browser_open`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BrowserOpenArgs {
    /// The address to load first.
    pub url: String,
}

/// Arguments of an operation on one node: `browser_claim`, `browser_inspect`,
/// `browser_screenshot`, `terminal_interrupt`, `terminal_kill`, `terminal_external`,
/// `terminal_close`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NodeArgs {
    /// The node to act on.
    pub node_id: String,
}

/// Arguments of `browser_transfer`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BrowserTransferArgs {
    /// The browser node the caller owns.
    pub node_id: String,
    /// The agent node that becomes the owner.
    pub agent_node_id: String,
}

/// Arguments of `browser_navigate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BrowserNavigateArgs {
    /// The browser node the caller owns.
    pub node_id: String,
    /// The address to load.
    pub url: String,
}

/// Arguments of `browser_click`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BrowserClickArgs {
    /// The browser node the caller owns.
    pub node_id: String,
    /// A CSS selector matching exactly one visible element, as `browser_inspect` reports it.
    pub selector: String,
}

/// Arguments of `browser_type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BrowserTypeArgs {
    /// The browser node the caller owns.
    pub node_id: String,
    /// A CSS selector matching exactly one visible input or textarea.
    pub selector: String,
    /// The text that replaces the field's value.
    pub text: String,
}

/// Arguments of `terminal_open`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TerminalOpenArgs {
    /// Title of the new terminal node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// Arguments of `terminal_run`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TerminalRunArgs {
    /// The command line, run as sh -c COMMAND.
    pub command: String,
    /// Title of the new node; the command when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Absolute directory inside the project folder; the project folder when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Extra environment variables, each NAME=value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Vec<String>>,
    /// Milliseconds to wait for the exit; 10000 when omitted; a server waits at most 30000,
    /// termsprawlctl up to 600000 (its MCP bridge up to its --max-wait-ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<f64>,
    /// False: close the node once an answer reports the command finished; true when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<bool>,
    /// True: a command still running at the answer types one notice into your node when it ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notify: Option<bool>,
}

/// What `terminal_read` returns, its `view`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReadView {
    /// The output's tail, or the text after `since`.
    Stream,
    /// Exactly the visible screen, with its size and cursor position.
    Screen,
}

/// Arguments of `terminal_read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TerminalReadArgs {
    /// The terminal node to read.
    pub node_id: String,
    /// How many characters to return from the end; 16000 when omitted, at most 100000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<f64>,
    /// A cursor from an earlier answer: only output after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<f64>,
    /// Screen: the visible rows with cursor and size, not with since; stream when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<ReadView>,
}

/// What `terminal_wait` waits for, its `until`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WaitUntil {
    /// The terminal's process has exited.
    Exit,
    /// The text appears in the output after `since`.
    Text,
    /// The output has not changed for `quietMs`.
    Quiet,
    /// Any output arrives after `since` (after the call started when `since` is omitted).
    Change,
    /// The terminal's foreground program is blocked reading the terminal (protocol 1.5.0).
    Input,
}

/// Arguments of `terminal_wait`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TerminalWaitArgs {
    /// The terminal node to wait on.
    pub node_id: String,
    /// Until the process exits, a text appears, output goes quiet or changes, or input is read.
    pub until: WaitUntil,
    /// The literal text to wait for; with until text, text or anyOf is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// With until text, instead of text: 1 to 16 texts, reached by the first that appears.
    #[serde(default, rename = "anyOf", skip_serializing_if = "Option::is_none")]
    pub any_of: Option<Vec<String>>,
    /// True: text and each anyOf item are regular expressions, matched per line; false when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<bool>,
    /// A cursor from an earlier answer: only output after it counts; all output when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<f64>,
    /// With until quiet, milliseconds without output; 1000 when omitted, 100 to 30000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_ms: Option<f64>,
    /// Milliseconds to wait at most; 10000 when omitted; a server waits at most 30000,
    /// termsprawlctl up to 600000 (its MCP bridge up to its --max-wait-ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<f64>,
}

/// Arguments of `terminal_search` (protocol 1.5.0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TerminalSearchArgs {
    /// The text to find in each line of output; a pattern with regex true.
    pub pattern: String,
    /// True: pattern is a regular expression, without look-around or flags; false when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<bool>,
    /// One terminal to search; every terminal you may read when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    /// A cursor from an earlier answer: only output after it; only with nodeId.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<f64>,
    /// Most matches to return; 20 when omitted, 1 to 200.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<f64>,
    /// Lines of context before and after each match; 0 when omitted, at most 5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<f64>,
}

/// Arguments of `terminal_submit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TerminalSubmitArgs {
    /// The shell terminal node to type into.
    pub node_id: String,
    /// The command line; Enter is pressed after it.
    pub command: String,
}

/// Arguments of `terminal_input`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TerminalInputArgs {
    /// The terminal node to send input to.
    pub node_id: String,
    /// Literal text, sent first; nothing is added. Text or keys is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Keys pressed after the text, in order: Enter, Escape, Up, C-c, M-x, F1 ... (at most 256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
}

/// An agent preset, the argument of `agent_launch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AgentPreset {
    /// Claude Code.
    Claude,
    /// Codex.
    Codex,
    /// Gemini CLI.
    Gemini,
    /// Grok.
    Grok,
    /// `OpenClaude`.
    Openclaude,
    /// opencode.
    Opencode,
    /// The user's custom preset from `preferences.json`.
    Custom,
}

/// Arguments of `agent_launch`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentLaunchArgs {
    /// The agent preset to start.
    pub agent: AgentPreset,
}

/// Arguments of `agent_send`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentSendArgs {
    /// The peer agent node, reached over an enabled link.
    pub node_id: String,
    /// The request, at most 16000 characters, without control characters.
    pub text: String,
    /// A unique id for this request; reuse it only to retry the exact same request.
    pub message_id: String,
}

/// Arguments of `agent_task`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentTaskArgs {
    /// The task id that `agent_send` returned.
    pub task_id: String,
}

/// How a request ends, the `state` of `agent_reply`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReplyState {
    /// The work was done.
    Completed,
    /// The work could not be done.
    Failed,
}

/// Arguments of `agent_reply`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentReplyArgs {
    /// The task addressed to the caller.
    pub task_id: String,
    /// The answer for the requesting agent.
    pub text: String,
    /// How the request ended; completed when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ReplyState>,
}

/// The kind of node `artifact_open` shows a file in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ArtifactView {
    /// An editor node.
    Editor,
    /// A diff node.
    Diff,
}

/// Arguments of `artifact_open`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ArtifactOpenArgs {
    /// Absolute path of a file inside the project folder.
    pub path: String,
    /// Editor for files and supported media, diff for source changes; editor when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<ArtifactView>,
}
