//! The options of one run of `termsprawlctl acp` (`spec/acp.md` §2.1), already parsed.
//!
//! The command line itself is read by `cli` with its Go-style flag scanner (the one scanner of the
//! workspace); this crate only says what the options are.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// The default of `--permission-timeout`.
pub const DEFAULT_PERMISSION_TIMEOUT: Duration = Duration::from_mins(10);

/// Who answers `session/request_permission` (`spec/acp.md` §2.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionMode {
    /// The person decides.
    Ask,
    /// Select the first option of kind `allow_once`, else cancel.
    AllowOnce,
    /// Select the first `reject_once`, else the first `reject_always`, else cancel.
    Deny,
}

/// Where agent terminals run (`spec/acp.md` §2.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TerminalBackend {
    /// Canvas terminals when the tool server offers them, else the local tmux server.
    Auto,
    /// Canvas terminals, or a failure at start.
    Canvas,
    /// Always the local tmux server.
    Tmux,
}

/// Where the agent's stderr goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentLog {
    /// A new temporary file whose path is printed at start.
    Temporary,
    /// Copied to our stderr.
    Inherit,
    /// Appended to this file.
    File(PathBuf),
}

/// How the injected MCP bridge (`termsprawlctl mcp`) is narrowed, and how long it waits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpNarrowing {
    /// `--mcp-read-only`: the bridge gets `--read-only`.
    pub read_only: bool,
    /// `--mcp-tools NAME,...`: the bridge gets `--tools NAME,...`.
    pub tools: Option<Vec<String>>,
    /// `--mcp-max-wait-ms MS`: the bridge gets `--max-wait-ms MS` (the longest `terminal_wait` or
    /// `terminal_run` in one tool call); without it the bridge's default.
    pub max_wait_ms: Option<u64>,
}

/// The options of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// `--cwd`: the session's working directory, relative to the current one.
    pub cwd: Option<PathBuf>,
    /// `--prompt`: one-shot mode.
    pub prompt: Option<String>,
    /// `--permission`.
    pub permission: PermissionMode,
    /// `--permission-timeout`.
    pub permission_timeout: Duration,
    /// `--terminals`.
    pub terminals: TerminalBackend,
    /// Whether to inject the MCP bridge (`--no-mcp` clears it).
    pub mcp: bool,
    /// `--mcp-read-only`, `--mcp-tools` and `--mcp-max-wait-ms`.
    pub mcp_narrowing: McpNarrowing,
    /// `--trace`.
    pub trace: Option<PathBuf>,
    /// `--agent-log`.
    pub agent_log: AgentLog,
    /// `--mode ID`: switched to before the first prompt.
    pub mode: Option<String>,
    /// `--set ID=VALUE` (repeatable) and `--model VALUE` (the option of category `model`, named
    /// by `None`), in the order given; applied before the first prompt.
    pub config: Vec<(Option<String>, String)>,
    /// `--list-sessions`: print the agent's sessions and exit.
    pub list_sessions: bool,
    /// `--resume ID`: continue this session instead of starting one.
    pub resume: Option<String>,
    /// The agent's argv after `--`; an empty one fails to start (exit 2).
    pub agent: Vec<OsString>,
}

impl Options {
    /// The defaults of every option, for this agent argv.
    pub fn new(agent: Vec<OsString>) -> Options {
        Options {
            cwd: None,
            prompt: None,
            permission: PermissionMode::Ask,
            permission_timeout: DEFAULT_PERMISSION_TIMEOUT,
            terminals: TerminalBackend::Auto,
            mcp: true,
            mcp_narrowing: McpNarrowing::default(),
            trace: None,
            agent_log: AgentLog::Temporary,
            mode: None,
            config: Vec::new(),
            list_sessions: false,
            resume: None,
            agent,
        }
    }
}
