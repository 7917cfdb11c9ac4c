//! Measures `tools/call` throughput through `serve` against the shared fake app (a real loopback
//! `ToolServer`).
//!
//! Not a test (no timed assertions): run it by hand, preferably optimised, and read the numbers.
//!
//! ```text
//! cargo run -p termsprawl-mcp --example throughput --release -- [CALLS]
//! ```
//!
//! The fake app's tool server runs on a runtime of its own in another thread, as the app is
//! another process; the bridge runs on a current-thread runtime, as `termsprawlctl mcp` does, over
//! in-memory pipes. It reports calls per second one at a time and with 32 in flight, and the process's peak
//! resident memory (both halves together) from `/proc/self/status`.

#![expect(clippy::print_stdout, reason = "a measuring program prints its results")]

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use termsprawl_mcp::{SessionCaller, serve};
use termsprawl_protocol::{IntegrationState, IntegrationStatus, ToolResult};
use termsprawl_test_support::fake::FakeApp;
use termsprawl_transport::server::handler_fn;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn main() {
    let calls: u32 = std::env::args().nth(1).map_or(2000, |calls| calls.parse().expect("CALLS"));
    // The fake app's server runs on a runtime and thread of its own.
    let handler = handler_fn(|_, request| async move {
        ToolResult::ok(json!({"echo": request.args_value(), "output": "x".repeat(200)}))
    });
    let status = IntegrationStatus {
        state: IntegrationState::Connected,
        adapter: "claude-mcp".to_owned(),
        version: "bench".to_owned(),
        reason: "bench".to_owned(),
    };
    let app = FakeApp::builder()
        .status(status)
        .handler(handler)
        .recording(false)
        .start_blocking()
        .unwrap();
    let session_file = app.session_file().to_path_buf();

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async move {
        let (mut input, bridge_input) = tokio::io::duplex(1024 * 1024);
        let (bridge_output, output) = tokio::io::duplex(1024 * 1024);
        let caller = Arc::new(SessionCaller::new(&session_file));
        let served = tokio::spawn(serve(bridge_input, bridge_output, caller));
        let mut output = BufReader::new(output).lines();
        let mut next_id = 0_u64;
        let request = |id: &mut u64| {
            *id += 1;
            let message = json!({
                "jsonrpc": "2.0",
                "id": *id,
                "method": "tools/call",
                "params": {"name": "terminal_read", "arguments": {"nodeId": "t1", "maxChars": 100}}
            });
            format!("{message}\n")
        };

        let started = Instant::now();
        for _ in 0..calls {
            input.write_all(request(&mut next_id).as_bytes()).await.unwrap();
            let line = output.next_line().await.unwrap().unwrap();
            check(&line);
        }
        let sequential = f64::from(calls) / started.elapsed().as_secs_f64();

        let in_flight = 32_u32;
        let started = Instant::now();
        let mut sent = 0;
        let mut answered = 0;
        while sent < in_flight.min(calls) {
            input.write_all(request(&mut next_id).as_bytes()).await.unwrap();
            sent += 1;
        }
        while answered < calls {
            let line = output.next_line().await.unwrap().unwrap();
            check(&line);
            answered += 1;
            if sent < calls {
                input.write_all(request(&mut next_id).as_bytes()).await.unwrap();
                sent += 1;
            }
        }
        let concurrent = f64::from(calls) / started.elapsed().as_secs_f64();

        drop(input);
        served.await.unwrap().unwrap();
        println!("calls per run: {calls}");
        println!("sequential: {sequential:.0} tools/call per second");
        println!("{in_flight} in flight: {concurrent:.0} tools/call per second");
    });
    drop(app);
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(peak) = status.lines().find(|line| line.starts_with("VmHWM:")) {
        println!("peak resident memory (bridge and server together): {}", peak[6..].trim());
    }
}

fn check(line: &str) {
    let response: Value = serde_json::from_str(line).unwrap();
    assert_eq!(response["result"]["isError"], false, "{line}");
}
