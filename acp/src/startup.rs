//! Start-up (`spec/acp.md` §2.1, §2.2): the options checked against the machine (cwd, trace file,
//! agent log), the terminals prepared, the agent spawned, the connection's reader and writer
//! started, and the chat run to its exit status and shut down.

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::BufReader;
use tokio::sync::mpsc;

use crate::agent::Agent;
use crate::chat::{Chat, Setting};
use crate::client::{Client, Config, Event};
use crate::connection::{self, Connection, ReadEnd};
use crate::fs::{Roots, normalize};
use crate::input::{LineEditor, Signals, history_path};
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

/// What starts the agent, again for `/restart` (`spec/acp.md` §2.22).
#[derive(Debug)]
pub(crate) struct Launcher {
    argv: Vec<OsString>,
    cwd: PathBuf,
    log: AgentLog,
    log_path: Option<PathBuf>,
    trace: Option<Arc<Trace>>,
    config: Config,
}

/// A started agent and the connection to it.
#[derive(Debug)]
pub(crate) struct Started {
    pub(crate) agent: Agent,
    pub(crate) connection: Connection,
    pub(crate) client: Client,
    pub(crate) events: mpsc::UnboundedReceiver<Event>,
}

impl Launcher {
    /// Starts the agent the first time; a failure is a usage error (exit 2), said on `ui`, and the
    /// temporary log is removed. The temporary log is named once it started.
    fn first(&self, stderr: Stdio, ui: &mut Ui) -> Option<Started> {
        let temporary = self.log_path.as_ref().filter(|_| self.log == AgentLog::Temporary);
        match self.spawn(stderr) {
            Ok(started) => {
                if let Some(path) = temporary {
                    ui.error(&format!("the agent's stderr goes to {}", path.display()));
                }
                Some(started)
            }
            Err(error) => {
                if let Some(path) = temporary {
                    let _ = std::fs::remove_file(path);
                }
                let program = self.argv.first().map(|program| program.to_string_lossy());
                ui.usage_error(&format!(
                    "cannot start the agent {}: {error}",
                    program.unwrap_or_default()
                ));
                None
            }
        }
    }

    /// Starts the agent again, its stderr appended to the same place.
    pub(crate) fn restart(&self) -> Result<Started, String> {
        let stderr = match (&self.log, &self.log_path) {
            (AgentLog::Inherit, _) | (_, None) => Stdio::inherit(),
            (_, Some(path)) => {
                OpenOptions::new().create(true).append(true).open(path).map(Stdio::from).map_err(
                    |error| format!("cannot open the agent log {}: {error}", path.display()),
                )?
            }
        };
        self.spawn(stderr).map_err(|error| {
            let program = self.argv.first().map(|program| program.to_string_lossy());
            format!("cannot start the agent {}: {error}", program.unwrap_or_default())
        })
    }

    /// Spawns the agent and starts the connection's reader and writer.
    fn spawn(&self, stderr: Stdio) -> std::io::Result<Started> {
        let log = self.log_path.as_deref().filter(|_| self.log != AgentLog::Inherit);
        let (agent, stdin, stdout) = Agent::spawn(&self.argv, &self.cwd, stderr, log)?;
        let (connection, lines) = Connection::new(self.trace.clone());
        tokio::spawn(connection::write_loop(lines, stdin));
        let (events_sender, events) = mpsc::unbounded_channel();
        let client = Client::new(connection.clone(), self.config.clone(), events_sender.clone());
        // An agent that exits while something it started holds its stdout open: the reader sees
        // no end, its exit tells (after what it wrote last was read).
        let exited = agent.exited();
        let watched = connection.clone();
        let told = events_sender.clone();
        tokio::spawn(async move {
            exited.await;
            tokio::time::sleep(EXIT_DRAIN).await;
            if !watched.is_closed() {
                let _ = told.send(Event::Disconnected(EXITED.to_owned()));
                watched.fail_pending();
            }
        });
        spawn_reader(stdout, connection.clone(), client.clone(), events_sender);
        Ok(Started { agent, connection, client, events })
    }
}

/// The reader's reason when the agent's output simply ended.
pub(crate) const CLOSED_OUTPUT: &str = "the agent closed its output";
/// The reason when the agent exited and its output stayed open.
const EXITED: &str = "the agent exited";
/// How long the output of an agent that exited is still read before it counts as gone.
const EXIT_DRAIN: Duration = Duration::from_millis(300);

/// Reads the agent's stdout until it ends, then reports why and fails what is still pending.
fn spawn_reader(
    stdout: tokio::process::ChildStdout,
    connection: Connection,
    client: Client,
    events: mpsc::UnboundedSender<Event>,
) {
    tokio::spawn(async move {
        let mut dispatch = |inbound| client.dispatch(inbound);
        let end = connection::read_loop(BufReader::new(stdout), &connection, &mut dispatch).await;
        let reason = match end {
            ReadEnd::Eof => CLOSED_OUTPUT.to_owned(),
            ReadEnd::TooLong => "the agent sent a message longer than 16 MiB".to_owned(),
            ReadEnd::Io(error) => format!("reading from the agent failed: {error}"),
        };
        // Before failing the pending requests, so the chat loop sees why they failed.
        let _ = events.send(Event::Disconnected(reason));
        connection.fail_pending();
    });
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
