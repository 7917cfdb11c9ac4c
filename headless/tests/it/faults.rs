//! Faults under what headless stands on (issue 29): tmux sessions and the tmux server going away,
//! over real tmux and the real server.

use serde_json::{Value, json};

use crate::support::{Agent, Fixture, node, ok};

fn id(value: &Value) -> String {
    value["nodeId"].as_str().unwrap().to_owned()
}

/// `(running, exitCode)` of an answer.
fn status(value: &Value) -> (Value, Value) {
    (value["running"].clone(), value["exitCode"].clone())
}

/// The three ways an agent asks whether a node runs: a plain read, a read with `since`, a wait
/// for its exit. They must agree.
async fn three_answers(agent: &Agent, node_id: &str) -> [Value; 3] {
    let plain = ok(agent, "terminal_read", json!({"nodeId": node_id})).await;
    let since = ok(agent, "terminal_read", json!({"nodeId": node_id, "since": 0})).await;
    let wait =
        ok(agent, "terminal_wait", json!({"nodeId": node_id, "until": "exit", "timeoutMs": 5000}))
            .await;
    [plain, since, wait]
}

/// tmux 3.3a answers `display-message` about a session that does not exist with exit 0 and empty
/// fields: a shell whose user typed `exit` (while other sessions live) and a run node whose
/// session tmux lost read as not running, the same way in every answer.
#[tokio::test(flavor = "multi_thread")]
async fn a_gone_session_reads_as_not_running() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;

    let shell = id(&ok(&agent, "terminal_open", json!({})).await);
    ok(&agent, "terminal_submit", json!({"nodeId": shell, "command": "echo bye-shell; exit"}))
        .await;
    let [plain, since, wait] = three_answers(&agent, &shell).await;
    assert_eq!(wait["reached"], json!(true), "{wait}");
    for answer in [&plain, &since, &wait] {
        assert_eq!(status(answer), (json!(false), Value::Null), "{answer}");
    }
    assert!(since["output"].as_str().unwrap().contains("bye-shell"), "{since}");
    assert!(plain["output"].as_str().unwrap().contains("bye-shell"), "{plain}");

    let run = ok(
        &agent,
        "terminal_run",
        json!({"command": "echo out-seven; exit 7", "timeoutMs": 20000}),
    )
    .await;
    assert_eq!(status(&run), (json!(false), json!(7)), "{run}");
    let run = id(&run);
    // tmux loses the session (as when its server is killed and another one started).
    fixture.guard.tmux(&["kill-session", "-t", &format!("=ts-{run}")]);
    let [plain, since, wait] = three_answers(&agent, &run).await;
    assert_eq!(wait["reached"], json!(true), "{wait}");
    for answer in [&plain, &since, &wait] {
        assert_eq!(status(answer), (json!(false), json!(7)), "{answer}");
        assert!(answer["output"].as_str().unwrap().contains("out-seven"), "{answer}");
    }
    // canvas_list shows neither as attached.
    for node_id in [&shell, &run] {
        assert_eq!(node(&agent, node_id).await["attached"], json!(false));
    }
}
