//! Black-box tests of `termsprawlctl`: the real binary, run as a process against a real loopback
//! tool server (`termsprawl_transport::server::ToolServer`) in a temp dir, with transcripts of
//! exit status, stdout, stderr and the requests the server received snapshotted after
//! normalising paths and ports. The `mcp_*` modules drive `termsprawlctl mcp` over raw pipes,
//! under the official MCP Python SDK, and under the MCP Inspector against a real
//! `termsprawl-headless serve` (`mcp_inspector`).

mod acp;
mod acp_agent_orders;
mod acp_asks;
mod acp_canvas;
mod acp_discovery;
mod acp_extras;
mod acp_fast_agent;
mod acp_interactive;
mod acp_offers;
mod acp_prompt;
mod acp_scripted;
mod acp_state;
mod acp_view;
mod commands;
mod compat;
mod direct;
mod fuzz_regressions;
mod headless;
mod host_errors;
mod hosts_doc;
mod layout;
mod long_wait;
mod mcp_inspector;
mod mcp_interop;
mod mcp_stdio;
mod mcp_support;
mod output;
mod support;
