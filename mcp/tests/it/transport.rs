//! End to end: `serve` with the real [`SessionCaller`] against a real loopback
//! [`ToolServer`], discovery files in a temp dir.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tempfile::TempDir;
use termsprawl_mcp::SessionCaller;
use termsprawl_protocol::{
    IntegrationState, IntegrationStatus, ToolIdentity, ToolResult, operations,
};
use termsprawl_transport::server::{ToolHandler, ToolServer, handler_fn};

use crate::support::{Bridge, call, request};

/// A one-pixel PNG, base64.
pub(crate) const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// The operations the fake app serves: everything but the browser tools (browser control off).
fn served_operations() -> Vec<&'static str> {
    operations()
        .iter()
        .map(termsprawl_protocol::Operation::name)
        .filter(|name| !name.starts_with("browser_"))
        .collect()
}

/// A small app: `session_info` as the app answers it, a success, a failure and an image (the
/// screenshot is served although the list leaves it out: `tools/call` is not filtered).
fn app() -> Arc<dyn ToolHandler> {
    handler_fn(|caller, request| async move {
        match request.operation().unwrap_or_default() {
            "session_info" => ToolResult::ok(json!({
                "nodeId": caller.node_id(),
                "projectId": caller.project_id(),
                "instanceId": caller.instance_id(),
                "host": "local",
                "status": caller.status(),
                "appVersion": "7.1.0",
                "preferencesFile": caller.data_dir().join("preferences.json"),
                "guidesDirectory": caller.data_dir().join("launch").join(caller.node_id()).join("skills"),
                "browserEnabled": false,
                "operations": served_operations(),
            })),
            "canvas_list" => ToolResult::ok(json!([{"id": "n1", "kind": "terminal", "x": 1.5}])),
            "terminal_read" => ToolResult::failure("Local terminal not found in this project"),
            "browser_screenshot" => ToolResult::ok(json!({"image": PNG})),
            other => ToolResult::failure(format!("the fake app does not do {other}")),
        }
    })
}

fn status() -> IntegrationStatus {
    IntegrationStatus {
        state: IntegrationState::NeedsSetup,
        adapter: "claude-mcp".to_owned(),
        version: "2.1.200".to_owned(),
        reason: "Waiting for the agent to connect to MCP".to_owned(),
    }
}

async fn start_app(data_dir: &Path, reuse: bool) -> (ToolServer, PathBuf) {
    let server = ToolServer::start(data_dir, app()).await.unwrap();
    let identity = ToolIdentity { node_id: "agent-1".to_owned(), project_id: "p1".to_owned() };
    let session_file = server.provision_session(identity, status(), reuse).unwrap();
    (server, session_file)
}

fn token_of(session_file: &Path) -> String {
    let session: Value = serde_json::from_slice(&std::fs::read(session_file).unwrap()).unwrap();
    session["token"].as_str().unwrap().to_owned()
}

fn content(response: &Value) -> &Value {
    &response["result"]["content"]
}

#[tokio::test]
async fn a_session_against_a_real_tool_server() {
    let dir = TempDir::new().unwrap();
    let (server, session_file) = start_app(dir.path(), false).await;
    let token = token_of(&session_file);
    let mut bridge = Bridge::start(Arc::new(SessionCaller::new(&session_file)));
    let mut answers = Vec::new();

    let response = bridge
        .request(&request(json!(0), "initialize", Some(json!({"protocolVersion": "2025-06-18"}))))
        .await;
    assert_eq!(response["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(response["result"]["serverInfo"], json!({"name": "termsprawl", "version": "7.1.0"}));
    answers.push(response);

    let response = bridge.request(&request(json!(1), "tools/list", None)).await;
    let names: Vec<&str> = response["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, served_operations());
    answers.push(response);

    let response = bridge.request(&call(json!(2), "canvas_list", json!({}))).await;
    assert_eq!(response["result"]["isError"], false);
    assert_eq!(
        content(&response),
        &json!([{"type": "text", "text": r#"{"ok":true,"value":[{"id":"n1","kind":"terminal","x":1.5}]}"#}])
    );
    answers.push(response);

    let response = bridge.request(&call(json!(3), "terminal_read", json!({"nodeId": "t9"}))).await;
    assert_eq!(response["result"]["isError"], true);
    assert_eq!(
        content(&response),
        &json!([{"type": "text", "text": r#"{"ok":false,"error":"Local terminal not found in this project"}"#}])
    );
    answers.push(response);

    let response =
        bridge.request(&call(json!(4), "browser_screenshot", json!({"nodeId": "b1"}))).await;
    assert_eq!(
        response["result"],
        json!({"isError": false, "content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]})
    );
    answers.push(response);

    // The tool server validates the arguments; its complaint is a result the model can read.
    let response = bridge.request(&call(json!(5), "terminal_read", json!({}))).await;
    assert_eq!(
        content(&response),
        &json!([{"type": "text", "text": r#"{"ok":false,"error":"Missing argument: nodeId"}"#}])
    );
    answers.push(response);

    let response = bridge.request(&call(json!(6), "no_such_tool", json!({}))).await;
    assert_eq!(response["error"], json!({"code": -32602, "message": "Unknown tool: no_such_tool"}));
    answers.push(response);

    let (outcome, rest, logs) = bridge.close().await;
    outcome.unwrap();
    assert!(rest.is_empty());
    for line in answers.iter().map(Value::to_string).chain(logs) {
        assert!(!line.contains(&token), "the token leaked into {line}");
    }
    server.close().await;
}

#[tokio::test]
async fn a_running_bridge_survives_an_app_restart() {
    let dir = TempDir::new().unwrap();
    let (server, session_file) = start_app(dir.path(), false).await;
    let mut bridge = Bridge::start(Arc::new(SessionCaller::new(&session_file)));
    let response = bridge.request(&call(json!(1), "canvas_list", json!({}))).await;
    assert_eq!(response["result"]["isError"], false);

    server.close().await;
    // While the app is away, calls are isError results, never protocol errors.
    let response = bridge.request(&call(json!(2), "canvas_list", json!({}))).await;
    assert_eq!(response["result"]["isError"], true);
    let text = content(&response)[0]["text"].as_str().unwrap();
    let failure: Value = serde_json::from_str(text).unwrap();
    let error = failure["error"].as_str().unwrap();
    assert!(error.starts_with("Tool connection unavailable: "), "{error}");
    assert!(
        error.ends_with(
            ". Check that termsprawl is running. Mutations are not automatically retried."
        ),
        "{error}"
    );
    // initialize fails with the same string as a JSON-RPC error.
    let response = bridge.request(&request(json!(3), "initialize", None)).await;
    assert_eq!(response["error"]["code"], -32603);
    assert_eq!(response["error"]["message"], error);

    // The app comes back on a new port, reusing the session: the bridge finds it again.
    let (server, again) = start_app(dir.path(), true).await;
    assert_eq!(again, session_file);
    let response = bridge.request(&call(json!(4), "canvas_list", json!({}))).await;
    assert_eq!(response["result"]["isError"], false);
    let response = bridge.request(&request(json!(5), "initialize", None)).await;
    assert_eq!(response["result"]["serverInfo"]["version"], "7.1.0");
    server.close().await;
}

#[tokio::test]
async fn calls_in_flight_reach_the_server_concurrently() {
    let dir = TempDir::new().unwrap();
    let (release_tx, release_rx) = tokio::sync::watch::channel(false);
    let (arrived_tx, mut arrived_rx) = tokio::sync::mpsc::unbounded_channel();
    let handler = handler_fn(move |_, request| {
        let mut release = release_rx.clone();
        let arrived = arrived_tx.clone();
        async move {
            let _ = arrived.send(());
            release.wait_for(|released| *released).await.unwrap();
            ToolResult::ok(request.args_value())
        }
    });
    let server = ToolServer::start(dir.path(), handler).await.unwrap();
    let identity = ToolIdentity { node_id: "agent-1".to_owned(), project_id: "p1".to_owned() };
    let session_file = server.provision_session(identity, status(), false).unwrap();
    let mut bridge = Bridge::start(Arc::new(SessionCaller::new(&session_file)));
    for index in 0..8 {
        bridge
            .send_json(&call(json!(index), "sticky_open", json!({"text": format!("{index}")})))
            .await;
    }
    // All eight are at the server at the same time, and ping is answered meanwhile.
    for _ in 0..8 {
        arrived_rx.recv().await.unwrap();
    }
    let response = bridge.request(&request(json!("p"), "ping", None)).await;
    assert_eq!(response["result"], json!({}));
    release_tx.send(true).unwrap();
    let mut ids: Vec<i64> = Vec::new();
    for _ in 0..8 {
        let response = bridge.recv().await;
        let id = response["id"].as_i64().unwrap();
        assert_eq!(
            content(&response)[0]["text"],
            format!(r#"{{"ok":true,"value":{{"text":"{id}"}}}}"#)
        );
        ids.push(id);
    }
    ids.sort_unstable();
    assert_eq!(ids, (0..8).collect::<Vec<_>>());
    server.close().await;
}
