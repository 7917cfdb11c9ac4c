//! The bench's tool server: the shared fake app (`termsprawl_test_support::fake::FakeApp`, a real
//! `ToolServer`) with a handler that answers `guide_read` with the protocol crate's guide and
//! `session_info` with the app's value shape.
//!
//! It runs in a `bench-support serve DIR` process ([`serve`]), built in release like the program
//! under test, so that its own cost is the same small share of every measured call. The xtask
//! side is [`ServerProcess`]: it reads the session file path the server prints and stops the
//! server by closing its stdin.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;

use anyhow::{Context as _, bail};
use serde_json::Value;
use termsprawl_protocol::args::GuideReadArgs;
use termsprawl_protocol::{
    IntegrationState, IntegrationStatus, Operation, ToolRequest, ToolResult, Topic, guide,
    operations,
};
use termsprawl_test_support::fake::{self, FakeApp};
use termsprawl_transport::server::{Caller, ToolHandler, handler_fn};

/// The node id of the bench's one session.
pub const NODE_ID: &str = "bench";

/// The `appVersion` the bench server reports.
pub const APP_VERSION: &str = "bench";

/// The operation every measured call makes.
pub const OPERATION: &str = "guide_read";

/// The arguments of every measured call, as JSON text.
pub const ARGUMENTS: &str = r#"{"topic":"canvas"}"#;

/// Whether `result` is what every measured call must answer: a success whose value is the
/// canvas guide. A fast wrong answer is not a measurement.
pub fn check_result(result: &ToolResult) -> Result<(), String> {
    match result {
        ToolResult::Success { value: Some(Value::String(text)) }
            if text == guide(Topic::Canvas) =>
        {
            Ok(())
        }
        ToolResult::Success { .. } => Err("the call succeeded with another value".to_owned()),
        ToolResult::Failure { error } => Err(format!("the call failed: {error}")),
    }
}

/// [`check_result`] of JSON text holding a tool result (compact or indented).
pub fn check_result_text(text: &[u8]) -> Result<(), String> {
    let value: Value =
        serde_json::from_slice(text).map_err(|_| "the output is not JSON".to_owned())?;
    let result = ToolResult::from_value(value)
        .ok_or_else(|| "the output is not a tool result".to_owned())?;
    check_result(&result)
}

/// The handler: `guide_read` returns the guide string, `session_info` the value of
/// `spec/protocol.md` §6.5, every other operation fails.
pub fn handler() -> Arc<dyn ToolHandler> {
    handler_fn(|caller, request| async move { answer(&caller, &request) })
}

fn answer(caller: &Caller, request: &ToolRequest) -> ToolResult {
    match request.operation() {
        Some("guide_read") => match request.parse_args::<GuideReadArgs>() {
            Ok(args) => ToolResult::ok(Value::String(guide(args.topic).to_owned())),
            Err(error) => ToolResult::failure(format!("Invalid guide_read arguments: {error}")),
        },
        Some("session_info") => ToolResult::ok(session_info(caller)),
        Some(other) => ToolResult::failure(format!("{other} is not served by the bench server")),
        None => ToolResult::failure("Unknown operation"),
    }
}

fn session_info(caller: &Caller) -> Value {
    let operations: Vec<&str> = operations().iter().map(Operation::name).collect();
    fake::session_info(caller, APP_VERSION, true, &operations)
}

/// `bench-support serve DIR`: starts the fake app for the agent-tools directory `dir` on a
/// multi-threaded runtime (recording off) with one session, prints the session file's path and a
/// newline on stdout, serves until stdin ends, then closes the server.
pub fn serve(dir: &Path) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    let status = IntegrationStatus {
        state: IntegrationState::Connected,
        adapter: "bench".to_owned(),
        version: "unknown".to_owned(),
        reason: "Benchmark session".to_owned(),
    };
    let app = FakeApp::builder()
        .data_dir(dir)
        .identity(NODE_ID, "bench")
        .status(status)
        .handler(handler())
        .recording(false);
    let mut app = runtime
        .block_on(app.start())
        .with_context(|| format!("cannot start the tool server in {}", dir.display()))?;
    let session_file = app.session_file();
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", session_file.display())
        .and_then(|()| stdout.flush())
        .context("cannot print the session file")?;
    drop(stdout);
    // The runtime's worker threads serve; this thread waits for the end of stdin.
    let _ = std::io::stdin().lock().read_to_end(&mut Vec::new());
    runtime.block_on(app.stop());
    Ok(())
}

/// A running `bench-support serve` process. Dropping it stops the server.
pub struct ServerProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    session_file: PathBuf,
}

impl ServerProcess {
    /// Starts `helper serve dir` and waits until it has printed its session file.
    pub fn start(helper: &Path, dir: &Path) -> anyhow::Result<ServerProcess> {
        let mut child = Command::new(helper)
            .arg("serve")
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot start {}", helper.display()))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut line = String::new();
        let read = BufReader::new(stdout).read_line(&mut line);
        let mut server = ServerProcess { child, stdin, session_file: PathBuf::new() };
        match read {
            Ok(_) if line.ends_with('\n') => {
                server.session_file = PathBuf::from(line.trim_end_matches('\n'));
                Ok(server)
            }
            _ => bail!("the bench server stopped before it was ready"),
        }
    }

    /// The session file of the server's one session.
    pub fn session_file(&self) -> &Path {
        &self.session_file
    }

    /// Stops the server and waits for it; an error when it did not exit cleanly.
    pub fn stop(mut self) -> anyhow::Result<()> {
        drop(self.stdin.take());
        let status = self.child.wait().context("cannot wait for the bench server")?;
        if !status.success() {
            bail!("the bench server failed: {status}");
        }
        Ok(())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if self.stdin.take().is_some() {
            let _ = self.child.wait();
        }
    }
}
