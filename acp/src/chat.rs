//! The chat: the state one front end keeps while it talks to its agent, how it runs to an exit
//! status, the report of an agent that ended (its exit status and the last lines of its stderr,
//! `spec/acp.md` §2.21) and `/restart` (§2.22).
//!
//! Its state is three parts, each seeing only its own: the `Session` the handshake set up
//! (`handshake`), the `Turn` with its renderer and the asks and forms waiting for the person
//! (`turn`, `ask_queue`, `forms`), and what stays the chat's: the person's input, the agent and
//! its connection, and the agent's stderr log (`stderr_log`). Its jobs live in the submodules:
//! `handshake` (`initialize`, `session/new` with the MCP bridge, authentication), `turn` (the
//! prompt loop, Ctrl-C and cancellation), `commands` and `sessions` (the front end's own slash
//! commands and the agent's sessions).

mod ask_queue;
mod commands;
mod forms;
mod handshake;
mod sessions;
mod stderr_log;
mod turn;

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use termsprawl_transport::long_wait::WaitProgress;
use tokio::sync::mpsc;

use crate::agent::{self, Agent};
use crate::client::{Client, Event};
use crate::connection::{Connection, RpcError};
use crate::input::{Input, InputReader, LineEditor, Signals};
use crate::launch::{self, Launcher, Started};
use crate::messages::SessionUpdate;
use crate::options::{AgentLog, Options};
use crate::render::Piece;
use crate::style::{Span, Style};
use crate::terminal::{Backend, ToolServer};
use crate::ui::Ui;
use handshake::Session;
use stderr_log::StderrLog;
use termsprawl_protocol::ExitStatus;
use turn::{CANCEL_TIMEOUT, Turn};

/// How long the report of an agent whose output ended waits for its exit status.
const GONE_EXIT_WAIT: Duration = Duration::from_secs(2);

/// How a turn ended.
#[derive(Debug)]
enum TurnEnd {
    /// The agent answered with this stop reason.
    Stopped(String),
    /// The prompt request failed with this error.
    Failed(RpcError),
}

/// Why the front end must stop at once.
#[derive(Debug)]
enum Fatal {
    /// The agent closed or broke the connection.
    Disconnected(String),
    /// The agent did not answer the prompt in time after a cancel.
    IgnoredCancel,
    /// The person stopped waiting for a cancelled turn (a second Ctrl-C, or `/quit`).
    Forced,
}

#[expect(
    clippy::struct_excessive_bools,
    reason = "independent facts the chat loop consults: input ended, input is a terminal, the person left, the agent left"
)]
pub(crate) struct Chat {
    ui: Ui,
    /// The agent process, and what starts it again (`/restart`).
    agent: Agent,
    launcher: Launcher,
    connection: Connection,
    client: Client,
    terminals: Arc<Backend>,
    events: mpsc::UnboundedReceiver<Event>,
    input: InputReader,
    /// Input that arrived during a turn and waits for it to end.
    queued: VecDeque<Input>,
    input_closed: bool,
    stdin_tty: bool,
    signals: Signals,
    /// The person asked to leave (end of input on a terminal, SIGTERM, SIGHUP) during a turn.
    quit_requested: bool,
    /// The agent closed or broke the connection (in an interactive chat, until `/restart`).
    disconnected: bool,
    /// What the chat started with, again for `/restart`.
    start: Option<(Options, Option<PathBuf>)>,
    /// The agent is being started again: a session it can neither resume nor load is replaced
    /// by a new one.
    restarting: bool,
    /// The agent's stderr log, and what the person was told of it.
    log: StderrLog,
    /// The session the handshake set up with the agent.
    session: Session,
    /// The turn: its renderer and the asks waiting for the person.
    turn: Turn,
}

/// What the start hands the chat besides the connection.
#[derive(Debug)]
pub(crate) struct Setting {
    pub(crate) terminals: Arc<Backend>,
    pub(crate) server: ToolServer,
    pub(crate) agent_log: Option<PathBuf>,
    pub(crate) agent_log_kind: AgentLog,
    /// The prompt's line editor, when the chat is interactive on a terminal.
    pub(crate) editor: Option<LineEditor>,
    /// What starts the agent again.
    pub(crate) launcher: Launcher,
}

/// A private directory where the injected bridge, started by the agent, leaves a file (the
/// `TERMSPRAWL_ACP_BRIDGE_MARK` variable of its MCP server entry names it).
#[derive(Debug)]
struct BridgeMark {
    _directory: tempfile::TempDir,
    path: PathBuf,
    checked: bool,
}

impl Chat {
    /// A chat on a started connection; the person's input is read from now on.
    pub(crate) fn new(mut ui: Ui, started: Started, signals: Signals, setting: Setting) -> Chat {
        let Started { agent, connection, client, events } = started;
        let Setting { terminals, server, agent_log, agent_log_kind, editor, launcher } = setting;
        let (input, printer) = InputReader::spawn(editor);
        if let Some(printer) = printer {
            ui.attach_printer(printer);
        }
        Chat {
            ui,
            agent,
            launcher,
            connection,
            client,
            terminals,
            events,
            input,
            queued: VecDeque::new(),
            input_closed: false,
            stdin_tty: std::io::stdin().is_terminal(),
            signals,
            quit_requested: false,
            disconnected: false,
            start: None,
            restarting: false,
            log: StderrLog::new(agent_log, &agent_log_kind),
            session: Session::new(server),
            turn: Turn::default(),
        }
    }

    pub(crate) async fn run(
        &mut self,
        options: &Options,
        cwd: &Path,
        session_file: Option<&Path>,
    ) -> ExitStatus {
        self.session.offers.project = Some(cwd.to_path_buf());
        self.start = Some((options.clone(), session_file.map(Path::to_path_buf)));
        if let Err(message) = self.handshake(options, cwd, session_file).await {
            self.ui.error(&message);
            self.log_hint();
            return ExitStatus::FAILED;
        }
        if options.list_sessions {
            return self.print_sessions().await;
        }
        if let Err(message) = self.apply_choices(options.mode.as_deref(), &options.config).await {
            self.ui.error(&message);
            return ExitStatus::USAGE;
        }
        let status = if let Some(prompt) = &options.prompt {
            self.one_shot(prompt).await
        } else {
            let status = self.interactive(cwd).await;
            // The front end may end while the editor shows its prompt.
            self.input.restore_terminal();
            self.ui.set_editing(false);
            status
        };
        match status {
            Ok(status) => status,
            Err(Fatal::Disconnected(reason)) => {
                self.disconnected = true;
                let report = self.agent_gone(&reason, "").await;
                self.ui.error(&report);
                self.log_hint();
                ExitStatus::FAILED
            }
            Err(Fatal::IgnoredCancel) => {
                self.ui.error(&format!(
                    "the agent did not answer within {} s of the cancel; stopping it",
                    CANCEL_TIMEOUT.as_secs()
                ));
                self.log_hint();
                ExitStatus::FAILED
            }
            Err(Fatal::Forced) => {
                self.ui.error("stopped waiting for the cancelled turn; stopping the agent");
                ExitStatus::FAILED
            }
        }
    }

    /// After a failure: where the agent's stderr went (`StderrLog::hint`).
    fn log_hint(&mut self) {
        self.log.hint(&mut self.ui);
    }

    /// The report of an agent whose output ended (`spec/acp.md` §2.21): how it exited (waiting
    /// briefly for it), `when` (` before answering initialize`), and the last lines it wrote to
    /// its stderr log, which the report then names. `reason` is the reader's, said when the
    /// output did not simply end.
    pub(super) async fn agent_gone(&mut self, reason: &str, when: &str) -> String {
        let status = match self.agent.try_status() {
            Some(status) => Some(status),
            None => self.agent.exited_within(GONE_EXIT_WAIT).await,
        };
        let mut report = match status {
            Some(status) => {
                format!("the agent exited with {}{when}", agent::describe(Some(status)))
            }
            None if reason == launch::CLOSED_OUTPUT => {
                format!("the agent closed its output{when} (it still runs; stopping it)")
            }
            None => format!("{reason}{when}; stopping the agent"),
        };
        self.add_stderr_tail(&mut report);
        report
    }

    /// Adds the last lines of the agent's stderr to a report (naming its log), or that it wrote
    /// nothing there; nothing when its stderr is ours (the lines are above).
    pub(super) fn add_stderr_tail(&mut self, report: &mut String) {
        let Some(path) = self.agent.log_path().map(Path::to_path_buf) else { return };
        let tail = self.agent.stderr_tail();
        if tail.is_empty() {
            report.push_str("; it wrote nothing on stderr");
            self.log.named_in_report(false);
            return;
        }
        let _ = write!(report, "; the last lines of its stderr ({}):", path.display());
        for line in tail {
            report.push_str("\n    ");
            report.push_str(&line);
        }
        self.log.named_in_report(true);
    }

    fn event(&mut self, event: Event, cancelled: bool) -> Result<(), Fatal> {
        if !matches!(event, Event::Update(_)) {
            self.flush_markdown();
        }
        match event {
            Event::Update(update) => {
                for piece in self.render_update(&update) {
                    self.piece(piece);
                }
            }
            Event::Ask(ask) => {
                let refused = self.unanswerable(cancelled);
                self.turn.queue_ask(&mut self.ui, ask, refused);
            }
            Event::Elicit(elicit) => {
                let refused = self.unanswerable(cancelled);
                self.turn.queue_form(&mut self.ui, elicit, refused);
            }
            Event::Line(line) => self.ui.line(&line),
            Event::Decided(line, tool_call) => {
                self.ui.line(&line);
                for piece in self.turn.renderer.ask_changes(&tool_call) {
                    self.piece(piece);
                }
            }
            Event::Wrote(written) => {
                let what = if written.created { "created" } else { "wrote" };
                self.ui.line(&format!(
                    "[file] {what} {} ({} bytes)",
                    written.path.display(),
                    written.bytes
                ));
                if let Some((before, after)) = &written.change {
                    let path = written.path.to_string_lossy();
                    for piece in self.turn.renderer.written(&path, before.as_deref(), after) {
                        self.piece(piece);
                    }
                }
            }
            Event::Notice(notice) => self.ui.error(&notice),
            Event::Disconnected(reason) => return Err(Fatal::Disconnected(reason)),
            Event::Waiting(terminal_id, progress) => self.waiting(&terminal_id, &progress),
        }
        Ok(())
    }

    /// Why no one can answer a permission ask or an elicitation now (`spec/acp.md` §2.8, §2.19),
    /// or `None` when the person can.
    fn unanswerable(&self, cancelled: bool) -> Option<&'static str> {
        if cancelled {
            Some("the turn is cancelled")
        } else if !self.stdin_tty {
            Some("stdin is not a terminal")
        } else if self.input_closed {
            Some("the input has ended")
        } else {
            None
        }
    }

    /// A wait for a terminal's exit goes on (`spec/acp.md` §2.23): the tool call that shows the
    /// terminal, else the terminal, gets the time waited and the last line of output, on its own
    /// line rewritten in place; nothing while an ask waits for an answer.
    fn waiting(&mut self, terminal_id: &str, progress: &WaitProgress) {
        if !self.turn.asks.is_empty() {
            return;
        }
        let mut state = format!("waiting {} s", progress.waited.as_secs());
        if let Some(last) = &progress.last_line {
            let _ = write!(state, ", last: {last:?}");
        }
        let (id, mut row, gap) = match self.turn.renderer.terminal_card(terminal_id) {
            Some((id, row)) => (id, row, " · "),
            None => (
                format!("terminal {terminal_id}"),
                vec![Span::new(Style::ToolRunning, format!("[terminal] {terminal_id}"))],
                " ",
            ),
        };
        row.push(Span::new(Style::Detail, format!("{gap}{state}")));
        self.ui.progress_line(&id, row);
    }

    /// What an update shows: the session follows its mode, options and commands, the turn
    /// renders the rest.
    fn render_update(&mut self, update: &SessionUpdate) -> Vec<Piece> {
        match self.session.follow(update) {
            Some(pieces) => pieces,
            None => self.turn.render(update, &self.terminals),
        }
    }

    /// Writes the line streamed text left open.
    fn flush_markdown(&mut self) {
        self.ui.flush_text();
    }

    /// At the end of a turn: what every voice left open, and open code blocks closed.
    fn finish_markdown(&mut self) {
        self.ui.finish_text();
    }

    pub(super) fn piece(&mut self, piece: Piece) {
        show_piece(&mut self.ui, piece);
    }

    /// The agent of an interactive chat is gone (`spec/acp.md` §2.22): how it ended, with the
    /// last lines of its stderr, what it left in its process group ended, and the offer to start
    /// it again.
    pub(super) async fn agent_crashed(&mut self, reason: &str) {
        self.disconnected = true;
        self.turn.asks.clear();
        self.turn.renderer.end_turn();
        self.flush_markdown();
        let report = self.agent_gone(reason, "").await;
        self.ui.error(&report);
        self.log_hint();
        self.agent.end_group().await;
        let session = if self.session.open && !self.session.id.is_empty() {
            format!(" and continues session {}", self.session.id)
        } else {
            String::new()
        };
        self.ui.line(&format!("[agent] /restart starts it again{session}; /quit ends"));
    }

    /// `/restart` (`spec/acp.md` §2.22): the agent (stopped first when it still runs, with what
    /// it left in its group) started again with the same command line, its terminals released,
    /// and the current session continued (`session/resume` or `session/load`, as `--resume`
    /// does), or a new one when there is none or the agent can continue none.
    pub(super) async fn restart(&mut self, cwd: &Path) -> Result<(), String> {
        let Some((mut options, session_file)) = self.start.clone() else {
            return Err("nothing to restart".to_owned());
        };
        self.turn.asks.clear();
        self.stop_agent().await;
        self.terminals.shutdown().await;
        let started = self.launcher.restart()?;
        let Started { agent, connection, client, events } = started;
        self.agent = agent;
        self.connection = connection;
        self.client = client;
        self.events = events;
        self.disconnected = false;
        self.session.bridge = None;
        options.resume =
            (self.session.open && !self.session.id.is_empty()).then(|| self.session.id.clone());
        options.list_sessions = false;
        self.session.open = false;
        self.restarting = true;
        let result = self.handshake(&options, cwd, session_file.as_deref()).await;
        self.restarting = false;
        if result.is_err() {
            self.disconnected = true;
        }
        result
    }

    /// Shutdown (`spec/acp.md` §2.11): asks cancelled, terminals released, the agent's stdin
    /// closed, then SIGTERM and SIGKILL.
    pub(crate) async fn shutdown(&mut self, status: ExitStatus) -> ExitStatus {
        self.turn.asks.clear();
        self.turn.forms.clear();
        self.close_session().await;
        self.terminals.shutdown().await;
        self.stop_agent().await;
        self.log.tidy(&mut self.ui);
        status
    }

    /// The agent's stdin closed, then the agent stopped (SIGTERM, then SIGKILL), or, when it has
    /// exited or crashed, what it left in its group ended all the same; the requests still waiting
    /// for its answers fail.
    async fn stop_agent(&mut self) {
        self.connection.close_output();
        if self.agent.try_status().is_some() {
            self.agent.end_group().await;
        } else {
            self.agent.stop().await;
        }
        self.connection.fail_pending();
    }
}

/// Writes one piece of the transcript; what streamed text left open is written first, unless the
/// piece is more of it.
pub(super) fn show_piece(ui: &mut Ui, piece: Piece) {
    if !matches!(piece, Piece::Text(..)) {
        ui.flush_text();
    }
    match piece {
        Piece::Text(voice, text) => ui.say(voice, &text),
        Piece::Fresh(voice, text) => {
            ui.finish_line();
            ui.say(voice, &text);
        }
        Piece::DimLine(line) => ui.styled_line(Style::Detail, &line),
        Piece::Line(line) => ui.line(&line),
        Piece::Styled(row) => ui.row(&row),
        Piece::Tool(id, row) => ui.tool_line(&id, &row),
        Piece::Diff(lines) => ui.diff(&lines),
    }
}
