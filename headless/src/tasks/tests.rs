//! Unit tests of the task store and the text rules.

use super::{EXPIRED_REASON, Task, TaskState, Tasks, check_text};
use crate::error::messages;

fn task(id: &str, from: &str, to: &str, expires_at: u64) -> Task {
    Task {
        task_id: id.to_owned(),
        project_id: "p".to_owned(),
        message_id: format!("m-{id}"),
        from_node_id: from.to_owned(),
        to_node_id: to.to_owned(),
        state: TaskState::Submitted,
        text: "hello".to_owned(),
        response: None,
        created_at: 1,
        updated_at: 1,
        expires_at,
    }
}

#[test]
fn text_rules() {
    assert!(check_text("line one\n\tline two").is_ok());
    assert!(check_text(&"x".repeat(16_000)).is_ok());
    assert!(check_text(&"😀".repeat(8_000)).is_ok());
    let message = |text: &str| check_text(text).unwrap_err().message().to_owned();
    assert_eq!(message(""), messages::MESSAGE_EMPTY);
    assert_eq!(message(&"x".repeat(16_001)), messages::MESSAGE_TOO_LONG);
    assert_eq!(message(&format!("{}x", "😀".repeat(8_000))), messages::MESSAGE_TOO_LONG);
    for control in ["\r", "\u{0}", "\u{1b}[0m", "\u{7f}", "\u{85}"] {
        assert_eq!(message(&format!("a{control}b")), messages::MESSAGE_CONTROL, "{control:?}");
    }
}

#[test]
fn tasks_persist_expire_and_fail() {
    let dir = tempfile::TempDir::new().unwrap();
    let tasks_dir = dir.path().join("tasks");
    let mut tasks = Tasks::load(&tasks_dir).unwrap();
    tasks.insert(task("t1", "a", "b", 100)).unwrap();
    tasks.insert(task("t2", "a", "c", 1_000)).unwrap();
    std::fs::write(tasks_dir.join("junk.json"), "{}").unwrap();
    std::fs::write(tasks_dir.join("notes.txt"), "x").unwrap();
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&tasks_dir).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o700);

    assert_eq!(tasks.pending_for("b").map(|task| task.task_id.as_str()), Some("t1"));
    assert_eq!(tasks.by_message_id("a", "m-t2").map(|task| task.task_id.as_str()), Some("t2"));
    assert!(tasks.by_message_id("b", "m-t2").is_none());
    assert_eq!(tasks.expire(100).unwrap(), 1);
    let expired = tasks.get("t1").unwrap();
    assert_eq!(
        (expired.state, expired.response.as_deref(), expired.updated_at),
        (TaskState::Failed, Some(EXPIRED_REASON), 100)
    );
    assert!(tasks.pending_for("b").is_none());

    let finished =
        tasks.finish("t2", TaskState::Completed, "done".to_owned(), 200).unwrap().unwrap();
    assert_eq!(finished.state, TaskState::Completed);
    assert!(tasks.finish("t2", TaskState::Failed, "again".to_owned(), 300).unwrap().is_none());

    let reloaded = Tasks::load(&tasks_dir).unwrap();
    assert_eq!(reloaded.get("t2").unwrap(), &finished);
    assert_eq!(reloaded.get("t1").unwrap().state, TaskState::Failed);
}

#[test]
fn the_value_has_the_documented_member_order() {
    let value = task("t", "a", "b", 5).to_value();
    let keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "taskId",
            "projectId",
            "messageId",
            "fromNodeId",
            "toNodeId",
            "state",
            "text",
            "createdAt",
            "updatedAt",
            "expiresAt"
        ]
    );
}
