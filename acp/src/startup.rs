//! Start-up (`spec/acp.md` §2.1, §2.2): the options checked against the machine (cwd, trace file,
//! agent log), the terminals prepared, the agent spawned, the connection's reader and writer
//! started, and the chat run to its exit status and shut down.

use std::fs::OpenOptions;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;

use crate::chat::{Chat, Setting};
use crate::client::Config;
use crate::fs::{Roots, normalize};
use crate::input::{LineEditor, Signals, history_path};
use crate::launch::Launcher;
use crate::options::{AgentLog, Options};
use crate::terminal::{self, ToolServer};
use crate::trace::Trace;
use crate::ui::Ui;
use termsprawl_protocol::ExitStatus;

/// Runs the front end to its exit status.
pub(crate) async fn run(options: Options, session_file: Option<PathBuf>, mut ui: Ui) -> ExitStatus {
    let current_dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let cwd = normalize(&current_dir.join(options.cwd.clone().unwrap_or_default()));
    if !cwd.is_dir() {
        ui.usage_error(&format!("--cwd is not a directory: {}", cwd.display()));
        return ExitStatus::USAGE;
    }
    let roots = match Roots::new(&cwd) {
        Ok(roots) => roots,
        Err(error) => {
            ui.usage_error(&format!("cannot use {} as the root: {error}", cwd.display()));
            return ExitStatus::USAGE;
        }
    };
    let session_file = session_file.map(|file| normalize(&current_dir.join(file)));
    let trace = match &options.trace {
        Some(path) => match Trace::open(path) {
            Ok(trace) => Some(Arc::new(trace)),
            Err(error) => {
                ui.usage_error(&format!("cannot open the trace file {}: {error}", path.display()));
                return ExitStatus::USAGE;
            }
        },
        None => None,
    };
    let (agent_stderr, agent_log) = match agent_stderr(&options.agent_log) {
        Ok(opened) => opened,
        Err(error) => {
            ui.usage_error(&error);
            return ExitStatus::USAGE;
        }
    };
    let signals = match Signals::new() {
        Ok(signals) => signals,
        Err(error) => {
            ui.error(&format!("cannot listen for signals: {error}"));
            return ExitStatus::FAILED;
        }
    };
    // `--terminals` chooses the backend before the agent starts (spec/acp.md §2.10).
    let terminals = match terminal::choose(options.terminals, session_file.as_deref(), &cwd).await {
        Ok(chosen) => {
            if let Some(notice) = &chosen.notice {
                ui.error(notice);
            }
            chosen
        }
        Err(error) => {
            ui.error(&error.to_string());
            return error.exit_status();
        }
    };
    // The MCP bridge is handed over only when the server can be reached (`--terminals tmux` did
    // not ask it).
    let server = match (terminals.server, session_file.as_deref()) {
        (ToolServer::NotAsked, Some(file)) if options.mcp && !options.list_sessions => {
            terminal::reachability(file).await
        }
        (server, _) => server,
    };
    let terminals = Arc::new(terminals.backend);
    let config = Config {
        roots,
        terminals: Arc::clone(&terminals),
        permission: options.permission,
        permission_timeout: options.permission_timeout,
        progress: std::io::stdout().is_terminal(),
    };
    let launcher = Launcher {
        argv: options.agent.clone(),
        cwd: cwd.clone(),
        log: options.agent_log.clone(),
        log_path: agent_log.clone(),
        trace,
        config,
    };
    let Some(started) = launcher.first(agent_stderr, &mut ui) else {
        return ExitStatus::USAGE;
    };

    // The prompt is edited (with the project's history) when a person types at a terminal.
    let interactive = options.prompt.is_none() && !options.list_sessions;
    let editor = (interactive && std::io::stdin().is_terminal() && std::io::stdout().is_terminal())
        .then(|| LineEditor { history: history_path(&cwd) });
    let setting = Setting {
        terminals,
        server,
        agent_log,
        agent_log_kind: options.agent_log.clone(),
        editor,
        launcher,
    };
    let mut chat = Chat::new(ui, started, signals, setting);
    let status = chat.run(&options, &cwd, session_file.as_deref()).await;
    chat.shutdown(status).await
}

/// Opens where the agent's stderr goes, and the file's path if it goes to one.
fn agent_stderr(log: &AgentLog) -> Result<(Stdio, Option<PathBuf>), String> {
    match log {
        AgentLog::Inherit => Ok((Stdio::inherit(), None)),
        AgentLog::File(path) => OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map(|file| (Stdio::from(file), Some(path.clone())))
            .map_err(|error| format!("cannot open the agent log {}: {error}", path.display())),
        AgentLog::Temporary => {
            let file = tempfile::Builder::new()
                .prefix("termsprawl-acp-agent-")
                .suffix(".log")
                .tempfile()
                .map_err(|error| format!("cannot create the agent log: {error}"))?;
            let (file, path) =
                file.keep().map_err(|error| format!("cannot keep the agent log: {error}"))?;
            Ok((Stdio::from(file), Some(path)))
        }
    }
}
