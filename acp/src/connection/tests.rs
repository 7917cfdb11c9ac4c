//! Tests of the JSON-RPC layer over in-memory pipes.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::{Connection, Inbound, MAX_LINE_BYTES, ReadEnd, RpcError, read_loop, write_loop};
use crate::trace::Trace;

/// Feeds `input` to a reader loop; returns what was dispatched, how it ended, and every line the
/// connection wrote.
async fn check_read(input: &[u8]) -> (Vec<Inbound>, ReadEnd, Vec<Value>) {
    let (connection, mut lines) = Connection::new(None);
    let mut seen = Vec::new();
    let end = {
        let mut dispatch = |inbound| seen.push(inbound);
        read_loop(input, &connection, &mut dispatch).await
    };
    connection.close_output();
    let mut written = Vec::new();
    while let Some(line) = lines.recv().await {
        written.push(serde_json::from_str(&line).unwrap());
    }
    (seen, end, written)
}

#[tokio::test]
async fn requests_and_notifications_are_dispatched_with_ids_as_they_came() {
    let input = b"{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"fs/read_text_file\",\"params\":{\"a\":1}}\r\n\
\n   \n\
{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":[]}\n\
{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"x\"}";
    let (seen, end, written) = check_read(input).await;
    assert!(matches!(end, ReadEnd::Eof));
    assert!(written.is_empty());
    assert_eq!(
        seen,
        vec![
            Inbound::Request {
                id: json!("abc"),
                method: "fs/read_text_file".to_owned(),
                params: Some(json!({"a": 1})),
            },
            Inbound::Notification { method: "session/update".to_owned(), params: Some(json!([])) },
            Inbound::Request { id: json!(7), method: "x".to_owned(), params: None },
        ]
    );
}

#[tokio::test]
async fn lines_that_are_not_json_rpc_are_answered_and_skipped() {
    let input = b"not json\n[1,2]\n{\"jsonrpc\":\"2.0\"}\n{\"id\":4,\"method\":5}\n{\"id\":99,\"result\":{}}\n";
    let (seen, end, written) = check_read(input).await;
    assert!(matches!(end, ReadEnd::Eof));
    assert_eq!(seen.len(), 5);
    assert!(seen.iter().all(|inbound| matches!(inbound, Inbound::Malformed(_))));
    let codes: Vec<(Value, i64)> = written
        .iter()
        .map(|message| (message["id"].clone(), message["error"]["code"].as_i64().unwrap()))
        .collect();
    assert_eq!(
        codes,
        vec![
            (Value::Null, -32700),
            (Value::Null, -32600),
            (Value::Null, -32600),
            (json!(4), -32600),
        ]
    );
}

/// Issue 35 item 4: the first line no ACP agent writes is kept for the report of a program that is
/// not one: text, or a request for a method agents serve (`cat` echoes our `initialize`).
#[tokio::test]
async fn the_first_stray_line_is_kept() {
    let stray = |input: &[u8]| {
        let (connection, _lines) = Connection::new(None);
        let input = input.to_vec();
        async move {
            let mut dispatch = |_| {};
            read_loop(&input[..], &connection, &mut dispatch).await;
            connection.stray()
        }
    };
    assert_eq!(stray(b"hi\nlater\n").await, Some("\"hi\"".to_owned()));
    let echoed = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}\n";
    let kept = stray(echoed).await.unwrap();
    assert!(kept.starts_with("\"{\\\"jsonrpc\\\""), "{kept}");
    let agent = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"fs/read_text_file\"}\n\
{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/request_permission\"}\n\
{\"jsonrpc\":\"2.0\",\"method\":\"session/update\"}\n";
    assert_eq!(stray(agent).await, None);
    let long = format!("{}\n", "x".repeat(500));
    let cut = stray(long.as_bytes()).await.unwrap();
    assert_eq!(cut.chars().count(), 120 + 3, "{cut}");
}

#[tokio::test]
async fn a_line_over_16_mib_fails_the_connection() {
    let mut input = vec![b'{'; MAX_LINE_BYTES + 1];
    input.push(b'\n');
    let (seen, end, _) = check_read(&input).await;
    assert!(seen.is_empty());
    assert!(matches!(end, ReadEnd::TooLong));
    // Exactly the limit is still a line (which then is not JSON).
    let mut input = vec![b' '; MAX_LINE_BYTES - 2];
    input.extend_from_slice(b"{}\n");
    let (seen, end, _) = check_read(&input).await;
    assert!(matches!(end, ReadEnd::Eof));
    assert!(matches!(seen.as_slice(), [Inbound::Malformed(_)]));
}

#[tokio::test]
async fn our_requests_are_correlated_with_their_answers() {
    let (connection, mut lines) = Connection::new(None);
    let first = connection.request("initialize", &json!({"protocolVersion": 1}));
    let second = connection.request("session/new", &json!({}));
    let sent: Vec<Value> = vec![
        serde_json::from_str(&lines.recv().await.unwrap()).unwrap(),
        serde_json::from_str(&lines.recv().await.unwrap()).unwrap(),
    ];
    assert_eq!(
        sent[0],
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    );
    assert_eq!(sent[1]["id"], json!(1));
    let answers =
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32000,\"message\":\"login\"}}\n\
{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":1}}\n";
    let mut dispatch = |inbound| panic!("nothing should be dispatched: {inbound:?}");
    let end = read_loop(&answers[..], &connection, &mut dispatch).await;
    assert!(matches!(end, ReadEnd::Eof));
    assert_eq!(first.await, Ok(json!({"protocolVersion": 1})));
    assert_eq!(second.await, Err(RpcError::new(-32000, "login")));
}

#[tokio::test]
async fn a_closed_connection_fails_pending_and_later_requests() {
    let (connection, _lines) = Connection::new(None);
    let pending = connection.request("session/prompt", &json!({}));
    assert!(!connection.is_closed());
    connection.fail_pending();
    assert!(connection.is_closed());
    assert_eq!(pending.await.unwrap_err().code, -32603);
    let later = connection.request("session/prompt", &json!({}));
    assert_eq!(later.await.unwrap_err().code, -32603);
}

#[tokio::test]
async fn responses_and_notifications_are_written_one_per_line() {
    let (connection, lines) = Connection::new(None);
    let (writer, reader) = tokio::io::duplex(64 * 1024);
    let writing = tokio::spawn(write_loop(lines, writer));
    connection.respond(&json!("req-1"), Ok(json!({"content": "a\nb"})));
    connection.respond(&json!(3), Err(RpcError::invalid_params("bad")));
    connection.notify("session/cancel", &json!({"sessionId": "s"}));
    connection.close_output();
    writing.await.unwrap();
    let mut reader = BufReader::new(reader);
    let mut text = String::new();
    while reader.read_line(&mut text).await.unwrap() > 0 {}
    assert_eq!(
        text,
        "{\"jsonrpc\":\"2.0\",\"id\":\"req-1\",\"result\":{\"content\":\"a\\nb\"}}\n\
{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32602,\"message\":\"bad\"}}\n\
{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s\"}}\n"
    );
    // Nothing is sent after the output closed.
    connection.notify("session/cancel", &json!({}));
}

#[tokio::test]
async fn the_trace_records_both_directions() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("trace.jsonl");
    let trace = Arc::new(Trace::open(&path).unwrap());
    let (connection, _lines) = Connection::new(Some(trace));
    connection.notify("session/cancel", &json!({"sessionId": "s"}));
    let mut dispatch = |_| {};
    read_loop(&b"{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\r\n"[..], &connection, &mut dispatch).await;
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["dir"], "out");
    assert_eq!(lines[0]["msg"]["method"], "session/cancel");
    assert_eq!(lines[1]["dir"], "in");
    assert_eq!(lines[1]["msg"], json!({"jsonrpc": "2.0", "method": "m"}));
    assert!(lines[1]["time"].as_str().unwrap().ends_with('Z'));
}

/// Issue 16 item 4: an error's `data` is shown with its message, whatever its type.
#[test]
fn an_error_shows_its_data() {
    let error =
        |data: Option<Value>| RpcError { code: -32603, message: "Internal error".to_owned(), data };
    assert_eq!(error(None).to_string(), "Internal error (code -32603)");
    assert_eq!(error(Some(Value::Null)).to_string(), "Internal error (code -32603)");
    assert_eq!(
        error(Some(json!("stream disconnected before completion: /v1/responses\n"))).to_string(),
        "Internal error (code -32603): stream disconnected before completion: /v1/responses"
    );
    assert_eq!(
        error(Some(json!({"details": "Query closed before response received"}))).to_string(),
        r#"Internal error (code -32603): {"details":"Query closed before response received"}"#
    );
}
