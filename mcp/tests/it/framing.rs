//! Framing and input limits through `serve` (`spec/mcp.md` §3.1).

use serde_json::json;

use crate::support::{Bridge, Fake};

const PING_1: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

#[tokio::test]
async fn three_requests_in_one_chunk_are_all_answered_in_order() {
    let mut bridge = Bridge::start(Fake::new());
    let chunk = format!(
        "{}\n{}\n{}\n",
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":"b","method":"tools/list","params":{"cursor":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"nope"}"#
    );
    bridge.send_bytes(chunk.as_bytes()).await;
    let answers = [bridge.recv().await, bridge.recv().await, bridge.recv().await];
    let ids: Vec<_> = answers.iter().map(|answer| answer["id"].clone()).collect();
    assert_eq!(ids, [json!(1), json!("b"), json!(3)]);
}

#[tokio::test]
async fn crlf_is_accepted() {
    let mut bridge = Bridge::start(Fake::new());
    bridge.send_bytes(format!("{PING_1}\r\n").as_bytes()).await;
    assert_eq!(bridge.recv().await, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    let (_, logs) = bridge.settle().await;
    assert!(logs.is_empty());
}

#[tokio::test]
async fn a_lone_cr_is_whitespace_inside_json_not_a_line_end() {
    let mut bridge = Bridge::start(Fake::new());
    bridge.send_bytes(b"{\"jsonrpc\":\"2.0\",\r\"id\":1,\r\"method\":\"ping\"}\r\n").await;
    assert_eq!(bridge.recv().await["id"], 1);
    // Two requests separated by a lone CR are one line, and not JSON.
    bridge.send_bytes(format!("{PING_1}\r{PING_1}\n").as_bytes()).await;
    let (answers, logs) = bridge.settle().await;
    assert!(answers.is_empty());
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert!(logs[0].starts_with("ignored a line that is not JSON"), "{logs:?}");
}

#[tokio::test]
async fn a_byte_order_mark_at_the_start_is_skipped() {
    let mut bridge = Bridge::start(Fake::new());
    bridge.send_bytes(format!("\u{FEFF}{PING_1}\n").as_bytes()).await;
    assert_eq!(bridge.recv().await["id"], 1);
    // Later in the stream it is not whitespace: that line is not JSON.
    bridge.send_bytes(format!("\u{FEFF}{PING_1}\n").as_bytes()).await;
    let (answers, logs) = bridge.settle().await;
    assert!(answers.is_empty());
    assert_eq!(logs.len(), 1);
}

#[tokio::test]
async fn a_request_written_byte_by_byte_is_answered() {
    let mut bridge = Bridge::start(Fake::new());
    for byte in format!("{PING_1}\n").bytes() {
        bridge.send_bytes(&[byte]).await;
    }
    assert_eq!(bridge.recv().await["id"], 1);
}

#[tokio::test]
async fn bytes_that_are_not_utf8_are_logged_and_service_continues() {
    let mut bridge = Bridge::start(Fake::new());
    bridge.send_bytes(b"\xc0\xaf\xff\n").await;
    bridge
        .send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xed\xa0\x80\"}\n")
        .await;
    let (answers, logs) = bridge.settle().await;
    assert!(answers.is_empty());
    assert_eq!(logs.len(), 2, "{logs:?}");
    assert!(
        logs.iter().all(|log| log.starts_with("ignored a line that is not UTF-8: ")),
        "{logs:?}"
    );
    assert_eq!(
        bridge.request(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"})).await["id"],
        2
    );
}

#[tokio::test]
async fn a_line_of_20_mib_is_skipped_and_the_next_request_answered() {
    let mut bridge = Bridge::start(Fake::new());
    let size = 20 * 1024 * 1024;
    // A plausible request whose padding makes it huge, written in 1 MiB pieces.
    let head = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sticky_open","arguments":{"text":""#;
    bridge.send_bytes(head).await;
    let piece = vec![b'x'; 1024 * 1024];
    for _ in 0..20 {
        bridge.send_bytes(&piece).await;
    }
    bridge.send_bytes(b"\"}}}\n").await;
    bridge.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).await;
    let answer = bridge.recv().await;
    assert_eq!(answer, json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    let logs = bridge.take_logs();
    let expected = size + head.len() + 4;
    assert_eq!(logs, [format!("ignored a line of {expected} bytes, over the 262144-byte limit")]);
}

#[tokio::test]
async fn the_cap_is_262144_bytes_terminator_excluded() {
    let mut bridge = Bridge::start(Fake::new());
    let padded = |length: usize| {
        let head = r#"{"jsonrpc":"2.0","id":1,"method":"ping","pad":""#;
        let tail = r#""}"#;
        format!("{head}{}{tail}", " ".repeat(length - head.len() - tail.len()))
    };
    // Exactly at the cap, with LF and with CRLF: answered.
    bridge.send(&padded(262_144)).await;
    assert_eq!(bridge.recv().await["id"], 1);
    bridge.send_bytes(format!("{}\r\n", padded(262_144)).as_bytes()).await;
    assert_eq!(bridge.recv().await["id"], 1);
    // One byte over: not answered, logged.
    bridge.send(&padded(262_145)).await;
    let (answers, logs) = bridge.settle().await;
    assert!(answers.is_empty());
    assert_eq!(logs, ["ignored a line of 262145 bytes, over the 262144-byte limit"]);
}

#[tokio::test]
async fn a_last_line_without_lf_is_answered_at_end_of_input() {
    let mut bridge = Bridge::start(Fake::new());
    bridge.send_bytes(PING_1.as_bytes()).await;
    let (served, rest, logs) = bridge.close().await;
    served.unwrap();
    assert_eq!(rest, [json!({"jsonrpc": "2.0", "id": 1, "result": {}})]);
    assert!(logs.is_empty());
}

#[tokio::test]
async fn nothing_is_written_before_the_first_request() {
    let bridge = Bridge::start(Fake::new());
    let (served, rest, logs) = bridge.close().await;
    served.unwrap();
    assert!(rest.is_empty() && logs.is_empty());
    // And a bridge that only ever sees notifications writes nothing.
    let mut bridge = Bridge::start(Fake::new());
    bridge.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    let (served, rest, _) = bridge.close().await;
    served.unwrap();
    assert!(rest.is_empty());
}

#[tokio::test]
async fn string_newlines_in_answers_are_escaped() {
    let fake = Fake::new();
    fake.answer(
        "terminal_read",
        termsprawl_protocol::ToolResult::ok(json!({"output": "line 1\nline 2\r\n\u{2028}"})),
    );
    let mut bridge = Bridge::start(fake);
    bridge
        .send_json(&json!({"jsonrpc": "2.0", "id": "\n", "method": "tools/call", "params": {"name": "terminal_read", "arguments": {"nodeId": "t"}}}))
        .await;
    let line = bridge.raw_line().await.unwrap();
    // Exactly one LF, at the end.
    assert_eq!(line.matches('\n').count(), 1);
    assert!(line.ends_with('\n'));
    crate::support::check_envelope(&line);
}

#[tokio::test]
async fn input_closed_mid_line_is_not_a_request() {
    let mut bridge = Bridge::start(Fake::new());
    bridge.send_bytes(br#"{"jsonrpc":"2.0","id":1,"meth"#).await;
    let (served, rest, logs) = bridge.close().await;
    served.unwrap();
    assert!(rest.is_empty());
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert!(logs[0].starts_with("ignored a line that is not JSON"), "{logs:?}");
}
