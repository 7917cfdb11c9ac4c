//! End to end: `serve` with the real [`SessionCaller`] against the shared fake app (a real
//! loopback tool server, discovery files in a temp dir).

use std::sync::Arc;

use serde_json::{Value, json};
use termsprawl_mcp::SessionCaller;
use termsprawl_protocol::{IntegrationStatus, ToolResult, operations};
use termsprawl_test_support::fake::{FakeApp, default_status, session_info};
use termsprawl_transport::server::handler_fn;

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

/// The shared fake app as a small app: `session_info` as the app answers it, a success, a failure
/// and an image (the screenshot is served although the list leaves it out: `tools/call` is not
/// filtered).
async fn start_app() -> FakeApp {
    let handler = handler_fn(|caller, request| async move {
        match request.operation().unwrap_or_default() {
            "session_info" => {
                ToolResult::ok(session_info(&caller, "7.1.0", false, &served_operations()))
            }
            other => ToolResult::failure(format!("the fake app does not do {other}")),
        }
    });
    let app = FakeApp::builder().status(status()).handler(handler).start().await.unwrap();
    app.answer("canvas_list", ToolResult::ok(json!([{"id": "n1", "kind": "terminal", "x": 1.5}])));
    app.answer("terminal_read", ToolResult::failure("Local terminal not found in this project"));
    app.answer("browser_screenshot", ToolResult::ok(json!({"image": PNG})));
    app
}

fn status() -> IntegrationStatus {
    IntegrationStatus { version: "2.1.200".to_owned(), ..default_status() }
}

fn content(response: &Value) -> &Value {
    &response["result"]["content"]
}

#[tokio::test]
async fn a_session_against_a_real_tool_server() {
    let app = start_app().await;
    let token = app.token();
    let mut bridge = Bridge::start(Arc::new(SessionCaller::new(app.session_file())));
    let mut answers = Vec::new();

    let response = bridge
        .request(&request(json!(0), "initialize", Some(json!({"protocolVersion": "2025-06-18"}))))
        .await;
    assert_eq!(response["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(
        response["result"]["serverInfo"],
        json!({"name": "termsprawl", "title": "termsprawl", "version": "7.1.0"})
    );
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
}

#[tokio::test]
async fn a_running_bridge_survives_an_app_restart() {
    let mut app = start_app().await;
    let session_file = app.session_file().to_path_buf();
    let mut bridge = Bridge::start(Arc::new(SessionCaller::new(&session_file)));
    let response = bridge.request(&call(json!(1), "canvas_list", json!({}))).await;
    assert_eq!(response["result"]["isError"], false);

    app.stop().await;
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
    let token = app.token();
    app.restart().await.unwrap();
    assert_eq!((app.session_file(), app.token()), (session_file.as_path(), token));
    let response = bridge.request(&call(json!(4), "canvas_list", json!({}))).await;
    assert_eq!(response["result"]["isError"], false);
    let response = bridge.request(&request(json!(5), "initialize", None)).await;
    assert_eq!(response["result"]["serverInfo"]["version"], "7.1.0");
}

#[tokio::test]
async fn calls_in_flight_reach_the_server_concurrently() {
    let app = FakeApp::builder().status(status()).start().await.unwrap();
    app.hold_all();
    let mut bridge = Bridge::start(Arc::new(SessionCaller::new(app.session_file())));
    for index in 0..8 {
        bridge
            .send_json(&call(json!(index), "sticky_open", json!({"text": format!("{index}")})))
            .await;
    }
    // All eight are at the server at the same time, and ping is answered meanwhile.
    for _ in 0..8 {
        app.next_held().await;
    }
    let response = bridge.request(&request(json!("p"), "ping", None)).await;
    assert_eq!(response["result"], json!({}));
    app.release(8);
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
}
