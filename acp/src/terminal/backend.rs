//! The one terminal backend of a front end, chosen at start by `--terminals` (`spec/acp.md` §2.10):
//! the local tmux server ([`Terminals`]) or canvas terminals ([`CanvasTerminals`]). The client's
//! `terminal/*` handlers and the transcript only talk to [`Backend`].

use std::path::Path;
use std::time::Duration;

use termsprawl_protocol::{ToolRequest, ToolResult};
use termsprawl_transport::long_wait::ProgressSink;
use termsprawl_transport::{Client, UNAVAILABLE_PREFIX};

use super::canvas::{self, CanvasTerminals};
use super::{ExitStatus as CommandStatus, Output, SOCKET_NAME, Server, Spec, Terminals};
use crate::connection::RpcError;
use crate::options::TerminalBackend;
use termsprawl_protocol::ExitStatus;

/// How long the start waits for the server's `session_info`.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the agent's terminals run.
#[derive(Debug)]
pub(crate) enum Backend {
    /// One tmux session per terminal on `tmux -L termsprawl-acp`.
    Tmux(Terminals),
    /// One `terminal_run` node per terminal on the person's canvas.
    Canvas(CanvasTerminals),
}

/// Why the backend asked for cannot be had; the front end stops before the agent starts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ChoiceError {
    /// `--terminals canvas` without a session file.
    #[error(
        "--terminals canvas needs the termsprawl session file (--session or TERMSPRAWL_SESSION_FILE)"
    )]
    NoSession,
    /// `--terminals canvas` and the tool server does not answer.
    #[error(
        "--terminals canvas: the tool server is unreachable: {0}; start termsprawl, or use --terminals tmux or auto"
    )]
    Unreachable(String),
    /// `--terminals canvas` and the tool server answers but cannot host them.
    #[error(
        "--terminals canvas: the tool server cannot host canvas terminals: {0} (they need terminal_run and terminal_wait, protocol 1.3.0); use --terminals tmux or auto"
    )]
    Unsupported(String),
    /// The tmux backend could not be prepared.
    #[error("cannot prepare the terminals: {0}")]
    Local(String),
}

impl ChoiceError {
    /// How the front end ends: 2 when the asked-for backend cannot be had (the agent is not
    /// started, `spec/acp.md` §2.1), 1 when the local one cannot be prepared.
    pub(crate) fn exit_status(&self) -> ExitStatus {
        match self {
            ChoiceError::NoSession | ChoiceError::Unreachable(_) | ChoiceError::Unsupported(_) => {
                ExitStatus::USAGE
            }
            ChoiceError::Local(_) => ExitStatus::FAILED,
        }
    }
}

/// What the choice made, for a notice: `None` when nothing is worth saying.
#[derive(Debug)]
pub(crate) struct Chosen {
    pub(crate) backend: Backend,
    pub(crate) notice: Option<String>,
    /// What the start learned about the tool server.
    pub(crate) server: ToolServer,
}

/// The tool server behind the session file, as `session_info` found it at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ToolServer {
    /// Not asked (no session file, or nothing needed it).
    NotAsked,
    /// It answered.
    Reachable,
    /// It could not be reached; the reason.
    Unreachable(String),
}

/// What `session_info` said.
enum Probe {
    /// Not reached: the transport's reason.
    Unreachable(String),
    /// Answered; whether canvas terminals can run there, and why not.
    Answered(Result<(), String>),
}

/// Chooses the backend for `mode`: `tmux` always the local server; `canvas` canvas terminals or
/// an error; `auto` canvas terminals when the server behind `session_file` lists `terminal_run` and
/// `terminal_wait` in `session_info.operations`, else the local server.
pub(crate) async fn choose(
    mode: TerminalBackend,
    session_file: Option<&Path>,
    cwd: &Path,
) -> Result<Chosen, ChoiceError> {
    let local = |notice: Option<String>, server: ToolServer| {
        Terminals::new(Server::Name(SOCKET_NAME.to_owned()), cwd.to_path_buf())
            .map(|terminals| Chosen { backend: Backend::Tmux(terminals), notice, server })
            .map_err(|error| ChoiceError::Local(error.to_string()))
    };
    let canvas = |session_file: &Path| Chosen {
        backend: Backend::Canvas(CanvasTerminals::new(
            session_file.to_path_buf(),
            cwd.to_path_buf(),
        )),
        notice: None,
        server: ToolServer::Reachable,
    };
    let Some(session_file) = session_file else {
        return match mode {
            TerminalBackend::Canvas => Err(ChoiceError::NoSession),
            TerminalBackend::Auto | TerminalBackend::Tmux => local(None, ToolServer::NotAsked),
        };
    };
    if mode == TerminalBackend::Tmux {
        return local(None, ToolServer::NotAsked);
    }
    let answer = probe_server(session_file).await;
    let server = match &answer {
        Probe::Unreachable(reason) => ToolServer::Unreachable(reason.clone()),
        Probe::Answered(_) => ToolServer::Reachable,
    };
    match (mode, answer) {
        (TerminalBackend::Tmux, _) => local(None, server),
        (TerminalBackend::Canvas, Probe::Unreachable(reason)) => {
            Err(ChoiceError::Unreachable(reason))
        }
        (TerminalBackend::Canvas, Probe::Answered(supported)) => {
            supported.map_err(ChoiceError::Unsupported)?;
            Ok(canvas(session_file))
        }
        (TerminalBackend::Auto, Probe::Answered(Ok(()))) => Ok(canvas(session_file)),
        (TerminalBackend::Auto, Probe::Answered(Err(reason))) => local(
            Some(format!(
                "agent terminals run on the local tmux server, not on the canvas: {reason}"
            )),
            server,
        ),
        (TerminalBackend::Auto, Probe::Unreachable(reason)) => local(
            Some(format!(
                "agent terminals run on the local tmux server: the tool server is unreachable ({reason})"
            )),
            server,
        ),
    }
}

/// Whether the server behind `session_file` can be reached (its `session_info` answered).
pub(crate) async fn reachability(session_file: &Path) -> ToolServer {
    match probe_server(session_file).await {
        Probe::Unreachable(reason) => ToolServer::Unreachable(reason),
        Probe::Answered(_) => ToolServer::Reachable,
    }
}

/// Asks the server's `session_info` whether it lists the operations canvas terminals need; a
/// server that does not answer within [`PROBE_TIMEOUT`] does not hold up the start any longer.
async fn probe_server(session_file: &Path) -> Probe {
    let request = ToolRequest::new("session_info", &serde_json::json!({}));
    let client = Client::default().with_timeout(PROBE_TIMEOUT);
    let answer = client.call(session_file, &request).await;
    if let ToolResult::Failure { error } = &answer
        && let Some(reason) = error.strip_prefix(UNAVAILABLE_PREFIX)
    {
        {
            let reason =
                reason.split(". Check that termsprawl is running").next().unwrap_or(reason);
            return Probe::Unreachable(reason.to_owned());
        }
    }
    Probe::Answered(canvas::check_operations(&answer))
}

impl Backend {
    /// Which backend this is, for `/status`.
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            Backend::Tmux(_) => "the local tmux server (tmux -L termsprawl-acp)",
            Backend::Canvas(_) => "canvas nodes of the tool server",
        }
    }

    /// Where a terminal shows, for the transcript ("tmux: tmux -L … attach -t …" or "the canvas
    /// node …").
    pub(crate) fn location(&self, terminal_id: &str) -> Option<String> {
        match self {
            Backend::Tmux(terminals) => {
                terminals.attach_command(terminal_id).map(|command| format!("tmux: {command}"))
            }
            Backend::Canvas(terminals) => terminals.location(terminal_id),
        }
    }

    /// `terminal/create`: the new terminal's id, at once.
    pub(crate) async fn create(&self, spec: Spec) -> Result<String, RpcError> {
        match self {
            Backend::Tmux(terminals) => terminals.create(spec).await,
            Backend::Canvas(terminals) => terminals.create(spec).await,
        }
    }

    /// `terminal/output`.
    pub(crate) async fn output(&self, terminal_id: &str) -> Result<Output, RpcError> {
        match self {
            Backend::Tmux(terminals) => terminals.output(terminal_id).await,
            Backend::Canvas(terminals) => terminals.output(terminal_id).await,
        }
    }

    /// `terminal/wait_for_exit`; `progress` hears how a canvas terminal's wait goes (the tmux
    /// backend reports none: its pane is there to attach to).
    pub(crate) async fn wait_for_exit(
        &self,
        terminal_id: &str,
        progress: Option<ProgressSink<'_>>,
    ) -> Result<CommandStatus, RpcError> {
        match self {
            Backend::Tmux(terminals) => terminals.wait_for_exit(terminal_id).await,
            Backend::Canvas(terminals) => terminals.wait_for_exit(terminal_id, progress).await,
        }
    }

    /// `terminal/kill`.
    pub(crate) async fn kill(&self, terminal_id: &str) -> Result<(), RpcError> {
        match self {
            Backend::Tmux(terminals) => terminals.kill(terminal_id).await,
            Backend::Canvas(terminals) => terminals.kill(terminal_id).await,
        }
    }

    /// `terminal/release`.
    pub(crate) async fn release(&self, terminal_id: &str) -> Result<(), RpcError> {
        match self {
            Backend::Tmux(terminals) => terminals.release(terminal_id).await,
            Backend::Canvas(terminals) => terminals.release(terminal_id).await,
        }
    }

    /// Releases every terminal at the end of the front end.
    pub(crate) async fn shutdown(&self) {
        match self {
            Backend::Tmux(terminals) => terminals.shutdown().await,
            Backend::Canvas(terminals) => terminals.shutdown().await,
        }
    }
}
