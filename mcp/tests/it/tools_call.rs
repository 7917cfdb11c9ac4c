//! `tools/call`: parameter rules, forwarding and the mapping of results (`spec/mcp.md` §3.5).

use serde_json::{Value, json};
use termsprawl_mcp::{MAX_RESPONSE_BYTES, RequestId, call_response_line};
use termsprawl_protocol::ToolResult;

use crate::support::{Bridge, Fake, call, pretty, request};

/// Calls `operation` on a fake scripted to answer `result`; the response.
async fn answer_of(result: ToolResult) -> Value {
    let fake = Fake::new();
    fake.answer("browser_screenshot", result);
    let mut bridge = Bridge::start(fake);
    bridge.request(&call(json!(1), "browser_screenshot", json!({"nodeId": "b1"}))).await
}

#[tokio::test]
async fn params_without_a_string_name_are_invalid_params() {
    let fake = Fake::new();
    let mut bridge = Bridge::start(fake.clone());
    let mut answers = Vec::new();
    for params in [None, Some(json!({})), Some(json!({"name": 5})), Some(json!({"name": null}))] {
        answers.push(bridge.request(&request(json!(1), "tools/call", params)).await);
    }
    insta::assert_snapshot!(pretty(&answers));
    assert!(fake.calls().is_empty());
}

#[tokio::test]
async fn an_unknown_tool_is_invalid_params() {
    let fake = Fake::new();
    let mut bridge = Bridge::start(fake.clone());
    for name in ["nope", "", "Session_info", "mcp__termsprawl__canvas_list"] {
        let response = bridge.request(&call(json!(7), name, json!({}))).await;
        assert_eq!(
            response,
            json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": format!("Unknown tool: {name}")}})
        );
    }
    assert!(fake.calls().is_empty());
}

#[tokio::test]
async fn a_filtered_out_tool_can_still_be_called() {
    let fake = Fake::new();
    fake.session_info(json!({"operations": ["session_info"]}));
    let mut bridge = Bridge::start(fake.clone());
    bridge.request(&request(json!(1), "initialize", None)).await;
    let response = bridge.request(&call(json!(2), "browser_list", json!({}))).await;
    assert_eq!(response["result"]["isError"], false);
}

#[tokio::test]
async fn arguments_are_forwarded_as_given() {
    let fake = Fake::new();
    let mut bridge = Bridge::start(fake.clone());
    // Absent and null mean {}.
    bridge.request(&request(json!(1), "tools/call", Some(json!({"name": "canvas_list"})))).await;
    bridge
        .request(&request(
            json!(2),
            "tools/call",
            Some(json!({"name": "canvas_list", "arguments": null})),
        ))
        .await;
    // Member order, number literals and unknown or invalid arguments pass through unchanged: the
    // tool server validates. (serde_json spells an exponent `e+2` whatever its input spelling,
    // which changes no value.)
    bridge
        .send(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"canvas_move","arguments":{"y":1e2,"nodeId":"n","x":12345678901234567890.50,"z":-0,"extra":[null]}}}"#,
        )
        .await;
    bridge.recv().await;
    let bodies: Vec<String> =
        fake.calls().iter().map(termsprawl_protocol::ToolRequest::to_body).collect();
    assert_eq!(
        bodies,
        [
            r#"{"operation":"canvas_list","args":{}}"#,
            r#"{"operation":"canvas_list","args":{}}"#,
            r#"{"operation":"canvas_move","args":{"y":1e+2,"nodeId":"n","x":12345678901234567890.50,"z":-0,"extra":[null]}}"#,
        ]
    );
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_invalid_params() {
    let fake = Fake::new();
    let mut bridge = Bridge::start(fake.clone());
    let mut answers = Vec::new();
    for arguments in [json!([]), json!("{}"), json!(1), json!(true)] {
        answers.push(bridge.request(&call(json!(1), "canvas_list", arguments)).await);
    }
    assert!(answers.iter().all(|answer| answer == &answers[0]));
    insta::assert_snapshot!(pretty(&answers[0]));
    assert!(fake.calls().is_empty());
}

#[tokio::test]
async fn a_success_is_one_text_block_with_the_whole_result() {
    let value: Value =
        serde_json::from_str(r#"{"zeta":1,"alpha":[1.50,"two"],"nested":{"b":null,"a":true}}"#)
            .unwrap();
    let response = answer_of(ToolResult::ok(value)).await;
    assert_eq!(
        response["result"],
        json!({"isError": false, "content": [{"type": "text", "text": r#"{"ok":true,"value":{"zeta":1,"alpha":[1.50,"two"],"nested":{"b":null,"a":true}}}"#}]})
    );
    insta::assert_snapshot!(pretty(&response));
}

#[tokio::test]
async fn a_success_without_value_and_with_null_value_differ() {
    let response = answer_of(ToolResult::ok_empty()).await;
    assert_eq!(response["result"]["content"][0]["text"], r#"{"ok":true}"#);
    let response = answer_of(ToolResult::ok(Value::Null)).await;
    assert_eq!(response["result"]["content"][0]["text"], r#"{"ok":true,"value":null}"#);
}

#[tokio::test]
async fn a_failure_is_an_is_error_result_not_a_protocol_error() {
    let response = answer_of(ToolResult::failure("Missing argument: nodeId")).await;
    assert_eq!(
        response["result"],
        json!({"isError": true, "content": [{"type": "text", "text": r#"{"ok":false,"error":"Missing argument: nodeId"}"#}]})
    );
    // Connection failures of the client contract map the same way.
    let unavailable = termsprawl_transport::connection_unavailable("no response within 45 s");
    let text = serde_json::to_string(&unavailable).unwrap();
    let response = answer_of(unavailable).await;
    assert_eq!(response["result"]["isError"], true);
    assert_eq!(response["result"]["content"][0]["text"], text);
    insta::assert_snapshot!(pretty(&response));
}

#[tokio::test]
async fn an_image_value_becomes_an_image_block() {
    let response =
        answer_of(ToolResult::ok(json!({"image": "iVBORw0KGgo=", "width": 10, "height": 5}))).await;
    assert_eq!(
        response["result"],
        json!({"isError": false, "content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]})
    );
    insta::assert_snapshot!(pretty(&response));
}

#[tokio::test]
async fn the_image_mime_type_comes_from_the_value_when_it_is_an_image_type() {
    let cases = [
        (json!("image/jpeg"), "image/jpeg"),
        (json!("image/webp"), "image/webp"),
        (json!("image/"), "image/"),
        (json!("text/plain"), "image/png"),
        (json!("IMAGE/JPEG"), "image/png"),
        (json!(""), "image/png"),
        (json!(7), "image/png"),
        (json!(null), "image/png"),
    ];
    for (mime_type, expected) in cases {
        let response =
            answer_of(ToolResult::ok(json!({"mimeType": mime_type, "image": "AAAA"}))).await;
        assert_eq!(
            response["result"]["content"],
            json!([{"type": "image", "data": "AAAA", "mimeType": expected}]),
            "mimeType {mime_type}"
        );
    }
}

#[tokio::test]
async fn an_image_member_that_is_not_a_non_empty_string_stays_text() {
    for value in [
        json!({"image": ""}),
        json!({"image": 1}),
        json!({"image": true}),
        json!({"image": ["AAAA"]}),
        json!({"image": {"data": "AAAA"}}),
        json!({"image": null}),
        json!({"Image": "AAAA"}),
        json!(["image", "AAAA"]),
        json!("AAAA"),
    ] {
        let expected = serde_json::to_string(&ToolResult::ok(value.clone())).unwrap();
        let response = answer_of(ToolResult::ok(value.clone())).await;
        assert_eq!(
            response["result"],
            json!({"isError": false, "content": [{"type": "text", "text": expected}]}),
            "value {value}"
        );
    }
}

#[tokio::test]
async fn a_response_over_8_mib_is_replaced_by_an_is_error_result() {
    let response = answer_of(ToolResult::ok(json!({"output": "x".repeat(9 * 1024 * 1024)}))).await;
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    let inner: Value = serde_json::from_str(text).unwrap();
    let size = 9 * 1024 * 1024 + r#"{"jsonrpc":"2.0","id":1,"result":{"isError":false,"content":[{"type":"text","text":"{\"ok\":true,\"value\":{\"output\":\"\"}}"}]}}"#.len();
    assert_eq!(
        inner,
        json!({"ok": false, "error": format!("Tool result too large for MCP: {size} bytes (limit 8388608)")})
    );
    assert_eq!(response["result"]["isError"], true);
    // A big image is guarded the same way.
    let response = answer_of(ToolResult::ok(json!({"image": "A".repeat(9 * 1024 * 1024)}))).await;
    assert_eq!(response["result"]["isError"], true);
    assert_eq!(response["result"]["content"][0]["type"], "text");
}

#[test]
fn the_size_guard_keeps_a_line_of_exactly_8_mib() {
    let id = RequestId::Number(1);
    let base = call_response_line(id.clone(), ToolResult::ok(json!({"image": "A"}))).len() - 1;
    let fits = "A".repeat(MAX_RESPONSE_BYTES - base);
    let line = call_response_line(id.clone(), ToolResult::ok(json!({"image": fits})));
    assert_eq!(line.len(), MAX_RESPONSE_BYTES);
    assert!(line.contains(r#""isError":false"#));
    let too_big = "A".repeat(MAX_RESPONSE_BYTES - base + 1);
    let line = call_response_line(id, ToolResult::ok(json!({"image": too_big})));
    assert!(line.contains(&format!("{} bytes (limit 8388608)", MAX_RESPONSE_BYTES + 1)), "{line}");
}
