//! The agent started, and started again for `/restart` (`spec/acp.md` §2.1, §2.22): its process,
//! the connection's reader and writer, and the client that answers it. Below both `startup`
//! (which starts it the first time) and `chat` (which starts it again).

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::BufReader;
use tokio::sync::mpsc;

use crate::agent::Agent;
use crate::client::{Client, Config, Event};
use crate::connection::{self, Connection, ReadEnd};
use crate::options::AgentLog;
use crate::trace::Trace;
use crate::ui::Ui;

/// What starts the agent, again for `/restart` (`spec/acp.md` §2.22).
#[derive(Debug)]
pub(crate) struct Launcher {
    pub(crate) argv: Vec<OsString>,
    pub(crate) cwd: PathBuf,
    pub(crate) log: AgentLog,
    pub(crate) log_path: Option<PathBuf>,
    pub(crate) trace: Option<Arc<Trace>>,
    pub(crate) config: Config,
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
    pub(crate) fn first(&self, stderr: Stdio, ui: &mut Ui) -> Option<Started> {
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
