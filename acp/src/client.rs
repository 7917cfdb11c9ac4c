//! The agent's requests and notifications to us (`spec/acp.md` §1.2): each request runs in its own
//! task and is answered from there, so the reader never waits; `session/update` goes to the chat
//! loop in order.

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use termsprawl_transport::long_wait::{ProgressSink, WaitProgress};
use tokio::sync::{mpsc, oneshot};

use crate::connection::{Connection, Inbound, RpcError, code};
use crate::elicitation;
use crate::fs::{Roots, Written};
use crate::messages::{
    self, CancelRequestParams, CreateTerminalParams, ReadTextFileParams, RequestPermissionParams,
    SessionNotification, SessionUpdate, TerminalParams, ToolCallContent, WriteTextFileParams,
};
use crate::options::PermissionMode;
use crate::permission::{self, Ask, Decision};
use crate::terminal::{self, Backend};

/// What the chat loop hears from the connection.
#[derive(Debug)]
pub(crate) enum Event {
    /// A decoded `session/update` of our session.
    Update(SessionUpdate),
    /// A permission ask for the person.
    Ask(Ask),
    /// An elicitation for the person (`elicitation/create`).
    Elicit(Elicit),
    /// A line for the transcript (where a terminal runs).
    Line(String),
    /// A policy's decision (its line) on an ask about this tool call, whose file changes are shown
    /// with it.
    Decided(String, messages::ToolCallUpdate),
    /// A file the agent wrote.
    Wrote(Written),
    /// A diagnostic: something from the agent was skipped.
    Notice(String),
    /// The agent closed the connection or broke it; the reason.
    Disconnected(String),
    /// How the agent's wait for a canvas terminal's exit goes (`spec/acp.md` §2.23).
    Waiting(String, WaitProgress),
}

/// An `elicitation/create` waiting for the person: what it asks, and where the answer goes (the
/// whole result: `accept` with content, `decline` or `cancel`). Dropping `reply` cancels it.
#[derive(Debug)]
pub(crate) struct Elicit {
    pub(crate) request: elicitation::Request,
    pub(crate) reply: oneshot::Sender<Value>,
}

/// How the client answers; shared by every request task.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) roots: Roots,
    pub(crate) terminals: Arc<Backend>,
    pub(crate) permission: PermissionMode,
    pub(crate) permission_timeout: Duration,
    /// Whether a wait for a terminal's exit reports its progress (stdout is a terminal).
    pub(crate) progress: bool,
}

/// The client side of the connection; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Client {
    inner: Arc<Inner>,
}

/// Whose updates are ours: before `session/new` has answered, updates wait, because an agent may
/// write its answer and the first update for the new session in one write (Gemini CLI does), and
/// the reader sees both before the chat has read the answer.
#[derive(Debug)]
enum SessionState {
    /// No session yet: the updates received so far, in order.
    Waiting(Vec<SessionNotification>),
    /// The session's id.
    Known(String),
}

/// How many updates wait for the session id at most; later ones are skipped with a notice.
const MAX_WAITING_UPDATES: usize = 10_000;

#[derive(Debug)]
struct Inner {
    connection: Connection,
    config: Config,
    session: Mutex<SessionState>,
    events: mpsc::UnboundedSender<Event>,
    in_flight: Mutex<HashMap<String, oneshot::Sender<()>>>,
}

impl Client {
    /// A client answering on `connection` and reporting to `events`.
    pub(crate) fn new(
        connection: Connection,
        config: Config,
        events: mpsc::UnboundedSender<Event>,
    ) -> Client {
        Client {
            inner: Arc::new(Inner {
                connection,
                config,
                session: Mutex::new(SessionState::Waiting(Vec::new())),
                events,
                in_flight: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Accepts requests for this session from now on, and delivers the updates that arrived for
    /// it before its id was known (in order, before any later one: the lock is held meanwhile).
    pub(crate) fn set_session(&self, session_id: &str) {
        let Ok(mut session) = self.inner.session.lock() else {
            return;
        };
        let previous = std::mem::replace(&mut *session, SessionState::Known(session_id.to_owned()));
        if let SessionState::Waiting(waiting) = previous {
            for notification in waiting {
                self.deliver(session_id, &notification);
            }
        }
    }

    /// The session's id, once known.
    fn session_id(&self) -> Option<String> {
        match &*self.inner.session.lock().ok()? {
            SessionState::Known(id) => Some(id.clone()),
            SessionState::Waiting(_) => None,
        }
    }

    /// Sends an update of `session_id` to the chat, or a notice why it was skipped.
    fn deliver(&self, session_id: &str, notification: &SessionNotification) {
        if notification.session_id != session_id {
            self.event(Event::Notice(format!(
                "skipped a session/update for another session: {}",
                notification.session_id
            )));
            return;
        }
        match messages::decode_update(&notification.update) {
            Ok(mut update) => {
                // The file a diff names is read now, before any later request of the agent (a
                // write) is handled: the person sees the change against the file as it was.
                if let SessionUpdate::ToolCall(messages::ToolCall { content, .. })
                | SessionUpdate::ToolCallUpdate(messages::ToolCallUpdate { content, .. }) =
                    &mut update
                {
                    read_diffs(&self.inner.config.roots, content.as_mut());
                }
                self.event(Event::Update(update));
            }
            Err(error) => self.event(Event::Notice(format!(
                "skipped a session/update that does not decode: {error}"
            ))),
        }
    }

    /// Handles one inbound message without blocking: requests are spawned, notifications queued.
    pub(crate) fn dispatch(&self, inbound: Inbound) {
        match inbound {
            Inbound::Request { id, method, params } => self.spawn_request(id, method, params),
            Inbound::Notification { method, params } => self.notification(&method, params.as_ref()),
            Inbound::Malformed(reason) => self.event(Event::Notice(format!("skipped: {reason}"))),
        }
    }

    fn spawn_request(&self, id: Value, method: String, params: Option<Value>) {
        let key = id.to_string();
        let (cancel, cancelled) = oneshot::channel();
        if let Ok(mut in_flight) = self.inner.in_flight.lock() {
            in_flight.insert(key.clone(), cancel);
        }
        let client = self.clone();
        tokio::spawn(async move {
            let result = tokio::select! {
                result = client.handle(&method, params.as_ref()) => result,
                Ok(()) = cancelled => {
                    if method == "session/request_permission" {
                        Ok(Decision::Cancelled.to_json())
                    } else if method == "elicitation/create" {
                        Ok(elicitation::action("cancel"))
                    } else {
                        Err(RpcError::new(code::REQUEST_CANCELLED, "the request was cancelled"))
                    }
                }
            };
            if let Ok(mut in_flight) = client.inner.in_flight.lock() {
                in_flight.remove(&key);
            }
            client.inner.connection.respond(&id, result);
        });
    }

    fn notification(&self, method: &str, params: Option<&Value>) {
        match method {
            "session/update" => {
                let notification: SessionNotification = match messages::decode(params) {
                    Ok(notification) => notification,
                    Err(error) => {
                        self.event(Event::Notice(format!(
                            "skipped a session/update that does not decode: {error}"
                        )));
                        return;
                    }
                };
                let Ok(mut session) = self.inner.session.lock() else {
                    return;
                };
                match &mut *session {
                    SessionState::Known(session_id) => {
                        let session_id = session_id.clone();
                        self.deliver(&session_id, &notification);
                    }
                    SessionState::Waiting(waiting) if waiting.len() < MAX_WAITING_UPDATES => {
                        waiting.push(notification);
                    }
                    SessionState::Waiting(_) => self.event(Event::Notice(
                        "skipped a session/update sent before the session existed".to_owned(),
                    )),
                }
            }
            "$/cancel_request" => {
                let Ok(params) = messages::decode::<CancelRequestParams>(params) else {
                    return;
                };
                let cancel = match self.inner.in_flight.lock() {
                    Ok(mut in_flight) => in_flight.remove(&params.request_id.to_string()),
                    Err(_) => None,
                };
                if let Some(cancel) = cancel {
                    let _ = cancel.send(());
                }
            }
            "elicitation/complete" => {
                if let Some(id) =
                    params.and_then(|params| params.get("elicitationId")).and_then(Value::as_str)
                {
                    self.event(Event::Line(format!(
                        "[elicitation] the agent says {id} is complete"
                    )));
                }
            }
            // Unknown notifications are ignored (`spec/acp.md` §2.2).
            _ => {}
        }
    }

    fn event(&self, event: Event) {
        let _ = self.inner.events.send(event);
    }

    fn check_session(&self, session_id: &str) -> Result<(), RpcError> {
        if self.session_id().as_deref() == Some(session_id) {
            return Ok(());
        }
        Err(RpcError::invalid_params(format!("unknown session: {session_id}")))
    }

    async fn handle(&self, method: &str, params: Option<&Value>) -> Result<Value, RpcError> {
        let config = &self.inner.config;
        match method {
            "session/request_permission" => self.request_permission(params).await,
            "elicitation/create" => self.elicit(params).await,
            "fs/read_text_file" => {
                let params: ReadTextFileParams = decode(params)?;
                self.check_session(&params.session_id)?;
                let roots = config.roots.clone();
                let content =
                    blocking(move || roots.read_text_file(&params.path, params.line, params.limit))
                        .await?;
                Ok(json!({"content": content}))
            }
            "fs/write_text_file" => {
                let params: WriteTextFileParams = decode(params)?;
                self.check_session(&params.session_id)?;
                let roots = config.roots.clone();
                let written =
                    blocking(move || roots.write_text_file(&params.path, &params.content)).await?;
                self.event(Event::Wrote(written));
                Ok(json!({}))
            }
            "terminal/create" => {
                let params: CreateTerminalParams = decode(params)?;
                self.check_session(&params.session_id)?;
                let spec = terminal::Spec {
                    command: params.command,
                    args: params.args.unwrap_or_default(),
                    env: params
                        .env
                        .unwrap_or_default()
                        .into_iter()
                        .map(|variable| (variable.name, variable.value))
                        .collect(),
                    cwd: params.cwd,
                    output_byte_limit: params.output_byte_limit,
                };
                let terminal_id = config.terminals.create(spec).await?;
                // One line per terminal saying where it runs, whether or not the agent embeds it
                // in a tool call.
                if let Some(place) = config.terminals.location(&terminal_id) {
                    self.event(Event::Line(format!("[terminal] {terminal_id} runs in {place}")));
                }
                Ok(json!({"terminalId": terminal_id}))
            }
            "terminal/output" => {
                let params = self.terminal_params(params)?;
                Ok(config.terminals.output(&params.terminal_id).await?.to_json())
            }
            "terminal/wait_for_exit" => {
                let params = self.terminal_params(params)?;
                let terminal_id = params.terminal_id.clone();
                let events = self.inner.events.clone();
                let mut report = move |progress: &WaitProgress| {
                    let _ = events.send(Event::Waiting(terminal_id.clone(), progress.clone()));
                };
                let progress: Option<ProgressSink<'_>> =
                    config.progress.then_some(&mut report as ProgressSink<'_>);
                Ok(config.terminals.wait_for_exit(&params.terminal_id, progress).await?.to_json())
            }
            "terminal/kill" => {
                let params = self.terminal_params(params)?;
                config.terminals.kill(&params.terminal_id).await?;
                Ok(json!({}))
            }
            "terminal/release" => {
                let params = self.terminal_params(params)?;
                config.terminals.release(&params.terminal_id).await?;
                Ok(json!({}))
            }
            other => {
                Err(RpcError::new(code::METHOD_NOT_FOUND, format!("method not found: {other}")))
            }
        }
    }

    fn terminal_params(&self, params: Option<&Value>) -> Result<TerminalParams, RpcError> {
        let params: TerminalParams = decode(params)?;
        self.check_session(&params.session_id)?;
        Ok(params)
    }

    /// `elicitation/create` (`spec/acp.md` §2.19): shown to the person by the chat, answered with
    /// what they chose; `cancel` when nobody answers within the permission timeout, when the chat
    /// drops it (a cancelled turn, no terminal) or is gone. A mode this client does not know is
    /// declined, and said.
    async fn elicit(&self, params: Option<&Value>) -> Result<Value, RpcError> {
        let params = params.cloned().unwrap_or(Value::Null);
        if let Some(session_id) = params.get("sessionId").and_then(Value::as_str) {
            self.check_session(session_id)?;
        }
        let request = match elicitation::parse(&params) {
            Ok(request) => request,
            Err(error) => {
                self.event(Event::Line(format!("[elicitation] declined: {error}")));
                return Ok(elicitation::action("decline"));
            }
        };
        let (reply, answer) = oneshot::channel();
        if self.inner.events.send(Event::Elicit(Elicit { request, reply })).is_err() {
            return Ok(elicitation::action("cancel"));
        }
        match tokio::time::timeout(self.inner.config.permission_timeout, answer).await {
            Ok(Ok(answer)) => Ok(answer),
            _ => Ok(elicitation::action("cancel")),
        }
    }

    async fn request_permission(&self, params: Option<&Value>) -> Result<Value, RpcError> {
        let mut request: RequestPermissionParams = decode(params)?;
        self.check_session(&request.session_id)?;
        let config = &self.inner.config;
        // The ask's changes are against the files as they are when it arrives.
        if request.tool_call.content.is_some() {
            let roots = config.roots.clone();
            let mut content = request.tool_call.content.take();
            content = blocking(move || {
                read_diffs(&roots, content.as_mut());
                Ok(content)
            })
            .await?;
            request.tool_call.content = content;
        }
        if request.options.is_empty() {
            return Ok(Decision::Cancelled.to_json());
        }
        if config.permission != PermissionMode::Ask {
            let decision = permission::by_policy(config.permission, &request.options);
            let title =
                request.tool_call.title.as_deref().unwrap_or(&request.tool_call.tool_call_id);
            let outcome = match &decision {
                Decision::Selected(option_id) => {
                    let name = request
                        .options
                        .iter()
                        .find(|option| &option.option_id == option_id)
                        .map_or("", |option| option.name.as_str());
                    format!("selected {name:?} by the policy")
                }
                Decision::Cancelled => "cancelled: the policy found no matching option".to_owned(),
            };
            // The changes of a file edit are shown even when a policy answers.
            let line = format!("[permission] {title}: {outcome}");
            self.event(Event::Decided(line, request.tool_call));
            return Ok(decision.to_json());
        }
        let offered: Vec<String> =
            request.options.iter().map(|option| option.option_id.clone()).collect();
        let (reply, answer) = oneshot::channel();
        let timeout = config.permission_timeout;
        let ask = Ask { request, timeout, reply };
        if self.inner.events.send(Event::Ask(ask)).is_err() {
            return Ok(Decision::Cancelled.to_json());
        }
        // The one timeout authority of a permission ask.
        let decision = match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(option_id)) if offered.contains(&option_id) => Decision::Selected(option_id),
            _ => Decision::Cancelled,
        };
        Ok(decision.to_json())
    }
}

/// Reads the file of every `diff` item (`crate::change`).
fn read_diffs(roots: &Roots, content: Option<&mut Vec<ToolCallContent>>) {
    for item in content.into_iter().flatten() {
        if let ToolCallContent::Diff { path, disk, .. } = item {
            *disk = roots.on_disk(path);
        }
    }
}

fn decode<T: for<'de> serde::Deserialize<'de>>(params: Option<&Value>) -> Result<T, RpcError> {
    messages::decode(params)
        .map_err(|error| RpcError::invalid_params(format!("invalid params: {error}")))
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, RpcError> + Send + 'static,
) -> Result<T, RpcError> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|error| Err(RpcError::internal(format!("the file task failed: {error}"))))
}
