//! Progress of a chained wait and its cancellation (`spec/mcp.md` §3.16): a caller that reports
//! progress as `termsprawl_transport::long_wait` does stands in for the tool server, so these
//! tests see exactly what the bridge makes of each report in both eras.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use termsprawl_mcp::{DEFAULT_MAX_WAIT_MS, Options, ToolCaller};
use termsprawl_protocol::{ToolRequest, ToolResult};
use termsprawl_transport::long_wait::{ProgressSink, WaitOptions, WaitProgress};

use crate::support::{Bridge, call, cancel, request};

/// Reports `reports` times, 50 ms apart, then answers `{"ok":true,"value":{"done":true}}`;
/// records the longest wait each call was given and whether it had a sink.
#[derive(Default)]
struct Reporting {
    reports: u32,
    seen: Mutex<Vec<(u64, bool)>>,
}

impl ToolCaller for Reporting {
    fn call(&self, _request: ToolRequest) -> Pin<Box<dyn Future<Output = ToolResult> + Send + '_>> {
        // `session_info` for the handshake; `tools/call` goes through `call_waiting`.
        Box::pin(async { ToolResult::ok(json!({"appVersion": "1.0.0"})) })
    }

    fn call_waiting<'a>(
        &'a self,
        _request: ToolRequest,
        options: WaitOptions,
        progress: Option<ProgressSink<'a>>,
    ) -> Pin<Box<dyn Future<Output = ToolResult> + Send + 'a>> {
        self.seen.lock().unwrap().push((options.max_wait_ms(), progress.is_some()));
        Box::pin(async move {
            if let Some(progress) = progress {
                for turn in 1..=self.reports {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    progress(&WaitProgress {
                        label: "make test".to_owned(),
                        waited: Duration::from_millis(u64::from(turn) * 50),
                        total: Duration::from_mins(2),
                        cursor: Some(u64::from(turn)),
                        lines: u64::from(turn),
                        lines_cut: false,
                        last_line: Some(format!("test {turn} ... ok")),
                        turns: turn,
                    });
                }
            }
            ToolResult::ok(json!({"done": true}))
        })
    }
}

fn reporting(reports: u32) -> Arc<Reporting> {
    Arc::new(Reporting { reports, ..Reporting::default() })
}

fn with_token(id: Value, token: &Value) -> Value {
    let mut message = call(id, "terminal_wait", json!({"nodeId": "t", "until": "exit"}));
    message["params"]["_meta"] = json!({"progressToken": token.clone()});
    message
}

/// Reads lines until the answer to `id`: the notifications before it, and the answer.
async fn until_answer(bridge: &mut Bridge, id: &Value) -> (Vec<Value>, Value) {
    let mut notifications = Vec::new();
    loop {
        let line = bridge.raw_line().await.expect("the bridge closed its output");
        let message: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(format!("{message}\n"), line, "one compact line");
        if message.get("id") == Some(id) {
            return (notifications, message);
        }
        let keys: Vec<&str> = message.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["jsonrpc", "method", "params"], "{message}");
        assert_eq!(message["method"], "notifications/progress");
        notifications.push(message["params"].clone());
    }
}

/// Everything written for the lines sent so far, up to the answer of a fresh `ping`.
async fn drain(bridge: &mut Bridge, sync: &str) -> Vec<Value> {
    bridge.send_json(&request(json!(sync), "ping", None)).await;
    let (written, _) = until_answer_any(bridge, &json!(sync)).await;
    written
}

/// Like [`until_answer`], without assuming what comes before the answer.
async fn until_answer_any(bridge: &mut Bridge, id: &Value) -> (Vec<Value>, Value) {
    let mut written = Vec::new();
    loop {
        let line = bridge.raw_line().await.expect("the bridge closed its output");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message.get("id") == Some(id) {
            return (written, message);
        }
        written.push(message);
    }
}

async fn initialized(caller: Arc<Reporting>, version: &str) -> Bridge {
    let mut bridge = Bridge::start(caller);
    let init = request(
        json!(0),
        "initialize",
        Some(json!({"protocolVersion": version, "capabilities": {}})),
    );
    bridge.send_json(&init).await;
    let line = bridge.raw_line().await.unwrap();
    assert!(line.contains(r#""id":0,"result""#), "{line}");
    bridge
}

#[tokio::test]
async fn a_call_with_a_token_gets_growing_progress_then_one_answer() {
    let caller = reporting(4);
    let mut bridge = initialized(Arc::clone(&caller), "2025-11-25").await;
    bridge.send_json(&with_token(json!(1), &json!("tok-1"))).await;
    let (notifications, answer) = until_answer(&mut bridge, &json!(1)).await;
    assert_eq!(notifications.len(), 4, "{notifications:?}");
    assert_eq!(
        notifications[0],
        json!({"progressToken": "tok-1", "progress": 0.05, "total": 120.0,
               "message": "make test: 1 line, last: \"test 1 ... ok\" (0 s)"})
    );
    let values: Vec<f64> = notifications.iter().map(|n| n["progress"].as_f64().unwrap()).collect();
    assert!(values.windows(2).all(|pair| pair[0] < pair[1]), "{values:?}");
    assert_eq!(answer["result"]["isError"], false);
    assert_eq!(drain(&mut bridge, "s").await, Vec::<Value>::new(), "nothing after the answer");
    assert_eq!(*caller.seen.lock().unwrap(), [(DEFAULT_MAX_WAIT_MS, true)]);
}

#[tokio::test]
async fn revision_2024_11_05_gets_progress_without_message() {
    let mut bridge = initialized(reporting(2), "2024-11-05").await;
    bridge.send_json(&with_token(json!("c"), &json!(7))).await;
    let (notifications, _) = until_answer(&mut bridge, &json!("c")).await;
    assert_eq!(notifications.len(), 2);
    assert_eq!(notifications[1], json!({"progressToken": 7, "progress": 0.1, "total": 120.0}));
}

#[tokio::test]
async fn the_modern_era_gets_progress_with_message() {
    let mut bridge = Bridge::start(reporting(2));
    let mut message = with_token(json!(3), &json!("m"));
    message["params"]["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "progressToken": "m",
    });
    bridge.send_json(&message).await;
    let (notifications, answer) = until_answer(&mut bridge, &json!(3)).await;
    assert_eq!(notifications.len(), 2);
    assert!(notifications.iter().all(|n| n["progressToken"] == "m" && n["message"].is_string()));
    assert_eq!(answer["result"]["resultType"], "complete");
}

#[tokio::test]
async fn without_a_usable_token_no_progress_is_asked_for() {
    let caller = reporting(3);
    let mut bridge = initialized(Arc::clone(&caller), "2025-06-18").await;
    let plain = call(json!(1), "terminal_wait", json!({"nodeId": "t", "until": "exit"}));
    let mut odd = with_token(json!(2), &json!({"not": "a token"}));
    odd["params"]["_meta"]["other"] = json!(1);
    for message in [plain, odd] {
        let id = message["id"].clone();
        bridge.send_json(&message).await;
        let (notifications, _) = until_answer(&mut bridge, &id).await;
        assert_eq!(notifications, Vec::<Value>::new());
    }
    assert_eq!(
        *caller.seen.lock().unwrap(),
        [(DEFAULT_MAX_WAIT_MS, false), (DEFAULT_MAX_WAIT_MS, false)]
    );
}

#[tokio::test]
async fn a_cancelled_call_gets_no_more_progress_and_no_answer() {
    let caller = reporting(40);
    let mut bridge = Bridge::start_with(
        Arc::clone(&caller) as Arc<dyn ToolCaller>,
        Options::default().wait(WaitOptions::new(120_000)),
    );
    bridge.send_json(&with_token(json!(5), &json!("c-5"))).await;
    let first: Value = serde_json::from_str(&bridge.raw_line().await.unwrap()).unwrap();
    assert_eq!(first["params"]["progressToken"], "c-5");
    bridge.send_json(&cancel(json!(5))).await;
    // Lines already on their way may arrive; then nothing, for longer than the reports' pace.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rest = drain(&mut bridge, "s1").await;
    assert!(rest.len() <= 1, "{rest:?}");
    assert!(rest.iter().all(|line| line["method"] == "notifications/progress"), "{rest:?}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(drain(&mut bridge, "s2").await, Vec::<Value>::new(), "written after the cancel");
    assert_eq!(bridge.take_logs(), Vec::<String>::new());
    assert_eq!(*caller.seen.lock().unwrap(), [(120_000, true)]);
}
