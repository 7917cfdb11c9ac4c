//! Integration tests of `termsprawlctl`: the real binary as a process, against a fake app on a
//! real loopback tool server.

mod fuzz_regressions;
mod mcp_interop;
mod mcp_stdio;
mod mcp_support;
