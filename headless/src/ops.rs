//! The operations (`spec/protocol.md` §4, §6.4): the [`ToolHandler`] of the headless server.
//!
//! Order for every request, after the transport's checks: the caller's identity must still be
//! valid; `session_info`, `guide_read` and `agent_status` are answered at once; `browser_*`
//! operations are refused (there is no browser); everything else waits for its turn in the
//! project's queue, then fails if it waited past its expiry or its session was revoked meanwhile,
//! and otherwise runs.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use termsprawl_protocol::args::{
    AgentLaunchArgs, AgentReplyArgs, AgentSendArgs, AgentTaskArgs, ArtifactOpenArgs, ArtifactView,
    CanvasGroupArgs, CanvasMoveArgs, CanvasResizeArgs, CanvasSelectArgs, GuideReadArgs, NodeArgs,
    ReplyState, StickyOpenArgs, TerminalInputArgs, TerminalOpenArgs, TerminalReadArgs,
    TerminalSubmitArgs,
};
use termsprawl_protocol::{IntegrationState, ToolRequest, ToolResult, guide, operations};
use termsprawl_transport::server::{Caller, HandlerFuture, ToolHandler};
use tokio::time::Instant;

use crate::canvas::{Node, NodeKind};
use crate::engine::{Engine, tmux_error};
use crate::error::{ToolError, messages};
use crate::launch;
use crate::tasks::{self, Task, TaskState};

/// The default of `terminal_read`'s `maxChars`.
pub const DEFAULT_MAX_CHARS: f64 = 16_000.0;
/// The largest `terminal_read` answer, in UTF-16 units.
pub const MAX_CHARS: f64 = 100_000.0;
/// Lines of scrollback `terminal_read` includes.
pub const HISTORY_LINES: u32 = 200;

/// The [`ToolHandler`] of the headless server.
pub(crate) struct Handler {
    pub(crate) engine: Arc<Engine>,
    /// `serve --exec-log`: opened for appending; one line per request before it is dispatched.
    pub(crate) exec_log: Option<std::fs::File>,
}

impl Handler {
    /// Appends `{"operation":…,"args":…}` and a newline to the execution log in one `write`
    /// (the file is opened with `O_APPEND`, so concurrent lines never interleave). The caller's
    /// session, and so its token, is never written. A failed write is ignored: the log is a
    /// testing aid and must not change the answer.
    fn log_execution(&self, request: &ToolRequest) {
        let Some(file) = &self.exec_log else { return };
        let mut line = json!({
            "operation": request.operation().unwrap_or_default(),
            "args": request.args_value(),
        })
        .to_string();
        line.push('\n');
        let _ = std::io::Write::write_all(&mut &*file, line.as_bytes());
    }
}

impl ToolHandler for Handler {
    fn handle(&self, caller: Caller, request: ToolRequest) -> HandlerFuture<'_> {
        Box::pin(async move {
            self.log_execution(&request);
            match self.engine.dispatch(&caller, &request).await {
                Ok(value) => ToolResult::ok(value),
                Err(error) => ToolResult::failure(error.message()),
            }
        })
    }
}

fn parse<T: DeserializeOwned>(request: &ToolRequest) -> Result<T, ToolError> {
    request.parse_args().map_err(|error| ToolError::new(format!("Invalid arguments: {error}")))
}

impl Engine {
    async fn dispatch(&self, caller: &Caller, request: &ToolRequest) -> Result<Value, ToolError> {
        let operation = request.operation().unwrap_or_default();
        if !self.identity_is_valid(caller.identity()) {
            return Err(messages::NODE_NOT_IN_PROJECT.into());
        }
        match operation {
            "session_info" => return Ok(self.session_info(caller)),
            "guide_read" => return Ok(Value::from(guide(parse::<GuideReadArgs>(request)?.topic))),
            "agent_status" => return Ok(self.agent_status(caller)),
            browser if browser.starts_with("browser_") => {
                return Err(messages::BROWSER_NEEDS_APP.into());
            }
            _ => {}
        }
        let expires_at = Instant::now() + self.config.queue_expiry;
        let _turn = self.queues.enter(caller.project_id(), operation, caller.node_id()).await;
        if Instant::now() > expires_at {
            return Err(messages::QUEUE_EXPIRED.into());
        }
        if !caller.is_live() || !self.identity_is_valid(caller.identity()) {
            return Err(messages::SESSION_REVOKED.into());
        }
        self.run(caller, operation, request).await
    }

    #[expect(clippy::too_many_lines, reason = "one short arm per operation")]
    async fn run(
        &self,
        caller: &Caller,
        operation: &str,
        request: &ToolRequest,
    ) -> Result<Value, ToolError> {
        let project_id = caller.project_id();
        match operation {
            "canvas_list" => {
                let running = self.tmux.session_names().await.unwrap_or_default();
                Ok(self.project(project_id)?.list_value(&running))
            }
            "canvas_select" => {
                let args: CanvasSelectArgs = parse(request)?;
                let ids = self.mutate(project_id, |project| project.select(&args.node_ids))?;
                Ok(json!({ "nodeIds": ids }))
            }
            "canvas_move" => {
                let args: CanvasMoveArgs = parse(request)?;
                self.mutate(project_id, |project| {
                    project.move_node(&args.node_id, args.x, args.y)
                })?;
                Ok(json!({ "nodeId": args.node_id }))
            }
            "canvas_resize" => {
                let args: CanvasResizeArgs = parse(request)?;
                self.mutate(project_id, |project| {
                    project.resize(&args.node_id, args.width, args.height)
                })?;
                Ok(json!({ "nodeId": args.node_id }))
            }
            "canvas_group" => {
                let args: CanvasGroupArgs = parse(request)?;
                let group_id = self.state().canvas.fresh_node_id(NodeKind::Group);
                let ids = self.mutate(project_id, |project| {
                    project.group(&group_id, &args.node_ids, args.title.as_deref())
                })?;
                Ok(json!({ "nodeId": group_id, "nodeIds": ids }))
            }
            "sticky_open" => {
                let args: StickyOpenArgs = parse(request)?;
                let node_id = self.state().canvas.fresh_node_id(NodeKind::Sticky);
                let mut node = Node::new(node_id, NodeKind::Sticky, "Note".to_owned());
                node.text = Some(args.text);
                let node_id = self.mutate(project_id, |project| Ok(project.add(node)))?;
                Ok(json!({ "nodeId": node_id }))
            }
            "artifact_open" => self.artifact_open(project_id, &parse(request)?),
            "terminal_open" => {
                let args: TerminalOpenArgs = parse(request)?;
                let title = args
                    .title
                    .filter(|title| !title.is_empty())
                    .unwrap_or_else(|| "Terminal".to_owned());
                let node_id = self.open_terminal(project_id, &title).await?;
                Ok(json!({ "nodeId": node_id }))
            }
            "terminal_read" => {
                let args: TerminalReadArgs = parse(request)?;
                self.terminal(project_id, &args.node_id)?;
                let text =
                    self.tmux.capture(&args.node_id, HISTORY_LINES).await.map_err(tmux_error)?;
                let limit = clamp_max_chars(args.max_chars);
                Ok(json!({ "nodeId": args.node_id, "output": tail(trim_blank_end(&text), limit) }))
            }
            "terminal_submit" => {
                let args: TerminalSubmitArgs = parse(request)?;
                let node = self.writable_terminal(caller, &args.node_id)?;
                if node.kind == NodeKind::Agent {
                    return Err(messages::SUBMIT_TO_SHELL.into());
                }
                self.tmux.send_text(&args.node_id, &args.command).await.map_err(tmux_error)?;
                self.tmux.send_key(&args.node_id, "Enter").await.map_err(tmux_error)?;
                Ok(delivered(&args.node_id))
            }
            "terminal_input" => {
                let args: TerminalInputArgs = parse(request)?;
                self.writable_terminal(caller, &args.node_id)?;
                self.tmux.send_text(&args.node_id, &args.text).await.map_err(tmux_error)?;
                Ok(delivered(&args.node_id))
            }
            "terminal_interrupt" => {
                let args: NodeArgs = parse(request)?;
                self.writable_terminal(caller, &args.node_id)?;
                self.tmux.send_key(&args.node_id, "C-c").await.map_err(tmux_error)?;
                Ok(delivered(&args.node_id))
            }
            "terminal_external" => {
                let args: NodeArgs = parse(request)?;
                self.terminal(project_id, &args.node_id)?;
                self.terminal_external(&args.node_id).await
            }
            "terminal_close" => {
                let args: NodeArgs = parse(request)?;
                self.writable_terminal(caller, &args.node_id)?;
                self.close_node(project_id, &args.node_id).await?;
                Ok(json!({ "nodeId": args.node_id, "cleanupPendingIds": [] }))
            }
            "agent_launch" => {
                let args: AgentLaunchArgs = parse(request)?;
                let node_id = self.state().canvas.fresh_node_id(NodeKind::Agent);
                let plan = launch::plan_preset(
                    args.agent,
                    &self.layout,
                    &node_id,
                    &self.config.search_path,
                )
                .await?;
                let started = self
                    .start_agent(
                        project_id,
                        node_id,
                        &plan.name,
                        &plan.name,
                        &plan.argv,
                        plan.status,
                    )
                    .await?;
                Ok(json!({ "nodeId": started.node_id }))
            }
            "agent_cards" => Ok(self.agent_cards(caller)),
            "agent_send" => self.agent_send(caller, parse(request)?).await,
            "agent_task" => self.agent_task(caller, &parse::<AgentTaskArgs>(request)?),
            "agent_reply" => self.agent_reply(caller, parse(request)?),
            "context_read" => Ok(json!({
                "text": "",
                "reader": "claude-jsonl",
                "reason": "Transcript unavailable: the headless server has no transcript reader for linked peers",
            })),
            _ => Err("Unknown operation".into()),
        }
    }

    fn session_info(&self, caller: &Caller) -> Value {
        let mut status = caller.status();
        if launch::is_mcp_adapter(&status.adapter) {
            status.state = IntegrationState::Connected;
            launch::CONNECTED_REASON.clone_into(&mut status.reason);
            caller.set_status(status.clone());
        }
        let operations: Vec<&str> = operations()
            .iter()
            .map(termsprawl_protocol::Operation::name)
            .filter(|name| !name.starts_with("browser_"))
            .collect();
        json!({
            "nodeId": caller.node_id(),
            "projectId": caller.project_id(),
            "instanceId": caller.instance_id(),
            "host": "local",
            "status": status,
            "appVersion": self.config.app_version,
            "preferencesFile": self.layout.preferences_file().to_string_lossy(),
            "guidesDirectory": self.layout.skills_dir(caller.node_id()).to_string_lossy(),
            "browserEnabled": false,
            "operations": operations,
        })
    }

    fn agent_status(&self, caller: &Caller) -> Value {
        let sessions = caller.sessions().list();
        Value::Array(
            sessions
                .iter()
                .filter(|session| session.identity().project_id == caller.project_id())
                .filter(|session| self.identity_is_valid(session.identity()))
                .map(|session| {
                    json!({
                        "nodeId": session.identity().node_id,
                        "projectId": session.identity().project_id,
                        "status": session.status(),
                    })
                })
                .collect(),
        )
    }

    fn agent_cards(&self, caller: &Caller) -> Value {
        let Ok(project) = self.project(caller.project_id()) else { return json!([]) };
        let sessions = caller.sessions();
        let cards = project
            .nodes
            .iter()
            .filter(|node| node.kind == NodeKind::Agent)
            .filter_map(|node| {
                let session = sessions.get(&node.id)?;
                (session.identity().project_id == project.id).then_some((node, session))
            })
            .map(|(node, session)| {
                json!({
                    "nodeId": node.id,
                    "projectId": project.id,
                    "title": node.title,
                    "agent": node.agent.as_ref().map(|agent| agent.name.clone()),
                    "status": session.status(),
                    "enabledPeerIds": project.enabled_peers(&node.id),
                })
            })
            .collect();
        Value::Array(cards)
    }

    /// A terminal or agent node of the project, or `Local terminal not found in this project`.
    fn terminal(&self, project_id: &str, node_id: &str) -> Result<Node, ToolError> {
        let project = self.project(project_id)?;
        match project.node(node_id) {
            Some(node) if node.kind.is_terminal() => Ok(node.clone()),
            _ => Err(messages::TERMINAL_NOT_FOUND.into()),
        }
    }

    /// A terminal the caller may write into or close: never its own node.
    fn writable_terminal(&self, caller: &Caller, node_id: &str) -> Result<Node, ToolError> {
        if node_id == caller.node_id() {
            return Err(messages::OWN_NODE.into());
        }
        self.terminal(caller.project_id(), node_id)
    }

    async fn terminal_external(&self, node_id: &str) -> Result<Value, ToolError> {
        let options = termsprawl_external_term::OpenOptions {
            search_path: self.config.search_path.clone(),
            tmux: Some(termsprawl_external_term::TmuxLocation {
                program: self.tmux.program().to_path_buf(),
                base_args: self.tmux.base_args(),
            }),
            ..termsprawl_external_term::OpenOptions::default()
        };
        let user_data = self.layout.user_data().to_path_buf();
        let node = node_id.to_owned();
        let opened = tokio::task::spawn_blocking(move || {
            termsprawl_external_term::open(&node, &user_data, &options)
        })
        .await
        .map_err(|_| ToolError::new("Tool failed"))?;
        opened.map_err(|error| ToolError::new(error.to_string()))?;
        Ok(termsprawl_external_term::result_value(node_id))
    }

    fn artifact_open(&self, project_id: &str, args: &ArtifactOpenArgs) -> Result<Value, ToolError> {
        let view = args.view.unwrap_or(ArtifactView::Editor);
        let folder = self.project(project_id)?.folder;
        let path = artifact_path(&folder, Path::new(&args.path))?;
        let existing = self
            .project(project_id)?
            .nodes
            .iter()
            .find(|node| {
                node.kind == NodeKind::Artifact
                    && node.path.as_deref() == Some(path.as_path())
                    && node.view == Some(view)
            })
            .map(|node| node.id.clone());
        if let Some(node_id) = existing {
            return Ok(json!({ "nodeId": node_id }));
        }
        let node_id = self.state().canvas.fresh_node_id(NodeKind::Artifact);
        let title = path
            .file_name()
            .map_or_else(|| "File".to_owned(), |name| name.to_string_lossy().into_owned());
        let mut node = Node::new(node_id, NodeKind::Artifact, title);
        node.path = Some(path);
        node.view = Some(view);
        let node_id = self.mutate(project_id, |project| Ok(project.add(node)))?;
        Ok(json!({ "nodeId": node_id }))
    }

    async fn agent_send(&self, caller: &Caller, args: AgentSendArgs) -> Result<Value, ToolError> {
        tasks::check_text(&args.text)?;
        if args.message_id.is_empty() {
            return Err(messages::MESSAGE_ID_EMPTY.into());
        }
        let now = tasks::now_millis();
        let from = caller.node_id();
        let task = {
            let mut state = self.state();
            let _ = state.tasks.expire(now);
            if let Some(earlier) = state.tasks.by_message_id(from, &args.message_id) {
                if earlier.to_node_id == args.node_id && earlier.text == args.text {
                    return Ok(earlier.to_value());
                }
                return Err(messages::MESSAGE_ID_REUSED.into());
            }
            if args.node_id == from {
                return Err(messages::SEND_TO_SELF.into());
            }
            let project = state
                .canvas
                .project(caller.project_id())
                .ok_or(ToolError::new(messages::NODE_NOT_IN_PROJECT))?;
            let connected =
                project.node(&args.node_id).is_some_and(|node| node.kind == NodeKind::Agent)
                    && caller
                        .sessions()
                        .get(&args.node_id)
                        .is_some_and(|session| session.identity().project_id == project.id);
            if !connected {
                return Err(messages::RECIPIENT_NOT_CONNECTED.into());
            }
            if !project.is_linked(from, &args.node_id) {
                return Err(messages::LINK_NOT_ENABLED.into());
            }
            if state.tasks.pending_for(&args.node_id).is_some() {
                return Err(messages::RECIPIENT_BUSY.into());
            }
            let task = Task {
                task_id: uuid::Uuid::new_v4().to_string(),
                project_id: caller.project_id().to_owned(),
                message_id: args.message_id,
                from_node_id: from.to_owned(),
                to_node_id: args.node_id,
                state: TaskState::Submitted,
                text: args.text,
                response: None,
                created_at: now,
                updated_at: now,
                expires_at: now.saturating_add(tasks::millis(self.config.task_expiry)),
            };
            state
                .tasks
                .insert(task.clone())
                .map_err(|error| ToolError::new(format!("cannot save the task: {error}")))?;
            task
        };
        let prompt = delivery_text(&task);
        let delivered = match self.tmux.send_text(&task.to_node_id, &prompt).await {
            Ok(()) => self.tmux.send_key(&task.to_node_id, "Enter").await,
            Err(error) => Err(error),
        };
        if let Err(error) = delivered {
            let reason = format!("Delivery failed: {}", tmux_error(error));
            let failed = self.state().tasks.finish(
                &task.task_id,
                TaskState::Failed,
                reason,
                tasks::now_millis(),
            );
            if let Ok(Some(failed)) = failed {
                return Ok(failed.to_value());
            }
        }
        Ok(task.to_value())
    }

    fn agent_task(&self, caller: &Caller, args: &AgentTaskArgs) -> Result<Value, ToolError> {
        let mut state = self.state();
        let _ = state.tasks.expire(tasks::now_millis());
        match state.tasks.get(&args.task_id) {
            Some(task)
                if task.from_node_id == caller.node_id() || task.to_node_id == caller.node_id() =>
            {
                Ok(task.to_value())
            }
            _ => Err(messages::TASK_NOT_FOUND.into()),
        }
    }

    fn agent_reply(&self, caller: &Caller, args: AgentReplyArgs) -> Result<Value, ToolError> {
        tasks::check_text(&args.text)?;
        let now = tasks::now_millis();
        let mut state = self.state();
        let _ = state.tasks.expire(now);
        let task = match state.tasks.get(&args.task_id) {
            Some(task) if task.to_node_id == caller.node_id() => task,
            Some(task) if task.from_node_id == caller.node_id() => {
                return Err(messages::REPLY_RECIPIENT_ONLY.into());
            }
            _ => return Err(messages::TASK_NOT_FOUND.into()),
        };
        if !task.is_pending() {
            return Err(messages::TASK_NOT_PENDING.into());
        }
        let final_state = match args.state {
            Some(ReplyState::Failed) => TaskState::Failed,
            Some(ReplyState::Completed) | None => TaskState::Completed,
        };
        let task_id = task.task_id.clone();
        let finished = state
            .tasks
            .finish(&task_id, final_state, args.text, now)
            .map_err(|error| ToolError::new(format!("cannot save the task: {error}")))?;
        finished.map(|task| task.to_value()).ok_or_else(|| messages::TASK_NOT_PENDING.into())
    }
}

fn delivered(node_id: &str) -> Value {
    json!({ "nodeId": node_id, "delivered": true })
}

/// What `agent_send` types into the recipient's prompt (followed by Enter).
pub fn delivery_text(task: &Task) -> String {
    format!(
        "[termsprawl request from agent {} | task {}] {} [Answer with agent_reply, taskId {}]",
        task.from_node_id, task.task_id, task.text, task.task_id
    )
}

/// `min(max(maxChars, 1), 100000)`, fractions cut off (§4.5).
pub fn clamp_max_chars(max_chars: Option<f64>) -> usize {
    let value = max_chars.unwrap_or(DEFAULT_MAX_CHARS);
    let value = if value.is_nan() { DEFAULT_MAX_CHARS } else { value.clamp(1.0, MAX_CHARS) };
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "clamped to 1..=100000"
    )]
    let limit = value.trunc() as usize;
    limit
}

/// The last `limit` UTF-16 units of `text`, never splitting a character.
pub fn tail(text: &str, limit: usize) -> String {
    let mut units = 0;
    let mut start = text.len();
    for (index, c) in text.char_indices().rev() {
        units += c.len_utf16();
        if units > limit {
            break;
        }
        start = index;
    }
    text[start..].to_owned()
}

/// The pane text without the blank lines below the last written one.
pub(crate) fn trim_blank_end(text: &str) -> &str {
    let trimmed = text.trim_end_matches(['\n', ' ']);
    let line_end =
        text[trimmed.len()..].find('\n').map_or(text.len(), |offset| trimmed.len() + offset + 1);
    if trimmed.is_empty() { "" } else { &text[..line_end] }
}

/// Checks an `artifact_open` path: absolute, inside the project folder (after resolving links),
/// an existing regular file. Returns the canonical path.
pub(crate) fn artifact_path(folder: &Path, path: &Path) -> Result<PathBuf, ToolError> {
    if !path.is_absolute() {
        return Err(messages::ARTIFACT_RELATIVE.into());
    }
    let lexical: PathBuf = path.components().fold(PathBuf::new(), |mut normal, component| {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
        normal
    });
    if !lexical.starts_with(folder) {
        return Err(messages::ARTIFACT_OUTSIDE.into());
    }
    let Ok(canonical) = lexical.canonicalize() else {
        return Err(messages::ARTIFACT_MISSING.into());
    };
    if !canonical.starts_with(folder) {
        return Err(messages::ARTIFACT_OUTSIDE.into());
    }
    if !canonical.is_file() {
        return Err(messages::ARTIFACT_NOT_FILE.into());
    }
    Ok(canonical)
}

#[cfg(test)]
mod tests;
