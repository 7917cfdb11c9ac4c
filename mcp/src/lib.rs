//! The MCP stdio bridge of `termsprawlctl mcp`.
//!
//! INTERIM API STUB: the `mcp` branch replaces this file with the implementation.

use std::path::Path;
use std::process::ExitCode;

/// Runs the bridge on the process's stdin and stdout until end of input; the exit code to use.
pub fn run_stdio(session_file: &Path) -> ExitCode {
    let _ = session_file;
    ExitCode::from(1)
}
