//! The agent operations: `agent_launch`, `agent_cards`, `agent_send`, `agent_task`,
//! `agent_reply` and `context_read`.

use serde_json::Value;
use termsprawl_protocol::args::{
    AgentLaunchArgs, AgentReplyArgs, AgentSendArgs, AgentTaskArgs, ReplyState,
};
use termsprawl_protocol::results::{AgentCard, ContextReadResult, NodeResult};
use termsprawl_transport::server::Caller;

use crate::canvas::NodeKind;
use crate::engine::Engine;
use crate::error::{ToolError, messages};
use crate::launch;
use crate::ops::answer;
use crate::tasks::{self, Task, TaskState};
use crate::terminals::tmux_error;

pub(super) async fn launch(
    engine: &Engine,
    caller: &Caller,
    args: AgentLaunchArgs,
) -> Result<Value, ToolError> {
    let node_id = engine.state().canvas.fresh_node_id(NodeKind::Agent);
    let plan =
        launch::plan_preset(args.agent, engine.layout(), &node_id, &engine.config().search_path)
            .await?;
    let started = engine
        .start_agent(caller.project_id(), node_id, &plan.name, &plan.name, &plan.argv, plan.status)
        .await?;
    Ok(answer(&NodeResult { node_id: started.node_id }))
}

/// `agent_cards`: one card per agent node of the project that has a session.
pub(super) fn cards(engine: &Engine, caller: &Caller) -> Value {
    let Ok(project) = engine.project(caller.project_id()) else { return Value::Array(Vec::new()) };
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
            answer(&AgentCard {
                node_id: node.id.clone(),
                project_id: project.id.clone(),
                title: node.title.clone(),
                agent: node.agent.as_ref().map(|agent| agent.name.clone()),
                status: session.status(),
                enabled_peer_ids: project.enabled_peers(&node.id),
            })
        })
        .collect();
    Value::Array(cards)
}

/// `agent_send`: records the task, then types its delivery text into the recipient's prompt.
pub(super) async fn send(
    engine: &Engine,
    caller: &Caller,
    args: AgentSendArgs,
) -> Result<Value, ToolError> {
    tasks::check_text(&args.text)?;
    if args.message_id.is_empty() {
        return Err(messages::MESSAGE_ID_EMPTY.into());
    }
    let now = tasks::now_millis();
    let from = caller.node_id();
    let task = {
        let mut state = engine.state();
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
            expires_at: now.saturating_add(tasks::millis(engine.config().task_expiry)),
        };
        state
            .tasks
            .insert(task.clone())
            .map_err(|error| ToolError::new(format!("cannot save the task: {error}")))?;
        task
    };
    let prompt = delivery_text(&task);
    if let Err(error) = engine.terminals().submit_line(&task.to_node_id, &prompt).await {
        let reason = format!("Delivery failed: {}", tmux_error(error));
        let failed = engine.state().tasks.finish(
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

/// `agent_task`: the sender and the recipient may read a task.
pub(super) fn task(
    engine: &Engine,
    caller: &Caller,
    args: &AgentTaskArgs,
) -> Result<Value, ToolError> {
    let mut state = engine.state();
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

/// `agent_reply`: only the recipient answers, once.
pub(super) fn reply(
    engine: &Engine,
    caller: &Caller,
    args: AgentReplyArgs,
) -> Result<Value, ToolError> {
    tasks::check_text(&args.text)?;
    let now = tasks::now_millis();
    let mut state = engine.state();
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

/// `context_read`: the headless server has no transcript reader.
pub(super) fn context_read() -> Value {
    answer(&ContextReadResult {
        text: String::new(),
        reader: "claude-jsonl".to_owned(),
        reason: Some(
            "Transcript unavailable: the headless server has no transcript reader for linked peers"
                .to_owned(),
        ),
    })
}

/// What `agent_send` types into the recipient's prompt (followed by Enter).
pub(crate) fn delivery_text(task: &Task) -> String {
    format!(
        "[termsprawl request from agent {} | task {}] {} [Answer with agent_reply, taskId {}]",
        task.from_node_id, task.task_id, task.text, task.task_id
    )
}
