//! Black-box tests of `termsprawlctl`: the real binary, run as a process against a real loopback
//! tool server (`termsprawl_transport::server::ToolServer`) in a temp dir, with transcripts of
//! exit status, stdout, stderr and the requests the server received snapshotted after
//! normalising paths and ports.

mod acp;
mod acp_interactive;
mod acp_scripted;
mod commands;
mod compat;
mod direct;
mod output;
mod support;
