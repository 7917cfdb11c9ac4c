//! Errors: [`ToolError`], the `error` text of a failed operation (wire contract), and [`Error`],
//! why the server could not start or a control command failed.

use std::io;
use std::path::PathBuf;

use termsprawl_transport::server::{FileError, ProvisionError, StartError};

/// A failed operation: its message becomes the `error` member of the `ok:false` result verbatim.
///
/// Messages that `spec/protocol.md` names are contract and reproduced exactly (see [`messages`]);
/// the others are ours to word, one line without a trailing period.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(String);

impl ToolError {
    /// A failure with `message`.
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError(message.into())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> ToolError {
        ToolError::new(message)
    }
}

/// Why [`crate::Server::start`] failed, or a control command could not be carried out.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The tool server could not start (lock, data directory, listener).
    #[error(transparent)]
    Start(#[from] StartError),
    /// A session could not be provisioned.
    #[error(transparent)]
    Provision(#[from] ProvisionError),
    /// A file of the data directory could not be read or written.
    #[error(transparent)]
    Io(#[from] FileError),
    /// `canvas.json` exists but is not a canvas; it is never overwritten.
    #[error("{path} is not a valid canvas file: {source}")]
    Canvas {
        /// The canvas file.
        path: PathBuf,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// The project folder does not exist or is not a directory.
    #[error("project folder {path} is not a directory")]
    Project {
        /// The folder as given.
        path: PathBuf,
    },
    /// tmux was not found.
    #[error(transparent)]
    Tmux(#[from] termsprawl_external_term::Error),
    /// The control socket answered with a failure, or could not be reached.
    #[error("{0}")]
    Control(String),
}

impl Error {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(io::Error) -> Error {
        let file_error = FileError::on(action, path);
        move |source| Error::Io(file_error(source))
    }
}

/// The error strings of `spec/protocol.md` that this server answers, exactly.
pub mod messages {
    /// The end of the error of a tmux command the control client took with it when it ended
    /// (`spec/protocol.md` §4.6): `tmux COMMAND was sent, but ` this.
    pub const MAY_HAVE_RUN: &str = "the tmux control client ended before tmux answered: it may have run, so it was not sent again";
    /// §6.4 step 2.
    pub const NODE_NOT_IN_PROJECT: &str = "Agent node no longer belongs to this project";
    /// §6.4 step 5.
    pub const QUEUE_EXPIRED: &str = "Queued operation expired before execution; no change applied";
    /// §6.4 step 5.
    pub const SESSION_REVOKED: &str = "Session revoked";
    /// §6.6.
    pub const NODE_NOT_FOUND: &str = "Node not found in the visible project";
    /// §6.6, with U+00D7.
    pub const SIZE_RANGE: &str = "Size must be between 240\u{d7}140 and 8000\u{d7}8000";
    /// §6.6.
    pub const GROUP_TOP_LEVEL: &str = "Group only top-level non-group nodes";
    /// §6.6.
    pub const SELECTION_UNKNOWN: &str = "Selection contains an unknown node";
    /// §6.6.
    pub const OWN_NODE: &str =
        "Use a separate shell terminal instead of writing into or closing your own agent";
    /// §6.6.
    pub const TERMINAL_NOT_FOUND: &str = "Local terminal not found in this project";
    /// §6.6.
    pub const NOT_ATTACHED: &str = "Terminal is not attached";
    /// §6.6.
    pub const SUBMIT_TO_SHELL: &str = "Submit shell commands only to a plain shell terminal";
    /// §6.6.
    pub const RECIPIENT_NOT_CONNECTED: &str = "Recipient agent is not connected to this project";
    /// §6.6.
    pub const INSTALL_AGENT: &str = "Install or configure this agent before launching it";
    /// §6.6.
    pub const ARTIFACT_OUTSIDE: &str = "Artifact must be inside this project";
    /// §6.6.
    pub const ARTIFACT_RELATIVE: &str = "Use an absolute file path inside a folder project";
    /// §2.6.
    pub const INVALID_PREFERENCES: &str = "Invalid agent-tools/preferences.json";
    /// Ours: every `browser_*` operation.
    pub const BROWSER_NEEDS_APP: &str =
        "Browser nodes need the termsprawl desktop app; this headless server has no browser";
    /// Ours: `artifact_open` of a path that does not exist.
    pub const ARTIFACT_MISSING: &str = "Artifact file was not found";
    /// Ours: `artifact_open` of a directory or another non-file.
    pub const ARTIFACT_NOT_FILE: &str = "Artifact must be a file";
    /// Ours: agent messaging text rules (§4.5).
    pub const MESSAGE_EMPTY: &str = "Message text must not be empty";
    /// Ours: agent messaging text rules (§4.5).
    pub const MESSAGE_TOO_LONG: &str = "Message text must be at most 16000 characters";
    /// Ours: agent messaging text rules (§4.5).
    pub const MESSAGE_CONTROL: &str = "Message text must not contain control characters";
    /// Ours: `agent_send` with an empty `messageId`.
    pub const MESSAGE_ID_EMPTY: &str = "Invalid messageId";
    /// Ours: a used `messageId` with another payload.
    pub const MESSAGE_ID_REUSED: &str =
        "This messageId was already used for a different request; use a new messageId";
    /// Ours: `agent_send` to the caller itself.
    pub const SEND_TO_SELF: &str = "Send requests to another agent, not to yourself";
    /// Ours: `agent_send` without an enabled link.
    pub const LINK_NOT_ENABLED: &str = "No enabled agent link to this peer; ask the user to connect the two nodes and enable \"Allow agent requests\"";
    /// Ours: the recipient has a pending request.
    pub const RECIPIENT_BUSY: &str =
        "Recipient agent is busy with another request; poll your task and try again later";
    /// Ours: an unknown task, or one the caller may not see.
    pub const TASK_NOT_FOUND: &str = "Task not found";
    /// Ours: `agent_reply` by someone other than the recipient.
    pub const REPLY_RECIPIENT_ONLY: &str = "Only the recipient of a request can reply to it";
    /// Ours: `agent_reply` to a task that is no longer pending.
    pub const TASK_NOT_PENDING: &str = "Task is no longer pending";
    /// `terminal_run` with an empty command.
    pub const RUN_COMMAND_EMPTY: &str = "command must not be empty";
    /// `terminal_run` with a `cwd` that is not an existing directory inside the project.
    pub const RUN_CWD: &str =
        "cwd must be the absolute path of an existing directory inside this project's folder";
    /// `terminal_wait` with `until: text` and no (or an empty) `text`.
    pub const WAIT_TEXT_REQUIRED: &str = "text is required and must not be empty with until text";
    /// A `terminal_wait` (or `terminal_run`) whose node was closed while it waited.
    pub const CLOSED_WHILE_WAITING: &str = "Terminal was closed while waiting";
    /// A `terminal_wait` (or `terminal_run`) whose node's session ended because the managed tmux
    /// server went away (killed, crashed) while it waited (issue 29; `docs/reliability.md`).
    pub const TMUX_GONE_WHILE_WAITING: &str = "The tmux server went away while waiting: the terminal's session ended with it; the node and its output stay, and the next terminal_open or terminal_run starts a new tmux server";
    /// `terminal_kill` on a node that `terminal_run` did not start.
    pub const KILL_RUN_ONLY: &str = "Kill only a run terminal started by terminal_run; use terminal_interrupt or terminal_close for other terminals";

    /// Rule `agent-link-isolation`: driving (`terminal_submit`, `terminal_input`,
    /// `terminal_interrupt`, `terminal_kill`) or attaching (`terminal_external`) another agent's
    /// terminal.
    pub const AGENT_NOT_YOURS: &str = "Another agent's terminal is driven only by the user: no agent may type into, interrupt, kill or attach to it; send it a request with agent_send over an enabled link instead";

    /// Rule `agent-link-isolation`: `terminal_read` or `terminal_wait` of another agent's
    /// terminal (`to`) without an enabled link from the caller (`from`).
    pub fn agent_read_not_linked(from: &str, to: &str) -> String {
        format!(
            "Reading another agent's terminal needs an enabled agent link from your node to it; ask the user to link the two nodes: termsprawl-headless link {from} {to}"
        )
    }

    /// Rule `agent-link-isolation`: `terminal_close` of another agent's node.
    pub fn agent_close_refused(node: &str) -> String {
        format!(
            "Closing another agent is the user's decision; ask the user to close it: termsprawl-headless close {node}"
        )
    }

    /// `terminal_search`, or `terminal_wait` with `regex: true`, whose pattern is outside the
    /// dialect of `spec/protocol.md` §5.1 or does not compile: nothing is searched or waited for.
    pub fn invalid_pattern(reason: &str) -> String {
        format!("Invalid pattern: {reason}")
    }

    /// `terminal_run` with an `env` item (at `index`, from 0) that is not `NAME=value` with a
    /// valid name. The item itself is not repeated: it may hold a secret.
    pub fn run_env(index: usize) -> String {
        format!(
            "env[{index}] must be NAME=value, with NAME made of letters, digits and underscores, not starting with a digit"
        )
    }
}
