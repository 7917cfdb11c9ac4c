//! Fixtures: a scriptable fake [`ToolCaller`] and a harness that runs `serve_with` over in-memory
//! pipes, checks the envelope of every line it reads (with the shared check of
//! `termsprawl-test-support`), and collects the log.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use termsprawl_mcp::{Options, ToolCaller, serve_with};
use termsprawl_protocol::{ToolRequest, ToolResult};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

pub(crate) use termsprawl_test_support::mcp::{call, cancel, request};

/// How long a test waits for something that must happen before declaring failure. Never used to
/// wait for something that must not happen.
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// A fake tool server.
///
/// - A call whose `args` has a string member `gate`, or whose operation has a gate of its name,
///   waits until the test releases that gate (see [`Fake::gate`]); if the bridge drops the call
///   first, the gate's name is reported on [`Fake::dropped`]. A gate serves one call.
/// - Otherwise the result scripted for the operation with [`Fake::answer`] is returned; unscripted
///   operations echo `{"ok":true,"value":{"operation":…,"args":…}}`.
/// - `session_info` answers with [`Fake::session_info`], by default an app of version `9.9.9`
///   without an `operations` list.
/// - An operation scripted with [`Fake::panic_on`] panics.
pub(crate) struct Fake {
    answers: Mutex<HashMap<String, ToolResult>>,
    gates: Mutex<HashMap<String, oneshot::Receiver<ToolResult>>>,
    panics: Mutex<Vec<String>>,
    calls: Mutex<Vec<ToolRequest>>,
    dropped_tx: mpsc::UnboundedSender<String>,
    dropped_rx: tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>,
    started_tx: mpsc::UnboundedSender<String>,
    started_rx: tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>,
}

impl Fake {
    pub(crate) fn new() -> Arc<Fake> {
        let (dropped_tx, dropped_rx) = mpsc::unbounded_channel();
        let (started_tx, started_rx) = mpsc::unbounded_channel();
        let fake = Fake {
            answers: Mutex::default(),
            gates: Mutex::default(),
            panics: Mutex::default(),
            calls: Mutex::default(),
            dropped_tx,
            dropped_rx: tokio::sync::Mutex::new(dropped_rx),
            started_tx,
            started_rx: tokio::sync::Mutex::new(started_rx),
        };
        fake.session_info(json!({"appVersion": "9.9.9"}));
        Arc::new(fake)
    }

    /// Scripts the result of `operation`.
    pub(crate) fn answer(&self, operation: &str, result: ToolResult) {
        self.answers.lock().unwrap().insert(operation.to_owned(), result);
    }

    /// Scripts the `session_info` value.
    pub(crate) fn session_info(&self, value: Value) {
        self.answer("session_info", ToolResult::ok(value));
    }

    /// Makes `operation` panic.
    pub(crate) fn panic_on(&self, operation: &str) {
        self.panics.lock().unwrap().push(operation.to_owned());
    }

    /// Registers the gate `name`; sending on the returned sender releases the call waiting on it.
    pub(crate) fn gate(&self, name: &str) -> oneshot::Sender<ToolResult> {
        let (tx, rx) = oneshot::channel();
        self.gates.lock().unwrap().insert(name.to_owned(), rx);
        tx
    }

    /// The requests received so far.
    pub(crate) fn calls(&self) -> Vec<ToolRequest> {
        self.calls.lock().unwrap().clone()
    }

    /// Waits until a call waiting on a gate is dropped by the bridge; the gate's name.
    pub(crate) async fn dropped(&self) -> String {
        let mut dropped = self.dropped_rx.lock().await;
        tokio::time::timeout(PATIENCE, dropped.recv())
            .await
            .expect("no call was dropped")
            .expect("the fake lives as long as the test")
    }

    /// Waits until a call starts waiting on a gate; the gate's name.
    pub(crate) async fn started(&self) -> String {
        let mut started = self.started_rx.lock().await;
        tokio::time::timeout(PATIENCE, started.recv())
            .await
            .expect("no call reached a gate")
            .expect("the fake lives as long as the test")
    }
}

impl ToolCaller for Fake {
    fn call(&self, request: ToolRequest) -> Pin<Box<dyn Future<Output = ToolResult> + Send + '_>> {
        self.calls.lock().unwrap().push(request.clone());
        let operation = request.operation().unwrap_or_default().to_owned();
        let args = request.args_value();
        Box::pin(async move {
            assert!(
                !self.panics.lock().unwrap().contains(&operation),
                "the fake was told to panic on {operation}"
            );
            let gate_name = match args.get("gate") {
                Some(Value::String(name)) => Some(name.clone()),
                _ => self.gates.lock().unwrap().contains_key(&operation).then(|| operation.clone()),
            };
            if let Some(name) = gate_name {
                let gate = self.gates.lock().unwrap().remove(&name);
                let Some(gate) = gate else { panic!("no gate {name} registered") };
                let _ = self.started_tx.send(name.clone());
                let guard = DropReport { name: Some(name), tx: self.dropped_tx.clone() };
                let result = gate.await.expect("the test keeps the gate's sender until it sends");
                guard.disarm();
                return result;
            }
            let scripted = self.answers.lock().unwrap().get(&operation).cloned();
            scripted
                .unwrap_or_else(|| ToolResult::ok(json!({"operation": operation, "args": args})))
        })
    }
}

/// Reports its name when dropped while armed.
struct DropReport {
    name: Option<String>,
    tx: mpsc::UnboundedSender<String>,
}

impl DropReport {
    fn disarm(mut self) {
        self.name = None;
    }
}

impl Drop for DropReport {
    fn drop(&mut self) {
        if let Some(name) = self.name.take() {
            let _ = self.tx.send(name);
        }
    }
}

/// A running bridge over in-memory pipes.
pub(crate) struct Bridge {
    input: Option<DuplexStream>,
    output: BufReader<DuplexStream>,
    logs: Arc<Mutex<Vec<String>>>,
    served: JoinHandle<io::Result<()>>,
    sync: u64,
}

impl Bridge {
    /// Starts `serve_with` with the default options and `caller`.
    pub(crate) fn start(caller: Arc<dyn ToolCaller>) -> Bridge {
        Bridge::start_with(caller, Options::default())
    }

    /// Starts `serve_with` with `options`; the log sink is replaced by the harness's.
    pub(crate) fn start_with(caller: Arc<dyn ToolCaller>, options: Options) -> Bridge {
        let (input, bridge_input) = tokio::io::duplex(64 * 1024);
        let (bridge_output, output) = tokio::io::duplex(1024 * 1024);
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&logs);
        let options = options.log_with(move |line| sink.lock().unwrap().push(line.to_owned()));
        let served = tokio::spawn(serve_with(bridge_input, bridge_output, caller, options));
        Bridge { input: Some(input), output: BufReader::new(output), logs, served, sync: 0 }
    }

    /// Writes raw bytes to the bridge's input.
    pub(crate) async fn send_bytes(&mut self, bytes: &[u8]) {
        let input = self.input.as_mut().expect("input is open");
        input.write_all(bytes).await.unwrap();
    }

    /// Writes one line (LF appended).
    pub(crate) async fn send(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes()).await;
    }

    /// Writes one JSON message as a line.
    pub(crate) async fn send_json(&mut self, message: &Value) {
        self.send(&message.to_string()).await;
    }

    /// The next output line, parsed, after checking the envelope rules of `spec/mcp.md` §3.8.
    pub(crate) async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(PATIENCE, read_line(&mut self.output))
            .await
            .expect("no answer in time")
            .expect("the bridge closed its output");
        check_envelope(&line)
    }

    /// Sends `message` and reads the next line, which must answer its id.
    pub(crate) async fn request(&mut self, message: &Value) -> Value {
        self.send_json(message).await;
        let response = self.recv().await;
        assert_eq!(response["id"], message["id"], "answer to another request: {response}");
        response
    }

    /// Everything answered to the lines sent so far that is answered at once, in order, and the
    /// log lines written meanwhile: sends a `ping` with a fresh string id and reads up to its
    /// answer. Since the bridge handles input lines in order, anything the earlier lines caused
    /// to be written at once comes before it.
    pub(crate) async fn settle(&mut self) -> (Vec<Value>, Vec<String>) {
        self.sync += 1;
        let id = format!("sync-{}", self.sync);
        self.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"})).await;
        let mut answers = Vec::new();
        loop {
            let answer = self.recv().await;
            if answer["id"] == json!(id) {
                assert_eq!(answer["result"], json!({}));
                break;
            }
            answers.push(answer);
        }
        (answers, self.take_logs())
    }

    /// Asserts that nothing has been written for the lines sent so far and nothing logged.
    pub(crate) async fn assert_silent(&mut self) {
        let (answers, logs) = self.settle().await;
        assert_eq!(answers, Vec::<Value>::new(), "unexpected answers");
        assert_eq!(logs, Vec::<String>::new(), "unexpected log lines");
    }

    /// The log lines since the last call.
    pub(crate) fn take_logs(&self) -> Vec<String> {
        std::mem::take(&mut *self.logs.lock().unwrap())
    }

    /// Closes the input and waits for `serve` to return; its result, the remaining output lines
    /// (envelope-checked) and the remaining log lines.
    pub(crate) async fn close(mut self) -> (io::Result<()>, Vec<Value>, Vec<String>) {
        drop(self.input.take());
        let served = tokio::time::timeout(PATIENCE, &mut self.served)
            .await
            .expect("serve did not return after end of input")
            .expect("serve panicked");
        let mut rest = Vec::new();
        while let Some(line) = read_line(&mut self.output).await {
            rest.push(check_envelope(&line));
        }
        (served, rest, self.take_logs())
    }

    /// Closes the input without waiting: for tests that control time themselves.
    pub(crate) fn close_input(&mut self) {
        drop(self.input.take());
    }

    /// The handle of the serving task.
    pub(crate) fn served(&mut self) -> &mut JoinHandle<io::Result<()>> {
        &mut self.served
    }

    /// Drops the reading end of the output, as a host that has gone away.
    pub(crate) fn drop_output(&mut self) {
        let (dummy, _) = tokio::io::duplex(1);
        drop(std::mem::replace(&mut self.output, BufReader::new(dummy)));
    }

    /// Reads one raw output line (with its LF), if any.
    pub(crate) async fn raw_line(&mut self) -> Option<String> {
        read_line(&mut self.output).await
    }
}

async fn read_line(output: &mut BufReader<DuplexStream>) -> Option<String> {
    let mut line = String::new();
    let read = output.read_line(&mut line).await.expect("output is UTF-8");
    if read == 0 {
        return None;
    }
    Some(line)
}

/// Checks one output line against `spec/mcp.md` §3.1 and §3.8 and parses it (the shared check;
/// these tests hold no session token).
#[track_caller]
pub(crate) fn check_envelope(line: &str) -> Value {
    termsprawl_test_support::mcp::check_envelope(line, None)
}

/// Sends each line in turn and records what it caused, for a snapshot:
/// `>` the line sent (long lines shortened, bytes that are not UTF-8 escaped), `<` each answer
/// written at once, `!` each log line.
pub(crate) async fn transcript(bridge: &mut Bridge, lines: &[&[u8]]) -> String {
    let mut transcript = String::new();
    for line in lines {
        let shown = if line.iter().all(u8::is_ascii_whitespace) {
            format!("<blank \"{}\">", line.escape_ascii())
        } else if line.len() > 120 {
            format!("<{} bytes starting {}>", line.len(), line[..16].escape_ascii())
        } else {
            match std::str::from_utf8(line) {
                Ok(text) => text.to_owned(),
                Err(_) => format!("<bytes {}>", line.escape_ascii()),
            }
        };
        writeln!(transcript, "> {shown}").unwrap();
        bridge.send_bytes(line).await;
        bridge.send_bytes(b"\n").await;
        let (answers, logs) = bridge.settle().await;
        for answer in answers {
            writeln!(transcript, "< {answer}").unwrap();
        }
        for log in logs {
            writeln!(transcript, "! {log}").unwrap();
        }
    }
    transcript
}

/// `value` as indented JSON, for snapshots (numbers as written, member order kept).
pub(crate) fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap()
}
