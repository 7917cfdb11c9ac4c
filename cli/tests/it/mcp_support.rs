//! Fixtures of the `termsprawlctl mcp` tests: the shared fake app (a real loopback tool server on
//! a runtime and thread of its own, discovery files in a temp dir) scripted as an MCP host's app,
//! and the shared driver of the real binary over raw pipes ([`Mcp`]), which checks the envelope of
//! every stdout line.

use std::path::Path;
use std::process::Command;

use serde_json::json;
use termsprawl_protocol::{IntegrationStatus, ToolResult, operations};
use termsprawl_test_support::fake::{BlockingFakeApp, FakeApp, default_status, session_info};
pub(crate) use termsprawl_test_support::mcp::{LOG_PREFIX, Mcp, PATIENCE, call, request};
use termsprawl_transport::server::handler_fn;

/// A one-pixel PNG, base64.
pub(crate) const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// The app version the fake app reports.
pub(crate) const APP_VERSION: &str = "7.1.0";

/// The shared fake app set up as an MCP host's app: `session_info` listing every operation,
/// `canvas_list` succeeding, `terminal_read` failing (or, for node `slow`, held until released),
/// `browser_screenshot` answering an image, `terminal_wait` echoing its arguments.
pub(crate) struct App {
    app: BlockingFakeApp,
    token: String,
}

impl App {
    pub(crate) fn start() -> App {
        App::listing(all_operations())
    }

    /// As [`App::start`], with `session_info` listing only `listed`.
    pub(crate) fn listing(listed: Vec<&'static str>) -> App {
        let handler = handler_fn(move |caller, request| {
            let listed = listed.clone();
            async move {
                match request.operation().unwrap_or_default() {
                    "session_info" => {
                        ToolResult::ok(session_info(&caller, APP_VERSION, true, &listed))
                    }
                    "terminal_read" if request.args_value()["nodeId"] == "slow" => {
                        ToolResult::ok(json!({"nodeId": "slow", "output": "late"}))
                    }
                    "terminal_read" => {
                        ToolResult::failure("Local terminal not found in this project")
                    }
                    // What reached the server, for the bridge's longest wait (`--max-wait-ms`).
                    "terminal_wait" => ToolResult::ok(request.args_value()),
                    other => ToolResult::failure(format!("the fake app does not do {other}")),
                }
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

    /// How many requests reached the app since the last look.
    pub(crate) fn calls(&self) -> usize {
        self.app.take_received().len()
    }

    /// Waits until a `terminal_read` of node `slow` has reached the app.
    pub(crate) fn wait_for_slow_call(&self) {
        self.app.wait_held(PATIENCE).expect("the slow call did not reach the app");
    }

    /// Lets one waiting `terminal_read` of node `slow` finish.
    pub(crate) fn release_slow_call(&self) {
        self.app.release(1);
    }

    /// `termsprawlctl --session <file> mcp` on this app, with piped stdin, stdout and stderr.
    pub(crate) fn mcp(&self) -> Mcp {
        self.mcp_with(&[])
    }

    /// As [`App::mcp`], with `flags` after `mcp`.
    pub(crate) fn mcp_with(&self, flags: &[&str]) -> Mcp {
        let mut command = Command::new(env!("CARGO_BIN_EXE_termsprawlctl"));
        command.arg("--session").arg(self.session_file()).arg("mcp").args(flags);
        Mcp::spawn(command, self.token())
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
