//! `termsprawlctl mcp` on the real stdin and stdout (`spec/mcp.md` §3.7, §3.8).
//!
//! At start-up file descriptor 1 is pointed at stderr, and the bridge keeps a private duplicate of
//! the original stdout for its writer: whatever else in the process prints (a library, a panic
//! message, a future change) lands on stderr, and the host's protocol stream stays clean.

use std::fs::File;
use std::io;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use termsprawl_protocol::ExitStatus;
use termsprawl_transport::long_wait::WaitOptions;

use crate::caller::SessionCaller;
use crate::serve::{Options, log_to_stderr as log, serve_refusing, serve_with};
use crate::tools::ToolFilter;

/// The runtime's blocking threads: one for stdin, one for stdout.
const BLOCKING_THREADS: usize = 2;

/// Runs the bridge on stdin and stdout for `session_file` until end of input, listing and serving
/// what `tools` keeps, chaining waits up to `max_wait_ms` (`--max-wait-ms`).
///
/// Exits 0 at end of input, after a read error and after a write error on stdout (the host has
/// gone), within about 2 s; 1 only when the process cannot be set up (no runtime, no stdout
/// duplicate), with one line on stderr.
pub fn run_stdio(session_file: &Path, tools: ToolFilter, max_wait_ms: u64) -> ExitCode {
    let output = match private_stdout() {
        Ok(output) => output,
        Err(error) => {
            log(&format!("cannot set up stdout: {error}"));
            return ExitStatus::FAILED.into();
        }
    };
    // Blocking threads: stdin's reads hold one, the writer's writes (one at a time) the other;
    // nothing else here blocks. Each further thread costs its own stack and malloc arena: with
    // the default cap, 32 calls in flight grew the pool to four threads and the bridge by a
    // megabyte (issue 26).
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .max_blocking_threads(BLOCKING_THREADS)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            log(&format!("cannot start the runtime: {error}"));
            return ExitStatus::FAILED.into();
        }
    };
    let caller = Arc::new(SessionCaller::new(session_file));
    let options = Options::default().tools(tools).wait(WaitOptions::new(max_wait_ms));
    let output = tokio::fs::File::from_std(output);
    let served = runtime.block_on(serve_with(tokio::io::stdin(), output, caller, options));
    if let Err(error) = served {
        log(&format!("stopped: cannot write to stdout: {error}"));
    }
    // A read of stdin may still be blocked in a runtime thread (after a write error); do not wait
    // for it. Every answer that was written has been flushed.
    runtime.shutdown_background();
    ExitStatus::OK.into()
}

/// Runs a bridge that cannot serve on stdin and stdout until end of input: `termsprawlctl mcp`
/// with a startup mistake (no session, an unknown option, a session file that cannot serve;
/// `spec/mcp.md` §3.13, §3.15). Every request is answered with the error `-32603` `message` and
/// `data` ([`crate::serve_refusing`]) and no tool is served, then the process exits 2, the status
/// of a usage error (`spec/protocol.md` §8.1). 1 only when the process cannot be set up. The
/// caller prints `message` on stderr.
pub fn run_stdio_refusing(message: &str, data: &serde_json::Value) -> ExitCode {
    let output = match private_stdout() {
        Ok(output) => output,
        Err(error) => {
            log(&format!("cannot set up stdout: {error}"));
            return ExitStatus::FAILED.into();
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            log(&format!("cannot start the runtime: {error}"));
            return ExitStatus::FAILED.into();
        }
    };
    let output = tokio::fs::File::from_std(output);
    let log_sink: crate::LogSink = Arc::new(log);
    let served =
        runtime.block_on(serve_refusing(tokio::io::stdin(), output, message, data, log_sink));
    if let Err(error) = served {
        log(&format!("stopped: cannot write to stdout: {error}"));
    }
    runtime.shutdown_background();
    ExitStatus::USAGE.into()
}

/// Duplicates stdout (close-on-exec) for the writer, then points descriptor 1 at stderr.
fn private_stdout() -> io::Result<File> {
    let duplicate = rustix::io::fcntl_dupfd_cloexec(io::stdout(), 0)?;
    rustix::stdio::dup2_stdout(io::stderr())?;
    Ok(File::from(duplicate))
}
