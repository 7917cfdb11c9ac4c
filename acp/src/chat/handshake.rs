//! The handshake (`spec/acp.md` §2.3 to §2.5): `initialize`, `session/new` with the MCP bridge, and
//! authentication when the agent asks for it: `agent` methods through `authenticate`, `env_var`
//! methods used at once when their variables are set, `terminal` methods run in the person's
//! terminal. Every wait can be interrupted with Ctrl-C (or, on a terminal, Ctrl-D).

#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::timeout;

use super::{BridgeMark, Chat, Input};
use crate::BRIDGE_MARK_VARIABLE;
use crate::agent;
use crate::connection::{RpcError, code};
use crate::input::termination;
use crate::messages::{
    self, AuthMethod, Capabilities, InitializeResult, NewSessionResult, SessionUpdate,
};
use crate::offers::Offers;
use crate::options::{McpNarrowing, Options};
use crate::render::Piece;
use crate::terminal::ToolServer;

/// The protocol version we speak.
const PROTOCOL_VERSION: u64 = 1;
/// How long `initialize` may take.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(30);
/// When an agent that has not answered `initialize` yet is reported (`spec/acp.md` §2.21): as not
/// an ACP agent when it wrote what no agent writes, else in a line saying it is waited for.
const INITIALIZE_REPORT_AFTER: Duration = Duration::from_secs(4);
/// How long `session/new` may take (the agent connects its MCP servers meanwhile).
pub(super) const NEW_SESSION_TIMEOUT: Duration = Duration::from_mins(2);
/// How long `authenticate` (a browser login, for example) may take.
const AUTHENTICATE_TIMEOUT: Duration = Duration::from_mins(10);
/// How long a login runs before the front end says it waits for it (an `env_var` login answers
/// in milliseconds and needs no such line).
const LOGIN_NOTICE_AFTER: Duration = Duration::from_secs(1);

/// The session the handshake set up with the agent (`spec/acp.md` §2.3 to §2.5): what the agent
/// offers (its session methods, modes, options and commands, logins), the session's id, and the
/// tools handed to it. `/restart` and `/resume` set it up again; nothing else writes it.
#[derive(Debug)]
pub(super) struct Session {
    /// The session's id (empty before `session/new` answered).
    pub(super) id: String,
    /// A session was started (and is closed at the end).
    pub(super) open: bool,
    /// The session methods the agent offers.
    pub(super) capabilities: Capabilities,
    /// The session's modes, options and commands.
    pub(super) offers: Offers,
    /// The agent's `authMethods`, for a login asked for by any session request.
    pub(super) auth_methods: Vec<AuthMethod>,
    /// The agent's command line (a `terminal` login runs it with the method's arguments).
    pub(super) agent_argv: Vec<OsString>,
    /// What the start learned about the tool server.
    pub(super) server: ToolServer,
    /// The `mcpServers` handed to the agent, again for `/resume`.
    pub(super) mcp_entries: Value,
    /// Whether the agent got termsprawl's tools, and why not, for `/status`.
    pub(super) bridge_status: String,
    /// The marker the injected MCP bridge leaves when it starts (issue 16 item 7).
    pub(super) bridge: Option<BridgeMark>,
}

impl Session {
    /// No session yet, with what the start learned about the tool server.
    pub(super) fn new(server: ToolServer) -> Session {
        Session {
            id: String::new(),
            open: false,
            capabilities: Capabilities::default(),
            offers: Offers::default(),
            auth_methods: Vec::new(),
            agent_argv: Vec::new(),
            server,
            mcp_entries: json!([]),
            bridge_status: "not handed to the agent".to_owned(),
            bridge: None,
        }
    }

    /// Follows an update of what the agent offers for the session (its mode, options and
    /// commands): the lines it shows, or `None` when the update is of another kind.
    pub(super) fn follow(&mut self, update: &SessionUpdate) -> Option<Vec<Piece>> {
        let lines = match update {
            SessionUpdate::CurrentMode(id) => self.offers.mode_changed(id).into_iter().collect(),
            SessionUpdate::ConfigOptions(options) => self.offers.config_changed(options.clone()),
            SessionUpdate::Commands(commands) => {
                self.offers.commands.clone_from(commands);
                Vec::new()
            }
            _ => return None,
        };
        Some(lines.into_iter().map(Piece::Line).collect())
    }
}

/// What can be done with one `authMethods` entry.
enum Login<'a> {
    /// `agent` (or no type): `authenticate` does it.
    Agent(&'a AuthMethod),
    /// `env_var`: the agent reads variables; `missing` are those unset or empty here.
    EnvVar { method: &'a AuthMethod, missing: Vec<String> },
    /// `terminal`: the agent's argv with the entry's `args` and `env`, run in the person's terminal.
    Terminal(&'a AuthMethod),
}

impl Login<'_> {
    /// The login an entry offers; `None` for a kind this client cannot use (a `terminal` entry
    /// without a terminal, an unknown kind).
    fn of(method: &AuthMethod, terminal: bool) -> Option<Login<'_>> {
        match method.kind.as_deref() {
            None | Some("agent") => Some(Login::Agent(method)),
            Some("env_var") => {
                let missing = method
                    .vars
                    .iter()
                    .flatten()
                    .filter(|variable| variable.optional != Some(true))
                    .filter(|variable| {
                        std::env::var_os(&variable.name).is_none_or(|value| value.is_empty())
                    })
                    .map(|variable| variable.name.clone())
                    .collect();
                Some(Login::EnvVar { method, missing })
            }
            Some("terminal") if terminal => Some(Login::Terminal(method)),
            Some(_) => None,
        }
    }

    fn method(&self) -> &AuthMethod {
        match self {
            Login::Agent(method) | Login::Terminal(method) | Login::EnvVar { method, .. } => method,
        }
    }
}

/// `Name (id)` of a method.
fn label(method: &AuthMethod) -> String {
    format!("{} ({})", method.name.as_deref().unwrap_or(&method.id), method.id)
}

impl Chat {
    pub(super) async fn handshake(
        &mut self,
        options: &Options,
        cwd: &Path,
        session_file: Option<&Path>,
    ) -> Result<(), String> {
        // Boolean options, notices, compactions and elicitation are shown and answered
        // (`spec/acp.md` §2.3, §2.18, §2.19).
        let mut capabilities = json!({
            "fs": {"readTextFile": true, "writeTextFile": true},
            "terminal": true,
            "session": {"configOptions": {"boolean": {}}, "notices": {}, "compaction": {}},
            "elicitation": {"form": {}, "url": {}},
        });
        if self.stdin_tty {
            // A person is at a terminal: the agent may offer a login run there.
            capabilities["auth"] = json!({"terminal": true});
        }
        let initialize = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "clientCapabilities": capabilities,
            "clientInfo": {"name": "termsprawl", "version": env!("CARGO_PKG_VERSION")},
        });
        let answer = match self.wait_answer("initialize", initialize, INITIALIZE_TIMEOUT).await? {
            Ok(answer) => answer,
            Err(error) => {
                let mut message = format!("initialize failed: {error}");
                if let Some(stray) = self.connection.stray() {
                    let _ = write!(
                        message,
                        "; the agent wrote {stray} on its stdout: it is not an ACP agent, it seems"
                    );
                }
                return Err(message);
            }
        };
        let initialized: InitializeResult = messages::decode(Some(&answer))
            .map_err(|error| format!("the agent's initialize answer does not decode: {error}"))?;
        if initialized.protocol_version.as_u64() != Some(PROTOCOL_VERSION) {
            return Err(format!(
                "the agent speaks ACP protocol version {}, this client only version 1",
                initialized.protocol_version
            ));
        }
        self.session.capabilities = Capabilities::of(initialized.agent_capabilities.as_ref());
        self.session.auth_methods = initialized.auth_methods.clone().unwrap_or_default();
        self.session.agent_argv.clone_from(&options.agent);
        if options.list_sessions {
            return Ok(());
        }
        let mcp_servers = self.mcp_servers(options, session_file);
        let agent = initialized.agent_info.as_ref();
        let name = agent
            .and_then(|info| info.title.clone().or_else(|| info.name.clone()))
            .unwrap_or_else(|| "the agent".to_owned());
        let version = agent.and_then(|info| info.version.clone()).unwrap_or_default();
        let continuable = self.session.capabilities.resume || self.session.capabilities.load;
        if let Some(session_id) =
            options.resume.as_ref().filter(|_| continuable || !self.restarting)
        {
            self.open_session(session_id, cwd, &mcp_servers).await?;
            self.ui.error(&format!(
                "connected to {name} {version} (session {session_id}, resumed); /help lists the commands, /quit or Ctrl-D ends it"
            ));
            return Ok(());
        }
        if let Some(session_id) = &options.resume {
            self.ui.line(&format!(
                "[agent] it can neither resume nor load session {session_id}: a new session starts"
            ));
        }
        let new_session = json!({
            "cwd": cwd.to_string_lossy(),
            "mcpServers": mcp_servers,
        });
        let answer = match self
            .wait_answer("session/new", new_session.clone(), NEW_SESSION_TIMEOUT)
            .await?
        {
            Err(error) if error.code == code::AUTH_REQUIRED => {
                self.authenticate(cwd, &error).await?;
                self.wait_answer("session/new", new_session, NEW_SESSION_TIMEOUT)
                    .await?
                    .map_err(|error| format!("session/new failed after authenticating: {error}"))?
            }
            Err(error) => return Err(format!("session/new failed: {error}")),
            Ok(answer) => answer,
        };
        let session: NewSessionResult = messages::decode(Some(&answer))
            .map_err(|error| format!("the agent's session/new answer does not decode: {error}"))?;
        self.session.id.clone_from(&session.session_id);
        self.client.set_session(&session.session_id);
        self.session_started(&answer);
        self.ui.error(&format!(
            "connected to {name} {version} (session {}); /help lists the commands, /quit or Ctrl-D ends it",
            session.session_id
        ));
        Ok(())
    }

    pub(super) fn mcp_servers(&mut self, options: &Options, session_file: Option<&Path>) -> Value {
        let entries = self.mcp_entry_list(options, session_file);
        self.session.mcp_entries = entries.clone();
        entries
    }

    fn mcp_entry_list(&mut self, options: &Options, session_file: Option<&Path>) -> Value {
        if !options.mcp {
            "not handed to the agent (--no-mcp)".clone_into(&mut self.session.bridge_status);
            return json!([]);
        }
        let Some(session_file) = session_file else {
            "not handed to the agent: no session file (--session or TERMSPRAWL_SESSION_FILE)"
                .clone_into(&mut self.session.bridge_status);
            self.ui.error(
                "no session file (--session or TERMSPRAWL_SESSION_FILE): the agent gets no termsprawl tools",
            );
            return json!([]);
        };
        if let ToolServer::Unreachable(reason) = &self.session.server {
            // The bridge's `initialize` would fail, and some agents then fail `session/new`.
            self.session.bridge_status = format!(
                "not handed to the agent: the tool server was unreachable at start ({reason})"
            );
            self.ui.error(&format!(
                "the tool server is unreachable ({reason}): the agent starts without termsprawl's tools"
            ));
            return json!([]);
        }
        let program = match std::env::current_exe() {
            Ok(program) => program,
            Err(error) => {
                self.session.bridge_status = format!("not handed to the agent: {error}");
                self.ui.error(&format!(
                    "cannot find the path of termsprawlctl ({error}): the agent gets no termsprawl tools"
                ));
                return json!([]);
            }
        };
        self.session.bridge_status = format!(
            "handed to the agent as termsprawlctl --session {} mcp",
            session_file.display()
        );
        // The bridge leaves a file here when the agent starts it (checked after the first turn).
        let mark = tempfile::Builder::new().prefix("termsprawl-acp-bridge-").tempdir().ok().map(
            |directory| {
                let path = directory.path().join("started");
                BridgeMark { _directory: directory, path, checked: false }
            },
        );
        let entry = mcp_entry(
            &program,
            session_file,
            &options.mcp_narrowing,
            mark.as_ref().map(|mark| mark.path.as_path()),
        );
        self.session.bridge = mark;
        json!([entry])
    }

    /// After the first turn: one line if the agent never started the injected bridge, so that the
    /// person does not believe termsprawl's tools are there (issue 16 item 7).
    pub(super) fn check_bridge(&mut self) {
        let Some(mark) = self.session.bridge.as_mut() else {
            return;
        };
        if mark.checked {
            return;
        }
        mark.checked = true;
        if mark.path.exists() {
            return;
        }
        self.ui.error(
            "termsprawl's tools were not taken up: the agent never started the injected MCP server \
             (termsprawlctl mcp). Agents skip MCP servers they do not trust or support; Gemini CLI, \
             for example, starts none in a folder it does not trust (trust the folder, then start again)",
        );
    }

    /// Logs in when `session/new` asked for it: an `env_var` method whose variables are all set is
    /// used at once, without a menu; otherwise the person picks among every method this client can
    /// use. Without a person this fails, naming the variables that would log in without one.
    pub(super) async fn authenticate(
        &mut self,
        cwd: &Path,
        error: &RpcError,
    ) -> Result<(), String> {
        let methods = self.session.auth_methods.clone();
        let logins: Vec<Login<'_>> =
            methods.iter().filter_map(|method| Login::of(method, self.stdin_tty)).collect();
        let ready = logins.iter().find_map(|login| match login {
            Login::EnvVar { method, missing }
                if missing.is_empty()
                    && method.vars.as_ref().is_some_and(|vars| !vars.is_empty()) =>
            {
                Some(*method)
            }
            _ => None,
        });
        if let Some(method) = ready {
            self.ui
                .line(&format!("[auth] logging in with {} (its variables are set)", label(method)));
            return self.call_authenticate(method).await;
        }
        if !self.stdin_tty {
            let hints: Vec<String> = logins
                .iter()
                .filter_map(|login| match login {
                    Login::EnvVar { method, missing } => {
                        Some(format!("set {} ({})", missing.join(" and "), label(method)))
                    }
                    _ => None,
                })
                .collect();
            let hint = if hints.is_empty() {
                String::new()
            } else {
                format!("; to log in without one, {}", hints.join(", or "))
            };
            return Err(format!(
                "the agent requires authentication ({error}), and there is no terminal to choose a method{hint}"
            ));
        }
        if logins.is_empty() {
            return Err(format!(
                "the agent requires authentication ({error}) but offers no method this client supports"
            ));
        }
        self.ui.line("[auth] the agent requires authentication:");
        for (index, login) in logins.iter().enumerate() {
            let method = login.method();
            let detail = match login {
                Login::Agent(_) => method.description.clone(),
                Login::EnvVar { missing, .. } => {
                    Some(format!("set {} in the environment and start again", missing.join(", ")))
                }
                Login::Terminal(_) => Some("runs the agent's login in this terminal".to_owned()),
            };
            let detail = detail.map(|text| format!(": {text}")).unwrap_or_default();
            self.ui.line(&format!("  {}. {}{detail}", index + 1, label(method)));
        }
        let chosen = loop {
            self.ui.finish_line();
            self.ui.out(&format!("choose 1-{}: ", logins.len()));
            let line = self.menu_input().await?;
            let chosen = line
                .trim()
                .parse::<usize>()
                .ok()
                .and_then(|number| logins.get(number.checked_sub(1)?));
            match chosen {
                Some(login) => break login,
                None => self.ui.line(&format!("answer with a number from 1 to {}", logins.len())),
            }
        };
        match chosen {
            Login::Agent(method) => self.call_authenticate(method).await,
            Login::EnvVar { method, missing } => Err(format!(
                "set {} in the environment for {} and start termsprawlctl acp again",
                missing.join(", "),
                label(method)
            )),
            Login::Terminal(method) => self.terminal_login(cwd, method).await,
        }
    }

    /// `authenticate` with a method, waiting as long as a browser login may take; the line that
    /// says so appears only when the login takes longer than [`LOGIN_NOTICE_AFTER`].
    async fn call_authenticate(&mut self, method: &AuthMethod) -> Result<(), String> {
        self.wait_answer_noting(
            "authenticate",
            json!({"methodId": method.id}),
            AUTHENTICATE_TIMEOUT,
            Some((LOGIN_NOTICE_AFTER, "[auth] waiting for the login to finish (Ctrl-C stops)")),
        )
        .await?
        .map(|_| ())
        .map_err(|error| format!("authentication failed: {error}"))
    }

    /// A `terminal` login: the agent's own argv with the method's `args` and `env`, run in this
    /// terminal (our process group, so it can read the keyboard) until it exits; zero is success.
    /// Then `session/new` is tried again on the running agent.
    async fn terminal_login(&mut self, cwd: &Path, method: &AuthMethod) -> Result<(), String> {
        let argv = self.session.agent_argv.clone();
        let Some((program, arguments)) = argv.split_first() else {
            return Err("no agent command to run the login with".to_owned());
        };
        let mut command = tokio::process::Command::new(program);
        command.args(arguments).args(method.args.iter().flatten()).current_dir(cwd);
        for (name, value) in method.env.iter().flatten() {
            if let Some(value) = value.as_str() {
                command.env(name, value);
            }
        }
        command.kill_on_drop(true);
        self.ui.line(&format!("[auth] running the login of {} in this terminal", label(method)));
        let mut child = command
            .spawn()
            .map_err(|error| format!("cannot start the login {}: {error}", program.display()))?;
        let status = tokio::select! {
            status = child.wait() => status.map_err(|error| format!("the login failed: {error}"))?,
            _ = self.signals.interrupt.recv() => {
                let _ = child.start_kill();
                let _ = child.wait().await;
                return Err("the terminal login was interrupted (Ctrl-C)".to_owned());
            }
            () = termination(&mut self.signals.terminate, &mut self.signals.hangup) => {
                let _ = child.start_kill();
                let _ = child.wait().await;
                return Err("the terminal login was interrupted by a signal".to_owned());
            }
        };
        self.ui.input_echoed();
        if !status.success() {
            return Err(format!("the terminal login ended with {}", agent::describe(Some(status))));
        }
        self.ui.line("[auth] the login finished");
        Ok(())
    }

    /// A line typed into the authentication menu; Ctrl-C, a termination signal or the end of
    /// input stop the choice.
    async fn menu_input(&mut self) -> Result<String, String> {
        let input = match self.queued.pop_front() {
            Some(input) => Some(input),
            None if self.input_closed => Some(Input::Eof),
            None => tokio::select! {
                input = self.input.recv() => input,
                _ = self.signals.interrupt.recv() => {
                    return Err("authentication interrupted (Ctrl-C)".to_owned());
                }
                () = termination(&mut self.signals.terminate, &mut self.signals.hangup) => {
                    return Err("authentication interrupted by a signal".to_owned());
                }
            },
        };
        self.ui.input_echoed();
        match input {
            Some(Input::Line(line)) => Ok(line),
            // A run notice is not a choice: it waits for the chat.
            Some(notice @ Input::Notice { .. }) => {
                self.queued.push_back(notice);
                Box::pin(self.menu_input()).await
            }
            Some(Input::Interrupt) => Err("authentication interrupted (Ctrl-C)".to_owned()),
            Some(Input::Eof) | None => {
                self.input_closed = true;
                Err("authentication was not chosen (end of input)".to_owned())
            }
        }
    }

    /// Sends a handshake request and waits for its answer within `limit`. The outer error stops
    /// the front end: no answer in time, Ctrl-C, a termination signal, or the end of input typed
    /// at a terminal (Ctrl-D). Lines typed meanwhile wait for the chat.
    pub(super) async fn wait_answer(
        &mut self,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Result<Result<Value, RpcError>, String> {
        self.wait_answer_noting(method, params, limit, None).await
    }

    /// [`Chat::wait_answer`], writing `notice` once if the answer takes longer than its delay.
    async fn wait_answer_noting(
        &mut self,
        method: &str,
        params: Value,
        limit: Duration,
        mut notice: Option<(Duration, &str)>,
    ) -> Result<Result<Value, RpcError>, String> {
        let answer = timeout(limit, self.connection.request(method, &params));
        tokio::pin!(answer);
        let far = Duration::from_hours(24 * 365);
        let notice_at = tokio::time::Instant::now() + notice.map_or(far, |(delay, _)| delay);
        let mut report_at =
            (method == "initialize").then(|| tokio::time::Instant::now() + INITIALIZE_REPORT_AFTER);
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(notice_at), if notice.is_some() => {
                    if let Some((_, line)) = notice.take() {
                        self.ui.line(line);
                    }
                }
                () = tokio::time::sleep_until(report_at.unwrap_or_else(|| notice_at + far)), if report_at.is_some() => {
                    report_at = None;
                    self.not_answering(method, limit)?;
                }
                answer = &mut answer => {
                    let answer = answer.map_err(|_| {
                        format!("{method}: no answer within {} s", limit.as_secs())
                    })?;
                    if answer.is_err() && self.connection.is_closed() {
                        // The agent is gone: how it exited and what it said say why.
                        let when = format!(" before answering {method}");
                        return Err(self.agent_gone(crate::launch::CLOSED_OUTPUT, &when).await);
                    }
                    return Ok(answer);
                }
                _ = self.signals.interrupt.recv() => {
                    return Err(format!("stopped waiting for {method} (Ctrl-C)"));
                }
                () = termination(&mut self.signals.terminate, &mut self.signals.hangup) => {
                    return Err(format!("stopped waiting for {method} (a termination signal)"));
                }
                input = self.input.recv(), if self.stdin_tty && !self.input_closed => match input {
                    Some(input @ (Input::Line(_) | Input::Notice { .. })) => {
                        self.queued.push_back(input);
                    }
                    Some(Input::Interrupt) => {
                        return Err(format!("stopped waiting for {method} (Ctrl-C)"));
                    }
                    Some(Input::Eof) | None => {
                        self.input_closed = true;
                        return Err(format!("stopped waiting for {method} (end of input)"));
                    }
                },
            }
        }
    }
}

impl Chat {
    /// An agent that has not answered `method` after [`INITIALIZE_REPORT_AFTER`]: one that wrote
    /// what no ACP agent writes is not one (the error stops the front end); otherwise a line says
    /// it is waited for, with the last lines of its stderr.
    fn not_answering(&mut self, method: &str, limit: Duration) -> Result<(), String> {
        let after = INITIALIZE_REPORT_AFTER.as_secs();
        if let Some(stray) = self.connection.stray() {
            let mut report = format!(
                "the agent did not answer {method} within {after} s and wrote {stray} on its \
                 stdout: it is not an ACP agent, it seems"
            );
            self.add_stderr_tail(&mut report);
            return Err(report);
        }
        let mut report = format!(
            "the agent has not answered {method} after {after} s; waiting up to {} s (Ctrl-C stops)",
            limit.as_secs()
        );
        self.add_stderr_tail(&mut report);
        // Named here while the agent may still answer: a later failure names it again.
        self.log.forget_named();
        self.ui.error(&report);
        Ok(())
    }
}

/// The stdio MCP server entry that hands the agent termsprawl's tools (`spec/acp.md` §2.5),
/// narrowed by `--mcp-read-only` and `--mcp-tools` (the bridge's own `--read-only` and `--tools`)
/// and with `--mcp-max-wait-ms` as its `--max-wait-ms`;
/// `mark` is the file the bridge leaves when it starts.
pub(crate) fn mcp_entry(
    program: &Path,
    session_file: &Path,
    narrowing: &McpNarrowing,
    mark: Option<&Path>,
) -> Value {
    let mut args = vec![
        Value::from("--session"),
        Value::from(session_file.to_string_lossy()),
        Value::from("mcp"),
    ];
    if narrowing.read_only {
        args.push(Value::from("--read-only"));
    }
    if let Some(tools) = &narrowing.tools {
        args.push(Value::from("--tools"));
        args.push(Value::from(tools.join(",")));
    }
    if let Some(max_wait_ms) = narrowing.max_wait_ms {
        args.push(Value::from("--max-wait-ms"));
        args.push(Value::from(max_wait_ms.to_string()));
    }
    let env: Vec<Value> = mark
        .map(|mark| json!({"name": BRIDGE_MARK_VARIABLE, "value": mark.to_string_lossy()}))
        .into_iter()
        .collect();
    json!({
        "name": "termsprawl",
        "command": program.to_string_lossy(),
        "args": args,
        "env": env,
    })
}
