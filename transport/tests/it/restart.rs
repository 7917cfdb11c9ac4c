//! The client against the real server half: an app restart on a new port between two calls of
//! one client, and a rough latency figure.

use std::time::Instant;

use serde_json::{Value, json};
use tempfile::TempDir;
use termsprawl_protocol::{ToolRequest, ToolResult};
use termsprawl_transport::Client;
use termsprawl_transport::server::ToolServer;

use crate::support::{check_failure, identity, scripted_handler, status};

fn echo() -> ToolRequest {
    ToolRequest::new("canvas_select", &json!({"nodeIds": ["n1"]}))
}

fn instance_of(result: &ToolResult) -> String {
    let ToolResult::Success { value: Some(Value::Object(value)) } = result else {
        panic!("expected an echo, got {result:?}")
    };
    value["instanceId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_client_survives_an_app_restart() {
    let dir = TempDir::new().unwrap();
    let data_dir = dir.path().join("agent-tools");
    let client = Client::default();

    let first = ToolServer::start(&data_dir, scripted_handler()).await.unwrap();
    let session_file =
        first.provision_session(identity("agent-1", "p"), status("s"), false).unwrap();
    let token = std::fs::read_to_string(&session_file).unwrap();
    let result = client.call(&session_file, &echo()).await;
    assert_eq!(instance_of(&result), first.instance_id());
    let first_instance = first.instance_id().to_owned();
    first.close().await;

    // Between runs: a connection failure, not a hang.
    check_failure(&client.call(&session_file, &echo()).await);

    let second = ToolServer::start(&data_dir, scripted_handler()).await.unwrap();
    let reused = second.provision_session(identity("agent-1", "p"), status("other"), true).unwrap();
    assert_eq!(reused, session_file);
    assert_eq!(std::fs::read_to_string(&session_file).unwrap(), token);
    let result = client.call(&session_file, &echo()).await;
    assert_eq!(instance_of(&result), second.instance_id());
    assert_ne!(second.instance_id(), first_instance);
    second.close().await;
}

#[test]
fn call_blocking_against_the_real_server() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = TempDir::new().unwrap();
    let server = runtime.block_on(ToolServer::start(dir.path(), scripted_handler())).unwrap();
    let session_file =
        server.provision_session(identity("agent-1", "p"), status("s"), false).unwrap();
    // The blocking client runs on this thread, outside the server's runtime.
    let result = termsprawl_transport::call_blocking(&session_file, &echo());
    assert_eq!(instance_of(&result), server.instance_id());
    runtime.block_on(server.close());
}

/// Not an assertion: prints how long one call takes against the in-process server, for the
/// record (`cargo test -p termsprawl-transport --test it latency -- --nocapture`).
#[test]
fn latency_of_one_call() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = TempDir::new().unwrap();
    let server = runtime.block_on(ToolServer::start(dir.path(), scripted_handler())).unwrap();
    let session_file =
        server.provision_session(identity("agent-1", "p"), status("s"), false).unwrap();
    let client = Client::default();
    let request = echo();
    let rounds = 300_u32;

    let mean = |call: &dyn Fn() -> ToolResult| {
        for _ in 0..20 {
            assert!(call().is_ok());
        }
        let started = Instant::now();
        for _ in 0..rounds {
            assert!(call().is_ok());
        }
        started.elapsed() / rounds
    };
    let in_runtime = mean(&|| runtime.block_on(client.call(&session_file, &request)));
    let blocking = mean(&|| client.call_blocking(&session_file, &request));
    eprintln!(
        "one call against the in-process server, mean of {rounds}: Client::call {in_runtime:?}, \
         call_blocking (runtime built per call) {blocking:?}"
    );
    runtime.block_on(server.close());
}
