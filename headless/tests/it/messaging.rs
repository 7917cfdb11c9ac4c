//! Agent requests between two agents: links, delivery into the peer's prompt, replies, the
//! messageId retry rule, busy recipients, who may read, text rules, expiry, revocation, restart.

use std::time::Duration;

use serde_json::{Value, json};
use termsprawl_headless::control::ControlRequest;

use crate::support::{Agent, Fixture, fails, ok, wait_for_output};

async fn link(fixture: &Fixture, from: &Agent, to: &Agent) {
    let request = ControlRequest::Link { from: from.node_id.clone(), to: to.node_id.clone() };
    fixture.server().control(request).await.unwrap();
}

fn task_id(task: &Value) -> String {
    task["taskId"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_agents_message_each_other() {
    let fixture = Fixture::start().await;
    let alpha = fixture.agent("alpha").await;
    let beta = fixture.agent("beta").await;
    let request = json!({"nodeId": beta.node_id, "text": "please count to 3", "messageId": "m-1"});
    let error = fails(&alpha, "agent_send", request.clone()).await;
    assert!(error.starts_with("No enabled agent link to this peer"), "{error}");
    link(&fixture, &alpha, &beta).await;

    let task = ok(&alpha, "agent_send", request.clone()).await;
    let id = task_id(&task);
    let keys: Vec<&str> = task.as_object().unwrap().keys().map(String::as_str).collect();
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
    assert_eq!(task["state"], "submitted");
    assert_eq!(
        (task["fromNodeId"].as_str(), task["toNodeId"].as_str()),
        (Some(alpha.node_id.as_str()), Some(beta.node_id.as_str()))
    );
    assert_eq!(
        task["expiresAt"].as_u64().unwrap() - task["createdAt"].as_u64().unwrap(),
        15 * 60 * 1000
    );

    // The request was typed into beta's prompt.
    let prompt = wait_for_output(&alpha, &beta.node_id, "please count to 3").await;
    assert!(prompt.contains(&id), "{prompt}");
    // It is persisted.
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture.agent_tools().join(format!("tasks/{id}.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(file, task);

    // An exact retry returns the same task; a changed payload under the id is refused.
    assert_eq!(ok(&alpha, "agent_send", request).await, task);
    let changed = fails(
        &alpha,
        "agent_send",
        json!({"nodeId": beta.node_id, "text": "other", "messageId": "m-1"}),
    )
    .await;
    assert!(changed.starts_with("This messageId was already used"), "{changed}");
    // The recipient is busy until it replies.
    let busy = fails(
        &alpha,
        "agent_send",
        json!({"nodeId": beta.node_id, "text": "more", "messageId": "m-2"}),
    )
    .await;
    assert!(busy.starts_with("Recipient agent is busy"), "{busy}");

    // Both sides may read the task; only the recipient replies, without a link back.
    assert_eq!(ok(&beta, "agent_task", json!({"taskId": id})).await, task);
    let sender_reply = fails(&alpha, "agent_reply", json!({"taskId": id, "text": "done"})).await;
    assert_eq!(sender_reply, "Only the recipient of a request can reply to it");
    let replied = ok(&beta, "agent_reply", json!({"taskId": id, "text": "1 2 3"})).await;
    assert_eq!(replied["state"], "completed");
    assert_eq!(replied["response"], "1 2 3");
    let polled = ok(&alpha, "agent_task", json!({"taskId": id})).await;
    assert_eq!(polled, replied);
    assert_eq!(
        fails(&beta, "agent_reply", json!({"taskId": id, "text": "again"})).await,
        "Task is no longer pending"
    );

    // The other direction needs its own link.
    let reverse = json!({"nodeId": alpha.node_id, "text": "thanks", "messageId": "r-1"});
    assert!(fails(&beta, "agent_send", reverse.clone()).await.starts_with("No enabled agent link"));
    link(&fixture, &beta, &alpha).await;
    let back = ok(&beta, "agent_send", reverse).await;
    let failed = ok(
        &alpha,
        "agent_reply",
        json!({"taskId": task_id(&back), "text": "cannot", "state": "failed"}),
    )
    .await;
    assert_eq!(
        (failed["state"].as_str(), failed["response"].as_str()),
        (Some("failed"), Some("cannot"))
    );

    // Now alpha may send again.
    let next = ok(
        &alpha,
        "agent_send",
        json!({"nodeId": beta.node_id, "text": "next", "messageId": "m-3"}),
    )
    .await;
    assert_eq!(next["state"], "submitted");
}

#[tokio::test(flavor = "multi_thread")]
async fn send_checks_text_recipient_and_readers() {
    let fixture = Fixture::start().await;
    let alpha = fixture.agent("alpha").await;
    let beta = fixture.agent("beta").await;
    let gamma = fixture.agent("gamma").await;
    link(&fixture, &alpha, &beta).await;
    let send = |text: Value| json!({"nodeId": beta.node_id, "text": text, "messageId": "t"});
    assert_eq!(
        fails(&alpha, "agent_send", send(json!(""))).await,
        "Message text must not be empty"
    );
    assert_eq!(
        fails(&alpha, "agent_send", send(json!("a\rb"))).await,
        "Message text must not contain control characters"
    );
    assert_eq!(
        fails(&alpha, "agent_send", send(json!("bell\u{7}"))).await,
        "Message text must not contain control characters"
    );
    let long = "é".repeat(16_001);
    assert_eq!(
        fails(&alpha, "agent_send", send(json!(long))).await,
        "Message text must be at most 16000 characters"
    );
    let emoji = "😀".repeat(8_001);
    assert_eq!(
        fails(&alpha, "agent_send", send(json!(emoji))).await,
        "Message text must be at most 16000 characters"
    );
    assert_eq!(
        fails(&alpha, "agent_send", json!({"nodeId": beta.node_id, "text": "x", "messageId": ""}))
            .await,
        "Invalid messageId"
    );
    let sticky = ok(&alpha, "sticky_open", json!({"text": "n"})).await["nodeId"]
        .as_str()
        .unwrap()
        .to_owned();
    for target in [sticky.as_str(), "nope"] {
        let error =
            fails(&alpha, "agent_send", json!({"nodeId": target, "text": "x", "messageId": "u"}))
                .await;
        assert_eq!(error, "Recipient agent is not connected to this project");
    }
    assert_eq!(
        fails(
            &alpha,
            "agent_send",
            json!({"nodeId": alpha.node_id, "text": "x", "messageId": "s"})
        )
        .await,
        "Send requests to another agent, not to yourself"
    );

    // Tabs and line feeds are text; a text of exactly 16000 units is fine.
    let task = ok(&alpha, "agent_send", send(json!(format!("a\tb\n{}", "x".repeat(15_996))))).await;
    let id = task_id(&task);
    assert_eq!(fails(&gamma, "agent_task", json!({"taskId": id})).await, "Task not found");
    assert_eq!(
        fails(&gamma, "agent_reply", json!({"taskId": id, "text": "x"})).await,
        "Task not found"
    );
    assert_eq!(fails(&alpha, "agent_task", json!({"taskId": "unknown"})).await, "Task not found");
    assert_eq!(
        fails(&beta, "agent_reply", json!({"taskId": id, "text": ""})).await,
        "Message text must not be empty"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pending_tasks_fail_on_expiry_revocation_and_restart() {
    let mut fixture =
        Fixture::start_with(|config| config.task_expiry = Duration::from_millis(300)).await;
    let alpha = fixture.agent("alpha").await;
    let beta = fixture.agent("beta").await;
    let gamma = fixture.agent("gamma").await;
    link(&fixture, &alpha, &beta).await;
    link(&fixture, &alpha, &gamma).await;

    let expiring =
        ok(&alpha, "agent_send", json!({"nodeId": beta.node_id, "text": "soon", "messageId": "e"}))
            .await;
    // The expiry is the subject here: let it pass.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let expired = ok(&alpha, "agent_task", json!({"taskId": task_id(&expiring)})).await;
    assert_eq!(expired["state"], "failed");
    assert_eq!(expired["response"], "The request expired before the recipient replied");
    assert_eq!(
        fails(&beta, "agent_reply", json!({"taskId": task_id(&expiring), "text": "late"})).await,
        "Task is no longer pending"
    );

    // Closing the recipient fails its pending request.
    let closing =
        ok(&alpha, "agent_send", json!({"nodeId": gamma.node_id, "text": "x", "messageId": "c"}))
            .await;
    fixture
        .server()
        .control(ControlRequest::Close { node_id: gamma.node_id.clone() })
        .await
        .unwrap();
    let revoked = ok(&alpha, "agent_task", json!({"taskId": task_id(&closing)})).await;
    assert_eq!(
        (revoked["state"].as_str(), revoked["response"].as_str()),
        (Some("failed"), Some("The agent session ended before the recipient replied"))
    );

    fixture.stop().await;
    let mut config = fixture.config();
    config.task_expiry = Duration::from_mins(10);
    fixture.server = Some(termsprawl_headless::Server::start(config).await.unwrap());
    let pending =
        ok(&alpha, "agent_send", json!({"nodeId": beta.node_id, "text": "y", "messageId": "r"}))
            .await;
    fixture.restart().await;
    let failed = ok(&alpha, "agent_task", json!({"taskId": task_id(&pending)})).await;
    assert_eq!(
        (failed["state"].as_str(), failed["response"].as_str()),
        (Some("failed"), Some("The tool service restarted before the recipient replied"))
    );
    // The recipient is free again.
    ok(&alpha, "agent_send", json!({"nodeId": beta.node_id, "text": "z", "messageId": "r2"})).await;
}
