//! The MCP stdio bridge of `termsprawlctl mcp` (`spec/mcp.md`).
//!
//! This crate owns the MCP server that hosts (Claude Code, Codex, SDK clients) start as a
//! subprocess: it speaks newline-delimited JSON-RPC on stdin and stdout in both eras of MCP (the
//! `initialize` handshake of 2024-11-05 to 2025-11-25 and the stateless 2026-07-28, on the same
//! connection; `docs/mcp-eras.md`), serves termsprawl's operations as MCP tools (narrowed by
//! `--read-only` and `--tools`) and its guides as resources, and forwards each tool call to the
//! app's loopback tool server through the transport client. It is a hand-written `serde_json` loop, not an MCP SDK (§3.10): one reader,
//! concurrent call tasks, one writer.
//!
//! It chains a `terminal_wait` or `terminal_run` longer than a server's 30 s into turns through
//! `termsprawl_transport::long_wait`, up to its longest wait (`--max-wait-ms`, [`Options::wait`]),
//! and reports the progress of such a call as `notifications/progress` when the host asked with
//! `_meta.progressToken` (`progress`).
//!
//! It must never write anything but JSON-RPC messages to stdout, never answer input that the spec
//! says is not answered, never send requests, never send a notification but the progress of a
//! call that asked for it (none after its answer or its cancellation), and never see, log or echo
//! the session token (the transport reads the session file on every call).
//!
//! Start reading at [`dispatch::classify`] (the pure core: one line in, one action out), then
//! [`serve_with`] (the async plumbing), then [`run_stdio`] (the process around it).
//!
//! The spec's `serve(input, output, session_file)` is spelled
//! `serve(input, output, Arc::new(SessionCaller::new(session_file)))`: the caller is a parameter
//! so that tests can answer tool calls without a server.

mod caller;
pub mod dispatch;
mod framing;
mod jsonrpc;
mod progress;
mod resources;
mod serve;
mod stdio;
mod tools;

pub use caller::{CallFuture, SessionCaller, ToolCaller};
pub use framing::MAX_LINE_BYTES;
pub use jsonrpc::{ErrorCode, RequestId, Response};
pub use resources::{GUIDE_MIME_TYPE, GUIDE_URI_PREFIX, guide_uri};
pub use serve::{DEFAULT_MAX_WAIT_MS, LogSink, Options, serve, serve_refusing, serve_with};
pub use stdio::{run_stdio, run_stdio_refusing};
pub use tools::{
    MAX_RESPONSE_BYTES, ToolFilter, UnknownToolName, call_response_line, call_result,
    modern_call_response_line, modern_call_result, tools_list,
};
