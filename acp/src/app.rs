//! The front end's life: start the agent, the handshake (`initialize`, `session/new` with the MCP
//! bridge, authentication), the turn loop with Ctrl-C and permission asks, and shutdown
//! (`acp.md` §2.3 to §2.7 and §2.11).

use std::collections::VecDeque;
use std::fs::OpenOptions;
use std::io::{BufRead, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::BufReader;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until, timeout};

use crate::agent::{self, Agent};
use crate::client::{Client, Config, Event};
use crate::exit::ExitStatus;
use crate::fs::{Roots, normalize};
use crate::options::{AgentLog, Options};
use crate::permission::{self, Ask};
use crate::render::{Piece, Renderer, stop_line};
use crate::schema::{self, InitializeResult, NewSessionResult, PromptResult};
use crate::terminal::{self, Backend};
use crate::trace::Trace;
use crate::ui::Ui;
use crate::wire::{self, Connection, ReadEnd, RpcError, code};

/// The protocol version we speak.
const PROTOCOL_VERSION: u64 = 1;
/// How long `initialize` may take.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long `session/new` may take (the agent connects its MCP servers meanwhile).
const NEW_SESSION_TIMEOUT: Duration = Duration::from_mins(2);
/// How long the agent has to answer the prompt after a cancel.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long shutdown waits for a cancelled turn's answer.
const SHUTDOWN_CANCEL_WAIT: Duration = Duration::from_secs(5);
/// The window for the second Ctrl-C that ends an idle session.
const DOUBLE_INTERRUPT: Duration = Duration::from_secs(2);

/// A line of the person's input, or its end.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Input {
    Line(String),
    Eof,
}

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
}

/// Runs the front end to its exit status.
pub(crate) async fn main(
    options: Options,
    session_file: Option<PathBuf>,
    mut ui: Ui,
) -> ExitStatus {
    let current_dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let cwd = normalize(&current_dir.join(options.cwd.clone().unwrap_or_default()));
    if !cwd.is_dir() {
        ui.usage_error(&format!("--cwd is not a directory: {}", cwd.display()));
        return ExitStatus::Usage;
    }
    let roots = match Roots::new(&cwd) {
        Ok(roots) => roots,
        Err(error) => {
            ui.usage_error(&format!("cannot use {} as the root: {error}", cwd.display()));
            return ExitStatus::Usage;
        }
    };
    let session_file = session_file.map(|file| normalize(&current_dir.join(file)));
    let trace = match &options.trace {
        Some(path) => match Trace::open(path) {
            Ok(trace) => Some(Arc::new(trace)),
            Err(error) => {
                ui.usage_error(&format!("cannot open the trace file {}: {error}", path.display()));
                return ExitStatus::Usage;
            }
        },
        None => None,
    };
    let (agent_stderr, agent_log) = match agent_stderr(&options.agent_log) {
        Ok(opened) => opened,
        Err(error) => {
            ui.usage_error(&error);
            return ExitStatus::Usage;
        }
    };
    let signals = match Signals::new() {
        Ok(signals) => signals,
        Err(error) => {
            ui.error(&format!("cannot listen for signals: {error}"));
            return ExitStatus::Failure;
        }
    };
    // `--terminals` chooses the backend before the agent starts (acp.md §2.10).
    let terminals = match terminal::choose(options.terminals, session_file.as_deref(), &cwd).await {
        Ok(chosen) => {
            if let Some(notice) = &chosen.notice {
                ui.error(notice);
            }
            Arc::new(chosen.backend)
        }
        Err(error) => {
            ui.error(&error.to_string());
            return error.exit_status();
        }
    };
    let (mut agent, stdin, stdout) = match Agent::spawn(&options.agent, &cwd, agent_stderr) {
        Ok(started) => started,
        Err(error) => {
            if let Some(path) = agent_log {
                let _ = std::fs::remove_file(path);
            }
            ui.usage_error(&format!(
                "cannot start the agent {}: {error}",
                options.agent[0].to_string_lossy()
            ));
            return ExitStatus::Usage;
        }
    };
    if let Some(path) = agent_log {
        ui.error(&format!("the agent's stderr goes to {}", path.display()));
    }

    let (connection, lines) = Connection::new(trace);
    tokio::spawn(wire::write_loop(lines, stdin));
    let (events_sender, events) = mpsc::unbounded_channel();
    let config = Config {
        roots,
        terminals: Arc::clone(&terminals),
        permission: options.permission,
        permission_timeout: options.permission_timeout,
    };
    let client = Client::new(connection.clone(), config, events_sender.clone());
    spawn_reader(stdout, connection.clone(), client.clone(), events_sender);

    let stdin_tty = std::io::stdin().is_terminal();
    let mut app = App {
        ui,
        connection,
        client,
        terminals,
        events,
        input: spawn_input_reader(),
        queued: VecDeque::new(),
        input_closed: false,
        stdin_tty,
        asks: VecDeque::new(),
        renderer: Renderer::default(),
        signals,
        session_id: String::new(),
        quit_requested: false,
        disconnected: false,
    };
    let status = app.run(&options, &cwd, session_file.as_deref()).await;
    app.shutdown(&mut agent, status).await
}

/// Reads the agent's stdout until it ends, then reports why and fails what is still pending.
fn spawn_reader(
    stdout: tokio::process::ChildStdout,
    connection: Connection,
    client: Client,
    events: mpsc::UnboundedSender<Event>,
) {
    tokio::spawn(async move {
        let mut dispatch = |inbound| client.dispatch(inbound);
        let end = wire::read_loop(BufReader::new(stdout), &connection, &mut dispatch).await;
        let reason = match end {
            ReadEnd::Eof => "the agent closed its output".to_owned(),
            ReadEnd::TooLong => "the agent sent a message longer than 16 MiB".to_owned(),
            ReadEnd::Io(error) => format!("reading from the agent failed: {error}"),
        };
        // Before failing the pending requests, so the chat loop sees why they failed.
        let _ = events.send(Event::Disconnected(reason));
        connection.fail_pending();
    });
}

/// Opens where the agent's stderr goes; the path of a new temporary file to announce.
fn agent_stderr(log: &AgentLog) -> Result<(Stdio, Option<PathBuf>), String> {
    match log {
        AgentLog::Inherit => Ok((Stdio::inherit(), None)),
        AgentLog::File(path) => OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map(|file| (Stdio::from(file), None))
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

/// Reads the person's input on a thread of its own (a blocking read must never hold the runtime).
fn spawn_input_reader() -> mpsc::UnboundedReceiver<Input> {
    let (sender, receiver) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut stdin = stdin.lock();
        let mut buffer = Vec::new();
        loop {
            buffer.clear();
            match stdin.read_until(b'\n', &mut buffer) {
                Ok(0) | Err(_) => {
                    let _ = sender.send(Input::Eof);
                    return;
                }
                Ok(_) => {
                    let mut line = String::from_utf8_lossy(&buffer).into_owned();
                    while line.ends_with('\n') || line.ends_with('\r') {
                        line.pop();
                    }
                    if sender.send(Input::Line(line)).is_err() {
                        return;
                    }
                }
            }
        }
    });
    receiver
}

/// The signals that reach the front end: Ctrl-C, and the ones that end it.
struct Signals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl Signals {
    fn new() -> std::io::Result<Signals> {
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }
}

/// Waits for SIGTERM or SIGHUP.
async fn termination(terminate: &mut Signal, hangup: &mut Signal) {
    tokio::select! {
        _ = terminate.recv() => {}
        _ = hangup.recv() => {}
    }
}

/// Waits until the first queued ask is answered or dropped by its task (timeout or withdrawal).
async fn first_ask_closed(asks: &mut VecDeque<Ask>) {
    match asks.front_mut() {
        Some(ask) => ask.reply.closed().await,
        None => std::future::pending().await,
    }
}

#[expect(
    clippy::struct_excessive_bools,
    reason = "independent facts the chat loop consults: input ended, input is a terminal, the person left, the agent left"
)]
struct App {
    ui: Ui,
    connection: Connection,
    client: Client,
    terminals: Arc<Backend>,
    events: mpsc::UnboundedReceiver<Event>,
    input: mpsc::UnboundedReceiver<Input>,
    /// Input that arrived during a turn and waits for it to end.
    queued: VecDeque<Input>,
    input_closed: bool,
    stdin_tty: bool,
    /// Permission asks shown one at a time, the first one on screen.
    asks: VecDeque<Ask>,
    renderer: Renderer,
    signals: Signals,
    session_id: String,
    /// The person asked to leave (end of input on a terminal, SIGTERM, SIGHUP) during a turn.
    quit_requested: bool,
    /// The agent closed or broke the connection.
    disconnected: bool,
}

impl App {
    async fn run(
        &mut self,
        options: &Options,
        cwd: &Path,
        session_file: Option<&Path>,
    ) -> ExitStatus {
        let status = match self.handshake(options, cwd, session_file).await {
            Ok(()) => match &options.prompt {
                Some(prompt) => self.one_shot(prompt).await,
                None => self.interactive().await,
            },
            Err(message) => {
                self.ui.error(&message);
                return ExitStatus::Failure;
            }
        };
        match status {
            Ok(status) => status,
            Err(Fatal::Disconnected(reason)) => {
                self.disconnected = true;
                self.ui.error(&format!("{reason}; stopping"));
                ExitStatus::Failure
            }
            Err(Fatal::IgnoredCancel) => {
                self.ui.error(&format!(
                    "the agent did not answer within {} s of the cancel; stopping it",
                    CANCEL_TIMEOUT.as_secs()
                ));
                ExitStatus::Failure
            }
        }
    }

    async fn handshake(
        &mut self,
        options: &Options,
        cwd: &Path,
        session_file: Option<&Path>,
    ) -> Result<(), String> {
        let initialize = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "clientCapabilities": {
                "fs": {"readTextFile": true, "writeTextFile": true},
                "terminal": true,
            },
            "clientInfo": {"name": "termsprawl", "version": env!("CARGO_PKG_VERSION")},
        });
        let answer = self
            .request("initialize", initialize, INITIALIZE_TIMEOUT)
            .await
            .map_err(|error| format!("initialize failed: {error}"))?;
        let initialized: InitializeResult = schema::decode(Some(&answer))
            .map_err(|error| format!("the agent's initialize answer does not decode: {error}"))?;
        if initialized.protocol_version.as_u64() != Some(PROTOCOL_VERSION) {
            return Err(format!(
                "the agent speaks ACP protocol version {}, this client only version 1",
                initialized.protocol_version
            ));
        }
        let mcp_servers = self.mcp_servers(options, session_file);
        let new_session = json!({
            "cwd": cwd.to_string_lossy(),
            "mcpServers": mcp_servers,
        });
        let answer =
            match self.request("session/new", new_session.clone(), NEW_SESSION_TIMEOUT).await {
                Err(error) if error.code == code::AUTH_REQUIRED => {
                    self.authenticate(&initialized, &error).await?;
                    self.request("session/new", new_session, NEW_SESSION_TIMEOUT).await.map_err(
                        |error| format!("session/new failed after authenticating: {error}"),
                    )?
                }
                Err(error) => return Err(format!("session/new failed: {error}")),
                Ok(answer) => answer,
            };
        let session: NewSessionResult = schema::decode(Some(&answer))
            .map_err(|error| format!("the agent's session/new answer does not decode: {error}"))?;
        self.session_id.clone_from(&session.session_id);
        self.client.set_session(&session.session_id);
        let agent = initialized.agent_info.as_ref();
        let name = agent
            .and_then(|info| info.title.clone().or_else(|| info.name.clone()))
            .unwrap_or_else(|| "the agent".to_owned());
        let version = agent.and_then(|info| info.version.clone()).unwrap_or_default();
        self.ui.error(&format!(
            "connected to {name} {version} (session {}); /quit or Ctrl-D ends it",
            session.session_id
        ));
        Ok(())
    }

    fn mcp_servers(&mut self, options: &Options, session_file: Option<&Path>) -> Value {
        if !options.mcp {
            return json!([]);
        }
        let Some(session_file) = session_file else {
            self.ui.error(
                "no session file (--session or TERMSPRAWL_SESSION_FILE): the agent gets no termsprawl tools",
            );
            return json!([]);
        };
        let program = match std::env::current_exe() {
            Ok(program) => program,
            Err(error) => {
                self.ui.error(&format!(
                    "cannot find the path of termsprawlctl ({error}): the agent gets no termsprawl tools"
                ));
                return json!([]);
            }
        };
        json!([mcp_entry(&program, session_file)])
    }

    /// Lets the person pick one of the agent's authentication methods and calls `authenticate`.
    async fn authenticate(
        &mut self,
        initialized: &InitializeResult,
        error: &RpcError,
    ) -> Result<(), String> {
        let methods: Vec<_> = initialized
            .auth_methods
            .iter()
            .flatten()
            .filter(|method| method.kind.as_deref().is_none_or(|kind| kind == "agent"))
            .collect();
        if !self.stdin_tty {
            return Err(format!(
                "the agent requires authentication ({}), and there is no terminal to choose a method",
                error.message
            ));
        }
        if methods.is_empty() {
            return Err(format!(
                "the agent requires authentication ({}) but offers no method this client supports",
                error.message
            ));
        }
        self.ui.line("[auth] the agent requires authentication:");
        for (index, method) in methods.iter().enumerate() {
            let description =
                method.description.as_deref().map(|text| format!(": {text}")).unwrap_or_default();
            self.ui.line(&format!(
                "  {}. {} ({}){description}",
                index + 1,
                method.name.as_deref().unwrap_or(&method.id),
                method.id
            ));
        }
        let method = loop {
            self.ui.finish_line();
            self.ui.out(&format!("choose 1-{}: ", methods.len()));
            let input = self.next_input().await;
            if self.stdin_tty {
                self.ui.input_echoed();
            }
            let line = match input {
                Some(Input::Line(line)) => line,
                Some(Input::Eof) | None => {
                    return Err("authentication was not chosen (end of input)".to_owned());
                }
            };
            let chosen = line
                .trim()
                .parse::<usize>()
                .ok()
                .and_then(|number| methods.get(number.checked_sub(1)?));
            if let Some(method) = chosen {
                break *method;
            }
        };
        self.request("authenticate", json!({"methodId": method.id}), Duration::from_mins(10))
            .await
            .map_err(|error| format!("authentication failed: {error}"))?;
        Ok(())
    }

    /// Sends a request and waits for its answer, within a time limit.
    async fn request(
        &self,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Result<Value, RpcError> {
        match timeout(limit, self.connection.request(method, &params)).await {
            Ok(result) => result,
            Err(_) => Err(RpcError::internal(format!("no answer within {} s", limit.as_secs()))),
        }
    }

    async fn next_input(&mut self) -> Option<Input> {
        if let Some(input) = self.queued.pop_front() {
            return Some(input);
        }
        if self.input_closed {
            return Some(Input::Eof);
        }
        let input = self.input.recv().await;
        if matches!(input, Some(Input::Eof) | None) {
            self.input_closed = true;
        }
        input
    }

    async fn one_shot(&mut self, prompt: &str) -> Result<ExitStatus, Fatal> {
        Ok(match self.turn(prompt).await? {
            TurnEnd::Stopped(reason) if reason == "end_turn" => ExitStatus::Success,
            TurnEnd::Stopped(_) | TurnEnd::Failed(_) => ExitStatus::Failure,
        })
    }

    async fn interactive(&mut self) -> Result<ExitStatus, Fatal> {
        let mut last_interrupt: Option<Instant> = None;
        let mut multi_line: Option<Vec<String>> = None;
        loop {
            if self.quit_requested {
                return Ok(ExitStatus::Success);
            }
            if self.asks.is_empty() && self.stdin_tty {
                self.ui.finish_line();
                self.ui.out(if multi_line.is_some() { "... " } else { "> " });
            }
            let input = if let Some(input) = self.queued.pop_front() {
                input
            } else {
                tokio::select! {
                    input = self.input.recv() => input.unwrap_or(Input::Eof),
                    event = self.events.recv() => {
                        self.idle_event(event)?;
                        continue;
                    }
                    () = first_ask_closed(&mut self.asks) => {
                        self.ask_closed();
                        continue;
                    }
                    _ = self.signals.interrupt.recv() => {
                        let now = Instant::now();
                        if last_interrupt.is_some_and(|last| now - last <= DOUBLE_INTERRUPT) {
                            return Ok(ExitStatus::Success);
                        }
                        last_interrupt = Some(now);
                        multi_line = None;
                        self.ui.line("(press Ctrl-C again within 2 s, or type /quit, to leave)");
                        continue;
                    }
                    () = termination(&mut self.signals.terminate, &mut self.signals.hangup) => return Ok(ExitStatus::Success),
                }
            };
            if self.stdin_tty {
                self.ui.input_echoed();
            }
            let line = match input {
                Input::Eof => {
                    self.input_closed = true;
                    self.asks.clear();
                    return Ok(ExitStatus::Success);
                }
                Input::Line(line) => line,
            };
            if !self.asks.is_empty() {
                self.answer_ask(&line);
                continue;
            }
            if let Some(lines) = multi_line.as_mut() {
                if line == "\"\"\"" {
                    let prompt = lines.join("\n");
                    multi_line = None;
                    self.interactive_turn(&prompt).await?;
                } else {
                    lines.push(line);
                }
                continue;
            }
            match line.as_str() {
                "\"\"\"" => multi_line = Some(Vec::new()),
                "/quit" => return Ok(ExitStatus::Success),
                text if text.trim().is_empty() => {}
                text => {
                    let text = text.to_owned();
                    self.interactive_turn(&text).await?;
                }
            }
        }
    }

    async fn interactive_turn(&mut self, prompt: &str) -> Result<(), Fatal> {
        if let TurnEnd::Failed(error) = self.turn(prompt).await? {
            self.ui.error(&format!("the prompt failed: {error}"));
        }
        Ok(())
    }

    /// Handles an event while no turn runs: updates belong to no turn and are not shown.
    fn idle_event(&mut self, event: Option<Event>) -> Result<(), Fatal> {
        match event {
            None => Err(Fatal::Disconnected("the connection ended".to_owned())),
            Some(Event::Update(_)) => Ok(()),
            Some(event) => self.event(event, false),
        }
    }

    /// Runs one prompt turn to its stop reason.
    async fn turn(&mut self, prompt: &str) -> Result<TurnEnd, Fatal> {
        let params = json!({
            "sessionId": self.session_id,
            "prompt": [{"type": "text", "text": prompt}],
        });
        let mut response = Box::pin(self.connection.request("session/prompt", &params));
        let mut cancelled = false;
        let mut deadline: Option<Instant> = None;
        let mut quit_deadline: Option<Instant> = None;
        let far = Instant::now() + Duration::from_hours(24 * 365);
        let result = loop {
            tokio::select! {
                biased;
                event = self.events.recv() => match event {
                    Some(event) => self.event(event, cancelled)?,
                    None => return Err(Fatal::Disconnected("the connection ended".to_owned())),
                },
                result = &mut response => break result,
                () = first_ask_closed(&mut self.asks) => self.ask_closed(),
                input = self.input.recv(), if !self.input_closed => {
                    if self.stdin_tty {
                        self.ui.input_echoed();
                    }
                    match input.unwrap_or(Input::Eof) {
                        Input::Line(line) if !self.asks.is_empty() => self.answer_ask(&line),
                        Input::Line(line) => self.queued.push_back(Input::Line(line)),
                        Input::Eof => {
                            self.input_closed = true;
                            self.asks.clear();
                            if self.stdin_tty && self.queued.is_empty() {
                                // The person left.
                                self.quit_turn(&mut quit_deadline, &mut cancelled, &mut deadline);
                            } else {
                                self.queued.push_back(Input::Eof);
                            }
                        }
                    }
                }
                _ = self.signals.interrupt.recv() => {
                    if cancelled {
                        self.ui.line("(cancelling; waiting for the agent to end the turn)");
                    } else {
                        self.cancel_turn(&mut cancelled, &mut deadline);
                    }
                }
                () = termination(&mut self.signals.terminate, &mut self.signals.hangup) => {
                    self.quit_turn(&mut quit_deadline, &mut cancelled, &mut deadline);
                }
                () = sleep_until(quit_deadline.unwrap_or(far)), if quit_deadline.is_some() => {
                    self.renderer.end_turn();
                    return Ok(TurnEnd::Stopped("cancelled".to_owned()));
                }
                () = sleep_until(deadline.unwrap_or(far)), if deadline.is_some() => {
                    return Err(Fatal::IgnoredCancel);
                }
            }
        };
        // Updates the reader queued before the answer belong to this turn: show them first.
        while let Ok(event) = self.events.try_recv() {
            self.event(event, cancelled)?;
        }
        self.asks.clear();
        if cancelled {
            for piece in self.renderer.cancel_unfinished() {
                self.piece(piece);
            }
        }
        self.renderer.end_turn();
        let end = match result {
            Ok(answer) => match schema::decode::<PromptResult>(Some(&answer)) {
                Ok(answer) => TurnEnd::Stopped(answer.stop_reason),
                Err(error) => TurnEnd::Failed(RpcError::internal(format!(
                    "the prompt answer does not decode: {error}"
                ))),
            },
            Err(error) => TurnEnd::Failed(error),
        };
        match &end {
            TurnEnd::Stopped(reason) => self.ui.line(&stop_line(reason)),
            TurnEnd::Failed(error) => self.ui.line(&format!("[prompt failed: {error}]")),
        }
        Ok(end)
    }

    /// Asks the agent to cancel the turn, once: `cancelled` is set and `deadline` is when an
    /// ignored cancel becomes fatal.
    fn cancel_turn(&mut self, cancelled: &mut bool, deadline: &mut Option<Instant>) {
        if !*cancelled {
            *cancelled = true;
            *deadline = Some(Instant::now() + CANCEL_TIMEOUT);
            self.cancel();
        }
    }

    /// Quits during a turn (the person left, or a termination signal): cancels the turn and sets
    /// `quit_deadline`, the end of the brief wait for the turn to end.
    fn quit_turn(
        &mut self,
        quit_deadline: &mut Option<Instant>,
        cancelled: &mut bool,
        deadline: &mut Option<Instant>,
    ) {
        self.quit_requested = true;
        *quit_deadline = Some(Instant::now() + SHUTDOWN_CANCEL_WAIT);
        self.cancel_turn(cancelled, deadline);
    }

    /// Sends `session/cancel` and answers every pending permission ask `cancelled`.
    fn cancel(&mut self) {
        self.connection.notify("session/cancel", &json!({"sessionId": self.session_id}));
        if !self.asks.is_empty() {
            self.ui.line("[permission] cancelled with the turn");
        }
        self.asks.clear();
        self.ui.line("(cancelling the turn)");
    }

    fn event(&mut self, event: Event, cancelled: bool) -> Result<(), Fatal> {
        match event {
            Event::Update(update) => {
                let terminals = Arc::clone(&self.terminals);
                let attach = move |id: &str| terminals.location(id);
                for piece in self.renderer.update(&update, &attach) {
                    self.piece(piece);
                }
            }
            Event::Ask(ask) => self.queue_ask(ask, cancelled),
            Event::Line(line) => self.ui.line(&line),
            Event::Wrote(written) => {
                let what = if written.created { "created" } else { "wrote" };
                self.ui.line(&format!(
                    "[file] {what} {} ({} bytes)",
                    written.path.display(),
                    written.bytes
                ));
            }
            Event::Notice(notice) => self.ui.error(&notice),
            Event::Disconnected(reason) => return Err(Fatal::Disconnected(reason)),
        }
        Ok(())
    }

    fn piece(&mut self, piece: Piece) {
        match piece {
            Piece::Text(text) => self.ui.out(&text),
            Piece::Dim(text) => self.ui.out_dim(&text),
            Piece::Line(line) => self.ui.line(&line),
        }
    }

    fn queue_ask(&mut self, ask: Ask, cancelled: bool) {
        let reason = if cancelled {
            Some("the turn is cancelled")
        } else if !self.stdin_tty {
            Some("stdin is not a terminal")
        } else if self.input_closed {
            Some("the input has ended")
        } else {
            None
        };
        if let Some(reason) = reason {
            let title = ask
                .request
                .tool_call
                .title
                .clone()
                .unwrap_or_else(|| ask.request.tool_call.tool_call_id.clone());
            self.ui.line(&format!("[permission] {title}: cancelled ({reason})"));
            return;
        }
        self.asks.push_back(ask);
        if self.asks.len() == 1 {
            self.show_ask();
        }
    }

    fn show_ask(&mut self) {
        let Some(ask) = self.asks.front() else {
            return;
        };
        let lines = permission::ask_lines(&ask.request);
        let prompt = permission::choose_prompt(ask.request.options.len(), ask.timeout);
        for line in lines {
            self.ui.line(&line);
        }
        self.ui.finish_line();
        self.ui.out(&prompt);
    }

    fn answer_ask(&mut self, line: &str) {
        let Some(ask) = self.asks.front() else {
            return;
        };
        let Some(option) = permission::parse_choice(line, &ask.request.options) else {
            let prompt = permission::choose_prompt(ask.request.options.len(), ask.timeout);
            self.ui.line(&format!("answer with a number from 1 to {}", ask.request.options.len()));
            self.ui.out(&prompt);
            return;
        };
        let option = option.clone();
        let Some(ask) = self.asks.pop_front() else {
            return;
        };
        let delivered = ask.reply.send(option.option_id.clone()).is_ok();
        if delivered {
            self.ui.line(&format!("[permission] selected {:?} ({})", option.name, option.kind));
        } else {
            self.ui.line("[permission] too late: the ask was already cancelled");
        }
        self.show_ask();
    }

    fn ask_closed(&mut self) {
        if self.asks.pop_front().is_some() {
            self.ui.line("[permission] no answer in time (or withdrawn by the agent): cancelled");
        }
        self.show_ask();
    }

    /// Shutdown (`acp.md` §2.11): asks cancelled, terminals released, the agent's stdin closed, then
    /// SIGTERM and SIGKILL.
    async fn shutdown(&mut self, agent: &mut Agent, status: ExitStatus) -> ExitStatus {
        self.asks.clear();
        self.terminals.shutdown().await;
        self.connection.close_output();
        let exit = match agent.try_status() {
            Some(exit) => Some(exit),
            None => agent.stop().await,
        };
        self.connection.fail_pending();
        if self.disconnected {
            self.ui.error(&format!("the agent exited with {}", agent::describe(exit)));
        }
        status
    }
}

/// The stdio MCP server entry that hands the agent termsprawl's tools (`acp.md` §2.5).
pub(crate) fn mcp_entry(program: &Path, session_file: &Path) -> Value {
    json!({
        "name": "termsprawl",
        "command": program.to_string_lossy(),
        "args": ["--session", session_file.to_string_lossy(), "mcp"],
        "env": [],
    })
}
