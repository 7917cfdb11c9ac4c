//! Every row of the classification table (`spec/mcp.md` §3.2), driven through `serve`.

use serde_json::json;

use crate::support::{Bridge, Fake, transcript};

/// One transcript per row, so that a reviewer sees each rule's input, answer and log together.
async fn check(lines: &[&[u8]]) -> String {
    let mut bridge = Bridge::start(Fake::new());
    let transcript = transcript(&mut bridge, lines).await;
    let (served, rest, logs) = bridge.close().await;
    served.unwrap();
    assert_eq!(rest, Vec::<serde_json::Value>::new());
    assert_eq!(logs, Vec::<String>::new());
    transcript
}

#[tokio::test]
async fn blank_lines_are_ignored_without_a_log_line() {
    let transcript = check(&[b"", b"   ", b"\t \t", b"\r", b" \r"]).await;
    insta::assert_snapshot!(transcript);
}

#[tokio::test]
async fn lines_that_are_not_utf8_or_not_json_are_logged_not_answered() {
    let transcript = check(&[
        b"\xff\xfe{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xc3\x28\"}",
        b"{oops",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} trailing",
        b"undefined",
    ])
    .await;
    insta::assert_snapshot!(transcript);
}

#[tokio::test]
async fn json_that_is_not_an_object_is_logged_not_answered() {
    let transcript = check(&[
        b"[]",
        b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
        b"1",
        b"\"ping\"",
        b"true",
        b"null",
    ])
    .await;
    insta::assert_snapshot!(transcript);
}

#[tokio::test]
async fn notifications_are_never_answered_nor_logged() {
    let transcript = check(&[
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized","params":[1,2]}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/whatever","params":{"x":1}}"#,
        br#"{"jsonrpc":"2.0","method":"ping"}"#,
        br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"session_info"}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":42}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#,
        br#"{"method":"notifications/initialized"}"#,
    ])
    .await;
    insta::assert_snapshot!(transcript);
}

#[tokio::test]
async fn a_notification_does_not_reach_the_tool_server() {
    let fake = Fake::new();
    let mut bridge = Bridge::start(fake.clone());
    bridge.send(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"canvas_list"}}"#).await;
    bridge.send(r#"{"jsonrpc":"2.0","method":"initialize","params":{}}"#).await;
    bridge.assert_silent().await;
    let (served, rest, _) = bridge.close().await;
    served.unwrap();
    assert!(rest.is_empty());
    assert!(fake.calls().is_empty(), "{:?}", fake.calls());
}

#[tokio::test]
async fn objects_without_id_and_method_are_logged() {
    let transcript = check(&[
        b"{}",
        br#"{"jsonrpc":"2.0"}"#,
        br#"{"jsonrpc":"2.0","method":7}"#,
        br#"{"jsonrpc":"2.0","result":{}}"#,
    ])
    .await;
    insta::assert_snapshot!(transcript);
}

#[tokio::test]
async fn unusable_ids_are_logged_not_answered() {
    let transcript = check(&[
        br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":-0.0,"method":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"canvas_list"}}"#,
    ])
    .await;
    insta::assert_snapshot!(transcript);
}

#[tokio::test]
async fn usable_ids_are_echoed_with_their_type() {
    let ids = [
        json!(0),
        json!(-1),
        json!(7),
        json!(i64::MAX),
        json!(i64::MIN),
        json!(""),
        json!("7"),
        json!("ünïcödé \n \u{1F600}"),
    ];
    let mut bridge = Bridge::start(Fake::new());
    for id in ids {
        let response = bridge.request(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"})).await;
        assert_eq!(response, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
    }
    // `-0` is the integer 0; the answer carries the value.
    bridge.send(r#"{"jsonrpc":"2.0","id":-0,"method":"ping"}"#).await;
    assert_eq!(bridge.raw_line().await.unwrap(), "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n");
    // Integer literals are echoed exactly, not through a float.
    bridge.send(r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#).await;
    assert_eq!(
        bridge.raw_line().await.unwrap(),
        "{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"result\":{}}\n"
    );
    let (served, rest, logs) = bridge.close().await;
    served.unwrap();
    assert!(rest.is_empty() && logs.is_empty());
}

#[tokio::test]
async fn a_jsonrpc_member_other_than_2_0_is_logged_not_answered() {
    let transcript = check(&[
        br#"{"id":1,"method":"ping"}"#,
        br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
        br#"{"jsonrpc":2.0,"id":1,"method":"ping"}"#,
        br#"{"jsonrpc":null,"id":1,"method":"ping"}"#,
        br#"{"jsonrpc":"2.0 ","id":1,"method":"ping"}"#,
    ])
    .await;
    insta::assert_snapshot!(transcript);
}

#[tokio::test]
async fn stray_responses_are_ignored_silently() {
    let transcript = check(&[
        br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        br#"{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"Method not found"}}"#,
        br#"{"jsonrpc":"2.0","id":2,"result":null,"error":null}"#,
    ])
    .await;
    insta::assert_snapshot!(transcript);
}

#[tokio::test]
async fn a_usable_id_without_a_string_method_is_logged() {
    let transcript = check(&[
        br#"{"jsonrpc":"2.0","id":1}"#,
        br#"{"jsonrpc":"2.0","id":1,"method":7}"#,
        br#"{"jsonrpc":"2.0","id":1,"method":null,"result":{}}"#,
        br#"{"jsonrpc":"2.0","id":1,"params":{}}"#,
    ])
    .await;
    insta::assert_snapshot!(transcript);
}

#[tokio::test]
async fn params_that_are_not_an_object_are_invalid_params() {
    let transcript = check(&[
        br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}"#,
        br#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":"x"}"#,
        br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":["session_info"]}"#,
        br#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":1}"#,
        br#"{"jsonrpc":"2.0","id":5,"method":"no/such/method","params":null}"#,
    ])
    .await;
    insta::assert_snapshot!(transcript);
}

#[tokio::test]
async fn unknown_members_are_ignored() {
    let mut bridge = Bridge::start(Fake::new());
    let response = bridge
        .request(&json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "ping",
            "params": {"_meta": {"progressToken": 5}, "extra": [1, 2]},
            "vendor": {"x": true},
            "_meta": {}
        }))
        .await;
    assert_eq!(response, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    let response = bridge
        .request(&json!({
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/list",
            "params": {"_meta": {"progressToken": "abc"}}
        }))
        .await;
    assert_eq!(response["result"]["tools"].as_array().unwrap().len(), 37);
    let (served, _, logs) = bridge.close().await;
    served.unwrap();
    assert!(logs.is_empty());
}
