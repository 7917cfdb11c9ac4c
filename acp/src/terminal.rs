//! The `terminal/*` methods on a local tmux server (`spec/acp.md` §2.10): one tmux session per
//! terminal, on the dedicated server `tmux -L termsprawl-acp`.
//!
//! `remain-on-exit` is set globally in the same tmux invocation that creates the pane, so a command
//! that exits at once still leaves its pane, output and exit status behind. A released terminal's
//! tmux session stays until [`Terminals::shutdown`], so a person can still inspect it.
//!
//! [`Backend`] (`backend.rs`) is what the client's handlers call: this local server, or canvas
//! terminals (`canvas.rs`) when `--terminals` chooses them.

mod backend;
mod canvas;
#[cfg(test)]
mod tests;

pub(crate) use backend::{Backend, ToolServer, choose, reachability};

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use serde::Serialize;
use serde_json::Value;
use termsprawl_external_term::pane::{self, PANE_DEAD_FIELDS, is_dead_notice};
use tokio::process::Command;
use tokio::time::{Instant, sleep};

use crate::connection::RpcError;

/// The tmux socket name of the backend.
pub(crate) const SOCKET_NAME: &str = "termsprawl-acp";
/// Lines of scrollback kept per terminal.
const HISTORY_LIMIT: u32 = 100_000;
/// How long `kill` waits after SIGTERM before SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// How often a running command's state is polled.
const POLL: Duration = Duration::from_millis(100);

/// How to reach the tmux server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Server {
    /// `tmux -L NAME`.
    Name(String),
    /// `tmux -S PATH` (tests use a private socket).
    #[cfg_attr(not(test), expect(dead_code, reason = "only tests use a private socket"))]
    Socket(PathBuf),
}

impl Server {
    fn args(&self) -> Vec<String> {
        match self {
            Server::Name(name) => vec!["-L".to_owned(), name.clone()],
            Server::Socket(path) => vec!["-S".to_owned(), path.to_string_lossy().into_owned()],
        }
    }
}

/// A `terminal/create` request, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spec {
    pub(crate) command: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) cwd: Option<String>,
    pub(crate) output_byte_limit: Option<u64>,
}

impl Spec {
    /// A bare command: no arguments, environment, cwd or output limit.
    #[cfg(test)]
    pub(crate) fn of(command: &str) -> Spec {
        Spec {
            command: command.to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            output_byte_limit: None,
        }
    }

    /// The command's working directory: the requested one (absolute, an existing directory), or
    /// `default`. Both backends check it the same way.
    pub(crate) fn working_directory(&self, default: &Path) -> Result<PathBuf, RpcError> {
        let cwd = match &self.cwd {
            Some(cwd) if !Path::new(cwd).is_absolute() => {
                return Err(RpcError::invalid_params(format!("the cwd must be absolute: {cwd}")));
            }
            Some(cwd) => PathBuf::from(cwd),
            None => default.to_path_buf(),
        };
        if !cwd.is_dir() {
            return Err(RpcError::invalid_params(format!(
                "the cwd is not a directory: {}",
                cwd.display()
            )));
        }
        Ok(cwd)
    }
}

/// How a command ended (ACP's `TerminalExitStatus`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExitStatus {
    pub(crate) exit_code: Option<u32>,
    pub(crate) signal: Option<String>,
}

impl ExitStatus {
    /// `exitCode` and `signal`, both present, `null` when not applicable.
    pub(crate) fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// The answer of `terminal/output`.
#[expect(clippy::struct_field_names, reason = "the members are named by the wire")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Output {
    pub(crate) output: String,
    pub(crate) truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) exit_status: Option<ExitStatus>,
}

impl Output {
    /// `{"output","truncated","exitStatus"?}`.
    pub(crate) fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// The terminals of one front end.
#[derive(Debug)]
pub(crate) struct Terminals {
    server: Server,
    /// Private directory for the exit-status files, removed with the terminals.
    status_dir: tempfile::TempDir,
    prefix: String,
    default_cwd: PathBuf,
    next: AtomicU64,
    live: Mutex<HashMap<String, Entry>>,
    sessions: Mutex<Vec<String>>,
}

#[derive(Debug, Clone)]
struct Entry {
    session: String,
    pane_pid: Option<i32>,
    output_byte_limit: Option<u64>,
    /// Where the pane's script writes the command's exit code just before it exits.
    status_file: PathBuf,
    /// The last signal we sent the command's process group (0: none).
    signalled: Arc<AtomicI32>,
}

/// The pane's state as tmux reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PaneState {
    /// The pane's process is gone (its status may not be known yet).
    dead: bool,
    /// How it ended, once tmux knows.
    exit_status: Option<ExitStatus>,
    history_full: bool,
}

impl Terminals {
    /// Terminals on `server`, whose commands run in `default_cwd` unless asked otherwise.
    pub(crate) fn new(server: Server, default_cwd: PathBuf) -> std::io::Result<Terminals> {
        let status_dir = tempfile::Builder::new().prefix("termsprawl-acp-terminals-").tempdir()?;
        Ok(Terminals {
            server,
            status_dir,
            prefix: format!("acp-{}", std::process::id()),
            default_cwd,
            next: AtomicU64::new(1),
            live: Mutex::new(HashMap::new()),
            sessions: Mutex::new(Vec::new()),
        })
    }

    /// The command that shows a terminal, for the transcript.
    pub(crate) fn attach_command(&self, terminal_id: &str) -> Option<String> {
        let session = self.entry(terminal_id).ok()?.session;
        let server = self.server.args().join(" ");
        Some(format!("tmux {server} attach -t {session}"))
    }

    /// Starts a command in a new tmux session and returns the terminal id at once.
    pub(crate) async fn create(&self, spec: Spec) -> Result<String, RpcError> {
        for (name, _) in &spec.env {
            if name.is_empty() || name.contains('=') || name.contains('\0') {
                return Err(RpcError::invalid_params(format!(
                    "invalid environment variable name {name:?}"
                )));
            }
        }
        let cwd = spec.working_directory(&self.default_cwd)?;
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let terminal_id = format!("term-{number}");
        let session = format!("{}-{number}", self.prefix);
        let status_file = self.status_dir.path().join(format!("{terminal_id}.status"));
        let history = HISTORY_LIMIT.to_string();
        let mut args: Vec<String> = vec![
            "start-server".into(),
            ";".into(),
            "set-option".into(),
            "-g".into(),
            "remain-on-exit".into(),
            "on".into(),
            ";".into(),
            "set-option".into(),
            "-gq".into(),
            "remain-on-exit-format".into(),
            String::new(),
            ";".into(),
            "set-option".into(),
            "-g".into(),
            "history-limit".into(),
            history,
            ";".into(),
            "new-session".into(),
            "-d".into(),
            "-s".into(),
            session.clone(),
            "-x".into(),
            "200".into(),
            "-y".into(),
            "50".into(),
            "-c".into(),
            cwd.to_string_lossy().into_owned(),
            "-e".into(),
            "PAGER=".into(),
            "-e".into(),
            "GIT_PAGER=cat".into(),
        ];
        for (name, value) in &spec.env {
            args.push("-e".into());
            args.push(format!("{name}={value}"));
        }
        args.extend([
            "--".into(),
            "sh".into(),
            "-c".into(),
            shell_line(&spec.command, &spec.args, &status_file),
            ";".into(),
            "display-message".into(),
            "-p".into(),
            "-t".into(),
            format!("={session}:"),
            "#{pane_pid}".into(),
        ]);
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.push(session.clone());
        }
        let stdout = self.tmux(&args).await?;
        let pane_pid = stdout.trim().parse::<i32>().ok();
        let entry = Entry {
            session,
            pane_pid,
            output_byte_limit: spec.output_byte_limit,
            status_file,
            signalled: Arc::new(AtomicI32::new(0)),
        };
        if let Ok(mut live) = self.live.lock() {
            live.insert(terminal_id.clone(), entry);
        }
        Ok(terminal_id)
    }

    /// The output so far, tail-truncated to the terminal's byte limit, and the exit status once the
    /// command has exited.
    pub(crate) async fn output(&self, terminal_id: &str) -> Result<Output, RpcError> {
        let entry = self.entry(terminal_id)?;
        let target = format!("={}:", entry.session);
        let stdout = self
            .tmux(&[
                "display-message".into(),
                "-p".into(),
                "-t".into(),
                target.clone(),
                state_format(),
                ";".into(),
                "capture-pane".into(),
                "-p".into(),
                "-J".into(),
                "-S".into(),
                "-".into(),
                "-E".into(),
                "-".into(),
                "-t".into(),
                target,
            ])
            .await?;
        let (state_line, text) = stdout.split_once('\n').unwrap_or((stdout.as_str(), ""));
        let state = resolve_state(&entry, parse_state(state_line)?);
        let text = clean_capture(text, state.exit_status.is_some());
        let limit = entry
            .output_byte_limit
            .map_or(usize::MAX, |limit| usize::try_from(limit).unwrap_or(usize::MAX));
        let (output, dropped) = tail(&text, limit);
        Ok(Output {
            output: output.to_owned(),
            truncated: dropped || state.history_full,
            exit_status: state.exit_status,
        })
    }

    /// Waits until the command exits; no time limit of its own.
    pub(crate) async fn wait_for_exit(&self, terminal_id: &str) -> Result<ExitStatus, RpcError> {
        let mut dead_since: Option<Instant> = None;
        loop {
            let entry = self.entry(terminal_id)?;
            let state = self.state(&entry).await?;
            if let Some(status) = state.exit_status {
                return Ok(status);
            }
            if state.dead {
                // tmux closed the pane before it collected the status; it normally follows at once.
                let since = *dead_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= KILL_GRACE {
                    return Ok(ExitStatus { exit_code: None, signal: None });
                }
            }
            sleep(POLL).await;
        }
    }

    /// Ends the command (SIGTERM to its process group, SIGKILL after a grace period); the terminal
    /// stays valid.
    pub(crate) async fn kill(&self, terminal_id: &str) -> Result<(), RpcError> {
        let entry = self.entry(terminal_id)?;
        self.kill_entry(&entry).await
    }

    /// Kills the command if it still runs and forgets the id; its tmux session stays until
    /// shutdown.
    pub(crate) async fn release(&self, terminal_id: &str) -> Result<(), RpcError> {
        let entry = self.entry(terminal_id)?;
        if let Ok(mut live) = self.live.lock() {
            live.remove(terminal_id);
        }
        // The id is free whatever happens; shutdown removes the tmux session in any case.
        let _ = self.kill_entry(&entry).await;
        Ok(())
    }

    /// Releases every terminal and removes every tmux session this front end created.
    pub(crate) async fn shutdown(&self) {
        let entries: Vec<Entry> = match self.live.lock() {
            Ok(mut live) => live.drain().map(|(_, entry)| entry).collect(),
            Err(_) => Vec::new(),
        };
        for entry in &entries {
            let _ = self.kill_entry(entry).await;
        }
        let sessions: Vec<String> = match self.sessions.lock() {
            Ok(mut sessions) => sessions.drain(..).collect(),
            Err(_) => Vec::new(),
        };
        for session in sessions {
            let _ = self.tmux(&["kill-session".into(), "-t".into(), format!("={session}")]).await;
        }
    }

    /// The tmux session names created so far (tests).
    #[cfg(test)]
    pub(crate) fn session_names(&self) -> Vec<String> {
        self.sessions.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// SIGTERM to the command's process group; SIGKILL when the group has not emptied after the
    /// grace period. Returns once the pane is dead.
    async fn kill_entry(&self, entry: &Entry) -> Result<(), RpcError> {
        let group = entry.pane_pid.filter(|pid| *pid > 1).and_then(Pid::from_raw);
        let Some(group) = group else {
            if self.state(entry).await?.dead {
                return Ok(());
            }
            return Err(RpcError::internal("the terminal's process is unknown"));
        };
        for signal in [Signal::TERM, Signal::KILL] {
            if !group_alive(group) {
                break;
            }
            if !self.state(entry).await?.dead {
                // The signal that ends the pane's own process is the one to report.
                entry.signalled.store(signal.as_raw(), Ordering::Relaxed);
            }
            if kill_process_group(group, signal).is_err() {
                break;
            }
            let deadline = Instant::now() + KILL_GRACE;
            while Instant::now() < deadline && group_alive(group) {
                sleep(Duration::from_millis(50)).await;
            }
        }
        // The pane dies with its process; wait for tmux to notice.
        let deadline = Instant::now() + KILL_GRACE * 3;
        while Instant::now() < deadline {
            if self.state(entry).await?.dead {
                return Ok(());
            }
            sleep(Duration::from_millis(50)).await;
        }
        Err(RpcError::internal("the terminal's command did not end after SIGKILL"))
    }

    async fn state(&self, entry: &Entry) -> Result<PaneState, RpcError> {
        let stdout = self
            .tmux(&[
                "display-message".into(),
                "-p".into(),
                "-t".into(),
                format!("={}:", entry.session),
                state_format(),
            ])
            .await?;
        Ok(resolve_state(entry, parse_state(stdout.lines().next().unwrap_or(""))?))
    }

    fn entry(&self, terminal_id: &str) -> Result<Entry, RpcError> {
        let live =
            self.live.lock().map_err(|_| RpcError::internal("the terminal table is poisoned"))?;
        live.get(terminal_id).cloned().ok_or_else(|| {
            RpcError::invalid_params(format!("unknown or released terminal: {terminal_id}"))
        })
    }

    async fn tmux(&self, args: &[String]) -> Result<String, RpcError> {
        let output = Command::new("tmux")
            .args(self.server.args())
            .arg("-u")
            .args(args)
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .output()
            .await
            .map_err(|error| RpcError::internal(format!("cannot run tmux: {error}")))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(RpcError::internal(format!("tmux failed: {}", stderr.trim())));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

/// Whether a process group still has a member that is not a zombie (tmux may leave the pane's
/// process unreaped: `termsprawl_external_term::pane`).
pub(crate) fn group_alive(group: Pid) -> bool {
    pane::process_group_alive(group.as_raw_nonzero().get())
}

/// The pane state format: the dead flag, exit status and signal (`PANE_DEAD_FIELDS`), then the
/// history size and limit, `|`-separated.
fn state_format() -> String {
    format!("{}|#{{history_size}}|#{{history_limit}}", PANE_DEAD_FIELDS.join("|"))
}

/// Completes tmux's view with the status file and the signals we sent. tmux 3.3 sometimes leaves
/// a dead pane's process unreaped, so its own exit status is only the second source.
fn resolve_state(entry: &Entry, mut state: PaneState) -> PaneState {
    let from_file = std::fs::read_to_string(&entry.status_file)
        .ok()
        .and_then(|text| text.trim().parse::<u32>().ok());
    if let Some(code) = from_file {
        state.dead = true;
        state.exit_status = Some(ExitStatus { exit_code: Some(code), signal: None });
        return state;
    }
    let signalled = entry.signalled.load(Ordering::Relaxed);
    if state.dead && state.exit_status.is_none() && signalled > 0 {
        state.exit_status =
            Some(ExitStatus { exit_code: None, signal: Some(signal_name(signalled)) });
    }
    state
}

fn parse_state(line: &str) -> Result<PaneState, RpcError> {
    let fields: Vec<&str> = line.trim_end().split('|').collect();
    let [dead, status, signal, size, limit] = fields.as_slice() else {
        return Err(RpcError::internal(format!("unexpected pane state from tmux: {line:?}")));
    };
    let pane = pane::PaneState::from_fields(dead, status, signal, "");
    let exit_status = match (pane.signal, pane.exit_code.and_then(|code| u32::try_from(code).ok()))
    {
        (Some(signal), _) => {
            Some(ExitStatus { exit_code: None, signal: Some(signal_name(signal)) })
        }
        (None, Some(code)) => Some(ExitStatus { exit_code: Some(code), signal: None }),
        (None, None) => None,
    };
    let history_full = match (size.parse::<u64>(), limit.parse::<u64>()) {
        (Ok(size), Ok(limit)) => limit > 0 && size >= limit,
        _ => false,
    };
    Ok(PaneState { dead: pane.dead, exit_status, history_full })
}

/// Drops the "Pane is dead" line older tmux versions print and trailing blank lines; every kept
/// line ends with a newline.
fn clean_capture(text: &str, dead: bool) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    while lines.last().is_some_and(|line| line.trim().is_empty()) {
        lines.pop();
    }
    if dead && lines.last().is_some_and(|line| is_dead_notice(line)) {
        lines.pop();
        while lines.last().is_some_and(|line| line.trim().is_empty()) {
            lines.pop();
        }
    }
    let mut cleaned = String::new();
    for line in lines {
        cleaned.push_str(line);
        cleaned.push('\n');
    }
    cleaned
}

/// Keeps at most `limit` bytes from the end of `text`, starting on a character boundary; whether
/// anything was dropped.
pub(crate) fn tail(text: &str, limit: usize) -> (&str, bool) {
    if text.len() <= limit {
        return (text, false);
    }
    let mut start = text.len() - limit;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    (&text[start..], true)
}

/// The script the pane runs: stdin from `/dev/null`, then `command` followed by each argument
/// single-quoted (so a whole shell line in `command` works) in a subshell, then a short pause and
/// the command's exit code written to `status_file` (atomically) before exiting with it.
///
/// tmux 3.3 marks a pane dead as soon as its process exits, and output still buffered in the pty
/// is then lost: the pause lets tmux read it. The status file does not depend on tmux reaping the
/// pane's process, which it sometimes fails to do. A command that dies by a signal of its own
/// shows as the shell's `128 + n` exit code; a kill of the process group shows as the signal.
pub(crate) fn shell_line(command: &str, args: &[String], status_file: &Path) -> String {
    let status_file = shell_quote(&status_file.to_string_lossy());
    let mut line = String::from("exec </dev/null\n(\n");
    line.push_str(command);
    for arg in args {
        line.push(' ');
        line.push_str(&shell_quote(arg));
    }
    line.push_str("\n)\nacp_status=$?\nsleep 0.2\n");
    let _ = writeln!(
        line,
        "printf '%s\\n' \"$acp_status\" > {status_file}.tmp && mv -f {status_file}.tmp {status_file}"
    );
    line.push_str("exit $acp_status\n");
    line
}

/// Single-quotes a word for `sh`.
pub(crate) use termsprawl_protocol::shell::single_quoted as shell_quote;

/// The name of a signal number, such as `SIGTERM` (the one table, in `protocol`).
pub(crate) use termsprawl_protocol::results::signal_name;
