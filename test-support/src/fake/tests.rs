//! Unit tests of the fake app, over real loopback HTTP through the transport crate's client.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use termsprawl_protocol::{ToolRequest, ToolResult};

use super::{DATA_DIR_NAME, FakeApp, NODE_ID, PROJECT_ID, Received, default_status, session_info};
use termsprawl_transport::server::handler_fn;
use termsprawl_transport::{call, call_blocking};

const PATIENCE: Duration = Duration::from_secs(30);

fn read(operation: &str, node_id: &str) -> ToolRequest {
    ToolRequest::new(operation, &json!({"nodeId": node_id}))
}

#[tokio::test]
async fn defaults_lay_out_a_temp_dir_and_echo_the_arguments() {
    let app = FakeApp::start().await.unwrap();
    let temp = app.temp_dir().unwrap().to_path_buf();
    assert_eq!(app.data_dir(), temp.join(DATA_DIR_NAME));
    assert_eq!(app.session_file(), app.data_dir().join("sessions").join("agent-1.json"));
    assert_eq!(
        (app.identity().node_id.as_str(), app.identity().project_id.as_str()),
        (NODE_ID, PROJECT_ID)
    );
    let port = app.port().unwrap();
    assert_eq!(app.url(), Some(format!("http://127.0.0.1:{port}/call").as_str()));
    let session: Value =
        serde_json::from_slice(&std::fs::read(app.session_file()).unwrap()).unwrap();
    assert_eq!(session["status"], serde_json::to_value(default_status()).unwrap());
    assert_eq!(app.token().len(), 64);
    assert!(!format!("{app:?}").contains(&app.token()));

    let request = ToolRequest::new("canvas_move", &json!({"y": 2, "nodeId": "n", "x": 1.5}));
    let result = call(app.session_file(), &request).await;
    assert_eq!(
        serde_json::to_string(&result).unwrap(),
        r#"{"ok":true,"value":{"y":2,"nodeId":"n","x":1.5}}"#
    );
    assert_eq!(
        app.take_received(),
        [Received {
            node_id: "agent-1".to_owned(),
            operation: "canvas_move".to_owned(),
            args: r#"{"y":2,"nodeId":"n","x":1.5}"#.to_owned(),
        }]
    );
    assert_eq!(app.take_received(), []);
    drop(app);
    assert!(!temp.exists());
}

#[tokio::test]
async fn a_queued_answer_comes_before_the_operation_s_answer_before_the_handler() {
    let handler = handler_fn(|caller, request| async move {
        ToolResult::ok(
            json!({"from": "handler", "node": caller.node_id(), "op": request.operation()}),
        )
    });
    let app = FakeApp::builder().identity("n-7", "p-7").handler(handler).start().await.unwrap();
    app.answer("terminal_read", ToolResult::failure("Local terminal not found in this project"));
    app.respond(ToolResult::ok(json!("queued")));

    let answers = [
        ToolResult::ok(json!("queued")),
        ToolResult::failure("Local terminal not found in this project"),
        ToolResult::failure("Local terminal not found in this project"),
    ];
    for expected in answers {
        assert_eq!(call(app.session_file(), &read("terminal_read", "t")).await, expected);
    }
    assert_eq!(
        call(app.session_file(), &ToolRequest::new("canvas_list", &json!({}))).await,
        ToolResult::ok(json!({"from": "handler", "node": "n-7", "op": "canvas_list"}))
    );
    // Validation happens before the script: an invalid request is never recorded.
    let invalid = call(app.session_file(), &ToolRequest::new("terminal_read", &json!({}))).await;
    assert_eq!(invalid, ToolResult::failure("Missing argument: nodeId"));
    let operations: Vec<String> =
        app.take_received().into_iter().map(|received| received.operation).collect();
    assert_eq!(operations, ["terminal_read", "terminal_read", "terminal_read", "canvas_list"]);
}

#[tokio::test]
async fn held_requests_wait_for_a_release_and_others_pass() {
    let app = Arc::new(FakeApp::start().await.unwrap());
    app.hold_when(|request| request.args_value()["nodeId"] == "slow");
    let slow = {
        let app = Arc::clone(&app);
        tokio::spawn(async move { call(app.session_file(), &read("terminal_read", "slow")).await })
    };
    let held = app.next_held().await;
    assert_eq!(
        (held.operation.as_str(), held.args.as_str()),
        ("terminal_read", r#"{"nodeId":"slow"}"#)
    );
    // Another request is not held meanwhile.
    let quick = call(app.session_file(), &read("terminal_read", "quick")).await;
    assert_eq!(quick, ToolResult::ok(json!({"nodeId": "quick"})));
    assert!(!slow.is_finished());
    app.release(1);
    assert_eq!(slow.await.unwrap(), ToolResult::ok(json!({"nodeId": "slow"})));

    // A release given before the request arrives lets the next held one through at once.
    app.hold_all();
    app.release(1);
    assert_eq!(
        call(app.session_file(), &read("terminal_read", "x")).await,
        ToolResult::ok(json!({"nodeId": "x"}))
    );
    assert_eq!(app.next_held().await.args, r#"{"nodeId":"x"}"#);
}

#[tokio::test]
async fn stop_keeps_the_directory_and_restart_keeps_the_session() {
    let mut app = FakeApp::start().await.unwrap();
    app.answer("canvas_list", ToolResult::ok(json!([])));
    let token = app.token();
    let session_file = app.session_file().to_path_buf();
    let endpoint = app.data_dir().join("endpoint.json");
    assert!(endpoint.exists());

    app.stop().await;
    assert!(!app.is_running());
    assert_eq!((app.port(), app.url()), (None, None));
    assert!(!endpoint.exists());
    assert!(session_file.exists());
    let list = ToolRequest::new("canvas_list", &json!({}));
    let ToolResult::Failure { error } = call(&session_file, &list).await else {
        panic!("a call to a stopped app succeeded")
    };
    assert!(error.starts_with("Tool connection unavailable: "), "{error}");
    app.stop().await;

    app.restart().await.unwrap();
    assert!(app.is_running());
    assert_eq!(app.session_file(), session_file);
    assert_eq!(app.token(), token);
    assert!(endpoint.exists());
    assert_eq!(call(&session_file, &list).await, ToolResult::ok(json!([])));
    assert_eq!(app.take_received().len(), 1);

    let server = app.take_server().unwrap();
    assert!(!app.is_running());
    drop(server);
    assert!(!endpoint.exists());
}

#[tokio::test]
async fn a_given_directory_is_used_and_kept() {
    let dir = tempfile::TempDir::new().unwrap();
    let data_dir = dir.path().join("d");
    let app = FakeApp::builder().data_dir(&data_dir).recording(false).start().await.unwrap();
    assert_eq!(app.temp_dir(), None);
    let result = call(app.session_file(), &read("terminal_read", "t")).await;
    assert_eq!(result, ToolResult::ok(json!({"nodeId": "t"})));
    assert_eq!(app.take_received(), []);
    assert_eq!(app.data_dir(), data_dir);
    assert_eq!(app.server().data_dir(), data_dir);
    drop(app);
    assert!(data_dir.join("sessions").join("agent-1.json").exists());
}

#[test]
fn the_blocking_app_serves_while_its_user_blocks() {
    let mut app = FakeApp::builder().start_blocking().unwrap();
    let temp = app.temp_dir().unwrap().to_path_buf();
    app.respond(ToolResult::ok(json!("first")));
    assert_eq!(
        call_blocking(app.session_file(), &read("terminal_read", "t")),
        ToolResult::ok(json!("first"))
    );

    app.hold_all();
    let session_file = app.session_file().to_path_buf();
    let caller =
        std::thread::spawn(move || call_blocking(&session_file, &read("terminal_read", "h")));
    assert_eq!(app.wait_held(PATIENCE).unwrap().args, r#"{"nodeId":"h"}"#);
    app.release(1);
    assert_eq!(caller.join().unwrap(), ToolResult::ok(json!({"nodeId": "h"})));
    assert_eq!(app.take_received().len(), 2);

    app.stop();
    assert!(!app.data_dir().join("endpoint.json").exists());
    app.restart().unwrap();
    assert!(app.data_dir().join("endpoint.json").exists());
    drop(app);
    assert!(!temp.exists());
}

#[tokio::test]
async fn session_info_has_the_app_s_shape() {
    let handler = handler_fn(|caller, _| async move {
        ToolResult::ok(session_info(&caller, "1.2.3", false, &["session_info", "canvas_list"]))
    });
    let app = FakeApp::builder().handler(handler).start().await.unwrap();
    let result = call(app.session_file(), &ToolRequest::new("session_info", &json!({}))).await;
    let data_dir = app.data_dir().display();
    let expected = json!({
        "nodeId": "agent-1",
        "projectId": "p1",
        "instanceId": app.server().instance_id(),
        "host": "local",
        "status": default_status(),
        "appVersion": "1.2.3",
        "preferencesFile": format!("{data_dir}/preferences.json"),
        "guidesDirectory": format!("{data_dir}/launch/agent-1/skills"),
        "browserEnabled": false,
        "operations": ["session_info", "canvas_list"],
    });
    assert_eq!(
        serde_json::to_string(&result).unwrap(),
        serde_json::to_string(&ToolResult::ok(expected)).unwrap()
    );
}
