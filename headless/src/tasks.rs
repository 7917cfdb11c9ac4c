//! Agent requests (`agent_send`, `agent_task`, `agent_reply`): one task record per request,
//! persisted as `D/tasks/<taskId>.json` (directory 0700, files 0600, written atomically), with the
//! messaging rules of `spec/protocol.md` §4.5.
//!
//! Rules: the text is non-empty, at most 16 000 UTF-16 units, without control characters other
//! than line feed and tab (and never `\r`); a sender's exact retry under the same `messageId`
//! returns the same task, a changed payload under it is refused; a recipient with a pending task
//! is busy; a pending task fails after the expiry (15 minutes), when either side's session is
//! revoked, when delivery fails, and when the server restarts.

use std::fs;
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ToolError, messages};

/// The longest message text, in UTF-16 units.
pub(crate) const MAX_TEXT_UTF16: usize = 16_000;

/// Why a pending task failed when the server restarted.
pub const RESTART_REASON: &str = "The tool service restarted before the recipient replied";
/// Why a pending task failed when it expired.
pub(crate) const EXPIRED_REASON: &str = "The request expired before the recipient replied";
/// Why a pending task failed when a session ended.
pub(crate) const REVOKED_REASON: &str = "The agent session ended before the recipient replied";

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum TaskState {
    /// Delivered, waiting for the recipient's reply.
    Submitted,
    /// The recipient replied `completed`.
    Completed,
    /// The recipient replied `failed`, or the request failed (delivery, expiry, revocation,
    /// restart).
    Failed,
}

/// One request. Serialised in this member order, both on disk and as the operations' value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[expect(
    clippy::struct_field_names,
    reason = "the members are the wire's (`taskId`), in its order"
)]
pub(crate) struct Task {
    /// The task id, a UUID v4.
    pub(crate) task_id: String,
    /// The project of both agents.
    pub(crate) project_id: String,
    /// The sender's `messageId`.
    pub(crate) message_id: String,
    /// The sender's node.
    pub(crate) from_node_id: String,
    /// The recipient's node.
    pub(crate) to_node_id: String,
    /// The state.
    pub(crate) state: TaskState,
    /// The request text.
    pub(crate) text: String,
    /// The reply, or why the task failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) response: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub(crate) created_at: u64,
    /// Milliseconds since the Unix epoch.
    pub(crate) updated_at: u64,
    /// Milliseconds since the Unix epoch; a task still pending then fails.
    pub(crate) expires_at: u64,
}

impl Task {
    /// The task as the operations return it.
    pub(crate) fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Whether the task waits for a reply.
    pub(crate) fn is_pending(&self) -> bool {
        self.state == TaskState::Submitted
    }
}

/// Every task of the data directory.
#[derive(Debug)]
pub(crate) struct Tasks {
    dir: PathBuf,
    tasks: Vec<Task>,
}

impl Tasks {
    /// No tasks yet, kept in `dir`.
    pub(crate) fn empty(dir: &Path) -> Tasks {
        Tasks { dir: dir.to_path_buf(), tasks: Vec::new() }
    }

    /// Reads `dir` (created with mode 0700 if missing). Files that are not task records are
    /// skipped.
    pub(crate) fn load(dir: &Path) -> io::Result<Tasks> {
        fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        let mut tasks = Vec::new();
        for entry in fs::read_dir(dir)? {
            let path = entry?.path();
            if path.extension().is_none_or(|extension| extension != "json") {
                continue;
            }
            let Ok(content) = fs::read(&path) else { continue };
            if let Ok(task) = serde_json::from_slice::<Task>(&content) {
                tasks.push(task);
            }
        }
        tasks.sort_by_key(|task| task.created_at);
        Ok(Tasks { dir: dir.to_path_buf(), tasks })
    }

    fn save(&self, task: &Task) -> io::Result<()> {
        fs::DirBuilder::new().recursive(true).mode(0o700).create(&self.dir)?;
        let json = serde_json::to_vec(task).map_err(io::Error::other)?;
        termsprawl_transport::server::write_atomic(
            &self.dir.join(format!("{}.json", task.task_id)),
            &json,
        )
    }

    /// The task `task_id`.
    pub(crate) fn get(&self, task_id: &str) -> Option<&Task> {
        self.tasks.iter().find(|task| task.task_id == task_id)
    }

    /// The sender's earlier task under `message_id`.
    pub(crate) fn by_message_id(&self, from: &str, message_id: &str) -> Option<&Task> {
        self.tasks.iter().find(|task| task.from_node_id == from && task.message_id == message_id)
    }

    /// The recipient's pending task, if it is busy.
    pub(crate) fn pending_for(&self, to: &str) -> Option<&Task> {
        self.tasks.iter().find(|task| task.to_node_id == to && task.is_pending())
    }

    /// Records a new task and writes it.
    pub(crate) fn insert(&mut self, task: Task) -> io::Result<()> {
        self.save(&task)?;
        self.tasks.push(task);
        Ok(())
    }

    /// Ends a pending task with `state` and `response`; returns it. `None` when the task does not
    /// exist or is no longer pending.
    pub(crate) fn finish(
        &mut self,
        task_id: &str,
        state: TaskState,
        response: String,
        now: u64,
    ) -> io::Result<Option<Task>> {
        let Some(task) =
            self.tasks.iter_mut().find(|task| task.task_id == task_id && task.is_pending())
        else {
            return Ok(None);
        };
        task.state = state;
        task.response = Some(response);
        task.updated_at = now;
        let task = task.clone();
        self.save(&task)?;
        Ok(Some(task))
    }

    /// Fails every pending task that `matches`, with `reason`; returns how many.
    pub(crate) fn fail_pending(
        &mut self,
        reason: &str,
        now: u64,
        matches: impl Fn(&Task) -> bool,
    ) -> io::Result<usize> {
        let ids: Vec<String> = self
            .tasks
            .iter()
            .filter(|task| task.is_pending() && matches(task))
            .map(|task| task.task_id.clone())
            .collect();
        for id in &ids {
            self.finish(id, TaskState::Failed, reason.to_owned(), now)?;
        }
        Ok(ids.len())
    }

    /// Fails every pending task whose expiry has passed.
    pub(crate) fn expire(&mut self, now: u64) -> io::Result<usize> {
        self.fail_pending(EXPIRED_REASON, now, |task| task.expires_at <= now)
    }
}

/// Checks a message or reply text against §4.5.
pub(crate) fn check_text(text: &str) -> Result<(), ToolError> {
    if text.is_empty() {
        return Err(messages::MESSAGE_EMPTY.into());
    }
    if text.encode_utf16().count() > MAX_TEXT_UTF16 {
        return Err(messages::MESSAGE_TOO_LONG.into());
    }
    if text.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Err(messages::MESSAGE_CONTROL.into());
    }
    Ok(())
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
}

/// `duration` in milliseconds, saturating.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests;
