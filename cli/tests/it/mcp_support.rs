//! Fixtures of the `termsprawlctl mcp` tests: the shared fake app (a real loopback tool server on
//! a runtime and thread of its own, discovery files in a temp dir) scripted as an MCP host's app,
//! and a driver of the real binary over raw pipes that checks the envelope of every stdout line.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use termsprawl_protocol::{IntegrationStatus, ToolResult, operations};
use termsprawl_transport::server::fake::{BlockingFakeApp, FakeApp, default_status, session_info};
use termsprawl_transport::server::handler_fn;

/// How long a test waits for something that must happen before declaring failure.
pub(crate) const PATIENCE: Duration = Duration::from_secs(30);

/// The prefix of every log line of the bridge.
pub(crate) const LOG_PREFIX: &str = "termsprawlctl mcp: ";

/// A one-pixel PNG, base64.
pub(crate) const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// The app version the fake app reports.
pub(crate) const APP_VERSION: &str = "7.1.0";

/// The shared fake app set up as an MCP host's app: `session_info` listing every operation,
/// `canvas_list` succeeding, `terminal_read` failing (or, for node `slow`, held until released),
/// `browser_screenshot` answering an image.
pub(crate) struct App {
    app: BlockingFakeApp,
    token: String,
}

impl App {
    pub(crate) fn start() -> App {
        let handler = handler_fn(|caller, request| async move {
            match request.operation().unwrap_or_default() {
                "session_info" => {
                    ToolResult::ok(session_info(&caller, APP_VERSION, true, &all_operations()))
                }
                "terminal_read" if request.args_value()["nodeId"] == "slow" => {
                    ToolResult::ok(json!({"nodeId": "slow", "output": "late"}))
                }
                "terminal_read" => ToolResult::failure("Local terminal not found in this project"),
                other => ToolResult::failure(format!("the fake app does not do {other}")),
            }
        });
        let app = FakeApp::builder()
            .status(mcp_status())
            .handler(handler)
            .start_blocking()
            .expect("the fake app starts");
        app.answer("canvas_list", ToolResult::ok(json!([{"id": "n1", "kind": "terminal"}])));
        app.answer("browser_screenshot", ToolResult::ok(json!({"image": PNG})));
        app.hold_when(|request| {
            request.operation() == Some("terminal_read") && request.args_value()["nodeId"] == "slow"
        });
        let token = app.token();
        App { app, token }
    }

    pub(crate) fn session_file(&self) -> &Path {
        self.app.session_file()
    }

    /// The session token, to prove that it appears nowhere.
    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// Waits until a `terminal_read` of node `slow` has reached the app.
    pub(crate) fn wait_for_slow_call(&self) {
        self.app.wait_held(PATIENCE).expect("the slow call did not reach the app");
    }

    /// Lets one waiting `terminal_read` of node `slow` finish.
    pub(crate) fn release_slow_call(&self) {
        self.app.release(1);
    }
}

/// The status of an MCP agent's session before it connected.
fn mcp_status() -> IntegrationStatus {
    IntegrationStatus { version: "2.1.200".to_owned(), ..default_status() }
}

/// Every operation name, in table order.
pub(crate) fn all_operations() -> Vec<&'static str> {
    operations().iter().map(termsprawl_protocol::Operation::name).collect()
}

/// `termsprawlctl --session <file> mcp` with piped stdin, stdout and stderr.
pub(crate) struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Vec<u8>>,
    /// Reads stdout into `lines`; started on first use, dropped unstarted to close stdout.
    lines_reader: Option<Box<dyn FnOnce() + Send>>,
    stderr: Option<thread::JoinHandle<String>>,
    token: String,
    sync: u64,
}

/// How a bridge process ended.
pub(crate) struct Closed {
    pub(crate) status: ExitStatus,
    /// From closing stdin to the exit.
    pub(crate) exit_after: Duration,
    /// Output lines not read before, envelope-checked.
    pub(crate) rest: Vec<Value>,
    pub(crate) stderr: String,
}

impl Mcp {
    pub(crate) fn start(app: &App) -> Mcp {
        let mut command = Command::new(env!("CARGO_BIN_EXE_termsprawlctl"));
        command.arg("--session").arg(app.session_file()).arg("mcp");
        Mcp::spawn(command, app.token())
    }

    /// As [`Mcp::start`], with `flags` after `mcp`.
    pub(crate) fn start_with(app: &App, flags: &[&str]) -> Mcp {
        let mut command = Command::new(env!("CARGO_BIN_EXE_termsprawlctl"));
        command.arg("--session").arg(app.session_file()).arg("mcp").args(flags);
        Mcp::spawn(command, app.token())
    }

    /// As [`Mcp::start`], with the reading end of stdout closed at once, as a host that has gone
    /// away.
    pub(crate) fn start_without_stdout(app: &App) -> Mcp {
        let mut command = Command::new(env!("CARGO_BIN_EXE_termsprawlctl"));
        command.arg("--session").arg(app.session_file()).arg("mcp");
        let mut mcp = Mcp::spawn(command, app.token());
        drop(mcp.lines_reader.take());
        mcp
    }

    pub(crate) fn spawn(mut command: Command, token: &str) -> Mcp {
        command
            .env_remove("TERMSPRAWL_SESSION_FILE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("termsprawlctl runs");
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let (lines_tx, lines) = mpsc::channel();
        let lines_reader = Some(Box::new(move || {
            let mut stdout = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match stdout.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if lines_tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        }) as Box<dyn FnOnce() + Send>);
        let stderr = thread::spawn(move || {
            let mut text = String::new();
            stderr.read_to_string(&mut text).unwrap();
            text
        });
        Mcp {
            stdin: child.stdin.take(),
            child,
            lines,
            lines_reader,
            stderr: Some(stderr),
            token: token.to_owned(),
            sync: 0,
        }
    }

    /// Starts reading stdout, on first use.
    fn read_stdout(&mut self) {
        if let Some(reader) = self.lines_reader.take() {
            thread::spawn(reader);
        }
    }

    /// Writes raw bytes to stdin.
    pub(crate) fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Writes one JSON message as a line.
    pub(crate) fn send_json(&mut self, message: &Value) {
        self.send_bytes(format!("{message}\n").as_bytes());
    }

    /// The next stdout line, raw (with its LF).
    pub(crate) fn raw_line(&mut self) -> String {
        self.read_stdout();
        let line = self.lines.recv_timeout(PATIENCE).expect("no stdout line in time");
        String::from_utf8(line).expect("stdout is UTF-8")
    }

    /// The next stdout line, envelope-checked and parsed.
    pub(crate) fn recv(&mut self) -> Value {
        let line = self.raw_line();
        check_envelope(&line, &self.token)
    }

    /// Sends `message` and reads the next line, which must answer its id.
    pub(crate) fn request(&mut self, message: &Value) -> Value {
        self.send_json(message);
        let response = self.recv();
        assert_eq!(response["id"], message["id"], "answer to another request: {response}");
        response
    }

    /// Everything answered at once to the lines sent so far: sends a `ping` with a fresh string
    /// id and returns the lines before its answer (the bridge handles input in order).
    pub(crate) fn settle(&mut self) -> Vec<Value> {
        self.sync += 1;
        let id = format!("sync-{}", self.sync);
        self.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        let mut answers = Vec::new();
        loop {
            let answer = self.recv();
            if answer["id"] == json!(id) {
                assert_eq!(answer["result"], json!({}));
                return answers;
            }
            answers.push(answer);
        }
    }

    /// Closes stdin and waits for the exit; the rest of the output and stderr, whose lines must all
    /// carry the log prefix.
    pub(crate) fn close(mut self) -> Closed {
        drop(self.stdin.take());
        self.wait()
    }

    /// Waits for the exit with stdin still open (for a host that vanished from stdout).
    pub(crate) fn wait(self) -> Closed {
        let closed = self.wait_unchecked();
        for line in closed.stderr.lines() {
            assert!(line.starts_with(LOG_PREFIX), "stderr line without the prefix: {line:?}");
        }
        closed
    }

    /// Closes stdin and waits for the exit, without checking stderr's lines.
    pub(crate) fn close_unchecked(mut self) -> Closed {
        drop(self.stdin.take());
        self.wait_unchecked()
    }

    fn wait_unchecked(mut self) -> Closed {
        self.read_stdout();
        let since = Instant::now();
        let (exited_tx, exited) = mpsc::channel();
        let mut child = self.child;
        let waiter = thread::spawn(move || {
            let status = child.wait();
            let _ = exited_tx.send(());
            status
        });
        let exited_in_time = exited.recv_timeout(PATIENCE).is_ok();
        let exit_after = since.elapsed();
        assert!(exited_in_time, "termsprawlctl mcp did not exit within {PATIENCE:?}");
        let status = waiter.join().unwrap().unwrap();
        let mut rest = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(PATIENCE) {
            rest.push(check_envelope(&String::from_utf8(line).unwrap(), &self.token));
        }
        let stderr = self.stderr.take().unwrap().join().unwrap();
        assert!(!stderr.contains(&self.token), "the token leaked to stderr");
        Closed { status, exit_after, rest, stderr }
    }
}

/// Checks one stdout line against `spec/mcp.md` §3.1 and §3.8 and parses it.
pub(crate) fn check_envelope(line: &str, token: &str) -> Value {
    let body = line.strip_suffix('\n').unwrap_or_else(|| panic!("line without LF: {line:?}"));
    assert!(!body.contains('\n') && !body.contains('\r'), "raw line break inside {body:?}");
    assert!(!body.contains(token), "the token leaked to stdout");
    let message: Value =
        serde_json::from_str(body).unwrap_or_else(|error| panic!("not JSON ({error}): {body}"));
    assert_eq!(message.to_string(), body, "not compact JSON");
    let object = message.as_object().expect("an object");
    let keys: Vec<&str> = object.keys().map(String::as_str).collect();
    assert!(
        keys == ["jsonrpc", "id", "result"] || keys == ["jsonrpc", "id", "error"],
        "envelope members {keys:?} in {body}"
    );
    assert_eq!(object["jsonrpc"], "2.0");
    let id = &object["id"];
    assert!(id.is_string() || id.is_i64(), "id {id} in {body}");
    if let Some(error) = object.get("error") {
        let error = error.as_object().expect("error is an object");
        let keys: Vec<&str> = error.keys().map(String::as_str).collect();
        assert!(
            keys == ["code", "message"] || keys == ["code", "message", "data"],
            "error members in {body}"
        );
        assert!(error["code"].is_i64() && error["message"].is_string(), "error types in {body}");
    } else {
        assert!(object["result"].is_object(), "result is not an object in {body}");
    }
    message
}

/// A request message.
pub(crate) fn request(id: Value, method: &str, params: Option<Value>) -> Value {
    let mut message = json!({"jsonrpc": "2.0", "id": null, "method": method});
    message["id"] = id;
    if let Some(params) = params {
        message["params"] = params;
    }
    message
}

/// A `tools/call` request.
pub(crate) fn call(id: Value, name: &str, arguments: Value) -> Value {
    let mut params = json!({"name": name, "arguments": null});
    params["arguments"] = arguments;
    request(id, "tools/call", Some(params))
}
