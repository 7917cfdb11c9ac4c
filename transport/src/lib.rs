//! Discovery and the loopback HTTP client of the termsprawl agent tool protocol.
//!
//! INTERIM API STUB: the `transport` branch replaces this file with the implementation. The
//! signatures below are the agreed public API that `cli` and `mcp` code against.

use std::path::Path;
use std::time::Duration;

use termsprawl_protocol::{ToolRequest, ToolResult};

/// The client of the loopback tool server.
#[derive(Debug, Clone)]
pub struct Client {
    timeout: Duration,
}

impl Default for Client {
    fn default() -> Client {
        Client { timeout: Duration::from_secs(45) }
    }
}

impl Client {
    /// A client whose whole-call timeout is `timeout` instead of 45 s (tests and benchmarks).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Client {
        self.timeout = timeout;
        self
    }

    /// One call. Never fails: every problem is an `ok:false` result.
    pub async fn call(&self, session_file: &Path, request: &ToolRequest) -> ToolResult {
        let _ = (session_file, request, self.timeout);
        connection_unavailable("not implemented yet")
    }
}

/// One call with the default client.
pub async fn call(session_file: &Path, request: &ToolRequest) -> ToolResult {
    Client::default().call(session_file, request).await
}

/// One call from synchronous code, on a current-thread runtime of its own.
pub fn call_blocking(session_file: &Path, request: &ToolRequest) -> ToolResult {
    let _ = (session_file, request);
    connection_unavailable("not implemented yet")
}

/// The failure result of the client contract for `reason`.
pub fn connection_unavailable(reason: &str) -> ToolResult {
    ToolResult::failure(format!(
        "Tool connection unavailable: {reason}. Check that termsprawl is running. Mutations are not automatically retried."
    ))
}
