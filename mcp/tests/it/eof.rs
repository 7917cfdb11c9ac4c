//! End of input and a vanished host (`spec/mcp.md` §3.7).

use std::time::Duration;

use serde_json::json;
use termsprawl_protocol::ToolResult;
use tokio::time::Instant;

use crate::support::{Bridge, Fake, call, request};

#[tokio::test]
async fn answers_in_flight_at_end_of_input_are_still_written() {
    let fake = Fake::new();
    let gate = fake.gate("late");
    let mut bridge = Bridge::start(fake.clone());
    bridge.send_json(&call(json!(1), "canvas_list", json!({"gate": "late"}))).await;
    bridge.settle().await;
    bridge.close_input();
    gate.send(ToolResult::ok(json!("late"))).unwrap();
    let (served, rest, logs) = bridge.close().await;
    served.unwrap();
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0]["id"], 1);
    assert!(logs.is_empty(), "{logs:?}");
}

#[tokio::test(start_paused = true)]
async fn a_call_that_never_finishes_is_given_up_after_two_seconds() {
    let fake = Fake::new();
    let _gate = fake.gate("never");
    let mut bridge = Bridge::start(fake.clone());
    bridge.send_json(&call(json!(1), "canvas_list", json!({"gate": "never"}))).await;
    bridge.send_json(&request(json!(2), "ping", None)).await;
    assert_eq!(bridge.recv().await["id"], 2);
    let closed = Instant::now();
    bridge.close_input();
    let served = bridge.served().await.unwrap();
    let waited = closed.elapsed();
    served.unwrap();
    // The clock is paused and advances only to the bridge's own timer (rounded up to its
    // millisecond resolution).
    assert!(
        Duration::from_secs(2) <= waited && waited < Duration::from_millis(2100),
        "waited {waited:?}"
    );
    assert_eq!(fake.dropped().await, "never");
    assert_eq!(bridge.raw_line().await, None, "nothing more is written");
    assert_eq!(
        bridge.take_logs(),
        ["end of input: 1 answers still in flight after 2s, not written"]
    );
}

#[tokio::test]
async fn serve_returns_at_once_when_the_output_is_gone() {
    let fake = Fake::new();
    let _gate = fake.gate("never");
    let mut bridge = Bridge::start(fake.clone());
    bridge.send_json(&call(json!(1), "canvas_list", json!({"gate": "never"}))).await;
    bridge.settle().await;
    bridge.drop_output();
    // The input stays open: only the failed write can end the bridge.
    bridge.send_json(&request(json!(2), "ping", None)).await;
    let served = tokio::time::timeout(crate::support::PATIENCE, bridge.served())
        .await
        .expect("serve must return after a write error")
        .unwrap();
    let error = served.expect_err("a write error is returned");
    assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe);
    // In-flight calls are abandoned.
    assert_eq!(fake.dropped().await, "never");
}

/// Yields one chunk, then fails.
struct FailingInput(Option<&'static [u8]>);

impl tokio::io::AsyncRead for FailingInput {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(match self.0.take() {
            Some(chunk) => {
                buf.put_slice(chunk);
                Ok(())
            }
            None => Err(std::io::Error::other("the pipe broke")),
        })
    }
}

#[tokio::test]
async fn a_read_error_ends_the_bridge_like_end_of_input() {
    let input = FailingInput(Some(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"));
    let mut output = Vec::new();
    let logs = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&logs);
    let options = termsprawl_mcp::Options::default()
        .log_with(move |line| sink.lock().unwrap().push(line.to_owned()));
    termsprawl_mcp::serve_with(input, &mut output, Fake::new(), options).await.unwrap();
    assert_eq!(
        String::from_utf8(output).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"
    );
    assert_eq!(*logs.lock().unwrap(), ["stopped reading input: the pipe broke"]);
}
