//! The control channel: how `termsprawl-headless launch`, `link`, `unlink`, `close` and `info`,
//! which run in other processes, reach a running `serve`.
//!
//! `serve` listens on the Unix socket `D/headless.sock`, mode 0600 inside `D` (0700): only the
//! user who owns the data directory can connect, which is the same trust boundary as the session
//! files next to it. Each connection carries exactly one request: one line of compact JSON
//! ([`ControlRequest`], tagged by `command`), answered by one line holding a tool result
//! (`{"ok":true,"value":…}` or `{"ok":false,"error":…}`), after which the server closes the
//! connection. The socket is removed when `serve` stops; a socket left behind by a crashed
//! server is replaced by the next `serve`, which holds the lock.
//!
//! Control commands act at once, like a person's clicks in the app: they do not wait in the
//! project's queue of agent operations.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use termsprawl_protocol::ToolResult;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::net::UnixListener;

use crate::canvas::NodeKind;
use crate::engine::Engine;
use crate::error::{Error, ToolError};
use crate::launch;

/// The longest request line the server reads.
const MAX_REQUEST_BYTES: u64 = 1024 * 1024;

/// One control request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ControlRequest {
    /// Start a command as an agent in a new node.
    Launch(LaunchRequest),
    /// Enable the agent link `from` → `to` ("Allow agent requests").
    Link {
        /// The sender.
        from: String,
        /// The recipient.
        to: String,
    },
    /// Disable the agent link `from` → `to`.
    Unlink {
        /// The sender.
        from: String,
        /// The recipient.
        to: String,
    },
    /// Remove a node (ending its tmux session and revoking its session).
    Close {
        /// The node.
        #[serde(rename = "nodeId")]
        node_id: String,
    },
    /// Describe the running server and its projects.
    Info,
}

/// What `launch` starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LaunchRequest {
    /// The project folder; the server's default project when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<PathBuf>,
    /// The agent's name (status adapter `<name>-unverified`); the command's file name when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The node's title; the agent's name when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The command and its arguments, run as given (no shell).
    pub argv: Vec<String>,
}

/// Sends one request to the server whose control socket is `socket` and returns the value of
/// its answer. A failed answer, and a server that cannot be reached, are [`Error::Control`].
pub fn request(socket: &Path, request: &ControlRequest) -> Result<Value, Error> {
    let mut stream = UnixStream::connect(socket).map_err(|error| {
        Error::Control(format!(
            "cannot reach a running termsprawl-headless serve at {}: {error}",
            socket.display()
        ))
    })?;
    let mut line =
        serde_json::to_string(request).map_err(|error| Error::Control(error.to_string()))?;
    line.push('\n');
    stream.write_all(line.as_bytes()).map_err(Error::io("write", socket))?;
    let mut answer = String::new();
    BufReader::new(&stream).read_line(&mut answer).map_err(Error::io("read", socket))?;
    let result: ToolResult = serde_json::from_str(&answer).map_err(|error| {
        Error::Control(format!("unexpected answer from {}: {error}", socket.display()))
    })?;
    match result {
        ToolResult::Success { value } => Ok(value.unwrap_or(Value::Null)),
        ToolResult::Failure { error } => Err(Error::Control(error)),
    }
}

/// Binds `D/headless.sock` (replacing a stale one) with mode 0600.
pub(crate) fn bind(socket: &Path) -> Result<UnixListener, Error> {
    match std::fs::remove_file(socket) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            return Err(Error::io("remove", socket)(error));
        }
        _ => {}
    }
    let listener = UnixListener::bind(socket).map_err(Error::io("bind", socket))?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))
        .map_err(Error::io("chmod", socket))?;
    Ok(listener)
}

/// Answers connections until the task is aborted.
pub(crate) async fn serve(listener: UnixListener, engine: Arc<Engine>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let engine = Arc::clone(&engine);
        tokio::spawn(async move {
            let (reader, mut writer) = stream.into_split();
            let mut line = String::new();
            let read = tokio::io::AsyncReadExt::take(reader, MAX_REQUEST_BYTES);
            let result = match tokio::io::BufReader::new(read).read_line(&mut line).await {
                Ok(_) => match serde_json::from_str::<ControlRequest>(&line) {
                    Ok(request) => match execute(&engine, request).await {
                        Ok(value) => ToolResult::ok(value),
                        Err(error) => ToolResult::failure(error.message()),
                    },
                    Err(error) => ToolResult::failure(format!("invalid control request: {error}")),
                },
                Err(error) => {
                    ToolResult::failure(format!("cannot read the control request: {error}"))
                }
            };
            let mut answer = serde_json::to_string(&result).unwrap_or_default();
            answer.push('\n');
            let _ = writer.write_all(answer.as_bytes()).await;
            let _ = writer.shutdown().await;
        });
    }
}

/// Carries out one control request.
pub(crate) async fn execute(engine: &Engine, request: ControlRequest) -> Result<Value, ToolError> {
    match request {
        ControlRequest::Launch(request) => launch(engine, request).await,
        ControlRequest::Link { from, to } => {
            let project_id = project_of(engine, &from)?;
            engine
                .mutate(&project_id, |project| project.link(&from, &to).map_err(ToolError::new))?;
            Ok(json!({ "from": from, "to": to, "enabled": true }))
        }
        ControlRequest::Unlink { from, to } => {
            let project_id = project_of(engine, &from)?;
            let removed = engine.mutate(&project_id, |project| Ok(project.unlink(&from, &to)))?;
            Ok(json!({ "from": from, "to": to, "enabled": false, "changed": removed }))
        }
        ControlRequest::Close { node_id } => {
            let project_id = project_of(engine, &node_id)?;
            engine.close_node(&project_id, &node_id).await?;
            Ok(json!({ "nodeId": node_id }))
        }
        ControlRequest::Info => Ok(info(engine).await),
    }
}

/// Starts `launch.argv` as an agent in a new node.
pub(crate) async fn launch(engine: &Engine, launch: LaunchRequest) -> Result<Value, ToolError> {
    let Some(program) = launch.argv.first() else {
        return Err(ToolError::new("launch needs a command to run"));
    };
    let project_id = match &launch.project {
        Some(folder) => engine.ensure_project(folder)?,
        None => engine.default_project().to_owned(),
    };
    let name = launch
        .agent
        .clone()
        .filter(|name| !name.is_empty())
        .or_else(|| Path::new(program).file_name().map(|name| name.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "agent".to_owned());
    let title =
        launch.title.clone().filter(|title| !title.is_empty()).unwrap_or_else(|| name.clone());
    let node_id = engine.state().canvas.fresh_node_id(NodeKind::Agent);
    let status = launch::unverified_status(&name);
    let started =
        engine.start_agent(&project_id, node_id, &name, &title, &launch.argv, status).await?;
    Ok(started.to_value(engine.terminals().tmux()))
}

fn project_of(engine: &Engine, node_id: &str) -> Result<String, ToolError> {
    engine
        .state()
        .canvas
        .project_of(node_id)
        .map(|project| project.id.clone())
        .ok_or_else(|| ToolError::new(format!("node {node_id} is not on the canvas")))
}

async fn info(engine: &Engine) -> Value {
    let running = engine.terminals().session_names().await.unwrap_or_default();
    let (url, instance_id) = match engine.tool_server() {
        Ok(server) => (server.url().to_owned(), server.instance_id().to_owned()),
        Err(_) => (String::new(), String::new()),
    };
    let state = engine.state();
    let projects: Vec<Value> = state
        .canvas
        .projects
        .iter()
        .map(|project| {
            json!({
                "projectId": project.id,
                "folder": project.folder.to_string_lossy(),
                "nodes": project.list_value(&running),
                "links": project.links,
            })
        })
        .collect();
    json!({
        "instanceId": instance_id,
        "url": url,
        "dataDir": engine.layout().agent_tools().to_string_lossy(),
        "tmuxSocket": engine.terminals().tmux().socket().to_string_lossy(),
        "defaultProjectId": engine.default_project(),
        "projects": projects,
    })
}
