//! The `terminal/*` methods on canvas terminals (`spec/acp.md` §2.10, protocol 1.3.0): every
//! command the agent runs is a `terminal_run` node on the person's canvas, reached through the
//! session file with the loopback client of `transport`.
//!
//! The mapping (documented in `docs/acp.md`, "Terminals"):
//! - `terminal/create` → `terminal_run` with `timeoutMs: 0`: the command line is `command` followed
//!   by each of `args` shell-quoted, after `exec </dev/null`; `env` becomes `NAME=value` items
//!   (plus `PAGER=` and `GIT_PAGER=cat`, as the tmux backend sets them); `cwd` is the request's or
//!   the session cwd.
//! - `terminal/output` → `terminal_read {since: 0}`: all the output the node produced, the tail
//!   kept within `outputByteLimit` bytes on a character boundary; `exitStatus` once `running` is
//!   false.
//! - `terminal/wait_for_exit` → `terminal_wait {until: exit, timeoutMs: 30000}` again and again
//!   until it reports the process ended; while a person watches its progress, a chain of waits of
//!   1 s each (`transport::long_wait`) from the start of the output, whose progress (the last line,
//!   the time waited) goes to the transcript.
//! - `terminal/kill` → `terminal_kill` (SIGKILL to the process group); the node stays.
//! - `terminal/release` → `terminal_kill` when still running, then `terminal_close`.

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use termsprawl_protocol::args::{
    NodeArgs, TerminalReadArgs, TerminalRunArgs, TerminalWaitArgs, WaitUntil,
};
use termsprawl_protocol::results::{
    MAX_CLIENT_WAIT_MS, MAX_WAIT_MS, NodeResult, TerminalReadResult, TerminalWaitResult,
};
use termsprawl_protocol::{ToolRequest, ToolResult};
use termsprawl_transport::Client;
use termsprawl_transport::long_wait::{ProgressSink, WaitOptions, call_waiting};

use termsprawl_protocol::shell::shell_word;

use super::{ExitStatus, Output, Spec, tail};
use crate::connection::RpcError;

/// The operations a server must list in `session_info.operations` for canvas terminals.
pub(crate) const REQUIRED_OPERATIONS: [&str; 2] = ["terminal_run", "terminal_wait"];
/// The longest single `terminal_wait`, in milliseconds (the protocol's bound).
#[expect(clippy::cast_precision_loss, reason = "30 000 is exact in an f64")]
pub(crate) const WAIT_SLICE_MS: f64 = MAX_WAIT_MS as f64;

/// The `terminal_wait` for the exit of the command of node `node_id`, with the wait's `since` and
/// `timeoutMs`.
fn exit_wait(node_id: String, since: Option<f64>, timeout_ms: f64) -> TerminalWaitArgs {
    TerminalWaitArgs {
        node_id,
        until: WaitUntil::Exit,
        text: None,
        any_of: None,
        regex: None,
        since,
        quiet_ms: None,
        timeout_ms: Some(timeout_ms),
    }
}
/// How often a watched wait reports its progress (each a `terminal_wait` turn of this length).
pub(crate) const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);
/// The largest `maxChars` of `terminal_read`, in UTF-16 units.
pub(crate) const MAX_READ_CHARS: usize = 100_000;

/// The canvas terminals of one front end.
#[derive(Debug)]
pub(crate) struct CanvasTerminals {
    session_file: PathBuf,
    client: Client,
    default_cwd: PathBuf,
    next: AtomicU64,
    live: Mutex<HashMap<String, Entry>>,
}

#[derive(Debug, Clone)]
struct Entry {
    node_id: String,
    output_byte_limit: Option<u64>,
}

/// The state members every terminal answer of protocol 1.3.0 carries.
#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    running: bool,
    status: ExitStatus,
}

impl State {
    /// `running`, `exitCode` and `signal` of an answer.
    fn of(running: bool, exit_code: Option<i64>, signal: Option<String>) -> State {
        let exit_code = exit_code
            .and_then(|code| u64::try_from(code).ok())
            .map(|code| u32::try_from(code).unwrap_or(u32::MAX));
        State { running, status: ExitStatus { exit_code, signal } }
    }
}

impl CanvasTerminals {
    /// Canvas terminals reached through `session_file`, whose commands run in `default_cwd` unless
    /// asked otherwise.
    pub(crate) fn new(session_file: PathBuf, default_cwd: PathBuf) -> CanvasTerminals {
        CanvasTerminals {
            session_file,
            client: Client::default(),
            default_cwd,
            next: AtomicU64::new(1),
            live: Mutex::new(HashMap::new()),
        }
    }

    /// Where a terminal shows, for the transcript.
    pub(crate) fn location(&self, terminal_id: &str) -> Option<String> {
        let entry = self.entry(terminal_id).ok()?;
        Some(format!("the canvas node {}", entry.node_id))
    }

    /// Opens a run node for the command and returns the terminal id at once.
    pub(crate) async fn create(&self, spec: Spec) -> Result<String, RpcError> {
        let mut env = vec!["PAGER=".to_owned(), "GIT_PAGER=cat".to_owned()];
        for (name, value) in &spec.env {
            if !valid_env_name(name) {
                return Err(RpcError::invalid_params(format!(
                    "invalid environment variable name {name:?}: use letters, digits and \
                     underscores, not starting with a digit"
                )));
            }
            env.push(format!("{name}={value}"));
        }
        let cwd = spec.working_directory(&self.default_cwd)?;
        let line = command_line(&spec.command, &spec.args);
        let args = TerminalRunArgs {
            command: format!("exec </dev/null\n{line}"),
            title: Some(line),
            cwd: Some(cwd.to_string_lossy().into_owned()),
            env: Some(env),
            timeout_ms: Some(0.0),
            // Omitted, so that a 1.3.0 server takes the call too: the node stays until release.
            keep: None,
            notify: None,
        };
        let no_node = || RpcError::internal("terminal_run answered no nodeId");
        let value = self.call("terminal_run", &args).await?;
        let NodeResult { node_id } = read(value).map_err(|_| no_node())?;
        if node_id.is_empty() {
            return Err(no_node());
        }
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let terminal_id = format!("term-{number}");
        let entry = Entry { node_id, output_byte_limit: spec.output_byte_limit };
        self.live
            .lock()
            .map_err(|_| RpcError::internal("the terminal table is poisoned"))?
            .insert(terminal_id.clone(), entry);
        Ok(terminal_id)
    }

    /// All the output so far, tail-truncated to the terminal's byte limit, and the exit status
    /// once the command has exited.
    pub(crate) async fn output(&self, terminal_id: &str) -> Result<Output, RpcError> {
        let entry = self.entry(terminal_id)?;
        let limit = entry
            .output_byte_limit
            .map_or(usize::MAX, |limit| usize::try_from(limit).unwrap_or(usize::MAX));
        // A text of n UTF-16 units has at least n bytes, so reading `limit` units is enough; the
        // server reads at least one.
        let max_chars = limit.clamp(1, MAX_READ_CHARS);
        let args = TerminalReadArgs {
            node_id: entry.node_id.clone(),
            max_chars: Some(f64::from(u32::try_from(max_chars).unwrap_or(u32::MAX))),
            since: Some(0.0),
            view: None,
        };
        let answer: TerminalReadResult = read(self.call("terminal_read", &args).await?)?;
        let TerminalReadResult { output: text, cursor, running, exit_code, signal, .. } = answer;
        let state = State::of(running, exit_code, signal);
        let (output, dropped) = tail(&text, limit);
        Ok(Output {
            output: output.to_owned(),
            truncated: dropped || read_was_cut(&text, cursor, max_chars),
            exit_status: (!state.running).then_some(state.status),
        })
    }

    /// Waits until the command exits, in `terminal_wait` calls of at most 30 s each; no time
    /// limit of its own. With `progress`, the waits are a chain of turns of [`PROGRESS_EVERY`]
    /// from the start of the output, each reporting the last line and the time waited.
    pub(crate) async fn wait_for_exit(
        &self,
        terminal_id: &str,
        progress: Option<ProgressSink<'_>>,
    ) -> Result<ExitStatus, RpcError> {
        if let Some(progress) = progress {
            return self.watched_wait(terminal_id, progress).await;
        }
        loop {
            let entry = self.entry(terminal_id)?;
            let args = exit_wait(entry.node_id, None, WAIT_SLICE_MS);
            let answer: TerminalWaitResult = read(self.call("terminal_wait", &args).await?)?;
            let state = State::of(answer.running, answer.exit_code, answer.signal);
            if !state.running {
                return Ok(state.status);
            }
        }
    }

    /// [`CanvasTerminals::wait_for_exit`] with progress: chains of `terminal_wait` (each the
    /// longest a client chains) until the command has exited.
    async fn watched_wait(
        &self,
        terminal_id: &str,
        progress: ProgressSink<'_>,
    ) -> Result<ExitStatus, RpcError> {
        let turn = std::time::Duration::from_millis(MAX_WAIT_MS);
        let options = WaitOptions::new(MAX_CLIENT_WAIT_MS).with_turns(turn, PROGRESS_EVERY);
        loop {
            let entry = self.entry(terminal_id)?;
            #[expect(clippy::cast_precision_loss, reason = "600 000 is exact in an f64")]
            let args = exit_wait(entry.node_id, Some(0.0), MAX_CLIENT_WAIT_MS as f64);
            let args = serde_json::to_value(&args).map_err(|error| {
                RpcError::internal(format!("cannot encode terminal_wait: {error}"))
            })?;
            let request = ToolRequest::new("terminal_wait", &args);
            let answer = call_waiting(
                &self.client,
                &self.session_file,
                &request,
                &options,
                Some(&mut *progress),
            )
            .await;
            let value = match answer {
                ToolResult::Success { value } => value.unwrap_or(Value::Null),
                ToolResult::Failure { error } => {
                    return Err(RpcError::internal(format!("terminal_wait failed: {error}")));
                }
            };
            let answer: TerminalWaitResult = read(value)?;
            let state = State::of(answer.running, answer.exit_code, answer.signal);
            if !state.running {
                return Ok(state.status);
            }
        }
    }

    /// Ends the command (`terminal_kill`: SIGKILL to its process group); the terminal stays valid.
    pub(crate) async fn kill(&self, terminal_id: &str) -> Result<(), RpcError> {
        let entry = self.entry(terminal_id)?;
        self.kill_node(&entry.node_id).await
    }

    /// Kills the command if it still runs, closes its node and forgets the id.
    pub(crate) async fn release(&self, terminal_id: &str) -> Result<(), RpcError> {
        let entry = self.entry(terminal_id)?;
        if let Ok(mut live) = self.live.lock() {
            live.remove(terminal_id);
        }
        self.close_node(&entry.node_id).await
    }

    /// Releases every terminal still held: their commands killed, their nodes closed.
    pub(crate) async fn shutdown(&self) {
        let entries: Vec<Entry> = match self.live.lock() {
            Ok(mut live) => live.drain().map(|(_, entry)| entry).collect(),
            Err(_) => Vec::new(),
        };
        for entry in entries {
            let _ = self.close_node(&entry.node_id).await;
        }
    }

    /// `terminal_kill` when the node's process still runs, then `terminal_close`.
    async fn close_node(&self, node_id: &str) -> Result<(), RpcError> {
        let args = TerminalReadArgs {
            node_id: node_id.to_owned(),
            max_chars: Some(1.0),
            since: Some(0.0),
            view: None,
        };
        let running = match self.call("terminal_read", &args).await {
            Ok(value) => read::<TerminalReadResult>(value).map_or(true, |answer| answer.running),
            Err(_) => true,
        };
        if running {
            // A kill that fails (the process ended meanwhile) does not keep the node.
            let _ = self.kill_node(node_id).await;
        }
        self.call("terminal_close", &NodeArgs { node_id: node_id.to_owned() }).await?;
        Ok(())
    }

    async fn kill_node(&self, node_id: &str) -> Result<(), RpcError> {
        self.call("terminal_kill", &NodeArgs { node_id: node_id.to_owned() }).await?;
        Ok(())
    }

    fn entry(&self, terminal_id: &str) -> Result<Entry, RpcError> {
        let live =
            self.live.lock().map_err(|_| RpcError::internal("the terminal table is poisoned"))?;
        live.get(terminal_id).cloned().ok_or_else(|| {
            RpcError::invalid_params(format!("unknown or released terminal: {terminal_id}"))
        })
    }

    /// One tool call; an `ok:false` answer is an internal error naming the operation.
    async fn call(&self, operation: &str, args: &impl Serialize) -> Result<Value, RpcError> {
        let args = serde_json::to_value(args)
            .map_err(|error| RpcError::internal(format!("cannot encode {operation}: {error}")))?;
        match self.client.call(&self.session_file, &ToolRequest::new(operation, &args)).await {
            ToolResult::Success { value } => Ok(value.unwrap_or(Value::Null)),
            ToolResult::Failure { error } => {
                Err(RpcError::internal(format!("{operation} failed: {error}")))
            }
        }
    }
}

/// The `sh` command line of a `terminal/create`, also the node's title: `command` as given (so a
/// whole shell line works), then each argument as a person would type it (quoted only when it
/// needs quotes: `/bin/sh -lc 'echo hi'`).
pub(crate) fn command_line(command: &str, args: &[String]) -> String {
    let mut line = command.to_owned();
    for arg in args {
        line.push(' ');
        line.push_str(&shell_word(arg));
    }
    line
}

/// Whether the server's answer to `session_info` lists every operation canvas terminals need;
/// the reason when not.
pub(crate) fn check_operations(session_info: &ToolResult) -> Result<(), String> {
    let value = match session_info {
        ToolResult::Failure { error } => return Err(error.clone()),
        ToolResult::Success { value } => value.as_ref(),
    };
    let Some(listed) = value.and_then(|value| value.get("operations")).and_then(Value::as_array)
    else {
        return Err("its session_info lists no operations".to_owned());
    };
    let missing: Vec<&str> = REQUIRED_OPERATIONS
        .into_iter()
        .filter(|name| !listed.iter().any(|listed| listed.as_str() == Some(name)))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("its session_info.operations lacks {}", missing.join(" and ")))
    }
}

/// A terminal answer read with its type of `termsprawl_protocol::results` (members a later
/// version added are ignored).
fn read<T: DeserializeOwned>(value: Value) -> Result<T, RpcError> {
    serde_json::from_value(value)
        .map_err(|_| RpcError::internal("the tool server answered no running state"))
}

/// Whether `terminal_read {since: 0}` left output out: fewer characters than the cursor counts,
/// with the answer at its `maxChars` cap (so output that arrived between the server's read and
/// its cursor does not count as cut).
fn read_was_cut(text: &str, cursor: u64, max_chars: usize) -> bool {
    let units: usize = text.chars().map(char::len_utf16).sum();
    u64::try_from(text.chars().count()).unwrap_or(u64::MAX) < cursor && units + 1 >= max_chars
}

/// The environment names `terminal_run` accepts: letters, digits and underscores, not starting
/// with a digit.
fn valid_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
