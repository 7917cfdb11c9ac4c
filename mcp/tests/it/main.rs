//! Integration tests of the MCP bridge: `serve` driven over in-memory pipes against a fake tool
//! caller (one module per section of `spec/mcp.md` §3), and end to end against a real loopback
//! tool server.

mod classification;
mod concurrency;
mod eof;
mod eras;
mod framing;
mod methods;
mod progress;
mod support;
mod tools_call;
mod transport;
