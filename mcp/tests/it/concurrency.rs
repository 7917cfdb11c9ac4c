//! Calls in flight, out-of-order answers and cancellation (`spec/mcp.md` §3.6).

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Value, json};
use termsprawl_mcp::Options;
use termsprawl_protocol::ToolResult;

use crate::support::{Bridge, Fake, call, cancel, pretty, request};

fn gated(id: Value, gate: &str) -> Value {
    call(id, "terminal_read", json!({"nodeId": "t1", "gate": gate}))
}

fn text_of(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().expect("a text block")
}

#[tokio::test]
async fn calls_in_flight_are_answered_in_the_order_they_finish() {
    let fake = Fake::new();
    let gates: Vec<_> = ["a", "b", "c"].iter().map(|name| fake.gate(name)).collect();
    let mut bridge = Bridge::start(fake.clone());
    bridge.send_json(&gated(json!(1), "a")).await;
    bridge.send_json(&gated(json!("two"), "b")).await;
    bridge.send_json(&gated(json!(3), "c")).await;
    // All three are in flight; the bridge still answers at once.
    let (answers, _) = bridge.settle().await;
    assert!(answers.is_empty());
    let mut gates = gates.into_iter();
    let (a, b, c) = (gates.next().unwrap(), gates.next().unwrap(), gates.next().unwrap());
    c.send(ToolResult::ok(json!("third"))).unwrap();
    let response = bridge.recv().await;
    assert_eq!(response["id"], 3);
    assert_eq!(text_of(&response), r#"{"ok":true,"value":"third"}"#);
    a.send(ToolResult::ok(json!("first"))).unwrap();
    let response = bridge.recv().await;
    assert_eq!(response["id"], 1);
    assert_eq!(text_of(&response), r#"{"ok":true,"value":"first"}"#);
    b.send(ToolResult::failure("second")).unwrap();
    let response = bridge.recv().await;
    assert_eq!(response["id"], "two");
    assert_eq!(response["result"]["isError"], true);
    let (served, rest, logs) = bridge.close().await;
    served.unwrap();
    assert!(rest.is_empty() && logs.is_empty());
}

#[tokio::test]
async fn many_calls_in_flight_are_all_answered_once() {
    let fake = Fake::new();
    let mut bridge = Bridge::start(fake.clone());
    let mut gates = Vec::new();
    for index in 0..40 {
        gates.push(fake.gate(&format!("g{index}")));
        bridge.send_json(&gated(json!(index), &format!("g{index}"))).await;
    }
    bridge.settle().await;
    // Release in reverse order.
    for (index, gate) in gates.into_iter().enumerate().rev() {
        gate.send(ToolResult::ok(json!(index))).unwrap();
    }
    let mut seen = HashSet::new();
    for _ in 0..40 {
        let response = bridge.recv().await;
        let id = response["id"].as_i64().unwrap();
        assert_eq!(text_of(&response), format!(r#"{{"ok":true,"value":{id}}}"#));
        assert!(seen.insert(id), "id {id} answered twice");
    }
    let (served, rest, _) = bridge.close().await;
    served.unwrap();
    assert!(rest.is_empty());
}

#[tokio::test]
async fn a_cancelled_call_is_never_answered_while_a_ping_meanwhile_is() {
    let fake = Fake::new();
    let _gate = fake.gate("slow");
    let mut bridge = Bridge::start(fake.clone());
    bridge.send_json(&gated(json!(5), "slow")).await;
    assert_eq!(fake.started().await, "slow");
    bridge.send_json(&cancel(json!(5))).await;
    let response = bridge.request(&request(json!(6), "ping", None)).await;
    assert_eq!(response["result"], json!({}));
    // The bridge abandoned the call: its future was dropped, so it can never be answered.
    assert_eq!(fake.dropped().await, "slow");
    let (served, rest, logs) = bridge.close().await;
    served.unwrap();
    assert_eq!(rest, Vec::<Value>::new());
    assert_eq!(logs, Vec::<String>::new());
}

#[tokio::test]
async fn a_cancellation_must_match_the_id_type_and_value() {
    let fake = Fake::new();
    let gate_number = fake.gate("number");
    let gate_string = fake.gate("string");
    let mut bridge = Bridge::start(fake.clone());
    bridge.send_json(&gated(json!(1), "number")).await;
    bridge.send_json(&gated(json!("1"), "string")).await;
    fake.started().await;
    fake.started().await;
    bridge.send_json(&cancel(json!("01"))).await;
    bridge.send_json(&cancel(json!(2))).await;
    bridge.send_json(&cancel(json!(1.0))).await;
    bridge.send_json(&cancel(json!(null))).await;
    bridge.assert_silent().await;
    // Cancel the string one only.
    bridge.send_json(&cancel(json!("1"))).await;
    assert_eq!(fake.dropped().await, "string");
    gate_number.send(ToolResult::ok(json!("n"))).unwrap();
    let response = bridge.recv().await;
    assert_eq!(response["id"], 1);
    drop(gate_string);
    let (served, rest, _) = bridge.close().await;
    served.unwrap();
    assert!(rest.is_empty());
}

#[tokio::test]
async fn a_cancellation_applies_to_the_most_recent_call_with_a_reused_id() {
    let fake = Fake::new();
    let older = fake.gate("older");
    let _newer = fake.gate("newer");
    let mut bridge = Bridge::start(fake.clone());
    bridge.send_json(&gated(json!(9), "older")).await;
    bridge.send_json(&gated(json!(9), "newer")).await;
    let mut started = [fake.started().await, fake.started().await];
    started.sort();
    assert_eq!(started, ["newer", "older"]);
    bridge.send_json(&cancel(json!(9))).await;
    assert_eq!(fake.dropped().await, "newer");
    older.send(ToolResult::ok(json!("older"))).unwrap();
    let response = bridge.recv().await;
    assert_eq!(response["id"], 9);
    assert_eq!(text_of(&response), r#"{"ok":true,"value":"older"}"#);
    let (served, rest, _) = bridge.close().await;
    served.unwrap();
    assert!(rest.is_empty());
}

#[tokio::test]
async fn both_calls_with_a_reused_id_are_answered() {
    let fake = Fake::new();
    let mut bridge = Bridge::start(fake.clone());
    bridge.send_json(&call(json!(4), "canvas_list", json!({}))).await;
    bridge.send_json(&call(json!(4), "agent_status", json!({}))).await;
    let first = bridge.recv().await;
    let second = bridge.recv().await;
    assert_eq!((first["id"].clone(), second["id"].clone()), (json!(4), json!(4)));
}

#[tokio::test]
async fn a_cancellation_of_an_initialize_is_ignored() {
    let fake = Fake::new();
    let gate = fake.gate("session_info");
    let mut bridge = Bridge::start(fake.clone());
    bridge.send_json(&request(json!(1), "initialize", None)).await;
    bridge.send_json(&cancel(json!(1))).await;
    bridge.assert_silent().await;
    gate.send(ToolResult::ok(json!({"appVersion": "2.0.0"}))).unwrap();
    let response = bridge.recv().await;
    assert_eq!(response["id"], 1);
    assert_eq!(response["result"]["serverInfo"]["version"], "2.0.0");
}

#[tokio::test]
async fn unknown_and_finished_ids_are_ignored_by_cancellation() {
    let fake = Fake::new();
    let mut bridge = Bridge::start(fake.clone());
    let response = bridge.request(&call(json!(1), "canvas_list", json!({}))).await;
    assert_eq!(response["result"]["isError"], false);
    bridge.send_json(&cancel(json!(1))).await;
    bridge.send_json(&cancel(json!(77))).await;
    bridge.send_json(&cancel(json!("x"))).await;
    bridge.assert_silent().await;
}

#[tokio::test]
async fn reading_ping_and_cancellation_go_on_at_the_call_limit() {
    let fake = Fake::new();
    let first = fake.gate("first");
    let _second = fake.gate("second");
    let third = fake.gate("third");
    let mut bridge = Bridge::start_with(fake.clone(), Options::default().max_calls_in_flight(1));
    bridge.send_json(&gated(json!(1), "first")).await;
    bridge.send_json(&gated(json!(2), "second")).await;
    bridge.send_json(&gated(json!(3), "third")).await;
    // Only the first reached the tool server; the others wait for a slot.
    let response = bridge.request(&request(json!("p"), "ping", None)).await;
    assert_eq!(response["result"], json!({}));
    assert_eq!(fake.calls().len(), 1);
    bridge.send_json(&cancel(json!(2))).await;
    bridge.settle().await;
    first.send(ToolResult::ok(json!(1))).unwrap();
    assert_eq!(bridge.recv().await["id"], 1);
    // The cancelled second call never reaches the server; the third gets the slot.
    third.send(ToolResult::ok(json!(3))).unwrap();
    assert_eq!(bridge.recv().await["id"], 3);
    let operations: Vec<Value> =
        fake.calls().iter().map(|call| call.args_value()["gate"].clone()).collect();
    assert_eq!(operations, [json!("first"), json!("third")]);
}

#[tokio::test]
async fn a_panicking_call_is_an_internal_error_and_the_bridge_goes_on() {
    let fake = Fake::new();
    fake.panic_on("canvas_list");
    let mut bridge = Bridge::start(fake.clone());
    let response = bridge.request(&call(json!(1), "canvas_list", json!({}))).await;
    assert_eq!(response["error"]["code"], -32603);
    let message = response["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("Internal error: "), "{message}");
    insta::assert_snapshot!(pretty(&response));
    let response = bridge.request(&request(json!(2), "ping", None)).await;
    assert_eq!(response["result"], json!({}));
    let logs = bridge.take_logs();
    assert_eq!(logs, ["the task answering id 1 panicked"]);
}

#[tokio::test]
async fn an_initialize_runs_concurrently_with_calls() {
    let fake = Fake::new();
    let gate = fake.gate("call");
    let mut bridge = Bridge::start(Arc::clone(&fake) as Arc<dyn termsprawl_mcp::ToolCaller>);
    bridge.send_json(&gated(json!(1), "call")).await;
    let response = bridge.request(&request(json!(2), "initialize", None)).await;
    assert_eq!(response["result"]["serverInfo"]["name"], "termsprawl");
    gate.send(ToolResult::ok_empty()).unwrap();
    assert_eq!(bridge.recv().await["id"], 1);
}
