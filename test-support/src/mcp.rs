//! MCP fixtures: the envelope check every stdout line of a bridge goes through
//! ([`check_envelope`], `spec/mcp.md` §3.1 and §3.8), message builders, and [`Mcp`], a real
//! `termsprawlctl mcp` process over raw pipes whose every stdout line is envelope-checked.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long an [`Mcp`] waits for a line or an exit before declaring failure, unless told
/// otherwise ([`Mcp::patience`]).
pub const PATIENCE: Duration = Duration::from_secs(30);

/// The prefix of every log line of the bridge.
pub const LOG_PREFIX: &str = "termsprawlctl mcp: ";

/// Checks one output line (with its LF) against `spec/mcp.md` §3.1 and §3.8 and parses it: one
/// compact JSON object per line, members `jsonrpc`, `id` and `result` (an object) or `error`
/// (`code` and `message`), a string or integer id; and, when `token` is given, the session token
/// nowhere in it.
///
/// # Panics
///
/// When the line breaks any of these rules.
#[track_caller]
pub fn check_envelope(line: &str, token: Option<&str>) -> Value {
    let body = line.strip_suffix('\n').unwrap_or_else(|| panic!("line without LF: {line:?}"));
    assert!(!body.contains('\n') && !body.contains('\r'), "raw line break inside {body:?}");
    if let Some(token) = token {
        assert!(!body.contains(token), "the token leaked to stdout");
    }
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
pub fn request(id: Value, method: &str, params: Option<Value>) -> Value {
    let mut message = json!({"jsonrpc": "2.0", "id": null, "method": method});
    message["id"] = id;
    if let Some(params) = params {
        message["params"] = params;
    }
    message
}

/// A `tools/call` request.
pub fn call(id: Value, name: &str, arguments: Value) -> Value {
    let mut params = json!({"name": name, "arguments": null});
    params["arguments"] = arguments;
    request(id, "tools/call", Some(params))
}

/// A `notifications/cancelled` for `request_id`.
pub fn cancel(request_id: Value) -> Value {
    let mut message = json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": null, "reason": "test"}
    });
    message["params"]["requestId"] = request_id;
    message
}

/// A `termsprawlctl … mcp` process with piped stdin, stdout and stderr.
///
/// Dropping it before it exited kills it.
pub struct Mcp {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Vec<u8>>,
    /// Reads stdout into `lines`; started on first use, dropped unstarted to close stdout.
    lines_reader: Option<Box<dyn FnOnce() + Send>>,
    stderr: Option<thread::JoinHandle<String>>,
    token: String,
    sync: u64,
    patience: Duration,
}

/// How a bridge process ended.
#[derive(Debug)]
pub struct Closed {
    /// Its exit status.
    pub status: ExitStatus,
    /// From closing stdin to the exit.
    pub exit_after: Duration,
    /// Output lines not read before, envelope-checked.
    pub rest: Vec<Value>,
    /// Everything it wrote to stderr.
    pub stderr: String,
}

impl Mcp {
    /// Spawns `command` (`termsprawlctl [--session FILE] mcp`) without `TERMSPRAWL_SESSION_FILE`
    /// and with piped standard streams; `token` must appear in none of its output.
    ///
    /// # Panics
    ///
    /// When the program cannot be started.
    pub fn spawn(mut command: Command, token: &str) -> Mcp {
        command
            .env_remove("TERMSPRAWL_SESSION_FILE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("termsprawlctl runs");
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr = child.stderr.take().expect("stderr is piped");
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
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Mcp {
            stdin: child.stdin.take(),
            child: Some(child),
            lines,
            lines_reader,
            stderr: Some(stderr),
            token: token.to_owned(),
            sync: 0,
            patience: PATIENCE,
        }
    }

    /// Waits up to `patience` for each line and for the exit, instead of [`PATIENCE`].
    #[must_use]
    pub fn patience(mut self, patience: Duration) -> Mcp {
        self.patience = patience;
        self
    }

    /// Closes the reading end of stdout before anything was read, as a host that has gone away.
    #[must_use]
    pub fn without_stdout(mut self) -> Mcp {
        drop(self.lines_reader.take());
        self
    }

    /// Starts reading stdout, on first use.
    fn read_stdout(&mut self) {
        if let Some(reader) = self.lines_reader.take() {
            thread::spawn(reader);
        }
    }

    /// Writes raw bytes to stdin.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Writes one JSON message as a line.
    pub fn send_json(&mut self, message: &Value) {
        self.send_bytes(format!("{message}\n").as_bytes());
    }

    /// The next stdout line, raw (with its LF).
    pub fn raw_line(&mut self) -> String {
        self.read_stdout();
        let line = self.lines.recv_timeout(self.patience).expect("no stdout line in time");
        String::from_utf8(line).expect("stdout is UTF-8")
    }

    /// The next stdout line, envelope-checked and parsed.
    pub fn recv(&mut self) -> Value {
        let line = self.raw_line();
        check_envelope(&line, Some(&self.token))
    }

    /// Sends `message` and reads the next line, which must answer its id.
    pub fn request(&mut self, message: &Value) -> Value {
        self.send_json(message);
        let response = self.recv();
        assert_eq!(response["id"], message["id"], "answer to another request: {response}");
        response
    }

    /// Everything answered at once to the lines sent so far: sends a `ping` with a fresh string
    /// id and returns the lines before its answer (the bridge handles input in order).
    pub fn settle(&mut self) -> Vec<Value> {
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
    pub fn close(mut self) -> Closed {
        drop(self.stdin.take());
        self.wait()
    }

    /// Waits for the exit with stdin still open (for a host that vanished from stdout).
    pub fn wait(self) -> Closed {
        let closed = self.wait_unchecked();
        for line in closed.stderr.lines() {
            assert!(line.starts_with(LOG_PREFIX), "stderr line without the prefix: {line:?}");
        }
        closed
    }

    /// Closes stdin and waits for the exit, without checking stderr's lines.
    pub fn close_unchecked(mut self) -> Closed {
        drop(self.stdin.take());
        self.wait_unchecked()
    }

    fn wait_unchecked(mut self) -> Closed {
        self.read_stdout();
        let since = Instant::now();
        let (exited_tx, exited) = mpsc::channel();
        let mut child = self.child.take().expect("the child is waited for once");
        let pid = child.id();
        let waiter = thread::spawn(move || {
            let status = child.wait();
            let _ = exited_tx.send(());
            status
        });
        let exited_in_time = exited.recv_timeout(self.patience).is_ok();
        let exit_after = since.elapsed();
        if !exited_in_time {
            crate::serve::signal(pid, rustix::process::Signal::KILL);
        }
        assert!(exited_in_time, "termsprawlctl mcp did not exit within {:?}", self.patience);
        let status = waiter.join().unwrap().unwrap();
        let mut rest = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(self.patience) {
            rest.push(check_envelope(&String::from_utf8(line).unwrap(), Some(&self.token)));
        }
        let stderr = self.stderr.take().unwrap().join().unwrap();
        assert!(!stderr.contains(&self.token), "the token leaked to stderr");
        Closed { status, exit_after, rest, stderr }
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
